//! `bench run`: every pending cell of the plan in order, resuming from the checkpoint, the
//! outputs brought up to date after every cell.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use tokio::sync::watch;

use super::Sweep;
use super::cell::{self, CellResult};
use super::pairing::{Pairing, RunPairing};
use super::precision::Until;
use super::resume::{self, CellStatus};
use super::workers::Job;
use crate::catalog;
use crate::error::{BenchError, exit, io_err};
use crate::export::{Record, jsonl};
use crate::golden::{self, Golden, GoldenConfig};
use crate::plan::{Catalog, Cell, Cleanup, GoldenSpec};
use crate::progress::{Display, Progress, Work};
use crate::state::{State, Status};

pub use crate::arm::{ARM_A, ARM_B, Arm};

pub struct RunOptions {
    pub fresh: bool,
    pub retry_failed: bool,
    pub display: Display,
    /// `--verbose`: each finished run's line says its cost, floor and bytes too.
    pub verbose: bool,
    /// `bench ab`: how its two arms form their pairs.
    pub pairs: Option<AbOptions>,
}

/// How `bench ab` pairs its arms, and how long it goes on.
#[derive(Debug, Clone, Copy)]
pub struct AbOptions {
    pub pairing: Pairing,
    /// The length of a time slice (and of a duet's bucket).
    pub slice: Duration,
    /// How long each cell runs: the plan's repetitions, until its interval decides at the
    /// threshold (the default), or Stein's count for `--precision`.
    pub until: Until,
    /// The time a cell may take beyond the plan's repetitions.
    pub budget: Duration,
}

impl AbOptions {
    /// Pairs inside a cell (lockstep, slices, duet), not whole runs one after the other.
    fn inside(&self) -> bool {
        self.pairing != Pairing::Runs
    }
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

use bench_core::results::archive::archive_outputs;

/// Interrupt flag set by Ctrl-C or SIGTERM; a second signal exits at once.
fn watch_signals(log: crate::progress::Logger) -> watch::Receiver<bool> {
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
                log.log(
                    "interrupted: stopping the running cell (press Ctrl-C again to exit at once)",
                );
                let _ = tx.send(true);
            } else {
                // At once: every worker and server this run started goes with it. The
                // running cell stays checkpointed as running, so the next run removes its
                // copy and runs it again.
                crate::coordinator::kill_every_group();
                log.log(
                    "interrupted again: stopped at once, its workers and servers killed; the \
                     running cell is pending again (its copy is removed when the sweep \
                     resumes); re-run the same command to resume",
                );
                std::process::exit(i32::from(exit::INTERRUPTED));
            }
        }
    });
    rx
}

/// A sweep being run: what it has recorded so far and how it is shown.
struct Runner<'a> {
    sweep: &'a Sweep,
    opts: &'a RunOptions,
    state: State,
    records: Vec<Record>,
    progress: Progress,
    interrupt: watch::Receiver<bool>,
    arms: &'a [Arm],
    goldens: HashMap<GoldenSpec, Result<Golden, String>>,
    /// Cells this run has decided not to run further (done, skipped, failed).
    settled: HashSet<String>,
    report: RunReport,
}

/// Take the results directory: the store checked first (a bad root or a failed S3
/// preflight writes nothing locally), then the lock, `--fresh`, the checkpoint and the
/// records, with a torn last line cut and dirty copies of interrupted cells removed.
/// What `open` found: the lock held, the checkpoint, the records, and notices to log.
struct Opened {
    _lock: crate::lock::RunLock,
    claim: crate::store::Claim,
    state: State,
    records: Vec<Record>,
    notices: Vec<String>,
}

async fn open(
    sweep: &Sweep,
    opts: &RunOptions,
    arms: &[Option<&str>],
) -> Result<Opened, BenchError> {
    let out = &sweep.out;
    sweep.store.prepare().await?;
    probe_external(sweep).await?;
    let had_dir = out.exists();
    let had_lock = out.join(crate::lock::LOCK_FILE).exists();
    std::fs::create_dir_all(out).map_err(io_err("create results directory", out))?;
    let lock = crate::lock::acquire(out)?;
    // The store root too, before anything is moved or written: another sweep on it would
    // remove this one's copies and goldens. Refused, this run leaves nothing behind.
    let claim = match sweep.store.claim(out).await {
        Ok(c) => c,
        Err(e) => {
            drop(lock);
            if !had_lock {
                let _ = std::fs::remove_file(out.join(crate::lock::LOCK_FILE));
            }
            if !had_dir {
                let _ = std::fs::remove_dir(out);
            }
            return Err(e);
        }
    };
    match take(sweep, opts, arms).await {
        Ok((state, records, notices)) => Ok(Opened {
            _lock: lock,
            claim,
            state,
            records,
            notices,
        }),
        Err(e) => {
            claim.release().await;
            Err(e)
        }
    }
}

