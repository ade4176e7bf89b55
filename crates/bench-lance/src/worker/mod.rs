//! The worker process (`bench worker`, hidden): opens its own `DirectoryNamespace`, runs its
//! warm-up, reports ready, waits for the coordinator's release on stdin, runs its
//! operations, and reports each as one JSON line on stdout ([`protocol`]). It exits by
//! itself when its stdin closes (coordinator gone).

pub use bench_core::protocol;

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lance_namespace::LanceNamespace;
use tokio::io::{AsyncBufReadExt, BufReader};

use protocol::{Command, Versions};
pub use protocol::{EXIT_ORPHANED, Event, STORAGE_ENV, WorkerArgs};

use crate::catalog::counting::{Counters, Timed};
use crate::catalog::{self, CatalogConfig, ErrorClass};
use crate::plan::Operation;
use crate::trace::{TracedOp, TracedRequest};

/// Longest error message a worker reports per failed operation.
const MAX_ERR_CHARS: usize = 500;

/// Test hook: a worker delays its start by this many milliseconds (a slow process start).
pub const START_DELAY_ENV: &str = "BENCH_WORKER_START_DELAY_MS";

/// Test hook: a worker adds this many milliseconds (a decimal number) of busy CPU inside
/// every timed operation: a known slowdown, planted.
pub const OP_DELAY_ENV: &str = "BENCH_OP_DELAY_MS";

/// Test hook: a worker exits with [`EXIT_TEST_CRASH`] right after its N-th measured
/// operation, as a worker that crashes mid-cell.
pub const EXIT_AFTER_ENV: &str = "BENCH_WORKER_EXIT_AFTER";

/// Test hook (a planted fault): `W:N` makes worker `W` kill itself (SIGKILL) in the middle of
/// its `N`-th measured commit, once the commit's first store request is made (or, where it
/// makes none of its own, e.g. through a REST server, once it ends), after reporting it
/// `killed`: a commit that may have landed, as a crashed client's would. Its cell goes on
/// without it.
pub const KILL_MID_COMMIT_ENV: &str = "BENCH_WORKER_KILL_MID_COMMIT";

/// Test hook: a worker makes this many HEAD requests more inside every timed operation
/// (of `__manifest`'s version hint, through its counted store): a known request change,
/// planted, as a build that asks the store once more per operation would.
pub const EXTRA_HEADS_ENV: &str = "BENCH_EXTRA_HEADS";

/// The planted requests of [`EXTRA_HEADS_ENV`]: `n` HEADs of `path` on `store`.
struct Planted {
    store: Arc<lance_io::object_store::ObjectStore>,
    path: object_store::path::Path,
    n: u32,
}

impl Planted {
    /// The store of the catalog at `cfg.root`, through a counting session of `counters`.
    async fn open(
        cfg: &CatalogConfig,
        counters: &Arc<Counters>,
        n: u32,
    ) -> anyhow::Result<Planted> {
        let session = crate::catalog::counting::session(counters);
        let (store, base) = lance_io::object_store::ObjectStore::from_uri_and_params(
            session.store_registry(),
            &cfg.root,
            &catalog::store_params(&cfg.storage),
        )
        .await?;
        let path = base
            .join(catalog::MANIFEST_DIR)
            .join("_versions")
            .join("latest_version_hint.json");
        Ok(Planted { store, path, n })
    }

    /// Its HEADs, one after another (found or not, each a request).
    async fn make(&self) {
        for _ in 0..self.n {
            let _ = object_store::ObjectStoreExt::head(self.store.inner.as_ref(), &self.path).await;
        }
    }
}

/// Measurement hook: a worker opens its namespace without the counting session (no
/// requests, bytes or round trips in its reports), to measure what the accounting costs
/// (`scripts/figures/fidelity.sh accounting`).
pub const UNCOUNTED_ENV: &str = "BENCH_UNCOUNTED";

/// The exit code of a worker stopped by [`EXIT_AFTER_ENV`].
pub const EXIT_TEST_CRASH: i32 = 86;

/// A duration in milliseconds from the environment, if set and valid.
fn env_ms(name: &str) -> Option<Duration> {
    let ms: f64 = std::env::var(name).ok()?.trim().parse().ok()?;
    (ms.is_finite() && ms > 0.0).then(|| Duration::from_secs_f64(ms / 1000.0))
}

