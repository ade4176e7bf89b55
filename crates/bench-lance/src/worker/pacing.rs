//! When a worker runs its operations: from release to its count, its deadline or the
//! coordinator's `end`; paced, only when the coordinator says; open-loop, at each one's
//! intended start. And the commands that say so, read from stdin.

use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};

use super::Session;
use super::protocol::{Command, EXIT_ORPHANED, Event};
use super::report::emit;
use bench_core::arrivals::Schedule;

/// Failed attempts in a row (per writer of the cell) after which a worker of a cell bounded
/// only by its count of commits stops: among `W` writers taking turns, `1000·W` failures in a
/// row have a chance of about e^-1000 while others commit.
pub(super) const STALLED: u64 = 1000;

/// Where a worker is in its pattern: operations started, and of each kind (commits,
/// interleaved reads).
#[derive(Default)]
pub(super) struct Next {
    pub(super) k: u64,
    pub(super) counts: [u64; 2],
    /// The release: operations report their end from it.
    pub(super) release: Option<Instant>,
    /// An open-loop operation's intended start.
    pub(super) intended: Option<Instant>,
    /// Why this worker stops before the cell's end, where it does: nothing left for its
    /// operations (a removal past its share), or a bound out of reach ([`STALLED`]).
    pub(super) stopped: Option<String>,
    /// Attempts that failed since the last that succeeded.
    pub(super) failed_in_row: u64,
    /// Measured commits begun.
    pub(super) commits: u64,
}

/// Wait until `at`: asleep until shortly before, then on the CPU, so that an operation
/// starts within microseconds of its intended time (a timer wakes up to a millisecond
/// late). Off the runtime's worker, as the planted delay.
pub(super) async fn wait_until(at: Instant) {
    const SPIN: Duration = Duration::from_millis(2);
    if let Some(early) = at.checked_sub(SPIN) {
        tokio::time::sleep_until(early.into()).await;
    }
    if Instant::now() < at {
        tokio::task::block_in_place(|| {
            while Instant::now() < at {
                std::hint::spin_loop();
            }
        });
    }
}

/// The coordinator's commands, as they arrive on stdin.
pub(super) type Commands = tokio::sync::mpsc::UnboundedReceiver<Command>;

/// Read the coordinator's commands from stdin; EOF at any time means the coordinator is
/// gone, and the worker exits (with [`EXIT_ORPHANED`]).
pub(super) fn read_commands() -> Commands {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        loop {
            match lines.next_line().await {
                Ok(Some(l)) => {
                    let heard = crate::host_clock::monotonic_us();
                    let c = match Command::parse(&l) {
                        Some(Command::Time {
                            worker, clock_us, ..
                        }) => Some(Command::Time {
                            worker,
                            clock_us,
                            heard_us: heard,
                        }),
                        c => c,
                    };
                    if let Some(c) = c {
                        let _ = tx.send(c);
                    }
                }
                Ok(None) => std::process::exit(EXIT_ORPHANED),
                // Not the coordinator's going: the runtime shutting down as the worker
                // ends cancels this read. Stop reading; the worker ends as it was.
                Err(_) => return,
            }
        }
    });
    rx
}

/// How long a worker waits for the coordinator's answer to its `ask`.
const ASK_WAIT: Duration = Duration::from_secs(5);

/// After the last operation: ask the coordinator's clock, and bound this worker's offset
/// from it by when the answer came (`None` where none came in [`ASK_WAIT`]). Other commands
/// that come meanwhile (a late `end`, a launcher's other tasks' answers) are left.
pub(super) async fn ask_time(
    w: u32,
    commands: &mut Commands,
) -> Option<bench_core::protocol::ClockSample> {
    let asked_us = crate::host_clock::monotonic_us();
    emit(w, Event::Ask { worker: w });
    let answer = async {
        while let Some(c) = commands.recv().await {
            if let Command::Time {
                worker,
                clock_us,
                heard_us,
            } = c
                && worker == w
            {
                return Some((clock_us, heard_us));
            }
        }
        None
    };
    let (answered_us, heard_us) = tokio::time::timeout(ASK_WAIT, answer).await.ok()??;
    Some(bench_core::protocol::ClockSample {
        asked_us,
        answered_us,
        heard_us,
    })
}

