//! Runs one cell: spawns its worker processes (each in its own process group), waits until
//! all are ready, releases them at once, reads every worker's output concurrently, and
//! enforces the cell timeout and interrupts (SIGTERM to the groups, a grace period, SIGKILL).

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::sync::{mpsc, watch};

use crate::progress::CellBar;
use crate::stats::Latencies;
use crate::worker::{Event, STORAGE_ENV, WorkerArgs};

/// What a finished cell measured.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// From the first spawn to release (processes started, namespaces open).
    pub setup_ms: f64,
    /// From release to the end of the last operation of the slowest worker.
    pub window_ms: f64,
    /// Latencies of the successful operations, one histogram per worker merged at the end.
    pub latencies: Latencies,
    pub attempts: u64,
    /// Failed operations that were commit conflicts past the retry budget.
    pub conflicts: u64,
    /// Failed operations with any other lance or storage error.
    pub other_errors: u64,
    pub first_conflict: Option<String>,
    pub first_other_error: Option<String>,
    /// Warm-up operations committed before release (all workers).
    pub warmup_ok: u64,
    /// (worker id, operation index) of every successful operation.
    pub committed: Vec<(u32, u64)>,
    /// The reads a mixed cell interleaves, counted apart from its commits.
    pub reads: ReadMeasured,
}

/// What the interleaved reads of a mixed cell measured.
#[derive(Debug, Clone, Default)]
pub struct ReadMeasured {
    pub latencies: Latencies,
    pub attempts: u64,
    pub errors: u64,
    pub first_error: Option<String>,
}

#[derive(Debug)]
pub enum Outcome {
    Finished(Box<Measured>),
    Failed(String),
    Interrupted,
}

/// Time between SIGTERM and SIGKILL when stopping a cell's workers.
const GRACE: Duration = Duration::from_secs(3);
const STDERR_TAIL_LINES: usize = 15;

enum Msg {
    Event(usize, Event),
    Garbage(usize, String),
    Exited(usize, std::io::Result<ExitStatus>),
}

/// Send `sig` to the process group led by `pid` (every worker leads its own group).
fn signal_group(pid: u32, sig: libc::c_int) {
    // SAFETY: kill(2) has no memory-safety preconditions; a stale group id only yields ESRCH.
    unsafe {
        libc::kill(-(pid as libc::pid_t), sig);
    }
}

struct Workers {
    pids: Vec<u32>,
    stdins: Vec<Option<ChildStdin>>,
    stderr: Vec<Arc<Mutex<VecDeque<String>>>>,
    exited: Vec<bool>,
}

impl Workers {
    fn tail(&self, idx: usize) -> String {
        let lines = self.stderr[idx].lock().expect("stderr tail lock");
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    fn signal_all(&self, sig: libc::c_int) {
        for (i, &pid) in self.pids.iter().enumerate() {
            if !self.exited[i] {
                signal_group(pid, sig);
            }
        }
    }
}

pub struct CellRun<'a> {
    pub exe: &'a Path,
    pub workers: Vec<WorkerArgs>,
    pub storage: &'a BTreeMap<String, String>,
    pub timeout: Duration,
}

