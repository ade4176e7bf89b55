//! A whole sweep on local disk, as a user runs it.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

const CELLS: [&str; 8] = [
    "cont_inline_true_rows_100",
    "conc_inline_true_rows_100_c_2",
    "cont_inline_true_rows_1000",
    "conc_inline_true_rows_1000_c_2",
    "cont_inline_false_rows_100",
    "conc_inline_false_rows_100_c_2",
    "cont_inline_false_rows_1000",
    "conc_inline_false_rows_1000_c_2",
];

#[test]
fn plan_lists_cells_in_order_and_writes_nothing() {
    let (_dir, plan, out) = plan_dir(&tiny_plan());
    let o = bench_on("plan", &plan, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let order: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter(|w| w.starts_with("cont_") || w.starts_with("conc_") || w.starts_with("inline_"))
        .collect();
    assert_eq!(
        order,
        [
            "inline_true_rows_100",
            CELLS[0],
            CELLS[1],
            "inline_true_rows_1000",
            CELLS[2],
            CELLS[3],
            "inline_false_rows_100",
            CELLS[4],
            CELLS[5],
            "inline_false_rows_1000",
            CELLS[6],
            CELLS[7],
        ]
    );
    assert_eq!(text.matches(" pending").count(), 8, "{text}");
    assert!(
        text.contains("estimated time for what is left: about "),
        "{text}"
    );
    assert!(!out.exists(), "bench plan must not write anything");
    // A mixed cell whose reads and a commit outlast its duration is named (the tiny plan's
    // cells, and the default plan's, are not).
    assert!(!text.contains("would measure no commit"), "{text}");
    let o = bench_on("plan", &repo_file("plans/default.toml"), &out);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("would measure no commit"));
    let starved = "name = 'starved'\n[matrix]\nsizes = [1000000]\ninline = [false]\n\
                   [mixed]\nclients = [4]\nreads_per_write = 1000\nduration_secs = 5\n";
    let (_d, plan, out) = plan_dir(starved);
    let text = String::from_utf8(bench_on("plan", &plan, &out).stdout).unwrap();
    assert!(
        text.contains("warning: mixed_inline_false_rows_1000000_c_4: its 1000 reads")
            && text.contains("would measure no commit"),
        "{text}"
    );
}

#[test]
fn a_bad_plan_fails_with_its_key_and_writes_nothing() {
    let (_dir, plan, out) = plan_dir(&tiny_plan().replace("operations = 5", "operations = 0"));
    for cmd in ["plan", "run"] {
        let o = bench_on(cmd, &plan, &out);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("`continuous.operations`"), "{err}");
        assert!(err.contains("plan.toml"), "{err}");
        assert_eq!(err.lines().count(), 1, "one clear message: {err}");
        assert!(!out.exists());
    }
    let o = bench()
        .args(["run", "/nonexistent/plan.toml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read plan /nonexistent/plan.toml"));
}

