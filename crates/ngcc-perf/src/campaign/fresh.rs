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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::schema::{KatStatus, ProfileExtra};

    fn entry() -> BuildEntry {
        BuildEntry {
            kat: KatStatus::Pass,
            kat_log_sha256: Some("k1".into()),
            library_sha256: Some("l1".into()),
            ..BuildEntry::default()
        }
    }

    fn plan() -> Plan {
        Plan {
            iterations_per_trial: 336,
            warmups: 3,
            trials: 5,
            separate_processes: true,
            estimated_s: 1.7,
            timeout_per_process_s: 301.0,
        }
    }

    fn rec() -> Record {
        Record {
            library_sha256: Some("l1".into()),
            kat: KatStatus::Pass,
            kat_log_sha256: Some("k1".into()),
            plan: plan(),
            ..Record::default()
        }
    }

    #[test]
    fn a_record_stands_while_library_verdict_and_plan_are_todays() {
        assert_eq!(record(&rec(), &entry(), &plan()), None);
        let mut r = rec();
        r.library_sha256 = Some("l0".into());
        assert_eq!(
            record(&r, &entry(), &plan()).as_deref(),
            Some("the library changed")
        );
        let mut e = entry();
        e.kat_log_sha256 = Some("k2".into());
        assert_eq!(
            record(&rec(), &e, &plan()).as_deref(),
            Some("the KAT verdict changed")
        );
        e = entry();
        e.kat = KatStatus::Mismatch;
        assert_eq!(
            record(&rec(), &e, &plan()).as_deref(),
            Some("the KAT verdict changed")
        );
        let mut p = plan();
        p.estimated_s = 1.8;
        assert_eq!(
            record(&rec(), &entry(), &p).as_deref(),
            Some("the calibration or the planning settings changed")
        );
    }

    #[test]
    fn calibrations_and_profiles_stand_while_their_library_is_todays() {
        let mut cal = Calibration {
            library_sha256: "l1".into(),
            ..Calibration::default()
        };
        assert_eq!(calibration(&cal, &entry()), None);
        cal.library_sha256 = "l0".into();
        assert_eq!(
            calibration(&cal, &entry()).as_deref(),
            Some("the library changed")
        );
        let mut p = Profile {
            ngcc: Some(ProfileExtra {
                timed_library_sha256: Some("l1".into()),
                ..ProfileExtra::default()
            }),
            ..Profile::default()
        };
        assert_eq!(profile(&p, &entry()), None);
        // A profile that does not say which library it was relinked from never stands.
        p.ngcc = None;
        assert_eq!(
            profile(&p, &entry()).as_deref(),
            Some("the library changed")
        );
    }
}