/// Reports of operations not yet written, and when the last were.
struct Pending {
    text: String,
    written: Option<Instant>,
}

static PENDING: std::sync::Mutex<Pending> = std::sync::Mutex::new(Pending {
    text: String::new(),
    written: None,
});

/// The coordinator acts on each operation's report as it comes (a paced worker's, or one
/// whose cell ends at a count of commits): reports are written at once. Otherwise they go
/// out together every [`REPORT_EVERY`], so that the coordinator wakes a few times a second,
/// not once an operation, beside the measured commits.
static LIVE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Failed attempts in a row (per writer of the cell) after which a worker of a cell bounded
/// only by its count of commits stops: among `W` writers taking turns, `1000·W` failures in a
/// row have a chance of about e^-1000 while others commit.
const STALLED: u64 = 1000;

/// How often a worker that is not [`LIVE`] writes its operations' reports.
const REPORT_EVERY: Duration = Duration::from_millis(200);

/// Print one event of worker `w` as a line for the coordinator: at once, or an operation's
/// report with the others of the last [`REPORT_EVERY`] (every other event writes those
/// before it).
fn emit(w: u32, event: Event) {
    let op = matches!(event, Event::Op(_));
    let line =
        serde_json::to_string(&protocol::Line { w: Some(w), event }).expect("event serialises");
    let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    pending.text.push_str(&line);
    pending.text.push('\n');
    let due = pending.written.is_none_or(|t| t.elapsed() >= REPORT_EVERY);
    if op && !LIVE.load(std::sync::atomic::Ordering::Relaxed) && !due {
        return;
    }
    write_pending(&mut pending);
}

/// Write the reports not yet written, in one write.
fn write_pending(pending: &mut Pending) {
    let mut out = std::io::stdout().lock();
    // A closed stdout means the coordinator is gone.
    if out
        .write_all(pending.text.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        std::process::exit(EXIT_ORPHANED);
    }
    pending.text.clear();
    pending.written = Some(Instant::now());
}

fn truncate(mut s: String) -> String {
    if s.len() > MAX_ERR_CHARS {
        let cut = (0..=MAX_ERR_CHARS)
            .rev()
            .find(|&c| s.is_char_boundary(c))
            .unwrap_or(0);
        s.truncate(cut);
    }
    s
}

/// A worker's open catalog and what its operations need.
struct Session {
    args: WorkerArgs,
    cfg: CatalogConfig,
    ns: Arc<dyn LanceNamespace>,
    /// The shared table's rows and how its datasets open (table operations only).
    table: Option<catalog::table::TableIo>,
    /// Every request of this worker's namespaces, counted.
    counters: Arc<Counters>,
    table_data: bytes::Bytes,
    /// The planted slowdown of every timed operation ([`OP_DELAY_ENV`]).
    op_delay: Option<Duration>,
    /// The planted requests of every timed operation ([`EXTRA_HEADS_ENV`]).
    planted: Option<Planted>,
    /// Test hook: exit after this many measured operations ([`EXIT_AFTER_ENV`]).
    exit_after: Option<u64>,
    /// Planted fault: killed in the middle of this measured commit ([`KILL_MID_COMMIT_ENV`]).
    kill_at: Option<u64>,
    /// The traced operations so far (`--trace`), and a moment on both clocks to put
    /// requests on the wall clock.
    traced: std::sync::Mutex<Vec<TracedOp>>,
    anchor: (Instant, std::time::SystemTime),
    /// A client of a role.
    role: Option<std::sync::Mutex<RoleClient>>,
}

/// A client of a role: its role, what it names, and its seeded draws.
struct RoleClient {
    role: bench_core::plan::Role,
    targets: catalog::RoleTargets,
    rng: bench_core::stats::rng::Rng,
    /// Removals that have nothing left to remove.
    exhausted: std::collections::HashSet<Operation>,
}

/// Draws a role's client makes for an operation with something left to name before it
/// stops.
const EXHAUSTED_DRAWS: u32 = 10_000;

