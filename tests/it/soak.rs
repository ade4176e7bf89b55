//! Keeping a catalog: a maintenance role running lance's cleanup of `__manifest` beside a
//! writer and a reader, what `__manifest` stores listed through the cell, every version
//! accounted for (made by a commit, removed by a cleanup, or still there), and the
//! consistency checker on throughout; on local disk and on moto.

use crate::common::*;
use crate::roles::{consistency, no_anomaly, role_op};

const CLEANUP: &str = "maintain-cleanup-versions";

/// A writer declaring tables 20 times a second and a reader listing them for 3 s, what
/// `__manifest` stores listed every second; with `cleanup`, a maintenance role cleaning up
/// twice a second, keeping the last 5 versions. The copy is kept, to be read afterwards.
fn soak(cleanup: bool) -> String {
    let maintenance = match cleanup {
        true => format!(
            "[[roles]]\nname = 'maintenance'\nclients = 1\nrate = 2\nkeep_versions = 5\n\
             [roles.mix]\n'{CLEANUP}' = 1\n"
        ),
        false => String::new(),
    };
    format!(
        "name = 'soak'\n[fixture]\nwidth = 1\ndepth = 1\ntables_per_namespace = 20\n\
         [matrix]\ninline = [true]\n\
         [workload]\nduration_secs = 3\nstorage_sample_secs = 1\n\
         [[roles]]\nname = 'writer'\nclients = 1\nrate = 20\n[roles.mix]\n'write-declare-table' = 1\n\
         [[roles]]\nname = 'reader'\nclients = 1\nrate = 20\n[roles.mix]\n'warm-read-list-tables' = 1\n\
         {maintenance}[run]\nkeep_runs = true\n"
    )
}

/// What a run's record says of its storage: its versions at the end (after the workers
/// ended), the writer's acknowledged commits, and what its cleanups removed.
struct Kept {
    end_versions: u64,
    end_bytes: u64,
    commits: u64,
    cleaned: u64,
}

fn kept(r: &serde_json::Value) -> Kept {
    assert_eq!(r["verified"], true, "{r}");
    let s = &r["storage"];
    let samples = s["samples"].as_array().unwrap_or_else(|| panic!("{r}"));
    assert!(samples.len() >= 2, "at release and after the workers: {s}");
    assert_eq!(s["sample_secs"], 1, "{s}");
    let end = samples.last().unwrap();
    assert!(
        s["usd_per_month"]["s3-standard"].as_f64().unwrap() > 0.0,
        "{s}"
    );
    let writer = role_op(r, "write-declare-table");
    assert_eq!(
        writer["errors"].as_object().map_or(0, |e| e.len()),
        0,
        "{writer}"
    );
    let cleaned = r["roles"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|f| f.get("cleaned"));
    Kept {
        end_versions: end["versions"].as_u64().unwrap(),
        end_bytes: end["bytes"].as_u64().unwrap(),
        commits: writer["total_operations"].as_u64().unwrap(),
        cleaned: cleaned.map_or(0, |c| c["versions"].as_u64().unwrap()),
    }
}

/// The versions of the kept copy's `__manifest` under `store` (lance's V2 names:
/// `u64::MAX − version`).
fn versions_on_disk(store: &std::path::Path) -> Vec<u64> {
    let runs = store.join("runs");
    let cell = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut v: Vec<u64> = std::fs::read_dir(cell.join("__manifest/_versions"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            let n: u64 = name.strip_suffix(".manifest")?.parse().ok()?;
            Some(u64::MAX - n)
        })
        .collect();
    v.sort();
    v
}

