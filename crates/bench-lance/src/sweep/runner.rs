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
    /// `--fail-on-finding`: exit 8 where a cell's record holds a finding, 7 where none does
    /// but a verification could not check all it was asked to.
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

/// What `--fail-on-finding` gates on: the findings against the catalog of the plan's cells'
/// records, and the verifications that could not check all they were asked to, each named
/// with its cell and repetition.
#[derive(Debug, Default)]
pub struct Gate {
    pub findings: Vec<String>,
    /// Verified, but a part of verification could not be done (`verify_unchecked`): no
    /// finding, and no pass either.
    pub unchecked: Vec<String>,
}

impl Gate {
    /// Its exit code where no cell failed: a finding 8, else something not checked 7
    /// (undecided: the gate cannot say the catalog kept its promises), else 0.
    pub fn code(&self) -> u8 {
        match (self.findings.is_empty(), self.unchecked.is_empty()) {
            (false, _) => exit::FINDING,
            (true, false) => exit::UNDECIDED,
            (true, true) => exit::OK,
        }
    }

    /// Its lines, as `bench run` logs them and `bench status` prints them.
    pub fn lines(&self) -> impl Iterator<Item = String> + '_ {
        (self.findings.iter().map(|f| format!("FINDING {f}")))
            .chain(self.unchecked.iter().map(|u| format!("NOT CHECKED {u}")))
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
    /// `--fail-on-finding`: the findings of the plan's cells' records and what their
    /// verifications could not check, each named.
    pub gate: Option<Gate>,
}

impl RunReport {
    pub fn exit_code(&self) -> u8 {
        if self.interrupted {
            exit::INTERRUPTED
        } else if self.failed + self.failed_not_retried + self.unverified > 0 {
            exit::CELLS_FAILED
        } else {
            self.gate.as_ref().map_or(exit::OK, |g| g.code())
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
