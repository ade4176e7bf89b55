//! `bench compare A B`: the cells of two result sets side by side (throughput, p50 and p99,
//! each with its ratio B/A), changes beyond a noise threshold flagged, and warnings for cells
//! present on one side only or measured with different parameters. The tables are
//! written by [`table`].

mod table;

pub use table::{markdown, text, warnings};

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::error::{BenchError, exit, io_err};
use crate::export::{CellRecords, Record, cells, jsonl};
use crate::plan::ModeKind;

/// `bench compare A B`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// Baseline: a results directory or a results JSONL file.
    pub a: PathBuf,
    /// Candidate: a results directory or a results JSONL file.
    pub b: PathBuf,
    /// Changes within this many percent are noise and not flagged.
    #[arg(long, value_name = "PCT", default_value_t = DEFAULT_THRESHOLD_PCT,
          value_parser = parse_threshold)]
    pub threshold: f64,
    /// Exit with code 5 when any cell regressed beyond the threshold.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// Also write the comparison as a Markdown table to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
}

/// Default noise threshold of `bench compare`, in percent.
pub const DEFAULT_THRESHOLD_PCT: f64 = 10.0;

fn parse_threshold(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(format!("`{s}` is not a percentage (e.g. 10 or 2.5)")),
    }
}

/// `bench compare A B`: print the comparison (and its warnings), write the Markdown if
/// asked; exit 5 on a regression with `--fail-on-regression`.
pub fn run(args: &CompareArgs) -> Result<u8, BenchError> {
    let (fa, ra) = jsonl::load(&args.a).map_err(BenchError::output)?;
    let (fb, rb) = jsonl::load(&args.b).map_err(BenchError::output)?;
    let (na, nb) = (fa.display().to_string(), fb.display().to_string());
    let c = compare(&ra, &rb, args.threshold);
    for w in warnings(&c, &na, &nb) {
        eprintln!("warning: {w}");
    }
    print!("A: {na}\nB: {nb}\n\n{}", text(&c));
    if let Some(path) = &args.markdown {
        std::fs::write(path, markdown(&c, &na, &nb)).map_err(io_err("write", path))?;
        eprintln!("markdown: {}", path.display());
    }
    Ok(if args.fail_on_regression && c.regressions() > 0 {
        exit::REGRESSION
    } else {
        exit::OK
    })
}

/// One cell's compared figures (medians over its repetitions).
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub tps: f64,
    pub p50: f64,
    pub p99: f64,
    pub repetitions: usize,
}

/// How a metric moved from A to B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Same,
    Better,
    Worse,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub cell: String,
    pub a: Figures,
    pub b: Figures,
    /// B/A of throughput, p50, p99 (`None` when A's figure is 0).
    pub ratios: [Option<f64>; 3],
    pub changes: [Change; 3],
    /// What the throughput counts: `ops/s`, or `reads/s` for the reads of a mixed cell.
    pub per_sec: &'static str,
}

