//! Rest cells: the workers reach the catalog through lance's REST namespace to `bench serve`
//! processes (lance's REST adapter on the cell's copy), one or several per cell.

use std::time::{Duration, Instant};

use crate::common::*;

/// Four writers for 2 s, without lance's retries (a conflict fails the commit), over each
/// transport: direct, one REST server, two.
fn transports_plan() -> String {
    "name = 'rest'\noperation = 'write-declare-table'\n\
     [matrix]\nsizes = [100]\ninline = [false]\n\
     transport = ['direct', 'rest']\nservers = [1, 2]\n\
     [concurrent]\nconcurrency = [4]\nduration_secs = 2\n\
     [run]\ncommit_retries = 0\n"
        .to_string()
}

fn record<'a>(records: &'a [serde_json::Value], tag_end: &str) -> &'a serde_json::Value {
    (records.iter())
        .find(|r| r["bench_tag"].as_str().unwrap().ends_with(tag_end))
        .unwrap_or_else(|| panic!("no record of *{tag_end}"))
}

#[test]
fn one_server_queues_what_direct_writers_conflict_on_and_the_split_adds_up() {
    let (_dir, plan, out) = plan_dir(&transports_plan());
    let shown = bench_on("plan", &plan, &out);
    let text = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(
        text.contains("transports: direct (each worker to the store), rest (1 server,")
            && text.contains("rest (2 servers,"),
        "{text}"
    );
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 3);
    for r in &records {
        assert_eq!(r["verified"], true, "{r}");
        assert!(r["total_operations"].as_u64().unwrap() > 0, "{r}");
    }
    // Direct: four writers race for each version of __manifest, and without retries the
    // losers fail.
    let direct = record(&records, "_transport-direct");
    assert_eq!(direct["transport"], "direct");
    assert!(direct["conflict_errors"].as_u64().unwrap() > 0, "{direct}");
    assert!(direct.get("rest").is_none(), "{direct}");
    // One server: its namespace lets one mutation at a time rewrite __manifest; the
    // writers queue in it instead, and none fails.
    let one = record(&records, "_transport-rest_servers-1");
    assert_eq!(one["transport"], "rest");
    assert_eq!(one["errors"], 0, "{one}");
    let rest = &one["rest"];
    assert_eq!(rest["servers"], 1, "{one}");
    let f = |k: &str| rest[k].as_f64().unwrap_or_else(|| panic!("{k}: {one}"));
    // One backend call per declare_table.
    assert!((f("server_calls_per_op") - 1.0).abs() < 0.1, "{one}");
    // The client's time is transport + waiting in the server + the backend's own time.
    let parts = f("transport_ms_per_op") + f("server_wait_ms_per_op") + f("backend_ms_per_op");
    let client = f("client_ms_per_op");
    assert!((parts - client).abs() <= 0.05 * client, "{one}");
    // No failure: the mean of the attempts is the mean of the successes (the histogram's).
    let avg = one["avg_latency_ms"].as_f64().unwrap();
    assert!((client - avg).abs() <= 0.01 * avg, "{one}");
    assert!(f("transport_ms_per_op") > 0.0, "{one}");
    // Four writers and one lock: a commit waits for others a good part of its time.
    assert!(
        f("server_wait_ms_per_op") > 0.2 * f("server_ms_per_op"),
        "{one}"
    );
    // The catalog's requests are the server's, and they are counted.
    assert!(one["io_per_op"]["put"].as_f64().unwrap() >= 1.0, "{one}");
    assert!(f("server_requests_per_op") >= 1.0, "{one}");
    assert!(rest["server_rss_peak_kib"].as_u64().unwrap() > 0, "{one}");
    // Two servers: two namespaces on one copy race again, and every commit still verifies.
    let two = record(&records, "_transport-rest_servers-2");
    assert_eq!(two["rest"]["servers"], 2, "{two}");
    assert_eq!(two["variant_name"], "no_index/transport=rest/servers=2");
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let (head, _) = summary.split_once('\n').unwrap();
    assert!(
        head.contains(
            "transport,servers,server_ms_per_op,server_wait_ms_per_op,transport_ms_per_op,\
             offered_ops_per_sec,arrivals,service_p50_ms,service_p99_ms,late_operations,"
        ),
        "{head}"
    );
    assert!(summary.contains(",rest,2,"), "{summary}");
    // No server outlived its cell.
    let store = out.join("store");
    assert!(
        processes_mentioning(store.to_str().unwrap()).is_empty(),
        "a server outlived its cell"
    );
}