/// The next operation of a worker's pattern: what it is, whether it is a read interleaved
/// by a mixed cell (or a role's read), its index among its kind, its place in a role's mix,
/// and what it names.
struct Planned {
    op: Operation,
    read: bool,
    i: u64,
    mix: Option<u32>,
    /// Into the cell's history for the consistency checker (a role's client, a mixed cell).
    history: bool,
    /// What it names; or why it names nothing, and whether the worker stops for it (a role's
    /// client reports a used-up removal once and draws on).
    aim: Result<catalog::Aim, (String, bool)>,
}

impl Planned {
    /// What a role's operation reports naming, for verification and the consistency
    /// checker: a commit's entry, or for a property, `<table>#<key>=<value>`; a listing,
    /// the namespace; a look-up, the entry.
    fn reported(&self) -> Option<String> {
        let aim = self.aim.as_ref().ok()?;
        let reads = matches!(
            self.op.describe().names,
            bench_core::plan::Names::Lists | bench_core::plan::Names::ReadsGolden(_)
        );
        (self.history && (self.op.is_write() || reads)).then(|| match &aim.property {
            Some((k, v)) => format!("{}#{k}={v}", aim.id),
            None => aim.id.clone(),
        })
    }
}

impl Session {
    /// The k-th operation of this worker (`counts`: its operations so far by kind, commits
    /// and reads): a role's client draws one from its mix and its target from its
    /// distribution; in a mixed cell `reads_per_write` reads, then one commit, over and
    /// over; otherwise always the cell's operation.
    fn plan(&self, k: u64, counts: &mut [u64; 2], warm: bool) -> Planned {
        if let Some(client) = &self.role {
            let mut c = client.lock().expect("role client");
            let c = &mut *c;
            // A removal with nothing left of its share fails once, saying so; from then on
            // the client draws its mix's other operations (none left: it stops).
            let (at, op, aim) = (0..EXHAUSTED_DRAWS)
                .map(|_| {
                    let (at, op) = c.role.draw(&mut c.rng);
                    (at, op, c.targets.of(op, k, &mut c.rng))
                })
                .find(|(_, op, aim)| aim.is_ok() || c.exhausted.insert(*op))
                .map(|(at, op, aim)| {
                    let more = "its client draws its role's other operations from now on";
                    (at, op, aim.map_err(|e| (format!("{e}; {more}"), false)))
                })
                .unwrap_or_else(|| {
                    let why = "every operation of its role's mix has nothing left to name";
                    (0, c.role.mix[0].0, Err((why.to_string(), true)))
                });
            // A role's operations are all the cell's own (its record's headline figures);
            // `roles` has each apart.
            return Planned {
                op,
                read: false,
                i: k,
                mix: Some(at as u32),
                history: true,
                aim,
            };
        }
        let (op, read) = match self.args.mix() {
            Some((read, r)) if k % (r + 1) < r => (read, true),
            _ => (self.args.operation, false),
        };
        let i = counts[usize::from(read)];
        counts[usize::from(read)] += 1;
        let targets = catalog::Targets {
            worker: self.args.worker_id,
            writers: self.args.writers,
            golden: catalog::Golden {
                tables: self.args.tables,
                namespaces: self.args.namespaces,
                fixture: self.args.fixture,
            },
            warmup: self.args.warmup,
        };
        Planned {
            op,
            read,
            i,
            mix: None,
            history: self.args.mix().is_some(),
            // Nothing left for a removal: the worker stops.
            aim: targets
                .of(op, i, warm, &self.args.names)
                .map_err(|e| (e, true)),
        }
    }

    /// Before an operation, untimed: a table to drop on local disk gets the directory
    /// lance's `drop_table` removes after its entry (a flat golden's tables are entries
    /// only, as declared tables are, and on local disk removing a missing directory fails;
    /// on an object store it is a listing that finds nothing).
    fn prepare(&self, op: Operation, aim: &catalog::Aim) {
        if op != Operation::DropTable {
            return;
        }
        let root = self
            .args
            .root
            .strip_prefix("file://")
            .unwrap_or(&self.args.root);
        if !root.contains("://") {
            // A failure shows as the drop's own.
            let _ = std::fs::create_dir_all(std::path::Path::new(root).join(&aim.id));
        }
    }

