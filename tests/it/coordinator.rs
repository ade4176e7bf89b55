//! The coordinator against real child processes that misbehave: a worker that crashes, one
//! that floods its stderr pipe, one that hangs past the cell timeout. The children are
//! small shell scripts speaking the worker protocol; the catalog is not involved.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bench_lance::coordinator::{CellRun, Outcome, run_cell};
use bench_lance::plan::Operation;
use bench_lance::worker::WorkerArgs;

fn script(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("worker.sh");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn workers(n: u32) -> Vec<WorkerArgs> {
    (0..n)
        .map(|worker_id| WorkerArgs {
            operations: Some(2),
            ..WorkerArgs::new("unused".into(), Operation::CreateNamespace, worker_id)
        })
        .collect()
}

fn run(exe: &Path, n: u32, timeout: Duration) -> Outcome {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (_tx, mut rx) = tokio::sync::watch::channel(false);
        let storage = BTreeMap::new();
        run_cell(
            CellRun {
                exe,
                workers: workers(n),
                storage: &storage,
                timeout,
                bound: None,
                // Shell scripts speaking the protocol, not bench builds: nothing to check.
                versions: None,
                launcher: None,
                journal: None,
            },
            &(),
            &mut rx,
        )
        .await
    })
}

const OPS: &str = r#"read go
echo '{"ev":"op","i":0,"ms":1.5,"ok":true}'
echo '{"ev":"op","i":1,"ms":2.5,"ok":false,"class":"conflict","err":"disk on fire"}'
echo '{"ev":"done","elapsed_ms":4.0}'"#;

#[test]
fn a_well_behaved_worker_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let exe = script(
        dir.path(),
        &format!(
            "echo '{{\"ev\":\"op\",\"i\":0,\"ms\":1.0,\"ok\":true,\"warm\":true}}'\n\
             echo '{{\"ev\":\"ready\"}}'\n{OPS}"
        ),
    );
    match run(&exe, 3, Duration::from_secs(30)) {
        Outcome::Finished(m) => {
            assert_eq!(m.attempts, 6);
            assert_eq!(m.conflicts, 3);
            assert_eq!(m.other_errors, 0);
            let lat = m.latencies.summary();
            assert_eq!((lat.count, lat.min, lat.max, lat.avg), (3, 1.5, 1.5, 1.5));
            assert_eq!(m.window_ms, 4.0);
            assert_eq!(m.first_conflict.as_deref(), Some("disk on fire"));
            assert_eq!(m.warmup_committed, 3);
            let mut committed: Vec<(u32, u64)> = (m.log.iter())
                .filter(|o| !o.attempt.warm && o.outcome == bench_lance::oplog::Outcome::Ok)
                .map(|o| (o.client, o.attempt.i))
                .collect();
            committed.sort();
            assert_eq!(committed, vec![(0, 0), (1, 0), (2, 0)]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_crashing_worker_fails_the_cell_with_its_status_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let exe = script(
        dir.path(),
        "echo '{\"ev\":\"ready\"}'\nread go\necho 'something broke' >&2\nexit 7",
    );
    match run(&exe, 2, Duration::from_secs(30)) {
        Outcome::Failed(reason) => {
            assert!(reason.contains("exit status: 7"), "{reason}");
            assert!(reason.contains("something broke"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_worker_that_dies_before_ready_fails_the_cell_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let exe = script(dir.path(), "echo 'cannot open namespace' >&2\nexit 1");
    let start = Instant::now();
    match run(&exe, 2, Duration::from_secs(60)) {
        Outcome::Failed(reason) => assert!(reason.contains("cannot open namespace"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_worker_flooding_its_pipes_never_blocks() {
    let dir = tempfile::tempdir().unwrap();
    // 2 MB to stderr and many stdout lines before and after release: far beyond a pipe buffer.
    let exe = script(
        dir.path(),
        "head -c 2000000 /dev/zero | tr '\\0' 'x' >&2\necho '{\"ev\":\"ready\"}'\nread go\n\
             i=0; while [ $i -lt 3000 ]; do echo '{\"ev\":\"op\",\"i\":'$i',\"ms\":1.0,\"ok\":true}'; i=$((i+1)); done\n\
             echo '{\"ev\":\"done\",\"elapsed_ms\":9.0}'",
    );
    match run(&exe, 2, Duration::from_secs(60)) {
        Outcome::Finished(m) => assert_eq!(m.latencies.count(), 6000),
        other => panic!("{other:?}"),
    }
}

/// Whether any live process is in process group `pgid` (zombies count as gone).
fn group_alive(pgid: u32) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // After the command name: state, ppid, pgrp.
        let fields: Vec<&str> = stat
            .rsplit_once(") ")
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string()
    })
}

#[test]
fn a_hung_cell_times_out_and_its_workers_are_stopped() {
    let dir = tempfile::tempdir().unwrap();
    // Each worker writes its pid (the id of its process group) first. The first ignores
    // SIGTERM, so the coordinator must escalate to SIGKILL; the other leaves a child that
    // ignores SIGTERM behind when it exits, so its group outlives its leader.
    let exe = script(
        dir.path(),
        &format!(
            "echo $$ >> {pids}\n\
             if mkdir {first} 2>/dev/null; then trap '' TERM; \
             else (trap '' TERM; while true; do sleep 0.1; done) </dev/null >/dev/null 2>&1 & trap 'exit 0' TERM; fi\n\
             echo '{{\"ev\":\"ready\"}}'\nread go\nwhile true; do sleep 0.1; done",
            pids = dir.path().join("pids").display(),
            first = dir.path().join("first").display(),
        ),
    );
    let start = Instant::now();
    match run(&exe, 2, Duration::from_secs(2)) {
        Outcome::Failed(reason) => assert!(reason.starts_with("timeout"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(15));
    let pids: Vec<u32> = std::fs::read_to_string(dir.path().join("pids"))
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2);
    // The coordinator returns only once every worker's whole group is gone.
    for pid in pids {
        assert!(!group_alive(pid), "worker group {pid} outlived its cell");
    }
}
