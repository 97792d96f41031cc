//! Fixed values of the NICCS evaluation guide that the campaign, the pages and `validate`
//! must agree on: one definition, so a change reaches all three.

/// The guide's hash message lengths S1..S8, in bytes.
pub const HASH_SIZES: [u64; 8] = [32, 128, 512, 1024, 4096, 8192, 16384, 65536];
