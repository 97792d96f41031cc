//! Memory records (issue 36): `memory/<cand>/<label>.json`, written by the campaign's `memory`
//! phase, published and merged with the records, and recomputed by `validate` where they
//! can be. One record per instance: the static size of its objects by origin, and per
//! operation the heap the library's own calls used during one call and the painted stack.
//! These are the algorithm's figures; the records' `peak_rss_bytes` and image size remain
//! the reference harness's whole-process proxies.

use super::schema::{Op, ProcessStatus};
use serde::{Deserialize, Serialize};

/// The version of this record's layout.
pub const MEMORY_SCHEMA: u32 = 1;

/// Bytes of stack the painting can see (`child::stack::STACK_BYTES`). A call that goes
/// deeper hits the guard page below the painted stack and is killed (SIGSEGV): its record
/// is failed, never a figure at the limit.
pub const STACK_LIMIT_BYTES: u64 = 32 << 20;

/// Where an object linked into an instance's library came from.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum CodeOrigin {
    /// The candidate's own sources: the algorithm.
    Algorithm,
    /// The ICCS helper files (drng.c, auxfunc.c) the package ships or the official ones.
    Helpers,
    /// What ngcc-perf adds: the shim (with randombytes) and the embedded ICCS helpers.
    Harness,
}

impl CodeOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            CodeOrigin::Algorithm => "algorithm",
            CodeOrigin::Helpers => "helpers",
            CodeOrigin::Harness => "harness",
        }
    }
}

/// Allocated section bytes of relocatable objects, as `size -A` would add them up by kind.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sections {
    /// Executable code.
    pub text: u64,
    /// Read-only data (constants, tables, strings).
    pub rodata: u64,
    /// Initialised writable data (including data made read-only after relocation).
    pub data: u64,
    /// Zero-initialised data (and common symbols).
    pub bss: u64,
}

impl Sections {
    pub fn add(&mut self, o: &Sections) {
        self.text += o.text;
        self.rodata += o.rodata;
        self.data += o.data;
        self.bss += o.bss;
    }

    pub fn total(&self) -> u64 {
        self.text + self.rodata + self.data + self.bss
    }
}

/// One object file of the timed build.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectSize {
    /// The source file's name (`poly.c`, `ngcc_shim.c`).
    pub source: String,
    pub origin: Option<CodeOrigin>,
    #[serde(flatten)]
    pub sections: Sections,
}

/// Static size of an instance by origin; each sum is over `objects` of that origin.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct StaticSize {
    pub algorithm: Sections,
    pub helpers: Sections,
    pub harness: Sections,
    pub objects: Vec<ObjectSize>,
}

impl StaticSize {
    /// The sums of `objects` by origin (what the record's sums must be).
    pub fn from_objects(objects: Vec<ObjectSize>) -> StaticSize {
        let mut s = StaticSize {
            objects,
            ..StaticSize::default()
        };
        for o in &s.objects {
            match o.origin {
                Some(CodeOrigin::Algorithm) => s.algorithm.add(&o.sections),
                Some(CodeOrigin::Helpers) => s.helpers.add(&o.sections),
                Some(CodeOrigin::Harness) => s.harness.add(&o.sections),
                None => {}
            }
        }
        s
    }
}

/// The library's allocator calls during one counted call of an operation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct HeapCall {
    /// malloc, calloc, realloc, posix_memalign, aligned_alloc, … and anonymous mmap.
    pub allocations: u64,
    pub allocated_bytes: u64,
    /// The most bytes allocated in this call that were live at once.
    pub peak_live_bytes: u64,
    /// Bytes allocated in this call still live after it returned (a leak per call).
    pub live_after_bytes: u64,
    pub live_after_blocks: u64,
    pub frees: u64,
    /// Blocks allocated before the call (setup, an earlier call) freed in it.
    pub frees_of_earlier: u64,
    /// Frees of pointers no wrapped allocator returned (libc's own, or not heap at all).
    pub foreign_frees: u64,
    pub mmap_calls: u64,
    pub mmap_bytes: u64,
    pub untracked_munmaps: u64,
    /// brk, mmap, mremap or munmap asked of the kernel around the allocator (syscall(2), or
    /// the trapped `syscall` instruction): memory the figures above do not see.
    pub raw_syscalls: u64,
    /// What those raw calls asked for: anonymous mmap lengths and brk growth.
    #[serde(default)]
    pub raw_syscall_bytes: u64,
    /// The ICCS helper files' own allocations (drng.c, auxfunc.c), not in the figures above.
    #[serde(default)]
    pub helper_allocations: u64,
    #[serde(default)]
    pub helper_allocated_bytes: u64,
    #[serde(default)]
    pub helper_peak_live_bytes: u64,
}

