//! ICCS KAT flows on tiny toy candidates written here (no PQClean needed): a 4-pass key
//! exchange (passes beyond 3), missing and early-finishing passes, a candidate with its own
//! drng.c and its own `drng_algorithm`, a bad ALGORITHM_INSTANCE, a verify that accepts
//! anything, `kat_count`, and the `kat manifest` round trip.

use crate::common;
use common::*;
use ngcc_iccs::vectors as vx;
use std::path::Path;

const KEX_H: &str = r#"#ifndef KEX_ALGORITHMINSTANCE_H
#define KEX_ALGORITHMINSTANCE_H
#define OUTPUT_BLANK_TEST_VECTORS 0
#define ALGORITHM_INSTANCE "TOY_KEX4"
typedef unsigned long long ull;
ull kex_get_passes_num(void);
ull kex_get_pk_len_bytes(void);
ull kex_get_sk_len_bytes(void);
ull kex_get_sta_len_bytes(void);
ull kex_get_stb_len_bytes(void);
ull kex_get_ss_len_bytes(void);
ull kex_get_total_msg_len_bytes(void);
int kex_init_a(unsigned char *pk, ull *pkl, unsigned char *sk, ull *skl, unsigned char *st, ull *stl);
int kex_init_b(unsigned char *pk, ull *pkl, unsigned char *sk, ull *skl, unsigned char *st, ull *stl);
int kex_generate_pass1_msg_a(unsigned char *sk, ull skl, unsigned char *pk, ull pkl, unsigned char *st,
                             ull *stl, unsigned char *m, ull *ml);
int kex_generate_pass2_msg_b(unsigned char *sk, ull skl, unsigned char *pk, ull pkl, unsigned char *in,
                             ull inl, unsigned char *st, ull *stl, unsigned char *m, ull *ml);
int kex_generate_pass3_msg_a(unsigned char *sk, ull skl, unsigned char *pk, ull pkl, unsigned char *in,
                             ull inl, unsigned char *st, ull *stl, unsigned char *m, ull *ml);
int kex_generate_pass4_msg_b(unsigned char *sk, ull skl, unsigned char *pk, ull pkl, unsigned char *in,
                             ull inl, unsigned char *st, ull *stl, unsigned char *m, ull *ml);
int kex_derive_ss_a(unsigned char *sk, ull skl, unsigned char *pk, ull pkl, unsigned char *mb, ull mbl,
                    unsigned char *st, ull stl, unsigned char *ss, ull *ssl);
int kex_derive_ss_b(unsigned char *sk, ull skl, unsigned char *pk, ull pkl, unsigned char *ma, ull mal,
                    unsigned char *st, ull stl, unsigned char *ss, ull *ssl);
#endif
"#;

