//! `summary.csv`: one row per cell, derived from the records and rewritten atomically.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use super::{ReadFigures, Record};

pub const SUMMARY_FILE: &str = "summary.csv";

/// The reference's columns, in its order, then bench's own. With repetitions, every figure
/// is the median across them, and `*_min` / `*_max` give the spread of the main ones.
/// The `read_*` columns describe the interleaved reads of mixed cells (empty for others).
pub const COLUMNS: [&str; 34] = [
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
    "p99_ms",
    "min_ms",
    "max_ms",
    "p999_ms",
    "conflicts",
    "other_errors",
    "attempts",
    "setup_ms",
    "verified",
    "bench_tag",
    "repetitions",
    "tps_min",
    "tps_max",
    "p50_ms_min",
    "p50_ms_max",
    "p99_ms_min",
    "p99_ms_max",
    "read_ops",
    "read_errors",
    "read_tps",
    "read_p50_ms",
    "read_p99_ms",
];

/// The rows of the summary: per cell, the records of its latest key (one per repetition),
/// sorted as the reference sorts (mode, variant, initial_entries, concurrency).
pub fn rows(records: &[Record]) -> Vec<Vec<&Record>> {
    let mut latest_key: BTreeMap<&str, &str> = BTreeMap::new();
    for r in records {
        latest_key.insert(&r.bench_tag, &r.cell_key);
    }
    let mut cells: BTreeMap<&str, Vec<&Record>> = BTreeMap::new();
    for r in records {
        if latest_key[r.bench_tag.as_str()] == r.cell_key {
            cells.entry(&r.bench_tag).or_default().push(r);
        }
    }
    let mut rows: Vec<Vec<&Record>> = cells.into_values().collect();
    rows.sort_by(|a, b| {
        let (a, b) = (a[0], b[0]);
        (&a.mode, &a.variant, a.initial_entries, a.concurrency).cmp(&(
            &b.mode,
            &b.variant,
            b.initial_entries,
            b.concurrency,
        ))
    });
    rows
}

/// The median (the mean of the two middle values for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The median of one figure over a cell's repetitions.
pub fn med(reps: &[&Record], f: impl Fn(&Record) -> f64) -> f64 {
    median(reps.iter().map(|r| f(r)).collect())
}

/// The median of one figure of a mixed cell's reads; `None` unless every repetition has
/// reads (other modes, or records older than mixed mode).
pub fn read_med(reps: &[&Record], f: impl Fn(&ReadFigures) -> f64) -> Option<f64> {
    let v: Option<Vec<f64>> = reps.iter().map(|r| r.reads.as_ref().map(&f)).collect();
    v.map(median)
}

/// The summary as text: its header and one row per cell, exactly as `summary.csv` holds it.
pub fn table(records: &[Record]) -> Vec<[String; 34]> {
    rows(records).iter().map(|reps| fields(reps)).collect()
}

