//! `bench ab --precision`: how many repetitions a cell runs, fixed once by Stein's
//! two-stage rule after a pilot (see `stats::paired`), and the time it has taken.

use std::time::Duration;

use crate::compare::{inside_batches, pairs_of, run_secs};
use crate::export::Record;
use crate::export::record::{ARM_A, ARM_B};
use crate::plan::Cell;
use crate::stats::paired::stein_batches;

/// Batches the pilot must hold before it can fix the count: Stein's count uses the t of
/// the pilot's degrees of freedom, and fewer than 10 batches make it large.
pub const PILOT_BATCHES: usize = 10;

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
    let reps = pa.len().max(1);
    let mut need = 0usize;
    for reads in [false, true] {
        let Some((batches, _, _)) = inside_batches(&pa, &pb, reads) else {
            continue;
        };
        if batches.is_empty() {
            continue;
        }
        if !reads && batches.len() < PILOT_BATCHES {
            return Decision::MorePilot;
        }
        if let Some(k) = stein_batches(&batches, precision) {
            // Every repetition has the same batches: as many repetitions as that takes.
            let per_rep = batches.len().div_ceil(reps).max(1);
            need = need.max(k.div_ceil(per_rep));
        }
    }
    Decision::Total(need.max(reps) as u32)
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
    use crate::plan::{GoldenSpec, Mode, Operation};

    fn cell() -> Cell {
        Cell {
            golden: GoldenSpec {
                rows: 100,
                inline: false,
            },
            mode: Mode::Continuous { operations: 60 },
            operation: Operation::CreateNamespace,
            commit_retries: 20,
            warmup: 0,
            root: "/r".into(),
            storage: Default::default(),
        }
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
    fn the_pilot_needs_ten_batches_then_stein_fixes_the_count() {
        // 60 pairs a repetition are 3 batches: 3 repetitions are 9, not yet a pilot.
        assert_eq!(decide(&cell(), &records(3), 0.02), Decision::MorePilot);
        // 4 repetitions, 12 batches: the count is fixed; these units have little noise, so
        // ±2 % needs no more than the pilot, ±0.01 % far more.
        assert_eq!(decide(&cell(), &records(4), 0.02), Decision::Total(4));
        match decide(&cell(), &records(4), 0.0001) {
            Decision::Total(n) => assert!(n > 4, "{n}"),
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
