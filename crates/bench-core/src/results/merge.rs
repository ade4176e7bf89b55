//! `bench merge OUT SHARD_DIR...`: the results directories of a sweep's shards (or of any
//! runs of the same plan) combined into one, as if one machine had run the sweep.
//!
//! What it checks: every input is a results directory of the same plan (same name, same
//! planned cells, same repetitions); each planned cell is taken exactly once, with all its
//! repetitions, from the input whose checkpoint says it is done; a cell done in two inputs
//! with different records is refused (identical copies are fine: the same directory given
//! twice, or an earlier merge); cells done nowhere are listed as failed (with the shard's
//! reason) or missing, and the exit code says the sweep is incomplete. `OUT` gets
//! `results.jsonl`, `state.json`, `summary.csv`, the report and `merge.json` (where each
//! cell came from), each replaced whole; merging again after a late shard finishes
//! rewrites them. `OUT` must be new, empty or an earlier merge: a run's own results are
//! never overwritten.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{BenchError, exit, io_err};
use crate::export::{Record, jsonl};
use crate::files::write_atomic;
use crate::sweep::resume::{self, CellStatus};
use crate::sweep::state::{STATE_FILE, State, Status, SweepInfo};

pub const MERGE_FILE: &str = "merge.json";

/// Exit code of a merge that lacks some planned cells.
pub use exit::INCOMPLETE;

/// One input directory, read.
struct Input {
    dir: PathBuf,
    state: State,
    info: SweepInfo,
    records: Vec<Record>,
}

fn read_input(dir: &Path) -> Result<Input, BenchError> {
    if !dir.join(STATE_FILE).is_file() {
        return Err(BenchError::output(format!(
            "{} has no {STATE_FILE}: give the results directories (--out) of `bench run \
             --shard` runs",
            dir.display()
        )));
    }
    let state = State::load_any(dir)?;
    let Some(info) = state.sweep.clone() else {
        return Err(BenchError::output(format!(
            "{}'s checkpoint does not say which cells its sweep planned (written by an older \
             bench); run `bench run` on it again with the same plan and options (it resumes \
             and records them), then merge",
            dir.display()
        )));
    };
    let path = dir.join(jsonl::RESULTS_FILE);
    let records = jsonl::read_all(&path).map_err(BenchError::output)?;
    Ok(Input {
        dir: dir.to_path_buf(),
        state,
        info,
        records,
    })
}

/// Where one planned cell stands in one input.
enum Found<'a> {
    Done(Vec<&'a Record>),
    Failed(String),
    /// Started or partly recorded, not finished.
    Unfinished,
}

/// Where cell `id` stands in `input`, by the resume rule `bench run` and `bench status`
/// apply there (under the key its checkpoint holds: that of its last run).
fn find<'a>(input: &'a Input, id: &str) -> Option<Found<'a>> {
    let cell = input.state.cells.get(id)?;
    let standing = resume::standing_of(
        &input.state,
        &input.records,
        (id, &cell.key),
        input.info.repetitions,
        &crate::sweep::resume::arms_in(&input.records),
        false,
    );
    Some(match standing.status {
        CellStatus::Done => Found::Done(
            input
                .records
                .iter()
                .filter(|r| r.bench_tag == id && r.cell_key == cell.key)
                .collect(),
        ),
        CellStatus::Failed => Found::Failed(cell.reason.clone().unwrap_or_default()),
        _ => Found::Unfinished,
    })
}

/// Where a merged cell came from, for `merge.json`.
#[derive(Debug, Serialize)]
struct Source {
    cell: String,
    status: &'static str,
    from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

#[derive(Debug, Serialize)]
struct MergeFile<'a> {
    plan: &'a str,
    merged_at: String,
    inputs: Vec<String>,
    cells: &'a [Source],
}

/// The outcome, for the summary line and the exit code.
#[derive(Debug, Default)]
struct Tally {
    done: usize,
    failed: Vec<String>,
    missing: Vec<String>,
}

/// `bench merge OUT INPUT...`. Returns the exit code: 0 when every planned cell is done,
/// [`exit::CELLS_FAILED`] when some failed, [`INCOMPLETE`] when some are missing.
pub fn run(
    out: &Path,
    inputs: &[PathBuf],
    mixed_roots: bool,
) -> Result<crate::answer::Answer, BenchError> {
    let out_abs = std::path::absolute(out).map_err(io_err("resolve", out))?;
    let mut notes = Vec::new();
    let read = read_inputs(&out_abs, inputs, mixed_roots, &mut notes)?;
    let mut merged = combine(&read)?;
    notes.append(&mut merged.notes);
    let plan = &read[0].state.plan;
    write_out(&out_abs, &merged, &read, &mut notes)?;
    let mut answer = crate::answer::Answer {
        stderr: notes,
        code: if !merged.tally.missing.is_empty() {
            INCOMPLETE
        } else if !merged.tally.failed.is_empty() {
            exit::CELLS_FAILED
        } else {
            exit::OK
        },
        ..Default::default()
    };
    answer.line(summary_line(out, plan, &merged.tally, read.len()));
    Ok(answer)
}

