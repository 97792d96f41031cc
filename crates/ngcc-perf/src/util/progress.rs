//! Progress: a bar with counts and ETA on a terminal, plain lines otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(phase: &str, total: u64) -> Progress {
        if !std::io::stderr().is_terminal() || total == 0 {
            crate::util::say!("{phase}: {total} to do");
            return Progress { bar: None };
        }
        let bar = ProgressBar::new(total);
        let style =
            ProgressStyle::with_template("{prefix:>9} [{bar:30}] {pos}/{len} {wide_msg} ETA {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(phase.to_string());
        Progress { bar: Some(bar) }
    }

    /// One finished item: a line of its own, and the bar moves.
    pub fn done(&self, line: &str) {
        match &self.bar {
            Some(bar) => {
                bar.println(super::text::terminal(line));
                bar.inc(1);
            }
            None => crate::util::say!("{line}"),
        }
    }

    pub fn working_on(&self, what: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(super::text::terminal(what));
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
