//! HTML building blocks: escaping, site-relative links, tables with sort keys, the page
//! documents (`doc_html`, from the same `Doc` the Markdown is written from) and the page
//! shell every page shares.

use crate::report::doc::{Block, Cell, Inline, Span};
use std::fmt::Write as _;

/// Escapes text for element content and double- or single-quoted attributes
/// (`util::text::html`, the one escaping module).
pub fn esc(s: &str) -> String {
    crate::util::text::html(s)
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

/// True for cells that mean "no value" and sort last.
pub fn is_blank(cell: &str) -> bool {
    matches!(cell.trim(), "" | crate::report::format::DASH | "failed")
}

/// One cell of an HTML table: its HTML, the text it shows, and the number it sorts by.
#[derive(Clone, Debug, Default)]
pub struct HtmlCell {
    pub html: String,
    pub text: String,
    pub sort: Option<f64>,
}

impl HtmlCell {
    /// Escaped text.
    pub fn text(text: &str) -> HtmlCell {
        HtmlCell {
            html: esc(text),
            text: text.to_string(),
            sort: None,
        }
    }

    /// A figure: escaped text and its value.
    pub fn num(text: &str, value: f64) -> HtmlCell {
        HtmlCell {
            sort: Some(value).filter(|v| v.is_finite()),
            ..HtmlCell::text(text)
        }
    }

    /// Ready HTML and the text it shows.
    pub fn html(html: String, text: impl Into<String>) -> HtmlCell {
        HtmlCell {
            html,
            text: text.into(),
            sort: None,
        }
    }
}

/// One HTML table: header cells (already HTML) and rows of cells.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<HtmlCell>>,
    pub filterable: bool,
    pub caption: Option<String>,
}

