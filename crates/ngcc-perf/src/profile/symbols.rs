//! Which helper functions get a link-time wrapper, and how a call to each is recorded.
//!
//! ICCS candidates: the four ICCS helpers by their official names (what the reference
//! profiled; a candidate's own SHAKE or SM3 stays out of the ICCS share on purpose).
//! NIST/PQClean candidates: `randombytes`, the FIPS 202, SHA-2 and AES functions of PQClean's
//! `common/` (and the pq-crystals reference names `shake*_init/_finalize/_squeeze/_absorb_once`),
//! wherever they are defined — PQClean's shared copy or the candidate's own — under their
//! plain names or prefixed with the instance's namespace. Names are matched exactly: a
//! scheme's own helper such as `PQCLEAN_MLKEM768_CLEAN_kyber_shake128_absorb` has a different
//! signature and is not a FIPS 202 function.

use crate::candidate::Api;
use object::read::elf::ElfFile64;
use object::{Object, ObjectSection, ObjectSymbol, RelocationTarget};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Helper family: everything but `Rng` counts towards `hash_share`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    Keccak,
    Sha2,
    Aes,
    Iccs,
    Rng,
}

/// One wrappable function: the symbol's base name, the `fn` it is recorded as, the C
/// wrapper shape (a `NGCC_PROF_W_<shape>` macro in csrc/prof/ngcc_prof.c) and its parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Helper {
    pub base: String,
    pub name: String,
    pub shape: &'static str,
    pub param: u64,
    pub family: Family,
}

fn h(base: &str, shape: &'static str, param: u64, family: Family) -> Helper {
    Helper {
        base: base.into(),
        name: base.into(),
        shape,
        param,
        family,
    }
}

/// Every helper wrapped for candidates of `api`.
pub fn helpers(api: Api) -> Vec<Helper> {
    match api {
        Api::Iccs => vec![
            h("sm3hash", "ICCS_HASH", 0, Family::Iccs),
            h("pseudohash", "ICCS_HASH", 0, Family::Iccs),
            h("pseudoXOF", "ICCS_XOF", 0, Family::Iccs),
            Helper {
                name: "drng".into(),
                ..h("get_random_number", "DRNG", 0, Family::Rng)
            },
        ],
        Api::Nist => nist_helpers(),
    }
}

fn nist_helpers() -> Vec<Helper> {
    use Family::*;
    let mut v = vec![
        h("randombytes", "RNG", 0, Rng),
        Helper {
            name: "randombytes".into(),
            ..h("PQCLEAN_randombytes", "RNG", 0, Rng)
        },
    ];
    for (x, rate) in [("shake128", 168), ("shake256", 136)] {
        v.push(h(x, "XOF", 0, Keccak));
        v.push(h(&format!("{x}_squeezeblocks"), "BLOCKS_OUT", rate, Keccak));
        for s in ["absorb", "absorb_once", "inc_absorb"] {
            v.push(h(&format!("{x}_{s}"), "ABSORB", 0, Keccak));
        }
        for s in ["squeeze", "inc_squeeze"] {
            v.push(h(&format!("{x}_{s}"), "SQUEEZE", 0, Keccak));
        }
        for s in [
            "init",
            "finalize",
            "inc_init",
            "inc_finalize",
            "ctx_release",
            "inc_ctx_release",
        ] {
            v.push(h(&format!("{x}_{s}"), "STATE", 0, Keccak));
        }
        for s in ["ctx_clone", "inc_ctx_clone"] {
            v.push(h(&format!("{x}_{s}"), "TWO_PTR", 0, Keccak));
        }
    }
    for bits in [256u64, 384, 512] {
        let x = format!("sha3_{bits}");
        v.push(h(&x, "HASH", bits, Keccak));
        v.push(h(&format!("{x}_inc_init"), "STATE", 0, Keccak));
        v.push(h(&format!("{x}_inc_absorb"), "ABSORB", 0, Keccak));
        v.push(h(&format!("{x}_inc_finalize"), "DIGEST_OUT", bits, Keccak));
        v.push(h(&format!("{x}_inc_ctx_clone"), "TWO_PTR", 0, Keccak));
        v.push(h(&format!("{x}_inc_ctx_release"), "STATE", 0, Keccak));
    }
    for (bits, block) in [(224u64, 64u64), (256, 64), (384, 128), (512, 128)] {
        let x = format!("sha{bits}");
        v.push(h(&x, "HASH", bits, Sha2));
        v.push(h(&format!("{x}_inc_init"), "STATE", 0, Sha2));
        v.push(h(&format!("{x}_inc_blocks"), "BLOCKS_IN", block, Sha2));
        v.push(h(&format!("{x}_inc_finalize"), "SHA2_FINAL", bits, Sha2));
        v.push(h(&format!("{x}_inc_ctx_clone"), "TWO_PTR", 0, Sha2));
        v.push(h(&format!("{x}_inc_ctx_release"), "STATE", 0, Sha2));
    }
    for bits in [128u64, 192, 256] {
        let x = format!("aes{bits}");
        v.push(h(&format!("{x}_ecb_keyexp"), "TWO_PTR", bits, Aes));
        v.push(h(&format!("{x}_ctr_keyexp"), "TWO_PTR", bits, Aes));
        v.push(h(&format!("{x}_ecb"), "ECB", 0, Aes));
        v.push(h(&format!("{x}_ctr"), "CTR", 0, Aes));
        v.push(h(&format!("{x}_ctx_release"), "STATE", 0, Aes));
    }
    v
}

