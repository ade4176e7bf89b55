//! Runs one cell: spawns its worker processes ([`process`], by the one [`supervisor`] of
//! bench's child processes), waits until all are ready,
//! releases them at once, folds their events into what the cell measured (the core's
//! `fold`, pure), paces pairs of arms (the core's `pace`, pure), and enforces the cell
//! timeout and interrupts. Progress is reported through the narrow [`Observer`] interface.

mod process;
pub mod servers;
mod supervisor;

pub use supervisor::kill_every_group;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::fold::{Action, Fold};
use crate::host_clock::monotonic_us;
use crate::measured::Measured;
pub use crate::observer::Observer;
use crate::pace;
pub use crate::pace::{ArmUnits, Pace, PairingKind};
use crate::worker::protocol::{Command, PROTOCOL_VERSION, Versions};
use crate::worker::{Event, WorkerArgs};
use process::{Msg, Workers};

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
    /// A concurrent cell bounded by its commits: once its workers have this many successful
    /// ones together, each is told to `end` (its operation in flight finishes and counts).
    pub bound: Option<u64>,
    /// What every worker must report being (from [`handshake`]); `None` checks nothing.
    pub versions: Option<&'a Versions>,
    /// Start the workers as the tasks of this command (a launcher such as srun, with the
    /// task count filled in) instead of as children; they take their ids from their ranks.
    pub launcher: Option<String>,
    /// Write the run's history here as its reports come (a cell that keeps one).
    pub journal: Option<bench_core::history::journal::Target>,
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

/// The arms of a run: whose workers and processes are whose, and what each measured.
struct Arms {
    folds: Vec<Fold>,
    /// The global indices of each arm's workers (an arm started second has the higher).
    workers: Vec<std::ops::Range<usize>>,
    /// Each arm's processes (a launcher is one process for all its workers).
    procs: Vec<std::ops::Range<usize>>,
    launcher: Vec<bool>,
    ready: Vec<bool>,
}

impl Arms {
    /// The arm of worker `idx` and its index within the arm.
    fn of_worker(&self, idx: usize) -> (usize, usize) {
        let arm = self
            .workers
            .iter()
            .position(|r| r.contains(&idx))
            .unwrap_or(0);
        (arm, idx.saturating_sub(self.workers[arm].start))
    }

    fn of_proc(&self, idx: usize) -> usize {
        self.procs
            .iter()
            .position(|r| r.contains(&idx))
            .unwrap_or(0)
    }

    /// Process `idx` exited: its workers are done or lost (a launcher's, all at once).
    fn exited(
        &mut self,
        w: &mut Workers,
        idx: usize,
        status: std::io::Result<std::process::ExitStatus>,
    ) -> (usize, Action) {
        let arm = self.of_proc(idx);
        let success = matches!(&status, Ok(s) if s.success());
        let signal = (status.as_ref().ok()).and_then(std::os::unix::process::ExitStatusExt::signal);
        let status = match status {
            Ok(s) => s.to_string(),
            Err(e) => format!("unknown status ({e})"),
        };
        let tail = w.tail(idx);
        let workers = w.mark_exited(idx);
        let fold = &mut self.folds[arm];
        if self.launcher[arm] {
            return (arm, fold.launcher_exited(success, status, tail));
        }
        let first = self.workers[arm].start;
        let action = workers
            .into_iter()
            .fold(Action::Continue, |action, worker| {
                let (status, tail) = (status.clone(), tail.clone());
                let said = match signal {
                    // A crash is a fault of the code under test: the cell fails, naming it.
                    Some(s) if crashed(s) => {
                        let status = format!("{status}, a crash of the code under test");
                        fold.exited(worker - first, false, status, tail)
                    }
                    // Killed from outside: what it began and never reported is unknown.
                    Some(_) => {
                        fold.killed_from_outside(worker - first, w.invoked(worker), status, tail)
                    }
                    None => fold.exited(worker - first, success, status, tail),
                };
                match said {
                    Action::Abort => Action::Abort,
                    _ => action,
                }
            });
        (arm, action)
    }
}

