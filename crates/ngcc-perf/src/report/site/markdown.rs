//! HTML from the Markdown our own page renderers write. The pages' content (tables, wording,
//! numbers) is produced once, by `candidate_page`, `summary`, `method` and `survey`; the site
//! converts it instead of keeping a second copy of that logic. Only the subset those
//! renderers use is understood: `#` headings, `- ` lists, `|` tables, paragraphs, and inline
//! `` `code` ``, `**bold**` and `[text](target)`.

use super::html::{Table, esc, slug};
use std::fmt::Write as _;

/// Maps a link target as written in the Markdown to an href; `None` shows the text unlinked
/// (the target is not part of the site).
pub type LinkFn<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// One `## ` section (the first one holds what precedes the first `## ` heading).
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    pub heading: Option<String>,
    pub md: String,
}

pub fn sections(md: &str) -> Vec<Section> {
    let mut out = vec![Section {
        heading: None,
        md: String::new(),
    }];
    for line in md.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            out.push(Section {
                heading: Some(h.trim().to_string()),
                md: String::new(),
            });
        }
        let last = out.last_mut().expect("starts with one section");
        last.md.push_str(line);
        last.md.push('\n');
    }
    out
}

/// Converts a Markdown fragment. Tables with at least `filter_min_rows` body rows get a
/// filter box.
pub fn to_html(md: &str, links: &LinkFn, filter_min_rows: usize) -> String {
    let mut out = String::new();
    let mut para: Vec<&str> = Vec::new();
    let mut list: Vec<&str> = Vec::new();
    let mut table: Vec<&str> = Vec::new();
    let flush =
        |out: &mut String, para: &mut Vec<&str>, list: &mut Vec<&str>, table: &mut Vec<&str>| {
            if !para.is_empty() {
                let _ = writeln!(out, "<p>{}</p>", inline(&para.join(" "), links));
                para.clear();
            }
            if !list.is_empty() {
                out.push_str("<ul>\n");
                for item in list.iter() {
                    let _ = writeln!(out, "<li>{}</li>", inline(item, links));
                }
                out.push_str("</ul>\n");
                list.clear();
            }
            if !table.is_empty() {
                out.push_str(&table_html(table, links, filter_min_rows));
                table.clear();
            }
        };
    for line in md.lines() {
        let trimmed = line.trim_end();
        let kind = if trimmed.is_empty() {
            0
        } else if trimmed.starts_with('|') {
            1
        } else if trimmed.starts_with("- ") {
            2
        } else if heading_level(trimmed).is_some() {
            3
        } else {
            4
        };
        // A change of block kind ends the current block.
        if (kind != 1 && !table.is_empty())
            || (kind != 2 && !list.is_empty())
            || (kind != 4 && !para.is_empty())
        {
            flush(&mut out, &mut para, &mut list, &mut table);
        }
        match kind {
            1 => table.push(trimmed),
            2 => list.push(&trimmed[2..]),
            3 => {
                let (level, text) = heading_level(trimmed).expect("checked above");
                let _ = writeln!(
                    out,
                    "<h{level} id=\"{}\">{}</h{level}>",
                    slug(&plain(text)),
                    inline(text, links)
                );
            }
            4 => para.push(trimmed),
            _ => {}
        }
    }
    flush(&mut out, &mut para, &mut list, &mut table);
    out
}

fn heading_level(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|b| *b == b'#').count();
    if (1..=6).contains(&level) && line[level..].starts_with(' ') {
        Some((level, line[level + 1..].trim()))
    } else {
        None
    }
}

/// Cells of a table row, splitting on `|` outside code spans.
pub fn split_cells(line: &str) -> Vec<String> {
    let inner = line.trim();
    let inner = inner.strip_prefix('|').unwrap_or(inner);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut in_code = false;
    for c in inner.chars() {
        match c {
            '`' => {
                in_code = !in_code;
                cur.push(c);
            }
            '|' if !in_code => cells.push(std::mem::take(&mut cur).trim().to_string()),
            c => cur.push(c),
        }
    }
    cells.push(cur.trim().to_string());
    cells
}

fn is_rule(cells: &[String]) -> bool {
    !cells.is_empty()
        && cells.iter().all(|c| {
            let c = c.trim_matches(':');
            !c.is_empty() && c.bytes().all(|b| b == b'-')
        })
}

fn table_html(lines: &[&str], links: &LinkFn, filter_min_rows: usize) -> String {
    let rows: Vec<Vec<String>> = lines.iter().map(|l| split_cells(l)).collect();
    let (head, body): (Vec<String>, &[Vec<String>]) = if rows.len() >= 2 && is_rule(&rows[1]) {
        (rows[0].clone(), &rows[2..])
    } else {
        (Vec::new(), &rows[..])
    };
    let width = head.len().max(body.iter().map(Vec::len).max().unwrap_or(0));
    let table = Table {
        head: (0..width)
            .map(|i| head.get(i).map(|h| inline(h, links)).unwrap_or_default())
            .collect(),
        rows: body
            .iter()
            .map(|r| {
                (0..width)
                    .map(|i| {
                        let cell = r.get(i).map(String::as_str).unwrap_or("");
                        (inline(cell, links), plain(cell))
                    })
                    .collect()
            })
            .collect(),
        filterable: body.len() >= filter_min_rows,
        caption: None,
    };
    table.render()
}

