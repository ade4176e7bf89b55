//! One operation of a worker: performed (a cold read on a namespace of its own), timed,
//! abandoned at the attempt timeout, with the planted faults and slowdowns of the tests,
//! and reported; the warm-up's operations too.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::pacing::Next;
use super::plan::{Named, Planned};
use super::report::{PENDING, emit, truncate, write_pending};
use super::{EXIT_TEST_CRASH, KILL_MID_COMMIT_ENV, Session, open, protocol};
use crate::catalog::counting::{self, Counters};
use crate::catalog::{self, CatalogConfig, ErrorClass};
use crate::plan::Operation;
use bench_core::oplog::Attempt;
use bench_core::versions::At;
use protocol::Event;

/// The planted requests of [`super::EXTRA_HEADS_ENV`]: `n` HEADs of `path` on `store`.
pub(super) struct Planted {
    store: Arc<lance_io::object_store::ObjectStore>,
    path: object_store::path::Path,
    n: u32,
}

impl Planted {
    /// The store of the catalog at `cfg.root`, through a counting session of `counters`.
    pub(super) async fn open(
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
    pub(super) async fn make(&self) {
        for _ in 0..self.n {
            let _ = object_store::ObjectStoreExt::head(self.store.inner.as_ref(), &self.path).await;
        }
    }
}

/// One operation that ran, as its report needs it: what it was (its operation, its index,
/// whether an interleaved read, its place in a role's mix, whether the cell keeps a history,
/// the entry and property it named), when (its start and end, how late it started), and the
/// requests counted before it began.
struct Ran {
    op: Operation,
    i: u64,
    read: bool,
    mix: Option<u32>,
    history: bool,
    named: Named,
    span: (Instant, Instant),
    lag_ms: Option<f64>,
    io_before: bench_core::counts::IoCounts,
    /// The requests the store client had resent before it began.
    resent_before: u64,
    /// What the scheduler did to this worker's threads while it ran.
    cpu: Option<bench_core::sched::CpuUse>,
}

impl Session {
    /// An operation's place in the `__manifest` version order, and each of its pages' (a
    /// listing in more than one): directly, from its own `requests`; through REST, from what
    /// the server said of its calls.
    fn placed(
        &self,
        requests: &[counting::Timed],
        write: bool,
    ) -> (Option<At>, Option<Vec<bench_core::versions::Page>>) {
        let rest = self.args.rest_uri().is_some();
        let heard = catalog::heard().filter(|_| rest);
        let manifest = At::of(&counting::touches(requests), write).or(heard);
        (manifest, catalog::pages(requests, rest))
    }

    /// Run one operation; a cold read opens a fresh namespace for it (timed with it).
    pub(super) async fn perform(
        &self,
        op: Operation,
        target: catalog::Aim,
    ) -> lance_core::Result<catalog::Shown> {
        let ns = if op.is_cold() {
            open(&self.cfg, &self.counters, self.args.rest_uri()).await?
        } else {
            self.ns.clone()
        };
        let inputs = catalog::Inputs {
            table_data: &self.table_data,
            table: self.table.as_ref(),
            page_size: self.args.page_size,
            maintenance: self.maintenance.as_ref(),
            scope: &self.args.scope,
        };
        catalog::execute(ns, op, target, &inputs).await
    }

