//! The sweep: plan -> cells -> (golden, isolate, run, verify) per cell -> exporters, with
//! the checkpoint brought up to date around every cell.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::{Path, PathBuf};

use tokio::sync::watch;

use crate::catalog;
use crate::coordinator::{self, CellRun, Outcome};
use crate::error::{BenchError, exit};
use crate::export::{self, ReadFigures, Record, csv, jsonl};
use crate::golden::{self, Golden, GoldenConfig};
use crate::plan::{Cell, Cleanup, GoldenSpec, LANCE_VERSION, Mode, Plan, Step, expand};
use crate::progress::{Display, Progress, now_utc};
use crate::state::{CellStatus, State, Status};
use crate::stats::throughput;
use crate::store::Store;
use crate::verify;
use crate::worker::WorkerArgs;

/// What the command line changes of a plan.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub out: Option<PathBuf>,
    pub root: Option<String>,
    pub storage: Vec<(String, String)>,
}

/// A plan resolved against its results directory and store.
pub struct Sweep {
    pub plan: Plan,
    pub plan_path: PathBuf,
    pub out: PathBuf,
    pub store: Store,
    pub steps: Vec<Step>,
}

impl Sweep {
    /// Load the plan, apply the command line's overrides, and resolve where its outputs and
    /// store are. Writes nothing.
    pub async fn prepare(plan_path: &Path, over: &Overrides) -> Result<Sweep, BenchError> {
        let mut plan = Plan::load(plan_path)?;
        plan.override_with(over.root.as_deref(), &over.storage);
        let out = over.out.as_deref();
        let out = out
            .map(Path::to_path_buf)
            .unwrap_or_else(|| Path::new("results").join(&plan.name));
        let out = std::path::absolute(&out)
            .map_err(|e| BenchError::Output(format!("cannot resolve {}: {e}", out.display())))?;
        let root = match &plan.root {
            Some(r) => r.clone(),
            None => out.join("store").display().to_string(),
        };
        let store = Store::open(&root, &plan.storage).await?;
        let steps = expand(&plan, &store.root_uri());
        Ok(Sweep {
            plan,
            plan_path: plan_path.to_path_buf(),
            out,
            store,
            steps,
        })
    }

    fn cells(&self) -> impl Iterator<Item = &Cell> {
        crate::plan::cells(&self.steps).into_iter()
    }

    fn results_path(&self) -> PathBuf {
        self.out.join(jsonl::RESULTS_FILE)
    }

    fn summary_path(&self) -> PathBuf {
        self.out.join(csv::SUMMARY_FILE)
    }

    /// Load the checkpoint (read-only), or a fresh one if the directory has none.
    fn state(&self) -> Result<State, BenchError> {
        State::load(&self.out, &self.plan.name)
    }
}

/// `bench plan`: print the cells in order with their status. Runs and writes nothing.
pub async fn show_plan(sweep: &Sweep) -> Result<String, BenchError> {
    let state = sweep.state()?;
    let records = records_for_display(sweep);
    let mut s = String::new();
    let n = sweep.cells().count();
    s.push_str(&format!(
        "plan `{}` ({}): {n} cells, operation {}{}\n  results: {}\n  store:   {}\n\n",
        sweep.plan.name,
        sweep.plan_path.display(),
        sweep.plan.operation,
        match &sweep.plan.mixed {
            Some(m) => format!(
                " (mixed cells: {} x {} per commit)",
                m.reads_per_write, m.read_operation
            ),
            None => String::new(),
        },
        sweep.out.display(),
        sweep.store.root_uri(),
    ));
    s.push_str(&format!(
        "{:>4}  {:<40} {:<18} {}\n",
        "#", "cell", "key", "status"
    ));
    let mut i = 0;
    for step in &sweep.steps {
        match step {
            Step::Golden(g) => {
                let ready = if golden::find(&sweep.store, *g).await.is_some() {
                    "ready"
                } else {
                    "to build"
                };
                s.push_str(&format!(
                    "{:>4}  {:<40} {:<18} {ready}\n",
                    "",
                    format!("golden {}", g.id()),
                    ""
                ));
            }
            Step::Cell(c) => {
                i += 1;
                let key = c.key();
                let (_, label) = cell_status(&state, &records, c, sweep.plan.run.repetitions);
                s.push_str(&format!("{i:>4}  {:<40} {key:<18} {label}\n", c.id()));
            }
        }
    }
    Ok(s)
}