/// Global symbols of the instance's object files.
#[derive(Debug, Default, Clone)]
pub struct ObjectSymbols {
    pub defined: BTreeSet<String>,
    /// Referenced without a definition in the same object: calls `--wrap` can redirect.
    pub undefined: BTreeSet<String>,
    /// Defined and also referenced (relocations) inside the same object: those calls bind
    /// within the translation unit, out of `--wrap`'s reach.
    pub self_referenced: BTreeSet<String>,
}

/// The errors are one-line messages (no context chain): the only caller turns them into a
/// relink failure whose reason is their Display, and decides nothing on them.
pub fn scan_objects(objects: &[PathBuf]) -> anyhow::Result<ObjectSymbols> {
    let mut out = ObjectSymbols::default();
    for path in objects {
        let data = std::fs::read(path)
            .map_err(|e| anyhow::anyhow!("reading object {}: {e}", path.display()))?;
        let file = ElfFile64::<object::Endianness>::parse(data.as_slice())
            .map_err(|e| anyhow::anyhow!("{}: not a 64-bit ELF object: {e}", path.display()))?;
        for sym in file.symbols() {
            let Ok(name) = sym.name() else { continue };
            if name.is_empty() {
                continue;
            }
            if sym.is_undefined() {
                out.undefined.insert(name.to_string());
            } else if sym.is_definition() && sym.is_global() {
                out.defined.insert(name.to_string());
            }
        }
        for section in file.sections() {
            for (_, rel) in section.relocations() {
                let RelocationTarget::Symbol(idx) = rel.target() else {
                    continue;
                };
                if let Ok(sym) = file.symbol_by_index(idx)
                    && sym.is_definition()
                    && sym.is_global()
                    && let Ok(name) = sym.name()
                {
                    out.self_referenced.insert(name.to_string());
                }
            }
        }
    }
    Ok(out)
}

/// A symbol that gets `-Wl,--wrap=<symbol>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrap {
    pub symbol: String,
    pub helper: Helper,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WrapPlan {
    pub wraps: Vec<Wrap>,
    /// Helpers also called inside the object that defines them, where `--wrap` cannot see
    /// the call (such a call is timed only as part of an enclosing wrapped call).
    pub unreached: Vec<String>,
}

impl WrapPlan {
    /// `fn` names in this plan that count as hashing, sorted.
    pub fn hash_fns(&self) -> Vec<String> {
        self.names(|f| f != Family::Rng)
    }

    pub fn rng_fns(&self) -> Vec<String> {
        self.names(|f| f == Family::Rng)
    }

    fn names(&self, keep: impl Fn(Family) -> bool) -> Vec<String> {
        let set: BTreeSet<String> = self
            .wraps
            .iter()
            .filter(|w| keep(w.helper.family))
            .map(|w| w.helper.name.clone())
            .collect();
        set.into_iter().collect()
    }

    pub fn symbols(&self) -> Vec<String> {
        self.wraps.iter().map(|w| w.symbol.clone()).collect()
    }
}

fn is_c_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Chooses the wraps: each helper under its plain name and (NIST) its namespaced name.
pub fn plan_wraps(api: Api, namespace: Option<&str>, syms: &ObjectSymbols) -> WrapPlan {
    let mut plan = WrapPlan::default();
    for helper in helpers(api) {
        let mut names = vec![helper.base.clone()];
        if api == Api::Nist
            && let Some(ns) = namespace.filter(|n| is_c_identifier(n))
            && !helper.base.starts_with("PQCLEAN_")
        {
            names.push(format!("{ns}_{}", helper.base));
        }
        for symbol in names {
            if syms.defined.contains(&symbol) && syms.self_referenced.contains(&symbol) {
                plan.unreached.push(symbol.clone());
            }
            if syms.undefined.contains(&symbol) {
                plan.wraps.push(Wrap {
                    symbol,
                    helper: helper.clone(),
                });
            }
        }
    }
    plan
}