    /// The warm-up: `args.warmup` operations in the cell's pattern (a role's client: its
    /// mix's reads only, so that the cell starts from the golden as it is), each reported
    /// (`warm`: not measured, but what it did is in the copy and verified with the rest).
    pub(super) async fn warm_up(&self) {
        let mut counts = [0u64; 2];
        let reads_only = self.role.is_some();
        let mut k = 0;
        let mut done = 0;
        while done < self.args.warmup && k < self.args.warmup.saturating_mul(100) {
            let p = self.plan(k, &mut counts, true);
            k += 1;
            // A cleanup never warms up: the versions it would remove are what the measured
            // ones (a campaign's point) are to meet.
            if (reads_only && p.op.is_write()) || p.op.is_maintenance() {
                continue;
            }
            done += 1;
            let (target, property) = p.named();
            let resent_before = crate::resends::so_far();
            let start = Instant::now();
            let result = match p.aim {
                Ok(aim) => {
                    self.prepare(p.op, &aim);
                    (self.perform(p.op, aim).await)
                        .map_err(|e| (catalog::error_class(&e), truncate(e.to_string())))
                }
                Err((e, _)) => Err((ErrorClass::Other, e)),
            };
            let (class, err) = result.err().unzip();
            let (manifest, _) = self.placed(&self.counters.take(), p.op.is_write());
            let report = protocol::OpReport {
                op: p.mix,
                ..protocol::OpReport::of(
                    Attempt {
                        read: p.read,
                        warm: true,
                        manifest,
                        class,
                        err,
                        entry: target,
                        property,
                        resent: self.resent_since(resent_before),
                        ..Attempt::new(p.i, start.elapsed().as_secs_f64() * 1000.0)
                    },
                    class.is_none(),
                )
            };
            emit(self.args.worker_id, Event::Op(Box::new(report)));
        }
    }

