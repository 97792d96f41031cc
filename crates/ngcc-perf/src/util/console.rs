//! Every line this tool prints for a person — progress, diagnostics, tables, the final error
//! — goes through here, so a candidate's text inside it (a package folder named with an
//! escape sequence, a compiler's message, a path) is written out by `text::terminal`
//! instead of retitling or repainting the terminal. One depth for all of them: a call site
//! cannot forget (tests/it/console_lines.rs refuses a print macro anywhere else).

use super::text::terminal;
use std::io::Write as _;

/// One line on standard error.
pub fn err_line(s: &str) {
    eprintln!("{}", terminal(s));
}

/// Text on standard output, as given (a newline only where the text has one); a reader that
/// went away (`| head`) is not an error worth a panic.
pub fn write_out(s: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(terminal(s).as_bytes());
    let _ = out.flush();
}

/// `eprintln!` with the candidate's text made harmless (module doc).
macro_rules! say {
    () => { $crate::util::console::err_line("") };
    ($($arg:tt)*) => { $crate::util::console::err_line(&format!($($arg)*)) };
}

/// `println!` with the candidate's text made harmless (module doc).
macro_rules! out {
    () => { $crate::util::console::write_out("\n") };
    ($($arg:tt)*) => { $crate::util::console::write_out(&format!("{}\n", format_args!($($arg)*))) };
}

/// `print!` with the candidate's text made harmless (module doc).
macro_rules! out_text {
    ($($arg:tt)*) => { $crate::util::console::write_out(&format!($($arg)*)) };
}

// Addressed as `crate::util::say!` and the like: a path through `util`, like every other
// helper (tests/it/layering.rs reads it as an edge to `util`).
pub(crate) use {out, out_text, say};

#[cfg(test)]
mod tests {
    use crate::util::text::terminal;

    #[test]
    fn a_title_sequence_in_a_path_is_written_out() {
        let line = format!("BUILDFAIL: {}", "/tmp/tree/Re\u{1b}]0;pwned\u{7}cy/L1");
        assert_eq!(
            terminal(&line),
            "BUILDFAIL: /tmp/tree/Re\\x1b]0;pwned\\x07cy/L1"
        );
    }
}
