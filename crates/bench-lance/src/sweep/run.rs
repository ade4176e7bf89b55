//! `bench run`: every pending cell of the plan in order, resuming from the checkpoint, the
//! outputs brought up to date after every cell.

use std::collections::{HashMap, HashSet};

use super::Sweep;
use super::cell::{self, CellResult};
use super::extend::rule_stopped;
use super::open::{Opened, open, unverified_reason, watch_signals};
use super::outputs::cleanup;
use super::pairing::RunPairing;
use super::resume::{self, CellStatus};
use super::workers::Job;
use crate::error::BenchError;
use crate::export::Record;
use crate::golden::Golden;
use crate::plan::{Catalog, Cell};
use crate::progress::{Progress, Work};
use crate::state::{State, Status};

use super::runner::Runner;
pub use super::runner::{AbOptions, RunOptions, RunReport};
pub use crate::arm::{ARM_A, ARM_B, Arm};

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
    let schedule = crate::order::schedule(&groups, plan_run.repetitions, plan_run.order);
    let mut next = 0;
    while next < schedule.len() {
        let batch: Vec<(&Cell, u32)> = (schedule[next..].iter())
            .map(|&(c, repetition)| (cells[c], repetition))
            .collect();
        let n = r.points_at_once(&batch);
        match n {
            1 => r.repetition(batch[0].0, batch[0].1).await?,
            _ => r.points(&batch[..n]).await?,
        }
        next += n;
        if r.stopped() {
            break;
        }
    }
    if opts.fail_on_finding {
        let gate = super::views::gate(sweep, &r.records);
        for line in gate.lines() {
            r.progress.log(line);
        }
        r.report.gate = Some(gate);
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
        if let Some(w) = super::views::memory_warning(sweep, &self.records) {
            self.progress.log(format!("WARNING: {w}"));
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
        self.repetition_done(cell, repetition);
        Ok(())
    }

    /// After a repetition recorded: the cell is done once its repetitions are; in bench ab,
    /// only after the plan's last (where its rule is asked) unless the rule has nothing to
    /// add.
    fn repetition_done(&mut self, cell: &Cell, repetition: u32) {
        let standing = self
            .sweep
            .standing(&self.state, &self.records, cell, &self.names(), false);
        let last = repetition >= self.sweep.plan.run.repetitions;
        if standing.status == CellStatus::Done && (last || self.stopped_by_rule(cell)) {
            self.report.ran += 1;
            self.settled.insert(cell.id());
            self.progress.cell_finished();
        }
    }

    /// How many of `next` (the schedule from here) run at once: a fault campaign's points,
    /// `campaign.parallel` of them in a row of one golden, run by `bench run`'s one arm of
    /// the plan's build; 1 for anything else.
    fn points_at_once(&self, next: &[(&Cell, u32)]) -> usize {
        let at_once = match &self.sweep.plan.campaign {
            Some(c) if self.arms.len() == 1 && self.opts.pairs.is_none() => c.parallel as usize,
            _ => 1,
        };
        let point = |c: &Cell| c.build.is_none() && c.campaign_point();
        let Some((first, _)) = next.first() else {
            return 1;
        };
        let alike = (next.iter().take(at_once))
            .take_while(|(c, _)| point(c) && c.golden == first.golden)
            .count();
        alike.max(1)
    }

    /// A fault campaign's points, several at once, each on its own copy with its own worker
    /// and its own fault at the store: they are judged, not timed, so running beside one
    /// another changes no verdict. Each is recorded as a run alone is, in the plan's order,
    /// once all have ended.
    async fn points(&mut self, batch: &[(&Cell, u32)]) -> Result<(), BenchError> {
        let mut due = Vec::new();
        let arm = self.arms[0].name;
        for &(cell, repetition) in batch {
            let have = |r: &Self| {
                resume::has_repetition(&r.records, (&cell.id(), &cell.key()), arm, repetition)
            };
            if !self.settle(cell) && !have(self) {
                due.push((cell, repetition));
            }
        }
        if due.len() <= 1 || self.stopped() {
            for (cell, repetition) in due {
                self.repetition(cell, repetition).await?;
            }
            return Ok(());
        }
        let golden = match self.golden(due[0].0.golden).await {
            Ok(g) => g,
            Err(e) => {
                for (cell, repetition) in due {
                    self.fail(&cell.id(), &cell.key(), format!("golden: {e}"))?;
                    self.give_up(cell, repetition - 1);
                }
                return Ok(());
            }
        };
        if self.stopped() {
            return Ok(());
        }
        for (cell, _) in &due {
            self.state
                .set(&cell.id(), &cell.key(), Status::Running, None);
        }
        self.state.save(&self.sweep.out)?;
        let all: &[Arm] = self.arms;
        let arms: Vec<&Arm> = all.iter().collect();
        // One unit of work, each point's predicted time shared with the points beside it
        // (as the sweep's estimate counts them).
        let parallel = self
            .sweep
            .plan
            .campaign
            .as_ref()
            .map_or(1, |c| c.parallel.max(1));
        let share: std::time::Duration = (due.iter())
            .map(|(c, _)| super::estimate::cell_run(c) / parallel)
            .sum();
        self.progress.unit_started(Work::Run, share);
        let runs = due.iter().map(|&(cell, repetition)| {
            let job = Job {
                cell,
                repetition,
                of: self.repetitions_of(cell),
                golden: &golden,
                arms: &arms,
            };
            let (sweep, progress, mut interrupt) =
                (self.sweep, &self.progress, self.interrupt.clone());
            async move { cell::run_one(sweep, job, None, progress, &mut interrupt).await }
        });
        let results = futures::future::join_all(runs).await;
        self.progress.unit_finished();
        for ((cell, repetition), result) in due.into_iter().zip(results) {
            let label = self.label(cell, repetition, &arms);
            if self.recorded(cell, repetition, &label, result?)? {
                self.repetition_done(cell, repetition);
            }
        }
        Ok(())
    }

    /// Run repetition `repetition` of a cell by the arms that lack it: both arms at once, as
    /// pairs inside the run (`bench ab` by default), or each on its own (`bench run`, a
    /// build of `[builds]`, `bench ab --pairing runs`: A B, then B A). Returns whether the
    /// cell goes on (false: it failed, or the sweep was interrupted).
    pub(super) async fn run_repetition(
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
        let label = self.label(cell, repetition, job.arms);
        let units = job.arms.len() as u32;
        self.progress
            .unit_started(Work::Run, super::estimate::cell_run(cell) * units);
        self.state.set(&id, &key, Status::Running, None);
        self.state.save(&self.sweep.out)?;
        let result =
            cell::run_one(self.sweep, job, pair, &self.progress, &mut self.interrupt).await;
        self.progress.unit_finished();
        self.recorded(cell, repetition, &label, result?)
    }

    /// A run's label in the log: the cell, its repetition, its arm.
    fn label(&self, cell: &Cell, repetition: u32, arms: &[&Arm]) -> String {
        let mut label = cell.id();
        let (plan, fixed) = (self.sweep.plan.run.repetitions, self.repetitions_of(cell));
        let until = self.opts.pairs.map(|p| p.until);
        if let Some(r) = super::precision::repetition_label(repetition, fixed, plan, until) {
            label.push_str(&format!(" ({r})"));
        }
        match arms {
            [one] => {
                if let Some(name) = one.name {
                    label.push_str(&format!(" [arm {name}]"));
                }
            }
            _ => label.push_str(" [arms A and B]"),
        }
        label
    }

    /// What a run gave, recorded. Returns whether the cell goes on (false: it failed, or the
    /// sweep was interrupted).
    fn recorded(
        &mut self,
        cell: &Cell,
        repetition: u32,
        label: &str,
        result: CellResult,
    ) -> Result<bool, BenchError> {
        let (id, key) = (cell.id(), cell.key());
        match result {
            CellResult::Recorded(records) => {
                // A run that failed verification fails its cell: its figures are kept in
                // the results, but nothing more runs until `--retry-failed`.
                if self.record(records, label)? {
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
}
