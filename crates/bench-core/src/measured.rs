//! What one run of a cell measured: its operation log, as the coordinator folds it from
//! its workers' events, and the figures read off it ([`Measured::tally`]).

use crate::consistency::Consistency;
use crate::oplog::{ErrorClass, Op, Outcome};
use crate::serve::ServerReport;
use crate::stats::{IoCounts, Latencies, Timeline, Typical, TypicalOp};
use crate::versions::Behind;
use serde::{Deserialize, Serialize};

/// The fewest commits a [`Stratum`] is kept of: its median is that of at least this many.
pub const STRATUM_MIN: u64 = 5;

/// The typical commit as far behind, for each [`Behind`] at least [`STRATUM_MIN`] successful
/// commits were; `None` where no commit's requests told how far behind it was (reads, REST
/// servers, workers of an older protocol).
pub fn strata(behind: &std::collections::BTreeMap<Behind, Typical>) -> Option<Vec<Stratum>> {
    if behind.is_empty() {
        return None;
    }
    let kept = behind.iter().filter(|(_, t)| t.operations() >= STRATUM_MIN);
    let strata = kept.filter_map(|(&behind, t)| {
        Some(Stratum {
            behind,
            operations: t.operations(),
            median: t.medians()?,
        })
    });
    Some(strata.collect())
}

/// One successful operation's counts among the typical ones: of all, and of the commits as
/// far behind as it was, where its requests told it.
fn add_typical(
    typical: &mut Typical,
    behind: &mut std::collections::BTreeMap<Behind, Typical>,
    op: &Op,
    io: &IoCounts,
) {
    let trips = op.attempt.path.as_ref().map(|p| p.round_trips);
    typical.add(io, trips);
    if let Some(b) = op.attempt.manifest.and_then(|m| m.behind()) {
        behind.entry(b).or_default().add(io, trips);
    }
}

/// The typical commit (per kind, the median) of a run's successful commits as far behind the
/// rest ([`Behind`]): where several writers contend, how far behind a commit is moves its
/// requests with how the writers interleaved, so two runs' commits are held to each other
/// as far behind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stratum {
    pub behind: Behind,
    pub operations: u64,
    pub median: TypicalOp,
}

