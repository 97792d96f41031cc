//! The zoo: misbehaving toy candidates (tests/zoo/, both API flavours) in one campaign with
//! honest ones. For every entry: the exact status in build.json, the KAT log's RESULT line
//! and the records, with the one-line explanation; the honest instances are measured
//! normally and the campaign exits 0.
//!
//! Hangs and leaks end fast: --kat-timeout 2, --measure-timeout 1.5, --mem-limit 256.
//!
//! The ICCS toys have no kat.sha256, so their honest entries end NOKAT (timed anyway); the
//! statuses decided before any digest (CRASH, TIMEOUT, OVERFLOW, CRYPTOFAIL, and the
//! replay that catches nondeterminism) are exact.

mod common;
use common::*;
use ngcc_perf::dataset::schema::{Campaign, Record};
use std::path::Path;
use std::time::Instant;

const KAT_TIMEOUT: &str = "2";
const MEASURE_TIMEOUT: &str = "1.5";
const MEM_MIB: &str = "256";

/// How one operation's record must end.
#[derive(Clone, Copy, Debug)]
enum Rec {
    Complete,
    /// processes[0].status and a fragment of its stderr (the explanation).
    Failed(&'static str, &'static str),
}
use Rec::*;

struct Entry {
    key: &'static str,
    /// The final KAT status (or BUILDFAIL) and a fragment of its detail (or build error).
    kat: &'static str,
    detail: &'static str,
    /// Records when the instance is timed (its KAT status is timed anyway).
    ops: &'static [(&'static str, Rec)],
}

const KEM_OK: &[(&str, Rec)] = &[("keygen", Complete), ("enc", Complete), ("dec", Complete)];
const NONE: &[(&str, Rec)] = &[];
/// Killed at --measure-timeout.
const KILLED: Rec = Failed("hard_timeout", "killed after 1.5 s");
/// A hang in enc, which dec's setup runs too.
const LOOP_ENC: &[(&str, Rec)] = &[("keygen", Complete), ("enc", KILLED), ("dec", KILLED)];
/// A sleep past the timeout in every operation.
const SLEEP_LONG: &[(&str, Rec)] = &[("keygen", KILLED), ("enc", KILLED), ("dec", KILLED)];
/// enc writes past ct, also in dec's setup.
const OVERRUN_CT: &[(&str, Rec)] = &[
    ("keygen", Complete),
    (
        "enc",
        Failed(
            "failed",
            "OVERFLOW: enc wrote past ct (declared 32 bytes) at offset 32",
        ),
    ),
    (
        "dec",
        Failed(
            "failed",
            "OVERFLOW: setup for dec wrote past ct (declared 32 bytes)",
        ),
    ),
];
/// dec gives another shared secret: timing it is refused.
const BAD_DEC: &[(&str, Rec)] = &[
    ("keygen", Complete),
    ("enc", Complete),
    (
        "dec",
        Failed("failed", "honest decapsulation mismatch; refusing timing"),
    ),
];

