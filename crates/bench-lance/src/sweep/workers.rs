//! A run's workers: started on their copies (through a rest cell's servers), watched to
//! the end with the cell's bar, as one arm or both arms of `bench ab` as pairs.

use std::time::Duration;

use tokio::sync::watch;

use super::Sweep;
use super::servers::{finish_servers, start_servers, with_servers};
use crate::arm::Arm;
use crate::coordinator::servers::{Servers, Starter};
use crate::coordinator::{
    self, ArmUnits, CellRun, Observer, Outcome, Pace, PairOutcome, PairingKind,
};
use crate::golden::Golden;
use crate::measured::Measured;
use crate::plan::Cell;
use crate::plan::Client;
use crate::progress::{CellBar, CellView, Progress};

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

/// While a launcher holds a cell's workers in its queue, `<out>/.running` says so (for
/// `bench status`): the cell and the launcher's last words.
pub const RUNNING_FILE: &str = ".running";

/// The display of a running cell, and what `bench status` can read of it.
pub(super) struct Watched<'a> {
    bar: &'a CellBar,
    file: std::path::PathBuf,
    cell: String,
    /// A rest cell's servers, told that the window begins at release.
    servers: Vec<Starter>,
    /// When the workers were released.
    released: std::sync::OnceLock<std::time::Instant>,
}

