//! The candidate page's "Instruction counts" section (ours only: reference datasets have no
//! `count/`, so their pages stay byte-exact). Every figure comes from the count records'
//! summaries, which `validate` recomputes from the callgrind text.

use super::doc::{Cell, Doc, Table, code};
use super::format::{self, DASH};
use super::model::View;
use crate::dataset::count::CountRecord;
use crate::dataset::schema::ProcessStatus;

/// The section for `cand`, when the dataset has count records for it.
pub fn section(v: &View, cand: &str, d: &mut Doc) {
    let mut recs: Vec<&CountRecord> =
        v.ds.count
            .iter()
            .map(|c| &c.count)
            .filter(|c| c.candidate == cand)
            .collect();
    if recs.is_empty() || v.ds.campaign.tool.is_none() {
        return;
    }
    recs.sort_by(|a, b| {
        super::model::natural_cmp(&a.label, &b.label).then_with(|| {
            super::model::op_rank(&a.operation.key(a.input_bytes))
                .cmp(&super::model::op_rank(&b.operation.key(b.input_bytes)))
        })
    });
    let first = recs[0];
    let w = &first.estimate_weights;
    let m = &first.cache_model;
    d.heading(2, "Instruction counts");
    d.para(format!(
        "Counted by {} (callgrind) in the jail on the timed library: {} calls per operation after {} warm-up call(s) (a fixed number, not the trials': theirs follows the host's timing), with the trials' setup and randomness; collection is on only inside the library's entry point of the operation (toggled by callgrind on that function), one dump per call. Instructions do not depend on the host's load; a rerun with the same seed counts the same. Estimated cycles are a model, not a measurement: every instruction fetch and data access costs {} when it hits the simulated L1 ({} KiB {}-way I1 and D1), {} when it misses L1 and hits the simulated last level ({} MiB {}-way), {} when it misses both (64-byte lines). Instructions per measured cycle divide the counted instructions by the timing record's mean per call (its counter, see section 2). A call whose dump shows instructions collected outside the calls into the entry point, none at all, or the entry point called from inside the library fails its record: something switched callgrind's collection, and the counts would not be the operation's. Helper shares are the instructions inside the hash/XOF helpers and the DRNG/randombytes (what they call included), the profile phase's helper set, next to its share of time.",
        first.tool,
        first.calls.len(),
        first.warmups,
        w.l1_hit,
        m.i1.size_bytes >> 10,
        m.i1.ways,
        w.ll_hit,
        m.ll.size_bytes >> 20,
        m.ll.ways,
        w.memory,
    ));
    let mut t = Table::new([
        "instance",
        "operation",
        "instructions per call",
        "min–max",
        "estimated cycles (model)",
        "instructions per measured cycle",
        "hash/XOF share (instructions)",
        "DRNG share (instructions)",
        "hash/XOF share (profile, time)",
    ]);
    let mut varying = Vec::new();
    // One entry per instance, decided on the label (not on the text built from it).
    let mut aware: Vec<(&str, String)> = Vec::new();
    for r in &recs {
        let key = r.operation.key(r.input_bytes);
        // Failed records too: a library that talks to valgrind is named however its counts
        // ended.
        if r.valgrind_aware() && !aware.iter().any(|(label, _)| *label == r.label) {
            aware.push((
                &r.label,
                format!(
                    "{} ({} client request(s))",
                    r.label,
                    r.client_requests.as_ref().map_or(0, |c| c.found)
                ),
            ));
        }
        let s = match (&r.status, &r.summary) {
            (ProcessStatus::Complete, Some(s)) => s,
            _ => {
                let why = format!("{}: {}", r.status, r.error.clone().unwrap_or_default());
                t.row(vec![
                    code(&r.label).into(),
                    key.clone().into(),
                    Cell::new(why),
                    DASH.into(),
                    DASH.into(),
                    DASH.into(),
                    DASH.into(),
                    DASH.into(),
                    DASH.into(),
                ]);
                continue;
            }
        };
        let measured =
            v.ds.record(cand, &r.label, &key)
                .and_then(|lr| lr.record.stats.as_ref().and_then(|st| st.mean_cycles))
                .filter(|c| *c > 0.0)
                .map(|c| s.ir_mean / c);
        let profile =
            v.ds.profile(cand, &r.label, &key)
                .and_then(|p| p.profile.hash_share);
        if !s.constant_ir {
            varying.push(format!("{} {key}", r.label));
        }
        let range = if s.constant_ir {
            "constant".to_string()
        } else {
            format!("{}–{}", format::exact(s.ir_min), format::exact(s.ir_max))
        };
        t.row(vec![
            code(&r.label).into(),
            key.clone().into(),
            // The mean to the instruction (exact when the calls agree, see min–max).
            Cell::num(format::exact(s.ir_mean.round() as u64), s.ir_mean),
            range.into(),
            Cell::num(
                format::fmt_int(Some(s.estimated_cycles_mean)),
                s.estimated_cycles_mean,
            ),
            Cell::num(
                measured.map_or_else(|| DASH.to_string(), |x| format!("{x:.2}")),
                measured,
            ),
            Cell::num(format::pct(Some(s.hash_share)), s.hash_share),
            Cell::num(format::pct(Some(s.rng_share)), s.rng_share),
            Cell::num(format::pct(profile), profile),
        ]);
    }
    d.table(t);
    if !varying.is_empty() {
        d.para(format!(
            "Instructions vary between calls (rejection sampling, retries, data-dependent work) for: {}. The calls drew their randomness from the seed {} (the first trial process's), after {} warm-up call(s): a rerun counts the same calls again.",
            varying.join(", "),
            first.seed,
            first.warmups
        ));
    }
    if !aware.is_empty() {
        d.para(format!(
            "valgrind-aware: the library of {} contains valgrind client requests (the fixed instruction sequence of valgrind.h): it can tell whether it runs under valgrind, so its counts may describe what it chose to do there.",
            aware
                .iter()
                .map(|(_, text)| text.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
}
