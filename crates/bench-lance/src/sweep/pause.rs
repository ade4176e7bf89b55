//! A campaign's `pause` point from the coordinator's side. The store SIGSTOPs the worker at
//! the point's request and holds that request; once the store says so, another client (a
//! worker of the same build, client 1) creates [`PAUSE_OTHERS`] namespaces, and a cleanup
//! keeps only the latest version of `__manifest`; then the store is told to resume the
//! worker, and serves its held request. The other client's operations join the copy's log,
//! so verification, the checker and the history hold them as they hold the worker's.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use bench_core::oplog::{Attempt, ErrorClass, Observed, Op, Outcome as OpOutcome};
use bench_core::plan::campaign::{self, FaultKind, PAUSE_OTHERS, Point, WhilePaused};
use bench_core::plan::{Operation, Retention};
use bench_core::protocol::{ENV_PREFIX, WorkerArgs};
use tokio::sync::watch;

use crate::catalog::cleanup::Maintenance;
use crate::coordinator::{self, CellRun, Outcome};
use crate::measured::Measured;
use crate::plan::Cell;
use crate::store_fault;

/// The other client of a `pause` point on one copy.
pub(super) struct Other {
    exe: PathBuf,
    args: WorkerArgs,
    /// Its environment: the cell's workers', the point replaced by [`campaign::OTHER`].
    env: BTreeMap<String, String>,
    /// The cell's storage options (the store's endpoint; the cleanup's).
    storage: BTreeMap<String, String>,
    timeout: Duration,
}

/// The other client of each copy where the cell's point is a pause; none otherwise.
pub(super) fn others(cell: &Cell, runs: &[CellRun<'_>]) -> Vec<Other> {
    let pauses = (cell.env.get(campaign::ENV))
        .and_then(|spec| Point::parse(spec).ok())
        .and_then(|p| p.kind)
        .is_some_and(FaultKind::pauses);
    if !pauses {
        return Vec::new();
    }
    let point = format!("{ENV_PREFIX}{}", campaign::ENV);
    (runs.iter())
        .filter_map(|run| {
            let mut args = run.workers.first()?.clone();
            args.operation = Operation::CreateNamespace;
            args.worker_id = 1;
            args.operations = Some(PAUSE_OTHERS);
            (args.warmup, args.trace) = (0, 0);
            // A campaign's worker that arms nothing (its history kept as the point's).
            let mut env = run.storage.clone();
            env.insert(point.clone(), campaign::OTHER.to_string());
            Some(Other {
                exe: run.exe.to_path_buf(),
                args,
                env,
                storage: cell.storage.clone(),
                timeout: run.timeout,
            })
        })
        .collect()
}

/// What ran beside each copy's held worker, while `finished` says the workers have not
/// ended: each copy's account and its other client's run (`None`: the worker was never
/// held).
pub(super) async fn beside(
    others: &[Other],
    finished: watch::Receiver<bool>,
    interrupt: &watch::Receiver<bool>,
) -> Vec<Option<(WhilePaused, Option<Measured>)>> {
    let sides = (others.iter()).map(|o| while_paused(o, finished.clone(), interrupt.clone()));
    futures::future::join_all(sides).await
}

/// Once the store holds `o`'s worker: the other client's operations and the cleanup, then
/// the worker resumed. `None`: the run ended with the worker never held.
async fn while_paused(
    o: &Other,
    mut done: watch::Receiver<bool>,
    mut interrupt: watch::Receiver<bool>,
) -> Option<(WhilePaused, Option<Measured>)> {
    let root = &o.args.root;
    loop {
        if *done.borrow() {
            return None;
        }
        match store_fault::pause_state(&o.storage, root).await {
            Ok(Some(state)) if state == "paused" => break,
            // Let go already: by the store's own limit.
            Ok(Some(_)) => return None,
            Ok(None) | Err(_) => {}
        }
        tokio::select! {
            _ = done.changed() => {}
            _ = tokio::time::sleep(Duration::from_millis(10)) => {}
        }
    }
    let held = Instant::now();
    let run = CellRun {
        exe: &o.exe,
        workers: vec![o.args.clone()],
        storage: &o.env,
        timeout: o.timeout,
        bound: None,
        versions: None,
        launcher: None,
        journal: None,
    };
    let (measured, others_error) = match coordinator::run_cell(run, &(), &mut interrupt).await {
        Outcome::Finished(m) => (Some(*m), None),
        Outcome::Failed(why) => (None, Some(why)),
        Outcome::Interrupted => (None, Some("interrupted".to_string())),
    };
    let cleanup = Maintenance {
        root: root.clone(),
        storage: o.storage.clone(),
        session: Default::default(),
        retention: Retention::KeepVersions(1),
    };
    let started = crate::host_clock::monotonic_us();
    let cleaned = crate::catalog::cleanup::run(Some(&cleanup)).await;
    // Its end before the worker is resumed: what the resumed worker does comes after it.
    let ended = crate::host_clock::monotonic_us();
    let resumed = store_fault::resume(&o.storage, root).await;
    let mut measured = measured;
    if let Some(m) = measured.as_mut() {
        m.log.push(cleanup_op([started, ended], &cleaned));
    }
    // The other client's own operations (its creations, not the cleanup).
    let count = |m: &Measured, ok_only: bool| {
        (m.log.iter())
            .filter(|op| op.operation == Operation::CreateNamespace)
            .filter(|op| !ok_only || matches!(op.outcome, OpOutcome::Ok))
            .count() as u64
    };
    let account = WhilePaused {
        others: measured.as_ref().map_or(0, |m| count(m, false)),
        others_ok: measured.as_ref().map_or(0, |m| count(m, true)),
        cleaned_versions: cleaned.as_ref().ok().map(|c| c.versions),
        cleanup_error: cleaned.err().map(|e| e.to_string()),
        others_error: others_error.or(resumed.err()),
        held_ms: (held.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0,
    };
    Some((account, measured))
}

/// The cleanup as an operation of the other client in the point's log: the history and the
/// version-order checker see what it removed, and when (`at_us`: its start and end on the
/// host's clock), as they see a role's cleanup.
fn cleanup_op(at_us: [u64; 2], cleaned: &lance_core::Result<bench_core::oplog::Cleaned>) -> Op {
    let ms = at_us[1].saturating_sub(at_us[0]) as f64 / 1000.0;
    let mut attempt = Attempt::new(0, ms);
    attempt.at_us = Some(at_us);
    let (outcome, observed) = match cleaned {
        Ok(c) => (OpOutcome::Ok, Observed::Cleaned(*c)),
        Err(e) => {
            attempt.class = Some(ErrorClass::Other);
            attempt.err = Some(e.to_string());
            (OpOutcome::Failed, Observed::Nothing)
        }
    };
    Op {
        client: 1,
        role: None,
        operation: Operation::CleanupVersions,
        attempt,
        outcome,
        observed,
        landed: None,
    }
}
