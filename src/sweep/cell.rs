//! One run (repetition) of one cell: a fresh copy of its golden, its workers run by the
//! coordinator, the copy's `__manifest` verified, and the record assembled.

use std::time::Duration;

use tokio::sync::watch;

use super::Sweep;
use super::arm::{ARM_A, Arm};
use crate::catalog;
use crate::clock::now_utc_ms;
use crate::coordinator::{
    self, ArmUnits, CellRun, Observer, Outcome, Pace, PairOutcome, PairingKind,
};
use crate::error::BenchError;
use crate::export::Record;
use crate::export::record::{self, Provenance, Verification};
use crate::golden::Golden;
use crate::plan::Cell;
use crate::progress::{CellBar, CellView, Progress};
use crate::state::{State, Status};
use crate::stats::Measured;
use crate::verify;
use crate::worker::WorkerArgs;

/// One repetition of one cell, on a copy of this golden, by the workers of this arm (or of
/// both arms of `bench ab`, as pairs).
pub(super) struct Job<'a> {
    pub cell: &'a Cell,
    pub repetition: u32,
    /// The repetitions the cell runs in all.
    pub of: u32,
    pub golden: &'a Golden,
    pub arms: &'a [&'a Arm],
}

pub(super) enum CellResult {
    /// One record per arm that ran, in arm order.
    Recorded(Vec<Record>),
    Failed(String),
    Interrupted,
}

/// The arguments of the cell's workers, running on the copy at `root`.
fn worker_args(cell: &Cell, root: &str, trace: u32) -> Vec<WorkerArgs> {
    let mix = cell.mode.mixed_reads();
    // A deadline where the cell has one (a bounded concurrent cell may not).
    let duration_secs = (cell.mode.operations().is_none() && cell.mode.duration_secs() > 0)
        .then(|| cell.mode.duration_secs());
    (0..cell.mode.workers())
        .map(|worker_id| WorkerArgs {
            root: root.to_string(),
            operation: cell.operation,
            inline: cell.golden.inline,
            commit_retries: cell.commit_retries,
            worker_id,
            rank_from_env: false,
            paced: false,
            until_end: cell.mode.bound().is_some(),
            warmup: cell.warmup,
            tables: cell.golden.rows - cell.golden.rows / 3,
            operations: cell.mode.operations(),
            duration_secs,
            reads_per_write: mix.map(|(_, r)| r),
            read_operation: mix.map(|(op, _)| op),
            trace,
            s3_shaped: cell.s3_shaped,
        })
        .collect()
}

/// Write run `repetition` of cell `id` (by `arm`, when paired) as a trace file under
/// `<out>/traces/`; its path relative to `<out>`, or `None` (said) when it cannot be written.
fn write_trace(
    sweep: &Sweep,
    id: &str,
    repetition: u32,
    arm: Option<&str>,
    m: &Measured,
    progress: &Progress,
) -> Option<String> {
    let mut name = format!("{id}_r{repetition}");
    if let Some(a) = arm {
        name.push_str(&format!("_{a}"));
    }
    let rel = format!("traces/{name}.json");
    let trace = crate::trace::chrome_trace(&name, &m.traces);
    let path = sweep.out.join(&rel);
    let written = std::fs::create_dir_all(sweep.out.join("traces"))
        .and_then(|_| crate::files::write_atomic(&path, trace.to_string().as_bytes()));
    match written {
        Ok(()) => Some(rel),
        Err(e) => {
            progress.log(format!(
                "warning: {id}: its trace {} was not written ({e}); its results are kept",
                path.display()
            ));
            None
        }
    }
}

/// Check the copy's `__manifest` against what the workers committed: the golden's rows
/// plus every commit (warm-up included), each reported object present. Reads commit
/// nothing, so the manifest must be as the golden left it.
async fn verification(cell: &Cell, root: &str, golden: &Golden, m: &Measured) -> Verification {
    let before = golden.marker.manifest_rows;
    let ids: Vec<String> = if cell.operation.is_write() {
        m.committed
            .iter()
            .map(|&(w, i)| catalog::object_id(cell.operation, w, i))
            .collect()
    } else {
        Vec::new()
    };
    let (after, error) =
        verify::commits(root, &cell.storage, before + m.warmup_committed, &ids).await;
    Verification {
        rows_before: before,
        rows_after: after,
        error,
    }
}

/// How the two arms of `bench ab` form their pairs inside one run of a cell (not with
/// [`Pairing::Runs`], whose arms run one after the other).
#[derive(Debug, Clone, Copy)]
pub(super) struct PairSpec {
    pub pairing: Pairing,
    /// Slices and duet buckets.
    pub slice: Duration,
    /// Precision mode, after its pilot: the pilot's repetitions (recorded with the units).
    pub pilot: Option<u32>,
}

