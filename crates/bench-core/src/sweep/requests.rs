//! What a sweep will ask of an S3 store, by request kind, and what S3 Standard charges for
//! it: the estimate `bench plan` prints for an S3 root.
//!
//! A run of a cell costs its operations' requests plus a per-run overhead (copying the
//! golden, opening the workers' catalogs, verifying, removing the copy); a golden to build,
//! and the preflight with the root's claim once a sweep, add theirs. The operations' share
//! comes from the records of the same cell shape (operation, size, index, mode, writers,
//! duration or bound) where the directory has any: their `io_total`, median by kind. Else
//! from a model of one writer's commits measured on the S3 test endpoint
//! (`scripts/s3-server.py`, lance 14.0.2), with a contention factor for several writers.
//! Cells bounded by time make as many attempts as the store's pace allows: an attempt waits
//! on its requests one after another, so it takes at least its requests times the store's
//! latency (`bench plan` times a few requests to the store), and each writer makes its
//! attempts beside the others'; without that figure, at local disk's pace (a ceiling). docs/s3.md says how close the estimate came.

use std::collections::BTreeMap;

use crate::export::Record;
use crate::plan::{Cell, Cost, GoldenSpec, Mode, ModeKind, Operation};
use crate::stats::IoPerOp;

/// Requests by kind, as the workers count them (a conditional PUT is a PUT, and counted
/// among `conditional_put` too); fractions: an expectation.
pub type Kinds = IoPerOp;

const fn kinds(get: f64, put: f64, conditional_put: f64, list: f64, head: f64) -> Kinds {
    IoPerOp {
        get,
        put,
        conditional_put,
        list,
        head,
        delete: 0.0,
        copy: 0.0,
        read_bytes: 0.0,
        written_bytes: 0.0,
    }
}

fn add(k: &mut Kinds, o: Kinds, times: f64) {
    k.get += o.get * times;
    k.put += o.put * times;
    k.conditional_put += o.conditional_put * times;
    k.list += o.list * times;
    k.head += o.head * times;
    k.delete += o.delete * times;
    k.copy += o.copy * times;
}

/// What S3 Standard charges for their requests, in US dollars, at its prices in bench's own
/// table (a conditional PUT is one PUT).
pub fn cost(k: &Kinds) -> f64 {
    s3_standard().bill(k).requests
}

/// S3 Standard, as bench's own price table has it: what the estimate is priced at.
pub fn s3_standard() -> crate::prices::Store {
    (crate::prices::PriceTable::builtin().stores.into_iter())
        .find(|s| s.name == "s3-standard")
        .expect("bench's own table has S3 Standard")
}

/// `1,234 GET, 56 HEAD, 567 PUT (89 of them conditional), …`.
pub fn describe(k: &Kinds) -> String {
    let n = |x: f64| group(x.round() as u64);
    format!(
        "{} GET, {} HEAD, {} PUT ({} of them conditional), {} LIST, {} COPY, {} DELETE",
        n(k.get),
        n(k.head),
        n(k.put),
        n(k.conditional_put),
        n(k.list),
        n(k.copy),
        n(k.delete)
    )
}

/// A count with its thousands apart (1,234).
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The preflight and the root's claim, once a sweep.
const FIXED: Kinds = IoPerOp {
    get: 2.0,
    put: 4.0,
    conditional_put: 3.0,
    list: 2.0,
    head: 1.0,
    delete: 4.0,
    copy: 1.0,
    read_bytes: 0.0,
    written_bytes: 0.0,
};

/// Objects in a golden: data file, manifest and version; with the inline index, its files.
fn golden_objects(inline: bool) -> f64 {
    if inline { 9.0 } else { 3.0 }
}

/// Bootstrapping a golden (measured up to 100,000 rows; larger goldens write their data in
/// more parts).
pub fn golden(spec: GoldenSpec) -> Kinds {
    let parts = (spec.rows as f64 / 200_000.0).ceil().max(1.0);
    if spec.inline {
        kinds(10.0, 9.0 + parts, 2.0, 7.0, 4.0)
    } else {
        kinds(1.0, 3.0 + parts, 1.0, 4.0, 0.0)
    }
}

/// One run's overhead: the copy (listings, one copy per object, the check), the workers'
/// catalogs opened, the verification, and the copy's removal.
fn overhead(cell: &Cell) -> Kinds {
    let inline = cell.golden.inline;
    let workers = f64::from(cell.mode.workers());
    Kinds {
        delete: 1.0,
        copy: golden_objects(inline),
        ..kinds(
            2.0 + workers * if inline { 3.0 } else { 2.0 },
            0.0,
            0.0,
            7.0,
            workers * if inline { 9.0 } else { 3.0 },
        )
    }
}

