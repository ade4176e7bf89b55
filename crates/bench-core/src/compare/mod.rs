//! `bench compare A B`: the cells of two result sets side by side (throughput, p50 and p99:
//! medians with their spread, the ratio B/A with its 95 % confidence interval), and a
//! verdict only where a change is significantly beyond the noise threshold: the whole
//! interval of the ratio lies beyond ±threshold (Welch's t interval on logarithms over the
//! repetitions of both sides). With one argument, an A/B results directory of `bench ab`
//! is compared arm against arm, pair by pair (the paired t interval on log ratios). The
//! tables are written by [`table`].

pub mod counts;
mod explain;
mod json;
pub mod precision;
pub mod readers;
mod roles;
mod table;
pub mod variants;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

pub use table::{github, markdown, tables_markdown, text, warnings};

use crate::answer::Answer;
use crate::error::{BenchError, exit, io_err};
use crate::export::record::{ARM_A, ARM_B};
use crate::export::{CellRecords, ReadFigures, Record, cells};
use crate::plan::ModeKind;
use crate::stats::paired::{Batch, PairingKind, median_ratio, run_batch, throughput_ratio};
use crate::stats::{RatioTest, Spread, Unit, paired_log, spread, welch_log};

/// Repetitions each side needs before a change can be a verdict.
pub const MIN_REPETITIONS: usize = 3;

/// What `bench compare` is asked (the command line's, as plain values).
#[derive(Debug, Clone)]
pub struct CompareArgs {
    /// The baseline: a results directory or a results JSONL file; alone, a results
    /// directory of `bench ab`.
    pub a: PathBuf,
    /// The candidate, if any.
    pub b: Option<PathBuf>,
    pub verdict: VerdictArgs,
    /// The spread between separate runs, in percent, added to each interval.
    pub between_runs: f64,
    /// Also write the comparison as Markdown here.
    pub markdown: Option<PathBuf>,
    /// Within one results directory: the baseline variant.
    pub against: Option<variants::Selector>,
    /// With `against`: only this variant.
    pub variant: Option<variants::Selector>,
}

/// What makes a verdict, shared by `bench compare` and `bench ab`: the noise threshold in
/// percent, and whether a significant regression exits 5.
#[derive(Debug, Clone)]
pub struct VerdictArgs {
    pub threshold: f64,
    pub fail_on_regression: bool,
    /// Which verdicts `fail_on_regression` exits on.
    pub gate: Gate,
    /// How the comparison is said on stdout.
    pub format: Format,
}

/// Which verdicts decide the exit code with `--fail-on-regression`: the exact counts (requests,
/// round trips, bytes per operation), the times (throughput, p50, p99), or either.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Gate {
    Counts,
    Time,
    #[default]
    Both,
}

/// How `bench compare` and `bench ab` print their comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// The tables as text, and the verdicts.
    #[default]
    Text,
    /// GitHub-flavoured Markdown for a pull request comment ([`github`]): nothing else on
    /// stdout.
    Github,
    /// One JSON document ([`json::json`]): nothing else on stdout.
    Json,
}

/// Default noise threshold, in percent.
pub const DEFAULT_THRESHOLD_PCT: f64 = 10.0;

/// Default spread between separate runs of the same build, in percent: measured on a
/// 2-core VM with local disk (docs/results.md, "How noisy is a machine").
pub const DEFAULT_BETWEEN_RUNS_PCT: f64 = 100.0;

/// A percentage as the command line gives it (`10`, `2.5`, `5%`), 0 or more.
pub fn parse_threshold(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(format!("`{s}` is not a percentage (e.g. 10 or 2.5)")),
    }
}

