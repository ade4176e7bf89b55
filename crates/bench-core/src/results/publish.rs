//! `bench publish`'s rows: the cells of a results directory as rows of lance-bench's
//! `results` table (lancedb/lance-bench, `packages/lance_bench_db/models.py`), one row per
//! done cell (per arm in an A/B results directory), so that lance-bench's own scripts read
//! them beside its other benchmarks.
//!
//! lance-bench's scripts judge every row lower-is-better, as a time in nanoseconds: a
//! cell's row's `values` are the time per operation of each of its verified runs, in
//! nanoseconds ([`UNITS`]): `1e9 / throughput_ops_per_sec` (the run's window per successful
//! operation), or for an open-loop cell (whose throughput is the rate it was offered) its
//! p99 latency from the intended start. Beside it, a row of each exact count the runs made
//! ([`COUNT_UNITS`]: requests, critical-path round trips, bytes read and written per
//! operation), also lower-is-better, which `bench history` judges by a static threshold. They group rows by `benchmark_name` alone, so the
//! name holds the store and the transport beside the plan and the cell. A row's `id` is
//! derived from its runs' records, so the same results published twice give the same ids
//! and add nothing. The table itself is written by the binary (through lance).

use std::collections::BTreeSet;

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::export::{CellRecords, Record, cells};

/// The table's name: lance-bench's `results` (a Lance dataset `results.lance` under the URI,
/// as LanceDB stores a table).
pub const TABLE: &str = "results";
/// What `values` of bench's rows are in: lance-bench's unit of time, which its scripts
/// judge lower-is-better.
pub const UNITS: &str = "nanoseconds";
/// The first part of every `benchmark_name` bench writes.
pub const PREFIX: &str = "manifest";

/// The device under test: the lance the workers were built with.
#[derive(Debug, Clone, PartialEq)]
pub struct Dut {
    pub name: String,
    pub version: String,
    /// Seconds since the epoch.
    pub timestamp: i64,
}

/// The machine that measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TestBed {
    pub name: String,
    pub cpu: String,
    pub memory_gb: i32,
    pub os: String,
    /// Seconds since the epoch.
    pub created_at: i64,
}

/// lance-bench's `summary` of a row's values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub min: f64,
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub max: f64,
    pub mean: f64,
    pub standard_deviation: f64,
}

/// One row of the `results` table (its `throughput` column is always null: bench's values
/// are rates already).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub id: String,
    pub dut: Dut,
    pub test_bed: TestBed,
    pub benchmark_name: String,
    pub values: Vec<f64>,
    pub summary: Summary,
    pub units: String,
    pub metadata: String,
    /// When the cell's last run ended, seconds since the epoch.
    pub timestamp: i64,
    /// The ids this row would have had with fewer of its runs (each first `k` of them): a
    /// row published before the cell was extended, which this one replaces. Not a column.
    pub supersedes: Vec<String>,
}

/// The machine `bench publish` runs on.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    pub hostname: String,
    pub cpu: String,
    pub memory_gb: i32,
    pub os: String,
}

/// What the command line says beyond the records, and where and when it runs.
#[derive(Debug, Clone)]
pub struct Context {
    /// `dut.name` (`--dut-name`, lance-bench's default `lance`).
    pub dut_name: String,
    /// `dut.version` (`--dut-version`); else the records' `lance_version`.
    pub dut_version: Option<String>,
    /// `dut.timestamp` (`--dut-timestamp`: the build's commit time); else when the cell's
    /// first run started.
    pub dut_timestamp: Option<i64>,
    /// `test_bed.name` (`--test-bed`); else the records' hostname.
    pub test_bed: Option<String>,
    pub machine: Machine,
    /// Now, seconds since the epoch (`test_bed.created_at`).
    pub now: i64,
}

/// The rows of a results set, and what was left out of them.
#[derive(Debug, Clone, Default)]
pub struct Rows {
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
}