/// A count's median: an integer when it is one.
fn count(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn fields(reps: &[&Record]) -> [String; 34] {
    let r = reps[0];
    let med = |f: fn(&Record) -> f64| median(reps.iter().map(|r| f(r)).collect());
    let lo = |f: fn(&Record) -> f64| reps.iter().map(|r| f(r)).fold(f64::INFINITY, f64::min);
    let hi = |f: fn(&Record) -> f64| reps.iter().map(|r| f(r)).fold(f64::NEG_INFINITY, f64::max);
    let tps: fn(&Record) -> f64 = |r| r.throughput_ops_per_sec;
    let p50: fn(&Record) -> f64 = |r| r.p50_latency_ms;
    let p99: fn(&Record) -> f64 = |r| r.p99_latency_ms;
    // Medians of the reads; empty unless every repetition is a mixed record.
    let read = |f: fn(&ReadFigures) -> f64, fmt: fn(f64) -> String| {
        read_med(reps, f).map(fmt).unwrap_or_default()
    };
    [
        r.mode.clone(),
        r.variant.clone(),
        r.initial_entries.to_string(),
        r.manifest_shard_count.to_string(),
        r.concurrency.to_string(),
        r.duration_secs.to_string(),
        count(med(|r| r.total_operations as f64)),
        count(med(|r| r.errors as f64)),
        format!("{:.3}", med(tps)),
        format!("{:.2}", med(|r| r.avg_latency_ms)),
        format!("{:.2}", med(p50)),
        format!("{:.2}", med(|r| r.p90_latency_ms)),
        format!("{:.2}", med(p99)),
        format!("{:.2}", med(|r| r.min_latency_ms)),
        format!("{:.2}", med(|r| r.max_latency_ms)),
        format!("{:.2}", med(|r| r.p999_latency_ms)),
        count(med(|r| r.conflict_errors as f64)),
        count(med(|r| r.other_errors as f64)),
        count(med(|r| r.attempts as f64)),
        format!("{:.1}", med(|r| r.setup_ms)),
        reps.iter().all(|r| r.verified).to_string(),
        r.bench_tag.clone(),
        reps.len().to_string(),
        format!("{:.3}", lo(tps)),
        format!("{:.3}", hi(tps)),
        format!("{:.2}", lo(p50)),
        format!("{:.2}", hi(p50)),
        format!("{:.2}", lo(p99)),
        format!("{:.2}", hi(p99)),
        read(|r| r.total_operations as f64, count),
        read(|r| r.errors as f64, count),
        read(|r| r.throughput_ops_per_sec, |x| format!("{x:.3}")),
        read(|r| r.p50_latency_ms, |x| format!("{x:.2}")),
        read(|r| r.p99_latency_ms, |x| format!("{x:.2}")),
    ]
}

/// Rewrite the summary from all records (temp file, fsync, rename).
pub fn write(path: &Path, records: &[Record]) -> std::io::Result<()> {
    let dir = path.parent().expect("summary path has a parent");
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    {
        let mut w = ::csv::Writer::from_writer(&mut tmp);
        w.write_record(COLUMNS)?;
        for row in table(records) {
            w.write_record(row)?;
        }
        w.flush()?;
    }
    tmp.flush()?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn record(mode: &str, variant: &str, rows: u64, c: u32, tag: &str) -> Record {
        Record {
            variant: variant.into(),
            operation: "write-create-namespace".into(),
            concurrency: c,
            initial_entries: rows,
            duration_secs: if mode == "continuous" { 0 } else { 2 },
            total_operations: 10,
            total_duration_ms: 1000.0,
            throughput_ops_per_sec: 10.0,
            avg_latency_ms: 1.234,
            p50_latency_ms: 1.0,
            p90_latency_ms: 2.0,
            p99_latency_ms: 3.0,
            min_latency_ms: 0.5,
            max_latency_ms: 4.0,
            errors: 0,
            manifest_shard_count: 0,
            bench_tag: tag.into(),
            mode: mode.into(),
            plan: "p".into(),
            cell_key: "k".into(),
            started_at: "t0".into(),
            finished_at: "t1".into(),
            bench_version: "0".into(),
            lance_version: "14.0.2".into(),
            hostname: "h".into(),
            storage_scheme: "file".into(),
            attempts: 10,
            setup_ms: 5.0,
            commit_retries: 20,
            p999_latency_ms: 3.5,
            conflict_errors: 0,
            other_errors: 0,
            first_conflict_error: None,
            first_other_error: None,
            warmup_operations: 0,
            warmup_committed: 0,
            repetition: 1,
            manifest_rows_before: rows,
            manifest_rows_after: rows + 10,
            verified: true,
            verify_error: None,
            reads: None,
        }
    }

    #[test]
    fn rows_sorted_as_the_reference_and_latest_wins() {
        let mut newer = record(
            "continuous",
            "no_index",
            1000,
            1,
            "cont_inline_false_rows_1000",
        );
        newer.total_operations = 11;
        newer.cell_key = "k2".into(); // re-run after a plan edit: supersedes the old record
        let records = vec![
            record(
                "continuous",
                "no_index",
                1000,
                1,
                "cont_inline_false_rows_1000",
            ),
            record(
                "concurrent",
                "inline_index",
                1000,
                10,
                "conc_inline_true_rows_1000_c_10",
            ),
            record(
                "concurrent",
                "inline_index",
                1000,
                2,
                "conc_inline_true_rows_1000_c_2",
            ),
            record(
                "continuous",
                "inline_index",
                10000,
                1,
                "cont_inline_true_rows_10000",
            ),
            record(
                "continuous",
                "inline_index",
                100,
                1,
                "cont_inline_true_rows_100",
            ),
            newer,
        ];
        let tags: Vec<_> = rows(&records)
            .iter()
            .map(|reps| reps[0].bench_tag.as_str())
            .collect();
        assert_eq!(
            tags,
            [
                "conc_inline_true_rows_1000_c_2",
                "conc_inline_true_rows_1000_c_10",
                "cont_inline_true_rows_100",
                "cont_inline_true_rows_10000",
                "cont_inline_false_rows_1000",
            ]
        );
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(SUMMARY_FILE);
        write(&p, &records).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 6);
        assert!(lines[0].starts_with(
            "mode,variant,initial_entries,manifest_shard_count,concurrency,duration_secs,ops,errors,tps,avg_ms,p50_ms,p90_ms,p99_ms"
        ));
        assert_eq!(
            lines[5],
            "continuous,no_index,1000,0,1,0,11,0,10.000,1.23,1.00,2.00,3.00,0.50,4.00,3.50,0,0,10,5.0,true,cont_inline_false_rows_1000,1,10.000,10.000,1.00,1.00,3.00,3.00,,,,,"
        );
    }

    /// Write a summary of these records and read back its first row.
    fn first_row(records: &[Record]) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(SUMMARY_FILE);
        write(&p, records).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        text.lines()
            .nth(1)
            .unwrap()
            .split(',')
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn mixed_records_fill_the_read_columns() {
        let reps: Vec<Record> = [(100, 50.0, 2.0), (300, 150.0, 4.0)]
            .into_iter()
            .map(|(ops, tps, p50)| {
                let mut r = record(
                    "mixed",
                    "inline_index",
                    100,
                    4,
                    "mixed_inline_true_rows_100_c_4",
                );
                r.reads = Some(ReadFigures {
                    operation: "warm-read-describe-table".into(),
                    reads_per_write: 10,
                    total_operations: ops,
                    attempts: ops + 1,
                    errors: 1,
                    first_error: Some("boom".into()),
                    throughput_ops_per_sec: tps,
                    avg_latency_ms: p50,
                    p50_latency_ms: p50,
                    p90_latency_ms: p50,
                    p99_latency_ms: p50 * 2.0,
                    p999_latency_ms: p50 * 2.0,
                    min_latency_ms: 0.1,
                    max_latency_ms: p50 * 3.0,
                });
                r
            })
            .collect();
        let row = first_row(&reps);
        let col = |name: &str| row[COLUMNS.iter().position(|c| *c == name).unwrap()].as_str();
        assert_eq!(col("mode"), "mixed");
        assert_eq!(
            col("ops"),
            "10",
            "the commits stay in the reference columns"
        );
        assert_eq!(col("read_ops"), "200");
        assert_eq!(col("read_errors"), "1");
        assert_eq!(col("read_tps"), "100.000");
        assert_eq!((col("read_p50_ms"), col("read_p99_ms")), ("3.00", "6.00"));
    }

    #[test]
    fn repetitions_give_medians_with_their_spread() {
        let reps: Vec<Record> = [(5.0, 4), (30.0, 9), (10.0, 6)]
            .into_iter()
            .enumerate()
            .map(|(i, (tps, ops))| {
                let mut r = record(
                    "continuous",
                    "no_index",
                    100,
                    1,
                    "cont_inline_false_rows_100",
                );
                r.throughput_ops_per_sec = tps;
                r.total_operations = ops;
                r.p50_latency_ms = tps / 10.0;
                r.repetition = i as u32 + 1;
                r
            })
            .collect();
        let row = first_row(&reps);
        let col = |name: &str| row[COLUMNS.iter().position(|c| *c == name).unwrap()].as_str();
        assert_eq!(col("repetitions"), "3");
        assert_eq!(col("tps"), "10.000");
        assert_eq!((col("tps_min"), col("tps_max")), ("5.000", "30.000"));
        assert_eq!(col("ops"), "6");
        assert_eq!(
            (col("p50_ms"), col("p50_ms_min"), col("p50_ms_max")),
            ("1.00", "0.50", "3.00")
        );
        assert_eq!(col("read_ops"), "", "no reads outside mixed cells");
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(vec![]), 0.0);
    }
}
