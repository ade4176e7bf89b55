//! S3 as it behaves over a network: the requests each operation costs (against the
//! server's own count), throttling and resets, and the window over a slow store. Against
//! `scripts/s3-server.py` on 127.0.0.1 with its latency and faults.

use std::time::Duration;

use bench_lance::coordinator::{CellRun, Outcome, run_cell};
use bench_lance::golden::{self, GoldenConfig};
use bench_lance::plan::{GoldenSpec, Operation};
use bench_lance::store::Store;
use bench_lance::worker::WorkerArgs;

use crate::common::*;

const ROOT: &str = "s3://bench/net";

on_every_server!(
    the_requests_counted_in_the_workers_are_the_servers_own_count,
    on_ceph_s_gateway_the_requests_counted_in_the_workers_are_the_servers_own_count,
    on_seaweedfs_the_requests_counted_in_the_workers_are_the_servers_own_count
        => requests_counted_in_the_workers_are_the_servers
);

fn requests_counted_in_the_workers_are_the_servers(backend: Backend) {
    let server = S3Server::start_on(backend, &[]);
    let storage = server.storage();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (root, counted) = rt.block_on(async {
        let store = Store::open(ROOT, &storage).await.unwrap();
        let spec = GoldenSpec::catalog(100, true);
        let cfg = GoldenConfig {
            storage: &storage,
            commit_retries: 20,
        };
        let (g, _) = golden::ensure(&store, spec, &cfg).await.unwrap();
        store.copy_prefix(&g.rel, "runs/io").await.unwrap();
        let root = store.uri("runs/io");
        // From here on only the workers talk to the server.
        server.take_counts();
        let workers = (0..2)
            .map(|worker_id| WorkerArgs {
                inline: true,
                commit_retries: 20,
                operations: Some(8),
                warmup: 1,
                tables: 66,
                ..WorkerArgs::new(root.clone(), Operation::CreateNamespace, worker_id)
            })
            .collect();
        let (_tx, mut rx) = tokio::sync::watch::channel(false);
        let exe = std::path::Path::new(env!("CARGO_BIN_EXE_bench"));
        let run = CellRun {
            exe,
            workers,
            storage: &storage,
            timeout: Duration::from_secs(120),
            bound: None,
            versions: None,
            launcher: None,
            journal: None,
        };
        match run_cell(run, &(), &mut rx).await {
            Outcome::Finished(m) => (root, *m),
            other => panic!("{other:?}"),
        }
    });
    let server_counts = server.counts();
    let mine = serde_json::to_value(counted.io_workers).unwrap();
    for kind in IO_KEYS {
        assert_eq!(
            mine[kind], server_counts[kind],
            "{kind}: workers {mine}, server {server_counts}"
        );
    }
    // Priced on every store of bench's table, the server's own count costs what the
    // workers' does.
    let theirs: bench_lance::stats::IoCounts = serde_json::from_value(server_counts.clone())
        .unwrap_or_else(|e| panic!("{e}: {server_counts}"));
    let table = bench_lance::prices::Priced::builtin();
    let priced = |io| table.cost(io, 1).unwrap().usd_per_million_ops;
    assert_eq!(priced(&counted.io_workers), priced(&theirs));
    assert_eq!(priced(&theirs).len(), 5);
    // The measured commits are a part of it: every one wrote and read something.
    let io = counted.io;
    assert!(io.put >= 16 && io.conditional_put >= 16, "{io:?}");
    assert!(
        io.get > 0 && io.written_bytes > 0 && io.read_bytes > 0,
        "{io:?}"
    );
    assert!(
        io.requests() < counted.io_workers.requests(),
        "opening and warm-up are apart"
    );
    assert!(root.ends_with("runs/io"));
}

