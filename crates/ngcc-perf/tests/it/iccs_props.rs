//! The C helpers (in-process, via FFI) equal the Rust model on random inputs, including
//! non-byte-aligned lengths and garbage past the last bit.

use ngcc_iccs::hash_drbg::HashDrbg;
use ngcc_iccs::{pseudo, sm3};
use ngcc_perf::iccs::ffi::{self, CDrng};
use proptest::prelude::*;

/// A message of `bits` bits (0..4096) with random bytes, including bits past the length.
fn message() -> impl Strategy<Value = (Vec<u8>, u64)> {
    (0u64..4096).prop_flat_map(|bits| {
        let len = bits.div_ceil(8) as usize + 1;
        (prop::collection::vec(any::<u8>(), len), Just(bits))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn sm3hash_equals_model((msg, bits) in message()) {
        prop_assert_eq!(ffi::c_sm3(&msg, bits), sm3::sm3_bits(&msg, bits));
    }

    #[test]
    fn pseudohash_equals_model((msg, bits) in message(), d in prop::sample::select(vec![512u32, 768, 1024])) {
        let c = ffi::c_pseudohash(d as i32, &msg, bits).unwrap();
        prop_assert_eq!(c, pseudo::pseudohash(d, &msg, bits).unwrap());
    }

    #[test]
    fn pseudo_xof_equals_model((msg, bits) in message(), n in 0u64..5000) {
        prop_assert_eq!(ffi::c_xof(n, &msg, bits), pseudo::pseudo_xof(n, &msg, bits));
    }

    #[test]
    fn drng_equals_model(
        seed in prop::collection::vec(any::<u8>(), 0..200),
        draws in prop::collection::vec(0u64..4096, 0..8),
    ) {
        let mut c = CDrng::new(&seed);
        let mut m = HashDrbg::new(&seed);
        prop_assert_eq!(c.v(), m.v());
        prop_assert_eq!(c.c(), m.c());
        for bits in draws {
            prop_assert_eq!(c.get(bits), m.generate(bits));
            prop_assert_eq!(c.v(), m.v());
            prop_assert_eq!(c.reseed_counter(), m.reseed_counter());
        }
    }
}

/// For L >= 2^32 bits both use the official length field (0 || L mod 2^32), which the model's
/// own tests check against hand-padded blocks. 512 MiB of zeros (calloc'd, so mostly the
/// shared zero page) plus one byte.
#[test]
fn long_message_length_field_matches_model() {
    let mut msg = vec![0u8; (1 << 29) + 1];
    msg[1 << 29] = 0xAB;
    let bits = (1u64 << 32) + 8;
    let msg = std::sync::Arc::new(msg);
    let m2 = msg.clone();
    let model = std::thread::spawn(move || sm3::sm3_bits(&m2, bits));
    let c = ffi::c_sm3(&msg, bits);
    assert_eq!(c, model.join().unwrap());
}
