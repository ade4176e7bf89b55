//! The one resume rule: where a cell of the plan stands, from the checkpoint and the
//! records. `bench run`, `bench plan`, `bench status` and the cleanup all ask this.
//!
//! A cell is done when `results.jsonl` holds its `repetitions` repetitions under its
//! current key, each verified (the records are the truth: a crash between appending a
//! record and checkpointing it loses nothing). A repetition whose latest record failed
//! verification fails the cell until it runs again and passes (`--retry-failed`), whatever
//! the checkpoint says. Otherwise the checkpoint says why it is not: never run (pending), run
//! under another key (stale: the plan changed), failed, or running when a run died
//! (interrupted); a cell checkpointed done with fewer records (repetitions were raised) is
//! pending, with its recorded count. In `bench ab` every arm must have its records: the
//! cell's recorded count is the smallest of its arms'.

use crate::export::Record;
use crate::export::record::{ARM_A, ARM_B};
use crate::plan::Cell;
use crate::sweep::state::{State, Status};

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

/// The latest record of each repetition of this cell id and key, of this arm (a
/// repetition run again after it failed verification has its newer record).
pub fn by_repetition<'a>(
    records: &'a [Record],
    id: &str,
    key: &str,
    arm: Option<&str>,
) -> std::collections::BTreeMap<u32, &'a Record> {
    records
        .iter()
        .filter(|r| r.bench_tag == id && r.cell_key == key && r.arm.as_deref() == arm)
        .map(|r| (r.repetition, r))
        .collect()
}

/// How many repetitions of this cell id and key `results.jsonl` holds verified, of this
/// arm: a repetition whose latest record failed verification is not recorded (it runs
/// again with `--retry-failed`).
pub fn recorded(records: &[Record], id: &str, key: &str, arm: Option<&str>) -> u32 {
    by_repetition(records, id, key, arm)
        .values()
        .filter(|r| !r.failed())
        .count() as u32
}

/// Whether repetition `repetition` of this cell (id, key), of this arm, is recorded and
/// verified.
pub fn has_repetition(
    records: &[Record],
    (id, key): (&str, &str),
    arm: Option<&str>,
    repetition: u32,
) -> bool {
    by_repetition(records, id, key, arm)
        .get(&repetition)
        .is_some_and(|r| !r.failed())
}

/// The first repetition of this cell (id, key) whose latest record, of any of `arms`,
/// failed verification: why the cell stands failed.
pub fn unverified<'a>(
    records: &'a [Record],
    (id, key): (&str, &str),
    arms: &[Option<&str>],
) -> Option<&'a Record> {
    arms.iter()
        .flat_map(|&arm| by_repetition(records, id, key, arm).into_values())
        .find(|r| r.failed())
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
    } else if unverified(records, (id, key), arms).is_some() {
        // A run that failed verification fails its cell, whatever the checkpoint says
        // (a checkpoint written before this rule held it done).
        CellStatus::Failed
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

/// Why a stale cell is stale (its checkpoint holds another key than the plan gives it now).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    /// A build whose workers run it is another now: rebuilt (`was`: the digest its records
    /// carry), or recorded before builds were known by their bytes (`was`: `None`).
    Build {
        /// `arm B`, `build cow`.
        which: String,
        was: Option<String>,
        now: String,
    },
    /// The directory was run against another store (root or storage options).
    Store,
    /// The plan changed.
    Plan,
}

impl Stale {
    /// As `bench plan` and `bench status` say it.
    pub fn label(&self) -> String {
        match self {
            Stale::Build {
                which,
                was: Some(w),
                now,
            } => {
                format!("{which} rebuilt: {w} -> {now}")
            }
            Stale::Build {
                which, was: None, ..
            } => {
                format!("{which}: recorded before builds were known by their bytes")
            }
            Stale::Store => "another store".into(),
            Stale::Plan => "plan changed".into(),
        }
    }
}

/// Why `cell` is stale: a build changed (the digests its records under the checkpoint's key
/// carry are not its builds' now), the directory was run against another store (the cell's
/// key under that store is the checkpoint's), or else the plan changed.
pub fn stale_reason(state: &State, records: &[Record], cell: &Cell) -> Stale {
    let id = cell.id();
    let Some(was) = state.cells.get(&id).map(|c| c.key.clone()) else {
        return Stale::Plan;
    };
    for (arm, build) in cell.builds() {
        let recorded = records
            .iter()
            .filter(|r| r.bench_tag == id && r.cell_key == was && r.arm.as_deref() == arm)
            .find_map(|r| r.build_digest.clone());
        let any = records
            .iter()
            .any(|r| r.bench_tag == id && r.cell_key == was && r.arm.as_deref() == arm);
        let which = match (arm, &cell.build) {
            (Some(a), _) => format!("arm {a}"),
            (None, Some(b)) => format!("build {}", b.name),
            (None, None) => "the build".into(),
        };
        let now = build.short().to_string();
        match recorded {
            Some(d) if d != now => {
                return Stale::Build {
                    which,
                    was: Some(d),
                    now,
                };
            }
            None if any => {
                return Stale::Build {
                    which,
                    was: None,
                    now,
                };
            }
            _ => {}
        }
    }
    if let Some(info) = state.sweep.as_ref()
        && let Some(root) = &info.root
    {
        let mut there = cell.clone();
        there.root = root.clone();
        there.storage = info.storage.clone();
        let key = there.key();
        if key == was && key != cell.key() {
            return Stale::Store;
        }
    }
    Stale::Plan
}