/// Over a store 20 ms a request away, each commit's time is mostly its round trips on the
/// critical path: the record says how many, how long they waited, and what is left.
#[test]
fn a_commit_s_time_splits_into_its_round_trips_and_the_rest() {
    let server = S3Server::start(&["--latency-ms", "20"]);
    let (_dir, o, records) = sweep_s3(
        &server,
        ROOT,
        "name = 'path'\n[matrix]\nsizes = [1000]\ninline = [true, false]\n\
         [continuous]\noperations = 5\n",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(records.len(), 2);
    for r in &records {
        let trips = r["round_trips_per_op"].as_f64().unwrap();
        let wait = r["store_wait_ms_per_op"].as_f64().unwrap();
        let other = r["other_ms_per_op"].as_f64().unwrap();
        let avg = r["avg_latency_ms"].as_f64().unwrap();
        // A commit waits on each request it needs before the next: a few at least, and
        // never more than the requests it made.
        let requests = r["io_per_op"]["get"].as_f64().unwrap()
            + r["io_per_op"]["put"].as_f64().unwrap()
            + r["io_per_op"]["list"].as_f64().unwrap()
            + r["io_per_op"]["head"].as_f64().unwrap();
        assert!(trips >= 3.0 && trips <= requests, "{r}");
        // Each round trip waits at least the store's 20 ms.
        assert!(wait >= 20.0 * trips * 0.95, "{r}");
        assert!(
            other >= 0.0 && (wait + other - avg).abs() < 0.01 * avg,
            "{r}"
        );
        assert!(wait > other, "over this store, waiting dominates: {r}");
    }
    let [inline, plain] =
        [&records[0], &records[1]].map(|r| r["round_trips_per_op"].as_f64().unwrap());
    assert!(
        inline > plain,
        "the inline index adds round trips: {inline} vs {plain}"
    );
}

#[test]
fn records_carry_the_requests_and_bytes_of_each_commit() {
    let server = S3Server::start(&[]);
    let (_dir, o, records) = sweep_s3(
        &server,
        ROOT,
        "name = 'io'\n[matrix]\nsizes = [100]\ninline = [false]\n[continuous]\noperations = 5\n",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &records[0];
    let (per, total) = (&r["io_per_op"], &r["io_total"]);
    for k in IO_KEYS {
        let (p, t) = (per[k].as_f64().unwrap(), total[k].as_f64().unwrap());
        assert!(
            (p * 5.0 - t).abs() < 1e-9,
            "{k}: {p} per op, {t} in all: {r}"
        );
    }
    assert!(
        per["conditional_put"].as_f64().unwrap() >= 1.0,
        "a commit is a conditional PUT: {r}"
    );
}

on_both_servers!(
    table_operations_on_s3_are_verified_and_their_requests_counted,
    on_ceph_s_gateway_table_operations_are_verified_and_their_requests_counted
        => table_operations_verified_and_counted
);

fn table_operations_verified_and_counted(backend: Backend) {
    // On moto each commit is the namespace's create_table_version. On Ceph's gateway (as
    // the tests run it) lance 14.0.2's create_table_version fails every commit ("Commit
    // result for version 2 is unknown"), so there the appends are lance's own commits.
    let op = match backend {
        Backend::Moto => "write-create-table-version",
        Backend::Rgw | Backend::Seaweed => "write-table-append",
    };
    let server = S3Server::start_on(backend, &[]);
    let (_dir, o, records) = sweep_s3(
        &server,
        ROOT,
        &format!(
            "name = 'tables'\noperation = '{op}'\n[matrix]\nsizes = [20]\n\
             inline = [false]\ntable_versions = [30]\n[continuous]\noperations = 3\n\
             [mixed]\nclients = [2]\nreads_per_write = 2\nduration_secs = 1\n\
             read_operation = 'warm-read-list-table-versions'\n"
        ),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["errors"], 0, "{r}");
        let t = &r["table"];
        let commits = r["total_operations"].as_u64().unwrap();
        assert_eq!(
            t["version_after"],
            t["version_before"].as_u64().unwrap() + commits
        );
        // On the table, not the catalog: lance commits a version with a conditional PUT;
        // the namespace managing the versions publishes a staged manifest by copying it
        // into place if absent, then removes it.
        let io = &r["io_per_op"];
        if op == "write-table-append" {
            assert!(io["conditional_put"].as_f64().unwrap() >= 1.0, "{r}");
        } else {
            assert_eq!(r["properties"]["table_version_tracking_enabled"], "true");
            assert!(io["copy"].as_f64().unwrap() >= 1.0, "{r}");
            assert!(io["delete"].as_f64().unwrap() >= 1.0, "{r}");
        }
        assert_eq!(r["manifest_rows_after"], 21, "{r}");
        if r["mode"] == "mixed" {
            // The lookup of the latest version lists the table's versions.
            let reads = &r["reads"];
            assert!(reads["io_per_op"]["list"].as_f64().unwrap() >= 1.0, "{r}");
        }
    }
}

#[test]
fn throttling_and_resets_cost_time_but_no_commit() {
    // One request in fifty is refused with 503 SlowDown, one in fifty has its connection
    // reset; the faults' sequence is fixed.
    throttling_and_resets_lose_no_commit(Backend::Moto, "0.02");
}

/// The same faults in front of a real S3 server: 2 % throttled, 1 % reset.
#[test]
fn throttling_and_resets_in_front_of_ceph_s_gateway_lose_no_commit() {
    throttling_and_resets_lose_no_commit(Backend::Rgw, "0.01");
}

fn throttling_and_resets_lose_no_commit(backend: Backend, resets: &str) {
    let server = S3Server::start_on(
        backend,
        &[
            "--throttle-rate",
            "0.02",
            "--reset-rate",
            resets,
            "--seed",
            "11",
        ],
    );
    let (_dir, o, records) = sweep_s3(
        &server,
        ROOT,
        "name = 'faults'\n[matrix]\nsizes = [100]\ninline = [false]\n[continuous]\noperations = 10\n\
         [concurrent]\nconcurrency = [2]\nduration_secs = 2\n",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let faults = server.counts();
    assert!(
        faults["throttled"].as_u64().unwrap() > 0 && faults["reset"].as_u64().unwrap() > 0,
        "the server injected both: {faults}"
    );
    for r in &records {
        // No commit lost, no phantom: the manifest holds exactly the reported commits.
        assert_eq!(r["verified"], true, "{r}");
        let classes: u64 = [
            "conflict_errors",
            "other_errors",
            "throttled_errors",
            "network_errors",
        ]
        .iter()
        .map(|k| r[*k].as_u64().unwrap())
        .sum();
        assert_eq!(r["errors"].as_u64().unwrap(), classes, "{r}");
        assert_eq!(r["other_errors"], 0, "no unclassified error: {r}");
    }
}

#[test]
fn over_a_slow_store_the_window_ends_with_the_last_operation_and_says_its_overrun() {
    // 200 ms per request: a commit takes seconds, so the last ones started before the
    // 1-second deadline finish well after it.
    let server = S3Server::start(&["--latency-ms", "200"]);
    let (_dir, o, records) = sweep_s3(
        &server,
        ROOT,
        "name = 'slow'\n[matrix]\nsizes = [10]\ninline = [false]\n\
         [concurrent]\nconcurrency = [2]\nduration_secs = 1\n",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &records[0];
    let window = r["total_duration_ms"].as_f64().unwrap();
    let overrun = r["window_overrun_ms"].as_f64().unwrap();
    assert!(window > 1000.0 + 400.0, "{r}");
    assert!((overrun - (window - 1000.0)).abs() < 1e-6, "{r}");
    // Each commit took at least two requests' latency, and every one started in time.
    assert!(r["min_latency_ms"].as_f64().unwrap() >= 400.0, "{r}");
    assert!(r["attempts"].as_u64().unwrap() >= 2, "{r}");
    assert!(r["max_latency_ms"].as_f64().unwrap() <= window, "{r}");
    assert_eq!(r["verified"], true, "{r}");
}

#[test]
fn keys_rotated_in_a_profile_during_a_sweep_are_used_from_the_next_cell_on() {
    let server = S3Server::start(&[]);
    let (dir, plan, out) = plan_dir(
        "name = 'rotate'\n[matrix]\nsizes = [10]\ninline = [false]\n\
         [concurrent]\nconcurrency = [1, 2]\nduration_secs = 3\n",
    );
    let credentials = dir.path().join("credentials");
    // Rotated as a tool that rotates keys does, in one rename: a reader sees the old file or
    // the new one, never one half written.
    let profile = |key: &str| {
        let next = dir.path().join("credentials.next");
        std::fs::write(
            &next,
            format!("[bench]\naws_access_key_id = {key}\naws_secret_access_key = secret-{key}\n"),
        )
        .unwrap();
        std::fs::rename(&next, &credentials).unwrap()
    };
    profile("KEYONE");
    std::fs::write(
        dir.path().join("config"),
        "[profile bench]\nregion = us-east-1\n",
    )
    .unwrap();
    let mut cmd = bench();
    cmd.env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_SESSION_TOKEN")
        .env("AWS_PROFILE", "bench")
        .env("AWS_SHARED_CREDENTIALS_FILE", &credentials)
        .env("AWS_CONFIG_FILE", dir.path().join("config"))
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .arg("run")
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .args(["--root", ROOT, "--progress", "lines"])
        .args(server.options())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    // While the first cell's writer commits with the first key, the key is rotated.
    let committing = |key: &str| {
        server.counts()["by_access_key"][key]["conditional_put"]
            .as_u64()
            .unwrap_or(0)
    };
    let start = std::time::Instant::now();
    while committing("KEYONE") == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the first cell never committed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    profile("KEYTWO");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let counts = server.counts();
    let by_key = &counts["by_access_key"];
    // The second cell: the coordinator copied its golden and its writers committed, both
    // with the rotated key.
    assert!(
        by_key["KEYTWO"]["copy"].as_u64().unwrap_or(0) > 0,
        "{counts}"
    );
    assert!(committing("KEYTWO") > 0, "{counts}");
    assert_eq!(lines(&out.join("results.jsonl")).len(), 2);
}

/// One writer's commits make the same requests on SeaweedFS as on moto: the same cells of
/// plans/tiny.toml's one-writer kind, each store's count per commit (every kind), equal.
#[test]
fn a_commit_on_seaweedfs_makes_the_requests_it_makes_on_moto() {
    let plan = tiny_plan() + "\n";
    let per_commit = |backend: Backend| {
        let server = S3Server::start_on(backend, &[]);
        let (dir, plan, out) = plan_dir(&plan);
        let mut args = server.args("s3://bench/same");
        args.extend(["--only".to_string(), "cont_*".to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run_with(bench_s3(), &plan, &out, &args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let records = lines(&out.join("results.jsonl"));
        drop(dir);
        // Every kind of request (`IO_KEYS` ends with the bytes).
        let kinds = &IO_KEYS[..7];
        (records.iter())
            .map(|r| {
                let io = &r["io_per_op"];
                let counts: Vec<String> = kinds.iter().map(|k| format!("{k}={}", io[*k])).collect();
                (r["bench_tag"].as_str().unwrap().to_string(), counts)
            })
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let (moto, seaweed) = (per_commit(Backend::Moto), per_commit(Backend::Seaweed));
    assert_eq!(moto.len(), 4, "{moto:?}");
    assert_eq!(seaweed, moto);
}
