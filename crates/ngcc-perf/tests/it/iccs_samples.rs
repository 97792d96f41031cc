//! The ICCS sample candidates (samples/iccs) end to end through the binary: every instance
//! builds and passes its committed kat.sha256; the generated KAT text carries the official
//! seeds, messages and digests; the SHAKE adapters are byte-identical to PQClean's NIST build;
//! misbehaving copies each get a precise status while the campaign carries on.
//!
//! Needs the PQClean tree (`ngcc-perf samples pqclean`, network the first time); without it
//! the tests fail unless `NGCC_REQUIRE_PQCLEAN=0` (then they print `SKIPPED …`).

use crate::common;
use common::*;
use ngcc_iccs::hash_drbg::{self, HashDrbg};
use ngcc_iccs::vectors as vx;
use ngcc_perf::candidate::{Api, Candidate, Kind};
use ngcc_perf::child::protocol::{Limits, Request, VectorsJob, VectorsOutput};
use ngcc_perf::dataset::schema::{BuildEntry, BuildFile};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn samples_dir() -> PathBuf {
    manifest_dir().join("../../samples")
}

/// A scratch folder under target/iccs_samples/, emptied first.
fn scratch_dir(name: &str) -> PathBuf {
    scratch(&format!("iccs_samples/{name}"))
}

/// One campaign build,kat --quick over samples/, shared by the tests below.
fn sample_run() -> Option<&'static Path> {
    static RUN: OnceLock<Option<PathBuf>> = OnceLock::new();
    RUN.get_or_init(|| {
        pqclean()?;
        let run = scratch_dir("samples").join("run");
        let t = std::time::Instant::now();
        campaign_ok("build,kat", &samples_dir(), &run, &["--quick"]);
        eprintln!(
            "campaign build,kat --quick over samples: {:.1} s",
            t.elapsed().as_secs_f64()
        );
        Some(run)
    })
    .as_deref()
}

fn iccs_candidates() -> Vec<Candidate> {
    ngcc_perf::candidate::discover::load_all(&samples_dir().join("iccs")).unwrap()
}

#[test]
fn every_sample_instance_passes_with_guide_flags() {
    let Some(run) = sample_run() else { return };
    let build = build_file(run);
    let cands = iccs_candidates();
    let kinds: Vec<Kind> = cands.iter().map(|c| c.kind).collect();
    for k in [Kind::Kem, Kind::Sig, Kind::Kex, Kind::Hash] {
        assert!(kinds.contains(&k), "no {k:?} sample");
    }
    let mut n = 0;
    for cand in &cands {
        assert_eq!(cand.api, Api::Iccs);
        for inst in &cand.instances {
            let key = format!("{}/{}", cand.id, inst.label);
            let e: BuildEntry = build
                .entry(&key)
                .unwrap_or_else(|| panic!("{key} not built"));
            assert_eq!(e.kat.as_str(), "PASS", "{key}: {:?}", e.kat_detail);
            assert_eq!(
                e.flags.as_str(),
                "guide",
                "{key} fell back to harness defaults"
            );
            let log = std::fs::read_to_string(run.join(e.kat_log.unwrap())).unwrap();
            assert!(
                log.lines()
                    .last()
                    .unwrap()
                    .starts_with(&format!("RESULT {} {} PASS", cand.id, inst.label)),
                "{log}"
            );
            assert!(
                log.contains("\nmanifest "),
                "{key}: no manifest line in the log"
            );
            n += 1;
        }
    }
    assert_eq!(n, 10);
    // --quick skips two hash files and says so.
    let hash = build.entry("hash-s1/SM3-256").unwrap();
    let detail = hash.kat_detail.unwrap();
    assert!(
        detail.contains("KAT_2_33_SM3_256.txt") && detail.contains("KAT_Loop_SM3_256.txt"),
        "{detail}"
    );
}

