//! `bench ab` with pairs inside a cell: lockstep operations, time slices and a duet, on the
//! real binary and lance. Each arm's catalog must be verified, and every operation a worker
//! reported must be in exactly one unit of the pairs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::*;

pub fn ab(plan: &Path, out: &Path, candidate: &Path, extra: &[&str]) -> std::process::Output {
    let candidate = candidate.to_str().unwrap();
    let args = [&["--candidate", candidate], extra].concat();
    sweep_with(bench(), "ab", plan, out, &args)
}

fn own() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_bench"))
}

/// The records of one arm, in repetition order.
fn arm<'a>(records: &'a [serde_json::Value], tag: &str, name: &str) -> Vec<&'a serde_json::Value> {
    let mut v: Vec<_> = records
        .iter()
        .filter(|r| r["arm"] == name && r["bench_tag"] == tag)
        .collect();
    v.sort_by_key(|r| r["repetition"].as_u64());
    v
}

fn nums(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .map(|a| a.iter().map(|x| x.as_f64().unwrap()).collect())
        .unwrap_or_default()
}

/// Every record verified, its units' operations summing to its successful operations (and
/// reads), its window the sum of its units' times.
fn check_units(r: &serde_json::Value, pairing: &str) {
    assert_eq!(r["verified"], true, "{r}");
    let p = &r["paired"];
    assert_eq!(p["pairing"], pairing, "{r}");
    let ops: f64 = nums(&p["unit_ops"]).iter().sum();
    assert_eq!(ops, r["total_operations"].as_f64().unwrap(), "{r}");
    if r["reads"].is_object() {
        let reads: f64 = nums(&p["unit_reads"]).iter().sum();
        assert_eq!(
            reads,
            r["reads"]["total_operations"].as_f64().unwrap(),
            "{r}"
        );
    }
    if pairing != "duet" {
        let ms: f64 = nums(&p["unit_ms"]).iter().sum();
        let window = r["total_duration_ms"].as_f64().unwrap();
        assert!(
            (ms - window).abs() < 1.0,
            "window {window} vs units {ms}: {r}"
        );
    }
}

/// The row of a cell in `bench ab`'s table, and its first ratio with its interval.
fn ratio_row(text: &str, cell: &str) -> (String, f64, f64, f64) {
    let row = text
        .lines()
        .find(|l| l.starts_with(cell))
        .unwrap_or_else(|| panic!("no row for {cell} in\n{text}"))
        .to_string();
    let cols: Vec<&str> = row.split_whitespace().collect();
    // cell, A, [±cv,] B, [±cv,] ratio, [lo–hi], ...: the first interval and its ratio.
    let at = cols.iter().position(|c| c.starts_with('[')).unwrap();
    let ratio: f64 = cols[at - 1].parse().unwrap();
    let inside = cols[at].trim_start_matches('[').trim_end_matches(']');
    let (lo, hi) = inside.split_once('–').unwrap();
    let (lo, hi) = (lo.parse().unwrap(), hi.parse().unwrap());
    (row, ratio, lo, hi)
}

/// A continuous cell of 20 commits, six repetitions: three crossovers, the fewest a test
/// needs.
const LOCKSTEP: &str = "name = 'lockstep'\n[matrix]\nsizes = [100]\ninline = [false]\n\
                        [continuous]\noperations = 20\n[run]\nrepetitions = 6\n";

