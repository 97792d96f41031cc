//! HTML building blocks: escaping, site-relative links, sort keys of table cells and the page
//! shell every page shares.

use std::fmt::Write as _;

/// Escapes text for element content and double- or single-quoted attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A heading's anchor id: lower-case ASCII letters and digits, other runs become one `-`
/// (matches the ids Markdown renderers give, e.g. `#iccs-hash-helpers`).
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if (c == ' ' || c == '-' || c == '_') && !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// Normalises a `/`-separated relative path: resolves `.` and `..`; `None` if it climbs
/// above the root.
pub fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// Relative href from the page at `from` to the file at `to` (both site-relative, `/`).
pub fn rel_href(from: &str, to: &str) -> String {
    let from_dir: Vec<&str> = match from.rsplit_once('/') {
        Some((dir, _)) => dir.split('/').collect(),
        None => Vec::new(),
    };
    let to_parts: Vec<&str> = to.split('/').collect();
    let (to_dir, to_file) = to_parts.split_at(to_parts.len() - 1);
    let common = from_dir
        .iter()
        .zip(to_dir)
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = "../".repeat(from_dir.len() - common);
    for d in &to_dir[common..] {
        out.push_str(d);
        out.push('/');
    }
    out.push_str(to_file[0]);
    out
}

/// `../` repeated once per folder of `page`: the way back to the site root.
pub fn root_of(page: &str) -> String {
    "../".repeat(page.matches('/').count())
}

/// The number a formatted cell stands for, so tables sort by value: `534.0 k` → 534000,
/// `252 ms` → 0.252, `25%` → 25, `6480 KiB` → 6635520, `100 (5 × 20)` → 100. `None` for
/// text, `–`, `failed` and empty cells.
pub fn sort_value(cell: &str) -> Option<f64> {
    let s = cell.trim().trim_start_matches('≈').trim_start();
    let end = number_end(s)?;
    let value: f64 = s[..end].parse().ok()?;
    let rest = s[end..].trim_start();
    let unit_end = rest
        .find(|c: char| c.is_whitespace() || c == '(' || c == ',' || c == ';')
        .unwrap_or(rest.len());
    let factor = match &rest[..unit_end] {
        "" | "%" | "×" | "B" => 1.0,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "s" => 1.0,
        "ms" => 1e-3,
        "µs" => 1e-6,
        "ns" => 1e-9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        _ => return None,
    };
    Some(value * factor).filter(|v| v.is_finite())
}

/// Length of the leading decimal number (`-1.5e+03`) of `s`, if it starts with one.
fn number_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i == int_start {
        return None;
    }
    if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'-' || b[j] == b'+') {
            j += 1;
        }
        let exp_start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_start {
            i = j;
        }
    }
    // `128-bit` or `NGCC-1x` style text is not a number.
    if i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'-' || b[i] == b'_') {
        let rest = &s[i..];
        let unit_like = ["k", "M", "G"]
            .iter()
            .any(|u| rest == *u || rest.starts_with(&format!("{u} ")));
        if !unit_like {
            return None;
        }
    }
    Some(i)
}

/// True for cells that mean "no value" and sort last.
pub fn is_blank(cell: &str) -> bool {
    matches!(cell.trim(), "" | crate::report::format::DASH | "failed")
}

/// One HTML table: header cells (already HTML) and rows of (HTML, plain text) cells.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub head: Vec<String>,
    /// Each cell: its HTML and the plain text it shows (for the sort key).
    pub rows: Vec<Vec<(String, String)>>,
    pub filterable: bool,
    pub caption: Option<String>,
}