/// Inline markup to HTML; everything else is escaped.
pub fn inline(text: &str, links: &LinkFn) -> String {
    let mut out = String::new();
    let mut rest = text;
    let mut strong = false;
    while let Some(c) = rest.chars().next() {
        if c == '`'
            && let Some(end) = rest[1..].find('`')
        {
            let _ = write!(out, "<code>{}</code>", esc(&rest[1..1 + end]));
            rest = &rest[end + 2..];
            continue;
        }
        if rest.starts_with("**") && (strong || rest[2..].contains("**")) {
            out.push_str(if strong { "</strong>" } else { "<strong>" });
            strong = !strong;
            rest = &rest[2..];
            continue;
        }
        if c == '['
            && let Some((label, target, used)) = link_at(rest)
        {
            let label_html = inline(label, links);
            match links(target) {
                Some(href) => {
                    let _ = write!(out, "<a href=\"{}\">{label_html}</a>", esc(&href));
                }
                None => {
                    let _ = write!(
                        out,
                        "<span class=\"offsite\" title=\"{}\">{label_html}</span>",
                        esc(&format!("not part of this site: {target}"))
                    );
                }
            }
            rest = &rest[used..];
            continue;
        }
        let _ = write!(out, "{}", esc(&c.to_string()));
        rest = &rest[c.len_utf8()..];
    }
    if strong {
        out.push_str("</strong>");
    }
    out
}

/// `[label](target)` at the start of `s`: label, target and bytes used.
fn link_at(s: &str) -> Option<(&str, &str, usize)> {
    let close = s.find(']')?;
    let label = &s[1..close];
    if label.contains('[') {
        return None;
    }
    let after = &s[close + 1..];
    let after = after.strip_prefix('(')?;
    let end = after.find(')')?;
    let target = &after[..end];
    if target.is_empty() || target.contains(char::is_whitespace) {
        return None;
    }
    Some((label, target, close + 2 + end + 1))
}

/// The text a reader sees, without markup.
pub fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '`'
            && let Some(end) = rest[1..].find('`')
        {
            out.push_str(&rest[1..1 + end]);
            rest = &rest[end + 2..];
            continue;
        }
        if rest.starts_with("**") {
            rest = &rest[2..];
            continue;
        }
        if c == '['
            && let Some((label, _, used)) = link_at(rest)
        {
            out.push_str(&plain(label));
            rest = &rest[used..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keep(t: &str) -> Option<String> {
        Some(t.to_string())
    }

    #[test]
    fn inline_markup_is_escaped_and_converted() {
        let got = inline(
            "[Survey](../s.md) verdict: **ICCS-only** — `a<b` & <script>",
            &keep,
        );
        assert_eq!(
            got,
            "<a href=\"../s.md\">Survey</a> verdict: <strong>ICCS-only</strong> — \
             <code>a&lt;b</code> &amp; &lt;script&gt;"
        );
        // A footnote mark is not a link; an unmatched backtick stays literal.
        assert_eq!(inline("[1] cause `x", &keep), "[1] cause `x");
        let dropped = inline("see [the audit](AUDIT.md).", &|_| None);
        assert!(dropped.contains("<span class=\"offsite\""), "{dropped}");
        assert!(!dropped.contains("<a "));
        assert_eq!(plain("[`kem-38`](x.md) **b** `c`"), "kem-38 b c");
    }

    #[test]
    fn blocks() {
        let md = "# Title\n\nintro line\nsecond line\n\n## 2. Env\n\n- a\n- `b`\n\n| item | value |\n|---|---|\n| clock | 534.0 k |\n| x | – |\n\n[1] note\n";
        let html = to_html(md, &keep, 100);
        assert!(html.contains("<h1 id=\"title\">Title</h1>"));
        assert!(html.contains("<p>intro line second line</p>"));
        assert!(html.contains("<h2 id=\"2-env\">2. Env</h2>"));
        assert!(html.contains("<ul>\n<li>a</li>\n<li><code>b</code></li>\n</ul>"));
        assert!(html.contains("<th scope=\"col\" data-type=\"num\">value</th>"));
        assert!(html.contains("<td data-v=\"5.34e5\" class=\"n\">534.0 k</td>"));
        assert!(html.contains("<p>[1] note</p>"));
        assert!(!html.contains("filterable"));
        assert!(to_html(md, &keep, 2).contains("filterable"));
        let s = sections(md);
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].heading.as_deref(), Some("2. Env"));
        assert!(s[0].md.starts_with("# Title"));
    }

    #[test]
    fn cells_split_outside_code() {
        assert_eq!(split_cells("| `a|b` | c |"), ["`a|b`", "c"]);
        assert_eq!(
            split_cells("| `l` | key | failed | | |"),
            ["`l`", "key", "failed", "", ""]
        );
    }
}
