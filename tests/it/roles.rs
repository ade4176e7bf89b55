//! Cells of roles on a golden that is a tree ([fixture]): what a drop-heavy mix leaves in
//! `__manifest` (exactly the entries its clients did not remove, looked up apart from
//! bench's own verification), and a hot set's conflicts against uniform targets (on S3:
//! `s3::`).

use std::collections::BTreeSet;

use crate::common::*;

/// A tree of 2 × 2 namespaces (6), 10 tables in each leaf (40), with their data.
pub const TREE: &str = "[fixture]\nwidth = 2\ndepth = 2\ntables_per_namespace = 10\n\
                        table_data = true\nproperties = 1\n";

/// Two roles: droppers (drops and deregistrations of tables, and describes of a hot set)
/// and readers (listings of the tree's namespaces, namespace checks), with creations.
pub fn drop_heavy(transports: &str) -> String {
    format!(
        "name = 'drops'\n{TREE}[matrix]\ninline = [false]\ntransport = [{transports}]\n\
         [workload]\nduration_secs = 1\nseed = 7\n\
         [[roles]]\nname = 'droppers'\nclients = 2\ntargets = 'hotspot-0.2'\n\
         [roles.mix]\n'write-drop-table' = 6\n'write-deregister-table' = 2\n\
         'write-declare-table' = 2\n'warm-read-describe-table' = 5\n\
         [[roles]]\nname = 'readers'\nclients = 1\n\
         [roles.mix]\n'warm-read-list-tables' = 1\n'cold-read-namespace-exists' = 1\n\
         'warm-read-list-namespaces' = 1\n\
         [run]\nkeep_runs = true\n"
    )
}

/// A role's figures for one operation.
pub fn role_op<'a>(r: &'a serde_json::Value, op: &str) -> &'a serde_json::Value {
    (r["roles"].as_array().unwrap().iter())
        .find(|f| f["operation"] == op)
        .unwrap_or_else(|| panic!("{op} in {r}"))
}

/// The tree's ids: its namespaces and tables.
fn tree_ids() -> (Vec<String>, Vec<String>) {
    let f = bench_lance::plan::Fixture {
        width: 2,
        depth: 2,
        tables_per_namespace: 10,
        tables_at: bench_lance::plan::TablesAt::Leaves,
        properties: 1,
        names: bench_lance::plan::NameShape::Plain,
        table_data: true,
    };
    (
        (0..f.namespaces()).map(|k| f.namespace_id(k)).collect(),
        (0..f.tables()).map(|k| f.table_id(k)).collect(),
    )
}

