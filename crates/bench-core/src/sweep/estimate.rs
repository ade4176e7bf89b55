//! What a sweep's work costs in time, by a model of a 2-core VM on local
//! disk (per-commit cost grows about linearly with the catalog: 6 ms at 1,000 rows, 1 s at
//! 1,000,000 with inline indices; see docs/results.md). It is only a prior:
//! `bench run` scales it by what the finished work actually took, so a slower store (S3)
//! or machine corrects it after the first cells.

use std::time::Duration;

use crate::plan::{Cell, Cost, GoldenSpec, Mode, Operation};

/// One operation on a catalog of `rows` rows, in seconds.
fn per_op(rows: u64, inline: bool, op: Operation) -> f64 {
    let rows = rows as f64;
    let commit = if inline {
        0.004 + 1.0e-6 * rows
    } else {
        0.0025 + 0.76e-6 * rows
    };
    match op.describe().cost {
        Cost::CatalogCommit { extra_secs } => commit + extra_secs,
        // On the shared table, whatever the catalog's size: an append 4 ms, a read of its
        // history 2.5 ms (local disk, 2 cores).
        Cost::TableCommit => 0.004,
        Cost::TableRead => 0.0025,
        Cost::CatalogRead if op.is_cold() => commit / 2.0,
        // A warm read, as 4 clients of a mixed cell on 2 cores see it (the default sweep):
        // with the inline index a lookup (7 ms at 1,000,000 rows), without it a scan of the
        // manifest (9 ms at 100,000 rows, 71 ms at 1,000,000).
        Cost::CatalogRead if inline => 0.001 + 6.0e-9 * rows,
        Cost::CatalogRead => 0.001 + 7.0e-8 * rows,
    }
}

/// One operation on a catalog of `rows` rows, in seconds, by the model.
pub fn per_op_secs(rows: u64, inline: bool, op: Operation) -> f64 {
    per_op(rows, inline, op)
}

/// Starting the workers, copying the golden, verifying the copy: per run of a cell.
fn overhead(rows: u64) -> f64 {
    0.5 + 4.0e-7 * rows as f64
}

/// One run (repetition, arm) of a cell.
pub fn cell_run(cell: &Cell) -> Duration {
    let (rows, inline) = (cell.golden.rows, cell.golden.inline);
    let op = per_op(rows, inline, cell.operation);
    let warmup = cell.warmup as f64 * op;
    let body = match cell.mode {
        Mode::Continuous { operations } => operations as f64 * op,
        // Writers serialise on the version bump: a bound of N commits takes about N commits'
        // time, or the deadline if that comes first.
        Mode::Concurrent {
            duration_secs,
            operations,
            ..
        } => {
            let bounded = operations.map(|n| n as f64 * op);
            let body = match (duration_secs, bounded) {
                (0, Some(b)) => b,
                (d, Some(b)) => b.min(d as f64),
                (d, None) => d as f64,
            };
            body + 2.0 * op
        }
        Mode::Mixed {
            duration_secs,
            read,
            reads_per_write,
            ..
        } => duration_secs as f64 + op + reads_per_write as f64 * per_op(rows, inline, read),
        // Every role until the deadline, and the longest operation of any started at it.
        Mode::Roles { duration_secs, .. } => {
            let ops = cell
                .roles
                .iter()
                .flat_map(|r| r.mix.iter().map(|&(o, _)| o));
            duration_secs as f64 + ops.map(|o| per_op(rows, inline, o)).fold(op, f64::max)
        }
    };
    Duration::from_secs_f64(overhead(rows) + warmup + body)
}

/// Bootstrapping a golden (about 2.5 million rows a second, then for inline indices one
/// commit that rewrites it; for table operations, the shared table's history at about
/// 2.5 ms a version on local disk).
pub fn golden(spec: GoldenSpec) -> Duration {
    let index = if spec.inline {
        per_op(spec.rows, true, Operation::CreateNamespace)
    } else {
        0.0
    };
    let history = spec.table_versions.map_or(0.0, |v| v as f64 * 0.0025);
    Duration::from_secs_f64(0.05 + spec.rows as f64 / 2.5e6 + index + history)
}

