//! The memory phase's relink (issue 36): the instance's proven objects (see `relink::prove`)
//! plus the heap recorder `csrc/heap/ngcc_heap.c`, with the linker wrapping every allocator
//! entry point the objects call. Only the candidate's own objects are relinked, so the
//! recorder sees the candidate's calls and nothing of the harness, libc or the loader. Also
//! the static size of those objects by origin (algorithm, the ICCS helpers, the harness).

use super::relink::{self, RelinkError, fail};
use crate::build::flags::FlagSet;
use crate::build::instance::{self, Paths};
use crate::build::{BuildLimits, BuildOptions};
use crate::candidate::{Candidate, Instance};
use crate::dataset::memory::{CodeOrigin, ObjectSize, Sections, StaticSize};
use crate::dataset::schema::{BuildEntry, HelperOrigin};
use crate::util::{atomic_write, sha256_hex};
use object::{Object, ObjectSection, ObjectSymbol, SectionFlags, SectionKind};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The symbols wrapped: the C allocator, anonymous mappings, and syscall(2) (how C reaches
/// brk or mmap around the allocator). Wrapping a symbol no object calls changes nothing.
pub const HEAP_WRAPS: &[&str] = &[
    "malloc",
    "calloc",
    "realloc",
    "reallocarray",
    "free",
    "posix_memalign",
    "aligned_alloc",
    "memalign",
    "valloc",
    "mmap",
    "munmap",
    "syscall",
];
/// The recorder's entry points are `ngcc_heap_*`, inside the build's own export pattern.
const HEAP_EXPORTS: &str = "{\n  global: ngcc_*;\n  local: *;\n};\n";

/// sha256 of the recorder's source (records name it: a changed recorder redoes them).
pub fn recorder_sha256() -> String {
    sha256_hex(crate::csrc::HEAP_C.as_bytes())
}

/// `RUN/memory-lib/<cand>/lib<label>.so` and its work folder `RUN/memory-lib/<cand>/<label>/`.
pub fn paths(run: &Path, cand: &str, label: &str) -> (PathBuf, PathBuf) {
    let dir = run.join("memory-lib").join(cand);
    (dir.join(label), dir.join(format!("lib{label}.so")))
}

#[derive(Debug, Clone)]
pub struct HeapRelinked {
    pub library: PathBuf,
    pub sha256: String,
    pub static_size: StaticSize,
}

/// Proves the objects, measures their sections, and links the recording library.
pub fn relink(
    run: &Path,
    cand: &Candidate,
    inst: &Instance,
    entry: &BuildEntry,
    options: &BuildOptions,
) -> Result<HeapRelinked, RelinkError> {
    let (work, library) = paths(run, &cand.id, &inst.label);
    std::fs::create_dir_all(&work).map_err(|e| relink::io("creating the work folder", e))?;
    let mut log = String::new();
    let result = (|| -> Result<HeapRelinked, RelinkError> {
        let (objects, ldlibs) = relink::prove(run, cand, inst, entry, options, &work, &mut log)?;
        let static_size = static_size(run, cand, inst, entry, options, &objects)?;
        let objects = helpers_apart(
            &work.join("helpers"),
            &objects,
            &static_size,
            &mut log,
            options.limits,
        )?;
        let obj = relink::compile_wrapper(
            &work.join("heap"),
            &[("ngcc_heap.c", crate::csrc::HEAP_C)],
            &mut log,
            options.limits,
        )?;
        let wraps: Vec<String> = HEAP_WRAPS.iter().map(|s| s.to_string()).collect();
        let sha256 = relink::link_wrapped(
            &work,
            &library,
            &objects,
            &obj,
            &ldlibs,
            &wraps,
            HEAP_EXPORTS,
            &mut log,
            options.limits,
        )?;
        Ok(HeapRelinked {
            library: library.clone(),
            sha256,
            static_size,
        })
    })();
    if let Err(e) = &result {
        let _ = writeln!(log, "relink failed: {}", e.reason);
    }
    let _ = atomic_write(&work.join("relink.log"), log.as_bytes());
    result
}

/// The allocator calls the ICCS helpers' objects make, renamed in copies of those objects
/// (`objcopy --redefine-sym`) to the recorder's `ngcc_heap_h_*`, which count them apart.
const HELPER_ALLOCATOR: &[&str] = &[
    "malloc",
    "calloc",
    "realloc",
    "reallocarray",
    "free",
    "posix_memalign",
    "aligned_alloc",
    "memalign",
    "valloc",
];

/// `objects` with each helper object replaced by its renamed copy in `dir`.
fn helpers_apart(
    dir: &Path,
    objects: &[PathBuf],
    size: &StaticSize,
    log: &mut String,
    limits: BuildLimits,
) -> Result<Vec<PathBuf>, RelinkError> {
    let mut out = Vec::new();
    for (i, (obj, o)) in objects.iter().zip(&size.objects).enumerate() {
        if o.origin != Some(CodeOrigin::Helpers) {
            out.push(obj.clone());
            continue;
        }
        std::fs::create_dir_all(dir).map_err(|e| relink::io("creating the helpers folder", e))?;
        let copy = dir.join(format!("{i:03}_{}.o", o.source.trim_end_matches(".c")));
        let mut cmd = std::process::Command::new("objcopy");
        for f in HELPER_ALLOCATOR {
            cmd.arg(format!("--redefine-sym={f}=ngcc_heap_h_{f}"));
        }
        cmd.arg(obj).arg(&copy);
        relink::run_logged(&mut cmd, log, limits)?;
        out.push(copy);
    }
    Ok(out)
}

/// The sections of each object of the timed build, with the origin of its source.
fn static_size(
    run: &Path,
    cand: &Candidate,
    inst: &Instance,
    entry: &BuildEntry,
    options: &BuildOptions,
    objects: &[PathBuf],
) -> Result<StaticSize, RelinkError> {
    let flag_set = FlagSet::from_name(&entry.flags)
        .ok_or_else(|| fail(format!("flag set {:?} is not relinkable", entry.flags)))?;
    let paths = Paths::new(run, &cand.id, &inst.label);
    let plan = instance::plan(cand, inst, flag_set, &paths, options)
        .map_err(|e| fail(format!("cannot plan the build again: {e:#}")))?;
    let mut out = Vec::new();
    for (src, obj) in plan.sources.iter().zip(objects) {
        let helper = plan.helpers.iter().find(|(_, p)| p == src).map(|h| h.0);
        let origin = match helper {
            Some(HelperOrigin::Package | HelperOrigin::Official) => CodeOrigin::Helpers,
            Some(HelperOrigin::Embedded) => CodeOrigin::Harness,
            // Generated files (the shim and its randombytes) live in the build's work folder.
            None if src.starts_with(&paths.work) => CodeOrigin::Harness,
            None => CodeOrigin::Algorithm,
        };
        let data = std::fs::read(obj).map_err(|e| relink::io("reading an object", e))?;
        let sections = sections_of(&data).map_err(|e| fail(format!("{}: {e}", obj.display())))?;
        out.push(ObjectSize {
            source: src
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default(),
            origin: Some(origin),
            sections,
        });
    }
    Ok(StaticSize::from_objects(out))
}

/// Allocated section bytes of one relocatable object by kind; common symbols count as bss.
pub fn sections_of(data: &[u8]) -> Result<Sections, object::read::Error> {
    let file = object::File::parse(data)?;
    let mut s = Sections::default();
    for sec in file.sections() {
        let SectionFlags::Elf { sh_flags } = sec.flags() else {
            continue;
        };
        if sh_flags & u64::from(object::elf::SHF_ALLOC) == 0 {
            continue;
        }
        let n = sec.size();
        match sec.kind() {
            SectionKind::UninitializedData | SectionKind::UninitializedTls => s.bss += n,
            _ if sh_flags & u64::from(object::elf::SHF_EXECINSTR) != 0 => s.text += n,
            _ if sh_flags & u64::from(object::elf::SHF_WRITE) != 0 => s.data += n,
            _ => s.rodata += n,
        }
    }
    s.bss += file
        .symbols()
        .filter(|sym| sym.is_common())
        .map(|sym| sym.size())
        .sum::<u64>();
    Ok(s)
}
