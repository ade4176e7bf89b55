//! The one supervisor of the processes bench starts: a cell's workers (or a launcher of
//! them) and a rest cell's servers. Each [`spawn`]ed process leads a process group of its
//! own, gets the cell's environment (the plan's variables as themselves, storage options
//! and namespace properties as one JSON value, never on a command line), has its stdout
//! read line by line and its stderr's tail kept, concurrently on tokio tasks, so none ever
//! blocks on a full pipe; its exit is known as soon as it happens. [`stop`] is the ladder:
//! stdins closed, SIGTERM to every group, a grace period, SIGKILL, then SIGKILL to
//! whatever is left in a group whose leader is gone. Every group started and not yet seen
//! gone is remembered, so that a second Ctrl-C can kill them all at once
//! ([`kill_every_group`]).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::sync::mpsc;

use crate::worker::STORAGE_ENV;
use crate::worker::protocol::ENV_PREFIX;

/// Time between the steps of the stop ladder.
pub(super) const GRACE: Duration = Duration::from_secs(3);
/// The stderr lines kept of each process, for the message of its failure.
pub(super) const STDERR_TAIL_LINES: usize = 15;

/// The process groups of every process this process started and has not seen gone yet.
static OWN_GROUPS: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

fn own_group(pid: u32) {
    OWN_GROUPS.lock().expect("groups lock").insert(pid);
}

fn disown_groups(pids: &[u32]) {
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
fn live_groups(pgids: &[u32]) -> Vec<u32> {
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
/// one JSON value ([`STORAGE_ENV`]).
fn split_env(env: &BTreeMap<String, String>) -> (Vec<(String, String)>, String) {
    let (vars, storage): (BTreeMap<_, _>, BTreeMap<_, _>) =
        (env.iter()).partition(|(k, _)| k.starts_with(ENV_PREFIX));
    let vars = (vars.into_iter())
        .map(|(k, v)| (k[ENV_PREFIX.len()..].to_string(), v.clone()))
        .collect();
    let json = serde_json::to_string(&storage).expect("storage options serialise");
    (vars, json)
}

/// How a process's output reaches its owner: each as a message on `tx`.
pub(super) struct Wiring<M> {
    pub tx: mpsc::UnboundedSender<M>,
    /// A line of its stdout (none: the line is dropped).
    pub line: Box<dyn Fn(String) -> Option<M> + Send>,
    /// A line of its stderr, besides its tail (a launcher's word of its tasks).
    pub said: Option<Box<dyn Fn(String) -> M + Send>>,
    /// Its exit, after its last stdout line and (within a second) its stderr's end.
    pub exit: Box<dyn FnOnce(std::io::Result<ExitStatus>) -> Option<M> + Send>,
}

/// One started process.
pub(super) struct Child {
    pub pid: u32,
    pub stdin: Option<ChildStdin>,
    tail: Arc<Mutex<VecDeque<String>>>,
    /// How it ended, once it has ("exit status: 1").
    ended: Arc<Mutex<Option<String>>>,
}

impl Child {
    /// The last lines it wrote to stderr.
    pub fn tail(&self) -> String {
        let lines = self.tail.lock().expect("stderr tail lock");
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// How it ended, if it has.
    pub fn ended(&self) -> Option<String> {
        self.ended.lock().expect("exit lock").clone()
    }
}

/// Keep `line` as the newest of a process's last [`STDERR_TAIL_LINES`] stderr lines.
fn keep_tail(tail: &Mutex<VecDeque<String>>, line: String) {
    let mut t = tail.lock().expect("stderr tail lock");
    if t.len() == STDERR_TAIL_LINES {
        t.pop_front();
    }
    t.push_back(line);
}

/// Start `cmd` in a process group of its own with the cell's environment `env`, its
/// output wired to its owner.
pub(super) fn spawn<M: Send + 'static>(
    mut cmd: Command,
    env: &BTreeMap<String, String>,
    wiring: Wiring<M>,
) -> std::io::Result<Child> {
    let (vars, storage_json) = split_env(env);
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
    let pid = child.id().expect("a just-spawned child has a pid");
    own_group(pid);
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let ended = Arc::new(Mutex::new(None));
    let Wiring {
        tx,
        line,
        said,
        exit,
    } = wiring;
    let stderr = child.stderr.take().expect("stderr is piped");
    let (kept, said_tx) = (tail.clone(), tx.clone());
    let stderr_read = tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(l)) = lines.next_line().await {
            if let Some(said) = &said {
                let _ = said_tx.send(said(l.clone()));
            }
            keep_tail(&kept, l);
        }
    });
    let stdout = child.stdout.take().expect("stdout is piped");
    let stdin = child.stdin.take();
    let done = ended.clone();
    tokio::spawn(async move {
        let mut reader = BufReader::new(stdout).lines();
        while let Ok(Some(l)) = reader.next_line().await {
            if let Some(msg) = line(l)
                && tx.send(msg).is_err()
            {
                break;
            }
        }
        let status = child.wait().await;
        // Its last words first: the exit is reported with the end of its stderr, which
        // its reader may not have taken in yet (a grandchild holding the pipe open cannot
        // hold the exit up for long).
        let _ = tokio::time::timeout(Duration::from_secs(1), stderr_read).await;
        *done.lock().expect("exit lock") = Some(match &status {
            Ok(s) => s.to_string(),
            Err(e) => format!("not waited for: {e}"),
        });
        if let Some(msg) = exit(status) {
            let _ = tx.send(msg);
        }
    });
    Ok(Child {
        pid,
        stdin,
        tail,
        ended,
    })
}

/// Whether any of `children` still runs.
fn running(children: &[Child]) -> bool {
    children.iter().any(|c| c.ended().is_none())
}

/// Wait until none of `children` runs, or `until`; whether none does.
async fn gone(children: &[Child], until: tokio::time::Instant) -> bool {
    while running(children) {
        if tokio::time::Instant::now() >= until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    true
}

/// Stop `children`: their stdins closed, and `on_their_own` for them to end by themselves
/// (a server ends when its stdin closes); then SIGTERM to every group still running, a
/// grace period, SIGKILL, another, and SIGKILL to whatever is left in their groups until
/// nothing is or a last grace period ends. Returns the groups still alive then (none:
/// they are forgotten).
pub(super) async fn stop(children: &mut [Child], on_their_own: Duration) -> Vec<u32> {
    let now = tokio::time::Instant::now;
    for c in children.iter_mut() {
        c.stdin = None;
    }
    if !gone(children, now() + on_their_own).await {
        signal(children, libc::SIGTERM);
        if !gone(children, now() + GRACE).await {
            signal(children, libc::SIGKILL);
            gone(children, now() + GRACE).await;
        }
    }
    let pgids: Vec<u32> = children.iter().map(|c| c.pid).collect();
    let until = now() + GRACE;
    loop {
        let live = live_groups(&pgids);
        if live.is_empty() {
            disown_groups(&pgids);
            return live;
        }
        if now() >= until {
            return live;
        }
        for &pgid in &live {
            signal_group(pgid, libc::SIGKILL);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Send `sig` to the group of every child still running.
pub(super) fn signal(children: &[Child], sig: libc::c_int) {
    for c in children.iter().filter(|c| c.ended().is_none()) {
        signal_group(c.pid, sig);
    }
}

/// SIGKILL the groups of `children` at once (a set dropped without [`stop`]); their
/// readers reap them.
pub(super) fn kill(children: &[Child]) {
    for c in children {
        signal_group(c.pid, libc::SIGKILL);
    }
}
