//! `bench publish` and `bench history`: lance-bench's `results` table written through lance,
//! read back by pylance (lance-bench's own reader) and by lance-bench's own scripts, unchanged
//! (tests/fixtures/lance-bench-36a23bc.tar.gz), at their pinned versions and at current
//! ones; and a planted slowdown found in the history of a real series, by bench and by them.

use std::path::Path;
use std::process::Output;

use crate::common::*;

const PLAN: &str = r#"
name = "pub"
operation = "write-create-namespace"
[matrix]
sizes = [100]
inline = [true, false]
[continuous]
operations = 10
[run]
repetitions = 2
"#;

/// Reads the table at argv[1] with pylance and prints, as JSON, whether its schema is
/// lance-bench's (as `packages/lance_bench_db/models.py` declares it) and its rows.
const READER: &str = r#"
import json, sys
import lance, pyarrow as pa
f64 = lambda names: [(n, pa.float64()) for n in names]
expected = pa.schema([
    ("id", pa.string()),
    ("dut", pa.struct([("name", pa.string()), ("version", pa.string()), ("timestamp", pa.int64())])),
    ("test_bed", pa.struct([("name", pa.string()), ("cpu", pa.string()), ("memory_gb", pa.int32()),
                            ("os", pa.string()), ("created_at", pa.int64())])),
    ("benchmark_name", pa.string()),
    ("values", pa.list_(pa.float64())),
    ("summary", pa.struct(f64(["min", "q1", "median", "q3", "max", "mean", "standard_deviation"]))),
    ("units", pa.string()),
    ("throughput", pa.struct([("multiplier", pa.float64()), ("name", pa.string()), ("unit_system", pa.string())])),
    ("metadata", pa.string()),
    ("timestamp", pa.int64()),
])
ds = lance.dataset(sys.argv[1] + "/results.lance")
print(json.dumps({"schema": ds.schema.equals(expected), "actual": str(ds.schema),
                  "rows": ds.to_table().to_pylist()}))
"#;

