//! The pure part of running a cell: folding the workers' events (and their exits) into
//! what the cell measured, and deciding when to release them. No processes, no clock.

use crate::protocol::ErrorClass;
use crate::protocol::Event;
use crate::protocol::OpReport;
use crate::protocol::Versions;
use crate::stats::{Latencies, Measured};

/// What the driver must do after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Continue,
    /// Every worker is ready: release them all now.
    Release,
    /// A worker died before release: the cell can never start; stop the others.
    Abort,
}

/// The state of a running cell as its workers' events arrive.
#[derive(Debug)]
pub struct Fold {
    /// The worker id of each worker, by index.
    worker_ids: Vec<u32>,
    /// What every worker must report being, when checked.
    expected: Option<Versions>,
    m: Measured,
    per_worker: Vec<Latencies>,
    per_worker_reads: Vec<Latencies>,
    ready: usize,
    ready_seen: Vec<bool>,
    released: bool,
    done: Vec<bool>,
    failures: Vec<String>,
    /// A worker reported an operation or its end without its requests.
    io_unknown: bool,
    /// Each worker's role, in a cell of roles: its place, and its mix's operations.
    roles: Vec<Option<(u32, Vec<crate::plan::Operation>)>>,
    /// A mixed cell: its commit and its read, whose operations go into the history.
    mixed: Option<[crate::plan::Operation; 2]>,
    /// Workers that said they are being killed mid-commit (a planted fault): their exit
    /// ends them, not the cell.
    killed: Vec<bool>,
}

impl Fold {
    pub fn new(worker_ids: Vec<u32>, expected: Option<Versions>) -> Fold {
        let n = worker_ids.len();
        Fold {
            worker_ids,
            expected,
            m: Measured::default(),
            per_worker: vec![Latencies::default(); n],
            per_worker_reads: vec![Latencies::default(); n],
            ready: 0,
            ready_seen: vec![false; n],
            released: false,
            done: vec![false; n],
            failures: Vec::new(),
            io_unknown: false,
            roles: vec![None; n],
            mixed: None,
            killed: vec![false; n],
        }
    }

    /// A mixed cell: its commit and its read (`write`, `read`), into the cell's history.
    pub fn with_mixed(mut self, mixed: Option<[crate::plan::Operation; 2]>) -> Fold {
        self.mixed = mixed;
        self
    }

    /// A cell of roles: each worker's role (by index), so that its operations are counted
    /// by role and operation.
    pub fn with_roles(mut self, roles: Vec<Option<(u32, Vec<crate::plan::Operation>)>>) -> Fold {
        if roles.len() == self.roles.len() {
            self.roles = roles;
        }
        self
    }

    /// An operation of a role's client, by (role, operation).
    fn role_op(&mut self, idx: usize, op: &OpReport, latency: f64) {
        let (Some((role, mix)), Some(at)) = (&self.roles[idx], op.op) else {
            return;
        };
        let (role, kind) = (*role, mix.get(at as usize).copied());
        let r = self.m.roles.entry((role, at)).or_default();
        r.attempts += 1;
        let class = op.class.unwrap_or(ErrorClass::Other);
        if let Some(end) = op.end_ms {
            match op.ok {
                true => r.timeline.success(end, latency, false),
                false => r.timeline.failure(end, class.name()),
            }
        }
        if op.ok {
            r.latencies.record(latency);
            r.io += op.io.unwrap_or_default();
            if let Some(p) = &op.path {
                r.round_trips += u64::from(p.round_trips);
                r.path_ops += 1;
            }
        } else {
            *r.errors.entry(class.name()).or_default() += 1;
            if r.first_error.is_none() {
                r.first_error = op.err.clone();
            }
        }
        let Some(kind) = kind else {
            return;
        };
        self.history(idx, kind, op, class);
        if let Some(target) = &op.target
            && kind.is_write()
            && (op.ok || class.indeterminate())
        {
            self.m.written.push(crate::stats::Written {
                role,
                op: at,
                worker: self.worker_ids[idx],
                ok: op.ok,
                target: target.clone(),
            });
        }
    }