/// A sweep of `text`, sent `signals` Ctrl-Cs (50 ms apart) once its cell's server runs:
/// its directory, what it printed, and the store path its processes mention.
fn interrupted(text: &str, signals: usize) -> (tempfile::TempDir, std::process::Output, String) {
    let (dir, plan, out) = plan_dir(text);
    let child = spawn_sweep(bench(), "run", &plan, &out, &[]);
    let needle = out.join("store").to_str().unwrap().to_string();
    server_of(&needle);
    std::thread::sleep(Duration::from_millis(500));
    for _ in 0..signals {
        // SAFETY: kill(2) on our own child.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (dir, child.wait_with_output().unwrap(), needle)
}

/// Wait until a process mentioning `needle` and `serve` runs; its pid.
fn server_of(needle: &str) -> u32 {
    let t = Instant::now();
    loop {
        let servers: Vec<u32> = processes_mentioning(needle)
            .into_iter()
            .filter(|p| {
                std::fs::read(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains("\0serve\0"))
            })
            .collect();
        if let Some(&p) = servers.first() {
            return p;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "no server started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_server_or_worker_that_dies_fails_its_cell_and_no_server_outlives_it_or_an_interrupt() {
    let text = "name = 'rest'\n[matrix]\nsizes = [100]\ninline = [false]\n\
                transport = ['rest']\n\
                [concurrent]\nconcurrency = [2]\nduration_secs = 30\n\
                [run]\ncell_timeout_secs = 120\n";
    // A server that exits after 5 calls: the cell fails, saying so; nothing is left.
    let (_dir, plan, out) = plan_dir(text);
    let mut dying = bench();
    dying.env(bench_lance::server::SERVER_EXIT_AFTER_ENV, "5");
    let t = Instant::now();
    let o = run_with(dying, &plan, &out, &[]);
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("REST server 1 exited during the cell"),
        "{err}"
    );
    assert!(lines(&out.join("results.jsonl")).is_empty());
    let store = out.join("store");
    assert!(processes_mentioning(store.to_str().unwrap()).is_empty());
    // The workers stop without their server: not after 30 s of failed requests.
    assert!(t.elapsed() < Duration::from_secs(25), "{err}");

    // A worker that dies: the cell fails, and its server is stopped all the same.
    let (_dir, plan, out) = plan_dir(text);
    let mut lost = bench();
    lost.env(bench_lance::worker::EXIT_AFTER_ENV, "3");
    let o = run_with(lost, &plan, &out, &[]);
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    let store = out.join("store");
    assert!(
        processes_mentioning(store.to_str().unwrap()).is_empty(),
        "a server outlived a cell whose worker died"
    );

    // Ctrl-C while the cell runs: the sweep stops, and its server with it.
    let (_dir, o, needle) = interrupted(text, 1);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(
        processes_mentioning(&needle).is_empty(),
        "a server or worker outlived the interrupted cell"
    );

    // Ctrl-C twice: it exits at once, and kills what it started; the cell is pending again
    // and the next run runs it on a fresh copy.
    let (dir, o, needle) = interrupted(text, 2);
    let (plan, out) = (dir.path().join("plan.toml"), dir.path().join("out"));
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("pending again"), "{}", stderr(&o));
    let needle = needle.as_str();
    let t = std::time::Instant::now();
    while !processes_mentioning(needle).is_empty() {
        // SIGKILL'd groups are reaped by init: gone within moments.
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "a server or worker outlived a second Ctrl-C: {:?}",
            processes_mentioning(needle)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(lines(&out.join("results.jsonl"))[0]["verified"], true);
}

#[test]
fn a_rest_cell_on_s3_counts_its_servers_requests_and_verifies() {
    let server = S3Server::start_on(Backend::Moto, &[]);
    let (_dir, o, records) = sweep_s3(
        &server,
        "s3://bench/rest",
        "name = 'rest-s3'\n[matrix]\nsizes = [20]\ninline = [true]\ntransport = ['rest']\n\
         [concurrent]\nconcurrency = [2]\nduration_secs = 1\n",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &records[0];
    assert_eq!(r["verified"], true, "{r}");
    assert_eq!(r["storage_scheme"], "s3");
    // A commit is the server's conditional PUT of __manifest, counted by the server.
    assert!(
        r["io_per_op"]["conditional_put"].as_f64().unwrap() >= 1.0,
        "{r}"
    );
    let served = r["rest"]["server_requests_per_op"].as_f64().unwrap();
    let io = &r["io_per_op"];
    let all: f64 = ["get", "put", "list", "head", "delete", "copy"]
        .iter()
        .map(|k| io[k].as_f64().unwrap())
        .sum();
    assert!(served >= 2.0, "{r}");
    // The workers made none of them, and both divide by the operations the servers served
    // (every one attempted, failed ones too).
    assert!((all - served).abs() < 1e-6, "{r}");
}

/// A running REST server bench did not start (`bench serve` here: lance's REST adapter over
/// a catalog of its own): measured only when the plan says `rest.external = true`; then on
/// that catalog as it is, each run where the last ended, every commit verified in the
/// catalog it serves (the plan's `root`). bench builds, copies and leaves nothing there,
/// and the server runs on after the sweep. Roles there may add entries, not remove them; a
/// second run's readers take the first run's entries for no one's of theirs. A `root` that is
/// not the server's catalog fails the cell, saying so.
#[test]
fn an_external_server_is_measured_on_its_own_catalog_and_left_running() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    // Started as a user starts one (see `bench serve --help`): stdin closed, it runs on.
    let help = bench().args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    for flag in ["--root ROOT", "--bind HOST", "--port PORT", "rest.external"] {
        assert!(help.contains(flag), "{help}");
    }
    let (mut server, uri) = serve(&catalog, &["--commit-retries", "20"]);
    let plan = |root: &std::path::Path, external: &str| {
        format!(
            "name = 'ext'\nroot = '{}'\noperation = 'write-create-table'\n\
             [matrix]\nsizes = [0]\ninline = [false]\n\
             [concurrent]\nconcurrency = [3]\noperations = 24\n\
             [run]\nrepetitions = 2\n[rest]\nuri = '{uri}'\n{external}",
            root.display()
        )
    };
    // A server that does not answer: said before anything runs (exit 4), nothing written.
    let (_d, gone, out) =
        plan_dir(&plan(&catalog, "external = true\n").replace(&uri, "http://127.0.0.1:1"));
    let o = run(&gone, &out, &[]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("the external REST server at http://127.0.0.1:1 (rest.uri) does not answer"),
        "{}",
        stderr(&o)
    );
    // The command it suggests is one `bench serve` takes.
    assert!(
        stderr(&o).contains("`bench serve --root ROOT --bind HOST --port PORT`"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // Not without saying so: nothing run, nothing written.
    let (_d, refused, out) = plan_dir(&plan(&catalog, ""));
    let o = run(&refused, &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("external = true"), "{}", stderr(&o));
    assert!(!out.exists());
    // Said: two runs on the server's catalog, one after the other.
    let (_d, measured, out) = plan_dir(&plan(&catalog, "external = true\n"));
    let shown = bench_on("plan", &measured, &out);
    let text = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(
        text.contains("external (lance's REST namespace to"),
        "{text}"
    );
    assert!(!text.contains("golden "), "no golden to build: {text}");
    let o = run(&measured, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 2);
    let (first, second) = (&records[0], &records[1]);
    for r in &records {
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["transport"], "external", "{r}");
        assert!(
            r["bench_tag"]
                .as_str()
                .unwrap()
                .ends_with("_transport-external")
        );
        assert!(r["total_operations"].as_u64().unwrap() >= 24, "{r}");
    }
    assert_eq!(first["manifest_rows_before"], 0, "{first}");
    assert_eq!(
        second["manifest_rows_before"], first["manifest_rows_after"],
        "{second}"
    );
    assert!(
        second["manifest_rows_after"].as_u64().unwrap() >= 48,
        "both runs' tables are in the catalog: {second}"
    );
    let left: Vec<String> = std::fs::read_dir(&catalog)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n == "golden" || n == "runs" || n.starts_with("_bench"))
        // On local disk the claim on a root is a lock file that stays.
        .filter(|n| n != "_bench_claim.json")
        .collect();
    assert!(
        left.is_empty(),
        "bench left {left:?} in the server's catalog"
    );
    assert!(server.0.try_wait().unwrap().is_none(), "the server runs on");
    // Roles there: a removal is refused before anything runs; creations and listings run
    // twice, and the second run's readers see the first run's entries as no one's of theirs.
    let roles = |mix: &str| {
        format!(
            "name = 'ext-roles'\nroot = '{}'\n[matrix]\nsizes = [0]\ninline = [false]\n\
             [workload]\nduration_secs = 2\n\
             [[roles]]\nname = 'writer'\nclients = 1\nrate = 20\n[roles.mix]\n{mix}\n\
             [[roles]]\nname = 'reader'\nclients = 1\n[roles.mix]\n'warm-read-list-tables' = 1\n\
             [run]\nrepetitions = 2\n[rest]\nuri = '{uri}'\nexternal = true\n",
            catalog.display()
        )
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let no_options = std::collections::BTreeMap::new();
    let rows = || {
        let ids = bench_lance::verify::ids(catalog.to_str().unwrap(), &no_options);
        rt.block_on(ids).unwrap().rows()
    };
    let held = rows();
    let (_d, dropping, out) = plan_dir(&roles("'write-declare-table' = 1\n'write-drop-table' = 1"));
    let o = run(&dropping, &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("roles[0].mix") && stderr(&o).contains("write-drop-table"));
    assert!(!out.exists());
    let (_d, adding, out) = plan_dir(&roles("'write-declare-table' = 1"));
    let o = run(&adding, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!(r["verified"], true, "{r}");
        crate::roles::no_anomaly(&r["consistency"]);
    }
    assert!(rows() > held, "only entries added");
    // A root that is not the server's catalog: the cell fails and says so.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let (_d, wrong, out) = plan_dir(&plan(&elsewhere, "external = true\n"));
    let o = run(&wrong, &out, &[]);
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("the server at {uri}")),
        "{}",
        stderr(&o)
    );
    drop(server);
}