    /// One measured attempt of `op` on `target`, begun at `start`, with the planted delay
    /// ([`super::OP_DELAY_ENV`]) as part of it; abandoned at the attempt timeout, if any. A failure
    /// comes with its class and message.
    pub(super) async fn attempt(
        &self,
        op: Operation,
        target: catalog::Aim,
        start: Instant,
    ) -> Result<catalog::Shown, (ErrorClass, String)> {
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
    pub(super) async fn one(&self, next: &mut Next) -> Option<Instant> {
        let planned = self.plan(next.k, &mut next.counts, false);
        next.k += 1;
        let (target, property) = planned.named();
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
        let at = (i, mix, (target.clone(), property.clone()));
        next.commits += u64::from(op.is_write());
        let planted_kill = op.is_write() && self.kill_at == Some(next.commits) && aim.is_ok();
        // Every operation, read or write: written before the clock starts, the line is no
        // part of the operation's time.
        if !planted_kill {
            self.invoke(read, at.clone(), (Instant::now(), next.release));
        }
        let io_before = self.counters.snapshot();
        let resent_before = crate::resends::so_far();
        // Read before the clock starts and after it stops: no part of the operation's time.
        let sched_before = bench_core::sched::snapshot();
        let start = Instant::now();
        let lag_ms = next
            .intended
            .map(|at| start.saturating_duration_since(at).as_secs_f64() * 1000.0);
        if let (true, Ok(aim)) = (planted_kill, &aim) {
            self.killed_mid_commit(op, aim.clone(), at, (start, next.release))
                .await;
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
        let cpu = sched_before.and_then(|b| bench_core::sched::since(&b));
        let ran = Ran {
            op,
            i,
            read,
            mix,
            history,
            named: (target, property),
            span: (start, end),
            lag_ms,
            io_before,
            resent_before,
            cpu,
        };
        let report = self.report(ran, result, next);
        emit(self.args.worker_id, Event::Op(Box::new(report)));
        if let Some(n) = self.exit_after
            && next.k >= n
        {
            // Test hook: die mid-cell, as a crashed worker would (its reports so far out).
            write_pending(&mut PENDING.lock().unwrap_or_else(|e| e.into_inner()));
            std::process::exit(EXIT_TEST_CRASH);
        }
        Some(end)
    }

    /// The report of one operation that ran (`ran`) and ended as `result`: its requests and
    /// their critical path, its place in the `__manifest` version order, its trace where
    /// kept, and what it showed where the cell keeps a history.
    fn report(
        &self,
        ran: Ran,
        result: Result<catalog::Shown, (ErrorClass, String)>,
        next: &Next,
    ) -> protocol::OpReport {
        let (op, history, (start, end)) = (ran.op, ran.history, ran.span);
        let ms = (end - start).as_secs_f64() * 1000.0;
        let io = self.counters.snapshot() - ran.io_before;
        let requests = self.counters.take();
        let path = counting::critical_path(&requests, start, end);
        let (manifest, pages) = self.placed(&requests, op.is_write());
        self.counters.operation_over();
        if next.k <= u64::from(self.args.trace) {
            self.trace(op, ran.i, result.is_ok(), (start, end), requests);
        }
        let (class, err, observed) = match result {
            Ok(observed) => (None, None, observed),
            Err((class, err)) => (Some(class), Some(err), catalog::Shown::Nothing),
        };
        // Into the history: the operation on the wall clock, and what it showed.
        let at_us = history.then(|| [self.clock_us(start), self.clock_us(end)]);
        let attempt = Attempt {
            read: ran.read,
            class,
            err,
            io: Some(io),
            path: Some(path),
            end_ms: next.release.map(|r| (end - r).as_secs_f64() * 1000.0),
            lag_ms: ran.lag_ms,
            entry: ran.named.0,
            property: ran.named.1,
            at_us,
            manifest,
            cpu: ran.cpu,
            resent: self.resent_since(ran.resent_before),
            ..Attempt::new(ran.i, ms)
        };
        let mut report = protocol::OpReport {
            op: ran.mix,
            pages: pages.filter(|_| history),
            invokes_unwritten: self.invokes_unwritten(),
            ..protocol::OpReport::of(attempt, class.is_none())
        };
        // A role's client (the only one that cleans up) keeps a history.
        if history {
            self.observe(op, observed, &mut report);
        }
        report
    }

    /// The report of operation `i` (a read, or not; its place `mix` in a role's mix, its
    /// entry `target`) as it would end were this worker to die with it in flight: `killed`,
    /// a write may have landed.
    fn in_flight(
        &self,
        read: bool,
        (i, mix, (target, property)): (u64, Option<u32>, Named),
        (start, release): (Instant, Option<Instant>),
        why: String,
    ) -> protocol::OpReport {
        let at = self.clock_us(start);
        protocol::OpReport {
            op: mix,
            ..protocol::OpReport::of(
                Attempt {
                    class: Some(ErrorClass::Killed),
                    err: Some(why),
                    io: Some(Default::default()),
                    end_ms: release.map(|r| (start - r).as_secs_f64() * 1000.0),
                    entry: target,
                    property,
                    at_us: Some([at, at]),
                    read,
                    ..Attempt::new(i, 0.0)
                },
                false,
            )
        }
    }

    /// Write operation `i` to [`INVOKED_ENV`]'s file before it begins, where there is one;
    /// a line that cannot be written is counted, and every report after it says so.
    fn invoke(&self, read: bool, at: (u64, Option<u32>, Named), times: (Instant, Option<Instant>)) {
        let Some(invoked) = &self.invoked else { return };
        let why = match read {
            true => "its worker was killed with it in flight",
            false => "its worker was killed with it in flight: it may have landed",
        };
        let report = Event::Op(Box::new(self.in_flight(read, at, times, why.to_string())));
        let mut line = serde_json::to_string(&report).expect("a report serialises");
        line.push('\n');
        let mut invoked = invoked.lock().unwrap_or_else(|e| e.into_inner());
        // One write(2): the line is in the file once it returns, whatever happens next.
        if let Err(e) = std::io::Write::write_all(&mut invoked.file, line.as_bytes()) {
            let (n, _) = invoked.unwritten.get_or_insert((0, e.to_string()));
            *n += 1;
        }
    }

    /// The invoke lines not written so far, and the first error.
    fn invokes_unwritten(&self) -> Option<(u64, String)> {
        let invoked = self.invoked.as_ref()?;
        let invoked = invoked.lock().unwrap_or_else(|e| e.into_inner());
        invoked.unwritten.clone()
    }

    /// The planted fault of [`KILL_MID_COMMIT_ENV`]: report commit `i` (its place `mix` in a
    /// role's mix, its entry `target`) `killed` — it may land —, begin it, and kill this
    /// process once it has made its first store request (or ended).
    pub(super) async fn killed_mid_commit(
        &self,
        op: Operation,
        aim: catalog::Aim,
        at: (u64, Option<u32>, Named),
        times: (Instant, Option<Instant>),
    ) {
        let why = format!(
            "killed mid-commit ({KILL_MID_COMMIT_ENV}, a planted fault): it may have landed"
        );
        let report = self.in_flight(false, at, times, why);
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
}
