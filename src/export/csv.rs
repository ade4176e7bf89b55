//! `summary.csv`: one row per cell, derived from the records and rewritten atomically.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use super::Record;

pub const SUMMARY_FILE: &str = "summary.csv";

/// The reference's columns, in its order, then bench's own.
pub const COLUMNS: [&str; 22] = [
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
];

/// The rows of the summary: the latest record of each cell, sorted as the reference sorts
/// (mode, variant, initial_entries, concurrency).
pub fn rows(records: &[Record]) -> Vec<&Record> {
    let mut latest: BTreeMap<&str, &Record> = BTreeMap::new();
    for r in records {
        latest.insert(&r.bench_tag, r);
    }
    let mut rows: Vec<&Record> = latest.into_values().collect();
    rows.sort_by(|a, b| {
        (&a.mode, &a.variant, a.initial_entries, a.concurrency).cmp(&(
            &b.mode,
            &b.variant,
            b.initial_entries,
            b.concurrency,
        ))
    });
    rows
}

fn fields(r: &Record) -> [String; 22] {
    [
        r.mode.clone(),
        r.variant.clone(),
        r.initial_entries.to_string(),
        r.manifest_shard_count.to_string(),
        r.concurrency.to_string(),
        r.duration_secs.to_string(),
        r.total_operations.to_string(),
        r.errors.to_string(),
        format!("{:.3}", r.throughput_ops_per_sec),
        format!("{:.2}", r.avg_latency_ms),
        format!("{:.2}", r.p50_latency_ms),
        format!("{:.2}", r.p90_latency_ms),
        format!("{:.2}", r.p99_latency_ms),
        format!("{:.2}", r.min_latency_ms),
        format!("{:.2}", r.max_latency_ms),
        format!("{:.2}", r.p999_latency_ms),
        r.conflict_errors.to_string(),
        r.other_errors.to_string(),
        r.attempts.to_string(),
        format!("{:.1}", r.setup_ms),
        r.verified.to_string(),
        r.bench_tag.clone(),
    ]
}

/// Rewrite the summary from all records (temp file, fsync, rename).
pub fn write(path: &Path, records: &[Record]) -> std::io::Result<()> {
    let dir = path.parent().expect("summary path has a parent");
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    {
        let mut w = ::csv::Writer::from_writer(&mut tmp);
        w.write_record(COLUMNS)?;
        for r in rows(records) {
            w.write_record(fields(r))?;
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
            manifest_rows_before: rows,
            manifest_rows_after: rows + 10,
            verified: true,
            verify_error: None,
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
            .map(|r| r.bench_tag.as_str())
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
            "continuous,no_index,1000,0,1,0,11,0,10.000,1.23,1.00,2.00,3.00,0.50,4.00,3.50,0,0,10,5.0,true,cont_inline_false_rows_1000"
        );
    }
}