/// The figures of one run of a cell (one repetition).
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// From the first spawn to release (processes started, namespaces open, warm-up done).
    pub setup_ms: f64,
    /// From release to the end of the last operation of the slowest worker.
    pub window_ms: f64,
    /// Latencies of the successful operations, one histogram per worker merged at the end.
    pub latencies: Latencies,
    pub attempts: u64,
    /// Failed operations that were commit conflicts past the retry budget.
    pub conflicts: u64,
    /// Failed operations with any other lance or storage error.
    pub other_errors: u64,
    /// Failed operations the store throttled (503 SlowDown, 429) past the client's retries.
    pub throttled: u64,
    /// Failed operations whose connection broke (reset, timeout) past the client's retries.
    pub network_errors: u64,
    /// Attempts abandoned at `run.attempt_timeout_secs` (each may or may not have committed).
    pub timeouts: u64,
    /// Failed operations of a cell of roles whose entry was not there (another client
    /// removed it; elsewhere such a failure is one of `other_errors`).
    pub not_found: u64,
    pub first_conflict: Option<String>,
    pub first_other_error: Option<String>,
    pub first_throttled: Option<String>,
    pub first_network_error: Option<String>,
    pub first_timeout: Option<String>,
    /// Requests and bytes of the successful operations (the commits of a mixed cell).
    pub io: IoCounts,
    /// The same operations' counts, for their medians (the typical operation).
    pub typical: Typical,
    /// The same commits' counts by how far behind each was, where its requests told it.
    pub behind: std::collections::BTreeMap<Behind, Typical>,
    /// Requests and bytes of every measured operation, failed ones too (a mixed cell's
    /// commits): what a store bills.
    pub io_billed: IoCounts,
    /// Requests and bytes of the workers' whole lives (opening, warm-up, every operation).
    pub io_workers: IoCounts,
    /// Whether every worker reported its requests (workers of an older protocol do not).
    pub io_known: bool,
    /// Warm-up commits that succeeded before release (all workers); 0 for reads.
    pub warmup_committed: u64,
    /// The reads a mixed cell interleaves, counted apart from its commits.
    pub reads: ReadMeasured,
    /// The hosts the workers ran on (Slurm's node name where a launcher sets one).
    pub hosts: std::collections::BTreeSet<String>,
    /// Each worker's clock against the coordinator's (by worker id): the bounds of its
    /// offset, from when `go` was sent and its reply came, and from its `ask` after its last
    /// operation.
    pub clocks: std::collections::BTreeMap<u32, crate::offsets::Offsets>,
    /// The test hooks set where the run's workers (and its coordinator) ran.
    pub planted: std::collections::BTreeSet<String>,
    /// Each worker's time from its start to an open catalog, in ms (workers that report it).
    pub open_ms: Vec<f64>,
    /// Each worker's peak resident memory, in KiB (workers that report it).
    pub rss_peak_kib: Vec<u64>,
    /// The critical paths of the successful operations that reported one, summed, and how
    /// many (the commits of a mixed cell).
    pub path_round_trips: u64,
    pub path_wait_ms: f64,
    pub path_ops: u64,
    /// The store-wait time of those operations by kind of request, summed.
    pub path_wait_by_kind: std::collections::BTreeMap<String, f64>,
    /// Their round trips by kind of request, summed.
    pub path_trips_by_kind: std::collections::BTreeMap<String, f64>,
    /// The shortest request any of them made, in ms.
    pub fastest_request_ms: Option<f64>,
    /// Each worker's id and its traced operations (`--trace`).
    pub traces: Vec<(u32, Vec<crate::trace::TracedOp>)>,
    /// The time of every measured operation, successful or not, commits and reads, summed
    /// in ms (what a rest cell's servers' time is set against).
    pub attempt_ms: f64,
    /// The window second by second (operations that reported their end).
    pub timeline: Timeline,
    /// An open-loop cell's operations against their intended starts.
    pub open_loop: OpenLoop,
    /// When this arm's clients were paused while the other arm ran (`bench ab`'s slices),
    /// on the host's monotonic clock in µs: left out of the visibility lag.
    pub paused_us: Vec<[u64; 2]>,
    /// What `__manifest` stored over the window (`workload.storage_sample_secs`).
    pub storage: Vec<crate::stored::Sample>,
    /// `[[nemesis]]`: each window of the store's faults switched on or off.
    pub nemesis: Vec<crate::plan::nemesis::Switch>,
    /// A campaign's `pause` point: what ran while the worker was held.
    pub while_paused: Option<crate::plan::campaign::WhilePaused>,
    /// A rest cell: each server's host and what it served over the window.
    pub servers: Vec<(String, ServerReport)>,
    /// The first worker that stopped before the cell's end, and why.
    pub stopped: Option<String>,
    /// What the CPU scheduler did to the workers' threads during their measured operations,
    /// summed (`None` where no worker told it).
    pub cpu: Option<crate::sched::CpuUse>,
    /// A cell of roles: the figures of each (role, operation of its mix), by their places.
    pub roles: std::collections::BTreeMap<(u32, u32), RoleOp>,
    /// Why the history could not be written as the run went, where it could not.
    pub journal_error: Option<String>,
    /// Each worker's operations whose invoke line it could not write (what bench learns
    /// of the operations a worker killed from outside had in flight), and the first error.
    pub invokes_unwritten: std::collections::BTreeMap<u32, (u64, String)>,
    /// Every operation the workers ran, warm-up included, in the order their reports came:
    /// the one record every figure above and every judge of the run reads.
    pub log: Vec<Op>,
}

/// What one operation of one role measured.
#[derive(Debug, Clone, Default)]
pub struct RoleOp {
    pub attempts: u64,
    /// Latencies of the successful ones (from the intended start, for an open-loop role).
    pub latencies: Latencies,
    /// Failed ones by class (`conflict`, `other`, …), and the first message.
    pub errors: std::collections::BTreeMap<&'static str, u64>,
    pub first_error: Option<String>,
    /// Requests and bytes of the successful ones, and their critical paths' round trips.
    pub io: IoCounts,
    /// The same operations' counts, for their medians (the typical operation).
    pub typical: Typical,
    /// The same commits' counts by how far behind each was, where its requests told it.
    pub behind: std::collections::BTreeMap<Behind, Typical>,
    /// Requests and bytes of all of them, failed ones too: what a store bills.
    pub io_billed: IoCounts,
    pub round_trips: u64,
    pub path_ops: u64,
    /// Second by second.
    pub timeline: Timeline,
}