impl Table {
    /// Renders with `data-v` sort keys; a column whose non-blank cells all carry a key is
    /// marked `data-type="num"` for the script.
    pub fn render(&self) -> String {
        let numeric: Vec<bool> = (0..self.head.len())
            .map(|c| {
                let cells: Vec<&HtmlCell> = self
                    .rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .filter(|cell| !is_blank(&cell.text))
                    .collect();
                !cells.is_empty() && cells.iter().all(|cell| cell.sort.is_some())
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
            for (i, cell) in row.iter().enumerate() {
                let num = numeric.get(i).copied().unwrap_or(false);
                match cell.sort.filter(|_| num && !is_blank(&cell.text)) {
                    Some(v) => {
                        let _ = write!(out, "<td data-v=\"{v:e}\" class=\"n\">{}</td>", cell.html);
                    }
                    None if num => {
                        let _ = write!(out, "<td class=\"n\">{}</td>", cell.html);
                    }
                    None => {
                        let _ = write!(out, "<td>{}</td>", cell.html);
                    }
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
        out
    }
}

/// Maps a link target as written in a page (relative to its Markdown path) to an href;
/// `None` shows the text unlinked (the target is not part of the site).
pub type LinkFn<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// Inline content as HTML; text is escaped.
pub fn inline(text: &Inline, links: &LinkFn) -> String {
    let mut out = String::new();
    for span in &text.0 {
        match span {
            Span::Text(t) | Span::Foreign(t) => out.push_str(&esc(t)),
            Span::Code(c) => {
                let _ = write!(out, "<code>{}</code>", esc(c));
            }
            Span::Strong(s) => {
                let _ = write!(out, "<strong>{}</strong>", inline(s, links));
            }
            Span::Link { text, target } => match links(target) {
                Some(href) => {
                    let _ = write!(
                        out,
                        "<a href=\"{}\">{}</a>",
                        esc(&href),
                        inline(text, links)
                    );
                }
                None => {
                    let _ = write!(
                        out,
                        "<span class=\"offsite\" title=\"{}\">{}</span>",
                        esc(&format!("not part of this site: {target}")),
                        inline(text, links)
                    );
                }
            },
        }
    }
    out
}

fn html_cell(cell: &Cell, links: &LinkFn) -> HtmlCell {
    HtmlCell {
        html: inline(&cell.content, links),
        text: cell.content.plain(),
        sort: cell.sort,
    }
}

/// Blocks of a page as HTML. Tables with at least `filter_min_rows` rows get a filter box.
pub fn doc_html(blocks: &[&Block], links: &LinkFn, filter_min_rows: usize) -> String {
    let mut out = String::new();
    for block in blocks {
        match block {
            Block::Heading { level, text } => {
                let _ = writeln!(
                    out,
                    "<h{level} id=\"{}\">{}</h{level}>",
                    slug(&text.plain()),
                    inline(text, links)
                );
            }
            Block::Paragraph(text) => {
                let _ = writeln!(out, "<p>{}</p>", inline(text, links));
            }
            Block::List(items) => {
                out.push_str("<ul>\n");
                for item in items {
                    let _ = writeln!(out, "<li>{}</li>", inline(item, links));
                }
                out.push_str("</ul>\n");
            }
            Block::Table(t) => {
                let width = t
                    .head
                    .len()
                    .max(t.rows.iter().map(Vec::len).max().unwrap_or(0));
                let table = Table {
                    head: (0..width)
                        .map(|i| t.head.get(i).map(|h| inline(h, links)).unwrap_or_default())
                        .collect(),
                    rows: t
                        .rows
                        .iter()
                        .map(|r| {
                            (0..width)
                                .map(|i| r.get(i).map(|c| html_cell(c, links)).unwrap_or_default())
                                .collect()
                        })
                        .collect(),
                    filterable: t.rows.len() >= filter_min_rows,
                    caption: None,
                };
                out.push_str(&table.render());
            }
        }
    }
    out
}

/// A notice shown at the top of every page of a system.
#[derive(Clone, Debug, PartialEq)]
pub struct Banner {
    pub kind: BannerKind,
    pub text: String,
}

/// How much a banner matters; pages decide on this, the HTML shows [`BannerKind::class`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BannerKind {
    /// Host not fixed, code not contained.
    Warn,
    /// How code was jailed, a counter other than core cycles.
    Info,
}

impl BannerKind {
    /// The banner's CSS class.
    pub const fn class(self) -> &'static str {
        match self {
            BannerKind::Warn => "warn",
            BannerKind::Info => "info",
        }
    }
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
        let role = match b.kind {
            BannerKind::Warn => "alert",
            BannerKind::Info => "note",
        };
        let _ = writeln!(
            out,
            "<div class=\"banner {}\" role=\"{role}\">{}</div>",
            b.kind.class(),
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
    fn numeric_columns_get_keys_and_text_columns_do_not() {
        let t = Table {
            head: vec!["instance".into(), "mean cycles".into()],
            rows: vec![
                vec![
                    HtmlCell::html("<code>A</code>".into(), "A"),
                    HtmlCell::num("534.0 k", 534012.5),
                ],
                vec![
                    HtmlCell::html("<code>B</code>".into(), "B"),
                    HtmlCell::text("–"),
                ],
                vec![
                    HtmlCell::html("<code>C</code>".into(), "C"),
                    HtmlCell::num("1.47 G", 1.47e9),
                ],
            ],
            filterable: true,
            caption: None,
        };
        let html = t.render();
        assert!(html.contains("data-type=\"text\">instance"));
        assert!(html.contains("data-type=\"num\">mean cycles"));
        // The key is the number itself, not the rounded text.
        assert!(
            html.contains("<td data-v=\"5.340125e5\" class=\"n\">534.0 k</td>"),
            "{html}"
        );
        assert!(html.contains("data-v=\"1.47e9\""));
        assert!(html.contains("<td class=\"n\">–</td>"));
        assert_eq!(html.matches("data-v=").count(), 2);
        assert!(html.contains("class=\"data filterable\""));
    }

    #[test]
    fn documents_become_html() {
        use crate::report::doc::{Cell, Doc, Table as DocTable, code};
        let mut d = Doc::new();
        d.heading(2, "2. Env");
        d.para(
            Inline::new()
                .link("Survey", "../s.md")
                .text(" verdict: ")
                .strong("ICCS-only")
                .text(" — ")
                .code("a<b")
                .text(" & <script>"),
        );
        d.list(vec!["a".into(), code("b")]);
        let mut t = DocTable::new(["item", "value"]);
        t.row(vec!["clock".into(), Cell::num("534.0 k", 534000.0)]);
        d.table(t);
        d.para(Inline::new().text("see ").link("the audit", "AUDIT.md"));
        let keep = |t: &str| (t != "AUDIT.md").then(|| t.to_string());
        let blocks: Vec<&Block> = d.blocks.iter().collect();
        let html = doc_html(&blocks, &keep, 100);
        assert!(html.contains("<h2 id=\"2-env\">2. Env</h2>"));
        assert!(html.contains(
            "<p><a href=\"../s.md\">Survey</a> verdict: <strong>ICCS-only</strong> — \
             <code>a&lt;b</code> &amp; &lt;script&gt;</p>"
        ));
        assert!(html.contains("<ul>\n<li>a</li>\n<li><code>b</code></li>\n</ul>"));
        assert!(html.contains("<td data-v=\"5.34e5\" class=\"n\">534.0 k</td>"));
        assert!(html.contains("<span class=\"offsite\""));
        assert!(!html.contains("filterable"));
        assert!(doc_html(&blocks, &keep, 1).contains("filterable"));
    }
}