#[test]
fn a_drop_heavy_mix_leaves_exactly_the_entries_its_clients_did_not_remove() {
    let (_d, plan, out) = plan_dir(&drop_heavy("'direct', 'rest'"));
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 2, "direct and rest");
    let (namespaces, tables) = tree_ids();
    let rt = tokio::runtime::Runtime::new().unwrap();
    for r in &records {
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["mode"], "roles", "{r}");
        assert_eq!(r["initial_entries"], 46, "{r}");
        let ok = |op: &str| role_op(r, op)["total_operations"].as_u64().unwrap();
        let removed = ok("write-drop-table") + ok("write-deregister-table");
        let declared = ok("write-declare-table");
        assert!(removed > 0 && declared > 0, "{r}");
        for f in r["roles"].as_array().unwrap() {
            assert!(
                f["attempts"].as_u64().unwrap() > 0,
                "every operation ran: {f}"
            );
            // Only entries others removed are not found, and a removal whose share of the
            // tree is gone says so once per client; nothing else fails.
            let errors = f["errors"].as_object().unwrap();
            let used_up = f["first_error"]
                .as_str()
                .is_some_and(|e| e.contains("is removed"));
            assert!(
                errors
                    .keys()
                    .all(|k| k == "not_found" || (k == "other" && used_up)),
                "{f}"
            );
        }
        // The cell's own count of entries not found is the roles' together, a class of its
        // own beside the others.
        let not_found: u64 = (r["roles"].as_array().unwrap().iter())
            .filter_map(|f| f["errors"]["not_found"].as_u64())
            .sum();
        assert_eq!(r["not_found_errors"].as_u64(), Some(not_found), "{r}");
        // Apart from bench's verification: the copy holds every namespace, every table
        // but exactly as many as were removed (only tables, none twice), and each table
        // declared, once.
        let root = out
            .join("store/runs")
            .join(r["bench_tag"].as_str().unwrap());
        let ids = rt
            .block_on(bench_lance::catalog::object_ids(
                root.to_str().unwrap(),
                &Default::default(),
            ))
            .unwrap();
        let held: BTreeSet<&String> = ids.iter().collect();
        assert_eq!(held.len(), ids.len(), "no entry twice");
        assert!(namespaces.iter().all(|n| held.contains(n)), "{ids:?}");
        let gone = tables.iter().filter(|t| !held.contains(t)).count() as u64;
        assert_eq!(gone, removed, "{r}");
        let created = ids.iter().filter(|i| i.contains("bench_d")).count() as u64;
        assert_eq!(created, declared, "{r}");
        assert_eq!(ids.len() as u64, 46 - removed + declared, "{r}");
        assert_eq!(
            r["manifest_rows_after"].as_u64().unwrap(),
            46 - removed + declared
        );
        // What the readers saw (listings, look-ups of tables and namespaces) against the
        // creations and removals: lance 14.0.2 reloads on every read, so nothing stale, no
        // removed table seen again, none gone that no one removed.
        let c = &r["consistency"];
        assert_eq!(c["removals"].as_u64(), Some(removed), "{c}");
        assert_eq!(c["creations"].as_u64(), Some(declared), "{c}");
        assert!(c["reads"].as_u64().unwrap() > 0, "{c}");
        no_anomaly(c);
    }
    let roles_csv = std::fs::read_to_string(out.join("roles.csv")).unwrap();
    assert_eq!(roles_csv.lines().count(), 1 + 2 * 7, "{roles_csv}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Roles"), "{report}");
    assert!(
        report.contains("role_roles_inline_false_rows_46"),
        "{report}"
    );
}

/// A client that drops tables and namespaces of a flat golden at 20 operations a second,
/// after a warm-up of reads only: each kind's removals are a share of their own, taken from the last entry, and the
/// warm-up takes none — the copy lacks exactly the last tables and the last namespaces, as
/// many as were removed, with no entry skipped.
#[test]
fn each_kind_of_removal_has_its_own_share_and_the_warm_up_takes_none() {
    let plan_text = "name = 'shares'\n[matrix]\nsizes = [60]\ninline = [false]\n\
                     [workload]\nduration_secs = 1\nseed = 3\n\
                     [[roles]]\nname = 'removers'\nclients = 1\nrate = 20\n\
                     [roles.mix]\n'write-drop-table' = 1\n'write-drop-namespace' = 1\n\
                     'warm-read-list-tables' = 1\n\
                     [run]\nwarmup_operations = 4\nkeep_runs = true\n";
    let (_d, plan, out) = plan_dir(plan_text);
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &lines(&out.join("results.jsonl"))[0];
    assert_eq!(r["verified"], true, "{r}");
    // The record names where its draws came from.
    assert_eq!(
        r["draws"],
        serde_json::json!({"generator": "SplitMix64", "seed": 3, "seed_per_repetition": false}),
        "{r}"
    );
    let root = (out.join("store/runs")).join(r["bench_tag"].as_str().unwrap());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let ids = rt
        .block_on(bench_lance::catalog::object_ids(
            root.to_str().unwrap(),
            &Default::default(),
        ))
        .unwrap();
    let held: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
    // 60 rows: 20 namespaces and 40 tables.
    for (op, prefix, count) in [
        ("write-drop-table", "table_", 40),
        ("write-drop-namespace", "ns_", 20),
    ] {
        let removed = role_op(r, op)["total_operations"].as_u64().unwrap();
        assert!(removed > 0, "{op}: {r}");
        let gone: Vec<u64> = (0..count)
            .filter(|k| !held.contains(format!("{prefix}{k}").as_str()))
            .collect();
        let last: Vec<u64> = (count - removed.min(count)..count).collect();
        assert_eq!(gone, last, "{op}: {ids:?}");
    }
}