/// Read the inputs (leaving out OUT itself) and check that they are of one sweep, against
/// one store unless `mixed_roots`.
fn read_inputs(
    out: &Path,
    inputs: &[PathBuf],
    mixed_roots: bool,
    notes: &mut Vec<String>,
) -> Result<Vec<Input>, BenchError> {
    let mut read = Vec::new();
    for dir in inputs {
        let abs = std::path::absolute(dir).map_err(io_err("resolve", dir))?;
        if abs == out {
            notes.push(format!(
                "note: {} is the output; its earlier merge is replaced, not read",
                dir.display()
            ));
            continue;
        }
        read.push(read_input(dir)?);
    }
    let Some(first) = read.first() else {
        return Err(BenchError::Usage(
            "give at least one results directory to merge besides OUT".into(),
        ));
    };
    for i in &read[1..] {
        let same = i.state.plan == first.state.plan
            && i.info.planned == first.info.planned
            && i.info.repetitions == first.info.repetitions;
        if !same {
            return Err(BenchError::output(format!(
                "{} and {} come from different sweeps (plan `{}` with {} cells and {} \
                 repetitions, plan `{}` with {} cells and {} repetitions); merge only the \
                 shards of one plan, run with the same plan file",
                first.dir.display(),
                i.dir.display(),
                first.state.plan,
                first.info.planned.len(),
                first.info.repetitions,
                i.state.plan,
                i.info.planned.len(),
                i.info.repetitions
            )));
        }
    }
    // Shards merged as one sweep must have run against one store: records of another store
    // (a shard resumed without its --root) measure something else.
    let store_of = |i: &Input| (i.info.root.clone(), i.info.storage.clone());
    if !mixed_roots
        && let Some(i) = read[1..].iter().find(|i| {
            i.info.root.is_some() && first.info.root.is_some() && store_of(i) != store_of(first)
        })
    {
        return Err(BenchError::output(format!(
            "{} ran with {} and {} with {}: their records come from different stores; merge \
             the shards of one store (resume a shard with its own --root), or give \
             --allow-mixed-roots to merge them all the same",
            first.dir.display(),
            first.info.store_args(),
            i.dir.display(),
            i.info.store_args()
        )));
    }
    for i in &read {
        if let Some(pid) = crate::lock::holder(&i.dir) {
            notes.push(format!(
                "warning: {} is still being run (bench pid {pid}); its unfinished cells are \
                 missing from this merge: merge again when it ends",
                i.dir.display()
            ));
        }
    }
    Ok(read)
}

/// The merged sweep: its records, checkpoint, where each cell came from, and the tally.
struct Merged {
    records: Vec<Record>,
    state: State,
    sources: Vec<Source>,
    tally: Tally,
    /// The trace files the records name (`--trace`): where each is in its input, and where
    /// it goes under OUT (the same path relative to the directory, as the record has it).
    traces: Vec<(PathBuf, String)>,
    /// What to say of it.
    notes: Vec<String>,
}