/// One operation of the instance.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct OpMemory {
    pub operation: Op,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub input_bytes: u64,
    pub status: ProcessStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The first counted call after the setup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<HeapCall>,
    /// The same operation once more: what every later call costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<HeapCall>,
    /// Peak stack of the call beyond an empty call, by painting (the largest of the calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_bytes: Option<u64>,
    /// NIST API: the stack the harness's randombytes callback (a DRBG in our Rust) uses,
    /// painted alone. A call's `stack_bytes` includes it when the deepest point was inside
    /// the callback (the library's own depth at the call plus this).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rng_callback_stack_bytes: Option<u64>,
    /// Allocations by the library's constructors (at load, before any call).
    pub load_allocations: u64,
    pub load_bytes: u64,
    /// Allocations between the counted calls (seeding, setup).
    pub outside_allocations: u64,
    pub outside_bytes: u64,
    /// Foreign frees anywhere in the job, counted calls or not.
    pub foreign_frees_total: u64,
    /// Raw brk/mmap/mremap/munmap anywhere in the job (syscall(2) and, where the trap is
    /// installed, the `syscall` instruction in the library's own code).
    pub raw_syscalls_total: u64,
    /// Blocks the recorder's table could not hold: the heap figures are incomplete.
    pub untracked_blocks: u64,
    /// Whether the `syscall` instruction in the library's code was trapped (seccomp).
    #[serde(default)]
    pub raw_trap: bool,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl OpMemory {
    pub fn key(&self) -> String {
        self.operation.key(self.input_bytes)
    }

    /// Peak heap of the operation: the larger of its two counted calls.
    pub fn heap_peak_bytes(&self) -> Option<u64> {
        let a = self.first.as_ref().map(|h| h.peak_live_bytes);
        let b = self.repeat.as_ref().map(|h| h.peak_live_bytes);
        a.max(b)
    }

    /// What every call leaves allocated: the repeated call's leak.
    pub fn leak_bytes(&self) -> Option<u64> {
        self.repeat
            .as_ref()
            .or(self.first.as_ref())
            .map(|h| h.live_after_bytes)
    }

    /// The larger of a figure over the two counted calls.
    fn per_call(&self, f: fn(&HeapCall) -> u64) -> u64 {
        [&self.first, &self.repeat]
            .into_iter()
            .flatten()
            .map(f)
            .max()
            .unwrap_or(0)
    }

    /// What makes the heap figures not the whole story, one phrase each (empty: none).
    pub fn findings(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.load_allocations > 0 {
            v.push(format!(
                "constructor allocated {} B in {} block(s) at load",
                self.load_bytes, self.load_allocations
            ));
        }
        let foreign = self.per_call(|h| h.foreign_frees);
        if foreign > 0 {
            v.push(format!(
                "freed {foreign} pointer(s) per call it did not allocate"
            ));
        } else if self.foreign_frees_total > 0 {
            v.push(format!(
                "freed {} pointer(s) it did not allocate, outside the counted calls",
                self.foreign_frees_total
            ));
        }
        let raw = self.per_call(|h| h.raw_syscalls);
        if raw > 0 {
            v.push(format!(
                "{raw} raw brk/mmap/mremap/munmap syscall(s) per call ({} B asked), not in the heap figures",
                self.per_call(|h| h.raw_syscall_bytes)
            ));
        } else if self.raw_syscalls_total > 0 {
            v.push(format!(
                "{} raw brk/mmap/mremap/munmap syscall(s) outside the counted calls",
                self.raw_syscalls_total
            ));
        }
        let helpers = self.per_call(|h| h.helper_peak_live_bytes);
        if helpers > 0 {
            v.push(format!(
                "ICCS helper files: heap peak {helpers} B in {} allocation(s) per call, apart",
                self.per_call(|h| h.helper_allocations)
            ));
        }
        if self.untracked_blocks > 0 {
            v.push(format!(
                "{} block(s) not tracked: heap figures incomplete",
                self.untracked_blocks
            ));
        }
        v
    }
}

/// `memory/<cand>/<label>.json`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct MemoryRecord {
    pub schema: u32,
    pub candidate: String,
    pub label: String,
    /// `complete` (every operation measured), `partial`, or `failed` (no operation: the
    /// relink failed, or every job did).
    pub status: ProcessStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_library_sha256: Option<String>,
    /// The relinked library with the heap recorder (`csrc/heap/ngcc_heap.c`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorder_library_sha256: Option<String>,
    /// sha256 of the recorder's source: a changed recorder redoes the record.
    #[serde(default)]
    pub recorder_sha256: String,
    #[serde(default)]
    pub wrapped_symbols: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_size: Option<StaticSize>,
    /// The painting's depth limit in bytes (`STACK_LIMIT_BYTES`).
    pub stack_limit_bytes: u64,
    #[serde(default)]
    pub operations: Vec<OpMemory>,
    #[serde(default)]
    pub utc: String,
}

impl MemoryRecord {
    pub fn op(&self, key: &str) -> Option<&OpMemory> {
        self.operations.iter().find(|o| o.key() == key)
    }

    /// The status the operations give the record.
    pub fn status_of(ops: &[OpMemory]) -> ProcessStatus {
        let ok = ops
            .iter()
            .filter(|o| o.status == ProcessStatus::Complete)
            .count();
        if !ops.is_empty() && ok == ops.len() {
            ProcessStatus::Complete
        } else if ok > 0 {
            ProcessStatus::Partial
        } else {
            ProcessStatus::Failed
        }
    }
}

