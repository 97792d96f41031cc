//! `campaign --build-from BUILD`: a shard's run directory starts as a copy of the shared
//! build run, where build and KAT ran once before the array. Copied: build.json (written last:
//! its presence means the copy is complete), campaign.json (the campaign's start, tool and
//! flags; its `ended_utc` dropped, so that an `ended_utc` means this shard finished), every KAT
//! log (evidence for every instance, so each shard is a whole dataset), and this shard's
//! libraries, objects (the profile phase relinks them) and generated KAT text. A run
//! directory seeded once is only checked afterwards: the build it came from must not change.

use super::Phase;
use super::shard::in_shard;
use crate::dataset::schema::{BuildFile, Campaign};
use crate::rundir::RunDir;
use crate::util::{Failure, sha256_file};
use anyhow::{Context, Result};
use std::path::Path;

/// The build and KAT ran in BUILD: with `--build-from` only the timing phases may run.
pub fn check_phases(build_from: Option<&Path>, phases: &[Phase]) -> Result<()> {
    if build_from.is_some()
        && let Some(p) = phases
            .iter()
            .find(|p| matches!(p, Phase::Build | Phase::Kat))
    {
        return Err(Failure::usage(format!(
            "--build-from: phase {} ran in the build run directory; run only calibrate, measure and profile here",
            p.name()
        )));
    }
    Ok(())
}

pub fn seed(run: &RunDir, from: &Path, shard: Option<(u32, u32)>) -> Result<()> {
    let from = std::path::absolute(from)?;
    let from_build = from.join("build.json");
    if !from_build.is_file() {
        return Err(Failure::usage(format!(
            "--build-from {}: no build.json there (run `ngcc-perf campaign build,kat --run {}` first)",
            from.display(),
            from.display()
        )));
    }
    if same_dir(&from, &run.root) {
        return Err(Failure::usage(
            "--build-from names the run directory itself; give each shard its own --run",
        ));
    }
    // The build run's evidence is checked against its journal, and journaled here as it is
    // copied (publish and merge check the shard's journal).
    let journal = crate::journal::run_hashes(&from).map_err(|e| {
        Failure::usage(format!(
            "--build-from {}: its journal is damaged: {e:#}",
            from.display()
        ))
    })?;
    let read = |rel: &str| -> Result<Vec<u8>> {
        let bytes = std::fs::read(from.join(rel))
            .with_context(|| format!("reading {}", from.join(rel).display()))?;
        if let Some(j) = &journal {
            let sha = crate::util::sha256_hex(&bytes);
            if j.get(rel) != Some(&sha) {
                return Err(Failure::usage(format!(
                    "--build-from {}: {rel} is not what ngcc-perf wrote there (sha256 {} is not in its journal); nothing of it is used",
                    from.display(),
                    &sha[..16]
                )));
            }
        }
        Ok(bytes)
    };
    let build_bytes = read("build.json")?;
    let build: BuildFile = serde_json::from_slice(&build_bytes)
        .with_context(|| format!("{}: not a build.json", from_build.display()))?;
    let which = shard.map_or("all instances".to_string(), |(k, n)| {
        format!("shard {k}/{n}")
    });
    if run.build_json().is_file() {
        check_same_build(run, &from, &build)?;
        crate::util::say!(
            "seed: {} ({which}) was seeded from {} before; resuming",
            run.root.display(),
            from.display()
        );
        return Ok(());
    }
    let mut copied = 0;
    let mut kat_logs = 0;
    if !run.root.join("campaign.json").is_file() && from.join("campaign.json").is_file() {
        let mut c: Campaign = serde_json::from_slice(&read("campaign.json")?)
            .with_context(|| format!("{}: not a campaign.json", from.display()))?;
        c.ended_utc = None;
        run.save_campaign(&c)?;
    }
    for top in ["kat", "katcheck"] {
        for rel in crate::dataset::load::files_under(&from, top) {
            kat_logs += usize::from(rel.ends_with(".log"));
            crate::util::atomic_write(&run.root.join(&rel), &read(&rel)?)?;
        }
    }
    for (key, e) in build.entries() {
        if !in_shard(&key, shard) {
            continue;
        }
        copied += 1;
        if let Some(lib) = &e.library {
            let src = from.join(lib);
            if src.is_file() {
                let dst = run.path(lib);
                copy_file(&src, &dst)?;
                let sha = sha256_file(&dst)?;
                if e.library_sha256.as_deref().is_some_and(|want| want != sha) {
                    return Err(Failure::usage(format!(
                        "--build-from: {} has sha256 {sha}, not build.json's {} for {key}: the build run changed while it was copied",
                        src.display(),
                        e.library_sha256.as_deref().unwrap_or_default()
                    )));
                }
            }
        }
        for dir in ["build", "katgen"] {
            let rel = format!("{dir}/{}/{}", e.candidate, e.label);
            copy_tree(&from, &run.root, &rel)?;
        }
        let log = format!("build/{}/{}.log", e.candidate, e.label);
        if from.join(&log).is_file() {
            copy_file(&from.join(&log), &run.path(&log))?;
        }
    }
    crate::util::atomic_write(&run.build_json(), &build_bytes)?;
    crate::util::say!(
        "seed: {} ({which}) from {}: {copied} of {} instance(s), {kat_logs} KAT log(s)",
        run.root.display(),
        from.display(),
        build.instances.len()
    );
    Ok(())
}

