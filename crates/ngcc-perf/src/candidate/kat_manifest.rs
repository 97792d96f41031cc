//! `kat.sha256` manifests (iccs-api.md §4.5): one line per reference KAT file,
//! `<sha256> <strict|nolen>[:N] <label>/<file>`, sorted by name, over a canonical form of the
//! text that ignores line endings, trailing blanks and empty lines.

use anyhow::{Result, bail};
use sha2::{Digest, Sha256};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every kept line.
    Strict,
    /// Without `X_Len = …` lines: references written in blank-template mode.
    Nolen,
}

/// A line's mode: strict or nolen, optionally limited to the first `records` records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineMode {
    pub mode: Mode,
    pub records: Option<u32>,
}

impl LineMode {
    pub const STRICT: LineMode = LineMode {
        mode: Mode::Strict,
        records: None,
    };

    pub fn parse(text: &str) -> Option<LineMode> {
        let (name, records) = match text.split_once(':') {
            Some((n, r)) => (n, Some(r.parse::<u32>().ok()?)),
            None => (text, None),
        };
        let mode = match name {
            "strict" => Mode::Strict,
            "nolen" => Mode::Nolen,
            _ => return None,
        };
        Some(LineMode { mode, records })
    }
}

impl fmt::Display for LineMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.mode {
            Mode::Strict => "strict",
            Mode::Nolen => "nolen",
        })?;
        if let Some(n) = self.records {
            write!(f, ":{n}")?;
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// 64 lowercase hex digits.
    pub sha256: String,
    pub mode: LineMode,
    /// `<label>/<file>` or a bare `<file>`.
    pub name: String,
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.sha256, self.mode, self.name)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    pub entries: Vec<Entry>,
}

impl Manifest {
    /// Parses a manifest; errors name the 1-based line. Blank lines and `#` comments are
    /// skipped; a name may appear once.
    pub fn parse(text: &str) -> Result<Manifest> {
        let mut entries: Vec<Entry> = Vec::new();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut parts = line.split_whitespace();
            let (Some(sha), Some(mode), Some(name), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                bail!("line {}: expected `<sha256> <mode> <name>`", n + 1);
            };
            if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
                bail!("line {}: {sha:?} is not 64 hex digits", n + 1);
            }
            let Some(mode) = LineMode::parse(mode) else {
                bail!(
                    "line {}: mode {mode:?} is not strict or nolen (optionally :N)",
                    n + 1
                );
            };
            if entries.iter().any(|e| e.name == name) {
                bail!("line {}: {name} is listed twice", n + 1);
            }
            entries.push(Entry {
                sha256: sha.to_ascii_lowercase(),
                mode,
                name: name.to_string(),
            });
        }
        Ok(Manifest { entries })
    }

    /// The entry for `file` of instance `label`: `<label>/<file>` first, then `<file>`.
    pub fn lookup(&self, label: &str, file: &str) -> Option<&Entry> {
        let qualified = format!("{label}/{file}");
        self.entries
            .iter()
            .find(|e| e.name == qualified)
            .or_else(|| self.entries.iter().find(|e| e.name == file))
    }

    /// Files named `<label>/…` (bare names belong to no instance in particular).
    pub fn files_of<'a>(&'a self, label: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.entries.iter().filter_map(move |e| {
            e.name
                .strip_prefix(label)
                .and_then(|rest| rest.strip_prefix('/'))
        })
    }

    /// The manifest text: entries sorted by name in byte (strcmp) order.
    pub fn render(&self) -> String {
        let mut entries: Vec<&Entry> = self.entries.iter().collect();
        entries.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        entries.iter().map(|e| format!("{e}\n")).collect()
    }
}

/// True for `X_Len = …` lines: key (before '=', trailing spaces removed) ends in `_Len`,
/// with '=' at index 5 or later.
fn is_len_line(line: &str) -> bool {
    match line.find('=') {
        Some(i) if i >= 5 => line[..i].trim_end().ends_with("_Len"),
        _ => false,
    }
}

/// The lines a digest covers, in order.
pub fn canonical_lines(text: &str, mode: LineMode) -> Vec<&str> {
    let mut out = Vec::new();
    let mut counts = 0u32;
    for raw in text.split('\n') {
        let line = raw.trim_end_matches(['\r', ' ', '\t']);
        if line.is_empty() {
            continue;
        }
        if mode.mode == Mode::Nolen && is_len_line(line) {
            continue;
        }
        if line.starts_with("Count = ") {
            counts += 1;
            if mode.records.is_some_and(|n| counts > n) {
                break;
            }
        }
        out.push(line);
    }
    out
}

