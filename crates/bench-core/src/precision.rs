//! `bench ab --precision`: how many repetitions a cell runs, fixed once by Stein's
//! two-stage rule after a pilot (see `stats::paired`), and the time it has taken.

use std::time::Duration;

use crate::compare::{inside_batches, pairs_of, run_secs};
use crate::export::Record;
use crate::export::record::{ARM_A, ARM_B};
use crate::plan::Cell;
use crate::stats::paired::stein_batches;

/// Runs the pilot must hold before it can fix the count: Stein's count uses the t of the
/// pilot's degrees of freedom (t(4) = 2.78 for 5 runs; fewer make it larger still).
pub const PILOT_RUNS: usize = 5;

/// What the pilot says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Too few batches yet: one more repetition of pilot.
    MorePilot,
    /// The repetitions the cell needs in all.
    Total(u32),
}

/// The records of a cell under its current key, of one arm.
fn of_arm<'a>(records: &'a [Record], cell: &Cell, arm: &str) -> Vec<&'a Record> {
    let (id, key) = (cell.id(), cell.key());
    records
        .iter()
        .filter(|r| r.bench_tag == id && r.cell_key == key && r.arm.as_deref() == Some(arm))
        .collect()
}

/// Decide, from the repetitions recorded so far (the pilot), how many the cell needs for
/// its throughput ratio's interval to be within ±`precision` (a fraction), commits and, in
/// a mixed cell, reads alike.
pub fn decide(cell: &Cell, records: &[Record], precision: f64) -> Decision {
    let (pa, pb) = pairs_of(&of_arm(records, cell, ARM_A), &of_arm(records, cell, ARM_B));
    let runs = pa.len();
    if runs < PILOT_RUNS {
        return Decision::MorePilot;
    }
    let mut need = runs;
    for reads in [false, true] {
        if let Some((batches, _, _)) = inside_batches(&pa, &pb, reads)
            && let Some(k) = stein_batches(&batches, precision)
        {
            need = need.max(k);
        }
    }
    Decision::Total(need as u32)
}

/// The wall time a cell's paired runs have taken (both arms run together).
pub fn spent(records: &[Record], id: &str, key: &str) -> Duration {
    let secs: f64 = records
        .iter()
        .filter(|r| r.bench_tag == id && r.cell_key == key && r.arm.as_deref() == Some(ARM_A))
        .map(run_secs)
        .sum();
    Duration::from_secs_f64(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell() -> Cell {
        crate::plan::sample(60)
    }

    fn records(reps: u32) -> Vec<Record> {
        let c = cell();
        let mut v = crate::compare::tests::lockstep(reps, 60, 1.05);
        for r in &mut v {
            r.cell_key = c.key();
            r.bench_tag = c.id();
            r.started_at = "2026-01-01T00:00:00.000Z".into();
            r.finished_at = "2026-01-01T00:00:02.500Z".into();
        }
        v
    }

    #[test]
    fn the_pilot_needs_five_runs_then_stein_fixes_the_count() {
        assert_eq!(decide(&cell(), &records(4), 0.02), Decision::MorePilot);
        // 5 runs: the count is fixed; these runs differ by about 1 %, so ±5 % needs no more
        // than the pilot, ±0.01 % far more.
        assert_eq!(decide(&cell(), &records(5), 0.05), Decision::Total(5));
        match decide(&cell(), &records(5), 0.0001) {
            Decision::Total(n) => assert!(n > 5, "{n}"),
            d => panic!("{d:?}"),
        }
        // 4 runs of 2.5 s, both arms together.
        let c = cell();
        assert_eq!(
            spent(&records(4), &c.id(), &c.key()),
            Duration::from_millis(10_000)
        );
    }
}