/// One writer's commit on a catalog of `rows` rows, by kind (write-create-namespace on
/// the test endpoint: reads of the manifest grow with its size).
fn commit(rows: u64, inline: bool) -> Kinds {
    let decades = (rows.max(1) as f64).log10();
    // 4 GETs up to 1,000 rows, 10 at 10,000, 12 at 100,000; +2 a decade beyond.
    let grow = |base: f64, at4: f64, at5: f64| {
        if decades <= 3.0 {
            base
        } else if decades <= 4.0 {
            base + (at4 - base) * (decades - 3.0)
        } else if decades <= 5.0 {
            at4 + (at5 - at4) * (decades - 4.0)
        } else {
            at5 + 2.0 * (decades - 5.0)
        }
    };
    if inline {
        kinds(grow(4.0, 10.0, 12.0), 6.0, 1.0, 1.1, 4.0)
    } else {
        kinds(grow(3.0, 7.0, 8.0), 2.0, 1.0, 1.1, 4.0)
    }
}

/// Several writers contend for each version: retried commits repeat their requests
/// (measured at 4 writers: about 2.4 times one writer's, and more LISTs).
fn contention(writers: u32) -> f64 {
    1.0 + 0.45 * f64::from(writers.saturating_sub(1)).min(8.0)
}

/// The files a losing try of a catalog commit wrote and its retry deletes (its data file;
/// with the inline index, the index's files too), measured on the S3 test endpoint.
fn losing_files(inline: bool) -> f64 {
    if inline { 4.0 } else { 1.0 }
}

/// How long one operation takes on the store, in seconds: the local-disk model's time, or
/// where longer, its requests one after another at `request_ms` each.
fn per_op(cell: &Cell, op: Operation, request_ms: Option<f64>) -> f64 {
    let (rows, inline) = (cell.golden.rows, cell.golden.inline);
    let local = crate::sweep::estimate::per_op_secs(rows, inline, op);
    let requests = requests_of(op, rows, inline);
    let trips = requests.get + requests.head + requests.put + requests.list;
    request_ms.map_or(local, |ms| local.max(trips * ms / 1000.0))
}

/// What one run of a cell makes, at the store's pace: its commits (attempts, where its time
/// bounds it: retried commits take their time too), a mixed cell's reads, and whether its
/// time bounded it.
fn operations(cell: &Cell, request_ms: Option<f64>) -> (f64, f64, bool) {
    let per = |op| per_op(cell, op, request_ms);
    let warm = (cell.warmup * u64::from(cell.mode.workers())) as f64;
    match cell.mode {
        Mode::Continuous { operations } => (operations as f64 + warm, 0.0, false),
        Mode::Concurrent {
            duration_secs,
            operations,
            concurrency,
            ..
        } => {
            // At local disk's pace the writers take turns on the version bump; on a store
            // whose latency bounds a commit, each writer's attempts go on beside the others'.
            let writers = match request_ms {
                Some(_) => f64::from(concurrency),
                None => 1.0,
            };
            // An open-loop cell starts no more than it is offered.
            let by_time = (writers * duration_secs as f64 / per(cell.operation)).min(
                cell.mode
                    .load()
                    .map_or(f64::MAX, |l| l.rate() * duration_secs as f64),
            );
            let (n, timed) = match (duration_secs, operations) {
                (0, Some(b)) => (b as f64 + f64::from(concurrency), false),
                (_, Some(b)) => {
                    let by_count = b as f64 + f64::from(concurrency);
                    (by_count.min(by_time), by_time < by_count)
                }
                (_, None) => (by_time, true),
            };
            (n + warm, 0.0, timed)
        }
        Mode::Mixed {
            duration_secs,
            read,
            reads_per_write,
            clients,
            ..
        } => {
            let round = per(cell.operation) + reads_per_write as f64 * per(read);
            let commits = (f64::from(clients) * duration_secs as f64 / round).min(
                cell.mode
                    .load()
                    .map_or(f64::MAX, |l| l.rate() * duration_secs as f64),
            );
            (commits + warm, commits * reads_per_write as f64, true)
        }
        // Each role's clients for the duration, its mix's operations by their weights (at
        // most its offered rate): its commits and its reads.
        Mode::Roles { duration_secs, .. } => {
            let (mut commits, mut reads) = (0.0, 0.0);
            for role in &cell.roles {
                let total: f64 = role.mix.iter().map(|&(_, w)| f64::from(w)).sum();
                let mean: f64 = (role.mix.iter())
                    .map(|&(op, w)| per(op) * f64::from(w) / total)
                    .sum();
                let n = (f64::from(role.clients) * duration_secs as f64 / mean)
                    .min(role.rate.map_or(f64::MAX, |r| r * duration_secs as f64));
                for &(op, w) in &role.mix {
                    let share = n * f64::from(w) / total;
                    *(if op.is_write() {
                        &mut commits
                    } else {
                        &mut reads
                    }) += share;
                }
            }
            (commits, reads, true)
        }
    }
}