/// An external server (`rest.uri` with `rest.external = true`) must answer before anything
/// runs: a refused connection would otherwise fail every operation of every cell.
async fn probe_external(sweep: &Sweep) -> Result<(), BenchError> {
    let Some(uri) = sweep.plan.rest.external.as_deref() else {
        return Ok(());
    };
    catalog::probe_rest(uri, Duration::from_secs(30))
        .await
        .map_err(|e| {
            BenchError::store(format!(
                "the external REST server at {uri} (rest.uri) does not answer: {e}; start it \
                 first (e.g. `bench serve --root ROOT --bind HOST --port PORT`, see docs/plan.md, \
                 \"An external server\") or fix rest.uri"
            ))
        })
}

/// With the results directory and the store root held: `--fresh`, the checkpoint and the
/// records checked against this sweep, what a crash left repaired, and the checkpoint
/// brought in line with the records.
async fn take(
    sweep: &Sweep,
    opts: &RunOptions,
    arms: &[Option<&str>],
) -> Result<(State, Vec<Record>, Vec<String>), BenchError> {
    let out = &sweep.out;
    let mut notices = Vec::new();
    if opts.fresh
        && let Some(dest) = archive_outputs(out)?
    {
        notices.push(format!(
            "--fresh: earlier outputs moved to {}",
            dest.display()
        ));
    }
    let mut state = sweep.state()?;
    same_shard(sweep, &state)?;
    let records = repaired_records(sweep, &mut notices)?;
    // The cells' keys depend on the store: a resume against another one would run every
    // cell again, on another store, and mix their records.
    if let Some(was) = sweep.other_store(&state)
        && !state.cells.is_empty()
    {
        return Err(BenchError::Usage(format!(
            "{} was run with {}; give the same to resume it (another store would run every \
             cell again), or another --out",
            out.display(),
            was.store_args()
        )));
    }
    let (pairing, before) = same_pairing(sweep, opts, &state, &records)?;
    state.sweep = Some(crate::state::SweepInfo {
        pairing: pairing.or(before),
        ..sweep.info()
    });
    for (id, c) in &state.cells {
        if c.status == Status::Running {
            sweep.store.remove_prefix(&format!("runs/{id}")).await?;
        }
    }
    // Bring the checkpoint in line with the records (a crash between appending a
    // result and checkpointing it; a record that failed verification, checkpointed done
    // by a bench older than the rule that fails its cell).
    for cell in sweep.cells() {
        let (id, key) = (cell.id(), cell.key());
        let now = match sweep.standing(&state, &records, cell, arms, false).status {
            CellStatus::Done => Status::Done,
            CellStatus::Failed => Status::Failed,
            _ => continue,
        };
        let entry = state.cells.get(&id);
        if entry.is_none_or(|c| c.status != now || c.key != key) {
            let reason = (now == Status::Failed)
                .then(|| resume::unverified(&records, (&id, &key), arms).map(unverified_reason))
                .flatten();
            state.set(&id, &key, now, reason);
        }
    }
    state.save(out)?;
    Ok((state, records, notices))
}

/// A directory holds one shard (or the whole sweep): another is refused.
fn same_shard(sweep: &Sweep, state: &State) -> Result<(), BenchError> {
    let had = state.sweep.as_ref().map(|i| i.shard);
    if let Some(had) = had
        && had != sweep.shard
        && !state.cells.is_empty()
    {
        let name = |s: Option<crate::sweep::shard::Shard>| match s {
            Some(s) => format!("shard {s}"),
            None => "the whole sweep (no --shard)".to_string(),
        };
        return Err(BenchError::Usage(format!(
            "{} holds {} of plan `{}`, not {}; give each shard its own --out",
            sweep.out.display(),
            name(had),
            sweep.plan.name,
            name(sweep.shard)
        )));
    }
    Ok(())
}

/// The records, with what a crash left at the end of the file cut (and said).
fn repaired_records(sweep: &Sweep, notices: &mut Vec<String>) -> Result<Vec<Record>, BenchError> {
    let results = sweep.results_path();
    let cut = jsonl::repair(&results).map_err(io_err("repair", &results))?;
    if cut.torn {
        notices.push(format!(
            "{}: removed a torn last line left by a crash; its cell runs again",
            results.display()
        ));
    }
    if cut.lone_half {
        notices.push(format!(
            "{}: removed the lone half of a pair left by a crash; the pair runs again",
            results.display()
        ));
    }
    jsonl::read_all(&results).map_err(BenchError::output)
}

