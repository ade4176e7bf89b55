//! `bench compare A B`: the cells of two result sets side by side (throughput, p50 and p99:
//! medians with their spread, the ratio B/A with its 95 % confidence interval), and a
//! verdict only where a change is significantly beyond the noise threshold: the whole
//! interval of the ratio lies beyond ±threshold (Welch's t interval on logarithms over the
//! repetitions of both sides). With one argument, an A/B results directory of `bench ab`
//! is compared arm against arm, pair by pair (the paired t interval on log ratios). The
//! tables are written by [`table`].

mod command;
pub mod counts;
mod explain;
pub mod interference;
mod json;
mod paired;
pub mod precision;
pub mod readers;
mod roles;
mod table;
pub mod variants;

use std::collections::{BTreeMap, BTreeSet};

pub use command::{
    CompareArgs, DEFAULT_BETWEEN_RUNS_PCT, DEFAULT_THRESHOLD_PCT, Format, Gate, VerdictArgs,
    comparison, comparison_as, parse_threshold, run,
};
pub use paired::{Inside, inside_batches, paired, pairs_of, run_secs, wall_secs};
pub use table::{github, markdown, tables_markdown, text, warnings};

use crate::answer::Answer;
use crate::error::{BenchError, exit, io_err};
use crate::export::record::{ARM_A, ARM_B};
use crate::export::{CellRecords, ReadFigures, Record, cells};
use crate::plan::ModeKind;
use crate::stats::paired::{
    Batch, PairingKind, crossover_log, crossovers, median_ratio, run_batch, singles,
    throughput_ratio,
};
use crate::stats::{RatioTest, Spread, Unit, spread, welch_log};

/// Repetitions each side needs before a change can be a verdict.
pub const MIN_REPETITIONS: usize = 3;

/// The three compared figures, in the order of the tables.
pub const METRICS: usize = 3;

/// One side's figures of a cell: every repetition's value of throughput, p50 and p99, and
/// their spread (medians, intervals, coefficients of variation).
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub values: [Vec<f64>; METRICS],
    pub spread: [Spread; METRICS],
    /// Successful operations of each repetition (the samples behind its percentiles).
    pub ops: Vec<u64>,
}

/// The quantile each figure after throughput is.
const QUANTILES: [f64; METRICS] = [0.0, 0.50, 0.99];

/// Operations beyond a percentile that each repetition needs before its change is tested:
/// with fewer, a "p99" is the largest sample or two and only noise. So p50 needs 20
/// operations a repetition, p99 1,000; throughput is always tested.
pub const BEYOND_PERCENTILE: f64 = 10.0;

impl Figures {
    fn new(values: [Vec<f64>; METRICS], ops: Vec<u64>) -> Figures {
        let spread = [spread(&values[0]), spread(&values[1]), spread(&values[2])];
        Figures {
            values,
            spread,
            ops,
        }
    }

    /// Whether figure `i` rests on enough operations in every repetition to be tested.
    fn testable(&self, i: usize) -> bool {
        let q = QUANTILES[i];
        self.ops
            .iter()
            .all(|&n| n as f64 * (1.0 - q) >= BEYOND_PERCENTILE || q == 0.0)
    }
    pub fn repetitions(&self) -> usize {
        self.values[0].len()
    }
    pub fn median(&self, i: usize) -> f64 {
        self.spread[i].median
    }
}

/// How a metric moved from A to B, by where its interval lies against ±threshold. One word
/// for one state: `within noise` (Same) only when the whole interval lies inside the band,
/// `undecided` when it reaches across either edge, a verdict when it lies wholly beyond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The whole interval lies within ±threshold: no change that large ("within noise").
    Same,
    /// The interval reaches across an edge of ±threshold: it cannot tell ("undecided").
    Undecided,
    /// No test: too few repetitions (or runs), or a figure that is shown but not tested.
    Untested,
    Better,
    Worse,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub cell: String,
    pub a: Figures,
    pub b: Figures,
    /// B/A of the medians of throughput, p50, p99 (`None` when A's is 0).
    pub ratios: [Option<f64>; METRICS],
    /// The significance test of each ratio, when both sides have enough repetitions.
    pub tests: [Option<RatioTest>; METRICS],
    pub changes: [Change; METRICS],
    /// What the throughput counts: `ops/s`, or `reads/s` for the reads of a mixed cell.
    pub per_sec: &'static str,
    /// An A/B comparison: how many pairs, formed how, and the time they took.
    pub pairs: Option<PairsBehind>,
    /// What moved of an operation's time (`explain`), said beside a time verdict.
    pub explanation: Option<String>,
    /// One (role, operation) of a cell of roles, beside the cell's own row.
    pub of_role: bool,
    /// The threshold its changes were judged at, a fraction.
    pub threshold: f64,
    /// The reads of a mixed cell: each client reads `reads_per_write` times per commit, so
    /// their reads/s is the commits' rate times that, by construction. Their throughput is
    /// shown and not judged; their latency is.
    pub paced: bool,
}

/// What the throughput of a mixed cell's reads counts, and why it is not judged.
pub const PACED_READS: &str = "reads/s of a mixed cell is its commits/s times the reads each \
    client makes per commit, by construction: it is shown, not judged; its reads are judged \
    by their latency (p50, p99)";

