//! Builds and namespace properties as dimensions of one plan: every variant runs, each
//! repetition of a cell side by side with its siblings, and the variants meet in the
//! summary, the report and `bench compare DIR --against`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::common::*;

/// A build that is this bench with a planted slowdown of every operation.
fn slow_build(dir: &Path, name: &str, delay_ms: u32) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nBENCH_OP_DELAY_MS={delay_ms} exec {} \"$@\"\n",
            env!("CARGO_BIN_EXE_bench")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn variants_plan(dir: &Path, slow60: &Path) -> String {
    let slow5 = slow_build(dir, "slow5.sh", 5);
    format!(
        "name = 'variants'\n\
         [matrix]\nsizes = [100]\ninline = [true, false]\nbuilds = ['main', 'slow5', 'slow60']\n\
         [matrix.properties]\ncommit_retries = [0, 20]\n\
         [builds]\nmain = 'bench'\nslow5 = '{}'\nslow60 = '{}'\n\
         [continuous]\noperations = 8\n\
         [run]\nrepetitions = 3\ncopy_parallelism = 2\n",
        slow5.display(),
        slow60.display()
    )
}

fn compare(out: &Path, args: &[&str]) -> std::process::Output {
    bench().arg("compare").arg(out).args(args).output().unwrap()
}