/// One row per cell (per arm) of `records` (the latest records of each cell, as the summary
/// takes them), from its verified runs; a cell without one is left out and said.
pub fn rows(records: &[Record], ctx: &Context) -> Rows {
    let mut out = Rows::default();
    let mut elsewhere = BTreeSet::new();
    for cell in cells(records) {
        let first = cell.first();
        let name = benchmark_name(first);
        let runs: Vec<&Record> = cell
            .reps
            .iter()
            .copied()
            .filter(|r| r.verified && r.total_operations > 0 && r.throughput_ops_per_sec > 0.0)
            .collect();
        let left = cell.reps.len() - runs.len();
        if runs.is_empty() {
            out.notes.push(format!(
                "{name}: left out, none of its {} runs is verified with operations",
                cell.reps.len()
            ));
            continue;
        }
        if left > 0 {
            out.notes.push(format!(
                "{name}: {left} of its {} runs left out (not verified, or no operation)",
                cell.reps.len()
            ));
        }
        if first.hostname != ctx.machine.hostname {
            elsewhere.insert(first.hostname.clone());
        }
        let time = Metric {
            values: runs.iter().map(|r| value(r)).collect(),
            units: UNITS,
            what: match first.open_loop.offered_ops_per_sec {
                Some(_) => {
                    "nanoseconds: p99_latency_ms (from the intended start) × 1e6 of each \
                            verified run, in order"
                }
                None => {
                    "nanoseconds per operation: 1e9 / throughput_ops_per_sec of each \
                         verified run (repetition), in order"
                }
            },
        };
        out.rows.push(row(&cell, &runs, name.clone(), ctx, time));
        let counts = counts(&runs).into_iter().map(|(s, m)| (s.to_string(), m));
        for (suffix, metric) in counts.chain(roles(&runs)) {
            out.rows
                .push(row(&cell, &runs, format!("{name}/{suffix}"), ctx, metric));
        }
    }
    for host in elsewhere {
        out.notes.push(format!(
            "note: results measured on `{host}`, published from `{}`: test_bed's cpu, \
             memory_gb and os are left unknown (publish on the machine that ran them to \
             record it)",
            ctx.machine.hostname
        ));
    }
    out
}

/// `manifest/<plan>/<store>/<transport>/<cell id>`, with `/A` or `/B` for an arm of
/// `bench ab`: the store is the records' `storage_scheme` (`file`, `s3`), the transport
/// `direct`, `rest` or `external`. The same plan on another store or transport is another
/// series (lance-bench's scripts group by this name alone).
pub fn benchmark_name(r: &Record) -> String {
    let arm = r
        .arm
        .as_deref()
        .map(|a| format!("/{a}"))
        .unwrap_or_default();
    let transport = r.transport.as_deref().unwrap_or("direct");
    format!(
        "{PREFIX}/{}/{}/{transport}/{}{arm}",
        r.plan, r.storage_scheme, r.bench_tag
    )
}

/// A run's value: its time per operation in nanoseconds (see the module).
pub fn value(r: &Record) -> f64 {
    match r.open_loop.offered_ops_per_sec {
        Some(_) => r.p99_latency_ms * 1e6,
        None => 1e9 / r.throughput_ops_per_sec,
    }
}

/// `dut.version`: the lance the records were measured with, as lance-bench's scheduler
/// matches commits (`<version>+<short sha>`): the records' `lance_version`, with the first 7
/// digits of their `lance_revision` where known and not already in it.
pub fn dut_version(r: &Record) -> String {
    match r.lance_revision.as_deref() {
        Some(rev) if !r.lance_version.contains('+') && rev.len() >= 7 => {
            format!("{}+{}", r.lance_version, &rev[..7])
        }
        _ => r.lance_version.clone(),
    }
}