/// What `validate` recomputes of a memory record at `path` (relative to the dataset), with
/// the build entry of its instance: one line per problem, naming the file and the field.
pub fn problems(path: &str, m: &MemoryRecord, library_sha256: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let want = format!("memory/{}/{}.json", m.candidate, m.label);
    if path != want {
        out.push(format!("{path}: names {want}"));
    }
    if m.schema != MEMORY_SCHEMA {
        out.push(format!(
            "{path}: schema {} (this ngcc-perf reads {MEMORY_SCHEMA})",
            m.schema
        ));
    }
    if m.timed_library_sha256.as_deref() != library_sha256 {
        out.push(format!(
            "{path}: timed_library_sha256 {:?} is not build.json's library_sha256 {:?}",
            m.timed_library_sha256, library_sha256
        ));
    }
    let status = MemoryRecord::status_of(&m.operations);
    if m.status != status {
        out.push(format!(
            "{path}: status {} but its operations give {status}",
            m.status
        ));
    }
    if let Some(s) = &m.static_size {
        let again = StaticSize::from_objects(s.objects.clone());
        for (name, a, b) in [
            ("algorithm", s.algorithm, again.algorithm),
            ("helpers", s.helpers, again.helpers),
            ("harness", s.harness, again.harness),
        ] {
            if a != b {
                out.push(format!(
                    "{path}: static_size.{name} {a:?} but its objects sum to {b:?}"
                ));
            }
        }
    }
    for o in &m.operations {
        let at = format!("{path}: {}", o.key());
        if o.status != ProcessStatus::Complete {
            continue;
        }
        let (Some(first), Some(repeat), Some(stack)) = (&o.first, &o.repeat, o.stack_bytes) else {
            out.push(format!("{at}: complete without both calls and the stack"));
            continue;
        };
        if stack > m.stack_limit_bytes {
            out.push(format!(
                "{at}: stack_bytes {stack} beyond the painted {}",
                m.stack_limit_bytes
            ));
        }
        for (which, h) in [("first", first), ("repeat", repeat)] {
            if h.peak_live_bytes > h.allocated_bytes
                || h.live_after_bytes > h.peak_live_bytes
                || h.live_after_blocks > h.allocations
                || (h.allocations == 0 && h.allocated_bytes > 0)
            {
                out.push(format!(
                    "{at}: {which}: live after ({} B, {} blocks) <= peak ({} B) <= allocated ({} B, {} blocks) does not hold",
                    h.live_after_bytes,
                    h.live_after_blocks,
                    h.peak_live_bytes,
                    h.allocated_bytes,
                    h.allocations
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_follow_the_objects_origin() {
        let o = |origin, text| ObjectSize {
            source: "x.c".into(),
            origin: Some(origin),
            sections: Sections {
                text,
                rodata: 1,
                data: 2,
                bss: 3,
            },
        };
        let s = StaticSize::from_objects(vec![
            o(CodeOrigin::Algorithm, 100),
            o(CodeOrigin::Algorithm, 50),
            o(CodeOrigin::Harness, 7),
        ]);
        assert_eq!(s.algorithm.text, 150);
        assert_eq!(s.algorithm.total(), 162);
        assert_eq!(s.harness.text, 7);
        assert_eq!(s.helpers, Sections::default());
        let json = serde_json::to_string(&s.objects[0]).unwrap();
        assert_eq!(
            json,
            r#"{"source":"x.c","origin":"algorithm","text":100,"rodata":1,"data":2,"bss":3}"#
        );
    }

    #[test]
    fn validation_recomputes_sums_and_status() {
        let op = OpMemory {
            status: ProcessStatus::Complete,
            first: Some(HeapCall {
                allocations: 1,
                allocated_bytes: 10,
                peak_live_bytes: 10,
                ..HeapCall::default()
            }),
            repeat: Some(HeapCall::default()),
            stack_bytes: Some(100),
            ..OpMemory::default()
        };
        let mut m = MemoryRecord {
            schema: MEMORY_SCHEMA,
            candidate: "c".into(),
            label: "l".into(),
            status: ProcessStatus::Complete,
            timed_library_sha256: Some("ab".into()),
            stack_limit_bytes: STACK_LIMIT_BYTES,
            operations: vec![op],
            static_size: Some(StaticSize::default()),
            ..MemoryRecord::default()
        };
        assert_eq!(
            problems("memory/c/l.json", &m, Some("ab")),
            Vec::<String>::new()
        );
        m.status = ProcessStatus::Partial;
        m.static_size.as_mut().unwrap().algorithm.text = 5;
        m.operations[0].first.as_mut().unwrap().peak_live_bytes = 11;
        let p = problems("memory/c/l.json", &m, Some("cd"));
        assert_eq!(p.len(), 4, "{p:#?}");
    }

    #[test]
    fn findings_name_what_the_counts_miss() {
        let op = OpMemory {
            load_allocations: 1,
            load_bytes: 4096,
            foreign_frees_total: 2,
            raw_syscalls_total: 1,
            ..OpMemory::default()
        };
        assert_eq!(op.findings().len(), 3);
        assert!(OpMemory::default().findings().is_empty());
    }
}
