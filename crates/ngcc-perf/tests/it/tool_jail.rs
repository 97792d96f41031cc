//! `sandbox::tool::run_tool`: a host program over candidate input, in the jail. Each hostile
//! `sh -c` below is stopped with a clear outcome; a traced `make` records its compiler calls.

use ngcc_perf::sandbox::Exit;
use ngcc_perf::sandbox::tool::{ToolBounds, ToolJob, ToolOutcome, run_tool};
use std::path::Path;

fn sh(label: &str, script: &str) -> ToolJob {
    ngcc_perf::sandbox::set_exe(env!("CARGO_BIN_EXE_ngcc-perf").into());
    ToolJob {
        label: label.into(),
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        bounds: ToolBounds {
            wall_s: 60.0,
            ..ToolBounds::default()
        },
        ..ToolJob::default()
    }
}

fn run(job: &ToolJob) -> ToolOutcome {
    run_tool(job).unwrap_or_else(|e| panic!("{e}"))
}

fn failed(o: &ToolOutcome) -> bool {
    !o.success()
}

#[test]
fn honest_tool_writes_scratch_and_sees_inputs_with_every_layer() {
    let input = tempfile::tempdir().unwrap();
    std::fs::write(input.path().join("in.txt"), "candidate text\n").unwrap();
    let job = ToolJob {
        read_only: vec![input.path().to_path_buf()],
        ..sh(
            "honest",
            &format!(
                "cat {}/in.txt > out.txt && echo \"$HOME|$PATH|$LANG|$TMPDIR\" && env | wc -l",
                input.path().display()
            ),
        )
    };
    let o = run(&job);
    assert_eq!(o.exit, Exit::Code(0), "{}", o.stderr);
    let scratch = o.scratch.path();
    assert_eq!(
        std::fs::read_to_string(scratch.join("out.txt")).unwrap(),
        "candidate text\n"
    );
    let s = scratch.display();
    let first = o.stdout.lines().next().unwrap();
    assert_eq!(first, format!("{s}|/usr/bin:/bin|C|{s}/tmp"));
    // The four variables and what sh adds itself (PWD, SHLVL…), nothing of ours.
    assert!(
        o.stdout
            .lines()
            .nth(1)
            .unwrap()
            .trim()
            .parse::<u32>()
            .unwrap()
            <= 8
    );
    let names: Vec<&str> = o.layers.layers.iter().map(|l| l.name()).collect();
    for want in [
        "user_ns", "pid_ns", "mount_ns", "net_ns", "landlock", "seccomp", "nproc",
    ] {
        assert!(names.contains(&want), "{names:?} {:?}", o.layers.missing);
    }
    assert!(o.limits.contains("tool limits"), "{}", o.limits);
    let path = scratch.to_path_buf();
    drop(o);
    assert!(
        !path.exists(),
        "the scratch folder is removed with the outcome"
    );
}

#[test]
fn writes_outside_scratch_fail() {
    let input = tempfile::tempdir().unwrap();
    std::fs::write(input.path().join("in.txt"), "x").unwrap();
    let job = ToolJob {
        read_only: vec![input.path().to_path_buf()],
        ..sh(
            "write-out",
            &format!(
                "echo x > {}/in.txt || echo x > /usr/evil || echo x > /evil || exit 0; exit 9",
                input.path().display()
            ),
        )
    };
    let o = run(&job);
    assert_eq!(o.exit, Exit::Code(0), "every write refused: {}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(input.path().join("in.txt")).unwrap(),
        "x"
    );
    assert!(!Path::new("/evil").exists());
}

#[test]
fn host_secrets_are_not_visible() {
    let o = run(&sh(
        "read-root",
        "cat /root/.bashrc || cat /etc/shadow || ls /work || ls /home || exit 0; exit 9",
    ));
    assert_eq!(o.exit, Exit::Code(0), "{}", o.stdout);
    assert!(o.stderr.contains("No such file"), "{}", o.stderr);
}

