//! The candidate page's algorithm-only resource tables (issue 36), next to the reference
//! harness's whole-process proxies: per operation the painted stack and the heap the
//! library's own allocator calls used in one call, and per instance the static size of its
//! own objects apart from the ICCS helpers and what the harness links in. Only datasets with
//! memory records (ours) get them, so reference pages stay as published.

use super::doc::{Cell, Doc, Table, code};
use super::format::{self, DASH};
use super::model::View;
use crate::dataset::memory::{MemoryRecord, OpMemory, Sections};
use crate::dataset::schema::ProcessStatus;

fn bytes(n: Option<u64>) -> Cell {
    match n {
        Some(n) => Cell::num(format::memory_bytes(n), n as f64),
        None => Cell::num(DASH, None),
    }
}

/// The tables, when the dataset has memory records of `cand` (in `labels` order).
pub fn section(v: &View, cand: &str, labels: &[String], d: &mut Doc) {
    let records: Vec<&MemoryRecord> = labels.iter().filter_map(|l| v.ds.memory(cand, l)).collect();
    if records.is_empty() {
        return;
    }
    let limit = records[0].stack_limit_bytes;
    let rng = records
        .iter()
        .flat_map(|r| &r.operations)
        .filter_map(|o| o.rng_callback_stack_bytes)
        .max();
    let rng_text = match rng {
        Some(b) => format!(
            ", and the harness's randombytes callback ({} bytes painted alone) when the deepest point was inside it",
            format::memory_bytes(b)
        ),
        None => String::new(),
    };
    d.para(format!(
        "Algorithm-only memory (phase memory, outside the timed runs, on a relink of the timed objects with a heap recorder): stack is the deepest byte one call wrote on a painted stack of {} (a deeper call hits a guard page and is reported failed), beyond an empty call; it includes the harness's call into the library (about 1 KiB){rng_text}. Heap counts only the library's own calls to malloc, calloc, realloc, free, posix_memalign, aligned_alloc and anonymous mmap during one call: the most bytes live at once, the bytes and allocations of the call, and what it leaves allocated (the same figures for a second call when they differ). Static size is the allocated sections of the instance's own objects; the ICCS helper files and the harness's shim are separate.",
        format::size_text(limit)
    ));
    let mut t = Table::new([
        "instance",
        "operation",
        "stack (bytes)",
        "heap peak (bytes)",
        "allocated (bytes)",
        "allocations",
        "left allocated (bytes)",
        "notes",
    ]);
    for r in &records {
        for o in &r.operations {
            t.row(op_row(&r.label, o));
        }
    }
    d.table(t);
    let mut s = Table::new([
        "instance",
        "algorithm text",
        "algorithm rodata",
        "algorithm data",
        "algorithm bss",
        "algorithm total",
        "ICCS helpers total",
        "harness total",
    ]);
    for r in &records {
        let Some(size) = &r.static_size else {
            continue;
        };
        let a: &Sections = &size.algorithm;
        s.row(vec![
            code(&r.label).into(),
            bytes(Some(a.text)),
            bytes(Some(a.rodata)),
            bytes(Some(a.data)),
            bytes(Some(a.bss)),
            bytes(Some(a.total())),
            bytes(Some(size.helpers.total())),
            bytes(Some(size.harness.total())),
        ]);
    }
    d.table(s);
}

fn op_row(label: &str, o: &OpMemory) -> Vec<Cell> {
    let mut row: Vec<Cell> = vec![code(label).into(), o.key().into()];
    if o.status != ProcessStatus::Complete {
        row.push(Cell::new(format!(
            "{}: {}",
            o.status,
            o.error.as_deref().unwrap_or("no figures")
        )));
        row.extend((0..5).map(|_| Cell::num(DASH, None)));
        return row;
    }
    let (first, repeat) = (o.first.clone().unwrap_or_default(), o.repeat.clone());
    let both = |f: fn(&crate::dataset::memory::HeapCall) -> u64| -> Cell {
        let a = f(&first);
        match repeat.as_ref().map(f).filter(|b| *b != a) {
            Some(b) => Cell::num(
                format!("{} / {}", format::memory_bytes(a), format::memory_bytes(b)),
                a as f64,
            ),
            None => Cell::num(format::memory_bytes(a), a as f64),
        }
    };
    row.push(bytes(o.stack_bytes));
    row.push(bytes(o.heap_peak_bytes()));
    row.push(both(|h| h.allocated_bytes));
    row.push(both(|h| h.allocations));
    row.push(both(|h| h.live_after_bytes));
    let notes = o.findings();
    row.push(Cell::new(if notes.is_empty() {
        DASH.to_string()
    } else {
        notes.join("; ")
    }));
    row
}

