//! `report.md`: what was run, whether every cell verified, and per mode its charts and a
//! table with the same numbers as `summary.csv` (formatted by the same code).

use std::collections::BTreeSet;

use super::CHART_DIR;
use super::svg::Chart;
use crate::export::csv::{self, COLUMNS};
use crate::export::{CellRecords, Record, jsonl};
use crate::plan::ModeKind;

/// A report section: its mode, heading, chart file prefix, and its table's
/// (summary column, heading) pairs.
struct Section {
    mode: ModeKind,
    heading: &'static str,
    prefix: &'static str,
    columns: &'static [(&'static str, &'static str)],
}

const SECTIONS: [Section; 3] = [
    Section {
        mode: ModeKind::Continuous,
        heading: "Continuous cells: one writer, a fixed number of operations",
        prefix: "continuous_",
        columns: &[
            ("variant_name", "variant"),
            ("initial_entries", "rows"),
            ("ops", "ops"),
            ("errors", "errors"),
            ("tps", "ops/s"),
            ("avg_ms", "avg ms"),
            ("p50_ms", "p50 ms"),
            ("p90_ms", "p90 ms"),
            ("p99_ms", "p99 ms"),
            ("max_ms", "max ms"),
            ("verified", "verified"),
            ("repetitions", "reps"),
        ],
    },
    Section {
        mode: ModeKind::Concurrent,
        heading: "Concurrent cells: C writers for a fixed duration or number of commits",
        prefix: "concurrent_",
        columns: &[
            ("variant_name", "variant"),
            ("initial_entries", "rows"),
            ("concurrency", "writers"),
            ("window_secs", "window s"),
            ("ops", "ops"),
            ("errors", "errors"),
            ("conflicts", "conflicts"),
            ("conflict_retries_per_commit", "retries/commit"),
            ("tps", "ops/s"),
            ("p50_ms", "p50 ms"),
            ("p99_ms", "p99 ms"),
            ("verified", "verified"),
            ("repetitions", "reps"),
        ],
    },
    Section {
        mode: ModeKind::Mixed,
        heading: "Mixed cells: C clients, reads between commits",
        prefix: "mixed_",
        columns: &[
            ("variant_name", "variant"),
            ("initial_entries", "rows"),
            ("concurrency", "clients"),
            ("ops", "commits"),
            ("errors", "commit errors"),
            ("tps", "commits/s"),
            ("p50_ms", "commit p50 ms"),
            ("p99_ms", "commit p99 ms"),
            ("read_ops", "reads"),
            ("read_errors", "read errors"),
            ("read_tps", "reads/s"),
            ("read_p50_ms", "read p50 ms"),
            ("read_p99_ms", "read p99 ms"),
            ("verified", "verified"),
            ("repetitions", "reps"),
        ],
    },
];

/// Columns whose figure does not exist when the cell (or its reads) measured no successful
/// operation.
const LATENCIES: [&str; 7] = [
    "avg_ms", "p50_ms", "p90_ms", "p99_ms", "min_ms", "max_ms", "p999_ms",
];

/// The fewest operations a percentile column's figure is firm on: below them a p99 (a p90)
/// is the slowest operation, and a median moves with one operation.
fn firm_from(col: &str) -> Option<u64> {
    match col {
        "p99_ms" => Some(100),
        "p90_ms" => Some(10),
        "p50_ms" => Some(20),
        _ => None,
    }
}

/// A cell of a table: "—" for a figure that does not exist (empty in the summary, or a
/// latency of a cell without a successful operation); a percentile that rests on few
/// operations (a repetition's fewest, `ops_min`) marked with `*`.
fn cell_text(row: &[String; csv::WIDTH], col: &str, i: usize) -> String {
    let of = |name: &str| &row[COLUMNS.iter().position(|c| *c == name).expect("a column")];
    let none = row[i].is_empty()
        || (LATENCIES.contains(&col) && of("ops") == "0")
        || (col.starts_with("read_p") && of("read_ops") == "0");
    if none {
        return "—".to_string();
    }
    match (firm_from(col), of("ops_min").parse::<u64>()) {
        (Some(firm), Ok(n)) if n < firm => format!("{}\\*", row[i]),
        _ => row[i].clone(),
    }
}

/// Whether any row's percentiles among these columns rest on few operations.
fn any_few(rows: &[&[String; csv::WIDTH]], cols: &[(&str, &str)]) -> bool {
    let at = COLUMNS
        .iter()
        .position(|c| *c == "ops_min")
        .expect("ops_min");
    rows.iter().any(|r| {
        (r[at].parse::<u64>())
            .is_ok_and(|n| (cols.iter()).any(|(c, _)| firm_from(c).is_some_and(|firm| n < firm)))
    })
}

const FEW_NOTE: &str = "\\* rests on few operations (`ops_min` in `summary.csv`: a \
    repetition's fewest): a p99 of fewer than 100 operations is their slowest one, a p90 of \
    fewer than 10 too, and a median of fewer than 20 moves with a single operation. More \
    operations per cell (`continuous.operations`, a longer `concurrent.duration_secs`) make \
    them firm.\n\n";