/// The records that stand for each cell of a results directory (or of a results JSONL
/// file), as every command that reads finished results takes them: under the key its
/// checkpoint holds for the cell (`state.json` beside the file), where it has records under
/// it; otherwise its records under the last key in the file (see [`crate::export::standing`]).
/// `bench ab`, `bench compare`, `bench predict`, the summary and the report all follow it, so
/// a reverted plan edit never puts the other plan's records in a verdict.
pub fn load(path: &std::path::Path) -> Result<(std::path::PathBuf, Vec<Record>), String> {
    let (file, records) = crate::export::jsonl::load(path)?;
    let is_dirs_own =
        file.file_name() == Some(std::ffi::OsStr::new(crate::export::jsonl::RESULTS_FILE));
    let records = match is_dirs_own {
        true => stand(file.parent().unwrap_or(std::path::Path::new(".")), records),
        false => records,
    };
    Ok((file, records))
}

/// The records of the results directory `dir` that stand, of all it holds (see [`load`]):
/// under the key its checkpoint holds for each cell; all of them without a checkpoint.
pub fn stand(dir: &std::path::Path, records: Vec<Record>) -> Vec<Record> {
    match State::read(dir) {
        Some(state) => crate::export::standing(&records, &state.keys()),
        None => records,
    }
}

/// What a results directory has finished, by the resume rule: the records of its done
/// cells (the latest of each repetition, under the checkpoint's key), and every other cell
/// of its checkpoint with where it stands. What `bench publish` takes: results that
/// outlive the sweep are only of cells that are done.
#[derive(Debug, Clone)]
pub struct Finished {
    pub records: Vec<Record>,
    /// Cells the checkpoint knows that are not done (pending, failed, interrupted, or
    /// partly recorded), by id, with their standing.
    pub unfinished: Vec<(String, Standing)>,
}

