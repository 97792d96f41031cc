//! Reading a candidate page the reference harness published (`<cand>/perf_<SYS>.md`,
//! reference-harness.md §8.3): the §4 performance table (public-key or hash form) and the
//! symmetric-primitives shares. Tables are found by their header cells, so extra columns,
//! other sections and our own pages (same renderer) read as well.

use anyhow::{Result, bail};
use std::collections::BTreeMap;

/// One operation of the page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageOp {
    pub label: String,
    /// `keygen`, `enc`, … or `hash_<bytes>` for the hash table's message rows.
    pub op_key: String,
    pub mean_cycles: Option<f64>,
    pub mean_seconds: Option<f64>,
    /// pseudohash/XOF/sm3 share and DRNG share (fractions), from the symmetric section.
    pub hash_share: Option<f64>,
    pub drng_share: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Page {
    pub candidate: String,
    pub algorithm: String,
    pub system: String,
    pub ops: Vec<PageOp>,
}

/// `173.0 k`, `1.07 M`, `13.08 G`, `4276` → cycles; `–`, `failed`, empty → None.
pub fn parse_cycles(cell: &str) -> Option<f64> {
    let c = cell.trim();
    let (num, mult) = match c.rsplit_once(' ') {
        Some((n, "k")) => (n, 1e3),
        Some((n, "M")) => (n, 1e6),
        Some((n, "G")) => (n, 1e9),
        Some((n, "T")) => (n, 1e12),
        _ => (c, 1.0),
    };
    num.trim().parse::<f64>().ok().map(|v| v * mult)
}

/// `82.7 µs`, `1.21 ms`, `9.48 s`, `532 ns`, `3.86e+03 s` → seconds.
pub fn parse_time(cell: &str) -> Option<f64> {
    let (num, unit) = cell.trim().rsplit_once(' ')?;
    let mult = match unit {
        "s" => 1.0,
        "ms" => 1e-3,
        "µs" | "us" => 1e-6,
        "ns" => 1e-9,
        _ => return None,
    };
    num.trim().parse::<f64>().ok().map(|v| v * mult)
}

/// `73%`, `0.0%` → fraction; `–`, `??%` → None.
pub fn parse_pct(cell: &str) -> Option<f64> {
    cell.trim()
        .strip_suffix('%')?
        .trim()
        .parse::<f64>()
        .ok()
        .map(|v| v / 100.0)
}

fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|')
        .map(|c| c.trim().trim_matches('`').trim().to_string())
        .collect()
}