/// What the interleaved reads of a mixed cell measured.
#[derive(Debug, Clone, Default)]
pub struct ReadMeasured {
    pub latencies: Latencies,
    pub attempts: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    /// Requests and bytes of the successful reads.
    pub io: IoCounts,
    /// The same reads' counts, for their medians (the typical read).
    pub typical: Typical,
    /// Requests and bytes of every read, failed ones too: what a store bills.
    pub io_billed: IoCounts,
}

/// An open-loop cell's commits against their intended start times: `latencies` (above)
/// run from the intended start, the service time from the actual one.
#[derive(Debug, Clone, Default)]
pub struct OpenLoop {
    /// Whether any operation reported an intended start.
    pub seen: bool,
    /// The service times (actual start to end) of the successful operations.
    pub service: Latencies,
    /// Operations that started more than [`OpenLoop::LATE_MS`] after their intended start.
    pub late: u64,
    /// The largest lag of a start behind its intended start, in ms.
    pub max_lag_ms: f64,
}

impl OpenLoop {
    /// A start this far behind its intended time is late (the workers' timer wakes within
    /// a fraction of it).
    pub const LATE_MS: f64 = 1.0;

    /// An operation that started `lag_ms` after its intended start; `service_ms` if it
    /// succeeded.
    pub fn lagged(&mut self, lag_ms: f64, service_ms: Option<f64>) {
        self.seen = true;
        if lag_ms > Self::LATE_MS {
            self.late += 1;
        }
        self.max_lag_ms = self.max_lag_ms.max(lag_ms);
        if let Some(ms) = service_ms {
            self.service.record(ms);
        }
    }
}

impl Measured {
    /// A cell whose history has both commits and reads that observe them: the checker's
    /// findings, each commit that did not succeed as the copy showed it (as verification marked
    /// it in the log), times told from the first operation. On one host every client's times
    /// are on the clock they share (`CLOCK_MONOTONIC`), compared as they are. Where its clients
    /// ran on more than one host, each one's times are moved onto the coordinator's clock by its
    /// offset ([`crate::offsets`]: bounded at `go` and after its last operation), and what
    /// remains uncertain widens every comparison across clients; none where a client's clock was
    /// not bounded twice. `chain`: the copy's versions verification held against the commits.
    pub fn consistency(&self, chain: Option<u64>) -> Option<Consistency> {
        let mut h = crate::consistency::history(&self.log);
        let reads = h.iter().any(|o| o.what.is_read());
        let commits = h.iter().any(|o| !o.what.is_read());
        if !(reads && commits) {
            return None;
        }
        let mut uncertainty_us = None;
        if self.hosts.len() > 1 {
            let mut half = 0;
            for op in &mut h {
                let offsets = self.clocks.get(&op.client)?;
                let mut moved = |t: u64| -> Option<u64> {
                    let (mid, h) = offsets.at(t)?;
                    half = half.max(h);
                    Some((t as i64 - mid).max(0) as u64)
                };
                (op.start_us, op.end_us) = (moved(op.start_us)?, moved(op.end_us)?);
            }
            uncertainty_us = Some(half);
        }
        let t0 = h.iter().map(|o| o.start_us).min()?;
        let margin = uncertainty_us.map_or(0, |u| 2 * u);
        let mut c = crate::consistency::check_paused(&h, t0, margin, &self.paused_us);
        c.listed_twice(&self.log, t0);
        let mut order = crate::consistency::order::check_paused(&h, t0, margin, &self.paused_us);
        if order.commits_known + order.reads_known > 0 {
            order.unknown = crate::consistency::unknown_versions(&self.log);
            order.chain_versions = chain;
            c.order = Some(order);
        }
        c.clock_uncertainty_ms = uncertainty_us.map(|u| u as f64 / 1000.0);
        // No read observed a commit (e.g. look-ups of entries no commit touched): nothing was
        // checked, and no findings say otherwise.
        (c.reads > 0).then_some(c)
    }

    /// The figures of the operations in the log (the warm-up's counted apart, as commits
    /// made before release): every count, latency and request total above that operations
    /// make, read off the log in one pass.
    pub fn tally(&mut self) {
        let log = std::mem::take(&mut self.log);
        for op in &log {
            match op.attempt.warm {
                true => {
                    let committed = op.is_write() && op.outcome == Outcome::Ok;
                    self.warmup_committed += u64::from(committed);
                }
                false => self.add(op),
            }
        }
        self.log = log;
    }

