//! Reading a PQClean tree: schemes, implementations, META.yml digests, common sources.

use crate::dataset::schema::KatRng;
use anyhow::{Context, Result, bail};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One `crypto_*/<scheme>/<impl>` folder with a sibling META.yml.
#[derive(Debug, Clone)]
pub struct PqcImpl {
    pub scheme: String,
    pub implementation: String,
    pub kind: super::Kind,
    /// `crypto_kem/ml-kem-768/clean`, relative to the tree.
    pub rel_dir: String,
    pub namespace: String,
    pub nistkat_sha256: String,
    pub nistkat_rng: KatRng,
    pub required_flags: Vec<String>,
    /// Files of `common/` (relative to the tree) this implementation needs.
    pub common_sources: Vec<String>,
    pub needs_keccak4x: bool,
}

impl PqcImpl {
    pub fn label(&self) -> String {
        format!("{}-{}", self.scheme, self.implementation)
    }
}

/// Scheme family → (candidate id, algorithm name).
pub fn family(scheme: &str) -> Option<(&'static str, &'static str)> {
    let table: [(&str, &str, &str); 7] = [
        ("ml-kem-", "ml-kem", "ML-KEM"),
        ("hqc-", "hqc", "HQC"),
        ("mceliece", "mceliece", "Classic McEliece"),
        ("ml-dsa-", "ml-dsa", "ML-DSA"),
        ("falcon-", "falcon", "Falcon"),
        ("sphincs-sha2-", "sphincs-sha2", "SPHINCS+-SHA2"),
        ("sphincs-shake-", "sphincs-shake", "SPHINCS+-SHAKE"),
    ];
    table
        .iter()
        .find(|(p, _, _)| scheme.starts_with(p))
        .map(|(_, id, alg)| (*id, *alg))
}

/// Every clean/avx2 implementation in the tree, sorted by (kind, scheme, implementation).
pub fn scan(tree: &Path) -> Result<Vec<PqcImpl>> {
    let mut out = Vec::new();
    for (sub, kind) in [
        ("crypto_kem", super::Kind::Kem),
        ("crypto_sign", super::Kind::Sig),
    ] {
        let dir = tree.join(sub);
        let mut schemes: Vec<_> = std::fs::read_dir(&dir)
            .with_context(|| format!("{}: not a PQClean tree", tree.display()))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.join("META.yml").is_file())
            .collect();
        schemes.sort();
        for scheme_dir in schemes {
            let scheme = scheme_dir
                .file_name()
                .unwrap()
                .to_string_lossy()
                .to_string();
            let meta = Meta::parse(&std::fs::read_to_string(scheme_dir.join("META.yml"))?)
                .with_context(|| format!("{}/META.yml", scheme_dir.display()))?;
            for implementation in ["clean", "avx2"] {
                let impl_dir = scheme_dir.join(implementation);
                if !impl_dir.join("api.h").is_file() {
                    continue;
                }
                let namespace = namespace_of(&impl_dir)?;
                let (common_sources, needs_keccak4x) = common_needs(tree, &impl_dir)?;
                out.push(PqcImpl {
                    scheme: scheme.clone(),
                    implementation: implementation.to_string(),
                    kind,
                    rel_dir: format!("{sub}/{scheme}/{implementation}"),
                    namespace,
                    nistkat_sha256: meta.nistkat_sha256.clone(),
                    nistkat_rng: meta.nistkat_rng.clone(),
                    required_flags: meta.flags_of(implementation),
                    common_sources,
                    needs_keccak4x,
                });
            }
        }
    }
    Ok(out)
}

/// The few META.yml facts we need, read line by line (the files are flat and regular).
#[derive(Debug, Default)]
struct Meta {
    nistkat_sha256: String,
    nistkat_rng: KatRng,
    flags: Vec<(String, Vec<String>)>,
}

impl Meta {
    fn parse(text: &str) -> Result<Meta> {
        let mut meta = Meta {
            nistkat_rng: KatRng::Nist,
            ..Meta::default()
        };
        let mut in_flags = false;
        for line in text.lines() {
            let t = line.trim();
            if let Some(v) = t.strip_prefix("nistkat-sha256:") {
                meta.nistkat_sha256 = v.trim().to_string();
            } else if let Some(v) = t.strip_prefix("nistkat-rng:") {
                meta.nistkat_rng = KatRng::from(v.trim());
            } else if let Some(v) = t.strip_prefix("- name:") {
                meta.flags.push((v.trim().to_string(), Vec::new()));
                in_flags = false;
            } else if t == "required_flags:" {
                in_flags = true;
            } else if in_flags && let Some(flag) = t.strip_prefix("- ") {
                if let Some((_, flags)) = meta.flags.last_mut() {
                    flags.push(flag.trim().to_string());
                }
            } else if !t.starts_with("- ") {
                in_flags = false;
            }
        }
        if meta.nistkat_sha256.len() != 64 {
            bail!("no nistkat-sha256");
        }
        Ok(meta)
    }