#[test]
fn lockstep_pairs_every_operation_and_verifies_both_catalogs() {
    let _alone = crate::alone();
    let (dir, plan, out) = plan_dir(LOCKSTEP);
    // Both arms through wrappers that log each start with its process id: who is started
    // first in each run (the lower id: processes are numbered as they are forked; the
    // wrappers' lines may land in either order).
    let log = dir.path().join("starts.log");
    let wrapper = |name: &str| {
        let line = format!("echo \"$1 $$ {name}\" >> {};", log.display());
        candidate(dir.path(), &format!("{name}.sh"), &line)
    };
    let (a, b) = (wrapper("A"), wrapper("B"));
    let o = ab(
        &plan,
        &out,
        &b,
        &[
            "--baseline",
            a.to_str().unwrap(),
            "--fail-on-regression",
            "--no-extend",
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{text}{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(
        records.len(),
        12,
        "six repetitions, an A and a B record each"
    );
    let tag = "cont_inline_false_rows_100";
    for name in ["A", "B"] {
        let reps = arm(&records, tag, name);
        assert_eq!(reps.len(), 6);
        for r in reps {
            check_units(r, "lockstep");
            assert_eq!(
                nums(&r["paired"]["unit_ops"]).len(),
                20,
                "one unit per commit"
            );
            // A goes first in odd repetitions, B in even ones: a crossover each two.
            let odd = r["repetition"].as_u64().unwrap() % 2 == 1;
            assert_eq!(r["paired"]["first"], (name == "A") == odd, "{r}");
        }
    }
    // The arm that goes first is started first: A B, B A, A B, ... (a run's two workers
    // start before the next run's).
    let starts = std::fs::read_to_string(&log).unwrap();
    let workers: Vec<(u64, &str)> = (starts.lines())
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["worker", pid, name] => Some((pid.parse().unwrap(), name)),
            _ => None,
        })
        .collect();
    let firsts: String = workers
        .chunks(2)
        .map(|run| run.iter().min().unwrap().1)
        .collect();
    assert_eq!(
        firsts, "ABABAB",
        "the first started, run by run: {workers:?}"
    );
    // Both records of a repetition were appended together, A then B.
    let arms: Vec<&str> = records.iter().map(|r| r["arm"].as_str().unwrap()).collect();
    assert_eq!(arms, ["A", "B"].repeat(6));
    let (row, ratio, lo, hi) = ratio_row(&text, tag);
    assert!(
        lo <= ratio && ratio <= hi,
        "the ratio inside its interval: {row}"
    );
    let cols: Vec<&str> = row.split_whitespace().collect();
    let at = cols.iter().position(|c| *c == "lockstep").unwrap();
    assert_eq!(
        (cols[at - 1], cols[at + 1]),
        ("120", "6"),
        "120 pairs from 6 runs: {row}"
    );
    assert!(!row.contains("REGRESSION"), "{row}");
    // The workers told what the scheduler did to them.
    for r in &records {
        let cpu = &r["worker_cpu"];
        assert!(cpu["busy_ms"].as_f64().unwrap() > 0.0, "{r}");
        assert!(cpu["wait_ms"].as_f64().unwrap() >= 0.0, "{r}");
        assert!(!cpu["by_cpu_ms"].as_array().unwrap().is_empty(), "{r}");
    }
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["sweep"]["pairing"], "alternate");
    // Resuming with another pairing is refused, nothing changed.
    let o = ab(&plan, &out, &own(), &["--pairing", "runs"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--pairing alternate"), "{}", stderr(&o));
    assert_eq!(lines(&out.join("results.jsonl")).len(), 12);
}

#[test]
fn slices_pause_slow_operations_and_lose_none() {
    let _alone = crate::alone();
    // Operations of 150 ms against slices of 200 ms: most pauses arrive mid-operation.
    let plan = "name = 'slices'\n[matrix]\nsizes = [100]\ninline = [false]\n\
                [concurrent]\nconcurrency = [2]\nduration_secs = 1\n\
                [mixed]\nclients = [2]\nreads_per_write = 2\nduration_secs = 1\n\
                [run]\nrepetitions = 6\n";
    let (dir, plan, out) = plan_dir(plan);
    let slow = candidate(dir.path(), "slow.sh", "BENCH_OP_DELAY_MS=150");
    let o = ab(&plan, &out, &slow, &["--slice-ms", "200", "--no-extend"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{text}");
    let records = lines(&out.join("results.jsonl"));
    for tag in [
        "conc_inline_false_rows_100_c_2",
        "mixed_inline_false_rows_100_c_2",
    ] {
        let (a, b) = (arm(&records, tag, "A"), arm(&records, tag, "B"));
        assert_eq!((a.len(), b.len()), (6, 6), "{tag}");
        for (ra, rb) in a.iter().zip(&b) {
            for r in [ra, rb] {
                check_units(r, "slices");
                // Each arm ran for about the duration in slices of at least 200 ms.
                for ms in nums(&r["paired"]["unit_ms"]) {
                    assert!(ms >= 200.0, "a slice lasts its length at least: {ms}");
                }
                let window = r["total_duration_ms"].as_f64().unwrap();
                assert!((1000.0..4000.0).contains(&window), "{window}");
            }
            let (na, nb) = (
                nums(&ra["paired"]["unit_ms"]).len(),
                nums(&rb["paired"]["unit_ms"]).len(),
            );
            assert_eq!(na, nb, "a slice of each arm per pair");
        }
        // B sleeps 150 ms in every operation: far slower, and the interval says so.
        let (row, ratio, lo, hi) = ratio_row(&text, tag);
        assert!(lo <= ratio && ratio <= hi && hi < 1.0, "{row}");
    }
}

#[test]
fn a_worker_dying_mid_cell_fails_the_cell_for_both_arms() {
    let _alone = crate::alone();
    let (dir, plan, out) = plan_dir(LOCKSTEP);
    let crash = candidate(dir.path(), "crash.sh", "BENCH_WORKER_EXIT_AFTER=5");
    let o = ab(&plan, &out, &crash, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("arm B: worker 0 exited with exit status: 86"),
        "the reason names the arm: {err}"
    );
    assert!(
        lines(&out.join("results.jsonl")).is_empty(),
        "no half pair kept"
    );
    let state = std::fs::read_to_string(out.join("state.json")).unwrap();
    assert!(
        state.contains("\"failed\"") && state.contains("arm B"),
        "{state}"
    );
    let left = processes_mentioning(out.to_str().unwrap());
    assert!(left.is_empty(), "no worker left: {left:?}");
}

/// Start `bench ab --no-extend` against `candidate`, wait for its first pair's records,
/// then interrupt it (during its next pair): it exits 130.
fn interrupt_after_a_pair(plan: &Path, out: &Path, candidate: &Path) {
    let args = ["--candidate", candidate.to_str().unwrap(), "--no-extend"];
    let mut child = spawn_sweep(bench(), "ab", plan, out, &args);
    let results = out.join("results.jsonl");
    let until = Instant::now() + Duration::from_secs(120);
    while lines(&results).len() < 2 {
        assert!(Instant::now() < until, "no pair recorded");
        assert!(child.try_wait().unwrap().is_none(), "bench ab ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
}

#[test]
fn an_interrupted_ab_resumes_without_losing_finished_pairs() {
    let _alone = crate::alone();
    let plan = "name = 'resume'\n[matrix]\nsizes = [100]\ninline = [false]\n\
                [continuous]\noperations = 200\n[run]\nrepetitions = 3\n";
    let (dir, plan, out) = plan_dir(plan);
    // B takes 5 ms more a commit: a repetition lasts a few seconds.
    let slow = candidate(dir.path(), "slow.sh", "BENCH_OP_DELAY_MS=5");
    let results = out.join("results.jsonl");
    interrupt_after_a_pair(&plan, &out, &slow);
    let kept = lines(&results).len();
    assert!(
        kept >= 2 && kept.is_multiple_of(2),
        "whole pairs only: {kept}"
    );
    let o = ab(&plan, &out, &slow, &["--no-extend"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&results);
    assert_eq!(records.len(), 6, "three pairs, each once");
    for name in ["A", "B"] {
        let reps: Vec<u64> = arm(&records, "cont_inline_false_rows_100", name)
            .iter()
            .map(|r| r["repetition"].as_u64().unwrap())
            .collect();
        assert_eq!(reps, [1, 2, 3], "arm {name}");
    }
}

#[test]
fn precision_mode_fixes_the_count_after_a_pilot_and_says_when_the_budget_ends_it() {
    let _alone = crate::alone();
    // The plan's 8 runs (4 crossovers) are the pilot that fixes the count; ±0.1 % needs
    // far more runs than a budget of 1 s allows (the pilot alone takes about that long).
    let plan = "name = 'precision'\n[matrix]\nsizes = [100]\ninline = [false]\n\
                [continuous]\noperations = 20\n[run]\nrepetitions = 8\n";
    let (_dir, plan, out) = plan_dir(plan);
    let args = ["--precision", "0.1", "--budget-secs", "1"];
    let o = ab(&plan, &out, &own(), &args);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{text}{err}");
    assert!(err.contains("its pilot of 8 repetitions needs"), "{err}");
    assert!(err.contains("budget of 1s ran out after"), "{err}");
    assert!(text.contains("not ±0.1 %"), "{text}");
    // Both arms are this binary: the answer says any verdict would be a false alarm.
    assert!(
        text.contains("A and B are the same file (digest "),
        "{text}"
    );
    let runs = lines(&out.join("results.jsonl")).len() / 2;
    assert!(runs >= 8, "the pilot's runs at least: {runs}");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("state.json")).unwrap()).unwrap();
    let decided = &state["cells"]["cont_inline_false_rows_100"]["precision"];
    assert_eq!(decided["pilot"], 8, "{state}");
    assert_eq!(
        decided["repetitions"], runs,
        "what the budget allowed: {state}"
    );
    // Done: a second run adds nothing.
    let o = ab(&plan, &out, &own(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(lines(&out.join("results.jsonl")).len(), runs * 2);
    // --precision needs pairs inside the runs.
    let o = ab(
        &plan,
        &out,
        &own(),
        &["--precision", "2", "--pairing", "runs"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--precision needs pairs inside"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn duet_runs_both_arms_at_once_and_pairs_by_operation() {
    let _alone = crate::alone();
    let (dir, plan, out) = plan_dir(LOCKSTEP);
    let slow = candidate(dir.path(), "slow.sh", "BENCH_OP_DELAY_MS=20");
    // By default the cell runs on until it decides: 6 runs (3 crossovers) do on a quiet
    // machine, more where a neighbour makes the runs noisy.
    let o = ab(&plan, &out, &slow, &["--pairing", "duet"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{text}");
    let records = lines(&out.join("results.jsonl"));
    assert!(
        records.len() >= 12 && records.len().is_multiple_of(2),
        "{}",
        records.len()
    );
    for r in &records {
        check_units(r, "duet");
    }
    let (row, ratio, lo, hi) = ratio_row(&text, "cont_inline_false_rows_100");
    assert!(lo <= ratio && ratio <= hi && hi < 0.9, "{row}");
}

/// A candidate slower by a planted delay and one request more a commit: its time verdict
/// names the request beside the time, and its count verdict the request alone.
#[test]
fn a_planted_request_is_named_in_the_time_verdict_and_is_a_count_verdict() {
    let _alone = crate::alone();
    let (dir, plan, out) = plan_dir(LOCKSTEP);
    let cand = candidate(
        dir.path(),
        "head.sh",
        "BENCH_OP_DELAY_MS=20 BENCH_EXTRA_HEADS=1",
    );
    let o = ab(&plan, &out, &cand, &[]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{text}{}", stderr(&o));
    let rows: Vec<&str> = (text.lines())
        .filter(|l| l.starts_with("cont_inline_false_rows_100"))
        .collect();
    assert_eq!(rows.len(), 2, "the time row and the count row: {text}");
    assert!(
        rows[0].contains("REGRESSION (ops/s -")
            && rows[0].contains("why: +")
            && rows[0].contains(": HEAD +1.0 per op, round trips +1.0"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].contains("REGRESSION (B: +1.0 HEAD per op"),
        "{}",
        rows[1]
    );
}

/// The candidate's bytes as records carry them: the first 16 hex digits of its SHA-256.
fn digest16(path: &Path) -> String {
    use sha2::Digest;
    let bytes = std::fs::read(path).unwrap();
    let d = sha2::Sha256::digest(&bytes);
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Rebuild the candidate, rerun the same `bench ab`: every cell runs again (a pair needs
/// both arms), and the verdict is the new build's; `bench status` says why the cells were
/// stale. A run interrupted and resumed across a rebuild never pools two builds.
#[test]
fn a_rebuilt_candidate_runs_every_cell_again_and_the_verdict_is_its_own() {
    let _alone = crate::alone();
    let (dir, plan, out) = plan_dir(LOCKSTEP);
    let args = ["--no-extend", "--fail-on-regression"];
    let cand = candidate(dir.path(), "cand.sh", "BENCH_OP_DELAY_MS=0");
    let o = ab(&plan, &out, &cand, &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first = lines(&out.join("results.jsonl"));
    assert_eq!(first.len(), 12);
    let was = digest16(&cand);
    assert!(
        first
            .iter()
            .filter(|r| r["arm"] == "B")
            .all(|r| r["build_digest"] == was)
    );

    // The same wrapper, now 15 ms slower a commit: the same command.
    candidate(dir.path(), "cand.sh", "BENCH_OP_DELAY_MS=15");
    let now = digest16(&cand);
    assert_ne!(was, now);
    let o = bench_on("status", &plan, &out);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("1 stale (a build changed)"), "{text}");
    assert!(
        text.contains(&format!("arm B rebuilt: {was} -> {now}")),
        "{text}"
    );
    let o = ab(&plan, &out, &cand, &args);
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(5), "the new build's verdict: {table}");
    assert!(
        stderr(&o).contains("1 cell run, 0 already done"),
        "{}",
        stderr(&o)
    );
    let all = lines(&out.join("results.jsonl"));
    assert_eq!(all.len(), 24, "every run again, both arms");
    let key = all[23]["cell_key"].clone();
    assert_ne!(key, first[0]["cell_key"]);
    let current: Vec<_> = all.iter().filter(|r| r["cell_key"] == key).collect();
    assert!(
        current
            .iter()
            .filter(|r| r["arm"] == "B")
            .all(|r| r["build_digest"] == now)
    );
    // The verdict is the slower build's: its p50 beyond the threshold (throughput, over
    // runs of 20 commits, may or may not decide too).
    let (row, _, _, _) = ratio_row(&table, "cont_inline_false_rows_100");
    let verdict = &row[row.find("REGRESSION").unwrap_or_else(|| panic!("{row}"))..];
    assert!(verdict.contains("p50 +"), "{row}");
    assert!(table.contains(&format!("digest {now}")), "{table}");

    // Interrupted after a pair, rebuilt, resumed: the pair of the earlier build does not
    // count; the cell's pairs are all of the build that finished it.
    let resumed = dir.path().join("resumed");
    let slow = candidate(dir.path(), "long.sh", "BENCH_OP_DELAY_MS=200");
    let results = resumed.join("results.jsonl");
    interrupt_after_a_pair(&plan, &resumed, &slow);
    candidate(dir.path(), "long.sh", "BENCH_OP_DELAY_MS=1");
    let o = ab(&plan, &resumed, &slow, &["--no-extend"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let all = lines(&results);
    let key = all.last().unwrap()["cell_key"].clone();
    let current: Vec<_> = all.iter().filter(|r| r["cell_key"] == key).collect();
    assert_eq!(current.len(), 12, "six pairs of the new build");
    let digests: std::collections::BTreeSet<String> = current
        .iter()
        .filter(|r| r["arm"] == "B")
        .map(|r| r["build_digest"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(digests.len(), 1, "{digests:?}");
    assert!(
        all.len() > current.len(),
        "the earlier build's pair is kept, apart"
    );
}

/// Time slices with a bound on commits and a duration: the arm that reaches its bound
/// ends mid-slice (its workers say `paused` as they stop), the other goes on alone; both
/// arms finish, verified.
#[test]
fn slices_end_an_arm_at_its_bound_and_both_finish_verified() {
    let _alone = crate::alone();
    let plan = "name = 'bounded'\n[matrix]\nsizes = [100]\ninline = [false]\n\
                [concurrent]\nconcurrency = [2]\noperations = 6\nduration_secs = 20\n\
                [run]\nrepetitions = 2\n";
    let (dir, plan, out) = plan_dir(plan);
    // B is slower: A reaches its bound first, mid-slice.
    let slow = candidate(dir.path(), "slow.sh", "BENCH_OP_DELAY_MS=30");
    let o = ab(&plan, &out, &slow, &["--slice-ms", "100", "--no-extend"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{text}{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 4);
    for r in &records {
        check_units(r, "slices");
        assert_eq!(r["operations_bound"], 6, "{r}");
        // The bound, and the commits the writers finished before `end` reached them (one
        // each in flight; more where a commit is quicker than the coordinator's reply on a
        // loaded machine); ended by the bound, long before the 20 s duration.
        let ops = r["total_operations"].as_u64().unwrap();
        assert!(ops >= 6, "the bound: {r}");
        let window_secs = ops as f64 / r["throughput_ops_per_sec"].as_f64().unwrap();
        assert!(window_secs < 10.0, "ended by the bound: {r}");
    }
}

/// By default a cell runs until its interval decides at the threshold, or its budget ends:
/// an undecided cell says so, and why.
#[test]
fn the_default_runs_a_cell_on_until_it_decides_or_its_budget_ends() {
    let _alone = crate::alone();
    let plan = "name = 'decide'\n[matrix]\nsizes = [100]\ninline = [false]\n\
                [continuous]\noperations = 60\n[run]\nrepetitions = 2\n";
    let (_dir, plan, out) = plan_dir(plan);
    // At ±10 %: a few runs decide on a quiet machine, and a few tens where a neighbour makes
    // them noisy, within the default budget. Two runs give no interval, and every commit
    // here takes at least 20 ms more (both arms alike), so each run takes at least 2.4 s
    // (120 commits) however fast the machine: a budget of 1 s is spent by the plan's two,
    // and the cell stops there.
    let slowed = || {
        let mut cmd = bench();
        cmd.env("BENCH_OP_DELAY_MS", "20");
        cmd
    };
    let candidate = own();
    let args =
        |extra: &[&'static str]| [&["--candidate", candidate.to_str().unwrap()], extra].concat();
    let o = sweep_with(
        slowed(),
        "ab",
        &plan,
        &out,
        &args(&["--threshold", "10", "--budget-secs", "1"]),
    );
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{text}{err}");
    assert!(
        err.contains("until its interval decides at ±10.0 %"),
        "{err}"
    );
    assert!(
        err.contains("budget of 1s ran out after 2 repetitions, undecided"),
        "{err}"
    );
    assert!(text.contains("undecided at ±10.0 % after 2 runs"), "{text}");
    // Asked again with a budget: it goes on from its runs until it decides.
    let o = sweep_with(slowed(), "ab", &plan, &out, &args(&["--threshold", "10"]));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("decided at ±10.0 % after"), "{err}");
    let runs = lines(&out.join("results.jsonl")).len() / 2;
    assert!(runs >= 6, "three crossovers at least: {runs}");
    assert!(err.contains("repetition 3, until decided"), "{err}");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("state.json")).unwrap()).unwrap();
    let decided = &state["cells"]["cont_inline_false_rows_100"]["precision"];
    assert_eq!(decided["threshold_pct"], 10.0, "{state}");
    assert_eq!(decided["repetitions"], runs, "{state}");
    // Decided: the same command runs nothing more.
    let o = sweep_with(slowed(), "ab", &plan, &out, &args(&["--threshold", "10"]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(lines(&out.join("results.jsonl")).len(), runs * 2);
}
