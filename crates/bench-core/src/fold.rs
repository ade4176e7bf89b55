//! The pure part of running a cell: folding the workers' events (and their exits) into
//! what the cell measured — its operation log, each report judged once ([`Outcome::of`]) —
//! and deciding when to release them. No processes, no clock.

use crate::measured::Measured;
use crate::oplog::{ErrorClass, Observed, Op, Outcome};
use crate::plan::{Names, Operation};
use crate::protocol::{Event, OpReport, Versions, WorkerArgs};
use crate::versions::{At, TICKETED, Told};

/// What the driver must do after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Continue,
    /// Every worker is ready: release them all now.
    Release,
    /// A worker died before release: the cell can never start; stop the others.
    Abort,
}

/// What one worker runs, as its arguments say: its id, the cell's operation, a mixed cell's
/// interleaved read, a role's place and mix. It tells which operation each report is of.
#[derive(Debug, Clone, PartialEq)]
pub struct Runs {
    pub id: u32,
    pub operation: Operation,
    pub read: Option<Operation>,
    pub role: Option<(u32, Vec<Operation>)>,
}

impl Runs {
    /// Worker `id` running `operation` alone.
    pub fn plain(id: u32, operation: Operation) -> Runs {
        Runs {
            id,
            operation,
            read: None,
            role: None,
        }
    }

    /// What a worker started with `args` runs.
    pub fn of(args: &WorkerArgs) -> Runs {
        Runs {
            id: args.worker_id,
            operation: args.operation,
            read: args.mix().map(|(read, _)| read),
            role: (args.role.as_ref()).map(|r| (r.index, r.role.mix.iter().map(|m| m.0).collect())),
        }
    }

    /// The operation a report is of, and its role's place and its place in the mix.
    fn operation(&self, op: &OpReport) -> (Operation, Option<(u32, u32)>) {
        if let (Some((role, mix)), Some(at)) = (&self.role, op.op)
            && let Some(&kind) = mix.get(at as usize)
        {
            return (kind, Some((*role, at)));
        }
        match (op.attempt.read, self.read) {
            (true, Some(read)) => (read, None),
            _ => (self.operation, None),
        }
    }
}

/// Whether an operation names an entry (its report then names it, unless nothing was left
/// for it to name and it never reached the catalog).
fn names_entry(operation: Operation) -> bool {
    match operation.describe().names {
        Names::Creates(..)
        | Names::ReadsGolden(_)
        | Names::RemovesGolden(_)
        | Names::Lists(_)
        | Names::Property => true,
        Names::Root => false,
    }
}

/// One report as a record of the operation log: its operation, its outcome, what it showed.
pub fn logged(runs: &Runs, r: OpReport) -> Op {
    let (operation, role) = runs.operation(&r);
    let mut attempt = r.attempt;
    attempt.class = (!r.ok).then(|| attempt.class.unwrap_or(ErrorClass::Other));
    // A failed operation with nothing left to name never reached the catalog.
    let reached = attempt.entry.is_some() || !names_entry(operation);
    let outcome = match (attempt.class, reached) {
        (Some(_), false) => Outcome::Failed,
        (class, _) => Outcome::of(operation, class, attempt.resent),
    };
    let observed = match (r.seen, r.version) {
        (Some(seen), _) => Observed::Listed {
            seen,
            gone: r.gone,
            twice: r.twice.unwrap_or_default(),
            pages: r.pages.unwrap_or_default(),
        },
        (None, Some(v)) => Observed::Version(v),
        (None, None) => r.cleaned.map_or(Observed::Nothing, Observed::Cleaned),
    };
    Op {
        client: runs.id,
        role,
        operation,
        attempt,
        outcome,
        observed,
        landed: None,
    }
}