fn check_record(r: &Value) {
    let obj = r.as_object().unwrap();
    let numbers = [
        "total_duration_ms",
        "throughput_ops_per_sec",
        "avg_latency_ms",
        "p50_latency_ms",
        "p90_latency_ms",
        "p99_latency_ms",
        "min_latency_ms",
        "max_latency_ms",
        "setup_ms",
        "p999_latency_ms",
    ];
    let integers = [
        "concurrency",
        "initial_entries",
        "duration_secs",
        "total_operations",
        "errors",
        "manifest_shard_count",
        "attempts",
        "commit_retries",
        "manifest_rows_before",
        "manifest_rows_after",
        "conflict_errors",
        "other_errors",
        "warmup_operations",
        "warmup_committed",
        "repetition",
        "throttled_errors",
        "network_errors",
        // Directly on any store, resends are seen: 0 on local disk.
        "requests_resent",
    ];
    let strings = [
        "variant",
        "operation",
        "bench_tag",
        "mode",
        "plan",
        "cell_key",
        "started_at",
        "finished_at",
        "bench_version",
        "lance_version",
        "hostname",
        "storage_scheme",
    ];
    for k in numbers {
        assert!(obj[k].is_f64() || obj[k].is_u64(), "{k} in {r}");
    }
    for k in integers {
        assert!(obj[k].is_u64(), "{k} in {r}");
    }
    for k in strings {
        assert!(obj[k].is_string(), "{k} in {r}");
    }
    assert!(obj["verified"].is_boolean());
    let nullable = [
        "first_conflict_error",
        "first_other_error",
        "first_throttled_error",
        "first_network_error",
    ];
    for k in nullable {
        assert!(obj[k].is_null() || obj[k].is_string(), "{k} in {r}");
    }
    assert!(obj["verify_error"].is_null() || obj["verify_error"].is_string());
    assert!(obj["reads"].is_null(), "reads only in mixed cells: {r}");
    // Concurrent cells say how far the window ran past the deadline; continuous ones not.
    let overrun = &obj["window_overrun_ms"];
    assert_eq!(overrun.is_null(), obj["mode"] == "continuous", "{r}");
    // Concurrent cells second by second: every operation in one second, the window's
    // seconds (its deadline, and any overrun) in order.
    let series = obj.get("series");
    assert_eq!(series.is_none(), obj["mode"] == "continuous", "{r}");
    if let Some(series) = series {
        let sum = |v: &serde_json::Value| -> u64 {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .sum()
        };
        assert_eq!(
            sum(&series["ops"]),
            obj["total_operations"].as_u64().unwrap(),
            "{r}"
        );
        let errors: u64 = series["errors"]
            .as_object()
            .map_or(0, |e| e.values().map(sum).sum());
        assert_eq!(errors, obj["errors"].as_u64().unwrap(), "{r}");
        let seconds = series["ops"].as_array().unwrap().len() as f64;
        let window = obj["total_duration_ms"].as_f64().unwrap() / 1000.0;
        assert!(
            seconds >= window.floor() && seconds <= window.ceil() + 1.0,
            "{r}"
        );
        let p99 = series["p99_ms"].as_array().unwrap();
        assert_eq!(p99.len() as f64, seconds);
        let busiest = p99.iter().filter_map(|v| v.as_f64()).fold(0.0, f64::max);
        assert!(
            busiest <= obj["max_latency_ms"].as_f64().unwrap() + 1e-9,
            "{r}"
        );
    }
    // The requests and bytes of the commits, in all and per commit.
    let ops = obj["total_operations"].as_u64().unwrap() as f64;
    for k in IO_KEYS {
        let total = obj["io_total"][k].as_u64().unwrap() as f64;
        let per = obj["io_per_op"][k].as_f64().unwrap();
        assert!(
            (per * ops - total).abs() < 1e-6 * total.max(1.0),
            "{k} in {r}"
        );
    }
    assert!(
        obj["io_per_op"]["put"].as_f64().unwrap() >= 1.0,
        "a commit writes: {r}"
    );
    // Every worker's start-up (median no larger than the longest, within the cell's set-up)
    // and peak memory (the largest no larger than the sum, which covers every worker).
    let open = &obj["open_ms"];
    let (median, max) = (
        open["median"].as_f64().unwrap(),
        open["max"].as_f64().unwrap(),
    );
    assert!(0.0 < median && median <= max, "{r}");
    assert!(max <= obj["setup_ms"].as_f64().unwrap(), "{r}");
    let rss = &obj["worker_rss_peak_kib"];
    let (most, sum) = (rss["max"].as_u64().unwrap(), rss["sum"].as_u64().unwrap());
    let workers = obj["concurrency"].as_u64().unwrap();
    assert!(
        10 * 1024 < most && most <= sum && sum <= workers * most,
        "{r}"
    );
    // What the scheduler did to the workers in their operations: some time on a CPU, each
    // thread's counted on the CPU it last ran on, and a wait (none where nothing else ran).
    let cpu = &obj["worker_cpu"];
    let busy = cpu["busy_ms"].as_f64().unwrap();
    let by_cpu: f64 = (cpu["by_cpu_ms"].as_array().unwrap().iter())
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!(busy > 0.0 && cpu["wait_ms"].as_f64().unwrap() >= 0.0, "{r}");
    assert!(by_cpu <= busy * 1.001 + 0.01 && by_cpu > 0.0, "{r}");
    // What other processes on the machine kept busy while the workers ran: no more cores
    // than it has.
    let others = obj["others_cpu_cores"].as_f64().unwrap();
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    let cores = stat.lines().filter(|l| l.starts_with("cpu")).count() as f64 - 1.0;
    assert!((0.0..=cores).contains(&others), "{r}");
    // The machine: the cores bench may use (no more than the kernel lists), memory and
    // model, and loads before and after.
    let machine = &obj["machine"];
    let usable = machine["cores"].as_f64().unwrap();
    assert!(1.0 <= usable && usable <= cores, "{r}");
    assert!(machine["memory_kib"].as_u64().unwrap() > 0, "{r}");
    assert!(!machine["cpu_model"].as_str().unwrap().is_empty(), "{r}");
    for load in ["load_start", "load_end"] {
        assert!(machine[load].as_f64().unwrap() >= 0.0, "{r}");
    }
    // Every successful operation in the kept histogram, once.
    let h = &obj["latency_histogram"];
    let counts: u64 = (h["counts"].as_array().unwrap().iter())
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(counts, obj["total_operations"].as_u64().unwrap(), "{r}");
    assert_eq!(
        h["values_us"].as_array().unwrap().len(),
        h["counts"].as_array().unwrap().len()
    );
    // lance's conflict retries, counted at the store: none for one writer.
    let retries = obj["conflict_retries_per_commit"].as_f64().unwrap();
    let puts = obj["io_total"]["conditional_put"].as_f64().unwrap();
    let attempts = obj["attempts"].as_f64().unwrap();
    if obj["errors"] == 0 {
        // Every attempt succeeded: its requests are all in `io_total`.
        assert!((retries - (puts / attempts - 1.0)).abs() < 1e-9, "{r}");
    }
    if obj["concurrency"] == 1 {
        assert_eq!(retries, 0.0, "{r}");
    }
    // The writers ran here, as children: the one host is this machine.
    assert_eq!(obj["hosts"], serde_json::json!([obj["hostname"]]), "{r}");
    // The critical path of a commit: at least one round trip through the object-store
    // layer, its wait within the commit's time.
    let trips = obj["round_trips_per_op"].as_f64().unwrap();
    let wait = obj["store_wait_ms_per_op"].as_f64().unwrap();
    let other = obj["other_ms_per_op"].as_f64().unwrap();
    let avg = obj["avg_latency_ms"].as_f64().unwrap();
    assert!(trips >= 1.0 && wait >= 0.0 && other >= 0.0, "{r}");
    assert!(wait <= avg * 1.001, "{r}");
    // The wait by kind of request adds up to the wait, over kinds the commit made.
    let by_kind = obj["store_wait_ms_by_kind"].as_object().unwrap();
    let sum: f64 = by_kind.values().map(|v| v.as_f64().unwrap()).sum();
    assert!((sum - wait).abs() <= 1e-6 * wait.max(1.0), "{r}");
    for k in by_kind.keys() {
        assert!(obj["io_per_op"][k].as_f64().unwrap() > 0.0, "{k} in {r}");
    }
    // The run's copy of its golden: its objects (the golden's but its marker), at the
    // default parallelism.
    let copy = &obj["copy"];
    assert!(copy["objects"].as_u64().unwrap() >= 2, "{r}");
    assert_eq!(copy["parallelism"], 16, "{r}");
    assert!(copy["ms"].as_f64().unwrap() >= 0.0, "{r}");
    // The round trips by kind add up to the round trips; the fastest request is no longer
    // than a commit's wait.
    let trips_by = obj["round_trips_by_kind"].as_object().unwrap();
    let sum: f64 = trips_by.values().map(|v| v.as_f64().unwrap()).sum();
    assert!((sum - trips).abs() <= 1e-6 * trips, "{r}");
    let fastest = obj["fastest_request_ms"].as_f64().unwrap();
    assert!(fastest > 0.0 && fastest <= wait * 1.001, "{r}");
    // The build by its bytes; the run's whole time, its copy and window within it.
    let digest = obj["build_digest"].as_str().unwrap();
    assert!(
        digest.len() == 16 && digest.chars().all(|c| c.is_ascii_hexdigit()),
        "{r}"
    );
    let wall = obj["wall_ms"].as_f64().unwrap();
    assert!(
        wall >= copy["ms"].as_f64().unwrap() + obj["total_duration_ms"].as_f64().unwrap() * 0.999,
        "{r}"
    );
    // The lance revision where the build knows it (a crates.io lance: its package's commit).
    let revision = obj.get("lance_revision").and_then(|v| v.as_str());
    if let Some(rev) = revision {
        assert!(
            rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit()),
            "{r}"
        );
        assert_eq!(rev, bench_lance::plan::LANCE_REVISION);
    }
    // Its typical operation (one writer: the median commit, every kind no more than the
    // most any commit made) and what its operations cost on each store of bench's table.
    let typical = &obj["io_median_per_op"];
    assert!(typical["requests"].as_f64().unwrap() >= 1.0, "{r}");
    assert!(typical["put"].as_f64().unwrap() >= 1.0, "{r}");
    let usd = obj["cost"]["usd_per_million_ops"].as_object().unwrap();
    let stores: Vec<&str> = usd.keys().map(String::as_str).collect();
    assert_eq!(
        stores,
        [
            "azure-hot",
            "gcs-standard",
            "r2",
            "s3-express",
            "s3-standard"
        ],
        "{r}"
    );
    assert!(usd.values().all(|v| v.as_f64().unwrap() > 0.0), "{r}");
    // How far it is above its floor (a namespace's creation: 2 PUTs).
    assert_eq!(obj["floor"]["floor_requests"], 2, "{r}");
    // How its writes ended: every commit one outcome, nothing unknown on local disk.
    let outcomes = &obj["outcomes"];
    let committed =
        obj["total_operations"].as_u64().unwrap() + obj["warmup_committed"].as_u64().unwrap();
    assert_eq!(outcomes["ok"].as_u64(), Some(committed), "{r}");
    assert_eq!(outcomes["failed"], obj["errors"], "{r}");
    assert_eq!(
        (
            outcomes["unknown"].as_u64(),
            outcomes["failed_but_applied"].as_u64()
        ),
        (Some(0), Some(0)),
        "{r}"
    );
    // `series` only in concurrent cells.
    let series = usize::from(obj.contains_key("series"));
    // Several writers: their commits' typical one by how far behind the others each was,
    // each place held by at least 5 commits, no more commits in all than succeeded.
    let behind = obj.get("io_median_by_behind").and_then(|v| v.as_array());
    let several = obj["concurrency"].as_u64().unwrap() > 1;
    assert_eq!(behind.is_some(), several, "{r}");
    if let Some(strata) = behind {
        let held: u64 = (strata.iter())
            .map(|s| s["operations"].as_u64().unwrap())
            .sum();
        assert!(held <= obj["total_operations"].as_u64().unwrap(), "{r}");
        for s in strata {
            assert!(s["operations"].as_u64().unwrap() >= 5, "{r}");
            assert!(s["behind"]["versions"].as_u64().is_some(), "{r}");
            assert!(
                s["median"]["conditional_put"].as_f64().unwrap() >= 1.0,
                "{r}"
            );
        }
    }
    assert_eq!(
        obj.len(),
        numbers.len()
            + integers.len()
            + strings.len()
            + nullable.len()
            + 27
            + series
            + usize::from(several)
            + usize::from(revision.is_some()),
        "unexpected fields in {r}"
    );
    assert_eq!(obj["manifest_shard_count"], 0);
    // The lance of Cargo.lock (a candidate build's is another).
    let lock = std::fs::read_to_string(repo_file("Cargo.lock")).unwrap();
    let lance = lock
        .split("[[package]]")
        .find(|p| p.lines().any(|l| l.trim() == "name = \"lance\""))
        .and_then(|p| p.lines().find_map(|l| l.trim().strip_prefix("version = ")))
        .unwrap()
        .trim_matches('"');
    let reported = obj["lance_version"].as_str().unwrap();
    assert!(
        reported.split('+').next() == Some(lance),
        "{reported} vs {lance}"
    );
    assert_eq!(obj["storage_scheme"], "file");
    assert_eq!(obj["operation"], "write-create-namespace");
    assert_eq!(obj["verified"], true, "{r}");
    let tag = obj["bench_tag"].as_str().unwrap();
    let inline = tag.contains("inline_true");
    assert_eq!(
        obj["variant"],
        if inline { "inline_index" } else { "no_index" }
    );
    let ops = obj["total_operations"].as_u64().unwrap();
    assert!(ops > 0, "{r}");
    assert_eq!(
        obj["attempts"].as_u64().unwrap(),
        ops + obj["errors"].as_u64().unwrap()
    );
    // The golden's rows (plus the inline golden's trigger namespace) plus every commit.
    let rows = obj["initial_entries"].as_u64().unwrap();
    assert_eq!(
        obj["manifest_rows_before"].as_u64().unwrap(),
        rows + u64::from(inline)
    );
    assert_eq!(
        obj["manifest_rows_after"].as_u64().unwrap(),
        rows + u64::from(inline) + ops
    );
    let tps = obj["throughput_ops_per_sec"].as_f64().unwrap();
    let window = obj["total_duration_ms"].as_f64().unwrap();
    assert!((tps - ops as f64 / (window / 1000.0)).abs() < 1e-6, "{r}");
    let p = |k: &str| obj[k].as_f64().unwrap();
    assert!(p("min_latency_ms") <= p("p50_latency_ms"));
    assert!(p("p50_latency_ms") <= p("p90_latency_ms"));
    assert!(p("p90_latency_ms") <= p("p99_latency_ms"));
    assert!(p("p99_latency_ms") <= p("p999_latency_ms"));
    assert!(p("p999_latency_ms") <= p("max_latency_ms"));
    if tag.starts_with("cont_") {
        assert_eq!(obj["mode"], "continuous");
        assert_eq!(obj["duration_secs"], 0);
        assert_eq!(obj["concurrency"], 1);
        assert_eq!(ops + obj["errors"].as_u64().unwrap(), 5);
    } else {
        assert_eq!(obj["mode"], "concurrent");
        assert_eq!(obj["duration_secs"], 2);
        assert_eq!(obj["concurrency"], 2);
        // Each writer stops starting operations at the deadline.
        assert!(window >= 2000.0, "{r}");
    }
}