/// Tables of a Markdown text: (header cells, rows of cells).
fn tables(text: &str) -> Vec<(Vec<String>, Vec<Vec<String>>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < lines.len() {
        let sep = lines[i + 1].trim();
        let is_sep =
            sep.starts_with('|') && sep.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '));
        if lines[i].trim().starts_with('|') && is_sep {
            let head = cells(lines[i]);
            let mut rows = Vec::new();
            let mut j = i + 2;
            while j < lines.len() && lines[j].trim().starts_with('|') {
                rows.push(cells(lines[j]));
                j += 1;
            }
            out.push((head, rows));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// `32 B`, `1 KiB`, `64 KiB` → bytes.
fn message_bytes(cell: &str) -> Option<u64> {
    let (n, unit) = cell.trim().rsplit_once(' ')?;
    let n: u64 = n.trim().parse().ok()?;
    match unit {
        "B" => Some(n),
        "KiB" => Some(n * 1024),
        "MiB" => Some(n << 20),
        _ => None,
    }
}

pub fn parse(text: &str) -> Result<Page> {
    let mut page = Page::default();
    if let Some(title) = text.lines().find(|l| l.starts_with("# ")) {
        // `# <cand> <Algorithm> — performance on <arch> (system <SYS>)`
        let t = &title[2..];
        let (left, right) = t.split_once(" — ").unwrap_or((t, ""));
        let (cand, alg) = left.split_once(' ').unwrap_or((left, ""));
        page.candidate = cand.trim().to_string();
        page.algorithm = alg.trim().to_string();
        if let Some(sys) = right
            .rsplit_once("(system ")
            .map(|(_, s)| s.trim_end_matches(')'))
        {
            page.system = sys.trim().to_string();
        }
    }
    let mut shares: BTreeMap<(String, String), (Option<f64>, Option<f64>)> = BTreeMap::new();
    for (head, rows) in tables(text) {
        let col = |name: &str| head.iter().position(|h| h == name);
        let (Some(inst), Some(cycles)) = (col("instance"), col("mean cycles")) else {
            if let (Some(inst), Some(op), Some(hash)) =
                (col("instance"), col("operation"), col("pseudohash/XOF/sm3"))
            {
                let drng = col("DRNG");
                for r in &rows {
                    let get = |k: usize| r.get(k).map(String::as_str).unwrap_or("");
                    shares.insert(
                        (get(inst).to_string(), get(op).to_string()),
                        (parse_pct(get(hash)), drng.and_then(|d| parse_pct(get(d)))),
                    );
                }
            }
            continue;
        };
        let time = col("mean time");
        let (op, message) = (col("operation"), col("message"));
        if op.is_none() && message.is_none() {
            continue;
        }
        for r in &rows {
            let get = |k: usize| r.get(k).map(String::as_str).unwrap_or("");
            let op_key = match (op, message) {
                (Some(o), _) => get(o).to_string(),
                (None, Some(m)) => match message_bytes(get(m)) {
                    Some(b) => format!("hash_{b}"),
                    None => continue,
                },
                _ => continue,
            };
            page.ops.push(PageOp {
                label: get(inst).to_string(),
                op_key,
                mean_cycles: parse_cycles(get(cycles)),
                mean_seconds: time.and_then(|t| parse_time(get(t))),
                ..PageOp::default()
            });
        }
    }
    for op in page.ops.iter_mut() {
        if let Some((h, d)) = shares.get(&(op.label.clone(), op.op_key.clone())) {
            op.hash_share = *h;
            op.drng_share = *d;
        }
    }
    if page.ops.is_empty() {
        bail!("no performance table (a table with `instance` and `mean cycles` columns)");
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_the_reference_format() {
        assert_eq!(parse_cycles("173.0 k"), Some(173_000.0));
        assert_eq!(parse_cycles("1.07 M"), Some(1_070_000.0));
        assert_eq!(parse_cycles("13.08 G"), Some(13.08e9));
        assert_eq!(parse_cycles("4276"), Some(4276.0));
        assert_eq!(parse_cycles("–"), None);
        assert_eq!(parse_cycles("failed"), None);
        assert_eq!(parse_time("82.7 µs"), Some(82.7e-6));
        assert_eq!(parse_time("3.86e+03 s"), Some(3860.0));
        assert_eq!(parse_pct("73%"), Some(0.73));
        assert_eq!(parse_pct("??%"), None);
        assert_eq!(message_bytes("64 KiB"), Some(65536));
    }

    #[test]
    fn pk_and_hash_tables_and_shares() {
        let text = "# kem-9 Toy — performance on x86-64 (system x86_1)\n\n## 4. Performance\n\n\
            | instance | operation | mean cycles | mean time | ops/s | median trial | n (trials × iters) |\n\
            |---|---|---|---|---|---|---|\n\
            | `T-1` | keygen | 173.0 k | 82.7 µs | 1.21e+04 | 82.7 µs | 5 (5 × 1) |\n\
            | `T-1` | enc | failed | | | | |\n\n\
            ## Symmetric primitives\n\n| instance | operation | pseudohash/XOF/sm3 | DRNG | calls per operation |\n|---|---|---|---|---|\n\
            | `T-1` | keygen | 73% | 2.6% | drng 1 |\n\n\
            | instance | message | mean cycles | cycles/byte | mean time | MB/s | n |\n|---|---|---|---|---|---|---|\n\
            | `H` | 32 B | 3862 | 120.7 | 1.44 µs | 22.3 | 1 |\n";
        let p = parse(text).unwrap();
        assert_eq!(
            (
                p.candidate.as_str(),
                p.algorithm.as_str(),
                p.system.as_str()
            ),
            ("kem-9", "Toy", "x86_1")
        );
        assert_eq!(p.ops.len(), 3);
        assert_eq!(p.ops[0].hash_share, Some(0.73));
        assert!((p.ops[0].drng_share.unwrap() - 0.026).abs() < 1e-12);
        assert_eq!(p.ops[1].mean_cycles, None);
        assert_eq!(p.ops[2].op_key, "hash_32");
        assert!(parse("# x\n").is_err());
    }
}