impl Row {
    pub fn regressed(&self) -> bool {
        self.changes.contains(&Change::Worse)
    }
    pub fn verdict(&self) -> String {
        let names = [self.per_sec, "p50", "p99"];
        let moved = |want: Change| {
            (0..3)
                .filter(|&i| self.changes[i] == want)
                .map(|i| {
                    format!(
                        "{} {:+.1}%",
                        names[i],
                        (self.ratios[i].unwrap_or(1.0) - 1.0) * 100.0
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (worse, better) = (moved(Change::Worse), moved(Change::Better));
        match (worse.is_empty(), better.is_empty()) {
            (true, true) => String::new(),
            (false, true) => format!("REGRESSION ({worse})"),
            (true, false) => format!("improved ({better})"),
            (false, false) => format!("REGRESSION ({worse}); improved ({better})"),
        }
    }
}

#[derive(Debug, Default)]
pub struct Comparison {
    /// The cells' figures (for mixed cells: their commits).
    pub rows: Vec<Row>,
    /// The reads of mixed cells, compared the same way.
    pub read_rows: Vec<Row>,
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// Cells whose parameters differ: (cell, what differs).
    pub differing: Vec<(String, String)>,
    pub threshold_pct: f64,
}

impl Comparison {
    /// Cells with a regression in any figure (commits or reads).
    pub fn regressions(&self) -> usize {
        self.regressed_cells().len()
    }

    fn regressed_cells(&self) -> std::collections::BTreeSet<&str> {
        self.rows
            .iter()
            .chain(&self.read_rows)
            .filter(|r| r.regressed())
            .map(|r| r.cell.as_str())
            .collect()
    }
}

/// The parameters that make two cells comparable, as (name, value).
fn parameters(r: &Record) -> Vec<(&'static str, String)> {
    let mut p = vec![
        ("operation", r.operation.to_string()),
        ("mode", r.mode.to_string()),
        ("variant", r.variant.to_string()),
        ("initial_entries", r.initial_entries.to_string()),
        ("concurrency", r.concurrency.to_string()),
        ("duration_secs", r.duration_secs.to_string()),
        ("commit_retries", r.commit_retries.to_string()),
        ("warmup_operations", r.warmup_operations.to_string()),
    ];
    if r.mode == ModeKind::Continuous {
        // A continuous cell starts exactly `operations` operations.
        p.push(("operations", r.attempts.to_string()));
    }
    if let Some(reads) = &r.reads {
        p.push(("read_operation", reads.operation.to_string()));
        p.push(("reads_per_write", reads.reads_per_write.to_string()));
    }
    p
}

fn figures(c: &CellRecords<'_>) -> Figures {
    Figures {
        tps: c.med(|r| r.throughput_ops_per_sec),
        p50: c.med(|r| r.p50_latency_ms),
        p99: c.med(|r| r.p99_latency_ms),
        repetitions: c.reps.len(),
    }
}

/// The figures of a mixed cell's reads, if every repetition has them.
fn read_figures(c: &CellRecords<'_>) -> Option<Figures> {
    Some(Figures {
        tps: c.read_med(|r| r.throughput_ops_per_sec)?,
        p50: c.read_med(|r| r.p50_latency_ms)?,
        p99: c.read_med(|r| r.p99_latency_ms)?,
        repetitions: c.reps.len(),
    })
}

fn row(cell: &str, a: Figures, b: Figures, t: f64, per_sec: &'static str) -> Row {
    let ratios = [
        ratio(a.tps, b.tps),
        ratio(a.p50, b.p50),
        ratio(a.p99, b.p99),
    ];
    let changes = [
        change(ratios[0], t, true),
        change(ratios[1], t, false),
        change(ratios[2], t, false),
    ];
    Row {
        per_sec,
        cell: cell.to_string(),
        a,
        b,
        ratios,
        changes,
    }
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (a > 0.0).then(|| b / a)
}

/// Classify a ratio: for throughput higher is better, for latency lower is.
fn change(ratio: Option<f64>, threshold: f64, higher_is_better: bool) -> Change {
    match ratio {
        Some(r) if r > 1.0 + threshold => {
            if higher_is_better {
                Change::Better
            } else {
                Change::Worse
            }
        }
        Some(r) if r < 1.0 - threshold => {
            if higher_is_better {
                Change::Worse
            } else {
                Change::Better
            }
        }
        _ => Change::Same,
    }
}

/// Compare the latest records of each cell (by cell id) of A and B.
pub fn compare(a: &[Record], b: &[Record], threshold_pct: f64) -> Comparison {
    let (ca, cb) = (cells(a), cells(b));
    let by_tag = |cs: &[CellRecords<'_>]| -> BTreeMap<String, usize> {
        cs.iter()
            .enumerate()
            .map(|(i, c)| (c.first().bench_tag.clone(), i))
            .collect()
    };
    let (ia, ib) = (by_tag(&ca), by_tag(&cb));
    let t = threshold_pct / 100.0;
    let mut c = Comparison {
        threshold_pct,
        ..Comparison::default()
    };
    // In A's summary order, then B's cells that A lacks.
    for xa in &ca {
        let tag = &xa.first().bench_tag;
        let Some(&j) = ib.get(tag) else {
            c.only_a.push(tag.clone());
            continue;
        };
        let xb = &cb[j];
        let (pa, pb) = (parameters(xa.first()), parameters(xb.first()));
        let diffs: Vec<String> = pa
            .iter()
            .zip(&pb)
            .filter(|(x, y)| x != y)
            .map(|((k, x), (_, y))| format!("{k} {x} vs {y}"))
            .chain((pa.len() != pb.len()).then(|| "mode parameters differ".to_string()))
            .collect();
        if !diffs.is_empty() {
            c.differing.push((tag.clone(), diffs.join(", ")));
        }
        c.rows.push(row(tag, figures(xa), figures(xb), t, "ops/s"));
        if let (Some(fa), Some(fb)) = (read_figures(xa), read_figures(xb)) {
            c.read_rows.push(row(tag, fa, fb, t, "reads/s"));
        }
    }
    c.only_b = ib
        .keys()
        .filter(|k| !ia.contains_key(*k))
        .cloned()
        .collect();
    c
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_respect_direction_and_threshold() {
        assert_eq!(change(Some(1.05), 0.1, true), Change::Same);
        assert_eq!(change(Some(1.2), 0.1, true), Change::Better);
        assert_eq!(change(Some(0.8), 0.1, true), Change::Worse);
        assert_eq!(change(Some(1.2), 0.1, false), Change::Worse);
        assert_eq!(change(Some(0.8), 0.1, false), Change::Better);
        assert_eq!(change(None, 0.1, false), Change::Same);
        assert_eq!(ratio(0.0, 5.0), None);
    }
}
