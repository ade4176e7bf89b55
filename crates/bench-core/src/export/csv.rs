//! `summary.csv`: one row per cell, derived from the records and rewritten atomically.

use std::path::Path;

use super::{CellRecords, ReadFigures, Record, cells};
use crate::consistency::Consistency;
use crate::stats::{Spread, extremes, spread};

pub const SUMMARY_FILE: &str = "summary.csv";

/// How many columns the summary has.
pub const WIDTH: usize = 123;

/// A cell whose throughput varies more than this over its repetitions (coefficient of
/// variation) is marked noisy.
pub const NOISY_CV: f64 = 0.10;

/// The reference's columns, in its order, then bench's own. With repetitions, every figure
/// is the median across them (but failures: `errors`, `conflicts`, `other_errors`,
/// `read_errors`, `throttled` and `network_errors` are summed over them), and `*_min` /
/// `*_max` give the spread of the main ones.
/// The `read_*` columns describe the interleaved reads of mixed cells (empty for others).
/// The `*_ci_*`, `*_cv`, `ci_level` and `noisy` columns give the main figures' spread over
/// repetitions (empty with one); `arm` is the arm of an A/B results set. Then the network
/// error classes, how far a timed cell's window ran past its deadline, the requests
/// and bytes per successful operation, and the workers' start-up and peak memory (empty
/// where not measured). Last the variant as a name (`variant` with the build and the
/// `[matrix.properties]` values), the build, and the namespace properties (`k=v;k=v`);
/// then attempt timeouts, the workers' variables, and the transport with a rest cell's
/// split of an operation's time; what readers saw; last how the writes whose outcome was
/// unknown resolved, the writes failed but applied, the listings that listed an entry
/// twice, the repetitions in which a worker stopped early, and the test hooks set in any of
/// its runs (`planted`: a test, not a measurement); the lag's lower bound and the readers'
/// cadence; dollars per million operations on each store of bench's own price table; and
/// the requests an operation makes beyond its floor, and the floor's share of them; what
/// `__manifest` stored; the version order's failures; and a mixed cell's reads' own cost on
/// S3 Standard and distance to their floor; a campaign point's class, the window and the
/// machine; last the repetitions whose verification left a part unchecked, and the writers
/// a cleanup left stuck.
pub const COLUMNS: [&str; WIDTH] = [
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
    "tps_ci_low",
    "tps_ci_high",
    "tps_cv",
    "p50_ms_ci_low",
    "p50_ms_ci_high",
    "p50_ms_cv",
    "p99_ms_ci_low",
    "p99_ms_ci_high",
    "p99_ms_cv",
    "ci_level",
    "noisy",
    "arm",
    "throttled",
    "network_errors",
    "window_overrun_ms",
    "io_requests_per_op",
    "io_get_per_op",
    "io_put_per_op",
    "io_conditional_put_per_op",
    "io_list_per_op",
    "io_head_per_op",
    "io_delete_per_op",
    "io_copy_per_op",
    "io_read_bytes_per_op",
    "io_written_bytes_per_op",
    "open_ms_median",
    "open_ms_max",
    "rss_peak_kib_max",
    "rss_peak_kib_sum",
    "variant_name",
    "build",
    "properties",
    "timeout_errors",
    "env",
    "transport",
    "servers",
    "server_ms_per_op",
    "server_wait_ms_per_op",
    "transport_ms_per_op",
    "offered_ops_per_sec",
    "arrivals",
    "service_p50_ms",
    "service_p99_ms",
    "late_operations",
    "stale_reads",
    "stale_rate",
    "resurrections",
    "lag_p50_ms",
    "lag_p99_ms",
    "lag_max_ms",
    "monotonic_violations",
    "read_your_writes_violations",
    "phantoms",
    "indeterminate",
    "indeterminate_landed",
    "unknown_outcomes",
    "unknown_landed",
    "failed_but_applied",
    "stuck_readers",
    "listed_twice",
    "stopped_early",
    "planted",
    "lag_low_p50_ms",
    "read_period_ms",
    "usd_per_million_ops_s3_standard",
    "usd_per_million_ops_s3_express",
    "usd_per_million_ops_gcs_standard",
    "usd_per_million_ops_azure_hot",
    "usd_per_million_ops_r2",
    "requests_over_floor",
    "floor_efficiency",
    "written_bytes_over_floor",
    "stored_versions",
    "stored_bytes",
    "stored_bytes_per_hour",
    "version_order_violations",
    "versions_unknown",
    "read_usd_per_million_ops_s3_standard",
    "read_requests_over_floor",
    "fault_class",
    "window_secs",
    "ops_min",
    "cores",
    "load_start",
    "load_end",
    "others_cpu_cores",
    "conflict_retries_per_commit",
    "verify_unchecked",
    "stuck_writers",
];