    /// Run one operation; a cold read opens a fresh namespace for it (timed with it).
    async fn perform(
        &self,
        op: Operation,
        target: catalog::Aim,
    ) -> lance_core::Result<catalog::Observed> {
        let ns = if op.is_cold() {
            open(&self.cfg, &self.counters, self.args.rest_uri()).await?
        } else {
            self.ns.clone()
        };
        let inputs = catalog::Inputs {
            table_data: &self.table_data,
            table: self.table.as_ref(),
            page_size: self.args.page_size,
        };
        catalog::execute(ns, op, target, &inputs).await
    }

    /// The warm-up: `args.warmup` operations in the cell's pattern (a role's client: its
    /// mix's reads only, so that the cell starts from the golden as it is). Returns how many
    /// of its commits succeeded (reads change nothing in `__manifest`, so they are not
    /// counted).
    async fn warm_up(&self) -> u64 {
        let mut counts = [0u64; 2];
        let mut committed = 0;
        let reads_only = self.role.is_some();
        let mut k = 0;
        let mut done = 0;
        while done < self.args.warmup && k < self.args.warmup.saturating_mul(100) {
            let p = self.plan(k, &mut counts, true);
            k += 1;
            if reads_only && p.op.is_write() {
                continue;
            }
            done += 1;
            let ok = match p.aim {
                Ok(aim) => {
                    self.prepare(p.op, &aim);
                    self.perform(p.op, aim).await.is_ok()
                }
                Err(_) => false,
            };
            if ok && p.op.is_write() {
                committed += 1;
            }
        }
        committed
    }

