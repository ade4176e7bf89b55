//! Every catalog operation beside the creates: removals of the golden's entries (drop and
//! deregister a table, drop an empty namespace) and reads of one entry (describe a
//! namespace, whether a namespace or a table exists), directly and through a REST server;
//! each verified against what its workers reported (on S3: `s3::`).

use crate::common::*;

pub const REMOVALS: [&str; 3] = [
    "write-drop-table",
    "write-deregister-table",
    "write-drop-namespace",
];

const READS: [&str; 6] = [
    "warm-read-describe-namespace",
    "cold-read-describe-namespace",
    "warm-read-namespace-exists",
    "cold-read-namespace-exists",
    "warm-read-table-exists",
    "cold-read-table-exists",
];

/// A plan of `op` on a 60-row golden (20 namespaces, 40 tables), directly and through one
/// REST server: one writer of 6 operations and, for removals, 2 contending writers bounded
/// at 6 commits (each may make them all: 2 × 6 of the 20 namespaces).
fn plan(op: &str, removal: bool) -> String {
    let concurrent = if removal {
        "[concurrent]\nconcurrency = [2]\noperations = 6\n"
    } else {
        ""
    };
    format!(
        "name = 'ops'\noperation = '{op}'\n[matrix]\nsizes = [60]\ninline = [false]\n\
         transport = ['direct', 'rest']\n[continuous]\noperations = 6\n{concurrent}"
    )
}

/// Each record of a run: verified, no error, its operations counted; a removal's
/// `__manifest` one row fewer per successful removal, a read's unchanged.
fn check(op: &str, removal: bool, o: &std::process::Output, records: &[serde_json::Value]) {
    assert_eq!(o.status.code(), Some(0), "{op}: {}", stderr(o));
    assert_eq!(records.len(), if removal { 4 } else { 2 }, "{op}");
    for r in records {
        assert_eq!(r["verified"], true, "{op}: {r}");
        assert_eq!(r["errors"], 0, "{op}: {r}");
        let n = r["total_operations"].as_u64().unwrap();
        assert!(n >= 6, "{op}: {r}");
        let (before, after) = (
            r["manifest_rows_before"].as_u64().unwrap(),
            r["manifest_rows_after"].as_u64().unwrap(),
        );
        let expected = if removal { before - n } else { before };
        assert_eq!(after, expected, "{op}: {r}");
        assert!(requests(r) > 0.0, "{op}: its requests are counted: {r}");
    }
}

/// A record's requests per operation, all kinds.
pub fn requests(r: &serde_json::Value) -> f64 {
    IO_KEYS[..7]
        .iter()
        .map(|k| r["io_per_op"][k].as_f64().unwrap_or(0.0))
        .sum()
}

#[test]
fn removals_and_reads_of_one_entry_run_verified_directly_and_through_rest() {
    // One store for every plan: the golden is built once.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    for (op, removal) in
        (REMOVALS.iter().map(|o| (*o, true))).chain(READS.iter().map(|o| (*o, false)))
    {
        let (_d, plan, out) = plan_dir(&plan(op, removal));
        let o = run(&plan, &out, &["--root", root.to_str().unwrap()]);
        check(op, removal, &o, &lines(&out.join("results.jsonl")));
    }
}

/// Plans whose removals could run out of the golden's entries, or that read entries their
/// commits remove, are refused before anything runs, naming the key.
#[test]
fn removals_that_could_run_out_of_entries_are_refused() {
    for (text, key, says) in [
        (
            "name = 'r'\noperation = 'write-drop-namespace'\n[matrix]\nsizes = [60]\n\
             [continuous]\noperations = 21\n",
            "matrix.sizes",
            "60 rows hold 20 namespaces",
        ),
        (
            "name = 'r'\noperation = 'write-drop-table'\n[matrix]\nsizes = [60]\n\
             [concurrent]\nconcurrency = [2]\nduration_secs = 5\n",
            "concurrent.operations",
            "or an offered rate",
        ),
        (
            "name = 'r'\noperation = 'write-deregister-table'\n[matrix]\nsizes = [60]\n\
             [mixed]\nclients = [2]\nreads_per_write = 2\nduration_secs = 1\n",
            "mixed",
            "its reads would look up entries its commits remove",
        ),
    ] {
        let (_d, plan, out) = plan_dir(text);
        let o = run(&plan, &out, &[]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("`{key}`")) && err.contains(says),
            "{err}"
        );
        assert!(!out.exists(), "nothing written");
    }
}

