//! The command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::compare::variants::Selector;
use crate::compare::{DEFAULT_BETWEEN_RUNS_PCT, DEFAULT_THRESHOLD_PCT, parse_threshold};
use crate::sweep::Pairing;
use bench_core::display::Display;

/// Run the Lance `__manifest` commit benchmark as a declarative sweep.
#[derive(Debug, Parser)]
#[command(
    name = "bench",
    version,
    about = "Declarative sweeps of the Lance __manifest commit benchmark",
    long_about = None
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate a plan and list its cells in order with their status; runs nothing.
    Plan {
        /// The plan file (TOML).
        plan: PathBuf,
        #[command(flatten)]
        over: OverrideArgs,
    },
    /// Run every pending cell of a plan; re-running the same command resumes.
    Run {
        /// The plan file (TOML).
        plan: PathBuf,
        #[command(flatten)]
        run: RunArgs,
    },
    /// A/B of two builds: every cell run by the baseline's workers and the candidate's,
    /// paired inside each run (operation by operation, or slice by slice), then per cell
    /// the ratio B/A with its confidence interval and a verdict.
    Ab {
        /// The plan file (TOML); each of a cell's `run.repetitions` runs both arms.
        plan: PathBuf,
        /// The candidate's bench binary (B), e.g. built against another lance.
        #[arg(long, value_name = "EXE")]
        candidate: PathBuf,
        /// The baseline's bench binary (A) [default: this bench].
        #[arg(long, value_name = "EXE")]
        baseline: Option<PathBuf>,
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        pairs: PairArgs,
        #[command(flatten)]
        verdict: VerdictArgs,
    },
    /// Show how far a sweep is: done, failed (with reasons), pending and stale cells.
    Status {
        /// The plan file (TOML).
        plan: PathBuf,
        #[command(flatten)]
        over: OverrideArgs,
        /// Exit 3 where a cell failed, else 8 where a cell's record holds a finding
        /// (anomalies, stuck readers or writers, writes failed but applied), else 7 where a
        /// verification could not check a part (NOT CHECKED), each named; else 0.
        #[arg(long)]
        fail_on_finding: bool,
    },
    /// Write report.md and SVG charts from a results directory's results.jsonl.
    Report {
        /// A results directory (results/<plan name>/ or a sweep's --out).
        results: PathBuf,
    },
    /// Rebuild summary.csv and the report from results.jsonl (e.g. after concatenating
    /// results from several machines).
    Summarize {
        /// A results directory holding results.jsonl.
        results: PathBuf,
    },
    /// Combine the results directories of a sweep's shards (`bench run --shard`) into one:
    /// each planned cell once, duplicates checked, missing cells listed (exit 6); then
    /// summary.csv and the report. Run it again when a late shard finishes.
    Merge {
        /// The merged results directory (new, empty, or an earlier merge).
        out: PathBuf,
        /// The shards' results directories.
        #[arg(required = true, value_name = "SHARD_DIR")]
        shards: Vec<PathBuf>,
        /// Merge directories run against different stores (`--root`, storage options) all
        /// the same; by default that is refused.
        #[arg(long)]
        allow_mixed_roots: bool,
    },
    /// Compare two result sets cell by cell (or the arms of an A/B results directory):
    /// throughput, p50 and p99 with ratios B/A and verdicts that survive noise.
    Compare(CompareArgs),
    /// Predict continuous cells' commit latency and throughput on a store with another
    /// latency, from their records' round trips on the critical path.
    Predict(PredictArgs),
    /// Append a results directory's cells to lance-bench's `results` table (a Lance
    /// dataset): one row per cell (per arm), its runs' throughputs as `values`. Publishing
    /// the same results again adds nothing.
    Publish(PublishArgs),
    /// Read a `results` table's series (bench's and any other rows), find where each
    /// stepped (change points), print them and draw a chart of each.
    History(HistoryArgs),
    /// Judge the histories a sweep kept (`histories/` of a results directory) again,
    /// offline, with bench's checkers: what readers saw, how the writes ended, the copy's
    /// chain of versions against the commits. Exit 0 valid, 1 anomalies, 2 undecided,
    /// 3 bad input.
    Check {
        /// A history's folder (histories/<cell>_r<N>/), its history.jsonl, or a results
        /// directory (every history in it).
        path: PathBuf,
        /// Print the findings as JSON.
        #[arg(long)]
        json: bool,
        /// Also write each history for Elle's list-append checker (elle-cli, adya):
        /// elle.json and transaction-order.json in its folder.
        #[arg(long, value_name = "FORMAT", value_parser = ["elle"])]
        export: Option<String>,
    },
    /// One worker process of a cell (started by `bench run`; its arguments are the
    /// coordinator's, read by the core's protocol).
    #[command(hide = true)]
    Worker {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Print what this binary is as a worker: protocol, bench and lance versions (JSON).
    #[command(hide = true)]
    WorkerInfo,
    /// Serve a directory catalog through lance's REST adapter: a rest cell's server (which
    /// `bench run` starts), or the external server of a plan's `rest.external`.
    #[command(
        override_usage = bench_core::serve::USAGE,
        after_help = bench_core::serve::HELP
    )]
    Serve {
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            num_args = 0..,
            hide = true
        )]
        args: Vec<String>,
    },
}

