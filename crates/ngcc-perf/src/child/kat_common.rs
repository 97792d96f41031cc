//! What the NIST and ICCS KAT flows share: the `(status, detail)` that ends a KAT, loading
//! the shim's functions and sizes, guard and return-code checks, per-operation timing.

use super::guard::Guarded;
use super::library::Lib;
use crate::dataset::schema::KatStatus;
use std::ffi::c_int;
use std::time::Instant;

/// `(status, detail)` that ends the KAT.
pub type Fail = (KatStatus, String);

pub fn fail(status: KatStatus, detail: impl Into<String>) -> Fail {
    (status, detail.into())
}

/// A shim function; a missing one is a LOADFAIL.
pub fn load<T: Copy>(lib: &Lib, name: &str) -> Result<T, Fail> {
    lib.func(name).map_err(|e| fail(KatStatus::LoadFail, e))
}

/// A declared size; an unusable one is a LOADFAIL.
pub fn size(lib: &Lib, i: usize) -> Result<usize, Fail> {
    lib.size(i).map_err(|e| fail(KatStatus::LoadFail, e))
}

/// A non-zero return code is a CRYPTOFAIL: "`op` returned `rc`".
pub fn rc_ok(op: &str, rc: c_int) -> Result<(), Fail> {
    if rc == 0 {
        Ok(())
    } else {
        Err(fail(KatStatus::CryptoFail, format!("{op} returned {rc}")))
    }
}

/// The canaries of every buffer `op` was given; a write outside one is an OVERFLOW.
pub fn check_all(bufs: &[&Guarded], op: &str) -> Result<(), Fail> {
    for b in bufs {
        b.check(op)
            .map_err(|d| fail(KatStatus::Overflow, d.to_string()))?;
    }
    Ok(())
}

/// Milliseconds per operation, averaged over the calls, in the order first called.
#[derive(Default)]
pub struct Timer(Vec<(String, f64, u32)>);

impl Timer {
    /// Runs `f` as operation `op`: timed, and under the crash stage `op`.
    pub fn time<R>(&mut self, op: &str, f: impl FnOnce() -> R) -> R {
        super::crash::stage(op);
        let t = Instant::now();
        let r = f();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        match self.0.iter_mut().find(|(o, _, _)| o == op) {
            Some(e) => {
                e.1 += ms;
                e.2 += 1;
            }
            None => self.0.push((op.to_string(), ms, 1)),
        }
        r
    }

    pub fn averages(&self) -> Vec<(String, f64)> {
        self.0
            .iter()
            .map(|(op, ms, n)| (op.clone(), ms / f64::from((*n).max(1))))
            .collect()
    }
}