/// SHA-256 (lowercase hex) over each canonical line followed by "\n".
pub fn digest(text: &str, mode: LineMode) -> String {
    let mut h = Sha256::new();
    for line in canonical_lines(text, mode) {
        h.update(line.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEM: &str = "Count = 0\r\nSeed_Len = 64\nSeed = AA  \n\nPK_Len = 2\t\nPK = 0102\n\n\
Count = 1\nSeed_Len = 64\nSeed = BB\nPK_Len = 2\nPK = 0304\n\nCount = 2\nSeed = CC\n";

    #[test]
    fn strict_strips_cr_trailing_blanks_and_empty_lines() {
        let lines = canonical_lines(KEM, LineMode::STRICT);
        assert_eq!(
            &lines[..5],
            [
                "Count = 0",
                "Seed_Len = 64",
                "Seed = AA",
                "PK_Len = 2",
                "PK = 0102"
            ]
        );
        assert_eq!(lines.len(), 12);
        let clean = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        assert_eq!(
            digest(KEM, LineMode::STRICT),
            digest(&clean, LineMode::STRICT)
        );
        assert_eq!(
            digest(&clean, LineMode::STRICT),
            crate::util::sha256_hex(clean.as_bytes())
        );
        // Windows line endings and trailing blanks do not change the digest.
        let crlf = clean.replace('\n', " \r\n\r\n");
        assert_eq!(
            digest(&crlf, LineMode::STRICT),
            digest(&clean, LineMode::STRICT)
        );
    }

    #[test]
    fn nolen_drops_every_len_key_but_keeps_pass_num() {
        let text = "Count = 0\nSeed_Len = 64\nSeed = AA\nPass_Num = 2\nPKa_Len = \nPKa = \n\
M_Len = 3\nM = 010203\nMsg_Len = 8\nDst_Len = 256\nInit_Sta_Len = 0\nSS_Len =\nSS = FF\n";
        assert_eq!(
            canonical_lines(
                text,
                LineMode {
                    mode: Mode::Nolen,
                    records: None
                }
            ),
            [
                "Count = 0",
                "Seed = AA",
                "Pass_Num = 2",
                "PKa =",
                "M = 010203",
                "SS = FF"
            ]
        );
        // '=' must be at index 5 or later for the line to count as a length.
        assert!(!is_len_line("_Len= 3"));
        assert!(is_len_line("_Len = 3"));
        assert!(is_len_line("X_Len = 3"));
        assert!(is_len_line("M_Len= 3"));
        assert!(!is_len_line("Sn = 00_Len"));
    }

    #[test]
    fn records_limit_stops_at_the_next_count_line() {
        let two = LineMode {
            mode: Mode::Strict,
            records: Some(2),
        };
        let lines = canonical_lines(KEM, two);
        assert_eq!(lines.last(), Some(&"PK = 0304"));
        assert!(!lines.contains(&"Count = 2"));
        let one = LineMode {
            mode: Mode::Strict,
            records: Some(1),
        };
        assert_eq!(canonical_lines(KEM, one).len(), 5);
        // More records than the file has: the whole file.
        let ten = LineMode {
            mode: Mode::Strict,
            records: Some(10),
        };
        assert_eq!(digest(KEM, ten), digest(KEM, LineMode::STRICT));
    }

    #[test]
    fn parse_lookup_render() {
        let a = "a".repeat(64);
        let b = "B".repeat(64);
        let text = format!(
            "{b} nolen:3 L2/KAT_KEM_X.txt\n\n{a} strict L1/KAT_KEM_X.txt\n{a} strict KAT_2_12_H.txt\n"
        );
        let m = Manifest::parse(&text).unwrap();
        assert_eq!(m.entries[0].sha256, "b".repeat(64));
        assert_eq!(
            m.entries[0].mode,
            LineMode {
                mode: Mode::Nolen,
                records: Some(3)
            }
        );
        assert_eq!(
            m.lookup("L1", "KAT_KEM_X.txt").unwrap().mode,
            LineMode::STRICT
        );
        assert_eq!(
            m.lookup("L2", "KAT_KEM_X.txt").unwrap().mode.records,
            Some(3)
        );
        assert_eq!(
            m.lookup("L3", "KAT_2_12_H.txt").unwrap().name,
            "KAT_2_12_H.txt"
        );
        assert!(m.lookup("L3", "KAT_KEM_X.txt").is_none());
        assert_eq!(m.files_of("L1").collect::<Vec<_>>(), ["KAT_KEM_X.txt"]);
        let out = m.render();
        let names: Vec<&str> = out.lines().map(|l| l.rsplit(' ').next().unwrap()).collect();
        assert_eq!(
            names,
            ["KAT_2_12_H.txt", "L1/KAT_KEM_X.txt", "L2/KAT_KEM_X.txt"]
        );
        assert_eq!(Manifest::parse(&out).unwrap().render(), out);
    }

    #[test]
    fn parse_errors_name_the_line() {
        let a = "a".repeat(64);
        for (text, want) in [
            (format!("{a} strict\n"), "line 1: expected"),
            (format!("\n{} strict x\n", &a[1..]), "line 2: "),
            (format!("{a} exact x\n"), "mode \"exact\""),
            (format!("{a} strict:x x\n"), "mode \"strict:x\""),
            (
                format!("{a} strict x\n{a} nolen x\n"),
                "line 2: x is listed twice",
            ),
        ] {
            let err = Manifest::parse(&text).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}
