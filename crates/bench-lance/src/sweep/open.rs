//! Opening a sweep's results directory: the store checked, the lock, `--fresh`, the
//! checkpoint and the records (a torn last line cut, dirty copies removed), and the signals
//! that interrupt it.

use std::time::Duration;

use crate::catalog::served::Served;

use tokio::sync::watch;

use super::Sweep;
use super::resume::{self, CellStatus};
use super::runner::RunOptions;
use crate::catalog;
use crate::error::{BenchError, exit, io_err};
use crate::export::{Record, jsonl};
use crate::state::{State, Status};
use bench_core::results::archive::archive_outputs;

/// Interrupt flag set by Ctrl-C or SIGTERM; a second signal exits at once.
pub(super) fn watch_signals(log: crate::progress::Logger) -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("install SIGTERM handler");
        let mut count = 0;
        loop {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            count += 1;
            if count == 1 {
                log.log(
                    "interrupted: stopping the running cell (press Ctrl-C again to exit at once)",
                );
                let _ = tx.send(true);
            } else {
                // At once: every worker and server this run started goes with it. The
                // running cell stays checkpointed as running, so the next run removes its
                // copy and runs it again.
                crate::coordinator::kill_every_group();
                log.log(
                    "interrupted again: stopped at once, its workers and servers killed; the \
                     running cell is pending again (its copy is removed when the sweep \
                     resumes); re-run the same command to resume",
                );
                std::process::exit(i32::from(exit::INTERRUPTED));
            }
        }
    });
    rx
}

/// Take the results directory: the store checked first (a bad root or a failed S3
/// preflight writes nothing locally), then the lock, `--fresh`, the checkpoint and the
/// records, with a torn last line cut and dirty copies of interrupted cells removed.
/// What `open` found: the lock held, the checkpoint, the records, and notices to log.
pub(super) struct Opened {
    pub(super) _lock: crate::lock::RunLock,
    pub(super) claim: crate::store::Claim,
    pub(super) state: State,
    pub(super) records: Vec<Record>,
    pub(super) notices: Vec<String>,
}

pub(super) async fn open(
    sweep: &Sweep,
    opts: &RunOptions,
    arms: &[Option<&str>],
) -> Result<Opened, BenchError> {
    let out = &sweep.out;
    // The server first: a plan it cannot serve leaves nothing behind, not even the store.
    probe_external(sweep).await?;
    if sweep.plan.campaign.is_some() || !sweep.plan.nemesis.is_empty() {
        crate::store_fault::preflight(&sweep.plan.storage, &sweep.store.root_uri())
            .await
            .map_err(BenchError::store)?;
    }
    sweep.store.prepare().await?;
    let had_dir = out.exists();
    let had_lock = out.join(crate::lock::LOCK_FILE).exists();
    std::fs::create_dir_all(out).map_err(io_err("create results directory", out))?;
    let lock = crate::lock::acquire(out)?;
    // The store root too, before anything is moved or written: another sweep on it would
    // remove this one's copies and goldens. Refused, this run leaves nothing behind.
    let claim = match sweep.store.claim(out).await {
        Ok(c) => c,
        Err(e) => {
            drop(lock);
            if !had_lock {
                let _ = std::fs::remove_file(out.join(crate::lock::LOCK_FILE));
            }
            if !had_dir {
                let _ = std::fs::remove_dir(out);
            }
            return Err(e);
        }
    };
    match take(sweep, opts, arms).await {
        Ok((state, records, notices)) => Ok(Opened {
            _lock: lock,
            claim,
            state,
            records,
            notices,
        }),
        Err(e) => {
            claim.release().await;
            Err(e)
        }
    }
}

/// An external server (`rest.uri` with `rest.external = true`) must answer before anything
/// runs: a refused connection would otherwise fail every operation of every cell.
pub(super) async fn probe_external(sweep: &Sweep) -> Result<Option<Vec<Served>>, BenchError> {
    let Some(uri) = sweep.plan.rest.external.as_deref() else {
        return Ok(None);
    };
    catalog::probe_rest(uri, Duration::from_secs(30))
        .await
        .map_err(|e| {
            BenchError::store(format!(
                "the external REST server at {uri} (rest.uri) does not answer: {e}; start it \
                 first (e.g. `bench serve --root ROOT --bind HOST --port PORT`, see docs/plan.md, \
                 \"An external server\") or fix rest.uri"
            ))
        })?;
    served(sweep).await
}

