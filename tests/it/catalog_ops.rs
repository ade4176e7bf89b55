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
    [
        "get",
        "head",
        "put",
        "conditional_put",
        "list",
        "delete",
        "copy",
    ]
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