#[test]
fn three_builds_by_index_by_a_property_run_once_each_and_compare_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let slow60 = slow_build(dir.path(), "slow60.sh", 60);
    let plan = dir.path().join("variants.toml");
    std::fs::write(&plan, variants_plan(dir.path(), &slow60)).unwrap();
    let out = dir.path().join("out");
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("builds: main = "), "{}", stderr(&o));

    // Every variant once per repetition, verified, named.
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 3 * 2 * 2 * 3, "12 variants, 3 repetitions");
    assert!(records.iter().all(|r| r["verified"] == true));
    let names: std::collections::BTreeSet<&str> = records
        .iter()
        .map(|r| r["variant_name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 12, "{names:?}");
    assert!(
        names.contains("slow60/no_index/commit_retries=0"),
        "{names:?}"
    );
    for r in &records {
        let name = r["variant_name"].as_str().unwrap();
        assert!(name.starts_with(r["build"].as_str().unwrap()), "{r}");
        let retries = r["commit_retries"].as_u64().unwrap();
        assert!(name.ends_with(&format!("commit_retries={retries}")), "{r}");
        assert_eq!(r["properties"]["commit_retries"], retries.to_string());
        // The run's copy of its golden: how many objects, at how many at once, how long.
        assert_eq!(r["copy"]["parallelism"], 2, "{r}");
        assert!(r["copy"]["objects"].as_u64().unwrap() >= 2, "{r}");
        assert!(r["copy"]["ms"].as_f64().unwrap() > 0.0, "{r}");
        // The build by its bytes; the run's whole time, its copy included.
        assert_eq!(r["build_digest"].as_str().unwrap().len(), 16, "{r}");
        let wall = r["wall_ms"].as_f64().unwrap();
        assert!(wall > r["copy"]["ms"].as_f64().unwrap(), "{r}");
        assert!(wall >= r["total_duration_ms"].as_f64().unwrap(), "{r}");
    }
    // The builds of one cell's repetition run side by side, in rotating order.
    let first_of = |rep: u64| -> String {
        let mut v: Vec<&serde_json::Value> = records
            .iter()
            .filter(|r| r["repetition"] == rep && r["variant"] == "inline_index")
            .collect();
        v.sort_by_key(|r| r["started_at"].as_str().unwrap().to_string());
        v[0]["variant_name"].as_str().unwrap().to_string()
    };
    assert_ne!(first_of(1), first_of(2), "rotation");

    // The summary and the report show every variant.
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(csv.lines().count(), 13);
    assert!(csv.lines().next().unwrap().contains(
        "variant_name,build,properties,timeout_errors,env,transport,servers,\
                 server_ms_per_op,server_wait_ms_per_op,transport_ms_per_op,offered_ops_per_sec,\
                 arrivals,service_p50_ms,service_p99_ms,late_operations,stale_reads"
    ));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let chart = std::fs::read_to_string(out.join("charts/continuous_throughput.svg")).unwrap();
    for n in &names {
        assert!(report.contains(&format!("### {n}\n")), "a table for {n}");
        assert!(chart.contains(n), "a line for {n} in the chart");
    }

    // bench compare within the directory: each build against main, in order.
    let o = compare(&out, &["--against", "main"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let ranking = text.split("best first:").nth(1).expect("a ranking");
    let (p5, p60) = (
        ranking.find("slow5:").unwrap(),
        ranking.find("slow60:").unwrap(),
    );
    assert!(p5 < p60, "slow5 ahead of slow60:\n{text}");
    assert!(
        text.contains("pair by pair") || text.contains("paired"),
        "{text}"
    );
    let o = compare(
        &out,
        &[
            "--variant",
            "slow60",
            "--against",
            "main",
            "--fail-on-regression",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("REGRESSION"));
    // One build against another: its cells, then the line that sums them up.
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("variants by throughput against main"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = compare(&out, &["--against", "cow"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("main, slow5, slow60"), "{}", stderr(&o));

    // A rebuilt build (the same path, other bytes) runs its own cells again, and only those.
    let digest = |name: &str| {
        records.iter().find(|r| r["build"] == name).unwrap()["build_digest"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let was = digest("slow60");
    slow_build(dir.path(), "slow60.sh", 61);
    let o = bench_on("plan", &plan, &out);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let listing = String::from_utf8_lossy(&o.stdout).to_string();
    let cells: Vec<&str> = listing.lines().filter(|l| l.contains("cont_")).collect();
    assert_eq!(cells.len(), 12, "{listing}");
    for l in cells {
        let stale = l.contains("stale (build slow60 rebuilt: ");
        assert_eq!(stale, l.contains("_slow60_"), "{l}");
        assert!(stale || l.contains("done"), "{l}");
    }
    assert!(
        listing.contains(&format!("rebuilt: {was} -> ")),
        "{listing}"
    );
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("4 cells run, 8 already done"),
        "{}",
        stderr(&o)
    );
    let after = lines(&out.join("results.jsonl"));
    let new: Vec<&serde_json::Value> = after[records.len()..].iter().collect();
    assert_eq!(new.len(), 4 * 3, "slow60's cells, three repetitions each");
    assert!(new.iter().all(|r| r["build"] == "slow60"));
    let now = new[0]["build_digest"].as_str().unwrap();
    assert!(now != was && new.iter().all(|r| r["build_digest"] == now));
}

#[test]
fn a_build_that_is_not_bench_or_a_bad_dimension_is_refused_before_any_cell() {
    let base =
        "name = 'v'\n[matrix]\nsizes = [100]\ninline = [false]\n[continuous]\noperations = 1\n";
    let with_property = base.replace(
        "[continuous]",
        "[matrix.properties]\nroot = ['a']\n[continuous]",
    );
    for (text, needle) in [
        (
            format!("{base}[builds]\nother = '/bin/true'\n"),
            "builds.other",
        ),
        (with_property, "matrix.properties.root"),
        (format!("{base}[builds]\nmain = 'bench'\n"), ""),
    ] {
        let (_dir, plan, out) = plan_dir(&text);
        let o = bench_on("plan", &plan, &out);
        if needle.is_empty() {
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            let listing = String::from_utf8_lossy(&o.stdout).to_string();
            assert!(
                listing.contains("cont_inline_false_rows_100_main"),
                "{listing}"
            );
            continue;
        }
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
        assert!(!out.exists());
    }
    // bench ab takes its builds from its command line.
    let (_dir, plan, out) = plan_dir(&format!("{base}[builds]\nmain = 'bench'\n"));
    let o = sweep_with(
        bench(),
        "ab",
        &plan,
        &out,
        &["--candidate", env!("CARGO_BIN_EXE_bench")],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bench compare"), "{}", stderr(&o));
}