impl Watched<'_> {
    fn clear(&self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

impl Observer for Watched<'_> {
    fn released(&self) {
        let _ = self.released.set(std::time::Instant::now());
        self.servers.iter().for_each(Starter::start);
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
pub(super) enum Ran {
    Measured(Vec<Measured>, Option<([ArmUnits; 2], PairingKind)>),
    Failed(String),
    Interrupted,
}

/// Run the workers of one arm, or of both arms together as pairs.
pub(super) async fn run_workers(
    runs: Vec<CellRun<'_>>,
    pace: Option<(Pace, usize)>,
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

/// The display's name of a run: the cell, its repetition, and its arms.
pub(super) fn run_label(
    id: &str,
    repetition: u32,
    of: u32,
    paired: bool,
    arm: Option<&str>,
) -> String {
    let mut label = id.to_string();
    if repetition > of {
        // Beyond the count fixed so far (a pilot, or runs until the cell decides).
        label.push_str(&format!(" {repetition}"));
    } else if of > 1 {
        label.push_str(&format!(" {repetition}/{of}"));
    }
    match (paired, arm) {
        (true, _) => label.push_str(" [A+B]"),
        (false, Some(name)) => label.push_str(&format!(" [{name}]")),
        (false, None) => {}
    }
    label
}

/// How the files a run writes beside the results name it: `<cell id>_r<repetition>`, with
/// `_<arm>` after it when paired.
pub(super) fn run_name(id: &str, repetition: u32, arm: Option<&str>) -> String {
    match arm {
        Some(a) => format!("{id}_r{repetition}_{a}"),
        None => format!("{id}_r{repetition}"),
    }
}

/// Where run `repetition` of cell `id` (by `arm`, when paired) keeps its history, relative
/// to the results directory.
pub(super) fn history_rel(id: &str, repetition: u32, arm: Option<&str>) -> String {
    format!(
        "{}/{}",
        bench_core::history::DIR,
        run_name(id, repetition, arm)
    )
}

/// The history the run writes as it goes ([`bench_core::history::journal`]), replaced
/// whole once the run has ended and been verified.
pub(super) fn history_target(
    sweep: &Sweep,
    id: &str,
    repetition: u32,
    arm: Option<&str>,
) -> bench_core::history::journal::Target {
    let rel = history_rel(id, repetition, arm);
    bench_core::history::journal::Target {
        path: (sweep.out.join(rel)).join(bench_core::history::HISTORY_FILE),
        cell: id.to_string(),
        repetition,
        arm: arm.map(str::to_string),
    }
}

/// The workers' environment: storage options, the namespace properties and the plan's
/// variables, each under its prefix.
fn worker_env(cell: &crate::plan::Cell) -> std::collections::BTreeMap<String, String> {
    let mut env = cell.storage.clone();
    for (prefix, map) in [
        (crate::worker::protocol::PROPERTY_PREFIX, &cell.properties),
        (crate::worker::protocol::ENV_PREFIX, &cell.env),
    ] {
        env.extend(map.iter().map(|(k, v)| (format!("{prefix}{k}"), v.clone())));
    }
    env
}

/// The arguments of a run's workers on the copy at `root`, their clients going to `uris`
/// (none: the store itself).
fn args_of(
    sweep: &Sweep,
    job: &Job<'_>,
    (root, names): (&str, &str),
    uris: Vec<String>,
) -> Vec<crate::worker::WorkerArgs> {
    let trace = sweep.plan.run.trace_operations;
    let all = bench_core::workers::worker_args(job.cell, job.repetition, root, trace, uris, names);
    (all.into_iter())
        .map(|mut args| {
            args.scope = job.golden.scope.clone().unwrap_or_default();
            args
        })
        .collect()
}

/// Start the run's workers on their copies (`roots`, one per arm) and watch them to the end,
/// with the cell's bar.
pub(super) async fn watch_workers(
    sweep: &Sweep,
    job: &Job<'_>,
    roots: &[String],
    names: &str,
    pace: Option<(Pace, usize)>,
    progress: &Progress,
    interrupt: &mut watch::Receiver<bool>,
) -> Ran {
    let cell = job.cell;
    let arms = &job.arms[..roots.len()];
    let timed = cell.mode.operations().is_none() && cell.mode.duration_secs() > 0;
    let duration = Duration::from_secs(cell.mode.duration_secs());
    let label = run_label(
        &cell.id(),
        job.repetition,
        job.of,
        pace.is_some(),
        arms.first().and_then(|a| a.name),
    );
    let bar = progress.cell(CellView {
        id: label.clone(),
        workers: cell.mode.workers() * roots.len() as u32,
        expected_ops: cell.mode.operations().or(cell.mode.bound()),
        // Slices give each arm the cell's duration in turn.
        duration: timed.then(|| match &pace {
            Some((p, _)) if p.paced() => duration * 2,
            _ => duration,
        }),
        mixed: cell.mode.mixed_reads().is_some(),
        ..CellView::default()
    });
    let launcher = (sweep.plan.run.launcher.as_ref()).map(|l| l.command(cell.mode.workers()));
    let worker_env = worker_env(cell);
    let starting = start_servers(sweep, cell, arms, roots, &worker_env);
    let mut servers = match interruptible(starting, interrupt).await {
        Ok(s) => s,
        Err(ran) => {
            bar.finish();
            return ran;
        }
    };
    let runs: Vec<CellRun<'_>> = arms
        .iter()
        .zip(roots)
        .enumerate()
        .map(|(k, (arm, root))| CellRun {
            exe: &arm.exe,
            // Where each worker's client goes, by the transport: the store itself, or the
            // REST servers this run started (or the one bench did not).
            workers: args_of(
                sweep,
                job,
                (root, names),
                match (cell.transport.client(), servers.get(k)) {
                    (Client::Directory, _) => Vec::new(),
                    (Client::Rest, Some(s)) => s.uris(),
                    (Client::Rest, None) => cell.rest_uri.iter().cloned().collect(),
                },
            ),
            storage: &worker_env,
            timeout: sweep.plan.run.cell_timeout,
            bound: cell.mode.bound(),
            versions: Some(&arm.versions),
            launcher: launcher.clone(),
            journal: sweep
                .plan
                .run
                .keep_history
                .then(|| history_target(sweep, &cell.id(), job.repetition, arm.name)),
        })
        .collect();
    let others = super::pause::others(cell, &runs);
    let interrupt_seen = interrupt.clone();
    let watched = Watched {
        bar: &bar,
        file: sweep.out.join(RUNNING_FILE),
        cell: label,
        servers: servers.iter().map(Servers::starter).collect(),
        released: Default::default(),
    };
    let timeout = sweep.plan.run.cell_timeout;
    let workers = async {
        if servers.is_empty() {
            return run_workers(runs, pace, timeout, &watched, interrupt).await;
        }
        let (stop, mut stopped) = watch::channel(false);
        let workers = run_workers(runs, pace, timeout, &watched, &mut stopped);
        (with_servers(&mut servers, interrupt, &stop, workers).await).unwrap_or_else(Ran::Failed)
    };
    let workers = paused(others, &interrupt_seen, workers);
    let workers = nemesis(cell, roots, &watched.released, workers);
    let ran = sampled(cell, roots, &watched.released, workers).await;
    watched.clear();
    bar.finish();
    served(&mut servers, ran).await
}

/// `workers`, and a receiver told when they have ended: for what runs beside them.
fn told_at_end(
    workers: impl std::future::Future<Output = Ran>,
) -> (
    impl std::future::Future<Output = Ran>,
    watch::Receiver<bool>,
) {
    let (done, finished) = watch::channel(false);
    let run = async move {
        let ran = workers.await;
        let _ = done.send(true);
        ran
    };
    (run, finished)
}

/// The run of `workers`, with each copy's other client run while the store holds the
/// copy's worker (a campaign's `pause` point: its operations joined to the copy's log), and
/// the worker resumed after.
async fn paused(
    others: Vec<super::pause::Other>,
    interrupt: &watch::Receiver<bool>,
    workers: impl std::future::Future<Output = Ran>,
) -> Ran {
    if others.is_empty() {
        return workers.await;
    }
    let (workers, finished) = told_at_end(workers);
    let sides = super::pause::beside(&others, finished, interrupt);
    let (mut ran, sides) = tokio::join!(workers, sides);
    if let Ran::Measured(m, _) = &mut ran {
        for (arm, side) in m.iter_mut().zip(sides) {
            let Some((account, other)) = side else {
                continue;
            };
            if let Some(other) = other {
                arm.log.extend(other.log);
                arm.clocks.extend(other.clocks);
            }
            arm.while_paused = Some(account);
        }
    }
    ran
}

/// The run of `workers`, with what `__manifest` stored listed while one copy's workers ran
/// (`workload.storage_sample_secs`), from `released`.
async fn sampled(
    cell: &Cell,
    roots: &[String],
    released: &std::sync::OnceLock<std::time::Instant>,
    workers: impl std::future::Future<Output = Ran>,
) -> Ran {
    let Some(every) = cell.storage_sample_secs.filter(|_| roots.len() == 1) else {
        return workers.await;
    };
    let (workers, finished) = told_at_end(workers);
    let samples = super::stored::sample(&roots[0], &cell.storage, every, released, finished);
    let (mut ran, samples) = tokio::join!(workers, samples);
    if let Ran::Measured(m, _) = &mut ran {
        m[0].storage = samples;
    }
    ran
}

/// The run of `workers`, with the plan's `[[nemesis]]` windows switched at the store on its
/// timeline from `released` (each switch in every arm's figures).
async fn nemesis(
    cell: &Cell,
    roots: &[String],
    released: &std::sync::OnceLock<std::time::Instant>,
    workers: impl std::future::Future<Output = Ran>,
) -> Ran {
    if cell.nemesis.is_empty() {
        return workers.await;
    }
    let (workers, finished) = told_at_end(workers);
    let switches =
        crate::store_fault::timeline(&cell.storage, roots, &cell.nemesis, released, finished);
    let (mut ran, switches) = tokio::join!(workers, switches);
    if let Ran::Measured(m, _) = &mut ran {
        for arm in m.iter_mut() {
            arm.nemesis = switches.clone();
        }
    }
    ran
}

/// The run, with what each arm's servers served in its figures, once they are stopped; a
/// server that died or outlived the cell fails it.
async fn served(servers: &mut [Servers], mut ran: Ran) -> Ran {
    let measured = match &mut ran {
        Ran::Measured(m, _) => Some(&mut m[..]),
        Ran::Failed(_) | Ran::Interrupted => None,
    };
    match finish_servers(servers, measured).await {
        Ok(()) => ran,
        Err(why) => Ran::Failed(why),
    }
}

/// Starting servers (up to their listen timeout) gives way to an interrupt: those started
/// are killed as they are dropped. A failure to start fails the run.
pub(super) async fn interruptible(
    starting: impl std::future::Future<Output = Result<Vec<Servers>, String>>,
    interrupt: &mut watch::Receiver<bool>,
) -> Result<Vec<Servers>, Ran> {
    tokio::select! {
        s = starting => s.map_err(Ran::Failed),
        _ = interrupt.wait_for(|&stop| stop) => Err(Ran::Interrupted),
    }
}