/// A cell of roles: each (role, operation) of its mix as a row of its own beside the cell's,
/// named `<the cell's name>/<role>/<operation>`: its p50 latency in nanoseconds in each run
/// (lower is better), where every run had a successful one.
fn roles(runs: &[&Record]) -> Vec<(String, Metric)> {
    let Some(first) = runs.first().and_then(|r| r.roles.as_ref()) else {
        return Vec::new();
    };
    (first.iter().enumerate())
        .filter_map(|(i, f)| {
            let values: Option<Vec<f64>> = (runs.iter())
                .map(|r| {
                    let g = r.roles.as_ref()?.get(i)?;
                    (g.total_operations > 0).then_some(g.p50_latency_ms * 1e6)
                })
                .collect();
            let metric = Metric {
                values: values?,
                units: UNITS,
                what: "nanoseconds: the (role, operation)'s p50_latency_ms × 1e6 in each \
                       verified run, in order",
            };
            Some((format!("{}/{}", f.role, f.operation), metric))
        })
        .collect()
}

/// What a row holds: each run's value, in what units, said in its metadata.
struct Metric {
    values: Vec<f64>,
    units: &'static str,
    what: &'static str,
}

/// The counts of a cell's runs as rows of their own, beside its time (lower is better, as
/// lance-bench takes every row): requests, critical-path round trips (timed: requests that
/// overlap in time), bytes read and written, per successful operation of each run, where
/// every run counted them. Named
/// `<the time row's name>/requests`, `…/round_trips`, `…/read_bytes`, `…/written_bytes`.
fn counts(runs: &[&Record]) -> Vec<(&'static str, Metric)> {
    let per_run = |f: &dyn Fn(&Record) -> Option<f64>| -> Option<Vec<f64>> {
        runs.iter().map(|r| f(r)).collect()
    };
    type Of<'a> = &'a dyn Fn(&Record) -> Option<f64>;
    let all: [(&str, &str, &str, Of<'_>); 4] = [
        (
            "requests",
            COUNT_UNITS[0],
            "requests per successful operation (every kind; a conditional PUT as one PUT) of \
             each verified run, in order",
            &|r| r.io_per_op.map(|p| p.requests()),
        ),
        (
            "round_trips",
            COUNT_UNITS[1],
            "round trips on the critical path per successful operation of each verified run, \
             in order",
            &|r| r.round_trips_per_op,
        ),
        (
            "read_bytes",
            COUNT_UNITS[2],
            "bytes read per successful operation of each verified run, in order",
            &|r| r.io_per_op.map(|p| p.read_bytes),
        ),
        (
            "written_bytes",
            COUNT_UNITS[2],
            "bytes written per successful operation of each verified run, in order",
            &|r| r.io_per_op.map(|p| p.written_bytes),
        ),
    ];
    all.into_iter()
        .filter_map(|(suffix, units, what, f)| {
            let values = per_run(f)?;
            Some((
                suffix,
                Metric {
                    values,
                    units,
                    what,
                },
            ))
        })
        .collect()
}

/// The units of bench's rows of counts (`bench history` judges the series of the exact
/// ones, requests and bytes, by a static threshold, and round trips' by change points: see
/// `history::counted`).
pub const COUNT_UNITS: [&str; 3] = [
    "requests/operation",
    "round trips/operation",
    "bytes/operation",
];

fn row(cell: &CellRecords<'_>, runs: &[&Record], name: String, ctx: &Context, m: Metric) -> Row {
    let first = cell.first();
    let values = m.values;
    let here = first.hostname == ctx.machine.hostname;
    let known = |v: &str| {
        if here {
            v.to_string()
        } else {
            "unknown".into()
        }
    };
    Row {
        id: id(&name, runs),
        supersedes: (1..runs.len()).map(|k| id(&name, &runs[..k])).collect(),
        dut: Dut {
            name: ctx.dut_name.clone(),
            version: ctx
                .dut_version
                .clone()
                .unwrap_or_else(|| dut_version(first)),
            timestamp: ctx.dut_timestamp.unwrap_or_else(|| {
                runs.iter()
                    .map(|r| seconds(&r.started_at))
                    .min()
                    .unwrap_or(0)
            }),
        },
        test_bed: TestBed {
            name: ctx
                .test_bed
                .clone()
                .unwrap_or_else(|| first.hostname.clone()),
            cpu: known(&ctx.machine.cpu),
            memory_gb: if here { ctx.machine.memory_gb } else { 0 },
            os: known(&ctx.machine.os),
            created_at: ctx.now,
        },
        summary: summary(&values),
        metadata: metadata(first, runs, m.what).to_string(),
        timestamp: runs
            .iter()
            .map(|r| seconds(&r.finished_at))
            .max()
            .unwrap_or(0),
        benchmark_name: name,
        values,
        units: m.units.to_string(),
    }
}

/// A row's id: a UUID (version 8, RFC 9562's own-format UUID) of the benchmark's name and
/// its runs' records (cell key, repetition, host and times), so the same runs always give
/// the same id.
pub fn id(name: &str, runs: &[&Record]) -> String {
    let mut h = Sha256::new();
    h.update(b"bench publish v1\n");
    h.update(name.as_bytes());
    for r in runs {
        let line = format!(
            "\n{} {} {} {} {}",
            r.cell_key, r.repetition, r.hostname, r.started_at, r.finished_at
        );
        h.update(line.as_bytes());
    }
    let mut b: [u8; 16] = h.finalize()[..16].try_into().expect("16 bytes");
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// An RFC 3339 time as seconds since the epoch (0 if it is not one).
fn seconds(t: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(t)
        .map(|d| d.timestamp())
        .unwrap_or(0)
}

/// min, quartiles (linear interpolation between order statistics), max, mean and the
/// sample standard deviation (n − 1; 0 for one value).
pub fn summary(values: &[f64]) -> Summary {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    let q = |p: f64| {
        let h = (n - 1.0) * p;
        let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (h - lo as f64)
    };
    let (mean, var) = crate::stats::mean_var(&v);
    Summary {
        min: v[0],
        q1: q(0.25),
        median: q(0.5),
        q3: q(0.75),
        max: v[v.len() - 1],
        mean,
        standard_deviation: var.sqrt(),
    }
}

/// What a reader of the row needs of the cell and its runs, as JSON.
fn metadata(first: &Record, runs: &[&Record], what: &str) -> serde_json::Value {
    let run: Vec<serde_json::Value> = runs
        .iter()
        .map(|r| {
            json!({
                "repetition": r.repetition,
                "started_at": r.started_at,
                "finished_at": r.finished_at,
                "total_operations": r.total_operations,
                "errors": r.errors,
                "conflict_errors": r.conflict_errors,
                "throughput_ops_per_sec": r.throughput_ops_per_sec,
                "avg_latency_ms": r.avg_latency_ms,
                "p50_latency_ms": r.p50_latency_ms,
                "p99_latency_ms": r.p99_latency_ms,
                "reads_ops_per_sec": r.reads.as_ref().map(|x| x.throughput_ops_per_sec),
                "verified": r.verified,
                "planted": r.planted,
            })
        })
        .collect();
    json!({
        "source": "bench",
        "values": what,
        "lance_revision": first.lance_revision,
        "offered_ops_per_sec": first.open_loop.offered_ops_per_sec,
        "bench_version": first.bench_version,
        "lance_version": first.lance_version,
        "plan": first.plan,
        "cell_id": first.bench_tag,
        "cell_key": first.cell_key,
        "arm": first.arm,
        "build": first.build,
        "build_digest": first.build_digest,
        "variant": first.variant,
        "variant_name": first.variant_label(),
        "mode": first.mode,
        "operation": first.operation,
        "concurrency": first.concurrency,
        "initial_entries": first.initial_entries,
        "duration_secs": first.duration_secs,
        "storage_scheme": first.storage_scheme,
        "transport": first.transport,
        "properties": first.properties,
        "env": first.env,
        "hosts": first.hosts,
        "runs": run,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::{ModeKind, Operation, Variant};

    fn ctx(host: &str) -> Context {
        Context {
            dut_name: "lance".into(),
            dut_version: None,
            dut_timestamp: None,
            test_bed: None,
            machine: Machine {
                hostname: host.into(),
                cpu: "Test CPU".into(),
                memory_gb: 24,
                os: "Linux 6.1".into(),
            },
            now: 1_800_000_000,
        }
    }

    fn runs(tps: &[f64]) -> Vec<Record> {
        tps.iter()
            .enumerate()
            .map(|(i, &t)| {
                let mut r = record(
                    ModeKind::Continuous,
                    Variant::InlineIndex,
                    1000,
                    1,
                    "cont_a",
                );
                r.repetition = i as u32 + 1;
                r.throughput_ops_per_sec = t;
                r.started_at = format!("2026-12-01T10:0{i}:00Z");
                r.finished_at = format!("2026-12-01T10:0{i}:30Z");
                r
            })
            .collect()
    }

    #[test]
    fn a_cell_of_roles_has_a_row_per_role_and_operation_by_its_p50() {
        let mut recs = runs(&[100.0, 110.0]);
        for (r, tps) in recs.iter_mut().zip([400.0, 500.0]) {
            r.mode = ModeKind::Roles;
            r.roles = Some(vec![
                crate::export::record::tests::role(
                    "readers",
                    Operation::ListTables { cold: false },
                    tps,
                ),
                crate::export::record::tests::role("writers", Operation::CreateTable, 50.0),
            ]);
        }
        recs[1].roles.as_mut().unwrap()[1].total_operations = 0;
        let host = recs[0].hostname.clone();
        let out = rows(&recs, &ctx(&host));
        let names: Vec<&str> = out.rows.iter().map(|r| r.benchmark_name.as_str()).collect();
        let cell = format!("manifest/{}/file/direct/cont_a", recs[0].plan);
        assert_eq!(
            names,
            [
                cell.clone(),
                format!("{cell}/readers/warm-read-list-tables")
            ]
        );
        // p50 in nanoseconds, run by run; the writers' row is left out, a run had none.
        assert_eq!(out.rows[1].values, vec![2.5e6, 2e6]);
    }

    #[test]
    fn a_cell_is_one_row_of_its_verified_runs_times_per_operation() {
        let mut recs = runs(&[1000.0, 500.0, 250.0, 120.0]);
        recs[3].verified = false;
        let host = recs[0].hostname.clone();
        let out = rows(&recs, &ctx(&host));
        assert_eq!(out.rows.len(), 1);
        let row = &out.rows[0];
        assert_eq!(
            row.benchmark_name,
            format!("manifest/{}/file/direct/cont_a", recs[0].plan)
        );
        // Nanoseconds per operation, lance-bench's unit (lower is better).
        assert_eq!(row.values, vec![1e6, 2e6, 4e6]);
        assert_eq!(row.units, "nanoseconds");
        assert!(!crate::results::history::higher_is_better(&row.units));
        assert_eq!(row.summary.median, 2e6);
        assert_eq!(row.summary.min, 1e6);
        assert!((row.summary.mean - 7e6 / 3.0).abs() < 1e-6);
        assert_eq!(row.dut.version, recs[0].lance_version);
        // The first run's start, the last kept run's end.
        assert_eq!(row.dut.timestamp, seconds("2026-12-01T10:00:00Z"));
        assert_eq!(row.timestamp, seconds("2026-12-01T10:02:30Z"));
        assert_eq!(row.test_bed.cpu, "Test CPU");
        assert_eq!(row.test_bed.memory_gb, 24);
        assert!(
            out.notes[0].contains("1 of its 4 runs left out"),
            "{:?}",
            out.notes
        );
        let meta: serde_json::Value = serde_json::from_str(&row.metadata).unwrap();
        assert_eq!(meta["cell_id"], "cont_a");
        assert_eq!(meta["runs"].as_array().unwrap().len(), 3);
    }

    /// Beside the time row, a row of each exact count the runs measured, named after it, in
    /// units `bench history` judges by a static threshold (lower is better).
    #[test]
    fn the_counts_are_rows_of_their_own_beside_the_time() {
        let mut recs = runs(&[1000.0, 500.0]);
        for (i, r) in recs.iter_mut().enumerate() {
            r.io_per_op = Some(crate::stats::IoPerOp {
                get: 10.0,
                put: 4.0,
                conditional_put: 1.0,
                head: 4.0 + i as f64,
                read_bytes: 1000.0,
                written_bytes: 2000.0,
                ..Default::default()
            });
            r.round_trips_per_op = Some(7.0);
        }
        let host = recs[0].hostname.clone();
        let out = rows(&recs, &ctx(&host));
        let got: Vec<(&str, &str, Vec<f64>)> = (out.rows.iter())
            .map(|r| {
                (
                    r.benchmark_name.rsplit('/').next().unwrap(),
                    r.units.as_str(),
                    r.values.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("cont_a", "nanoseconds", vec![1e6, 2e6]),
                ("requests", "requests/operation", vec![18.0, 19.0]),
                ("round_trips", "round trips/operation", vec![7.0, 7.0]),
                ("read_bytes", "bytes/operation", vec![1000.0, 1000.0]),
                ("written_bytes", "bytes/operation", vec![2000.0, 2000.0]),
            ]
        );
        let ids: BTreeSet<&str> = out.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids.len(), 5, "each row its own id");
        for r in &out.rows[1..] {
            assert!(r.benchmark_name.starts_with(&out.rows[0].benchmark_name));
            // Requests and bytes are exact counts; round trips are timed.
            assert!(crate::results::history::counted(&r.units).is_some());
            let exact = r.units != COUNT_UNITS[1];
            assert_eq!(crate::results::history::exact(&r.units), exact);
            assert!(!crate::results::history::higher_is_better(&r.units));
        }
    }

    /// lance-bench's scheduler finds a commit's results by `dut.version LIKE '%<short
    /// sha>%'`: the lance revision's first 7 digits follow the version where known.
    #[test]
    fn the_dut_version_carries_the_lance_revision_where_known() {
        let mut r = runs(&[100.0]).remove(0);
        r.lance_version = "14.0.2".into();
        assert_eq!(dut_version(&r), "14.0.2");
        r.lance_revision = Some("40f15ed1b71b66950961b175829fdf17a763f108".into());
        assert_eq!(dut_version(&r), "14.0.2+40f15ed");
        // A git build's version already names its commit.
        r.lance_version = "14.1.0+git.1a2b3c4d".into();
        assert_eq!(dut_version(&r), "14.1.0+git.1a2b3c4d");
        let row = &rows(&[r.clone()], &ctx("h")).rows[0];
        assert_eq!(row.dut.version, "14.1.0+git.1a2b3c4d");
        let mut given = ctx("h");
        given.dut_version = Some("15.0.0+abcdef0".into());
        assert_eq!(rows(&[r], &given).rows[0].dut.version, "15.0.0+abcdef0");
    }

    /// The same plan on another store or transport is another series.
    #[test]
    fn the_store_and_the_transport_are_in_the_name() {
        let mut r = runs(&[100.0]).remove(0);
        let local = benchmark_name(&r);
        r.storage_scheme = "s3".into();
        let s3 = benchmark_name(&r);
        r.transport = Some("rest".into());
        let rest = benchmark_name(&r);
        assert_eq!(local, format!("manifest/{}/file/direct/cont_a", r.plan));
        assert_eq!(s3, format!("manifest/{}/s3/direct/cont_a", r.plan));
        assert_eq!(rest, format!("manifest/{}/s3/rest/cont_a", r.plan));
    }

    #[test]
    fn ids_follow_the_runs_not_the_publisher() {
        let recs = runs(&[100.0, 110.0]);
        let a = rows(&recs, &ctx("elsewhere"));
        let mut other = ctx("elsewhere");
        other.dut_version = Some("14.1.0".into());
        other.now += 3600;
        let b = rows(&recs, &other);
        assert_eq!(a.rows[0].id, b.rows[0].id);
        let id = &a.rows[0].id;
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "8", "a version-8 UUID: {id}");
        // Another run of the same cell is another row.
        let mut later = recs.clone();
        later[1].finished_at = "2026-12-01T11:00:00Z".into();
        assert_ne!(rows(&later, &ctx("elsewhere")).rows[0].id, *id);
        // Measured elsewhere: the machine's facts are not claimed for it.
        assert_eq!(a.rows[0].test_bed.cpu, "unknown");
        assert_eq!(a.rows[0].test_bed.memory_gb, 0);
        assert_eq!(a.rows[0].test_bed.name, recs[0].hostname);
        assert!(a.notes.iter().any(|n| n.contains("left unknown")));
    }

    /// A cell extended after it was published (one run, then three) gives a row that names
    /// the earlier row's id among those it replaces, for each of its rows.
    #[test]
    fn an_extended_cell_s_rows_replace_those_of_its_first_runs() {
        let three = runs(&[100.0, 110.0, 105.0]);
        let one = rows(&three[..1], &ctx("elsewhere"));
        let all = rows(&three, &ctx("elsewhere"));
        assert_eq!(one.rows.len(), all.rows.len());
        for (before, after) in one.rows.iter().zip(&all.rows) {
            assert_eq!(before.benchmark_name, after.benchmark_name);
            assert_ne!(before.id, after.id);
            assert!(before.supersedes.is_empty());
            assert_eq!(after.supersedes.len(), 2, "the first run, the first two");
            assert_eq!(after.supersedes[0], before.id);
        }
    }

    #[test]
    fn arms_are_series_of_their_own_and_unverified_cells_are_left_out() {
        let mut recs = runs(&[100.0]);
        let mut b = recs[0].clone();
        recs[0].arm = Some("A".into());
        b.arm = Some("B".into());
        let mut bad = runs(&[50.0]).remove(0);
        bad.bench_tag = "cont_b".into();
        bad.verified = false;
        recs.extend([b, bad]);
        let out = rows(&recs, &ctx("h"));
        let names: Vec<&str> = out.rows.iter().map(|r| r.benchmark_name.as_str()).collect();
        assert_eq!(names.len(), 2);
        assert!(
            names[0].ends_with("cont_a/A") && names[1].ends_with("cont_a/B"),
            "{names:?}"
        );
        assert!(out.notes.iter().any(|n| n.contains("cont_b: left out")));
    }

    #[test]
    fn an_open_loop_cell_is_published_by_its_p99_latency_in_nanoseconds() {
        let mut recs = runs(&[20.0, 20.0]);
        for (r, p99) in recs.iter_mut().zip([150.0, 170.0]) {
            r.open_loop.offered_ops_per_sec = Some(20.0);
            r.p99_latency_ms = p99;
        }
        let row = &rows(&recs, &ctx("h")).rows[0];
        assert_eq!(
            (row.values.clone(), row.units.as_str()),
            (vec![150e6, 170e6], "nanoseconds")
        );
        assert!(
            !crate::results::history::higher_is_better(&row.units),
            "a longer p99 is worse"
        );
    }

    #[test]
    fn quartiles_interpolate_between_order_statistics() {
        let s = summary(&[4.0, 1.0, 3.0, 2.0, 5.0]);
        assert_eq!(
            (s.min, s.q1, s.median, s.q3, s.max),
            (1.0, 2.0, 3.0, 4.0, 5.0)
        );
        let s = summary(&[1.0, 2.0]);
        assert_eq!((s.q1, s.median, s.q3), (1.25, 1.5, 1.75));
        assert_eq!(summary(&[7.0]).standard_deviation, 0.0);
    }
}