impl Table {
    /// Renders with `data-v` sort keys; a column whose non-blank cells all parse as numbers
    /// is marked `data-type="num"` for the script.
    pub fn render(&self) -> String {
        let numeric: Vec<bool> = (0..self.head.len())
            .map(|c| {
                let cells: Vec<&str> = self
                    .rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|(_, t)| t.as_str())
                    .filter(|t| !is_blank(t))
                    .collect();
                !cells.is_empty() && cells.iter().all(|t| sort_value(t).is_some())
            })
            .collect();
        let class = if self.filterable {
            "data filterable"
        } else {
            "data"
        };
        let mut out = format!("<div class=\"table-wrap\"><table class=\"{class}\">");
        if let Some(c) = &self.caption {
            let _ = write!(out, "<caption>{}</caption>", esc(c));
        }
        out.push_str("<thead><tr>");
        for (i, h) in self.head.iter().enumerate() {
            let ty = if numeric[i] { "num" } else { "text" };
            let _ = write!(out, "<th scope=\"col\" data-type=\"{ty}\">{h}</th>");
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (i, (html, text)) in row.iter().enumerate() {
                let num = numeric.get(i).copied().unwrap_or(false);
                match sort_value(text).filter(|_| num && !is_blank(text)) {
                    Some(v) => {
                        let _ = write!(out, "<td data-v=\"{v:e}\" class=\"n\">{html}</td>");
                    }
                    None if num => {
                        let _ = write!(out, "<td class=\"n\">{html}</td>");
                    }
                    None => {
                        let _ = write!(out, "<td>{html}</td>");
                    }
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
        out
    }
}

/// A notice shown at the top of every page of a system.
#[derive(Clone, Debug, PartialEq)]
pub struct Banner {
    /// `warn` (host not fixed) or `info` (counter other than core cycles).
    pub kind: &'static str,
    pub text: String,
}

/// Everything around a page's body.
pub struct Shell<'a> {
    /// Site-relative path of the page (`arm_1/kem-38.html`).
    pub path: &'a str,
    pub title: &'a str,
    /// Breadcrumb: (text, site-relative target or `None` for the current page).
    pub crumbs: Vec<(String, Option<String>)>,
    pub banners: &'a [Banner],
}

pub const CSS_PATH: &str = "assets/site.css";
pub const JS_PATH: &str = "assets/site.js";

impl Shell<'_> {
    pub fn render(&self, body: &str) -> String {
        let root = root_of(self.path);
        let mut out = String::new();
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<link rel=\"stylesheet\" href=\"{root}{CSS_PATH}\">\n\
             <script src=\"{root}{JS_PATH}\" defer></script>\n</head>\n<body>\n",
            esc(self.title)
        );
        out.push_str(&self.head_html());
        out.push_str("<main>\n");
        out.push_str(body);
        out.push_str("</main>\n");
        out.push_str(&footer());
        out.push_str("</body>\n</html>\n");
        out
    }

    /// Breadcrumb and banners, also used by standalone pages.
    pub fn head_html(&self) -> String {
        let mut out = String::from("<nav class=\"crumbs\" aria-label=\"Breadcrumb\">");
        for (i, (text, target)) in self.crumbs.iter().enumerate() {
            if i > 0 {
                out.push_str(" <span aria-hidden=\"true\">›</span> ");
            }
            match target {
                Some(t) => {
                    let _ = write!(
                        out,
                        "<a href=\"{}\">{}</a>",
                        esc(&rel_href(self.path, t)),
                        esc(text)
                    );
                }
                None => {
                    let _ = write!(out, "<span aria-current=\"page\">{}</span>", esc(text));
                }
            }
        }
        out.push_str("</nav>\n");
        out.push_str(&banners_html(self.banners));
        out
    }
}

pub fn banners_html(banners: &[Banner]) -> String {
    let mut out = String::new();
    for b in banners {
        let role = if b.kind == "warn" { "alert" } else { "note" };
        let _ = writeln!(
            out,
            "<div class=\"banner {}\" role=\"{role}\">{}</div>",
            b.kind,
            esc(&b.text)
        );
    }
    out
}

