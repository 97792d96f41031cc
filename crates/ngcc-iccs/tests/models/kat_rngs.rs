//! The NIST CTR_DRBG and HQC SHAKE PRNG against PQClean's C generators.

use ngcc_iccs::ctr_drbg::NistCtrDrbg;
use ngcc_iccs::hqc_prng::HqcKatRng;
use ngcc_iccs::vectors as vx;

fn entropy() -> [u8; 48] {
    std::array::from_fn(|i| i as u8)
}

fn perso() -> [u8; 48] {
    std::array::from_fn(|i| 0xA0 + i as u8)
}

#[test]
fn nist_acceptance_vector() {
    let mut d = NistCtrDrbg::new(&entropy(), None);
    assert_eq!(
        hex::encode_upper(d.generate(48)),
        "061550234D158C5EC95595FE04EF7A25767F2E24CC2BC479D09D86DC9ABCFDE7056A8C266F9EF97ED08541DBD2E1FFA1"
    );
    assert_eq!(d.reseed_counter(), 2);
}

#[test]
fn nist_draw_sequence() {
    let mut d = NistCtrDrbg::new(&entropy(), None);
    for (len, want) in vx::NIST_DRAWS {
        assert_eq!(hex::encode_upper(d.generate(len)), want, "draw of {len}");
    }
    let mut p = NistCtrDrbg::new(&entropy(), Some(&perso()));
    assert_eq!(hex::encode_upper(p.generate(64)), vx::NIST_PERSO_DRAW64);
}

#[test]
fn hqc_draw_sequence_and_release() {
    let mut r = HqcKatRng::new(&entropy(), None);
    let mut all = Vec::new();
    for (len, want) in vx::HQC_DRAWS {
        let got = r.generate(len);
        assert_eq!(hex::encode_upper(&got), want, "draw of {len}");
        all.extend(got);
    }
    r.release();
    // Re-init after release restarts the stream; one long draw equals the pieces.
    let mut again = HqcKatRng::new(&entropy(), None);
    assert_eq!(again.generate(all.len()), all);
    again.release();
    let mut p = HqcKatRng::new(&entropy(), Some(&perso()));
    assert_eq!(hex::encode_upper(p.generate(64)), vx::HQC_PERSO_DRAW64);
}
