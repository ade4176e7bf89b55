//! A cell's worker processes: each worker a child, or all of them tasks of one launcher
//! (`run.launcher`, e.g. srun). Every process in its own process group, its stdout read
//! line by line and its stderr's tail kept, all concurrently, so no worker ever blocks on a
//! full pipe. Stopping is SIGTERM to every group, a grace period, then SIGKILL, then
//! SIGKILL to whatever is left in a group whose leader is gone; a launcher passes the
//! signals on to its tasks (srun does, on every node).

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::sync::mpsc;

use crate::worker::protocol::ENV_PREFIX;
use crate::worker::protocol::{Command as Order, Line};
use crate::worker::{Event, STORAGE_ENV, WorkerArgs};

/// Time between SIGTERM and SIGKILL when stopping a cell's workers.
pub(super) const GRACE: Duration = Duration::from_secs(3);
pub(super) const STDERR_TAIL_LINES: usize = 15;

/// What the pipe readers report: events by worker index, a launcher's stderr lines and
/// exits by process index.
pub(super) enum Msg {
    Event(usize, Box<Event>),
    Garbage(usize, String),
    /// A line a launcher wrote to stderr (e.g. srun's "job 7 queued and waiting for
    /// resources"), as it comes.
    Said(usize, String),
    Exited(usize, std::io::Result<ExitStatus>),
}

/// The process groups of every worker, launcher and server this process started and has
/// not seen gone yet: what [`kill_every_group`] kills when a second Ctrl-C ends bench at
/// once.
static OWN_GROUPS: Mutex<std::collections::BTreeSet<u32>> =
    Mutex::new(std::collections::BTreeSet::new());

/// Remember a started process's group (it leads its own).
pub(super) fn own_group(pid: u32) {
    OWN_GROUPS.lock().expect("groups lock").insert(pid);
}

/// Forget groups that are gone (cleared, their processes reaped).
pub(super) fn disown_groups(pids: &[u32]) {
    let mut g = OWN_GROUPS.lock().expect("groups lock");
    for p in pids {
        g.remove(p);
    }
}

/// SIGKILL every process group this process started that may still run (bench exiting at
/// once: nothing it started may outlive it).
pub fn kill_every_group() {
    let pids: Vec<u32> = OWN_GROUPS
        .lock()
        .expect("groups lock")
        .iter()
        .copied()
        .collect();
    for pid in live_groups(&pids) {
        signal_group(pid, libc::SIGKILL);
    }
}

/// Send `sig` to the process group led by `pid` (every process leads its own group).
pub(super) fn signal_group(pid: u32, sig: libc::c_int) {
    // SAFETY: kill(2) has no memory-safety preconditions; a stale group id only yields ESRCH.
    unsafe {
        libc::kill(-(pid as libc::pid_t), sig);
    }
}

/// The groups among `pgids` that still hold a live process (a zombie counts as gone): a
/// group outlives its leader while a descendant that ignored SIGTERM, or that a SIGKILL
/// has not finished yet, is still there.
pub(super) fn live_groups(pgids: &[u32]) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut live = Vec::new();
    for e in entries.flatten() {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // After the command name: state, ppid, pgrp.
        let mut fields = stat.rsplit_once(") ").map(|(_, r)| r.split_whitespace());
        let Some(f) = fields.as_mut() else { continue };
        let (state, _, pgrp) = (f.next(), f.next(), f.next());
        if let (Some(state), Some(Ok(pgrp))) = (state, pgrp.map(str::parse::<u32>))
            && state != "Z"
            && pgids.contains(&pgrp)
            && !live.contains(&pgrp)
        {
            live.push(pgrp);
        }
    }
    live
}

/// What a cell's processes get in their environment, apart: the plan's variables (under
/// [`ENV_PREFIX`], set as themselves), and the storage options and namespace properties as
/// one JSON value ([`STORAGE_ENV`]), never on a command line.
pub(super) fn split_env(env: &BTreeMap<String, String>) -> (Vec<(String, String)>, String) {
    let (vars, storage): (BTreeMap<_, _>, BTreeMap<_, _>) =
        (env.iter()).partition(|(k, _)| k.starts_with(ENV_PREFIX));
    let vars = (vars.into_iter())
        .map(|(k, v)| (k[ENV_PREFIX.len()..].to_string(), v.clone()))
        .collect();
    let json = serde_json::to_string(&storage).expect("storage options serialise");
    (vars, json)
}