fn summary(out: &std::path::Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    text.lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn tiny_sweep_runs_end_to_end_resumes_and_reruns_only_edited_cells() {
    let text = tiny_plan().replace("keep_runs = false", "keep_runs = true");
    let (dir, plan, out) = plan_dir(&text);

    // 1. The whole sweep.
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0));
    let records = lines(&out.join("results.jsonl"));
    let tags: Vec<&str> = records
        .iter()
        .map(|r| r["bench_tag"].as_str().unwrap())
        .collect();
    assert_eq!(tags, CELLS);
    for r in &records {
        check_record(r);
    }
    // The finished sweep wrote its report, with the charts it embeds.
    assert!(stderr(&o).contains("report:"), "{}", stderr(&o));
    // With --progress lines, every line carries its time.
    for line in stderr(&o).lines() {
        let stamp = line.split(' ').next().unwrap_or("");
        assert!(
            stamp.len() == 20 && stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T',
            "a line without a timestamp: {line:?}"
        );
    }
    // Every output has the mode results.jsonl has (the umask's).
    let mode = |f: &str| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(out.join(f)).unwrap().permissions().mode() & 0o777
    };
    for f in [
        "summary.csv",
        "state.json",
        "report.md",
        "charts/continuous_throughput.svg",
    ] {
        assert_eq!(mode(f), mode("results.jsonl"), "{f}");
    }
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    for chart in [
        "continuous_throughput.svg",
        "continuous_latency.svg",
        "concurrent_throughput_no_index.svg",
        "concurrent_errors_inline_index.svg",
        "over_time_conc_inline_true_rows_100_c_2.svg",
    ] {
        assert!(report.contains(&format!("(charts/{chart})")), "{report}");
        assert!(out.join("charts").join(chart).is_file(), "{chart}");
    }

    // The copies kept by keep_runs hold exactly the golden's rows plus the commits.
    let rt = tokio::runtime::Runtime::new().unwrap();
    for r in &records {
        let tag = r["bench_tag"].as_str().unwrap();
        let root = out.join("store/runs").join(tag);
        let rows = rt
            .block_on(bench_lance::catalog::manifest_rows(
                root.to_str().unwrap(),
                &Default::default(),
            ))
            .unwrap();
        assert_eq!(rows, r["manifest_rows_after"].as_u64().unwrap(), "{tag}");
    }
    // The goldens are unchanged by the cells.
    for g in ["inline_true_rows_100", "inline_false_rows_1000"] {
        let root = out.join("store/golden").join(g);
        let rows = rt
            .block_on(bench_lance::catalog::manifest_rows(
                root.to_str().unwrap(),
                &Default::default(),
            ))
            .unwrap();
        let want = if g.contains("true") { 101 } else { 1000 };
        assert_eq!(rows, want, "{g}");
    }

    let csv = summary(&out);
    assert_eq!(
        csv[0][..13],
        [
            "mode",
            "variant",
            "initial_entries",
            "manifest_shard_count",
            "concurrency",
            "duration_secs",
            "ops",
            "errors",
            "tps",
            "avg_ms",
            "p50_ms",
            "p90_ms",
            "p99_ms"
        ]
    );
    let keys: Vec<String> = csv[1..]
        .iter()
        .map(|r| format!("{} {} {} {}", r[0], r[1], r[2], r[4]))
        .collect();
    assert_eq!(
        keys,
        [
            "concurrent inline_index 100 2",
            "concurrent inline_index 1000 2",
            "concurrent no_index 100 2",
            "concurrent no_index 1000 2",
            "continuous inline_index 100 1",
            "continuous inline_index 1000 1",
            "continuous no_index 100 1",
            "continuous no_index 1000 1",
        ]
    );
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["version"], 1);
    for c in CELLS {
        assert_eq!(state["cells"][c]["status"], "done", "{c}");
    }

    // 2. Re-running the same command runs nothing and reuses the goldens.
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("0 cells run, 8 already done"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("golden"), "no golden is even checked");
    assert_eq!(lines(&out.join("results.jsonl")).len(), 8);

    // 3. Editing one value re-runs only the cells it touches; the goldens are reused.
    std::fs::write(&plan, text.replace("operations = 5", "operations = 6")).unwrap();
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0));
    let err = stderr(&o);
    assert!(err.contains("4 cells run, 4 already done"), "{err}");
    assert!(!err.contains("built"), "goldens are reused: {err}");
    assert_eq!(err.matches(": reused").count(), 4, "{err}");
    let records = lines(&out.join("results.jsonl"));
    let rerun: Vec<&str> = records[8..]
        .iter()
        .map(|r| r["bench_tag"].as_str().unwrap())
        .collect();
    assert_eq!(rerun, [CELLS[0], CELLS[2], CELLS[4], CELLS[6]]);
    assert_eq!(
        summary(&out).len(),
        9,
        "one row per cell, the latest record wins"
    );
    continuous_attempts_are(&out, 6);

    // 4. Reverting the edit runs nothing (the first records are the plan's again), and the
    // summary and the report show those records, by the same rule as the resume.
    std::fs::write(&plan, &text).unwrap();
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("0 cells run, 8 already done"),
        "{}",
        stderr(&o)
    );
    continuous_attempts_are(&out, 5);
    let o = bench().arg("summarize").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    continuous_attempts_are(&out, 5);
    drop(dir);
}

