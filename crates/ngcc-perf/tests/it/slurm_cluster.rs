//! A campaign on a real Slurm: a single-node cluster on localhost (munged, slurmctld and
//! slurmd with a generated slurm.conf: 2 CPUs, one partition, select/cons_tres, state under a
//! temporary folder) runs the script `ngcc-perf slurm` prints for a small campaign over the
//! ICCS samples: build and KAT once, an array of 2 tasks with one core each, the merge. Task 2
//! is cancelled mid-measurement (the merge then never runs), resubmitted alone with
//! `bash SCRIPT shard 2`, and the merged dataset must then hold every record exactly once,
//! validate, and match one run directory holding the same records:
//!
//! "The same pages" is defined on the same records, since two measurements never agree: the
//! single run is the shared build run into which every shard's calibrations, records and
//! profiles are copied (their paths moved into it), then every host check of the merged
//! campaign is replayed there by `campaign PHASE --shard K/N --cpu C` one after another (each
//! finds its work done and only checks the host, as one machine running the shards in turn
//! would), and its `ended_utc` set to the shards' last (the one fact a later run cannot share).
//! Published, it must give the merged dataset's files byte for byte (campaign.json aside, and
//! the journal: the hand-assembled single run has none) and the same pages byte for byte.
//!
//! Needs Debian's slurm-wlm and munge. Without them the test fails unless NGCC_REQUIRE_SLURM=0
//! (then it prints SKIPPED; its name says `requires_slurm`); CI sets it to 1. A cluster
//! that is installed but does not start always fails the test, with the daemons' logs.

use crate::common;
use common::*;
use ngcc_perf::dataset::schema::Campaign;
use ngcc_perf::util::{read_json, write_json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const PROGRAMS: &[&str] = &[
    "munged",
    "slurmctld",
    "slurmd",
    "sbatch",
    "scontrol",
    "squeue",
    "scancel",
    "sinfo",
];
/// Shard 1 (of 2): ML-KEM-768-SM3 and the KEX; shard 2: ML-KEM-512-SM3 and SM3-256.
const ONLY: &str = "ML-KEM-512-SM3,ML-KEM-768-SM3,SM3-256,KEX-ML-KEM-768";
/// Small: the jobs run under slurmd, where `/usr/bin/time` does not see their CPU time
/// (5 s per operation cost 65 CPU-s there). Shard 2 still measures for seconds after its
/// first record, in which the test cancels it.
const BUDGET: &[&str] = &[
    "--trial-target",
    "0.1",
    "--op-budget",
    "1",
    "--allow-unfixed-host",
];
const SYSTEM: &str = "slurm_1";
/// Every job of the test together stays well below this.
const PATIENCE: Duration = Duration::from_secs(600);

const KEM: &[&str] = &["keygen", "enc", "dec"];
const KEX: &[&str] = &[
    "exchange", "init_a", "init_b", "pass1", "pass2", "derive_a", "derive_b",
];
const HASH: &[&str] = &[
    "hash_32",
    "hash_128",
    "hash_512",
    "hash_1024",
    "hash_4096",
    "hash_8192",
    "hash_16384",
    "hash_65536",
];

fn expected(instances: &[(&str, &str, &[&str])]) -> Vec<String> {
    let mut v: Vec<String> = instances
        .iter()
        .flat_map(|(c, l, ops)| {
            ops.iter()
                .map(move |o| format!("records/{c}/{l}__{o}.json"))
        })
        .collect();
    v.sort();
    v
}

fn shard_records(k: u32) -> Vec<String> {
    match k {
        1 => expected(&[
            ("kem-s1", "ML-KEM-768-SM3", KEM),
            ("kex-s1", "KEX-ML-KEM-768", KEX),
        ]),
        _ => expected(&[
            ("kem-s1", "ML-KEM-512-SM3", KEM),
            ("hash-s1", "SM3-256", HASH),
        ]),
    }
}

/// A program on PATH or in the sbin folders (the daemons live there; PATH may lack them).
fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    dirs.extend(["/usr/sbin", "/sbin"].map(PathBuf::from));
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

fn missing_programs() -> Option<String> {
    let missing: Vec<&str> = PROGRAMS
        .iter()
        .copied()
        .filter(|p| program(p).is_none())
        .collect();
    (!missing.is_empty()).then(|| format!("{} not installed", missing.join(", ")))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free TCP port")
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into our buffer.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    assert_eq!(rc, 0, "gethostname");
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).into_owned();
    name.split('.').next().unwrap_or(&name).to_string()
}