/// SIGKILL whatever still runs in the process groups `pgids` (their leaders gone, or not)
/// until nothing in them does, or `until`; the groups still alive then.
pub(super) async fn clear_groups(pgids: &[u32], until: tokio::time::Instant) -> Vec<u32> {
    loop {
        let live = live_groups(pgids);
        if live.is_empty() || tokio::time::Instant::now() >= until {
            return live;
        }
        for &pgid in &live {
            signal_group(pgid, libc::SIGKILL);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Keep `line` as the newest of a process's last [`STDERR_TAIL_LINES`] stderr lines.
pub(super) fn keep_tail(tail: &Mutex<VecDeque<String>>, line: String) {
    let mut t = tail.lock().expect("stderr tail lock");
    if t.len() == STDERR_TAIL_LINES {
        t.pop_front();
    }
    t.push_back(line);
}

/// One started process: a worker, or a launcher running all of a cell's workers.
struct Proc {
    pid: u32,
    stdin: Option<ChildStdin>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    exited: bool,
    /// The workers it runs (indices).
    workers: Vec<usize>,
}

/// The live processes of a cell and the channel their readers report on.
pub(super) struct Workers {
    procs: Vec<Proc>,
    tx: Option<mpsc::UnboundedSender<Msg>>,
    pub(super) rx: mpsc::UnboundedReceiver<Msg>,
}

/// How a process's stdout lines map to workers.
#[derive(Clone, Copy)]
enum Lines {
    /// One worker: every line is its (whatever id it carries).
    Worker(usize),
    /// A launcher of `n` workers, the first of which has index `first`: each line names its
    /// worker (`w`, its rank), maybe after a label.
    Launcher { first: usize, n: usize },
}

impl Workers {
    pub(super) fn new() -> Workers {
        let (tx, rx) = mpsc::unbounded_channel();
        Workers {
            procs: Vec::new(),
            tx: Some(tx),
            rx,
        }
    }

    /// Start one worker; its index is the number of workers started before it.
    pub(super) fn spawn(
        &mut self,
        exe: &Path,
        args: &WorkerArgs,
        storage: &BTreeMap<String, String>,
    ) -> std::io::Result<()> {
        let idx = self.worker_count();
        let mut cmd = Command::new(exe);
        cmd.args(args.to_args());
        self.start(cmd, storage, vec![idx], Lines::Worker(idx))
    }

    /// Start `n` workers through a launcher `command` (a shell command line, run by
    /// `sh -c`), which runs the worker's command line `args` as `n` tasks; each task takes
    /// its id from its rank (`--rank-from-env`). Storage options travel in the environment,
    /// which launchers pass on to their tasks, never on a command line.
    pub(super) fn spawn_launcher(
        &mut self,
        command: &str,
        exe: &Path,
        args: &WorkerArgs,
        n: usize,
        storage: &BTreeMap<String, String>,
    ) -> std::io::Result<()> {
        let first = self.worker_count();
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("exec {command} \"$@\""))
            .arg("bench-launcher")
            .arg(exe)
            .args(args.to_args());
        self.start(
            cmd,
            storage,
            (first..first + n).collect(),
            Lines::Launcher { first, n },
        )
    }

    fn start(
        &mut self,
        mut cmd: Command,
        storage: &BTreeMap<String, String>,
        workers: Vec<usize>,
        lines: Lines,
    ) -> std::io::Result<()> {
        let proc_idx = self.procs.len();
        let (vars, storage_json) = split_env(storage);
        let mut child = cmd
            .envs(vars)
            .env(STORAGE_ENV, storage_json)
            .env_remove(crate::fault::ENV)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()?;
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let pid = child.id().expect("a just-spawned child has a pid");
        own_group(pid);
        self.procs.push(Proc {
            pid,
            stdin: child.stdin.take(),
            stderr: tail.clone(),
            exited: false,
            workers,
        });
        let stderr = child.stderr.take().expect("stderr is piped");
        // A launcher's stderr is what it says of its tasks (queued, allocated, failed): the
        // display shows it as it comes.
        let said = match lines {
            Lines::Launcher { .. } => self.tx.clone(),
            Lines::Worker(_) => None,
        };
        let stderr_read = tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(tx) = &said {
                    let _ = tx.send(Msg::Said(proc_idx, line.clone()));
                }
                keep_tail(&tail, line);
            }
        });
        let stdout = child.stdout.take().expect("stdout is piped");
        let tx = self.tx.clone().expect("spawn before all_spawned");
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                let msg = match (Line::parse(&line), lines) {
                    (Some(l), Lines::Worker(idx)) => Msg::Event(idx, Box::new(l.event)),
                    (Some(Line { w: Some(w), event }), Lines::Launcher { first, n })
                        if (w as usize) < n =>
                    {
                        Msg::Event(first + w as usize, Box::new(event))
                    }
                    (_, Lines::Worker(idx)) => Msg::Garbage(idx, line),
                    (_, Lines::Launcher { first, .. }) => Msg::Garbage(first, line),
                };
                if tx.send(msg).is_err() {
                    break;
                }
            }
            let status = child.wait().await;
            // Its last words first: the exit is reported with the end of its stderr, which
            // its reader may not have taken in yet (a grandchild holding the pipe open
            // cannot hold the exit up for long).
            let _ = tokio::time::timeout(Duration::from_secs(1), stderr_read).await;
            let _ = tx.send(Msg::Exited(proc_idx, status));
        });
        Ok(())
    }

    /// No more workers: the channel closes when the last reader ends.
    pub(super) fn all_spawned(&mut self) {
        self.tx = None;
    }

    /// Workers started so far.
    pub(super) fn worker_count(&self) -> usize {
        self.procs.iter().map(|p| p.workers.len()).sum()
    }

    /// Processes started so far.
    pub(super) fn proc_count(&self) -> usize {
        self.procs.len()
    }

    /// Send a command to processes `procs` (a launcher passes it on to all its tasks); a
    /// process that died meanwhile shows up as exited.
    pub(super) async fn send(&mut self, procs: std::ops::Range<usize>, cmd: Order) {
        let line = format!("{}\n", cmd.word());
        for stdin in self.procs[procs]
            .iter_mut()
            .filter_map(|p| p.stdin.as_mut())
        {
            let _ = stdin.write_all(line.as_bytes()).await;
            let _ = stdin.flush().await;
        }
    }

    /// Record that process `idx` exited; returns the workers it ran.
    pub(super) fn mark_exited(&mut self, idx: usize) -> Vec<usize> {
        let p = &mut self.procs[idx];
        p.exited = true;
        p.stdin = None;
        p.workers.clone()
    }

    /// The last lines process `idx` wrote to stderr.
    pub(super) fn tail(&self, idx: usize) -> String {
        let lines = self.procs[idx].stderr.lock().expect("stderr tail lock");
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    fn signal_all(&self, sig: libc::c_int) {
        for p in self.procs.iter().filter(|p| !p.exited) {
            signal_group(p.pid, sig);
        }
    }

    fn running(&self) -> bool {
        self.procs.iter().any(|p| !p.exited)
    }

    /// Wait until `until` for exits; false if some worker is still running then.
    async fn reap(&mut self, until: tokio::time::Instant) -> bool {
        while self.running() {
            match tokio::time::timeout_at(until, self.rx.recv()).await {
                Ok(Some(Msg::Exited(idx, _))) => self.procs[idx].exited = true,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        !self.running()
    }

    /// Stop every live worker: SIGTERM to its group, a grace period, then SIGKILL, and
    /// reap them, then clear what is left in their groups, so nothing of the cell still
    /// runs when its copy is removed.
    pub(super) async fn stop(&mut self) {
        for p in &mut self.procs {
            p.stdin = None;
        }
        self.signal_all(libc::SIGTERM);
        if !self.reap(tokio::time::Instant::now() + GRACE).await {
            self.signal_all(libc::SIGKILL);
            self.reap(tokio::time::Instant::now() + GRACE).await;
        }
        self.clear_groups(tokio::time::Instant::now() + GRACE).await;
    }

    /// SIGKILL what is left in the workers' groups once their leaders are gone.
    async fn clear_groups(&self, until: tokio::time::Instant) {
        let pgids: Vec<u32> = self.procs.iter().map(|p| p.pid).collect();
        if clear_groups(&pgids, until).await.is_empty() {
            disown_groups(&pgids);
        }
    }
}
