//! Operations whose outcome bench cannot see, in every kind of cell: replies lost after the
//! store applied the request (`scripts/s3-server.py --lose-reply-every`), deletes refused
//! after lance's `drop_table` removed the entry (`--deny-delete`), a worker killed in the
//! middle of a commit. Each is one record of the operation log with one outcome; those that
//! did not succeed are looked up in the copy, and the cell verifies as they landed.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;

/// A plan of every kind of cell on `write-create-namespace` (`transport`: the plan's
/// `matrix.transport`).
fn every_kind(transport: &str) -> String {
    format!(
        "name = 'kinds'\n[matrix]\nsizes = [100]\ninline = [false]\ntransport = [{transport}]\n\
         [continuous]\noperations = 8\n\
         [concurrent]\nconcurrency = [2]\nduration_secs = 2\n\
         [mixed]\nclients = [2]\nreads_per_write = 1\nduration_secs = 2\n\
         read_operation = 'warm-read-list-namespaces'\n"
    )
}

/// Appends to the shared table, alone, contending and read back.
const TABLE: &str = "name = 'table'\noperation = 'write-table-append'\n[matrix]\nsizes = [20]\n\
     inline = [false]\ntable_versions = [5]\n[continuous]\noperations = 6\n\
     [concurrent]\nconcurrency = [2]\nduration_secs = 2\n\
     [mixed]\nclients = [2]\nreads_per_write = 1\nduration_secs = 2\n\
     read_operation = 'warm-read-list-table-versions'\n";

/// A writer creating and dropping tables of a tree whose tables have data, and a reader
/// listing them.
fn roles(transport: &str) -> String {
    format!(
        "name = 'roles'\n[fixture]\nwidth = 1\ndepth = 1\ntables_per_namespace = 30\n\
         table_data = true\n[matrix]\ninline = [false]\ntransport = [{transport}]\n\
         [workload]\nduration_secs = 2\n\
         [[roles]]\nname = 'writers'\nclients = 1\nrate = 10\n[roles.mix]\n\
         'write-declare-table' = 1\n'write-drop-table' = 1\n\
         [[roles]]\nname = 'readers'\nclients = 1\n[roles.mix]\n'warm-read-list-tables' = 1\n"
    )
}

/// Every record verified, each write that did not succeed resolved one way or the other
/// (where it can be told apart), and readers shown nothing that did not happen.
fn verified_and_resolved(records: &[serde_json::Value]) -> u64 {
    assert!(!records.is_empty());
    let mut unknown = 0;
    for r in records {
        assert_eq!(r["verified"], true, "{r}");
        let o = &r["outcomes"];
        let n = o["unknown"].as_u64().unwrap();
        let resolved =
            o["unknown_landed"].as_u64().unwrap() + o["unknown_not_landed"].as_u64().unwrap();
        if r["operation"] != "write-table-append" {
            assert_eq!(n, resolved, "every unknown write looked up: {r}");
        }
        unknown += n;
        if r["consistency"].is_object() {
            crate::roles::no_anomaly(&r["consistency"]);
        }
    }
    unknown
}

