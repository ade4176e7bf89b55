//! What a finished repetition leaves: its records appended, its cell checkpointed, its
//! line logged, the derived outputs brought up to date; the sweep's last line, and what
//! `run.cleanup` removes at its end.

use super::Sweep;
use super::open::unverified_reason;
use super::resume::CellStatus;
use super::runner::Runner;
use crate::error::{BenchError, io_err};
use crate::export::{Record, jsonl};
use crate::plan::{Cell, Cleanup};
use crate::progress::Work;
use crate::state::{State, Status};

/// What a finished sweep removes (`run.cleanup`): leftover copies, and with `all` the
/// goldens too, once every cell of the plan is done.
pub(super) async fn cleanup(
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

impl Runner<'_> {
    /// A cell failed after `runs_done` of its repetitions: the rest will not run.
    pub(super) fn give_up(&mut self, cell: &Cell, runs_done: u32) {
        let left =
            self.sweep.plan.run.repetitions.saturating_sub(runs_done) as usize * self.arms.len();
        self.progress
            .skip(Work::Run, super::estimate::cell_run(cell) * left as u32);
        self.settled.insert(cell.id());
        self.progress.cell_finished();
    }

    /// Checkpoint a failed cell, and bring the report up to date: it lists the failures.
    pub(super) fn fail(&mut self, id: &str, key: &str, reason: String) -> Result<(), BenchError> {
        self.state.set(id, key, Status::Failed, Some(reason));
        self.state.save(&self.sweep.out)?;
        self.report.failed += 1;
        self.write_derived()
    }

    /// Append a repetition's records (one per arm that ran it; a pair's two in one write),
    /// checkpoint its cell (done with this many records: the rule says pending until all
    /// are there; failed when a record failed verification), log them, and bring the
    /// derived outputs up to date. Returns whether every record is verified.
    pub(super) fn record(&mut self, records: Vec<Record>, label: &str) -> Result<bool, BenchError> {
        let results = self.sweep.results_path();
        // The records as the file holds them, of which the derived outputs are made.
        let records =
            jsonl::append_all(&results, &records).map_err(io_err("append to", &results))?;
        crate::fault::point("append");
        let first = &records[0];
        // A campaign's point that is a finding (STUCK too, which verifies) fails its cell.
        let failed = records.iter().find(|r| r.failed()).map(unverified_reason);
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
    pub(super) fn write_derived(&self) -> Result<(), BenchError> {
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
    pub(super) fn final_line(&self) -> String {
        let r = &self.report;
        let report_path = self.sweep.out.join(crate::report::REPORT_FILE);
        let roles_path = self.sweep.out.join(crate::export::roles::ROLES_FILE);
        let mut report_line = String::new();
        if roles_path.is_file() {
            report_line = format!("\n  roles:   {}", roles_path.display());
        }
        let campaign_path = self.sweep.out.join(bench_core::report::campaign::FILE);
        if campaign_path.is_file() {
            report_line.push_str(&format!("\n  campaign: {}", campaign_path.display()));
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
        // A campaign's points are judged in campaign.md, not measured.
        let measured: Vec<_> = (self.records.iter())
            .filter(|r| r.attached.fault.is_none())
            .cloned()
            .collect();
        let empty = crate::export::without_operations(&measured);
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