    /// The typical commit as far behind ([`strata`]).
    pub fn strata(&self) -> Option<Vec<Stratum>> {
        strata(&self.behind)
    }

    /// Failed operations (not a mixed cell's reads), of every class.
    pub fn errors(&self) -> u64 {
        self.conflicts
            + self.other_errors
            + self.throttled
            + self.network_errors
            + self.timeouts
            + self.not_found
    }

    /// One measured operation.
    fn add(&mut self, op: &Op) {
        let ok = op.outcome == Outcome::Ok;
        // Only cells of roles count entries not found apart.
        let class = match (op.attempt.class.unwrap_or(ErrorClass::Other), op.role) {
            (ErrorClass::NotFound, None) => ErrorClass::Other,
            (class, _) => class,
        };
        let io = op.attempt.io.unwrap_or_default();
        self.attempt_ms += op.attempt.ms;
        if let Some(c) = &op.attempt.cpu {
            *self.cpu.get_or_insert_with(Default::default) += c;
        }
        // An open-loop operation's latency runs from its intended start; `ms` is its service.
        let latency = op.attempt.ms + op.attempt.lag_ms.unwrap_or(0.0);
        if let Some(place) = op.role {
            self.roles.entry(place).or_default().add(op, latency, class);
        }
        if let Some(lag) = op.attempt.lag_ms.filter(|_| !op.attempt.read) {
            self.open_loop.lagged(lag, ok.then_some(op.attempt.ms));
        }
        if let Some(end) = op.attempt.end_ms {
            match ok {
                true => self.timeline.success(end, latency, op.attempt.read),
                false => self.timeline.failure(end, class.name()),
            }
        }
        if op.attempt.read {
            let r = &mut self.reads;
            r.attempts += 1;
            r.io_billed += io;
            if ok {
                r.latencies.record(latency);
                r.io += io;
                if op.attempt.io.is_some() {
                    r.typical
                        .add(&io, op.attempt.path.as_ref().map(|p| p.round_trips));
                }
            } else {
                r.errors += 1;
                r.first_error = r.first_error.take().or_else(|| op.attempt.err.clone());
            }
            return;
        }
        self.attempts += 1;
        self.io_billed += io;
        if !ok {
            self.failed(class, op.attempt.err.clone());
            return;
        }
        self.latencies.record(latency);
        self.io += io;
        if op.attempt.io.is_some() {
            add_typical(&mut self.typical, &mut self.behind, op, &io);
        }
        if let Some(p) = &op.attempt.path {
            self.path_round_trips += u64::from(p.round_trips);
            self.path_wait_ms += p.wait_ms;
            self.path_ops += 1;
            for (kind, ms) in &p.wait_by_kind {
                *self.path_wait_by_kind.entry(kind.clone()).or_default() += ms;
            }
            for (kind, n) in &p.trips_by_kind {
                *self.path_trips_by_kind.entry(kind.clone()).or_default() += n;
            }
            if let Some(f) = p.fastest_ms {
                self.fastest_request_ms = Some(self.fastest_request_ms.map_or(f, |x| x.min(f)));
            }
        }
    }

    /// A failed operation (not a mixed cell's read), counted by its class.
    fn failed(&mut self, class: ErrorClass, err: Option<String>) {
        // An entry another client removed: counted, its message in the role's figures.
        if class == ErrorClass::NotFound {
            self.not_found += 1;
            return;
        }
        let (count, first) = match class {
            ErrorClass::Conflict => (&mut self.conflicts, &mut self.first_conflict),
            ErrorClass::Throttled => (&mut self.throttled, &mut self.first_throttled),
            ErrorClass::Network => (&mut self.network_errors, &mut self.first_network_error),
            ErrorClass::Other | ErrorClass::NotFound | ErrorClass::Killed | ErrorClass::Refused => {
                (&mut self.other_errors, &mut self.first_other_error)
            }
            ErrorClass::Timeout => (&mut self.timeouts, &mut self.first_timeout),
        };
        *count += 1;
        *first = first.take().or(err);
    }
}

