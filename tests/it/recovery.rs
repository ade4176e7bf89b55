//! Crashes, interrupts, timeouts, locks and bad input: nothing recorded is lost or duplicated.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::*;

const SMALL: &str = r#"
name = "recovery"
[matrix]
sizes = [100, 300]
inline = [true, false]
[continuous]
operations = 4
[concurrent]
concurrency = [2]
duration_secs = 1
"#;

fn tags(out: &Path) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in lines(&out.join("results.jsonl")) {
        *m.entry(r["bench_tag"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    m
}

fn no_workers_left(out: &Path) {
    let needle = out.join("store/runs");
    let needle = needle.to_str().unwrap();
    let start = Instant::now();
    while !processes_mentioning(needle).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "workers outlived their coordinator: {:?}",
            processes_mentioning(needle)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn sigkill_at_every_fault_point_then_resume_records_each_cell_once() {
    let (_dir, plan, out) = plan_dir(SMALL);
    for point in ["golden", "copy", "cell", "append", "cell", "append"] {
        let mut crashing = bench();
        crashing.env("BENCH_FAULT", point);
        let o = run_with(crashing, &plan, &out, &[]);
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&o.status),
            Some(libc::SIGKILL),
            "{point}: {}",
            stderr(&o)
        );
        no_workers_left(&out);
        assert!(
            tags(&out).values().all(|&n| n == 1),
            "{point}: {:?}",
            tags(&out)
        );
    }
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = tags(&out);
    assert_eq!(t.len(), 8, "{t:?}");
    assert!(t.values().all(|&n| n == 1), "{t:?}");
    for r in lines(&out.join("results.jsonl")) {
        assert_eq!(r["verified"], true, "{r}");
    }
    // cleanup = "runs" (the default) removes the runs/ prefix once the sweep is finished.
    assert!(!out.join("store/runs").exists(), "run copies left behind");
    assert!(out.join("store/golden").exists(), "goldens are kept");
    no_workers_left(&out);
}

#[test]
fn a_torn_last_line_is_cut_and_its_cell_runs_again() {
    let text = SMALL
        .replace("sizes = [100, 300]", "sizes = [100]")
        .replace("inline = [true, false]", "inline = [false]");
    let (_dir, plan, out) = plan_dir(&text);
    assert_eq!(run(&plan, &out, &[]).status.code(), Some(0));
    let path = out.join("results.jsonl");
    let full = std::fs::read_to_string(&path).unwrap();
    let first = full.lines().next().unwrap().to_string();
    let last = full.lines().nth(1).unwrap();
    // A crash in the middle of writing the last record; the checkpoint had not marked it.
    std::fs::write(&path, format!("{first}\n{}", &last[..last.len() / 2])).unwrap();
    let state = std::fs::read_to_string(out.join("state.json")).unwrap();
    let mut state: serde_json::Value = serde_json::from_str(&state).unwrap();
    state["cells"]["conc_inline_false_rows_100_c_2"]["status"] = "running".into();
    std::fs::write(out.join("state.json"), state.to_string()).unwrap();

    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("torn last line"), "{}", stderr(&o));
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(
        after.starts_with(&format!("{first}\n")),
        "earlier lines are kept as they were"
    );
    let t = tags(&out);
    assert_eq!(t.len(), 2);
    assert!(t.values().all(|&n| n == 1), "{t:?}");
}

