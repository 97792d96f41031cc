//! SM3 over bit strings and HMAC-SM3 against §2.6 and the `sm3` crate.

use ::sm3::Digest;
use ngcc_iccs::bits::BitString;
use ngcc_iccs::hmac::{HmacSm3, PSEUDO_KEY, hmac_sm3_bits};
use ngcc_iccs::sm3 as model;
use ngcc_iccs::sm3::{IV, Sm3Bits, compress, length_field, sm3_bits, sm3hash};
use ngcc_iccs::{IccsError, vectors};
use proptest::prelude::*;

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
}

#[test]
fn published_rows() {
    for &(msg, bits, want) in vectors::SM3_ROWS {
        let got = sm3_bits(&unhex(msg), bits);
        assert_eq!(hex::encode_upper(got), want, "msg {msg} bits {bits}");
    }
}

#[test]
fn sm3hash_only_256() {
    assert_eq!(sm3hash(256, b"abc", 24).unwrap(), sm3_bits(b"abc", 24));
    for d in [0, 255, 384, 512] {
        assert_eq!(sm3hash(d, b"abc", 24), Err(IccsError::InvalidDigestBitLen));
    }
    assert_eq!(IccsError::InvalidDigestBitLen.code(), -4);
    assert_eq!(IccsError::HashFailed.code(), -3);
    assert_eq!(IccsError::MemoryAllocationFailed.code(), -2);
}

#[test]
fn pseudo_key_is_sm3_of_pi_and_e() {
    let mut key = model::sm3(b"3.14159265358979").to_vec();
    key.extend_from_slice(&model::sm3(b"2.71828182845904"));
    assert_eq!(key, PSEUDO_KEY);
}

#[test]
fn hmac_vector() {
    assert_eq!(
        hex::encode_upper(hmac_sm3_bits(&PSEUDO_KEY, b"abc", 24)),
        vectors::HMAC_KEY_ABC
    );
}

#[test]
fn length_field_quirk() {
    assert_eq!(length_field(24), [0, 0, 0, 0, 0, 0, 0, 24]);
    // 2^32 + 8 bits: standard SM3 writes 00000001 00000008, the official code 00000000 00000008.
    assert_eq!(length_field((1 << 32) + 8), [0, 0, 0, 0, 0, 0, 0, 8]);
    assert_eq!(length_field(1 << 41), [0, 0, 2, 0, 0, 0, 0, 0]);
}

/// Streams a 2^32 + 8-bit message (512 MiB of zeros, then 0xAB) through `Sm3Bits` and checks
/// it against blocks padded by hand with the official length field, and that standard SM3
/// differs.
#[test]
fn long_message_uses_official_length_field() {
    const ZERO_BYTES: usize = 1 << 29;
    let zeros = vec![0u8; 1 << 20];
    let stream = std::thread::spawn(move || {
        let mut h = Sm3Bits::new();
        for _ in 0..ZERO_BYTES / zeros.len() {
            h.update_bytes(&zeros);
        }
        h.update_bytes(&[0xAB]);
        assert_eq!(h.bit_len(), (1 << 32) + 8);
        h.finish()
    });
    let mut zero_chain = IV;
    for _ in 0..ZERO_BYTES / 64 {
        compress(&mut zero_chain, &[0; 64]);
    }
    let finish = |length_hi_byte: u8| {
        let mut last = [0u8; 64];
        last[0] = 0xAB;
        last[1] = 0x80;
        last[59] = length_hi_byte;
        last[63] = 8;
        let mut state = zero_chain;
        compress(&mut state, &last);
        state
            .iter()
            .flat_map(|w| w.to_be_bytes())
            .collect::<Vec<u8>>()
    };
    let streamed = stream.join().unwrap().to_vec();
    // Official: 00000000 || (L mod 2^32) = ..08; standard: 00000001 00000008.
    assert_eq!(streamed, finish(0));
    assert_ne!(streamed, finish(1));
}