/// `bench status`: counts of done / failed / pending / stale cells, each failure with its
/// reason, and where the outputs are. Reads only.
pub fn show_status(sweep: &Sweep) -> Result<String, BenchError> {
    let state = sweep.state()?;
    let records = records_for_display(sweep);
    let mut counts = [0usize; 5];
    let mut failures = Vec::new();
    let mut partial = Vec::new();
    let cells: Vec<&Cell> = sweep.cells().collect();
    for c in &cells {
        let (st, label) = cell_status(&state, &records, c, sweep.plan.run.repetitions);
        counts[st as usize] += 1;
        if label.contains("repetitions") {
            partial.push(format!("  {}: {label}", c.id()));
        }
        if st == CellStatus::Failed {
            let reason = state.cells[&c.id()].reason.clone().unwrap_or_default();
            failures.push(format!(
                "  {}: {}",
                c.id(),
                reason.replace('\n', "\n      ")
            ));
        }
    }
    let mut s = format!(
        "plan `{}`: {} cells: {} done, {} failed, {} pending, {} stale (plan changed since they ran), {} interrupted\n",
        sweep.plan.name,
        cells.len(),
        counts[CellStatus::Done as usize],
        counts[CellStatus::Failed as usize],
        counts[CellStatus::Pending as usize],
        counts[CellStatus::Stale as usize],
        counts[CellStatus::Interrupted as usize],
    );
    if !partial.is_empty() {
        s.push_str("cells with some of their repetitions recorded (`bench run` runs the rest):\n");
        for p in partial {
            s.push_str(&p);
            s.push('\n');
        }
    }
    if !failures.is_empty() {
        s.push_str("failed cells (re-run them with `bench run --retry-failed`):\n");
        for f in failures {
            s.push_str(&f);
            s.push('\n');
        }
    }
    s.push_str(&format!(
        "results: {}\nsummary: {}\nstate:   {}\nstore:   {}\n",
        sweep.results_path().display(),
        sweep.summary_path().display(),
        State::path(&sweep.out).display(),
        sweep.store.root_uri()
    ));
    Ok(s)
}

/// The records for `bench plan` / `bench status`, read without repairing anything; an
/// unreadable file only hides the repetition counts (and says so).
fn records_for_display(sweep: &Sweep) -> Vec<Record> {
    jsonl::read_all(&sweep.results_path()).unwrap_or_else(|e| {
        eprintln!("warning: {e}; repetition counts are not shown");
        Vec::new()
    })
}

/// A cell's status as `bench run` will treat it, and its label: a cell with fewer records
/// than `repetitions` is not done, and the label says how many are recorded.
fn cell_status(state: &State, records: &[Record], c: &Cell, reps: u32) -> (CellStatus, String) {
    let (id, key) = (c.id(), c.key());
    let have = recorded(records, &id, &key);
    let st = match state.status(&id, &key) {
        CellStatus::Done if have < reps => CellStatus::Pending,
        s => s,
    };
    let label = if have > 0 && have < reps && st != CellStatus::Stale {
        format!("{} ({have}/{reps} repetitions recorded)", st.label())
    } else {
        st.label().to_string()
    };
    (st, label)
}

pub struct RunOptions {
    pub fresh: bool,
    pub retry_failed: bool,
    pub display: Display,
}

/// Totals of a `bench run`, mapped to an exit code.
#[derive(Debug, Default)]
pub struct RunReport {
    pub ran: u64,
    pub skipped_done: u64,
    pub failed: u64,
    pub failed_not_retried: u64,
    pub unverified: u64,
    pub interrupted: bool,
}

impl RunReport {
    pub fn exit_code(&self) -> u8 {
        if self.interrupted {
            exit::INTERRUPTED
        } else if self.failed + self.failed_not_retried + self.unverified > 0 {
            exit::CELLS_FAILED
        } else {
            exit::OK
        }
    }
}