/// The summary as text: its header and one row per cell, exactly as `summary.csv` holds it.
pub fn table(records: &[Record]) -> Vec<[String; WIDTH]> {
    cells(records).iter().map(fields).collect()
}

/// A count's median: an integer when it is one.
fn count(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// One end of a figure's confidence interval (`end` 0: low, 1: high); empty without one.
fn ci(s: &Spread, end: usize, decimals: usize) -> String {
    s.ci.map(|(lo, hi)| format!("{:.decimals$}", if end == 0 { lo } else { hi }))
        .unwrap_or_default()
}

/// A coefficient of variation with 3 decimals; empty without one.
fn cv(s: &Spread) -> String {
    s.cv.map(|c| format!("{c:.3}")).unwrap_or_default()
}

/// A cell's row, column by column in the order of the header: its figures, the spread of
/// the main three over the repetitions, then what the workers accounted for.
fn fields(cell: &CellRecords<'_>) -> [String; WIDTH] {
    let mut row = figures(cell);
    row.extend(spreads(cell));
    row.extend(accounts(cell));
    row.extend(rest(cell));
    row.extend(open_loop(cell));
    row.extend(consistency(cell));
    row.extend(outcomes(cell));
    row.push(listed_twice(cell));
    row.push(summed(cell, |r| u64::from(r.stopped_early.is_some())));
    let planted: std::collections::BTreeSet<&str> = (cell.reps.iter())
        .flat_map(|r| r.planted.iter().map(String::as_str))
        .collect();
    row.push(planted.into_iter().collect::<Vec<_>>().join(";"));
    for f in [
        |c: &Consistency| c.lag_low_p50_ms,
        |c: &Consistency| c.read_period_ms,
    ] {
        row.push(median_of(cell, &|r| r.consistency.as_ref().and_then(f), 3));
    }
    // What an operation costs on each store of bench's own price table (another table's
    // stores are in the records alone).
    for store in crate::prices::BUILTIN_STORES {
        let usd =
            |r: &Record| (r.cost.as_ref()).and_then(|c| c.usd_per_million_ops.get(store).copied());
        row.push(median_of(cell, &usd, 2));
    }
    row.push(median_of(
        cell,
        &|r| r.floor.as_ref().map(|f| f.requests_over),
        1,
    ));
    row.push(median_of(
        cell,
        &|r| r.floor.as_ref().map(|f| f.efficiency),
        3,
    ));
    row.push(median_of(
        cell,
        &|r| {
            r.floor
                .as_ref()
                .and_then(|f| f.bytes)
                .map(|b| b.written_over)
        },
        0,
    ));
    // What `__manifest` held at the end of a run that listed it, and its growth an hour.
    let stored: [fn(&crate::stored::Stored) -> f64; 3] = [
        |s| s.end().versions as f64,
        |s| s.end().bytes as f64,
        |s| s.growth_bytes_per_hour,
    ];
    for f in stored {
        row.push(median_of(cell, &|r| r.storage.as_ref().map(f), 0));
    }
    row.extend(order(cell));
    // A mixed cell's reads: their own cost and distance to their floor.
    let read_usd = |r: &Record| {
        let c = r.reads.as_ref()?.cost.as_ref()?;
        c.usd_per_million_ops.get("s3-standard").copied()
    };
    row.push(median_of(cell, &read_usd, 2));
    let read_over = |r: &Record| Some(r.reads.as_ref()?.floor.as_ref()?.requests_over);
    row.push(median_of(cell, &read_over, 1));
    // A fault campaign's point: not a measurement, but a class (the worst of its runs).
    let class = (cell.reps.iter())
        .filter_map(|r| super::point::judge(r).map(|(c, _)| c))
        .max();
    row.push(class.map(|c| c.name().to_string()).unwrap_or_default());
    row.extend(window_and_machine(cell));
    // Repetitions verified on what could be checked, a part left unchecked.
    row.push(summed(cell, |r| u64::from(super::unchecked(r).is_some())));
    // Writers a cleanup left behind, summed; empty where none was stuck.
    let writers: Option<u64> = (cell.reps.iter())
        .filter_map(|r| r.stuck_readers.as_ref().map(|s| s.writers))
        .reduce(|a, b| a + b);
    row.push(writers.map(|n| n.to_string()).unwrap_or_default());
    row.try_into()
        .unwrap_or_else(|row: Vec<String>| panic!("{} values for {WIDTH} columns", row.len()))
}

/// The window a cell measured (its median, in seconds: the plan's duration plus the
/// overrun of operations in flight at the deadline), the fewest successful operations of a
/// repetition (the figures of a cell with few rest on few), and the machine: its cores,
/// its load average before and after the workers (medians) and the cores other processes
/// kept busy (the worst repetition).
fn window_and_machine(cell: &CellRecords<'_>) -> Vec<String> {
    let min_ops = (cell.reps.iter()).map(|r| r.total_operations).min();
    let host = |f: fn(&crate::sched::Host) -> Option<f64>, decimals| {
        median_of(cell, &|r| r.attached.machine.as_ref().and_then(f), decimals)
    };
    let others = (cell.reps.iter())
        .map(|r| r.attached.others_cpu_cores)
        .collect::<Option<Vec<f64>>>()
        .map(|v| format!("{:.2}", v.into_iter().fold(0.0, f64::max)))
        .unwrap_or_default();
    vec![
        format!("{:.2}", cell.med(|r| r.total_duration_ms / 1000.0)),
        min_ops.map(|n| n.to_string()).unwrap_or_default(),
        host(|h| Some(f64::from(h.cores)), 0),
        host(|h| h.load_start, 2),
        host(|h| h.load_end, 2),
        others,
        median_of(cell, &|r| r.conflict_retries_per_commit, 3),
    ]
}

/// Failures are events, not a noisy figure: summed over the repetitions, so that one
/// repetition's failure is never hidden by a median.
fn summed(cell: &CellRecords<'_>, f: fn(&Record) -> u64) -> String {
    cell.reps.iter().map(|r| f(r)).sum::<u64>().to_string()
}

const TPS: fn(&Record) -> f64 = |r| r.throughput_ops_per_sec;
const P50: fn(&Record) -> f64 = |r| r.p50_latency_ms;
const P99: fn(&Record) -> f64 = |r| r.p99_latency_ms;

/// The columns from `mode` to `read_p99_latency_ms_median`: medians over the repetitions,
/// failures summed, the extremes of the main three.
fn figures(cell: &CellRecords<'_>) -> Vec<String> {
    let r = cell.first();
    let med = |f: fn(&Record) -> f64| cell.med(f);
    let sum = |f: fn(&Record) -> u64| summed(cell, f);
    let lo = |f: fn(&Record) -> f64| extremes(&cell.values(f)).0;
    let hi = |f: fn(&Record) -> f64| extremes(&cell.values(f)).1;
    // Medians of the reads; empty unless every repetition is a mixed record.
    let read = |f: fn(&ReadFigures) -> f64, fmt: fn(f64) -> String| {
        cell.read_med(f).map(fmt).unwrap_or_default()
    };
    vec![
        r.mode.to_string(),
        r.variant.to_string(),
        r.initial_entries.to_string(),
        r.manifest_shard_count.to_string(),
        r.concurrency.to_string(),
        r.duration_secs.to_string(),
        count(med(|r| r.total_operations as f64)),
        sum(|r| r.errors),
        format!("{:.3}", med(TPS)),
        format!("{:.2}", med(|r| r.avg_latency_ms)),
        format!("{:.2}", med(P50)),
        format!("{:.2}", med(|r| r.p90_latency_ms)),
        format!("{:.2}", med(P99)),
        format!("{:.2}", med(|r| r.min_latency_ms)),
        format!("{:.2}", med(|r| r.max_latency_ms)),
        format!("{:.2}", med(|r| r.p999_latency_ms)),
        sum(|r| r.conflict_errors),
        sum(|r| r.other_errors),
        count(med(|r| r.attempts as f64)),
        format!("{:.1}", med(|r| r.setup_ms)),
        cell.reps.iter().all(|r| r.verified).to_string(),
        r.bench_tag.clone(),
        cell.reps.len().to_string(),
        format!("{:.3}", lo(TPS)),
        format!("{:.3}", hi(TPS)),
        format!("{:.2}", lo(P50)),
        format!("{:.2}", hi(P50)),
        format!("{:.2}", lo(P99)),
        format!("{:.2}", hi(P99)),
        read(|r| r.total_operations as f64, count),
        cell.reps
            .iter()
            .map(|r| r.reads.as_ref().map(|x| x.errors))
            .sum::<Option<u64>>()
            .map(|n| n.to_string())
            .unwrap_or_default(),
        read(|r| r.throughput_ops_per_sec, |x| format!("{x:.3}")),
        read(|r| r.p50_latency_ms, |x| format!("{x:.2}")),
        read(|r| r.p99_latency_ms, |x| format!("{x:.2}")),
    ]
}

/// The intervals and variations of throughput, p50 and p99 over the repetitions, the
/// intervals' level, and whether throughput is noisy.
fn spreads(cell: &CellRecords<'_>) -> Vec<String> {
    let [tps, p50, p99] = [TPS, P50, P99].map(|f| spread(&cell.values(f)));
    vec![
        ci(&tps, 0, 3),
        ci(&tps, 1, 3),
        cv(&tps),
        ci(&p50, 0, 2),
        ci(&p50, 1, 2),
        cv(&p50),
        ci(&p99, 0, 2),
        ci(&p99, 1, 2),
        cv(&p99),
        tps.ci
            .map(|_| format!("{:.3}", tps.level))
            .unwrap_or_default(),
        tps.cv
            .map(|c| (c > NOISY_CV).to_string())
            .unwrap_or_default(),
    ]
}

/// From `arm` to the end: the arm, the store's failures, the requests and bytes of a
/// commit, the workers' start and memory, and what the cell varies.
fn accounts(cell: &CellRecords<'_>) -> Vec<String> {
    let r = cell.first();
    let opt = |f: &dyn Fn(&Record) -> Option<f64>, decimals: usize| median_of(cell, f, decimals);
    vec![
        r.arm.clone().unwrap_or_default(),
        summed(cell, |r| r.throttled_errors),
        summed(cell, |r| r.network_errors),
        opt(&|r| r.window_overrun_ms, 1),
        opt(&|r| r.io_per_op.map(|io| io.requests()), 2),
        opt(&|r| r.io_per_op.map(|io| io.get), 2),
        opt(&|r| r.io_per_op.map(|io| io.put), 2),
        opt(&|r| r.io_per_op.map(|io| io.conditional_put), 2),
        opt(&|r| r.io_per_op.map(|io| io.list), 2),
        opt(&|r| r.io_per_op.map(|io| io.head), 2),
        opt(&|r| r.io_per_op.map(|io| io.delete), 2),
        opt(&|r| r.io_per_op.map(|io| io.copy), 2),
        opt(&|r| r.io_per_op.map(|io| io.read_bytes), 0),
        opt(&|r| r.io_per_op.map(|io| io.written_bytes), 0),
        opt(&|r| r.open_ms.map(|o| o.median), 1),
        opt(&|r| r.open_ms.map(|o| o.max), 1),
        opt(&|r| r.worker_rss_peak_kib.map(|m| m.max as f64), 0),
        opt(&|r| r.worker_rss_peak_kib.map(|m| m.sum as f64), 0),
        r.variant_label().to_string(),
        r.build.clone().unwrap_or_default(),
        r.properties
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";"),
        // Empty for cells without an attempt timeout.
        if cell.reps.iter().any(|r| r.timeout_errors.is_some()) {
            summed(cell, |r| r.timeout_errors.unwrap_or(0))
        } else {
            String::new()
        },
        r.env
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";"),
    ]
}