#[test]
fn kat_text_carries_the_official_seeds_messages_and_digests() {
    let Some(run) = sample_run() else { return };
    let mut files = 0;
    for cand in iccs_candidates() {
        for inst in &cand.instances {
            let dir = run.join("katgen").join(&cand.id).join(&inst.label);
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            for name in names {
                let text = std::fs::read_to_string(dir.join(&name)).unwrap();
                let prefix = format!(
                    "KAT_{}_",
                    match cand.kind {
                        Kind::Kem => "KEM",
                        Kind::Sig => "SIG",
                        Kind::Kex => "KEX",
                        Kind::Hash => "",
                    }
                );
                assert!(name.starts_with(prefix.trim_end_matches('_')), "{name}");
                files += 1;
                if cand.kind == Kind::Hash {
                    check_hash_file(&name, &text);
                    continue;
                }
                let counts: Vec<String> = (0..10).map(|i| i.to_string()).collect();
                assert_eq!(values(&text, "Count"), counts, "{name}");
                assert_eq!(values(&text, "Seed"), vx::KAT_SEEDS, "{name}");
                assert_eq!(values(&text, "Seed_Len"), ["64"; 10], "{name}");
                assert!(
                    text.ends_with("\n\n"),
                    "{name}: records end with a blank line"
                );
                if cand.kind == Kind::Sig {
                    let lens: Vec<String> = (0..10).map(|i| (56 + 8 * i).to_string()).collect();
                    assert_eq!(values(&text, "M_Len"), lens, "{name}");
                    assert_eq!(values(&text, "M")[..4], vx::SIG_MESSAGES, "{name}");
                    // Records 4..9 from the model.
                    let mut d = HashDrbg::new(&hash_drbg::sig_msg_nonce());
                    for (i, m) in values(&text, "M").iter().enumerate() {
                        let want = d.generate(8 * (56 + 8 * i as u64));
                        assert_eq!(*m, hex::encode_upper(want), "{name} M {i}");
                    }
                }
                if cand.kind == Kind::Kex {
                    assert_eq!(values(&text, "Pass_Num"), ["2"; 10]);
                    assert_eq!(values(&text, "PKa_Len"), ["0"; 10]);
                    assert_eq!(values(&text, "M1_Len"), ["1184"; 10]);
                    assert_eq!(values(&text, "M2_Len"), ["1088"; 10]);
                    assert_eq!(values(&text, "Pass2_Stb"), values(&text, "SS"));
                    assert!(values(&text, "M3").is_empty());
                }
            }
        }
    }
    assert_eq!(files, 11, "9 PKC files and 2 hash files (--quick)");
}

fn check_hash_file(name: &str, text: &str) {
    let msgs = values(text, "Msg");
    let dsts = values(text, "Dst");
    if name.starts_with("KAT_2_12_") {
        assert_eq!(msgs.len(), 4097);
        assert_eq!(msgs[..17], vx::KAT_2_12_MSGS, "{name}");
        for (bits, want) in vx::KAT_2_12_SM3_DSTS {
            assert_eq!(dsts[bits as usize], want, "{name} length {bits}");
        }
        // Every record against the Rust SM3 model (the sample hash is our own C SM3).
        for (bits, (m, d)) in msgs.iter().zip(&dsts).enumerate() {
            let bytes = hex::decode(m).unwrap();
            let want = ngcc_iccs::sm3::sm3_bits(&bytes, bits as u64);
            assert_eq!(*d, hex::encode_upper(want), "{name} length {bits}");
        }
    } else if name.starts_with("KAT_2_23_") {
        assert_eq!(values(text, "Msg_Len"), ["8388608"; 3]);
        let nonce = hash_drbg::hash_kat_nonce(b"KAT_2_23");
        assert_eq!(
            values(text, "Msg_Seed"),
            ["", "", &hex::encode_upper(nonce)]
        );
        let n = 1usize << 20;
        let random = HashDrbg::new(&nonce).generate(8 * n as u64);
        for (i, msg) in [vec![0u8; n], vec![0xFF; n], random].iter().enumerate() {
            let exp = format!(
                "{} .... {}",
                hex::encode_upper(&msg[..8]),
                hex::encode_upper(&msg[n - 8..])
            );
            assert_eq!(values(text, "Msg_Exp")[i], exp, "{name} record {i}");
            assert_eq!(
                dsts[i],
                hex::encode_upper(ngcc_iccs::sm3::sm3(msg)),
                "{name} record {i}"
            );
        }
    } else {
        panic!("{name}: --quick generates only KAT_2_12 and KAT_2_23");
    }
}

#[test]
fn committed_manifests_are_what_kat_manifest_writes() {
    let Some(run) = sample_run() else { return };
    for cand in iccs_candidates() {
        let out = run_ok(&["kat", "manifest", run.to_str().unwrap(), "--cand", &cand.id]);
        let generated = String::from_utf8(out.stdout).unwrap();
        let committed = std::fs::read_to_string(cand.root.join("kat.sha256")).unwrap();
        if cand.kind == Kind::Hash {
            // --quick generated only two of the four committed files.
            for line in generated.lines() {
                assert!(committed.lines().any(|c| c == line), "{line}");
            }
            assert_eq!(generated.lines().count(), 2);
            assert_eq!(committed.lines().count(), 4);
        } else {
            assert_eq!(generated, committed, "{}", cand.id);
        }
    }
}