#[test]
fn garbage_past_length_is_ignored() {
    assert_eq!(
        sm3_bits(&[0x61, 0x62, 0x63], 20),
        sm3_bits(&[0x61, 0x62, 0x6F], 20)
    );
    assert_eq!(sm3_bits(&[0xFF, 0xFF], 0), sm3_bits(&[], 0));
}

fn msg_and_bits() -> impl Strategy<Value = (Vec<u8>, u64)> {
    prop::collection::vec(any::<u8>(), 0..300).prop_flat_map(|m| {
        let max = 8 * m.len() as u64;
        (Just(m), 0..=max)
    })
}

proptest! {
    #[test]
    fn byte_aligned_equals_sm3_crate(msg in prop::collection::vec(any::<u8>(), 0..1200)) {
        let want = ::sm3::Sm3::digest(&msg);
        prop_assert_eq!(model::sm3(&msg).to_vec(), want.to_vec());
    }

    #[test]
    fn hmac_byte_aligned_equals_textbook(
        key in prop::collection::vec(any::<u8>(), 0..100),
        msg in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        // Textbook HMAC over the `sm3` crate.
        let mut k = [0u8; 64];
        if key.len() > 64 {
            k[..32].copy_from_slice(&::sm3::Sm3::digest(&key));
        } else {
            k[..key.len()].copy_from_slice(&key);
        }
        let inner = ::sm3::Sm3::new()
            .chain_update(k.map(|b| b ^ 0x36))
            .chain_update(&msg)
            .finalize();
        let outer = ::sm3::Sm3::new()
            .chain_update(k.map(|b| b ^ 0x5C))
            .chain_update(inner)
            .finalize();
        prop_assert_eq!(
            hmac_sm3_bits(&key, &msg, 8 * msg.len() as u64).to_vec(),
            outer.to_vec()
        );
    }

    /// Feeding pieces at arbitrary bit positions equals hashing their concatenation, and
    /// the concatenation padded by the standard rule equals the `sm3` crate when aligned.
    #[test]
    fn split_updates_equal_one_shot(parts in prop::collection::vec(msg_and_bits(), 0..6)) {
        let mut whole = BitString::new();
        let mut h = Sm3Bits::new();
        let mut mac = HmacSm3::new(&PSEUDO_KEY);
        for (m, bits) in &parts {
            whole.push_bits(m, *bits);
            h.update_bits(m, *bits);
            mac.update_bits(m, *bits);
        }
        prop_assert_eq!(h.bit_len(), whole.bit_len());
        prop_assert_eq!(h.finish(), sm3_bits(whole.as_bytes(), whole.bit_len()));
        prop_assert_eq!(mac.finish(), hmac_sm3_bits(&PSEUDO_KEY, whole.as_bytes(), whole.bit_len()));
        if whole.bit_len().is_multiple_of(8) {
            let want = ::sm3::Sm3::digest(whole.as_bytes());
            prop_assert_eq!(sm3_bits(whole.as_bytes(), whole.bit_len()).to_vec(), want.to_vec());
        }
    }

    /// An unaligned message is the aligned message of its padding minus the padding: SM3 of
    /// L bits equals compressing the hand-padded blocks.
    #[test]
    fn unaligned_padding_by_hand((msg, bits) in msg_and_bits()) {
        let mut padded = BitString::from_bits(&msg, bits);
        padded.push_bits(&[0x80], 1);
        while padded.bit_len() % 512 != 448 {
            padded.push_bits(&[0], 1);
        }
        padded.push_bytes(&bits.to_be_bytes());
        let mut state = IV;
        for block in padded.as_bytes().chunks_exact(64) {
            compress(&mut state, block.try_into().unwrap());
        }
        let want: Vec<u8> = state.iter().flat_map(|w| w.to_be_bytes()).collect();
        prop_assert_eq!(sm3_bits(&msg, bits).to_vec(), want);
    }
}
