//! Runs one cell: spawns its worker processes ([`process`]), waits until all are ready,
//! releases them at once, folds their events into what the cell measured ([`fold`], pure),
//! and enforces the cell timeout and interrupts. Progress is reported through the narrow
//! [`Observer`] interface.

mod fold;
mod process;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::stats::Measured;
use crate::worker::protocol::{PROTOCOL_VERSION, Versions};
use crate::worker::{Event, WorkerArgs};
use fold::{Action, Fold};
use process::{Msg, Workers};

/// What a display learns of a running cell.
pub trait Observer {
    /// The workers were released: the measured window starts.
    fn released(&self) {}
    /// One measured operation finished.
    fn op(&self, _ok: bool, _read: bool) {}
    /// A worker finished its operations.
    fn worker_done(&self) {}
}

/// Observes nothing.
impl Observer for () {}

#[derive(Debug)]
pub enum Outcome {
    Finished(Box<Measured>),
    Failed(String),
    Interrupted,
}

pub struct CellRun<'a> {
    pub exe: &'a Path,
    pub workers: Vec<WorkerArgs>,
    pub storage: &'a BTreeMap<String, String>,
    pub timeout: Duration,
    /// What every worker must report being (from [`handshake`]); `None` checks nothing.
    pub versions: Option<&'a Versions>,
    /// Start the workers as the tasks of this command (a launcher such as srun, with the
    /// task count filled in) instead of as children; they take their ids from their ranks.
    pub launcher: Option<String>,
}

/// How long a worker binary may take to say what it is.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// Ask a worker binary what it is (`EXE worker-info`), before any cell runs on it: it must
/// answer with its versions and speak this coordinator's protocol.
pub async fn handshake(exe: &Path) -> Result<Versions, String> {
    let run = tokio::process::Command::new(exe)
        .arg("worker-info")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = match tokio::time::timeout(HANDSHAKE_TIMEOUT, run).await {
        Err(_) => {
            return Err(format!(
                "{} did not answer `worker-info` within {}s",
                exe.display(),
                HANDSHAKE_TIMEOUT.as_secs()
            ));
        }
        Ok(Err(e)) => return Err(format!("cannot run {}: {e}", exe.display())),
        Ok(Ok(out)) => out,
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let versions = text
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Versions>(l).ok())
        .filter(|_| out.status.success());
    match versions {
        None => Err(format!(
            "{} is not a bench worker: `worker-info` exited with {} and printed {:?}; give a \
             bench binary (target/release/bench of a build)",
            exe.display(),
            out.status,
            text.chars().take(200).collect::<String>()
        )),
        Some(v) if v.protocol != PROTOCOL_VERSION => Err(format!(
            "{} is {v}, which speaks worker protocol {}, not {PROTOCOL_VERSION}; rebuild it \
             from a bench of the same protocol",
            exe.display(),
            v.protocol
        )),
        Some(v) => Ok(v),
    }
}

/// Process `idx` exited: its workers are done or lost (a launcher's, all at once).
fn process_exited(
    w: &mut Workers,
    fold: &mut Fold,
    launcher: bool,
    idx: usize,
    status: std::io::Result<std::process::ExitStatus>,
) -> Action {
    let success = matches!(&status, Ok(s) if s.success());
    let status = match status {
        Ok(s) => s.to_string(),
        Err(e) => format!("unknown status ({e})"),
    };
    let tail = w.tail(idx);
    let workers = w.mark_exited(idx);
    if launcher {
        return fold.launcher_exited(success, status, tail);
    }
    workers
        .into_iter()
        .fold(Action::Continue, |action, worker| {
            match fold.exited(worker, success, status.clone(), tail.clone()) {
                Action::Abort => Action::Abort,
                _ => action,
            }
        })
}

/// Start the cell's workers: as children, or as the tasks of its launcher.
fn start(w: &mut Workers, run: &CellRun<'_>) -> Result<(), String> {
    match (&run.launcher, run.workers.first()) {
        (Some(command), Some(first)) => {
            // Ids are the ranks 0..n: one command line for all, the rank added by each task.
            let args = WorkerArgs {
                worker_id: 0,
                rank_from_env: true,
                ..first.clone()
            };
            w.spawn_launcher(command, run.exe, &args, run.workers.len(), run.storage)
                .map_err(|e| format!("cannot start the launcher `{command}`: {e}"))
        }
        _ => run.workers.iter().enumerate().try_for_each(|(idx, args)| {
            w.spawn(run.exe, args, run.storage)
                .map_err(|e| format!("cannot start worker {idx}: {e}"))
        }),
    }
}

/// Run the cell's workers to the end, a timeout or an interrupt.
pub async fn run_cell(
    run: CellRun<'_>,
    observer: &dyn Observer,
    interrupt: &mut watch::Receiver<bool>,
) -> Outcome {
    let mut w = Workers::new();
    let spawn_start = Instant::now();
    // The plan bounds the timeout; saturate rather than overflow all the same.
    let now = tokio::time::Instant::now();
    let deadline = now
        .checked_add(run.timeout)
        .unwrap_or(now + Duration::from_secs(86_400 * 365));
    let started = start(&mut w, &run);
    w.all_spawned();
    if let Err(e) = started {
        w.stop().await;
        return Outcome::Failed(e);
    }
    let ids = run.workers.iter().map(|a| a.worker_id).collect();
    let mut fold = Fold::new(ids, run.versions.cloned());
    let mut exited = 0;
    while exited < w.proc_count() {
        let msg = tokio::select! {
            msg = w.rx.recv() => msg,
            _ = tokio::time::sleep_until(deadline) => {
                w.stop().await;
                return Outcome::Failed(format!(
                    "timeout: the cell did not finish within cell_timeout_secs = {}",
                    run.timeout.as_secs()
                ));
            }
            _ = interrupt.changed() => {
                w.stop().await;
                return Outcome::Interrupted;
            }
        };
        let Some(msg) = msg else { break };
        let action = match msg {
            Msg::Event(idx, event) => {
                match &event {
                    Event::Op(op) => {
                        observer.op(op.ok, op.read);
                        crate::fault::point("cell");
                    }
                    Event::Done { .. } => observer.worker_done(),
                    Event::Ready { .. } => {}
                }
                fold.event(idx, event)
            }
            Msg::Garbage(idx, line) => {
                fold.garbage(idx, line);
                Action::Continue
            }
            Msg::Exited(idx, status) => {
                exited += 1;
                process_exited(&mut w, &mut fold, run.launcher.is_some(), idx, status)
            }
        };
        match action {
            Action::Continue => {}
            Action::Release => {
                w.release().await;
                fold.set_setup_ms(spawn_start.elapsed().as_secs_f64() * 1000.0);
                observer.released();
            }
            Action::Abort => {
                w.stop().await;
                break;
            }
        }
    }
    match fold.finish() {
        Ok(m) => Outcome::Finished(Box::new(m)),
        Err(reason) => Outcome::Failed(reason),
    }
}
