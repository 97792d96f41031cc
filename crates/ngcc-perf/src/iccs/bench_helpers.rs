//! `ngcc-perf iccs bench [--official DIR]`: the ICCS helpers per call — ngcc-perf's embedded
//! files and, given the folder, the official `auxfunc.c`/`drng.c` — built with the guide
//! flags into one small timing program each and run as separate processes (never loaded
//! into this one). A rough guide on a possibly busy host, not a test.

use crate::build::flags::GUIDE_REFERENCE;
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One case's result: median ns per call and the checksum of its first output.
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    pub ns: f64,
    pub checksum: String,
}

/// (case, input bytes, output bits) in the program's order.
pub type Key = (String, u64, u64);

/// Parses the timing program's lines.
pub fn parse(text: &str) -> Result<Vec<(Key, Option<Timing>)>> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [name, inb, outb, ns, sum] = f[..] else {
            bail!("unexpected line {line:?}");
        };
        let key = (name.to_string(), inb.parse()?, outb.parse()?);
        let timing = ns.parse::<f64>().ok().map(|ns| Timing {
            ns,
            checksum: sum.to_string(),
        });
        out.push((key, timing));
    }
    Ok(out)
}

/// Compiles `sources` with the timing program and runs it.
fn build_and_run(work: &Path, name: &str, include: &Path, sources: &[PathBuf]) -> Result<String> {
    let bin = work.join(format!("bench-{name}"));
    let mut cmd = Command::new(crate::build::compiler::program());
    cmd.args(GUIDE_REFERENCE.split_whitespace())
        .arg(format!("-I{}", include.display()))
        .arg(work.join("helpers_bench.c"))
        .args(sources)
        .arg("-o")
        .arg(&bin);
    let out = crate::build::bounded::output(&mut cmd, crate::build::BuildLimits::default())
        .context("running the C compiler")?;
    if !out.success() {
        bail!(
            "compiling the {name} helpers failed: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .find(|l| l.contains("error"))
                .unwrap_or("(no error line)")
        );
    }
    let run = Command::new(&bin)
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    if !run.status.success() {
        bail!("the {name} timing program failed ({})", run.status);
    }
    Ok(String::from_utf8_lossy(&run.stdout).into_owned())
}

fn bytes_text(n: u64) -> String {
    if n >= 1024 && n.is_multiple_of(1024) {
        format!("{} KiB", n / 1024)
    } else {
        format!("{n} B")
    }
}

/// Runs the comparison and prints its table.
pub fn run(official: Option<&Path>) -> Result<()> {
    if let Some(dir) = official {
        for f in ["auxfunc.c", "auxfunc.h", "drng.c", "drng.h"] {
            if !dir.join(f).is_file() {
                return Err(crate::util::Failure::usage(format!(
                    "iccs bench --official {}: no {f} there",
                    dir.display()
                )));
            }
        }
    }
    let work = std::env::temp_dir().join(format!("ngcc-perf-helpers-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let emb = work.join("embedded");
    std::fs::create_dir_all(&emb)?;
    let result = (|| -> Result<()> {
        std::fs::write(work.join("helpers_bench.c"), crate::csrc::HELPERS_BENCH_C)?;
        for (name, text) in [
            ("auxfunc.c", crate::csrc::AUXFUNC_C),
            ("auxfunc.h", crate::csrc::AUXFUNC_H),
            ("drng.c", crate::csrc::DRNG_C),
            ("drng.h", crate::csrc::DRNG_H),
            ("iccs_sm3.c", crate::csrc::ICCS_SM3_C),
            ("iccs_sm3.h", crate::csrc::ICCS_SM3_H),
        ] {
            std::fs::write(emb.join(name), text)?;
        }
        let embedded = parse(&build_and_run(
            &work,
            "embedded",
            &emb,
            &["auxfunc.c", "drng.c", "iccs_sm3.c"].map(|f| emb.join(f)),
        )?)?;
        let off = match official {
            Some(dir) => {
                let times = parse(&build_and_run(
                    &work,
                    "official",
                    dir,
                    &[dir.join("auxfunc.c"), dir.join("drng.c")],
                )?)?;
                Some(times.into_iter().collect::<BTreeMap<Key, Option<Timing>>>())
            }
            None => None,
        };
        crate::util::out!();
        crate::util::out!(
            "ICCS helpers per call, built with the guide flags ({GUIDE_REFERENCE}); median of 7 batches of ~20 ms, wall clock:"
        );
        crate::util::out!(
            "embedded = ngcc-perf's csrc/iccs (what instances without their own files link by default)"
        );
        match official {
            Some(d) => crate::util::out!(
                "official = {} (what `iccs_helpers` links, and what packages ship)",
                d.display()
            ),
            None => {
                crate::util::out!(
                    "official = not measured (pass --official DIR, e.g. the ICCS API folder)"
                )
            }
        }
        crate::util::out!();
        crate::util::out!(
            "{:<18} {:>8} {:>9} {:>15} {:>15} {:>9} {:>6}",
            "function",
            "input",
            "out bits",
            "embedded ns",
            "official ns",
            "off/emb",
            "same"
        );
        for (key, t) in &embedded {
            let o = off.as_ref().and_then(|m| m.get(key).cloned().flatten());
            let cell = |t: &Option<Timing>| {
                t.as_ref()
                    .map_or("failed".to_string(), |t| format!("{:.1}", t.ns))
            };
            let (off_cell, ratio, same) = match (&off, &o, t) {
                (None, _, _) => ("-".to_string(), "-".to_string(), "-".to_string()),
                (Some(_), Some(o), Some(e)) => (
                    format!("{:.1}", o.ns),
                    format!("{:.2}×", o.ns / e.ns),
                    if o.checksum == e.checksum {
                        "yes"
                    } else {
                        "NO"
                    }
                    .to_string(),
                ),
                (Some(_), _, _) => (cell(&o), "-".into(), "-".into()),
            };
            let input = if key.0 == "get_random_number" {
                "-".to_string()
            } else {
                bytes_text(key.1)
            };
            crate::util::out!(
                "{:<18} {:>8} {:>9} {:>15} {:>15} {:>9} {:>6}",
                key.0,
                input,
                key.2,
                cell(t),
                off_cell,
                ratio,
                same
            );
        }
        crate::util::out!(
            "same = the first output of both builds is identical (bit-exact helpers)."
        );
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&work);
    result
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_the_programs_lines() {
        let t = super::parse("sm3hash 32 256 412.5 00ff00ff00ff00ff\npseudoXOF 32 8192 failed 0\n")
            .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].0, ("sm3hash".to_string(), 32, 256));
        assert_eq!(t[0].1.as_ref().unwrap().ns, 412.5);
        assert!(t[1].1.is_none());
        assert!(super::parse("bad line\n").is_err());
    }
}