#[test]
fn a_timed_out_cell_fails_the_sweep_goes_on_and_retry_failed_completes_it() {
    let text = r#"
name = "timeout"
[matrix]
sizes = [100]
inline = [false]
[concurrent]
concurrency = [1, 2]
duration_secs = 1
[run]
cell_timeout_secs = 2
"#;
    let (_dir, plan, out) = plan_dir(text);
    // Every commit takes 5 s more: no cell can finish within 2 s.
    let slow = || {
        let mut cmd = bench();
        cmd.env(bench_lance::worker::OP_DELAY_ENV, "5000");
        cmd
    };
    let o = run_with(slow(), &plan, &out, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("FAILED conc_inline_false_rows_100_c_1: timeout"));
    assert!(
        stderr(&o).contains("FAILED conc_inline_false_rows_100_c_2: timeout"),
        "the sweep went on"
    );
    assert!(lines(&out.join("results.jsonl")).is_empty());
    no_workers_left(&out);
    // The report tells the failures, with their reasons.
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("**Failed cells**"), "{report}");
    for c in [
        "conc_inline_false_rows_100_c_1",
        "conc_inline_false_rows_100_c_2",
    ] {
        assert!(report.contains(&format!("- `{c}`: timeout")), "{report}");
    }

    let status = bench_on("status", &plan, &out);
    let status = String::from_utf8(status.stdout).unwrap();
    assert!(
        status.contains("2 cells: 0 done, 2 failed, 0 pending"),
        "{status}"
    );
    assert!(
        status.contains("conc_inline_false_rows_100_c_1: timeout"),
        "{status}"
    );

    // A resume does not retry failed cells by default, and says so.
    let o = run_with(slow(), &plan, &out, &[]);
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("--retry-failed"), "{}", stderr(&o));
    assert!(lines(&out.join("results.jsonl")).is_empty());

    // The timeout does not change the numbers, so the cells keep their keys.
    std::fs::write(
        &plan,
        text.replace("cell_timeout_secs = 2", "cell_timeout_secs = 120"),
    )
    .unwrap();
    let o = run(&plan, &out, &["--retry-failed"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(tags(&out).len(), 2);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(!report.contains("Failed cells"), "{report}");
}

/// A run that fails verification fails its cell, and it stays failed: a resume skips it and
/// exits 3, `bench status` says failed with the reason, `bench publish` leaves it out,
/// until `--retry-failed` runs it again and it verifies.
#[test]
fn a_failed_verification_stays_failed_until_a_retry_passes() {
    let text = "name = 'lost'\n[matrix]\nsizes = [100]\ninline = [false]\n\
                [continuous]\noperations = 5\n[run]\nrepetitions = 2\n";
    let (dir, plan, out) = plan_dir(text);
    let mut lose = bench();
    lose.env("BENCH_FAULT", "lose-manifest");
    let o = run_with(lose, &plan, &out, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("1 FAILED VERIFICATION"), "{err}");
    assert!(err.contains("VERIFICATION FAILED: cannot read"), "{err}");
    // The first repetition failed: the second did not run.
    let recs = lines(&out.join("results.jsonl"));
    assert_eq!(recs.len(), 1, "its record is kept");
    assert_eq!(recs[0]["verified"], false);
    for _ in 0..2 {
        let o = run(&plan, &out, &[]);
        assert_eq!(o.status.code(), Some(3), "still failed: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains(
                "skip cont_inline_false_rows_100: failed earlier (repetition 1 failed verification"
            ),
            "{err}"
        );
        assert!(
            err.contains("0 cells run, 0 already done, 1 failed"),
            "{err}"
        );
    }
    let status = String::from_utf8(bench_on("status", &plan, &out).stdout).unwrap();
    assert!(status.contains("0 done, 1 failed"), "{status}");
    assert!(status.contains("failed verification"), "{status}");
    // Nothing of it is published.
    let o = bench()
        .arg("publish")
        .arg(&out)
        .arg("--to")
        .arg(dir.path().join("db"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no cell of"), "{}", stderr(&o));
    // Retried without the fault: both repetitions verified, the cell done.
    let o = run(&plan, &out, &["--retry-failed"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs = lines(&out.join("results.jsonl"));
    assert_eq!(recs.len(), 3, "the failed run's record, then two verified");
    assert!(recs[1..].iter().all(|r| r["verified"] == true));
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("1 already done"), "{}", stderr(&o));
    // The summary stands by the verified runs: two repetitions.
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let header: Vec<&str> = summary.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = summary.lines().nth(1).unwrap().split(',').collect();
    let col = |n: &str| row[header.iter().position(|h| *h == n).unwrap()];
    assert_eq!(
        (col("verified"), col("repetitions")),
        ("true", "2"),
        "{summary}"
    );
}

/// `bench publish` of a directory whose sweep has not finished: only its done cells, each
/// left-out one named; a corrupt checkpoint is refused, naming it.
#[test]
fn publish_takes_only_done_cells_and_refuses_a_corrupt_checkpoint() {
    let text = "name = 'part'\n[matrix]\nsizes = [100]\ninline = [true, false]\n\
                [continuous]\noperations = 5\n[run]\nrepetitions = 2\n";
    let (dir, plan, out) = plan_dir(text);
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // One cell's second run as if it had not happened yet (interrupted after its first).
    let path = out.join("results.jsonl");
    let kept: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !(l.contains("cont_inline_true_rows_100") && l.contains("\"repetition\":2")))
        .map(str::to_string)
        .collect();
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    let db = dir.path().join("db");
    let publish = || {
        bench()
            .arg("publish")
            .arg(&out)
            .arg("--to")
            .arg(&db)
            .output()
            .unwrap()
    };
    let o = publish();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        // The done cell's time and its 4 exact counts.
        String::from_utf8_lossy(&o.stdout).contains("published 5 rows"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        stderr(&o)
            .contains("cont_inline_true_rows_100: left out, pending (1/2 repetitions recorded)"),
        "{}",
        stderr(&o)
    );
    // A corrupt checkpoint: refused, nothing written.
    std::fs::write(out.join("state.json"), "{not json").unwrap();
    let o = publish();
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("checkpoint") && stderr(&o).contains("state.json"),
        "{}",
        stderr(&o)
    );
}

fn spawn_run(plan: &Path, out: &Path) -> std::process::Child {
    bench()
        .arg("run")
        .arg(plan)
        .arg("--out")
        .arg(out)
        .args(["--progress", "lines"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn wait_for_lock_holder(out: &Path, pid: u32) {
    let start = Instant::now();
    while std::fs::read_to_string(out.join(".lock")).unwrap_or_default() != pid.to_string() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "run {pid} never took the lock"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn sigkill(child: &mut std::process::Child) {
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    child.wait().unwrap();
}

#[test]
fn a_second_run_on_the_same_directory_fails_at_once_naming_the_holder() {
    let text = "name = 'lock'\n[matrix]\nsizes = [100]\ninline = [false]\n[concurrent]\nconcurrency = [1]\nduration_secs = 30\n";
    let (_dir, plan, out) = plan_dir(text);
    let mut first = spawn_run(&plan, &out);
    wait_for_lock_holder(&out, first.id());
    let t = Instant::now();
    let second = run(&plan, &out, &[]);
    assert!(t.elapsed() < Duration::from_secs(5), "fails at once");
    assert_eq!(second.status.code(), Some(4));
    let err = stderr(&second);
    assert!(
        err.contains(&format!("in use by another bench run (pid {})", first.id())),
        "{err}"
    );
    sigkill(&mut first);
    no_workers_left(&out);
    // The dead holder's lock does not block the next run.
    let mut third = spawn_run(&plan, &out);
    wait_for_lock_holder(&out, third.id());
    sigkill(&mut third);
    no_workers_left(&out);
}

/// Results of two plans never mix: a copy of a plan with its sizes changed and its name
/// kept is refused in the first plan's directory (exit 2), naming both files and the fixes,
/// and nothing recorded changes; the same text from another path (a moved checkout) resumes;
/// `--fresh` moves the first plan's results aside and runs the second.
#[test]
fn a_second_plan_of_the_same_name_is_refused_in_the_first_plan_s_directory() {
    let (dir, first, out) = plan_dir(&tiny_plan());
    let o = run(&first, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let results = std::fs::read(out.join("results.jsonl")).unwrap();
    let summary = std::fs::read(out.join("summary.csv")).unwrap();

    let moved = dir.path().join("moved.toml");
    std::fs::copy(&first, &moved).unwrap();
    let o = run(&moved, &out, &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "the same text elsewhere: {}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(out.join("results.jsonl")).unwrap(), results);

    let other = dir.path().join("other.toml");
    let text = tiny_plan().replace("sizes = [", "sizes = [7, ");
    assert_ne!(text, tiny_plan(), "the copy changes the sizes");
    std::fs::write(&other, text).unwrap();
    let o = run(&other, &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let said = stderr(&o);
    // The directory names the file it was last run from: the moved one.
    for words in [
        "other.toml is another plan file",
        "--out",
        "--fresh",
        "moved.toml",
    ] {
        assert!(said.contains(words), "{words:?} in {said}");
    }
    assert_eq!(std::fs::read(out.join("results.jsonl")).unwrap(), results);
    assert_eq!(std::fs::read(out.join("summary.csv")).unwrap(), summary);

    let o = run(&other, &out, &["--fresh"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let sizes: Vec<String> = lines(&out.join("results.jsonl"))
        .iter()
        .map(|r| r["initial_entries"].to_string())
        .collect();
    assert!(sizes.contains(&"7".to_string()), "{sizes:?}");
}

/// A copy of a results directory (its own store copied with it) says where it came from
/// and how to resume it, and runs nothing.
#[test]
fn a_copied_results_directory_says_how_to_resume_it() {
    let text = "name = 'copied'\n[matrix]\nsizes = [10]\ninline = [false]\n\
                [continuous]\noperations = 2\n[run]\nrepetitions = 1\n";
    let (dir, plan, out) = plan_dir(text);
    let o = bench()
        .current_dir(dir.path())
        .args(["run", plan.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first = dir.path().join("results/copied");
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(&first)
        .arg(&out)
        .status();
    assert!(status.unwrap().success());
    let before = std::fs::read(out.join("results.jsonl")).unwrap();
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(
        said.contains(&format!("is a copy of {}", first.display())),
        "{said}"
    );
    assert!(
        said.contains(&format!("--out {}", first.display())),
        "{said}"
    );
    assert_eq!(std::fs::read(out.join("results.jsonl")).unwrap(), before);
}

/// A results directory or a root where nothing can be written (under /proc, refused even to
/// root) is named with the fix, exit 4, and nothing is created first: not the results
/// directory, not its lock.
#[test]
fn an_unwritable_out_or_root_names_the_fix_and_creates_nothing() {
    let (dir, plan, _) = plan_dir(
        "name = 'nowhere'\n[matrix]\nsizes = [10]\ninline = [false]\n\
         [continuous]\noperations = 2\n",
    );
    let out = dir.path().join("writable");
    for args in [
        vec!["--out", "/proc/bench-nowhere"],
        vec![
            "--out",
            out.to_str().unwrap(),
            "--root",
            "/proc/bench-nowhere",
        ],
    ] {
        let o = bench()
            .args(["run", plan.to_str().unwrap()])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(4), "{args:?}: {}", stderr(&o));
        let said = stderr(&o);
        assert!(
            said.contains("cannot write to store root /proc/bench-nowhere")
                && said.contains("choose a writable `root` or --out"),
            "{said}"
        );
        assert_eq!(said.matches("error:").count(), 1, "one message: {said}");
        assert!(!out.exists(), "{args:?}: nothing created before the check");
    }
}

/// `bench plan` of 10,000 writers at once warns that they would not fit in this machine's
/// memory, and says its time estimate is the matrix's; a plan of 2 writers says nothing.
#[test]
fn a_plan_whose_workers_would_not_fit_in_memory_is_warned_of() {
    let text = "name = 'huge'\n[matrix]\nsizes = [10]\ninline = [false]\n\
                [concurrent]\nconcurrency = [10000]\nduration_secs = 1\n";
    let (_d, plan, out) = plan_dir(text);
    let o = bench_on("plan", &plan, &out);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains("WARNING: conc_inline_false_rows_10_c_10000 runs 10000 workers at once"),
        "{said}"
    );
    assert!(
        said.contains("the time estimate is the matrix's, not the machine's"),
        "{said}"
    );
    let (_e, small, out) = plan_dir(&text.replace("10000", "2"));
    let said = String::from_utf8_lossy(&bench_on("plan", &small, &out).stdout).to_string();
    assert!(!said.contains("WARNING"), "{said}");
}

#[test]
fn bad_inputs_each_get_one_clear_message_and_nothing_is_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good =
        "name = 'bad'\n[matrix]\nsizes = [10]\ninline = [false]\n[continuous]\noperations = 1\n";
    let file = d.join("a-file");
    std::fs::write(&file, "x").unwrap();
    struct Case {
        plan: String,
        args: Vec<String>,
        setup: fn(&Path),
        code: i32,
        needle: &'static str,
    }
    let case =
        |plan: &str, args: &[&str], setup: fn(&Path), code: i32, needle: &'static str| Case {
            plan: plan.to_string(),
            args: args.iter().map(|s| s.to_string()).collect(),
            setup,
            code,
            needle,
        };
    let none: fn(&Path) = |_| {};
    let state = |text: &'static str| -> fn(&Path) {
        match text {
            "corrupt" => |out| {
                std::fs::create_dir_all(out).unwrap();
                std::fs::write(out.join("state.json"), "{ torn").unwrap();
            },
            "version" => |out| {
                std::fs::create_dir_all(out).unwrap();
                std::fs::write(
                    out.join("state.json"),
                    r#"{"version":7,"plan":"bad","cells":{}}"#,
                )
                .unwrap();
            },
            "other-plan" => |out| {
                std::fs::create_dir_all(out).unwrap();
                std::fs::write(
                    out.join("state.json"),
                    r#"{"version":1,"plan":"other","cells":{}}"#,
                )
                .unwrap();
            },
            _ => |out| {
                std::fs::create_dir_all(out).unwrap();
                std::fs::write(out.join("results.jsonl"), "{\"not\":\"a record\"}\n").unwrap();
            },
        }
    };
    let f = file.display().to_string();
    let ok_root = d.join("store-ok").display().to_string();
    let cases = vec![
        case("name = 'bad\n", &[], none, 2, "not valid TOML"),
        case("", &[], none, 2, "missing field `name`"),
        case(
            &good.replace("sizes", "size"),
            &[],
            none,
            2,
            "`matrix.size`",
        ),
        case(&good.replace("[10]", "[10, 10]"), &[], none, 2, "twice"),
        case(
            &format!(
                "operation = 'warm-read-describe-table'\n{}",
                good.replace("[10]", "[0]")
            ),
            &[],
            none,
            2,
            "no __manifest",
        ),
        case(&good.replace("[10]", "[]"), &[], none, 2, "at least one"),
        case(
            &good.replace("operations = 1", "operations = 'one'"),
            &[],
            none,
            2,
            "`continuous.operations` (line 6): must be a whole number of commits",
        ),
        case(
            good,
            &[
                "--root",
                "s3://b/x",
                "--storage-option",
                "aws_endpoint=http://127.0.0.1:9",
            ],
            none,
            2,
            "add --storage-option aws_allow_http=true",
        ),
        case(
            &format!("operation = 'write-nothing'\n{good}"),
            &[],
            none,
            2,
            "unknown operation",
        ),
        case(
            &good.replace("[continuous]\noperations = 1\n", ""),
            &[],
            none,
            2,
            "has no cells",
        ),
        case(
            &format!("{good}[concurrent]\nconcurrency = [0]\nduration_secs = 1\n"),
            &[],
            none,
            2,
            "`concurrent.concurrency`",
        ),
        case(
            &format!("{good}[run]\ncell_timeout_secs = 0\n"),
            &[],
            none,
            2,
            "`run.cell_timeout_secs`",
        ),
        case(
            &format!("root = 's3://'\n{good}"),
            &[],
            none,
            2,
            "names no bucket",
        ),
        case(
            &format!("root = 'gs://b/x'\n{good}"),
            &[],
            none,
            2,
            "`gs://` scheme",
        ),
        case(
            &format!("root = '{f}/store'\n{good}"),
            &[],
            none,
            4,
            "cannot write to store root",
        ),
        case(
            good,
            &["--out", &format!("{f}/out"), "--root", &ok_root],
            none,
            4,
            "cannot create results directory",
        ),
        case(
            good,
            &["--storage-option", "novalue"],
            none,
            2,
            "takes KEY=VALUE",
        ),
        case(good, &[], state("corrupt"), 4, "--fresh"),
        case(good, &[], state("version"), 4, "format version Some(7)"),
        case(good, &[], state("other-plan"), 4, "belongs to plan `other`"),
        case(
            good,
            &[],
            state("results"),
            4,
            "line 1 is not a bench record",
        ),
        case(good, &["--frsh"], none, 2, "unexpected argument '--frsh'"),
        case(
            good,
            &["--progress", "fancy"],
            none,
            2,
            "invalid value 'fancy'",
        ),
    ];
    // The table covers both outcomes and says something different in every case.
    let codes: BTreeSet<i32> = cases.iter().map(|c| c.code).collect();
    assert_eq!(codes, BTreeSet::from([2, 4]));
    let needles: BTreeSet<&str> = cases.iter().map(|c| c.needle).collect();
    assert_eq!(
        needles.len(),
        cases.len(),
        "each case checks its own message"
    );
    for (i, c) in cases.iter().enumerate() {
        let case_dir = d.join(format!("case{i}"));
        std::fs::create_dir_all(&case_dir).unwrap();
        let plan = case_dir.join("plan.toml");
        std::fs::write(&plan, &c.plan).unwrap();
        let out = case_dir.join("out");
        (c.setup)(&out);
        let before: Vec<(String, Vec<u8>)> = std::fs::read_dir(&out)
            .map(|rd| {
                rd.flatten()
                    .map(|e| {
                        (
                            e.file_name().to_string_lossy().into_owned(),
                            std::fs::read(e.path()).unwrap_or_default(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut cmd = bench();
        cmd.arg("run").arg(&plan);
        if !c.args.iter().any(|a| a == "--out") {
            cmd.arg("--out").arg(&out);
        }
        let o = cmd.args(&c.args).output().unwrap();
        let err = stderr(&o);
        assert_eq!(
            o.status.code(),
            Some(c.code),
            "case {i} ({}): {err}",
            c.needle
        );
        assert!(
            err.contains(c.needle),
            "case {i}: {err:?} lacks {:?}",
            c.needle
        );
        assert!(err.trim_end().starts_with("error:"), "case {i}: {err}");
        // Whatever was there before is untouched; nothing else of note was written.
        for (name, bytes) in before {
            assert_eq!(
                std::fs::read(out.join(&name)).unwrap(),
                bytes,
                "case {i}: {name} changed"
            );
        }
        assert!(
            !out.join("results.jsonl").exists() || c.needle.contains("record"),
            "case {i}"
        );
        assert!(!out.join("summary.csv").exists(), "case {i}");
    }
}
