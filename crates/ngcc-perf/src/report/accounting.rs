//! The candidate page's "Time accounting" section (issue 33, our own datasets): per record,
//! how much of its trial processes' CPU time the kernel counted outside the timed windows
//! (load, constructors, set-up, warm-ups, the jail), the calibration's cold first call, and
//! the smallest share of a process's CPU time its timed work and fixed cost explain (the
//! bound `measure::crosscheck` holds it to). A library that works where we do not time it
//! shows here first.

use super::doc::{Cell, Doc, Table, code};
use super::format::{self, DASH};
use crate::dataset::load::LoadedRecord;
use crate::measure::crosscheck::{CPU_ACCOUNTED, CPU_ACCOUNTED_ABS_S, UNTIMED_ABS_S};

/// The section, when some record carries the accounting figures.
pub fn section(records: &[&LoadedRecord], d: &mut Doc) {
    let checked: Vec<(&LoadedRecord, _)> = records
        .iter()
        .filter_map(|r| {
            let c = r.record.ngcc.as_ref()?.checks.as_ref()?;
            c.untimed_share.map(|_| (*r, c))
        })
        .collect();
    if checked.is_empty() {
        return;
    }
    d.heading(2, "Time accounting");
    d.para(format!(
        "The kernel's view of every trial process (CPU time of its whole jail from wait4): the share spent outside the timed windows (loading the library, its constructors, set-up, warm-up calls, the jail itself), the calibration's cold first call, and the smallest share of one process's CPU time that its timed CPU time, the fixed cost of an empty jailed process and its warm-ups explain. A record is inconsistent when that share is below {} (less {}), or when the untimed CPU time beyond the fixed cost and warm-ups exceeds the timed CPU time by more than {}.",
        format::pct(Some(CPU_ACCOUNTED)),
        format::fmt_time(Some(CPU_ACCOUNTED_ABS_S)),
        format::fmt_time(Some(UNTIMED_ABS_S))
    ));
    let mut t = Table::new([
        "instance",
        "operation",
        "untimed share",
        "cold first call",
        "CPU accounted",
    ]);
    for (r, c) in checked {
        t.row(vec![
            code(&r.record.label).into(),
            r.op_key().into(),
            Cell::num(format::pct(c.untimed_share), c.untimed_share),
            Cell::num(format::fmt_time(c.cold_s), c.cold_s),
            match c.cpu_accounted {
                Some(x) => Cell::num(format::pct(Some(x)), x),
                None => DASH.into(),
            },
        ]);
    }
    d.table(t);
}