pub fn footer() -> String {
    format!(
        "<footer>Generated by ngcc-perf {} from published datasets; every figure links back to \
         its raw evidence on the candidate pages.</footer>\n",
        env!("CARGO_PKG_VERSION")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(esc("534.0 k – µs ×"), "534.0 k – µs ×");
        assert_eq!(esc(""), "");
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("ICCS hash helpers"), "iccs-hash-helpers");
        assert_eq!(slug("4. Performance"), "4-performance");
        assert_eq!(slug("Key encapsulation"), "key-encapsulation");
    }

    #[test]
    fn relative_links() {
        assert_eq!(
            rel_href("arm_1/kem-38.html", "arm_1/summary.html"),
            "summary.html"
        );
        assert_eq!(
            rel_href("arm_1/kem-38.html", "x86_1/kem-38.html"),
            "../x86_1/kem-38.html"
        );
        assert_eq!(
            rel_href("index.html", "arm_1/kem-38.html"),
            "arm_1/kem-38.html"
        );
        assert_eq!(rel_href("arm_1/kem-38.html", "index.html"), "../index.html");
        assert_eq!(rel_href("a/b/c.html", "a/d.html"), "../d.html");
        assert_eq!(root_of("arm_1/kem-38.html"), "../");
        assert_eq!(root_of("index.html"), "");
        assert_eq!(
            normalize("kem-38/../performance/./summary_arm_1.md").as_deref(),
            Some("performance/summary_arm_1.md")
        );
        assert_eq!(normalize("../x.md"), None);
    }

    #[test]
    fn sort_values() {
        for (cell, want) in [
            ("534.0 k", Some(534e3)),
            ("1.47 G", Some(1.47e9)),
            ("10404.84 G", Some(10404.84e9)),
            ("7.89 M", Some(7.89e6)),
            ("1427", Some(1427.0)),
            ("252 ms", Some(0.252)),
            ("198 µs", Some(198e-6)),
            ("532 ns", Some(532e-9)),
            ("3.86e+03 s", Some(3860.0)),
            ("5.05e+03", Some(5050.0)),
            ("25%", Some(25.0)),
            ("0.0%", Some(0.0)),
            ("6480 KiB", Some(6480.0 * 1024.0)),
            ("30562 MiB", Some(30562.0 * 1048576.0)),
            ("100 (5 × 20)", Some(100.0)),
            ("3.27 G (99%)", Some(3.27e9)),
            ("≈4001850", Some(4001850.0)),
            ("1.02×", Some(1.02)),
            ("32 B", Some(32.0)),
            ("–", None),
            ("failed", None),
            ("", None),
            ("PASS", None),
            ("`UVW-KEM-128`", None),
            ("drng 218", None),
            ("128-bit", None),
            ("2026-09-28T15:05:46", None),
        ] {
            let got = sort_value(cell);
            match (got, want) {
                (Some(g), Some(w)) => assert!((g - w).abs() <= 1e-9 * w.abs(), "{cell}: {g}"),
                (g, w) => assert_eq!(g, w, "{cell}"),
            }
        }
    }

    #[test]
    fn numeric_columns_get_keys_and_text_columns_do_not() {
        let t = Table {
            head: vec!["instance".into(), "mean cycles".into()],
            rows: vec![
                vec![
                    ("<code>A</code>".into(), "A".into()),
                    ("534.0 k".into(), "534.0 k".into()),
                ],
                vec![
                    ("<code>B</code>".into(), "B".into()),
                    ("–".into(), "–".into()),
                ],
                vec![
                    ("<code>C</code>".into(), "C".into()),
                    ("1.47 G".into(), "1.47 G".into()),
                ],
            ],
            filterable: true,
            caption: None,
        };
        let html = t.render();
        assert!(html.contains("data-type=\"text\">instance"));
        assert!(html.contains("data-type=\"num\">mean cycles"));
        assert!(html.contains("data-v=\"5.34e5\""), "{html}");
        assert!(html.contains("data-v=\"1.47e9\""));
        assert_eq!(html.matches("data-v=").count(), 2);
        assert!(html.contains("class=\"data filterable\""));
    }
}
