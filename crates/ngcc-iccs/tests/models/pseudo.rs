//! pseudohash and pseudoXOF against §2.6.

use ngcc_iccs::bits::{BitString, mask_tail};
use ngcc_iccs::hmac::{PSEUDO_KEY, hmac_sm3_bits};
use ngcc_iccs::pseudo::{pseudo_xof, pseudohash};
use ngcc_iccs::sm3::sm3_bits;
use ngcc_iccs::{IccsError, vectors};
use proptest::prelude::*;

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
}

#[test]
fn pseudohash_rows() {
    for &(d, msg, bits, want) in vectors::PSEUDOHASH_ROWS {
        let got = pseudohash(d, &unhex(msg), bits).unwrap();
        assert_eq!(hex::encode_upper(got), want, "d {d} msg {msg} bits {bits}");
    }
}

#[test]
fn pseudohash_rejects_other_widths() {
    for d in [0, 256, 384, 513, 2048] {
        let err = pseudohash(d, b"abc", 24).unwrap_err();
        assert_eq!(err, IccsError::InvalidDigestBitLen);
        assert_eq!(err.code(), -4);
    }
}

#[test]
fn xof_rows() {
    for &(n, msg, bits, want) in vectors::XOF_ROWS {
        let got = pseudo_xof(n, &unhex(msg), bits);
        assert_eq!(hex::encode_upper(got), want, "N {n} msg {msg} bits {bits}");
    }
}

#[test]
fn xof_256_is_sm3_with_counter_one() {
    let mut s = BitString::from_bits(b"abc", 21);
    s.push_bytes(&[0, 0, 0, 1]);
    assert_eq!(
        pseudo_xof(256, b"abc", 21),
        sm3_bits(s.as_bytes(), s.bit_len()).to_vec()
    );
}

/// The cascade of §2.4 spelled out with bit strings, for messages of any bit length.
fn pseudohash_by_hand(d: u32, msg: &[u8], bits: u64) -> Vec<u8> {
    let tag = [(d / 256) as u8, 0];
    let cat = |parts: &[&[u8]]| {
        let mut s = BitString::new();
        for p in parts {
            s.push_bytes(p);
        }
        sm3_bits(s.as_bytes(), s.bit_len())
    };
    let mac = |m: &[u8]| hmac_sm3_bits(&PSEUDO_KEY, m, 8 * m.len() as u64);
    let mut tm = BitString::from_bits(&tag, 16);
    tm.push_bits(msg, bits);
    let k1 = hmac_sm3_bits(&PSEUDO_KEY, tm.as_bytes(), tm.bit_len());
    let mut mt = BitString::from_bits(msg, bits);
    mt.push_bytes(&tag);
    let h1 = sm3_bits(mt.as_bytes(), mt.bit_len());
    let h2 = cat(&[&k1, &h1]);
    let mut out = [h1, h2].concat();
    if d >= 768 {
        let h3 = cat(&[&h2, &mac(&h1)]);
        out.extend_from_slice(&h3);
        if d == 1024 {
            out.extend_from_slice(&cat(&[&mac(&h2), &h3, &mac(&h3)]));
        }
    }
    out
}

fn msg_and_bits() -> impl Strategy<Value = (Vec<u8>, u64)> {
    prop::collection::vec(any::<u8>(), 0..200).prop_flat_map(|m| {
        let max = 8 * m.len() as u64;
        (Just(m), 0..=max)
    })
}

proptest! {
    #[test]
    fn pseudohash_matches_cascade((msg, bits) in msg_and_bits(), d in prop::sample::select(vec![512u32, 768, 1024])) {
        prop_assert_eq!(pseudohash(d, &msg, bits).unwrap(), pseudohash_by_hand(d, &msg, bits));
    }

    #[test]
    fn xof_is_prefix_consistent((msg, bits) in msg_and_bits(), n1 in 0u64..2000, n2 in 0u64..2000) {
        let (short, long) = (n1.min(n2), n1.max(n2));
        let a = pseudo_xof(short, &msg, bits);
        let mut b = pseudo_xof(long, &msg, bits);
        prop_assert_eq!(a.len() as u64, short.div_ceil(8));
        b.truncate(a.len());
        mask_tail(&mut b, short);
        prop_assert_eq!(a, b);
    }
}
