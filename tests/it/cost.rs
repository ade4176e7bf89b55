//! What a catalog costs: every record priced on each store of bench's table (or one's own,
//! `--prices`), the figures the counts times the table by hand, in the summary and the
//! report too.

use crate::common::*;

const PLAN: &str = "name = 'cost'\n[matrix]\nsizes = [100]\ninline = [false]\n\
                    [continuous]\noperations = 5\n";

/// By hand: the billed requests per operation times the store's price for their class.
fn by_hand(billed: &serde_json::Value, write: f64, read: f64) -> f64 {
    let n = |k: &str| billed[k].as_f64().unwrap();
    ((n("put") + n("copy") + n("list")) * write + (n("get") + n("head")) * read) * 1000.0
}

#[test]
fn every_record_says_what_its_operations_cost_on_each_store() {
    let (_d, plan, out) = plan_dir(PLAN);
    let o = run(&plan, &out, &["--verbose"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &lines(&out.join("results.jsonl"))[0];
    let cost = &r["cost"];
    let usd = &cost["usd_per_million_ops"];
    let billed = &cost["billed_per_op"];
    // No operation failed: what is billed is what the successful ones made.
    assert_eq!(r["errors"], 0, "{r}");
    assert_eq!(billed["put"], r["io_per_op"]["put"], "{r}");
    let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b.max(1.0);
    for (store, write, read) in [
        ("s3-standard", 0.005, 0.0004),
        ("gcs-standard", 0.005, 0.0004),
        ("azure-hot", 0.005, 0.0004),
        ("r2", 0.0045, 0.00036),
    ] {
        let got = usd[store].as_f64().unwrap();
        assert!(close(got, by_hand(billed, write, read)), "{store}: {cost}");
    }
    assert!(usd["s3-standard"].as_f64().unwrap() > usd["s3-express"].as_f64().unwrap());
    // The summary's columns and the report's section.
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let (head, row) = summary.split_once('\n').unwrap();
    let at = head
        .split(',')
        .position(|c| c == "usd_per_million_ops_s3_standard")
        .unwrap();
    let cell: f64 = row.trim_end().split(',').nth(at).unwrap().parse().unwrap();
    assert!(
        (cell - usd["s3-standard"].as_f64().unwrap()).abs() < 0.006,
        "{summary}"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## What it costs"), "{report}");
    assert!(
        report.contains("bench's us-east 2026 list prices"),
        "{report}"
    );
    // Local disk's counts are said to be local disk's, unless counted as S3 counts them.
    let local = "**Counted on local disk, not on a store** (1 of these cells)";
    assert!(report.contains(local), "{report}");
    let (_e, plan, as_s3) = plan_dir(PLAN);
    let s3 = run(&plan, &as_s3, &["--set", "run.local_requests=\"s3\""]);
    assert_eq!(s3.status.code(), Some(0), "{}", stderr(&s3));
    let report = std::fs::read_to_string(as_s3.join("report.md")).unwrap();
    assert!(
        report.contains("## What it costs") && !report.contains("Counted on local disk"),
        "{report}"
    );
    // The distance to the floor: a namespace's creation needs 2 PUTs in 2 round trips;
    // what the typical one made beyond them, by kind, adds up.
    let floor = &r["floor"];
    assert_eq!(floor["floor_requests"], 2, "{r}");
    assert_eq!(floor["floor_round_trips"], 2, "{r}");
    assert_eq!(floor["of"], "median op", "{r}");
    let typical = r["io_median_per_op"]["requests"].as_f64().unwrap();
    let over = floor["requests_over"].as_f64().unwrap();
    assert!((typical - 2.0 - over).abs() < 1e-9, "{r}");
    let by_kind: f64 = (floor["over_by_kind"].as_object().unwrap().values())
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((by_kind - over).abs() < 1e-9, "{r}");
    let efficiency = floor["efficiency"].as_f64().unwrap();
    assert!((efficiency - 2.0 / typical).abs() < 1e-9, "{r}");
    // Its bytes: the floor writes the catalog's state once (its mean over the cell, read
    // from the golden and the copy), and the mean commit wrote more than that.
    let b = &floor["bytes"];
    let (before, after) = (
        b["state_before"].as_f64().unwrap(),
        b["state_after"].as_f64().unwrap(),
    );
    assert!(before > 0.0 && after > before, "5 more entries: {b}");
    assert_eq!(
        b["floor_written"].as_f64().unwrap(),
        (before + after) / 2.0,
        "{b}"
    );
    let written = r["io_per_op"]["written_bytes"].as_f64().unwrap();
    let over = b["written_over"].as_f64().unwrap();
    assert!(
        (written - (before + after) / 2.0 - over).abs() < 1e-6,
        "{b}"
    );
    assert!(
        over > 0.0,
        "a manifest and a transaction file beside the state: {b}"
    );
    // The report shows both figures under words that say what each holds: all the bytes
    // the mean commit wrote, and the share beyond one copy of the state.
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("| bytes written | of which beyond the state |"),
        "{report}"
    );
    let row = (report.lines())
        .find(|l| l.starts_with("| cont_inline_false_rows_100 |") && l.contains('.'))
        .expect("the cell's cost row");
    assert!(
        row.ends_with(&format!("| {written:.0} | {over:.0} |")),
        "{row} vs {written:.0} and {over:.0}"
    );
    // The log says both, cell by cell.
    let said = stderr(&o);
    assert!(
        said.contains("; a million cost azure-hot $")
            && said.contains("requests over the floor of 2")
            && said.contains("read over the floor (a state of "),
        "{said}"
    );
}

#[test]
fn one_s_own_price_table_is_used_and_a_bad_one_is_refused_before_any_cell() {
    let (dir, plan, out) = plan_dir(PLAN);
    let table = dir.path().join("mine.toml");
    std::fs::write(
        &table,
        "date = 'ours'\n[[store]]\nname = 'mine'\ntitle = 'ours'\nsource = 'invoice'\n\
         write_per_1000 = 1.0\nread_per_1000 = 0.5\ndelete_per_1000 = 0\n\
         storage_gb_month = 0.02\n",
    )
    .unwrap();
    let o = run(&plan, &out, &["--prices", table.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &lines(&out.join("results.jsonl"))[0];
    let cost = &r["cost"];
    assert_eq!(cost["prices"], table.to_str().unwrap(), "{cost}");
    let mine = cost["usd_per_million_ops"]["mine"].as_f64().unwrap();
    let want = by_hand(&cost["billed_per_op"], 1.0, 0.5);
    assert!((mine - want).abs() < 1e-6 * want, "{cost}");
    assert!(cost["usd_per_million_ops"].get("s3-standard").is_none());
    // Without --verbose a run's line is read at a glance: its cost is in the record only.
    let said = stderr(&o);
    assert!(
        said.contains(" ops/s, p50 ")
            && said.contains("; verified")
            && !said.contains("a million cost"),
        "{said}"
    );
    // A table with a negative price: exit 2 naming it, nothing run or written.
    std::fs::write(
        &table,
        std::fs::read_to_string(&table)
            .unwrap()
            .replace("= 1.0", "= -1.0"),
    )
    .unwrap();
    let fresh = dir.path().join("out2");
    let o = run(&plan, &fresh, &["--prices", table.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("mine.toml") && stderr(&o).contains("negative"),
        "{}",
        stderr(&o)
    );
    assert!(!fresh.join("results.jsonl").exists());
}

/// Every per-operation figure is over the successful operations of its kind, on every kind
/// of cell and through both transports, and none is below its floor (nothing is clamped,
/// so one would show): directly, a mixed cell's commits and reads each have their requests,
/// cost and floor; through REST, a cell of one operation has its servers' requests as its
/// own, priced and set against the same floor, and a mixed cell none, saying why.
#[test]
fn every_cell_kind_and_transport_is_at_or_above_its_floor() {
    let (_d, plan, out) = plan_dir(
        "name = 'floors'\n[matrix]\nsizes = [100]\ninline = [false]\n\
         transport = ['direct', 'rest']\n[continuous]\noperations = 5\n\
         [concurrent]\nconcurrency = [2]\nduration_secs = 1\n\
         [mixed]\nclients = [2]\nreads_per_write = 2\nduration_secs = 1\n",
    );
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 6);
    let above = |f: &serde_json::Value, what: &str| {
        let over = f["requests_over"].as_f64().unwrap();
        let efficiency = f["efficiency"].as_f64().unwrap();
        assert!(
            over >= -1e-9 && efficiency <= 1.0 + 1e-9,
            "{what} below its floor: {f}"
        );
    };
    for r in &records {
        let (tag, rest) = (r["bench_tag"].as_str().unwrap(), r["transport"] == "rest");
        let mixed = r["mode"] == "mixed";
        match (rest, mixed) {
            (true, true) => {
                for k in ["io_per_op", "cost", "floor"] {
                    assert!(r.get(k).is_none_or(|v| v.is_null()), "{tag} {k}: {r}");
                }
                let reads = &r["reads"];
                assert!(
                    reads.get("cost").is_none() && reads["io_per_op"].is_null(),
                    "{r}"
                );
                let why = r["counts_unknown"].as_str().unwrap();
                assert!(
                    why.starts_with("through REST, a server cannot tell"),
                    "{why}"
                );
            }
            (false, true) => {
                above(&r["floor"], tag);
                let reads = &r["reads"];
                above(&reads["floor"], &format!("{tag}'s reads"));
                assert_eq!(
                    reads["floor"]["floor_requests"], 1,
                    "a warm read's HEAD: {r}"
                );
                let n = reads["total_operations"].as_f64().unwrap();
                let billed = reads["cost"]["billed_per_op"]["head"].as_f64().unwrap();
                assert!(n > 0.0 && billed >= reads["io_per_op"]["head"].as_f64().unwrap());
            }
            (_, false) => {
                // One kind of operation: through REST too. One writer's attempts never fail,
                // so the continuous cell is held to its floor on both transports every time;
                // two writers' may conflict, and through REST a failed attempt's requests
                // cannot be told apart, which the record says.
                match r["counts_unknown"].as_str() {
                    None => {
                        above(&r["floor"], tag);
                        assert!(
                            r["cost"]["usd_per_million_ops"]["s3-standard"]
                                .as_f64()
                                .unwrap()
                                > 0.0
                        );
                    }
                    Some(why) => {
                        assert!(rest && r["mode"] != "continuous", "{tag}: {why}");
                        assert!(why.contains("failed and a server cannot tell"), "{why}");
                        assert!(r["attempts"].as_u64() > r["total_operations"].as_u64());
                    }
                }
                assert_eq!(r["floor"]["floor_requests"], 2, "{tag}: {r}");
            }
        }
    }
    // The continuous cell directly and through a server: the same floor; where their
    // requests are the same, the same distance and the same cost.
    let cont = |t: &str| {
        (records.iter())
            .find(|r| r["mode"] == "continuous" && r["transport"] == t)
            .unwrap()
    };
    let (direct, rest) = (cont("direct"), cont("rest"));
    assert_eq!(
        direct["floor"]["floor_requests"],
        rest["floor"]["floor_requests"]
    );
    // One writer's commits make the same requests directly and through a server (lance's
    // own, in another process): the same distance from the floor and the same cost.
    for k in ["get", "put", "list", "head", "delete", "copy"] {
        assert_eq!(
            direct["io_per_op"][k], rest["io_per_op"][k],
            "{k} per commit: direct {}, rest {}",
            direct["io_per_op"], rest["io_per_op"]
        );
    }
    // Priced by their requests alone (S3 Express also bills bytes, which move by a few with
    // the names in the catalog).
    let usd = |r: &serde_json::Value| {
        let mut m = r["cost"]["usd_per_million_ops"].clone();
        m.as_object_mut().unwrap().remove("s3-express");
        m
    };
    assert_eq!(usd(direct), usd(rest));
    assert_eq!(
        direct["floor"]["requests_over"],
        rest["floor"]["requests_over"]
    );
}