/// Take every planned cell once: done somewhere (duplicates must agree), else failed
/// somewhere, else missing.
fn combine(read: &[Input]) -> Result<Merged, BenchError> {
    let first = &read[0];
    let mut m = Merged {
        records: Vec::new(),
        state: State::new(&first.state.plan),
        sources: Vec::new(),
        tally: Tally::default(),
        traces: Vec::new(),
        notes: Vec::new(),
    };
    m.state.sweep = Some(SweepInfo {
        shard: None,
        ..first.info.clone()
    });
    let one_store = read
        .iter()
        .all(|i| i.info.root == first.info.root && i.info.storage == first.info.storage);
    if !one_store {
        // Merged across stores (--allow-mixed-roots): no one store to resume against.
        if let Some(info) = m.state.sweep.as_mut() {
            info.root = None;
            info.storage.clear();
        }
    }
    for id in &first.info.planned {
        let mut done: Option<(&Input, Vec<&Record>)> = None;
        let mut failed: Option<(&Input, String)> = None;
        for input in read {
            match find(input, id) {
                Some(Found::Done(recs)) => {
                    if let Some((other, theirs)) = &done
                        && !same_records(theirs, &recs)
                    {
                        return Err(BenchError::output(format!(
                            "cell {id} is done in both {} and {} with different results (run \
                             twice); keep one: leave the other directory out of the merge",
                            other.dir.display(),
                            input.dir.display()
                        )));
                    }
                    done = done.or(Some((input, recs)));
                }
                Some(Found::Failed(reason)) => failed = failed.or(Some((input, reason))),
                Some(Found::Unfinished) | None => {}
            }
        }
        let (status, from, reason) = match (done, failed) {
            (Some((input, recs)), _) => {
                m.state
                    .set(id, &input.state.cells[id].key, Status::Done, None);
                for r in recs {
                    let r = with_trace(r, &input.dir, &mut m.traces, &mut m.notes);
                    m.records.push(r);
                }
                m.tally.done += 1;
                ("done", Some(input), None)
            }
            (None, Some((input, reason))) => {
                let key = &input.state.cells[id].key;
                m.state.set(id, key, Status::Failed, Some(reason.clone()));
                m.tally.failed.push(id.clone());
                ("failed", Some(input), Some(reason))
            }
            (None, None) => {
                m.tally.missing.push(id.clone());
                ("missing", None, None)
            }
        };
        m.sources.push(Source {
            cell: id.clone(),
            status,
            from: from.map(|i| i.dir.display().to_string()),
            reason,
        });
    }
    Ok(m)
}

/// A record as merged: its trace file and its history's files (where it names them) go with
/// it, at the same paths relative to OUT; one that is gone from its input is named no more
/// (and said).
fn with_trace(
    r: &Record,
    dir: &Path,
    traces: &mut Vec<(PathBuf, String)>,
    notes: &mut Vec<String>,
) -> Record {
    let mut r = r.clone();
    if let Some(rel) = r.attached.trace.clone() {
        let from = dir.join(&rel);
        if from.is_file() {
            traces.push((from, rel));
        } else {
            notes.push(format!(
                "note: {}'s trace {} is not there; its merged record names none",
                r.bench_tag,
                from.display()
            ));
            r.attached.trace = None;
        }
    }
    if let Some(rel) = r.attached.history.clone() {
        let from = dir.join(&rel);
        let files = [crate::history::HISTORY_FILE, crate::history::VERSIONS_FILE];
        if from.join(files[0]).is_file() {
            for f in files.into_iter().filter(|f| from.join(f).is_file()) {
                traces.push((from.join(f), format!("{rel}/{f}")));
            }
        } else {
            notes.push(format!(
                "note: {}'s history {} is not there; its merged record names none",
                r.bench_tag,
                from.display()
            ));
            r.attached.history = None;
        }
    }
    r
}

fn same_records(a: &[&Record], b: &[&Record]) -> bool {
    let lines = |rs: &[&Record]| -> Vec<String> {
        let mut v: Vec<String> = rs
            .iter()
            .map(|r| serde_json::to_string(r).expect("record serialises"))
            .collect();
        v.sort();
        v
    };
    lines(a) == lines(b)
}

/// Write OUT's files, each replaced whole. Refuses a directory that holds a run's results.
fn write_out(
    out: &Path,
    merged: &Merged,
    inputs: &[Input],
    notes: &mut Vec<String>,
) -> Result<(), BenchError> {
    let Merged {
        records,
        state,
        sources,
        traces,
        ..
    } = merged;
    let earlier_run = [STATE_FILE, jsonl::RESULTS_FILE]
        .iter()
        .any(|f| out.join(f).exists());
    if earlier_run && !out.join(MERGE_FILE).is_file() {
        return Err(BenchError::output(format!(
            "{} holds the results of a run, not of a merge; merge into a new or empty \
             directory",
            out.display()
        )));
    }
    std::fs::create_dir_all(out).map_err(io_err("create", out))?;
    let _lock = crate::lock::acquire(out)?;
    let mut lines = Vec::new();
    for r in records {
        serde_json::to_writer(&mut lines, r).expect("record serialises");
        lines.push(b'\n');
    }
    // The traces and histories first: a record never names a file that is not there.
    for (from, rel) in traces {
        let to = out.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io_err("create", parent))?;
        }
        if *from != to {
            std::fs::copy(from, &to).map_err(io_err("copy a trace or a history to", &to))?;
        }
    }
    let results = out.join(jsonl::RESULTS_FILE);
    write_atomic(&results, &lines).map_err(io_err("write", &results))?;
    state.save(out)?;
    let merge = MergeFile {
        plan: &state.plan,
        merged_at: crate::clock::now_utc(),
        inputs: inputs.iter().map(|i| i.dir.display().to_string()).collect(),
        cells: sources,
    };
    let path = out.join(MERGE_FILE);
    let mut bytes = serde_json::to_vec_pretty(&merge).expect("merge file serialises");
    bytes.push(b'\n');
    write_atomic(&path, &bytes).map_err(io_err("write", &path))?;
    notes.extend(super::refresh(out, records, true)?);
    Ok(())
}

