//! How the two arms of `bench ab` form their pairs inside one run of a cell: operation by
//! operation, slice by slice, or at the same moment.

use std::time::Duration;

use crate::coordinator::Pace;
use crate::plan::Cell;

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

/// The arm that goes first in a repetition (0 for A): A in odd ones, B in even ones, so
/// that repetitions `2j − 1` and `2j` form a crossover, each arm first once.
pub fn first_arm(repetition: u32) -> usize {
    ((repetition + 1) % 2) as usize
}

/// Measurement hook: set (to anything) where `bench ab` runs, arm A's copy is made first and
/// its workers are started first in every run, the lead alone alternating: what a fixed
/// order of starting gives one arm (`scripts/figures/ab-interference.sh cause`). Its records
/// name it (`planted`).
pub const START_A_FIRST_ENV: &str = "BENCH_AB_START_A_FIRST";

impl RunPairing {
    /// The pacing of one repetition, and the arm started first in it ([`first_arm`], which
    /// also leads where the arms take turns): its copy is made first and its workers are
    /// started first.
    pub(super) fn pace(&self, cell: &Cell, repetition: u32) -> (Pace, usize) {
        let lead = first_arm(repetition);
        let started = match std::env::var_os(START_A_FIRST_ENV) {
            Some(_) => 0,
            None => lead,
        };
        let continuous = cell.mode.operations();
        let pace = match (self.pairing, continuous) {
            (Pairing::Duet, _) => Pace::duet(continuous.is_some(), self.slice),
            (_, Some(ops)) => Pace::lockstep(ops, lead),
            (_, None) => {
                let w = cell.mode.workers() as usize;
                let per_arm = Duration::from_secs(cell.mode.duration_secs());
                Pace::slices(self.slice, per_arm, [w, w], lead)
            }
        };
        (pace, started)
    }
}
