//! How long `bench ab` runs a cell: the plan's repetitions, until its interval decides at
//! the threshold, or Stein's count after a pilot (`--precision`), within the budget.

use super::precision::Until;
use super::resume;
use super::runner::{AbOptions, RunOptions, Runner};
use crate::error::BenchError;
use crate::export::Record;
use crate::golden::Golden;
use crate::plan::Cell;
use crate::progress::Work;
use crate::state::State;

/// Whether a run's rule has nothing to add to a cell (see [`precision::rule_stopped`]).
pub(super) fn rule_stopped(
    opts: &RunOptions,
    state: &State,
    records: &[Record],
    cell: &Cell,
) -> bool {
    let rule = opts.pairs.map(|p| (p.until, p.budget));
    super::precision::rule_stopped(rule, state, records, cell)
}

impl Runner<'_> {
    /// The repetitions a cell runs: the plan's, or more when `bench ab` fixed more.
    pub(super) fn repetitions_of(&self, cell: &Cell) -> u32 {
        resume::repetitions_of(&self.state, cell, self.sweep.plan.run.repetitions)
    }

    /// The pilot's repetitions, once `--precision` has fixed a cell's count.
    pub(super) fn pilot_of(&self, id: &str) -> Option<u32> {
        self.state.cells.get(id)?.precision?.stein_pilot()
    }

    /// `bench ab`, after the plan's repetitions of a cell: run more as its rule says, within
    /// the cell's time budget (copies and verification included) — until its throughput
    /// interval decides at the threshold, or (`--precision`) until the pilot holds enough
    /// runs, its count is fixed by Stein's rule, and the rest have run. The stop is
    /// checkpointed. Returns whether the cell goes on.
    pub(super) async fn extend(
        &mut self,
        cell: &Cell,
        golden: &Golden,
    ) -> Result<bool, BenchError> {
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
    pub(super) fn stein_count(
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
    pub(super) fn stop_extending(
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
    pub(super) fn recorded_pairs(&self, cell: &Cell) -> u32 {
        let (id, key) = (cell.id(), cell.key());
        self.arms
            .iter()
            .map(|a| resume::recorded(&self.records, &id, &key, a.name))
            .min()
            .unwrap_or(0)
    }
}
