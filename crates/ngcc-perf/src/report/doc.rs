//! The structured form of a page: headings, paragraphs, lists and tables whose cells carry
//! their text, an optional numeric sort key and links as typed targets. Every page renderer
//! builds one `Doc`; `markdown()` writes it byte for byte as the reference harness writes its
//! pages, and the site writes HTML from the same blocks (`site::html::doc_html`), so neither
//! output is derived from the other.

/// A run of inline content.
#[derive(Clone, Debug, PartialEq)]
pub enum Span {
    Text(String),
    /// Text from a candidate (an algorithm or instance name, a message it printed): escaped
    /// for each output (`util::text`), so it can neither end a table cell nor start markup.
    Foreign(String),
    /// `` `code` ``
    Code(String),
    /// `**bold**`
    Strong(Inline),
    /// `[text](target)`: target as written in the Markdown (relative to the page).
    Link {
        text: Inline,
        target: String,
    },
}

/// Inline content: text with code, bold and links.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inline(pub Vec<Span>);

impl Inline {
    pub fn new() -> Inline {
        Inline::default()
    }

    pub fn text(mut self, s: impl Into<String>) -> Inline {
        let s = s.into();
        if !s.is_empty() {
            self.0.push(Span::Text(s));
        }
        self
    }

    /// Text a candidate wrote (see [`Span::Foreign`]).
    pub fn foreign(mut self, s: impl Into<String>) -> Inline {
        let s = s.into();
        if !s.is_empty() {
            self.0.push(Span::Foreign(s));
        }
        self
    }

    pub fn code(mut self, s: impl Into<String>) -> Inline {
        self.0.push(Span::Code(s.into()));
        self
    }

    pub fn strong(mut self, s: impl Into<Inline>) -> Inline {
        self.0.push(Span::Strong(s.into()));
        self
    }

    pub fn link(mut self, text: impl Into<Inline>, target: impl Into<String>) -> Inline {
        self.0.push(Span::Link {
            text: text.into(),
            target: target.into(),
        });
        self
    }

    /// Text from a catalog (survey notes, summary notes, KAT causes): `` `x` `` pairs are code,
    /// everything else is text, so the Markdown keeps the catalog's bytes.
    pub fn catalog(text: &str) -> Inline {
        let mut out = Inline::new();
        let mut rest = text;
        while let Some(start) = rest.find('`') {
            let Some(len) = rest[start + 1..].find('`') else {
                break;
            };
            out = out
                .text(&rest[..start])
                .code(&rest[start + 1..start + 1 + len]);
            rest = &rest[start + len + 2..];
        }
        out.text(rest)
    }

    /// Appends another inline run.
    pub fn then(mut self, other: Inline) -> Inline {
        self.0.extend(other.0);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn markdown(&self) -> String {
        let mut out = String::new();
        for span in &self.0 {
            match span {
                Span::Text(t) => out.push_str(t),
                Span::Foreign(t) => out.push_str(&crate::util::text::markdown(t)),
                Span::Code(c) => {
                    out.push('`');
                    out.push_str(c);
                    out.push('`');
                }
                Span::Strong(s) => {
                    out.push_str("**");
                    out.push_str(&s.markdown());
                    out.push_str("**");
                }
                Span::Link { text, target } => {
                    out.push('[');
                    out.push_str(&text.markdown());
                    out.push_str("](");
                    out.push_str(target);
                    out.push(')');
                }
            }
        }
        out
    }

    /// The text a reader sees, without markup.
    pub fn plain(&self) -> String {
        let mut out = String::new();
        for span in &self.0 {
            match span {
                Span::Text(t) | Span::Code(t) => out.push_str(t),
                Span::Foreign(t) => out.push_str(&crate::util::text::terminal(t)),
                Span::Strong(s) | Span::Link { text: s, .. } => out.push_str(&s.plain()),
            }
        }
        out
    }
}

impl From<&str> for Inline {
    fn from(s: &str) -> Inline {
        Inline::new().text(s)
    }
}

impl From<String> for Inline {
    fn from(s: String) -> Inline {
        Inline::new().text(s)
    }
}

/// Candidate text alone (see [`Span::Foreign`]).
pub fn foreign(s: impl Into<String>) -> Inline {
    Inline::new().foreign(s)
}

/// `code` alone.
pub fn code(s: impl Into<String>) -> Inline {
    Inline::new().code(s)
}

/// One table cell: its content and, for figures, the number it stands for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cell {
    pub content: Inline,
    /// The value the column sorts by (cycles, seconds, bytes, a share…); `None` for text.
    pub sort: Option<f64>,
    /// An absent value written as a bare separator (`| |`) rather than an empty cell (`|  |`),
    /// as the reference's failed-record rows are.
    pub gap: bool,
}

impl Cell {
    pub fn new(content: impl Into<Inline>) -> Cell {
        Cell {
            content: content.into(),
            ..Cell::default()
        }
    }

    /// A figure: its text and the number it stands for.
    pub fn num(content: impl Into<Inline>, value: impl Into<Option<f64>>) -> Cell {
        Cell {
            content: content.into(),
            sort: value.into().filter(|v| v.is_finite()),
            gap: false,
        }
    }

