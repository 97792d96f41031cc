//! `candidate.toml`: one per candidate, one `[[instances]]` table per parameter set.
//!
//! Paths may use `${PQCLEAN}` (the PQClean tree cargo fetched) and `${PACKAGE}` (the
//! candidate's `package` folder) so manifests stay portable.

use crate::dataset::schema::KatRng;
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Kem,
    Sig,
    Kex,
    Hash,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Kem => "kem",
            Kind::Sig => "sig",
            Kind::Kex => "kex",
            Kind::Hash => "hash",
        }
    }
    /// Type code of the metadata block (iccs-api.md §1.8).
    pub fn code(self) -> u32 {
        match self {
            Kind::Kem => 1,
            Kind::Sig => 2,
            Kind::Kex => 3,
            Kind::Hash => 4,
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    Iccs,
    Nist,
}

/// The placeholder for the fetched PQClean tree in manifest paths.
pub const PQCLEAN_VAR: &str = "${PQCLEAN}";

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    pub id: String,
    pub algorithm: String,
    pub kind: Kind,
    pub api: Api,
    /// Shown as the variant in metadata: `Reference_Implementation` unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// An unpacked submission package (`import ngcc`): `${PACKAGE}` in paths expands to it.
    /// Relative to the manifest's folder unless absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// ICCS: a folder with the official `drng.c`/`auxfunc.c` (and headers), linked where an
    /// instance has no file of that name; without it ngcc-perf's own helpers are linked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iccs_helpers: Option<String>,
    pub instances: Vec<Instance>,
    /// Folder holding candidate.toml (set when loaded, never written).
    #[serde(skip)]
    pub root: PathBuf,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Instance {
    pub label: String,
    /// Source folder, relative to the manifest's folder (or absolute, or `${PQCLEAN}/…`).
    pub dir: String,
    /// Globs relative to `dir` (default: `*.c` and `*.S`, minus test/KAT drivers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    /// More source files, relative to the manifest's folder (or absolute, or `${PQCLEAN}/…`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_sources: Vec<String>,
    /// Include folders, relative to `dir` (default `["."]`); `${PQCLEAN}` allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// Preprocessor definitions (`NAME` or `NAME=VALUE`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defines: Vec<String>,
    /// Extra compiler flags for this instance (e.g. `-mavx2`), added to every flag set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cflags: Vec<String>,
    /// Extra libraries (e.g. `-lgmp`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ldlibs: Vec<String>,
    /// NIST API: the prefix of api.h names, e.g. `PQCLEAN_MLKEM768_CLEAN`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// ICCS: header declaring the instance (default `<KIND>_AlgorithmInstance.h`); NIST: `api.h`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// ICCS: the candidate defines `drng_algorithm` itself.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own_drng_ctx: bool,
    /// Hash: digest width in bits (ICCS hashes declare DIGEST_BIT_LENGTH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest_bits: Option<u32>,
    /// Run this instance's KAT with at most this many records (very slow code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kat_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kat: Option<KatSpec>,
    /// ct phase: byte ranges `[start, end)` of the secret key that hold public data (e.g.
    /// ML-KEM-768: `[[1152, 2368]]`, the embedded pk and H(pk)). The taint run first marks
    /// only the rest secret, then the whole key, and reports sites new in the second stage
    /// as depending on public data.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ct_sk_public: Vec<(u64, u64)>,
    /// The NGCC comparison group (128, 256 or 512 bits) this parameter set is ranked in;
    /// absent: a supplementary set, shown but not ranked. `ngcc-perf catalog` writes it to
    /// `security_targets.csv`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_target: Option<u32>,
    /// This instance represents its candidate in its group (ordered pages).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub representative: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct KatSpec {
    /// ICCS: a kat.sha256 manifest, relative to the manifest's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
    /// NIST: SHA-256 of the single-record nistkat output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// NIST: `nist` (AES-256 CTR_DRBG) or `hqc` (SHAKE-256 PRNG).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rng: Option<KatRng>,
}

impl Candidate {
    /// Reads and checks one manifest; errors name the file, and toml errors the line and key.
    pub fn load(path: &Path) -> Result<Candidate> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut cand: Candidate = toml::from_str(&text).map_err(|e| {
            let mut msg = e.message().replace('\n', " ");
            let line = e
                .span()
                .map(|s| 1 + text[..s.start.min(text.len())].matches('\n').count());
            // Name the key of the offending `key = value` line unless the message does.
            let key = line
                .and_then(|l| text.lines().nth(l - 1))
                .and_then(|l| l.split_once('='))
                .map(|(k, _)| k.trim().trim_matches('"').to_string())
                .filter(|k| !k.is_empty() && !k.contains(char::is_whitespace));
            if let Some(k) = key.filter(|k| !msg.contains(&format!("`{k}`"))) {
                msg = format!("key `{k}`: {msg}");
            }
            match line {
                Some(l) => anyhow::anyhow!("{}:{l}: {msg}", path.display()),
                None => anyhow::anyhow!("{}: {msg}", path.display()),
            }
        })?;
        cand.root = path.parent().map(Path::to_path_buf).unwrap_or_default();
        cand.check().with_context(|| path.display().to_string())?;
        Ok(cand)
    }

    fn check(&self) -> Result<()> {
        let id_ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        };
        if !id_ok(&self.id) {
            bail!(
                "id {:?} must be non-empty letters, digits, '-', '_' or '.'",
                self.id
            );
        }
        if self.instances.is_empty() {
            bail!("no [[instances]]");
        }
        if self.api == Api::Nist && matches!(self.kind, Kind::Kex | Kind::Hash) {
            bail!(
                "kind = \"{}\" needs api = \"iccs\" (the NIST API has no {0})",
                self.kind.as_str()
            );
        }
        let mut seen = BTreeSet::new();
        for inst in &self.instances {
            if !id_ok(&inst.label) {
                bail!(
                    "instance label {:?} must be letters, digits, '-', '_' or '.'",
                    inst.label
                );
            }
            if !seen.insert(inst.label.as_str()) {
                bail!("duplicate instance label {:?}", inst.label);
            }
            if self.api == Api::Nist && inst.namespace.is_none() {
                bail!(
                    "instance {}: api = \"nist\" needs namespace = \"…\" (the api.h prefix)",
                    inst.label
                );
            }
            if let Some(bits) = inst.security_target
                && !crate::dataset::catalog::TARGET_GROUPS.contains(&bits)
            {
                bail!(
                    "instance {}: security_target = {bits} is not 128, 256 or 512 (leave it out for a supplementary set)",
                    inst.label
                );
            }
            if let Some(KatRng::Other(rng)) = inst.kat.as_ref().and_then(|k| k.rng.as_ref()) {
                bail!(
                    "instance {}: kat.rng must be \"nist\" or \"hqc\", not {rng:?}",
                    inst.label
                );
            }
        }
        Ok(())
    }

    /// Whether any path of the manifest names the fetched PQClean tree (`${PQCLEAN}`). Only
    /// then is the tree located (`cargo metadata`, a download on a new machine) and allowed
    /// as a source root: a package that never names it builds without cargo or a network.
    pub fn uses_pqclean(&self) -> bool {
        let named = |p: &str| p.contains(PQCLEAN_VAR);
        self.package.as_deref().is_some_and(named)
            || self.iccs_helpers.as_deref().is_some_and(named)
            || self.instances.iter().any(|i| {
                named(&i.dir)
                    || [&i.sources, &i.extra_sources, &i.include]
                        .iter()
                        .any(|v| v.iter().any(|p| named(p)))
            })
    }

    /// Expands `${PQCLEAN}` and `${PACKAGE}` and resolves relative paths against `base`.
    pub fn resolve(&self, base: &Path, path: &str) -> Result<PathBuf> {
        let mut expanded = if path.contains(PQCLEAN_VAR) {
            let dir = crate::samples::pqclean_dir()?;
            path.replace(PQCLEAN_VAR, &dir.to_string_lossy())
        } else {
            path.to_string()
        };
        if expanded.contains("${PACKAGE}") {
            let dir = self.package_dir().with_context(|| {
                format!("{path}: `${{PACKAGE}}` needs `package = \"…\"` in the manifest")
            })?;
            expanded = expanded.replace("${PACKAGE}", &dir.to_string_lossy());
        }
        let p = Path::new(&expanded);
        Ok(if p.is_absolute() {
            p.to_path_buf()
        } else {
            base.join(p)
        })
    }

    /// The `package` folder, resolved against the manifest's folder.
    pub fn package_dir(&self) -> Option<PathBuf> {
        let p = Path::new(self.package.as_deref()?);
        Some(if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.root.join(p)
        })
    }

    /// The `iccs_helpers` folder, resolved like any path of the manifest.
    pub fn iccs_helpers_dir(&self) -> Result<Option<PathBuf>> {
        self.iccs_helpers
            .as_deref()
            .map(|h| self.resolve(&self.root, h))
            .transpose()
    }

    pub fn instance_dir(&self, inst: &Instance) -> Result<PathBuf> {
        self.resolve(&self.root, &inst.dir)
    }

    pub fn variant(&self) -> &str {
        self.variant
            .as_deref()
            .unwrap_or("Reference_Implementation")
    }
}