/// Under an external server's `rest.parent`: which of bench's catalog operations the server
/// serves (`None` without `rest.parent`), the plan refused (exit 2) where it runs one the
/// server does not serve, naming it and the server's answer.
async fn served(sweep: &Sweep) -> Result<Option<Vec<Served>>, BenchError> {
    let (Some(uri), Some(parent)) = (&sweep.plan.rest.external, &sweep.plan.rest.parent) else {
        return Ok(None);
    };
    let served = catalog::served::served(uri, parent).await;
    for (key, op) in crate::plan::used_operations(&sweep.plan) {
        let answer = (served.iter())
            .find(|s| catalog::served::rest_name(s.operation) == catalog::served::rest_name(op))
            .and_then(|s| s.refused.as_ref());
        if let Some(answer) = answer {
            return Err(BenchError::Usage(format!(
                "{key}: `{op}` ({}) is not served by the server at {uri}, which answered: \
                 {answer}; remove it from the plan (`bench plan` lists what the server \
                 serves) or measure another server",
                catalog::served::rest_name(op)
            )));
        }
    }
    Ok(Some(served))
}

/// With the results directory and the store root held: `--fresh`, the checkpoint and the
/// records checked against this sweep, what a crash left repaired, and the checkpoint
/// brought in line with the records.
pub(super) async fn take(
    sweep: &Sweep,
    opts: &RunOptions,
    arms: &[Option<&str>],
) -> Result<(State, Vec<Record>, Vec<String>), BenchError> {
    let out = &sweep.out;
    let mut notices = Vec::new();
    if opts.fresh
        && let Some(dest) = archive_outputs(out)?
    {
        notices.push(format!(
            "--fresh: earlier outputs moved to {}",
            dest.display()
        ));
    }
    let mut state = sweep.state()?;
    same_shard(sweep, &state)?;
    if let Some(why) = sweep.another_plan_file(&state) {
        return Err(BenchError::Usage(why));
    }
    let records = repaired_records(sweep, &mut notices)?;
    // The cells' keys depend on the store: a resume against another one would run every
    // cell again, on another store, and mix their records.
    if let Some(was) = sweep.other_store(&state)
        && !state.cells.is_empty()
    {
        return Err(BenchError::Usage(other_store_message(out, &was)));
    }
    let (pairing, before) = same_pairing(sweep, opts, &state, &records)?;
    state.sweep = Some(crate::state::SweepInfo {
        pairing: pairing.or(before),
        ..sweep.info()
    });
    for (id, c) in &state.cells {
        if c.status == Status::Running {
            sweep.store.remove_prefix(&format!("runs/{id}")).await?;
        }
    }
    // Bring the checkpoint in line with the records (a crash between appending a
    // result and checkpointing it; a record that failed verification, checkpointed done
    // by a bench older than the rule that fails its cell).
    for cell in sweep.cells() {
        let (id, key) = (cell.id(), cell.key());
        let now = match sweep.standing(&state, &records, cell, arms, false).status {
            CellStatus::Done => Status::Done,
            CellStatus::Failed => Status::Failed,
            _ => continue,
        };
        let entry = state.cells.get(&id);
        if entry.is_none_or(|c| c.status != now || c.key != key) {
            let reason = (now == Status::Failed)
                .then(|| resume::unverified(&records, (&id, &key), arms).map(unverified_reason))
                .flatten();
            state.set(&id, &key, now, reason);
        }
    }
    state.save(out)?;
    Ok((state, records, notices))
}

