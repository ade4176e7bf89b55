//! A sweep's run as it goes: the options it was given, what it reports at its end, and the
//! state the stages of its loop share (`Runner`).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use tokio::sync::watch;

use super::Sweep;
use super::pairing::Pairing;
use super::precision::Until;
use crate::error::exit;
use crate::export::Record;
use crate::golden::Golden;
use crate::plan::GoldenSpec;
use crate::progress::{Display, Progress};
use crate::state::State;

pub use crate::arm::Arm;

pub struct RunOptions {
    pub fresh: bool,
    pub retry_failed: bool,
    pub display: Display,
    /// `--verbose`: each finished run's line says its cost, floor and bytes too.
    pub verbose: bool,
    /// `bench ab`: how its two arms form their pairs.
    pub pairs: Option<AbOptions>,
    /// `--fail-on-finding`: exit 8 where a cell's record holds a finding.
    pub fail_on_finding: bool,
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
    pub(super) fn inside(&self) -> bool {
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
    /// `--fail-on-finding`: the findings of the plan's cells' records, each named.
    pub findings: Option<Vec<String>>,
}

impl RunReport {
    pub fn exit_code(&self) -> u8 {
        if self.interrupted {
            exit::INTERRUPTED
        } else if self.failed + self.failed_not_retried + self.unverified > 0 {
            exit::CELLS_FAILED
        } else if self.findings.as_ref().is_some_and(|f| !f.is_empty()) {
            exit::FINDING
        } else {
            exit::OK
        }
    }
}

/// A sweep being run: what it has recorded so far and how it is shown.
pub(super) struct Runner<'a> {
    pub(super) sweep: &'a Sweep,
    pub(super) opts: &'a RunOptions,
    pub(super) state: State,
    pub(super) records: Vec<Record>,
    pub(super) progress: Progress,
    pub(super) interrupt: watch::Receiver<bool>,
    pub(super) arms: &'a [Arm],
    pub(super) goldens: HashMap<GoldenSpec, Result<Golden, String>>,
    /// Cells this run has decided not to run further (done, skipped, failed).
    pub(super) settled: HashSet<String>,
    pub(super) report: RunReport,
}