impl Instance {
    pub fn kat_rng(&self) -> KatRng {
        self.kat
            .as_ref()
            .and_then(|k| k.rng.clone())
            .unwrap_or(KatRng::Nist)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_manifest_naming_the_pqclean_tree_uses_it() {
        let parse = |t: &str| toml::from_str::<Candidate>(t).unwrap();
        let head = "id = \"c\"\nalgorithm = \"A\"\nkind = \"kem\"\napi = \"nist\"\n";
        let own = parse(&format!(
            "{head}[[instances]]\nlabel = \"a\"\ndir = \"src\"\n"
        ));
        assert!(!own.uses_pqclean());
        for field in [
            "dir = \"${PQCLEAN}/crypto_kem/x\"",
            "dir = \"src\"\nextra_sources = [\"${PQCLEAN}/common/fips202.c\"]",
            "dir = \"src\"\ninclude = [\".\", \"${PQCLEAN}/common\"]",
            "dir = \"src\"\nsources = [\"${PQCLEAN}/x/*.c\"]",
        ] {
            let c = parse(&format!("{head}[[instances]]\nlabel = \"a\"\n{field}\n"));
            assert!(c.uses_pqclean(), "{field}");
        }
        let helpers = parse(&format!(
            "{head}iccs_helpers = \"${{PQCLEAN}}/h\"\n[[instances]]\nlabel = \"a\"\ndir = \"src\"\n"
        ));
        assert!(helpers.uses_pqclean());
    }
}