/// The state of a running cell as its workers' events arrive.
#[derive(Debug)]
pub struct Fold {
    /// What each worker runs, by index.
    runs: Vec<Runs>,
    /// What every worker must report being, when checked.
    expected: Option<Versions>,
    m: Measured,
    ready: usize,
    ready_seen: Vec<bool>,
    released: bool,
    done: Vec<bool>,
    failures: Vec<String>,
    /// A worker reported an operation or its end without its requests.
    io_unknown: bool,
    /// Measured commits that succeeded so far.
    succeeded: u64,
    /// Workers that said they are being killed mid-commit (a planted fault): their exit
    /// ends them, not the cell.
    killed: Vec<bool>,
    /// A worker killed from outside after release ends itself, not the cell
    /// ([`Fold::killed_from_outside`]).
    tolerant: bool,
    /// The run's history as it goes, where one is kept ([`Fold::journal`]).
    journal: Option<Box<dyn Journal>>,
}

/// What follows the log as it grows: the run's history written as it goes (the history's
/// journal, a layer above).
pub trait Journal: std::fmt::Debug + Send {
    /// The log so far (its new operations at its end), with the hosts and clients' clocks
    /// known by then.
    fn catch_up(
        &mut self,
        log: &[Op],
        hosts: &std::collections::BTreeSet<String>,
        clocks: &std::collections::BTreeMap<u32, crate::offsets::Offsets>,
    );
    /// Everything handed to it written: the lines written, or why it could not be.
    fn close(self: Box<Self>) -> Result<u64, String>;
}

impl Fold {
    pub fn new(runs: Vec<Runs>, expected: Option<Versions>) -> Fold {
        let n = runs.len();
        Fold {
            runs,
            expected,
            m: Measured::default(),
            ready: 0,
            ready_seen: vec![false; n],
            released: false,
            done: vec![false; n],
            failures: Vec::new(),
            io_unknown: false,
            succeeded: 0,
            killed: vec![false; n],
            tolerant: false,
            journal: None,
        }
    }

    /// Hand the log to `journal` as each operation's report comes: a coordinator killed
    /// mid-cell leaves the history it writes up to the last report.
    pub fn journal(&mut self, journal: Box<dyn Journal>) {
        self.journal = Some(journal);
    }

    /// A worker killed from outside after release (a signal: SIGKILL, an out-of-memory
    /// kill) ends itself, not the cell: where no pairing waits on its operations.
    pub fn tolerate_kills(&mut self) {
        self.tolerant = true;
    }

    /// Worker `idx` was killed by a signal (`status`). After release, where tolerated: every
    /// write it began (`invoked`, as it wrote each before beginning it) and never reported is
    /// in the log as unknown — `killed`, looked up like any other —, and the others go on.
    /// Otherwise as [`Fold::exited`].
    pub fn killed_from_outside(
        &mut self,
        idx: usize,
        invoked: Vec<OpReport>,
        status: String,
        tail: String,
    ) -> Action {
        if !self.tolerant || !self.released || self.done[idx] || self.killed[idx] {
            return self.exited(idx, false, status, tail);
        }
        let w = self.runs[idx].id;
        // An operation is known by its kind (a read, or not) and its index among its kind.
        let reported: std::collections::HashSet<(bool, u64)> = (self.m.log.iter())
            .filter(|o| o.client == w && !o.attempt.warm)
            .map(|o| (o.attempt.read, o.attempt.i))
            .collect();
        let mut unknown = 0;
        for report in invoked
            .into_iter()
            .filter(|r| !reported.contains(&(r.attempt.read, r.attempt.i)))
        {
            self.op(idx, report);
            unknown += 1;
        }
        self.done[idx] = true;
        let unwritten = match self.m.invokes_unwritten.get(&w) {
            Some((n, e)) => format!(
                "; {n} of its invoke lines could not be written ({e}), so an operation it had \
                 in flight may be missing"
            ),
            None => String::new(),
        };
        self.m.stopped.get_or_insert(format!(
            "worker {w}: killed from outside ({status}); {unknown} operation(s) it began and \
             never reported are unknown (writes looked up){unwritten}"
        ));
        Action::Continue
    }

