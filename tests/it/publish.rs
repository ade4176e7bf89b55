//! `bench publish` and `bench history`: lance-bench's `results` table written through lance,
//! read back by pylance (lance-bench's own reader), and a planted slowdown found in the
//! history of a real series.

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

/// The runs' throughputs of each cell of a results directory, by benchmark name.
fn throughputs(out: &Path) -> std::collections::BTreeMap<String, Vec<f64>> {
    let mut by = std::collections::BTreeMap::<String, Vec<f64>>::new();
    for r in lines(&out.join("results.jsonl")) {
        let name = format!("manifest/pub/{}", r["bench_tag"].as_str().unwrap());
        by.entry(name)
            .or_default()
            .push(r["throughput_ops_per_sec"].as_f64().unwrap());
    }
    by
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
        assert!(String::from_utf8_lossy(&o.stdout).contains("published 2 rows"));
    }
    let (_, rows) = read_back(&uri);
    assert_eq!(rows.len(), 4, "two cells from each directory");
    let mut expected = throughputs(&outs[0]);
    for (k, v) in throughputs(&outs[1]) {
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
        assert_eq!(
            got, want,
            "{name}: each run's throughput, as its record has it"
        );
    }
    for r in &rows {
        assert_eq!(r["units"], "operations/second");
        assert_eq!(r["dut"]["name"], "lance");
        assert_eq!(r["dut"]["version"], "14.0.2");
        assert!(r["throughput"].is_null());
        let v: Vec<f64> = r["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        assert!((r["summary"]["mean"].as_f64().unwrap() - mean).abs() < 1e-9);
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
    assert_eq!(read_back(&uri).1.len(), 4);

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
    assert_eq!((rows.len(), ids.len()), (4, 4), "every row once");

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

#[test]
fn history_finds_a_planted_slowdown_at_the_run_it_began() {
    let plan_text = PLAN
        .replace("inline = [true, false]", "inline = [false]")
        .replace("operations = 10", "operations = 20")
        .replace("repetitions = 2", "repetitions = 1");
    let (dir, plan, _) = plan_dir(&plan_text);
    let root = dir.path().join("store");
    let uri = dir.path().join("db");
    // Twelve runs, each published when it ends; from the 7th on every commit is 60 ms slower:
    // a step well beyond what a loaded machine's noise does to a commit of 10 to 40 ms.
    for k in 1..=12 {
        let out = dir.path().join(format!("run{k}"));
        let mut cmd = bench();
        if k >= 7 {
            cmd.env("BENCH_OP_DELAY_MS", "60");
        }
        let o = run_with(cmd, &plan, &out, &["--root", root.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = publish(&out, &uri);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let charts = dir.path().join("charts");
    let o = bench()
        .arg("history")
        .arg(&uri)
        .args([
            "--benchmark",
            "manifest/pub/*",
            "--fail-on-regression",
            "20",
            "--charts",
        ])
        .arg(&charts)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(5),
        "a regression beyond 20 %:\n{text}{}",
        stderr(&o)
    );
    assert!(
        text.contains("(operations/second, 12 results; higher is better)"),
        "{text}"
    );
    assert!(
        text.contains("change at result 7 of 12"),
        "the step where it was planted:\n{text}"
    );
    assert_eq!(
        text.matches("change at result").count(),
        1,
        "one change:\n{text}"
    );
    let svg = std::fs::read_to_string(charts.join("manifest_pub_cont_inline_false_rows_100.svg"))
        .unwrap();
    assert!(svg.contains("change at result 7"));

    // Without the threshold it only reports; a pattern that matches nothing is said.
    let o = bench()
        .arg("history")
        .arg(&uri)
        .arg("--charts")
        .arg(&charts)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = bench()
        .arg("history")
        .arg(&uri)
        .args(["--benchmark", "ivf/*"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no benchmark in") && stderr(&o).contains("ivf/*"));
}
