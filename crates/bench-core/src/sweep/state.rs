//! The checkpoint `state.json`: each cell's status, versioned, replaced atomically.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::BenchError;

pub const STATE_FILE: &str = "state.json";
pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The cell was started and has not finished (a crash or kill left it so).
    Running,
    /// Its result is in `results.jsonl`.
    Done,
    /// It failed; `reason` says why.
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellState {
    pub key: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub updated_at: String,
    /// `bench ab`: the repetitions this cell runs in all, fixed after a pilot
    /// (`--precision`) or where it stopped (its interval decided at the threshold, or its
    /// budget ran out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<Decided>,
}

/// What `bench ab` fixed for a cell: after its pilot (`--precision`), or where it stopped
/// running until its interval decided at a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Decided {
    /// The pilot's repetitions (`--precision`); 0 for a cell run until it decided.
    pub pilot: u32,
    /// The repetitions the cell runs in all.
    pub repetitions: u32,
    /// A cell run until its interval decided: the threshold, in percent. Run again at
    /// another threshold, the cell goes on from its runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_pct: Option<f64>,
}

impl Decided {
    /// The pilot of Stein's rule, when the count came from one.
    pub fn stein_pilot(&self) -> Option<u32> {
        self.threshold_pct.is_none().then_some(self.pilot)
    }
}

/// What sweep a results directory holds: every cell of the plan (whichever shard runs it),
/// the repetitions per cell, and the shard this directory runs, if any. `bench merge`
/// checks shards against it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepInfo {
    pub planned: Vec<String>,
    pub repetitions: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::sweep::shard::Shard>,
    /// `bench ab`: how its arms form their pairs (`alternate`, `duet` or `runs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing: Option<String>,
    /// The store root the sweep runs against (`--root`, the plan's `root`, or the results
    /// directory's `store/`), and its storage options but credentials: the cells' keys
    /// depend on them, so a resume must give the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub storage: BTreeMap<String, String>,
    /// `bench ab`: the executables of arms A and B, as resolved paths, so that `bench plan`
    /// and `bench status` know the builds (their digests are in the cells' keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arms: Option<[String; 2]>,
    /// The plan file the directory's cells come from (its absolute path) and the SHA-256 of
    /// its text at the last run: another file of the same name is another plan, whose cells
    /// must not mix with these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_sha256: Option<String>,
}

impl SweepInfo {
    /// How a command line gives this sweep's store: `--root R --storage-option K=V …`.
    pub fn store_args(&self) -> String {
        let mut s = match &self.root {
            Some(r) => format!("--root {r}"),
            None => String::new(),
        };
        for (k, v) in &self.storage {
            s.push_str(&format!(" --storage-option {k}={v}"));
        }
        s.trim().to_string()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    pub version: u32,
    pub plan: String,
    /// Written by `bench run` from this version on; older checkpoints have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepInfo>,
    pub cells: BTreeMap<String, CellState>,
}

impl State {
    pub fn new(plan: &str) -> State {
        State {
            version: FORMAT_VERSION,
            plan: plan.to_string(),
            sweep: None,
            cells: BTreeMap::new(),
        }
    }

    pub fn path(out: &Path) -> PathBuf {
        out.join(STATE_FILE)
    }

    /// Load the checkpoint of `out`, or a new one if there is none.
    pub fn load(out: &Path, plan: &str) -> Result<State, BenchError> {
        if !State::path(out).exists() {
            return Ok(State::new(plan));
        }
        let state = State::load_any(out)?;
        if state.plan != plan {
            return Err(BenchError::output(format!(
                "results directory {} belongs to plan `{}`, not `{plan}`; use another --out",
                out.display(),
                state.plan
            )));
        }
        Ok(state)
    }

    /// Load the checkpoint of `out`, whatever plan it belongs to; a missing, unreadable or
    /// corrupt one is an error that says what to do.
    pub fn load_any(out: &Path) -> Result<State, BenchError> {
        let path = State::path(out);
        let text =
            fs::read_to_string(&path).map_err(|e| BenchError::io("read checkpoint", &path, e))?;
        #[derive(Deserialize)]
        struct Version {
            version: Option<u32>,
        }
        let corrupt = |why: String| {
            BenchError::output(format!(
                "checkpoint {} is unusable ({why}); move it away to keep it, or re-run with \
                 --fresh to archive the old outputs and start over",
                path.display()
            ))
        };
        let version: Version =
            serde_json::from_str(&text).map_err(|e| corrupt(format!("not valid JSON: {e}")))?;
        if version.version != Some(FORMAT_VERSION) {
            return Err(corrupt(format!(
                "format version {:?}, this bench reads version {FORMAT_VERSION}",
                version.version
            )));
        }
        let state: State =
            serde_json::from_str(&text).map_err(|e| corrupt(format!("malformed: {e}")))?;
        state.check().map_err(corrupt)?;
        Ok(state)
    }

