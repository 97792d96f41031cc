//! The ct jobs (issue 17), inside the jail's worker:
//! - *taint* (run under memcheck by the jail, see `Request::tool`): the operation's secrets
//!   are marked undefined with memcheck's client requests — the secret key for dec/sign
//!   (less the manifest's public ranges in the first stage), the randomness for every
//!   operation (NIST: each `randombytes` output; ICCS: the DRNG seed, so the whole DRNG
//!   stream is derived from it) — and the operation runs a few times. memcheck reports each
//!   conditional jump and each address computed from them; its XML log is the evidence,
//!   read by the orchestrator. Outputs are marked defined again after every call, so our own
//!   code reading them adds nothing (and anything it adds has no frame in the library).
//! - *dudect*: fixed-vs-random inputs interleaved at random, one counter reading per call;
//!   the raw timings go to scratch and the orchestrator computes every statistic.

use super::library::{Lib, SeedFn, SetRandombytesFn};
use super::ops::{Runner, perf_seed, sig_message};
use super::protocol::{CT_TIMINGS, CtJob, CtMode, CtOutput};
use super::rng;
use crate::candidate::{Api, Kind};
use crate::dataset::schema::{KatRng, Op, ProcessStatus};
use crate::measure::counter::{Counter, monotonic_raw_ns};
use anyhow::{Context, Result, anyhow, bail};

/// The marker line (a memcheck `<clientmsg>`) that opens each taint stage: `<prefix> <stage>`.
pub const STAGE_MARKER: &str = "ngcc-ct-stage";
/// Stage 1: the secret key less its declared public ranges, and the randomness.
pub const STAGE_SECRET: &str = "secret";
/// Stage 2 (only when public ranges are declared): the whole secret key. Errors new in this
/// stage come from the public ranges.
pub const STAGE_WHOLE_SK: &str = "whole-sk";
/// Calls before dudect's timed calls (caches, branch predictors, lazy binding).
const DUDECT_WARMUPS: u64 = 16;

/// memcheck client requests (csrc/ct/ct_client.c).
pub mod client {
    use std::ffi::{CString, c_char, c_int, c_uint};

    unsafe extern "C" {
        fn ngcc_ct_client_available() -> c_int;
        fn ngcc_ct_running_on_valgrind() -> c_uint;
        fn ngcc_ct_make_undefined(p: *const u8, n: usize);
        fn ngcc_ct_make_defined(p: *const u8, n: usize);
        fn ngcc_ct_marker(text: *const c_char);
    }

    /// Whether this binary was built with memcheck.h (else every request is a no-op).
    pub fn available() -> bool {
        // SAFETY: returns a constant.
        unsafe { ngcc_ct_client_available() != 0 }
    }

    pub fn on_valgrind() -> bool {
        // SAFETY: a client request; 0 outside valgrind.
        unsafe { ngcc_ct_running_on_valgrind() != 0 }
    }

    pub fn undefined(b: &[u8]) {
        // SAFETY: the range is a live slice; memcheck only changes its shadow bits.
        unsafe { ngcc_ct_make_undefined(b.as_ptr(), b.len()) }
    }

    pub fn defined(b: &[u8]) {
        // SAFETY: as above.
        unsafe { ngcc_ct_make_defined(b.as_ptr(), b.len()) }
    }

    pub fn marker(text: &str) {
        let c = CString::new(text).unwrap_or_default();
        // SAFETY: a NUL-terminated string we own.
        unsafe { ngcc_ct_marker(c.as_ptr()) }
    }
}

/// The operations with a ct job per kind: verify has no secret input.
pub fn ops(kind: Kind) -> Vec<Op> {
    match kind {
        Kind::Kem => vec![Op::Keygen, Op::Enc, Op::Dec],
        Kind::Sig => vec![Op::Keygen, Op::Sign],
        Kind::Kex => vec![Op::Exchange],
        Kind::Hash => Vec::new(),
    }
}

/// Whether the secret key is an input of `op` (else the secret is the randomness only).
pub fn uses_sk(op: &Op) -> bool {
    matches!(op, Op::Dec | Op::Sign)
}

fn failed(mut out: CtOutput, e: impl Into<String>) -> CtOutput {
    out.status = ProcessStatus::Failed;
    out.error = Some(e.into());
    out
}