    /// Nothing at all between two separators.
    pub fn gap() -> Cell {
        Cell {
            gap: true,
            ..Cell::default()
        }
    }

    fn markdown(&self) -> String {
        if self.gap {
            " |".into()
        } else {
            format!(" {} |", self.content.markdown())
        }
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::new(s)
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::new(s)
    }
}

impl From<Inline> for Cell {
    fn from(s: Inline) -> Cell {
        Cell::new(s)
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub head: Vec<Inline>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    pub fn new<S: Into<Inline>>(head: impl IntoIterator<Item = S>) -> Table {
        Table {
            head: head.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    fn markdown_lines(&self, out: &mut Vec<String>) {
        let mut head = String::from("|");
        for h in &self.head {
            head.push_str(&format!(" {} |", h.markdown()));
        }
        out.push(head);
        out.push(format!("|{}", "---|".repeat(self.head.len())));
        for row in &self.rows {
            let mut line = String::from("|");
            for cell in row {
                line.push_str(&cell.markdown());
            }
            out.push(line);
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    Heading { level: usize, text: Inline },
    Paragraph(Inline),
    List(Vec<Inline>),
    Table(Table),
}

/// A page: blocks separated by one empty line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Doc {
    pub blocks: Vec<Block>,
    /// Whether the page also ends with an empty line (most reference pages do; the survey
    /// page does not).
    pub final_blank: bool,
}

impl Doc {
    pub fn new() -> Doc {
        Doc {
            blocks: Vec::new(),
            final_blank: true,
        }
    }

    pub fn heading(&mut self, level: usize, text: impl Into<Inline>) {
        self.blocks.push(Block::Heading {
            level,
            text: text.into(),
        });
    }

    pub fn para(&mut self, text: impl Into<Inline>) {
        self.blocks.push(Block::Paragraph(text.into()));
    }

    pub fn list(&mut self, items: Vec<Inline>) {
        self.blocks.push(Block::List(items));
    }

    pub fn table(&mut self, table: Table) {
        self.blocks.push(Block::Table(table));
    }

    /// The text of the first `#` heading.
    pub fn title(&self) -> String {
        self.blocks
            .iter()
            .find_map(|b| match b {
                Block::Heading { level: 1, text } => Some(text.plain()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The page as Markdown: lines joined by `\n`, a final `\n`.
    pub fn markdown(&self) -> String {
        let mut lines: Vec<String> = Vec::new();
        for (i, block) in self.blocks.iter().enumerate() {
            match block {
                Block::Heading { level, text } => {
                    lines.push(format!("{} {}", "#".repeat(*level), text.markdown()))
                }
                Block::Paragraph(text) => lines.push(text.markdown()),
                Block::List(items) => {
                    lines.extend(items.iter().map(|i| format!("- {}", i.markdown())))
                }
                Block::Table(t) => t.markdown_lines(&mut lines),
            }
            if i + 1 < self.blocks.len() || self.final_blank {
                lines.push(String::new());
            }
        }
        lines.join("\n") + "\n"
    }

    /// The blocks split at every `##` heading; the first part holds what precedes it.
    pub fn sections(&self) -> Vec<Section<'_>> {
        let mut out = vec![Section {
            heading: None,
            blocks: Vec::new(),
        }];
        for block in &self.blocks {
            if let Block::Heading { level: 2, text } = block {
                out.push(Section {
                    heading: Some(text.plain()),
                    blocks: Vec::new(),
                });
            }
            out.last_mut().expect("starts with one").blocks.push(block);
        }
        out
    }
}

/// One `##` section of a page.
pub struct Section<'a> {
    pub heading: Option<String>,
    pub blocks: Vec<&'a Block>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_of_every_block() {
        let mut d = Doc::new();
        d.heading(1, "Title");
        d.para(
            Inline::new()
                .text("see ")
                .link(code("x.md"), "../x.md")
                .text(", ")
                .strong("bold"),
        );
        d.list(vec!["a".into(), code("b")]);
        let mut t = Table::new(["item", "value"]);
        t.row(vec![Cell::num("534.0 k", 534012.5), Cell::new("")]);
        t.row(vec![Cell::new("failed"), Cell::gap()]);
        d.table(t);
        assert_eq!(
            d.markdown(),
            "# Title\n\nsee [`x.md`](../x.md), **bold**\n\n- a\n- `b`\n\n| item | value |\n|---|---|\n| 534.0 k |  |\n| failed | |\n\n"
        );
        d.final_blank = false;
        assert!(d.markdown().ends_with("| failed | |\n"));
        assert_eq!(d.title(), "Title");
        assert_eq!(d.sections().len(), 1);
        assert_eq!(Inline::new().link(code("a"), "t").strong("b").plain(), "ab");
        let notes = "`shake*` names are shims; a lone ` stays";
        assert_eq!(Inline::catalog(notes).markdown(), notes);
        assert_eq!(Inline::catalog(notes).0[0], Span::Code("shake*".into()));
    }
}