fn summary_line(out: &Path, plan: &str, t: &Tally, inputs: usize) -> String {
    let total = t.done + t.failed.len() + t.missing.len();
    let mut s = format!(
        "merged {inputs} results directories of plan `{plan}` into {}: {} of {total} cells done",
        out.display(),
        t.done
    );
    let list = |v: &[String]| {
        let shown: Vec<&str> = v.iter().take(20).map(String::as_str).collect();
        let more = v.len().saturating_sub(shown.len());
        let more = if more > 0 {
            format!(", and {more} more")
        } else {
            String::new()
        };
        format!("{}{more}", shown.join(", "))
    };
    if !t.failed.is_empty() {
        s.push_str(&format!(
            "\n  FAILED ({}; the report has their reasons; re-run their shard with \
             --retry-failed, then merge again): {}",
            t.failed.len(),
            list(&t.failed)
        ));
    }
    if !t.missing.is_empty() {
        s.push_str(&format!(
            "\n  INCOMPLETE: {} cells are in no results directory given (a shard not given, \
             not finished or interrupted; resume it, then merge again): {}",
            t.missing.len(),
            list(&t.missing)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::{ModeKind, Variant};

    /// A shard's results directory holding cell `id` done (with a trace file when `trace`).
    fn shard(dir: &Path, id: &str, planned: &[&str], trace: bool) {
        let mut r = record(ModeKind::Continuous, Variant::NoIndex, 100, 1, id);
        r.cell_key = "k".into();
        if trace {
            let rel = format!("traces/{id}_r1.json");
            std::fs::create_dir_all(dir.join("traces")).unwrap();
            std::fs::write(dir.join(&rel), format!("{{\"cell\": \"{id}\"}}")).unwrap();
            r.attached.trace = Some(rel);
            let kept = format!("histories/{id}_r1");
            std::fs::create_dir_all(dir.join(&kept)).unwrap();
            std::fs::write(dir.join(&kept).join("history.jsonl"), id).unwrap();
            r.attached.history = Some(kept);
        }
        jsonl::append_all(&dir.join(jsonl::RESULTS_FILE), &[r]).unwrap();
        let mut st = State::new("p");
        st.sweep = Some(SweepInfo {
            planned: planned.iter().map(|s| s.to_string()).collect(),
            repetitions: 1,
            shard: None,
            pairing: None,
            root: Some("/r".into()),
            storage: Default::default(),
            arms: None,
            plan_file: None,
            plan_sha256: None,
        });
        st.set(id, "k", Status::Done, None);
        st.save(dir).unwrap();
    }

    /// A merged record's trace and history name files under OUT: they come with their
    /// records.
    #[test]
    fn traces_and_histories_come_with_their_records() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b, out) = (
            tmp.path().join("a"),
            tmp.path().join("b"),
            tmp.path().join("m"),
        );
        for d in [&a, &b] {
            std::fs::create_dir_all(d).unwrap();
        }
        shard(&a, "x", &["x", "y"], true);
        shard(&b, "y", &["x", "y"], false);
        assert_eq!(run(&out, &[a.clone(), b], false).unwrap().code, exit::OK);
        let merged = jsonl::read_all(&out.join(jsonl::RESULTS_FILE)).unwrap();
        let traced: Vec<&Record> = merged
            .iter()
            .filter(|r| r.attached.trace.is_some())
            .collect();
        assert_eq!(traced.len(), 1);
        let rel = traced[0].attached.trace.as_deref().unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join(rel)).unwrap(),
            std::fs::read_to_string(a.join(rel)).unwrap()
        );
        let kept = traced[0].attached.history.as_deref().unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join(kept).join("history.jsonl")).unwrap(),
            "x"
        );
        // A trace gone from its shard: the merged record names none, rather than a file
        // that is not there.
        std::fs::remove_file(a.join(rel)).unwrap();
        let again = tmp.path().join("m2");
        let said = run(&again, &[a, tmp.path().join("b")], false)
            .unwrap()
            .stderr;
        assert!(said.iter().any(|n| n.contains("is not there")), "{said:?}");
        let merged = jsonl::read_all(&again.join(jsonl::RESULTS_FILE)).unwrap();
        assert!(
            merged.iter().all(|r| r.attached.trace.is_none()),
            "{merged:?}"
        );
    }
}