/// A seeded run directory must go on measuring the build it was seeded from.
fn check_same_build(run: &RunDir, from: &Path, build: &BuildFile) -> Result<()> {
    let ours = run.load_build()?;
    for (key, theirs) in build.entries() {
        let mine = ours.entry(&key);
        let (a, b) = (
            mine.as_ref().and_then(|e| e.library_sha256.clone()),
            theirs.library_sha256.clone(),
        );
        if mine.is_none() || a != b {
            return Err(Failure::usage(format!(
                "{} was seeded from another build than {} has now ({key}: library_sha256 {} here, {} there); start a new --run",
                run.root.display(),
                from.display(),
                a.as_deref().unwrap_or("none"),
                b.as_deref().unwrap_or("none")
            )));
        }
    }
    Ok(())
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Copies a file atomically (temp name that a resumed campaign sweeps, then rename), keeping
/// its permission bits.
fn copy_file(src: &Path, dst: &Path) -> Result<()> {
    let dir = dst.parent().context("copy target has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = dst.file_name().context("copy target has no name")?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::copy(src, &tmp)
        .with_context(|| format!("copying {} to {}", src.display(), tmp.display()))?;
    std::fs::rename(&tmp, dst).with_context(|| format!("renaming onto {}", dst.display()))?;
    Ok(())
}

/// Copies every file below `from/rel` to `to/rel` (nothing if it does not exist).
fn copy_tree(from: &Path, to: &Path, rel: &str) -> Result<()> {
    for file in crate::dataset::load::files_under(from, rel) {
        copy_file(&from.join(&file), &to.join(&file))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::schema::{BuildEntry, FlagSetName, KatStatus};
    use crate::util::{read_json, write_json};

    fn entry(cand: &str, label: &str, sha: &str) -> BuildEntry {
        BuildEntry {
            candidate: cand.into(),
            label: label.into(),
            instance: label.into(),
            variant: "reference".into(),
            flags: FlagSetName::Guide,
            kat: KatStatus::Pass,
            library: Some(format!("lib/{cand}/lib{label}.so")),
            library_sha256: Some(sha.into()),
            kat_log: Some(format!("kat/{cand}/{label}.log")),
            ..BuildEntry::default()
        }
    }

    /// A build run with two instances; returns its folder.
    fn build_run(root: &Path) -> std::path::PathBuf {
        let b = root.join("build");
        let mut file = BuildFile::default();
        for label in ["A", "B"] {
            let lib = b.join(format!("lib/kem-1/lib{label}.so"));
            crate::util::atomic_write(&lib, label.as_bytes()).unwrap();
            file.set(&entry("kem-1", label, &sha256_file(&lib).unwrap()));
            crate::util::atomic_write(
                &b.join(format!("kat/kem-1/{label}.log")),
                format!("RESULT kem-1 {label} PASS\n").as_bytes(),
            )
            .unwrap();
            crate::util::atomic_write(
                &b.join(format!("build/kem-1/{label}/obj-guide/000_a.o")),
                b"obj",
            )
            .unwrap();
        }
        write_json(&b.join("build.json"), &file).unwrap();
        let c = Campaign {
            started_utc: Some("2026-01-01T00:00:00+00:00".into()),
            ended_utc: Some("2026-01-01T01:00:00+00:00".into()),
            ..Campaign::default()
        };
        write_json(&b.join("campaign.json"), &c).unwrap();
        b
    }

    #[test]
    fn a_shard_gets_its_instances_and_every_kat_log() {
        let tmp = tempfile::tempdir().unwrap();
        let from = build_run(tmp.path());
        let (ka, kb) = (
            in_shard("kem-1/A", Some((1, 2))),
            in_shard("kem-1/B", Some((1, 2))),
        );
        let run = RunDir::open(&tmp.path().join("shard-1")).unwrap();
        seed(&run, &from, Some((1, 2))).unwrap();
        assert_eq!(run.path("lib/kem-1/libA.so").is_file(), ka);
        assert_eq!(run.path("lib/kem-1/libB.so").is_file(), kb);
        assert_eq!(run.path("build/kem-1/A/obj-guide/000_a.o").is_file(), ka);
        assert!(run.path("kat/kem-1/A.log").is_file() && run.path("kat/kem-1/B.log").is_file());
        assert_eq!(
            std::fs::read(run.build_json()).unwrap(),
            std::fs::read(from.join("build.json")).unwrap()
        );
        let c = run.load_campaign().unwrap();
        assert_eq!(c.started_utc.as_deref(), Some("2026-01-01T00:00:00+00:00"));
        assert_eq!(
            c.ended_utc, None,
            "an ended_utc must mean this shard finished"
        );
        // Seeding again only checks.
        seed(&run, &from, Some((1, 2))).unwrap();
    }

    #[test]
    fn a_changed_build_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let from = build_run(tmp.path());
        let run = RunDir::open(&tmp.path().join("shard-1")).unwrap();
        seed(&run, &from, None).unwrap();
        let mut file: BuildFile = read_json(&from.join("build.json")).unwrap();
        file.set(&entry("kem-1", "A", "0000"));
        write_json(&from.join("build.json"), &file).unwrap();
        let e = seed(&run, &from, None).unwrap_err().to_string();
        assert!(
            e.contains("kem-1/A") && e.contains("0000") && e.contains("new --run"),
            "{e}"
        );
    }

    #[test]
    fn no_build_there_is_a_usage_error() {
        let tmp = tempfile::tempdir().unwrap();
        let run = RunDir::open(&tmp.path().join("shard-1")).unwrap();
        let e = seed(&run, &tmp.path().join("nope"), None).unwrap_err();
        assert!(e.to_string().contains("no build.json"), "{e}");
    }
}
