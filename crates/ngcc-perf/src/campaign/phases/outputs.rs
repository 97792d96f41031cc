//! The loop the timing phases (calibrate, measure, profile, memory) share over their units
//! of work, each of which writes one JSON file: an output on disk stands while it is fresh,
//! else the unit is (re)done saying why; each unit shows on the progress bar, its output is
//! written atomically, then its line is printed. Written once so the four phases cannot
//! drift apart in what they skip, what they say, or how they write.

use crate::util::progress::Progress;
use crate::util::{read_json, write_json};
use anyhow::Result;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// Whether the output at `path` must be (re)computed. A missing file is due without a word;
/// a file that does not parse as `T` (`the <name> does not parse`), or one `stale` finds
/// outdated (its reason), is redone and `<what>: redone: <why>` is printed.
pub(crate) fn due<T: DeserializeOwned>(
    what: impl FnOnce() -> String,
    path: &Path,
    name: &str,
    stale: impl FnOnce(&T) -> Option<String>,
) -> bool {
    if !path.is_file() {
        return true;
    }
    let why = match read_json::<T>(path) {
        Ok(old) => stale(&old),
        Err(_) => Some(format!("the {name} does not parse")),
    };
    match why {
        None => false,
        Some(why) => {
            crate::util::say!("{}: redone: {why}", what());
            true
        }
    }
}

/// The phase loop: for each unit, in order, show `label` on the bar, run `work` (which says
/// where its output goes), write the output atomically, and print `line` of it. The first
/// error ends the loop (the units done so far are on disk).
pub(crate) fn each<U, T: Serialize>(
    progress: &Progress,
    units: impl IntoIterator<Item = U>,
    mut label: impl FnMut(&U) -> String,
    mut work: impl FnMut(&U) -> Result<(PathBuf, T)>,
    mut line: impl FnMut(&U, &T) -> String,
) -> Result<()> {
    for unit in units {
        progress.working_on(&label(&unit));
        let (path, out) = work(&unit)?;
        write_json(&path, &out)?;
        progress.done(&line(&unit, &out));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_is_due_fresh_is_not_unreadable_and_stale_are() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let never = |_: &u32| -> Option<String> { panic!("no file to judge") };
        assert!(due(|| "x".into(), &path, "record", never));
        std::fs::write(&path, "{").unwrap();
        assert!(due(|| "x".into(), &path, "record", never));
        std::fs::write(&path, "7").unwrap();
        assert!(!due(
            || "x".into(),
            &path,
            "record",
            |v: &u32| { (*v != 7).then(|| "changed".into()) }
        ));
        assert!(due(
            || "x".into(),
            &path,
            "record",
            |v: &u32| { (*v != 8).then(|| "changed".into()) }
        ));
    }

    #[test]
    fn each_writes_every_output_in_order_and_stops_at_the_first_error() {
        let dir = tempfile::tempdir().unwrap();
        let progress = Progress::new("test", 3);
        let mut lines = Vec::new();
        let r = each(
            &progress,
            [1u32, 2, 3],
            |u| format!("unit {u}"),
            |u| {
                anyhow::ensure!(*u != 3, "unit 3 fails");
                Ok((dir.path().join(format!("{u}.json")), u * 10))
            },
            |u, out| {
                lines.push((*u, *out));
                format!("unit {u}: {out}")
            },
        );
        assert!(r.is_err());
        assert_eq!(lines, [(1, 10), (2, 20)]);
        assert_eq!(read_json::<u32>(&dir.path().join("2.json")).unwrap(), 20);
        assert!(!dir.path().join("3.json").exists());
    }
}