/// Every pass sends 32 DRNG bytes; each state is the XOR of all messages it has seen, so
/// A's state after pass 3 XOR B's last message equals B's state after pass 4.
const KEX_C: &str = r#"#include <string.h>
#include "KEX_AlgorithmInstance.h"
#include "drng.h"
extern DRNG_ctx drng_algorithm;
#define N 32
ull kex_get_passes_num(void) { return 4; }
ull kex_get_pk_len_bytes(void) { return 16; }
ull kex_get_sk_len_bytes(void) { return 16; }
ull kex_get_sta_len_bytes(void) { return N; }
ull kex_get_stb_len_bytes(void) { return N; }
ull kex_get_ss_len_bytes(void) { return N; }
ull kex_get_total_msg_len_bytes(void) { return N; }
static void xor_into(unsigned char *d, const unsigned char *s) {
    int i;
    for (i = 0; i < N; i++) d[i] ^= s[i];
}
static int init(unsigned char *pk, ull *pkl, unsigned char *sk, ull *skl, unsigned char *st, ull *stl) {
    int i;
    get_random_number(&drng_algorithm, sk, 128);
    for (i = 0; i < 16; i++) pk[i] = sk[i] ^ 0x5A;
    memset(st, 0, N);
    *pkl = 16;
    *skl = 16;
    *stl = N;
    return 0;
}
static void step(unsigned char *st, ull *stl, const unsigned char *in, unsigned char *m, ull *ml) {
    if (in) xor_into(st, in);
    get_random_number(&drng_algorithm, m, 8 * N);
    xor_into(st, m);
    *stl = N;
    *ml = N;
}
int kex_init_a(unsigned char *pk, ull *pkl, unsigned char *sk, ull *skl, unsigned char *st, ull *stl) {
    return init(pk, pkl, sk, skl, st, stl);
}
int kex_init_b(unsigned char *pk, ull *pkl, unsigned char *sk, ull *skl, unsigned char *st, ull *stl) {
    return init(pk, pkl, sk, skl, st, stl);
}
int kex_generate_pass1_msg_a(unsigned char *sk, ull skl, unsigned char *pk, ull pkl, unsigned char *st,
                             ull *stl, unsigned char *m, ull *ml) {
    step(st, stl, NULL, m, ml);
    return 0;
}
int kex_generate_pass2_msg_b(unsigned char *sk, ull skl, unsigned char *pk, ull pkl, unsigned char *in,
                             ull inl, unsigned char *st, ull *stl, unsigned char *m, ull *ml) {
    if (inl != N) return -2;
    step(st, stl, in, m, ml);
#ifdef TOY_EARLY_FINISH
    return 1;
#else
    return 0;
#endif
}
int kex_generate_pass3_msg_a(unsigned char *sk, ull skl, unsigned char *pk, ull pkl, unsigned char *in,
                             ull inl, unsigned char *st, ull *stl, unsigned char *m, ull *ml) {
    if (inl != N) return -2;
    step(st, stl, in, m, ml);
    return 0;
}
#ifndef TOY_NO_PASS4
int kex_generate_pass4_msg_b(unsigned char *sk, ull skl, unsigned char *pk, ull pkl, unsigned char *in,
                             ull inl, unsigned char *st, ull *stl, unsigned char *m, ull *ml) {
    if (inl != N) return -2;
    step(st, stl, in, m, ml);
    return 1;
}
#endif
int kex_derive_ss_a(unsigned char *sk, ull skl, unsigned char *pk, ull pkl, unsigned char *mb, ull mbl,
                    unsigned char *st, ull stl, unsigned char *ss, ull *ssl) {
    if (mb == NULL || mbl != N || stl != N) return -2;
    memcpy(ss, st, N);
    xor_into(ss, mb);
    *ssl = N;
    return 0;
}
int kex_derive_ss_b(unsigned char *sk, ull skl, unsigned char *pk, ull pkl, unsigned char *ma, ull mal,
                    unsigned char *st, ull stl, unsigned char *ss, ull *ssl) {
    if (ma == NULL || mal != N || stl != N) return -2;
    memcpy(ss, st, N);
    *ssl = N;
    return 0;
}
"#;

const KEM_H: &str = r#"#ifndef KEM_ALGORITHMINSTANCE_H
#define KEM_ALGORITHMINSTANCE_H
#define OUTPUT_BLANK_TEST_VECTORS 0
#ifdef TOY_BAD_NAME
#define ALGORITHM_INSTANCE "toy kem"
#else
#define ALGORITHM_INSTANCE "TOY_KEM"
#endif
typedef unsigned long long ull;
ull kem_get_pk_len_bytes(void);
ull kem_get_sk_len_bytes(void);
ull kem_get_ss_len_bytes(void);
ull kem_get_ct_len_bytes(void);
int kem_keygen(unsigned char *pk, ull *pkl, unsigned char *sk, ull *skl);
int kem_enc(unsigned char *pk, ull pkl, unsigned char *ss, ull *ssl, unsigned char *ct, ull *ctl);
int kem_dec(unsigned char *sk, ull skl, unsigned char *ct, ull ctl, unsigned char *ss, ull *ssl);
#endif
"#;