/// What one operation of `op` asks of the store, by its shape: a commit (of the catalog,
/// or of the shared table, counted as one) or a read.
fn requests_of(op: Operation, rows: u64, inline: bool) -> Kinds {
    match op.describe().cost {
        Cost::CatalogCommit { .. } | Cost::TableCommit => commit(rows, inline),
        Cost::CatalogRead | Cost::TableRead => read(op, rows, inline),
    }
}

/// One read of `op` (warm reads: a GET or two; cold ones open the catalog anew).
fn read(op: Operation, rows: u64, inline: bool) -> Kinds {
    if op.is_cold() {
        let c = commit(rows, inline);
        kinds(c.get, 0.0, 0.0, 1.0, c.head)
    } else {
        kinds(0.2, 0.0, 0.0, 0.0, 0.1)
    }
}

/// Operation, size, index, mode, workers, duration and bound.
type Shape = (&'static str, u64, bool, ModeKind, u32, u64, Option<u64>);

/// The shape of a cell, as records have it: what makes another run of it cost the same.
fn shape_of(r: &Record) -> Shape {
    (
        r.operation.as_str(),
        r.initial_entries,
        r.variant == crate::plan::Variant::InlineIndex,
        r.mode,
        r.concurrency,
        r.duration_secs,
        r.operations_bound,
    )
}

fn shape(c: &Cell) -> Shape {
    (
        c.operation.as_str(),
        c.golden.rows,
        c.golden.inline,
        c.mode.kind(),
        c.mode.workers(),
        c.mode.duration_secs(),
        c.mode.bound(),
    )
}

/// The estimate of a sweep's requests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimate {
    pub requests: Kinds,
    /// Runs whose operations' requests came from records of the same cell shape.
    pub calibrated: usize,
    /// Runs whose operations' requests came from the model.
    pub modeled: usize,
}