    /// One event of worker `idx`.
    pub fn event(&mut self, idx: usize, event: Event) -> Action {
        match event {
            Event::Ready {
                warmup_ok,
                versions,
                host,
                open_ms,
            } => {
                if std::mem::replace(&mut self.ready_seen[idx], true) {
                    self.failures.push(format!(
                        "worker {idx} reported ready twice: does the launcher give every task \
                         its own rank ({})?",
                        crate::protocol::RANK_VARS.join(", ")
                    ));
                    return Action::Abort;
                }
                if let Some(h) = host {
                    self.m.hosts.insert(h);
                }
                self.m.open_ms.extend(open_ms);
                if let Some(want) = &self.expected
                    && versions.as_ref() != Some(want)
                {
                    let is = versions
                        .map_or("a build that reports no versions".into(), |v| v.to_string());
                    self.failures.push(format!(
                        "worker {idx} is {is}, not {want} as checked before the sweep started; \
                         was the worker binary replaced?"
                    ));
                    return Action::Abort;
                }
                self.ready += 1;
                self.m.warmup_committed += warmup_ok;
                if self.ready == self.worker_ids.len() && !self.released {
                    self.released = true;
                    return Action::Release;
                }
            }
            Event::Op(op) => self.op(idx, *op),
            Event::Paused | Event::Clock { .. } => {}
            Event::Trace { ops } => self.m.traces.push((self.worker_ids[idx], ops)),
            Event::Done {
                elapsed_ms,
                io,
                rss_peak_kib,
                stopped,
            } => {
                self.done[idx] = true;
                if let Some(why) = stopped {
                    let w = self.worker_ids[idx];
                    self.m.stopped.get_or_insert(format!("worker {w}: {why}"));
                }
                self.m.rss_peak_kib.extend(rss_peak_kib);
                self.m.window_ms = self.m.window_ms.max(elapsed_ms);
                match io {
                    Some(io) => self.m.io_workers += io,
                    None => self.io_unknown = true,
                }
            }
        }
        Action::Continue
    }

    fn op(&mut self, idx: usize, mut op: OpReport) {
        if op.class == Some(ErrorClass::Killed) {
            self.killed[idx] = true;
        }
        // Only cells of roles count entries not found apart.
        if self.roles[idx].is_none() && op.class == Some(ErrorClass::NotFound) {
            op.class = Some(ErrorClass::Other);
        }
        let m = &mut self.m;
        if op.io.is_none() {
            self.io_unknown = true;
        }
        let io = op.io.unwrap_or_default();
        m.attempt_ms += op.ms;
        // An open-loop operation's latency runs from its intended start; `ms` is its service.
        let latency = op.ms + op.lag_ms.unwrap_or(0.0);
        self.role_op(idx, &op, latency);
        if let Some([write, read]) = self.mixed {
            let kind = if op.read { read } else { write };
            self.history(idx, kind, &op, op.class.unwrap_or(ErrorClass::Other));
        }
        let m = &mut self.m;
        if let Some(lag) = op.lag_ms.filter(|_| !op.read) {
            m.open_loop.lagged(lag, op.ok.then_some(op.ms));
        }
        if let Some(end) = op.end_ms {
            match op.ok {
                true => m.timeline.success(end, latency, op.read),
                false => {
                    let class = op.class.unwrap_or(ErrorClass::Other);
                    m.timeline.failure(end, class.name());
                }
            }
        }
        if op.read {
            m.reads.attempts += 1;
            if op.ok {
                self.per_worker_reads[idx].record(latency);
                m.reads.io += io;
            } else {
                m.reads.errors += 1;
                m.reads.first_error = m.reads.first_error.take().or(op.err);
            }
            return;
        }
        m.attempts += 1;
        if op.ok {
            self.per_worker[idx].record(latency);
            m.committed.push((self.worker_ids[idx], op.i));
            m.io += io;
            if let Some(p) = op.path {
                m.path_round_trips += u64::from(p.round_trips);
                m.path_wait_ms += p.wait_ms;
                m.path_ops += 1;
                for (kind, ms) in p.wait_by_kind {
                    *m.path_wait_by_kind.entry(kind).or_default() += ms;
                }
                for (kind, n) in p.trips_by_kind {
                    *m.path_trips_by_kind.entry(kind).or_default() += n;
                }
                if let Some(f) = p.fastest_ms {
                    m.fastest_request_ms = Some(m.fastest_request_ms.map_or(f, |x| x.min(f)));
                }
            }
            return;
        }
        let (count, first) = match op.class.unwrap_or(ErrorClass::Other) {
            ErrorClass::Conflict => (&mut m.conflicts, &mut m.first_conflict),
            ErrorClass::Throttled => (&mut m.throttled, &mut m.first_throttled),
            ErrorClass::Network => (&mut m.network_errors, &mut m.first_network_error),
            ErrorClass::Other | ErrorClass::NotFound | ErrorClass::Killed => {
                (&mut m.other_errors, &mut m.first_other_error)
            }
            ErrorClass::Timeout => (&mut m.timeouts, &mut m.first_timeout),
        };
        *count += 1;
        *first = first.take().or(op.err);
    }

