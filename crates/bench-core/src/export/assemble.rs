//! A cell's record made of what the cell measured ([`Measured`]), how its verification went
//! ([`Verification`]) and where and when it ran ([`Provenance`]): every figure of the
//! schema in [`super::record`] computed here.

use crate::measured::{Measured, ReadMeasured};
use crate::plan::{Cell, ModeKind, Operation, Transport};
use crate::protocol::{Versions, hostname};
use crate::serve::RestFigures;
use crate::stats::{IoCounts, LatencySummary, throughput};

use super::record::{
    OpenLoopFigures, OpenMs, ReadFigures, Record, RssPeak, ServiceFigures, TableState,
};

impl OpenLoopFigures {
    /// What an open-loop cell's run measured against its offered load; nothing for a
    /// closed-loop cell.
    pub fn of(cell: &Cell, m: &Measured) -> OpenLoopFigures {
        let Some(load) = cell.mode.load() else {
            return OpenLoopFigures::default();
        };
        let s = m.open_loop.service.summary();
        OpenLoopFigures {
            offered_ops_per_sec: Some(load.rate()),
            arrivals: Some(load.arrivals.as_str().to_string()),
            service: Some(ServiceFigures {
                avg_ms: s.avg,
                p50_ms: s.p50,
                p90_ms: s.p90,
                p99_ms: s.p99,
                p999_ms: s.p999,
                min_ms: s.min,
                max_ms: s.max,
            }),
            late_operations: Some(m.open_loop.late),
            max_lag_ms: Some(m.open_loop.max_lag_ms),
        }
    }
}

