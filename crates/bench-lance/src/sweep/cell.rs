//! One run (repetition) of one cell: a fresh copy of its golden, its workers run by the
//! coordinator, the copy's `__manifest` verified, and the record assembled.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::sync::watch;

use super::Sweep;
use crate::arm::{ARM_A, Arm};
use crate::catalog;
use crate::clock::{now_utc_ms, unix_ms};
use crate::coordinator::servers::{ServerSpec, Servers, Starter};
use crate::coordinator::{
    self, ArmUnits, CellRun, Observer, Outcome, Pace, PairOutcome, PairingKind,
};
use crate::error::BenchError;
use crate::export::Record;
use crate::export::assemble::{self, Provenance, Verification};
use crate::export::record;
use crate::golden::Golden;
use crate::plan::{Catalog, Cell, Client, Entry};
use crate::progress::{CellBar, CellView, Progress};
use crate::state::{State, Status};
use crate::stats::Measured;
use crate::verify;
use crate::worker::WorkerArgs;
use bench_core::serve::ServeArgs;

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

/// The arguments of the cell's workers, running on the copy at `root` (through the REST
/// servers at `rest`, where the cell has them).
fn worker_args(
    cell: &Cell,
    root: &str,
    trace: u32,
    rest: Vec<String>,
    names: &str,
) -> Vec<WorkerArgs> {
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
            tables: cell.golden.entries(Entry::Table),
            namespaces: cell.golden.entries(Entry::Namespace),
            operations: cell.mode.operations(),
            duration_secs,
            reads_per_write: mix.map(|(_, r)| r),
            read_operation: mix.map(|(op, _)| op),
            trace,
            s3_shaped: cell.s3_shaped,
            attempt_timeout_ms: cell.attempt_timeout_ms,
            rows_per_commit: cell.rows_per_commit,
            page_size: cell.page_size,
            rest: rest.clone(),
            names: names.to_string(),
            // A mixed cell's load counts its commits; its workers schedule every operation,
            // each commit's reads before it.
            rate: (cell.mode.load()).map(|l| l.rate() * (1 + mix.map_or(0, |(_, r)| r)) as f64),
            writers: cell.mode.workers(),
            poisson: cell
                .mode
                .load()
                .is_some_and(|l| l.arrivals == crate::plan::Arrivals::Poisson),
            fixture: cell.golden.fixture,
            role: None,
        })
        .map(|args| with_role(cell, args))
        .collect()
}