/// munged, slurmctld and slurmd in the foreground, children of this test; stopped on drop.
struct Cluster {
    state: tempfile::TempDir,
    conf: PathBuf,
    daemons: Vec<(&'static str, Child)>,
}

impl Cluster {
    fn start() -> Result<Cluster, String> {
        // Under /tmp: the munge socket path must stay short (sun_path is 108 bytes).
        let state = tempfile::Builder::new()
            .prefix("ngcc-slurm-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let d = state.path().to_path_buf();
        for sub in ["munge", "state", "spool", "log"] {
            std::fs::create_dir_all(d.join(sub)).map_err(|e| e.to_string())?;
        }
        let key = d.join("munge/munge.key");
        let mut bytes = vec![0u8; 1024];
        std::io::Read::read_exact(
            &mut std::fs::File::open("/dev/urandom").map_err(|e| e.to_string())?,
            &mut bytes,
        )
        .map_err(|e| e.to_string())?;
        std::fs::write(&key, &bytes).map_err(|e| e.to_string())?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400))
            .map_err(|e| e.to_string())?;
        std::fs::set_permissions(d.join("munge"), std::fs::Permissions::from_mode(0o711))
            .map_err(|e| e.to_string())?;
        let socket = d.join("munge/munge.sock");
        let host = hostname();
        let conf = d.join("slurm.conf");
        let p = |s: &str| d.join(s).display().to_string();
        let text = format!(
            "ClusterName=ngcctest\n\
             SlurmctldHost={host}(127.0.0.1)\n\
             SlurmctldPort={}\n\
             SlurmdPort={}\n\
             SlurmUser=root\nSlurmdUser=root\n\
             AuthType=auth/munge\nAuthInfo=socket={}\nCredType=cred/munge\n\
             StateSaveLocation={}\nSlurmdSpoolDir={}\n\
             SlurmctldPidFile={}\nSlurmdPidFile={}\n\
             SlurmctldLogFile={}\nSlurmdLogFile={}\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/affinity\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
             SchedulerType=sched/backfill\nReturnToService=2\nMpiDefault=none\n\
             JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n\
             JobCompType=jobcomp/none\nMinJobAge=3600\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN\n\
             PartitionName=ngcc Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
            free_port(),
            free_port(),
            socket.display(),
            p("state"),
            p("spool"),
            p("slurmctld.pid"),
            p("slurmd.pid"),
            p("log/slurmctld.log"),
            p("log/slurmd.log"),
        );
        std::fs::write(&conf, text).map_err(|e| e.to_string())?;
        let mut cluster = Cluster {
            state,
            conf,
            daemons: Vec::new(),
        };
        cluster.spawn(
            "munged",
            &[
                "--foreground",
                "--force",
                &format!("--key-file={}", key.display()),
                &format!("--socket={}", socket.display()),
                &format!("--pid-file={}", p("munge/munged.pid")),
                &format!("--log-file={}", p("log/munged.log")),
                &format!("--seed-file={}", p("munge/seed")),
            ],
        )?;
        cluster.wait("the munge socket", Duration::from_secs(10), |_| {
            socket.exists()
        })?;
        let conf_s = cluster.conf.display().to_string();
        cluster.spawn("slurmctld", &["-D", "-f", &conf_s])?;
        cluster.spawn("slurmd", &["-D", "-f", &conf_s])?;
        cluster.wait("the node to be idle", Duration::from_secs(60), |c| {
            c.out("sinfo", &["-h", "-o", "%T"]).trim() == "idle"
        })?;
        Ok(cluster)
    }

    fn spawn(&mut self, prog: &'static str, args: &[&str]) -> Result<(), String> {
        let log = self.state.path().join(format!("log/{prog}.out"));
        let f = std::fs::File::create(&log).map_err(|e| e.to_string())?;
        let child = Command::new(program(prog).ok_or(format!("{prog} not found"))?)
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(f.try_clone().map_err(|e| e.to_string())?)
            .stderr(f)
            .spawn()
            .map_err(|e| format!("starting {prog}: {e}"))?;
        self.daemons.push((prog, child));
        Ok(())
    }