/// The table at `uri` as pylance reads it: (schema is lance-bench's, rows).
fn read_back(uri: &Path) -> (bool, Vec<serde_json::Value>) {
    let o = std::process::Command::new("python3")
        .args(["-c", READER])
        .arg(uri)
        .output()
        .expect("python3 on PATH");
    assert!(
        o.status.success(),
        "pylance could not read the table (scripts/test.sh installs pylance==14.0.2 beside \
         moto): {}",
        stderr(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["schema"].as_bool().unwrap(),
        "not lance-bench's schema:\n{}",
        v["actual"]
    );
    (true, v["rows"].as_array().unwrap().clone())
}

fn publish(results: &Path, to: &Path) -> Output {
    bench()
        .arg("publish")
        .arg(results)
        .arg("--to")
        .arg(to)
        .output()
        .unwrap()
}

/// The runs' times per operation (ns: 1e9 / throughput) of each cell of a results directory,
/// by benchmark name.
fn times(out: &Path) -> std::collections::BTreeMap<String, Vec<f64>> {
    let mut by = std::collections::BTreeMap::<String, Vec<f64>>::new();
    for r in lines(&out.join("results.jsonl")) {
        let name = format!(
            "manifest/pub/file/direct/{}",
            r["bench_tag"].as_str().unwrap()
        );
        by.entry(name)
            .or_default()
            .push(1e9 / r["throughput_ops_per_sec"].as_f64().unwrap());
    }
    by
}

/// A cell published after one run, then extended to two and published again: its rows are
/// replaced by rows of both runs, so no run is in the table twice.
#[test]
fn a_cell_extended_after_it_was_published_replaces_its_rows() {
    let one = PLAN
        .replace("inline = [true, false]", "inline = [false]")
        .replace("repetitions = 2", "repetitions = 1");
    let (dir, plan, out) = plan_dir(&one);
    let uri = dir.path().join("db");
    let o = run(&plan, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = publish(&out, &uri);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(&plan, one.replace("repetitions = 1", "repetitions = 2")).unwrap();
    let o = run(&plan, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(lines(&out.join("results.jsonl")).len(), 2, "one more run");
    let o = publish(&out, &uri);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        said.contains("published 5 rows") && said.contains("5 rows of fewer runs"),
        "{said}"
    );
    let (_, rows) = read_back(&uri);
    assert_eq!(rows.len(), 5, "the time and 4 counts, once: {rows:?}");
    assert!(
        (rows.iter()).all(|r| r["values"].as_array().unwrap().len() == 2),
        "{rows:?}"
    );
    let o = publish(&out, &uri);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("published 0 rows"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn results_are_published_once_in_lance_bench_s_schema_even_by_two_publishers_at_once() {
    let (dir, plan, _) = plan_dir(PLAN);
    let root = dir.path().join("store");
    let outs: Vec<_> = (1..=2)
        .map(|k| dir.path().join(format!("out{k}")))
        .collect();
    for out in &outs {
        let o = run(&plan, out, &["--root", root.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let uri = dir.path().join("db");
    for out in &outs {
        let o = publish(out, &uri);
        assert!(o.status.success(), "{}", stderr(&o));
        // Each cell's time and its 4 exact counts (requests, round trips, bytes read and
        // written per operation).
        assert!(String::from_utf8_lossy(&o.stdout).contains("published 10 rows"));
    }
    let (_, all) = read_back(&uri);
    assert_eq!(
        all.len(),
        20,
        "two cells from each directory, 5 rows a cell"
    );
    let (rows, counts): (Vec<_>, Vec<_>) = all
        .iter()
        .cloned()
        .partition(|r| r["units"] == "nanoseconds");
    assert_eq!((rows.len(), counts.len()), (4, 16));
    // The counts: each run's own, from its record, lower is better.
    for out in &outs {
        for r in lines(&out.join("results.jsonl")) {
            let name = format!(
                "manifest/pub/file/direct/{}/requests",
                r["bench_tag"].as_str().unwrap()
            );
            let io = &r["io_per_op"];
            let requests: f64 = ["get", "put", "list", "head", "delete", "copy"]
                .iter()
                .map(|k| io[k].as_f64().unwrap())
                .sum();
            assert!(
                counts.iter().any(|c| c["benchmark_name"] == name.as_str()
                    && c["units"] == "requests/operation"
                    && c["values"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|v| (v.as_f64().unwrap() - requests).abs() < 1e-9)),
                "{name}: a row of its runs' requests per operation ({requests})"
            );
        }
    }
    for c in &counts {
        let units = c["units"].as_str().unwrap();
        assert!(
            [
                "requests/operation",
                "round trips/operation",
                "bytes/operation"
            ]
            .contains(&units),
            "{units}"
        );
    }
    let mut expected = times(&outs[0]);
    for (k, v) in times(&outs[1]) {
        expected.get_mut(&k).unwrap().extend(v);
    }
    for (name, all) in &expected {
        let mut got: Vec<f64> = rows
            .iter()
            .filter(|r| r["benchmark_name"] == name.as_str())
            .flat_map(|r| {
                r["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
            })
            .collect();
        let mut want = all.clone();
        got.sort_by(f64::total_cmp);
        want.sort_by(f64::total_cmp);
        assert_eq!(got.len(), want.len(), "{name}");
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g / w - 1.0).abs() < 1e-9,
                "{name}: each run's time per operation, from its record: {got:?} {want:?}"
            );
        }
    }
    let revision = bench_lance::plan::LANCE_REVISION;
    for r in &rows {
        assert_eq!(r["units"], "nanoseconds");
        assert_eq!(r["dut"]["name"], "lance");
        // lance-bench's scheduler matches `<version>+<short sha>`.
        let version = match revision.len() >= 7 {
            true => format!("14.0.2+{}", &revision[..7]),
            false => "14.0.2".to_string(),
        };
        assert_eq!(r["dut"]["version"], version.as_str());
        assert!(r["throughput"].is_null());
        let v: Vec<f64> = r["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        assert!((r["summary"]["mean"].as_f64().unwrap() / mean - 1.0).abs() < 1e-9);
        let meta: serde_json::Value =
            serde_json::from_str(r["metadata"].as_str().unwrap()).unwrap();
        assert_eq!(meta["plan"], "pub");
        assert_eq!(meta["runs"].as_array().unwrap().len(), 2);
    }

    // Again: nothing added.
    let o = publish(&outs[0], &uri);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("published 0 rows"),
        "{}",
        stderr(&o)
    );
    assert_eq!(read_back(&uri).1.len(), 20);

    // Two publishers at once, into a table neither has created yet: both land.
    let fresh = dir.path().join("db2");
    let spawn = |out: &Path| {
        bench()
            .arg("publish")
            .arg(out)
            .arg("--to")
            .arg(&fresh)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(&outs[0]), spawn(&outs[1]));
    for c in [a, b] {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let (_, rows) = read_back(&fresh);
    let ids: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!((rows.len(), ids.len()), (20, 20), "every row once");

    // A place that cannot be written: refused before anything is written, naming it.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = publish(&outs[0], &file.join("db"));
    assert_eq!(o.status.code(), Some(4));
    assert!(
        stderr(&o).contains("cannot publish to") && stderr(&o).contains("a-file"),
        "{}",
        stderr(&o)
    );
}

/// lance-bench (its repository at 36a23bc, unchanged), extracted once.
fn lance_bench() -> &'static Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("lance-bench-")
            .tempdir()
            .unwrap()
            .keep();
        let o = std::process::Command::new("tar")
            .arg("-xzf")
            .arg(repo_file("tests/fixtures/lance-bench-36a23bc.tar.gz"))
            .arg("-C")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        dir.join("lance-bench")
    })
}

/// The two Pythons lance-bench's scripts run under: its pinned stack (pylance 0.39, lancedb
/// 0.25, as its `uv.lock` and CI have it; `BENCH_TEST_PINNED_PYTHON`, which scripts/test.sh
/// sets) and current releases (pylance 14, `python3`).
fn pythons() -> [(&'static str, String); 2] {
    let pinned = std::env::var("BENCH_TEST_PINNED_PYTHON").expect(
        "BENCH_TEST_PINNED_PYTHON: a python with lance-bench's pinned stack (scripts/test.sh \
         installs it)",
    );
    [("pinned", pinned), ("current", "python3".to_string())]
}

/// Run one of lance-bench's scripts with `python`, its database at `db`.
fn script(python: &str, name: &str, args: &[&str], db: &Path) -> Output {
    let o = std::process::Command::new(python)
        .arg(lance_bench().join("scripts").join(name))
        .args(args)
        .env("LANCE_BENCH_URI", db)
        .current_dir(lance_bench())
        .output()
        .unwrap();
    assert!(
        o.status.success() || crashed_at_exit(&o),
        "{name} under {python} failed:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        stderr(&o)
    );
    o
}

/// pylance can abort while the interpreter shuts down, after the script has done its work, when
/// a dataset is dropped by the collector (lance-format/lance#4152: "PyGILState_Release: thread
/// state … must be current when releasing", "Python runtime state: finalizing"). Only that
/// abort is let through; what the script wrote or printed is checked by the caller.
fn crashed_at_exit(o: &Output) -> bool {
    let err = String::from_utf8_lossy(&o.stderr);
    err.contains("Fatal Python error: PyGILState_Release")
        && err.contains("Python runtime state: finalizing")
}

/// Read a table's rows with `python`'s pylance (as merge_pr_results.py and the PR bot read
/// a table): `(rows, file format)`.
fn rows_with(python: &str, table: &Path) -> (usize, String) {
    let o = std::process::Command::new(python)
        .args([
            "-c",
            "import sys, lance; d = lance.dataset(sys.argv[1]); \
             print(d.to_table().num_rows, d.data_storage_version)",
        ])
        .arg(table)
        .output()
        .unwrap();
    assert!(
        o.status.success() || crashed_at_exit(&o),
        "{python} cannot read {table:?}: {}",
        stderr(&o)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    let (n, v) = text.trim().split_once(' ').unwrap();
    (n.parse().unwrap(), v.to_string())
}

/// A planted slowdown, published run by run, is a regression to bench's history and to
/// lance-bench's own scripts at their pinned versions and at current ones; tables both
/// append to stay readable by both; a table lance-bench created (file format 2.0) takes
/// bench's rows.
#[test]
fn lance_bench_s_own_scripts_read_bench_s_rows_and_call_a_planted_slowdown_a_regression() {
    let plan_text = PLAN
        .replace("inline = [true, false]", "inline = [false]")
        .replace("operations = 10", "operations = 5")
        .replace("repetitions = 2", "repetitions = 1");
    let (dir, plan, _) = plan_dir(&plan_text);
    let root = dir.path().join("store");
    let (db, pr) = (dir.path().join("db"), dir.path().join("pr"));
    let one_run = |k: usize, slow: bool| {
        let out = dir.path().join(format!("run{k}"));
        // Every commit 100 ms longer, so that a loaded machine's own changes of pace (a
        // few ms a commit) are small beside it; a slow build's 60 ms more.
        let mut cmd = bench();
        cmd.env("BENCH_OP_DELAY_MS", if slow { "160" } else { "100" });
        if k >= 16 {
            // And from the 16th run on, one request more a commit.
            cmd.env("BENCH_EXTRA_HEADS", "1");
        }
        let o = run_with(cmd, &plan, &out, &["--root", root.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        out
    };
    let published = |out: &Path, to: &Path| {
        let o = publish(out, to);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let name = "manifest/pub/file/direct/cont_inline_false_rows_100";
    // 14 results, then a pull request's: 60 ms slower a commit.
    let mut runs: Vec<_> = (1..=14).map(|k| one_run(k, false)).collect();
    runs.iter().for_each(|out| published(out, &db));
    runs.push(one_run(15, true));
    published(&runs[14], &pr);
    let pr_table = pr.join("results.lance");
    for (which, python) in pythons() {
        let o = std::process::Command::new(&python)
            .arg(lance_bench().join("scripts/compare_pr_benchmarks.py"))
            .args(["0123abc", "--pr-number", "1", "--local-results"])
            .arg(&pr_table)
            .env("LANCE_BENCH_URI", &db)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        // Its report is printed before the interpreter exits (and checked below).
        assert!(
            o.status.success() || crashed_at_exit(&o),
            "{which}: {text}{}",
            stderr(&o)
        );
        // The time is flagged; the exact counts are not. (A series of bytes a commit moves
        // by a byte from run to run, which a z-score over a near-constant history may flag.)
        let flagged = |series: &str| {
            (text.lines())
                .any(|l| l.starts_with(&format!("| {series} |")) && l.contains("Likely Regressed"))
        };
        assert!(
            flagged(name),
            "{which}: the slower pull request is a regression:\n{text}"
        );
        for counted in ["requests", "round_trips"] {
            assert!(
                !flagged(&format!("{name}/{counted}")),
                "{which}: {counted}:\n{text}"
            );
        }
    }
    // Then its 4 results join the history: the newest 4 of 18 are slower.
    runs.extend((16..=18).map(|k| one_run(k, true)));
    runs[14..].iter().for_each(|out| published(out, &db));
    for (which, python) in pythons() {
        let report = dir.path().join(format!("report-{which}.html"));
        let o = script(
            &python,
            "regression_report.py",
            &["-o", report.to_str().unwrap()],
            &db,
        );
        let text = String::from_utf8_lossy(&o.stdout);
        let concern = text.split("HIGH CONCERN").nth(1).unwrap_or_default();
        assert!(
            concern.contains(name) && concern.contains("(slower)"),
            "{which}: the slowdown is a high-concern regression, slower:\n{text}"
        );
    }
    // bench history: one change, at the first slow result, worse beyond 20 %.
    let charts = dir.path().join("charts");
    let history = |extra: &[&str]| {
        bench()
            .arg("history")
            .arg(&db)
            .args(extra)
            .arg("--charts")
            .arg(&charts)
            .output()
            .unwrap()
    };
    let o = history(&[
        "--benchmark",
        "manifest/pub/*",
        "--fail-on-regression",
        "20",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(5), "{text}{}", stderr(&o));
    assert!(
        text.contains("(nanoseconds, 18 results; lower is better)"),
        "{text}"
    );
    // Each series' changes: the time's at the first slow result, the requests' (and the
    // round trips') at the first with a request more, judged by the static threshold; no
    // other series changed, and none among the identical builds before.
    let block = |suffix: &str| -> String {
        let head = format!("{name}{suffix} on ");
        let start = text.find(&head).unwrap_or_else(|| panic!("{head}: {text}"));
        let rest = &text[start..];
        let end = rest[1..].find("\nmanifest/").map_or(rest.len(), |e| e + 1);
        rest[..end].to_string()
    };
    let time = block("");
    // The step is placed at the first slow result, 15, or one early where the run before it
    // was itself slow (a stall of a loaded machine in a run of 5 commits makes its mean so).
    let at = if time.contains("change at result 14 of 18") {
        14
    } else {
        15
    };
    assert!(
        time.contains(&format!("change at result {at} of 18")),
        "{time}"
    );
    // The time's one regression is the planted one. Among the identical builds before it the
    // machine itself may change pace (the tests beside this one start and end): such a
    // step is real and may be found, but never as a regression.
    let changes: Vec<&str> = (time.lines())
        .filter(|l| l.contains("change at result"))
        .collect();
    let worse: Vec<&&str> = (changes.iter())
        .filter(|l| l.contains("a regression beyond"))
        .collect();
    assert_eq!(worse.len(), 1, "{time}");
    assert!(
        worse[0].contains(&format!("change at result {at} of 18")),
        "{time}"
    );
    let requests = block("/requests");
    assert!(
        requests.contains("(requests/operation, 18 results; lower is better)"),
        "{requests}"
    );
    assert!(
        requests.contains("change at result 16 of 18")
            && requests.contains("a regression (a count)"),
        "{requests}"
    );
    assert_eq!(
        requests.matches("change at result").count(),
        1,
        "{requests}"
    );
    assert!(block("/round_trips").contains("change at result 16 of 18"));
    assert!(
        block("/read_bytes").contains("the same counts throughout"),
        "{text}"
    );
    assert_eq!(
        text.matches("change at result").count(),
        2 + changes.len(),
        "{text}"
    );
    let host = bench_lance::worker::protocol::hostname();
    let chart = charts.join(bench_lance::history::file_name(&format!(
        "{name} on {host}"
    )));
    assert!(
        std::fs::read_to_string(&chart)
            .unwrap()
            .contains(&format!("change at result {at}"))
    );

    // lance-bench's own publisher appends to bench's table, under both stacks; the table
    // stays in the format bench created it in, which both read, and so does bench.
    let crit = dir.path().join("criterion.json");
    std::fs::write(
        &crit,
        r#"{"reason":"benchmark-complete","id":"crit/one","measured_values":[100.0,110.0],"iteration_count":[1,1]}"#,
    )
    .unwrap();
    let table = db.join("results.lance");
    for (_, python) in pythons() {
        let c = crit.to_str().unwrap();
        script(
            &python,
            "publish_criterion.py",
            &[c, "--dut-version", "1.0+abcdef0", "--dut-timestamp", "1"],
            &db,
        );
    }
    for (which, python) in pythons() {
        // 18 runs' 5 rows each, and the two criterion rows.
        assert_eq!(rows_with(&python, &table), (92, "2.1".into()), "{which}");
    }
    let o = history(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("crit/one on") && text.contains("6 series"),
        "{text}"
    );

    // A table lance-bench made (its lancedb writes file format 2.0, which cannot store a
    // null struct): bench's rows go in, and both stacks read them.
    let theirs = dir.path().join("theirs");
    let [(_, pinned), (_, current)] = pythons();
    let c = crit.to_str().unwrap();
    script(
        &pinned,
        "publish_criterion.py",
        &[c, "--dut-version", "1.0+abcdef0", "--dut-timestamp", "1"],
        &theirs,
    );
    let t2 = theirs.join("results.lance");
    assert_eq!(rows_with(&current, &t2).1, "2.0");
    published(&runs[0], &theirs);
    assert_eq!(rows_with(&pinned, &t2), (6, "2.0".into()));
    assert_eq!(rows_with(&current, &t2), (6, "2.0".into()));
}