/// Every continuous row of the summary made this many operations (successes and errors):
/// the plan's `continuous.operations` its records ran with.
fn continuous_attempts_are(out: &std::path::Path, n: u64) {
    for row in summary(out)[1..].iter().filter(|r| r[0] == "continuous") {
        let ops: u64 = row[6].parse().unwrap();
        let errors: u64 = row[7].parse().unwrap();
        assert_eq!(ops + errors, n, "{row:?}");
    }
}

#[test]
fn ctrl_c_stops_the_cell_and_a_rerun_completes_the_rest() {
    // One long concurrent cell after a short continuous one.
    let text = r#"
name = "interrupt"
[matrix]
sizes = [100]
inline = [false]
[continuous]
operations = 3
[concurrent]
concurrency = [2]
duration_secs = 8
"#;
    let (_dir, plan, out) = plan_dir(text);
    let child = bench()
        .arg("run")
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .args(["--progress", "lines"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the concurrent cell's workers are committing.
    let store = out.join("store");
    let needle = store.join("runs/conc_inline_false_rows_100_c_2");
    let needle = needle.to_str().unwrap();
    let start = Instant::now();
    while processes_mentioning(needle).len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "workers never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // ... and have committed: the copy's manifest has versions beyond the golden's.
    let versions = std::path::Path::new(needle).join("__manifest/_versions");
    let count = || std::fs::read_dir(&versions).map_or(0, |d| d.count());
    let golden = std::fs::read_dir(store.join("golden/inline_false_rows_100/__manifest/_versions"))
        .unwrap()
        .count();
    while count() <= golden + 1 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "workers never committed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // What the kernel says the committing writers hold (VmRSS), to hold the records' peak
    // against below.
    let resident: Vec<u64> = processes_mentioning(needle)
        .iter()
        .filter_map(|pid| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            status.lines().find_map(|l| {
                l.strip_prefix("VmRSS:")?
                    .trim()
                    .strip_suffix("kB")?
                    .trim()
                    .parse()
                    .ok()
            })
        })
        .collect();
    assert!(!resident.is_empty());
    // `bench status` meanwhile: the running cell is running, in the run that holds the lock.
    let status = bench_on("status", &plan, &out);
    let status = String::from_utf8(status.stdout).unwrap();
    assert!(
        status.contains(&format!(
            "0 interrupted, 1 running (bench run pid {} holds the directory; running now: ",
            child.id()
        )),
        "{status}"
    );
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("is pending again"), "{err}");
    assert!(
        processes_mentioning(needle).is_empty(),
        "workers outlived the cell"
    );
    assert!(
        !std::path::Path::new(needle).exists(),
        "the cell's copy was removed"
    );
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["bench_tag"], "cont_inline_false_rows_100");

    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("1 cell run, 1 already done"),
        "{}",
        stderr(&o)
    );
    let tags: BTreeSet<String> = lines(&out.join("results.jsonl"))
        .iter()
        .map(|r| r["bench_tag"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(tags.len(), 2);
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 2);
    // The same cell's writers, run again: their peak is at least about what the kernel
    // showed resident for the first ones early in their run (they grow as they commit).
    let peak = records[1]["worker_rss_peak_kib"]["max"].as_u64().unwrap();
    let seen = *resident.iter().max().unwrap();
    assert!(
        seen / 2 <= peak,
        "reported peak {peak} KiB, resident while committing {seen} KiB"
    );
}