fn io_err(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> BenchError {
    let msg = format!("cannot {what} {}", path.display());
    move |e| BenchError::Output(format!("{msg}: {e}"))
}

/// Move the outputs of an earlier run into `previous-<time>/` (nothing is deleted).
fn archive_outputs(sweep: &Sweep) -> Result<Option<PathBuf>, BenchError> {
    let files = [
        crate::state::STATE_FILE,
        jsonl::RESULTS_FILE,
        csv::SUMMARY_FILE,
        crate::report::REPORT_FILE,
        crate::report::CHART_DIR,
    ];
    let present: Vec<_> = files
        .iter()
        .filter(|f| sweep.out.join(f).exists())
        .collect();
    if present.is_empty() {
        return Ok(None);
    }
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let dest = sweep.out.join(format!("previous-{stamp}"));
    std::fs::create_dir_all(&dest).map_err(io_err("create", &dest))?;
    for f in present {
        let from = sweep.out.join(f);
        std::fs::rename(&from, dest.join(f)).map_err(io_err("move away", &from))?;
    }
    Ok(Some(dest))
}

/// Interrupt flag set by Ctrl-C or SIGTERM; a second signal exits at once.
fn watch_signals() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("install SIGTERM handler");
        let mut count = 0;
        loop {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            count += 1;
            if count == 1 {
                eprintln!(
                    "\ninterrupted: stopping the running cell (press Ctrl-C again to exit at once)"
                );
                let _ = tx.send(true);
            } else {
                std::process::exit(i32::from(exit::INTERRUPTED));
            }
        }
    });
    rx
}