/// The soak (with or without `cleanup`) run on local disk, its copy kept: its folder, its
/// store, its results directory, the command's output and its record.
fn soak_run(
    cleanup: bool,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    std::process::Output,
    serde_json::Value,
) {
    let (dir, plan, out) = plan_dir(&soak(cleanup));
    let store = dir.path().join("store");
    let o = run(
        &plan,
        &out,
        &["--root", store.to_str().unwrap(), "--verbose"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = lines(&out.join("results.jsonl")).remove(0);
    (dir, store, out, o, r)
}

/// Without cleanup every commit's version stays and storage only grows; with it the oldest
/// versions go, each one counted by the cleanup that removed it, the newest kept in one
/// unbroken run, what readers see unharmed; every figure in the record, the summary,
/// roles.csv, the report and the log.
#[test]
fn cleanup_removes_old_versions_each_accounted_for_and_readers_see_no_anomaly() {
    let (_dir, store, _, _, r) = soak_run(false);
    let r = &r;
    let plain = kept(r);
    assert_eq!(plain.cleaned, 0);
    // The golden's own versions: what no commit of the cell made.
    let golden = plain.end_versions - plain.commits;
    let on_disk = versions_on_disk(&store);
    assert_eq!(on_disk, (1..=plain.end_versions).collect::<Vec<_>>());
    let bytes: Vec<u64> = (r["storage"]["samples"].as_array().unwrap().iter())
        .map(|s| s["bytes"].as_u64().unwrap())
        .collect();
    assert!(bytes.windows(2).all(|w| w[0] <= w[1]), "{bytes:?}");
    assert!(
        r["storage"]["growth_bytes_per_hour"].as_f64().unwrap() > 0.0,
        "{r}"
    );
    assert!(
        role_op(r, "write-declare-table")
            .get("beside_cleanup")
            .is_none(),
        "{r}"
    );
    // Kept whole, its storage is projected by a model it states, to more than it holds.
    let p = &r["storage"]["projection"];
    assert!(
        p["model"]
            .as_str()
            .unwrap()
            .starts_with("copy-on-write, every version kept"),
        "{r}"
    );
    assert!(
        p["after_30_days_bytes"].as_f64().unwrap() > plain.end_bytes as f64,
        "{p}"
    );
    assert!(
        p["usd_per_month_after_30_days"]["s3-standard"]
            .as_f64()
            .unwrap()
            > 0.0,
        "{p}"
    );
    no_anomaly(consistency(r));

    let (_dir, store, out, o, r) = soak_run(true);
    let r = &r;
    let k = kept(r);
    assert!(
        k.cleaned > 0,
        "cleanups twice a second keeping 5 removed some: {r}"
    );
    // Versions removed: the model of a catalog that keeps them does not apply.
    assert!(r["storage"].get("projection").is_none(), "{r}");
    // Every version: the golden's or a commit's, and either still there or removed by a
    // cleanup that counted it.
    assert_eq!(k.end_versions + k.cleaned, golden + k.commits, "{r}");
    let on_disk = versions_on_disk(&store);
    let latest = golden + k.commits;
    assert_eq!(
        on_disk,
        (latest - k.end_versions + 1..=latest).collect::<Vec<_>>(),
        "the newest versions are kept, in one run"
    );
    let cleanup = role_op(r, CLEANUP);
    let cleaned = &cleanup["cleaned"];
    assert!(cleaned["files"].as_u64().unwrap() > k.cleaned, "{cleaned}");
    assert!(cleaned["bytes"].as_u64().unwrap() > 0, "{cleaned}");
    assert_eq!(cleaned["failed_deletes"], 0, "{cleaned}");
    assert!(cleanup.get("beside_cleanup").is_none(), "{cleanup}");
    // A cleanup deletes one file a request (lance), where a batch DELETE would do.
    assert!(
        cleanup["requests_per_op"].as_f64().unwrap() > 2.0,
        "{cleanup}"
    );
    assert!(
        cleanup["usd_per_million_ops"]["s3-standard"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    for op in ["write-declare-table", "warm-read-list-tables"] {
        let f = role_op(r, op);
        let b = &f["beside_cleanup"];
        let ops = b["during"]["ops"].as_u64().unwrap() + b["outside"]["ops"].as_u64().unwrap();
        assert_eq!(ops, f["total_operations"].as_u64().unwrap(), "{op}: {f}");
    }
    no_anomaly(consistency(r));
    // The summary, roles.csv, the report and the log say it too.
    let column = |file: &str, name: &str, row: usize| -> String {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        let rows: Vec<Vec<String>> = (text.lines())
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect();
        let at = rows[0].iter().position(|c| c == name).unwrap();
        rows[row][at].clone()
    };
    assert_eq!(
        column("summary.csv", "stored_versions", 1),
        k.end_versions.to_string()
    );
    assert_eq!(
        column("summary.csv", "stored_bytes", 1),
        k.end_bytes.to_string()
    );
    assert_eq!(
        column("roles.csv", "cleaned_versions", 3),
        k.cleaned.to_string()
    );
    assert_eq!(column("roles.csv", "operation", 3), CLEANUP);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## What keeping it costs"), "{report}");
    assert!(
        report.contains(&format!("{} versions", k.end_versions)),
        "{report}"
    );
    let said = stderr(&o);
    assert!(
        said.contains("; __manifest held ")
            && said.contains(&format!("removed {} versions", k.cleaned)),
        "{said}"
    );
}

/// On S3 (moto) the same: the cleanup's deletes go through the store, every version is
/// accounted for, readers see no anomaly.
#[test]
fn on_s3_cleanup_accounts_for_every_version() {
    let server = S3Server::start(&[]);
    let (_d, o, records) = sweep_s3(&server, "s3://bench/soak-plain", &soak(false));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let plain = kept(&records[0]);
    let golden = plain.end_versions - plain.commits;
    // Keeping 3: a slow store's writer has made more than that in the cell's first seconds.
    let text = soak(true).replace("keep_versions = 5", "keep_versions = 3");
    let (_d, o, records) = sweep_s3(&server, "s3://bench/soak", &text);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &records[0];
    let k = kept(r);
    assert!(k.cleaned > 0, "{r}");
    assert_eq!(k.end_versions + k.cleaned, golden + k.commits, "{r}");
    let cleanup = role_op(r, CLEANUP);
    assert!(
        cleanup["requests_per_op"].as_f64().unwrap() > 2.0,
        "{cleanup}"
    );
    no_anomaly(consistency(r));
}