    /// The measured operations, from release until the count, the deadline, or (with
    /// `--until-end`) the coordinator's `end`; returns the end of the last one, and why the
    /// worker stopped before, where it did.
    async fn measure(
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
            let intended = schedule.as_mut().map(Schedule::next);
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
    /// [`protocol::Command`]), until `end`. Returns the time it was let run: from each
    /// `step` or `resume` to the end of the operations it ran then.
    async fn paced(&self, release: Instant, commands: &mut Commands) -> (Duration, Option<String>) {
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
                Command::Go => {}
            }
        }
        (active, next.stopped)
    }

    /// One measured attempt of `op` on `target`, begun at `start`, with the planted delay
    /// ([`OP_DELAY_ENV`]) as part of it; abandoned at the attempt timeout, if any. A failure
    /// comes with its class and message.
    async fn attempt(
        &self,
        op: Operation,
        target: catalog::Aim,
        start: Instant,
    ) -> Result<catalog::Observed, (ErrorClass, String)> {
        let limit = self.args.attempt_timeout_ms.map(Duration::from_millis);
        let timed_out = |t: Duration| {
            let ms = t.as_millis();
            (
                ErrorClass::Timeout,
                format!("abandoned after {ms} ms (run.attempt_timeout_secs)"),
            )
        };
        let began = Instant::now();
        let result = match limit {
            Some(t) => match tokio::time::timeout(t, self.perform(op, target)).await {
                // A busy runtime may poll an attempt that ended past its limit before the
                // timer: past the limit it is abandoned all the same (it may have landed;
                // the record counts those that did), so no success outlasts the limit.
                Ok(_) if began.elapsed() > t => return Err(timed_out(t)),
                Ok(r) => r,
                Err(_) => return Err(timed_out(t)),
            },
            None => self.perform(op, target).await,
        };
        if let Some(p) = &self.planted {
            p.make().await;
        }
        if let Some(d) = self.op_delay {
            // Busy CPU at the end of the operation, as more work in the commit would be:
            // exact to a microsecond on a free core (a sleep wakes late by a scheduler's
            // tick, and tokio's timer has a resolution of 1 ms). Off the runtime's worker
            // (block_in_place hands its queued tasks to another), so that what the commit
            // left running is not held up behind the spin. It ends at the timeout.
            let done = Instant::now();
            let until = limit.map_or(done + d, |t| (done + d).min(start + t));
            tokio::task::block_in_place(|| {
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
            });
            if let Some(t) = limit.filter(|&t| done + d > start + t) {
                return Err(timed_out(t));
            }
        }
        result.map_err(|e| (catalog::error_class(&e), truncate(e.to_string())))
    }

    /// Run and report the next operation of this worker's pattern; returns its end, or
    /// `None` where none ran (nothing left for it: the worker stops).
    async fn one(&self, next: &mut Next) -> Option<Instant> {
        let planned = self.plan(next.k, &mut next.counts, false);
        next.k += 1;
        let reported = planned.reported();
        let Planned {
            op,
            read,
            i,
            aim,
            mix,
            history,
        } = planned;
        if let Ok(t) = &aim {
            self.prepare(op, t);
        }
        let io_before = self.counters.snapshot();
        let start = Instant::now();
        let lag_ms = next
            .intended
            .map(|at| start.saturating_duration_since(at).as_secs_f64() * 1000.0);
        if op.is_write() {
            next.commits += 1;
            if self.kill_at == Some(next.commits)
                && let Ok(aim) = &aim
            {
                let at = (i, mix, reported.clone());
                self.killed_mid_commit(op, aim.clone(), at, (start, next.release))
                    .await;
            }
        }
        let result = match aim {
            Ok(aim) => self.attempt(op, aim, start).await,
            // Nothing left to remove: the worker stops, saying why (the plan's checks leave
            // every worker enough where they can). A paced worker's coordinator waits for the
            // report of the operation it asked for: a failed one. A role's client reports it
            // failed once and goes on, unless nothing is left for its whole mix.
            Err((e, false)) => Err((ErrorClass::Other, e)),
            Err((e, true)) => {
                next.stopped = Some(e.clone());
                if !self.args.paced {
                    return None;
                }
                Err((ErrorClass::Other, e))
            }
        };
        next.failed_in_row = if result.is_ok() {
            0
        } else {
            next.failed_in_row + 1
        };
        let end = Instant::now();
        let ms = (end - start).as_secs_f64() * 1000.0;
        let io = self.counters.snapshot() - io_before;
        let requests = self.counters.take();
        let path = crate::catalog::counting::critical_path(&requests, start, end);
        self.counters.operation_over();
        if next.k <= u64::from(self.args.trace) {
            self.trace(op, i, result.is_ok(), (start, end), requests);
        }
        let (class, err, observed) = match result {
            Ok(observed) => (None, None, observed),
            Err((class, err)) => (Some(class), Some(err), catalog::Observed::Nothing),
        };
        // Into the history: the operation on the wall clock, and what it showed.
        let at_us = history.then(|| [self.wall_us(start), self.wall_us(end)]);
        let (seen, gone, version) = match history {
            true => self.observed(op, observed, reported.as_deref()),
            false => (None, None, None),
        };
        emit(
            self.args.worker_id,
            Event::Op(Box::new(protocol::OpReport {
                i,
                ms,
                ok: err.is_none(),
                read,
                class,
                err,
                io: Some(io),
                path: Some(path),
                end_ms: next.release.map(|r| (end - r).as_secs_f64() * 1000.0),
                lag_ms,
                op: mix,
                target: reported,
                at_us,
                seen,
                gone,
                version,
            })),
        );
        if let Some(n) = self.exit_after
            && next.k >= n
        {
            // Test hook: die mid-cell, as a crashed worker would (its reports so far out).
            write_pending(&mut PENDING.lock().unwrap_or_else(|e| e.into_inner()));
            std::process::exit(EXIT_TEST_CRASH);
        }
        Some(end)
    }
}