/// `bench ab --pairing`: how the arms form their pairs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Pairing {
    /// Inside each run of a cell, the arms take turns: operation by operation in continuous
    /// cells (lockstep), slice by slice in concurrent and mixed cells.
    Alternate,
    /// Both arms run each cell at the same moment, on their own copies (for stores where
    /// the machine is not the bottleneck).
    Duet,
    /// Whole runs of a cell, one arm after the other (A B, B A, …).
    Runs,
}

impl Pairing {
    pub fn as_str(self) -> &'static str {
        match self {
            Pairing::Alternate => "alternate",
            Pairing::Duet => "duet",
            Pairing::Runs => "runs",
        }
    }
}

impl PairSpec {
    /// The pacing of one repetition: the arm that leads alternates between repetitions.
    fn pace(&self, cell: &Cell, repetition: u32) -> Pace {
        let lead = ((repetition + 1) % 2) as usize;
        let continuous = cell.mode.operations();
        match (self.pairing, continuous) {
            (Pairing::Duet, _) => Pace::duet(continuous.is_some(), self.slice),
            (_, Some(ops)) => Pace::lockstep(ops, lead),
            (_, None) => {
                let w = cell.mode.workers() as usize;
                let per_arm = Duration::from_secs(cell.mode.duration_secs());
                Pace::slices(self.slice, per_arm, [w, w], lead)
            }
        }
    }
}

/// While a launcher holds a cell's workers in its queue, `<out>/.running` says so (for
/// `bench status`): the cell and the launcher's last words.
pub const RUNNING_FILE: &str = ".running";

/// The display of a running cell, and what `bench status` can read of it.
struct Watched<'a> {
    bar: &'a CellBar,
    file: std::path::PathBuf,
    cell: String,
}

impl Watched<'_> {
    fn clear(&self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

impl Observer for Watched<'_> {
    fn released(&self) {
        self.clear();
        self.bar.released();
    }
    fn op(&self, ok: bool, read: bool) {
        self.bar.op(ok, read);
    }
    fn worker_done(&self) {
        self.bar.worker_done();
    }
    fn waiting(&self, line: &str) {
        // Best effort: a status line, not a result.
        let text = format!("{}: waiting: {line}\n", self.cell);
        let _ = crate::files::write_atomic(&self.file, text.as_bytes());
        self.bar.waiting(line);
    }
}

/// What the workers of a run measured: one figure set per arm (and with pairs, the units
/// of both arms, their pairing and the pilot's repetitions in precision mode).
enum Ran {
    Measured(Vec<Measured>, Option<([ArmUnits; 2], PairingKind)>),
    Failed(String),
    Interrupted,
}