/// The median of a figure every repetition has, with `decimals`; empty otherwise.
fn median_of(
    cell: &CellRecords<'_>,
    f: &dyn Fn(&Record) -> Option<f64>,
    decimals: usize,
) -> String {
    let v: Option<Vec<f64>> = cell.reps.iter().map(|r| f(r)).collect();
    v.map(|v| format!("{:.decimals$}", crate::stats::median(v)))
        .unwrap_or_default()
}

/// How the workers reached the catalog, and for a rest cell where an operation's time went
/// (empty for a direct one).
fn rest(cell: &CellRecords<'_>) -> Vec<String> {
    let r = cell.first();
    let split =
        |f: fn(&crate::serve::RestFigures) -> f64| median_of(cell, &|r| r.rest.as_ref().map(f), 3);
    vec![
        r.transport.clone().unwrap_or_else(|| "direct".to_string()),
        r.rest
            .as_ref()
            .map(|x| x.servers.to_string())
            .unwrap_or_default(),
        split(|x| x.server_ms_per_op),
        split(|x| x.server_wait_ms_per_op),
        split(|x| x.transport_ms_per_op),
    ]
}

/// An open-loop cell's offered load and how it arrived, its service time's medians over
/// the repetitions, and its late starts summed (empty for a closed-loop cell).
fn open_loop(cell: &CellRecords<'_>) -> Vec<String> {
    let o = &cell.first().open_loop;
    let service = |f: fn(&crate::export::record::ServiceFigures) -> f64| {
        median_of(cell, &|r| r.open_loop.service.as_ref().map(f), 3)
    };
    let late: Option<u64> = (cell.reps.iter())
        .map(|r| r.open_loop.late_operations)
        .sum();
    vec![
        (o.offered_ops_per_sec.map(|x| x.to_string())).unwrap_or_default(),
        o.arrivals.clone().unwrap_or_default(),
        service(|s| s.p50_ms),
        service(|s| s.p99_ms),
        late.map(|n| n.to_string()).unwrap_or_default(),
    ]
}