pub fn run(job: &CtJob) -> CtOutput {
    let tainting = matches!(job.mode, CtMode::Taint { .. });
    // Opened before seccomp, which denies perf_event_open to candidate code.
    let counter = (!tainting).then(Counter::open_best);
    let mut out = CtOutput {
        sandbox: super::sandbox(&job.limits),
        ..CtOutput::default()
    };
    if tainting && !client::available() {
        return failed(
            out,
            "this ngcc-perf was built without valgrind/memcheck.h: no taint run possible",
        );
    }
    if tainting && !client::on_valgrind() {
        return failed(out, "the taint job is not running under valgrind");
    }
    super::crash::stage("dlopen (library constructors)");
    let lib = match Lib::open(&job.library) {
        Ok(l) => l,
        Err(e) => return failed(out, format!("LOADFAIL: {e}")),
    };
    if let Err(e) = seed(&lib, job.api, &perf_seed(0), false) {
        return failed(out, format!("{e:#}"));
    }
    super::crash::stage(&job.op.name());
    let mut runner = match Runner::prepare(&lib, job.kind, &job.op, 0, &job.setup_dir, false) {
        Ok(r) => r,
        Err(e) => return failed(out, e),
    };
    let t0 = monotonic_raw_ns();
    let res = match (&job.mode, counter) {
        (CtMode::Taint { runs }, _) => taint(job, &lib, &mut runner, *runs, &mut out),
        (CtMode::Dudect { .. }, Some(mut c)) => dudect(job, &lib, &mut runner, &mut c, &mut out),
        _ => Err(anyhow!("no counter")),
    };
    out.work_s = (monotonic_raw_ns() - t0) as f64 / 1e9;
    if let Err(e) = res.and_then(|()| Ok(runner.check_guards()?)) {
        return failed(out, format!("{e:#}"));
    }
    out.status = ProcessStatus::Complete;
    out
}

/// Seeds the library's randomness with `seed`; `secret`: mark it secret (ICCS: the seed
/// bytes before `ngcc_seed`; NIST: every `randombytes` output from now on).
fn seed(lib: &Lib, api: Api, seed: &[u8; 48], secret: bool) -> Result<()> {
    match api {
        Api::Iccs => {
            let f: SeedFn = lib.func("ngcc_seed")?;
            if secret {
                client::undefined(seed);
            }
            // SAFETY: the shim's ngcc_seed reads `len` bytes.
            let rc = unsafe { f(seed.as_ptr(), seed.len() as u64) };
            if secret {
                client::defined(seed);
            }
            if rc != 0 {
                bail!("ngcc_seed returned {rc}");
            }
        }
        Api::Nist => {
            let set: SetRandombytesFn = lib.func("ngcc_set_randombytes")?;
            // SAFETY: host_randombytes matches the callback type.
            unsafe { set(rng::host_randombytes) };
            rng::install(rng::seeded(&KatRng::Nist, seed));
            rng::mark_output_secret(secret);
        }
    }
    Ok(())
}

/// `[start, end)` ranges of a buffer of `len` bytes that are secret: all of it less `public`.
pub fn secret_ranges(len: usize, public: &[(u64, u64)]) -> Vec<(usize, usize)> {
    let mut public: Vec<(usize, usize)> = public
        .iter()
        .map(|&(a, b)| (a.min(len as u64) as usize, b.min(len as u64) as usize))
        .filter(|(a, b)| a < b)
        .collect();
    public.sort();
    let mut out = Vec::new();
    let mut at = 0;
    for (a, b) in public {
        if a > at {
            out.push((at, a));
        }
        at = at.max(b);
    }
    if at < len {
        out.push((at, len));
    }
    out
}

fn sk_indices(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Kex => &["ska", "skb"],
        _ => &["sk"],
    }
}

fn taint(job: &CtJob, lib: &Lib, runner: &mut Runner, runs: u32, out: &mut CtOutput) -> Result<()> {
    let sk_op = uses_sk(&job.op);
    let mut stages = vec![STAGE_SECRET];
    if sk_op && !job.sk_public.is_empty() {
        stages.push(STAGE_WHOLE_SK);
    }
    // The randomness is secret in every stage: seeded (ICCS) or marked per call (NIST).
    seed(lib, job.api, &perf_seed(1), true)?;
    out.secrets.push(match job.api {
        Api::Iccs => "DRNG seed (48 bytes, so the whole DRNG stream)".into(),
        Api::Nist => "every randombytes output".into(),
    });
    for stage in &stages {
        client::marker(&format!("{STAGE_MARKER} {stage}"));
        out.stages.push(stage.to_string());
        for _ in 0..runs {
            if sk_op {
                for b in runner.buffers_mut() {
                    if !sk_indices(job.kind).contains(&b.name()) {
                        continue;
                    }
                    let len = b.len();
                    let public: &[(u64, u64)] = if *stage == STAGE_SECRET {
                        &job.sk_public
                    } else {
                        &[]
                    };
                    for (a, e) in secret_ranges(len, public) {
                        client::undefined(&b.as_slice()[a..e]);
                    }
                }
            }
            let r = runner.call();
            for b in runner.buffers_mut() {
                client::defined(b.as_slice());
            }
            r.with_context(|| format!("{} failed under memcheck", job.op.name()))?;
        }
        if sk_op {
            let sk_len = runner
                .buffers_mut()
                .iter()
                .find(|b| b.name() == "sk")
                .map_or(0, |b| b.len());
            let ranges: Vec<String> = secret_ranges(
                sk_len,
                if *stage == STAGE_SECRET {
                    &job.sk_public
                } else {
                    &[]
                },
            )
            .iter()
            .map(|(a, b)| format!("sk[{a}..{b}]"))
            .collect();
            out.secrets.push(format!("{stage}: {}", ranges.join(" ")));
        }
    }
    client::marker(&format!("{STAGE_MARKER} end"));
    rng::mark_output_secret(false);
    out.calls = u64::from(runs);
    Ok(())
}