    /// One event of worker `idx`.
    pub fn event(&mut self, idx: usize, event: Event) -> Action {
        match event {
            Event::Ready {
                versions,
                host,
                open_ms,
                planted,
            } => {
                self.m.planted.extend(planted);
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
                if self.ready == self.runs.len() && !self.released {
                    self.released = true;
                    return Action::Release;
                }
            }
            Event::Op(op) => self.op(idx, *op),
            Event::Paused | Event::Clock { .. } | Event::Ask { .. } => {}
            Event::Trace { ops } => self.m.traces.push((self.runs[idx].id, ops)),
            Event::Done {
                elapsed_ms,
                io,
                rss_peak_kib,
                stopped,
                clock,
            } => {
                self.done[idx] = true;
                let id = self.runs[idx].id;
                if let (Some(c), Some(o)) = (clock, self.m.clocks.get_mut(&id)) {
                    let (lo, hi, at_us) = c.bounds();
                    o.done = Some(crate::offsets::Bound { lo, hi, at_us });
                }
                if let Some(why) = stopped {
                    let w = self.runs[idx].id;
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

    /// An operation's report, into the log.
    fn op(&mut self, idx: usize, report: OpReport) {
        if report.attempt.class == Some(ErrorClass::Killed) {
            self.killed[idx] = true;
        }
        self.io_unknown |= report.attempt.io.is_none() && !report.attempt.warm;
        if let Some(u) = &report.invokes_unwritten {
            self.m
                .invokes_unwritten
                .insert(self.runs[idx].id, u.clone());
        }
        let op = logged(&self.runs[idx], report);
        let counted = !op.attempt.warm && !op.attempt.read && op.outcome == Outcome::Ok;
        self.succeeded += u64::from(counted);
        self.m.log.push(op);
        if let Some(j) = &mut self.journal {
            j.catch_up(&self.m.log, &self.m.hosts, &self.m.clocks);
        }
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
            let w = self.runs[idx].id;
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

    /// Worker `idx`'s clock when `go` reached it (`clock_us`), which the coordinator sent at
    /// `sent_us` and heard back of at `heard_us` (its own clock): the first bounds of the
    /// worker's offset (the second come with its `done`).
    pub fn clock(&mut self, idx: usize, clock_us: u64, (sent_us, heard_us): (u64, u64)) {
        let (w, s, h) = (clock_us as i64, sent_us as i64, heard_us as i64);
        let go = crate::offsets::Bound {
            lo: w - h,
            hi: w - s,
            at_us: clock_us,
        };
        (self.m.clocks).insert(
            self.runs[idx].id,
            crate::offsets::Offsets { go, done: None },
        );
    }

    /// Successful operations (commits) folded so far.
    pub fn succeeded(&self) -> u64 {
        self.succeeded
    }

    pub fn set_setup_ms(&mut self, ms: f64) {
        self.m.setup_ms = ms;
    }

    /// What the cell measured, or why it failed.
    pub fn finish(mut self) -> Result<Measured, String> {
        // The history so far, all of it on disk (a failed cell's stays as it was written).
        if let Some(Err(e)) = self.journal.take().map(|j| j.close()) {
            self.m.journal_error = Some(e);
        }
        if !self.failures.is_empty() {
            return Err(self.failures.join("\n"));
        }
        settle(&mut self.m.log);
        self.m.tally();
        self.m.io_known = !self.io_unknown;
        Ok(self.m)
    }
}

/// Settle each read of `log` that served at least a version, unseen, by the next operation
/// of its client through the same namespace (not one opened for a cold read) that names the
/// version it held as it began. Reports of one client arrive in the order it ran them.
pub fn settle(log: &mut [Op]) {
    let mut open: std::collections::HashMap<u32, usize> = Default::default();
    for i in 0..log.len() {
        let (client, cold) = (log[i].client, log[i].operation.describe().cold);
        let Some(at) = log[i].attempt.manifest else {
            continue;
        };
        if cold {
            continue;
        }
        if let Some(before) = at.before
            && let Some(j) = open.remove(&client)
            && let Some(held) = log[j].attempt.manifest.as_mut()
            && held.at_least.is_some_and(|k| before >= k)
        {
            (held.served, held.at_least) = (Some(before), None);
            if let Observed::Listed { pages, .. } = &mut log[j].observed
                && let Some(last) = pages.last_mut().and_then(|p| p.at.as_mut())
                && last.at_least.is_some_and(|k| before >= k)
            {
                (last.served, last.at_least) = (Some(before), None);
            }
        }
        if at.at_least.is_some() {
            open.insert(client, i);
        }
    }
}

/// Give each read of `log` that named its call ([`At::call`]) or was given a ticket
/// ([`At::ticket`]), and each page of a listing given one, what the servers `told` of it
/// after the cell.
pub fn join(log: &mut [Op], told: &[Told]) {
    let by: std::collections::HashMap<(u32, u64), &str> = (told.iter())
        .map(|t| ((t.client, t.call), t.said.as_str()))
        .collect();
    let give = |client: u32, at: &mut At| {
        let said = (at.call.map(|c| (client, c)).into_iter())
            .chain(at.ticket.map(|t| (TICKETED, t)))
            .find_map(|k| by.get(&k));
        if let Some(heard) = said.and_then(|s| At::heard(s))
            && at.made.is_none()
            && at.served.is_none()
        {
            (at.served, at.served_to) = (heard.served, heard.served_to);
        }
    };
    for op in log.iter_mut() {
        if let Observed::Listed { pages, .. } = &mut op.observed {
            for at in pages.iter_mut().filter_map(|p| p.at.as_mut()) {
                give(op.client, at);
            }
        }
        if let Some(at) = op.attempt.manifest.as_mut() {
            give(op.client, at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oplog::sample;
    use crate::stats::IoCounts;
    use crate::versions::Page;

    /// Workers of these ids creating namespaces.
    fn plain(ids: &[u32]) -> Vec<Runs> {
        (ids.iter())
            .map(|&id| Runs::plain(id, Operation::CreateNamespace))
            .collect()
    }

    fn ready() -> Event {
        Event::Ready {
            versions: None,
            host: None,
            open_ms: None,
            planted: Vec::new(),
        }
    }

    fn ready_on(host: &str) -> Event {
        Event::Ready {
            versions: None,
            host: Some(host.into()),
            open_ms: None,
            planted: Vec::new(),
        }
    }

    /// Each report is one record of the log, with its operation (a role's from its mix, a
    /// mixed cell's read from its arguments) and its one outcome.
    #[test]
    fn every_report_is_one_record_with_its_operation_and_outcome() {
        let mix = vec![
            Operation::DeclareTable,
            Operation::ListTables { cold: false },
            Operation::DropTable,
            Operation::TableExists { cold: false },
        ];
        let role = Runs {
            role: Some((1, mix)),
            ..Runs::plain(4, Operation::DeclareTable)
        };
        let mixed = Runs {
            read: Some(Operation::ListNamespaces { cold: false }),
            ..Runs::plain(5, Operation::CreateNamespace)
        };
        let mut f = Fold::new(vec![role, mixed], None);
        let report = |at: Option<u32>, ok: bool, class, target: Option<&str>| {
            let Event::Op(mut o) = failed(0, 1.0, ok, false, class, None) else {
                unreachable!()
            };
            (o.op, o.attempt.entry) = (at, target.map(str::to_string));
            Event::Op(o)
        };
        // A warm-up's creation, before ready: logged, not measured.
        let Event::Op(mut warm) = report(Some(0), true, None, Some("ns_0$bench_d4_0_warm")) else {
            unreachable!()
        };
        warm.attempt.warm = true;
        f.event(0, Event::Op(warm));
        f.event(0, ready());
        f.event(1, ready());
        f.event(0, report(Some(0), true, None, Some("ns_0$bench_d4_0")));
        let conflict = Some(ErrorClass::Conflict);
        f.event(0, report(Some(0), false, conflict, Some("ns_0$bench_d4_1")));
        f.event(0, report(Some(1), true, None, Some("ns_0")));
        // A drop refused after its effect, and one with nothing left to remove.
        let refused = Some(ErrorClass::Refused);
        f.event(0, report(Some(2), false, refused, Some("ns_0$table_3")));
        f.event(0, report(Some(2), false, refused, None));
        let network = Some(ErrorClass::Network);
        f.event(0, report(Some(3), false, network, Some("ns_0$table_1")));
        let Event::Op(mut read) = report(None, false, network, Some("")) else {
            unreachable!()
        };
        read.attempt.read = true;
        f.event(1, Event::Op(read));
        f.event(1, report(None, false, network, Some("bench_w5_0")));
        f.event(0, done(1.0));
        f.event(1, done(1.0));
        let m = f.finish().unwrap();
        let got: Vec<_> = (m.log.iter())
            .map(|o| (o.client, o.role, o.operation, o.attempt.warm, o.outcome))
            .collect();
        use Outcome::*;
        let list = Operation::ListTables { cold: false };
        let exists = Operation::TableExists { cold: false };
        assert_eq!(
            got,
            [
                (4, Some((1, 0)), Operation::DeclareTable, true, Ok),
                (4, Some((1, 0)), Operation::DeclareTable, false, Ok),
                (4, Some((1, 0)), Operation::DeclareTable, false, Failed),
                (4, Some((1, 1)), list, false, Ok),
                (4, Some((1, 2)), Operation::DropTable, false, Unknown),
                (4, Some((1, 2)), Operation::DropTable, false, Failed),
                (4, Some((1, 3)), exists, false, Failed),
                (
                    5,
                    None,
                    Operation::ListNamespaces { cold: false },
                    false,
                    Failed
                ),
                (5, None, Operation::CreateNamespace, false, Unknown),
            ]
        );
        assert_eq!(m.warmup_committed, 1, "the warm-up's, counted apart");
        assert_eq!((m.attempts, m.reads.attempts), (7, 1));
        assert_eq!(m.roles[&(1, 2)].attempts, 2);
    }

    #[test]
    fn a_launcher_s_exit_is_one_failure_naming_the_unfinished_workers() {
        // It fails before anything starts.
        let mut f = Fold::new(plain(&[0, 1, 2]), None);
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
        let mut f = Fold::new(plain(&[0, 1]), None);
        f.event(0, ready());
        f.event(1, ready());
        f.event(0, done(1.0));
        let a = f.launcher_exited(false, "signal: 9 (SIGKILL)".into(), String::new());
        assert_eq!(a, Action::Continue);
        let err = f.finish().unwrap_err();
        assert!(err.contains("before workers 1 finished"), "{err}");
        // It ends well after every worker is done.
        let mut f = Fold::new(plain(&[0, 1]), None);
        for w in 0..2 {
            f.event(w, ready());
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
        let mut f = Fold::new(plain(&[0]), None);
        assert_eq!(f.event(0, ready_on("n1")), Action::Release);
        for (i, (ms, lag)) in [(10.0, 0.2), (10.0, 30.0), (12.0, 0.5)]
            .into_iter()
            .enumerate()
        {
            let Event::Op(mut o) = op(i as u64, ms, true) else {
                unreachable!()
            };
            o.attempt.lag_ms = Some(lag);
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
        let mut f = Fold::new(plain(&[0, 1, 2]), None);
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
                    clock: None,
                },
            );
        }
        let m = f.finish().unwrap();
        assert_eq!(m.hosts.into_iter().collect::<Vec<_>>(), ["n1", "n2"]);
        // Two tasks with the same rank: one worker never reports, the other twice.
        let mut f = Fold::new(plain(&[0, 1]), None);
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
        Event::Op(Box::new(OpReport::of(
            crate::oplog::Attempt {
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
                // A worker that sees its store client's resends: none.
                resent: Some(0),
                ..crate::oplog::Attempt::new(i, ms)
            },
            ok,
        )))
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
            clock: None,
        }
    }

    /// Each worker's start-up (from its ready) and peak memory (from its done) are kept.
    #[test]
    fn start_up_and_memory_come_from_every_worker() {
        let mut f = Fold::new(plain(&[0, 1]), None);
        for (idx, ms) in [(0, 120.0), (1, 80.0)] {
            let ready = Event::Ready {
                versions: None,
                host: None,
                open_ms: Some(ms),
                planted: Vec::new(),
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
        let mut f = Fold::new(plain(&[0, 1]), None);
        assert_eq!(f.event(1, ready()), Action::Continue);
        assert_eq!(f.event(0, ready()), Action::Release);
        for idx in 0..2 {
            assert_eq!(f.event(idx, done(1.0)), Action::Continue);
            assert_eq!(
                f.exited(idx, true, "exit 0".into(), String::new()),
                Action::Continue
            );
        }
        let m = f.finish().unwrap();
        assert_eq!((m.warmup_committed, m.log.len()), (0, 0));
    }

    #[test]
    fn events_fold_into_counts_classes_latencies_and_the_window() {
        let mut f = Fold::new(plain(&[7, 9]), None);
        f.event(0, ready());
        f.event(1, ready());
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
        let committed: Vec<_> = (m.log.iter())
            .filter(|o| o.outcome == Outcome::Ok && !o.attempt.read)
            .map(|o| (o.client, o.attempt.i))
            .collect();
        assert_eq!(committed, [(7, 0), (9, 0)], "worker ids, not indices");
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

    /// A worker killed from outside after release (where no pairing waits on it) ends
    /// itself, not the cell: each write it began and never reported is unknown (`killed`,
    /// to be looked up), and what it reported stands. Before release, or where kills are not
    /// tolerated, it fails the cell as any lost worker does.
    #[test]
    fn a_worker_killed_from_outside_leaves_its_unreported_writes_unknown() {
        let began = |i: u64| {
            let mut r = in_flight(i, false);
            r.attempt.entry = Some(format!("bench_w0_{i}"));
            r
        };
        let mut f = Fold::new(plain(&[0, 1]), None);
        f.tolerate_kills();
        f.event(0, ready());
        f.event(1, ready());
        f.event(0, op(0, 1.0, true));
        f.event(1, op(0, 1.0, true));
        let action =
            f.killed_from_outside(0, vec![began(0), began(1)], "signal: 9".into(), "".into());
        assert_eq!(action, Action::Continue);
        f.event(1, done(20.0));
        let m = f.finish().unwrap();
        let unknown: Vec<_> = (m.log.iter())
            .filter(|o| o.outcome == Outcome::Unknown)
            .map(|o| (o.client, o.attempt.i))
            .collect();
        assert_eq!(unknown, [(0, 1)], "only the write it never reported");
        assert!(
            m.stopped
                .unwrap()
                .contains("killed from outside (signal: 9)")
        );

        // Before release, or not tolerated: the cell fails.
        let mut f = Fold::new(plain(&[0]), None);
        f.tolerate_kills();
        let killed = f.killed_from_outside(0, vec![], "signal: 9".into(), "".into());
        assert_eq!(killed, Action::Abort);
        let mut f = Fold::new(plain(&[0, 1]), None);
        f.event(0, ready());
        f.event(1, ready());
        f.killed_from_outside(0, vec![began(0)], "signal: 9".into(), "".into());
        assert!(f.finish().unwrap_err().contains("signal: 9"));
    }

    /// Operation `i` (a read, or not) as its worker's invoke line has it: `killed`.
    fn in_flight(i: u64, read: bool) -> OpReport {
        OpReport::of(
            crate::oplog::Attempt {
                class: Some(ErrorClass::Killed),
                err: Some("killed in flight".into()),
                io: Some(Default::default()),
                read,
                ..crate::oplog::Attempt::new(i, 0.0)
            },
            false,
        )
    }

    /// A read in flight is in the log too (an operation is known by its kind and its
    /// index among its kind: read 0 is not write 0), and a worker that could not write some
    /// of its invoke lines is said to have maybe lost one.
    #[test]
    fn a_read_in_flight_is_unknown_and_unwritten_invoke_lines_are_said() {
        let began = in_flight;
        let mut f = Fold::new(plain(&[0, 1]), None);
        f.tolerate_kills();
        f.event(0, ready());
        f.event(1, ready());
        let mut written = OpReport::new(0, 1.0, true);
        written.attempt.io = Some(Default::default());
        written.invokes_unwritten = Some((2, "No space left on device".into()));
        f.event(0, Event::Op(Box::new(written)));
        let invoked = vec![began(0, false), began(0, true)];
        f.killed_from_outside(0, invoked, "signal: 9".into(), "".into());
        f.event(1, done(20.0));
        let m = f.finish().unwrap();
        let unknown: Vec<_> = (m.log.iter())
            .filter(|o| o.attempt.class == Some(ErrorClass::Killed))
            .map(|o| (o.attempt.read, o.attempt.i))
            .collect();
        assert_eq!(
            unknown,
            [(true, 0)],
            "the read in flight, not the write reported"
        );
        let stopped = m.stopped.unwrap();
        assert!(
            stopped.contains("2 of its invoke lines could not be written (No space left"),
            "{stopped}"
        );
        assert_eq!(m.invokes_unwritten[&0].0, 2);
    }

    #[test]
    fn a_worker_lost_before_release_aborts_and_after_release_fails_the_cell() {
        let mut f = Fold::new(plain(&[0, 1]), None);
        f.event(0, ready());
        assert_eq!(
            f.exited(1, false, "exit status: 1".into(), "oops".into()),
            Action::Abort
        );
        let err = f.finish().unwrap_err();
        assert!(
            err.contains("worker 1 exited with exit status: 1") && err.contains("oops"),
            "{err}"
        );

        let mut f = Fold::new(plain(&[0]), None);
        f.event(0, ready());
        f.event(0, op(0, 1.0, true));
        // Exit 0 without `done` is a failure too.
        assert_eq!(
            f.exited(0, true, "exit status: 0".into(), String::new()),
            Action::Continue
        );
        assert!(f.finish().is_err());

        let mut f = Fold::new(plain(&[0]), None);
        f.garbage(0, "hello".into());
        assert!(f.finish().unwrap_err().contains("unexpected line: hello"));
    }

    #[test]
    fn a_worker_of_another_build_stops_the_cell_before_release() {
        let own = Versions::own();
        let mut f = Fold::new(plain(&[0, 1]), Some(own.clone()));
        let ok = Event::Ready {
            versions: Some(own.clone()),
            host: None,
            open_ms: None,
            planted: Vec::new(),
        };
        assert_eq!(f.event(0, ok), Action::Continue);
        let other = Versions {
            lance: "0.0.1".into(),
            ..own
        };
        let stranger = Event::Ready {
            versions: Some(other),
            host: None,
            open_ms: None,
            planted: Vec::new(),
        };
        assert_eq!(f.event(1, stranger), Action::Abort);
        let err = f.finish().unwrap_err();
        assert!(
            err.contains("worker 1 is bench") && err.contains("lance 0.0.1"),
            "{err}"
        );
        let mut f = Fold::new(plain(&[0]), Some(Versions::own()));
        assert_eq!(f.event(0, ready()), Action::Abort);
        assert!(f.finish().unwrap_err().contains("reports no versions"));
    }

    #[test]
    fn the_next_probe_of_the_same_namespace_settles_a_version_loaded_unseen() {
        let op = |client, operation, at| {
            let mut o = sample(client, operation, 0, "", Outcome::Ok);
            o.attempt.manifest = Some(at);
            o
        };
        let list = Operation::ListTables { cold: false };
        let cold = Operation::ListTables { cold: true };
        let unseen = At {
            before: Some(5),
            at_least: Some(6),
            ..At::default()
        };
        let next = |before| At {
            before: Some(before),
            served: Some(before),
            ..At::default()
        };
        let mut log = vec![
            op(0, list, unseen),
            // Another client's, and a cold read's own namespace: neither settles it.
            op(1, list, next(3)),
            op(0, cold, next(12)),
            op(0, list, next(9)),
            // The last read of a client stays a lower bound.
            op(1, list, unseen),
        ];
        settle(&mut log);
        assert_eq!(log[0].attempt.manifest.unwrap().served, Some(9));
        assert_eq!(log[0].attempt.manifest.unwrap().at_least, None);
        assert_eq!(log[4].attempt.manifest.unwrap().served, None);
        assert_eq!(log[4].attempt.manifest.unwrap().at_least, Some(6));
    }

    /// A listing's page that loaded a version unseen is settled by the next page's first
    /// probe; its last page, with the listing, by the client's next operation.
    #[test]
    fn each_page_of_a_listing_is_settled_by_what_follows_it() {
        let unseen = |before, k| At {
            before: Some(before),
            at_least: Some(k),
            ..At::default()
        };
        let page = |through: Option<&str>, at| Page {
            through: through.map(str::to_string),
            at: Some(at),
        };
        let mut pages = vec![
            page(Some("b"), unseen(5, 6)),
            page(Some("d"), unseen(7, 8)),
            // A probe naming less than what the page before found settles nothing.
            page(None, unseen(6, 9)),
        ];
        Page::settle(&mut pages);
        let served: Vec<_> = pages.iter().map(|p| p.at.unwrap().served).collect();
        assert_eq!(served, [Some(7), None, None]);
        assert_eq!(pages[2].at.unwrap().at_least, Some(9));
        let list = Operation::ListTables { cold: false };
        let mut log = vec![
            {
                let mut o = sample(0, list, 0, "", Outcome::Ok);
                o.attempt.manifest = Some(unseen(5, 9));
                o.observed = crate::oplog::Observed::Listed {
                    seen: vec![],
                    gone: None,
                    twice: vec![],
                    pages,
                };
                o
            },
            {
                let mut o = sample(0, list, 0, "", Outcome::Ok);
                o.attempt.manifest = Some(At {
                    before: Some(11),
                    served: Some(11),
                    ..At::default()
                });
                o
            },
        ];
        settle(&mut log);
        let crate::oplog::Observed::Listed { pages, .. } = &log[0].observed else {
            panic!("a listing")
        };
        assert_eq!(pages[2].at.unwrap().served, Some(11));
        assert_eq!(log[0].attempt.manifest.unwrap().served, Some(11));
    }

    /// A look-up through `bench serve` is answered without a body: the server's account of
    /// its call, told after the cell, gives it its version — its own client's only.
    #[test]
    fn a_look_up_through_a_server_is_given_what_the_server_told_of_its_call() {
        let call = |client, call| {
            let mut o = sample(
                client,
                Operation::TableExists { cold: false },
                0,
                "t",
                Outcome::Ok,
            );
            o.attempt.manifest = Some(At {
                call: Some(call),
                ..At::default()
            });
            o
        };
        let mut log = vec![call(0, 1), call(1, 1), call(0, 2)];
        let told = |client, call, said: &str| Told {
            client,
            call,
            said: said.into(),
        };
        join(
            &mut log,
            &[told(0, 1, "served=4-6"), told(0, 2, "served=7-7")],
        );
        let served: Vec<_> = (log.iter())
            .map(|o| o.attempt.manifest.map(|m| (m.served, m.served_to)))
            .collect();
        assert_eq!(
            served,
            [
                Some((Some(4), Some(6))),
                Some((None, None)),
                Some((Some(7), None))
            ]
        );
    }

    /// A listing's request cannot name its call: a server on local disk that loaded a
    /// version unseen gives the listing (each page) a ticket in its response, and its account
    /// after the cell is found by it.
    #[test]
    fn a_listing_through_a_server_is_given_what_the_server_told_of_its_ticket() {
        let heard = At::heard("pending=77").unwrap();
        assert_eq!(
            (heard.ticket, heard.said()),
            (Some(77), Some("pending=77".into()))
        );
        let ticketed = |t| Page {
            through: None,
            at: Some(At::heard(&format!("pending={t}")).unwrap()),
        };
        let mut log = vec![{
            let mut o = sample(3, Operation::ListTables { cold: false }, 0, "", Outcome::Ok);
            o.attempt.manifest = Some(heard.and(At::heard("pending=78").unwrap()));
            o.observed = crate::oplog::Observed::Listed {
                seen: vec![],
                gone: None,
                twice: vec![],
                pages: vec![ticketed(77), ticketed(78), ticketed(79)],
            };
            o
        }];
        let told = |call, said: &str| Told {
            client: TICKETED,
            call,
            said: said.into(),
        };
        join(&mut log, &[told(77, "served=4-5"), told(78, "served=6-6")]);
        assert_eq!(log[0].attempt.manifest.unwrap().served, Some(4));
        let crate::oplog::Observed::Listed { pages, .. } = &log[0].observed else {
            panic!("a listing")
        };
        let got: Vec<_> = (pages.iter())
            .map(|p| p.at.map(|a| (a.served, a.served_to)))
            .collect();
        assert_eq!(
            got,
            [
                Some((Some(4), Some(5))),
                Some((Some(6), None)),
                Some((None, None))
            ]
        );
    }
}