/// `bench run`: run every pending cell, resuming from the checkpoint.
pub async fn run(sweep: &Sweep, opts: &RunOptions) -> Result<RunReport, BenchError> {
    let out = &sweep.out;
    // The store first: a bad root or a failed S3 preflight writes nothing locally.
    sweep.store.prepare().await?;
    std::fs::create_dir_all(out).map_err(io_err("create results directory", out))?;
    let _lock = crate::lock::acquire(out)?;
    if opts.fresh
        && let Some(dest) = archive_outputs(sweep)?
    {
        eprintln!("--fresh: earlier outputs moved to {}", dest.display());
    }
    let mut state = sweep.state()?;
    let results = sweep.results_path();
    if jsonl::repair_tail(&results).map_err(io_err("repair", &results))? {
        eprintln!(
            "{}: removed a torn last line left by a crash; its cell runs again",
            results.display()
        );
    }
    let mut records = jsonl::read_all(&results).map_err(BenchError::Output)?;

    // Copies of cells that were running when an earlier run died are dirty: remove them.
    for (id, c) in &state.cells {
        if c.status == Status::Running {
            sweep.store.remove_prefix(&format!("runs/{id}")).await?;
        }
    }
    // A crash between appending a result and checkpointing it: the records are the truth.
    let reps = sweep.plan.run.repetitions;
    for cell in sweep.cells() {
        let (id, key) = (cell.id(), cell.key());
        if state.status(&id, &key) != CellStatus::Done && recorded(&records, &id, &key) >= reps {
            state.set(&id, &key, Status::Done, None);
        }
    }
    state.save(out)?;

    let cells: Vec<&Cell> = sweep.cells().collect();
    let done_before = cells
        .iter()
        .filter(|c| {
            state.status(&c.id(), &c.key()) == CellStatus::Done
                && recorded(&records, &c.id(), &c.key()) >= reps
        })
        .count() as u64;
    let display = crate::progress::choose(
        opts.display,
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
        std::env::var_os("CI").is_some(),
    );
    let progress = Progress::new(display, cells.len() as u64, done_before);
    write_derived(sweep, &records, &progress)?;
    progress.log(format!(
        "sweep `{}`: {} cells, {} already done; results in {}",
        sweep.plan.name,
        cells.len(),
        done_before,
        out.display()
    ));
    let mut interrupt = watch_signals();
    let exe = std::env::current_exe()
        .map_err(|e| BenchError::Internal(format!("cannot locate the bench binary: {e}")))?;
    let golden_cfg = GoldenConfig {
        storage: &sweep.plan.storage,
        commit_retries: sweep.plan.run.commit_retries,
    };
    let mut goldens: HashMap<GoldenSpec, Result<Golden, String>> = HashMap::new();
    let mut report = RunReport::default();

    for cell in cells {
        let (id, key) = (cell.id(), cell.key());
        // Done with fewer records than `repetitions` (the count was raised): run the rest.
        let status = match state.status(&id, &key) {
            CellStatus::Done if recorded(&records, &id, &key) < reps => CellStatus::Pending,
            s => s,
        };
        match status {
            CellStatus::Done => {
                report.skipped_done += 1;
                continue;
            }
            CellStatus::Failed if !opts.retry_failed => {
                report.failed_not_retried += 1;
                progress.log(format!(
                    "skip {id}: failed earlier ({}); re-run with --retry-failed to try again",
                    state.cells[&id]
                        .reason
                        .as_deref()
                        .unwrap_or("no reason recorded")
                ));
                progress.cell_finished();
                continue;
            }
            _ => {}
        }
        if let Entry::Vacant(slot) = goldens.entry(cell.golden) {
            slot.insert(prepare_golden(&sweep.store, cell.golden, &golden_cfg, &progress).await);
        }
        let golden = match &goldens[&cell.golden] {
            Ok(g) => g.clone(),
            Err(e) => {
                state.set(&id, &key, Status::Failed, Some(format!("golden: {e}")));
                state.save(out)?;
                report.failed += 1;
                progress.cell_finished();
                continue;
            }
        };

        let mut rep = recorded(&records, &id, &key);
        while rep < reps && !report.interrupted {
            rep += 1;
            let job = Job {
                cell,
                repetition: rep,
                golden: &golden,
            };
            let result = run_cell(sweep, job, &exe, &progress, &mut state, &mut interrupt).await?;
            let label = if reps > 1 {
                format!("{id} (repetition {rep}/{reps})")
            } else {
                id.clone()
            };
            match result {
                CellResult::Recorded(record) => {
                    jsonl::append(&results, &record).map_err(io_err("append to", &results))?;
                    crate::fault::point("append");
                    if rep == reps {
                        state.set(&id, &key, Status::Done, None);
                        state.save(out)?;
                        report.ran += 1;
                    }
                    if !record.verified {
                        report.unverified += 1;
                    }
                    progress.log(format!(
                        "done {label}: {} ops, {:.2} ops/s, p50 {:.1} ms, p99 {:.1} ms, {} errors{}{}",
                        record.total_operations,
                        record.throughput_ops_per_sec,
                        record.p50_latency_ms,
                        record.p99_latency_ms,
                        record.errors,
                        match &record.reads {
                            Some(r) => format!(
                                "; reads: {} ops, {:.2} ops/s, p50 {:.1} ms, p99 {:.1} ms, {} errors",
                                r.total_operations,
                                r.throughput_ops_per_sec,
                                r.p50_latency_ms,
                                r.p99_latency_ms,
                                r.errors
                            ),
                            None => String::new(),
                        },
                        if record.verified {
                            String::new()
                        } else {
                            format!(
                                "; VERIFICATION FAILED: {}",
                                record.verify_error.as_deref().unwrap_or("")
                            )
                        }
                    ));
                    records.push(*record);
                    write_derived(sweep, &records, &progress)?;
                }
                CellResult::Failed(reason) => {
                    progress.log(format!("FAILED {label}: {reason}"));
                    state.set(&id, &key, Status::Failed, Some(reason));
                    state.save(out)?;
                    report.failed += 1;
                    break;
                }
                CellResult::Interrupted => {
                    state.cells.remove(&id);
                    state.save(out)?;
                    report.interrupted = true;
                    progress.log(format!(
                        "interrupted: {label} is pending again; re-run the same command to resume"
                    ));
                }
            }
        }
        progress.cell_finished();
        if report.interrupted {
            break;
        }
    }
    progress.finish();
    let report_path = out.join(crate::report::REPORT_FILE);
    let report_line = if report_path.is_file() {
        format!("\n  report:  {}", report_path.display())
    } else {
        String::new()
    };
    if !report.interrupted {
        cleanup(sweep, &state).await?;
        eprintln!(
            "sweep `{}` finished: {} cells run, {} already done, {} failed{}{}\n  results: {}\n  summary: {}{report_line}",
            sweep.plan.name,
            report.ran,
            report.skipped_done,
            report.failed + report.failed_not_retried,
            if report.failed_not_retried > 0 {
                format!(
                    " ({} from earlier runs; use --retry-failed)",
                    report.failed_not_retried
                )
            } else {
                String::new()
            },
            if report.unverified > 0 {
                format!(", {} FAILED VERIFICATION", report.unverified)
            } else {
                String::new()
            },
            results.display(),
            sweep.summary_path().display()
        );
    }
    Ok(report)
}

