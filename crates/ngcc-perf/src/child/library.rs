//! Loading one candidate library (inside the child only) and resolving the uniform ABI.

use super::protocol::Meta;
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
use std::ffi::{CStr, c_char, c_int};
use std::path::Path;

pub type Ull = u64;
pub type KeypairFn = unsafe extern "C" fn(*mut u8, *mut Ull, *mut u8, *mut Ull) -> c_int;
/// kem_enc(pk, pk_len, ss, *ss_len, ct, *ct_len) / kem_dec(sk, sk_len, ct, ct_len, ss, *ss_len)
pub type KemOpFn =
    unsafe extern "C" fn(*mut u8, Ull, *mut u8, *mut Ull, *mut u8, *mut Ull) -> c_int;
pub type KemDecFn = unsafe extern "C" fn(*mut u8, Ull, *mut u8, Ull, *mut u8, *mut Ull) -> c_int;
/// sig_sign(sk, sk_len, m, m_len, sn, *sn_len)
pub type SignFn = unsafe extern "C" fn(*mut u8, Ull, *mut u8, Ull, *mut u8, *mut Ull) -> c_int;
/// sig_verify(pk, pk_len, sn, sn_len, m, m_len)
pub type VerifyFn = unsafe extern "C" fn(*mut u8, Ull, *mut u8, Ull, *mut u8, Ull) -> c_int;
/// ngcc_nist_sign(sm, *sm_len, m, m_len, sk) / ngcc_nist_open(m, *m_len, sm, sm_len, pk)
pub type NistSignFn = unsafe extern "C" fn(*mut u8, *mut Ull, *const u8, Ull, *const u8) -> c_int;
pub type KexInitFn =
    unsafe extern "C" fn(*mut u8, *mut Ull, *mut u8, *mut Ull, *mut u8, *mut Ull) -> c_int;
/// ngcc_kex_pass(k, sk, sk_len, peer_pk, peer_pk_len, in, in_len, st, *st_len, out, *out_len)
pub type KexPassFn = unsafe extern "C" fn(
    c_int,
    *mut u8,
    Ull,
    *mut u8,
    Ull,
    *mut u8,
    Ull,
    *mut u8,
    *mut Ull,
    *mut u8,
    *mut Ull,
) -> c_int;
pub type KexHasPassFn = unsafe extern "C" fn(c_int) -> c_int;
/// ngcc_kex_derive_x(sk, sk_len, peer_pk, peer_pk_len, msg, msg_len, st, st_len, ss, *ss_len)
pub type KexDeriveFn = unsafe extern "C" fn(
    *mut u8,
    Ull,
    *mut u8,
    Ull,
    *mut u8,
    Ull,
    *mut u8,
    Ull,
    *mut u8,
    *mut Ull,
) -> c_int;
pub type HashFn = unsafe extern "C" fn(c_int, *const u8, Ull, *mut u8) -> c_int;
pub type SeedFn = unsafe extern "C" fn(*const u8, Ull) -> c_int;
pub type RandombytesFn = unsafe extern "C" fn(*mut u8, usize) -> c_int;
pub type SetRandombytesFn = unsafe extern "C" fn(RandombytesFn);

/// Mirror of `ngcc_meta_t` in csrc/shim/ngcc_shim.h.
#[repr(C)]
struct RawMeta {
    magic: u32,
    abi: u32,
    kind: u32,
    struct_size: u32,
    id: [c_char; 16],
    algorithm: [c_char; 64],
    instance: [c_char; 64],
    variant: [c_char; 32],
    source_dir: [c_char; 256],
    compiler: [c_char; 64],
    build_flags: [c_char; 128],
    sizes: [u64; 8],
}

const MAGIC: u32 = 0x4347_474E;

pub struct Lib {
    lib: Library,
    pub meta: Meta,
}

fn text(field: &[c_char]) -> String {
    let bytes: Vec<u8> = field
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Why a library cannot be used: its callers record the text (a KAT's LOADFAIL, a process's
/// error) and decide nothing on it, but the kinds keep their wording in one place.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LibError {
    #[error("dlopen: {0}")]
    Open(String),
    #[error("library has no ngcc_meta (not built by ngcc-perf)")]
    NoMeta,
    #[error("ngcc_meta returned NULL")]
    NullMeta,
    #[error("bad metadata block (magic {magic:#x}, abi {abi})")]
    BadMeta { magic: u32, abi: u32 },
    #[error("library has no {0}")]
    Missing(String),
    #[error("declared size {0} is larger than 2^29 bytes")]
    TooLarge(u64),
}

/// Callers that report an error as text keep using `?`.
impl From<LibError> for String {
    fn from(e: LibError) -> String {
        e.to_string()
    }
}

impl Lib {
    /// `dlopen(RTLD_NOW | RTLD_LOCAL)` and a checked metadata block.
    pub fn open(path: &Path) -> Result<Lib, LibError> {
        // SAFETY: this is the sandboxed child; running the library's constructors is the point.
        let lib = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }
            .map_err(|e| LibError::Open(e.to_string()))?;
        // SAFETY: symbol type matches the shim's definition.
        let meta_fn: unsafe extern "C" fn() -> *const RawMeta =
            unsafe { lib.get::<unsafe extern "C" fn() -> *const RawMeta>(b"ngcc_meta\0") }
                .map(|s| *s)
                .map_err(|_| LibError::NoMeta)?;
        // SAFETY: the shim returns a pointer to a static block.
        let raw = unsafe { meta_fn().as_ref() }.ok_or(LibError::NullMeta)?;
        if raw.magic != MAGIC || raw.abi != 1 {
            return Err(LibError::BadMeta {
                magic: raw.magic,
                abi: raw.abi,
            });
        }
        let mut meta = Meta {
            kind: raw.kind,
            id: text(&raw.id),
            algorithm: text(&raw.algorithm),
            instance: text(&raw.instance),
            variant: text(&raw.variant),
            source_dir: text(&raw.source_dir),
            compiler: text(&raw.compiler),
            build_flags: text(&raw.build_flags),
            sizes: raw.sizes.to_vec(),
        };
        // SAFETY: optional symbol returning a static C string.
        if let Ok(f) =
            unsafe { lib.get::<unsafe extern "C" fn() -> *const c_char>(b"ngcc_build_flags\0") }
        {
            let p = unsafe { f() };
            if !p.is_null() {
                meta.build_flags = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
            }
        }
        Ok(Lib { lib, meta })
    }

    /// A function pointer by name; `T` must be the matching `extern "C"` fn type.
    pub fn func<T: Copy>(&self, name: &str) -> Result<T, LibError> {
        let mut sym = name.as_bytes().to_vec();
        sym.push(0);
        // SAFETY: callers pass the fn type the shim defines for this name.
        unsafe { self.lib.get::<T>(sym.as_slice()) }
            .map(|s| *s)
            .map_err(|_| LibError::Missing(name.to_string()))
    }

    /// Declared sizes, with a sanity cap (reference: any declared size > 2^29 aborts).
    pub fn size(&self, index: usize) -> Result<usize, LibError> {
        let v = *self.meta.sizes.get(index).unwrap_or(&0);
        if v > 1 << 29 {
            return Err(LibError::TooLarge(v));
        }
        Ok(v as usize)
    }
}