pub async fn run_cell(
    run: CellRun<'_>,
    bar: &CellBar,
    interrupt: &mut watch::Receiver<bool>,
) -> Outcome {
    let n = run.workers.len();
    let storage_json = serde_json::to_string(run.storage).expect("storage options serialise");
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
    let mut w = Workers {
        pids: Vec::new(),
        stdins: Vec::new(),
        stderr: Vec::new(),
        exited: vec![false; n],
    };
    let spawn_start = Instant::now();
    let deadline = tokio::time::Instant::now() + run.timeout;

    for (idx, args) in run.workers.iter().enumerate() {
        let mut cmd = Command::new(run.exe);
        cmd.args(args.to_args())
            .env(STORAGE_ENV, &storage_json)
            .env_remove(crate::fault::ENV)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                w.exited.truncate(idx);
                stop(&mut w, &mut rx).await;
                return Outcome::Failed(format!("cannot start worker {idx}: {e}"));
            }
        };
        w.pids
            .push(child.id().expect("a just-spawned child has a pid"));
        w.stdins.push(child.stdin.take());
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        w.stderr.push(tail.clone());
        let stderr = child.stderr.take().expect("stderr is piped");
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut t = tail.lock().expect("stderr tail lock");
                if t.len() == STDERR_TAIL_LINES {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        let stdout = child.stdout.take().expect("stdout is piped");
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let msg = match serde_json::from_str::<Event>(&line) {
                    Ok(ev) => Msg::Event(idx, ev),
                    Err(_) => Msg::Garbage(idx, line),
                };
                if tx.send(msg).is_err() {
                    break;
                }
            }
            let _ = tx.send(Msg::Exited(idx, child.wait().await));
        });
    }
    drop(tx);

    let mut m = Measured::default();
    let mut per_worker = vec![Latencies::default(); n];
    let mut per_worker_reads = vec![Latencies::default(); n];
    let mut ready = 0;
    let mut released = false;
    let mut done = vec![false; n];
    let mut failures: Vec<String> = Vec::new();
    let mut exited = 0;

    while exited < n {
        let msg = tokio::select! {
            msg = rx.recv() => msg,
            _ = tokio::time::sleep_until(deadline) => {
                stop(&mut w, &mut rx).await;
                return Outcome::Failed(format!(
                    "timeout: the cell did not finish within cell_timeout_secs = {}",
                    run.timeout.as_secs()
                ));
            }
            _ = interrupt.changed() => {
                stop(&mut w, &mut rx).await;
                return Outcome::Interrupted;
            }
        };
        let Some(msg) = msg else { break };
        match msg {
            Msg::Event(_, Event::Ready { warmup_ok }) => {
                ready += 1;
                m.warmup_ok += warmup_ok;
                if ready == n && !released {
                    released = true;
                    for stdin in w.stdins.iter_mut().flatten() {
                        // A worker that died meanwhile shows up as Exited below.
                        let _ = stdin.write_all(b"go\n").await;
                        let _ = stdin.flush().await;
                    }
                    m.setup_ms = spawn_start.elapsed().as_secs_f64() * 1000.0;
                    bar.released();
                }
            }
            Msg::Event(
                idx,
                Event::Op {
                    i,
                    ms,
                    ok,
                    read,
                    conflict,
                    err,
                },
            ) => {
                if read {
                    m.reads.attempts += 1;
                    if ok {
                        per_worker_reads[idx].record(ms);
                    } else {
                        m.reads.errors += 1;
                        m.reads.first_error = m.reads.first_error.take().or(err);
                    }
                } else {
                    m.attempts += 1;
                    if ok {
                        per_worker[idx].record(ms);
                        m.committed.push((run.workers[idx].worker_id, i));
                    } else if conflict {
                        m.conflicts += 1;
                        m.first_conflict = m.first_conflict.take().or(err);
                    } else {
                        m.other_errors += 1;
                        m.first_other_error = m.first_other_error.take().or(err);
                    }
                }
                bar.op(ok);
                crate::fault::point("cell");
            }
            Msg::Event(idx, Event::Done { elapsed_ms }) => {
                done[idx] = true;
                m.window_ms = m.window_ms.max(elapsed_ms);
            }
            Msg::Garbage(idx, line) => {
                failures.push(format!("worker {idx} printed an unexpected line: {line}"));
            }
            Msg::Exited(idx, status) => {
                exited += 1;
                w.exited[idx] = true;
                w.stdins[idx] = None;
                let ok = matches!(&status, Ok(s) if s.success());
                if !ok || !done[idx] {
                    let status = match status {
                        Ok(s) => s.to_string(),
                        Err(e) => format!("unknown status ({e})"),
                    };
                    let tail = w.tail(idx);
                    failures.push(format!(
                        "worker {idx} exited with {status} before finishing{}",
                        if tail.is_empty() {
                            String::new()
                        } else {
                            format!("; its stderr ends with:\n{tail}")
                        }
                    ));
                    if !released {
                        // It can never become ready: the cell cannot start.
                        stop(&mut w, &mut rx).await;
                        break;
                    }
                }
            }
        }
    }
    if !failures.is_empty() {
        return Outcome::Failed(failures.join("\n"));
    }
    for (w, r) in per_worker.iter().zip(&per_worker_reads) {
        m.latencies.merge(w);
        m.reads.latencies.merge(r);
    }
    Outcome::Finished(Box::new(m))
}

/// Stop every live worker: SIGTERM to its group, a grace period, then SIGKILL.
async fn stop(w: &mut Workers, rx: &mut mpsc::UnboundedReceiver<Msg>) {
    w.stdins.clear();
    w.signal_all(libc::SIGTERM);
    let grace = tokio::time::Instant::now() + GRACE;
    while w.exited.iter().any(|e| !e) {
        tokio::select! {
            msg = rx.recv() => match msg {
                Some(Msg::Exited(idx, _)) => w.exited[idx] = true,
                Some(_) => {}
                None => break,
            },
            _ = tokio::time::sleep_until(grace) => {
                w.signal_all(libc::SIGKILL);
                // Reap them, so nothing of the cell still runs when its copy is removed.
                let reaped = tokio::time::Instant::now() + GRACE;
                while w.exited.iter().any(|e| !e) {
                    match tokio::time::timeout_at(reaped, rx.recv()).await {
                        Ok(Some(Msg::Exited(idx, _))) => w.exited[idx] = true,
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => break,
                    }
                }
                break;
            }
        }
    }
}