/// `--progress`'s values, with what each shows.
fn display_parser() -> impl clap::builder::TypedValueParser<Value = Display> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new([
        PossibleValue::new("auto")
            .help("Bars when stderr is a terminal and not in CI, lines otherwise"),
        PossibleValue::new("bars"),
        PossibleValue::new("lines"),
    ])
    .map(|s| match s.as_str() {
        "bars" => Display::Bars,
        "lines" => Display::Lines,
        _ => Display::Auto,
    })
}

/// Options of `bench run` (and `bench ab`).
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub over: OverrideArgs,
    /// Start over: move earlier outputs to <out>/previous-<time>/ and run every cell.
    #[arg(long)]
    pub fresh: bool,
    /// Also re-run cells that failed in an earlier run.
    #[arg(long)]
    pub retry_failed: bool,
    /// Exit 8 (where no cell failed: that is 3) when a cell's record holds a finding against
    /// the catalog: anomalies of the consistency checker, readers or writers a cleanup left
    /// stuck, writes answered with an error whose effect landed; else 7 where a verification
    /// could not check a part (NOT CHECKED); each is named at the end.
    #[arg(long)]
    pub fail_on_finding: bool,
    /// How to show progress.
    #[arg(long, default_value = "auto", value_parser = display_parser())]
    pub progress: Display,
    /// Write a trace of each run: every worker's first N operations (5 if not given) with
    /// their requests, as a Chrome trace event file under <out>/traces/ that Perfetto and
    /// chrome://tracing open (replaces the plan's run.trace_operations).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "5",
          value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub trace: Option<u32>,
    /// Price the cells' requests with this table of object stores' prices instead of
    /// bench's own (US East list prices, 2026; the shape is docs/cost.md's).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Say more of each finished run: its cost, its distance from the floor, its bytes and
    /// what __manifest held (the summary and the report have them either way).
    #[arg(long, short)]
    pub verbose: bool,
}

/// How `bench ab` pairs its arms, and how long each cell runs.
#[derive(Debug, Clone, Args)]
pub struct PairArgs {
    /// How the arms form pairs: `alternate` takes turns inside every run of a cell
    /// (operation by operation in continuous cells, time slice by slice in concurrent and
    /// mixed cells); `duet` runs both arms at once; `runs` pairs whole runs (A B, B A, ...).
    #[arg(long, value_enum, default_value_t = Pairing::Alternate)]
    pub pairing: Pairing,
    /// The length of a time slice (and of a duet's bucket of time), in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(10..=600_000))]
    pub slice_ms: u64,
    /// Instead of running each cell until its interval decides at --threshold: until the
    /// 95 % interval of its throughput ratio is within ±PCT (Stein's two-stage rule: a
    /// pilot fixes the count), or its budget runs out.
    #[arg(long, value_name = "PCT", value_parser = parse_precision, conflicts_with = "no_extend")]
    pub precision: Option<f64>,
    /// Run only the plan's repetitions of each cell, decided or not (by default a cell runs
    /// on until its interval lies wholly beyond or wholly within ±--threshold, or its
    /// budget runs out).
    #[arg(long)]
    pub no_extend: bool,
    /// The most time one cell may take, its copies and verification included, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120,
          value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub budget_secs: u64,
}

impl PairArgs {
    /// The options, checked: `--precision` needs pairs inside the runs. Without it (nor
    /// `--no-extend`), each cell runs until it decides at `threshold_pct`.
    pub fn options(&self, threshold_pct: f64) -> Result<crate::sweep::AbOptions, String> {
        if self.precision.is_some() && self.pairing == Pairing::Runs {
            return Err(
                "--precision needs pairs inside each run of a cell: use --pairing alternate \
                 (the default) or duet"
                    .into(),
            );
        }
        let until = match (self.precision, self.no_extend) {
            (Some(p), _) => crate::sweep::Until::Precision(p / 100.0),
            (None, true) => crate::sweep::Until::Repetitions,
            // A threshold of 0 decides nothing but the sign: no band to be within.
            (None, false) if threshold_pct <= 0.0 => crate::sweep::Until::Repetitions,
            (None, false) => crate::sweep::Until::Decided(threshold_pct / 100.0),
        };
        Ok(crate::sweep::AbOptions {
            pairing: self.pairing,
            slice: std::time::Duration::from_millis(self.slice_ms),
            until,
            budget: std::time::Duration::from_secs(self.budget_secs),
        })
    }
}