const ZOO: &[Entry] = &[
    // ---------------------------------------------------------------- NIST flavour, KEM
    Entry {
        key: "zoo-nist/toy-ok",
        kat: "PASS",
        detail: "",
        ops: KEM_OK,
    },
    Entry {
        key: "zoo-nist/toy-mismatch",
        kat: "MISMATCH",
        detail: "!= expected 0000000000000000",
        ops: KEM_OK,
    },
    Entry {
        key: "zoo-nist/toy-crash-keygen",
        kat: "CRASH",
        detail: "killed by signal 11 (SIGSEGV, invalid memory access) in keygen",
        ops: NONE,
    },
    Entry {
        key: "zoo-nist/toy-missing-symbol",
        kat: "BUILDFAIL",
        detail: "undefined reference to `toy_never_defined'",
        ops: NONE,
    },
    Entry {
        key: "zoo-nist/toy-broken-source",
        kat: "BUILDFAIL",
        detail: "error: unknown type name",
        ops: NONE,
    },
    Entry {
        key: "zoo-nist-kem/abort-dec",
        kat: "CRASH",
        detail: "killed by signal 6 (SIGABRT, abort) in dec",
        ops: NONE,
    },
    Entry {
        key: "zoo-nist-kem/loop-enc",
        kat: "TIMEOUT",
        detail: "no result within 2 s",
        ops: LOOP_ENC,
    },
    Entry {
        key: "zoo-nist-kem/malloc-keygen",
        kat: "CRASH",
        detail: "in keygen; address-space limit of 256 MiB reached",
        ops: NONE,
    },
    Entry {
        key: "zoo-nist-kem/overrun-ct",
        kat: "OVERFLOW",
        detail: "enc wrote past ct (declared 32 bytes) at offset 32",
        ops: OVERRUN_CT,
    },
    Entry {
        key: "zoo-nist-kem/nondet",
        kat: "MISMATCH",
        detail: "!= expected 29c48449e7031ddd",
        ops: KEM_OK,
    },
    Entry {
        key: "zoo-nist-kem/bad-dec",
        kat: "CRYPTOFAIL",
        detail: "decapsulation gave a different shared secret",
        ops: BAD_DEC,
    },
    Entry {
        key: "zoo-nist-kem/exit-keygen",
        kat: "CRASH",
        detail: "exited with status 0 in keygen without a result (did the library call exit()?)",
        ops: NONE,
    },
    Entry {
        key: "zoo-nist-kem/stdout",
        kat: "PASS",
        detail: "",
        ops: KEM_OK,
    },
    Entry {
        key: "zoo-nist-kem/fork",
        kat: "PASS",
        detail: "",
        ops: KEM_OK,
    },
    Entry {
        key: "zoo-nist-kem/sleep-long",
        kat: "TIMEOUT",
        detail: "no result within 2 s",
        ops: SLEEP_LONG,
    },
    Entry {
        key: "zoo-nist-kem/sleep-short",
        kat: "PASS",
        detail: "",
        ops: KEM_OK,
    },
    Entry {
        key: "zoo-nist-kem/ctor-crash",
        kat: "CRASH",
        detail: "SIGSEGV, invalid memory access) in dlopen (library constructors)",
        ops: NONE,
    },
    Entry {
        key: "zoo-nist-kem/probe",
        kat: "PASS",
        detail: "",
        ops: KEM_OK,
    },
    // ---------------------------------------------------------------- NIST flavour, SIG
    Entry {
        key: "zoo-nist-sig/sig-ok",
        kat: "PASS",
        detail: "",
        ops: &[
            ("keygen", Complete),
            ("sign", Complete),
            ("verify", Complete),
        ],
    },
    Entry {
        key: "zoo-nist-sig/wrong-len",
        kat: "OVERFLOW",
        detail: "crypto_sign returned length 66 > 65",
        ops: &[
            ("keygen", Complete),
            (
                "sign",
                Failed(
                    "failed",
                    "OVERFLOW: sign returned signature length 33 > declared 32",
                ),
            ),
            (
                "verify",
                Failed(
                    "failed",
                    "OVERFLOW: sign returned signature length 33 > declared 32",
                ),
            ),
        ],
    },
    // ---------------------------------------------------------------- ICCS flavour, KEM
    Entry {
        key: "zoo-iccs-kem/iccs-ok",
        kat: "NOKAT",
        detail: "",
        ops: KEM_OK,
    },
    Entry {
        key: "zoo-iccs-kem/segv-keygen",
        kat: "CRASH",
        // The ICCS KAT flow names the operation it was in (not "dlopen").
        detail: "killed by signal 11 (SIGSEGV, invalid memory access) in keygen",
        ops: &[
            (
                "keygen",
                Failed(
                    "failed",
                    "crashed: killed by signal 11 (SIGSEGV, invalid memory access) in keygen",
                ),
            ),
            (
                "enc",
                Failed("failed", "SIGSEGV, invalid memory access) in setup for enc"),
            ),
            (
                "dec",
                Failed("failed", "SIGSEGV, invalid memory access) in setup for dec"),
            ),
        ],
    },
    Entry {
        key: "zoo-iccs-kem/abort-dec",
        kat: "CRASH",
        detail: "killed by signal 6 (SIGABRT, abort) in dec",
        ops: &[
            ("keygen", Complete),
            ("enc", Complete),
            (
                "dec",
                Failed(
                    "failed",
                    "killed by signal 6 (SIGABRT, abort) in setup for dec",
                ),
            ),
        ],
    },
    Entry {
        key: "zoo-iccs-kem/loop-enc",
        kat: "TIMEOUT",
        detail: "no result within 2 s",
        ops: LOOP_ENC,
    },
    Entry {
        key: "zoo-iccs-kem/malloc-keygen",
        kat: "CRASH",
        detail: "address-space limit of 256 MiB reached",
        ops: &[
            (
                "keygen",
                Failed(
                    "failed",
                    "in keygen; address-space limit of 256 MiB reached",
                ),
            ),
            (
                "enc",
                Failed(
                    "failed",
                    "in setup for enc; address-space limit of 256 MiB reached",
                ),
            ),
            (
                "dec",
                Failed(
                    "failed",
                    "in setup for dec; address-space limit of 256 MiB reached",
                ),
            ),
        ],
    },
    Entry {
        key: "zoo-iccs-kem/overrun-ct",
        kat: "OVERFLOW",
        detail: "past ct",
        ops: OVERRUN_CT,
    },
    Entry {
        key: "zoo-iccs-kem/wrong-len",
        kat: "OVERFLOW",
        detail: "more than the declared 32",
        ops: &[
            ("keygen", Complete),
            (
                "enc",
                Failed(
                    "failed",
                    "OVERFLOW: enc returned ct length 33 > declared 32",
                ),
            ),
            (
                "dec",
                Failed(
                    "failed",
                    "OVERFLOW: enc returned ct length 33 > declared 32",
                ),
            ),
        ],
    },
    Entry {
        // Needs a kat.sha256 manifest to become MISMATCH; without one it stays NOKAT.
        key: "zoo-iccs-kem/nondet",
        kat: "MISMATCH",
        detail: "nondeterministic: count 0 replayed with the same seed gave a different PK",
        ops: KEM_OK,
    },
    Entry {
        key: "zoo-iccs-kem/bad-dec",
        kat: "CRYPTOFAIL",
        detail: "",
        ops: BAD_DEC,
    },
    Entry {
        key: "zoo-iccs-kem/exit-keygen",
        kat: "CRASH",
        detail: "(did the library call exit()?)",
        ops: &[
            (
                "keygen",
                Failed(
                    "failed",
                    "exited with status 0 in keygen without a result (did the library call exit()?)",
                ),
            ),
            (
                "enc",
                Failed(
                    "failed",
                    "exited with status 0 in setup for enc without a result",
                ),
            ),
            (
                "dec",
                Failed(
                    "failed",
                    "exited with status 0 in setup for dec without a result",
                ),
            ),
        ],
    },
    Entry {
        key: "zoo-iccs-kem/stdout",
        kat: "NOKAT",
        detail: "",
        ops: KEM_OK,
    },
    Entry {
        key: "zoo-iccs-kem/fork",
        kat: "NOKAT",
        detail: "",
        ops: KEM_OK,
    },
    Entry {
        key: "zoo-iccs-kem/sleep-long",
        kat: "TIMEOUT",
        detail: "no result within 2 s",
        ops: SLEEP_LONG,
    },
    Entry {
        key: "zoo-iccs-kem/sleep-short",
        kat: "NOKAT",
        detail: "",
        ops: KEM_OK,
    },
    Entry {
        // Decided when the library is loaded, before any ICCS KAT code: final already.
        key: "zoo-iccs-kem/ctor-crash",
        kat: "CRASH",
        detail: "SIGSEGV, invalid memory access) in dlopen (library constructors)",
        ops: NONE,
    },
    Entry {
        key: "zoo-iccs-kem/missing-symbol",
        kat: "BUILDFAIL",
        detail: "undefined reference to `toy_never_defined'",
        ops: NONE,
    },
    Entry {
        key: "zoo-iccs-kem/broken-source",
        kat: "BUILDFAIL",
        detail: "error: unknown type name",
        ops: NONE,
    },
    Entry {
        key: "zoo-iccs-kem/probe",
        kat: "NOKAT",
        detail: "",
        ops: KEM_OK,
    },
];