/// A client of a cell of roles: its role (clients numbered role after role), whose rate it
/// shares with the role's other clients, and its own seed.
fn with_role(cell: &Cell, mut args: WorkerArgs) -> WorkerArgs {
    let removes = |r: &crate::plan::Role| r.mix.iter().any(|(op, _)| op.removes());
    let removers: u32 = (cell.roles.iter().filter(|r| removes(r)))
        .map(|r| r.clients)
        .sum();
    let (mut first, mut first_remover) = (0, 0);
    for (index, role) in cell.roles.iter().enumerate() {
        if args.worker_id < first + role.clients {
            args.operation = role.mix[0].0;
            args.rate = role.rate;
            args.writers = role.clients;
            args.role = Some(bench_core::protocol::RoleArgs {
                index: index as u32,
                role: role.clone(),
                remover: first_remover + (args.worker_id - first),
                removers,
                seed: crate::plan::client_seed(cell.seed, index, args.worker_id),
            });
            return args;
        }
        first += role.clients;
        if removes(role) {
            first_remover += role.clients;
        }
    }
    args
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
    let rel = format!("{}/{name}.json", crate::trace::TRACE_DIR);
    let trace = crate::trace::chrome_trace(&name, &m.traces);
    let path = sweep.out.join(&rel);
    let written = std::fs::create_dir_all(sweep.out.join(crate::trace::TRACE_DIR))
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
/// plus every catalog commit (warm-up included), each reported object present; less every
/// removal, each removed entry gone. Reads and table operations leave it as the golden left
/// it; the shared table of table operations must hold the golden's rows plus every table
/// commit's.
async fn verification(
    cell: &Cell,
    root: &str,
    golden: &Golden,
    m: &Measured,
    names: &str,
) -> Verification {
    let before = golden.marker.manifest_rows;
    if !cell.roles.is_empty() {
        return role_verification(cell, root, before, m).await;
    }
    // What the cell's commits leave behind, by its operation's descriptor.
    use crate::plan::Effect;
    let effect = cell.operation.describe().effect;
    let (change, on_table) = match effect {
        Effect::CatalogRow => (Some(verify::Change::Added), false),
        Effect::CatalogRowGone => (Some(verify::Change::Removed), false),
        Effect::TableVersion | Effect::TableProperty => (None, true),
        Effect::Nothing => (None, false),
    };
    // The entries the measured commits named (those of the warm-up are counted only).
    let targets = catalog::Targets {
        worker: 0,
        writers: cell.mode.workers(),
        golden: golden_entries(cell),
        warmup: cell.warmup,
    };
    let named = |&(w, i): &(u32, u64)| {
        let t = catalog::Targets {
            worker: w,
            ..targets
        };
        t.of(cell.operation, i, false, names).ok()
    };
    let ids: Vec<String> = (m.committed.iter().filter(|_| change.is_some()))
        .filter_map(|c| named(c).map(|a| a.id))
        .collect();
    // Property updates: each worker's key and its last acknowledged index.
    let mut properties = BTreeMap::new();
    if effect == Effect::TableProperty {
        for c in &m.committed {
            if let Some((key, _)) = named(c).and_then(|a| a.property) {
                let last = properties.entry(key).or_insert(c.1);
                *last = (*last).max(c.1);
            }
        }
    }
    // An abandoned commit may have landed; an abandoned read changes nothing.
    let abandoned = |counts: bool| if counts { m.timeouts } else { 0 };
    let warm = if change.is_some() {
        m.warmup_committed
    } else {
        0
    };
    let expect = verify::CatalogExpect {
        before,
        warm,
        change: change.unwrap_or(verify::Change::Added),
        abandoned: abandoned(change.is_some()),
    };
    let (after, mut error) = verify::commits(root, &cell.storage, &expect, &ids).await;
    if let (Some(e), Some(uri)) = (&mut error, &cell.rest_uri) {
        e.push_str(&format!(
            " (is `root`, {root}, the catalog the server at {uri} serves, and no one else \
             committing to it?)"
        ));
    }
    let mut table = None;
    if let (Some(rows_per_commit), Some(t)) = (cell.rows_per_commit, &golden.marker.table) {
        let commits = if on_table {
            m.warmup_committed + m.committed.len() as u64
        } else {
            0
        };
        let expect = verify::TableExpect {
            // A property update writes no rows.
            rows_per_commit: if effect == Effect::TableProperty {
                0
            } else {
                rows_per_commit
            },
            rows_before: t.rows,
            version_before: t.version,
            commits,
            abandoned: abandoned(on_table),
            properties,
        };
        let (state, table_error) = verify::table(root, &cell.storage, &expect).await;
        table = state;
        error = error.or(table_error);
    }
    Verification {
        rows_before: before,
        rows_after: after,
        error,
        table,
        resolved: None,
    }
}

/// The entries of a cell's golden, as its workers name them.
pub(crate) fn golden_entries(cell: &Cell) -> catalog::Golden {
    catalog::Golden {
        tables: cell.golden.entries(Entry::Table),
        namespaces: cell.golden.entries(Entry::Namespace),
        fixture: cell.golden.fixture,
    }
}

/// A cell of roles: what its clients reported creating, removing and setting, each named
/// (`Measured::written`), against its copy.
async fn role_verification(cell: &Cell, root: &str, before: u64, m: &Measured) -> Verification {
    use crate::plan::Effect;
    let mut e = verify::RolesExpect {
        before,
        ..Default::default()
    };
    for w in &m.written {
        let Some(&(op, _)) =
            (cell.roles.get(w.role as usize)).and_then(|r| r.mix.get(w.op as usize))
        else {
            continue;
        };
        let slot = match op.describe().effect {
            Effect::CatalogRow => 0,
            Effect::CatalogRowGone => 1,
            Effect::TableProperty => 2,
            Effect::TableVersion | Effect::Nothing => continue,
        };
        if !w.ok {
            e.abandoned[slot] += 1;
            if slot < 2 {
                e.indeterminate[slot].push(w.target.clone());
            }
            continue;
        }
        match slot {
            0 => e.created.push(w.target.clone()),
            1 => e.removed.push(w.target.clone()),
            _ => {
                let Some((table, property)) = w.target.rsplit_once('#') else {
                    continue;
                };
                let Some((key, value)) = property.split_once('=') else {
                    continue;
                };
                let index = value.parse().unwrap_or(0);
                let last = (e.properties)
                    .entry((table.to_string(), key.to_string()))
                    .or_insert(index);
                *last = (*last).max(index);
            }
        }
    }
    let (after, error, landed) = verify::roles(root, &cell.storage, &e).await;
    Verification {
        rows_before: before,
        rows_after: after,
        error,
        table: None,
        resolved: landed,
    }
}

/// How the two arms of `bench ab` form their pairs inside one run of a cell (not with
/// [`Pairing::Runs`], whose arms run one after the other).
#[derive(Debug, Clone, Copy)]
pub(super) struct RunPairing {
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

impl RunPairing {
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
    /// A rest cell's servers, told that the window begins at release.
    servers: Vec<Starter>,
}

impl Watched<'_> {
    fn clear(&self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

impl Observer for Watched<'_> {
    fn released(&self) {
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
    pair: Option<RunPairing>,
    progress: &Progress,
    state: &mut State,
    interrupt: &mut watch::Receiver<bool>,
) -> Result<CellResult, BenchError> {
    let Job {
        cell, repetition, ..
    } = job;
    let (id, key) = (cell.id(), cell.key());
    // A build rebuilt while the sweep runs is no longer the one its cells' keys name.
    for arm in job.arms {
        arm.unchanged(
            &arm_label(arm, cell),
            arm.name.is_some() || cell.build.is_some(),
        )?;
    }
    let began = std::time::Instant::now();
    let run_rel = format!("runs/{id}");
    // Opened anew for every run, as the workers are: credentials that changed since the
    // sweep started (rotated keys in a profile) are picked up here too.
    let store = &sweep.store.reopen().await?;
    state.set(&id, &key, Status::Running, None);
    state.save(&sweep.out)?;
    let pace = pair
        .filter(|_| job.arms.len() == 2)
        .map(|p| p.pace(cell, repetition));
    // Paired, each arm has its own copy under the cell's prefix.
    let rels: Vec<String> = if pace.is_some() {
        (job.arms.iter())
            .map(|a| format!("{run_rel}/{}", a.name.unwrap_or(ARM_A)))
            .collect()
    } else {
        vec![run_rel.clone()]
    };
    // A server bench did not start: its catalog itself, where each run marks the names of
    // what it commits as its own.
    let catalog = cell.transport.catalog();
    let copied = match catalog {
        Catalog::Theirs => Ok(Vec::new()),
        Catalog::Copies => copy_golden(sweep, store, job.golden, &rels).await,
    };
    let result = match copied {
        Err(reason) => {
            let _ = store.remove_prefix(&run_rel).await;
            return Ok(CellResult::Failed(reason));
        }
        Ok(copies) => {
            let (roots, names) = match catalog {
                Catalog::Theirs => (vec![store.root_uri()], format!("_r{:x}", unix_ms())),
                Catalog::Copies => (rels.iter().map(|r| store.uri(r)).collect(), String::new()),
            };
            let started_at = now_utc_ms();
            let ran = watch_workers(sweep, &job, &roots, &names, pace, progress, interrupt).await;
            let run = Run {
                names: &names,
                sweep,
                job: &job,
                roots: &roots,
                copies: &copies,
                started_at,
                scheme: store.scheme(),
                pilot: pair.and_then(|p| p.pilot),
            };
            run.result(ran, progress, interrupt).await
        }
    };
    if !sweep.plan.run.keep_runs
        && catalog == Catalog::Copies
        && let Err(e) = store.remove_prefix(&run_rel).await
    {
        progress.log(format!(
            "warning: {id}: its copy {run_rel} was not removed ({e}); its results are kept, \
             and the sweep's cleanup (run.cleanup) or its next run removes it"
        ));
    }
    let mut result = result;
    if let CellResult::Recorded(records) = &mut result {
        // The run's whole time, copies, verification and removal included: what a budget
        // counts.
        let ms = (began.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0;
        for r in records {
            r.wall_ms = Some(ms);
        }
    }
    Ok(result)
}

/// Copy the golden to each of `rels` (one per arm that runs on a copy of its own): how each
/// copy went, or why one failed.
async fn copy_golden(
    sweep: &Sweep,
    store: &crate::store::Store,
    golden: &Golden,
    rels: &[String],
) -> Result<Vec<record::CopyTime>, String> {
    let mut copies = Vec::new();
    for rel in rels {
        let began = std::time::Instant::now();
        let objects = store.copy_prefix(&golden.rel, rel).await.map_err(|e| {
            format!(
                "cannot copy golden {} to {rel}: {e}; make room or fix the store, then re-run \
                 with --retry-failed",
                golden.rel
            )
        })?;
        copies.push(record::CopyTime {
            objects,
            parallelism: sweep.plan.run.copy_parallelism,
            ms: (began.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0,
        });
    }
    Ok(copies)
}

/// The display's name of a run: the cell, its repetition, and its arms.
fn run_label(id: &str, repetition: u32, of: u32, paired: bool, arm: Option<&str>) -> String {
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

/// Start the run's workers on their copies (`roots`, one per arm) and watch them to the end,
/// with the cell's bar.
async fn watch_workers(
    sweep: &Sweep,
    job: &Job<'_>,
    roots: &[String],
    names: &str,
    pace: Option<Pace>,
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
            Some(p) if p.paced() => duration * 2,
            _ => duration,
        }),
        mixed: cell.mode.mixed_reads().is_some(),
        ..CellView::default()
    });
    let launcher = (sweep.plan.run.launcher.as_ref()).map(|l| l.command(cell.mode.workers()));
    // The workers' environment: storage options, the namespace properties and the plan's
    // variables, each under its prefix.
    let mut worker_env = cell.storage.clone();
    for (prefix, map) in [
        (crate::worker::protocol::PROPERTY_PREFIX, &cell.properties),
        (crate::worker::protocol::ENV_PREFIX, &cell.env),
    ] {
        worker_env.extend(map.iter().map(|(k, v)| (format!("{prefix}{k}"), v.clone())));
    }
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
            workers: worker_args(
                cell,
                root,
                sweep.plan.run.trace_operations,
                // Where each worker's client goes, by the transport: the store itself, or
                // the REST servers this run started (or the one bench did not).
                match (cell.transport.client(), servers.get(k)) {
                    (Client::Directory, _) => Vec::new(),
                    (Client::Rest, Some(s)) => s.uris(),
                    (Client::Rest, None) => cell.rest_uri.iter().cloned().collect(),
                },
                names,
            ),
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
        servers: servers.iter().map(Servers::starter).collect(),
    };
    let timeout = sweep.plan.run.cell_timeout;
    let ran = if servers.is_empty() {
        run_workers(runs, pace, timeout, &watched, interrupt).await
    } else {
        let (stop, mut stopped) = watch::channel(false);
        let workers = run_workers(runs, pace, timeout, &watched, &mut stopped);
        with_servers(&mut servers, interrupt, &stop, workers).await
    };
    watched.clear();
    bar.finish();
    finish_servers(&mut servers, ran).await
}

/// Starting servers (up to their listen timeout) gives way to an interrupt: those started
/// are killed as they are dropped. A failure to start fails the run.
async fn interruptible(
    starting: impl std::future::Future<Output = Result<Vec<Servers>, String>>,
    interrupt: &mut watch::Receiver<bool>,
) -> Result<Vec<Servers>, Ran> {
    tokio::select! {
        s = starting => s.map_err(Ran::Failed),
        _ = interrupt.wait_for(|&stop| stop) => Err(Ran::Interrupted),
    }
}

/// Run the workers (`workers`, stopped through `stop`) while watching the servers: a
/// server that dies stops the workers at once, as an interrupt does, and fails the run
/// with its reason; the user's interrupt is passed on.
async fn with_servers(
    servers: &mut [Servers],
    interrupt: &mut watch::Receiver<bool>,
    stop: &watch::Sender<bool>,
    workers: impl std::future::Future<Output = Ran>,
) -> Ran {
    tokio::pin!(workers);
    let (mut died, mut passed) = (None, false);
    loop {
        tokio::select! {
            ran = &mut workers => {
                return match died {
                    Some(why) => Ran::Failed(why),
                    None => ran,
                };
            }
            _ = interrupt.changed(), if !passed => {
                passed = true;
                let _ = stop.send(true);
            }
            _ = tokio::time::sleep(Duration::from_millis(50)), if died.is_none() => {
                died = servers.iter_mut().find_map(Servers::exited);
                if died.is_some() {
                    let _ = stop.send(true);
                }
            }
        }
    }
}

/// A rest cell's servers, one set per arm on its copy, listening; none for a direct cell.
async fn start_servers(
    sweep: &Sweep,
    cell: &Cell,
    arms: &[&Arm],
    roots: &[String],
    env: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<Servers>, String> {
    let count = cell.transport.servers();
    let mut started = Vec::new();
    if count == 0 {
        return Ok(started);
    }
    for (arm, root) in arms.iter().zip(roots) {
        let spec = ServerSpec {
            exe: &arm.exe,
            args: ServeArgs {
                root: root.clone(),
                inline: cell.golden.inline,
                commit_retries: cell.commit_retries,
                s3_shaped: cell.s3_shaped,
                bind: sweep.plan.rest.bind.clone(),
                port: 0,
                supervised: true,
            },
            env,
            count,
            launcher: (sweep.plan.rest.launcher.as_ref()).map(|l| l.command(count)),
        };
        match Servers::start(spec).await {
            Ok(s) => started.push(s),
            Err(reason) => {
                for s in &mut started {
                    let _ = s.stop().await;
                }
                return Err(reason);
            }
        }
    }
    Ok(started)
}

/// After the workers: what each arm's servers served (into its figures), and the servers
/// stopped. A server that died during the cell, or outlived it, fails the run.
async fn finish_servers(servers: &mut [Servers], ran: Ran) -> Ran {
    let mut ran = ran;
    if let Ran::Measured(measured, _) = &mut ran {
        for (s, m) in servers.iter_mut().zip(measured.iter_mut()) {
            let served = match s.exited() {
                Some(why) => Err(why),
                None => s.report().await,
            };
            match served {
                Ok(reports) => m.servers = reports,
                Err(why) => {
                    ran = Ran::Failed(why);
                    break;
                }
            }
        }
    }
    for s in servers.iter_mut() {
        if let Err(e) = s.stop().await {
            ran = Ran::Failed(e);
        }
    }
    ran
}

/// One run of a cell, once its workers are done: what the records need of it.
struct Run<'a> {
    /// What the run adds to the names of what it commits (a run on an external server's
    /// catalog), else empty.
    names: &'a str,
    sweep: &'a Sweep,
    job: &'a Job<'a>,
    roots: &'a [String],
    copies: &'a [record::CopyTime],
    started_at: String,
    scheme: &'static str,
    /// Precision mode, after its pilot: the pilot's repetitions (recorded with the units).
    pilot: Option<u32>,
}

impl Run<'_> {
    /// What the workers measured, verified and made records of (one per arm).
    async fn result(
        &self,
        ran: Ran,
        progress: &Progress,
        interrupt: &mut watch::Receiver<bool>,
    ) -> CellResult {
        let (measured, units) = match ran {
            Ran::Interrupted => return CellResult::Interrupted,
            Ran::Failed(reason) => return CellResult::Failed(reason),
            Ran::Measured(measured, units) => (measured, units),
        };
        crate::fault::pause("verify", interrupt).await;
        let (cell, arms) = (self.job.cell, self.job.arms);
        let mut records = Vec::new();
        for (k, (m, root)) in measured.iter().zip(self.roots).enumerate() {
            crate::fault::lose_manifest(root);
            let v = verification(cell, root, self.job.golden, m, self.names).await;
            let p = Provenance {
                plan: &self.sweep.plan.name,
                arm: arms[k].name,
                versions: &arms[k].versions,
                digest: Some(&arms[k].digest),
                repetition: self.job.repetition,
                started_at: self.started_at.clone(),
                finished_at: now_utc_ms(),
                storage_scheme: self.scheme,
            };
            let mut r = assemble::assemble(cell, m, v, p);
            r.copy = self.copies.get(k).copied();
            if !m.traces.is_empty() {
                let (id, rep) = (cell.id(), self.job.repetition);
                r.trace = write_trace(self.sweep, &id, rep, arms[k].name, m, progress);
            }
            r.paired = units
                .as_ref()
                .map(|(u, kind)| record::PairUnits::new(*kind, &u[k], self.pilot));
            records.push(r);
        }
        CellResult::Recorded(records)
    }
}

/// How messages name an arm: `arm B`, `build cow`, or this bench.
fn arm_label(arm: &Arm, cell: &Cell) -> String {
    match (arm.name, &cell.build) {
        (Some(n), _) => format!("arm {n}"),
        (None, Some(b)) => format!("build {}", b.name),
        (None, None) => "the bench binary".to_string(),
    }
}