/// The requests of `runs` (each a cell and how many runs of it are left) and of building
/// `goldens`, once a sweep's preflight with them; calibrated by `records`; the model's
/// cells bounded by time at `request_ms` a request (see [`per_op`]).
pub fn estimate(
    runs: &[(&Cell, u32)],
    goldens: &[GoldenSpec],
    records: &[Record],
    request_ms: Option<f64>,
) -> Estimate {
    let mut measured: BTreeMap<_, Vec<&crate::stats::IoCounts>> = BTreeMap::new();
    for r in records {
        if let Some(io) = &r.io_total {
            measured.entry(shape_of(r)).or_default().push(io);
        }
    }
    let mut e = Estimate::default();
    if runs.is_empty() && goldens.is_empty() {
        return e;
    }
    add(&mut e.requests, FIXED, 1.0);
    for g in goldens {
        add(&mut e.requests, golden(*g), 1.0);
    }
    for &(cell, n) in runs {
        if n == 0 {
            continue;
        }
        let n_f = f64::from(n);
        add(&mut e.requests, overhead(cell), n_f);
        if let Some(ios) = measured.get(&shape(cell)) {
            let med = |f: fn(&crate::stats::IoCounts) -> u64| {
                crate::stats::median(ios.iter().map(|io| f(io) as f64).collect())
            };
            let ops = Kinds {
                delete: med(|i| i.delete),
                copy: med(|i| i.copy),
                ..kinds(
                    med(|i| i.get),
                    med(|i| i.put),
                    med(|i| i.conditional_put),
                    med(|i| i.list),
                    med(|i| i.head),
                )
            };
            add(&mut e.requests, ops, n_f);
            e.calibrated += n as usize;
            continue;
        }
        let (rows, inline) = (cell.golden.rows, cell.golden.inline);
        let (commits, reads, timed) = operations(cell, request_ms);
        let per_commit = requests_of(cell.operation, rows, inline);
        // Several writers retry: a cell bounded by its commits makes more attempts than
        // commits; one bounded by time at the store's pace counted its attempts already.
        let factor = match cell.mode {
            Mode::Continuous { .. } => 1.0,
            _ if timed && request_ms.is_some() => 1.0,
            _ => contention(cell.mode.workers()),
        };
        add(&mut e.requests, per_commit, commits * factor * n_f);
        // A retried commit deletes the files its losing try wrote.
        if cell.mode.workers() > 1
            && matches!(cell.operation.describe().cost, Cost::CatalogCommit { .. })
        {
            let retries = match factor {
                1.0 => commits * (1.0 - 1.0 / contention(cell.mode.workers())),
                f => commits * (f - 1.0),
            };
            e.requests.delete += retries * losing_files(inline) * n_f;
        }
        if let Some((op, _)) = cell.mode.mixed_reads() {
            add(&mut e.requests, read(op, rows, inline), reads * n_f);
        }
        e.modeled += n as usize;
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_continuous_run_costs_its_commits_and_its_overhead() {
        let cell = crate::plan::sample(10);
        let e = estimate(&[(&cell, 1)], &[], &[], None);
        // One writer, 10 commits at 100 rows without the index, plus one run's overhead
        // and the sweep's preflight: what the test endpoint counted.
        assert_eq!(e.modeled, 1);
        assert!(
            (e.requests.put - (4.0 + 20.0)).abs() < 1e-9,
            "{:?}",
            e.requests
        );
        assert!((e.requests.conditional_put - 13.0).abs() < 1e-9);
        assert!((e.requests.copy - 4.0).abs() < 1e-9);
        assert!(cost(&e.requests) > 0.0);
        assert_eq!(group(1_234_567), "1,234,567");
        assert!(
            describe(&e.requests).starts_with("36 GET"),
            "{}",
            describe(&e.requests)
        );
    }

    #[test]
    fn records_of_the_same_shape_replace_the_model() {
        let cell = crate::plan::sample(10);
        let mut r = crate::export::record::tests::record(
            ModeKind::Continuous,
            crate::plan::Variant::NoIndex,
            100,
            1,
            &cell.id(),
        );
        r.io_total = Some(crate::stats::IoCounts {
            put: 1000,
            ..Default::default()
        });
        let e = estimate(&[(&cell, 2)], &[], &[r], None);
        assert_eq!((e.calibrated, e.modeled), (2, 0));
        assert!(
            (e.requests.put - (4.0 + 2000.0)).abs() < 1e-9,
            "{:?}",
            e.requests
        );
        assert_eq!(estimate(&[], &[], &[], None), Estimate::default());
    }

    /// A cell bounded by time makes as many commits as the store's pace allows: on a store
    /// with 20 ms requests, a commit of about 10 requests takes 0.2 s or more, not local
    /// disk's few ms, and the estimate falls by as much.
    #[test]
    fn time_bounded_cells_make_the_commits_the_store_s_pace_allows() {
        let cell = Cell {
            mode: crate::plan::Mode::Concurrent {
                concurrency: 2,
                duration_secs: 10,
                operations: None,
                load: None,
            },
            ..crate::plan::sample(1)
        };
        let local = estimate(&[(&cell, 1)], &[], &[], None).requests;
        let slow = estimate(&[(&cell, 1)], &[], &[], Some(20.0)).requests;
        let c = commit(100, false);
        let trips = c.get + c.head + c.put + c.list;
        // Attempts in 10 s of each of 2 writers, at 20 ms a request: 2 × 10 / (trips ×
        // 0.02); retries are among them.
        let commits = 2.0 * 10.0 / (trips * 0.02);
        let want = commits * c.conditional_put;
        let over = overhead(&cell).conditional_put + FIXED.conditional_put;
        assert!(
            (slow.conditional_put - over - want).abs() < 1e-6,
            "{} vs {}",
            slow.conditional_put - over,
            want
        );
        assert!(local.get > 10.0 * slow.get, "{local:?} vs {slow:?}");
        // An open-loop cell makes no more than it is offered: 1 a second for 10 s.
        let offered = Cell {
            mode: crate::plan::Mode::Concurrent {
                concurrency: 2,
                duration_secs: 10,
                operations: None,
                load: Some(crate::plan::Load {
                    milli_per_sec: 1000,
                    arrivals: crate::plan::Arrivals::Uniform,
                }),
            },
            ..crate::plan::sample(1)
        };
        let open = estimate(&[(&offered, 1)], &[], &[], None).requests;
        let over = overhead(&offered).conditional_put + FIXED.conditional_put;
        // (its two writers' retries as for any cell at local disk's pace)
        let want = 10.0 * contention(2) * c.conditional_put;
        assert!(
            (open.conditional_put - over - want).abs() < 1e-6,
            "{open:?}"
        );
        // A continuous cell makes its commits whatever the pace.
        let cont = crate::plan::sample(10);
        assert_eq!(
            estimate(&[(&cont, 1)], &[], &[], None),
            estimate(&[(&cont, 1)], &[], &[], Some(20.0))
        );
    }
}
