//! Small shared helpers: atomic file writes, hashing, JSON in the reference layout.

pub mod console;
pub mod exit;
pub mod fsx;
pub(crate) mod hexs;
pub(crate) mod progress;
pub mod text;
pub(crate) mod time;

pub(crate) use console::{out, out_text, say};
pub use exit::{Exit, Failure};
pub use fsx::{atomic_write, cache_home, read_json, sha256_file, sha256_hex, write_json};

/// Last `n` characters of `s` (stderr kept in records and logs).
pub fn tail(s: &str, n: usize) -> String {
    let start = s
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    s[start..].to_string()
}

/// A text table: `head` then `rows`, each cell padded to its column's widest, two spaces
/// apart, the last cell unpadded and trailing blanks trimmed; one line each.
pub fn columns<R: AsRef<[String]>>(head: &[&str], rows: &[R]) -> Vec<String> {
    let mut widths: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, cell) in widths.iter_mut().zip(r.as_ref()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut l = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            l.push_str(cell);
            if i + 1 < cells.len() {
                l.push_str(&" ".repeat(w - cell.chars().count()));
            }
        }
        l.trim_end().to_string()
    };
    let head: Vec<String> = head.iter().map(|h| h.to_string()).collect();
    std::iter::once(line(&head))
        .chain(rows.iter().map(|r| line(r.as_ref())))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_align_all_but_the_last() {
        let rows = [vec!["ab".to_string(), "c".into(), "d ".into()]];
        assert_eq!(
            super::columns(&["x", "long", "z"], &rows),
            ["x   long  z", "ab  c     d"]
        );
    }

    #[test]
    fn tail_keeps_the_end() {
        assert_eq!(super::tail("abcdef", 3), "def");
        assert_eq!(super::tail("ab", 10), "ab");
        assert_eq!(super::tail("αβγ", 2), "βγ");
    }
}