/// xorshift64*: the class choice and the random inputs (not secret, only varied).
struct Xs(u64);

impl Xs {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn fill(&mut self, b: &mut [u8]) {
        for chunk in b.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// The input dudect varies per operation: a buffer of the runner (dec: the ciphertext,
/// sign: the message), or the randomness (keygen, enc, exchange).
enum Varied {
    Buffer(&'static str),
    Randomness,
}

fn varied(op: &Op) -> Varied {
    // One table for the classes and the verdict's words (schema::CtVerdict::of).
    match crate::dataset::schema::ct_varied_buffer(op) {
        Some(name) => Varied::Buffer(name),
        None => Varied::Randomness,
    }
}

fn dudect(
    job: &CtJob,
    lib: &Lib,
    runner: &mut Runner,
    counter: &mut Counter,
    out: &mut CtOutput,
) -> Result<()> {
    let CtMode::Dudect {
        measurements,
        budget_s,
        seed: s,
    } = job.mode
    else {
        bail!("not a dudect job");
    };
    let mut xs = Xs(s | 1);
    let what = varied(&job.op);
    let (fixed, idx) = match &what {
        Varied::Buffer(name) => {
            let i = runner
                .buffers_mut()
                .iter()
                .position(|b| b.name() == *name)
                .ok_or_else(|| anyhow!("no {name} buffer"))?;
            let fixed = if *name == "m" {
                sig_message()
            } else {
                runner.buffers_mut()[i].as_slice().to_vec()
            };
            (fixed, Some(i))
        }
        Varied::Randomness => (perf_seed(2).to_vec(), None),
    };
    out.classes = match &what {
        Varied::Buffer(name) => vec![
            format!("fixed {name} (the honest one of the setup)"),
            format!("uniformly random {name} bytes"),
        ],
        Varied::Randomness => vec![
            "fixed randomness (the same 48-byte seed before every call)".into(),
            "random randomness (a fresh seed before every call)".into(),
        ],
    };
    let mut scratch = vec![0u8; fixed.len()];
    let mut input = vec![0u8; fixed.len()];
    let n_max = measurements as usize;
    let mut ticks = Vec::with_capacity(n_max);
    let mut classes = Vec::with_capacity(n_max);
    let deadline = monotonic_raw_ns() + (budget_s * 1e9) as u64;
    let mut i = 0u64;
    while ticks.len() < n_max {
        let class = (xs.next() >> 63) as u8;
        // The same preparation for both classes: draw random bytes, then take them or the
        // fixed input.
        xs.fill(&mut scratch);
        input.copy_from_slice(if class == 0 { &fixed } else { &scratch });
        match idx {
            Some(b) => runner.buffers_mut()[b]
                .as_mut_slice()
                .copy_from_slice(&input),
            None => {
                let mut s48 = [0u8; 48];
                s48.copy_from_slice(&input[..48]);
                seed(lib, job.api, &s48, false)?;
            }
        }
        counter.start();
        let r = runner.call();
        let t = counter.stop();
        // A dec of random bytes may legitimately fail (explicit rejection): time it anyway.
        if let Err(e) = r
            && matches!(what, Varied::Randomness)
        {
            return Err(e.into());
        }
        i += 1;
        if i > DUDECT_WARMUPS {
            ticks.push(t);
            classes.push(class);
        }
        // Checked after every call, warm-ups included: slow operations must stop too.
        if monotonic_raw_ns() > deadline {
            break;
        }
    }
    out.counter = counter.kind();
    out.calls = ticks.len() as u64;
    let mut bytes = Vec::with_capacity(ticks.len() * 9);
    for t in &ticks {
        bytes.extend_from_slice(&t.to_le_bytes());
    }
    bytes.extend_from_slice(&classes);
    std::fs::write(CT_TIMINGS, &bytes).with_context(|| format!("writing {CT_TIMINGS}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_ranges_are_cut_out_of_the_secret_key() {
        assert_eq!(secret_ranges(10, &[]), vec![(0, 10)]);
        assert_eq!(secret_ranges(10, &[(2, 4), (6, 20)]), vec![(0, 2), (4, 6)]);
        assert_eq!(secret_ranges(10, &[(0, 10)]), Vec::<(usize, usize)>::new());
        assert_eq!(secret_ranges(10, &[(3, 5), (4, 8)]), vec![(0, 3), (8, 10)]);
    }
}