/// Replies of conditional PUTs lost after the store applied them (every 4th): lance 14.0.2
/// reads a lost commit back and reports it as it landed; a PUT that lost its race and its
/// 412 reply comes back as a broken connection, its outcome unknown. Every kind of cell,
/// directly and through a REST server, is verified with each such write looked up.
#[test]
fn lost_replies_leave_every_kind_of_cell_verified() {
    let server = S3Server::start(&["--lose-reply-every", "4"]);
    let (_d, o, records) = sweep_s3(&server, "s3://bench/lost", &every_kind("'direct', 'rest'"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(records.len(), 6);
    verified_and_resolved(&records);
    assert!(server.counts()["lost_reply"].as_u64().unwrap() > 0);
}

/// The same store under the shared table's appends and under a cell of roles (directly and
/// through a REST server).
#[test]
fn lost_replies_leave_table_operations_and_roles_verified() {
    let server = S3Server::start(&["--lose-reply-every", "4"]);
    let (_d, o, records) = sweep_s3(&server, "s3://bench/lost-table", TABLE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(records.len(), 3);
    verified_and_resolved(&records);
    for r in &records {
        let (t, o) = (&r["table"], &r["outcomes"]);
        // One version per commit that took effect: the successful ones and those of the
        // unknown ones that landed (counted, not told apart).
        let versions = t["version_after"].as_u64().unwrap() - t["version_before"].as_u64().unwrap();
        let ok = o["ok"].as_u64().unwrap();
        assert!(
            versions >= ok && versions <= ok + o["unknown"].as_u64().unwrap(),
            "{r}"
        );
    }
    assert!(server.counts()["lost_reply"].as_u64().unwrap() > 0);
    // A server of its own: the sweep's preflight starts it.
    let server = S3Server::start(&["--lose-reply-every", "4"]);
    let (_d, o, records) = sweep_s3(&server, "s3://bench/lost-roles", &roles("'direct', 'rest'"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    verified_and_resolved(&records);
    assert!(server.counts()["lost_reply"].as_u64().unwrap() > 0);
}

/// A store that applies every 4th commit of `__manifest` under the cells' copies (its
/// conditional PUT) and answers 500 to it and to every resend of it: the client resends it
/// (object_store resends on any 5xx, a conditional PUT included) until its retries run out,
/// and lance 14.0.2 reads its commit back as its own. Every creation ends ok, none is
/// failed but applied, the cell verifies, and the record counts exactly the resends the
/// store answered.
#[test]
fn commits_answered_500_after_they_applied_end_ok_with_their_resends_counted() {
    let faults = [
        "--fail-after-apply-every",
        "4",
        "--lose-reply-under",
        "/runs/",
    ];
    let server = S3Server::start(&faults);
    let plan = "name = 'failing'\n[matrix]\nsizes = [20]\ninline = [false]\n\
                [continuous]\noperations = 12\n[run]\nrepetitions = 1\n";
    let (_d, o, records) = sweep_s3(&server, "s3://bench/failing", plan);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    verified_and_resolved(&records);
    let r = &records[0];
    assert_eq!(r["errors"], 0, "{r}");
    assert_eq!(r["outcomes"]["failed_but_applied"], 0, "{r}");
    assert_eq!(r["outcomes"]["unknown"], 0, "{r}");
    let c = server.counts();
    assert!(c["failed_after_apply"].as_u64().unwrap() >= 2, "{c}");
    let answered = c["internal_error"].as_u64();
    assert!(answered.unwrap() > 0, "{c}");
    assert_eq!(r["requests_resent"].as_u64(), answered, "{r}\n{c}");
}

/// plans/lost-reply.toml, the track record's plan for the lost acknowledgement (lance PR
/// #7722, docs/track-record.md), on 14.0.2 as shipped: 20 appends to the shared table, the
/// reply of every 2nd conditional PUT under the cells' copies lost. lance recognizes each of
/// its own landed commits: every append ends ok, the table has one version per append, and
/// every version's transaction file is there (verified).
#[test]
fn the_lost_reply_plan_is_green_on_this_lance() {
    let server = S3Server::start(&["--lose-reply-every", "2", "--lose-reply-under", "/runs/"]);
    let text = std::fs::read_to_string(repo_file("plans/lost-reply.toml")).unwrap();
    let (_d, o, records) = sweep_s3(&server, "s3://bench/lost-reply", &text);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(records.len(), 1);
    verified_and_resolved(&records);
    let r = &records[0];
    let o = &r["outcomes"];
    assert_eq!(
        (o["ok"].as_u64(), o["unknown"].as_u64()),
        (Some(20), Some(0)),
        "{r}"
    );
    let t = &r["table"];
    let made = t["version_after"].as_u64().unwrap() - t["version_before"].as_u64().unwrap();
    assert_eq!(made, 20, "{r}");
    assert!(server.counts()["lost_reply"].as_u64().unwrap() >= 10);
}

/// plans/lost-reply-version.toml, the track record's plan for lance #7939 (a retried
/// create_table_version after a lost reply, fixed in 10.0.0), on 14.0.2 as shipped: 20
/// versions of the shared table through the namespace's create_table_version, the reply of
/// every 2nd copy under the cells' copies (the copy that publishes a version) lost. Each
/// commit ends ok or unknown and resolved, the table one version per commit that took
/// effect (verified), and replies were lost.
#[test]
fn the_lost_reply_of_a_version_s_copy_is_green_on_this_lance() {
    let faults = ["--lose-reply-of", "copy", "--lose-reply-every", "2"];
    let server = S3Server::start(&[&faults[..], &["--lose-reply-under", "/runs/"]].concat());
    let text = std::fs::read_to_string(repo_file("plans/lost-reply-version.toml")).unwrap();
    let (_d, o, records) = sweep_s3(&server, "s3://bench/lost-reply-version", &text);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(records.len(), 1);
    verified_and_resolved(&records);
    let r = &records[0];
    assert_eq!(r["outcomes"]["failed_but_applied"], 0, "{r}");
    let t = &r["table"];
    let made = t["version_after"].as_u64().unwrap() - t["version_before"].as_u64().unwrap();
    let took =
        r["outcomes"]["ok"].as_u64().unwrap() + r["outcomes"]["unknown_landed"].as_u64().unwrap();
    assert_eq!(made, took, "{r}");
    assert!(server.counts()["lost_reply"].as_u64().unwrap() > 0);
}

/// The same faults in front of a real S3 server: Ceph's gateway, and SeaweedFS.
#[test]
fn lost_replies_in_front_of_ceph_s_gateway_leave_every_kind_of_cell_verified() {
    lost_replies_in_front_of(Backend::Rgw);
}

#[test]
fn lost_replies_in_front_of_seaweedfs_leave_every_kind_of_cell_verified() {
    lost_replies_in_front_of(Backend::Seaweed);
}

fn lost_replies_in_front_of(backend: Backend) {
    let server = S3Server::start_on(backend, &["--lose-reply-every", "4"]);
    let (_d, o, records) = sweep_s3(&server, "s3://bench/lost", &every_kind("'direct'"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(records.len(), 3);
    verified_and_resolved(&records);
    assert!(server.counts()["lost_reply"].as_u64().unwrap() > 0);
}

/// lance's `drop_table` removes the entry, then the table's files: with every delete of a
/// table's data refused (403), each drop fails after its effect. Each is unknown, looked up
/// (gone: landed), counted failed but applied; the cell verifies, its readers see no
/// phantom, and against the same cell on a store that deletes, `bench compare --gate
/// counts` finds no regression.
#[test]
fn a_drop_whose_deletes_are_refused_is_failed_but_applied() {
    let denying = S3Server::start(&["--deny-delete", "/data/"]);
    let (dir, o, records) = sweep_s3(&denying, "s3://bench/denied", &roles("'direct'"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &records[0];
    verified_and_resolved(&records);
    let drops = crate::roles::role_op(r, "write-drop-table");
    // The store's refusal (403): a definite answer, its class of its own.
    let refused = drops["errors"]["refused"].as_u64().unwrap();
    assert!(refused > 0 && drops["total_operations"] == 0, "{r}");
    let o = &r["outcomes"];
    assert_eq!(o["failed_but_applied"].as_u64(), Some(refused), "{r}");
    assert_eq!(o["unknown_landed"].as_u64(), Some(refused), "{r}");
    let first = o["first_failed_but_applied"].as_str().unwrap();
    assert!(
        first.contains("write-drop-table") && first.contains("Failed to delete table directory"),
        "{first}"
    );
    assert!(denying.counts()["denied"].as_u64().unwrap() > 0);
    let c = &r["consistency"];
    assert_eq!(c["indeterminate_landed"].as_u64(), Some(refused), "{c}");
    // The same cell where deletes are allowed, and the two compared on their counts.
    let deleting = S3Server::start(&[]);
    let (a, o, _) = sweep_s3(&deleting, "s3://bench/deleted", &roles("'direct'"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let compared = bench_cmd(&[
        "compare",
        a.path().join("out").to_str().unwrap(),
        dir.path().join("out").to_str().unwrap(),
        "--gate",
        "counts",
        "--fail-on-regression",
    ]);
    assert_eq!(compared.status.code(), Some(0), "{}", stdout(&compared));
}

/// A worker killed (SIGKILL) in the middle of its third commit, as planted: in every kind of
/// cell, directly and through a REST server (where the server finishes the commit), its
/// commit's outcome is unknown, looked up and judged as it landed, and the cell verifies.
#[test]
fn a_worker_killed_mid_commit_in_every_kind_of_cell_is_looked_up() {
    let mut landed = 0;
    for (text, cells) in [(every_kind("'direct', 'rest'"), 6), (TABLE.to_string(), 3)] {
        let (_d, plan, out) = plan_dir(&text);
        let mut cmd = bench();
        cmd.env(bench_lance::worker::KILL_MID_COMMIT_ENV, "0:3");
        let o = run_with(cmd, &plan, &out, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let records = lines(&out.join("results.jsonl"));
        assert_eq!(records.len(), cells);
        assert_eq!(verified_and_resolved(&records), cells as u64, "one a cell");
        for r in &records {
            let stopped = r["stopped_early"].as_str().unwrap_or_default();
            assert!(stopped.contains("worker 0: killed mid-commit"), "{r}");
            let first = r["outcomes"]["first_unknown"].as_str().unwrap();
            assert!(
                first.starts_with("worker 0's ") && first.contains("(killed)"),
                "{r}"
            );
            landed += r["outcomes"]["unknown_landed"].as_u64().unwrap();
        }
    }
    // Through a REST server the server finishes the killed worker's commit.
    assert!(landed >= 3, "{landed}");
}

/// One concurrent cell of `write-create-namespace` (2 writers, 3 s, 20 rows), directly or
/// through a REST server.
fn kill_plan(transport: &str) -> String {
    format!(
        "name = 'kill'\n[matrix]\nsizes = [20]\ninline = [false]\ntransport = [{transport}]\n\
         [concurrent]\nconcurrency = [2]\nduration_secs = 3\n[run]\nrepetitions = 1\n"
    )
}

/// The workers `bench` (pid `parent`) started, each with the file it writes each operation
/// to before beginning it.
fn workers_of(parent: u32) -> Vec<(u32, std::path::PathBuf)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // pid (comm) state ppid …: the comm may hold spaces, the fields after it do not.
        let after = stat.rsplit_once(')').map(|x| x.1).unwrap_or_default();
        let ppid: Option<u32> = after.split_whitespace().nth(1).and_then(|p| p.parse().ok());
        if ppid != Some(parent) {
            continue;
        }
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let key = format!("{}=", bench_lance::worker::INVOKED_ENV);
        if let Some(path) = (environ.split(|&b| b == 0))
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .find_map(|v| v.strip_prefix(&key).map(std::path::PathBuf::from))
        {
            out.push((pid, path));
        }
    }
    out
}

/// Run the plan and SIGKILL one of its workers from outside once it has begun `after`
/// operations (after release: the workers write a line before each measured operation);
/// the run's output.
fn kill_a_worker(cmd: Command, plan: &Path, out: &Path, extra: &[&str], after: usize) -> Output {
    signal_a_worker(cmd, (plan, out, extra), after, libc::SIGKILL).0
}

/// The same with `signal`; also the lines the worker had written when it was signalled.
fn signal_a_worker(
    cmd: Command,
    (plan, out, extra): (&Path, &Path, &[&str]),
    after: usize,
    signal: i32,
) -> (Output, String) {
    let child = spawn_sweep(cmd, "run", plan, out, extra);
    let pid = child.id();
    let killed = std::thread::spawn(move || {
        for _ in 0..6000 {
            for (worker, invoked) in workers_of(pid) {
                let begun = std::fs::read_to_string(&invoked).unwrap_or_default();
                if begun.lines().count() >= after {
                    // Again until it is gone (at most 1 s): Rust's runtime catches a first
                    // SIGSEGV or SIGBUS that is no fault of its own and restores the
                    // default action, which a crash's own signal meets. SAFETY: kill(2) of
                    // another process has no memory-safety preconditions.
                    for _ in 0..50 {
                        if unsafe { libc::kill(worker as i32, signal) } != 0 {
                            break;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                    return Some(begun);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        None
    });
    let o = child.wait_with_output().unwrap();
    eprintln!("{}", String::from_utf8_lossy(&o.stderr));
    let begun = killed.join().unwrap();
    let begun = begun.unwrap_or_else(|| panic!("no worker began {after} operations"));
    (o, begun)
}

/// A worker of a mixed cell writes a line before each of its operations, its reads too;
/// killed from outside after 7 of them (reads among them), the cell goes on, says the
/// operations it began and never reported are unknown, and verifies.
#[test]
fn a_killed_worker_s_reads_are_written_before_they_begin_too() {
    let text = "name = 'mixed-kill'\n[matrix]\nsizes = [20]\ninline = [false]\n\
                [mixed]\nclients = [2]\nreads_per_write = 4\nduration_secs = 3\n\
                read_operation = 'warm-read-list-namespaces'\n[run]\nrepetitions = 1\n";
    let (_d, plan, out) = plan_dir(text);
    let (o, begun) = signal_a_worker(bench(), (&plan, &out, &[]), 7, libc::SIGKILL);
    let reads = (begun.lines())
        .filter(|l| l.contains("\"read\":true"))
        .count();
    assert!(reads >= 4, "{reads} reads among the lines:\n{begun}");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    verified_and_resolved(&records);
    let stopped = records[0]["stopped_early"].as_str().unwrap_or_default();
    assert!(
        stopped.contains("operation(s) it began and never"),
        "{}",
        records[0]
    );
}

/// A worker killed from outside (SIGKILL from this test, not a planted hook) at a moment of
/// its own, 10 times on local disk and 3 times through a REST server: the cell goes on
/// without it, every write it began and never reported is unknown and looked up, and the
/// cell verifies every time.
#[test]
fn a_worker_killed_from_outside_never_fails_a_cell_that_verifies() {
    for (transport, times) in [("'direct'", 10), ("'rest'", 3)] {
        for k in 0..times {
            let (_d, plan, out) = plan_dir(&kill_plan(transport));
            let after = 1 + (k * 7) % 12;
            let o = kill_a_worker(bench(), &plan, &out, &[], after);
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            let records = lines(&out.join("results.jsonl"));
            assert_eq!(records.len(), 1);
            verified_and_resolved(&records);
            let stopped = records[0]["stopped_early"].as_str().unwrap_or_default();
            assert!(stopped.contains("killed from outside"), "{}", records[0]);
        }
    }
}

/// A worker that crashes (SIGSEGV, SIGABRT, SIGBUS: a fault of the code under test, here
/// sent from outside as the kernel or abort(3) sends it) fails its cell, naming the signal, where a
/// SIGKILL is tolerated: no record, exit 3, the reason kept for `--retry-failed`.
#[test]
fn a_worker_that_crashes_fails_its_cell_naming_the_signal() {
    let crashes = [
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
    ];
    for (signal, name) in crashes {
        let (_d, plan, out) = plan_dir(&kill_plan("'direct'"));
        let mut cmd = bench();
        // No core file of the crashed worker left behind.
        // SAFETY: setrlimit(2) is async-signal-safe, as pre_exec requires.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                let none = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &none);
                Ok(())
            });
        }
        let (o, _) = signal_a_worker(cmd, (&plan, &out, &[]), 2, signal);
        assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
        let said = stderr(&o);
        assert!(
            said.contains(name) && said.contains("a crash of the code under test"),
            "{said}"
        );
        let results = out.join("results.jsonl");
        assert!(
            !results.exists() || lines(&results).is_empty(),
            "a record of a crashed cell"
        );
        let state = std::fs::read_to_string(out.join("state.json")).unwrap();
        assert!(state.contains(name), "{state}");
    }
}

/// The same on S3 (moto), 3 times.
#[test]
fn a_worker_killed_from_outside_on_s3_never_fails_a_cell_that_verifies() {
    let server = S3Server::start(&[]);
    for k in 0..3 {
        let (_d, plan, out) = plan_dir(&kill_plan("'direct'"));
        let args = server.args(&format!("s3://bench/kill{k}"));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = kill_a_worker(bench_s3(), &plan, &out, &args, 1 + k * 3);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let records = lines(&out.join("results.jsonl"));
        verified_and_resolved(&records);
        let stopped = records[0]["stopped_early"].as_str().unwrap_or_default();
        assert!(stopped.contains("killed from outside"), "{}", records[0]);
    }
}