impl Session {
    /// The planted fault of [`KILL_MID_COMMIT_ENV`]: report commit `i` (its place `mix` in a
    /// role's mix, its entry `target`) `killed` — it may land —, begin it, and kill this
    /// process once it has made its first store request (or ended).
    async fn killed_mid_commit(
        &self,
        op: Operation,
        aim: catalog::Aim,
        (i, mix, target): (u64, Option<u32>, Option<String>),
        (start, release): (Instant, Option<Instant>),
    ) {
        let at = self.wall_us(start);
        let report = protocol::OpReport {
            i,
            ms: 0.0,
            ok: false,
            read: false,
            class: Some(ErrorClass::Killed),
            err: Some(format!(
                "killed mid-commit ({KILL_MID_COMMIT_ENV}, a planted fault): it may have landed"
            )),
            io: Some(Default::default()),
            path: None,
            end_ms: release.map(|r| (start - r).as_secs_f64() * 1000.0),
            lag_ms: None,
            op: mix,
            target,
            at_us: Some([at, at]),
            seen: None,
            gone: None,
            version: None,
        };
        emit(self.args.worker_id, Event::Op(Box::new(report)));
        write_pending(&mut PENDING.lock().unwrap_or_else(|e| e.into_inner()));
        let before = self.counters.snapshot().requests();
        let commit = self.perform(op, aim);
        tokio::pin!(commit);
        loop {
            tokio::select! {
                _ = &mut commit => break,
                _ = tokio::time::sleep(Duration::from_micros(200)) => {
                    if self.counters.snapshot().requests() > before {
                        break;
                    }
                }
            }
        }
        // SAFETY: kill(2) on our own pid has no memory-safety preconditions.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }

    /// What an operation showed, as the history keeps it: of a listing of `namespace`, what
    /// it saw of each writer's creations and (a role's listing of tables, where tables are
    /// removed) the golden's tables there it did not; of the shared table, its version.
    fn observed(
        &self,
        op: Operation,
        observed: catalog::Observed,
        namespace: Option<&str>,
    ) -> (
        Option<Vec<bench_core::consistency::Seen>>,
        Option<Vec<String>>,
        Option<u64>,
    ) {
        match observed {
            catalog::Observed::Names(names) => {
                let tables = matches!(op, Operation::ListTables { .. });
                let gone = match (&self.role, namespace) {
                    (Some(client), Some(namespace)) if tables => {
                        (client.lock().expect("role client").targets).gone(namespace, &names)
                    }
                    _ => None,
                };
                (Some(bench_core::consistency::seen(&names)), gone, None)
            }
            catalog::Observed::Version(v) => (None, None, Some(v)),
            catalog::Observed::Nothing => (None, None, None),
        }
    }

    /// A moment on the wall clock, in µs since the epoch (from the worker's anchor on both
    /// clocks).
    fn wall_us(&self, t: Instant) -> u64 {
        let (i0, w0) = self.anchor;
        let wall = if t >= i0 {
            w0 + (t - i0)
        } else {
            w0 - (i0 - t)
        };
        wall.duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64)
    }