/// What the kernel shows for a resident worker waiting for its release (as `ps` would),
/// against the peak it reports when it is done without an operation (a deadline of 0 s):
/// within 2x. (A commit adds its own buffers: the peak of a working writer is larger.)
#[test]
fn an_idle_workers_reported_peak_memory_is_what_the_kernel_shows() {
    use std::io::{BufRead, Write};
    let text = ONE_CELL.replace("[continuous]", "[run]\nkeep_runs = true\n[continuous]");
    let (_dir, plan, out) = plan_dir(&text);
    assert!(run(&plan, &out, &[]).status.success());
    let root = out.join("store/runs/cont_inline_false_rows_100");
    let mut worker = bench()
        .args(["worker", "--root", root.to_str().unwrap()])
        .args([
            "--operation",
            "write-create-namespace",
            "--commit-retries",
            "20",
        ])
        .args(["--worker-id", "0", "--duration-secs", "0"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = std::io::BufReader::new(worker.stdout.take().unwrap());
    let mut next = || {
        let mut line = String::new();
        said.read_line(&mut line).unwrap();
        line
    };
    let ready: Value = serde_json::from_str(&next()).unwrap();
    assert_eq!(ready["ev"], "ready", "{ready}");
    let status = std::fs::read_to_string(format!("/proc/{}/status", worker.id())).unwrap();
    let resident: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    assert!(ready["open_ms"].as_f64().unwrap() > 0.0, "{ready}");
    worker.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
    let done = loop {
        let line = next();
        assert!(!line.is_empty(), "the worker ended without done");
        let event: Value = serde_json::from_str(&line).unwrap();
        if event["ev"] == "done" {
            break event;
        }
    };
    // Its stdin stays open until it has exited (a closed stdin would tell it its
    // coordinator is gone).
    let stdin = worker.stdin.take();
    assert!(worker.wait().unwrap().success());
    drop(stdin);
    let peak = done["rss_peak_kib"].as_u64().unwrap();
    assert!(
        resident / 2 <= peak && peak <= resident * 2,
        "reported peak {peak} KiB, resident while idle {resident} KiB"
    );
}

#[test]
fn a_sweep_whose_log_reader_goes_away_still_records_every_cell() {
    // As in `bench run plan.toml 2>&1 | head`: stderr's reader closes at once.
    let (_d, plan, out) = plan_dir(&tiny_plan().replace("sizes = [100, 1000]", "sizes = [100]"));
    let mut child = spawn_sweep(bench(), "run", &plan, &out, &[]);
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 4);
    assert!(records.iter().all(|r| r["verified"] == true));
}

/// A plan of one short continuous cell.
const ONE_CELL: &str = "name = \"one-cell\"\n[matrix]\nsizes = [100]\ninline = [false]\n\
                        [continuous]\noperations = 2\n";

/// Start a sweep with the `pause-verify` test hook.
fn spawn_paused(
    plan: &std::path::Path,
    out: &std::path::Path,
    extra: &[&str],
) -> std::process::Child {
    let mut cmd = bench();
    cmd.env("BENCH_FAULT", "pause-verify");
    spawn_sweep(cmd, "run", plan, out, extra)
}

/// Read a sweep's stderr until it waits before verifying its cell: its stderr, and what it
/// said so far.
fn until_paused(
    child: &mut std::process::Child,
) -> (std::io::BufReader<std::process::ChildStderr>, String) {
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut err, &mut line).unwrap();
        assert!(n > 0, "the sweep ended before its verification: {seen}");
        seen.push_str(&line);
        if line.contains("fault: paused at verify") {
            return (err, seen);
        }
    }
}

