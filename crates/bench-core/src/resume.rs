//! The one resume rule: where a cell of the plan stands, from the checkpoint and the
//! records. `bench run`, `bench plan`, `bench status` and the cleanup all ask this.
//!
//! A cell is done when `results.jsonl` holds its `repetitions` records under its current
//! key (the records are the truth: a crash between appending a record and checkpointing it
//! loses nothing). Otherwise the checkpoint says why it is not: never run (pending), run
//! under another key (stale: the plan changed), failed, or running when a run died
//! (interrupted); a cell checkpointed done with fewer records (repetitions were raised) is
//! pending, with its recorded count. In `bench ab` every arm must have its records: the
//! cell's recorded count is the smallest of its arms'.

use crate::export::Record;
use crate::export::record::{ARM_A, ARM_B};
use crate::plan::Cell;
use crate::state::{State, Status};

/// What a cell is, given the checkpoint and the records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CellStatus {
    Pending,
    Done,
    Failed,
    /// Recorded with another key: the plan changed, and the cell runs again.
    Stale,
    /// Was running when the previous run died; runs again from a fresh copy.
    Interrupted,
    /// Running now, in the live run that holds the results directory.
    Running,
}

impl CellStatus {
    pub fn label(self) -> &'static str {
        match self {
            CellStatus::Pending => "pending",
            CellStatus::Done => "done",
            CellStatus::Failed => "failed",
            CellStatus::Stale => "stale",
            CellStatus::Interrupted => "interrupted",
            CellStatus::Running => "running",
        }
    }
}

/// Where a cell stands: its status and how many of its repetitions are recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    pub status: CellStatus,
    /// Records of this cell under its current key.
    pub recorded: u32,
    pub repetitions: u32,
}

impl Standing {
    /// Some but not all repetitions are recorded, and they count.
    pub fn partial(&self) -> bool {
        self.recorded > 0 && self.recorded < self.repetitions && self.status != CellStatus::Stale
    }

    /// The status as `bench plan` and `bench status` show it.
    pub fn label(&self) -> String {
        if self.partial() {
            format!(
                "{} ({}/{} repetitions recorded)",
                self.status.label(),
                self.recorded,
                self.repetitions
            )
        } else {
            self.status.label().to_string()
        }
    }
}

/// How many records `results.jsonl` holds for this cell id and key, of this arm.
pub fn recorded(records: &[Record], id: &str, key: &str, arm: Option<&str>) -> u32 {
    records
        .iter()
        .filter(|r| r.bench_tag == id && r.cell_key == key && r.arm.as_deref() == arm)
        .count() as u32
}

/// The rule itself, for a sweep whose runs are made by these arms (`[None]` for
/// `bench run`). `live`: a run holds the results directory now, so a cell checkpointed as
/// running is running, not interrupted.
pub fn standing(
    state: &State,
    records: &[Record],
    cell: &Cell,
    repetitions: u32,
    arms: &[Option<&str>],
    live: bool,
) -> Standing {
    standing_of(
        state,
        records,
        (&cell.id(), &cell.key()),
        repetitions,
        arms,
        live,
    )
}

/// The repetitions a cell runs: the plan's, or more when `bench ab --precision` fixed a
/// larger count for it (under its current key).
pub fn repetitions_of(state: &State, cell: &Cell, plan: u32) -> u32 {
    repetitions_for(state, (&cell.id(), &cell.key()), plan)
}

fn repetitions_for(state: &State, (id, key): (&str, &str), plan: u32) -> u32 {
    state
        .cells
        .get(id)
        .filter(|c| c.key == key)
        .and_then(|c| c.precision)
        .map_or(plan, |p| p.repetitions.max(plan))
}

/// The rule for a cell known by its id and key (`bench merge`, which has no plan).
pub fn standing_of(
    state: &State,
    records: &[Record],
    (id, key): (&str, &str),
    repetitions: u32,
    arms: &[Option<&str>],
    live: bool,
) -> Standing {
    let repetitions = repetitions_for(state, (id, key), repetitions);
    let recorded = arms
        .iter()
        .map(|&arm| recorded(records, id, key, arm))
        .min()
        .unwrap_or(0);
    let status = if recorded >= repetitions {
        CellStatus::Done
    } else {
        match state.cells.get(id) {
            None => CellStatus::Pending,
            Some(c) if c.key != key => CellStatus::Stale,
            Some(c) => match c.status {
                Status::Done => CellStatus::Pending,
                Status::Failed => CellStatus::Failed,
                Status::Running if live => CellStatus::Running,
                Status::Running => CellStatus::Interrupted,
            },
        }
    };
    Standing {
        status,
        recorded,
        repetitions,
    }
}