/// What a cell's readers saw against its commits (`consistency`): anomalies and
/// indeterminate commits summed over the repetitions, the stale rate and the lag's medians;
/// empty where the cell has no such findings.
fn consistency(cell: &CellRecords<'_>) -> Vec<String> {
    if cell.first().consistency.is_none() {
        return vec![String::new(); 11];
    }
    let sum = |f: fn(&Consistency) -> u64| -> String {
        let v: Option<u64> = (cell.reps.iter())
            .map(|r| r.consistency.as_ref().map(f))
            .sum();
        v.map(|n| n.to_string()).unwrap_or_default()
    };
    let median = |f: fn(&Consistency) -> Option<f64>, decimals| {
        median_of(cell, &|r| r.consistency.as_ref().and_then(f), decimals)
    };
    let landed: Option<u64> = (cell.reps.iter())
        .map(|r| r.consistency.as_ref().and_then(|c| c.indeterminate_landed))
        .sum();
    vec![
        sum(|c| c.stale_reads),
        median(|c| Some(c.stale_rate), 4),
        sum(|c| c.resurrections),
        median(|c| c.lag_p50_ms, 3),
        median(|c| c.lag_p99_ms, 3),
        median(|c| c.lag_max_ms, 3),
        sum(|c| c.monotonic_violations),
        sum(|c| c.read_your_writes_violations),
        sum(|c| c.phantoms),
        sum(|c| c.indeterminate),
        landed.map(|n| n.to_string()).unwrap_or_default(),
    ]
}

