//! The override table (`overrides.toml`, shipped in the binary) and `--overrides FILE`:
//! per candidate id, what a package's build files do not say.

use crate::candidate::Instance;
use anyhow::{Context, Result};
use serde::Deserialize;
use std::path::Path;

/// The table shipped with ngcc-perf.
pub const SHIPPED: &str = include_str!("overrides.toml");

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct Table {
    #[serde(default)]
    pub candidate: Vec<Override>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Override {
    pub id: String,
    pub why: String,
    #[serde(default)]
    pub algorithm: Option<String>,
    #[serde(default)]
    pub instance: Vec<InstanceOverride>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct InstanceOverride {
    /// Glob over instance labels.
    pub label: String,
    #[serde(default)]
    pub defines: Vec<String>,
    #[serde(default)]
    pub drop_defines: Vec<String>,
    #[serde(default)]
    pub sources: Option<Vec<String>>,
    #[serde(default)]
    pub extra_sources: Vec<String>,
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub cflags: Vec<String>,
    #[serde(default)]
    pub ldlibs: Vec<String>,
    #[serde(default)]
    pub own_drng_ctx: Option<bool>,
    #[serde(default)]
    pub header: Option<String>,
    #[serde(default)]
    pub digest_bits: Option<u32>,
    #[serde(default)]
    pub kat_count: Option<u32>,
    #[serde(default)]
    pub skip: bool,
}

impl Table {
    pub fn parse(text: &str, name: &str) -> Result<Table> {
        toml::from_str(text)
            .map_err(|e| anyhow::anyhow!("{name}: {}", e.message().replace('\n', " ")))
    }

    /// The shipped table, then `extra` (a user's file).
    pub fn load(extra: Option<&Path>) -> Result<Table> {
        let mut t = Table::parse(SHIPPED, "overrides.toml (shipped)")?;
        if let Some(p) = extra {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            t.candidate
                .extend(Table::parse(&text, &p.display().to_string())?.candidate);
        }
        Ok(t)
    }

    pub fn for_id<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a Override> + 'a {
        self.candidate.iter().filter(move |c| c.id == id)
    }
}

impl InstanceOverride {
    pub fn matches(&self, label: &str) -> bool {
        glob::Pattern::new(&self.label).is_ok_and(|p| p.matches(label))
    }

    /// Applies this override to an instance; returns one line per change (for comments).
    pub fn apply(&self, inst: &mut Instance) -> Vec<String> {
        let mut changes = Vec::new();
        for d in &self.drop_defines {
            let before = inst.defines.len();
            inst.defines
                .retain(|x| x != d && x.split('=').next() != Some(d.as_str()));
            if inst.defines.len() != before {
                changes.push(format!("defines: removed {d}"));
            }
        }
        for d in &self.defines {
            if !inst.defines.contains(d) {
                inst.defines.push(d.clone());
                changes.push(format!("defines: added {d}"));
            }
        }
        if let Some(s) = &self.sources {
            inst.sources = s.clone();
            changes.push(format!("sources: replaced by {s:?}"));
        }
        let mut add = |what: &str, list: &mut Vec<String>, items: &[String]| {
            for i in items {
                if !list.contains(i) {
                    list.push(i.clone());
                    changes.push(format!("{what}: added {i}"));
                }
            }
        };
        add(
            "extra_sources",
            &mut inst.extra_sources,
            &self.extra_sources,
        );
        add("include", &mut inst.include, &self.include);
        add("cflags", &mut inst.cflags, &self.cflags);
        add("ldlibs", &mut inst.ldlibs, &self.ldlibs);
        if let Some(v) = self.own_drng_ctx {
            inst.own_drng_ctx = v;
            changes.push(format!("own_drng_ctx = {v}"));
        }
        if let Some(h) = &self.header {
            inst.header = Some(h.clone());
            changes.push(format!("header = {h}"));
        }
        if let Some(b) = self.digest_bits {
            inst.digest_bits = Some(b);
            changes.push(format!("digest_bits = {b}"));
        }
        if let Some(n) = self.kat_count {
            inst.kat_count = Some(n);
            changes.push(format!("kat_count = {n}"));
        }
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_table_parses_and_overrides_apply() {
        Table::load(None).unwrap();
        let t = Table::parse(
            "[[candidate]]\nid = \"kem-99\"\nwhy = \"level only in the PDF\"\n\
             [[candidate.instance]]\nlabel = \"Foo-*\"\ndefines = [\"LEVEL=3\"]\ndrop_defines = [\"AVX\"]\n",
            "t",
        )
        .unwrap();
        let o = t.for_id("kem-99").next().unwrap();
        let io = &o.instance[0];
        assert!(io.matches("Foo-128") && !io.matches("Bar"));
        let mut inst = Instance {
            defines: vec!["AVX=1".into(), "X".into()],
            ..Instance::default()
        };
        let changes = io.apply(&mut inst);
        assert_eq!(inst.defines, ["X", "LEVEL=3"]);
        assert_eq!(changes.len(), 2);
        assert!(Table::parse("[[candidate]]\nid = \"x\"\nwhy = \"y\"\nbogus = 1\n", "t").is_err());
    }
}