impl RoleOp {
    /// One operation of this (role, operation of its mix), its latency and class.
    fn add(&mut self, op: &Op, latency: f64, class: ErrorClass) {
        let ok = op.outcome == Outcome::Ok;
        self.attempts += 1;
        self.io_billed += op.attempt.io.unwrap_or_default();
        if let Some(end) = op.attempt.end_ms {
            match ok {
                true => self.timeline.success(end, latency, false),
                false => self.timeline.failure(end, class.name()),
            }
        }
        if !ok {
            *self.errors.entry(class.name()).or_default() += 1;
            if self.first_error.is_none() {
                self.first_error = op.attempt.err.clone();
            }
            return;
        }
        self.latencies.record(latency);
        self.io += op.attempt.io.unwrap_or_default();
        if let Some(io) = &op.attempt.io {
            add_typical(&mut self.typical, &mut self.behind, op, io);
        }
        if let Some(p) = &op.attempt.path {
            self.round_trips += u64::from(p.round_trips);
            self.path_ops += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Across hosts, each client's times are moved onto the coordinator's clock by its
    /// offset, and what remains uncertain widens what a read must see: a listing 3 ms after
    /// a creation on a clock 50 ms ahead (±1 ms) is held to it; within the margin it is not.
    #[test]
    fn across_hosts_clocks_are_moved_by_their_offset_and_widened_by_its_uncertainty() {
        use crate::offsets::{Bound, Offsets};
        use crate::oplog::{Observed, Outcome, Seen, sample};
        use crate::plan::Operation;
        let created = {
            let mut o = sample(0, Operation::DeclareTable, 0, "bench_d0_0", Outcome::Ok);
            o.attempt.at_us = Some([1_000, 2_000]);
            o
        };
        // Client 1's clock runs 50 ms ahead of the coordinator's (and client 0's).
        let listed = |at_ms: u64, seen: bool| {
            let mut o = sample(1, Operation::ListTables { cold: false }, 0, "", Outcome::Ok);
            o.attempt.at_us = Some([50_000 + 2_000 + at_ms * 1000, 50_000 + 2_500 + at_ms * 1000]);
            o.observed = Observed::Listed {
                seen: (seen.then(|| Seen {
                    writer: 0,
                    runs: vec![[0, 1]],
                }))
                .into_iter()
                .collect(),
                gone: None,
                twice: vec![],
                pages: vec![],
            };
            o
        };
        let mut m = Measured {
            log: vec![created, listed(3, false), listed(1, false), listed(6, true)],
            ..Measured::default()
        };
        m.hosts = ["n1", "n2"].map(String::from).into();
        // Offsets (worker − coordinator) within ±1 ms at `go` and after the last operation.
        let offsets = |lo: i64, hi: i64| {
            let b = |at_us| Bound { lo, hi, at_us };
            let (go, done) = (b(0), Some(b(100_000)));
            Offsets { go, done }
        };
        m.clocks = [(0, offsets(-1_000, 1_000)), (1, offsets(49_000, 51_000))].into();
        let c = m.consistency(None).unwrap();
        assert_eq!(c.clock_uncertainty_ms, Some(1.0));
        // At +1 ms: within the margin of 2 ms, not held to it; at +3 ms: stale.
        assert_eq!(c.stale_reads, 1, "{c:?}");
        // Shown by the listing from +6 to +6.5 ms: at most 6.5 ms, and the clocks' margin
        // of 2 ms more, since the hosts' clocks may disagree by that much.
        assert_eq!(c.lag_max_ms, Some(8.5));
        // Its offset 2 ms larger after its last operation: the uncertainty grows by the
        // change (3 ms, a margin of 6), and the listing at +3 ms is no longer held to it.
        m.clocks.get_mut(&1).unwrap().done = Some(Bound {
            lo: 51_000,
            hi: 53_000,
            at_us: 100_000,
        });
        let c = m.consistency(None).unwrap();
        assert_eq!(c.clock_uncertainty_ms, Some(3.0));
        assert_eq!(c.stale_reads, 0, "{c:?}");
        // A client whose clock was bounded only once (its answer after the last operation
        // never came), or not at all: no findings across hosts.
        m.clocks.get_mut(&1).unwrap().done = None;
        assert_eq!(m.consistency(None), None);
        m.clocks.remove(&1);
        assert_eq!(m.consistency(None), None);
    }
}