/// The pairs behind a paired row.
#[derive(Debug, Clone, PartialEq)]
pub struct PairsBehind {
    /// `runs`, `lockstep`, `slices` or `duet`.
    pub pairing: &'static str,
    pub pairs: usize,
    /// The runs they came from (each a repetition of the cell, both arms).
    pub runs: usize,
    /// The interval's observations: in `bench ab`, the crossovers among those runs (runs
    /// `2j − 1` and `2j`, each arm first in one); else each pair of runs.
    pub units: usize,
    /// Whether the observations are crossovers (`bench ab`).
    pub crossover: bool,
    /// Wall time of the cell's runs, both arms (copies and verification included).
    pub secs: f64,
}

impl Row {
    /// The row with the test of figure `i` replaced by `test` (the same estimate, another
    /// interval: `bench ab`'s sequential one), its change judged again at `t` (a fraction).
    pub fn retest(&mut self, i: usize, test: RatioTest, t: f64) {
        self.tests[i] = Some(test);
        self.changes[i] = change(self.ratios[i], self.tests[i].as_ref(), t, i == 0);
        self.unjudge_paced();
    }

    /// A paced throughput (a mixed cell's reads/s) is never a change.
    fn unjudge_paced(&mut self) {
        if self.paced {
            self.changes[0] = Change::Untested;
        }
    }

    pub fn regressed(&self) -> bool {
        self.changes.contains(&Change::Worse)
    }

    /// Tested, neither a regression nor an improvement, and some figure's interval across
    /// the threshold: "undecided".
    pub fn undecided(&self) -> bool {
        let verdict =
            self.changes.contains(&Change::Worse) || self.changes.contains(&Change::Better);
        self.tested() && !verdict && self.changes.contains(&Change::Undecided)
    }

    fn tested(&self) -> bool {
        self.tests[0].is_some()
            || (self.pairs.is_none()
                && self.a.repetitions() >= MIN_REPETITIONS
                && self.b.repetitions() >= MIN_REPETITIONS)
    }

