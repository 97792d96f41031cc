//! The embedded C helpers (csrc/iccs, linked by build.rs), called in-process.
//!
//! The safe wrappers size every output buffer from the same rules as the C code, so a
//! wrapper can never let C write out of bounds.

use std::os::raw::{c_int, c_uchar, c_ulonglong};

/// Bytes in each of V, C and the reseed counter.
pub const SEEDLEN: usize = 55;

/// The C `DRNG_ctx`: three 55-byte arrays in this order.
#[repr(C)]
#[derive(Clone)]
struct DrngCtx {
    v: [u8; SEEDLEN],
    c: [u8; SEEDLEN],
    reseed_counter: [u8; SEEDLEN],
}

unsafe extern "C" {
    fn sm3hash(d: c_int, msg: *const c_uchar, bits: c_ulonglong, digest: *mut c_uchar) -> c_int;
    fn pseudohash(d: c_int, msg: *const c_uchar, bits: c_ulonglong, digest: *mut c_uchar) -> c_int;
    #[link_name = "pseudoXOF"]
    fn pseudo_xof(
        n: c_ulonglong,
        msg: *const c_uchar,
        bits: c_ulonglong,
        out: *mut c_uchar,
    ) -> c_int;
    fn init_random_number(ctx: *mut DrngCtx, seed: *const c_uchar, len: c_ulonglong) -> c_int;
    fn get_random_number(ctx: *mut DrngCtx, out: *mut c_uchar, bits: c_ulonglong) -> c_int;
}

fn check_msg(msg: &[u8], bits: u64) {
    assert!(
        bits.div_ceil(8) <= msg.len() as u64,
        "message of {} bytes is shorter than {bits} bits",
        msg.len()
    );
}

fn out_len(bits: u64) -> usize {
    usize::try_from(bits.div_ceil(8)).expect("output length fits in memory")
}

/// `sm3hash(256, msg, bits)`.
///
/// # Panics
/// If `msg` holds fewer than `bits` bits.
pub fn c_sm3(msg: &[u8], bits: u64) -> [u8; 32] {
    check_msg(msg, bits);
    let mut out = [0u8; 32];
    // SAFETY: msg holds ceil(bits/8) bytes and out the 32 bytes a 256-bit digest takes.
    let rc = unsafe { sm3hash(256, msg.as_ptr(), bits, out.as_mut_ptr()) };
    assert_eq!(rc, 0, "sm3hash(256) failed");
    out
}

/// `sm3hash(d, …)` with any `d`: the return code and the 32-byte output buffer as C left it
/// (pre-filled with `fill`), to check that a rejected width writes nothing.
pub fn c_sm3hash_raw(d: i32, msg: &[u8], bits: u64, fill: u8) -> (i32, [u8; 32]) {
    check_msg(msg, bits);
    let mut out = [fill; 32];
    // SAFETY: as in c_sm3; any d either writes 32 bytes or nothing.
    let rc = unsafe { sm3hash(d, msg.as_ptr(), bits, out.as_mut_ptr()) };
    (rc, out)
}

/// `pseudohash(d, msg, bits)`: `d/8` bytes, or the C return code.
///
/// # Panics
/// If `msg` holds fewer than `bits` bits.
pub fn c_pseudohash(d: i32, msg: &[u8], bits: u64) -> Result<Vec<u8>, i32> {
    check_msg(msg, bits);
    let mut out = vec![0u8; 128];
    // SAFETY: msg holds ceil(bits/8) bytes; out holds the largest digest (1024 bits).
    let rc = unsafe { pseudohash(d, msg.as_ptr(), bits, out.as_mut_ptr()) };
    if rc != 0 {
        return Err(rc);
    }
    out.truncate(usize::try_from(d / 8).unwrap_or(0));
    Ok(out)
}

/// `pseudohash(d, …)` with any `d`: the return code and the 128-byte output buffer as C left
/// it (pre-filled with `fill`), to check what a width writes.
pub fn c_pseudohash_raw(d: i32, msg: &[u8], bits: u64, fill: u8) -> (i32, [u8; 128]) {
    check_msg(msg, bits);
    let mut out = [fill; 128];
    // SAFETY: as in c_pseudohash.
    let rc = unsafe { pseudohash(d, msg.as_ptr(), bits, out.as_mut_ptr()) };
    (rc, out)
}

/// `pseudoXOF(n, msg, bits)`: `ceil(n/8)` bytes.
///
/// # Panics
/// If `msg` holds fewer than `bits` bits.
pub fn c_xof(n: u64, msg: &[u8], bits: u64) -> Vec<u8> {
    check_msg(msg, bits);
    let mut out = vec![0u8; out_len(n)];
    // SAFETY: msg holds ceil(bits/8) bytes and out the ceil(n/8) bytes pseudoXOF writes.
    let rc = unsafe { pseudo_xof(n, msg.as_ptr(), bits, out.as_mut_ptr()) };
    assert_eq!(rc, 0, "pseudoXOF failed");
    out
}

/// `pseudoXOF` into a caller's buffer (for checking that C writes no more than it should).
///
/// # Panics
/// If `out` is shorter than `ceil(n/8)` bytes or `msg` shorter than `bits` bits.
pub fn c_xof_into(n: u64, msg: &[u8], bits: u64, out: &mut [u8]) {
    check_msg(msg, bits);
    assert!(out.len() >= out_len(n), "output buffer too short");
    // SAFETY: as in c_xof; out holds at least ceil(n/8) bytes.
    let rc = unsafe { pseudo_xof(n, msg.as_ptr(), bits, out.as_mut_ptr()) };
    assert_eq!(rc, 0, "pseudoXOF failed");
}

/// One C `DRNG_ctx`.
#[derive(Clone)]
pub struct CDrng {
    ctx: Box<DrngCtx>,
}

impl CDrng {
    /// `init_random_number(ctx, seed, len)`.
    pub fn new(seed: &[u8]) -> Self {
        let mut ctx = Box::new(DrngCtx {
            v: [0xA5; SEEDLEN],
            c: [0xA5; SEEDLEN],
            reseed_counter: [0xA5; SEEDLEN],
        });
        // SAFETY: ctx is a valid DRNG_ctx and seed holds seed.len() bytes.
        let rc = unsafe { init_random_number(&mut *ctx, seed.as_ptr(), seed.len() as u64) };
        assert_eq!(rc, 0, "init_random_number failed");
        CDrng { ctx }
    }

    /// `get_random_number(ctx, out, bits)`: `ceil(bits/8)` bytes.
    pub fn get(&mut self, bits: u64) -> Vec<u8> {
        let mut out = vec![0u8; out_len(bits)];
        self.get_into(&mut out, bits);
        out
    }

    /// `get_random_number` into a caller's buffer, which C fills up to `ceil(bits/8)` bytes.
    ///
    /// # Panics
    /// If `out` is shorter than that.
    pub fn get_into(&mut self, out: &mut [u8], bits: u64) {
        assert!(out.len() >= out_len(bits), "output buffer too short");
        // SAFETY: ctx is initialized and out holds at least ceil(bits/8) bytes.
        let rc = unsafe { get_random_number(&mut *self.ctx, out.as_mut_ptr(), bits) };
        assert_eq!(rc, 0, "get_random_number failed");
    }

    pub fn v(&self) -> &[u8; SEEDLEN] {
        &self.ctx.v
    }

    pub fn c(&self) -> &[u8; SEEDLEN] {
        &self.ctx.c
    }

    pub fn reseed_counter(&self) -> &[u8; SEEDLEN] {
        &self.ctx.reseed_counter
    }
}
