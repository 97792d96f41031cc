//! `ngcc-perf iccs …`: the embedded C helpers, checked against the Rust model.
//!
//! Every computing command runs the C helper (linked in by build.rs) and the independent
//! Rust model (`ngcc-iccs`), prints the C result, and fails with exit 1 if they disagree.

mod bench;
mod bench_helpers;
pub mod ffi;
pub(crate) mod input;
mod selftest;

use crate::util::{Failure, hexs};
use clap::{Args, Subcommand};
use ngcc_iccs::{hash_drbg::HashDrbg, pseudo, sm3};
use std::process::ExitCode;

pub use selftest::selftest;

const BITS_HELP: &str = "Message length L in bits [default: 8 × the hex bytes]. Bits past L \
                         in the last byte are ignored";
const HEX_HELP: &str = "The message as hex, MSB-first: bit i is bit 7 - i%8 of byte i/8. \
                        Needs at least ceil(L/8) bytes; \"\" is the empty message";

#[derive(Args, Debug)]
pub struct IccsArgs {
    #[command(subcommand)]
    pub cmd: IccsCmd,
}

#[derive(Subcommand, Debug)]
pub enum IccsCmd {
    /// SM3 digest of a bit string: sm3hash(256, HEX, L), uppercase hex.
    #[command(
        long_about = "SM3 digest of a bit string, as the ICCS sm3hash(256, msg, L) \
        computes it (GB/T 32905; for L >= 2^32 the official, non-standard length field). \
        Prints the 256-bit digest as one line of uppercase hex.\n\n\
        Example: ngcc-perf iccs sm3 --bits 24 616263"
    )]
    Sm3(MsgArgs),
    /// pseudohash(D, HEX, L): the ICCS SM3/HMAC-SM3 cascade, D = 512, 768 or 1024.
    #[command(
        long_about = "The ICCS pseudohash(D, msg, L): an SM3 and HMAC-SM3 cascade \
        (not a secure hash) with a D-bit output, D = 512, 768 or 1024. Prints D/8 bytes as \
        one line of uppercase hex.\n\n\
        Example: ngcc-perf iccs pseudohash --digest-bits 768 --bits 21 616263"
    )]
    Pseudohash(PseudohashArgs),
    /// pseudoXOF(N, HEX, L): N output bits of the ICCS SM3 KDF.
    #[command(
        long_about = "The ICCS pseudoXOF(N, msg, L): the SM2 KDF, block i = SM3(msg || \
        BE32(i)). Prints ceil(N/8) bytes as one line of uppercase hex, the unused low bits \
        of the last byte zero (an empty line for N = 0).\n\n\
        Example: ngcc-perf iccs xof --out-bits 300 --bits 24 616263"
    )]
    Xof(XofArgs),
    /// Draws from one ICCS DRNG instance: init_random_number(SEED), then get_random_number per draw.
    #[command(
        long_about = "The ICCS DRNG (SM3 Hash_DRBG): init_random_number(ctx, SEED), \
        then one get_random_number(ctx, out, B) per draw, in order, on the same instance. \
        Prints one line of uppercase hex per draw (ceil(B/8) bytes, an empty line for B = 0). \
        Every call moves the state on, whatever its length.\n\n\
        Example (the first KAT seed): ngcc-perf iccs drng --seed \
        7365656473656564736565647365656473656564736565647365656473656564\
        7365656473656564736565647365656473656564736565647365656473656564 --draws 512"
    )]
    Drng(DrngArgs),
    /// Check the C helpers against the Rust model and the published vectors.
    #[command(
        long_about = "Checks the embedded C helpers (sm3hash, pseudohash, pseudoXOF, \
        DRNG) against the published test values and the independent Rust model, including \
        return codes, the -4 stderr message, and that no helper writes past its output. \
        Also checks the Rust NIST CTR_DRBG and HQC PRNG models. Prints PASS <name> or \
        FAIL <name>: <why> per check; exits 0 only if all pass."
    )]
    Selftest,
    /// Cost of the C SM3 helper per byte, against `openssl speed` when available.
    #[command(
        long_about = "Measures sm3hash of the embedded C helper (and the Rust model) \
        for 32 B to 64 KiB messages: the median of several batches in ns/byte, and on \
        x86-64 in TSC reference cycles/byte (not core cycles). If openssl is on PATH, runs \
        `openssl speed -evp sm3 -bytes N -seconds 1` per size and prints the ratio \
        C/OpenSSL. Then times every helper (sm3hash, pseudohash, pseudoXOF, get_random_number) \
        per call as ngcc-perf embeds it and, with --official DIR (the ICCS API folder holding \
        auxfunc.c and drng.c), as the official files compute it, each built with the guide \
        flags into its own timing program; says whether both give the same output. \
        A rough guide on a possibly busy host, not a test."
    )]
    Bench(BenchArgs),
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Folder with the official ICCS auxfunc.c/drng.c (and headers) to time next to the
    /// embedded helpers, e.g. the ICCS API folder of the NGCC package set.
    #[arg(long, value_name = "DIR")]
    pub official: Option<std::path::PathBuf>,
}