/// How a cell's writes whose outcome was unknown resolved, its writes failed but
/// applied (`outcomes`) and its readers a cleanup left behind (`stuck_readers`), summed over
/// the repetitions; empty for a cell of reads (and where no reader was stuck).
fn outcomes(cell: &CellRecords<'_>) -> Vec<String> {
    use crate::audit::Outcomes;
    let sum = |f: fn(&Outcomes) -> u64| -> String {
        let v: Option<u64> = (cell.reps.iter()).map(|r| r.outcomes.as_ref().map(f)).sum();
        v.map(|n| n.to_string()).unwrap_or_default()
    };
    let stuck: Option<u64> = (cell.reps.iter())
        .filter_map(|r| r.stuck_readers.as_ref().map(|s| s.readers))
        .reduce(|a, b| a + b);
    vec![
        sum(|o| o.unknown),
        sum(|o| o.unknown_landed),
        sum(|o| o.failed_but_applied),
        stuck.map(|n| n.to_string()).unwrap_or_default(),
    ]
}

/// Listings that listed an entry twice (`consistency.duplicates`), summed over the
/// repetitions; empty where the cell has no findings of its readers.
fn listed_twice(cell: &CellRecords<'_>) -> String {
    let v: Option<u64> = (cell.reps.iter())
        .map(|r| r.consistency.as_ref().map(|c| c.duplicates))
        .sum();
    v.map(|n| n.to_string()).unwrap_or_default()
}