/// Property updates of the tree's tables by three clients: drawn from a zipf hot set
/// (exponent 3: the first table takes 83 % of them) most updates that took effect land on
/// the first table, as the copy's table versions show; drawn uniformly over the 40 tables
/// none takes half. Conflicts past the retries are counted alike in the record and the
/// roles' figures. (That a hot set conflicts more is a figure of a run, not a behaviour a
/// test can hold on any machine: how many commits overlap depends on the pace.)
#[test]
fn a_hot_set_takes_most_updates_and_its_conflicts_are_counted() {
    let (_d, plan, out) = plan_dir(&format!(
        "name = 'hot'\n{TREE}[matrix]\ninline = [false]\ntargets = ['uniform', 'zipf-3']\n\
         [workload]\nduration_secs = 2\n\
         [[roles]]\nname = 'writers'\nclients = 3\n\
         [roles.mix]\n'write-update-table-metadata' = 1\n[run]\nkeep_runs = true\n"
    ));
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    let golden = std::fs::read_dir(out.join("store/golden"))
        .unwrap()
        .next()
        .unwrap();
    let before = table_versions(&golden.unwrap().path());
    let hottest_share = |targets: &str| {
        let r = (records.iter())
            .find(|r| r["bench_tag"].as_str().unwrap().ends_with(targets))
            .unwrap();
        assert_eq!(r["verified"], true, "{r}");
        let f = role_op(r, "write-update-table-metadata");
        assert_eq!(f["targets"], targets, "{r}");
        let conflicts = f["errors"]["conflict"].as_u64().unwrap_or(0);
        assert_eq!(r["conflict_errors"].as_u64().unwrap(), conflicts, "{r}");
        let copy = out
            .join("store/runs")
            .join(r["bench_tag"].as_str().unwrap());
        let updates: Vec<usize> = (table_versions(&copy).iter())
            .map(|(table, n)| n - before[table])
            .collect();
        let all: usize = updates.iter().sum();
        assert_eq!(all as u64, f["total_operations"].as_u64().unwrap(), "{r}");
        *updates.iter().max().unwrap() as f64 / all as f64
    };
    let (uniform, zipf) = (hottest_share("uniform"), hottest_share("zipf-3"));
    assert!(
        zipf > 0.5 && uniform < 0.5,
        "zipf {zipf} vs uniform {uniform}"
    );
}

/// Each table's versions in a catalog on local disk: its manifests, by table directory.
fn table_versions(root: &std::path::Path) -> std::collections::BTreeMap<String, usize> {
    let mut by = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(root).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let versions = entry.path().join("_versions");
        if name.contains("table_") && versions.is_dir() {
            let n = std::fs::read_dir(versions).unwrap().flatten();
            let manifests = n.filter(|f| f.file_name().to_string_lossy().ends_with(".manifest"));
            by.insert(name, manifests.count());
        }
    }
    by
}

/// One writer declaring tables at 20 a second in one namespace, two readers listing it.
pub fn freshness(transports: &str, servers: &str) -> String {
    format!(
        "name = 'fresh'\n[fixture]\nwidth = 1\ndepth = 1\ntables_per_namespace = 10\n\
         [matrix]\ninline = [false]\ntransport = [{transports}]\nservers = [{servers}]\n\
         [workload]\nduration_secs = 2\n\
         [[roles]]\nname = 'writer'\nclients = 1\nrate = 20\n[roles.mix]\n'write-declare-table' = 1\n\
         [[roles]]\nname = 'readers'\nclients = 2\n[roles.mix]\n'warm-read-list-tables' = 1\n"
    )
}

