//! bench on a real Slurm: a 3-node cluster on this host (scripts/slurm-up.sh: munged,
//! slurmctld and `slurmd -N n1..n3`), against the S3 test server. The cluster is started once
//! for the test process (or the one `SLURM_CONF` names is used, as `.ci/run` starts it) and
//! stopped by pid file when the process exits; these tests (`on_slurm::`) run one at a time,
//! since each fills the cluster's CPUs (`scripts/test.sh` runs them in a process of their
//! own, beside the other tests).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::common::*;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
static CLUSTER: OnceLock<PathBuf> = OnceLock::new();
/// The directory of a cluster this binary started, stopped at exit.
static STARTED: OnceLock<PathBuf> = OnceLock::new();

extern "C" fn stop_cluster() {
    if let Some(dir) = STARTED.get() {
        let _ = Command::new(repo_file("scripts/slurm-down.sh"))
            .arg(dir)
            .status();
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn nodes_idle(conf: &Path) -> bool {
    Command::new("sinfo")
        .args(["-h", "-N", "-o", "%N %t"])
        .env("SLURM_CONF", conf)
        .output()
        .is_ok_and(|o| {
            let text = String::from_utf8_lossy(&o.stdout);
            o.status.success() && text.lines().filter(|l| l.ends_with("idle")).count() >= 3
        })
}

/// The cluster's slurm.conf: the running one `SLURM_CONF` names, else one started here.
fn cluster() -> (&'static Path, MutexGuard<'static, ()>) {
    let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let conf = CLUSTER.get_or_init(|| {
        if let Some(conf) = std::env::var_os("SLURM_CONF").map(PathBuf::from)
            && nodes_idle(&conf)
        {
            return conf;
        }
        let dir = tempfile::Builder::new()
            .prefix("bench-slurm-")
            .tempdir()
            .unwrap()
            .keep();
        // Stopped at exit, and by the script's watchdog when this process is gone however
        // it ended (a Ctrl-C of cargo test runs no atexit).
        let up = Command::new(repo_file("scripts/slurm-up.sh"))
            .arg(&dir)
            .env("SLURM_OWNER_PID", std::process::id().to_string())
            .output()
            .unwrap();
        assert!(
            up.status.success(),
            "scripts/slurm-up.sh failed (install Slurm with: apt-get install -y slurm-wlm \
             munge):\n{}{}",
            String::from_utf8_lossy(&up.stdout),
            String::from_utf8_lossy(&up.stderr)
        );
        STARTED.set(dir.clone()).unwrap();
        // SAFETY: registering a plain extern "C" function with no preconditions.
        unsafe {
            libc::atexit(stop_cluster);
        }
        dir.join("slurm.conf")
    });
    (conf, guard)
}

fn slurm(conf: &Path, cmd: &str) -> Command {
    let mut c = Command::new(cmd);
    c.env("SLURM_CONF", conf)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_EC2_METADATA_DISABLED", "true");
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Submit a batch job; returns its id.
fn sbatch(conf: &Path, args: &[&str], script: &str) -> String {
    let o = slurm(conf, "sbatch")
        .arg("--parsable")
        .args(args)
        .args(["--wrap", script])
        .output()
        .unwrap();
    assert!(o.status.success(), "sbatch: {}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap()
        .to_string()
}

/// Wait until none of these jobs is queued or running.
fn wait_jobs(conf: &Path, jobs: &[&str], limit: Duration) {
    let start = Instant::now();
    loop {
        let o = slurm(conf, "squeue")
            .args(["-h", "-o", "%i %T", "-j", &jobs.join(",")])
            .output()
            .unwrap();
        let queued = String::from_utf8_lossy(&o.stdout).trim().to_string();
        if o.status.success() && queued.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "jobs still queued after {limit:?}: {queued}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn cells(records: &[serde_json::Value]) -> BTreeSet<(String, String)> {
    records
        .iter()
        .map(|r| {
            (
                r["bench_tag"].as_str().unwrap().to_string(),
                r["cell_key"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The tests, under one name (`on_slurm::`) that a test run without Slurm leaves out.
mod on_slurm {
    use super::*;

    #[test]
    fn an_sbatch_array_of_shards_and_a_merge_job_give_the_cells_of_an_unsharded_run() {
        let (conf, _alone) = cluster();
        let s3 = S3Server::start(&[]);
        let dir = tempfile::tempdir().unwrap();
        let plan = repo_file("plans/tiny.toml");
        let root = "s3://bench/sweep";
        let bench = env!("CARGO_BIN_EXE_bench");
        let opts = s3.options().join(" ");

        // The whole sweep on one machine, at the same root (shards work under their own
        // prefixes, so the two never meet in the store).
        let whole = dir.path().join("whole");
        let o = bench_s3()
            .args([
                "run",
                plan.to_str().unwrap(),
                "--root",
                root,
                "--progress",
                "lines",
            ])
            .args(s3.options())
            .arg("--out")
            .arg(&whole)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));

        // Three shards as an array job, then the merge as a job that waits for all of them.
        let d = dir.path().display();
        let shard_cmd = format!(
            "{bench} run {} --shard auto --root {root} {opts} --progress lines \
         --out {d}/shard-$SLURM_ARRAY_TASK_ID",
            plan.display()
        );
        let array = sbatch(
            conf,
            &["--array=0-2", &format!("--output={d}/slurm-%A_%a.out")],
            &shard_cmd,
        );
        let merge_cmd =
            format!("{bench} merge {d}/merged {d}/shard-0 {d}/shard-1 {d}/shard-2; echo exit=$?");
        let merge = sbatch(
            conf,
            &[
                &format!("--dependency=afterok:{array}"),
                "--kill-on-invalid-dep=yes",
                &format!("--output={d}/merge.out"),
            ],
            &merge_cmd,
        );
        wait_jobs(conf, &[&array, &merge], Duration::from_secs(600));
        let logs = || {
            std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".out"))
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n---\n")
        };
        let merge_out = std::fs::read_to_string(dir.path().join("merge.out"))
            .unwrap_or_else(|_| panic!("the merge job did not run; job logs:\n{}", logs()));
        assert!(
            merge_out.contains("8 of 8 cells done") && merge_out.contains("exit=0"),
            "{merge_out}\n{}",
            logs()
        );
        // Each shard ran its own share: together every cell, none twice.
        let mut per_shard = Vec::new();
        for k in 0..3 {
            let recs = lines(&dir.path().join(format!("shard-{k}/results.jsonl")));
            per_shard.extend(cells(&recs));
        }
        let merged = lines(&dir.path().join("merged/results.jsonl"));
        let unsharded = lines(&whole.join("results.jsonl"));
        assert_eq!(per_shard.len(), 8, "{per_shard:?}");
        assert_eq!(merged.len(), 8);
        assert_eq!(cells(&merged), cells(&unsharded), "same cells, same keys");
        assert_eq!(
            per_shard.into_iter().collect::<BTreeSet<_>>(),
            cells(&merged)
        );
        for r in &merged {
            assert_eq!(r["verified"], true, "{r}");
            assert_eq!(r["storage_scheme"], "s3");
        }
        let csv = std::fs::read_to_string(dir.path().join("merged/summary.csv")).unwrap();
        assert_eq!(csv.lines().count(), 9);
    }

    /// A sweep of `plan` on the cluster at `conf`, its store `root` on `s3`: it succeeds, and
    /// its records.
    fn sweep_on(
        conf: &Path,
        s3: &S3Server,
        root: &str,
        plan: &Path,
        out: &Path,
    ) -> Vec<serde_json::Value> {
        let mut cmd = bench_s3();
        cmd.env("SLURM_CONF", conf);
        let mut extra = vec!["--root", root];
        let opts = s3.options();
        extra.extend(opts.iter().map(String::as_str));
        let o = run_with(cmd, plan, out, &extra);
        assert!(o.status.success(), "{}", stderr(&o));
        lines(&out.join("results.jsonl"))
    }

    /// A plan of one concurrent cell of 6 writers started through srun over the 3 nodes.
    fn srun_plan(duration_secs: u64) -> String {
        format!(
            "name = \"spread\"\n[matrix]\nsizes = [100]\ninline = [true]\n\
         [concurrent]\nconcurrency = [6]\nduration_secs = {duration_secs}\n\
         [run]\ncell_timeout_secs = 300\n\
         launcher = \"srun --nodes=3 --ntasks={{workers}} --label --input=all --kill-on-bad-exit=1\"\n"
        )
    }

    #[test]
    fn a_concurrent_cell_through_srun_runs_its_writers_on_three_nodes_and_verifies() {
        let (conf, _alone) = cluster();
        let s3 = S3Server::start(&[]);
        let (_d, plan, out) = plan_dir(&srun_plan(3));
        let shown = bench()
            .args(["plan", plan.to_str().unwrap(), "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            text(&shown).contains("writers start through: srun --nodes=3"),
            "{}",
            text(&shown)
        );
        let recs = sweep_on(conf, &s3, "s3://bench/spread", &plan, &out);
        assert_eq!(recs.len(), 1);
        let r = &recs[0];
        assert_eq!(r["concurrency"], 6);
        assert_eq!(r["verified"], true, "{r}");
        assert!(r["total_operations"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(r["hosts"], serde_json::json!(["n1", "n2", "n3"]), "{r}");
        // The storage options reached the remote writers through the environment, not the
        // command line (no secret is ever on one; the endpoint is not a secret, but it too
        // travels only in BENCH_STORAGE_OPTIONS).
        assert_eq!(r["storage_scheme"], "s3");
    }

    /// A mixed cell (tables declared and listed) through srun over the 3 nodes: its readers
    /// are checked across the nodes' clocks, each moved by the offset `go` and its reply
    /// bound, and see every acknowledged creation.
    #[test]
    fn a_mixed_cell_through_srun_checks_its_readers_across_the_nodes_clocks() {
        let (conf, _alone) = cluster();
        let s3 = S3Server::start(&[]);
        let (_d, plan, out) = plan_dir(
            "name = \"mixed\"\noperation = \"write-declare-table\"\n[matrix]\nsizes = [20]\n\
             inline = [false]\n[continuous]\noperations = 1\n[mixed]\nclients = [3]\n\
             reads_per_write = 3\nduration_secs = 2\nread_operation = \"warm-read-list-tables\"\n\
             [run]\ncell_timeout_secs = 300\n\
             launcher = \"srun --nodes=3 --ntasks={workers} --label --input=all --kill-on-bad-exit=1\"\n",
        );
        let recs = sweep_on(conf, &s3, "s3://bench/mixed", &plan, &out);
        let r = (recs.iter()).find(|r| r["mode"] == "mixed").unwrap();
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["hosts"], serde_json::json!(["n1", "n2", "n3"]), "{r}");
        let c = &r["consistency"];
        assert!(c["clock_uncertainty_ms"].as_f64().is_some(), "{c}");
        assert!(c["creations"].as_u64().unwrap() > 0 && c["reads"].as_u64().unwrap() > 0);
        crate::roles::no_anomaly(c);
    }

    #[test]
    fn sigkill_of_the_coordinator_during_an_srun_cell_leaves_no_writer_and_resume_redoes_it_once() {
        let (conf, _alone) = cluster();
        let s3 = S3Server::start(&[]);
        let (_d, plan, out) = plan_dir(&srun_plan(15));
        let root = format!("s3://bench/killed-{}", std::process::id());
        let mut child = start_run(conf, &s3, &plan, &out, &root);
        let workers = six_writers(&root);
        child.kill().unwrap();
        child.wait().unwrap();
        // Every writer (and srun) goes, on every node, without the coordinator.
        all_gone(&root, &workers);
        // A resume runs the cell again, once, and it verifies.
        let mut cmd = bench_s3();
        cmd.env("SLURM_CONF", conf);
        let mut extra = vec!["--root", root.as_str()];
        let opts = s3.options();
        extra.extend(opts.iter().map(String::as_str));
        let o = run_with(cmd, &plan, &out, &extra);
        assert!(o.status.success(), "{}", stderr(&o));
        let recs = lines(&out.join("results.jsonl"));
        assert_eq!(recs.len(), 1, "exactly one record for the cell");
        assert_eq!(recs[0]["verified"], true, "{}", recs[0]);
        assert_eq!(recs[0]["hosts"], serde_json::json!(["n1", "n2", "n3"]));
    }

    /// `bench run PLAN --root ROOT --out OUT` against the test server and the cluster, started
    /// and not waited for (stderr piped).
    fn start_run(
        conf: &Path,
        s3: &S3Server,
        plan: &Path,
        out: &Path,
        root: &str,
    ) -> std::process::Child {
        bench_s3()
            .env("SLURM_CONF", conf)
            .arg("run")
            .arg(plan)
            .args(["--progress", "lines", "--root", root])
            .args(s3.options())
            .arg("--out")
            .arg(out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Wait until the six writers of a cell under `root` run; returns the pids of its writers
    /// and launcher (their command lines name the cell's copy).
    fn six_writers(root: &str) -> Vec<u32> {
        let copy = format!("{root}/runs/");
        let start = Instant::now();
        loop {
            let pids = processes_mentioning(&copy);
            let writers = pids
                .iter()
                .filter(|&&p| {
                    std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                        let c = String::from_utf8_lossy(&c);
                        c.starts_with(env!("CARGO_BIN_EXE_bench")) && c.contains("--rank-from-env")
                    })
                })
                .count();
            if writers == 6 {
                return pids;
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "the six writers did not start: {pids:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Wait until none of `pids` (nor any process naming the cell's copy) is left; fails after
    /// 30 s.
    fn all_gone(root: &str, pids: &[u32]) {
        let copy = format!("{root}/runs/");
        let start = Instant::now();
        loop {
            let left: Vec<u32> = pids
                .iter()
                .copied()
                .filter(|p| {
                    let stat =
                        std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
                    !stat.is_empty() && !stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z'))
                })
                .collect();
            let any = processes_mentioning(&copy);
            if left.is_empty() && any.is_empty() {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "writers left running 30 s after the coordinator stopped: {left:?} {any:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    #[test]
    fn ctrl_c_during_an_srun_cell_stops_every_writer_and_leaves_the_cell_pending() {
        let (conf, _alone) = cluster();
        let s3 = S3Server::start(&[]);
        let (_d, plan, out) = plan_dir(&srun_plan(15));
        let root = format!("s3://bench/interrupted-{}", std::process::id());
        let child = start_run(conf, &s3, &plan, &out, &root);
        let workers = six_writers(&root);
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGINT);
        }
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
        assert!(stderr(&o).contains("is pending again"), "{}", stderr(&o));
        all_gone(&root, &workers);
        assert!(lines(&out.join("results.jsonl")).is_empty());
        let status = bench_s3()
            .args(["status", plan.to_str().unwrap(), "--out"])
            .arg(&out)
            .args(["--root", &root])
            .args(s3.options())
            .output()
            .unwrap();
        assert!(text(&status).contains("1 pending"), "{}", text(&status));
    }

    /// Cancels a Slurm job when dropped.
    struct Job<'a>(&'a Path, String);

    impl Drop for Job<'_> {
        fn drop(&mut self) {
            let _ = slurm(self.0, "scancel").arg(&self.1).status();
        }
    }

    /// Wait until job `id` runs.
    fn wait_running(conf: &Path, id: &str) {
        let start = Instant::now();
        loop {
            let o = slurm(conf, "squeue")
                .args(["-h", "-o", "%T", "-j", id])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&o.stdout).trim() == "RUNNING" {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "job {id} never ran"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    #[test]
    fn a_rest_cell_puts_its_server_on_one_node_and_its_clients_on_the_others() {
        let (conf, _alone) = cluster();
        let s3 = S3Server::start(&[]);
        let (_d, plan, out) = plan_dir(
            "name = \"rest\"\n[matrix]\nsizes = [100]\ninline = [true]\ntransport = [\"rest\"]\n\
             [concurrent]\nconcurrency = [2]\nduration_secs = 2\n\
             [rest]\nlauncher = \"srun --nodes=1 --nodelist=n1 --ntasks={workers} --input=all\"\n\
             [run]\ncell_timeout_secs = 300\n\
             launcher = \"srun --nodes=2 --exclude=n1 --ntasks={workers} --label --input=all --kill-on-bad-exit=1\"\n",
        );
        let mut cmd = bench_s3();
        cmd.env("SLURM_CONF", conf);
        let root = format!("s3://bench/rest-{}", std::process::id());
        let mut extra = vec!["--root", root.as_str()];
        let opts = s3.options();
        extra.extend(opts.iter().map(String::as_str));
        let o = run_with(cmd, &plan, &out, &extra);
        assert!(o.status.success(), "{}", stderr(&o));
        let r = &lines(&out.join("results.jsonl"))[0];
        assert_eq!(r["verified"], true, "{r}");
        assert!(r["total_operations"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(r["rest"]["server_hosts"], serde_json::json!(["n1"]), "{r}");
        assert_eq!(r["hosts"], serde_json::json!(["n2", "n3"]), "{r}");
        // Neither the server nor its srun outlived the cell.
        assert!(processes_mentioning(&root).is_empty(), "{r}");
    }

    #[test]
    fn writers_waiting_in_the_queue_are_shown_and_a_timeout_while_queued_says_so() {
        let (conf, _alone) = cluster();
        // Another job holds every CPU of the cluster: the cell's srun waits in the queue.
        let blocker = Job(
            conf,
            sbatch(conf, &["--ntasks=6", "--output=/dev/null"], "sleep 300"),
        );
        wait_running(conf, &blocker.1);
        let (_d, plan, out) = plan_dir(
            "name = \"queued\"\n[matrix]\nsizes = [100]\ninline = [true]\n\
         [concurrent]\nconcurrency = [2]\nduration_secs = 1\n\
         [run]\ncell_timeout_secs = 8\n\
         launcher = \"srun --ntasks={workers} --label --input=all --kill-on-bad-exit=1\"\n",
        );
        let mut cmd = bench();
        cmd.env("SLURM_CONF", conf);
        let child = spawn_sweep(cmd, "run", &plan, &out, &[]);
        // `bench status` names the running cell and what srun says while it waits.
        let start = Instant::now();
        let status = loop {
            let o = bench()
                .args(["status", plan.to_str().unwrap(), "--out"])
                .arg(&out)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            // The cell shows as running at once; what srun says of its wait comes after.
            if text.contains("waiting: srun: job") {
                break text;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "status never showed the wait: {text}"
            );
            std::thread::sleep(Duration::from_millis(200));
        };
        assert!(
            status.contains("conc_inline_true_rows_100_c_2: waiting: srun: job")
                && status.contains("queued and waiting for resources"),
            "{status}"
        );
        assert!(
            status.contains("running now: conc_inline_true_rows_100_c_2"),
            "{status}"
        );
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(3), "{err}");
        // The log shows the wait as it comes, and the failure says the workers never started.
        assert!(
            err.contains("conc_inline_true_rows_100_c_2: waiting: srun: job"),
            "{err}"
        );
        assert!(
            err.contains("the cell's workers had not started within 8s")
                && err.contains("queued and waiting for resources")
                && err.contains("--overcommit"),
            "{err}"
        );
        assert!(!out.join(".running").exists(), "the wait is over");
    }
}