/// Runs one request in the jail, as the orchestrator does (its result checked the same way).
fn child_job(dir: &Path, request: &Request) -> VectorsOutput {
    ngcc_perf::sandbox::set_exe(env!("CARGO_BIN_EXE_ngcc-perf").into());
    let spec = ngcc_perf::sandbox::Spec {
        workdir: dir.to_path_buf(),
        timeout: std::time::Duration::from_secs(120),
    };
    // A full jail: the test's own choice, whatever the environment says.
    let jail = ngcc_perf::sandbox::jail::JailOptions::full();
    let out = ngcc_perf::sandbox::run(&spec, &jail, request).unwrap();
    ngcc_perf::sandbox::parse_result(&out)
        .unwrap_or_else(|e| panic!("{e:#}: {:?} {}", out.failure_text(), out.stderr))
}

fn vectors(dir: &Path, library: PathBuf, kind: Kind, api: Api) -> Vec<(String, String)> {
    let job = VectorsJob {
        limits: Limits::default(),
        library,
        kind,
        api,
        seed: vx::KAT_SEEDS[0].to_string(),
        message: vx::SIG_MESSAGES[0].to_string(),
        lengths: Vec::new(),
    };
    let out = child_job(dir, &Request::Vectors(job));
    assert_eq!(out.status.to_string(), "ok", "{:?}", out.detail);
    out.values
}

#[test]
fn shake_adapters_are_byte_identical_to_the_nist_build() {
    let Some(run) = sample_run() else { return };
    let dir = scratch_dir("nist");
    let cands = dir.join("cands");
    run_ok(&["import", "pqclean", "--out", cands.to_str().unwrap()]);
    let nist_run = dir.join("run");
    campaign_ok("build", &cands, &nist_run, &["--only", "ml-kem-*-clean"]);
    campaign_ok("build", &cands, &nist_run, &["--only", "ml-dsa-65-clean"]);
    let nist = build_file(&nist_run);
    let ours = build_file(run);
    let lib = |run: &Path, b: &BuildFile, key: &str| {
        let e = b.entry(key).unwrap_or_else(|| panic!("{key} not built"));
        assert_eq!(
            e.build_status.as_ref().map(|s| s.as_str()),
            Some("built"),
            "{key}"
        );
        run.join(e.library.unwrap())
    };
    let pairs = [
        ("kem-s1/ML-KEM-512", "ml-kem/ml-kem-512-clean", Kind::Kem),
        ("kem-s1/ML-KEM-768", "ml-kem/ml-kem-768-clean", Kind::Kem),
        ("kem-s1/ML-KEM-1024", "ml-kem/ml-kem-1024-clean", Kind::Kem),
        ("sig-s1/ML-DSA-65", "ml-dsa/ml-dsa-65-clean", Kind::Sig),
    ];
    for (i, (ours_key, nist_key, kind)) in pairs.into_iter().enumerate() {
        let shake = vectors(
            &dir.join(format!("v{i}-shake")),
            lib(run, &ours, &format!("{ours_key}-SHAKE")),
            kind,
            Api::Iccs,
        );
        let reference = vectors(
            &dir.join(format!("v{i}-nist")),
            lib(&nist_run, &nist, nist_key),
            kind,
            Api::Nist,
        );
        assert_eq!(shake, reference, "{ours_key}-SHAKE vs {nist_key}");
        let names: Vec<&str> = shake.iter().map(|(n, _)| n.as_str()).collect();
        if kind == Kind::Kem {
            assert_eq!(names, ["pk", "sk", "ct", "ss", "ss_dec"]);
            assert_eq!(shake[3].1, shake[4].1, "decapsulation agrees");
        } else {
            assert_eq!(names, ["pk", "sk", "sig"]);
        }
        // The SM3 instance runs the same code on other primitives: same sizes, other bytes.
        let sm3 = vectors(
            &dir.join(format!("v{i}-sm3")),
            lib(run, &ours, &format!("{ours_key}-SM3")),
            kind,
            Api::Iccs,
        );
        for ((name, a), (_, b)) in sm3.iter().zip(&shake) {
            assert_eq!(a.len(), b.len(), "{ours_key} {name}");
            assert_ne!(a, b, "{ours_key} {name}: the SM3 routing had no effect");
        }
    }
}