/// Bring the outputs derived from the records up to date, as after every cell: the summary
/// (an error stops the sweep) and the report (a failure is a warning: the results and the
/// summary are safe, and `bench report` can redraw it).
fn write_derived(sweep: &Sweep, records: &[Record], progress: &Progress) -> Result<(), BenchError> {
    let summary = sweep.summary_path();
    csv::write(&summary, records).map_err(io_err("write", &summary))?;
    if !records.is_empty()
        && let Err(e) = crate::report::write(&sweep.out, records)
    {
        progress.log(format!(
            "warning: the report was not written: {e}; retry with `bench report {}`",
            sweep.out.display()
        ));
    }
    Ok(())
}

/// What a finished sweep removes (`run.cleanup`): leftover copies, and with `all` the
/// goldens too, once every cell of the plan is done.
async fn cleanup(sweep: &Sweep, state: &State) -> Result<(), BenchError> {
    match sweep.plan.run.cleanup {
        Cleanup::None => Ok(()),
        Cleanup::Runs => sweep.store.remove_prefix("runs").await,
        Cleanup::All => {
            sweep.store.remove_prefix("runs").await?;
            let all_done = sweep
                .cells()
                .all(|c| state.status(&c.id(), &c.key()) == CellStatus::Done);
            if all_done {
                sweep.store.remove_prefix("golden").await?;
            }
            Ok(())
        }
    }
}

/// Reuse or build a golden, logging which.
async fn prepare_golden(
    store: &Store,
    spec: GoldenSpec,
    cfg: &GoldenConfig<'_>,
    progress: &Progress,
) -> Result<Golden, String> {
    progress.log(format!("golden {}: checking", spec.id()));
    let started = std::time::Instant::now();
    match golden::ensure(store, spec, cfg).await {
        Ok((g, true)) => {
            progress.log(format!("golden {}: reused", spec.id()));
            Ok(g)
        }
        Ok((g, false)) => {
            progress.log(format!(
                "golden {}: built {} rows in {:.2}s",
                spec.id(),
                g.marker.manifest_rows,
                started.elapsed().as_secs_f64()
            ));
            Ok(g)
        }
        Err(e) => {
            progress.log(format!("golden {}: FAILED: {e}", spec.id()));
            Err(e.to_string())
        }
    }
}

/// How many records `results.jsonl` holds for a cell with this key (its repetitions done).
fn recorded(records: &[Record], id: &str, key: &str) -> u32 {
    records
        .iter()
        .filter(|r| r.bench_tag == id && r.cell_key == key)
        .count() as u32
}

enum CellResult {
    Recorded(Box<Record>),
    Failed(String),
    Interrupted,
}

/// Isolate, run and verify one cell; its copy is removed afterwards unless `keep_runs`.
/// One repetition of one cell, on a copy of this golden.
struct Job<'a> {
    cell: &'a Cell,
    repetition: u32,
    golden: &'a Golden,
}