/// A Ctrl-C during a step a signal does not cut short (here the last cell's verification,
/// held by a test hook until the signal arrives): the cell's measurement is kept, and the
/// sweep stops there and exits 130, without its end-of-sweep cleanup, never 0.
#[test]
fn ctrl_c_during_a_verification_exits_130_and_keeps_the_measurement() {
    let (_dir, plan, out) = plan_dir(ONE_CELL);
    let mut child = spawn_paused(&plan, &out, &[]);
    let (mut err, mut seen) = until_paused(&mut child);
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    std::io::Read::read_to_string(&mut err, &mut seen).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen}");
    assert!(seen.contains("interrupted"), "{seen}");
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 1, "the measurement is kept");
    assert_eq!(records[0]["verified"], true);
    // The end-of-sweep cleanup did not run, nor did the final line.
    assert!(!seen.contains("finished:"), "{seen}");
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("0 cells run, 1 already done"),
        "{}",
        stderr(&o)
    );
}

/// Two sweeps with their own results directories on one store root would remove each
/// other's copies and goldens: the second is refused, naming the first, while the first
/// runs; once the first ends, the root is free.
#[test]
fn a_second_sweep_on_a_root_in_use_is_refused_naming_the_first() {
    let (dir, plan, out) = plan_dir(ONE_CELL);
    let root = dir.path().join("shared-store");
    let root = root.to_str().unwrap();
    let mut first = spawn_paused(&plan, &out, &["--root", root]);
    let (mut err, mut seen) = until_paused(&mut first);
    let other = dir.path().join("other-out");
    let o = run(&plan, &other, &["--root", root]);
    let said = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{said}");
    let first_out = std::path::absolute(&out).unwrap();
    assert!(
        said.contains("is in use by the sweep writing to")
            && said.contains(first_out.to_str().unwrap())
            && said.contains(&format!("pid {}", first.id())),
        "{said}"
    );
    assert!(!other.join("results.jsonl").exists());
    // The refused sweep leaves nothing behind: no results directory, no lock file in it.
    assert!(
        !other.exists(),
        "{:?}",
        std::fs::read_dir(&other).map(|d| d.count())
    );
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(first.id() as i32, libc::SIGINT);
    }
    std::io::Read::read_to_string(&mut err, &mut seen).unwrap();
    assert_eq!(first.wait().unwrap().code(), Some(130), "{seen}");
    let o = run(&plan, &other, &["--root", root]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// A concurrent cell bounded by its commits ends once its writers have that many together
/// (each finishing its operation in flight), with or without a deadline; verified.
#[test]
fn a_concurrent_cell_bounded_by_commits_ends_after_them() {
    for (table, bound) in [
        ("concurrency = [2]\noperations = 12\n", 12),
        (
            "concurrency = [2]\noperations = 8\nduration_secs = 120\n",
            8,
        ),
    ] {
        let text = format!(
            "name = \"bounded\"\n[matrix]\nsizes = [100]\ninline = [false]\n\
             [concurrent]\n{table}[run]\ncell_timeout_secs = 300\n"
        );
        let (_dir, plan, out) = plan_dir(&text);
        let o = run(&plan, &out, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let records = lines(&out.join("results.jsonl"));
        let r = &records[0];
        assert_eq!(r["operations_bound"], bound, "{r}");
        assert_eq!(r["verified"], true, "{r}");
        let ops = r["total_operations"].as_u64().unwrap();
        // Two writers: the bound, and the commits they finished before `end` reached them
        // (one each in flight; more where a commit is quicker than the coordinator's reply).
        assert!(ops >= bound, "{ops} commits for a bound of {bound}");
        // Ended by the bound, long before any deadline.
        assert!(r["total_duration_ms"].as_f64().unwrap() < 60_000.0, "{r}");
        let overrun = &r["window_overrun_ms"];
        if table.contains("duration_secs") {
            assert_eq!(r["duration_secs"], 120);
            assert_eq!(overrun.as_f64(), Some(0.0), "{r}");
        } else {
            assert_eq!(r["duration_secs"], 0);
            assert!(overrun.is_null(), "{r}");
            // Time slices share a duration this cell does not have: refused, nothing run.
            let ab_out = out.with_file_name("ab");
            let o = bench()
                .arg("ab")
                .arg(&plan)
                .arg("--candidate")
                .arg(env!("CARGO_BIN_EXE_bench"))
                .arg("--out")
                .arg(&ab_out)
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
            assert!(stderr(&o).contains("--pairing duet"), "{}", stderr(&o));
            assert!(!ab_out.join("results.jsonl").exists());
        }
    }
}

/// `--trace N`: each run of a cell leaves a Chrome trace event file of its workers' first N
/// operations with their requests, named in its record; one process per worker, no two
/// slices overlapping on a row (what Perfetto and chrome://tracing need).
#[test]
fn a_trace_of_each_run_holds_every_workers_first_operations_and_their_requests() {
    let text = "name = \"traced\"\n[matrix]\nsizes = [100]\ninline = [true]\n\
                [continuous]\noperations = 4\n[concurrent]\nconcurrency = [2]\noperations = 6\n";
    let (_dir, plan, out) = plan_dir(text);
    let o = run(&plan, &out, &["--trace", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 2);
    for r in &records {
        let rel = r["trace"]
            .as_str()
            .unwrap_or_else(|| panic!("no trace in {r}"));
        let trace: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join(rel)).unwrap()).unwrap();
        let events = trace["traceEvents"].as_array().unwrap();
        let workers = r["concurrency"].as_u64().unwrap() as usize;
        let processes: Vec<&serde_json::Value> = events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
            .collect();
        assert_eq!(processes.len(), workers, "{rel}");
        let slices: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        let ops = slices.iter().filter(|e| e["cat"] == "operation").count();
        // The first two of each worker (a contending writer told to end early may have
        // started only one).
        for w in 1..=workers as u64 {
            let of_w = slices
                .iter()
                .filter(|e| e["cat"] == "operation" && e["pid"] == w)
                .count();
            assert!((1..=2).contains(&of_w), "{rel}: worker {w} has {of_w}");
        }
        if workers == 1 {
            assert_eq!(ops, 2, "{rel}");
        }
        // Each operation's outcome, as the cell's operation log judged it.
        for e in slices.iter().filter(|e| e["cat"] == "operation") {
            let said = e["args"]["outcome"].as_str().unwrap_or_default();
            assert_eq!(said == "ok", e["args"]["ok"] == true, "{e}");
            assert!(["ok", "failed"].contains(&said), "{e}");
        }
        let requests: Vec<&&serde_json::Value> =
            slices.iter().filter(|e| e["cat"] == "request").collect();
        assert!(requests.len() >= ops, "{rel}: a commit makes requests");
        for q in &requests {
            let kind = q["args"]["kind"].as_str().unwrap();
            assert!(IO_KEYS[..7].contains(&kind), "{q}");
            assert!(
                q["args"]["path"].as_str().is_some_and(|p| !p.is_empty()),
                "{q}"
            );
        }
        // Every commit rewrites the manifest: a conditional PUT of a version.
        assert!(
            requests
                .iter()
                .any(|q| q["name"] == "conditional_put version"),
            "{rel}"
        );
        for a in &slices {
            for b in &slices {
                if std::ptr::eq(*a, *b) || (&a["pid"], &a["tid"]) != (&b["pid"], &b["tid"]) {
                    continue;
                }
                let span = |e: &serde_json::Value| {
                    let t = e["ts"].as_u64().unwrap();
                    (t, t + e["dur"].as_u64().unwrap())
                };
                let ((a0, a1), (b0, b1)) = (span(a), span(b));
                assert!(a1 <= b0 || b1 <= a0, "{a} overlaps {b}");
            }
        }
    }
    // Asked again of the finished sweep: nothing runs, and it says so and how to trace.
    let o = run(&plan, &out, &["--trace", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("2 cells already done are not run again, so they get no trace"),
        "{}",
        stderr(&o)
    );
    // --fresh moves the traces aside with the records that name them.
    let o = run(&plan, &out, &["--fresh", "--trace", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let archived: Vec<std::path::PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("previous-")
        })
        .collect();
    assert_eq!(archived.len(), 1);
    for r in lines(&archived[0].join("results.jsonl")) {
        let rel = r["trace"].as_str().unwrap();
        assert!(archived[0].join(rel).is_file(), "{rel}");
    }
    // Without --trace, none.
    let (_dir2, plan2, out2) = plan_dir(text);
    let o = run(&plan2, &out2, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!out2.join("traces").exists());
    assert!(lines(&out2.join("results.jsonl"))[0].get("trace").is_none());
}

/// `--only GLOB` runs the cells it selects (and only their goldens); `bench plan` lists
/// them; a pattern that selects nothing is refused, naming it; `--set` sets a key as if the
/// plan said it.
#[test]
fn only_and_set_select_cells_and_set_keys() {
    let (_dir, plan, out) = plan_dir(&tiny_plan());
    let shown = bench()
        .args(["plan"])
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .args([
            "--only",
            "cont_*_rows_100",
            "--set",
            "continuous.operations=3",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert!(
        text.contains("cont_inline_true_rows_100") && text.contains("cont_inline_false_rows_100"),
        "{text}"
    );
    assert!(
        !text.contains("conc_") && !text.contains("rows_1000"),
        "{text}"
    );
    let o = run(
        &plan,
        &out,
        &[
            "--only",
            "cont_*_rows_100",
            "--set",
            "continuous.operations=3",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("(--only: 2 of its"), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 2);
    for r in &records {
        assert!(r["bench_tag"].as_str().unwrap().starts_with("cont_"), "{r}");
        assert_eq!(r["total_operations"], 3, "--set took: {r}");
    }
    // Only the goldens the selected cells need were built.
    let goldens: Vec<String> = std::fs::read_dir(out.join("store/golden"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        goldens.iter().all(|g| g.ends_with("rows_100")),
        "{goldens:?}"
    );
    // Nothing matches: refused, nothing run.
    let o = run(&plan, &out, &["--only", "nothing_*"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no cell of") && stderr(&o).contains("nothing_*"),
        "{}",
        stderr(&o)
    );
    // A --set the plan would refuse is refused, naming it.
    let o = run(&plan, &out, &["--set", "continuous.operations=0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--set continuous.operations=0"),
        "{}",
        stderr(&o)
    );
    // A secret's value is never shown, however it is given wrong.
    for args in [
        &["--set", "storage.aws_secret_access_key=1234567"][..],
        &["--set", "storage.aws_secret_access_key:1234567"],
        &["--storage-option", "aws_secret_access_key:1234567"],
        &[
            "--set",
            "storage.aws_session_token=1234567",
            "--set",
            "run.repetitions=0",
        ],
    ] {
        let o = run(&plan, &out, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let said = stderr(&o) + &String::from_utf8_lossy(&o.stdout);
        assert!(!said.contains("1234567"), "{args:?}: {said}");
        assert!(
            said.contains("aws_s") || said.contains("takes KEY=VALUE"),
            "{args:?} says what is wrong: {said}"
        );
    }
}

/// A run with a test hook set (here a planted slowdown) is never taken for a measurement:
/// its record, the summary, the report, `bench status` and `bench compare` name the hook.
#[test]
fn a_run_with_a_planted_hook_says_so_everywhere() {
    let (_dir, plan, out) = plan_dir(
        "name = 'planted'\n[matrix]\nsizes = [100]\ninline = [false]\n[continuous]\noperations = 3\n",
    );
    let mut cmd = bench();
    cmd.env("BENCH_OP_DELAY_MS", "1");
    let o = run_with(cmd, &plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &lines(&out.join("results.jsonl"))[0];
    assert_eq!(
        r["planted"],
        serde_json::json!(["BENCH_OP_DELAY_MS=1"]),
        "{r}"
    );
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let (head, row) = summary.split_once('\n').unwrap();
    let column = head.split(',').position(|name| name == "planted");
    assert_eq!(
        column.and_then(|at| row.trim_end().split(',').nth(at)),
        Some("BENCH_OP_DELAY_MS=1"),
        "{summary}"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("**PLANTED: cells run with test hooks set**"),
        "{report}"
    );
    let status = bench_on("status", &plan, &out);
    let said = String::from_utf8_lossy(&status.stdout);
    assert!(
        said.contains("PLANTED: cells run with test hooks set"),
        "{said}"
    );
    let compared = bench_cmd(&["compare", out.to_str().unwrap(), out.to_str().unwrap()]);
    let said = stdout(&compared);
    assert!(
        said.contains("PLANTED: test hooks were set in the runs of A (BENCH_OP_DELAY_MS=1) and B"),
        "{said}"
    );
}
