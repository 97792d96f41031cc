//! What the scripted-runner tests of the phases share: a run directory on tmpfs with one
//! built library the runner never loads, and the ICCS KEM instance `toy/l1` that names it.

use crate::campaign::Selected;
use crate::candidate::{Api, Candidate, Instance, Kind};
use crate::dataset::schema::{BuildEntry, KatStatus};
use crate::rundir::RunDir;
use crate::util::sha256_file;

/// A fresh run directory (`prefix` names its temporary folder) with `lib/toy/libl1.so`.
pub struct ToyRun {
    pub dir: tempfile::TempDir,
    pub run: RunDir,
    /// The build entry of `toy/l1`: KAT PASS, its library and that library's digest.
    pub entry: BuildEntry,
}

impl ToyRun {
    pub fn new(prefix: &str) -> ToyRun {
        // On tmpfs where there is one: every atomic write syncs its file, and on a disk busy
        // with builds those syncs were 0.65 of the measure tests' 0.69 s (0.04 s on tmpfs).
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in("/dev/shm")
            .or_else(|_| tempfile::tempdir())
            .unwrap();
        let run = RunDir::open(&dir.path().join("run")).unwrap();
        let lib = "lib/toy/libl1.so";
        std::fs::create_dir_all(run.path("lib/toy")).unwrap();
        std::fs::write(run.path(lib), b"a library the scripted runner never loads").unwrap();
        let entry = BuildEntry {
            candidate: "toy".into(),
            label: "l1".into(),
            kat: KatStatus::Pass,
            library: Some(lib.into()),
            library_sha256: Some(sha256_file(&run.path(lib)).unwrap()),
            ..BuildEntry::default()
        };
        ToyRun { dir, run, entry }
    }

    /// The candidate `toy` (an ICCS KEM) with its one instance `l1`, rooted in the folder.
    pub fn selected(&self) -> Selected {
        let inst = Instance {
            label: "l1".into(),
            dir: ".".into(),
            ..Instance::default()
        };
        let cand = Candidate {
            id: "toy".into(),
            algorithm: "Toy".into(),
            kind: Kind::Kem,
            api: Api::Iccs,
            variant: None,
            package: None,
            iccs_helpers: None,
            instances: vec![inst.clone()],
            root: self.dir.path().to_path_buf(),
        };
        Selected { cand, inst }
    }
}