async fn run_cell(
    sweep: &Sweep,
    job: Job<'_>,
    exe: &Path,
    progress: &Progress,
    state: &mut State,
    interrupt: &mut watch::Receiver<bool>,
) -> Result<CellResult, BenchError> {
    let Job {
        cell,
        repetition,
        golden,
    } = job;
    let (id, key) = (cell.id(), cell.key());
    let run_rel = format!("runs/{id}");
    let store = &sweep.store;
    state.set(&id, &key, Status::Running, None);
    state.save(&sweep.out)?;
    if let Err(e) = store.copy_prefix(&golden.rel, &run_rel).await {
        let _ = store.remove_prefix(&run_rel).await;
        return Ok(CellResult::Failed(format!(
            "cannot copy golden {} to {run_rel}: {e}; make room or fix the store, then re-run \
             with --retry-failed",
            golden.rel
        )));
    }
    let root = store.uri(&run_rel);
    let (operations, duration_secs) = match cell.mode {
        Mode::Continuous { operations } => (Some(operations), None),
        Mode::Concurrent { duration_secs, .. } | Mode::Mixed { duration_secs, .. } => {
            (None, Some(duration_secs))
        }
    };
    let mix = cell.mode.mixed_reads();
    let workers = (0..cell.mode.workers())
        .map(|worker_id| WorkerArgs {
            root: root.clone(),
            operation: cell.operation.as_str().to_string(),
            inline: cell.golden.inline,
            commit_retries: cell.commit_retries,
            worker_id,
            warmup: cell.warmup,
            tables: cell.golden.rows - cell.golden.rows / 3,
            operations,
            duration_secs,
            reads_per_write: mix.map(|(_, r)| r),
            read_operation: mix.map(|(op, _)| op.as_str().to_string()),
        })
        .collect();
    let bar = progress.cell(
        &id,
        operations,
        duration_secs.map(std::time::Duration::from_secs),
    );
    let started_at = now_utc();
    let outcome = coordinator::run_cell(
        CellRun {
            exe,
            workers,
            storage: &cell.storage,
            timeout: sweep.plan.run.cell_timeout,
        },
        &bar,
        interrupt,
    )
    .await;
    bar.finish();

    let result = match outcome {
        Outcome::Interrupted => CellResult::Interrupted,
        Outcome::Failed(reason) => CellResult::Failed(reason),
        Outcome::Finished(m) => {
            let before = golden.marker.manifest_rows;
            // Reads commit nothing: the manifest must be as the golden left it.
            let committed_warmup = if cell.operation.is_write() {
                m.warmup_ok
            } else {
                0
            };
            let ids: Vec<String> = m
                .committed
                .iter()
                .filter(|_| cell.operation.is_write())
                .map(|&(w, i)| catalog::object_id(cell.operation, w, i))
                .collect();
            let (after, verify_error) =
                verify::commits(&root, &cell.storage, before + committed_warmup, &ids).await;
            let lat = m.latencies.summary();
            let reads = mix.map(|(op, reads_per_write)| {
                let r = m.reads.latencies.summary();
                ReadFigures {
                    operation: op.as_str().to_string(),
                    reads_per_write,
                    total_operations: r.count,
                    attempts: m.reads.attempts,
                    errors: m.reads.errors,
                    first_error: m.reads.first_error.clone(),
                    throughput_ops_per_sec: throughput(r.count, m.window_ms),
                    avg_latency_ms: r.avg,
                    p50_latency_ms: r.p50,
                    p90_latency_ms: r.p90,
                    p99_latency_ms: r.p99,
                    p999_latency_ms: r.p999,
                    min_latency_ms: r.min,
                    max_latency_ms: r.max,
                }
            });
            CellResult::Recorded(Box::new(Record {
                variant: cell.variant().to_string(),
                operation: cell.operation.as_str().to_string(),
                concurrency: cell.mode.workers(),
                initial_entries: cell.golden.rows,
                duration_secs: cell.mode.duration_secs(),
                total_operations: lat.count,
                total_duration_ms: m.window_ms,
                throughput_ops_per_sec: throughput(lat.count, m.window_ms),
                avg_latency_ms: lat.avg,
                p50_latency_ms: lat.p50,
                p90_latency_ms: lat.p90,
                p99_latency_ms: lat.p99,
                min_latency_ms: lat.min,
                max_latency_ms: lat.max,
                errors: m.conflicts + m.other_errors,
                manifest_shard_count: 0,
                bench_tag: id.clone(),
                mode: cell.mode.name().to_string(),
                plan: sweep.plan.name.clone(),
                cell_key: key.clone(),
                started_at,
                finished_at: now_utc(),
                bench_version: env!("CARGO_PKG_VERSION").to_string(),
                lance_version: LANCE_VERSION.to_string(),
                hostname: export::hostname(),
                storage_scheme: store.scheme().to_string(),
                attempts: m.attempts,
                setup_ms: m.setup_ms,
                commit_retries: cell.commit_retries,
                p999_latency_ms: lat.p999,
                conflict_errors: m.conflicts,
                other_errors: m.other_errors,
                first_conflict_error: m.first_conflict,
                first_other_error: m.first_other_error,
                warmup_operations: cell.warmup,
                warmup_committed: m.warmup_ok,
                repetition,
                manifest_rows_before: before,
                manifest_rows_after: after,
                verified: verify_error.is_none(),
                verify_error,
                reads,
            }))
        }
    };
    if !sweep.plan.run.keep_runs {
        store.remove_prefix(&run_rel).await?;
    }
    Ok(result)
}
