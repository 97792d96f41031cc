//! `ngcc-perf iccs selftest`: the C helpers against the published vectors and the Rust model.
//!
//! `published` runs the §2.6/§3.5 values through either side (C or model); `c_only` checks
//! what only the C code has: return codes, the stderr message, output bounds, and agreement
//! with the model on generated inputs.

mod c_only;
mod published;

use super::ffi::{self, CDrng};
use crate::util::hexs;
use ngcc_iccs::hash_drbg::{HashDrbg, SEEDLEN};
use ngcc_iccs::{pseudo, sm3};
use std::process::ExitCode;

type Check = Result<(), String>;

/// Runs every check, prints `PASS name` / `FAIL name: why`, exit 0 only if all pass.
pub fn selftest() -> anyhow::Result<ExitCode> {
    let mut failed = 0usize;
    let mut report = |name: &str, result: Check| match result {
        Ok(()) => crate::util::out!("PASS {name}"),
        Err(why) => {
            failed += 1;
            crate::util::out!("FAIL {name}: {why}");
        }
    };
    for side in [Side::Model, Side::C] {
        let t = side.tag();
        report(&format!("{t}/sm3-vectors"), published::sm3_vectors(side));
        report(
            &format!("{t}/pseudohash-vectors"),
            published::pseudohash_vectors(side),
        );
        report(&format!("{t}/xof-vectors"), published::xof_vectors(side));
        report(
            &format!("{t}/drng-kat-seeds"),
            published::drng_kat_seeds(side),
        );
        report(
            &format!("{t}/drng-call-count"),
            published::drng_call_count(side),
        );
        report(
            &format!("{t}/drng-sig-messages"),
            published::drng_sig_messages(side),
        );
        report(
            &format!("{t}/drng-perf-seed"),
            published::drng_perf_seed(side),
        );
        report(
            &format!("{t}/drng-empty-seed"),
            published::drng_empty_seed(side),
        );
        report(&format!("{t}/drng-hash-df"), published::drng_hash_df(side));
        report(
            &format!("{t}/drng-kat-2-12"),
            published::drng_kat_2_12(side),
        );
        report(
            &format!("{t}/drng-kat-loop-m0"),
            published::drng_kat_loop(side),
        );
    }
    report("model/hmac-key", published::hmac_key());
    report("model/nist-ctr-drbg", published::nist_ctr_drbg());
    report("model/hqc-prng", published::hqc_prng());
    report("c/sm3hash-rejects-width", c_only::c_sm3hash_rejects());
    report("c/pseudohash-rejects-width", c_only::c_pseudohash_rejects());
    report("c/writes-exactly", c_only::c_writes_exactly());
    report("c-vs-model/random-inputs", c_only::c_vs_model_random());
    if failed == 0 {
        Ok(ExitCode::SUCCESS)
    } else {
        crate::util::out!("{failed} check(s) failed");
        Ok(crate::util::Exit::CheckFailed.into())
    }
}

#[derive(Clone, Copy)]
enum Side {
    C,
    Model,
}

enum Drng {
    C(CDrng),
    Model(HashDrbg),
}

impl Side {
    fn tag(self) -> &'static str {
        match self {
            Side::C => "c",
            Side::Model => "model",
        }
    }

    fn sm3(self, msg: &[u8], bits: u64) -> [u8; 32] {
        match self {
            Side::C => ffi::c_sm3(msg, bits),
            Side::Model => sm3::sm3_bits(msg, bits),
        }
    }

    fn pseudohash(self, d: u32, msg: &[u8], bits: u64) -> Result<Vec<u8>, i32> {
        match self {
            Side::C => ffi::c_pseudohash(d as i32, msg, bits),
            Side::Model => pseudo::pseudohash(d, msg, bits).map_err(|e| e.code()),
        }
    }

    fn xof(self, n: u64, msg: &[u8], bits: u64) -> Vec<u8> {
        match self {
            Side::C => ffi::c_xof(n, msg, bits),
            Side::Model => pseudo::pseudo_xof(n, msg, bits),
        }
    }

    fn drng(self, seed: &[u8]) -> Drng {
        match self {
            Side::C => Drng::C(CDrng::new(seed)),
            Side::Model => Drng::Model(HashDrbg::new(seed)),
        }
    }
}

impl Drng {
    fn get(&mut self, bits: u64) -> Vec<u8> {
        match self {
            Drng::C(d) => d.get(bits),
            Drng::Model(d) => d.generate(bits),
        }
    }

    /// A draw into a buffer pre-filled with `fill`, as the KAT drivers do.
    fn get_into(&mut self, buf: &mut [u8], bits: u64) {
        match self {
            Drng::C(d) => d.get_into(buf, bits),
            Drng::Model(d) => d.fill(buf, bits),
        }
    }

    fn state(&self) -> [[u8; SEEDLEN]; 3] {
        match self {
            Drng::C(d) => [*d.v(), *d.c(), *d.reseed_counter()],
            Drng::Model(d) => [*d.v(), *d.c(), *d.reseed_counter()],
        }
    }
}

fn eq(what: &str, got: &[u8], want_hex: &str) -> Check {
    let got = hexs::upper(got);
    if got == want_hex {
        Ok(())
    } else {
        Err(format!("{what}: got {got}, want {want_hex}"))
    }
}

fn unhex(s: &str) -> Vec<u8> {
    hexs::parse(s).expect("built-in vectors are hex")
}

fn counter_hex(n: u8) -> String {
    let mut c = [0u8; SEEDLEN];
    c[SEEDLEN - 1] = n;
    hexs::upper(&c)
}