/// [`Finished`] of the results directory `dir` (or of the directory of a results file):
/// its checkpoint must be there and readable (a corrupt one is an error, as for a resume).
pub fn finished(dir: &std::path::Path) -> Result<Finished, crate::error::BenchError> {
    let (file, records) =
        crate::export::jsonl::load(dir).map_err(crate::error::BenchError::output)?;
    let dir = file.parent().unwrap_or(std::path::Path::new("."));
    if !State::path(dir).exists() {
        return Err(crate::error::BenchError::output(format!(
            "{} has no {}: without its checkpoint nothing says which cells are done; give \
             the results directory the sweep wrote (results/<plan name>/ or its --out)",
            dir.display(),
            crate::sweep::state::STATE_FILE
        )));
    }
    let state = State::load_any(dir)?;
    let arms = arms_in(&records);
    let repetitions = state.sweep.as_ref().map_or(1, |s| s.repetitions);
    let mut out = Finished {
        records: Vec::new(),
        unfinished: Vec::new(),
    };
    for (id, c) in &state.cells {
        let s = standing_of(&state, &records, (id, &c.key), repetitions, &arms, false);
        if s.status != CellStatus::Done {
            out.unfinished.push((id.clone(), s));
            continue;
        }
        let mut mine: Vec<&Record> = arms
            .iter()
            .flat_map(|&arm| by_repetition(&records, id, &c.key, arm).into_values())
            .collect();
        mine.sort_by_key(|r| (r.arm.clone(), r.repetition));
        out.records.extend(mine.into_iter().cloned());
    }
    Ok(out)
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
            records.extend((0..cur).map(|i| Record {
                repetition: i as u32 + 1,
                ..rec(&key)
            }));
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

    /// A rebuilt arm makes its cells stale, and `bench status` says which and how.
    #[test]
    fn a_rebuilt_build_is_why_a_cell_is_stale() {
        use crate::plan::BuildId;
        let arm = |d: &str| BuildId {
            identity: "bench 0.1.0".into(),
            digest: d.into(),
        };
        let then = Cell {
            arms: Some([arm(&"a".repeat(64)), arm(&"b".repeat(64))]),
            ..cell()
        };
        let now = Cell {
            arms: Some([arm(&"a".repeat(64)), arm(&"c".repeat(64))]),
            ..cell()
        };
        let mut state = State::new("p");
        state.set(&then.id(), &then.key(), Status::Done, None);
        let rec = |a: &str, d: char| {
            let mut r = record(ModeKind::Continuous, Variant::NoIndex, 100, 1, &then.id());
            r.cell_key = then.key();
            r.arm = Some(a.into());
            r.build_digest = Some(d.to_string().repeat(16));
            r
        };
        let records = vec![rec("A", 'a'), rec("B", 'b')];
        let ab = [Some("A"), Some("B")];
        assert_eq!(
            standing(&state, &records, &now, 1, &ab, false).status,
            CellStatus::Stale
        );
        let why = stale_reason(&state, &records, &now);
        assert_eq!(
            why.label(),
            format!("arm B rebuilt: {} -> {}", "b".repeat(16), "c".repeat(16))
        );
        // Records from before digests: said so.
        let mut old = records.clone();
        old.iter_mut().for_each(|r| r.build_digest = None);
        assert!(
            stale_reason(&state, &old, &now)
                .label()
                .contains("before builds were known by their bytes")
        );
        // The same builds, another plan: the plan changed.
        let other = Cell {
            commit_retries: 3,
            ..then.clone()
        };
        assert_eq!(stale_reason(&state, &records, &other), Stale::Plan);
    }

    /// compare, ab and predict read a directory's records as the summary does: a reverted
    /// plan edit counts the records of the key the checkpoint holds, not the last in the file.
    #[test]
    fn finished_results_are_read_by_the_checkpoint_s_key() {
        let dir = tempfile::tempdir().unwrap();
        let rec = |key: &str, ops: u64| {
            let mut r = record(ModeKind::Continuous, Variant::NoIndex, 100, 1, "c");
            r.cell_key = key.into();
            r.total_operations = ops;
            r
        };
        let file = dir.path().join(crate::export::jsonl::RESULTS_FILE);
        crate::export::jsonl::append_all(&file, &[rec("k1", 5), rec("k2", 6)]).unwrap();
        // No checkpoint: the last key in the file.
        let (_, all) = load(dir.path()).unwrap();
        assert_eq!(crate::export::cells(&all)[0].first().total_operations, 6);
        // The plan edit was reverted: the checkpoint holds k1 again.
        let mut state = State::new("p");
        state.set("c", "k1", Status::Done, None);
        state.save(dir.path()).unwrap();
        let (_, kept) = load(dir.path()).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].total_operations, 5);
        // The same through the file's path.
        assert_eq!(load(&file).unwrap().1, kept);
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
        let second = Record {
            repetition: 2,
            ..rec(Some("A"))
        };
        let records = vec![rec(Some("A")), rec(Some("B")), second, rec(None)];
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

    /// A run that failed verification fails its cell, whatever the checkpoint says, until
    /// the repetition runs again and passes; its record stays in the file.
    #[test]
    fn a_failed_verification_fails_the_cell_until_a_rerun_passes() {
        use CellStatus::*;
        let c = cell();
        let (id, key) = (c.id(), c.key());
        let rec = |rep: u32, verified: bool| {
            let mut r = record(ModeKind::Continuous, Variant::NoIndex, 100, 1, &id);
            r.cell_key = key.clone();
            r.repetition = rep;
            r.verified = verified;
            r.verify_error = (!verified).then(|| "cannot read the cell's __manifest".into());
            r
        };
        for status in [Status::Done, Status::Failed, Status::Running] {
            let mut state = State::new("p");
            state.set(&id, &key, status, None);
            let bad = [rec(1, false)];
            let s = standing(&state, &bad, &c, 1, &[None], false);
            assert_eq!((s.status, s.recorded), (Failed, 0), "{status:?}");
            assert_eq!(
                unverified(&bad, (&id, &key), &[None]).map(|r| r.repetition),
                Some(1)
            );
            // Run again and verified: done, with one repetition recorded.
            let rerun = [rec(1, false), rec(1, true)];
            let s = standing(&state, &rerun, &c, 1, &[None], false);
            assert_eq!((s.status, s.recorded), (Done, 1), "{status:?}");
            assert!(has_repetition(&rerun, (&id, &key), None, 1));
            assert!(!has_repetition(&bad, (&id, &key), None, 1));
        }
        // The second of three repetitions failed: failed, one recorded.
        let mut state = State::new("p");
        state.set(&id, &key, Status::Done, None);
        let two = [rec(1, true), rec(2, false)];
        let s = standing(&state, &two, &c, 3, &[None], false);
        assert_eq!(s.label(), "failed (1/3 repetitions recorded)");
        // In bench ab, either arm's failure fails the pair.
        let arm = |a: &str, verified| Record {
            arm: Some(a.into()),
            ..rec(1, verified)
        };
        let ab = [Some("A"), Some("B")];
        let pair = [arm("A", true), arm("B", false)];
        assert_eq!(standing(&state, &pair, &c, 1, &ab, false).status, Failed);
    }
}