/// An A/B directory keeps the pairing it was started with, and is resumed by `bench ab`
/// only. Returns this run's pairing and the directory's.
fn same_pairing(
    sweep: &Sweep,
    opts: &RunOptions,
    state: &State,
    records: &[Record],
) -> Result<(Option<String>, Option<String>), BenchError> {
    let out = &sweep.out;
    let pairing = opts.pairs.map(|p| p.pairing.as_str().to_string());
    let before = (state.sweep.as_ref().and_then(|i| i.pairing.clone())).or_else(|| {
        records
            .iter()
            .any(|r| r.arm.is_some())
            .then(|| "runs".into())
    });
    if before.is_some() && pairing.is_none() {
        return Err(BenchError::Usage(format!(
            "{} holds the A/B pairs of `bench ab`; resume it with the same `bench ab` \
             command, or give `bench run` another --out",
            out.display()
        )));
    }
    if let (Some(was), Some(now)) = (&before, &pairing)
        && was != now
    {
        return Err(BenchError::Usage(format!(
            "{} holds A/B pairs formed with --pairing {was}; resume it with --pairing {was}, \
             or give another --out (or --fresh) for --pairing {now}",
            out.display()
        )));
    }
    Ok((pairing, before))
}

/// Whether a run's rule has nothing to add to a cell (see [`precision::rule_stopped`]).
fn rule_stopped(opts: &RunOptions, state: &State, records: &[Record], cell: &Cell) -> bool {
    let rule = opts.pairs.map(|p| (p.until, p.budget));
    super::precision::rule_stopped(rule, state, records, cell)
}

/// `bench run` (one arm) and `bench ab` (two): run every pending cell, resuming from the
/// checkpoint. The arms' workers were checked before (see [`Arm::checked`]).
pub async fn run(sweep: &Sweep, opts: &RunOptions, arms: &[Arm]) -> Result<RunReport, BenchError> {
    let names: Vec<Option<&str>> = arms.iter().map(|a| a.name).collect();
    let Opened {
        _lock,
        claim,
        state,
        records,
        notices,
    } = open(sweep, opts, &names).await?;
    let ran = run_opened(sweep, opts, arms, state, records, notices).await;
    // The root is given back however the run ended (an error too).
    claim.release().await;
    ran
}

async fn run_opened(
    sweep: &Sweep,
    opts: &RunOptions,
    arms: &[Arm],
    state: State,
    records: Vec<Record>,
    notices: Vec<String>,
) -> Result<RunReport, BenchError> {
    let names: Vec<Option<&str>> = arms.iter().map(|a| a.name).collect();
    let cells = sweep.cells();
    let predicted = sweep.predicted_left(
        &state,
        &records,
        &names,
        opts.retry_failed,
        &Default::default(),
    );
    // Done, and nothing for bench ab's rule to add.
    let done_before = cells
        .iter()
        .filter(|c| sweep.standing(&state, &records, c, &names, false).status == CellStatus::Done)
        .filter(|c| rule_stopped(opts, &state, &records, c))
        .count() as u64;
    let display = crate::progress::choose(
        opts.display,
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
        std::env::var_os("CI").is_some(),
    );
    let progress = Progress::new(display, cells.len() as u64, done_before, predicted);
    for n in notices {
        progress.log(n);
    }
    let interrupt = watch_signals(progress.logger());
    let mut r = Runner {
        sweep,
        opts,
        state,
        records,
        progress,
        interrupt,
        arms,
        goldens: HashMap::new(),
        settled: HashSet::new(),
        report: RunReport::default(),
    };
    r.write_derived()?;
    r.say_what_runs(cells.len(), done_before, predicted).await;
    let plan_run = &sweep.plan.run;
    let shapes: Vec<String> = cells.iter().map(|c| c.shape_id()).collect();
    let groups: Vec<usize> = (0..cells.len())
        .map(|i| shapes.iter().position(|s| *s == shapes[i]).unwrap_or(i))
        .collect();
    for (c, repetition) in crate::order::schedule(&groups, plan_run.repetitions, plan_run.order) {
        r.repetition(cells[c], repetition).await?;
        if r.stopped() {
            break;
        }
    }
    r.end().await;
    Ok(r.report)
}