    fn flags_of(&self, implementation: &str) -> Vec<String> {
        let mut flags: Vec<String> = self
            .flags
            .iter()
            .filter(|(n, _)| n == implementation)
            .flat_map(|(_, f)| f.iter().cloned())
            .collect();
        flags.sort();
        flags.dedup();
        flags
    }
}

/// The namespace from api.h's include guard `#ifndef <NS>_API_H`.
fn namespace_of(impl_dir: &Path) -> Result<String> {
    let api = std::fs::read_to_string(impl_dir.join("api.h"))?;
    api.lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("#ifndef ")
                .and_then(|g| g.trim().strip_suffix("_API_H"))
        })
        .map(str::to_string)
        .with_context(|| {
            format!(
                "{}/api.h: no include guard naming the namespace",
                impl_dir.display()
            )
        })
}

/// Common sources reached from the implementation's includes (closed over common's own
/// includes), and whether its Makefile links the 4-way Keccak.
fn common_needs(tree: &Path, impl_dir: &Path) -> Result<(Vec<String>, bool)> {
    let common = tree.join("common");
    let mut wanted: BTreeSet<String> = BTreeSet::new();
    let mut queue: Vec<PathBuf> = std::fs::read_dir(impl_dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("c" | "h" | "S")
            )
        })
        .collect();
    while let Some(file) = queue.pop() {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for header in includes(&text) {
            let stem = header.trim_end_matches(".h");
            let c_file = format!("{stem}.c");
            // randombytes comes from the harness shim, never from common/.
            if stem != "randombytes"
                && common.join(&c_file).is_file()
                && wanted.insert(c_file.clone())
            {
                queue.push(common.join(&c_file));
                queue.push(common.join(&header));
            }
        }
    }
    let makefile = std::fs::read_to_string(impl_dir.join("Makefile")).unwrap_or_default();
    let keccak4x = makefile.contains("keccak4x");
    Ok((
        wanted.into_iter().map(|f| format!("common/{f}")).collect(),
        keccak4x,
    ))
}

fn includes(text: &str) -> impl Iterator<Item = String> + '_ {
    text.lines().filter_map(|l| {
        let l = l
            .trim_start()
            .strip_prefix('#')?
            .trim_start()
            .strip_prefix("include")?
            .trim();
        let name = l.strip_prefix('"')?.split('"').next()?;
        Some(name.to_string())
    })
}

/// Whether this CPU can run code needing `flags` (META.yml required_flags).
pub fn cpu_supports(flags: &[String]) -> bool {
    flags.iter().all(|f| cpu_has(f))
}

#[cfg(target_arch = "x86_64")]
fn cpu_has(flag: &str) -> bool {
    match flag {
        "avx2" => std::arch::is_x86_feature_detected!("avx2"),
        "bmi2" => std::arch::is_x86_feature_detected!("bmi2"),
        "bmi1" => std::arch::is_x86_feature_detected!("bmi1"),
        "aes" => std::arch::is_x86_feature_detected!("aes"),
        "popcnt" => std::arch::is_x86_feature_detected!("popcnt"),
        "pclmulqdq" => std::arch::is_x86_feature_detected!("pclmulqdq"),
        "sse4_1" => std::arch::is_x86_feature_detected!("sse4.1"),
        _ => false,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has(_flag: &str) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_flags_per_implementation() {
        let text = "name: X\nnistkat-sha256: 5352539586b6c3df58be6158a6250aeff402bd73060b0a3de68850ac074c17c3\n\
            implementations:\n    - name: clean\n      version: v\n    - name: avx2\n      supported_platforms:\n\
            \x20       - architecture: x86_64\n          required_flags:\n              - aes\n              - avx2\n\
            \x20   - name: aarch64\n      required_flags:\n              - asimd\n";
        let m = Meta::parse(text).unwrap();
        assert_eq!(m.flags_of("avx2"), vec!["aes", "avx2"]);
        assert!(m.flags_of("clean").is_empty());
        assert_eq!(m.flags_of("aarch64"), vec!["asimd"]);
        assert_eq!(m.nistkat_rng, KatRng::Nist);
    }

    #[test]
    fn meta_without_digest_is_an_error() {
        assert!(Meta::parse("name: X\n").is_err());
    }

    #[test]
    fn families() {
        assert_eq!(family("ml-kem-768").unwrap().0, "ml-kem");
        assert_eq!(family("mceliece348864f").unwrap().0, "mceliece");
        assert_eq!(
            family("sphincs-shake-128f-simple").unwrap().0,
            "sphincs-shake"
        );
        assert!(family("kyber768").is_none());
    }
}
