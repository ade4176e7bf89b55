//! A cell's worker processes: each worker a child, or all of them tasks of one launcher
//! (`run.launcher`, e.g. srun), started and stopped by the [`supervisor`]; here, how their
//! stdout lines map to workers, and the commands sent to them. A launcher passes the
//! stop ladder's signals on to its tasks (srun does, on every node).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio::sync::mpsc;

use super::supervisor::{self, Child, Wiring};
use crate::worker::protocol::{Command as Order, Line};
use crate::worker::{Event, WorkerArgs};

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

/// One started process (a worker, or a launcher running all of a cell's workers): the
/// workers it runs (indices).
struct Proc {
    workers: Vec<usize>,
}

/// The live processes of a cell and the channel their readers report on.
pub(super) struct Workers {
    children: Vec<Child>,
    procs: Vec<Proc>,
    /// Each worker's file of the operations it began ([`crate::worker::INVOKED_ENV`]), by worker
    /// index: for the workers started here (a launcher's tasks may run elsewhere: none).
    invoked: Vec<Option<tempfile::TempPath>>,
    tx: Option<mpsc::UnboundedSender<Msg>>,
    pub(super) rx: mpsc::UnboundedReceiver<Msg>,
}

/// What the name of a worker's invoke file begins with, before its coordinator's pid.
const INVOKED_PREFIX: &str = "bench-invoked-";

/// Remove from `dir` the invoke files of coordinators no longer running (a coordinator
/// killed before it could remove its own); the number removed. Those of a live coordinator,
/// this one's included, are left.
fn remove_orphans(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let orphan = |name: &str| {
        let pid = name.strip_prefix(INVOKED_PREFIX)?.split_once('-')?.0;
        let pid: libc::pid_t = pid.parse().ok()?;
        // SAFETY: kill(2) with signal 0 sends nothing; it only asks whether `pid` exists.
        let gone = unsafe { libc::kill(pid, 0) } == -1
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        gone.then_some(())
    };
    (entries.flatten())
        .filter(|e| e.file_name().to_str().and_then(orphan).is_some())
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
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
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| {
            remove_orphans(&std::env::temp_dir());
        });
        let (tx, rx) = mpsc::unbounded_channel();
        Workers {
            children: Vec::new(),
            procs: Vec::new(),
            invoked: Vec::new(),
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
        cmd.envs(crate::host_clock::wall_step(args.worker_id)?);
        let invoked = tempfile::Builder::new()
            .prefix(&format!("{INVOKED_PREFIX}{}-", std::process::id()))
            .tempfile()?
            .into_temp_path();
        cmd.env(crate::worker::INVOKED_ENV, &invoked);
        self.invoked.resize_with(idx, || None);
        self.invoked.push(Some(invoked));
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
        cmd: Command,
        storage: &BTreeMap<String, String>,
        workers: Vec<usize>,
        lines: Lines,
    ) -> std::io::Result<()> {
        let proc_idx = self.procs.len();
        let wiring = Wiring {
            tx: self.tx.clone().expect("spawn before all_spawned"),
            line: Box::new(move |line: String| {
                Some(match (Line::parse(&line), lines) {
                    (Some(l), Lines::Worker(idx)) => Msg::Event(idx, Box::new(l.event)),
                    (Some(Line { w: Some(w), event }), Lines::Launcher { first, n })
                        if (w as usize) < n =>
                    {
                        Msg::Event(first + w as usize, Box::new(event))
                    }
                    (_, Lines::Worker(idx)) => Msg::Garbage(idx, line),
                    (_, Lines::Launcher { first, .. }) => Msg::Garbage(first, line),
                })
            }),
            // A launcher's stderr is what it says of its tasks (queued, allocated, failed):
            // the display shows it as it comes.
            said: match lines {
                Lines::Launcher { .. } => Some(Box::new(move |l| Msg::Said(proc_idx, l))),
                Lines::Worker(_) => None,
            },
            exit: Box::new(move |status| Some(Msg::Exited(proc_idx, status))),
        };
        self.children.push(supervisor::spawn(cmd, storage, wiring)?);
        self.procs.push(Proc { workers });
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

    /// The process that runs worker `idx`.
    pub(super) fn proc_of(&self, idx: usize) -> usize {
        (self.procs.iter())
            .position(|p| p.workers.contains(&idx))
            .unwrap_or(0)
    }

    /// Processes started so far.
    pub(super) fn proc_count(&self) -> usize {
        self.procs.len()
    }

    /// Send a command to processes `procs` (a launcher passes it on to all its tasks); a
    /// process that died meanwhile shows up as exited.
    pub(super) async fn send(&mut self, procs: std::ops::Range<usize>, cmd: Order) {
        let line = format!("{}\n", cmd.line());
        for stdin in self.children[procs]
            .iter_mut()
            .filter_map(|c| c.stdin.as_mut())
        {
            let _ = stdin.write_all(line.as_bytes()).await;
            let _ = stdin.flush().await;
        }
    }

    /// Record that process `idx` exited; returns the workers it ran.
    pub(super) fn mark_exited(&mut self, idx: usize) -> Vec<usize> {
        self.children[idx].stdin = None;
        self.procs[idx].workers.clone()
    }

    /// The operations worker `idx` began, as it wrote them before each
    /// ([`crate::worker::INVOKED_ENV`]): each as it would end were the worker killed with it
    /// in flight. A line cut short by the worker's death is left out (its operation had not
    /// begun).
    pub(super) fn invoked(&self, idx: usize) -> Vec<bench_core::protocol::OpReport> {
        let Some(Some(path)) = self.invoked.get(idx) else {
            return Vec::new();
        };
        let text = std::fs::read_to_string(path).unwrap_or_default();
        (text.lines())
            .filter_map(|l| match serde_json::from_str(l) {
                Ok(Event::Op(report)) => Some(*report),
                _ => None,
            })
            .collect()
    }

    /// The last lines process `idx` wrote to stderr.
    pub(super) fn tail(&self, idx: usize) -> String {
        self.children[idx].tail()
    }

    /// Stop every live worker by the supervisor's ladder (SIGTERM at once), so nothing of
    /// the cell still runs when its copy is removed.
    pub(super) async fn stop(&mut self) {
        supervisor::stop(&mut self.children, Duration::ZERO).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The invoke files of a coordinator that is gone are removed; a live one's are left,
    /// and so is every other file.
    #[test]
    fn invoke_files_of_a_coordinator_gone_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        // A pid no process has: a child that has exited and been reaped.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let names = [
            format!("{INVOKED_PREFIX}{gone}-abc"),
            format!("{INVOKED_PREFIX}{}-def", std::process::id()),
            format!("{INVOKED_PREFIX}notapid"),
            "other-file".to_string(),
        ];
        for n in &names {
            std::fs::write(dir.path().join(n), "").unwrap();
        }
        assert_eq!(remove_orphans(dir.path()), 1);
        let left: Vec<bool> = names.iter().map(|n| dir.path().join(n).exists()).collect();
        assert_eq!(left, [false, true, true, true]);
    }
}