/// The checks on the `__manifest` version order (`consistency.order`): their failures and
/// the operations of the history whose version is not known, summed over the repetitions;
/// empty where no run of the cell has them.
fn order(cell: &CellRecords<'_>) -> [String; 2] {
    let orders: Vec<_> = (cell.reps.iter())
        .filter_map(|r| r.consistency.as_ref()?.order.as_ref())
        .collect();
    if orders.is_empty() {
        return [String::new(), String::new()];
    }
    let violations: u64 = orders.iter().map(|o| o.violations()).sum();
    let unknown: u64 = (orders.iter())
        .map(|o| (o.commits - o.commits_known) + (o.reads - o.reads_known))
        .sum();
    [violations.to_string(), unknown.to_string()]
}

/// Rewrite the summary from all records (atomically).
pub fn write(path: &Path, records: &[Record]) -> std::io::Result<()> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(COLUMNS)?;
    for row in table(records) {
        w.write_record(row)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    crate::files::write_atomic(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::{ModeKind::*, Operation, Variant::*};

    #[test]
    fn one_row_per_cell_in_the_reference_columns_and_formats() {
        let mut newer = record(Continuous, NoIndex, 1000, 1, "cont_inline_false_rows_1000");
        newer.total_operations = 11;
        newer.cell_key = "k2".into(); // re-run after a plan edit: supersedes the old record
        let records = vec![
            record(Continuous, NoIndex, 1000, 1, "cont_inline_false_rows_1000"),
            record(
                Concurrent,
                InlineIndex,
                1000,
                10,
                "conc_inline_true_rows_1000_c_10",
            ),
            record(
                Concurrent,
                InlineIndex,
                1000,
                2,
                "conc_inline_true_rows_1000_c_2",
            ),
            record(
                Continuous,
                InlineIndex,
                10000,
                1,
                "cont_inline_true_rows_10000",
            ),
            record(Continuous, InlineIndex, 100, 1, "cont_inline_true_rows_100"),
            newer,
        ];
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
            "continuous,no_index,1000,0,1,0,11,0,10.000,1.23,1.00,2.00,3.00,0.50,4.00,3.50,0,0,10,5.0,true,cont_inline_false_rows_1000,1,10.000,10.000,1.00,1.00,3.00,3.00,,,,,,,,,,,,,,,,,,0,0,,,,,,,,,,,,,,,,no_index,,,,,direct,,,,,,,,,,,,,,,,,,,,,,,,,,0,,,,,,,,,,,,,,,,,,,,1.00,11,,,,,,0,"
        );
        // The machine's columns, from a record that has them.
        let mut r = record(Concurrent, NoIndex, 1000, 4, "conc_m");
        r.attached.machine = Some(crate::sched::Host {
            cores: 2,
            memory_kib: 1,
            cpu_model: "x".into(),
            load_start: Some(0.25),
            load_end: Some(3.5),
        });
        r.attached.others_cpu_cores = Some(0.75);
        r.conflict_retries_per_commit = Some(0.5855);
        let row = &table(&[r])[0];
        let at = |c: &str| row[COLUMNS.iter().position(|k| *k == c).unwrap()].as_str();
        let got = [
            "cores",
            "load_start",
            "load_end",
            "others_cpu_cores",
            "conflict_retries_per_commit",
        ]
        .map(at);
        assert_eq!(got, ["2", "0.25", "3.50", "0.75", "0.586"]);
    }

    /// A record priced with bench's table: each store's dollars per million operations in
    /// its column, the median over the repetitions.
    #[test]
    fn each_store_s_dollars_have_a_column() {
        let mut r = record(Continuous, InlineIndex, 1000, 1, "cont_a");
        let io = crate::stats::IoCounts {
            put: 30,
            conditional_put: 10,
            get: 70,
            ..Default::default()
        };
        r.cost = crate::prices::Priced::builtin().cost(&io, 10);
        let row = first_row(&[r]);
        let at = |name: &str| COLUMNS.iter().position(|c| *c == name).unwrap();
        assert_eq!(row[at("usd_per_million_ops_s3_standard")], "17.80");
        assert_eq!(row[at("usd_per_million_ops_r2")], "16.02");
        assert_eq!(row[at("usd_per_million_ops_s3_express")], "3.60");
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
    fn failures_are_summed_over_repetitions_never_hidden_by_a_median() {
        // Repetition 3 of 3 had one conflict past the retries (the median would say 0),
        // repetition 2 two throttled operations.
        let mut reps = crate::export::record::tests::with_a_conflict_in_the_last();
        reps[1].errors = 2;
        reps[1].throttled_errors = 2;
        let rows = table(&reps);
        let col = |name: &str| {
            let i = COLUMNS.iter().position(|c| *c == name).unwrap();
            rows[0][i].clone()
        };
        assert_eq!(col("errors"), "3");
        assert_eq!(col("conflicts"), "1");
        assert_eq!(col("throttled"), "2");
        assert_eq!(col("other_errors"), "0");
        assert_eq!(col("ops"), "10", "counts of work stay medians");
    }

    #[test]
    fn mixed_records_fill_the_read_columns() {
        let reps: Vec<Record> = [(1, 100, 50.0, 2.0), (2, 300, 150.0, 4.0)]
            .into_iter()
            .map(|(repetition, ops, tps, p50)| {
                let mut r = record(Mixed, InlineIndex, 100, 4, "mixed_inline_true_rows_100_c_4");
                r.repetition = repetition;
                r.reads = Some(ReadFigures {
                    operation: Operation::DescribeTable { cold: false },
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
                    latency_histogram: None,
                    min_latency_ms: 0.1,
                    max_latency_ms: p50 * 3.0,
                    io_per_op: None,
                    io_total: None,
                    io_median_per_op: None,
                    // One HEAD a read billed; two HEAD a read set against a read's floor.
                    cost: crate::prices::Priced::builtin().cost(
                        &crate::stats::IoCounts {
                            head: 1,
                            ..Default::default()
                        },
                        1,
                    ),
                    floor: Some(crate::floor::of_mean(
                        Operation::DescribeTable { cold: false },
                        &crate::stats::IoPerOp {
                            head: 2.0,
                            ..Default::default()
                        },
                        None,
                    )),
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
        assert_eq!(col("read_errors"), "2", "one a repetition, summed");
        assert_eq!(col("read_tps"), "100.000");
        assert_eq!((col("read_p50_ms"), col("read_p99_ms")), ("3.00", "6.00"));
        // The reads' own cost and distance to their floor, apart from the commits'.
        assert_eq!(col("read_usd_per_million_ops_s3_standard"), "0.40");
        assert_eq!(col("read_requests_over_floor"), "1.0");
    }

    #[test]
    fn repetitions_give_medians_with_their_spread() {
        let reps: Vec<Record> = [(5.0, 4), (30.0, 9), (10.0, 6)]
            .into_iter()
            .enumerate()
            .map(|(i, (tps, ops))| {
                let mut r = record(Continuous, NoIndex, 100, 1, "cont_inline_false_rows_100");
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
        // Three values: the median's interval is their extremes, covering 75 %.
        assert_eq!((col("tps_ci_low"), col("tps_ci_high")), ("5.000", "30.000"));
        assert_eq!(col("ci_level"), "0.750");
        assert_eq!(col("noisy"), "true", "throughput from 5 to 30 is noisy");
        let cv = col("tps_cv").parse::<f64>().unwrap();
        assert!((cv - 175f64.sqrt() / 15.0).abs() < 1e-3, "{cv}");
        assert_eq!(col("arm"), "");
    }
}
