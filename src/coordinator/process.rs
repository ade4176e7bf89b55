//! A cell's worker processes: each in its own process group, its stdout read line by line
//! and its stderr's tail kept, all concurrently, so no worker ever blocks on a full pipe.
//! Stopping is SIGTERM to every group, a grace period, then SIGKILL.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::sync::mpsc;

use crate::worker::{Event, STORAGE_ENV, WorkerArgs};

/// Time between SIGTERM and SIGKILL when stopping a cell's workers.
const GRACE: Duration = Duration::from_secs(3);
const STDERR_TAIL_LINES: usize = 15;

/// What the pipe readers report, by worker index.
pub(super) enum Msg {
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

/// The live workers of a cell and the channel their readers report on.
pub(super) struct Workers {
    pids: Vec<u32>,
    stdins: Vec<Option<ChildStdin>>,
    stderr: Vec<Arc<Mutex<VecDeque<String>>>>,
    exited: Vec<bool>,
    tx: Option<mpsc::UnboundedSender<Msg>>,
    pub(super) rx: mpsc::UnboundedReceiver<Msg>,
}

impl Workers {
    pub(super) fn new() -> Workers {
        let (tx, rx) = mpsc::unbounded_channel();
        Workers {
            pids: Vec::new(),
            stdins: Vec::new(),
            stderr: Vec::new(),
            exited: Vec::new(),
            tx: Some(tx),
            rx,
        }
    }

    /// Start one worker; its index is the number started before it.
    pub(super) fn spawn(
        &mut self,
        exe: &Path,
        args: &WorkerArgs,
        storage: &BTreeMap<String, String>,
    ) -> std::io::Result<()> {
        let idx = self.pids.len();
        let storage_json = serde_json::to_string(storage).expect("storage options serialise");
        let mut child = Command::new(exe)
            .args(args.to_args())
            .env(STORAGE_ENV, storage_json)
            .env_remove(crate::fault::ENV)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()?;
        self.pids
            .push(child.id().expect("a just-spawned child has a pid"));
        self.stdins.push(child.stdin.take());
        self.exited.push(false);
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        self.stderr.push(tail.clone());
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
        let tx = self.tx.clone().expect("spawn before all_spawned");
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
        Ok(())
    }

    /// No more workers: the channel closes when the last reader ends.
    pub(super) fn all_spawned(&mut self) {
        self.tx = None;
    }

    pub(super) fn count(&self) -> usize {
        self.pids.len()
    }

    /// Release every worker at once (a worker that died meanwhile shows up as exited).
    pub(super) async fn release(&mut self) {
        for stdin in self.stdins.iter_mut().flatten() {
            let _ = stdin.write_all(b"go\n").await;
            let _ = stdin.flush().await;
        }
    }

    /// Record that worker `idx` exited.
    pub(super) fn mark_exited(&mut self, idx: usize) {
        self.exited[idx] = true;
        self.stdins[idx] = None;
    }

    /// The last lines worker `idx` wrote to stderr.
    pub(super) fn tail(&self, idx: usize) -> String {
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

    fn running(&self) -> bool {
        self.exited.iter().any(|e| !e)
    }

    /// Wait until `until` for exits; false if some worker is still running then.
    async fn reap(&mut self, until: tokio::time::Instant) -> bool {
        while self.running() {
            match tokio::time::timeout_at(until, self.rx.recv()).await {
                Ok(Some(Msg::Exited(idx, _))) => self.exited[idx] = true,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        !self.running()
    }

    /// Stop every live worker: SIGTERM to its group, a grace period, then SIGKILL, and
    /// reap them, so nothing of the cell still runs when its copy is removed.
    pub(super) async fn stop(&mut self) {
        self.stdins.clear();
        self.signal_all(libc::SIGTERM);
        if !self.reap(tokio::time::Instant::now() + GRACE).await {
            self.signal_all(libc::SIGKILL);
            self.reap(tokio::time::Instant::now() + GRACE).await;
        }
    }
}
