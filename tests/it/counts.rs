//! Verdicts from exact counts: a build that makes one request more per operation gets a
//! count verdict from one run a side, whatever the machine's noise, naming the request; an
//! identical build gets none; `--gate` decides which verdicts exit 5.

use crate::common::*;

/// One continuous cell, one run a side (no time verdict: a time needs 3 runs).
const PLAN: &str = "name = 'counts'\n[matrix]\nsizes = [100]\ninline = [true]\n\
                    [continuous]\noperations = 10\n";

fn ab(
    plan: &std::path::Path,
    out: &std::path::Path,
    cand: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    let args = [
        &["--candidate", cand.to_str().unwrap(), "--no-extend"],
        extra,
    ]
    .concat();
    sweep_with(bench(), "ab", plan, out, &args)
}

/// The count verdict of the cell, from the table of exact counts.
fn count_verdict(text: &str) -> String {
    let table = text
        .split("counts per successful operation")
        .nth(1)
        .unwrap_or_else(|| panic!("no table of exact counts in\n{text}"));
    let line = (table.lines())
        .find(|l| l.starts_with("cont_inline_true_rows_100") || l.starts_with("conc_"))
        .unwrap_or_else(|| panic!("no count row in\n{text}"));
    line.split("  ").last().unwrap().trim().to_string()
}