/// A listing in pages lists every page: through a REST server each page is one call of the
/// server's namespace (40 tables in pages of 7: 6 calls an operation), and directly each
/// page asks the store again. A plan that lists nothing takes no page size.
#[test]
fn a_listing_in_pages_lists_every_page() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let run_with = |page: &str| {
        let (d, plan, out) = plan_dir(&format!(
            "name = 'pages'\noperation = 'warm-read-list-tables'\n{page}[matrix]\nsizes = [60]\n\
             inline = [false]\ntransport = ['direct', 'rest']\n[continuous]\noperations = 4\n"
        ));
        let o = run(&plan, &out, &["--root", root.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let records = lines(&out.join("results.jsonl"));
        drop(d);
        records
    };
    let (whole, paged) = (run_with(""), run_with("page_size = 7\n"));
    let by = |records: &[serde_json::Value], t: &str| -> serde_json::Value {
        (records.iter())
            .find(|r| r["transport"] == t)
            .unwrap_or_else(|| panic!("{t}: {records:?}"))
            .clone()
    };
    for r in whole.iter().chain(&paged) {
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["errors"], 0, "{r}");
    }
    let calls = |r: &serde_json::Value| r["rest"]["server_calls_per_op"].as_f64().unwrap();
    assert_eq!(calls(&by(&whole, "rest")), 1.0);
    assert_eq!(calls(&by(&paged, "rest")), 6.0, "{}", by(&paged, "rest"));
    assert_eq!(by(&paged, "direct")["page_size"], 7);
    assert!(by(&whole, "direct").get("page_size").is_none());
    assert!(
        requests(&by(&paged, "direct")) > requests(&by(&whole, "direct")),
        "each page asks the store again: {} vs {}",
        by(&paged, "direct"),
        by(&whole, "direct")
    );

    let (_d, plan, out) = plan_dir(
        "name = 'p'\npage_size = 7\n[matrix]\nsizes = [60]\n[continuous]\noperations = 2\n",
    );
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`page_size`") && stderr(&o).contains("lists nothing"),
        "{}",
        stderr(&o)
    );
}

/// Property updates of the shared table (lance's `update_table_schema_metadata`): one writer
/// and two contending ones, directly and through a REST server, each run verified (no rows,
/// a version an update, each worker's key at its last acknowledged index, the warm-up's
/// values overwritten); a kept copy checked against a wrong index fails, naming the key.
#[test]
fn property_updates_leave_each_writer_s_last_value() {
    let (_d, plan, out) = plan_dir(
        "name = 'props'\noperation = 'write-update-table-metadata'\n[matrix]\nsizes = [30]\n\
         inline = [false]\ntransport = ['direct', 'rest']\n[continuous]\noperations = 5\n\
         [concurrent]\nconcurrency = [2]\noperations = 6\n\
         [run]\nwarmup_operations = 1\nkeep_runs = true\n",
    );
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 4);
    for r in &records {
        assert_eq!(r["verified"], true, "{r}");
        // Contending updates of one table's configuration conflict (lance does not retry
        // them): counted as conflicts, never as another class.
        assert_eq!(r["errors"], r["conflict_errors"], "{r}");
        if r["mode"] == "continuous" {
            assert_eq!(r["errors"], 0, "{r}");
        }
        let t = &r["table"];
        assert_eq!(t["rows_per_commit"], 0, "{r}");
        assert_eq!(t["rows_after"], t["rows_before"], "{r}");
        let commits =
            r["total_operations"].as_u64().unwrap() + r["warmup_committed"].as_u64().unwrap();
        assert_eq!(
            t["version_after"].as_u64().unwrap(),
            t["version_before"].as_u64().unwrap() + commits,
            "{r}"
        );
    }
    // The one writer's last update was its 5th (index 4); a wrong index is named.
    let cont = (records.iter())
        .find(|r| r["mode"] == "continuous" && r["transport"] == "direct")
        .unwrap();
    let copy = out
        .join("store/runs")
        .join(cont["bench_tag"].as_str().unwrap());
    // Its updates, as the log holds them: with the last one (index 4) they verify; without
    // it, the table's value is named against the one expected.
    use bench_lance::oplog::{Op, Outcome, sample};
    let update = |i: u64| {
        let operation = bench_lance::plan::Operation::UpdateTableMetadata;
        let mut o = sample(0, operation, i, "", Outcome::Ok);
        o.attempt.property = Some(("bench_w0".into(), i.to_string()));
        o
    };
    let storage = std::collections::BTreeMap::new();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let root = copy.to_str().unwrap();
    let check = |updates: u64| {
        let mut log: Vec<Op> = (0..updates).map(update).collect();
        rt.block_on(async {
            let now = bench_lance::verify::ids(root, &storage).await.unwrap();
            bench_lance::verify::cell(root, &storage, &now, &mut log, None, None).await
        })
    };
    assert_eq!(check(5).error, None);
    let wrong = check(4).error.unwrap();
    assert_eq!(
        wrong,
        "the shared table's property bench_w0 is `4`, expected `3`, its last successful \
         update's"
    );
}

/// A concurrent cell bounded only by its count of commits, whose every attempt fails (each
/// abandoned at a 1 ms attempt timeout, every operation made 5 ms long), stops once each
/// worker has failed 1,000 × writers attempts in a row, saying so, instead of running until
/// the cell's timeout.
#[test]
fn a_bounded_cell_whose_every_attempt_fails_stops_and_says_why() {
    let (_d, plan, out) = plan_dir(
        "name = 'stall'\n[matrix]\nsizes = [30]\ninline = [false]\n\
         [concurrent]\nconcurrency = [2]\noperations = 5\n\
         [run]\nattempt_timeout_secs = 0.001\ncell_timeout_secs = 600\n",
    );
    let mut cmd = bench();
    cmd.env("BENCH_OP_DELAY_MS", "5");
    let o = run_with(cmd, &plan, &out, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let r = &lines(&out.join("results.jsonl"))[0];
    assert_eq!(r["total_operations"], 0, "{r}");
    assert!(r["timeout_errors"].as_u64().unwrap() >= 2000, "{r}");
    let why = r["stopped_early"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(
        why.contains("attempts in a row failed") && why.contains("out of its reach"),
        "{why}"
    );
    assert!(err.contains("STOPPED EARLY: worker "), "{err}");
    assert_eq!(r["verified"], true, "abandoned commits may land: {r}");
}