const KEM_C: &str = r#"#include "KEM_AlgorithmInstance.h"
#include "drng.h"
#ifdef TOY_OWN_CTX
DRNG_ctx drng_algorithm; /* the candidate's own (built with own_drng_ctx) */
#else
extern DRNG_ctx drng_algorithm;
#endif
ull kem_get_pk_len_bytes(void) { return 32; }
ull kem_get_sk_len_bytes(void) { return 32; }
ull kem_get_ss_len_bytes(void) { return 16; }
ull kem_get_ct_len_bytes(void) { return 16; }
int kem_keygen(unsigned char *pk, ull *pkl, unsigned char *sk, ull *skl) {
    int i;
    get_random_number(&drng_algorithm, sk, 256);
    for (i = 0; i < 32; i++) pk[i] = sk[i] ^ 0x5A;
    *pkl = 32;
    *skl = 32;
    return 0;
}
int kem_enc(unsigned char *pk, ull pkl, unsigned char *ss, ull *ssl, unsigned char *ct, ull *ctl) {
    int i;
    get_random_number(&drng_algorithm, ss, 128);
    for (i = 0; i < 16; i++) ct[i] = ss[i] ^ pk[i];
    *ssl = 16;
    *ctl = 16;
    return 0;
}
int kem_dec(unsigned char *sk, ull skl, unsigned char *ct, ull ctl, unsigned char *ss, ull *ssl) {
    int i;
    for (i = 0; i < 16; i++) ss[i] = ct[i] ^ sk[i] ^ 0x5A;
    *ssl = 16;
    return 0;
}
"#;

const SIG_H: &str = r#"#ifndef SIG_ALGORITHMINSTANCE_H
#define SIG_ALGORITHMINSTANCE_H
#define OUTPUT_BLANK_TEST_VECTORS 0
#define ALGORITHM_INSTANCE "TOY_SIG"
typedef unsigned long long ull;
ull sig_get_pk_len_bytes(void);
ull sig_get_sk_len_bytes(void);
ull sig_get_sn_len_bytes(void);
int sig_keygen(unsigned char *pk, ull *pkl, unsigned char *sk, ull *skl);
int sig_sign(unsigned char *sk, ull skl, unsigned char *m, ull ml, unsigned char *sn, ull *snl);
int sig_verify(unsigned char *pk, ull pkl, unsigned char *sn, ull snl, unsigned char *m, ull ml);
#endif
"#;

/// A "signature" that is SM3(key || m) with pk = sk: enough to be checked, not secure.
const SIG_C: &str = r#"#include <string.h>
#include "SIG_AlgorithmInstance.h"
#include "auxfunc.h"
#include "drng.h"
extern DRNG_ctx drng_algorithm;
ull sig_get_pk_len_bytes(void) { return 32; }
ull sig_get_sk_len_bytes(void) { return 32; }
ull sig_get_sn_len_bytes(void) { return 32; }
static int mac(const unsigned char *k, const unsigned char *m, ull ml, unsigned char *out) {
    unsigned char buf[32 + 512];
    if (ml > 512) return -2;
    memcpy(buf, k, 32);
    memcpy(buf + 32, m, ml);
    return sm3hash(256, buf, 8 * (32 + ml), out);
}
int sig_keygen(unsigned char *pk, ull *pkl, unsigned char *sk, ull *skl) {
    get_random_number(&drng_algorithm, sk, 256);
    memcpy(pk, sk, 32);
    *pkl = 32;
    *skl = 32;
    return 0;
}
int sig_sign(unsigned char *sk, ull skl, unsigned char *m, ull ml, unsigned char *sn, ull *snl) {
    *snl = 32;
    return mac(sk, m, ml, sn);
}
int sig_verify(unsigned char *pk, ull pkl, unsigned char *sn, ull snl, unsigned char *m, ull ml) {
    unsigned char want[32];
#ifdef TOY_ACCEPT_ALL
    return 0;
#endif
    if (snl != 32 || mac(pk, m, ml, want) != 0) return -2;
    return memcmp(want, sn, 32) == 0 ? 0 : -1;
}
"#;