/// No anomaly in a record's `consistency`: nothing stale, no removed entry seen again, no
/// reader going backwards or missing its own commit, no phantom, none named.
pub fn no_anomaly(c: &serde_json::Value) {
    for k in [
        "stale_reads",
        "resurrections",
        "monotonic_violations",
        "read_your_writes_violations",
        "phantoms",
    ] {
        assert_eq!(c[k], 0, "{k}: {c}");
    }
    assert!(c["first_violation"].is_null(), "{c}");
    // Where operations carry their `__manifest` version, every check on its order passes.
    if let Some(o) = c.get("order") {
        for k in [
            "not_its_version",
            "no_such_state",
            "versions_back",
            "write_order",
            "one_version_twice",
        ] {
            assert_eq!(o[k]["count"], 0, "{k}: {o}");
            assert!(o[k]["first"].is_null(), "{k}: {o}");
        }
    }
}

/// A direct cell's `consistency.order`: every commit's version known, and every read's but
/// at most one of each reader — on local disk its last, where it loaded a version unseen and
/// no later operation of its client named it; on a catalog not yet created, its first —,
/// said so.
pub fn versions_known(c: &serde_json::Value, readers: u64) {
    let o = &c["order"];
    assert!(o.is_object(), "{c}");
    let n = |k: &str| o[k].as_u64().unwrap();
    assert!(n("commits") > 0 && n("reads") > 0, "{o}");
    assert_eq!(n("commits_known"), n("commits"), "{o}");
    let unknown = n("reads") - n("reads_known");
    assert!(unknown <= readers, "{o}");
    if unknown > 0 {
        let why = o["unknown"].as_object().unwrap();
        let said = |k: &String| k.contains("local disk") || k.contains("not yet created");
        assert!(why.keys().all(said), "{o}");
    }
}

/// The record's consistency findings (with reads checked).
pub fn consistency_of(r: &serde_json::Value) -> &serde_json::Value {
    let c = &r["consistency"];
    assert!(c.is_object(), "{r}");
    assert!(c["reads"].as_u64().unwrap() > 0, "{c}");
    c
}

/// The same, of a cell with acknowledged creations.
pub fn consistency(r: &serde_json::Value) -> &serde_json::Value {
    let c = consistency_of(r);
    assert!(c["creations"].as_u64().unwrap() > 0, "{c}");
    c
}

/// Directly and through one and three REST servers, on lance 14.0.2 (which reloads on
/// every read): every listing begun after a creation's acknowledgement sees it, no reader
/// goes backwards or sees what no one created, so the lag's lower bound is 0 (no listing
/// begun after an acknowledgement missed it) and its upper bound the wait for a reader's next
/// listing.
#[test]
fn readers_see_every_acknowledged_creation_directly_and_through_rest() {
    let (_d, plan, out) = plan_dir(&freshness("'direct', 'rest'", "1, 3"));
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 3, "direct, rest × 1, rest × 3");
    for r in &records {
        assert_eq!(r["verified"], true, "{r}");
        let c = consistency(r);
        no_anomaly(c);
        // Directly, every operation's version is known from its requests; through REST from
        // what the servers said, but where a server on local disk found a successor during
        // the call (it loads it without a request naming it), each said so.
        match r["transport"].as_str() {
            Some("rest") => {
                let o = &c["order"];
                assert_eq!(o["commits_known"], o["commits"], "{o}");
                assert!(o["reads_known"].as_u64().unwrap() > 0, "{o}");
                let why = o["unknown"].as_object().into_iter().flatten();
                assert!(why.clone().all(|(k, _)| k.contains("local disk")), "{o}");
            }
            _ => versions_known(c, 3),
        }
        assert_eq!(c["lag_low_max_ms"], 0.0, "{c}");
        let (upper, period) = (c["lag_p50_ms"].as_f64(), c["read_period_ms"].as_f64());
        assert!(upper.unwrap() > 0.0 && period.unwrap() > 0.0, "{c}");
    }
}