/// Whether a worker ended by `signal` crashed (a fault of lance or of bench: a bad access,
/// an abort, a bad instruction) rather than being killed from outside (SIGKILL from an
/// operator or the out-of-memory killer, SIGTERM, SIGINT).
pub fn crashed(signal: i32) -> bool {
    [
        libc::SIGSEGV,
        libc::SIGABRT,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGSYS,
        libc::SIGTRAP,
    ]
    .contains(&signal)
}

/// Start one arm's workers: as children, or as the tasks of its launcher.
fn start(w: &mut Workers, run: &CellRun<'_>, paced: bool) -> Result<(), String> {
    let paced_args = |a: &WorkerArgs| WorkerArgs { paced, ..a.clone() };
    match (&run.launcher, run.workers.first()) {
        (Some(command), Some(first)) => {
            // Ids are the ranks 0..n: one command line for all, the rank added by each task.
            let args = WorkerArgs {
                worker_id: 0,
                rank_from_env: true,
                ..paced_args(first)
            };
            w.spawn_launcher(command, run.exe, &args, run.workers.len(), run.storage)
                .map_err(|e| format!("cannot start the launcher `{command}`: {e}"))
        }
        _ => run.workers.iter().enumerate().try_for_each(|(idx, args)| {
            w.spawn(run.exe, &paced_args(args), run.storage)
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
    let timeout = run.timeout;
    match drive(vec![run], (None, 0), timeout, observer, interrupt).await {
        Driven::Finished(mut m, _) => Outcome::Finished(Box::new(m.remove(0))),
        Driven::Failed(reason) => Outcome::Failed(reason),
        Driven::Interrupted => Outcome::Interrupted,
    }
}

/// What a paired run of a cell measured: each arm's figures, and the units of its pairs.
#[derive(Debug)]
pub enum PairOutcome {
    Finished {
        measured: Box<[Measured; 2]>,
        units: [ArmUnits; 2],
        pairing: PairingKind,
    },
    Failed(String),
    Interrupted,
}

/// Run both arms of a cell at once, each on its own copy, paced by `pace` (lockstep,
/// slices) or side by side (duet); arm `first` (0 for A) is started first, and leads where
/// the arms take turns. A failure of either arm fails the pair: both arms' workers are
/// stopped and the reason names the arm. `timeout` covers the whole pair.
pub async fn run_pair(
    runs: [CellRun<'_>; 2],
    (pace, first): (Pace, usize),
    timeout: Duration,
    observer: &dyn Observer,
    interrupt: &mut watch::Receiver<bool>,
) -> PairOutcome {
    let pairing = pace.kind();
    match drive(
        runs.into(),
        (Some(pace), first),
        timeout,
        observer,
        interrupt,
    )
    .await
    {
        Driven::Finished(m, units) => {
            let two: [Measured; 2] = m.try_into().expect("two arms, two results");
            PairOutcome::Finished {
                measured: Box::new(two),
                units: units.expect("a paired run has units"),
                pairing,
            }
        }
        Driven::Failed(reason) => PairOutcome::Failed(reason),
        Driven::Interrupted => PairOutcome::Interrupted,
    }
}

enum Driven {
    Finished(Vec<Measured>, Option<[ArmUnits; 2]>),
    Failed(String),
    Interrupted,
}

/// The driver of one or two arms: spawn, release when every worker of every arm is ready,
/// pace (when paired), collect, and enforce the timeout and interrupts.
async fn drive(
    runs: Vec<CellRun<'_>>,
    pace: (Option<Pace>, usize),
    timeout: Duration,
    observer: &dyn Observer,
    interrupt: &mut watch::Receiver<bool>,
) -> Driven {
    let mut d = match Driver::spawn(&runs, pace, observer).await {
        Ok(d) => d,
        Err(failed) => return failed,
    };
    // The plan bounds the timeout; saturate rather than overflow all the same.
    let now = tokio::time::Instant::now();
    let far = now + Duration::from_secs(86_400 * 365);
    let deadline = now.checked_add(timeout).unwrap_or(far);
    while d.exited < d.w.proc_count() {
        let tick = d.pace.as_ref().and_then(Pace::next_tick);
        let msg = tokio::select! {
            msg = d.w.rx.recv() => msg,
            _ = tokio::time::sleep_until(deadline) => {
                d.w.stop().await;
                return Driven::Failed(d.timed_out(timeout));
            }
            _ = interrupt.changed() => {
                d.w.stop().await;
                return Driven::Interrupted;
            }
            _ = tokio::time::sleep_until(tick.map_or(far, tokio::time::Instant::from_std)),
                if tick.is_some() => {
                let sends = d.pace.as_mut().map(|p| p.tick(Instant::now())).unwrap_or_default();
                send(&mut d.w, &d.arms, sends).await;
                continue;
            }
        };
        let Some(msg) = msg else { break };
        let (arm, action) = d.message(msg).await;
        d.check_bound(arm).await;
        // Paired, a lost worker stops both arms: the pair can never complete.
        let action = if d.paired && d.arms.folds[arm].failed() {
            Action::Abort
        } else {
            action
        };
        if !d.act(arm, action).await {
            break;
        }
    }
    d.finish()
}

/// One or two arms' workers being driven.
struct Driver<'o> {
    w: Workers,
    arms: Arms,
    pace: Option<Pace>,
    observer: &'o dyn Observer,
    paired: bool,
    paced: bool,
    bounds: Vec<Option<u64>>,
    /// Arms told to end at their bound.
    ended: Vec<bool>,
    exited: usize,
    spawned_at: Instant,
    /// Until release, what a launcher last said of its tasks (a queue, an allocation).
    waiting: Option<String>,
    /// When `go` was sent, on this host's monotonic clock (µs).
    go_sent_us: Option<u64>,
}

impl<'o> Driver<'o> {
    /// Start every arm's workers; a failure to start stops those started and says why.
    async fn spawn(
        runs: &[CellRun<'_>],
        (pace, first): (Option<Pace>, usize),
        observer: &'o dyn Observer,
    ) -> Result<Driver<'o>, Driven> {
        let paired = runs.len() > 1;
        let paced = pace.as_ref().is_some_and(Pace::paced);
        let mut w = Workers::new();
        let spawned_at = Instant::now();
        let mut arms = Arms {
            folds: Vec::new(),
            workers: vec![0..0; runs.len()],
            procs: vec![0..0; runs.len()],
            launcher: runs.iter().map(|r| r.launcher.is_some()).collect(),
            ready: vec![false; runs.len()],
        };
        for run in runs {
            let runs = run.workers.iter().map(crate::fold::Runs::of).collect();
            let mut fold = Fold::new(runs, run.versions.cloned());
            if let Some(target) = &run.journal {
                let clients = run.workers.iter().map(|w| w.worker_id);
                let journal = bench_core::history::journal::Journal::new(target.clone(), clients);
                fold.journal(Box::new(journal));
            }
            // A worker killed from outside ends itself, not the cell, where no pairing
            // waits on its operations.
            if !paired && !paced {
                fold.tolerate_kills();
            }
            arms.folds.push(fold);
        }
        // Paired, the arm that goes first this run is started first (and released first):
        // whatever the order of starting gives a process, each arm has it in turn.
        let order: Vec<usize> = (0..runs.len()).map(|k| (k + first) % runs.len()).collect();
        for arm in order {
            let (w0, p0) = (w.worker_count(), w.proc_count());
            let started = start(&mut w, &runs[arm], paced);
            arms.workers[arm] = w0..w.worker_count();
            arms.procs[arm] = p0..w.proc_count();
            if let Err(e) = started {
                w.all_spawned();
                w.stop().await;
                return Err(Driven::Failed(name_arm(paired, arm, e)));
            }
        }
        w.all_spawned();
        Ok(Driver {
            w,
            arms,
            pace,
            observer,
            paired,
            paced,
            bounds: runs.iter().map(|r| r.bound).collect(),
            ended: vec![false; runs.len()],
            exited: 0,
            spawned_at,
            waiting: None,
            go_sent_us: None,
        })
    }

    /// Every arm's workers were ready, and were released.
    fn released(&self) -> bool {
        self.arms.ready.iter().all(|&r| r)
    }

    /// Why the cell timed out: before release, what the launcher last said.
    fn timed_out(&mut self, timeout: Duration) -> String {
        let limit = if self.paired {
            " (both arms; twice cell_timeout_secs)"
        } else {
            " (cell_timeout_secs)"
        };
        match (self.released(), self.waiting.take()) {
            (false, Some(said)) => format!(
                "timeout: the cell's workers had not started within {}s{limit}: the launcher \
                 still waited ({said}); give its tasks the CPUs they need (e.g. --overcommit \
                 for srun, or more nodes), or a longer cell_timeout_secs",
                timeout.as_secs()
            ),
            _ => format!(
                "timeout: the cell did not finish within {}s{limit}",
                timeout.as_secs()
            ),
        }
    }

    /// Fold a message of a worker or process into its arm: the arm and what to do next.
    async fn message(&mut self, msg: Msg) -> (usize, Action) {
        match msg {
            Msg::Event(idx, event) => self.event(idx, *event).await,
            Msg::Garbage(idx, line) => {
                let (arm, local) = self.arms.of_worker(idx);
                self.arms.folds[arm].garbage(local, line);
                (arm, Action::Continue)
            }
            Msg::Said(idx, line) => {
                if !self.released() && !line.trim().is_empty() {
                    self.observer.waiting(&line);
                    self.waiting = Some(line);
                }
                (self.arms.of_proc(idx), Action::Continue)
            }
            Msg::Exited(idx, status) => {
                self.exited += 1;
                self.arms.exited(&mut self.w, idx, status)
            }
        }
    }

    /// A worker's event: shown, paced (an operation or a pause of a paired run), folded.
    async fn event(&mut self, idx: usize, event: Event) -> (usize, Action) {
        let (arm, local) = self.arms.of_worker(idx);
        let paced_reply = match (&event, self.pace.as_mut()) {
            (Event::Op(op), p) => {
                self.observer.op(op.ok, op.attempt.read);
                crate::fault::point("cell");
                p.map(|p| p.op(arm, op, Instant::now()))
            }
            (Event::Paused, Some(p)) => Some(p.paused(arm, Instant::now())),
            (Event::Paused, None) => Some(Err(format!(
                "worker {local} reported a pause it was not asked for"
            ))),
            (Event::Done { .. }, _) => {
                self.observer.worker_done();
                None
            }
            (Event::Clock { clock_us }, _) => {
                let sent = self.go_sent_us.unwrap_or_default();
                self.arms.folds[arm].clock(local, *clock_us, (sent, monotonic_us()));
                return (arm, Action::Continue);
            }
            (Event::Ask { worker }, _) => {
                let time = Command::Time {
                    worker: *worker,
                    clock_us: monotonic_us(),
                    heard_us: 0,
                };
                let p = self.w.proc_of(idx);
                self.w.send(p..p + 1, time).await;
                return (arm, Action::Continue);
            }
            (Event::Ready { .. } | Event::Trace { .. }, _) => None,
        };
        let action = match paced_reply {
            Some(Ok(sends)) => {
                send(&mut self.w, &self.arms, sends).await;
                self.arms.folds[arm].event(local, event)
            }
            Some(Err(e)) => {
                self.arms.folds[arm].fail(e);
                Action::Abort
            }
            None if matches!(event, Event::Paused) => Action::Continue,
            None => self.arms.folds[arm].event(local, event),
        };
        (arm, action)
    }

    /// A bound reached: every worker of the arm ends after its operation in flight (a
    /// pacer ends the arm's slice with it, and goes on with the other arm alone).
    async fn check_bound(&mut self, arm: usize) {
        let Some(n) = self.bounds[arm] else { return };
        if self.ended[arm] || self.arms.folds[arm].succeeded() < n {
            return;
        }
        self.ended[arm] = true;
        let sends = match self.pace.as_mut() {
            Some(p) => p.end(arm),
            None => vec![pace::Send {
                arm,
                cmd: Command::End,
            }],
        };
        send(&mut self.w, &self.arms, sends).await;
    }

    /// Do what the fold said: release every worker once all are ready, or stop. Returns
    /// whether the drive goes on.
    async fn act(&mut self, arm: usize, action: Action) -> bool {
        match action {
            Action::Continue => {}
            Action::Release => {
                self.arms.ready[arm] = true;
                if self.released() {
                    self.go_sent_us = Some(monotonic_us());
                    self.w.send(0..self.w.proc_count(), Command::Go).await;
                    let setup_ms = self.spawned_at.elapsed().as_secs_f64() * 1000.0;
                    for f in &mut self.arms.folds {
                        f.set_setup_ms(setup_ms);
                    }
                    self.observer.released();
                    let sends = self.pace.as_mut().map(|p| p.start(Instant::now()));
                    send(&mut self.w, &self.arms, sends.unwrap_or_default()).await;
                }
            }
            Action::Abort => {
                self.w.stop().await;
                return false;
            }
        }
        true
    }

    /// What each arm measured, or why it failed.
    fn finish(self) -> Driven {
        // The arms' pauses on the history's clock (the host's monotonic one, as `Instant`).
        let (now, now_us) = (Instant::now(), monotonic_us());
        let on_clock = |t: Instant| now_us.saturating_sub(now.duration_since(t).as_micros() as u64);
        let pauses: Option<[Vec<[u64; 2]>; 2]> = (self.pace.as_ref()).map(|p| {
            p.pauses().map(|v| {
                v.into_iter()
                    .map(|(a, b)| [on_clock(a), on_clock(b)])
                    .collect()
            })
        });
        let units = self.pace.map(Pace::units);
        let mut measured = Vec::new();
        let mut failures = Vec::new();
        for (arm, fold) in self.arms.folds.into_iter().enumerate() {
            // Waits for the history's writer to write its last lines: off the runtime's
            // worker, so that nothing queued there waits behind it.
            match tokio::task::block_in_place(|| fold.finish()) {
                Ok(mut m) => {
                    if let Some(p) = &pauses {
                        m.paused_us = p[arm].clone();
                    }
                    if let (true, Some(u)) = (self.paced, &units) {
                        // Paced, an arm's window is the time it was let run: its units.
                        m.window_ms = u[arm].ops.iter().map(|x| x.ms).sum();
                    }
                    measured.push(m);
                }
                Err(reason) => failures.push(name_arm(self.paired, arm, reason)),
            }
        }
        if failures.is_empty() {
            Driven::Finished(measured, units)
        } else {
            Driven::Failed(failures.join("\n"))
        }
    }
}

/// A reason, naming its arm when there are two.
fn name_arm(paired: bool, arm: usize, reason: String) -> String {
    if paired {
        format!("arm {}: {reason}", pace::arm_name(arm))
    } else {
        reason
    }
}

/// Send the pacer's commands to the arms' processes.
async fn send(w: &mut Workers, arms: &Arms, sends: Vec<pace::Send>) {
    for s in sends {
        w.send(arms.procs[s.arm].clone(), s.cmd).await;
    }
}