#[test]
fn network_is_unreachable() {
    // A program built in the jail tries a TCP connection and an IPv6 and a netlink socket:
    // seccomp refuses every socket but AF_UNIX, and the network namespace has no route.
    let src = tempfile::tempdir().unwrap();
    std::fs::write(
        src.path().join("net.c"),
        r#"#include <stdio.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
int main(void) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s >= 0) {
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET; a.sin_port = htons(53);
        inet_pton(AF_INET, "1.1.1.1", &a.sin_addr);
        if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) { puts("connected"); return 9; }
    }
    perror("inet");
    if (socket(AF_INET6, SOCK_DGRAM, 0) >= 0) return 8;
    if (socket(AF_NETLINK, SOCK_RAW, 0) >= 0) return 7;
    if (socket(AF_UNIX, SOCK_STREAM, 0) < 0) return 6;
    return 0;
}
"#,
    )
    .unwrap();
    let job = ToolJob {
        copy_in: vec![(src.path().join("net.c"), "net.c".into())],
        ..sh("network", "gcc net.c -o net && ./net")
    };
    let o = run(&job);
    assert_eq!(o.exit, Exit::Code(0), "{}{}", o.stdout, o.stderr);
    assert!(
        o.stderr.contains("inet: Operation not permitted"),
        "{}",
        o.stderr
    );
}

#[test]
fn fork_bomb_is_bounded() {
    let job = ToolJob {
        bounds: ToolBounds {
            wall_s: 20.0,
            nproc: 32,
            ..ToolBounds::default()
        },
        ..sh("fork-bomb", "b() { b | b & }; b; sleep 2; exit 7")
    };
    let o = run(&job);
    // The bomb hits the process bound; whatever the shell makes of it, the run ends by
    // itself or at its wall bound, and nothing of it survives the job.
    assert!(failed(&o) || o.exit == Exit::Code(7), "{:?}", o.exit);
    assert!(o.stderr.contains("fork"), "{}", o.stderr);
}

#[test]
fn a_hanging_tool_is_killed_at_its_wall_bound() {
    let job = ToolJob {
        bounds: ToolBounds {
            wall_s: 2.0,
            ..ToolBounds::default()
        },
        ..sh("hang", "sleep 1000 & sleep 1000")
    };
    let t = std::time::Instant::now();
    let o = run(&job);
    assert_eq!(o.exit, Exit::Timeout);
    assert!(t.elapsed().as_secs() < 30);
    assert!(o.failure_text().unwrap().contains("wall-time bound"));
}

#[test]
fn scratch_bound_and_copy_in() {
    let src = tempfile::tempdir().unwrap();
    std::fs::create_dir(src.path().join("sub")).unwrap();
    std::fs::write(src.path().join("sub/a.c"), "int a;\n").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", src.path().join("sub/link")).unwrap();
    let job = ToolJob {
        copy_in: vec![(src.path().to_path_buf(), "pkg".into())],
        cwd: "pkg".into(),
        bounds: ToolBounds {
            wall_s: 60.0,
            scratch_inodes: 50,
            ..ToolBounds::default()
        },
        ..sh("copy", "ls -A sub; for i in $(seq 1 100); do : > f$i; done")
    };
    // The scratch is a tmpfs of 50 entries: the 47th file cannot be made, and nothing
    // beyond the bound reaches the disk.
    let full = run(&job);
    let note = full.scratch_note.clone().unwrap_or_default();
    assert!(
        note.contains("filled its scratch folder") && note.contains("50 entries"),
        "{note}"
    );
    assert!(
        full.stderr.contains("No space left on device"),
        "{}",
        full.stderr
    );
    let left = std::fs::read_dir(full.scratch.path().join("pkg"))
        .unwrap()
        .count();
    assert!(left <= 50, "{left}");
    let names: Vec<&str> = full.layers.layers.iter().map(|l| l.name()).collect();
    assert!(names.contains(&"scratch_tmpfs"), "{names:?}");
    // Control groups need root (or a delegated subtree); elsewhere the record says why not.
    if unsafe { libc::geteuid() } == 0 {
        for want in ["memory_cgroup", "pids_cgroup"] {
            assert!(names.contains(&want), "{names:?} {:?}", full.layers.missing);
        }
    }
    let ok = ToolJob {
        bounds: ToolBounds {
            wall_s: 60.0,
            ..ToolBounds::default()
        },
        ..ToolJob {
            args: vec!["-c".into(), "ls -A sub".into()],
            ..job
        }
    };
    let o = run(&ok);
    assert_eq!(o.stdout, "a.c\n", "the link was not copied");
}

