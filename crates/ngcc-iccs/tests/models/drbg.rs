//! The SM3 Hash_DRBG against §3.5.

use ngcc_iccs::bits::mask_tail;
use ngcc_iccs::hash_drbg::{
    HashDrbg, SEEDLEN, hash_df, hash_kat_nonce, pkc_seed_nonce, sig_msg_nonce,
};
use ngcc_iccs::sm3::sm3_bits;
use ngcc_iccs::vectors as vx;
use proptest::prelude::*;

fn up(b: &[u8]) -> String {
    hex::encode_upper(b)
}

fn counter(n: u8) -> [u8; SEEDLEN] {
    let mut c = [0u8; SEEDLEN];
    c[SEEDLEN - 1] = n;
    c
}

#[test]
fn nonces() {
    assert_eq!(&pkc_seed_nonce()[..8], b"seedseed");
    let m = sig_msg_nonce();
    assert_eq!(&m[..6], b"msgmsg");
    assert_eq!(&m[60..], b"msgm");
    assert_eq!(&hash_kat_nonce(b"KAT_2_12")[56..], b"KAT_2_12");
}

#[test]
fn kat_seed_records() {
    let mut d = HashDrbg::new(&pkc_seed_nonce());
    assert_eq!(up(d.v()), vx::KAT_SEED_V0);
    assert_eq!(up(d.c()), vx::KAT_SEED_C0);
    assert_eq!(d.reseed_counter(), &counter(1));
    for (i, want) in vx::KAT_SEEDS.iter().enumerate() {
        assert_eq!(up(&d.generate(512)), *want, "record {i}");
    }
    assert!(vx::KAT_SEEDS[0].starts_with("927F06B5"));
    assert_eq!(up(d.v()), vx::KAT_SEED_V_AFTER_10);
    assert_eq!(d.reseed_counter(), &counter(11));
}

#[test]
fn state_depends_on_call_count_only() {
    let mut d = HashDrbg::new(&pkc_seed_nonce());
    for (bits, want) in vx::CALL_COUNT_DRAWS {
        assert_eq!(up(&d.generate(bits)), want, "get({bits})");
    }
    assert_eq!(d.reseed_counter(), &counter(4));
}

#[test]
fn sig_messages() {
    let mut d = HashDrbg::new(&sig_msg_nonce());
    for (i, want) in vx::SIG_MESSAGES.iter().enumerate() {
        let len = 56 + 8 * i as u64;
        assert_eq!(up(&d.generate(8 * len)), *want, "message {i}");
    }
}

#[test]
fn perf_seed_and_empty_seed() {
    let seed: Vec<u8> = (0..48).collect();
    let mut d = HashDrbg::new(&seed);
    assert_eq!(up(d.v()), vx::PERF_SEED_V0);
    assert_eq!(up(d.c()), vx::PERF_SEED_C0);
    assert_eq!(up(&d.generate(256)), vx::PERF_SEED_GET256[0]);
    assert_eq!(up(&d.generate(256)), vx::PERF_SEED_GET256[1]);
    assert_eq!(
        up(&HashDrbg::new(&seed).generate(512)),
        vx::PERF_SEED_GET512
    );

    let mut e = HashDrbg::new(&[]);
    assert_eq!(up(e.v()), vx::EMPTY_SEED_V0);
    assert_eq!(up(&e.generate(256)), vx::EMPTY_SEED_GET256);
}

#[test]
fn hash_df_abc() {
    assert_eq!(up(&hash_df(b"abc", 440)), vx::HASH_DF_ABC);
    // Instantiate is V = Hash_df(seed).
    assert_eq!(up(HashDrbg::new(b"abc").v()), vx::HASH_DF_ABC);
    assert_eq!(hash_df(b"abc", 13).len(), 2);
}

#[test]
fn kat_2_12_messages() {
    let mut d = HashDrbg::new(&hash_kat_nonce(b"KAT_2_12"));
    let mut digests = Vec::new();
    for (len, want) in vx::KAT_2_12_MSGS.iter().enumerate() {
        let mut buf = [0u8; 512];
        d.fill(&mut buf, len as u64);
        let n = (len as u64).div_ceil(8) as usize;
        assert_eq!(up(&buf[..n]), *want, "L = {len}");
        assert!(buf[n..].iter().all(|&b| b == 0), "wrote past ceil(L/8)");
        digests.push(sm3_bits(&buf, len as u64));
    }
    for (len, want) in vx::KAT_2_12_SM3_DSTS {
        assert_eq!(up(&digests[len as usize]), want, "Dst L = {len}");
    }
}

#[test]
fn kat_loop_m0() {
    let m0 = up(&HashDrbg::new(&hash_kat_nonce(b"KAT_Loop")).generate(8192));
    assert_eq!(m0.len(), 2048);
    assert!(m0.starts_with(vx::KAT_LOOP_M0_PREFIX));
    assert!(m0.ends_with(vx::KAT_LOOP_M0_SUFFIX));
}

proptest! {
    /// A draw's first bytes do not depend on its length, and the next call does not depend on
    /// the previous length either.
    #[test]
    fn draws_prefix_and_length_independence(seed in prop::collection::vec(any::<u8>(), 0..80), a in 0u64..1500, b in 0u64..1500, c in 0u64..600) {
        let mut x = HashDrbg::new(&seed);
        let mut y = HashDrbg::new(&seed);
        let xa = x.generate(a);
        let yb = y.generate(b);
        let short = a.min(b);
        let (mut pa, mut pb) = (xa.clone(), yb.clone());
        pa.truncate(short.div_ceil(8) as usize);
        pb.truncate(short.div_ceil(8) as usize);
        mask_tail(&mut pa, short);
        mask_tail(&mut pb, short);
        prop_assert_eq!(pa, pb);
        prop_assert_eq!(&x, &y);
        prop_assert_eq!(x.generate(c), y.generate(c));
    }
}