/// Writes one candidate: its files (path under the candidate, text) and candidate.toml.
fn candidate(root: &Path, id: &str, files: &[(&str, &str)], toml: &str) {
    for (path, text) in files {
        write(&root.join(id).join(path), text);
    }
    write(&root.join(id).join("candidate.toml"), toml);
}

fn toys(root: &Path) {
    candidate(
        root,
        "toy-kex",
        &[
            ("src/KEX_AlgorithmInstance.h", KEX_H),
            ("src/toy_kex.c", KEX_C),
        ],
        r#"id = "toy-kex"
algorithm = "toy 4-pass exchange"
kind = "kex"
api = "iccs"

[[instances]]
label = "KEX4"
dir = "src"
kat_count = 3

[[instances]]
label = "KEX4-NOPASS4"
dir = "src"
defines = ["TOY_NO_PASS4"]
kat_count = 1

[[instances]]
label = "KEX4-EARLY"
dir = "src"
defines = ["TOY_EARLY_FINISH"]
kat_count = 1
"#,
    );
    // toy-kem: one instance with its own drng.c/drng.h and drng_algorithm, one bad name.
    candidate(
        root,
        "toy-kem",
        &[
            ("own/KEM_AlgorithmInstance.h", KEM_H),
            ("own/toy_kem.c", KEM_C),
            ("own/drng.c", ngcc_perf::csrc::DRNG_C),
            ("own/drng.h", ngcc_perf::csrc::DRNG_H),
            ("std/KEM_AlgorithmInstance.h", KEM_H),
            ("std/toy_kem.c", KEM_C),
        ],
        r#"id = "toy-kem"
algorithm = "toy KEM"
kind = "kem"
api = "iccs"

[[instances]]
label = "KEM-OWN-DRNG"
dir = "own"
defines = ["TOY_OWN_CTX"]
own_drng_ctx = true

[[instances]]
label = "KEM-BAD-NAME"
dir = "std"
defines = ["TOY_BAD_NAME"]
"#,
    );
    candidate(
        root,
        "toy-sig",
        &[
            ("src/SIG_AlgorithmInstance.h", SIG_H),
            ("src/toy_sig.c", SIG_C),
        ],
        r#"id = "toy-sig"
algorithm = "toy MAC signature"
kind = "sig"
api = "iccs"

[[instances]]
label = "SIG"
dir = "src"

[[instances]]
label = "SIG-ACCEPT-ALL"
dir = "src"
defines = ["TOY_ACCEPT_ALL"]
"#,
    );
}