/// `bench compare`: the comparison (and its warnings), the Markdown written if asked;
/// exit 5 on a significant regression with `--fail-on-regression`.
pub fn run(args: &CompareArgs) -> Result<Answer, BenchError> {
    let (fa, ra) = crate::sweep::resume::load(&args.a).map_err(BenchError::output)?;
    let na = fa.display().to_string();
    if let Some(against) = &args.against {
        if let Some(b) = &args.b {
            return Err(BenchError::Usage(format!(
                "--against compares the variants inside one results directory; give one \
                 (bench compare {na} --against {against}), not also {}",
                b.display()
            )));
        }
        return run_variants(args, &ra, &na, against);
    }
    let (c, na, nb) = match &args.b {
        Some(b) => {
            let (fb, rb) = crate::sweep::resume::load(b).map_err(BenchError::output)?;
            let nb = fb.display().to_string();
            if mixes_ab(&ra, &rb) {
                let (ab, plain) = if is_ab(&ra) { (&na, &nb) } else { (&nb, &na) };
                return Err(BenchError::Usage(format!(
                    "{ab} holds the two arms of a `bench ab` and {plain} does not, so their \
                     cells do not match; compare the A/B results alone (bench compare {ab}), \
                     or with another A/B results set (arm by arm)"
                )));
            }
            (
                compare(&ra, &rb, args.verdict.threshold, args.between_runs),
                na,
                nb,
            )
        }
        None if is_ab(&ra) => (
            paired(&ra, args.verdict.threshold),
            format!("{na} arm A"),
            format!("{na} arm B"),
        ),
        None => {
            return Err(BenchError::Usage(format!(
                "{na} holds no A/B results (of `bench ab`); give two result sets: bench compare A B"
            )));
        }
    };
    if c.rows.is_empty() {
        return Err(BenchError::output(format!(
            "{na} and {nb} have no cell in common, so nothing can be compared (A holds {}; B \
             holds {}); compare results of the same plan",
            names(&c.only_a),
            names(&c.only_b)
        )));
    }
    let mut answer = comparison_as(&c, &na, &nb, args.verdict.format);
    if let Some(path) = &args.markdown {
        crate::files::write_atomic(path, markdown(&c, &na, &nb).as_bytes())
            .map_err(io_err("write", path))?;
        answer.note(format!("markdown: {}", path.display()));
    }
    answer.code = c.exit_code(&args.verdict);
    Ok(answer)
}

/// `bench compare DIR --against A [--variant V]`: each variant against the baseline, then
/// the variants in order of their throughput.
fn run_variants(
    args: &CompareArgs,
    records: &[Record],
    name: &str,
    against: &variants::Selector,
) -> Result<Answer, BenchError> {
    if args.verdict.format == Format::Github {
        return Err(BenchError::Usage(format!(
            "--format github says one comparison (two result sets, or an A/B directory); \
             for the variants of {name} against {against}, write them with --markdown FILE"
        )));
    }
    let cs = variants::compare_variants(
        records,
        against,
        args.variant.as_ref(),
        args.verdict.threshold,
        args.between_runs,
    )
    .map_err(|m| BenchError::Usage(format!("{name}: {m}")))?;
    let mut md = String::new();
    let mut answer = Answer::default();
    for (i, (v, c)) in cs.iter().enumerate() {
        if i > 0 {
            answer.line("");
        }
        let (na, nb) = (
            format!("{name}, variant {against}"),
            format!("{name}, variant {v}"),
        );
        let one = comparison(c, &na, &nb);
        answer.stdout.push_str(&one.stdout);
        answer.stderr.extend(one.stderr);
        md.push_str(&format!(
            "## {v} against {against}\n\n{}\n",
            markdown(c, &na, &nb)
        ));
        answer.code = answer.code.max(c.exit_code(&args.verdict));
    }
    // The ranking, with one variant too (its line sums its cells up).
    answer.line(format!(
        "\nvariants by throughput against {against}, best first:"
    ));
    md.push_str(&format!("## Variants by throughput against {against}\n\n"));
    for line in variants::ranking(&cs, against) {
        answer.line(format!("  {line}"));
        md.push_str(&format!("- {line}\n"));
    }
    if let Some(path) = &args.markdown {
        crate::files::write_atomic(path, md.as_bytes()).map_err(io_err("write", path))?;
        answer.note(format!("markdown: {}", path.display()));
    }
    Ok(answer)
}