fn parse_precision(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(p) if p.is_finite() && p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!(
            "`{s}` is not a precision in percent (e.g. 2 for ±2 %, above 0 and at most 100)"
        )),
    }
}

/// Options that change where a plan runs.
#[derive(Debug, Clone, Args)]
pub struct OverrideArgs {
    /// Results directory [default: results/<plan name>; for bench ab, results/<plan
    /// name>-ab].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Store root, replacing the plan's `root`: a local directory or s3://BUCKET/PREFIX.
    #[arg(long)]
    pub root: Option<String>,
    /// A storage option passed to lance, replacing the plan's (repeatable), e.g.
    /// aws_endpoint=http://127.0.0.1:9000. Prefer the environment or a profile for secrets.
    #[arg(long = "storage-option", value_name = "KEY=VALUE", value_parser = KeyValue)]
    pub storage_option: Vec<(String, String)>,
    /// Only shard K of N of the cells (K from 1), e.g. 2/8; `auto` takes K and N from a
    /// Slurm or AWS Batch array job, `auto/N` K from a Kubernetes Indexed Job. Merge the
    /// shards' results directories with `bench merge`.
    #[arg(long, value_name = "K/N|auto|auto/N")]
    pub shard: Option<crate::sweep::shard::ShardArg>,
    /// Start each cell's writers through this command, replacing the plan's
    /// `run.launcher`, e.g. "srun --ntasks={workers} --input=all --kill-on-bad-exit=1".
    #[arg(long, value_name = "COMMAND")]
    pub launcher: Option<String>,
    /// Only the cells whose id matches GLOB (repeatable: any of them; `*` any run of
    /// characters, `?` one), e.g. 'cont_*' or '*_rows_1000'; `bench plan` lists the ids.
    #[arg(long, value_name = "GLOB")]
    pub only: Vec<String>,
    /// Set a plan key as if the plan said it (repeatable): a dotted key and a TOML value,
    /// e.g. run.repetitions=5, matrix.sizes=[100,1000], name=nightly. Validated with the
    /// plan, and part of the cells' keys.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = KeyValue)]
    pub set: Vec<(String, String)>,
}

impl From<OverrideArgs> for crate::sweep::Overrides {
    fn from(o: OverrideArgs) -> Self {
        crate::sweep::Overrides {
            out: o.out,
            root: o.root,
            storage: o.storage_option,
            ab: None,
            shard: o.shard,
            launcher: o.launcher,
            trace: None,
            prices: None,
            only: o.only.into_iter().map(bench_core::glob::Glob).collect(),
            set: o.set,
        }
    }
}

/// A `KEY=VALUE` option (`--set`, `--storage-option`). A malformed one is said in words of
/// its own, without its text where that names a secret (clap's message would repeat it whole).
#[derive(Debug, Clone, Copy)]
pub struct KeyValue;

impl clap::builder::TypedValueParser for KeyValue {
    type Value = (String, String);

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<(String, String), clap::Error> {
        let s = value.to_string_lossy();
        if let Some((k, v)) = s.split_once('=')
            && !k.trim().is_empty()
            && !v.is_empty()
        {
            return Ok((k.trim().to_string(), v.to_string()));
        }
        let flag = arg.and_then(|a| a.get_long()).unwrap_or("set");
        // What was given may be a secret itself (a value without its key): a storage option
        // is shown only where it is the name of one known to carry none.
        let key = s.split_once('=').map_or(&*s, |(k, _)| k).trim();
        let hidden = match flag {
            "storage-option" => !crate::plan::is_public_option(key),
            _ => crate::plan::hides(key),
        };
        let shown = match hidden {
            true => "text that may hold a secret (not shown)".to_string(),
            false => format!("`{s}`"),
        };
        let message = format!("--{flag} takes KEY=VALUE, not {shown}\n");
        Err(clap::Error::raw(clap::error::ErrorKind::ValueValidation, message).with_cmd(cmd))
    }
}