/// A Markdown table of some `summary.csv` columns, under their own headings.
fn table(rows: &[&[String; csv::WIDTH]], cols: &[(&str, &str)]) -> String {
    let idx: Vec<usize> = cols
        .iter()
        .map(|(c, _)| {
            COLUMNS
                .iter()
                .position(|k| k == c)
                .expect("a summary column")
        })
        .collect();
    let mut s = format!(
        "| {} |\n|{}|\n",
        cols.iter().map(|c| c.1).collect::<Vec<_>>().join(" | "),
        cols.iter()
            .map(|c| if c.0 == "variant_name" {
                ":---"
            } else {
                "---:"
            })
            .collect::<Vec<_>>()
            .join("|")
    );
    for r in rows {
        let cells: Vec<String> = idx
            .iter()
            .zip(cols)
            .map(|(&i, (c, _))| cell_text(r, c, i))
            .collect();
        s.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    s
}

/// The distinct values of a field, joined.
fn set(records: &[Record], f: impl Fn(&Record) -> String) -> String {
    records
        .iter()
        .map(f)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
        .join(", ")
}

fn header(records: &[Record], cells: usize) -> String {
    if records.is_empty() {
        return "# bench report\n\nNo cell has a result yet.\n\n".to_string();
    }
    let first = records
        .iter()
        .map(|r| r.started_at.as_str())
        .min()
        .unwrap_or("");
    let last = records
        .iter()
        .map(|r| r.finished_at.as_str())
        .max()
        .unwrap_or("");
    let mut s = format!("# bench report: {}\n\n", set(records, |r| r.plan.clone()));
    let machine = set(records, |r| match &r.attached.machine {
        Some(m) => format!(
            "{} cores, {:.0} GiB, {}",
            m.cores,
            m.memory_kib as f64 / (1024.0 * 1024.0),
            m.cpu_model
        ),
        None => "not recorded".to_string(),
    });
    s.push_str(&format!(
        "{cells} cells from {} records in `{}` (operation {}; lance {}; storage {}; host {} ({machine}); run {first} to {last}). \
         Throughput counts successful operations in the measured window (release of the workers to \
         the end of the last operation); figures are medians over a cell's repetitions. The tables \
         hold the same numbers as `{}`.\n\n",
        records.len(),
        jsonl::RESULTS_FILE,
        set(records, |r| r.operation.to_string()),
        set(records, |r| r.lance_version.clone()),
        set(records, |r| r.storage_scheme.clone()),
        set(records, |r| r.hostname.clone()),
        csv::SUMMARY_FILE,
    ));
    s
}

fn verification(cells: &[CellRecords<'_>]) -> String {
    let unverified: Vec<&Record> = cells
        .iter()
        .flat_map(|c| c.reps.iter().copied())
        .filter(|r| !r.verified)
        .collect();
    if unverified.is_empty() {
        let mut s = "Verification: every cell's `__manifest` (and shared table) held exactly \
                     what its reported commits left: each entry created present, each removed \
                     gone, reads changing nothing.\n\n"
            .to_string();
        s.push_str(&unchecked(cells));
        return s;
    }
    let mut s =
        "**Verification FAILED** for these cells; their numbers cannot be trusted:\n\n".to_string();
    for r in unverified {
        s.push_str(&format!(
            "- `{}` (repetition {}): {}\n",
            r.bench_tag,
            r.repetition,
            r.verify_error.as_deref().unwrap_or("no reason recorded")
        ));
    }
    s.push('\n');
    s
}

/// The runs that verified on what could be checked, a part left unchecked, each with why
/// (empty: none).
fn unchecked(cells: &[CellRecords<'_>]) -> String {
    let runs: Vec<(&Record, &str)> = (cells.iter())
        .flat_map(|c| c.reps.iter().copied())
        .filter_map(|r| Some((r, crate::export::unchecked(r)?)))
        .collect();
    if runs.is_empty() {
        return String::new();
    }
    let mut s = "**Not checked**: these runs verified on the rest, but a part of their \
                 verification could not be done (`--fail-on-finding` exits 7 on them):\n\n"
        .to_string();
    for (r, why) in runs {
        s.push_str(&format!(
            "- `{}` (repetition {}): {why}\n",
            r.bench_tag, r.repetition
        ));
    }
    s.push('\n');
    s
}

/// Up to six cell ids, and how many more.
fn some_ids(ids: &[String]) -> String {
    let shown: Vec<String> = ids.iter().take(6).map(|i| format!("`{i}`")).collect();
    match ids.len().saturating_sub(6) {
        0 => shown.join(", "),
        n => format!("{} and {n} more", shown.join(", ")),
    }
}

/// What the machine did to the figures: cells whose writers outnumber its cores, and cells
/// beside which other processes kept a core or more busy.
fn conditions(cells: &[CellRecords<'_>]) -> String {
    let mut s = String::new();
    let over: Vec<(String, u32, u32)> = (cells.iter())
        .filter(|c| c.first().mode != ModeKind::Continuous)
        .filter_map(|c| {
            let cores = c.first().attached.machine.as_ref()?.cores;
            let writers = c.first().concurrency;
            (writers > cores).then(|| (c.first().bench_tag.clone(), writers, cores))
        })
        .collect();
    if let Some((_, w, c)) = over.last() {
        let ids: Vec<String> = over.iter().map(|o| o.0.clone()).collect();
        s.push_str(&format!(
            "**Writers outnumber the machine's cores** in {} cells ({}; up to {w} writers on \
             {c} cores): they measure CPU starvation as much as the catalog.\n\n",
            over.len(),
            some_ids(&ids)
        ));
    }
    let busy: Vec<(String, f64)> = (cells.iter())
        .filter_map(|c| {
            let worst = (c.reps.iter())
                .filter_map(|r| r.attached.others_cpu_cores)
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))?;
            (worst >= BUSY_CORES).then(|| (c.first().bench_tag.clone(), worst))
        })
        .collect();
    if !busy.is_empty() {
        let ids: Vec<String> = busy.iter().map(|b| b.0.clone()).collect();
        let most = busy.iter().map(|b| b.1).fold(0.0, f64::max);
        s.push_str(&format!(
            "**Something else ran** beside {} cells ({}): other processes kept up to {most:.1} \
             cores busy while their workers ran; their figures include that contention \
             (`others_cpu_cores`, `load_start`, `load_end` in `summary.csv`).\n\n",
            busy.len(),
            some_ids(&ids)
        ));
    }
    s
}

/// Cores other processes kept busy beside a cell from which the report names it (an idle
/// 2-core VM's kernel threads take about 0.05, now and then 0.3).
const BUSY_CORES: f64 = 0.5;

/// A section's columns: its own, with the arm after the variant in an A/B results set, the
/// throughput's spread before `verified` when cells have repetitions, and where a cell is
/// open-loop what it was offered beside what it achieved, its late starts and its service
/// p99 (so that an achieved rate is never read as a capacity).
fn columns(
    section: &Section,
    ab: bool,
    spread: bool,
    open: bool,
) -> Vec<(&'static str, &'static str)> {
    let mut cols = Vec::new();
    for &c in section.columns {
        if open && (c.0 == "tps") {
            cols.push(("offered_ops_per_sec", "offered/s"));
        }
        if open && c.0 == "verified" {
            cols.extend([
                ("late_operations", "late starts"),
                ("service_p99_ms", "service p99 ms"),
            ]);
        }
        if c.0 == "verified" && spread {
            cols.extend([
                ("tps_ci_low", "CI low"),
                ("tps_ci_high", "CI high"),
                ("ci_level", "CI level"),
                ("tps_cv", "cv"),
                ("noisy", "noisy"),
            ]);
        }
        cols.push(c);
        if c.0 == "variant_name" && ab {
            cols.push(("arm", "arm"));
        }
    }
    cols
}

fn spread_note(rows: &[&[String; csv::WIDTH]]) -> String {
    let col = |name: &str| COLUMNS.iter().position(|c| *c == name).expect("a column");
    let num = |r: &[String; csv::WIDTH], name: &str| r[col(name)].parse::<f64>().ok();
    let tag = |r: &&[String; csv::WIDTH]| format!("`{}`", r[col("bench_tag")]);
    let listed = |f: &dyn Fn(&[String; csv::WIDTH]) -> bool| -> Vec<String> {
        rows.iter().filter(|r| f(r)).map(tag).collect()
    };
    let noisy = listed(&|r| r[col("noisy")] == "true");
    let low = listed(&|r| num(r, "ci_level").is_some_and(|l| l < LEVEL_FLOOR));
    // Wider than the median ±WIDE: it cannot tell apart figures that far apart.
    let wide = listed(
        &|r| match (num(r, "tps_ci_low"), num(r, "tps_ci_high"), num(r, "tps")) {
            (Some(lo), Some(hi), Some(m)) if m > 0.0 => (hi - lo) / m > 2.0 * WIDE,
            _ => false,
        },
    );
    let mut s = "CI low / high: the distribution-free confidence interval of the throughput's \
                 median over the repetitions, at the CI level beside it (its coverage: 50 % for \
                 2 repetitions, 75 % for 3, 94 % for 5); cv: the coefficient of variation."
        .to_string();
    if !low.is_empty() {
        s.push_str(&format!(
            " **Interval below {:.0} %**: {}; with so few repetitions the interval misses the \
             median often, so it says little (`repetitions = 5` gives 94 %).",
            LEVEL_FLOOR * 100.0,
            low.join(", ")
        ));
    }
    if !wide.is_empty() {
        s.push_str(&format!(
            " **Too wide to compare** (wider than the median ±{:.0} %): {}; no difference \
             smaller than that between these cells and others is shown by them.",
            WIDE * 100.0,
            wide.join(", ")
        ));
    }
    if !noisy.is_empty() {
        s.push_str(&format!(
            " **Noisy** (throughput cv above {:.0} %): {}; more repetitions or a quieter \
             machine narrow them.",
            csv::NOISY_CV * 100.0,
            noisy.join(", ")
        ));
    }
    s.push_str("\n\n");
    s
}

/// An interval of a lower coverage than this is flagged: it misses too often to mean much.
const LEVEL_FLOOR: f64 = 0.9;
/// An interval wider than the median ± this share is flagged as too wide to compare.
const WIDE: f64 = 0.25;

/// Cells that failed (from the checkpoint) and cells without a successful operation.
fn failures(records: &[Record], failed: &[(String, String)]) -> String {
    let mut s = String::new();
    if !failed.is_empty() {
        s.push_str("**Failed cells** (no record; `bench run --retry-failed` runs them again):\n\n");
        for (id, reason) in failed {
            let first = reason.lines().next().unwrap_or("no reason recorded");
            let more = if reason.lines().count() > 1 {
                " …"
            } else {
                ""
            };
            s.push_str(&format!("- `{id}`: {first}{more}\n"));
        }
        s.push('\n');
    }
    let with_errors = with_failed_operations(records);
    if !with_errors.is_empty() {
        s.push_str(
            "**Cells with failed operations** (summed over their repetitions, as in \
             `summary.csv`; a failed operation is a commit or read that returned an error, \
             e.g. a conflict past the retries):\n\n",
        );
        for line in with_errors {
            s.push_str(&format!("- {line}\n"));
        }
        s.push('\n');
    }
    let planted: std::collections::BTreeSet<String> = (records.iter())
        .filter(|r| !r.planted.is_empty())
        .map(|r| format!("- `{}`: {}\n", r.bench_tag, r.planted.join(", ")))
        .collect();
    if !planted.is_empty() {
        s.push_str(
            "**PLANTED: cells run with test hooks set** (a slowdown, requests more, a cache, a \
             killed worker…: tests of bench, not measurements of the catalog):\n\n",
        );
        s.extend(planted);
        s.push('\n');
    }
    let stopped: Vec<String> = (records.iter())
        .filter_map(|r| {
            let why = r.stopped_early.as_deref()?;
            let arm = r
                .arm
                .as_deref()
                .map_or(String::new(), |a| format!(" [{a}]"));
            Some(format!(
                "- `{}`{arm} (repetition {}): {why}\n",
                r.bench_tag, r.repetition
            ))
        })
        .collect();
    if !stopped.is_empty() {
        s.push_str(
            "**Cells that stopped early** (a worker stopped before the cell's end; its figures \
             cover less than the plan asked):\n\n",
        );
        s.extend(stopped);
        s.push('\n');
    }
    let applied: Vec<String> = (crate::export::cells(records).iter())
        .filter_map(|c| {
            let of = |r: &&Record| r.outcomes.as_ref().map_or(0, |o| o.failed_but_applied);
            let n: u64 = c.reps.iter().map(of).sum();
            let first = (c.reps.iter())
                .find_map(|r| r.outcomes.as_ref()?.first_failed_but_applied.clone())?;
            (n > 0).then(|| format!("- `{}`: {n} (the first: {first})\n", c.first().bench_tag))
        })
        .collect();
    if !applied.is_empty() {
        s.push_str(
            "**Writes failed but applied** (answered with an error, yet their effect is in the \
             catalog: a finding about the catalog; each cell verified as they landed):\n\n",
        );
        s.extend(applied);
        s.push('\n');
    }
    s.push_str(&stuck_readers(records));
    let empty = crate::export::without_operations(records);
    if !empty.is_empty() {
        s.push_str(
            "**Cells that measured no successful operation** (their latencies and throughput do \
             not exist: \"—\" in the tables, gaps in the charts; e.g. a mixed cell whose \
             reads outlast its duration, or a storm of conflicts):\n\n",
        );
        for id in empty {
            s.push_str(&format!("- `{id}`\n"));
        }
        s.push('\n');
    }
    s
}

/// The runs with readers (or writers) a cleanup left behind, each with its first such
/// operation (empty where none had any).
fn stuck_readers(records: &[Record]) -> String {
    let mut s = String::new();
    let stuck: Vec<String> = (records.iter())
        .filter_map(|r| {
            let st = r.stuck_readers.as_ref()?;
            Some(format!(
                "- `{}` (repetition {}): {}; the first: {}\n",
                r.bench_tag,
                r.repetition,
                st.counts(),
                st.first
            ))
        })
        .collect();
    if !stuck.is_empty() {
        s.push_str(
            "**Readers a cleanup left behind** (each failed on a file of `__manifest` a cleanup \
             removed, and every read after it — or, a writer, every write: a finding about the \
             catalog, docs/findings/cleanup-gap.md):\n\n",
        );
        s.extend(stuck);
        s.push('\n');
    }
    s
}

/// One line per cell (and arm) with a failed operation in any repetition: how many, of
/// which classes, in how many repetitions.
fn with_failed_operations(records: &[Record]) -> Vec<String> {
    crate::export::cells(records)
        .iter()
        .filter_map(|c| {
            let reads = |r: &Record| r.reads.as_ref().map_or(0, |x| x.errors);
            let failed = |r: &Record| r.errors + reads(r);
            let total: u64 = c.reps.iter().map(|r| failed(r)).sum();
            if total == 0 {
                return None;
            }
            let sum = |f: fn(&Record) -> u64| c.reps.iter().map(|r| f(r)).sum::<u64>();
            let classes: Vec<String> = [
                ("conflicts", sum(|r| r.conflict_errors)),
                ("throttled", sum(|r| r.throttled_errors)),
                ("network", sum(|r| r.network_errors)),
                ("not found", sum(|r| r.not_found_errors.unwrap_or(0))),
                ("other", sum(|r| r.other_errors)),
                ("timeouts", sum(|r| r.timeout_errors.unwrap_or(0))),
                ("reads", sum(reads)),
            ]
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
            let first = c.first();
            let arm = first
                .arm
                .as_ref()
                .map(|a| format!(" (arm {a})"))
                .unwrap_or_default();
            let hit = c.reps.iter().filter(|r| failed(r) > 0).count();
            // A commit that gave up conflicting: lance's retries ran out against this many
            // writers.
            let gave_up = match sum(|r| r.conflict_errors) {
                0 => String::new(),
                n => format!(
                    "; {n} gave up still conflicting after lance's {} retries, against {} \
                     other writers{}",
                    first.commit_retries,
                    first.concurrency.saturating_sub(1),
                    (c.reps.iter())
                        .map(|r| r.conflict_retries_per_commit)
                        .collect::<Option<Vec<f64>>>()
                        .map(|v| format!(
                            " ({:.2} retries per commit attempt)",
                            crate::stats::median(v)
                        ))
                        .unwrap_or_default()
                ),
            };
            Some(format!(
                "`{}`{arm}: {total} ({}) in {hit} of {} repetitions{gave_up}",
                first.bench_tag,
                classes.join(", "),
                c.reps.len()
            ))
        })
        .collect()
}

/// The whole report.
/// What each mixed cell's readers saw of its commits (its first run), a paragraph a cell.
fn mixed_readers(cells: &[CellRecords<'_>]) -> String {
    let mixed = cells.iter().filter(|c| c.first().mode == ModeKind::Mixed);
    let said = mixed.filter_map(|c| {
        let k = c.first().consistency.as_ref()?;
        Some(format!(
            "`{}`: {}",
            c.first().bench_tag,
            super::roles::readers_saw(k)
        ))
    });
    said.collect()
}

/// What each cell's operations cost on the stores of bench's price table, from the summary's
/// columns; nothing where no record was priced.
fn cost(records: &[Record], rows: &[[String; csv::WIDTH]]) -> String {
    let first = (COLUMNS.iter())
        .position(|c| *c == "usd_per_million_ops_s3_standard")
        .expect("a column");
    let priced: Vec<&[String; csv::WIDTH]> = rows.iter().filter(|r| !r[first].is_empty()).collect();
    if priced.is_empty() {
        return String::new();
    }
    let tables = set(records, |r| {
        (r.cost.as_ref()).map_or(String::new(), |c| c.prices.clone())
    });
    // Local cells' counts are lance's local store's, not an object store's.
    let local: Vec<&str> = (records.iter())
        .filter(|r| r.storage_scheme == "file" && r.local_requests.as_deref() != Some("s3"))
        .filter(|r| r.cost.is_some())
        .map(|r| r.bench_tag.as_str())
        .collect();
    let caveat = match local.is_empty() {
        true => String::new(),
        false => format!(
            "**Counted on local disk, not on a store** ({} of these cells): their requests are \
             lance's local store's (whole-file reads, a version-hint file), priced as if a \
             store billed them; they differ from what S3 counts (docs/s3.md). For a store's \
             bill, run on it, or set `run.local_requests = \"s3\"` to count S3's requests \
             on local disk.\n\n",
            local.len()
        ),
    };
    let cols = [
        ("bench_tag", "cell"),
        ("usd_per_million_ops_s3_standard", "S3 Standard"),
        ("usd_per_million_ops_s3_express", "S3 Express One Zone"),
        ("usd_per_million_ops_gcs_standard", "GCS Standard"),
        ("usd_per_million_ops_azure_hot", "Azure Blob Hot"),
        ("usd_per_million_ops_r2", "R2"),
        ("requests_over_floor", "requests over the floor"),
        ("floor_efficiency", "floor ÷ requests"),
        ("io_written_bytes_per_op", "bytes written"),
        ("written_bytes_over_floor", "of which beyond the state"),
    ];
    format!(
        "## What it costs\n\nDollars per million successful operations of each cell on \
         each store (priced with {tables}; docs/cost.md): every request the operations \
         made, failed ones' too, billed at the store's list price for its class (PUT, COPY \
         and LIST as writes, GET and HEAD as reads, DELETE free; on S3 Express One Zone also \
         every byte of its PUTs and GETs). Storage is not in these. Beside them, the \
         requests an operation makes beyond the least it needs (its floor: a commit's data \
         file and conditional PUT, a read's one HEAD; the typical operation's), the \
         floor's share of its requests, the bytes the mean operation writes, and of those \
         the bytes beyond one copy of the catalog's state (a copy-on-write commit rewrites \
         the whole state: that copy is its floor, so a figure far below \"bytes written\" \
         says the commit writes little besides the state).\n\n\
         {caveat}{}\n",
        table(&priced, &cols)
    )
}

/// One mode's section of the report: its heading, its charts, its table (a table per
/// variant where variants are named; `ab`: a paired sweep's columns), and the notes its
/// rows call for (spread, open loop, a mixed cell's readers).
fn mode_section(
    section: &Section,
    rows: &[&[String; csv::WIDTH]],
    (charts, cells): (&[Chart], &[CellRecords<'_>]),
    (ab, named): (bool, bool),
) -> String {
    let mut s = String::new();
    let spread = rows
        .iter()
        .any(|r| !r[COLUMNS.iter().position(|c| *c == "tps_cv").expect("tps_cv")].is_empty());
    s.push_str(&format!("## {}\n\n", section.heading));
    for c in charts.iter().filter(|c| c.file.starts_with(section.prefix)) {
        s.push_str(&format!("![{}]({CHART_DIR}/{})\n\n", c.alt, c.file));
    }
    let open = rows.iter().any(|r| {
        !r[COLUMNS
            .iter()
            .position(|c| *c == "offered_ops_per_sec")
            .expect("offered_ops_per_sec")]
        .is_empty()
    });
    let cols = columns(section, ab, spread, open);
    if named {
        // A table per variant, in the summary's order.
        let at = COLUMNS
            .iter()
            .position(|c| *c == "variant_name")
            .expect("a column");
        let mut names: Vec<&str> = Vec::new();
        for r in rows {
            if !names.contains(&r[at].as_str()) {
                names.push(&r[at]);
            }
        }
        for name in names {
            let of: Vec<&[String; csv::WIDTH]> =
                rows.iter().copied().filter(|r| r[at] == name).collect();
            s.push_str(&format!("### {name}\n\n{}\n", table(&of, &cols)));
        }
    } else {
        s.push_str(&table(rows, &cols));
        s.push('\n');
    }
    if any_few(rows, &cols) {
        s.push_str(FEW_NOTE);
    }
    if section.mode == ModeKind::Concurrent {
        s.push_str(
            "window s: the window a cell measured, from the workers' release to the end of \
             its last operation: the plan's `duration_secs` and the operations still in \
             flight at the deadline (`window_overrun_ms` in `summary.csv`); ops/s counts \
             over it. retries/commit: lance's own conflict retries per commit attempt, \
             counted at the store (a try of a `__manifest` commit puts its version once, if \
             absent); conflicts: commits that gave up after the last retry.\n\n",
        );
    }
    if spread {
        s.push_str(&spread_note(rows));
    }
    if open {
        s.push_str(
            "Open-loop cells (offered/s given): each operation is timed from its intended \
             start (p50, p99), so waiting for its writer counts; ops/s is what it achieved \
             over the window it was offered, the offered rate while it keeps up, never its \
             capacity; late starts: operations that began more than 1 ms after their \
             intended start (many: it fell behind); service p99: from the actual start.\n\n",
        );
    }
    if section.mode == ModeKind::Mixed {
        s.push_str(&mixed_readers(cells));
    }
    s
}

/// The report of `all` records, of which `records` are measurements (a campaign's points
/// are not: only its section reads them).
pub fn markdown(
    (all, records): (&[Record], &[Record]),
    cells: &[CellRecords<'_>],
    charts: &[Chart],
    failed: &[(String, String)],
) -> String {
    let points = all.len() - records.len();
    let mut s = match records.is_empty() {
        // A campaign alone: the run's facts, and no figures to speak of.
        true => header(all, crate::export::cells(all).len())
            .replace(" cells from ", " campaign points from ")
            .split(" Throughput counts ")
            .next()
            .map(|h| format!("{h}\n\n"))
            .unwrap_or_default(),
        false => header(records, cells.len()),
    };
    if points > 0 {
        s.push_str(&format!(
            "The fault campaign's {points} points are judged in its section below; they are \
             no measurements (one worker meeting a fault), so no table, chart or price of \
             this report includes them (their figures are in `{}`; `{}` gives each its \
             `fault_class`).\n\n",
            jsonl::RESULTS_FILE,
            csv::SUMMARY_FILE,
        ));
    }
    if !records.is_empty() {
        s.push_str(&super::story::paragraph(cells));
        s.push_str(&conditions(cells));
        s.push_str(&verification(cells));
    }
    s.push_str(&failures(records, failed));
    s.push_str(&super::campaign::section(all));
    let ab = records.iter().any(|r| r.arm.is_some());
    if ab {
        let c = crate::compare::paired(records, crate::compare::DEFAULT_THRESHOLD_PCT);
        s.push_str("## A/B: arm B against arm A, pair by pair\n\n");
        s.push_str(&crate::compare::tables_markdown(&c));
        s.push('\n');
    }
    let all = csv::table(records);
    let named = records.iter().any(|r| r.variant_name.is_some());
    for section in &SECTIONS {
        let rows: Vec<&[String; csv::WIDTH]> = all
            .iter()
            .filter(|r| r[0] == section.mode.as_str())
            .collect();
        if rows.is_empty() {
            continue;
        }
        s.push_str(&mode_section(section, &rows, (charts, cells), (ab, named)));
    }
    s.push_str(&cost(records, &all));
    s.push_str(&super::keeping::section(records));
    s.push_str(&super::roles::section(cells, charts));
    let over: Vec<&Chart> = (charts.iter())
        .filter(|c| c.file.starts_with(super::charts::OVER_TIME))
        .collect();
    if !over.is_empty() {
        s.push_str(
            "## Over time\n\nEach concurrent and mixed cell second by second from release \
             (its records' `series`): successful operations a second and the second's p99 \
             latency, a colour per run. A second without a successful operation has no p99 \
             (a gap); one without any operation is not drawn on the log scale.\n\n",
        );
        for c in over {
            s.push_str(&format!("![{}]({CHART_DIR}/{})\n\n", c.alt, c.file));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::{ModeKind, Variant};

    /// A run that verified on what could be checked is said beside the verification, with
    /// what was not checked; a report without one says nothing of it.
    #[test]
    fn what_verification_could_not_check_is_named() {
        let clean = record(ModeKind::Continuous, Variant::NoIndex, 100, 1, "cont_a");
        let mut partly = record(ModeKind::Continuous, Variant::NoIndex, 1000, 1, "cont_b");
        partly.verify_unchecked = Some("cannot read its versions".into());
        let all = [clean.clone(), partly];
        let text = verification(&crate::export::cells(&all));
        assert!(text.starts_with("Verification: every cell's"), "{text}");
        assert!(
            text.contains("**Not checked**")
                && text.contains("- `cont_b` (repetition 1): cannot read its versions"),
            "{text}"
        );
        let text = verification(&crate::export::cells(&[clean]));
        assert!(!text.contains("Not checked"), "{text}");
    }

    #[test]
    fn cells_with_a_failure_in_any_repetition_are_listed_with_their_classes() {
        let reps = crate::export::record::tests::with_a_conflict_in_the_last();
        let clean = record(
            ModeKind::Continuous,
            Variant::NoIndex,
            100,
            1,
            "cont_inline_false_rows_100",
        );
        let all: Vec<Record> = reps.into_iter().chain([clean]).collect();
        assert_eq!(
            with_failed_operations(&all),
            [
                "`conc_inline_false_rows_100_c_4`: 1 (conflicts 1) in 1 of 3 repetitions; 1 gave \
              up still conflicting after lance's 20 retries, against 3 other writers"
            ]
        );
        // With the retries counted at the store, their rate too.
        let mut counted = all.clone();
        for r in &mut counted {
            r.conflict_retries_per_commit = Some(0.6);
        }
        assert!(
            with_failed_operations(&counted)[0].ends_with("(0.60 retries per commit attempt)"),
            "{:?}",
            with_failed_operations(&counted)
        );
        let text = failures(&all, &[]);
        assert!(text.contains("**Cells with failed operations**"), "{text}");
    }

    /// What a reader needs to weigh the figures: the window a concurrent cell measured,
    /// percentiles resting on few operations marked, writers beyond the machine's cores and
    /// a neighbour's load named, and each interval's level beside it, flagged when low or
    /// too wide.
    #[test]
    fn the_report_says_how_far_each_figure_can_be_trusted() {
        let host = crate::sched::Host {
            cores: 2,
            memory_kib: 24 * 1024 * 1024,
            cpu_model: "AMD EPYC 7B13".into(),
            load_start: Some(0.1),
            load_end: Some(1.9),
        };
        let mut recs = Vec::new();
        for (rep, tps, ms) in [(1, 80.0, 16_400.0), (2, 160.0, 33_100.0)] {
            let mut r = record(ModeKind::Concurrent, Variant::NoIndex, 1000, 8, "conc_c_8");
            (r.repetition, r.throughput_ops_per_sec) = (rep, tps);
            (r.duration_secs, r.total_duration_ms) = (10, ms);
            r.total_operations = 9;
            r.attached.machine = Some(host.clone());
            r.attached.others_cpu_cores = Some(if rep == 1 { 0.1 } else { 1.3 });
            recs.push(r);
        }
        let mut firm = record(ModeKind::Concurrent, Variant::NoIndex, 1000, 1, "conc_c_1");
        firm.total_operations = 500;
        firm.attached.machine = Some(host);
        recs.push(firm);
        let cells = crate::export::cells(&recs);
        let text = markdown((&recs, &recs), &cells, &[], &[]);
        assert!(text.contains("(2 cores, 24 GiB, AMD EPYC 7B13)"), "{text}");
        // The window measured (median of 16.4 s and 33.1 s), not the plan's 10 s.
        assert!(text.contains("| writers | window s |"), "{text}");
        let row = (text.lines())
            .find(|l| l.contains("| 8 |"))
            .expect("the 8-writer row");
        assert!(row.contains("| 24.75 |"), "{row}");
        // 9 operations: p50 and p99 marked, p99 of 500 not.
        assert!(row.contains("1.00\\*") && row.contains("3.00\\*"), "{row}");
        let one = text
            .lines()
            .find(|l| l.contains("| 1 | "))
            .expect("1 writer");
        assert!(!one.contains('*'), "{one}");
        assert!(text.contains("rests on few operations"), "{text}");
        assert!(
            text.contains("**Writers outnumber the machine's cores** in 1 cells (`conc_c_8`; up to 8 writers on 2 cores)"),
            "{text}"
        );
        assert!(
            text.contains("**Something else ran** beside 1 cells (`conc_c_8`): other processes kept up to 1.3 cores"),
            "{text}"
        );
        // Two repetitions: a 50 % interval, labelled and flagged; 80..160 around 120 is
        // wider than ±25 %.
        assert!(text.contains("| CI low | CI high | CI level |"), "{text}");
        assert!(row.contains("| 0.500 |"), "{row}");
        assert!(
            text.contains("**Interval below 90 %**: `conc_c_8`"),
            "{text}"
        );
        assert!(text.contains("**Too wide to compare**"), "{text}");
    }

    /// A campaign's point is judged in the campaign's section and nowhere else: no table,
    /// chart or price holds it, the report says so, and `summary.csv` gives its class.
    #[test]
    fn campaign_points_are_judged_not_tabled_as_measurements() {
        let measured = record(ModeKind::Continuous, Variant::NoIndex, 100, 1, "cont_m");
        let id = "cont_inline_false_rows_10_BENCH_STORE_FAULT-reset@1";
        let mut point = record(ModeKind::Continuous, Variant::NoIndex, 10, 1, id);
        point.variant_name = Some("no_index/BENCH_STORE_FAULT=reset@1".into());
        point.verified = false;
        point.verify_error = Some("w0_0 missing, expected 1".into());
        point.attached.fault = Some(crate::plan::campaign::Met {
            point: "reset@1".into(),
            fired_at: Some(1),
            requests: Vec::new(),
            finding: None,
            new_client: None,
            while_paused: None,
        });
        let all = vec![measured.clone(), point.clone()];
        let rows = csv::table(&all);
        let class = COLUMNS.iter().position(|c| *c == "fault_class").unwrap();
        let classes: Vec<&str> = rows.iter().map(|r| r[class].as_str()).collect();
        assert_eq!(classes, ["", "LOST"]);

        let measured_only = [measured];
        let cells = crate::export::cells(&measured_only);
        let text = markdown((&all, &measured_only), &cells, &[], &[]);
        assert!(
            text.contains("The fault campaign's 1 points are judged"),
            "{text}"
        );
        assert!(text.contains("## Fault campaign"), "{text}");
        assert!(text.contains("**LOST** at reset@1"), "{text}");
        let after = text.split("## Continuous").nth(1).unwrap();
        assert!(!after.contains("BENCH_STORE_FAULT"), "{after}");
        assert!(!text.contains("Verification FAILED"), "{text}");
        assert!(
            super::super::campaign::is_point(id) && !super::super::campaign::is_point("cont_m")
        );
    }

    /// A cell whose worker stopped early, and one with writes failed but applied, are listed
    /// as such.
    #[test]
    fn stopped_cells_and_writes_failed_but_applied_are_listed() {
        let mut stopped = record(ModeKind::Concurrent, Variant::NoIndex, 100, 2, "conc_a");
        stopped.stopped_early = Some("worker 0: killed mid-commit (planted)".into());
        let mut applied = record(ModeKind::Continuous, Variant::NoIndex, 100, 1, "cont_b");
        applied.outcomes = Some(crate::audit::Outcomes {
            failed_but_applied: 2,
            first_failed_but_applied: Some("worker 0's write-drop-table #0: 403".into()),
            ..Default::default()
        });
        let text = failures(&[stopped, applied], &[]);
        assert!(
            text.contains("**Cells that stopped early**")
                && text.contains("- `conc_a` (repetition 1): worker 0: killed mid-commit"),
            "{text}"
        );
        assert!(
            text.contains("**Writes failed but applied**")
                && text.contains("- `cont_b`: 2 (the first: worker 0's write-drop-table #0: 403)"),
            "{text}"
        );
    }
}
