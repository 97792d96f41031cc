//! Escaping of text that comes from a candidate (algorithm and instance names, its stdout
//! and stderr, crash messages) for each place it goes: a terminal or a log file, a Markdown
//! page, an HTML page. One module, so every output escapes the same way (issue 33: an
//! algorithm name with `<img onerror>` and `|` made a table row of 12 cells under 10
//! headers; ESC/OSC bytes from stderr reached the KAT logs raw).

use std::fmt::Write as _;

/// Whether `c` would act on a terminal rather than print: C0 controls but newline and tab,
/// DEL, C1 controls (U+0080–U+009F, e.g. the 8-bit CSI), and the bidirectional overrides
/// and isolates that reorder what is shown (U+202A–U+202E, U+2066–U+2069).
fn acts_on_terminal(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Text safe to print or store in a log: every character that would act on a terminal is
/// written out as `\xNN` (ASCII) or `\u{NNNN}`; newlines and tabs stay. A backslash stays a
/// backslash (the escapes are for readers, not to be undone).
pub fn terminal(s: &str) -> String {
    if !s.chars().any(acts_on_terminal) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if !acts_on_terminal(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    out
}

/// Candidate text in a Markdown page (a table cell, a heading, a list item): one line (line
/// breaks become spaces), terminal controls written out, `|` escaped (it would end a table
/// cell, also inside backticks), `<` and `>` as entities (no HTML element or autolink can
/// start), `\` doubled so it cannot escape what follows. Other Markdown punctuation is kept:
/// names like `Reference_Implementation` must read as the reference harness writes them.
pub fn markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in terminal(s).chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out
}

/// Text for HTML element content and double- or single-quoted attributes.
pub fn html(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_controls_are_written_out() {
        let s = "ok \u{1b}]0;pwned\u{7}\u{1b}[2Jred\r\nnext\tcol \u{9b}x \u{202e}rev";
        assert_eq!(
            terminal(s),
            "ok \\x1b]0;pwned\\x07\\x1b[2Jred\\x0d\nnext\tcol \\u{9b}x \\u{202e}rev"
        );
        assert_eq!(terminal("plain / text"), "plain / text");
    }

    #[test]
    fn markdown_cells_stay_one_cell() {
        let name = "Trust <img src=x onerror=alert(1)> | KEM\nrow";
        let md = markdown(name);
        assert_eq!(md, "Trust &lt;img src=x onerror=alert(1)&gt; \\| KEM row");
        assert!(!md.contains('<') && md.matches('|').count() == md.matches("\\|").count());
        assert_eq!(markdown("a\\|b"), "a\\\\\\|b");
        assert_eq!(
            markdown("Reference_Implementation"),
            "Reference_Implementation"
        );
    }

    #[test]
    fn html_escapes_markup_and_quotes() {
        assert_eq!(
            html("<img src='x' onerror=\"a&b\">"),
            "&lt;img src=&#39;x&#39; onerror=&quot;a&amp;b&quot;&gt;"
        );
    }
}
