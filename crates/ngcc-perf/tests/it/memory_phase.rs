//! Phase `memory` through the binary, on the zoo's memory toy (tests/zoo/memory/mem.c): the
//! known allocations and stack array come out as exactly those figures, and the hostile
//! instances (constructor allocation, foreign free, raw mmap) are reported, not zero.

use crate::common::*;
use ngcc_perf::dataset::memory::{CodeOrigin, MemoryRecord, OpMemory};
use std::path::Path;

fn record(run: &Path, label: &str) -> MemoryRecord {
    let path = run.join("memory/zoo-memory").join(format!("{label}.json"));
    ngcc_perf::util::read_json(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

fn op<'a>(r: &'a MemoryRecord, key: &str) -> &'a OpMemory {
    let o = r
        .op(key)
        .unwrap_or_else(|| panic!("{} has no {key}", r.label));
    assert_eq!(o.status.as_str(), "complete", "{key}: {:?}", o.error);
    o
}

#[test]
fn the_memory_toy_shows_its_known_allocations_and_the_hostile_ones_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("r");
    let cands = manifest_dir().join("tests/zoo/memory");
    let stderr = campaign_ok("build,kat,memory", &cands, &run, &[]);
    assert!(
        stderr.contains("memory zoo-memory known: complete"),
        "{stderr}"
    );

    let known = record(&run, "known");
    assert_eq!(known.status.as_str(), "complete");
    assert_eq!(known.stack_limit_bytes, 32 << 20);
    let build = build_entry(&run, "zoo-memory/known");
    assert_eq!(known.timed_library_sha256, build.library_sha256);

    // keygen: one 4 KiB block per call, never freed.
    let keygen = op(&known, "keygen");
    for h in [keygen.first.as_ref(), keygen.repeat.as_ref()] {
        let h = h.expect("both calls counted");
        assert_eq!(
            (h.allocations, h.allocated_bytes, h.peak_live_bytes),
            (1, 4096, 4096)
        );
        assert_eq!(
            (h.live_after_bytes, h.live_after_blocks, h.frees),
            (4096, 1, 0)
        );
    }
    assert_eq!(keygen.leak_bytes(), Some(4096));
    // enc: 3 x 64 KiB live at once, all freed.
    let enc = op(&known, "enc");
    let h = enc.repeat.as_ref().unwrap();
    assert_eq!(
        (h.allocations, h.allocated_bytes, h.peak_live_bytes, h.frees),
        (3, 3 * 65536, 3 * 65536, 3)
    );
    assert_eq!(h.live_after_bytes, 0);
    // dec: 1 MiB from calloc, freed; a 100 KiB stack array.
    let dec = op(&known, "dec");
    let h = dec.first.as_ref().unwrap();
    assert_eq!(
        (
            h.allocations,
            h.allocated_bytes,
            h.peak_live_bytes,
            h.live_after_bytes
        ),
        (1, 1 << 20, 1 << 20, 0)
    );
    let stack = dec.stack_bytes.unwrap();
    // The array plus the frames around it (a few hundred bytes at most).
    assert!((100 * 1024..100 * 1024 + 4096).contains(&stack), "{stack}");
    assert!(keygen.stack_bytes.unwrap() < 8192);
    for o in &known.operations {
        assert!(o.findings().is_empty(), "{}: {:?}", o.key(), o.findings());
        assert_eq!(o.load_allocations, 0);
    }

    // Static size by origin: mem.c is the algorithm, the shim is ours.
    let size = known.static_size.as_ref().unwrap();
    let origin = |src: &str| {
        size.objects
            .iter()
            .find(|o| o.source == src)
            .unwrap_or_else(|| panic!("no object of {src}"))
    };
    assert_eq!(origin("mem.c").origin, Some(CodeOrigin::Algorithm));
    assert_eq!(origin("ngcc_shim.c").origin, Some(CodeOrigin::Harness));
    assert_eq!(size.algorithm, origin("mem.c").sections);
    assert!(size.algorithm.text > 0 && size.harness.text > 0);
    assert_eq!(size.helpers.total(), 0);

    // Hostile instances: reported as such.
    let ctor = record(&run, "ctor");
    let k = op(&ctor, "keygen");
    assert_eq!((k.load_allocations, k.load_bytes), (1, 1000));
    assert!(
        k.findings()[0].contains("constructor"),
        "{:?}",
        k.findings()
    );
    let foreign = record(&run, "foreign-free");
    let e = op(&foreign, "enc");
    assert_eq!(e.repeat.as_ref().unwrap().foreign_frees, 1);
    assert!(e.findings().iter().any(|f| f.contains("did not allocate")));
    let raw = record(&run, "raw-mmap");
    let e = op(&raw, "enc");
    let h = e.repeat.as_ref().unwrap();
    assert_eq!((h.raw_syscalls, h.raw_syscall_bytes), (2, 65536));
    assert_eq!(h.mmap_calls, 0, "around the mmap wrapper");
    assert!(e.findings().iter().any(|f| f.contains("raw")));
    // The syscall instruction in the library's code: trapped (seccomp), performed, counted.
    let asm = record(&run, "raw-asm");
    let e = op(&asm, "enc");
    assert!(e.raw_trap, "the trap is installed on x86-64 and aarch64");
    let h = e.repeat.as_ref().unwrap();
    assert_eq!((h.raw_syscalls, h.raw_syscall_bytes), (2, 65536));
    assert!(e.findings().iter().any(|f| f.contains("raw")));
    // Nothing trapped where the library makes no raw call (libc's own syscalls never are).
    assert!(
        known
            .operations
            .iter()
            .all(|o| o.raw_trap && o.raw_syscalls_total == 0)
    );

    // A second run has nothing to redo.
    let again = campaign_ok("memory", &cands, &run, &[]);
    assert!(!again.contains("redone"), "{again}");

    // `known` timed too, so an ordered page has it as its group's representative.
    campaign_ok(
        "calibrate,measure",
        &cands,
        &run,
        &[
            "--only",
            "zoo-memory/known",
            "--allow-unfixed-host",
            "--trial-target",
            "0.002",
            "--op-budget",
            "0.05",
        ],
    );

    // Published, validated (recomputed), shown on the candidate page and the summary.
    let data = dir.path().join("data");
    publish_ok(&run, "mem-test", &data);
    assert!(data.join("memory/zoo-memory/known.json").is_file());
    let cat = data.join("catalog");
    catalog_ok(&data, &cat);
    std::fs::write(
        cat.join("security_targets.csv"),
        "ID;Instance;TargetBits\nzoo-memory;known;128\nzoo-memory;ctor;\nzoo-memory;foreign-free;\n\
         zoo-memory;raw-asm;\nzoo-memory;raw-mmap;\n",
    )
    .unwrap();
    let pages = dir.path().join("pages");
    let out = report(&data, &pages, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let page = std::fs::read_to_string(pages.join("zoo-memory/perf_mem-test.md")).unwrap();
    for row in [
        "| `known` | keygen | ",
        "| 4096 | 4096 | 1 | 4096 | – |",
        "| `known` | enc | ",
        "| 196608 | 196608 | 3 | 0 | – |",
        "| `known` | dec | ",
        "| 1048576 | 1048576 | 1 | 0 | – |",
        "constructor allocated 1000 B in 1 block(s) at load",
        "freed 1 pointer(s) per call it did not allocate",
        "2 raw brk/mmap/mremap/munmap syscall(s) per call (65536 B asked)",
    ] {
        assert!(page.contains(row), "no {row:?} in\n{page}");
    }
    let summary = std::fs::read_to_string(pages.join("performance/summary_mem-test.md")).unwrap();
    assert!(
        summary.contains("Memory per call (algorithm only)"),
        "{summary}"
    );
    // The intro names each row by what it is (the containment row was once introduced as
    // the cycle counter).
    assert!(
        summary.contains(" Containment: candidate code ran jailed: ")
            && !summary.contains("Cycle counter: candidate code"),
        "{summary}"
    );
    // The group's ordered page ranks its representative by memory as well: dec is known's
    // largest call (its 100 KiB stack array and 1 MiB heap block).
    let ordered =
        std::fs::read_to_string(pages.join("performance/ordered_kem_128_mem-test.md")).unwrap();
    let dec = op(&known, "dec");
    let largest = dec.stack_bytes.unwrap() + 1_048_576;
    let row = format!(
        "| 1 | `zoo-memory/known` | {largest} | dec | {} | 1048576 | 4096 | {} |",
        dec.stack_bytes.unwrap(),
        known.static_size.as_ref().unwrap().algorithm.total()
    );
    assert!(
        ordered.contains("## Memory per call (algorithm only)") && ordered.contains(&row),
        "no {row:?} in\n{ordered}"
    );
    let ok = validate(&data, &cat, Some(&pages));
    assert!(ok.status.success(), "{}", text(&ok));
    assert!(text(&ok).contains("memory: 5 record(s), 15 operation(s) checked, 0 problem(s)"));
    // A figure edited by hand is caught.
    let path = data.join("memory/zoo-memory/known.json");
    let mut m: MemoryRecord = ngcc_perf::util::read_json(&path).unwrap();
    m.static_size.as_mut().unwrap().algorithm.text += 1;
    ngcc_perf::util::write_json(&path, &m).unwrap();
    let bad = validate(&data, &cat, None);
    assert!(!bad.status.success());
    assert!(
        text(&bad).contains("static_size.algorithm"),
        "{}",
        text(&bad)
    );
}