/// Wait for `go`: the release.
pub(super) async fn released(commands: &mut Commands) -> anyhow::Result<()> {
    while let Some(c) = commands.recv().await {
        if c == Command::Go {
            return Ok(());
        }
    }
    anyhow::bail!("the coordinator closed the command channel before release")
}

impl Session {
    /// The measured operations, from release until the count, the deadline, or (with
    /// `--until-end`) the coordinator's `end`; returns the end of the last one, and why the
    /// worker stopped before, where it did.
    pub(super) async fn measure(
        &self,
        release: Instant,
        commands: &mut Commands,
    ) -> (Instant, Option<String>) {
        // No plan can ask for a deadline past what the clock holds (the plan bounds
        // durations); saturate rather than panic all the same.
        let deadline = self.args.duration_secs.map(|d| {
            release
                .checked_add(Duration::from_secs(d))
                .unwrap_or(release + Duration::from_secs(86_400 * 365))
        });
        let mut last_end = release;
        let mut next = Next {
            release: Some(release),
            ..Next::default()
        };
        let mut schedule = self
            .args
            .rate
            .map(|r| Schedule::new(&self.args, r, release));
        loop {
            // An open-loop worker waits for its next operation's intended start: none
            // intended at or after the deadline, and none started after it (a backlog
            // left at the deadline is not served).
            let intended = schedule.as_mut().map(Schedule::next_start);
            let more = match (deadline, self.args.operations) {
                (Some(d), _) => Instant::now() < d && intended.is_none_or(|at| at < d),
                (None, Some(n)) => next.k < n,
                (None, None) => self.args.until_end,
            };
            if !more
                || next.stopped.is_some()
                || (self.args.until_end
                    && std::iter::from_fn(|| commands.try_recv().ok()).any(|c| c == Command::End))
            {
                break;
            }
            if let Some(at) = intended {
                wait_until(at).await;
            }
            next.intended = intended;
            if let Some(end) = self.one(&mut next).await {
                last_end = end;
            }
            // Bounded only by the cell's count of commits: a worker whose every attempt
            // fails would run until the cell's timeout.
            let stall = STALLED * u64::from(self.args.writers.max(1));
            if deadline.is_none() && self.args.operations.is_none() && next.failed_in_row >= stall {
                next.stopped = Some(format!(
                    "stopped after {} attempts in a row failed (every worker's last {STALLED} \
                     each, or more, where the others' succeeded): the cell's bound of commits \
                     was out of its reach",
                    next.failed_in_row
                ));
            }
        }
        (last_end, next.stopped)
    }

    /// A paced worker's operations: only when the coordinator says (see
    /// [`Command`]), until `end`. Returns the time it was let run: from each
    /// `step` or `resume` to the end of the operations it ran then.
    pub(super) async fn paced(
        &self,
        release: Instant,
        commands: &mut Commands,
    ) -> (Duration, Option<String>) {
        let mut next = Next {
            release: Some(release),
            ..Next::default()
        };
        let mut active = Duration::ZERO;
        while let Some(cmd) = commands.recv().await {
            match cmd {
                Command::Step => {
                    let t = Instant::now();
                    if let Some(end) = self.one(&mut next).await {
                        active += end - t;
                    }
                }
                Command::Resume => {
                    let t = Instant::now();
                    let mut end = t;
                    let stop = loop {
                        // Stopped: nothing more to run until told to pause or end.
                        let cmd = match next.stopped {
                            Some(_) => commands.recv().await,
                            None => commands.try_recv().ok(),
                        };
                        match cmd {
                            Some(Command::Pause) => break None,
                            Some(Command::End) => break Some(()),
                            // The coordinator is gone.
                            None if next.stopped.is_some() => break Some(()),
                            _ => {}
                        }
                        if next.stopped.is_none() {
                            end = self.one(&mut next).await.unwrap_or(end);
                        }
                    };
                    active += end - t;
                    emit(self.args.worker_id, Event::Paused);
                    if stop.is_some() {
                        break;
                    }
                }
                Command::Pause => emit(self.args.worker_id, Event::Paused),
                Command::End => break,
                Command::Go | Command::Time { .. } => {}
            }
        }
        (active, next.stopped)
    }
}