    /// Keep traced operation `i` of kind `op` with its requests; after the last one, keys
    /// are no longer kept.
    fn trace(
        &self,
        op: Operation,
        i: u64,
        ok: bool,
        (start, end): (Instant, Instant),
        requests: Vec<Timed>,
    ) {
        let us = |t: Instant| self.wall_us(t);
        let requests = requests
            .into_iter()
            .filter(|r| r.end >= start && r.start <= end)
            .map(|r| TracedRequest {
                kind: r.kind.to_string(),
                path: r.path.unwrap_or_default(),
                bytes: r.bytes,
                start_us: us(r.start.max(start)),
                end_us: us(r.end.min(end)),
            })
            .collect();
        let mut traced = self.traced.lock().expect("traced");
        traced.push(TracedOp {
            name: op.to_string(),
            i,
            ok,
            start_us: us(start),
            end_us: us(end),
            requests,
        });
        if traced.len() >= self.args.trace as usize {
            self.counters
                .tracing
                .store(false, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// Where a worker is in its pattern: operations started, and of each kind (commits,
/// interleaved reads).
#[derive(Default)]
struct Next {
    k: u64,
    counts: [u64; 2],
    /// The release: operations report their end from it.
    release: Option<Instant>,
    /// An open-loop operation's intended start.
    intended: Option<Instant>,
    /// Why this worker stops before the cell's end, where it does: nothing left for its
    /// operations (a removal past its share), or a bound out of reach ([`STALLED`]).
    stopped: Option<String>,
    /// Attempts that failed since the last that succeeded.
    failed_in_row: u64,
    /// Measured commits begun.
    commits: u64,
}

/// An open-loop worker's intended start times: its share of the cell's rate, evenly spaced
/// (the writers' starts interleaved) or as a Poisson process (its own seed).
struct Schedule {
    at: Instant,
    interval: Duration,
    rng: Option<bench_core::stats::rng::Rng>,
}

impl Schedule {
    fn new(args: &WorkerArgs, rate: f64, release: Instant) -> Schedule {
        let writers = args.writers.max(1);
        let interval = Duration::from_secs_f64(f64::from(writers) / rate);
        let rng = args
            .poisson
            .then(|| bench_core::stats::rng::Rng::new(0x0a11_0000 + u64::from(args.worker_id)));
        let mut s = Schedule {
            at: release,
            interval,
            rng,
        };
        // Evenly spaced: worker w of C starts w/C of an interval in; a Poisson process
        // starts with its first gap.
        let first = match s.rng {
            Some(_) => s.gap(),
            None => interval.mul_f64(f64::from(args.worker_id % writers) / f64::from(writers)),
        };
        s.at += first;
        s
    }

    fn gap(&mut self) -> Duration {
        match &mut self.rng {
            Some(rng) => self.interval.mul_f64(-rng.uniform().ln()),
            None => self.interval,
        }
    }

    /// The next operation's intended start.
    fn next(&mut self) -> Instant {
        let at = self.at;
        self.at = at + self.gap();
        at
    }
}

/// Wait until `at`: asleep until shortly before, then on the CPU, so that an operation
/// starts within microseconds of its intended time (a timer wakes up to a millisecond
/// late). Off the runtime's worker, as the planted delay.
async fn wait_until(at: Instant) {
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
type Commands = tokio::sync::mpsc::UnboundedReceiver<Command>;

/// Read the coordinator's commands from stdin; EOF at any time means the coordinator is
/// gone, and the worker exits (with [`EXIT_ORPHANED`]).
fn read_commands() -> Commands {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        loop {
            match lines.next_line().await {
                Ok(Some(l)) => {
                    if let Some(c) = Command::parse(&l) {
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

/// Wait for `go`: the release.
async fn released(commands: &mut Commands) -> anyhow::Result<()> {
    while let Some(c) = commands.recv().await {
        if c == Command::Go {
            return Ok(());
        }
    }
    anyhow::bail!("the coordinator closed the command channel before release")
}

pub async fn run(mut args: WorkerArgs) -> anyhow::Result<()> {
    let env = |k: &str| std::env::var(k).ok();
    if args.rank_from_env {
        args.worker_id += protocol::rank_from(&env).map_err(anyhow::Error::msg)?;
    }
    let w = args.worker_id;
    LIVE.store(
        args.paced || args.until_end,
        std::sync::atomic::Ordering::Relaxed,
    );
    if let Some(d) = env_ms(START_DELAY_ENV) {
        tokio::time::sleep(d).await;
    }
    let cfg = catalog_config(&args.root, args.inline, args.commit_retries, args.s3_shaped)?;
    let counters = Arc::new(Counters::default());
    let ns = open(&cfg, &counters, args.rest_uri()).await?;
    // Table operations (the cell's, or a mixed cell's read) get the shared table's rows
    // (the plan's default where a coordinator does not say) and a counted session.
    let on_table = args.operation.on_table() || args.read_operation.is_some_and(|r| r.on_table());
    let table = on_table.then(|| {
        let n = (args.rows_per_commit).unwrap_or(bench_core::plan::DEFAULT_ROWS_PER_COMMIT);
        let session = crate::catalog::counting::session(&counters);
        catalog::table::TableIo::new(n, session, cfg.storage.clone())
    });
    let heads: u32 = (std::env::var(EXTRA_HEADS_ENV).ok())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let planted = match heads {
        0 => None,
        n => Some(Planted::open(&cfg, &counters, n).await?),
    };
    let open_ms = crate::started().elapsed().as_secs_f64() * 1000.0;
    let session = Session {
        ns,
        table,
        counters: counters.clone(),
        cfg,
        table_data: catalog::table_ipc(),
        op_delay: env_ms(OP_DELAY_ENV),
        planted,
        exit_after: std::env::var(EXIT_AFTER_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok()),
        kill_at: kill_at(args.worker_id),
        traced: std::sync::Mutex::new(Vec::new()),
        anchor: (Instant::now(), std::time::SystemTime::now()),
        role: role_client(&args),
        args,
    };
    let mut commands = read_commands();
    let warmup_ok = session.warm_up().await;
    emit(
        w,
        Event::Ready {
            warmup_ok,
            versions: Some(Versions::own()),
            host: Some(protocol::host_name(&env)),
            open_ms: Some(open_ms),
        },
    );
    released(&mut commands).await?;
    let wall_us = session.wall_us(Instant::now());
    emit(w, Event::Clock { wall_us });
    if session.args.trace > 0 {
        counters
            .tracing
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let release = Instant::now();
    let (elapsed, stopped) = if session.args.paced {
        session.paced(release, &mut commands).await
    } else {
        let (end, stopped) = session.measure(release, &mut commands).await;
        (end - release, stopped)
    };
    let ops = std::mem::take(&mut *session.traced.lock().expect("traced"));
    if !ops.is_empty() {
        emit(w, Event::Trace { ops });
    }
    emit(
        w,
        Event::Done {
            elapsed_ms: elapsed.as_secs_f64() * 1000.0,
            io: Some(counters.snapshot()),
            rss_peak_kib: peak_rss_kib(),
            stopped,
        },
    );
    Ok(())
}

/// This worker's commit to be killed in ([`KILL_MID_COMMIT_ENV`]: `W:N`), if it is `W`.
fn kill_at(worker: u32) -> Option<u64> {
    let v = std::env::var(KILL_MID_COMMIT_ENV).ok()?;
    let (w, n) = v.trim().split_once(':')?;
    (w.parse::<u32>().ok()? == worker).then(|| n.parse().ok())?
}

/// A role's client: its role, targets and seeded draws, from its arguments.
fn role_client(args: &WorkerArgs) -> Option<std::sync::Mutex<RoleClient>> {
    let r = args.role.as_ref()?;
    let golden = catalog::Golden {
        tables: args.tables,
        namespaces: args.namespaces,
        fixture: args.fixture,
    };
    Some(std::sync::Mutex::new(RoleClient {
        role: r.role.clone(),
        targets: catalog::RoleTargets::new(
            args.worker_id,
            (r.remover, r.removers),
            golden,
            args.names.clone(),
            r.role.targets,
        ),
        rng: bench_core::stats::rng::Rng::new(r.seed),
        exhausted: Default::default(),
    }))
}

/// A worker's catalog: its own `DirectoryNamespace` (its requests counted), or a client of
/// the cell's REST server (`rest`; the server counts the catalog's requests).
async fn open(
    cfg: &CatalogConfig,
    counters: &Arc<Counters>,
    rest: Option<&str>,
) -> lance_core::Result<Arc<dyn LanceNamespace>> {
    Ok(match rest {
        Some(uri) => catalog::open_rest(uri),
        None if std::env::var_os(UNCOUNTED_ENV).is_some() => Arc::new(catalog::open(cfg).await?),
        None => Arc::new(catalog::open_counted(cfg, counters).await?),
    })
}

/// The catalog a worker (or a cell's REST server) opens on `root`: the storage options and
/// namespace properties from the environment the coordinator gave it ([`STORAGE_ENV`]).
pub fn catalog_config(
    root: &str,
    inline: bool,
    commit_retries: u32,
    s3_shaped: bool,
) -> anyhow::Result<CatalogConfig> {
    let given: BTreeMap<String, String> = match std::env::var(STORAGE_ENV) {
        Ok(json) => serde_json::from_str(&json)?,
        Err(_) => BTreeMap::new(),
    };
    let (properties, storage): (BTreeMap<_, _>, BTreeMap<_, _>) = given
        .into_iter()
        .partition(|(k, _)| k.starts_with(protocol::PROPERTY_PREFIX));
    let properties = properties
        .into_iter()
        .map(|(k, v)| (k[protocol::PROPERTY_PREFIX.len()..].to_string(), v))
        .collect();
    Ok(CatalogConfig {
        root: if s3_shaped {
            s3_shaped_root(root)?
        } else {
            root.to_string()
        },
        inline,
        commit_retries,
        storage,
        properties,
    })
}

/// The URI of a local root as lance's `file-object-store` (local disk through the
/// object-store API, as a remote store is reached).
fn s3_shaped_root(root: &str) -> anyhow::Result<String> {
    let path = root.strip_prefix("file://").unwrap_or(root);
    let abs = std::path::absolute(path)?;
    let url = url::Url::from_file_path(&abs)
        .map_err(|()| anyhow::anyhow!("{} is not a local path", abs.display()))?;
    Ok(url.as_str().replacen("file:", "file-object-store:", 1))
}

/// Lance's environment switch of the version-hint file, off for S3-shaped requests.
pub const VERSION_HINT_ENV: &str = "LANCE_USE_VERSION_HINT";

/// This process's peak resident memory (VmHWM of /proc/self/status), in KiB; `None`
/// where the kernel does not tell it.
pub(crate) fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| {
        l.strip_prefix("VmHWM:")?
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse()
            .ok()
    })
}