    /// What a checkpoint read from disk must hold beyond its shape: the bounds a plan has
    /// (a sweep of at least one repetition, a planned cell at most once, a precision whose
    /// count covers its pilot).
    fn check(&self) -> Result<(), String> {
        if let Some(sweep) = &self.sweep {
            if !(1..=crate::plan::limits::REPETITIONS).contains(&u64::from(sweep.repetitions)) {
                return Err(format!(
                    "its sweep has {} repetitions, not 1 to {}",
                    sweep.repetitions,
                    crate::plan::limits::REPETITIONS
                ));
            }
            let mut seen = std::collections::BTreeSet::new();
            if let Some(id) = sweep.planned.iter().find(|id| !seen.insert(*id)) {
                return Err(format!("cell {id} is planned twice"));
            }
        }
        for (id, cell) in &self.cells {
            if let Some(p) = cell.precision
                && p.threshold_pct.is_none()
                && (p.pilot == 0 || p.repetitions < p.pilot)
            {
                return Err(format!(
                    "cell {id}'s precision has {} runs for a pilot of {}",
                    p.repetitions, p.pilot
                ));
            }
        }
        Ok(())
    }

    /// The checkpoint of `out` as it is, whatever plan it belongs to; `None` when there is
    /// none or it cannot be read (for reports, which only mention what it says).
    pub fn read(out: &Path) -> Option<State> {
        let text = fs::read_to_string(State::path(out)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Replace the checkpoint atomically: temp file, fsync, rename, fsync of the directory.
    pub fn save(&self, out: &Path) -> Result<(), BenchError> {
        let path = State::path(out);
        let mut bytes = serde_json::to_vec_pretty(self).expect("state serialises");
        bytes.push(b'\n');
        crate::files::write_atomic(&path, &bytes)
            .map_err(|e| BenchError::io("write checkpoint", &path, e))
    }

    /// Each cell's key, as the checkpoint holds it.
    pub fn keys(&self) -> BTreeMap<String, String> {
        self.cells
            .iter()
            .map(|(id, c)| (id.clone(), c.key.clone()))
            .collect()
    }

    /// Set a cell's status; what `--precision` fixed for it stays while its key does.
    pub fn set(&mut self, id: &str, key: &str, status: Status, reason: Option<String>) {
        let precision = self
            .cells
            .get(id)
            .filter(|c| c.key == key)
            .and_then(|c| c.precision);
        self.cells.insert(
            id.to_string(),
            CellState {
                key: key.to_string(),
                status,
                reason,
                updated_at: crate::clock::now_utc(),
                precision,
            },
        );
    }

    /// `bench ab` fixed a cell's repetitions (see [`Decided`]).
    pub fn decide(&mut self, id: &str, key: &str, decided: Decided) {
        if self.cells.get(id).is_none_or(|c| c.key != key) {
            self.set(id, key, Status::Running, None);
        }
        let c = self.cells.get_mut(id).expect("just set");
        c.precision = Some(decided);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = State::load(dir.path(), "p").unwrap();
        assert!(s.cells.is_empty());
        s.set("a", "k1", Status::Done, None);
        s.set("b", "k2", Status::Running, None);
        s.set("c", "k3", Status::Failed, Some("timeout".into()));
        s.save(dir.path()).unwrap();
        let back = State::load(dir.path(), "p").unwrap();
        assert_eq!(back, s);
        assert_eq!(back.cells["c"].reason.as_deref(), Some("timeout"));
        // No temp files left behind.
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![STATE_FILE]);
    }

    #[test]
    fn bad_checkpoints_are_refused_with_the_way_out() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("{ not json", "not valid JSON"),
            (
                r#"{"version": 99, "plan": "p", "cells": {}}"#,
                "format version",
            ),
            (r#"{"plan": "p", "cells": {}}"#, "format version"),
            (r#"{"version": 1, "plan": "p", "cells": 3}"#, "malformed"),
            (
                r#"{"version": 1, "plan": "other", "cells": {}}"#,
                "belongs to plan `other`",
            ),
            // Values no plan can give, e.g. a hand edit: refused, never a panic later.
            (
                r#"{"version": 1, "plan": "p", "cells": {}, "sweep": {"planned": ["a"], "repetitions": 0}}"#,
                "its sweep has 0 repetitions, not 1 to 1000",
            ),
            (
                r#"{"version": 1, "plan": "p", "cells": {}, "sweep": {"planned": ["a", "a"], "repetitions": 1}}"#,
                "cell a is planned twice",
            ),
            (
                r#"{"version": 1, "plan": "p", "cells": {"a": {"status": "done", "key": "k", "updated_at": "t", "precision": {"pilot": 5, "repetitions": 2}}}}"#,
                "precision has 2 runs for a pilot of 5",
            ),
        ];
        for (text, needle) in cases {
            fs::write(State::path(dir.path()), text).unwrap();
            let err = State::load(dir.path(), "p").unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
            // The bad file is left as it was.
            assert_eq!(fs::read_to_string(State::path(dir.path())).unwrap(), text);
        }
    }
}
