//! Verdicts that survive noise: identical runs give none, a planted slowdown gives one,
//! and `bench ab` compares two builds pair by pair. Real runs of the real binary.

use std::path::{Path, PathBuf};

use crate::common::*;

/// A continuous cell at 100 rows, 20 commits, five repetitions.
const PLAN: &str = "name = 'verdicts'\n[matrix]\nsizes = [100]\ninline = [false]\n\
                    [continuous]\noperations = 20\n[run]\nrepetitions = 5\norder = 'interleaved'\n";

/// The planted slowdown: with commits of a few milliseconds at 100 rows, 20 ms more per
/// commit divides the throughput several times over.
const DELAY_MS: f64 = 20.0;

fn compare(args: &[&str]) -> std::process::Output {
    bench().arg("compare").args(args).output().unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The line of the table for this cell.
fn row<'a>(text: &'a str, cell: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(cell))
        .unwrap_or_else(|| panic!("no row for {cell} in\n{text}"))
}

#[test]
fn identical_runs_are_within_noise_and_a_planted_slowdown_is_a_significant_regression() {
    let _alone = crate::alone();
    let (dir, plan, out_a) = plan_dir(PLAN);
    let (out_a2, out_slow) = (dir.path().join("again"), dir.path().join("slow"));
    for out in [&out_a, &out_a2] {
        let o = run(&plan, out, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let mut slow = bench();
    slow.env(bench_lance::worker::OP_DELAY_ENV, DELAY_MS.to_string());
    let o = run_with(slow, &plan, &out_slow, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let (a, a2, s) = (
        out_a.to_str().unwrap(),
        out_a2.to_str().unwrap(),
        out_slow.to_str().unwrap(),
    );
    // Two separate runs of the same binary: no verdict, and not "within noise" either: the
    // spread two runs differ by (±100 % by default) leaves the interval across ±10 %.
    let o = compare(&[a, a2, "--fail-on-regression"]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}{}", stderr(&o));
    let r = row(&text, "cont_inline_false_rows_100");
    assert!(
        r.contains("undecided (ops/s ") && r.ends_with(": across ±10%)"),
        "{r}"
    );
    assert!(
        text.contains("0 regressed, 0 improved, 0 within noise, 1 undecided"),
        "{text}"
    );

    // The planted slowdown: significant, beyond the threshold, exit 5.
    let o = compare(&[a, s, "--fail-on-regression"]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(5), "{text}{}", stderr(&o));
    let r = row(&text, "cont_inline_false_rows_100");
    assert!(r.contains("REGRESSION (ops/s -"), "{r}");
    assert!(r.contains("p50 +"), "latency regressed too: {r}");
    // Explained: no request more, the time in the rest of the commit (its CPU).
    assert!(
        r.contains(" — why: +") && r.contains("requests unchanged; most in other (CPU, locks)"),
        "{r}"
    );
    assert!(text.contains("1 regressed"), "{text}");
    // Each record of the slow run took its delay in every commit.
    for rec in lines(&out_slow.join("results.jsonl")) {
        assert!(rec["min_latency_ms"].as_f64().unwrap() >= DELAY_MS, "{rec}");
    }

    // The summary of a run with repetitions carries the spread.
    let csv = std::fs::read_to_string(out_a.join("summary.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let values: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let col = |name: &str| values[header.iter().position(|h| *h == name).unwrap()];
    let (lo, hi, tps) = (
        col("tps_ci_low").parse::<f64>().unwrap(),
        col("tps_ci_high").parse::<f64>().unwrap(),
        col("tps").parse::<f64>().unwrap(),
    );
    assert!(lo <= tps && tps <= hi, "{lo} {tps} {hi}");
    assert_eq!(
        col("ci_level"),
        "0.938",
        "five repetitions: the extremes cover 93.75 %"
    );
    assert!(col("tps_cv").parse::<f64>().unwrap() > 0.0);
}

fn delayed_candidate(dir: &Path, delay_ms: f64) -> PathBuf {
    candidate(
        dir,
        "candidate.sh",
        &format!("BENCH_OP_DELAY_MS={delay_ms}"),
    )
}

fn ab(plan: &Path, out: &Path, candidate: &Path, extra: &[&str]) -> std::process::Output {
    crate::pairs::ab(plan, out, candidate, extra)
}

/// The interval `[lo–hi]` printed after the first ratio (throughput's) of a row.
fn first_interval(row: &str) -> (f64, f64) {
    let inside = row
        .split('[')
        .nth(1)
        .and_then(|s| s.split(']').next())
        .unwrap();
    let (lo, hi) = inside.split_once('–').unwrap();
    (lo.parse().unwrap(), hi.parse().unwrap())
}

#[test]
fn ab_finds_no_difference_between_a_build_and_itself() {
    let _alone = crate::alone();
    // Six pairs of whole runs: three crossovers, the fewest a test needs.
    let (_dir, plan, out) = plan_dir(&PLAN.replace("repetitions = 5", "repetitions = 6"));
    let own = PathBuf::from(env!("CARGO_BIN_EXE_bench"));
    // Whole runs as pairs, one arm after the other. At ±50 %: whole runs of 20 commits
    // differ by a few %, so identical builds' interval lies within the band.
    let o = ab(
        &plan,
        &out,
        &own,
        &[
            "--fail-on-regression",
            "--pairing",
            "runs",
            "--no-extend",
            "--threshold",
            "50",
        ],
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let r = row(&text, "cont_inline_false_rows_100");
    assert!(r.ends_with("within noise"), "{text}");
    // The ratio printed is the pairs' own estimate, inside its interval.
    let ratio: f64 = r.split_whitespace().nth(5).unwrap().parse().unwrap();
    let (lo, hi) = first_interval(r);
    assert!(lo <= ratio && ratio <= hi, "{r}");
    assert!(r.contains("6 runs"), "six pairs of runs: {r}");
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 12, "six pairs");
    let arms: Vec<&str> = records.iter().map(|r| r["arm"].as_str().unwrap()).collect();
    assert_eq!(arms, ["A", "B", "B", "A"].repeat(3), "A B B A order");
    for r in &records {
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["lance_version"], bench_lance::plan::LANCE_VERSION);
    }
    // The report of an A/B directory holds the paired table; compare reads it alone.
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## A/B: arm B against arm A"), "{report}");
    let o = compare(&[out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("paired t-test"), "{}", stdout(&o));
}

#[test]
fn ab_finds_a_planted_slowdown_with_its_ratio_in_the_interval() {
    let _alone = crate::alone();
    let (dir, plan, out) = plan_dir(PLAN);
    let candidate = delayed_candidate(dir.path(), DELAY_MS);
    // No option but the exit code's: by default the cell runs until it decides.
    let o = ab(&plan, &out, &candidate, &["--fail-on-regression"]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(5), "{text}");
    let r = row(&text, "cont_inline_false_rows_100");
    assert!(r.contains("REGRESSION (ops/s -"), "{r}");
    assert!(
        stderr(&o).contains("decided at ±10.0 % after"),
        "{}",
        stderr(&o)
    );
    // The planted ratio of throughput over the lockstep pairs: A's commits took avg ms each
    // on average, B's the delay more.
    let records = lines(&out.join("results.jsonl"));
    let a: Vec<f64> = records
        .iter()
        .filter(|r| r["arm"] == "A")
        .map(|r| r["avg_latency_ms"].as_f64().unwrap())
        .collect();
    assert!(records.iter().all(|r| r["paired"]["pairing"] == "lockstep"));
    let mean = a.iter().sum::<f64>() / a.len() as f64;
    let planted = mean / (mean + DELAY_MS);
    let (lo, hi) = first_interval(r);
    // The delay is a thread sleep inside B's timed operation, which wakes late on a busy
    // machine (seen here: 1.6 ms late on 2 cores), so B is a little slower than planted and
    // the interval, a few % wide, can sit just below the planted ratio: allow 10 % of it.
    assert!(
        lo * 0.9 <= planted && planted <= hi * 1.1,
        "planted {planted:.3} far from [{lo}, {hi}]: {r}"
    );
    assert!(hi < 0.9, "{r}");
}

#[test]
fn an_incompatible_candidate_is_refused_before_any_cell() {
    let _alone = crate::alone();
    let (dir, plan, out) = plan_dir(PLAN);
    let garbage = dir.path().join("garbage.sh");
    std::fs::write(&garbage, "#!/bin/sh\necho 'hello, I am not bench'\n").unwrap();
    let mut perms = std::fs::metadata(&garbage).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&garbage, perms).unwrap();
    let o = ab(&plan, &out, &garbage, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("arm B") && err.contains("is not a bench worker"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "one message: {err}");
    assert!(!out.exists(), "nothing was written");
}