/// A reader whose wall clock is 3 s ahead (`BENCH_WORKER_WALL_STEP`: worker 1 started
/// under libfaketime, as if the host's clock had been stepped just before it started): the
/// history is on the clock every process of the host shares, so its reads are held to what
/// was acknowledged before them, not 3 s after — no anomaly — and the run says it was planted.
#[test]
fn a_wall_clock_step_in_one_worker_is_no_anomaly() {
    let direct = freshness("'direct'", "1").replace("servers = [1]\n", "");
    let (_d, plan, out) = plan_dir(&direct);
    let mut cmd = bench();
    cmd.env(bench_lance::host_clock::WALL_STEP_ENV, "1:+3");
    let o = run_with(cmd, &plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &lines(&out.join("results.jsonl"))[0];
    assert_eq!(r["verified"], true, "{r}");
    no_anomaly(consistency(r));
    assert_eq!(
        r["planted"],
        serde_json::json!(["BENCH_WORKER_WALL_STEP=1:+3"]),
        "{r}"
    );
}

/// The planted cache of `bench serve` (`BENCH_SERVE_CACHE_MS`, a test fixture): listings
/// answered from a view refreshed every 200 ms miss what was acknowledged since, and the
/// checker counts those stale reads, names one, and bounds the lag the cache makes: a view
/// misses only what landed after its stamp and is served under 200 ms after it, so a
/// listing that missed an acknowledged creation began under 200 ms after it, on any machine
/// (the lag's lower bound), and its upper bound lies above its lower.
#[test]
fn a_planted_cache_shows_as_lag_and_stale_reads() {
    let (_d, plan, out) = plan_dir(&freshness("'rest'", "1"));
    let mut cmd = bench();
    cmd.env(bench_lance::server::CACHE_ENV, "200");
    let o = run_with(cmd, &plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &lines(&out.join("results.jsonl"))[0];
    assert_eq!(r["verified"], true, "{r}");
    let c = consistency(r);
    assert!(c["stale_reads"].as_u64().unwrap() > 0, "{c}");
    let named = c["first_violation"].as_str().unwrap();
    assert!(
        named.starts_with("client ")
            && named.contains("listed ns_0 at +")
            && named.contains("did not see writer 0's #")
            && named.contains(", acknowledged at +"),
        "{named}"
    );
    assert_eq!(
        c["monotonic_violations"], 0,
        "one server's view never goes back: {c}"
    );
    let f = |k: &str| c[k].as_f64().unwrap_or_else(|| panic!("{k}: {c}"));
    let (low, low_max) = (f("lag_low_p50_ms"), f("lag_low_max_ms"));
    assert!(low_max > 0.0 && low_max < 200.0, "{c}");
    assert!(low <= f("lag_p50_ms") && low_max <= f("lag_max_ms"), "{c}");
}

/// `bench compare` of the same cell without and with the planted cache: its readers'
/// stale reads are a regression (exit 5 with `--fail-on-regression`, on the count gate too:
/// an anomaly is counted, not timed), said in its text and its JSON.
#[test]
fn compare_judges_what_readers_see() {
    let (_d, plan, a) = plan_dir(&freshness("'rest'", "1"));
    let o = run(&plan, &a, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let b = a.with_file_name("cached");
    let mut cmd = bench();
    cmd.env(bench_lance::server::CACHE_ENV, "200");
    let o = run_with(cmd, &plan, &b, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = bench_cmd(&["compare", a, b, "--fail-on-regression", "--gate", "counts"]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let text = stdout(&o);
    let (_, readers) = (text.split_once("what readers see")).expect("a readers table");
    let row = (readers.lines())
        .find(|l| l.starts_with("roles_"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("REGRESSION (B: anomalies 0.000 → 0."), "{row}");
    assert!(text.contains("readers: 1 regressed, 0 improved"), "{text}");
    let o = bench_cmd(&["compare", a, b, "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let r = &doc["readers"][0];
    assert_eq!(
        (&r["anomalies"], &r["regressed"]),
        (&"more".into(), &true.into()),
        "{r}"
    );
    assert_eq!(doc["reader_regressions"], 1);
    // Each side's lag as an interval: B's lower bound above 0 (the cache hid commits from
    // reads begun after them), A's 0, and the lower bound is what a lag verdict judges.
    let low = |side: &str| r[side][0]["lag_low_p50_ms"].as_f64().unwrap();
    assert!(low("a") == 0.0 && low("b") > 0.0, "{r}");
    assert_eq!(r["lag_judged"], "lower bound", "{r}");
    // The same run against itself: no change.
    let o = bench_cmd(&["compare", a, a, "--fail-on-regression"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// `bench ab` runs a cell of roles in time slices, each arm paused while the other runs:
/// its readers' lag counts only the time they ran (each record says how long its clients
/// were paused), so a commit acknowledged just before a pause is not half a second late.
#[test]
fn under_bench_ab_s_slices_the_lag_leaves_out_the_pauses() {
    let plan_text = "name = 'sliced'\n[fixture]\nwidth = 1\ndepth = 1\ntables_per_namespace = 10\n\
                     [matrix]\ninline = [false]\n[workload]\nduration_secs = 2\n\
                     [[roles]]\nname = 'writer'\nclients = 1\n[roles.mix]\n'write-declare-table' = 1\n\
                     [[roles]]\nname = 'readers'\nclients = 2\n[roles.mix]\n'warm-read-list-tables' = 1\n";
    let (dir, plan, out) = plan_dir(plan_text);
    let same = candidate(dir.path(), "same.sh", "BENCH_EXTRA_HEADS=0");
    let args = [
        "--candidate",
        same.to_str().unwrap(),
        "--no-extend",
        "--slice-ms",
        "500",
    ];
    let o = sweep_with(bench(), "ab", &plan, &out, &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 2, "one run of each arm");
    for r in &records {
        assert_eq!(r["verified"], true, "{r}");
        let c = &r["consistency"];
        no_anomaly(c);
        // Four slices of 500 ms an arm, the other arm's between them: paused 1 s or more.
        assert!(c["paused_ms"].as_f64().unwrap() >= 900.0, "{c}");
        // No lag holds the other arm's slice (500 ms, which a lag through a pause would):
        // at most what the readers' next listings took.
        assert!(c["lag_max_ms"].as_f64().unwrap() < 500.0, "{c}");
    }
}

/// Mixed cells are checked too: writers that declare tables (or create namespaces) at the
/// root and list its tables (or namespaces), and writers that append to the shared table
/// and read its latest version. On lance 14.0.2
/// every read sees every commit acknowledged before it began, and the warm-up's creations,
/// which are not measured, are no phantoms.
#[test]
fn mixed_cells_readers_see_every_acknowledged_commit() {
    let mixed = |operation: &str, read: &str, table: &str| {
        format!(
            "name = 'mixed'\noperation = '{operation}'\n[matrix]\nsizes = [20]\n\
             inline = [false]\n{table}[continuous]\noperations = 3\n\
             [mixed]\nclients = [3]\nreads_per_write = 3\nduration_secs = 2\n\
             read_operation = '{read}'\n[run]\nwarmup_operations = 4\n"
        )
    };
    for (text, commits) in [
        (
            mixed("write-declare-table", "warm-read-list-tables", ""),
            "creations",
        ),
        (
            mixed("write-create-namespace", "warm-read-list-namespaces", ""),
            "creations",
        ),
        (
            mixed(
                "write-table-append",
                "warm-read-list-table-versions",
                "table_versions = [1]\n[table]\nrows_per_commit = 1\n",
            ),
            "versions",
        ),
    ] {
        let (_d, plan, out) = plan_dir(&text);
        let o = run(&plan, &out, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let records = lines(&out.join("results.jsonl"));
        let r = (records.iter())
            .find(|r| r["mode"] == "mixed")
            .expect("the mixed cell");
        assert_eq!(r["verified"], true, "{r}");
        let c = &r["consistency"];
        assert!(c["reads"].as_u64().unwrap() > 0, "{r}");
        assert!(c[commits].as_u64().unwrap() > 0, "{commits}: {c}");
        no_anomaly(c);
        assert!(c["lag_pairs"].as_u64().unwrap() > 0, "{c}");
        let report = std::fs::read_to_string(out.join("report.md")).unwrap();
        let said = format!("`{}`: What readers saw: ", r["bench_tag"].as_str().unwrap());
        assert!(report.contains(&said), "{report}");
    }
}

/// A writer killed (SIGKILL) in the middle of a commit, as planted
/// (`BENCH_WORKER_KILL_MID_COMMIT`): it said so first, so its commit is indeterminate, looked
/// up in the copy after the cell and judged as it landed; the cell goes on without it and is
/// verified, and the readers see no anomaly that did not happen.
#[test]
fn a_writer_killed_mid_commit_leaves_an_indeterminate_commit_resolved() {
    let text = (freshness("'direct'", "1").replace("servers = [1]\n", ""))
        .replace("tables_per_namespace = 10", "tables_per_namespace = 100")
        .replace(
            "'write-declare-table' = 1\n",
            "'write-declare-table' = 1\n'write-drop-table' = 1\n",
        );
    let (_d, plan, out) = plan_dir(&text);
    let mut cmd = bench();
    cmd.env(bench_lance::worker::KILL_MID_COMMIT_ENV, "0:5");
    let o = run_with(cmd, &plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &lines(&out.join("results.jsonl"))[0];
    assert_eq!(r["verified"], true, "{r}");
    let stopped = r["stopped_early"].as_str().unwrap_or_default();
    assert!(stopped.contains("worker 0: killed mid-commit"), "{r}");
    let killed: u64 = (r["roles"].as_array().unwrap().iter())
        .filter_map(|f| f["errors"]["killed"].as_u64())
        .sum();
    assert_eq!(killed, 1, "{r}");
    let c = &r["consistency"];
    assert_eq!(c["indeterminate"], 1, "{c}");
    assert!(c["indeterminate_landed"].as_u64().unwrap() <= 1, "{c}");
    no_anomaly(c);
}

/// A plan of roles through a launcher (`--launcher`, as `run.launcher` in the plan) is
/// refused before anything runs: every task would run the first client's role and seed.
#[test]
fn roles_through_a_launcher_are_refused() {
    let (_d, plan, out) = plan_dir(&freshness("'direct'", "1").replace("servers = [1]\n", ""));
    let o = run(&plan, &out, &["--launcher", "srun --ntasks={workers}"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--launcher starts every task with one command line"),
        "{}",
        stderr(&o)
    );
    assert!(!out.join("results.jsonl").exists());
}

/// The planted cache with a role removing the namespace's tables: listings answered from
/// the cached view show tables whose removal was acknowledged since (resurrections, stale
/// reads), named; look-ups, which the cache does not answer, never do.
#[test]
fn a_planted_cache_shows_removed_tables_again() {
    // 100 tables: more than the remover's 20 a second takes in the cell's 2 s.
    let text = (freshness("'rest'", "1")
        .replace("tables_per_namespace = 10", "tables_per_namespace = 100"))
    .replace(
        "'write-declare-table' = 1\n",
        "'write-drop-table' = 1\n\
         [[roles]]\nname = 'lookers'\nclients = 1\n[roles.mix]\n'warm-read-table-exists' = 1\n",
    );
    let (_d, plan, out) = plan_dir(&text);
    let mut cmd = bench();
    cmd.env(bench_lance::server::CACHE_ENV, "200");
    let o = run_with(cmd, &plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &lines(&out.join("results.jsonl"))[0];
    assert_eq!(r["verified"], true, "{r}");
    let c = &r["consistency"];
    assert!(c["removals"].as_u64().unwrap() > 0, "{c}");
    let resurrections = c["resurrections"].as_u64().unwrap();
    assert!(resurrections > 0, "{c}");
    assert!(c["stale_reads"].as_u64().unwrap() > 0, "{c}");
    let named = c["first_violation"].as_str().unwrap();
    assert!(
        named.contains("listed ns_0 at +")
            && named.contains("still saw ns_0$table_")
            && named.contains(", acknowledged at +"),
        "{named}"
    );
    assert_eq!(c["phantoms"], 0, "{c}");
}

/// Commits abandoned at the attempt timeout (each made slower than it by a planted delay
/// after it landed) are resolved one by one against the copy: every one landed, and the
/// cell is verified with them.
#[test]
fn abandoned_commits_of_roles_are_each_resolved_against_the_copy() {
    let (_d, plan, out) = plan_dir(&format!(
        "name = 'abandoned'\n{TREE}[matrix]\ninline = [false]\n\
         [workload]\nduration_secs = 2\n\
         [[roles]]\nname = 'writers'\nclients = 2\n\
         [roles.mix]\n'write-declare-table' = 1\n'write-drop-table' = 1\n\
         [run]\nattempt_timeout_secs = 0.5\n"
    ));
    let mut cmd = bench();
    cmd.env("BENCH_OP_DELAY_MS", "600");
    let o = run_with(cmd, &plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &lines(&out.join("results.jsonl"))[0];
    assert_eq!(r["verified"], true, "{r}");
    let abandoned = r["timeout_errors"].as_u64().unwrap();
    assert!(abandoned > 0 && r["total_operations"] == 0, "{r}");
    assert_eq!(r["abandoned_landed"].as_u64(), Some(abandoned), "{r}");
}

/// `bench plan` names a plan of roles by its roles and their mixes, not by an operation none
/// of them runs.
#[test]
fn a_plan_of_roles_is_named_by_its_roles() {
    let (_d, plan, out) = plan_dir(&freshness("'direct'", "1").replace("servers = [1]\n", ""));
    let o = bench_on("plan", &plan, &out);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    let head = text.lines().next().unwrap();
    assert!(
        head.contains("roles writer (write-declare-table); readers (warm-read-list-tables)")
            && !head.contains("operation "),
        "{head}"
    );
}

/// A catalog that does not exist yet (`matrix.sizes = [0]`): every client opens its
/// namespace on an empty root before the first commit; the readers see every acknowledged
/// declaration (no stale read: lance #8233's frozen reader would miss them all) and the
/// catalog holds exactly the writer's declarations, with and without the inline index.
#[test]
fn readers_opened_before_the_catalog_existed_see_every_creation() {
    let (dir, _, out) = plan_dir("");
    let plan = repo_file("plans/empty-root.toml");
    let store = dir.path().join("store");
    let o = run(
        &plan,
        &out,
        &[
            "--root",
            store.to_str().unwrap(),
            "--set",
            "workload.duration_secs=3",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 2, "with and without the inline index");
    for r in &records {
        assert!(
            r["bench_tag"].as_str().unwrap().ends_with("_rows_0_c_3"),
            "{r}"
        );
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["manifest_rows_before"], 0, "{r}");
        assert_eq!(r["copy"]["objects"], 0, "nothing to copy: {r}");
        let writer = role_op(r, "write-declare-table");
        let commits = writer["total_operations"].as_u64().unwrap();
        assert!(commits > 0, "{r}");
        assert_eq!(r["outcomes"]["ok"].as_u64().unwrap(), commits, "{r}");
        let c = consistency(r);
        assert_eq!(c["creations"].as_u64().unwrap(), commits, "{c}");
        no_anomaly(c);
        assert!(c["lag_pairs"].as_u64().unwrap() > 0, "{c}");
    }
}