/// A copy of kem-s1 reduced to ML-KEM-512-SHAKE, as candidate `id` under `root`.
fn zoo_copy(root: &Path, id: &str, defines: &[&str], manifest: Option<&str>) {
    let src = samples_dir().join("iccs/kem-s1");
    let mut cand = Candidate::load(&src.join("candidate.toml")).unwrap();
    cand.id = id.to_string();
    cand.instances.retain(|i| i.label == "ML-KEM-512-SHAKE");
    cand.instances[0].defines = defines.iter().map(|d| d.to_string()).collect();
    let dir = root.join(id);
    std::fs::create_dir_all(dir.join("ML-KEM-512-SHAKE")).unwrap();
    for f in ["kem_adapter.c", "ML-KEM-512-SHAKE/KEM_AlgorithmInstance.h"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    std::fs::write(dir.join("candidate.toml"), toml::to_string(&cand).unwrap()).unwrap();
    if let Some(m) = manifest {
        std::fs::write(dir.join("kat.sha256"), m).unwrap();
    }
}

#[test]
fn misbehaving_copies_get_precise_statuses_and_the_campaign_continues() {
    let Some(_) = pqclean() else { return };
    let dir = scratch_dir("zoo");
    let root = dir.join("iccs");
    copy_tree(&samples_dir().join("iccs/common"), &root.join("common"));
    let committed = std::fs::read_to_string(samples_dir().join("iccs/kem-s1/kat.sha256")).unwrap();
    let good = committed
        .lines()
        .find(|l| l.ends_with(" ML-KEM-512-SHAKE/KAT_KEM_ML_KEM_512_SHAKE.txt"))
        .unwrap()
        .to_string();
    // One hex digit changed: still a well-formed line, now for other text.
    let mut corrupt = good.clone().into_bytes();
    corrupt[10] = if corrupt[10] == b'0' { b'1' } else { b'0' };
    let corrupt = String::from_utf8(corrupt).unwrap();
    let missing = format!(
        "{}\n{} strict ML-KEM-512-SHAKE/KAT_KEM_GONE.txt\n",
        good,
        "0".repeat(64)
    );
    zoo_copy(&root, "zoo-good", &[], Some(&format!("{good}\n")));
    zoo_copy(&root, "zoo-corrupt", &[], Some(&format!("{corrupt}\n")));
    zoo_copy(&root, "zoo-missing", &[], Some(&missing));
    zoo_copy(&root, "zoo-nomanifest", &[], None);
    zoo_copy(
        &root,
        "zoo-badline",
        &[],
        Some(&format!("{}\n", &good[1..])),
    );
    zoo_copy(
        &root,
        "zoo-nondet",
        &["NGCC_ZOO_NONDET"],
        Some(&format!("{good}\n")),
    );
    zoo_copy(
        &root,
        "zoo-overflow",
        &["NGCC_ZOO_CT_OVERFLOW"],
        Some(&format!("{good}\n")),
    );
    let run = dir.join("run");
    let stderr = campaign_ok("build,kat", &root, &run, &[]);
    let build = build_file(&run);
    let status = |id: &str| {
        let e = build
            .entry(&format!("{id}/ML-KEM-512-SHAKE"))
            .unwrap_or_else(|| panic!("{id} missing: {stderr}"));
        (e.kat, e.kat_detail.unwrap_or_default())
    };
    let file = "KAT_KEM_ML_KEM_512_SHAKE.txt";
    let cases: [(&str, &str, &str); 7] = [
        ("zoo-good", "PASS", ""),
        ("zoo-corrupt", "MISMATCH", file),
        (
            "zoo-missing",
            "NOKAT",
            "kat.sha256 names ML-KEM-512-SHAKE/KAT_KEM_GONE.txt, which the run did not produce",
        ),
        ("zoo-nomanifest", "NOKAT", "no kat.sha256 manifest"),
        ("zoo-badline", "NOKAT", "line 1: "),
        (
            "zoo-nondet",
            "MISMATCH",
            "nondeterministic: count 0 replayed with the same seed gave a different PK",
        ),
        (
            "zoo-overflow",
            "OVERFLOW",
            "count 0: kem_enc wrote past ct (declared 768 bytes) at offset 768",
        ),
    ];
    for (id, want, detail) in cases {
        let (got, got_detail) = status(id);
        assert_eq!(got.as_str(), want, "{id}: {got_detail}");
        assert!(
            got_detail.contains(detail),
            "{id}: {got_detail:?} lacks {detail:?}"
        );
        let log =
            std::fs::read_to_string(run.join(format!("kat/{id}/ML-KEM-512-SHAKE.log"))).unwrap();
        let result = log.lines().last().unwrap();
        assert!(
            result.starts_with(&format!("RESULT {id} ML-KEM-512-SHAKE {want}")),
            "{result}"
        );
    }
    assert!(
        stderr.contains("kat: 2 MISMATCH, 3 NOKAT, 1 OVERFLOW, 1 PASS"),
        "{stderr}"
    );
}