/// `bench compare A B` (or `bench compare AB_DIR`).
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Baseline: a results directory or a results JSONL file; alone, a results directory
    /// of `bench ab`, whose arm A is compared with its arm B.
    pub a: PathBuf,
    /// Candidate: a results directory or a results JSONL file.
    pub b: Option<PathBuf>,
    #[command(flatten)]
    pub verdict: VerdictArgs,
    /// How far two separate runs of the same build differ on this machine (the 95th
    /// percentile of their ratios, as `scripts/figures/noise.sh compare` measures it): added to
    /// each interval, so that a machine's drift between runs is no verdict. 0 for a machine
    /// known to hold still; not used for an A/B directory, whose pairs cancel it.
    #[arg(long, value_name = "PCT", default_value_t = DEFAULT_BETWEEN_RUNS_PCT,
          value_parser = parse_threshold)]
    pub between_runs: f64,
    /// Also write the comparison as a Markdown table to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Within one results directory: the baseline variant, by a build of the plan's
    /// `[builds]` (`main`), a property value (`shards=1`) or `inline_index`/`no_index`;
    /// several comma-separated. Every other variant in those dimensions is compared with it.
    #[arg(long, value_name = "VARIANT", value_parser = Selector::parse)]
    pub against: Option<Selector>,
    /// With --against: compare only this variant (named in the same dimensions).
    #[arg(long, value_name = "VARIANT", value_parser = Selector::parse, requires = "against")]
    pub variant: Option<Selector>,
}

impl From<CompareArgs> for crate::compare::CompareArgs {
    fn from(a: CompareArgs) -> Self {
        crate::compare::CompareArgs {
            a: a.a,
            b: a.b,
            verdict: a.verdict.into(),
            between_runs: a.between_runs,
            markdown: a.markdown,
            against: a.against,
            variant: a.variant,
        }
    }
}

/// What makes a verdict, shared by `bench compare` and `bench ab`.
#[derive(Debug, Clone, Args)]
pub struct VerdictArgs {
    /// Changes within this many percent are noise and not flagged.
    #[arg(long, value_name = "PCT", default_value_t = DEFAULT_THRESHOLD_PCT,
          value_parser = parse_threshold)]
    pub threshold: f64,
    /// Exit with code 5 when any cell regressed: significantly beyond the threshold in
    /// time, or in its exact counts (more requests or bytes per operation in every run;
    /// round trips are timed, shown and not judged), as --gate says.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// Exit with code 7 when no cell regressed but some cell's time was not judged: its
    /// interval reaches across ±threshold (undecided), or it has too few runs for a test.
    /// For a gate that passes only what it could judge.
    #[arg(long)]
    pub fail_on_undecided: bool,
    /// Which verdicts --fail-on-regression exits on: `counts` (requests and bytes per
    /// operation: exact, the same on any machine; round trips are shown, not judged),
    /// `time` (throughput, p50, p99) or `both`.
    #[arg(long, value_enum, default_value_t = GateArg::Both)]
    pub gate: GateArg,
    /// How the comparison is printed: `text`; `github`: Markdown for a pull request
    /// comment (a headline, the cells beyond the threshold, every cell inside <details>);
    /// `json`: one JSON document (docs/compare.md). With github and json, nothing else on
    /// stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// The same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

/// `--gate` of `bench compare` and `bench ab`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GateArg {
    Counts,
    Time,
    Both,
}

/// `--format` of `bench compare` and `bench ab`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Text,
    Github,
    Json,
}

impl From<VerdictArgs> for crate::compare::VerdictArgs {
    fn from(v: VerdictArgs) -> Self {
        crate::compare::VerdictArgs {
            threshold: v.threshold,
            fail_on_regression: v.fail_on_regression,
            fail_on_undecided: v.fail_on_undecided,
            gate: match v.gate {
                GateArg::Counts => crate::compare::Gate::Counts,
                GateArg::Time => crate::compare::Gate::Time,
                GateArg::Both => crate::compare::Gate::Both,
            },
            format: match (v.json, v.format) {
                (true, _) | (_, OutputFormat::Json) => crate::compare::Format::Json,
                (_, OutputFormat::Text) => crate::compare::Format::Text,
                (_, OutputFormat::Github) => crate::compare::Format::Github,
            },
        }
    }
}