#[test]
fn one_more_head_per_operation_is_a_count_verdict_from_one_run_and_the_gate_decides_the_exit() {
    let (dir, plan, out) = plan_dir(PLAN);
    let head = candidate(dir.path(), "head.sh", "BENCH_EXTRA_HEADS=1");
    let o = ab(&plan, &out, &head, &["--fail-on-regression"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(5), "{text}{}", stderr(&o));
    let v = count_verdict(&text);
    assert!(v.starts_with("REGRESSION (B: +1.0 HEAD per op, "), "{v}");
    // Round trips are timed (requests that overlap in time): shown, never in a verdict.
    assert!(!v.contains("round trips"), "{v}");
    assert!(
        !v.contains("GET") && !v.contains("bytes"),
        "only what changed: {v}"
    );
    assert!(
        text.contains("counts: 1 regressed, 0 improved, 0 the same"),
        "{text}"
    );
    // One run a side: no time verdict, so the time gate passes and the count gate fails.
    let again = |gate: &str| {
        let o = bench()
            .args([
                "compare",
                out.to_str().unwrap(),
                "--fail-on-regression",
                "--gate",
                gate,
            ])
            .output()
            .unwrap();
        o.status.code()
    };
    assert_eq!(again("time"), Some(0));
    assert_eq!(again("counts"), Some(5));
    assert_eq!(again("both"), Some(5));
    // As JSON: the metric that moved, each run's value per side.
    let o = bench()
        .args(["compare", out.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cell = &doc["counts"][0];
    assert_eq!(cell["regressed"], true, "{doc}");
    let headm = (cell["metrics"].as_array().unwrap().iter())
        .find(|m| m["metric"] == "HEAD")
        .unwrap();
    assert_eq!(headm["change"], "more");
    let (a, b) = (
        headm["a"][0].as_f64().unwrap(),
        headm["b"][0].as_f64().unwrap(),
    );
    assert_eq!(b - a, 1.0, "{headm}");
    assert_eq!(doc["count_regressions"], 1);

    // The same build: the same counts, exit 0 under every gate.
    let same = candidate(dir.path(), "same.sh", "BENCH_EXTRA_HEADS=0");
    let out2 = dir.path().join("same");
    let o = ab(
        &plan,
        &out2,
        &same,
        &["--fail-on-regression", "--gate", "counts"],
    );
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{text}{}", stderr(&o));
    assert_eq!(count_verdict(&text), "same counts");
}

/// `bench ab` of a plan against a candidate with one HEAD more per operation: the plan's
/// directory and path, the candidate, and what bench ab printed.
fn against_a_head_more(
    plan_text: &str,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    String,
) {
    let (dir, plan, out) = plan_dir(plan_text);
    let head = candidate(dir.path(), "head.sh", "BENCH_EXTRA_HEADS=1");
    let o = ab(&plan, &out, &head, &[]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{text}{}", stderr(&o));
    (dir, plan, head, text)
}

/// The last line of `text` about the cell `id`.
fn last_row<'a>(text: &'a str, id: &str) -> &'a str {
    (text.lines())
        .rfind(|l| l.starts_with(id))
        .unwrap_or_else(|| panic!("{text}"))
}

/// Several writers: one run a side is no count verdict, and says why.
#[test]
fn several_writers_need_two_runs_a_side_for_a_count_verdict() {
    let plan_text = "name = 'counts'\n[matrix]\nsizes = [100]\ninline = [true]\n\
                     [concurrent]\nconcurrency = [2]\nduration_secs = 1\n";
    let (dir, plan, head, text) = against_a_head_more(plan_text);
    let line = last_row(&text, "conc_inline_true_rows_100_c_2");
    assert!(line.contains("no count verdict (several writers' counts vary from run to run: a count verdict needs 2 runs a side)"), "{line}");
    // With 2 runs a side, their commits as far behind the other writer: the planted HEAD,
    // exactly, whatever else the slower commits changed in how the writers interleaved.
    let two = plan_text.to_string() + "[run]\nrepetitions = 2\n";
    std::fs::write(&plan, two).unwrap();
    let o = ab(&plan, &dir.path().join("two"), &head, &[]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{text}{}", stderr(&o));
    let v = count_verdict(&text);
    assert!(v.starts_with("REGRESSION (B: +1.0 HEAD (median op "), "{v}");
    let (place, rest) = v
        .split_once(") per op, 4.0 → 5.0")
        .unwrap_or_else(|| panic!("{v}"));
    assert!(place.ends_with(" behind"), "{v}");
    assert!(
        !rest.contains("REGRESSION") && !rest.contains("B: +"),
        "the HEAD alone: {v}"
    );
}

/// Several writers, a build slower per commit with the same requests: its writers
/// interleave otherwise (each waits 20 ms after its commit, while the other commits), which
/// is no count verdict against it: the same counts (of commits as far behind), or no verdict
/// naming the interleaving.
#[test]
fn several_writers_slower_with_the_same_requests_get_no_count_regression() {
    let plan_text = "name = 'counts'\n[matrix]\nsizes = [100]\ninline = [true]\n\
                     [concurrent]\nconcurrency = [2]\nduration_secs = 1\n\
                     [run]\nrepetitions = 2\n";
    let (dir, plan, out) = plan_dir(plan_text);
    let slow = candidate(dir.path(), "slow.sh", "BENCH_OP_DELAY_MS=20");
    let o = ab(
        &plan,
        &out,
        &slow,
        &["--fail-on-regression", "--gate", "counts"],
    );
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let v = count_verdict(&text);
    assert!(
        (v.starts_with("same counts (commits ") && v.ends_with(" behind)"))
            || v.starts_with("no count verdict (several writers interleaved differently"),
        "{v}\n{text}"
    );
    assert_eq!(o.status.code(), Some(0), "{text}{}", stderr(&o));
}

/// One writer for a time: it does as much as fits, so one run a side is no count verdict,
/// and its bytes, which grow with the commits it fits, are never judged.
#[test]
fn a_cell_bounded_by_time_needs_two_runs_a_side_and_leaves_its_bytes_out() {
    let plan_text = "name = 'counts'\n[matrix]\nsizes = [100]\ninline = [true]\n\
                     [concurrent]\nconcurrency = [1]\nduration_secs = 1\n";
    let (_dir, _plan, _head, text) = against_a_head_more(plan_text);
    let line = last_row(&text, "conc_inline_true_rows_100_c_1");
    assert!(
        line.contains("no count verdict (a cell bounded by time does as much as fits"),
        "{line}"
    );
    assert!(
        text.contains("bytes not judged: a cell bounded by time"),
        "{text}"
    );
}