/// A mixed cell whose clients' reads before one commit, and the commit, take longer than
/// its duration: it would measure no commit. Returns that time in seconds and where the
/// reads' time comes from (`records`: `measured_ms`, the mean read latency of earlier runs
/// of the cell; else `model`), when it is so.
pub fn starved_mixed(cell: &Cell, measured_ms: &[f64]) -> Option<(f64, &'static str)> {
    let Mode::Mixed {
        reads_per_write,
        read,
        duration_secs,
        ..
    } = cell.mode
    else {
        return None;
    };
    let (rows, inline) = (cell.golden.rows, cell.golden.inline);
    let (per_read, from) = if measured_ms.is_empty() {
        (per_op(rows, inline, read), "model")
    } else {
        (
            crate::stats::median(measured_ms.to_vec()) / 1000.0,
            "records",
        )
    };
    let round = reads_per_write as f64 * per_read + per_op(rows, inline, cell.operation);
    (round > duration_secs as f64).then_some((round, from))
}

/// A duration for people: `about 8 min`, `about 40 s`, `about 2.5 h`.
pub fn about(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 90.0 {
        format!("about {:.0} s", s.max(1.0))
    } else if s < 5400.0 {
        format!("about {:.0} min", s / 60.0)
    } else {
        format!("about {:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(rows: u64, mode: Mode) -> Cell {
        Cell {
            golden: GoldenSpec::catalog(rows, true),
            mode,
            ..crate::plan::sample(1)
        }
    }

    #[test]
    fn costs_grow_with_the_catalog_and_the_clock() {
        let cont = |rows| cell_run(&cell(rows, Mode::Continuous { operations: 50 }));
        // 50 commits at 1,000 rows: a quarter of a second plus the start.
        assert!((cont(1000).as_secs_f64() - (0.5 + 0.0004 + 50.0 * 0.005)).abs() < 1e-9);
        assert!(cont(1_000_000) > cont(100_000) * 5);
        let conc = cell_run(&cell(
            1000,
            Mode::Concurrent {
                concurrency: 8,
                duration_secs: 30,
                operations: None,
                load: None,
            },
        ));
        assert!(conc > Duration::from_secs(30) && conc < Duration::from_secs(32));
        assert!(golden(GoldenSpec::catalog(1_000_000, false)) < Duration::from_secs(1));
        assert_eq!(about(Duration::from_secs(498)), "about 8 min");
        // A mixed cell of 100 warm reads a commit: at 1,000,000 rows without the index,
        // about 7 s of reads and a commit of most of a second fit 10 s, not 5; with the
        // index they fit; records of reads of 230 ms (a slower machine) say it does not.
        let mixed = |inline, secs| Cell {
            golden: GoldenSpec::catalog(1_000_000, inline),
            mode: Mode::Mixed {
                clients: 4,
                reads_per_write: 100,
                read: Operation::DescribeTable { cold: false },
                duration_secs: secs,
                load: None,
            },
            ..crate::plan::sample(1)
        };
        assert_eq!(starved_mixed(&mixed(false, 10), &[]), None);
        let (secs, from) = starved_mixed(&mixed(false, 5), &[]).unwrap();
        assert!((7.0..9.0).contains(&secs) && from == "model", "{secs}");
        assert_eq!(starved_mixed(&mixed(true, 10), &[]), None);
        let (secs, from) = starved_mixed(&mixed(true, 10), &[230.0]).unwrap();
        assert!(secs > 23.0 && from == "records", "{secs}");
        assert_eq!(about(Duration::from_secs(40)), "about 40 s");
        assert_eq!(about(Duration::from_secs(9000)), "about 2.5 h");
    }
}
