//! Phase `count` through the binary on the count zoo (tests/zoo/count-kem: one toy KEM seven
//! ways: four honest about their counts, four that switch callgrind's collection). valgrind must be installed (CI installs it): these tests fail without it, never
//! skip.

use crate::common;
use common::*;
use ngcc_perf::dataset::count::{AddressSpace, CountRecord};
use ngcc_perf::dataset::schema::{CtResult, ProcessStatus};
use std::path::Path;
use std::process::{Command, Stdio};

fn count(run: &Path, label: &str, op: &str) -> CountRecord {
    let path = run
        .join("count/zoo-count")
        .join(format!("{label}__{op}.json"));
    ngcc_perf::util::read_json(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

fn require_valgrind() {
    assert!(
        Path::new("/usr/bin/valgrind").is_file(),
        "valgrind is not installed (apt-get install -y valgrind): the count tests need it"
    );
}

#[test]
fn the_count_zoo_is_counted_marked_and_validated() {
    require_valgrind();
    let zoo = manifest_dir().join("tests/zoo/count-kem");
    let dir = scratch("count_zoo");
    let run = dir.join("r");
    let stderr = campaign_ok("build,kat,count", &zoo, &run, &["--count-calls", "4"]);
    for label in ["count-base", "count-loop", "count-branch", "count-forged"] {
        for op in ["keygen", "enc", "dec"] {
            let r = count(&run, label, op);
            assert_eq!(
                r.status,
                ProcessStatus::Complete,
                "{label} {op}: {:?}",
                r.error
            );
            assert_eq!(r.calls.len(), 4);
            assert!(r.tool.starts_with("valgrind-3."), "{}", r.tool);
            // The job read its own persona: randomisation off, as the jail exec'd callgrind.
            assert_eq!(r.address_space, AddressSpace::Fixed, "{label} {op}");
            // No calibration ran: the job built the setup; one warm-up call, as always.
            assert_eq!((r.setup.as_str(), r.warmups), ("built", 1));
            let s = r.summary.as_ref().expect("summary");
            // A deterministic toy: the same instructions in every call.
            assert!(s.constant_ir && s.ir_min > 0, "{label} {op}: {s:?}");
            // Only count-forged's library holds a client request.
            assert_eq!(r.valgrind_aware(), label == "count-forged", "{label}");
            if op != "dec" {
                // keygen and enc draw randomness: the harness's randombytes is a helper.
                assert!(
                    s.rng_share > 0.25 && s.hash_share == 0.0,
                    "{label} {op}: {s:?}"
                );
            }
        }
        assert!(
            stderr.contains(&format!("count zoo-count/{label} enc: ")),
            "{stderr}"
        );
    }
    let ir = |label: &str, op: &str| count(&run, label, op).calls[0].ir;
    // The extra loop is in enc alone.
    assert!(ir("count-loop", "enc") > ir("count-base", "enc") + 1000);
    for op in ["keygen", "dec"] {
        assert_eq!(ir("count-loop", op), ir("count-base", op), "{op}");
    }
    assert!(stderr.contains("[the library contains valgrind client requests]"));

    // Four libraries that switch the collection, each a different way: their records fail
    // on what the dumps show, whatever the library did (three with client requests, one
    // with none), and their other operations are counted as usual.
    let outside = "collection was on outside the operation";
    let expected = [
        ("count-stopped", "keygen", Some("counted no instructions")),
        ("count-stopped", "enc", Some("counted no instructions")),
        ("count-stopped", "dec", Some("counted no instructions")),
        ("count-leaky", "keygen", None),
        ("count-leaky", "enc", Some(outside)),
        // Its setup ran enc, which left collection on for the rest of the job.
        ("count-leaky", "dec", Some(outside)),
        ("count-paused", "keygen", None),
        (
            "count-paused",
            "enc",
            Some("collection or instrumentation was switched during the operation"),
        ),
        ("count-paused", "dec", None),
        ("count-nested", "keygen", None),
        (
            "count-nested",
            "enc",
            Some("called the entry point ngcc_kem_enc from inside itself"),
        ),
        ("count-nested", "dec", None),
    ];
    for (label, op, why) in expected {
        let r = count(&run, label, op);
        match why {
            None => {
                assert_eq!(r.status, ProcessStatus::Complete, "{label} {op}: {r:?}");
                assert_eq!(r.calls[0].ir, ir("count-base", op), "{label} {op}");
            }
            Some(why) => {
                assert_eq!(r.status, ProcessStatus::Failed, "{label} {op}: {r:?}");
                let e = r.error.as_deref().unwrap_or_default();
                assert!(
                    e.starts_with("dump 1: ") && e.contains(why),
                    "{label} {op}: {e}"
                );
                assert!(r.calls.is_empty() && r.summary.is_none(), "{label} {op}");
            }
        }
        assert_eq!(r.valgrind_aware(), label != "count-nested", "{label}");
    }

    // Shards as a Slurm array runs them (`--build-from` the build run, `--shard K/2`): each
    // counts its own instances, so the two together count every instance exactly once. Two
    // instances whose keys fall in different shards (shard 1 holds count-base and
    // count-loop, shard 2 the other two) are enough to show it.
    let mut counted = Vec::new();
    for k in 1..=2 {
        let shard_run = dir.join(format!("shard-{k}"));
        let shard = format!("{k}/2");
        let from = run.to_str().unwrap();
        let args = [
            "--build-from",
            from,
            "--shard",
            &shard,
            "--only",
            "count-base,count-branch",
            "--count-calls",
            "2",
        ];
        campaign_ok("count", &zoo, &shard_run, &args);
        for label in ["count-base", "count-loop", "count-branch", "count-forged"] {
            if shard_run
                .join(format!("count/zoo-count/{label}__enc.json"))
                .is_file()
            {
                counted.push((k, label));
            }
        }
    }
    assert_eq!(counted, [(1, "count-base"), (2, "count-branch")]);

    // The ct phase marks the forged taint result; its honest twin is flagged, not marked.
    let ct_args = [
        "--only",
        "count-branch,count-forged",
        "--ct-budget",
        "60",
        "--ct-measurements",
        "1000",
    ];
    let stderr = campaign_ok("ct", &zoo, &run, &ct_args);
    let ct = |label: &str| -> CtResult {
        ngcc_perf::util::read_json(&run.join(format!("ct/zoo-count/{label}__dec.json"))).unwrap()
    };
    let honest = ct("count-branch");
    let t = honest.taint.as_ref().unwrap();
    assert!(!t.forged && !t.sites.is_empty(), "{t:?}");
    let forged = ct("count-forged");
    let t = forged.taint.as_ref().unwrap();
    assert!(t.forged, "{t:?}");
    assert!(
        t.sites.is_empty(),
        "the client request unmarked the key: {t:?}"
    );
    assert!(
        stderr.contains("ct zoo-count/count-forged dec: taint FORGED"),
        "{stderr}"
    );

    // Published, validated (every call recomputed from its callgrind text), and tampering
    // with a dump is named.
    let data = dir.join("data");
    let cat = dir.join("cat");
    publish_ok(&run, "count-test", &data);
    catalog_ok(&data, &cat);
    let ok = validate(&data, &cat, None);
    assert!(ok.status.success(), "{}", text(&ok));
    assert!(
        text(&ok).contains(
            "count: 24 record(s), 68 call(s) recomputed from their callgrind text; 24 counted \
             with address-space randomisation off"
        ),
        "{}",
        text(&ok)
    );
    let pages = dir.join("pages");
    let path = |p: &Path| p.to_str().unwrap().to_string();
    run_ok(&[
        "report",
        &path(&data),
        "--catalog",
        &path(&cat),
        "--out",
        &path(&pages),
    ]);
    let page = std::fs::read_to_string(pages.join("zoo-count/perf_count-test.md")).unwrap();
    assert!(page.contains("## Instruction counts"), "{page}");
    assert!(
        page.contains("| `count-loop` | enc | 6 082 | constant |"),
        "{page}"
    );
    assert!(
        page.contains(
            "valgrind-aware: the library of count-forged (1 client request(s)), count-leaky (1 \
             client request(s)), count-paused (2 client request(s)), count-stopped (1 client \
             request(s)) contains"
        ),
        "{page}"
    );
    assert!(
        page.contains("forged: 1 valgrind client request(s) in the library"),
        "{page}"
    );
    let raw = data.join("count/zoo-count/count-base__enc.callgrind");
    let t = std::fs::read_to_string(&raw).unwrap();
    let ir0 = ir("count-base", "enc");
    let bad = t.replacen(
        &format!("summary: {ir0}"),
        &format!("summary: {}", ir0 + 1),
        1,
    );
    assert_ne!(bad, t);
    // The same text with one more instruction in a cost line.
    let bad = bad.replacen("\n0 10 ", "\n0 11 ", 1);
    std::fs::write(&raw, bad).unwrap();
    let v = validate(&data, &cat, None);
    assert_eq!(v.status.code(), Some(1));
    assert!(
        text(&v).contains("count/zoo-count/count-base__enc.json: count/zoo-count/count-base__enc.callgrind has sha256"),
        "{}",
        text(&v)
    );
}

/// A submitter's CI: the toy before and after a change that adds a loop to enc, and the same
/// code rebuilt. `compare --counter instructions --fail-above 1` fails on exactly enc, and
/// the rebuild differs by nothing. The rebuild's campaign runs from a copy of ngcc-perf that
/// is replaced as soon as it has started, as a `cargo build` during a long campaign does:
/// its jobs (the keeper, and callgrind running our worker) still run the image that started.
#[test]
fn the_instruction_gate_catches_exactly_the_grown_operation() {
    require_valgrind();
    let zoo = manifest_dir().join("tests/zoo/count-kem");
    let dir = scratch("count_gate");
    let dataset = |name: &str, defines: &str, replaced: bool| {
        let cands = dir.join(format!("{name}-cands/toy"));
        for f in ["count_toy.c", "api.h"] {
            std::fs::create_dir_all(&cands).unwrap();
            std::fs::copy(zoo.join(f), cands.join(f)).unwrap();
        }
        write(
            &cands.join("candidate.toml"),
            &format!(
                "id = \"toy\"\nalgorithm = \"Toy\"\nkind = \"kem\"\napi = \"nist\"\n\n\
                 [[instances]]\nlabel = \"toy-1\"\ndir = \".\"\nnamespace = \"CTTOY\"\n\
                 defines = [{defines}]\n[instances.kat]\n\
                 sha256 = \"ea6928dec3adc470c32108bf84fac8b37ac2b7684a311b6cea0ae8bfc04059a6\"\n"
            ),
        );
        let run = dir.join(format!("{name}-run"));
        let args = ["--count-calls", "3"];
        if replaced {
            let exe = dir.join("bin/ngcc-perf");
            std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
            std::fs::copy(env!("CARGO_BIN_EXE_ngcc-perf"), &exe).unwrap();
            // campaign_ok's command (its arguments and environment) from the copy.
            let cmd = campaign_cmd("build,kat,count", &cands, &run, &args);
            let _timed = measuring();
            let child = Command::new(&exe)
                .args(cmd.get_args())
                .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // `spawn` returns once the copy is executing: now the "rebuild" replaces it with
            // a file that is not ngcc-perf at all.
            std::fs::remove_file(&exe).unwrap();
            write(&exe, "#!/bin/sh\nexit 97\n");
            std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", text(&out));
        } else {
            campaign_ok("build,kat,count", &cands, &run, &args);
        }
        let data = dir.join(format!("{name}-data"));
        publish_ok(&run, "gate", &data);
        data
    };
    let before = dataset("before", "", false);
    let after = dataset("after", "\"COUNT_EXTRA_ENC\"", false);
    let rebuilt = dataset("rebuilt", "", true);
    let gate = |a: &Path, b: &Path| {
        bin()
            .args(["compare", "--counter", "instructions", "--fail-above", "1"])
            .arg(a)
            .arg(b)
            .output()
            .unwrap()
    };
    let out = gate(&before, &after);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("1 grew by more than 1 % (--fail-above): toy/toy-1 enc\n"),
        "{t}"
    );
    let grew: Vec<&str> = t.lines().filter(|l| l.ends_with("GREW")).collect();
    assert_eq!(grew.len(), 1, "{t}");
    assert!(
        grew[0].starts_with("toy/toy-1") && grew[0].contains(" enc "),
        "{t}"
    );
    let out = gate(&before, &rebuilt);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains(
            "compare: 3 operation(s) in both, 3 with the same instructions per call; 0 grew"
        ),
        "{t}"
    );
    for l in t.lines().filter(|l| l.starts_with("toy/")) {
        assert!(l.contains(" 0 ") && l.contains("0.00 %"), "{l}");
    }
}
