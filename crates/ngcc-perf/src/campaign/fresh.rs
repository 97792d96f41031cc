//! "Already done" tests of the timing phases: an output on disk stands only while what it was
//! computed from is unchanged (the build phase has its content cache key, the KAT phase
//! `kat::run::inputs`). Each test returns why an existing output must be redone, or `None`.

use crate::dataset::schema::{BuildEntry, Calibration, Plan, Profile, Record};

/// A calibration stands while the library it ran is the one built now.
pub fn calibration(cal: &Calibration, entry: &BuildEntry) -> Option<String> {
    library(Some(&cal.library_sha256), entry)
}

/// A record stands while its library, the KAT verdict it carries and its plan (from today's
/// calibration and planning settings) are today's.
pub fn record(rec: &Record, entry: &BuildEntry, plan: &Plan) -> Option<String> {
    library(rec.library_sha256.as_ref(), entry)
        .or_else(|| {
            (rec.kat_log_sha256 != entry.kat_log_sha256 || rec.kat != entry.kat)
                .then(|| "the KAT verdict changed".to_string())
        })
        .or_else(|| {
            (rec.plan != *plan)
                .then(|| "the calibration or the planning settings changed".to_string())
        })
}

/// A profile stands while the library it relinked from is the one built now.
pub fn profile(p: &Profile, entry: &BuildEntry) -> Option<String> {
    library(
        p.ngcc
            .as_ref()
            .and_then(|x| x.timed_library_sha256.as_ref()),
        entry,
    )
}

fn library(was: Option<&String>, entry: &BuildEntry) -> Option<String> {
    (was != entry.library_sha256.as_ref()).then(|| "the library changed".to_string())
}
