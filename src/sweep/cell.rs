//! One run (repetition) of one cell: a fresh copy of its golden, its workers run by the
//! coordinator, the copy's `__manifest` verified, and the record assembled.

use tokio::sync::watch;

use super::Sweep;
use super::run::Arm;
use crate::catalog;
use crate::clock::now_utc;
use crate::coordinator::{self, CellRun, Outcome};
use crate::error::BenchError;
use crate::export::Record;
use crate::export::record::{self, Provenance, Verification};
use crate::golden::Golden;
use crate::plan::Cell;
use crate::progress::{CellView, Progress};
use crate::state::{State, Status};
use crate::stats::Measured;
use crate::verify;
use crate::worker::WorkerArgs;

/// One repetition of one cell, on a copy of this golden, by the workers of this arm.
pub(super) struct Job<'a> {
    pub cell: &'a Cell,
    pub repetition: u32,
    pub golden: &'a Golden,
    pub arm: &'a Arm,
}

pub(super) enum CellResult {
    Recorded(Box<Record>),
    Failed(String),
    Interrupted,
}

/// The arguments of the cell's workers, running on the copy at `root`.
fn worker_args(cell: &Cell, root: &str) -> Vec<WorkerArgs> {
    let mix = cell.mode.mixed_reads();
    let duration_secs = cell
        .mode
        .operations()
        .is_none()
        .then(|| cell.mode.duration_secs());
    (0..cell.mode.workers())
        .map(|worker_id| WorkerArgs {
            root: root.to_string(),
            operation: cell.operation,
            inline: cell.golden.inline,
            commit_retries: cell.commit_retries,
            worker_id,
            rank_from_env: false,
            warmup: cell.warmup,
            tables: cell.golden.rows - cell.golden.rows / 3,
            operations: cell.mode.operations(),
            duration_secs,
            reads_per_write: mix.map(|(_, r)| r),
            read_operation: mix.map(|(op, _)| op),
        })
        .collect()
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

/// Isolate, run and verify one repetition of a cell; its copy is removed afterwards
/// unless `keep_runs`.
pub(super) async fn run_one(
    sweep: &Sweep,
    job: Job<'_>,
    progress: &Progress,
    state: &mut State,
    interrupt: &mut watch::Receiver<bool>,
) -> Result<CellResult, BenchError> {
    let Job {
        cell,
        repetition,
        golden,
        arm,
    } = job;
    let (id, key) = (cell.id(), cell.key());
    let run_rel = format!("runs/{id}");
    // Opened anew for every run, as the workers are: credentials that changed since the
    // sweep started (rotated keys in a profile) are picked up here too.
    let store = &sweep.store.reopen().await?;
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
    let bar = progress.cell(CellView {
        id: id.clone(),
        workers: cell.mode.workers(),
        expected_ops: cell.mode.operations(),
        duration: cell
            .mode
            .operations()
            .is_none()
            .then(|| std::time::Duration::from_secs(cell.mode.duration_secs())),
        mixed: cell.mode.mixed_reads().is_some(),
        ..CellView::default()
    });
    let started_at = now_utc();
    let run = CellRun {
        exe: &arm.exe,
        workers: worker_args(cell, &root),
        storage: &cell.storage,
        timeout: sweep.plan.run.cell_timeout,
        versions: Some(&arm.versions),
        launcher: sweep
            .plan
            .run
            .launcher
            .as_ref()
            .map(|l| l.command(cell.mode.workers())),
    };
    let outcome = coordinator::run_cell(run, &bar, interrupt).await;
    bar.finish();

    let result = match outcome {
        Outcome::Interrupted => CellResult::Interrupted,
        Outcome::Failed(reason) => CellResult::Failed(reason),
        Outcome::Finished(m) => {
            let v = verification(cell, &root, golden, &m).await;
            let p = Provenance {
                plan: &sweep.plan.name,
                arm: arm.name,
                versions: &arm.versions,
                repetition,
                started_at,
                finished_at: now_utc(),
                storage_scheme: store.scheme(),
            };
            CellResult::Recorded(Box::new(record::assemble(cell, &m, v, p)))
        }
    };
    if !sweep.plan.run.keep_runs {
        store.remove_prefix(&run_rel).await?;
    }
    Ok(result)
}