/// `bench predict`.
#[derive(Debug, Clone, Args)]
pub struct PredictArgs {
    /// A results directory or a results JSONL file.
    pub results: PathBuf,
    /// The latency of the store to predict for, in ms a request.
    #[arg(long, value_name = "MS")]
    pub latency_ms: f64,
    /// The latency of the store the records were measured on, in ms a request (e.g. 20 for
    /// `scripts/s3-server.py --latency-ms 20`) [default: each cell's fastest request, as
    /// its records have it].
    #[arg(long, value_name = "MS")]
    pub measured_at_ms: Option<f64>,
    /// The latency of one kind of request where it differs from --latency-ms, e.g.
    /// `conditional_put=60` (kinds as in io_per_op: get, head, put, conditional_put, list,
    /// delete, copy); repeat for several.
    #[arg(long = "kind-ms", value_name = "KIND=MS",
          value_parser = bench_core::predict::parse_kind_ms)]
    pub kind_ms: Vec<(String, f64)>,
    /// One JSON object a cell instead of the table.
    #[arg(long)]
    pub json: bool,
}

impl From<PredictArgs> for bench_core::predict::PredictArgs {
    fn from(a: PredictArgs) -> Self {
        bench_core::predict::PredictArgs {
            results: a.results,
            latency_ms: a.latency_ms,
            measured_at_ms: a.measured_at_ms,
            kind_ms: a.kind_ms,
            json: a.json,
        }
    }
}

/// `bench publish`.
#[derive(Debug, Clone, Args)]
pub struct PublishArgs {
    /// A finished results directory (results/<plan name>/ or a sweep's --out).
    pub results: PathBuf,
    /// Where lance-bench's database is: a local directory or s3://BUCKET/PREFIX; the table
    /// is `results.lance` under it [default: $LANCE_BENCH_URI, else ~/.lance-bench].
    #[arg(long, value_name = "URI")]
    pub to: Option<String>,
    /// A storage option passed to lance (repeatable), e.g.
    /// aws_endpoint=http://127.0.0.1:9000. Prefer the environment or a profile for secrets.
    #[arg(long = "storage-option", value_name = "KEY=VALUE", value_parser = KeyValue)]
    pub storage_option: Vec<(String, String)>,
    /// `dut.name`: what was measured.
    #[arg(long, value_name = "NAME", default_value = "lance")]
    pub dut_name: String,
    /// `dut.version` [default: the records' lance_version, with its git revision where
    /// lance was built from one].
    #[arg(long, value_name = "VERSION")]
    pub dut_version: Option<String>,
    /// `dut.timestamp`, seconds since the epoch: the measured build's commit time, e.g.
    /// `$(git -C lance log -1 --format=%ct)` [default: when the cell's first run started].
    #[arg(long, value_name = "SECS")]
    pub dut_timestamp: Option<i64>,
    /// `test_bed.name` [default: the hostname in the records].
    #[arg(long, value_name = "NAME")]
    pub test_bed: Option<String>,
}

impl From<PublishArgs> for crate::results_table::PublishArgs {
    fn from(a: PublishArgs) -> Self {
        crate::results_table::PublishArgs {
            results: a.results,
            to: a.to,
            storage: a.storage_option.into_iter().collect(),
            dut_name: a.dut_name,
            dut_version: a.dut_version,
            dut_timestamp: a.dut_timestamp,
            test_bed: a.test_bed,
        }
    }
}

/// `bench history`.
#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    /// Where lance-bench's database is: a local directory or s3://BUCKET/PREFIX [default:
    /// $LANCE_BENCH_URI, else ~/.lance-bench].
    pub uri: Option<String>,
    /// Only the series whose benchmark_name matches GLOB (`*` any run of characters, `?`
    /// one), e.g. 'manifest/default/*'.
    #[arg(long, value_name = "GLOB")]
    pub benchmark: Option<String>,
    /// Exit with code 5 when a series' newest change point made it worse by more than PCT
    /// percent (lower throughput, or a longer time).
    #[arg(long, value_name = "PCT", value_parser = parse_threshold)]
    pub fail_on_regression: Option<f64>,
    /// Where each series' chart (SVG) is written.
    #[arg(long, value_name = "DIR", default_value = "history")]
    pub charts: PathBuf,
    /// A storage option passed to lance (repeatable), as for bench publish.
    #[arg(long = "storage-option", value_name = "KEY=VALUE", value_parser = KeyValue)]
    pub storage_option: Vec<(String, String)>,
    /// Print the series as one JSON document (docs/publish.md), nothing else on stdout.
    #[arg(long)]
    pub json: bool,
}

impl From<HistoryArgs> for crate::results_table::HistoryArgs {
    fn from(a: HistoryArgs) -> Self {
        crate::results_table::HistoryArgs {
            uri: a.uri,
            storage: a.storage_option.into_iter().collect(),
            benchmark: a.benchmark.map(bench_core::results::history::Glob),
            fail_on_regression: a.fail_on_regression,
            charts: a.charts,
            json: a.json,
        }
    }
}