impl OpenMs {
    fn of(v: &[f64]) -> Option<OpenMs> {
        (!v.is_empty()).then(|| OpenMs {
            median: crate::stats::median(v.to_vec()),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

impl RssPeak {
    fn of(v: &[u64]) -> Option<RssPeak> {
        Some(RssPeak {
            max: *v.iter().max()?,
            sum: v.iter().sum(),
        })
    }
}

/// Where and when a run of a cell happened, and with what.
pub struct Provenance<'a> {
    pub plan: &'a str,
    /// The arm of a `bench ab` run.
    pub arm: Option<&'a str>,
    /// What the workers were (their bench and lance versions go into the record).
    pub versions: &'a Versions,
    /// The digest of the workers' executable ([`Record::build_digest`]).
    pub digest: Option<&'a str>,
    pub repetition: u32,
    pub started_at: String,
    pub finished_at: String,
    pub storage_scheme: &'a str,
    /// The price table the record's cost is figured with.
    pub prices: &'a crate::prices::Priced,
}

impl Provenance<'_> {
    /// The start of the workers' digest, as records show it.
    fn digest_shown(&self) -> Option<String> {
        (self.digest).map(|d| d[..d.len().min(crate::plan::DIGEST_SHOWN)].to_string())
    }

    /// `r` with where and what it was measured by: the plan, the run, the workers' build,
    /// the host and the store.
    fn stamp(self, r: Record) -> Record {
        Record {
            build_digest: self.digest_shown(),
            plan: self.plan.to_string(),
            arm: self.arm.map(str::to_string),
            repetition: self.repetition,
            started_at: self.started_at,
            finished_at: self.finished_at,
            bench_version: self.versions.bench.clone(),
            lance_version: self.versions.lance.clone(),
            lance_revision: self.versions.lance_revision.clone(),
            hostname: hostname(),
            storage_scheme: self.storage_scheme.to_string(),
            ..r
        }
    }
}

/// What the judges found of a run: verification, of its copy; the consistency checker, of
/// its history.
pub struct Verification {
    pub rows_before: u64,
    pub rows_after: u64,
    pub error: Option<String>,
    /// Cells of table operations: the shared table before and after.
    pub table: Option<TableState>,
    /// A catalog operation's cell: the bytes of `__manifest`'s data files (its state) before
    /// and after the cell.
    pub state_bytes: Option<[u64; 2]>,
    /// The copy's versions after the cell's first that verification held against the cell's
    /// commits ([`crate::audit::verify`]); `None` where it did not read them.
    pub chain: Option<u64>,
    /// What verification was asked to check and could not, and why ([`crate::audit::Verdict`]).
    pub unchecked: Option<String>,
    /// The checker's findings on the cell's history ([`Measured::consistency`], run once
    /// verification has marked the writes that did not succeed).
    pub consistency: Option<crate::consistency::Consistency>,
}

impl ReadFigures {
    fn new(
        operation: Operation,
        reads_per_write: u64,
        m: &ReadMeasured,
        window_ms: f64,
        io_known: bool,
    ) -> Self {
        let l = m.latencies.summary();
        ReadFigures {
            operation,
            reads_per_write,
            total_operations: l.count,
            attempts: m.attempts,
            errors: m.errors,
            first_error: m.first_error.clone(),
            throughput_ops_per_sec: throughput(l.count, window_ms),
            avg_latency_ms: l.avg,
            p50_latency_ms: l.p50,
            p90_latency_ms: l.p90,
            p99_latency_ms: l.p99,
            p999_latency_ms: l.p999,
            latency_histogram: m.latencies.histogram(),
            min_latency_ms: l.min,
            max_latency_ms: l.max,
            io_per_op: io_known.then(|| m.io.per_op(l.count)).flatten(),
            io_total: io_known.then_some(m.io),
            io_median_per_op: None,
            cost: None,
            floor: None,
        }
    }
}

/// Each kind's figure over a commit: its total over the operations, divided by them.
fn per_op(
    by_kind: &std::collections::BTreeMap<String, f64>,
    count: u64,
) -> std::collections::BTreeMap<String, f64> {
    by_kind
        .iter()
        .map(|(k, v)| (k.clone(), v / count as f64))
        .collect()
}

/// Past the deadline, where the cell has one (a cell bounded by its commits may end before
/// it: 0).
fn overrun(cell: &Cell, m: &Measured) -> Option<f64> {
    let deadline_ms = cell.mode.duration_secs() as f64 * 1000.0;
    (cell.mode.operations().is_none() && deadline_ms > 0.0)
        .then(|| (m.window_ms - deadline_ms).max(0.0))
}

/// The window a run's rates are over: from the release to the last operation's end; for an
/// open-loop cell at least the window its load was offered over (its duration, or its
/// bound's operations at its rate), so that a run that kept up achieves the offered rate,
/// not more (its last operation ends before the window does).
fn rate_window_ms(cell: &Cell, m: &Measured) -> f64 {
    let Some(load) = cell.mode.load() else {
        return m.window_ms;
    };
    let offered = match (cell.mode.duration_secs(), cell.mode.operations()) {
        (d, _) if d > 0 => d as f64 * 1000.0,
        (_, Some(n)) if load.rate() > 0.0 => n as f64 / load.rate() * 1000.0,
        _ => 0.0,
    };
    m.window_ms.max(offered)
}

/// Round trips and store wait per operation on the critical path, only where every
/// successful operation reported its path.
fn critical_path(m: &Measured, count: u64) -> Option<(f64, f64)> {
    (count > 0 && m.path_ops == count).then(|| {
        let n = count as f64;
        (m.path_round_trips as f64 / n, m.path_wait_ms / n)
    })
}

/// The transport's name, where the plan says one (`matrix.transport`) or it is not direct.
fn transport_name(cell: &Cell) -> Option<String> {
    (cell.transport != Transport::Direct || cell.varied.iter().any(|(k, _)| k == "transport"))
        .then(|| cell.transport.name().to_string())
}

/// Requests the store client resent during the log's operations (`None`: none of its
/// workers saw its resends, e.g. through REST).
fn resent(log: &[crate::oplog::Op]) -> Option<u64> {
    (log.iter())
        .filter_map(|o| o.attempt.resent)
        .map(u64::from)
        .reduce(|a, b| a + b)
}

/// With an attempt timeout, in a cell that verified: how many of its writes whose outcome
/// was unknown landed, as verification looked them up (the warm-up's included).
fn abandoned_landed(cell: &Cell, m: &Measured, v: &Verification) -> Option<u64> {
    if cell.attempt_timeout_ms.is_none() || v.error.is_some() {
        return None;
    }
    let unknown =
        (m.log.iter()).filter(|o| o.is_write() && o.outcome == crate::oplog::Outcome::Unknown);
    let (mut landed, mut told) = (0, true);
    for o in unknown {
        landed += u64::from(o.landed == Some(true));
        told &= o.landed.is_some();
    }
    told.then_some(landed)
}

/// An operation's own time (mean): of an open-loop cell from its actual start (its latency
/// runs from the intended one, which includes the wait for its writer).
fn own_ms(cell: &Cell, m: &Measured, l: &LatencySummary) -> f64 {
    match cell.mode.load() {
        Some(_) => m.open_loop.service.summary().avg,
        None => l.avg,
    }
}

/// The requests of a cell's operations (a mixed cell's commits, every operation of another
/// cell): of the successful ones, and every one billed (failed attempts' too); or why they
/// are not known. Through REST servers the catalog's requests are the servers', counted over
/// the window: they are the operations' where nothing else ran (no mixed cell's reads, no
/// roles, which go to the same servers), and the successful ones' where no attempt failed.
/// A server cannot tell which of its requests a call made: lance runs a call's reads on I/O
/// tasks of its own, shared by concurrent calls, so bench does not split them.
struct Requests {
    ok: Option<IoCounts>,
    billed: Option<IoCounts>,
    why: Option<String>,
}

fn requests(cell: &Cell, m: &Measured, count: u64) -> Requests {
    let none = |why: Option<String>| Requests {
        ok: None,
        billed: None,
        why,
    };
    if !m.io_known {
        return none(None);
    }
    if !through_servers(cell, m) {
        return Requests {
            ok: Some(m.io),
            billed: Some(m.io_billed),
            why: None,
        };
    }
    if cell.mode.mixed_reads().is_some() || !cell.roles.is_empty() {
        return none(Some(BLENDED.to_string()));
    }
    let servers = (m.servers.iter()).fold(IoCounts::default(), |a, (_, s)| a + s.io);
    let failed = m.attempts.saturating_sub(count);
    Requests {
        ok: (failed == 0).then(|| m.io + servers),
        billed: Some(m.io_billed + servers),
        why: (failed > 0).then(|| {
            format!(
                "through REST, {} failed and a server cannot tell a failed attempt's \
                 requests from the others' (every request is in the cost)",
                crate::plan::count(failed, "attempt", "attempts")
            )
        }),
    }
}

/// Why a rest cell with several kinds of operation has no per-operation counts.
pub const BLENDED: &str = "through REST, a server cannot tell which of its requests a commit \
     made and which a read or another role's operation (lance runs a call's I/O on tasks of \
     its own, shared by concurrent calls): rest.server_requests_per_op has them per client \
     operation attempted, every kind together";

/// The requests and bytes per operation, over the successful operations that made them.
fn io_per_op(r: &Requests, count: u64) -> Option<crate::stats::IoPerOp> {
    r.ok?.per_op(count)
}

/// How far the operation is above its floor: the typical one, else the mean; none for a
/// cell of roles, whose operations are many, or where its requests are not known.
fn floor(
    cell: &Cell,
    m: &Measured,
    r: &Requests,
    count: u64,
    (trips, state_bytes): (Option<f64>, Option<[u64; 2]>),
) -> Option<crate::floor::Distance> {
    if !cell.roles.is_empty() {
        return None;
    }
    let mean = io_per_op(r, count);
    let d = match typical(cell, m) {
        Some(t) => Some(crate::floor::of_typical(cell.operation, &t)),
        None => mean.map(|p| crate::floor::of_mean(cell.operation, &p, trips)),
    };
    d.map(|d| match (mean, state_bytes) {
        (Some(p), Some(s)) => d.with_bytes(cell.operation, &p, s),
        _ => d,
    })
}

/// The typical operation's counts, where the workers' requests are the catalog's.
fn typical(cell: &Cell, m: &Measured) -> Option<crate::stats::TypicalOp> {
    (m.io_known && !through_servers(cell, m)).then(|| m.typical.medians())?
}

/// The typical commit by how far behind the others, where several clients contend (one
/// writer's commits are never behind) and the workers' requests are the catalog's.
fn by_behind(cell: &Cell, m: &Measured) -> Option<Vec<crate::measured::Stratum>> {
    let contended = cell.mode.workers() > 1 || cell.mode.kind() == crate::plan::ModeKind::Mixed;
    (contended && m.io_known && !through_servers(cell, m))
        .then(|| m.strata())
        .flatten()
}

/// What a cell's `count` successful operations cost, every request of theirs billed (failed
/// attempts' too), per successful operation.
fn cost(r: &Requests, count: u64, prices: &crate::prices::Priced) -> Option<crate::prices::Cost> {
    prices.cost(r.billed.as_ref()?, count)
}

/// Whether a cell's catalog requests are its REST servers' (counted over the window).
fn through_servers(cell: &Cell, m: &Measured) -> bool {
    !m.servers.is_empty() && cell.transport.client() != crate::plan::Client::Directory
}

/// A mixed cell's interleaved reads, measured apart: their requests, cost and floor over
/// the successful reads, as the commits' over the successful commits; none of these through
/// REST servers, which cannot tell a read's requests from a commit's ([`BLENDED`]).
fn reads(
    cell: &Cell,
    m: &Measured,
    window_ms: f64,
    prices: &crate::prices::Priced,
) -> Option<ReadFigures> {
    let apart = m.io_known && !through_servers(cell, m);
    let (op, r) = cell.mode.mixed_reads()?;
    let mut f = ReadFigures::new(op, r, &m.reads, window_ms, apart);
    if apart {
        let count = f.total_operations;
        f.cost = prices.cost(&m.reads.io_billed, count);
        f.io_median_per_op = m.reads.typical.medians();
        f.floor = match f.io_median_per_op {
            Some(t) => Some(crate::floor::of_typical(op, &t)),
            None => f.io_per_op.map(|p| crate::floor::of_mean(op, &p, None)),
        };
    }
    Some(f)
}

/// The variant as a name, where a build or the plan's properties vary it.
fn variant_name(cell: &Cell) -> Option<String> {
    (cell.build.is_some() || !cell.varied.is_empty()).then(|| cell.variant_name())
}

/// What a run's successful operations were: their latencies, how many, the window their
/// rate is over, their own time, their critical path (round trips, store wait) and their
/// requests.
type Ran = (LatencySummary, u64, f64, f64, Option<(f64, f64)>, Requests);

fn ran(cell: &Cell, m: &Measured) -> Ran {
    let l = m.latencies.summary();
    let (window_ms, own_ms) = (rate_window_ms(cell, m), own_ms(cell, m, &l));
    let io = requests(cell, m, l.count);
    (l, l.count, window_ms, own_ms, critical_path(m, l.count), io)
}

/// The record of one run of `cell`: one line a field, in the record's order but for those
/// that borrow what a later one moves out (the verification's, the provenance's), first.
pub fn assemble(cell: &Cell, m: &Measured, v: Verification, p: Provenance<'_>) -> Record {
    let (l, count, window_ms, own_ms, path, io) = ran(cell, m);
    let prices = p.prices;
    p.stamp(Record {
        abandoned_landed: abandoned_landed(cell, m, &v),
        latency_histogram: m.latencies.histogram(),
        variant: cell.variant(),
        operation: cell.operation,
        concurrency: cell.mode.workers(),
        initial_entries: cell.golden.rows,
        duration_secs: cell.mode.duration_secs(),
        total_operations: count,
        total_duration_ms: m.window_ms,
        throughput_ops_per_sec: throughput(count, window_ms),
        avg_latency_ms: l.avg,
        p50_latency_ms: l.p50,
        p90_latency_ms: l.p90,
        p99_latency_ms: l.p99,
        min_latency_ms: l.min,
        max_latency_ms: l.max,
        errors: m.errors(),
        bench_tag: cell.id(),
        mode: cell.mode.kind(),
        cell_key: cell.key(),
        attempts: m.attempts,
        setup_ms: m.setup_ms,
        commit_retries: cell.commit_retries,
        p999_latency_ms: l.p999,
        conflict_errors: m.conflicts,
        not_found_errors: (!cell.roles.is_empty()).then_some(m.not_found),
        other_errors: m.other_errors,
        first_conflict_error: m.first_conflict.clone(),
        first_other_error: m.first_other_error.clone(),
        warmup_operations: cell.warmup,
        warmup_committed: m.warmup_committed,
        manifest_rows_before: v.rows_before,
        manifest_rows_after: v.rows_after,
        verified: v.error.is_none(),
        verify_error: v.error,
        verify_unchecked: v.unchecked,
        reads: reads(cell, m, window_ms, prices),
        throttled_errors: m.throttled,
        requests_resent: resent(&m.log),
        network_errors: m.network_errors,
        first_throttled_error: m.first_throttled.clone(),
        first_network_error: m.first_network_error.clone(),
        page_size: cell.page_size,
        attempt_timeout_ms: cell.attempt_timeout_ms,
        timeout_errors: cell.attempt_timeout_ms.map(|_| m.timeouts),
        first_timeout_error: m.first_timeout.clone(),
        window_overrun_ms: overrun(cell, m),
        stopped_early: m.stopped.clone(),
        operations_bound: cell.mode.bound(),
        io_per_op: io_per_op(&io, count),
        io_total: io.ok,
        io_median_per_op: typical(cell, m),
        io_median_by_behind: by_behind(cell, m),
        cost: cost(&io, count, prices),
        floor: floor(cell, m, &io, count, (path.map(|p| p.0), v.state_bytes)),
        conflict_retries_per_commit: conflict_retries(cell, m, &io),
        counts_unknown: io.why.clone(),
        hosts: m.hosts.iter().cloned().collect(),
        open_ms: OpenMs::of(&m.open_ms),
        worker_rss_peak_kib: RssPeak::of(&m.rss_peak_kib),
        worker_cpu: m.cpu.as_ref().map(crate::sched::CpuUse::rounded),
        variant_name: variant_name(cell),
        build: cell.build.as_ref().map(|b| b.name.clone()),
        properties: cell.properties.clone(),
        env: cell.env.clone(),
        table_versions: cell.golden.table_versions,
        table: v.table,
        round_trips_per_op: path.map(|p| p.0),
        store_wait_ms_per_op: path.map(|p| p.1),
        other_ms_per_op: path.map(|p| (own_ms - p.1).max(0.0)),
        store_wait_ms_by_kind: path.map(|_| per_op(&m.path_wait_by_kind, count)),
        local_requests: cell.s3_shaped.then(|| "s3".to_string()),
        stuck_readers: crate::stuck::of(&m.log),
        round_trips_by_kind: path.map(|_| per_op(&m.path_trips_by_kind, count)),
        fastest_request_ms: path.and(m.fastest_request_ms),
        transport: transport_name(cell),
        rest: rest_figures(cell, m),
        series: series(cell, m),
        open_loop: OpenLoopFigures::of(cell, m),
        fixture: cell.golden.fixture,
        roles: (!cell.roles.is_empty()).then(|| roles(cell, m, window_ms, prices)),
        consistency: v.consistency,
        planted: m.planted.iter().cloned().collect(),
        draws: draws(cell),
        outcomes: crate::audit::Outcomes::of(&m.log),
        storage: stored(cell, m, prices),
        ..Default::default()
    })
}

/// lance's own conflict retries per commit attempt, counted at the store: a commit of a
/// `__manifest` entry makes one conditional PUT (its version, put if absent) per try, so
/// every conditional PUT beyond an attempt's first is a retry after a conflict. Only for
/// the operations that commit one entry (not a cell of roles, not table operations, whose
/// tries put more than one) and where every attempt's requests were counted.
fn conflict_retries(cell: &Cell, m: &Measured, io: &Requests) -> Option<f64> {
    use crate::plan::Operation::*;
    let one_put = matches!(
        cell.operation,
        CreateNamespace | DeclareTable | DeregisterTable | DropNamespace
    );
    if !one_put || !cell.roles.is_empty() || m.attempts == 0 {
        return None;
    }
    let puts = io.billed?.conditional_put as f64;
    Some((puts / m.attempts as f64 - 1.0).max(0.0))
}

/// What `__manifest` stored through the run, where the cell listed it.
fn stored(
    cell: &Cell,
    m: &Measured,
    prices: &crate::prices::Priced,
) -> Option<crate::stored::Stored> {
    let every = cell.storage_sample_secs?;
    let cleans = (cell.roles.iter()).any(|r| r.mix.iter().any(|(op, _)| op.is_maintenance()));
    crate::stored::Stored::of(every, m.storage.clone(), &prices.table, !cleans)
}

/// A cell of roles: every (role, operation of its mix), in the plan's order, with what it
/// measured (nothing, where it never ran).
fn roles(
    cell: &Cell,
    m: &Measured,
    window_ms: f64,
    prices: &crate::prices::Priced,
) -> Vec<super::record::RoleFigures> {
    let direct = cell.transport.client() == crate::plan::Client::Directory;
    let mut out = Vec::new();
    for (r, role) in cell.roles.iter().enumerate() {
        for (o, &(operation, weight)) in role.mix.iter().enumerate() {
            let measured = m.roles.get(&(r as u32, o as u32)).cloned();
            let mo = measured.unwrap_or_default();
            let l = mo.latencies.summary();
            let requests = mo.io.requests();
            let typical = (m.io_known && direct)
                .then(|| mo.typical.medians())
                .flatten();
            let cost = (m.io_known && direct)
                .then(|| prices.cost(&mo.io_billed, l.count))
                .flatten();
            let per_op = (m.io_known && direct)
                .then(|| mo.io.per_op(l.count))
                .flatten();
            out.push(super::record::RoleFigures {
                role: role.name.clone(),
                operation,
                weight,
                clients: role.clients,
                rate: role.rate,
                targets: role.targets.label(),
                attempts: mo.attempts,
                total_operations: l.count,
                throughput_ops_per_sec: throughput(l.count, window_ms),
                avg_latency_ms: l.avg,
                p50_latency_ms: l.p50,
                p90_latency_ms: l.p90,
                p99_latency_ms: l.p99,
                max_latency_ms: l.max,
                errors: (mo.errors.iter())
                    .map(|(k, v)| (k.to_string(), *v))
                    .collect(),
                first_error: mo.first_error.clone(),
                // Through REST servers the catalog's requests are the servers', not split by
                // role: none, rather than the clients' own (next to none).
                requests_per_op: (m.io_known && l.count > 0 && direct)
                    .then(|| requests as f64 / l.count as f64),
                round_trips_per_op: (mo.path_ops > 0 && direct)
                    .then(|| mo.round_trips as f64 / mo.path_ops as f64),
                read_bytes_per_op: per_op.map(|p| p.read_bytes),
                written_bytes_per_op: per_op.map(|p| p.written_bytes),
                requests_median_per_op: typical.map(|t| t.requests),
                round_trips_median_per_op: typical.and_then(|t| t.round_trips),
                io_median_by_behind: (m.io_known && direct)
                    .then(|| crate::measured::strata(&mo.behind))
                    .flatten(),
                usd_per_million_ops: cost.map(|c| c.usd_per_million_ops),
                series: mo.timeline.series(),
                cleaned: crate::stored::cleaned(&m.log, r as u32, o as u32),
                beside_cleanup: crate::stored::beside_cleanup(&m.log, r as u32, o as u32),
            });
        }
    }
    out
}

/// Where a cell's draws come from, if it draws.
fn draws(cell: &Cell) -> Option<super::record::Draws> {
    let poisson = (cell.mode.load()).is_some_and(|l| l.arrivals == crate::plan::Arrivals::Poisson);
    let seed = match (cell.roles.is_empty(), poisson) {
        (false, _) => cell.seed,
        (true, true) => crate::arrivals::POISSON_SEED,
        (true, false) => return None,
    };
    Some(super::record::Draws {
        generator: crate::rng::GENERATOR.to_string(),
        seed,
        seed_per_repetition: cell.seed_per_repetition && !cell.roles.is_empty(),
    })
}

/// A concurrent or mixed cell's window second by second (none for a continuous cell).
fn series(cell: &Cell, m: &Measured) -> Option<crate::stats::TimeSeries> {
    (cell.mode.kind() != ModeKind::Continuous).then(|| m.timeline.series())?
}

/// A rest cell's split of its operations' time, from its servers' reports: per operation
/// attempted (commits and a mixed cell's reads, failed ones too, as the servers serve them).
fn rest_figures(cell: &Cell, m: &Measured) -> Option<RestFigures> {
    if cell.transport == Transport::Direct || m.servers.is_empty() {
        return None;
    }
    let ops = m.attempts + m.reads.attempts;
    let client_ms = if ops == 0 {
        0.0
    } else {
        m.attempt_ms / ops as f64
    };
    let reports: Vec<_> = m.servers.iter().map(|(_, s)| *s).collect();
    let mut hosts: Vec<String> = m.servers.iter().map(|(h, _)| h.clone()).collect();
    hosts.sort();
    hosts.dedup();
    Some(RestFigures::new(&reports, hosts, ops, client_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_up_and_memory_over_the_workers() {
        assert_eq!(
            OpenMs::of(&[300.0, 100.0, 200.0]),
            Some(OpenMs {
                median: 200.0,
                max: 300.0
            })
        );
        assert_eq!(RssPeak::of(&[20, 10]), Some(RssPeak { max: 20, sum: 30 }));
        // Workers that did not report them (an older build): no figure, not a zero.
        assert_eq!(OpenMs::of(&[]), None);
        assert_eq!(RssPeak::of(&[]), None);
    }

    /// Every per-operation figure is over the successful operations of its kind: a mixed
    /// cell's commits over its successful commits, its reads over its successful reads,
    /// each with its requests, cost and floor. Through REST the servers' requests are the
    /// cell's operations' only where nothing else ran and none failed (the cost, every
    /// request billed, where nothing else ran); a mixed cell's commits and reads cannot be
    /// told apart there, and the record says why rather than blend them.
    #[test]
    fn each_figure_is_over_the_operations_that_made_it() {
        use crate::plan::{Mode, Operation};
        let op = |head: u64, get: u64| IoCounts {
            head,
            get,
            put: 2,
            conditional_put: 1,
            ..IoCounts::default()
        };
        let prices = crate::prices::Priced::builtin();
        let read = Operation::ListTables { cold: false };
        let mut m = Measured {
            attempts: 10,
            io: op(8 * 2, 8),
            io_billed: op(10 * 2, 10),
            io_known: true,
            ..Measured::default()
        };
        for _ in 0..8 {
            m.typical.add(&op(2, 1), Some(3));
        }
        // 30 reads, each one HEAD.
        let head = IoCounts {
            head: 1,
            ..IoCounts::default()
        };
        m.reads.attempts = 30;
        for _ in 0..30 {
            m.reads.latencies.record(1.0);
            m.reads.io += head;
            m.reads.io_billed += head;
            m.reads.typical.add(&head, Some(1));
        }
        let mixed = Cell {
            mode: Mode::Mixed {
                clients: 2,
                reads_per_write: 3,
                read,
                duration_secs: 1,
                load: None,
            },
            ..crate::plan::sample(1)
        };
        // Directly: commits over the 8 that succeeded, every attempt billed; reads apart.
        let r = requests(&mixed, &m, 8);
        let per = io_per_op(&r, 8).unwrap();
        assert_eq!((per.head, per.get), (2.0, 1.0));
        let c = cost(&r, 8, &prices).unwrap();
        assert_eq!(c.billed_per_op.head, 20.0 / 8.0);
        let f = reads(&mixed, &m, 1000.0, &prices).unwrap();
        assert_eq!(f.io_per_op.map(|p| p.head), Some(1.0));
        assert_eq!(f.cost.map(|c| c.billed_per_op.head), Some(1.0));
        let rf = f.floor.unwrap();
        // A warm read's floor is one HEAD: the typical read is at it, never below.
        assert_eq!(
            (rf.requests_over, rf.efficiency, rf.of.as_str()),
            (0.0, 1.0, "median op")
        );
        assert!(r.why.is_none());
        // Through REST, a mixed cell: no per-operation counts for either, and why.
        m.servers = vec![(
            "n1".into(),
            crate::serve::ServerReport {
                io: op(40, 20),
                ..Default::default()
            },
        )];
        let rest = Cell {
            transport: Transport::Rest { servers: 1 },
            ..mixed.clone()
        };
        let r = requests(&rest, &m, 8);
        assert!(r.ok.is_none() && r.billed.is_none() && cost(&r, 8, &prices).is_none());
        assert_eq!(r.why.as_deref(), Some(BLENDED));
        let f = reads(&rest, &m, 1000.0, &prices).unwrap();
        assert!(f.io_per_op.is_none() && f.cost.is_none() && f.floor.is_none());
        // One kind of operation through REST: the servers' requests are its own; with two
        // failed attempts, the successful ones' are unknown, the cost is every request's.
        let concurrent = Cell {
            mode: Mode::Concurrent {
                concurrency: 2,
                duration_secs: 1,
                operations: None,
                load: None,
            },
            ..rest.clone()
        };
        let r = requests(&concurrent, &m, 8);
        assert!(r.ok.is_none(), "two of ten attempts failed");
        assert!(
            r.why
                .as_deref()
                .unwrap()
                .starts_with("through REST, 2 attempts failed")
        );
        let c = cost(&r, 8, &prices).unwrap();
        assert_eq!(c.billed_per_op.head, (20.0 + 40.0) / 8.0);
        m.attempts = 8;
        let r = requests(&concurrent, &m, 8);
        assert_eq!(io_per_op(&r, 8).map(|p| p.head), Some((16.0 + 40.0) / 8.0));
        assert!(through_servers(&rest, &m) && !through_servers(&mixed, &m));
    }
}