/// Run the workers of one arm, or of both arms together as pairs.
async fn run_workers(
    runs: Vec<CellRun<'_>>,
    pace: Option<Pace>,
    timeout: Duration,
    bar: &dyn Observer,
    interrupt: &mut watch::Receiver<bool>,
) -> Ran {
    match (pace, <[CellRun<'_>; 2]>::try_from(runs)) {
        (Some(pace), Ok(two)) => {
            // The pair's timeout covers both arms.
            match coordinator::run_pair(two, pace, timeout * 2, bar, interrupt).await {
                PairOutcome::Finished {
                    measured,
                    units,
                    pairing,
                } => Ran::Measured(Vec::from(*measured), Some((units, pairing))),
                PairOutcome::Failed(r) => Ran::Failed(r),
                PairOutcome::Interrupted => Ran::Interrupted,
            }
        }
        (None, Err(mut one)) if one.len() == 1 => {
            match coordinator::run_cell(one.remove(0), bar, interrupt).await {
                Outcome::Finished(m) => Ran::Measured(vec![*m], None),
                Outcome::Failed(r) => Ran::Failed(r),
                Outcome::Interrupted => Ran::Interrupted,
            }
        }
        _ => unreachable!("one arm alone, or two arms as pairs"),
    }
}

/// Isolate, run and verify one repetition of a cell by one arm's workers, or by both
/// arms' together (`pair`: each arm on its own copy); the copies are removed afterwards
/// unless `keep_runs`. A failed removal is a warning: the measurement is kept, and what is
/// left is removed by the sweep's cleanup or by the next run of the cell.
pub(super) async fn run_one(
    sweep: &Sweep,
    job: Job<'_>,
    pair: Option<PairSpec>,
    progress: &Progress,
    state: &mut State,
    interrupt: &mut watch::Receiver<bool>,
) -> Result<CellResult, BenchError> {
    let Job {
        cell,
        repetition,
        of,
        golden,
        arms,
    } = job;
    let (id, key) = (cell.id(), cell.key());
    let run_rel = format!("runs/{id}");
    // Opened anew for every run, as the workers are: credentials that changed since the
    // sweep started (rotated keys in a profile) are picked up here too.
    let store = &sweep.store.reopen().await?;
    state.set(&id, &key, Status::Running, None);
    state.save(&sweep.out)?;
    let pace = pair
        .filter(|_| arms.len() == 2)
        .map(|p| p.pace(cell, repetition));
    // Paired, each arm has its own copy under the cell's prefix.
    let rels: Vec<String> = if pace.is_some() {
        arms.iter()
            .map(|a| format!("{run_rel}/{}", a.name.unwrap_or(ARM_A)))
            .collect()
    } else {
        vec![run_rel.clone()]
    };
    let mut copies = Vec::new();
    for rel in &rels {
        let began = std::time::Instant::now();
        let copied = store.copy_prefix(&golden.rel, rel).await;
        if let Ok(objects) = copied {
            copies.push(record::CopyTime {
                objects,
                parallelism: sweep.plan.run.copy_parallelism,
                ms: (began.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0,
            });
        }
        if let Err(e) = copied {
            let _ = store.remove_prefix(&run_rel).await;
            return Ok(CellResult::Failed(format!(
                "cannot copy golden {} to {rel}: {e}; make room or fix the store, then re-run \
                 with --retry-failed",
                golden.rel
            )));
        }
    }
    let roots: Vec<String> = rels.iter().map(|r| store.uri(r)).collect();
    let arms = &arms[..roots.len()];
    let timed = cell.mode.operations().is_none() && cell.mode.duration_secs() > 0;
    let duration = Duration::from_secs(cell.mode.duration_secs());
    // The cell, its repetition and its arms, as the display names the run.
    let mut label = id.clone();
    if of > 1 {
        label.push_str(&format!(" {repetition}/{of}"));
    }
    match (pace.is_some(), arms.first().and_then(|a| a.name)) {
        (true, _) => label.push_str(" [A+B]"),
        (false, Some(name)) => label.push_str(&format!(" [{name}]")),
        (false, None) => {}
    }
    let bar = progress.cell(CellView {
        id: label.clone(),
        workers: cell.mode.workers() * roots.len() as u32,
        expected_ops: cell.mode.operations().or(cell.mode.bound()),
        // Slices give each arm the cell's duration in turn.
        duration: timed.then(|| match &pace {
            Some(p) if p.paced() => duration * 2,
            _ => duration,
        }),
        mixed: cell.mode.mixed_reads().is_some(),
        ..CellView::default()
    });
    let started_at = now_utc_ms();
    let launcher = (sweep.plan.run.launcher.as_ref()).map(|l| l.command(cell.mode.workers()));
    // The workers' environment: storage options, and the namespace properties under their
    // prefix.
    let mut worker_env = cell.storage.clone();
    for (k, v) in &cell.properties {
        worker_env.insert(
            format!("{}{k}", crate::worker::protocol::PROPERTY_PREFIX),
            v.clone(),
        );
    }
    let runs: Vec<CellRun<'_>> = arms
        .iter()
        .zip(&roots)
        .map(|(arm, root)| CellRun {
            exe: &arm.exe,
            workers: worker_args(cell, root, sweep.plan.run.trace_operations),
            storage: &worker_env,
            timeout: sweep.plan.run.cell_timeout,
            bound: cell.mode.bound(),
            versions: Some(&arm.versions),
            launcher: launcher.clone(),
        })
        .collect();
    let watched = Watched {
        bar: &bar,
        file: sweep.out.join(RUNNING_FILE),
        cell: label,
    };
    let ran = run_workers(runs, pace, sweep.plan.run.cell_timeout, &watched, interrupt).await;
    watched.clear();
    bar.finish();

    let result = match ran {
        Ran::Interrupted => CellResult::Interrupted,
        Ran::Failed(reason) => CellResult::Failed(reason),
        Ran::Measured(measured, units) => {
            crate::fault::pause("verify", interrupt).await;
            let mut records = Vec::new();
            for (k, (m, root)) in measured.iter().zip(&roots).enumerate() {
                let v = verification(cell, root, golden, m).await;
                let p = Provenance {
                    plan: &sweep.plan.name,
                    arm: arms[k].name,
                    versions: &arms[k].versions,
                    repetition,
                    started_at: started_at.clone(),
                    finished_at: now_utc_ms(),
                    storage_scheme: store.scheme(),
                };
                let mut r = record::assemble(cell, m, v, p);
                r.copy = copies.get(k).copied();
                if !m.traces.is_empty() {
                    r.trace = write_trace(sweep, &id, repetition, arms[k].name, m, progress);
                }
                r.paired = units.as_ref().map(|(u, kind)| {
                    record::PairUnits::new(*kind, &u[k], pair.and_then(|p| p.pilot))
                });
                records.push(r);
            }
            CellResult::Recorded(records)
        }
    };
    if !sweep.plan.run.keep_runs
        && let Err(e) = store.remove_prefix(&run_rel).await
    {
        progress.log(format!(
            "warning: {id}: its copy {run_rel} was not removed ({e}); its results are kept, \
             and the sweep's cleanup (run.cleanup) or its next run removes it"
        ));
    }
    Ok(result)
}