    /// A role's or a mixed cell's creation or removal (acknowledged, or indeterminate:
    /// abandoned at its timeout or its connection broken), listing of tables, look-up of one
    /// entry, or commit or read of the shared table's version, into the cell's history.
    fn history(
        &mut self,
        idx: usize,
        kind: crate::plan::Operation,
        op: &OpReport,
        class: ErrorClass,
    ) {
        use crate::consistency::{Op, Outcome, What, created_index};
        use crate::plan::{Entry, Names};
        let Some([start_us, end_us]) = op.at_us else {
            return;
        };
        // The shared table's version a commit made or a read returned.
        if let Some(version) = op.version.filter(|_| op.ok) {
            self.m.history.push(Op {
                client: self.worker_ids[idx],
                start_us,
                end_us,
                what: What::Versioned {
                    version,
                    commit: kind.is_write(),
                },
            });
            return;
        }
        let Some(target) = &op.target else {
            return;
        };
        // A commit acknowledged, or one that may have landed (a failed one did not).
        let commit_ended = op.ok || class.indeterminate();
        let outcome = match op.ok {
            true => Outcome::Acknowledged,
            false => Outcome::Indeterminate { landed: None },
        };
        let id = target.clone();
        let what = match kind.describe().names {
            // A listing says what it saw of the creations of its kind.
            Names::Lists if op.ok && op.seen.is_some() => What::Listed {
                namespace: id,
                tables: matches!(kind, crate::plan::Operation::ListTables { .. }),
                seen: op.seen.clone().unwrap_or_default(),
                gone: op.gone.clone(),
            },
            Names::ReadsGolden(_) if op.ok || class == ErrorClass::NotFound => {
                What::Probed { id, found: op.ok }
            }
            Names::Creates(_) if commit_ended => {
                let leaf = id.rsplit('$').next().unwrap_or_default();
                let Some((_, n)) = created_index(leaf) else {
                    return;
                };
                What::Created { id, n, outcome }
            }
            Names::RemovesGolden(entry) if commit_ended => What::Removed {
                id,
                table: entry == Entry::Table,
                outcome,
            },
            _ => return,
        };
        self.m.history.push(Op {
            client: self.worker_ids[idx],
            start_us,
            end_us,
            what,
        });
    }

    /// The pair's pacing found something wrong with this arm's workers.
    pub fn fail(&mut self, reason: String) {
        self.failures.push(reason);
    }

    /// Whether a failure was recorded.
    pub fn failed(&self) -> bool {
        !self.failures.is_empty()
    }

    /// Worker `idx` printed something that is not an event.
    pub fn garbage(&mut self, idx: usize, line: String) {
        self.failures
            .push(format!("worker {idx} printed an unexpected line: {line}"));
    }

    /// Worker `idx` exited; `status` describes how, `tail` is the end of its stderr.
    pub fn exited(&mut self, idx: usize, success: bool, status: String, tail: String) -> Action {
        if success && self.done[idx] {
            return Action::Continue;
        }
        // Killed mid-commit as planted, after it said so: its commit is indeterminate, the
        // others go on, and the record says it stopped.
        if self.killed[idx] && !self.done[idx] {
            self.done[idx] = true;
            let w = self.worker_ids[idx];
            (self.m.stopped).get_or_insert(format!("worker {w}: killed mid-commit (planted)"));
            return Action::Continue;
        }
        self.lost(
            format!("worker {idx} exited with {status} before finishing"),
            &tail,
        )
    }