/// KAT statuses the measuring phases never time (measurable.rs).
fn timed(kat: &str) -> bool {
    !matches!(kat, "CRASH" | "LOADFAIL" | "BUILDFAIL")
}

fn record(run: &Path, key: &str, op: &str) -> Option<Record> {
    let (cand, label) = key.split_once('/').unwrap();
    let path = run.join(format!("records/{cand}/{label}__{op}.json"));
    path.is_file()
        .then(|| ngcc_perf::util::read_json(&path).unwrap_or_else(|e| panic!("{e:#}")))
}

fn check_entry(run: &Path, campaign: &Campaign, e: &Entry) -> String {
    let b = build_entry(run, e.key);
    let (cand, label) = e.key.split_once('/').unwrap();
    if e.kat == "BUILDFAIL" {
        assert_eq!(b.kat, "BUILDFAIL", "{}", e.key);
        assert_eq!(b.build_status.as_deref(), Some("failed"), "{}", e.key);
        let err = b.build_error.clone().unwrap_or_default();
        assert!(err.contains(e.detail), "{}: build error {err:?}", e.key);
        assert!(record(run, e.key, "keygen").is_none());
        return format!("BUILDFAIL: {err}");
    }
    let detail = b.kat_detail.clone().unwrap_or_default();
    assert_eq!(b.kat, e.kat, "{}: KAT {} ({detail})", e.key, b.kat);
    if e.kat == "TIMEOUT" {
        // A hang is not a flag problem: no harness-default rebuild waiting as long again.
        assert_eq!(b.flags, "guide", "{}", e.key);
        assert_eq!(b.guide_result, None, "{}", e.key);
    }
    assert!(detail.contains(e.detail), "{}: detail {detail:?}", e.key);
    // The KAT log ends with the same verdict.
    let log = run.join(format!("kat/{cand}/{label}.log"));
    let last = last_line(&log);
    let want = format!("RESULT {cand} {label} {}", b.kat);
    assert!(last.starts_with(&want), "{}: {last:?}", e.key);
    if !detail.is_empty() {
        assert!(last.contains(&detail), "{}: {last:?}", e.key);
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains(&format!("sandbox     = address space {MEM_MIB} MiB")),
        "{}: the KAT log names the sandbox, even after a crash:\n{text}",
        e.key
    );
    // Measured as the KAT status allows; every operation accounted for.
    let mut summary = vec![format!("KAT {}{}", b.kat, opt(&detail))];
    if timed(&b.kat) {
        assert!(!e.ops.is_empty(), "{}: timed but no ops expected", e.key);
        for (op, want) in e.ops {
            let r = record(run, e.key, op).unwrap_or_else(|| panic!("{}: no {op} record", e.key));
            let sandbox = r.ngcc.as_ref().and_then(|x| x.sandbox.clone());
            match want {
                Complete => {
                    assert_eq!(r.status, "complete", "{} {op}: {:?}", e.key, r.processes);
                    assert!(r.stats.as_ref().unwrap().measurements > 0);
                    let s = sandbox.unwrap_or_default();
                    assert!(s.contains("address space 256 MiB"), "{} {op}: {s}", e.key);
                    summary.push(format!("{op} complete"));
                }
                Failed(status, why) => {
                    assert_eq!(r.status, "failed_or_partial", "{} {op}", e.key);
                    let p = &r.processes[0];
                    assert_eq!(p.status, *status, "{} {op}: {:?}", e.key, p.stderr);
                    assert!(p.stderr.contains(why), "{} {op}: {:?}", e.key, p.stderr);
                    summary.push(format!(
                        "{op} {status}: {}",
                        p.stderr.lines().next().unwrap()
                    ));
                }
            }
        }
    } else {
        for op in ["keygen", "enc", "dec", "sign", "verify"] {
            assert!(record(run, e.key, op).is_none(), "{} {op} was timed", e.key);
        }
        let why = campaign
            .skipped
            .get(e.key)
            .and_then(|v| v.as_str())
            .unwrap_or_else(|| panic!("{}: not timed and not listed as skipped", e.key));
        assert!(why.contains("is never timed"), "{}: {why}", e.key);
        summary.push(format!("not timed: {why}"));
    }
    summary.join("; ")
}

