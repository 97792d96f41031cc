//! `ngcc-perf iccs …` as a user runs it: outputs, exit codes, help.

use crate::common;
use common::bin;
use ngcc_iccs::vectors as vx;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn iccs(args: &[&str]) -> Run {
    let out = bin().arg("iccs").args(args).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn ok(args: &[&str]) -> String {
    let r = iccs(args);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    r.stdout
}

fn usage_error(args: &[&str]) -> String {
    let r = iccs(args);
    assert_eq!(
        r.code, 2,
        "{args:?} should be a usage error, got {}: {}{}",
        r.code, r.stdout, r.stderr
    );
    assert!(r.stdout.is_empty(), "{args:?} printed {:?}", r.stdout);
    assert_eq!(
        r.stderr.lines().count(),
        1,
        "{args:?}: one-line error, got {:?}",
        r.stderr
    );
    r.stderr
}

#[test]
fn sm3_rows() {
    for &(msg, bits, want) in vx::SM3_ROWS {
        assert_eq!(
            ok(&["sm3", "--bits", &bits.to_string(), msg]),
            format!("{want}\n")
        );
    }
    // --bits defaults to every hex bit; lowercase hex is fine.
    assert_eq!(ok(&["sm3", "616263"]), format!("{}\n", vx::SM3_ROWS[1].2));
    assert_eq!(ok(&["sm3", ""]), format!("{}\n", vx::SM3_ROWS[0].2));
}

#[test]
fn pseudohash_rows() {
    for &(d, msg, bits, want) in vx::PSEUDOHASH_ROWS {
        let out = ok(&[
            "pseudohash",
            "--digest-bits",
            &d.to_string(),
            "--bits",
            &bits.to_string(),
            msg,
        ]);
        assert_eq!(out, format!("{want}\n"));
    }
}

#[test]
fn xof_rows() {
    for &(n, msg, bits, want) in vx::XOF_ROWS {
        let out = ok(&[
            "xof",
            "--out-bits",
            &n.to_string(),
            "--bits",
            &bits.to_string(),
            msg,
        ]);
        assert_eq!(out, format!("{want}\n"), "N = {n}");
    }
}

#[test]
fn drng_kat_seeds_and_call_sequence() {
    let nonce = "73656564".repeat(16);
    let out = ok(&["drng", "--seed", &nonce, "--draws", &["512"; 10].join(",")]);
    assert_eq!(out.lines().collect::<Vec<_>>(), vx::KAT_SEEDS);
    // get(13), get(0) (an empty line), get(264)
    let out = ok(&["drng", "--seed", &nonce, "--draws", "13, 0,264"]);
    let want: Vec<&str> = vx::CALL_COUNT_DRAWS.iter().map(|d| d.1).collect();
    assert_eq!(out, format!("{}\n", want.join("\n")));
    // The empty seed.
    assert_eq!(
        ok(&["drng", "--seed", "", "--draws", "256"]),
        format!("{}\n", vx::EMPTY_SEED_GET256)
    );
}

#[test]
fn bad_input_is_a_one_line_usage_error() {
    assert!(usage_error(&["sm3", "abc"]).contains("odd number"));
    assert!(usage_error(&["sm3", "--bits", "9", "61"]).contains("--bits 9"));
    assert!(usage_error(&["sm3", "0x61"]).contains("hex"));
    assert!(
        usage_error(&["pseudohash", "--digest-bits", "256", "61"]).contains("512, 768 or 1024")
    );
    assert!(
        usage_error(&["pseudohash", "--digest-bits", "512", "--bits", "100", "61"])
            .contains("--bits")
    );
    assert!(usage_error(&["xof", "--out-bits", "8", "--bits", "17", "6162"]).contains("--bits"));
    assert!(usage_error(&["xof", "--out-bits", "99999999999", "61"]).contains("limit"));
    assert!(usage_error(&["drng", "--seed", "0", "--draws", "8"]).contains("--seed"));
    for bad in ["", "1,,2", "a", "-1", "8;8", "99999999999"] {
        usage_error(&["drng", "--seed", "00", "--draws", bad]);
    }
}

#[test]
fn clap_errors_also_exit_2() {
    assert_eq!(iccs(&["sm3", "--bits", "x", "61"]).code, 2);
    assert_eq!(iccs(&["sm3"]).code, 2);
    assert_eq!(iccs(&["nosuch"]).code, 2);
}

#[test]
fn every_subcommand_has_help() {
    for (cmd, words) in [
        ("sm3", "sm3hash"),
        ("pseudohash", "512, 768 or 1024"),
        ("xof", "pseudoXOF"),
        ("drng", "get_random_number"),
        ("selftest", "PASS"),
        ("bench", "openssl speed"),
    ] {
        let out = ok(&[cmd, "--help"]);
        assert!(out.contains(words), "{cmd} --help lacks {words:?}:\n{out}");
    }
    let out = ok(&["--help"]);
    for cmd in ["sm3", "pseudohash", "xof", "drng", "selftest", "bench"] {
        assert!(out.contains(cmd), "iccs --help lacks {cmd}");
    }
}

#[test]
fn selftest_passes() {
    let r = iccs(&["selftest"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines.len() >= 29, "{}", r.stdout);
    assert!(lines.iter().all(|l| l.starts_with("PASS ")), "{}", r.stdout);
    // The -4 message is captured by the check, not leaked.
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}