    /// The launcher that ran all the workers exited: one failure for all of them, unless it
    /// succeeded after every worker finished.
    pub fn launcher_exited(&mut self, success: bool, status: String, tail: String) -> Action {
        let unfinished: Vec<String> = (0..self.done.len())
            .filter(|&w| !self.done[w])
            .map(|w| w.to_string())
            .collect();
        if success && unfinished.is_empty() {
            return Action::Continue;
        }
        let which = if unfinished.is_empty() {
            String::new()
        } else if unfinished.len() == self.done.len() {
            " before any worker finished".to_string()
        } else {
            format!(" before workers {} finished", unfinished.join(", "))
        };
        self.lost(format!("the launcher exited with {status}{which}"), &tail)
    }

    /// Record a failure with the end of the process's stderr; before release, stop the cell.
    fn lost(&mut self, what: String, tail: &str) -> Action {
        self.failures.push(if tail.is_empty() {
            what
        } else {
            format!("{what}; its stderr ends with:\n{tail}")
        });
        if self.released {
            Action::Continue
        } else {
            Action::Abort
        }
    }

    /// Worker `idx`'s clock when `go` reached it (`wall_us`), which the coordinator sent at
    /// `sent_us` and heard back of at `heard_us` (its own clock): the bounds of the worker's
    /// offset.
    pub fn clock(&mut self, idx: usize, wall_us: u64, (sent_us, heard_us): (u64, u64)) {
        let (w, s, h) = (wall_us as i64, sent_us as i64, heard_us as i64);
        (self.m.clocks).insert(self.worker_ids[idx], (w - h, w - s));
    }

    /// Successful operations (commits) folded so far.
    pub fn succeeded(&self) -> u64 {
        self.m.committed.len() as u64
    }

    pub fn set_setup_ms(&mut self, ms: f64) {
        self.m.setup_ms = ms;
    }