#[derive(Args, Debug)]
pub struct MsgArgs {
    #[arg(long, value_name = "L", help = BITS_HELP)]
    pub bits: Option<u64>,
    #[arg(value_name = "HEX", help = HEX_HELP)]
    pub hex: String,
}

#[derive(Args, Debug)]
pub struct PseudohashArgs {
    /// Output width D in bits: 512, 768 or 1024.
    #[arg(long, value_name = "D")]
    pub digest_bits: u32,
    #[command(flatten)]
    pub msg: MsgArgs,
}

#[derive(Args, Debug)]
pub struct XofArgs {
    /// Output length N in bits (at most 2^30 here).
    #[arg(long, value_name = "N")]
    pub out_bits: u64,
    #[command(flatten)]
    pub msg: MsgArgs,
}

#[derive(Args, Debug)]
pub struct DrngArgs {
    /// The seed as hex (any number of bytes; "" is the empty seed).
    #[arg(long, value_name = "HEX")]
    pub seed: String,
    /// Comma-separated bit lengths, one get_random_number call each, e.g. 512,13,0 (total at most 2^30).
    #[arg(long, value_name = "B1,B2,…", allow_hyphen_values = true)]
    pub draws: String,
}

pub fn run(args: IccsArgs) -> anyhow::Result<ExitCode> {
    match args.cmd {
        IccsCmd::Sm3(a) => {
            let m = input::message(&a.hex, a.bits)?;
            let c = ffi::c_sm3(&m.bytes, m.bits);
            agree("sm3", &c, &sm3::sm3_bits(&m.bytes, m.bits))?;
            crate::util::out!("{}", hexs::upper(&c));
        }
        IccsCmd::Pseudohash(a) => {
            let d = input::pseudohash_width(a.digest_bits)?;
            let m = input::message(&a.msg.hex, a.msg.bits)?;
            let c = ffi::c_pseudohash(d as i32, &m.bytes, m.bits)
                .map_err(|rc| Failure::check(format!("the C pseudohash({d}) returned {rc}")))?;
            let model = pseudo::pseudohash(d, &m.bytes, m.bits)?;
            agree("pseudohash", &c, &model)?;
            crate::util::out!("{}", hexs::upper(&c));
        }
        IccsCmd::Xof(a) => {
            let n = input::out_bits("--out-bits", a.out_bits)?;
            let m = input::message(&a.msg.hex, a.msg.bits)?;
            let c = ffi::c_xof(n, &m.bytes, m.bits);
            agree("pseudoXOF", &c, &pseudo::pseudo_xof(n, &m.bytes, m.bits))?;
            crate::util::out!("{}", hexs::upper(&c));
        }
        IccsCmd::Drng(a) => {
            let seed = hexs::parse(&a.seed).map_err(|e| Failure::usage(format!("--seed: {e}")))?;
            let draws = input::draws(&a.draws)?;
            let mut c = ffi::CDrng::new(&seed);
            let mut model = HashDrbg::new(&seed);
            let mut lines = Vec::with_capacity(draws.len());
            for (i, &bits) in draws.iter().enumerate() {
                let got = c.get(bits);
                agree(
                    &format!("DRNG draw {} ({bits} bits)", i + 1),
                    &got,
                    &model.generate(bits),
                )?;
                lines.push(hexs::upper(&got));
            }
            crate::util::out!("{}", lines.join("\n"));
        }
        IccsCmd::Selftest => return selftest(),
        IccsCmd::Bench(a) => {
            let code = bench::run()?;
            bench_helpers::run(a.official.as_deref())?;
            return Ok(code);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Exit 1 with both values (abbreviated) when the C helper and the model differ.
fn agree(what: &str, c: &[u8], model: &[u8]) -> anyhow::Result<()> {
    if c == model {
        return Ok(());
    }
    Err(Failure::check(format!(
        "{what}: the C helper and the Rust model disagree: C {} model {}",
        abbrev(c),
        abbrev(model)
    )))
}

/// Uppercase hex, long values cut to their first and last 16 bytes.
pub(crate) fn abbrev(b: &[u8]) -> String {
    if b.len() <= 40 {
        hexs::upper(b)
    } else {
        format!(
            "{}…{} ({} bytes)",
            hexs::upper(&b[..16]),
            hexs::upper(&b[b.len() - 16..]),
            b.len()
        )
    }
}