/// `ngcc_prof_wraps.h`: the X-macro list the wrapper file expands (ids in plan order).
pub fn wraps_header(title: &str, plan: &WrapPlan) -> String {
    let mut s = format!(
        "/* Generated by ngcc-perf for {}: the symbols linked with -Wl,--wrap. */\n#define NGCC_PROF_FNS(X)",
        title.replace("*/", "* /")
    );
    for (i, w) in plan.wraps.iter().enumerate() {
        let _ = write!(
            s,
            " \\\n    X({i}, {}, \"{}\", {}, {}u)",
            w.symbol, w.helper.name, w.helper.shape, w.helper.param
        );
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syms(defined: &[&str], undefined: &[&str]) -> ObjectSymbols {
        ObjectSymbols {
            defined: defined.iter().map(|s| s.to_string()).collect(),
            undefined: undefined.iter().map(|s| s.to_string()).collect(),
            self_referenced: ["shake256_inc_init", "sha3_256", "memcpy"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        }
    }

    /// The family a recorded `fn` name belongs to (None for names no wrapper records).
    fn family_of(func: &str) -> Option<Family> {
        [Api::Iccs, Api::Nist]
            .into_iter()
            .flat_map(helpers)
            .find(|h| h.name == func)
            .map(|h| h.family)
    }

    /// Whether a recorded `fn` counts as hashing (unknown names do not).
    fn is_hash_fn(func: &str) -> bool {
        family_of(func).is_some_and(|f| f != Family::Rng)
    }

    #[test]
    fn classification() {
        for f in [
            "pseudoXOF",
            "pseudohash",
            "sm3hash",
            "shake128_absorb",
            "sha3_512",
        ] {
            assert!(is_hash_fn(f), "{f}");
        }
        for f in [
            "sha256_inc_blocks",
            "aes256_ctr",
            "shake256_inc_ctx_release",
        ] {
            assert!(is_hash_fn(f), "{f}");
        }
        for f in [
            "drng",
            "randombytes",
            "get_random_number",
            "kyber_shake128_absorb",
            "",
        ] {
            assert!(!is_hash_fn(f), "{f}");
        }
        assert_eq!(family_of("drng"), Some(Family::Rng));
        assert_eq!(family_of("randombytes"), Some(Family::Rng));
        assert_eq!(family_of("sha3_256"), Some(Family::Keccak));
        assert_eq!(family_of("sha512"), Some(Family::Sha2));
        assert_eq!(family_of("aes128_ecb_keyexp"), Some(Family::Aes));
        assert_eq!(family_of("sm3hash"), Some(Family::Iccs));
    }

    #[test]
    fn pqclean_wraps_exact_names_only() {
        let s = syms(
            &[
                "shake128_absorb",
                "sha3_256",
                "shake256_inc_init",
                "randombytes",
                "PQCLEAN_MLKEM768_CLEAN_kyber_shake128_absorb",
            ],
            &[
                "shake128_absorb",
                "sha3_256",
                "randombytes",
                "PQCLEAN_MLKEM768_CLEAN_kyber_shake128_absorb",
                "PQCLEAN_MLKEM768_CLEAN_sha3_512",
                "memcpy",
            ],
        );
        let plan = plan_wraps(Api::Nist, Some("PQCLEAN_MLKEM768_CLEAN"), &s);
        let wrapped = plan.symbols();
        assert_eq!(
            wrapped,
            [
                "randombytes",
                "shake128_absorb",
                "sha3_256",
                "PQCLEAN_MLKEM768_CLEAN_sha3_512"
            ]
        );
        // Defined and called inside its own object: listed whether or not also wrapped.
        assert_eq!(plan.unreached, ["shake256_inc_init", "sha3_256"]);
        assert_eq!(plan.hash_fns(), ["sha3_256", "sha3_512", "shake128_absorb"]);
        assert_eq!(plan.rng_fns(), ["randombytes"]);
    }

    #[test]
    fn iccs_wraps_the_four_helpers() {
        let s = syms(
            &["pseudoXOF", "get_random_number", "sm3hash", "shake256"],
            &[
                "pseudoXOF",
                "get_random_number",
                "sm3hash",
                "shake256",
                "pseudohash",
            ],
        );
        let plan = plan_wraps(Api::Iccs, None, &s);
        let names: Vec<&str> = plan.wraps.iter().map(|w| w.helper.name.as_str()).collect();
        assert_eq!(names, ["sm3hash", "pseudohash", "pseudoXOF", "drng"]);
        assert_eq!(plan.hash_fns(), ["pseudoXOF", "pseudohash", "sm3hash"]);
        assert!(plan.unreached.is_empty());
    }

    #[test]
    fn every_shape_exists_in_the_c_file() {
        for api in [Api::Iccs, Api::Nist] {
            for helper in helpers(api) {
                let mac = format!("#define NGCC_PROF_W_{}(", helper.shape);
                assert!(
                    crate::csrc::PROF_C.contains(&mac),
                    "{} uses shape {} missing from ngcc_prof.c",
                    helper.base,
                    helper.shape
                );
            }
        }
    }

    #[test]
    fn header_lists_the_wraps() {
        let plan = WrapPlan {
            wraps: vec![Wrap {
                symbol: "get_random_number".into(),
                helper: helpers(Api::Iccs).pop().unwrap(),
            }],
            unreached: vec![],
        };
        let text = wraps_header("kem-x/a */", &plan);
        assert!(text.contains("X(0, get_random_number, \"drng\", DRNG, 0u)"));
        assert!(!text.contains("a */"));
        assert_eq!(
            wraps_header("t", &WrapPlan::default()),
            "/* Generated by ngcc-perf for t: the symbols linked with -Wl,--wrap. */\n#define NGCC_PROF_FNS(X)\n"
        );
    }
}