    /// What the cell measured, or why it failed.
    pub fn finish(mut self) -> Result<Measured, String> {
        if !self.failures.is_empty() {
            return Err(self.failures.join("\n"));
        }
        for (w, r) in self.per_worker.iter().zip(&self.per_worker_reads) {
            self.m.latencies.merge(w);
            self.m.reads.latencies.merge(r);
        }
        self.m.io_known = !self.io_unknown;
        Ok(self.m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::IoCounts;

    fn ready(warmup_ok: u64) -> Event {
        Event::Ready {
            warmup_ok,
            versions: None,
            host: None,
            open_ms: None,
        }
    }

    fn ready_on(host: &str) -> Event {
        Event::Ready {
            warmup_ok: 0,
            versions: None,
            host: Some(host.into()),
            open_ms: None,
        }
    }

    /// A role's operations go into the history as what they are: a creation, a listing
    /// of tables or of namespaces with what it saw (of its kind), a look-up found or not; a
    /// listing that says nothing of what it saw and a failed commit stay out.
    #[test]
    fn a_role_s_operations_go_into_the_history_as_what_they_are() {
        use crate::consistency::{Outcome, What};
        use crate::plan::Operation;
        let mix = vec![
            Operation::DeclareTable,
            Operation::ListTables { cold: false },
            Operation::ListNamespaces { cold: false },
            Operation::TableExists { cold: false },
        ];
        let mut f = Fold::new(vec![0], None).with_roles(vec![Some((0, mix))]);
        f.event(0, ready(0));
        let report = |k: u32, ok: bool, class, target: &str, seen: Option<Vec<_>>| {
            let Event::Op(mut o) = failed(u64::from(k), 1.0, ok, false, class, None) else {
                unreachable!()
            };
            (o.op, o.target, o.at_us, o.seen) = (Some(k), Some(target.into()), Some([1, 2]), seen);
            Event::Op(o)
        };
        f.event(0, report(0, true, None, "ns_0$bench_d0_3", None));
        f.event(
            0,
            report(
                0,
                false,
                Some(ErrorClass::Conflict),
                "ns_0$bench_d0_4",
                None,
            ),
        );
        f.event(0, report(1, true, None, "ns_0", Some(vec![])));
        f.event(0, report(2, true, None, "ns_0", None));
        f.event(0, report(2, true, None, "ns_0", Some(vec![])));
        let not_found = Some(ErrorClass::NotFound);
        f.event(0, report(3, false, not_found, "ns_0$table_1", None));
        f.event(0, done(1.0));
        let m = f.finish().unwrap();
        let what: Vec<&What> = m.history.iter().map(|o| &o.what).collect();
        assert_eq!(
            what,
            [
                &What::Created {
                    id: "ns_0$bench_d0_3".into(),
                    n: 3,
                    outcome: Outcome::Acknowledged
                },
                &What::Listed {
                    namespace: "ns_0".into(),
                    tables: true,
                    seen: vec![],
                    gone: None
                },
                &What::Listed {
                    namespace: "ns_0".into(),
                    tables: false,
                    seen: vec![],
                    gone: None
                },
                &What::Probed {
                    id: "ns_0$table_1".into(),
                    found: false
                },
            ]
        );
    }

    #[test]
    fn a_launcher_s_exit_is_one_failure_naming_the_unfinished_workers() {
        // It fails before anything starts.
        let mut f = Fold::new(vec![0, 1, 2], None);
        let a = f.launcher_exited(
            false,
            "exit status: 1".into(),
            "srun: error: no nodes".into(),
        );
        assert_eq!(a, Action::Abort);
        let err = f.finish().unwrap_err();
        assert_eq!(
            err,
            "the launcher exited with exit status: 1 before any worker finished; its stderr \
             ends with:\nsrun: error: no nodes"
        );
        // It dies after release with one worker done.
        let mut f = Fold::new(vec![0, 1], None);
        f.event(0, ready(0));
        f.event(1, ready(0));
        f.event(0, done(1.0));
        let a = f.launcher_exited(false, "signal: 9 (SIGKILL)".into(), String::new());
        assert_eq!(a, Action::Continue);
        let err = f.finish().unwrap_err();
        assert!(err.contains("before workers 1 finished"), "{err}");
        // It ends well after every worker is done.
        let mut f = Fold::new(vec![0, 1], None);
        for w in 0..2 {
            f.event(w, ready(0));
        }
        for w in 0..2 {
            f.event(w, done(1.0));
        }
        assert_eq!(
            f.launcher_exited(true, "exit status: 0".into(), String::new()),
            Action::Continue
        );
        assert!(f.finish().is_ok());
    }

    #[test]
    fn open_loop_latency_runs_from_the_intended_start_and_service_from_the_actual_one() {
        let mut f = Fold::new(vec![0], None);
        assert_eq!(f.event(0, ready_on("n1")), Action::Release);
        for (i, (ms, lag)) in [(10.0, 0.2), (10.0, 30.0), (12.0, 0.5)]
            .into_iter()
            .enumerate()
        {
            let Event::Op(mut o) = op(i as u64, ms, true) else {
                unreachable!()
            };
            o.lag_ms = Some(lag);
            f.event(0, Event::Op(o));
        }
        let m = f.finish().unwrap();
        let (latency, service) = (m.latencies.summary(), m.open_loop.service.summary());
        assert!((latency.max - 40.0).abs() < 1e-9, "{latency:?}");
        assert!((service.max - 12.0).abs() < 1e-9, "{service:?}");
        assert_eq!((m.open_loop.late, m.open_loop.max_lag_ms), (1, 30.0));
        assert!(m.open_loop.seen);
        let s = m.timeline.series().unwrap();
        assert!(
            s.p99_ms.iter().flatten().any(|&p| (p - 40.0).abs() < 0.1),
            "{s:?}"
        );
    }

    #[test]
    fn hosts_are_collected_and_a_rank_given_twice_stops_the_cell() {
        let mut f = Fold::new(vec![0, 1, 2], None);
        assert_eq!(f.event(0, ready_on("n1")), Action::Continue);
        assert_eq!(f.event(1, ready_on("n2")), Action::Continue);
        assert_eq!(f.event(2, ready_on("n1")), Action::Release);
        for w in 0..3 {
            f.event(w, op(0, 1.0, true));
            f.event(
                w,
                Event::Done {
                    elapsed_ms: 2.0,
                    io: None,
                    rss_peak_kib: None,
                    stopped: None,
                },
            );
        }
        let m = f.finish().unwrap();
        assert_eq!(m.hosts.into_iter().collect::<Vec<_>>(), ["n1", "n2"]);
        // Two tasks with the same rank: one worker never reports, the other twice.
        let mut f = Fold::new(vec![0, 1], None);
        assert_eq!(f.event(0, ready_on("n1")), Action::Continue);
        assert_eq!(f.event(0, ready_on("n2")), Action::Abort);
        let err = f.finish().unwrap_err();
        assert!(
            err.contains("ready twice") && err.contains("SLURM_PROCID"),
            "{err}"
        );
    }

    fn op(i: u64, ms: f64, ok: bool) -> Event {
        failed(i, ms, ok, false, None, None)
    }

    /// An operation event with one get of 100 bytes.
    fn failed(
        i: u64,
        ms: f64,
        ok: bool,
        read: bool,
        class: Option<ErrorClass>,
        err: Option<&str>,
    ) -> Event {
        Event::Op(Box::new(OpReport {
            i,
            ms,
            ok,
            read,
            class,
            err: err.map(str::to_string),
            io: Some(IoCounts {
                get: 1,
                read_bytes: 100,
                ..IoCounts::default()
            }),
            path: Some(crate::stats::CriticalPath {
                round_trips: 2,
                wait_ms: ms / 2.0,
                wait_by_kind: [("put".to_string(), ms / 2.0)].into(),
                trips_by_kind: [("put".to_string(), 2.0)].into(),
                fastest_ms: Some(ms / 4.0),
            }),
            end_ms: Some(i as f64 * 1000.0 + ms),
            lag_ms: None,
            op: None,
            target: None,
            at_us: None,
            seen: None,
            gone: None,
            version: None,
        }))
    }

    fn done(elapsed_ms: f64) -> Event {
        Event::Done {
            elapsed_ms,
            io: Some(IoCounts {
                list: 1,
                ..IoCounts::default()
            }),
            rss_peak_kib: Some(40_000 + elapsed_ms as u64),
            stopped: None,
        }
    }

    /// Each worker's start-up (from its ready) and peak memory (from its done) are kept.
    #[test]
    fn start_up_and_memory_come_from_every_worker() {
        let mut f = Fold::new(vec![0, 1], None);
        for (idx, ms) in [(0, 120.0), (1, 80.0)] {
            let ready = Event::Ready {
                warmup_ok: 0,
                versions: None,
                host: None,
                open_ms: Some(ms),
            };
            f.event(idx, ready);
        }
        f.event(0, done(5.0));
        f.event(1, done(7.0));
        let m = f.finish().unwrap();
        assert_eq!(m.open_ms, [120.0, 80.0]);
        assert_eq!(m.rss_peak_kib, [40_005, 40_007]);
    }

    #[test]
    fn release_comes_once_when_every_worker_is_ready() {
        let mut f = Fold::new(vec![0, 1], None);
        assert_eq!(f.event(1, ready(2)), Action::Continue);
        assert_eq!(f.event(0, ready(1)), Action::Release);
        for idx in 0..2 {
            assert_eq!(f.event(idx, done(1.0)), Action::Continue);
            assert_eq!(
                f.exited(idx, true, "exit 0".into(), String::new()),
                Action::Continue
            );
        }
        assert_eq!(f.finish().unwrap().warmup_committed, 3);
    }

    #[test]
    fn events_fold_into_counts_classes_latencies_and_the_window() {
        let mut f = Fold::new(vec![7, 9], None);
        f.event(0, ready(0));
        f.event(1, ready(0));
        f.event(0, op(0, 2.0, true));
        f.event(1, op(0, 4.0, true));
        let conflict = Some(ErrorClass::Conflict);
        f.event(1, failed(1, 9.0, false, false, conflict, Some("c1")));
        f.event(1, failed(2, 9.0, false, false, conflict, Some("c2")));
        f.event(
            0,
            failed(1, 9.0, false, false, Some(ErrorClass::Other), Some("boom")),
        );
        f.event(
            0,
            failed(
                2,
                9.0,
                false,
                false,
                Some(ErrorClass::Throttled),
                Some("503"),
            ),
        );
        f.event(
            0,
            failed(
                3,
                9.0,
                false,
                false,
                Some(ErrorClass::Network),
                Some("reset"),
            ),
        );
        f.event(0, failed(0, 0.5, true, true, None, None));
        f.event(0, failed(1, 0.7, false, true, None, Some("r")));
        f.event(0, done(30.0));
        f.event(1, done(45.0));
        f.set_setup_ms(12.0);
        let m = f.finish().unwrap();
        assert_eq!((m.attempts, m.conflicts, m.other_errors), (7, 2, 1));
        assert_eq!((m.throttled, m.network_errors), (1, 1));
        assert_eq!(m.first_conflict.as_deref(), Some("c1"));
        assert_eq!(m.first_other_error.as_deref(), Some("boom"));
        assert_eq!(m.first_throttled.as_deref(), Some("503"));
        assert_eq!(m.first_network_error.as_deref(), Some("reset"));
        // Requests of the successful operations only; the workers' whole lives apart.
        assert_eq!((m.io.get, m.io.read_bytes), (2, 200));
        assert_eq!(m.reads.io.get, 1);
        assert_eq!(m.io_workers.list, 2);
        assert!(m.io_known);
        assert_eq!(m.committed, [(7, 0), (9, 0)], "worker ids, not indices");
        assert_eq!(m.latencies.summary().count, 2);
        // The successful commits' critical paths, summed (reads and failures apart).
        assert_eq!((m.path_ops, m.path_round_trips), (2, 4));
        assert!((m.path_wait_ms - 3.0).abs() < 1e-9);
        // By kind: what the operations reported, summed.
        assert!((m.path_wait_by_kind["put"] - 3.0).abs() < 1e-9);
        assert!((m.path_trips_by_kind["put"] - 4.0).abs() < 1e-9);
        assert_eq!(
            m.fastest_request_ms,
            Some(0.5),
            "the successful commits' shortest"
        );
        assert_eq!(m.latencies.summary().max, 4.0);
        assert_eq!((m.reads.attempts, m.reads.errors), (2, 1));
        assert_eq!(m.reads.latencies.summary().count, 1);
        assert_eq!(m.window_ms, 45.0, "the slowest worker's window");
        assert_eq!(m.setup_ms, 12.0);
    }

    #[test]
    fn a_worker_lost_before_release_aborts_and_after_release_fails_the_cell() {
        let mut f = Fold::new(vec![0, 1], None);
        f.event(0, ready(0));
        assert_eq!(
            f.exited(1, false, "exit status: 1".into(), "oops".into()),
            Action::Abort
        );
        let err = f.finish().unwrap_err();
        assert!(
            err.contains("worker 1 exited with exit status: 1") && err.contains("oops"),
            "{err}"
        );

        let mut f = Fold::new(vec![0], None);
        f.event(0, ready(0));
        f.event(0, op(0, 1.0, true));
        // Exit 0 without `done` is a failure too.
        assert_eq!(
            f.exited(0, true, "exit status: 0".into(), String::new()),
            Action::Continue
        );
        assert!(f.finish().is_err());

        let mut f = Fold::new(vec![0], None);
        f.garbage(0, "hello".into());
        assert!(f.finish().unwrap_err().contains("unexpected line: hello"));
    }

    #[test]
    fn a_worker_of_another_build_stops_the_cell_before_release() {
        let own = Versions::own();
        let mut f = Fold::new(vec![0, 1], Some(own.clone()));
        let ok = Event::Ready {
            warmup_ok: 0,
            versions: Some(own.clone()),
            host: None,
            open_ms: None,
        };
        assert_eq!(f.event(0, ok), Action::Continue);
        let other = Versions {
            lance: "0.0.1".into(),
            ..own
        };
        let stranger = Event::Ready {
            warmup_ok: 0,
            versions: Some(other),
            host: None,
            open_ms: None,
        };
        assert_eq!(f.event(1, stranger), Action::Abort);
        let err = f.finish().unwrap_err();
        assert!(
            err.contains("worker 1 is bench") && err.contains("lance 0.0.1"),
            "{err}"
        );
        let mut f = Fold::new(vec![0], Some(Versions::own()));
        assert_eq!(f.event(0, ready(0)), Action::Abort);
        assert!(f.finish().unwrap_err().contains("reports no versions"));
    }
}