/// Whether records are of `bench ab` (each carries its arm).
fn is_ab(records: &[Record]) -> bool {
    records.iter().any(|r| r.arm.is_some())
}

/// One results set of `bench ab` and one of `bench run`: their cells never match.
fn mixes_ab(a: &[Record], b: &[Record]) -> bool {
    is_ab(a) != is_ab(b)
}

/// A few cell ids, for a message.
fn names(ids: &[String]) -> String {
    match ids.len() {
        0 => "no cells".to_string(),
        n if n <= 3 => ids.join(", "),
        n => format!("{}, … ({n} cells)", ids[..3].join(", ")),
    }
}

/// A comparison in `format`, with its warnings (on stderr in either).
pub fn comparison_as(c: &Comparison, na: &str, nb: &str, format: Format) -> Answer {
    let mut answer = comparison(c, na, nb);
    match format {
        Format::Text => {}
        Format::Github => answer.stdout = github(c, na, nb),
        Format::Json => answer.stdout = json::json(c, na, nb),
    }
    answer
}

/// A comparison as text, with its warnings.
pub fn comparison(c: &Comparison, na: &str, nb: &str) -> Answer {
    Answer {
        stdout: format!("A: {na}\nB: {nb}\n\n{}", text(c)),
        stderr: warnings(c, na, nb)
            .into_iter()
            .map(|w| format!("warning: {w}"))
            .collect(),
        code: exit::OK,
    }
}

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

/// How a metric moved from A to B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Within the threshold.
    Same,
    /// Beyond the threshold, but not significant: noise.
    Noise,
    /// Beyond the threshold, with too few repetitions to test.
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
}

/// The pairs behind a paired row.
#[derive(Debug, Clone, PartialEq)]
pub struct PairsBehind {
    /// `runs`, `lockstep`, `slices` or `duet`.
    pub pairing: &'static str,
    pub pairs: usize,
    /// The runs they came from (each a repetition of the cell, both arms).
    pub runs: usize,
    /// Wall time of the cell's runs, both arms (copies and verification included).
    pub secs: f64,
}

impl Row {
    /// The row with its throughput test replaced by `test` (the same estimate, another
    /// interval: `bench ab`'s sequential one), its verdict judged again at `t` (a fraction).
    pub fn retest_throughput(&mut self, test: RatioTest, t: f64) {
        self.tests[0] = Some(test);
        self.changes[0] = change(self.ratios[0], self.tests[0].as_ref(), t, true);
    }