/// Why a directory run against another store is not resumed here, and how it is: a copy of
/// a results directory that was run against its own store (`<out>/store`) names where it
/// came from.
fn other_store_message(out: &std::path::Path, was: &crate::state::SweepInfo) -> String {
    let home = (was.root.as_deref())
        .map(std::path::Path::new)
        .filter(|r| r.ends_with("store"))
        .and_then(std::path::Path::parent)
        // A copy holds the store it was copied with.
        .filter(|home| *home != out && out.join("store").is_dir());
    match home {
        Some(home) => format!(
            "{} is a copy of {}, which was run against its own store ({}): resume it there \
             (--out {}), or here against that store ({}); another store would run every cell \
             again",
            out.display(),
            home.display(),
            was.store_args(),
            home.display(),
            was.store_args()
        ),
        None => format!(
            "{} was run with {}; give the same to resume it (another store would run every \
             cell again), or another --out",
            out.display(),
            was.store_args()
        ),
    }
}

/// A directory holds one shard (or the whole sweep): another is refused.
pub(super) fn same_shard(sweep: &Sweep, state: &State) -> Result<(), BenchError> {
    let had = state.sweep.as_ref().map(|i| i.shard);
    if let Some(had) = had
        && had != sweep.shard
        && !state.cells.is_empty()
    {
        let name = |s: Option<crate::sweep::shard::Shard>| match s {
            Some(s) => format!("shard {s}"),
            None => "the whole sweep (no --shard)".to_string(),
        };
        return Err(BenchError::Usage(format!(
            "{} holds {} of plan `{}`, not {}; give each shard its own --out",
            sweep.out.display(),
            name(had),
            sweep.plan.name,
            name(sweep.shard)
        )));
    }
    Ok(())
}

/// The records, with what a crash left at the end of the file cut (and said).
pub(super) fn repaired_records(
    sweep: &Sweep,
    notices: &mut Vec<String>,
) -> Result<Vec<Record>, BenchError> {
    let results = sweep.results_path();
    let cut = jsonl::repair(&results).map_err(io_err("repair", &results))?;
    if cut.torn {
        notices.push(format!(
            "{}: removed a torn last line left by a crash; its cell runs again",
            results.display()
        ));
    }
    if cut.lone_half {
        notices.push(format!(
            "{}: removed the lone half of a pair left by a crash; the pair runs again",
            results.display()
        ));
    }
    jsonl::read_all(&results).map_err(BenchError::output)
}

/// An A/B directory keeps the pairing it was started with, and is resumed by `bench ab`
/// only. Returns this run's pairing and the directory's.
pub(super) fn same_pairing(
    sweep: &Sweep,
    opts: &RunOptions,
    state: &State,
    records: &[Record],
) -> Result<(Option<String>, Option<String>), BenchError> {
    let out = &sweep.out;
    let pairing = opts.pairs.map(|p| p.pairing.as_str().to_string());
    let before = (state.sweep.as_ref().and_then(|i| i.pairing.clone())).or_else(|| {
        records
            .iter()
            .any(|r| r.arm.is_some())
            .then(|| "runs".into())
    });
    if before.is_some() && pairing.is_none() {
        return Err(BenchError::Usage(format!(
            "{} holds the A/B pairs of `bench ab`; resume it with the same `bench ab` \
             command, or give `bench run` another --out",
            out.display()
        )));
    }
    if let (Some(was), Some(now)) = (&before, &pairing)
        && was != now
    {
        return Err(BenchError::Usage(format!(
            "{} holds A/B pairs formed with --pairing {was}; resume it with --pairing {was}, \
             or give another --out (or --fresh) for --pairing {now}",
            out.display()
        )));
    }
    Ok((pairing, before))
}

/// Why a record's cell failed: its verification, or the finding of a campaign's point, as
/// the checkpoint says it.
pub(super) fn unverified_reason(r: &Record) -> String {
    let finding = (r.attached.fault.as_ref()).and_then(|m| m.finding.as_deref());
    match (r.verified, finding) {
        (true, Some(finding)) => format!("repetition {} is a finding: {finding}", r.repetition),
        _ => format!(
            "repetition {} failed verification: {}",
            r.repetition,
            r.verify_error.as_deref().unwrap_or("no reason recorded")
        ),
    }
}