/// The arms whose records a results directory holds: A and B for a `bench ab` directory,
/// the one unnamed arm of `bench run` otherwise.
pub fn arms_in(records: &[Record]) -> Vec<Option<&'static str>> {
    if records.iter().any(|r| r.arm.is_some()) {
        vec![Some(ARM_A), Some(ARM_B)]
    } else {
        vec![None]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::{ModeKind, Variant};

    fn cell() -> Cell {
        crate::plan::sample(5)
    }

    #[test]
    fn the_rule_as_a_table() {
        use CellStatus::*;
        let c = cell();
        let (id, key) = (c.id(), c.key());
        let rec = |k: &str| {
            let mut r = record(ModeKind::Continuous, Variant::NoIndex, 100, 1, &id);
            r.cell_key = k.to_string();
            r
        };
        // (checkpoint entry, records under the current key, under another key, repetitions)
        // -> (status, recorded, label)
        type Case = (
            Option<(&'static str, Status)>,
            usize,
            usize,
            u32,
            CellStatus,
            u32,
            &'static str,
        );
        let cases: &[Case] = &[
            (None, 0, 0, 1, Pending, 0, "pending"),
            (
                Some(("cur", Status::Running)),
                0,
                0,
                1,
                Interrupted,
                0,
                "interrupted",
            ),
            (Some(("cur", Status::Failed)), 0, 0, 1, Failed, 0, "failed"),
            (Some(("cur", Status::Done)), 1, 0, 1, Done, 1, "done"),
            // Appended but not checkpointed: the records are the truth.
            (Some(("cur", Status::Running)), 1, 0, 1, Done, 1, "done"),
            (None, 2, 0, 2, Done, 2, "done"),
            // Repetitions raised after the cell was done.
            (
                Some(("cur", Status::Done)),
                3,
                0,
                4,
                Pending,
                3,
                "pending (3/4 repetitions recorded)",
            ),
            (
                Some(("cur", Status::Running)),
                1,
                0,
                3,
                Interrupted,
                1,
                "interrupted (1/3 repetitions recorded)",
            ),
            (
                Some(("cur", Status::Failed)),
                2,
                0,
                3,
                Failed,
                2,
                "failed (2/3 repetitions recorded)",
            ),
            // The plan changed since: records of the old key do not count.
            (Some(("old", Status::Done)), 0, 1, 1, Stale, 0, "stale"),
            (Some(("old", Status::Done)), 1, 0, 2, Stale, 1, "stale"),
            // Changed back to a key whose records are all there.
            (Some(("old", Status::Done)), 1, 1, 1, Done, 1, "done"),
            // Repetitions lowered below what is recorded.
            (Some(("cur", Status::Failed)), 3, 0, 2, Done, 3, "done"),
        ];
        for (i, &(entry, cur, old, reps, want, want_recorded, label)) in cases.iter().enumerate() {
            let mut state = State::new("p");
            if let Some((k, status)) = entry {
                let k = if k == "cur" {
                    key.clone()
                } else {
                    k.to_string()
                };
                state.set(&id, &k, status, None);
            }
            let mut records: Vec<Record> = (0..old).map(|_| rec("old")).collect();
            records.extend((0..cur).map(|_| rec(&key)));
            let s = standing(&state, &records, &c, reps, &[None], false);
            assert_eq!(
                (s.status, s.recorded, s.label().as_str()),
                (want, want_recorded, label),
                "case {i}"
            );
            // While a run holds the directory, its running cell is running.
            let live = standing(&state, &records, &c, reps, &[None], true);
            if want == Interrupted {
                assert_eq!(live.status, Running, "case {i}");
            } else {
                assert_eq!(live, s, "case {i}");
            }
        }
    }

    #[test]
    fn an_ab_cell_counts_its_least_recorded_arm() {
        let c = cell();
        let (id, key) = (c.id(), c.key());
        let rec = |arm: Option<&str>| {
            let mut r = record(ModeKind::Continuous, Variant::NoIndex, 100, 1, &id);
            r.cell_key = key.clone();
            r.arm = arm.map(str::to_string);
            r
        };
        let records = vec![rec(Some("A")), rec(Some("B")), rec(Some("A")), rec(None)];
        let state = State::new("p");
        let ab = [Some("A"), Some("B")];
        let s = standing(&state, &records, &c, 2, &ab, false);
        assert_eq!((s.status, s.recorded), (CellStatus::Pending, 1));
        assert_eq!(
            standing(&state, &records, &c, 1, &ab, false).status,
            CellStatus::Done
        );
        // A plain run counts only records without an arm.
        assert_eq!(
            standing(&state, &records, &c, 1, &[None], false).recorded,
            1
        );
        assert_eq!(recorded(&records, &id, &key, Some("A")), 2);
    }
}