#[test]
fn toy_candidates_exercise_every_iccs_rule() {
    let dir = scratch("kat_iccs_toys");
    let cands = dir.join("cands");
    toys(&cands);
    let run = dir.join("run");
    campaign_ok("build,kat", &cands, &run, &[]);

    // KEX with four passes: labels of passes beyond 3, states, both sides agree.
    let e = build_entry(&run, "toy-kex/KEX4");
    assert_eq!(e.kat.as_str(), "NOKAT", "{:?}", e.kat_detail);
    assert!(e.kat_detail.unwrap().contains("no kat.sha256 manifest"));
    let text =
        std::fs::read_to_string(run.join("katgen/toy-kex/KEX4/KAT_KEX_TOY_KEX4.txt")).unwrap();
    assert_eq!(values(&text, "Count"), ["0", "1", "2"], "kat_count = 3");
    assert_eq!(values(&text, "Seed"), vx::KAT_SEEDS[..3]);
    assert_eq!(values(&text, "Pass_Num"), ["4"; 3]);
    for key in ["PKa_Len", "SKa_Len", "PKb_Len", "SKb_Len"] {
        assert_eq!(values(&text, key), ["16"; 3], "{key}");
    }
    for key in [
        "Init_Sta_Len",
        "Pass1_Sta_Len",
        "Pass2_Stb_Len",
        "Pass3_Sta_Len",
        "Pass4_Stb_Len",
    ] {
        assert_eq!(values(&text, key), ["32"; 3], "{key}");
    }
    for k in 1..=4 {
        assert_eq!(values(&text, &format!("M{k}_Len")), ["32"; 3]);
    }
    assert!(values(&text, "M5").is_empty());
    assert_eq!(values(&text, "SS"), values(&text, "Pass4_Stb"));
    let first_record: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    let keys: Vec<&str> = first_record
        .iter()
        .map(|l| l.split(" =").next().unwrap())
        .collect();
    assert_eq!(
        keys.join(" "),
        "Count Seed_Len Seed Pass_Num PKa_Len PKa SKa_Len SKa Init_Sta_Len Init_Sta \
PKb_Len PKb SKb_Len SKb Init_Stb_Len Init_Stb Pass1_Sta_Len Pass1_Sta M1_Len M1 \
Pass2_Stb_Len Pass2_Stb M2_Len M2 Pass3_Sta_Len Pass3_Sta M3_Len M3 Pass4_Stb_Len Pass4_Stb \
M4_Len M4 SS_Len SS"
    );

    let e = build_entry(&run, "toy-kex/KEX4-NOPASS4");
    assert_eq!(e.kat.as_str(), "CRYPTOFAIL");
    assert_eq!(
        e.kat_detail.as_deref(),
        Some("count 0: kex_generate_pass4_msg_b is missing, but kex_get_passes_num() = 4")
    );
    let e = build_entry(&run, "toy-kex/KEX4-EARLY");
    assert_eq!(e.kat.as_str(), "CRYPTOFAIL");
    assert_eq!(
        e.kat_detail.as_deref(),
        Some(
            "count 0: kex_generate_pass2_msg_b finished the exchange, but kex_get_passes_num() = 4"
        )
    );

    // The instance's own drng.c wins over the embedded one (reference §5.2).
    let e = build_entry(&run, "toy-kem/KEM-OWN-DRNG");
    assert_eq!(e.kat.as_str(), "NOKAT", "{:?}", e.kat_detail);
    let srcs: Vec<&str> = e.sources.iter().map(|s| s.path.as_str()).collect();
    assert!(srcs.contains(&"toy-kem/own/drng.c"), "{srcs:?}");
    assert!(srcs.iter().all(|s| !s.ends_with("iccs/drng.c")), "{srcs:?}");
    assert!(
        srcs.iter().any(|s| s.ends_with("iccs/auxfunc.c")),
        "{srcs:?}"
    );
    let text = std::fs::read_to_string(run.join("katgen/toy-kem/KEM-OWN-DRNG/KAT_KEM_TOY_KEM.txt"))
        .unwrap();
    assert_eq!(values(&text, "Seed"), vx::KAT_SEEDS);
    let e = build_entry(&run, "toy-kem/KEM-BAD-NAME");
    assert_eq!(e.kat.as_str(), "LOADFAIL");
    assert!(e.kat_detail.unwrap().contains("\"toy kem\""));
    let srcs: Vec<String> = e.sources.iter().map(|s| s.path.clone()).collect();
    assert!(srcs.iter().any(|s| s.ends_with("iccs/drng.c")), "{srcs:?}");

    let e = build_entry(&run, "toy-sig/SIG-ACCEPT-ALL");
    assert_eq!(e.kat.as_str(), "CRYPTOFAIL");
    assert_eq!(
        e.kat_detail.as_deref(),
        Some("count 0: sig_verify accepted a modified message (m[0] ^= 0x80)")
    );
    let text = std::fs::read_to_string(run.join("katgen/toy-sig/SIG/KAT_SIG_TOY_SIG.txt")).unwrap();
    assert_eq!(values(&text, "M")[..4], vx::SIG_MESSAGES);

    // kat manifest: sorted strict lines for what the run generated; with it, a fresh run passes.
    let out = bin().args(["kat", "manifest"]).arg(&run).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "--cand is required");
    let manifest = cands.join("toy-kex/kat.sha256");
    run_ok(&[
        "kat",
        "manifest",
        run.to_str().unwrap(),
        "--cand",
        "toy-kex",
        "--out",
        manifest.to_str().unwrap(),
    ]);
    let lines = std::fs::read_to_string(&manifest).unwrap();
    let digest = ngcc_perf::candidate::kat_manifest::digest(
        &std::fs::read_to_string(run.join("katgen/toy-kex/KEX4/KAT_KEX_TOY_KEX4.txt")).unwrap(),
        ngcc_perf::candidate::kat_manifest::LineMode::STRICT,
    );
    assert_eq!(
        lines,
        format!("{digest} strict KEX4/KAT_KEX_TOY_KEX4.txt\n")
    );
    let run2 = dir.join("run2");
    campaign_ok("build,kat", &cands, &run2, &["--only", "toy-kex/KEX4"]);
    let e = build_entry(&run2, "toy-kex/KEX4");
    assert_eq!(
        (e.kat.as_str(), e.flags.as_str()),
        ("PASS", "guide"),
        "{:?}",
        e.kat_detail
    );
    let log = std::fs::read_to_string(run2.join("kat/toy-kex/KEX4.log")).unwrap();
    assert!(
        log.contains(&format!(
            "\nmanifest {digest} strict KAT_KEX_TOY_KEX4.txt\n"
        )),
        "{log}"
    );

    // A line for 10 records does not fit a 3-record run.
    std::fs::write(&manifest, lines.replace(" strict ", " strict:10 ")).unwrap();
    let run3 = dir.join("run3");
    campaign_ok("build,kat", &cands, &run3, &["--only", "toy-kex/KEX4"]);
    let e = build_entry(&run3, "toy-kex/KEX4");
    assert_eq!(e.kat.as_str(), "MISMATCH");
    assert_eq!(
        e.kat_detail.as_deref(),
        Some("KAT_KEX_TOY_KEX4.txt: kat.sha256 covers 10 records, the run wrote 3")
    );
}