    pub fn verdict(&self) -> String {
        let names = [self.per_sec, "p50", "p99"];
        let moved = |want: Change| {
            (0..METRICS)
                .filter(|&i| self.changes[i] == want)
                .map(|i| {
                    let pct = (self.ratios[i].unwrap_or(1.0) - 1.0) * 100.0;
                    match &self.tests[i] {
                        Some(t) => format!(
                            "{} {pct:+.1}%, CI {:+.1}%..{:+.1}%",
                            names[i],
                            (t.ci.0 - 1.0) * 100.0,
                            (t.ci.1 - 1.0) * 100.0
                        ),
                        None => format!("{} {pct:+.1}%", names[i]),
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (worse, better) = (moved(Change::Worse), moved(Change::Better));
        let undecided = moved(Change::Undecided);
        match (worse.is_empty(), better.is_empty()) {
            (true, true) if !self.tested() && self.pairs.as_ref().is_some_and(|p| p.crossover) => {
                let p = self.pairs.as_ref().expect("paired");
                format!(
                    "no verdict ({} runs, {}; a test needs {MIN_REPETITIONS})",
                    p.runs,
                    crate::plan::count(p.units as u64, "crossover", "crossovers")
                )
            }
            (true, true) if !self.tested() && self.pairs.is_some() => format!(
                "no verdict ({} runs; a test needs {MIN_REPETITIONS})",
                self.pairs.as_ref().map_or(0, |p| p.runs)
            ),
            (true, true) if !self.tested() => format!(
                "no verdict ({}/{} repetitions)",
                self.a.repetitions(),
                self.b.repetitions()
            ),
            (true, true) if !undecided.is_empty() => {
                format!(
                    "undecided ({undecided}: across ±{}%)",
                    self.threshold * 100.0
                )
            }
            (true, true) => "within noise".to_string(),
            (false, true) => format!("REGRESSION ({worse}){}", self.why()),
            (true, false) => format!("improved ({better}){}", self.why()),
            (false, false) => format!("REGRESSION ({worse}); improved ({better}){}", self.why()),
        }
    }

    /// " — why: …" of a verdict, where the records tell.
    fn why(&self) -> String {
        self.explanation
            .as_ref()
            .map_or(String::new(), |e| format!(" — why: {e}"))
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
    /// Separate runs: the spread between runs added to every interval, in percent.
    pub between_runs_pct: f64,
    /// Compared pair by pair (an A/B results directory).
    pub paired: bool,
    /// Requests and bytes per operation, where both sides measured them.
    pub io_rows: Vec<IoRow>,
    /// The exact counts of each cell (its commits), side by side, with their verdicts.
    pub counts: Vec<counts::CountRow>,
    /// What each cell's readers saw (cells of roles with `consistency` on both sides).
    pub readers: Vec<readers::ReaderRow>,
    /// The test hooks set in A's runs and in B's (`planted`): a test, not a measurement.
    pub planted: [BTreeSet<String>; 2],
    /// An A/B comparison's cells whose runs met CPU interference.
    pub interference: Vec<interference::Interference>,
}

/// The test hooks set in any of these runs.
fn planted<'r>(runs: impl IntoIterator<Item = &'r Record>) -> BTreeSet<String> {
    runs.into_iter()
        .flat_map(|r| r.planted.iter().cloned())
        .collect()
}

/// One cell's requests and bytes per operation (medians over repetitions) on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct IoRow {
    pub cell: String,
    /// Requests, read bytes and written bytes per operation.
    pub a: [f64; 3],
    pub b: [f64; 3],
}

/// Requests, read bytes, written bytes per operation: medians over the records, if every
/// record measured them.
fn io_figures(reps: &[&Record]) -> Option<[f64; 3]> {
    let per: Option<Vec<crate::stats::IoPerOp>> = reps.iter().map(|r| r.io_per_op).collect();
    let per = per?;
    let med =
        |f: fn(&crate::stats::IoPerOp) -> f64| crate::stats::median(per.iter().map(f).collect());
    Some([
        med(|p| p.requests()),
        med(|p| p.read_bytes),
        med(|p| p.written_bytes),
    ])
}

impl Comparison {
    /// Cells with a significant regression in any figure (commits or reads).
    pub fn regressions(&self) -> usize {
        self.regressed_cells().len()
    }

    /// Cells with a significant improvement in some figure and no regression.
    pub fn improvements(&self) -> usize {
        let worse = self.regressed_cells();
        let better: BTreeSet<&str> = (self.rows.iter().chain(&self.read_rows))
            .filter(|r| r.changes.contains(&Change::Better))
            .map(|r| r.cell.as_str())
            .collect();
        better.difference(&worse).count()
    }

    fn regressed_cells(&self) -> BTreeSet<&str> {
        self.rows
            .iter()
            .chain(&self.read_rows)
            .filter(|r| r.regressed())
            .map(|r| r.cell.as_str())
            .collect()
    }

    /// Rows without a verdict for lack of repetitions.
    pub fn untested(&self) -> usize {
        self.rows.iter().filter(|r| !r.tested()).count()
    }

    /// Cells without a verdict (in their commits or their reads) whose interval reaches
    /// across the threshold somewhere: undecided.
    pub fn undecided(&self) -> usize {
        let judged: BTreeSet<&str> = (self.rows.iter().chain(&self.read_rows))
            .filter(|r| {
                r.changes
                    .iter()
                    .any(|c| matches!(c, Change::Better | Change::Worse))
            })
            .map(|r| r.cell.as_str())
            .collect();
        let undecided: BTreeSet<&str> = (self.rows.iter().chain(&self.read_rows))
            .filter(|r| r.undecided() && !judged.contains(r.cell.as_str()))
            .map(|r| r.cell.as_str())
            .collect();
        undecided.len()
    }

    /// Cells with more requests or bytes per operation in every run of B.
    pub fn count_regressions(&self) -> usize {
        self.counts.iter().filter(|c| c.regressed()).count()
    }

    /// Cells with fewer, and none more.
    pub fn count_improvements(&self) -> usize {
        self.counts.iter().filter(|c| c.improved()).count()
    }

    /// Cells whose readers saw anomalies or a lag B did not have in A's runs (by gate:
    /// anomalies are counted exactly, the lag is a time).
    pub fn reader_regressions(&self, gate: Gate) -> usize {
        use counts::Moved::More;
        (self.readers.iter())
            .filter(|r| match gate {
                Gate::Counts => r.anomalies == More,
                Gate::Time => r.lag == Some(More),
                Gate::Both => r.regressed(),
            })
            .count()
    }

    /// 5 for a regression the gate looks at (a significant time regression, a count that
    /// grew, readers' anomalies or lag) with `--fail-on-regression`; else, with
    /// `--fail-on-undecided` and a gate that looks at the time, 7 where a cell's time was
    /// not judged (undecided, or too few runs for a test); else 0.
    pub fn exit_code(&self, v: &VerdictArgs) -> u8 {
        let on_time = matches!(v.gate, Gate::Time | Gate::Both);
        let time = on_time && self.regressions() > 0;
        let counts = matches!(v.gate, Gate::Counts | Gate::Both) && self.count_regressions() > 0;
        let counts = counts || self.reader_regressions(v.gate) > 0;
        let unjudged = on_time && self.undecided() + self.untested() > 0;
        if v.fail_on_regression && (time || counts) {
            exit::REGRESSION
        } else if v.fail_on_undecided && unjudged {
            exit::UNDECIDED
        } else {
            exit::OK
        }
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
        // Local disk and S3 differ by orders of magnitude: never compare them unsaid.
        ("store", r.storage_scheme.clone()),
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

/// The compared figures of the records given, in their order: the cell's own, or with
/// `reads` those of a mixed cell's reads (`None` unless every record has them).
fn figures(reps: &[&Record], reads: bool) -> Option<Figures> {
    let pick = |f: fn(&ReadFigures) -> f64, g: fn(&Record) -> f64| -> Option<Vec<f64>> {
        reps.iter()
            .map(|r| {
                if reads {
                    r.reads.as_ref().map(f)
                } else {
                    Some(g(r))
                }
            })
            .collect()
    };
    let ops = pick(|r| r.total_operations as f64, |r| r.total_operations as f64)?;
    Some(Figures::new(
        [
            pick(|r| r.throughput_ops_per_sec, |r| r.throughput_ops_per_sec)?,
            pick(|r| r.p50_latency_ms, |r| r.p50_latency_ms)?,
            pick(|r| r.p99_latency_ms, |r| r.p99_latency_ms)?,
        ],
        ops.into_iter().map(|n| n as u64).collect(),
    ))
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (a > 0.0).then(|| b / a)
}

/// Classify a ratio by its test's interval against ±`t`: for throughput higher is better,
/// for latency lower is. A verdict only when the whole interval lies beyond the threshold (a
/// one-sided test at 2.5 % that the change exceeds it; with threshold 0, that it exists);
/// "within noise" only when it lies wholly inside ±threshold; across an edge, undecided.
/// Without a test, untested whatever the ratio.
fn change(ratio: Option<f64>, test: Option<&RatioTest>, t: f64, higher_is_better: bool) -> Change {
    let (Some(_), Some(test)) = (ratio, test) else {
        return Change::Untested;
    };
    let (lo, hi) = test.ci;
    let up = if lo > 1.0 + t {
        true
    } else if hi < 1.0 - t {
        false
    } else if lo >= 1.0 - t && hi <= 1.0 + t {
        return Change::Same;
    } else {
        return Change::Undecided;
    };
    if up == higher_is_better {
        Change::Better
    } else {
        Change::Worse
    }
}

/// A row from both sides' figures, the tests between them, and the ratios shown (`None`
/// where A's figure is 0).
fn row(
    cell: &str,
    (a, b): (Figures, Figures),
    tests: [Option<RatioTest>; METRICS],
    ratios: [Option<f64>; METRICS],
    t: f64,
    per_sec: &'static str,
) -> Row {
    let changes = std::array::from_fn(|i| change(ratios[i], tests[i].as_ref(), t, i == 0));
    let mut r = Row {
        per_sec,
        cell: cell.to_string(),
        a,
        b,
        ratios,
        tests,
        changes,
        pairs: None,
        explanation: None,
        of_role: false,
        threshold: t,
        paced: per_sec == "reads/s",
    };
    r.unjudge_paced();
    r
}

/// The ratios of the medians B/A.
fn median_ratios(a: &Figures, b: &Figures) -> [Option<f64>; METRICS] {
    std::array::from_fn(|i| ratio(a.median(i), b.median(i)))
}

/// A paired row's ratios: each test's own estimate, so that it lies inside its interval;
/// without a test, `fallback`'s.
fn estimates(
    tests: &[Option<RatioTest>; METRICS],
    fallback: [Option<f64>; METRICS],
) -> [Option<f64>; METRICS] {
    std::array::from_fn(|i| tests[i].map(|t| t.ratio).or(fallback[i]))
}

/// Widen an interval by the spread between separate runs (`between`, a fraction: the 95 %
/// half-width of the ratio of two runs of the same build): the two half-widths, both at
/// 95 %, add in quadrature on the log scale, as independent errors do.
pub fn widened(t: RatioTest, between: f64) -> RatioTest {
    if between <= 0.0 {
        return t;
    }
    let c = t.ratio.ln();
    let h = ((t.ci.1 / t.ci.0).ln() / 2.0).hypot((1.0 + between).ln());
    RatioTest {
        ratio: t.ratio,
        ci: ((c - h).exp(), (c + h).exp()),
    }
}

/// Unpaired: Welch's test on each metric, when both sides have enough repetitions, its
/// interval widened by the spread between separate runs (`between`, a fraction). One
/// estimator per test: where there is a test, the ratio shown and thresholded is its own
/// (the ratio of geometric means, inside its interval); without one, the ratio of medians.
fn unpaired_row(
    cell: &str,
    (a, b): (Figures, Figures),
    (t, between): (f64, f64),
    per_sec: &'static str,
) -> Row {
    let enough = a.repetitions() >= MIN_REPETITIONS && b.repetitions() >= MIN_REPETITIONS;
    let tests: [Option<RatioTest>; METRICS] = std::array::from_fn(|i| {
        (enough && a.testable(i) && b.testable(i))
            .then(|| welch_log(&a.values[i], &b.values[i]))
            .flatten()
            .map(|w| widened(w, between))
    });
    let ratios = estimates(&tests, median_ratios(&a, &b));
    row(cell, (a, b), tests, ratios, t, per_sec)
}

/// The parameter differences of two cells, if any.
fn differences(a: &Record, b: &Record) -> Option<String> {
    let (pa, pb) = (parameters(a), parameters(b));
    let diffs: Vec<String> = pa
        .iter()
        .zip(&pb)
        .filter(|(x, y)| x != y)
        .map(|((k, x), (_, y))| format!("{k} {x} vs {y}"))
        .chain((pa.len() != pb.len()).then(|| "mode parameters differ".to_string()))
        .collect();
    (!diffs.is_empty()).then(|| diffs.join(", "))
}

/// Compare the latest records of each cell (by cell id) of A and B, two separate runs that
/// differ by up to `between_runs_pct` percent between themselves.
pub fn compare(
    a: &[Record],
    b: &[Record],
    threshold_pct: f64,
    between_runs_pct: f64,
) -> Comparison {
    let (ca, cb) = (cells(a), cells(b));
    // A cell of an A/B results set is one arm's: two A/B sets compare arm by arm.
    let name = |c: &CellRecords<'_>| {
        let r = c.first();
        match &r.arm {
            Some(arm) => format!("{} (arm {arm})", r.bench_tag),
            None => r.bench_tag.clone(),
        }
    };
    let by_name = |cs: &[CellRecords<'_>]| -> BTreeMap<String, usize> {
        cs.iter().enumerate().map(|(i, c)| (name(c), i)).collect()
    };
    let (ia, ib) = (by_name(&ca), by_name(&cb));
    let t = threshold_pct / 100.0;
    let between = between_runs_pct / 100.0;
    let mut c = Comparison {
        threshold_pct,
        between_runs_pct,
        planted: [planted(a), planted(b)],
        ..Comparison::default()
    };
    // In A's summary order, then B's cells that A lacks.
    for xa in &ca {
        let tag = &name(xa);
        let Some(&j) = ib.get(tag) else {
            c.only_a.push(tag.clone());
            continue;
        };
        let xb = &cb[j];
        if let Some(d) = differences(xa.first(), xb.first()) {
            c.differing.push((tag.clone(), d));
        }
        let side = |x: &CellRecords<'_>, reads| figures(&x.reps, reads);
        if let (Some(fa), Some(fb)) = (side(xa, false), side(xb, false)) {
            let mut r = unpaired_row(tag, (fa, fb), (t, between), "ops/s");
            r.explanation = explain::explain(&xa.reps, &xb.reps);
            c.rows.push(r);
        }
        c.counts.extend(counts::count_row(tag, &xa.reps, &xb.reps));
        c.readers
            .extend(readers::ReaderRow::of(tag, (&xa.reps, &xb.reps), between));
        (c.rows).extend(roles::rows((&xa.reps, &xb.reps), false, (t, between)));
        if let (Some(fa), Some(fb)) = (side(xa, true), side(xb, true)) {
            c.read_rows
                .push(unpaired_row(tag, (fa, fb), (t, between), "reads/s"));
        }
        if let (Some(a), Some(b)) = (io_figures(&xa.reps), io_figures(&xb.reps)) {
            c.io_rows.push(IoRow {
                cell: tag.clone(),
                a,
                b,
            });
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
pub(crate) mod tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::Variant;
    use command::mixes_ab;

    pub(crate) fn reps(tps: &[f64], arm: Option<&str>) -> Vec<Record> {
        tps.iter()
            .enumerate()
            .map(|(i, &t)| {
                let mut r = record(
                    ModeKind::Continuous,
                    Variant::NoIndex,
                    100,
                    1,
                    "cont_inline_false_rows_100",
                );
                r.throughput_ops_per_sec = t;
                r.p50_latency_ms = 1000.0 / t;
                r.p99_latency_ms = 2000.0 / t;
                r.repetition = i as u32 + 1;
                r.arm = arm.map(str::to_string);
                r
            })
            .collect()
    }

    #[test]
    fn changes_need_their_interval_beyond_the_threshold() {
        let test = |ratio, lo, hi| RatioTest {
            ratio,
            ci: (lo, hi),
        };
        let (up, down) = (test(1.2, 1.15, 1.3), test(0.8, 0.7, 0.85));
        // Significant, but the interval reaches into the ±10 % band: not a verdict.
        let near = test(1.2, 1.05, 1.3);
        let inside = test(1.02, 0.95, 1.08);
        // Wholly above 1 yet across +10 %: undecided, never "within noise".
        let above = test(1.05, 1.01, 1.12);
        assert_eq!(change(Some(1.2), Some(&up), 0.1, true), Change::Better);
        assert_eq!(change(Some(0.8), Some(&down), 0.1, true), Change::Worse);
        assert_eq!(change(Some(1.2), Some(&up), 0.1, false), Change::Worse);
        assert_eq!(change(Some(1.2), Some(&near), 0.1, true), Change::Undecided);
        assert_eq!(change(Some(1.2), Some(&near), 0.0, true), Change::Better);
        assert_eq!(change(Some(1.02), Some(&inside), 0.1, true), Change::Same);
        assert_eq!(
            change(Some(1.05), Some(&above), 0.1, true),
            Change::Undecided
        );
        assert_eq!(
            change(Some(1.02), Some(&inside), 0.0, true),
            Change::Undecided
        );
        assert_eq!(change(Some(1.2), None, 0.1, true), Change::Untested);
        assert_eq!(change(Some(1.0), None, 0.1, true), Change::Untested);
        assert_eq!(change(None, None, 0.1, false), Change::Untested);
        assert_eq!(ratio(0.0, 5.0), None);
    }

    #[test]
    fn a_significant_slowdown_is_a_regression_and_noise_is_not() {
        let a = reps(&[100.0, 104.0, 97.0, 101.0, 99.0], None);
        let slow = reps(&[80.0, 83.0, 78.0, 81.0, 79.0], None);
        let c = compare(&a, &slow, 10.0, 0.0);
        assert_eq!(c.regressions(), 1);
        assert!(
            c.rows[0]
                .verdict()
                .starts_with("REGRESSION (ops/s -20.0%, CI -"),
            "{}",
            c.rows[0].verdict()
        );
        // A wide spread: beyond 10 % on the median, and not significant: undecided, its
        // interval named.
        let wobbly = reps(&[88.0, 140.0, 60.0, 130.0, 85.0], None);
        let c = compare(&a, &wobbly, 10.0, 0.0);
        assert!(!c.rows[0].regressed(), "{:?}", c.rows[0]);
        let v = c.rows[0].verdict();
        assert!(
            v.starts_with("undecided (ops/s ") && v.ends_with(": across ±10%)"),
            "{v}"
        );
        // Tight and close: within noise.
        let close = reps(&[101.0, 103.0, 98.0, 100.0, 99.5], None);
        assert_eq!(
            compare(&a, &close, 10.0, 0.0).rows[0].verdict(),
            "within noise"
        );
        // Too few repetitions: no verdict, however large the change.
        let c = compare(&a[..2], &slow[..2], 10.0, 0.0);
        assert_eq!(c.regressions(), 0);
        assert_eq!(c.rows[0].verdict(), "no verdict (2/2 repetitions)");
    }

    /// `--fail-on-regression` exits 5 on a regression; `--fail-on-undecided` exits 7 where
    /// nothing regressed but a cell could not be judged; a regression wins over both.
    #[test]
    fn a_gate_can_refuse_what_it_could_not_judge() {
        let a = reps(&[100.0, 104.0, 97.0, 101.0, 99.0], None);
        let close = reps(&[101.0, 103.0, 98.0, 100.0, 99.5], None);
        let wobbly = reps(&[88.0, 140.0, 60.0, 130.0, 85.0], None);
        let slow = reps(&[80.0, 83.0, 78.0, 81.0, 79.0], None);
        let gate = |regression: bool, undecided: bool| VerdictArgs {
            threshold: 10.0,
            fail_on_regression: regression,
            fail_on_undecided: undecided,
            gate: Gate::Both,
            format: Format::Text,
        };
        let code = |b: &[Record], v: VerdictArgs| compare(&a, b, 10.0, 0.0).exit_code(&v);
        assert_eq!(
            code(&wobbly, gate(true, false)),
            exit::OK,
            "undecided passes"
        );
        assert_eq!(code(&wobbly, gate(true, true)), exit::UNDECIDED);
        assert_eq!(code(&close, gate(true, true)), exit::OK, "within noise");
        assert_eq!(
            code(&a[..2], gate(false, true)),
            exit::UNDECIDED,
            "untested"
        );
        assert_eq!(code(&slow, gate(true, true)), exit::REGRESSION);
        // Counts alone: the time is not the gate's to judge.
        let counts = VerdictArgs {
            gate: Gate::Counts,
            ..gate(true, true)
        };
        assert_eq!(code(&wobbly, counts), exit::OK);
    }

    /// One estimator per test: the ratio shown and thresholded is the test's own, inside
    /// its interval, even where the medians tell another story.
    #[test]
    fn an_unpaired_row_shows_and_thresholds_its_test_s_own_ratio() {
        let a = reps(&[100.0, 101.0, 99.0, 100.0, 100.5].repeat(4), None);
        // Most runs 9 % slower, eight of twenty 30 % slower: the median says -9 % (within
        // 10 %), the geometric means -18 %, with an interval wholly beyond -10 %.
        let mut slow = vec![91.0; 12];
        slow.extend([70.0; 8]);
        let b = reps(&slow, None);
        let c = compare(&a, &b, 10.0, 0.0);
        let r = &c.rows[0];
        let t = r.tests[0].unwrap();
        assert!(t.ci.1 < 0.9, "{t:?}");
        assert_eq!(
            r.ratios[0],
            Some(t.ratio),
            "the printed ratio is the test's"
        );
        assert!(t.ci.0 <= t.ratio && t.ratio <= t.ci.1);
        assert_eq!(r.changes[0], Change::Worse, "{r:?}");
        // The medians stay the medians.
        assert_eq!((r.a.median(0), r.b.median(0)), (100.0, 91.0));
    }

    #[test]
    fn separate_runs_need_a_change_beyond_their_spread() {
        // 20 % slower with little spread: a verdict without a spread between runs, none
        // with the default 100 %; a quartering is one either way.
        let a = reps(&[100.0, 104.0, 97.0, 101.0, 99.0], None);
        let slow = reps(&[80.0, 83.0, 78.0, 81.0, 79.0], None);
        assert_eq!(compare(&a, &slow, 10.0, 0.0).regressions(), 1);
        let c = compare(&a, &slow, 10.0, DEFAULT_BETWEEN_RUNS_PCT);
        assert_eq!(c.regressions(), 0);
        assert_eq!(c.rows[0].changes[0], Change::Undecided);
        let t = c.rows[0].tests[0].unwrap();
        assert!(t.ci.0 < 0.65 && t.ci.1 > 1.0, "widened: {t:?}");
        let half = reps(&[25.0, 26.0, 24.2, 25.2, 24.7], None);
        assert_eq!(
            compare(&a, &half, 10.0, DEFAULT_BETWEEN_RUNS_PCT).regressions(),
            1
        );
        // Quadrature: a point interval widened by ±35 % is exactly ±35 % wide.
        let w = widened(
            RatioTest {
                ratio: 1.0,
                ci: (1.0, 1.0),
            },
            0.35,
        );
        assert!((w.ci.1 - 1.35).abs() < 1e-12 && (w.ci.0 - 1.0 / 1.35).abs() < 1e-12);
    }

    #[test]
    fn percentiles_are_tested_only_on_enough_operations() {
        let a = reps(&[100.0, 104.0, 97.0, 101.0, 99.0], None);
        let slow = reps(&[80.0, 83.0, 78.0, 81.0, 79.0], None);
        // 10 operations a repetition: throughput is tested, p50 (which needs 20) not.
        let c = compare(&a, &slow, 10.0, 0.0);
        assert!(c.rows[0].tests[0].is_some() && c.rows[0].tests[1].is_none());
        let more = |mut v: Vec<Record>, n: u64| {
            v.iter_mut().for_each(|r| r.total_operations = n);
            v
        };
        let c = compare(&more(a.clone(), 50), &more(slow.clone(), 50), 10.0, 0.0);
        assert!(c.rows[0].tests[1].is_some(), "p50 on 50 operations");
        assert!(c.rows[0].tests[2].is_none(), "p99 needs 1,000");
        let c = compare(&more(a, 1000), &more(slow, 1000), 10.0, 0.0);
        assert!(c.rows[0].tests[2].is_some());
        assert!(
            c.rows[0].verdict().contains("p99 +24.9%"),
            "{}",
            c.rows[0].verdict()
        );
    }

    /// A mixed cell's reads/s is its commits/s times the reads per commit: shown, never
    /// judged. Reads that are served 57 % more often but 26 % slower are a regression of
    /// their latency, not an improvement.
    #[test]
    fn reads_of_a_mixed_cell_are_judged_by_their_latency_not_their_pace() {
        let mixed = |tps: &[f64], p50: f64| -> Vec<Record> {
            let mut v = reps(&[100.0, 104.0, 97.0, 101.0, 99.0], None);
            for (r, (i, &t)) in v.iter_mut().zip(tps.iter().enumerate()) {
                r.mode = ModeKind::Mixed;
                r.bench_tag = "mixed_inline_false_rows_100_c_4".into();
                let jitter = 1.0 + i as f64 * 0.002;
                r.reads = Some(
                    serde_json::from_value(serde_json::json!({
                        "operation": "warm-read-list-tables", "reads_per_write": 10,
                        "total_operations": 2000, "attempts": 2000, "errors": 0,
                        "first_error": null, "throughput_ops_per_sec": t,
                        "avg_latency_ms": p50 * jitter, "p50_latency_ms": p50 * jitter,
                        "p90_latency_ms": p50 * 1.5 * jitter,
                        "p99_latency_ms": p50 * 2.0 * jitter,
                        "p999_latency_ms": p50 * 3.0, "min_latency_ms": 0.1,
                        "max_latency_ms": p50 * 4.0,
                    }))
                    .expect("read figures"),
                );
            }
            v
        };
        let a = mixed(&[1000.0, 1040.0, 970.0, 1010.0, 990.0], 1.81);
        let b = mixed(&[1570.0, 1633.0, 1523.0, 1586.0, 1554.0], 2.28);
        let c = compare(&a, &b, 10.0, 0.0);
        let reads = &c.read_rows[0];
        assert!(reads.paced && reads.tests[0].is_some(), "{reads:?}");
        assert_eq!(reads.changes[0], Change::Untested, "{reads:?}");
        assert_eq!(reads.changes[1], Change::Worse, "{reads:?}");
        let v = reads.verdict();
        assert!(v.starts_with("REGRESSION (p50 +26.0%"), "{v}");
        assert!(!v.contains("improved"), "{v}");
        assert_eq!(c.regressions(), 1);
        // The commits' throughput is still judged; the output says why the reads' is not.
        assert!(!c.rows[0].paced);
        assert!(text(&c).contains(PACED_READS), "{}", text(&c));
        assert!(tables_markdown(&c).contains(PACED_READS));
    }

    /// Two A/B results sets compare arm by arm: A's arm A with B's arm A, A's arm B with
    /// B's arm B (not every arm against B's arm B).
    #[test]
    fn two_ab_sets_compare_arm_by_arm() {
        let first = lockstep(5, 20, 1.0);
        let mut second = lockstep(5, 20, 1.0);
        // The second set's arm A is twice as fast; its arm B as before.
        for r in second.iter_mut().filter(|r| r.arm.as_deref() == Some("A")) {
            r.throughput_ops_per_sec *= 2.0;
        }
        let c = compare(&first, &second, 10.0, 0.0);
        let names: Vec<&str> = c.rows.iter().map(|r| r.cell.as_str()).collect();
        assert_eq!(
            names,
            [
                "cont_inline_false_rows_100 (arm A)",
                "cont_inline_false_rows_100 (arm B)"
            ]
        );
        assert!(c.only_a.is_empty() && c.only_b.is_empty());
        let ratio = |i: usize| c.rows[i].tests[0].unwrap().ratio;
        assert!((ratio(0) - 2.0).abs() < 1e-9, "{}", ratio(0));
        assert!((ratio(1) - 1.0).abs() < 1e-9, "{}", ratio(1));
        assert!(!mixes_ab(&first, &second) && mixes_ab(&first, &reps(&[1.0], None)));
    }

    /// `--format github`: the headline, only the cells with a verdict in the first table,
    /// every cell inside `<details>`; pinned as GitHub renders it.
    #[test]
    fn a_pull_request_comment_shows_only_the_verdicts_then_every_cell() {
        let cell = |tag: &str, tps: &[f64]| -> Vec<Record> {
            (reps(tps, None).into_iter())
                .map(|mut r| {
                    r.bench_tag = tag.to_string();
                    r
                })
                .collect()
        };
        let steady = [100.0, 101.0, 99.0, 100.5, 99.5];
        let slower = [80.0, 80.8, 79.2, 80.4, 79.6];
        let a = [cell("cont_a", &steady), cell("cont_b", &steady)].concat();
        let b = [cell("cont_a", &slower), cell("cont_b", &steady)].concat();
        let c = compare(&a, &b, 10.0, 0.0);
        let md = github(&c, "base", "cand");
        let (head, details) = md.split_once("<details>").unwrap();
        assert!(
            head.starts_with("**bench**: 1 cell regressed, 0 improved beyond ±10 % (of 2 cells)\n"),
            "{md}"
        );
        assert!(
            head.contains("`cont_a`") && !head.contains("`cont_b`"),
            "{md}"
        );
        assert!(details.contains("`cont_a`") && details.contains("`cont_b`"));
        assert!(details.trim_end().ends_with("</details>"), "{md}");
        let same = github(&compare(&a, &a, 10.0, 0.0), "base", "base");
        assert!(
            same.starts_with(
                "**bench**: no change beyond ±10 % in 2 cells\n\nA: `base` · B: `base`\n\n<details>"
            ),
            "{same}"
        );
        assert_eq!(md, SNAPSHOT, "the comment as pinned");
        // An undecided cell is no "no change": the headline says it, its row is shown.
        let wobbly = [
            cell("cont_a", &[88.0, 140.0, 60.0, 130.0, 85.0]),
            cell("cont_b", &steady),
        ];
        let md = github(&compare(&a, &wobbly.concat(), 10.0, 0.0), "base", "cand");
        let (head, _) = md.split_once("<details>").unwrap();
        assert!(
            head.starts_with(
                "**bench**: no verdict at ±10 % in 2 cells: 1 undecided (an interval across ±10 \
                 %), 0 untested, 1 within noise\n"
            ),
            "{md}"
        );
        assert!(
            head.contains("`cont_a`") && head.contains("undecided (ops/s"),
            "{md}"
        );
    }

    const SNAPSHOT: &str = r#"**bench**: 1 cell regressed, 0 improved beyond ±10 % (of 2 cells)

A: `base` · B: `cand`

| cell | ops/s A | ops/s B | B/A | p50 ms A | p50 ms B | B/A | p99 ms A | p99 ms B | B/A | verdict |
|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|
| `cont_a` | 100.000 ±1% | 80.000 ±1% | 0.800 [0.791–0.809] | 10.00 ±1% | 12.50 ±1% | 1.250 | 20.00 ±1% | 25.00 ±1% | 1.250 | **REGRESSION (ops/s -20.0%, CI -20.9%..-19.1%)** |

<details>
<summary>Every cell (2)</summary>

| cell | ops/s A | ops/s B | B/A | p50 ms A | p50 ms B | B/A | p99 ms A | p99 ms B | B/A | verdict |
|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|
| `cont_a` | 100.000 ±1% | 80.000 ±1% | 0.800 [0.791–0.809] | 10.00 ±1% | 12.50 ±1% | 1.250 | 20.00 ±1% | 25.00 ±1% | 1.250 | **REGRESSION (ops/s -20.0%, CI -20.9%..-19.1%)** |
| `cont_b` | 100.000 ±1% | 100.000 ±1% | 1.000 [0.989–1.012] | 10.00 ±1% | 10.00 ±1% | 1.000 | 20.00 ±1% | 20.00 ±1% | 1.000 | within noise |

2 cells compared: 1 regressed, 0 improved, 1 within noise, 0 undecided (a verdict needs the ratio's 95 % confidence interval [..], by Welch's t-test on logarithms, to lie entirely beyond ±10%, within noise entirely within it, undecided across it; p50 and p99 are tested only with at least 20 and 1,000 operations a repetition; B/A above 1 is faster for ops/s, slower for latency; ±% is the coefficient of variation over repetitions)
separate runs differ by what the machine did between them; to decide between two builds, use `bench ab`, which pairs them inside each run

</details>
"#;

    /// Lockstep records of a cell: `reps` repetitions of `n` operation pairs, B's latency
    /// `ratio` times A's, with ±2 % of noise of its own.
    pub(crate) fn lockstep(reps: u32, n: usize, ratio: f64) -> Vec<Record> {
        use crate::stats::paired::{ArmUnits, PairingKind};
        let mut out = Vec::new();
        for rep in 1..=reps {
            for (arm, f) in [("A", 1.0), ("B", ratio)] {
                let mut r = reps_one(arm);
                let units: Vec<Unit> = (0..n)
                    .map(|i| {
                        let own = if arm == "B" {
                            1.0 + 0.02 * (((i * 3 + rep as usize) % 3) as f64 - 1.0)
                        } else {
                            1.0
                        };
                        Unit {
                            ms: f * own * (10.0 + ((i * 7 + rep as usize * 3) % 5) as f64),
                            ops: 1.0,
                        }
                    })
                    .collect();
                let window: f64 = units.iter().map(|u| u.ms).sum();
                r.repetition = rep;
                r.total_operations = n as u64;
                r.total_duration_ms = window;
                r.throughput_ops_per_sec = n as f64 * 1000.0 / window;
                r.p50_latency_ms = 12.0 * f;
                r.paired = Some(crate::export::record::PairUnits::new(
                    PairingKind::Lockstep,
                    &ArmUnits {
                        ops: units,
                        reads: Vec::new(),
                    },
                    None,
                    (arm == "A") == (rep % 2 == 1),
                ));
                out.push(r);
            }
        }
        out
    }

    fn reps_one(arm: &str) -> Record {
        let mut r = record(
            ModeKind::Continuous,
            Variant::NoIndex,
            100,
            1,
            "cont_inline_false_rows_100",
        );
        r.arm = Some(arm.to_string());
        r
    }
}