#[test]
fn traced_make_records_its_compiler_calls() {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("a.c"), "int a(void) { return 1; }\n").unwrap();
    std::fs::write(src.path().join("b.c"), "int b(void) { return 2; }\n").unwrap();
    // One compile by name through PATH, one by absolute path through /etc/alternatives.
    std::fs::write(
        src.path().join("Makefile"),
        "all: a.o b.o\na.o: a.c\n\tgcc -c -O2 a.c -o a.o\nb.o: b.c\n\t/usr/bin/cc -c b.c -o b.o\n",
    )
    .unwrap();
    ngcc_perf::sandbox::set_exe(env!("CARGO_BIN_EXE_ngcc-perf").into());
    let job = ToolJob {
        label: "make".into(),
        program: "/usr/bin/make".into(),
        args: vec![
            "-f".into(),
            src.path().join("Makefile").into(),
            format!("VPATH={}", src.path().display()).into(),
        ],
        read_only: vec![src.path().to_path_buf()],
        copy_in: vec![
            (src.path().join("a.c"), "a.c".into()),
            (src.path().join("b.c"), "b.c".into()),
        ],
        trace_exec: true,
        bounds: ToolBounds {
            wall_s: 120.0,
            ..ToolBounds::default()
        },
        ..ToolJob::default()
    };
    let o = run(&job);
    assert_eq!(o.exit, Exit::Code(0), "{}\n{}", o.stdout, o.stderr);
    assert!(o.scratch.path().join("a.o").is_file() && o.scratch.path().join("b.o").is_file());
    let seqs: Vec<usize> = o.execs.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..o.execs.len()).collect::<Vec<_>>());
    assert_eq!(o.execs[0].argv[0], "/usr/bin/make");
    let compiles: Vec<_> = o
        .execs
        .iter()
        .filter(|e| e.argv.iter().any(|a| a == "-c"))
        .filter(|e| e.argv[0].ends_with("gcc") || e.argv[0].ends_with("cc"))
        .collect();
    assert_eq!(compiles.len(), 2, "{:#?}", o.execs);
    assert_eq!(compiles[0].argv, ["gcc", "-c", "-O2", "a.c", "-o", "a.o"]);
    assert_eq!(compiles[1].argv[0], "/usr/bin/cc");
    for c in &compiles {
        let real = c
            .program
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            real.contains("gcc"),
            "{real}: the real compiler, links resolved"
        );
        assert_eq!(c.cwd, o.scratch.path());
    }
    // The compiler's own passes are seen too.
    assert!(
        o.execs.iter().any(|e| e.program.ends_with("cc1")),
        "{:#?}",
        o.execs
    );
}

/// Three processes each holding 300 MiB under a whole-run bound of 512 MiB: the memory
/// group stops them (the per-process limit alone would not), with a one-line reason.
#[test]
fn forked_memory_is_bounded_for_the_whole_run() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: control groups need root here");
        return;
    }
    let job = ToolJob {
        bounds: ToolBounds {
            wall_s: 60.0,
            memory_mib: 512,
            ..ToolBounds::default()
        },
        ..sh(
            "fork-memory",
            "for i in 1 2 3; do head -c 300M /dev/zero | tail -c 300M > /dev/null & done; wait",
        )
    };
    let o = run(&job);
    let hit = o.bound_hit.clone().unwrap_or_default();
    assert!(
        hit.contains("memory bound (512 MiB"),
        "{hit:?} {:?}",
        o.exit
    );
}

/// A program that cannot be exec'd in the jail is the caller's error (`Start`, told by the
/// keeper's report), not a host without a jail.
#[test]
fn a_missing_program_is_a_start_error_not_a_missing_jail() {
    let job = ToolJob {
        program: "/usr/bin/ngcc-perf-no-such-tool".into(),
        ..sh("missing", "true")
    };
    match run_tool(&job) {
        Err(ngcc_perf::sandbox::tool::ToolError::Start { why, .. }) => {
            assert!(why.contains("ngcc-perf-no-such-tool"), "{why}")
        }
        other => panic!("expected a Start error, got {other:?}"),
    }
}