#[test]
fn kat_manifest_errors_are_one_line_with_exit_2() {
    let dir = scratch("kat_manifest_errors");
    std::fs::create_dir_all(dir.join("katgen/empty")).unwrap();
    for (args, want) in [
        (
            vec!["kat", "manifest", "/nonexistent/run", "--cand", "x"],
            "no such run directory",
        ),
        (
            vec!["kat", "manifest", dir.to_str().unwrap(), "--cand", "x"],
            "no KAT files for candidate \"x\" (run the kat phase first)",
        ),
        (
            vec!["kat", "manifest", dir.to_str().unwrap(), "--cand", "empty"],
            "no KAT files for candidate \"empty\"",
        ),
    ] {
        let out = bin().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
        assert!(out.stdout.is_empty());
    }
    // Lines are sorted by name in byte order, whatever the folder order.
    for (label, file) in [
        ("b", "KAT_KEM_B.txt"),
        ("B", "KAT_KEM_B.txt"),
        ("a", "Z.txt"),
        ("a", "A.txt"),
    ] {
        write(
            &dir.join("katgen/c").join(label).join(file),
            "Count = 0\r\nX = 1 \n\n",
        );
    }
    let out = run_ok(&["kat", "manifest", dir.to_str().unwrap(), "--cand", "c"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let d = ngcc_perf::util::sha256_hex(b"Count = 0\nX = 1\n");
    assert_eq!(
        text,
        format!(
            "{d} strict B/KAT_KEM_B.txt\n{d} strict a/A.txt\n{d} strict a/Z.txt\n{d} strict b/KAT_KEM_B.txt\n"
        )
    );
}