    /// Polls `ready` until it holds; an error with the daemons' logs if a daemon died or
    /// `limit` passed.
    fn wait(
        &mut self,
        what: &str,
        limit: Duration,
        ready: impl Fn(&Cluster) -> bool,
    ) -> Result<(), String> {
        let t = Instant::now();
        loop {
            if ready(self) {
                return Ok(());
            }
            let dead = self
                .daemons
                .iter_mut()
                .find_map(|(name, child)| child.try_wait().ok().flatten().map(|s| (*name, s)));
            if let Some((name, status)) = dead {
                return Err(format!(
                    "{name} exited ({status}) while waiting for {what}; {}",
                    self.logs()
                ));
            }
            if t.elapsed() > limit {
                return Err(format!(
                    "no {what} after {} s; {}",
                    limit.as_secs(),
                    self.logs()
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn logs(&self) -> String {
        let mut s = String::new();
        for f in [
            "munged.out",
            "slurmctld.out",
            "slurmd.out",
            "slurmctld.log",
            "slurmd.log",
        ] {
            let text =
                std::fs::read_to_string(self.state.path().join("log").join(f)).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(8).collect();
            s.push_str(&format!(
                "\n--- {f}:\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
        s
    }

    fn cmd(&self, prog: &str) -> Command {
        let mut c = Command::new(prog);
        c.env("SLURM_CONF", &self.conf).stdin(Stdio::null());
        c
    }

    fn out(&self, prog: &str, args: &[&str]) -> String {
        self.cmd(prog)
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// `JobState` of a job, one per array task (empty once unknown).
    fn states(&self, job: &str) -> Vec<String> {
        self.out("scontrol", &["show", "job", "-o", job])
            .lines()
            .filter_map(|l| {
                l.split_whitespace()
                    .find_map(|w| w.strip_prefix("JobState="))
            })
            .map(str::to_string)
            .collect()
    }

    fn queue_empty(&self) -> bool {
        let o = self.cmd("squeue").arg("-h").output();
        o.is_ok_and(|o| o.status.success() && o.stdout.is_empty())
    }

    /// Runs the driver script; returns (stdout, the job ids it printed by kind).
    fn submit(&self, driver: &Path, args: &[&str]) -> BTreeMap<String, String> {
        let o = self
            .cmd("bash")
            .arg(driver)
            .args(args)
            .output()
            .expect("bash");
        assert!(
            o.status.success(),
            "bash {} {args:?} failed: {}",
            driver.display(),
            text(&o)
        );
        let stdout = String::from_utf8_lossy(&o.stdout);
        eprint!("{stdout}");
        stdout
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                let kind = w.next()?;
                (w.next()? == "job").then(|| (kind.to_string(), w.next().unwrap_or("").to_string()))
            })
            .collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Our own cluster: every job in it is this test's.
        let _ = self.cmd("scancel").args(["--partition", "ngcc"]).status();
        let t = Instant::now();
        while !self.queue_empty() && t.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(200));
        }
        for (_, child) in self.daemons.iter_mut().rev() {
            // SAFETY: signalling a child we spawned and have not reaped.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let t = Instant::now();
            while child.try_wait().ok().flatten().is_none() && t.elapsed() < Duration::from_secs(5)
            {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let t = Instant::now();
    while !ready() {
        assert!(t.elapsed() < limit, "no {what} after {} s", limit.as_secs());
        // Each poll runs squeue or scontrol (tens of ms of CPU each).
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The finished files below `dir/sub` with their bytes. A cancel can land inside an atomic
/// write; its temporary file is not a record, and the resumed run removes it.
fn tree(dir: &Path, sub: &str) -> BTreeMap<String, Vec<u8>> {
    ngcc_perf::dataset::load::files_under(dir, sub)
        .into_iter()
        .filter(|rel| !unfinished(rel))
        .map(|rel| {
            let bytes = std::fs::read(dir.join(&rel)).unwrap();
            (rel, bytes)
        })
        .collect()
}

/// Whether a run-relative path names a write a killed process left unfinished.
fn unfinished(rel: &str) -> bool {
    ngcc_perf::rundir::is_unfinished_write(rel.rsplit('/').next().unwrap_or(rel))
}

fn json_files(dir: &Path, sub: &str) -> Vec<String> {
    ngcc_perf::dataset::load::files_under(dir, sub)
        .into_iter()
        .filter(|p| p.ends_with(".json"))
        .collect()
}

fn cpus_of(dir: &Path, records: &[String]) -> Vec<i64> {
    let mut cpus: Vec<i64> = records
        .iter()
        .map(|r| {
            let rec: ngcc_perf::dataset::schema::Record = read_json(&dir.join(r)).unwrap();
            rec.environment.cpu_number.json_i64().unwrap()
        })
        .collect();
    cpus.sort();
    cpus.dedup();
    cpus
}

fn ok(o: &Output, what: &str) -> String {
    assert!(o.status.success(), "{what} failed: {}", text(o));
    text(o)
}

#[test]
fn requires_slurm_array_campaign_merges_like_one_run_and_resumes_a_cancelled_task() {
    let t0 = Instant::now();
    if let Some(missing) = missing_programs() {
        not_available(
            "NGCC_REQUIRE_SLURM",
            &format!("{missing} (apt-get install slurm-wlm munge)"),
        );
        return;
    }
    if pqclean().is_none() {
        return;
    }
    let _timed = measuring();
    let cluster =
        Cluster::start().unwrap_or_else(|e| panic!("the Slurm cluster did not start: {e}"));
    eprintln!(
        "slurm: cluster up after {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    let root = scratch("slurm_cluster");
    let camp = root.join("camp");
    let samples = manifest_dir().join("../../samples/iccs");
    let mut args = vec![
        "slurm",
        "all",
        "--candidates",
        samples.to_str().unwrap(),
        "--run",
        camp.to_str().unwrap(),
    ];
    args.extend([
        "--only", ONLY, "--quick", "--jobs", "2", "--shards", "2", "--system", SYSTEM,
    ]);
    args.extend(BUDGET);
    let driver = root.join("campaign.sh");
    write(&driver, &String::from_utf8_lossy(&run_ok(&args).stdout));

    // 1. Submit; cancel task 2 once it has written a record, before it is done.
    let jobs = cluster.submit(&driver, &[]);
    let (array, merge) = (jobs["array"].clone(), jobs["merge"].clone());
    let shard2 = camp.join("shard-2");
    let t = Instant::now();
    wait_for("record of shard 2", PATIENCE, || {
        assert!(
            !cluster
                .states(&format!("{array}_2"))
                .iter()
                .any(|s| s == "COMPLETED" || s == "FAILED"),
            "task 2 ended before it could be cancelled: {}",
            std::fs::read_to_string(camp.join(format!("logs/ngcc-camp-shard-{array}_2.out")))
                .unwrap_or_default()
        );
        !json_files(&shard2, "records").is_empty()
    });
    assert_eq!(cluster.out("scancel", &[&format!("{array}_2")]), "");
    wait_for("cancelled task 2", PATIENCE, || {
        cluster.states(&format!("{array}_2")) == ["CANCELLED"]
    });
    eprintln!(
        "slurm: build and task 2 up to its first record took {:.1} s, then cancelled",
        t.elapsed().as_secs_f64()
    );
    let before = tree(&shard2, "records");
    let partial = before.len();
    assert!(
        partial > 0 && partial < shard_records(2).len(),
        "{partial} record(s) at the kill"
    );
    wait_for("an empty queue", PATIENCE, || cluster.queue_empty());
    assert_eq!(
        cluster.states(&format!("{array}_1")),
        ["COMPLETED"],
        "task 1"
    );
    assert_eq!(
        cluster.states(&merge),
        ["CANCELLED"],
        "the merge must not run after a cancelled task"
    );
    assert!(!camp.join("dataset").exists());
    // Merging by hand now is refused: shard 2 never finished.
    let early = root.join("early");
    let o = ngcc(&[
        "merge".as_ref(),
        camp.join("shard-1").as_os_str(),
        shard2.as_os_str(),
        "--out".as_ref(),
        early.as_os_str(),
        "--system".as_ref(),
        SYSTEM.as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("shard-2 never finished"), "{}", text(&o));

    // 2. Resubmit index 2 alone: it resumes, and the new merge runs after it.
    let t = Instant::now();
    let again = cluster.submit(&driver, &["shard", "2"]);
    wait_for("an empty queue", PATIENCE, || cluster.queue_empty());
    eprintln!(
        "slurm: resubmitted task 2 and the merge took {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let log =
        |name: &str| std::fs::read_to_string(camp.join("logs").join(name)).unwrap_or_default();
    let merge_log = log(&format!("ngcc-camp-merge-{}.out", again["merge"]));
    assert_eq!(
        cluster.states(&again["array"]),
        ["COMPLETED"],
        "{}",
        log(&format!("ngcc-camp-shard-{}_2.out", again["array"]))
    );
    assert_eq!(
        cluster.states(&again["merge"]),
        ["COMPLETED"],
        "{merge_log}"
    );
    assert!(merge_log.contains("merge: 2 input(s) (shards 1/2, 2/2), 21 record(s), 7 profile(s), 4 KAT log(s) for system slurm_1"), "{merge_log}");
    assert!(merge_log.contains("0 problem(s)"), "{merge_log}");

    // Nothing lost, nothing redone, nothing twice.
    let after = tree(&shard2, "records");
    let left: Vec<String> = ngcc_perf::dataset::load::files_under(&shard2, "records")
        .into_iter()
        .filter(|rel| unfinished(rel))
        .collect();
    assert!(left.is_empty(), "the resumed task left {left:?}");
    for (rel, bytes) in &before {
        assert!(
            after.get(rel) == Some(bytes),
            "{rel} was measured before the kill and must be kept as it was"
        );
    }
    for k in [1, 2] {
        assert_eq!(
            json_files(&camp.join(format!("shard-{k}")), "records"),
            shard_records(k),
            "shard {k}"
        );
    }
    let data = camp.join("dataset");
    let mut all = shard_records(1);
    all.extend(shard_records(2));
    all.sort();
    assert_eq!(json_files(&data, "records"), all);
    // The two tasks ran at once, each on its own core.
    let (c1, c2) = (
        cpus_of(&camp.join("shard-1"), &shard_records(1)),
        cpus_of(&shard2, &before.keys().cloned().collect::<Vec<_>>()),
    );
    assert!(
        c1.len() == 1 && c2.len() == 1 && c1 != c2,
        "task 1 on CPUs {c1:?}, task 2 on {c2:?}"
    );
    // Every shard's host checks, with its host.
    let merged: Campaign = read_json(&data.join("campaign.json")).unwrap();
    let checks = |s: &str| {
        merged
            .host_checks
            .iter()
            .filter(|h| h.shard.as_deref() == Some(s))
            .count()
    };
    assert_eq!(checks("1/2"), 3);
    assert!(
        checks("2/2") >= 5,
        "the cancelled run's checks and the resubmitted run's 3"
    );
    assert!(
        merged
            .host_checks
            .iter()
            .all(|h| h.host.as_deref() == Some(hostname().as_str()))
    );
    assert_eq!(merged.merged_from.len(), 2);
    let catalog = camp.join("catalog");
    let pages = camp.join("pages");
    let o = validate(&data, &catalog, Some(&pages));
    assert!(
        ok(&o, "validate").contains("0 problem(s); report check: system slurm_1"),
        "{}",
        text(&o)
    );
    // The merged dataset carries a journal of every file, linked to the shards' journals; a
    // shard record edited after ngcc-perf wrote it is named, and nothing is merged.
    let journal = std::fs::read_to_string(data.join("journal.txt")).unwrap();
    let rec = &shard_records(1)[0];
    assert!(journal.contains(&format!(" {rec} run=")), "{journal}");
    assert!(journal.contains(" campaign.json run=merged:"), "{journal}");
    let path = camp.join("shard-1").join(rec);
    let honest = std::fs::read(&path).unwrap();
    std::fs::write(&path, [honest.as_slice(), b" "].concat()).unwrap();
    let tampered = root.join("tampered-dataset");
    let o = ngcc(&[
        "merge".as_ref(),
        camp.join("shard-1").as_os_str(),
        shard2.as_os_str(),
        "--out".as_ref(),
        tampered.as_os_str(),
        "--system".as_ref(),
        SYSTEM.as_ref(),
    ]);
    assert!(
        !o.status.success()
            && text(&o).contains(&format!("{rec} was changed after ngcc-perf wrote it"))
            && !tampered.exists(),
        "{}",
        text(&o)
    );
    std::fs::write(&path, honest).unwrap();

    // 3. One run directory with the same records, published.
    let t = Instant::now();
    let single = root.join("single");
    copy_tree(&camp.join("build"), &single);
    for k in [1, 2] {
        let shard = camp.join(format!("shard-{k}"));
        let (from, to) = (shard.display().to_string(), single.display().to_string());
        for sub in ["calibrate", "records", "profile", "memory"] {
            for (rel, bytes) in tree(&shard, sub) {
                let moved = String::from_utf8(bytes).unwrap().replace(&from, &to);
                write(&single.join(&rel), &moved);
            }
        }
    }
    let n_records = json_files(&single, "records").len();
    for h in &merged.host_checks {
        let cpu = h.cpu.to_string();
        let mut extra = vec![
            "--only",
            ONLY,
            "--shard",
            h.shard.as_deref().unwrap(),
            "--cpu",
            &cpu,
        ];
        extra.extend(BUDGET);
        campaign_ok(&h.phase, &samples, &single, &extra);
    }
    assert_eq!(
        json_files(&single, "records").len(),
        n_records,
        "the replay measured nothing"
    );
    assert!(
        !single.join("profile-lib").exists(),
        "the replay relinked nothing"
    );
    let mut c: Campaign = read_json(&single.join("campaign.json")).unwrap();
    let replayed: Vec<_> = c
        .host_checks
        .iter()
        .map(|h| (&h.phase, h.cpu, &h.shard, &h.problems))
        .collect();
    let original: Vec<_> = merged
        .host_checks
        .iter()
        .map(|h| (&h.phase, h.cpu, &h.shard, &h.problems))
        .collect();
    assert_eq!(replayed, original);
    c.ended_utc = merged.ended_utc.clone();
    // The noise figure is sampled by the shards' measure phases; the replay measured nothing.
    assert!(c.noise.is_none() && merged.noise.is_some());
    c.noise = merged.noise.clone();
    write_json(&single.join("campaign.json"), &c).unwrap();
    // Assembled by hand (files copied in, campaign.json edited), the single run is not what
    // ngcc-perf wrote, so its journal cannot vouch for it: it is published without one. The
    // merged dataset carries its journal (validate checked it above); the evidence is compared.
    std::fs::remove_file(single.join("journal.txt")).unwrap();
    let published = root.join("single-dataset");
    ok(
        &ngcc(&[
            "publish".as_ref(),
            "--run".as_ref(),
            single.as_os_str(),
            "--system".as_ref(),
            SYSTEM.as_ref(),
            "--out".as_ref(),
            published.as_os_str(),
        ]),
        "publish",
    );
    let (mut ours, theirs) = (tree(&data, "."), tree(&published, "."));
    assert!(
        ours.remove("./journal.txt").is_some(),
        "the merged dataset has a journal"
    );
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    for (rel, bytes) in &theirs {
        if rel != "./campaign.json" {
            assert!(
                ours[rel] == *bytes,
                "{rel} differs between the merged dataset and the single run's"
            );
        }
    }
    let single_pages = root.join("single-pages");
    let o = ngcc(&[
        "report".as_ref(),
        published.as_os_str(),
        "--catalog".as_ref(),
        catalog.as_os_str(),
        "--out".as_ref(),
        single_pages.as_os_str(),
    ]);
    ok(&o, "report");
    let (want, got) = (tree(&single_pages, "."), tree(&pages, "."));
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        got.keys().collect::<Vec<_>>()
    );
    assert!(want.len() >= 6, "{:?}", want.keys());
    for (rel, bytes) in &want {
        assert!(
            got[rel] == *bytes,
            "page {rel} differs from the single run's"
        );
    }
    eprintln!(
        "slurm: single-run comparison {:.1} s",
        t.elapsed().as_secs_f64()
    );
    drop(cluster);
    eprintln!("slurm: test took {:.1} s", t0.elapsed().as_secs_f64());
}