    pub fn regressed(&self) -> bool {
        self.changes.contains(&Change::Worse)
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
        match (worse.is_empty(), better.is_empty()) {
            (true, true) if !self.tested() && self.pairs.is_some() => format!(
                "no verdict ({} runs; a test needs {MIN_REPETITIONS})",
                self.pairs.as_ref().map_or(0, |p| p.runs)
            ),
            (true, true) if !self.tested() => format!(
                "no verdict ({}/{} repetitions)",
                self.a.repetitions(),
                self.b.repetitions()
            ),
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
    fn untested(&self) -> usize {
        self.rows.iter().filter(|r| !r.tested()).count()
    }

    /// Cells with more requests, round trips or bytes per operation in every run of B.
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
    /// grew, readers' anomalies or lag) with `--fail-on-regression`, else 0.
    pub fn exit_code(&self, v: &VerdictArgs) -> u8 {
        let time = matches!(v.gate, Gate::Time | Gate::Both) && self.regressions() > 0;
        let counts = matches!(v.gate, Gate::Counts | Gate::Both) && self.count_regressions() > 0;
        let counts = counts || self.reader_regressions(v.gate) > 0;
        if v.fail_on_regression && (time || counts) {
            exit::REGRESSION
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

/// Classify a ratio: for throughput higher is better, for latency lower is. A change is a
/// verdict only when its whole confidence interval lies beyond the threshold: a one-sided
/// test at 2.5 % that the change exceeds the threshold (with threshold 0, that it exists).
fn change(ratio: Option<f64>, test: Option<&RatioTest>, t: f64, higher_is_better: bool) -> Change {
    let Some(r) = ratio else {
        return Change::Same;
    };
    if (r - 1.0).abs() <= t {
        return Change::Same;
    }
    let Some(test) = test else {
        return Change::Untested;
    };
    let (lo, hi) = test.ci;
    let up = if lo > 1.0 + t {
        true
    } else if hi < 1.0 - t {
        false
    } else {
        return Change::Noise;
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
    Row {
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
    }
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

/// Compare arm A with arm B of an A/B results set, pair by pair. Pairs of whole runs
/// (repetition `i` of A with repetition `i` of B, run back to back on fresh copies of the
/// same golden) by the paired t-test on log ratios; pairs formed inside each run
/// (lockstep, slices, duet: the records' `paired` units) by the ratio estimator with batch
/// means (see `stats::paired`).
pub fn paired(records: &[Record], threshold_pct: f64) -> Comparison {
    let t = threshold_pct / 100.0;
    let arm_of = |name: &str| planted(records.iter().filter(|r| r.arm.as_deref() == Some(name)));
    let mut c = Comparison {
        threshold_pct,
        paired: true,
        planted: [arm_of(ARM_A), arm_of(ARM_B)],
        ..Comparison::default()
    };
    let all = cells(records);
    let arm = |x: &CellRecords<'_>| x.first().arm.clone();
    let b_of: BTreeMap<&str, &CellRecords<'_>> = all
        .iter()
        .filter(|x| arm(x).as_deref() == Some(ARM_B))
        .map(|x| (x.first().bench_tag.as_str(), x))
        .collect();
    let mut seen = BTreeSet::new();
    for xa in all.iter().filter(|x| arm(x).as_deref() == Some(ARM_A)) {
        let tag = xa.first().bench_tag.as_str();
        seen.insert(tag);
        let Some(xb) = b_of.get(tag) else {
            c.only_a.push(tag.to_string());
            continue;
        };
        let (pa, pb) = pairs_of(&xa.reps, &xb.reps);
        for (reads, rows, per_sec) in [
            (false, &mut c.rows, "ops/s"),
            (true, &mut c.read_rows, "reads/s"),
        ] {
            let (Some(fa), Some(fb)) = (figures(&pa, reads), figures(&pb, reads)) else {
                continue;
            };
            let mut r = paired_row(tag, (fa, fb), (&pa, &pb), reads, t, per_sec);
            r.explanation = (!reads).then(|| explain::explain(&pa, &pb)).flatten();
            rows.push(r);
        }
        c.counts.extend(counts::count_row(tag, &pa, &pb));
        c.readers
            .extend(readers::ReaderRow::of(tag, (&pa, &pb), 0.0));
        c.rows.extend(roles::rows((&pa, &pb), true, (t, 0.0)));
        if let (Some(a), Some(b)) = (io_figures(&pa), io_figures(&pb)) {
            c.io_rows.push(IoRow {
                cell: tag.to_string(),
                a,
                b,
            });
        }
    }
    c.only_b = b_of
        .keys()
        .filter(|k| !seen.contains(*k))
        .map(|k| k.to_string())
        .collect();
    c
}

/// The pairs of records: the repetitions both arms have, the last record of each (a
/// repetition recorded twice, e.g. after a lone half of a pair was kept, counts once).
pub fn pairs_of<'a>(a: &[&'a Record], b: &[&'a Record]) -> (Vec<&'a Record>, Vec<&'a Record>) {
    let last = |v: &[&'a Record]| -> BTreeMap<u32, &'a Record> {
        v.iter().map(|r| (r.repetition, *r)).collect()
    };
    let (la, lb) = (last(a), last(b));
    la.iter()
        .filter_map(|(rep, ra)| lb.get(rep).map(|rb| (*ra, *rb)))
        .unzip()
}

/// Wall seconds of a record's run, copies and verification included (`wall_ms`); of
/// records without it, from its start to its end.
pub fn wall_secs(r: &Record) -> f64 {
    r.wall_ms.map_or_else(|| run_secs(r), |ms| ms / 1000.0)
}

/// Wall seconds of a record's run, from its start to its end.
pub fn run_secs(r: &Record) -> f64 {
    let t = |s: &str| chrono::DateTime::parse_from_rfc3339(s).ok();
    match (t(&r.started_at), t(&r.finished_at)) {
        (Some(a), Some(b)) => (b - a).num_milliseconds().max(0) as f64 / 1000.0,
        _ => 0.0,
    }
}

/// The runs of a cell whose pairs formed inside them (records in pairs, A's and B's of each
/// repetition), summed: of its operations or of a mixed cell's reads; with the pilot's runs
/// apart when `--precision` fixed the count after a pilot; and the number of pairs. `None`
/// unless every record carries its units.
pub fn inside_batches(
    pa: &[&Record],
    pb: &[&Record],
    reads: bool,
) -> Option<(Vec<Batch>, Option<Vec<Batch>>, usize)> {
    pa.first()?.paired.as_ref()?;
    let pilot = pa
        .iter()
        .chain(pb)
        .filter_map(|r| r.paired.as_ref()?.pilot_repetitions)
        .max();
    let (mut all, mut before, mut pairs) = (Vec::new(), Vec::new(), 0);
    for (ra, rb) in pa.iter().zip(pb) {
        let (ua, ub) = (ra.paired.as_ref()?, rb.paired.as_ref()?);
        let (ua, ub) = if reads {
            (ua.reads(), ub.reads())
        } else {
            (ua.ops(), ub.ops())
        };
        if ua.is_empty() || ub.is_empty() {
            continue;
        }
        pairs += ua.len().min(ub.len());
        let run = run_batch(&ua, &ub);
        if pilot.is_some_and(|p| ra.repetition <= p) {
            before.push(run);
        }
        all.push(run);
    }
    Some((all, pilot.map(|_| before), pairs))
}

/// A row of an A/B comparison: from pairs inside the runs when the records carry them,
/// else from pairs of whole runs.
fn paired_row(
    cell: &str,
    (fa, fb): (Figures, Figures),
    (pa, pb): (&[&Record], &[&Record]),
    reads: bool,
    t: f64,
    per_sec: &'static str,
) -> Row {
    let secs: f64 = pa.iter().chain(pb).map(|r| wall_secs(r)).sum();
    if let Some((all, pilot, pairs)) = inside_batches(pa, pb, reads) {
        let kind = pa[0].paired.as_ref().map(|p| p.pairing);
        let per_op = kind.is_some_and(|k| k.per_operation(pa[0].mode == ModeKind::Continuous));
        // Paired runs run both arms at once: their records share one wall time.
        let secs: f64 = pa.iter().map(|r| wall_secs(r)).sum();
        // A test needs as many runs as an unpaired one needs repetitions.
        let enough = all.len() >= MIN_REPETITIONS;
        let throughput = enough
            .then(|| throughput_ratio(&all, pilot.as_deref()))
            .flatten();
        // Medians run by run where a unit is one operation; p99 has no paired test.
        let p50 = (enough && per_op && !reads)
            .then(|| {
                let runs: Vec<(Vec<Unit>, Vec<Unit>)> = pa
                    .iter()
                    .zip(pb)
                    .filter_map(|(a, b)| Some((a.paired.as_ref()?.ops(), b.paired.as_ref()?.ops())))
                    .collect();
                let refs: Vec<(&[Unit], &[Unit])> =
                    runs.iter().map(|(a, b)| (&a[..], &b[..])).collect();
                median_ratio(&refs)
            })
            .flatten();
        let tests = [throughput, p50, None];
        let ratios = estimates(&tests, median_ratios(&fa, &fb));
        let mut r = row(cell, (fa, fb), tests, ratios, t, per_sec);
        r.pairs = Some(PairsBehind {
            pairing: kind.map_or("inside", PairingKind::as_str),
            pairs,
            runs: all.len(),
            secs,
        });
        return r;
    }
    run_pairs_row(cell, (fa, fb), pa.len(), secs, t, per_sec)
}

/// A row of pairs of whole runs (repetition `i` of A with repetition `i` of B): the paired
/// t-test on their log ratios, figure by figure.
fn run_pairs_row(
    cell: &str,
    (fa, fb): (Figures, Figures),
    runs: usize,
    secs: f64,
    t: f64,
    per_sec: &'static str,
) -> Row {
    let enough = runs >= MIN_REPETITIONS;
    let tests = std::array::from_fn(|i| {
        let enough = enough && fa.testable(i) && fb.testable(i);
        let pairs: Vec<(f64, f64)> = fa.values[i]
            .iter()
            .copied()
            .zip(fb.values[i].iter().copied())
            .collect();
        enough.then(|| paired_log(&pairs)).flatten()
    });
    // Untested, the geometric mean of the pairs' ratios all the same (as a test would).
    let untested = std::array::from_fn(|i| {
        let logs: Option<Vec<f64>> = fa.values[i]
            .iter()
            .zip(&fb.values[i])
            .map(|(&x, &y)| (x > 0.0 && y > 0.0).then(|| (y / x).ln()))
            .collect();
        logs.filter(|l| !l.is_empty())
            .map(|l| (l.iter().sum::<f64>() / l.len() as f64).exp())
    });
    let ratios = estimates(&tests, untested);
    let mut r = row(cell, (fa, fb), tests, ratios, t, per_sec);
    r.pairs = Some(PairsBehind {
        pairing: "runs",
        pairs: runs,
        runs,
        secs,
    });
    r
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::Variant;

    fn reps(tps: &[f64], arm: Option<&str>) -> Vec<Record> {
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
        let up = RatioTest {
            ratio: 1.2,
            ci: (1.15, 1.3),
        };
        let down = RatioTest {
            ratio: 0.8,
            ci: (0.7, 0.85),
        };
        // Significant, but the interval reaches into the ±10 % band: not a verdict.
        let near = RatioTest {
            ratio: 1.2,
            ci: (1.05, 1.3),
        };
        assert_eq!(change(Some(1.05), Some(&up), 0.1, true), Change::Same);
        assert_eq!(change(Some(1.2), Some(&up), 0.1, true), Change::Better);
        assert_eq!(change(Some(0.8), Some(&down), 0.1, true), Change::Worse);
        assert_eq!(change(Some(1.2), Some(&up), 0.1, false), Change::Worse);
        assert_eq!(change(Some(1.2), Some(&near), 0.1, true), Change::Noise);
        assert_eq!(change(Some(1.2), Some(&near), 0.0, true), Change::Better);
        assert_eq!(change(Some(1.2), None, 0.1, true), Change::Untested);
        assert_eq!(change(None, None, 0.1, false), Change::Same);
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
        // A wide spread: beyond 10 % on the median, and not significant.
        let wobbly = reps(&[88.0, 140.0, 60.0, 130.0, 85.0], None);
        let c = compare(&a, &wobbly, 10.0, 0.0);
        assert!(!c.rows[0].regressed(), "{:?}", c.rows[0]);
        assert_eq!(c.rows[0].verdict(), "within noise");
        // Too few repetitions: no verdict, however large the change.
        let c = compare(&a[..2], &slow[..2], 10.0, 0.0);
        assert_eq!(c.regressions(), 0);
        assert_eq!(c.rows[0].verdict(), "no verdict (2/2 repetitions)");
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
        assert_eq!(c.rows[0].changes[0], Change::Noise);
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

    #[test]
    fn ab_results_are_compared_pair_by_pair() {
        // Drift over time: each pair B is 20 % slower than its A.
        let a = reps(&[100.0, 90.0, 80.0, 70.0, 60.0], Some("A"));
        let b = reps(&[80.0, 72.5, 64.0, 55.5, 48.0], Some("B"));
        let records: Vec<Record> = a.into_iter().chain(b).collect();
        let c = paired(&records, 10.0);
        assert!(c.paired);
        assert_eq!(c.rows.len(), 1);
        let t = c.rows[0].tests[0].unwrap();
        assert!(t.ci.0 < 0.8 && 0.8 < t.ci.1 && t.ci.1 < 0.9, "{t:?}");
        assert_eq!(c.regressions(), 1);
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

2 cells compared: 1 regressed, 0 improved, 1 within noise (a verdict needs the ratio's 95 % confidence interval [..], by Welch's t-test on logarithms, to lie entirely beyond ±10%, and p50 and p99 are tested only with at least 20 and 1,000 operations a repetition; B/A above 1 is faster for ops/s, slower for latency; ±% is the coefficient of variation over repetitions)
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

    #[test]
    fn pairs_inside_runs_give_the_pooled_ratio_inside_its_interval() {
        // B 8 % slower on every operation: throughput ratio 1/1.08, p50 ratio 1.08.
        let records = lockstep(6, 60, 1.08);
        let c = paired(&records, 5.0);
        let r = &c.rows[0];
        let t = r.tests[0].unwrap();
        assert!((t.ratio - 1.0 / 1.08).abs() < 0.002, "{t:?}");
        assert_eq!(
            r.ratios[0],
            Some(t.ratio),
            "the printed ratio is the estimate"
        );
        assert!(t.ci.0 <= t.ratio && t.ratio <= t.ci.1);
        let p50 = r.tests[1].unwrap();
        assert!((p50.ratio - 1.08).abs() < 0.03, "{p50:?}");
        assert!(r.tests[2].is_none(), "p99 has no paired test");
        assert_eq!(r.changes[0], Change::Worse);
        let p = r.pairs.as_ref().unwrap();
        assert_eq!((p.pairing, p.pairs, p.runs), ("lockstep", 360, 6));
        assert!(
            r.verdict().starts_with("REGRESSION (ops/s -7.4%"),
            "{}",
            r.verdict()
        );
        // Identical arms but for B's own noise: within noise.
        let c = paired(&lockstep(6, 60, 1.0), 5.0);
        assert_eq!(c.rows[0].verdict(), "within noise");
        // Too few pairs for a test: no verdict, said so.
        let c = paired(&lockstep(2, 30, 1.5), 5.0);
        assert_eq!(c.rows[0].verdict(), "no verdict (2 runs; a test needs 3)");
    }

    #[test]
    fn paired_runs_print_their_own_estimate() {
        // Pairs of runs whose ratio of medians (0.97) differs from the pairs' geometric mean.
        let a = reps(&[100.0, 50.0, 80.0, 120.0, 90.0], Some("A"));
        let b = reps(&[110.0, 60.0, 78.0, 116.0, 100.0], Some("B"));
        let records: Vec<Record> = a.into_iter().chain(b).collect();
        let c = paired(&records, 10.0);
        let r = &c.rows[0];
        let t = r.tests[0].unwrap();
        assert_eq!(r.ratios[0], Some(t.ratio));
        assert!(t.ci.0 <= t.ratio && t.ratio <= t.ci.1);
        assert_eq!(r.pairs.as_ref().unwrap().pairing, "runs");
    }
}