/// The most memory one call of the instance needs: (stack + heap peak, operation key) over
/// its measured operations. Stack and heap peaks need not coincide, so this is an upper
/// bound of the call's working memory, and exact (counted, not timed): equal figures share
/// a rank.
pub fn per_call_peak(r: &MemoryRecord) -> Option<(u64, String)> {
    r.operations
        .iter()
        .filter(|o| o.status == ProcessStatus::Complete)
        .map(|o| {
            (
                o.stack_bytes.unwrap_or(0) + o.heap_peak_bytes().unwrap_or(0),
                o.key(),
            )
        })
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(&a.1)))
}

/// One instance's row of a memory ranking: its largest call and its static size.
struct MemoryRow<'a> {
    peak: u64,
    stat: u64,
    op: String,
    m: &'a MemoryRecord,
}

impl<'a> MemoryRow<'a> {
    fn of(m: &'a MemoryRecord) -> Option<MemoryRow<'a>> {
        let (peak, op) = per_call_peak(m)?;
        let stat = m.static_size.as_ref().map_or(0, |s| s.algorithm.total());
        Some(MemoryRow { peak, stat, op, m })
    }
}

/// The ranking's words, shared by the summary and the ordered pages.
const MEMORY_RANK_WORDS: &str = "Instances ordered by the most memory one call of any operation needs: its painted stack plus the peak of the heap the library's own allocator calls hold during the call (an upper bound: the two peaks need not coincide), then by the static size of the algorithm's own objects. These figures are counted, not timed: they do not vary between runs of the same library, so equal figures share a rank and any difference orders. From the memory phase; the candidate pages give every operation.";

/// The ranked table of `rows` (any order): ascending by largest call, then static size;
/// equal figures share a rank.
fn memory_rank_table(mut rows: Vec<MemoryRow>) -> Table {
    rows.sort_by(|a, b| {
        (a.peak, a.stat, &a.m.candidate, &a.m.label).cmp(&(
            b.peak,
            b.stat,
            &b.m.candidate,
            &b.m.label,
        ))
    });
    let mut t = Table::new([
        "rank",
        "instance",
        "largest call: stack + heap peak (bytes)",
        "operation",
        "its stack (bytes)",
        "its heap peak (bytes)",
        "left allocated per call, most (bytes)",
        "algorithm static (bytes)",
    ]);
    let mut rank = 0usize;
    let mut last: Option<(u64, u64)> = None;
    for (i, r) in rows.iter().enumerate() {
        if last != Some((r.peak, r.stat)) {
            rank = i + 1;
        }
        last = Some((r.peak, r.stat));
        let o = r.m.op(&r.op);
        t.row(vec![
            Cell::num(rank.to_string(), rank as f64),
            code(format!("{}/{}", r.m.candidate, r.m.label)).into(),
            bytes(Some(r.peak)),
            Cell::new(r.op.clone()),
            bytes(o.and_then(|o| o.stack_bytes)),
            bytes(o.and_then(OpMemory::heap_peak_bytes)),
            bytes(r.m.operations.iter().filter_map(OpMemory::leak_bytes).max()),
            bytes(Some(r.stat)),
        ]);
    }
    t
}

/// The summary's ranking by memory (our datasets: those with memory records), per kind:
/// instances ordered by their largest per-call figure, then by algorithm static size.
pub fn summary_section(v: &View, d: &mut Doc) {
    if v.ds.memory.is_empty() {
        return;
    }
    let mut by_kind: std::collections::BTreeMap<String, Vec<MemoryRow>> = Default::default();
    for lm in &v.ds.memory {
        let Some(row) = MemoryRow::of(&lm.memory) else {
            continue;
        };
        let kind = v
            .build_entry(&row.m.candidate, &row.m.label)
            .and_then(|e| e.kind.clone())
            .unwrap_or_default();
        by_kind.entry(kind).or_default().push(row);
    }
    d.heading(2, "Memory per call (algorithm only)");
    d.para(MEMORY_RANK_WORDS);
    for (kind, rows) in by_kind {
        d.para(if kind.is_empty() {
            "Kind unknown:".to_string()
        } else {
            format!("Kind {kind}:")
        });
        d.table(memory_rank_table(rows));
    }
}

/// An ordered page's ranking by memory of the group's representatives (`(candidate,
/// label)`), when the dataset has their memory records; the instances without one are named.
pub fn group_section(v: &View, members: &[(&str, &str)], d: &mut Doc) {
    if v.ds.memory.is_empty() || members.is_empty() {
        return;
    }
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for &(cand, label) in members {
        match v.ds.memory(cand, label).and_then(MemoryRow::of) {
            Some(r) => rows.push(r),
            None => missing.push(format!("{cand}/{label}")),
        }
    }
    d.heading(2, "Memory per call (algorithm only)");
    d.para(format!(
        "The representatives above, ranked by memory instead of time. {MEMORY_RANK_WORDS}"
    ));
    if !rows.is_empty() {
        d.table(memory_rank_table(rows));
    }
    if !missing.is_empty() {
        d.para(format!(
            "Without a complete memory record: {}.",
            missing.join(", ")
        ));
    }
}

/// `compare`'s memory lines: every figure of an instance's memory record that differs
/// between A and B (exact figures: any difference is a change), and the instances with a
/// memory record on one side only.
pub fn compare_lines(
    a: &crate::dataset::load::Dataset,
    b: &crate::dataset::load::Dataset,
) -> Vec<String> {
    let mut out = Vec::new();
    if a.memory.is_empty() && b.memory.is_empty() {
        return out;
    }
    let (mut same, mut changed) = (0usize, 0usize);
    for lb in &b.memory {
        let mb = &lb.memory;
        let key = format!("{}/{}", mb.candidate, mb.label);
        let Some(ma) = a.memory(&mb.candidate, &mb.label) else {
            out.push(format!("memory {key}: only in B"));
            continue;
        };
        let mut diffs = Vec::new();
        let sa = ma.static_size.as_ref().map(|s| s.algorithm.total());
        let sb = mb.static_size.as_ref().map(|s| s.algorithm.total());
        if sa != sb {
            diffs.push(change("algorithm static", sa, sb));
        }
        for ob in &mb.operations {
            let Some(oa) = ma.op(&ob.key()) else {
                continue;
            };
            for (what, x, y) in [
                ("stack", oa.stack_bytes, ob.stack_bytes),
                ("heap peak", oa.heap_peak_bytes(), ob.heap_peak_bytes()),
                ("left allocated", oa.leak_bytes(), ob.leak_bytes()),
                (
                    "allocations",
                    oa.repeat.as_ref().map(|h| h.allocations),
                    ob.repeat.as_ref().map(|h| h.allocations),
                ),
            ] {
                if x != y {
                    diffs.push(format!("{} {}", ob.key(), change(what, x, y)));
                }
            }
        }
        if diffs.is_empty() {
            same += 1;
        } else {
            changed += 1;
            out.push(format!("memory {key}: {}", diffs.join("; ")));
        }
    }
    for la in &a.memory {
        if b.memory(&la.memory.candidate, &la.memory.label).is_none() {
            out.push(format!(
                "memory {}/{}: only in A",
                la.memory.candidate, la.memory.label
            ));
        }
    }
    out.push(format!(
        "compare memory: {} instance(s) in both, {changed} changed, {same} unchanged",
        changed + same
    ));
    out
}

fn change(what: &str, a: Option<u64>, b: Option<u64>) -> String {
    let t = |v: Option<u64>| v.map_or_else(|| DASH.to_string(), format::memory_bytes);
    let pct = match (a, b) {
        (Some(a), Some(b)) if a > 0 => {
            format!(" ({})", format::signed_pct(b as f64 / a as f64 - 1.0))
        }
        _ => String::new(),
    };
    format!("{what} {} -> {}{pct}", t(a), t(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::load::{Dataset, LoadedMemory};
    use crate::dataset::memory::{HeapCall, StaticSize};
    use crate::dataset::schema::Op;

    fn ds(stack: u64, peak: u64) -> Dataset {
        let op = OpMemory {
            operation: Op::Enc,
            status: ProcessStatus::Complete,
            stack_bytes: Some(stack),
            first: Some(HeapCall {
                allocations: 1,
                allocated_bytes: peak,
                peak_live_bytes: peak,
                ..HeapCall::default()
            }),
            repeat: None,
            ..OpMemory::default()
        };
        let memory = MemoryRecord {
            candidate: "c".into(),
            label: "l".into(),
            status: ProcessStatus::Complete,
            operations: vec![op],
            static_size: Some(StaticSize::default()),
            ..MemoryRecord::default()
        };
        Dataset {
            memory: vec![LoadedMemory {
                path: "memory/c/l.json".into(),
                memory,
            }],
            ..Dataset::default()
        }
    }

    #[test]
    fn compare_names_each_changed_figure() {
        let lines = compare_lines(&ds(1000, 64), &ds(1200, 64));
        assert_eq!(
            lines,
            [
                "memory c/l: enc stack 1000 -> 1200 (+20.0%)",
                "compare memory: 1 instance(s) in both, 1 changed, 0 unchanged"
            ]
        );
        let same = compare_lines(&ds(1000, 64), &ds(1000, 64));
        assert_eq!(
            same,
            ["compare memory: 1 instance(s) in both, 0 changed, 1 unchanged"]
        );
        assert!(compare_lines(&Dataset::default(), &Dataset::default()).is_empty());
    }

    #[test]
    fn the_per_call_peak_is_stack_plus_heap_of_the_largest_operation() {
        let d = ds(1000, 64);
        assert_eq!(
            per_call_peak(&d.memory[0].memory),
            Some((1064, "enc".into()))
        );
    }
}