fn opt(d: &str) -> String {
    if d.is_empty() {
        String::new()
    } else {
        format!(" ({d})")
    }
}

/// Processes the zoo's `fork` entries left: every one must be gone with its process group.
fn forked_survivors(run: &Path) -> Vec<String> {
    let mut alive = Vec::new();
    let mut pids = 0;
    for dir in std::fs::read_dir(run.join("scratch")).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(dir.path().join("zoo-fork.pid")) else {
            continue;
        };
        for pid in text.split_whitespace() {
            pids += 1;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            // Gone, a zombie, or a reused pid that is not our child binary.
            let state = stat.rsplit(") ").next().unwrap_or("").chars().next();
            if cmd.contains("__child") && state.is_some_and(|s| s != 'Z' && s != 'X') {
                alive.push(format!("{pid} ({})", dir.path().display()));
            }
        }
    }
    assert!(pids >= 4, "the fork entries left {pids} pid files");
    alive
}

#[test]
fn the_zoo_gets_exact_statuses_and_the_rest_is_measured() {
    let run = tempfile::tempdir().unwrap();
    let r = run.path();
    let zoo = manifest_dir().join("tests/zoo");
    let t = Instant::now();
    let stderr = campaign_ok(
        "all",
        &zoo,
        r,
        &[
            "--kat-timeout",
            KAT_TIMEOUT,
            "--measure-timeout",
            MEASURE_TIMEOUT,
            "--mem-limit",
            MEM_MIB,
            "--allow-unfixed-host",
            "--trial-target",
            "0.002",
            "--op-budget",
            "0.05",
        ],
    );
    let took = t.elapsed().as_secs_f64();
    assert!(!stderr.contains("panicked"), "{stderr}");

    let campaign: Campaign = ngcc_perf::util::read_json(&r.join("campaign.json")).unwrap();
    let mut table = Vec::new();
    for e in ZOO {
        table.push(format!("{:<30} {}", e.key, check_entry(r, &campaign, e)));
    }
    // Every instance in the zoo is in the table above.
    assert_eq!(build_file(r).entries().len(), ZOO.len());

    // Inside the sandbox (the probe prints what it sees, into the KAT log).
    let probe = std::fs::read_to_string(r.join("kat/zoo-nist-kem/probe.log")).unwrap();
    assert!(probe.contains("zoo-probe fds=0,1,2,3\n"), "{probe}");
    assert!(
        probe.contains("zoo-probe cwd=") && probe.contains("/scratch/kat-zoo-nist-kem-probe\n"),
        "{probe}"
    );
    assert!(probe.contains("zoo-probe as=268435456\n"), "{probe}");
    assert!(probe.contains("zoo-probe core=0\n"), "{probe}");
    assert!(
        probe.contains("zoo-probe cpu=7\n"),
        "KAT CPU limit = timeout + 5: {probe}"
    );
    if probe.contains("sandbox     = ") && probe.contains(", no network,") {
        assert!(probe.contains("zoo-probe net=lo\n"), "{probe}");
    } else {
        assert!(probe.contains("network not isolated"), "{probe}");
    }
    // A trial process of the probe: its scratch cwd and limits, in the record.
    let rec = record(r, "zoo-nist-kem/probe", "keygen").unwrap();
    let err = &rec.processes[0].stderr;
    assert!(
        err.contains("/scratch/trial-zoo-nist-kem-probe-keygen-0\n"),
        "{err}"
    );
    assert!(err.contains("zoo-probe as=268435456"), "{err}");

    // Chatty candidates: their output is in the KAT log, capped.
    let chatty = std::fs::read_to_string(r.join("kat/zoo-nist-kem/stdout.log")).unwrap();
    assert!(chatty.contains("zoo: hello from keygen 1"), "{chatty}");
    assert!(chatty.contains("more bytes of output dropped]"));
    assert!(chatty.len() < 80_000, "output cap: {} bytes", chatty.len());

    // Slow but correct: PASS with a slow timing, measured at about 100 ms.
    let slow = std::fs::read_to_string(r.join("kat/zoo-nist-kem/sleep-short.log")).unwrap();
    let ms: f64 = slow
        .split("timing  keygen ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!(ms >= 100.0, "{slow}");
    for key in ["zoo-nist-kem/sleep-short", "zoo-iccs-kem/sleep-short"] {
        let rec = record(r, key, "keygen").unwrap();
        assert!(rec.stats.unwrap().mean_seconds >= 0.1);
    }

    // Forked processes die with their process group.
    let alive = forked_survivors(r);
    assert!(alive.is_empty(), "forked processes survived: {alive:?}");

    // Nothing half-written.
    let mut tmp = Vec::new();
    find_tmp(r, &mut tmp);
    assert!(tmp.is_empty(), "{tmp:?}");

    eprintln!(
        "zoo: {} entries, campaign all took {took:.1} s\n{}",
        ZOO.len(),
        table.join("\n")
    );
}

fn find_tmp(dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() && !p.ends_with("scratch") {
            find_tmp(&p, out);
        } else if p.to_string_lossy().ends_with(".tmp") {
            out.push(p.display().to_string());
        }
    }
}