impl Runner<'_> {
    /// The sweep's first lines: what it holds and what is left, its builds and namespace
    /// properties, what `--trace` will not see, and the store's credentials.
    async fn say_what_runs(&self, cells: usize, done: u64, predicted: crate::progress::Predicted) {
        let sweep = self.sweep;
        self.progress.log(format!(
            "sweep `{}`{}{}: {cells} cells, {done} already done; results in {}; {} to run \
             (estimated)",
            sweep.plan.name,
            match sweep.shard {
                Some(s) => format!(" shard {s}"),
                None => String::new(),
            },
            match sweep.only {
                true => format!(" (--only: {cells} of its {})", sweep.planned.len()),
                false => String::new(),
            },
            sweep.out.display(),
            super::estimate::about(predicted.total())
        ));
        for line in sweep.namespace_note() {
            self.progress.log(line);
        }
        for line in sweep.starved_note(&self.records) {
            self.progress.log(line);
        }
        // A trace is of the runs a sweep makes: done cells are not run again for it.
        if sweep.plan.run.trace_operations > 0 && done > 0 {
            let (are, get) = if done == 1 {
                ("is", "it gets")
            } else {
                ("are", "they get")
            };
            self.progress.log(format!(
                "note: traces are written of the runs this sweep makes; {} already done {are} \
                 not run again, so {get} no trace: trace them with --fresh (earlier outputs \
                 are moved aside) or into another --out",
                crate::plan::count(done, "cell", "cells"),
            ));
        }
        for line in sweep.credentials_note(predicted.total()).await {
            self.progress.log(line);
        }
    }

    /// The sweep's end: the bars finished; unless interrupted, the store's cleanup (what is
    /// left there is no reason to fail a sweep whose results are safe) and the final line.
    async fn end(&mut self) {
        self.progress.finish(self.report.interrupted);
        if self.report.interrupted {
            return;
        }
        let names = self.names();
        if let Err(e) = cleanup(self.sweep, &self.state, &self.records, &names).await {
            self.progress.log(format!(
                "warning: the store's cleanup (run.cleanup) did not finish ({e}); every \
                 result is kept; remove what is left under {} when the store allows it",
                self.sweep.store.root_uri()
            ));
        }
        self.progress.log(self.final_line());
    }

    fn names(&self) -> Vec<Option<&'static str>> {
        self.arms.iter().map(|a| a.name).collect()
    }

    /// On its first visit, decide whether a cell runs at all: not when done, nor when it
    /// failed before (without `--retry-failed`). Returns whether it is settled.
    fn settle(&mut self, cell: &Cell) -> bool {
        let id = cell.id();
        if self.settled.contains(&id) {
            return true;
        }
        let standing = self
            .sweep
            .standing(&self.state, &self.records, cell, &self.names(), false);
        match standing.status {
            // A cell run until it decides (or by Stein's count) is done once its rule has
            // stopped it: one interrupted before, or decided at another threshold, goes on.
            CellStatus::Done if !self.stopped_by_rule(cell) => return false,
            CellStatus::Done => self.report.skipped_done += 1,
            CellStatus::Failed if !self.opts.retry_failed => {
                self.report.failed_not_retried += 1;
                let reason = self.failed_reason(cell);
                self.progress.log(format!(
                    "skip {id}: failed earlier ({reason}); re-run with --retry-failed to try again"
                ));
                self.progress.cell_finished();
            }
            _ => return false,
        }
        self.settled.insert(id);
        true
    }

    /// Why a cell stands failed: its checkpoint's reason, or the verification its latest
    /// record of a repetition failed.
    fn failed_reason(&self, cell: &Cell) -> String {
        let (id, key) = (cell.id(), cell.key());
        let names = self.names();
        let checkpoint = self.state.cells.get(&id).and_then(|c| c.reason.clone());
        checkpoint
            .or_else(|| {
                resume::unverified(&self.records, (&id, &key), &names).map(unverified_reason)
            })
            .unwrap_or_else(|| "no reason recorded".into())
    }

    /// `bench ab`: whether this run's rule has nothing to add to the cell (see
    /// [`rule_stopped`]).
    fn stopped_by_rule(&self, cell: &Cell) -> bool {
        rule_stopped(self.opts, &self.state, &self.records, cell)
    }

    /// Whether the sweep was interrupted (Ctrl-C or SIGTERM): also between the steps a
    /// signal does not cut short (a golden's build, a copy, a verification, which finish
    /// first), so that the sweep stops at the next step and exits 130, never 0.
    fn stopped(&mut self) -> bool {
        if !self.report.interrupted && *self.interrupt.borrow() {
            self.report.interrupted = true;
            self.progress.log(
                "interrupted: stopped before the next step; re-run the same command to resume",
            );
        }
        self.report.interrupted
    }

    /// Run one repetition of a cell (by each arm that lacks it), unless the cell is settled;
    /// after the plan's last, `bench ab` goes on as its rule says.
    async fn repetition(&mut self, cell: &Cell, repetition: u32) -> Result<(), BenchError> {
        if self.settle(cell) || self.stopped() {
            return Ok(());
        }
        let (id, key) = (cell.id(), cell.key());
        let golden = match cell.transport.catalog() {
            Catalog::Theirs => (self.server_catalog(cell).await).inspect_err(|e| {
                self.progress.log(format!("{id}: FAILED: {e}"));
            }),
            Catalog::Copies => (self.golden(cell.golden).await).map_err(|e| format!("golden: {e}")),
        };
        // A Ctrl-C while the golden was built: stop before the cell starts.
        if self.stopped() {
            return Ok(());
        }
        let golden = match golden {
            Ok(g) => g,
            Err(e) => {
                self.fail(&id, &key, e)?;
                self.give_up(cell, repetition - 1);
                return Ok(());
            }
        };
        if !self.run_repetition(cell, &golden, repetition).await? {
            return Ok(());
        }
        // bench ab: after the plan's last repetition, its rule says whether the cell goes on
        // (and says where it stopped).
        if repetition == self.sweep.plan.run.repetitions
            && self.opts.pairs.is_some()
            && !self.extend(cell, &golden).await?
        {
            return Ok(());
        }
        // Done once its repetitions are recorded; in bench ab, only after the plan's last
        // (where its rule is asked) unless the rule has nothing to add.
        let standing = self
            .sweep
            .standing(&self.state, &self.records, cell, &self.names(), false);
        let last = repetition >= self.sweep.plan.run.repetitions;
        if standing.status == CellStatus::Done && (last || self.stopped_by_rule(cell)) {
            self.report.ran += 1;
            self.settled.insert(id);
            self.progress.cell_finished();
        }
        Ok(())
    }

    /// Run repetition `repetition` of a cell by the arms that lack it: both arms at once, as
    /// pairs inside the run (`bench ab` by default), or each on its own (`bench run`, a
    /// build of `[builds]`, `bench ab --pairing runs`: A B, then B A). Returns whether the
    /// cell goes on (false: it failed, or the sweep was interrupted).
    async fn run_repetition(
        &mut self,
        cell: &Cell,
        golden: &Golden,
        repetition: u32,
    ) -> Result<bool, BenchError> {
        let id = cell.id();
        // A cell of a plan's build runs on that build's workers.
        let arms = match &cell.build {
            Some(b) => std::slice::from_ref(&self.sweep.builds[&b.name]),
            None => self.arms,
        };
        let together = self.opts.pairs.filter(|p| p.inside() && arms.len() == 2);
        let groups: Vec<Vec<&Arm>> = match together {
            // Both arms in one run, as pairs inside it.
            Some(_) => vec![arms.iter().collect()],
            None => crate::order::arm_order(arms, repetition)
                .into_iter()
                .map(|a| vec![a])
                .collect(),
        };
        for group in groups {
            if self.stopped() {
                return Ok(false);
            }
            let missing = group.iter().any(|a| {
                !resume::has_repetition(&self.records, (&id, &cell.key()), a.name, repetition)
            });
            if !missing {
                continue;
            }
            let job = Job {
                cell,
                repetition,
                of: self.repetitions_of(cell),
                golden,
                arms: &group,
            };
            let pair = together.map(|p| RunPairing {
                pairing: p.pairing,
                slice: p.slice,
                pilot: self.pilot_of(&id),
            });
            if !self.run_job(cell, job, pair).await? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Run one job (a repetition of a cell by one arm, or by both as pairs) and record what
    /// it gives. Returns whether the cell goes on (false: it failed, or the sweep was
    /// interrupted).
    async fn run_job(
        &mut self,
        cell: &Cell,
        job: Job<'_>,
        pair: Option<RunPairing>,
    ) -> Result<bool, BenchError> {
        let (id, key) = (cell.id(), cell.key());
        let repetition = job.repetition;
        let mut label = id.clone();
        let (plan, fixed) = (self.sweep.plan.run.repetitions, self.repetitions_of(cell));
        let until = self.opts.pairs.map(|p| p.until);
        if let Some(r) = super::precision::repetition_label(repetition, fixed, plan, until) {
            label.push_str(&format!(" ({r})"));
        }
        match job.arms {
            [one] => {
                if let Some(name) = one.name {
                    label.push_str(&format!(" [arm {name}]"));
                }
            }
            _ => label.push_str(" [arms A and B]"),
        }
        let units = job.arms.len() as u32;
        self.progress
            .unit_started(Work::Run, super::estimate::cell_run(cell) * units);
        let result = cell::run_one(
            self.sweep,
            job,
            pair,
            &self.progress,
            &mut self.state,
            &mut self.interrupt,
        )
        .await?;
        self.progress.unit_finished();
        match result {
            CellResult::Recorded(records) => {
                // A run that failed verification fails its cell: its figures are kept in
                // the results, but nothing more runs until `--retry-failed`.
                if self.record(records, &label)? {
                    return Ok(true);
                }
                self.report.failed += 1;
                self.give_up(cell, repetition);
                Ok(false)
            }
            CellResult::Failed(reason) => {
                self.progress.log(format!("FAILED {label}: {reason}"));
                self.fail(&id, &key, reason)?;
                self.give_up(cell, repetition);
                Ok(false)
            }
            CellResult::Interrupted => {
                self.state.cells.remove(&id);
                self.state.save(&self.sweep.out)?;
                self.report.interrupted = true;
                self.progress.log(format!(
                    "interrupted: {label} is pending again; re-run the same command to resume"
                ));
                Ok(false)
            }
        }
    }

    /// The repetitions a cell runs: the plan's, or more when `bench ab` fixed more.
    fn repetitions_of(&self, cell: &Cell) -> u32 {
        resume::repetitions_of(&self.state, cell, self.sweep.plan.run.repetitions)
    }

    /// The pilot's repetitions, once `--precision` has fixed a cell's count.
    fn pilot_of(&self, id: &str) -> Option<u32> {
        self.state.cells.get(id)?.precision?.stein_pilot()
    }

    /// `bench ab`, after the plan's repetitions of a cell: run more as its rule says, within
    /// the cell's time budget (copies and verification included) — until its throughput
    /// interval decides at the threshold, or (`--precision`) until the pilot holds enough
    /// runs, its count is fixed by Stein's rule, and the rest have run. The stop is
    /// checkpointed. Returns whether the cell goes on.
    async fn extend(&mut self, cell: &Cell, golden: &Golden) -> Result<bool, BenchError> {
        let opts = self.opts.pairs.expect("only bench ab extends a cell");
        let (id, key) = (cell.id(), cell.key());
        let mut extending = false;
        let goes_on = loop {
            let recorded = self.recorded_pairs(cell);
            let reached = match opts.until {
                Until::Repetitions => true,
                Until::Precision(p) => self
                    .stein_count(cell, recorded, p)?
                    .is_some_and(|t| recorded >= t),
                Until::Decided(t) => super::precision::decided(cell, &self.records, t),
            };
            let spent = super::precision::spent(&self.records, &id, &key);
            if reached || spent >= opts.budget {
                self.stop_extending(cell, recorded, reached, opts)?;
                break true;
            }
            if !extending {
                extending = true;
                self.progress
                    .extending(Some(opts.budget.saturating_sub(spent)));
            }
            self.progress.extend(
                Work::Run,
                super::estimate::cell_run(cell) * self.arms.len() as u32,
            );
            if !self.run_repetition(cell, golden, recorded + 1).await? {
                break false;
            }
        };
        if extending {
            self.progress.extending(None);
        }
        Ok(goes_on)
    }

    /// `--precision`: the count Stein's rule fixed for the cell, fixing it once its pilot
    /// has enough runs; `None` while the pilot needs more.
    fn stein_count(
        &mut self,
        cell: &Cell,
        recorded: u32,
        precision: f64,
    ) -> Result<Option<u32>, BenchError> {
        let (id, key) = (cell.id(), cell.key());
        if let Some(d) = self.state.cells.get(&id).and_then(|c| c.precision) {
            return Ok(Some(d.repetitions));
        }
        match super::precision::decide(cell, &self.records, precision) {
            super::precision::Decision::MorePilot => Ok(None),
            super::precision::Decision::Total(total) => {
                let total = total.max(recorded);
                self.state.decide(
                    &id,
                    &key,
                    crate::state::Decided {
                        pilot: recorded,
                        repetitions: total,
                        threshold_pct: None,
                    },
                );
                self.state.save(&self.sweep.out)?;
                self.progress.log(format!(
                    "{id}: its pilot of {} needs {total} in all for ±{:.1} % (Stein's rule)",
                    crate::plan::count(recorded.into(), "repetition", "repetitions"),
                    precision * 100.0
                ));
                Ok(Some(total))
            }
        }
    }

    /// A cell's rule stopped it after `recorded` repetitions (`reached`: as the rule asked;
    /// else its budget ran out): checkpoint where, so that a resume knows, and say why.
    fn stop_extending(
        &mut self,
        cell: &Cell,
        recorded: u32,
        reached: bool,
        opts: AbOptions,
    ) -> Result<(), BenchError> {
        let (id, key) = (cell.id(), cell.key());
        let runs = crate::plan::count(recorded.into(), "repetition", "repetitions");
        let decided = match opts.until {
            Until::Repetitions => return Ok(()),
            Until::Decided(t) => {
                self.progress.log(if reached {
                    format!("{id}: decided at ±{:.1} % after {runs}", t * 100.0)
                } else {
                    format!(
                        "{id}: its budget of {}s ran out after {runs}, undecided at ±{:.1} %",
                        opts.budget.as_secs(),
                        t * 100.0
                    )
                });
                crate::state::Decided {
                    pilot: 0,
                    repetitions: recorded,
                    threshold_pct: Some(t * 100.0),
                }
            }
            Until::Precision(p) => {
                let fixed = self.state.cells.get(&id).and_then(|c| c.precision);
                if reached {
                    return Ok(());
                }
                let when = match fixed {
                    Some(d) => format!("after {recorded} of {} repetitions", d.repetitions),
                    None => format!("during its pilot, after {runs}"),
                };
                self.progress.log(format!(
                    "{id}: its budget of {}s ran out {when}; its interval may be wider than \
                     ±{:.1} %",
                    opts.budget.as_secs(),
                    p * 100.0
                ));
                crate::state::Decided {
                    pilot: fixed.map_or(recorded, |d| d.pilot),
                    repetitions: recorded,
                    threshold_pct: None,
                }
            }
        };
        self.state.decide(&id, &key, decided);
        self.state.save(&self.sweep.out)
    }

    /// Repetitions of a cell that both arms have recorded (under its current key).
    fn recorded_pairs(&self, cell: &Cell) -> u32 {
        let (id, key) = (cell.id(), cell.key());
        self.arms
            .iter()
            .map(|a| resume::recorded(&self.records, &id, &key, a.name))
            .min()
            .unwrap_or(0)
    }

    /// A run on an external server's catalog (no golden, no copy): the catalog as it is now,
    /// in a golden's shape. It must hold at least the plan's size (fewer: `root` is not the
    /// catalog the plan describes).
    async fn server_catalog(&self, cell: &Cell) -> Result<Golden, String> {
        let root = self.sweep.store.root_uri();
        let uri = cell.rest_uri.as_deref().unwrap_or_default();
        // What the catalog holds as the run starts, which verification holds it against.
        let ids = match crate::verify::ids(&root, &cell.storage).await {
            Ok(ids) => ids,
            // A catalog nothing was committed to yet has no __manifest.
            Err(lance_core::Error::DatasetNotFound { .. }) => Default::default(),
            Err(e) => {
                return Err(format!(
                    "cannot read the catalog at {root} (the plan's root, which the server at \
                     {uri} must serve): {e}"
                ));
            }
        };
        let rows = ids.rows();
        if rows < cell.golden.rows {
            return Err(format!(
                "the catalog at {root} holds {rows} rows in __manifest, fewer than the plan's \
                 size {} (the least the server's catalog holds): is `root` the catalog the \
                 server at {uri} serves?",
                cell.golden.rows
            ));
        }
        Ok(Golden {
            rel: String::new(),
            marker: golden::GoldenMarker {
                format: golden::MARKER_FORMAT,
                rows,
                inline: cell.golden.inline,
                lance_version: crate::plan::LANCE_VERSION.to_string(),
                manifest_rows: rows,
                build_secs: 0.0,
                table: None,
                fixture: None,
            },
            before: Some(std::sync::Arc::new(ids)),
        })
    }

    /// Reuse or build a cell's golden (once per sweep), logging which.
    async fn golden(&mut self, spec: GoldenSpec) -> Result<Golden, String> {
        if let Some(g) = self.goldens.get(&spec) {
            return g.clone();
        }
        let cfg = GoldenConfig {
            storage: &self.sweep.plan.storage,
            commit_retries: self.sweep.plan.run.commit_retries,
        };
        self.progress.log(format!("golden {}: checking", spec.id()));
        let started = std::time::Instant::now();
        self.progress
            .unit_started(Work::Golden, super::estimate::golden(spec));
        let result = match golden::ensure(&self.sweep.store, spec, &cfg).await {
            Ok((g, reused)) => {
                if reused {
                    self.progress.unit_skipped();
                } else {
                    self.progress.unit_finished();
                }
                self.progress.log(if reused {
                    format!("golden {}: reused", spec.id())
                } else {
                    let table = (g.marker.table).map_or(String::new(), |t| {
                        format!(
                            " and a shared table of {} ({:.2}s of history)",
                            crate::plan::count(t.version, "version", "versions"),
                            t.history_secs
                        )
                    });
                    format!(
                        "golden {}: built {} rows{table} in {:.2}s",
                        spec.id(),
                        g.marker.manifest_rows,
                        started.elapsed().as_secs_f64()
                    )
                });
                Ok(g)
            }
            Err(e) => {
                self.progress
                    .log(format!("golden {}: FAILED: {e}", spec.id()));
                Err(e.to_string())
            }
        };
        self.goldens.insert(spec, result.clone());
        result
    }

    /// A cell failed after `runs_done` of its repetitions: the rest will not run.
    fn give_up(&mut self, cell: &Cell, runs_done: u32) {
        let left =
            self.sweep.plan.run.repetitions.saturating_sub(runs_done) as usize * self.arms.len();
        self.progress
            .skip(Work::Run, super::estimate::cell_run(cell) * left as u32);
        self.settled.insert(cell.id());
        self.progress.cell_finished();
    }

    /// Checkpoint a failed cell, and bring the report up to date: it lists the failures.
    fn fail(&mut self, id: &str, key: &str, reason: String) -> Result<(), BenchError> {
        self.state.set(id, key, Status::Failed, Some(reason));
        self.state.save(&self.sweep.out)?;
        self.report.failed += 1;
        self.write_derived()
    }

    /// Append a repetition's records (one per arm that ran it; a pair's two in one write),
    /// checkpoint its cell (done with this many records: the rule says pending until all
    /// are there; failed when a record failed verification), log them, and bring the
    /// derived outputs up to date. Returns whether every record is verified.
    fn record(&mut self, records: Vec<Record>, label: &str) -> Result<bool, BenchError> {
        let results = self.sweep.results_path();
        jsonl::append_all(&results, &records).map_err(io_err("append to", &results))?;
        crate::fault::point("append");
        let first = &records[0];
        let failed = records.iter().find(|r| !r.verified).map(unverified_reason);
        let status = match failed {
            Some(_) => Status::Failed,
            None => Status::Done,
        };
        self.state
            .set(&first.bench_tag, &first.cell_key, status, failed.clone());
        self.state.save(&self.sweep.out)?;
        for record in &records {
            if !record.verified {
                self.report.unverified += 1;
            }
            let arm = match (&record.arm, records.len()) {
                (Some(a), 2..) => format!(" arm {a}"),
                _ => String::new(),
            };
            // The same cell's run before this one, of the same arm.
            let before = (self.records.iter().rev())
                .find(|b| b.cell_key == record.cell_key && b.arm == record.arm);
            let line = bench_core::report::line::done(record, before, self.opts.verbose);
            self.progress.log(format!("done {label}{arm}: {line}"));
        }
        self.records.extend(records);
        self.write_derived()?;
        Ok(failed.is_none())
    }

    /// Bring the outputs derived from the records up to date, as after every cell
    /// (`results::refresh`: a summary that cannot be written stops the sweep, a report
    /// that cannot is a warning). The report waits for something to report: a record, or
    /// a failed cell.
    fn write_derived(&self) -> Result<(), BenchError> {
        let records = crate::export::standing(&self.records, &self.state.keys());
        let failed = self
            .state
            .cells
            .values()
            .any(|c| c.status == Status::Failed);
        let report = !records.is_empty() || failed;
        for warning in crate::results::refresh(&self.sweep.out, &records, report)? {
            self.progress.log(warning);
        }
        Ok(())
    }

    /// The line a finished (not interrupted) sweep ends with.
    fn final_line(&self) -> String {
        let r = &self.report;
        let report_path = self.sweep.out.join(crate::report::REPORT_FILE);
        let roles_path = self.sweep.out.join(crate::export::roles::ROLES_FILE);
        let mut report_line = String::new();
        if roles_path.is_file() {
            report_line = format!("\n  roles:   {}", roles_path.display());
        }
        if report_path.is_file() {
            report_line.push_str(&format!("\n  report:  {}", report_path.display()));
        }
        let earlier = if r.failed_not_retried > 0 {
            format!(
                " ({} from earlier runs; use --retry-failed)",
                r.failed_not_retried
            )
        } else {
            String::new()
        };
        let unverified = if r.unverified > 0 {
            format!(", {} FAILED VERIFICATION", r.unverified)
        } else {
            String::new()
        };
        let empty = crate::export::without_operations(&self.records);
        let empty = if empty.is_empty() {
            String::new()
        } else {
            format!(
                "\n  WARNING: {} measured no successful operation, so they have no \
                 latency or throughput (the report lists them): {}",
                crate::plan::count(empty.len() as u64, "cell", "cells"),
                empty.join(", ")
            )
        };
        format!(
            "sweep `{}` finished: {} run, {} already done, {} failed{earlier}{unverified}\n  results: {}\n  summary: {}{report_line}{empty}",
            self.sweep.plan.name,
            crate::plan::count(r.ran, "cell", "cells"),
            r.skipped_done,
            r.failed + r.failed_not_retried,
            self.sweep.results_path().display(),
            self.sweep.summary_path().display()
        )
    }
}

/// Why a record's cell failed: its verification, as the checkpoint says it.
fn unverified_reason(r: &Record) -> String {
    format!(
        "repetition {} failed verification: {}",
        r.repetition,
        r.verify_error.as_deref().unwrap_or("no reason recorded")
    )
}

/// What a finished sweep removes (`run.cleanup`): leftover copies, and with `all` the
/// goldens too, once every cell of the plan is done.
async fn cleanup(
    sweep: &Sweep,
    state: &State,
    records: &[Record],
    arms: &[Option<&str>],
) -> Result<(), BenchError> {
    // An external server's catalog is not bench's to clean: it copied nothing there.
    if sweep.plan.rest.external.is_some() {
        return Ok(());
    }
    match sweep.plan.run.cleanup {
        Cleanup::None => Ok(()),
        Cleanup::Runs => sweep.store.remove_prefix("runs").await,
        Cleanup::All => {
            sweep.store.remove_prefix("runs").await?;
            // With --only, the plan's other cells may still need their goldens.
            let all_done = !sweep.only
                && sweep.cells().iter().all(|c| {
                    sweep.standing(state, records, c, arms, false).status == CellStatus::Done
                });
            if all_done {
                sweep.store.remove_prefix("golden").await?;
            }
            Ok(())
        }
    }
}
