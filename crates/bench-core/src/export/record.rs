//! The JSONL record of one run of a cell: a documented contract (docs/output-format.md,
//! "results.jsonl fields"), the schema alone. [`super::assemble`] makes a record of what a
//! cell measured and how it verified.

use serde::{Deserialize, Serialize};

use crate::plan::{ModeKind, Operation, Variant};
use crate::stats::paired::{ArmUnits, PairingKind};
use crate::stats::{IoCounts, IoPerOp, Unit};

/// One finished cell. The first block keeps the reference's `BenchResult` field names and
/// meanings; every field is documented in docs/output-format.md.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    // ── the reference's BenchResult ──
    pub variant: Variant,
    pub operation: Operation,
    pub concurrency: u32,
    pub initial_entries: u64,
    pub duration_secs: u64,
    pub total_operations: u64,
    pub total_duration_ms: f64,
    pub throughput_ops_per_sec: f64,
    pub avg_latency_ms: f64,
    pub p50_latency_ms: f64,
    pub p90_latency_ms: f64,
    pub p99_latency_ms: f64,
    pub min_latency_ms: f64,
    pub max_latency_ms: f64,
    pub errors: u64,
    pub manifest_shard_count: u64,
    pub bench_tag: String,
    // ── provenance ──
    pub mode: ModeKind,
    pub plan: String,
    pub cell_key: String,
    pub started_at: String,
    pub finished_at: String,
    pub bench_version: String,
    pub lance_version: String,
    pub hostname: String,
    pub storage_scheme: String,
    // ── bench's own figures ──
    pub attempts: u64,
    pub setup_ms: f64,
    pub commit_retries: u32,
    // Fields added after the first release read as 0 / null from older records.
    #[serde(default)]
    pub p999_latency_ms: f64,
    /// Every successful operation's latency as the HDR histogram holds it (3 significant
    /// digits): a mixed cell's commits. Absent where none succeeded and in records written
    /// before bench kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_histogram: Option<crate::stats::LatencyHistogram>,
    #[serde(default)]
    pub conflict_errors: u64,
    /// A cell of roles: failed operations whose entry was not there (another client removed
    /// it). Absent elsewhere, where such a failure is one of `other_errors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_found_errors: Option<u64>,
    #[serde(default)]
    pub other_errors: u64,
    #[serde(default)]
    pub first_conflict_error: Option<String>,
    #[serde(default)]
    pub first_other_error: Option<String>,
    #[serde(default)]
    pub warmup_operations: u64,
    #[serde(default)]
    pub warmup_committed: u64,
    /// Which repetition of the cell this record is (1-based).
    #[serde(default = "one")]
    pub repetition: u32,
    pub manifest_rows_before: u64,
    pub manifest_rows_after: u64,
    pub verified: bool,
    pub verify_error: Option<String>,
    /// What verification was asked to check and could not, and why (the versions whose
    /// transaction files were to be looked for could not be read): `verified` stands on the
    /// rest. Absent where everything asked was checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_unchecked: Option<String>,
    /// Mixed cells only: the interleaved reads, measured apart from the commits (which the
    /// fields above describe). `null` for other cells.
    #[serde(default)]
    pub reads: Option<ReadFigures>,
    /// Failed operations the store throttled (503 SlowDown, 429) past the client's retries.
    #[serde(default)]
    pub throttled_errors: u64,
    /// Failed operations whose connection broke (reset, closed, timed out) past the
    /// client's retries.
    #[serde(default)]
    pub network_errors: u64,
    #[serde(default)]
    pub first_throttled_error: Option<String>,
    #[serde(default)]
    pub first_network_error: Option<String>,
    /// Requests the store client resent during the cell's operations, warm-up included
    /// (object_store's retries after a 5xx, a 429 or a broken connection); absent where its
    /// workers do not see them (through REST).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_resent: Option<u64>,
    /// Listings: entries a page (`page_size`), every page listed; absent: one request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_size: Option<u32>,
    /// `run.attempt_timeout_secs` in ms, where the plan sets one: an operation that took
    /// longer was abandoned and counted as failed with the class `timeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_timeout_ms: Option<u64>,
    /// With an attempt timeout: the attempts abandoned at it (each may or may not have
    /// committed; verification allows either). Absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_errors: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timeout_error: Option<String>,
    /// With an attempt timeout, in a cell of catalog commits: how many of the abandoned
    /// attempts landed all the same (rows in `__manifest` beyond the golden's, the warm-up's
    /// and one per successful commit). Absent without a timeout or where verification did
    /// not count them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandoned_landed: Option<u64>,
    /// Concurrent and mixed cells: how far past `duration_secs` the window ran (the last
    /// operations started before the deadline finish after it); `null` for continuous cells.
    #[serde(default)]
    pub window_overrun_ms: Option<f64>,
    /// A worker stopped before the cell's end: which, and why (nothing left for its
    /// operations, or every attempt of a cell bounded by its commits failing). Absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
    /// A concurrent cell bounded by its commits (`concurrent.operations`): the bound. The
    /// cell ended once its writers had that many successful commits together; operations
    /// in flight then finish and count, so `total_operations` may pass it by up to one
    /// per writer. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operations_bound: Option<u64>,
    /// Requests by kind and bytes per successful operation (means), and in all.
    #[serde(default)]
    pub io_per_op: Option<IoPerOp>,
    #[serde(default)]
    pub io_total: Option<IoCounts>,
    /// lance's conflict retries per commit attempt, from the store's counts: conditional
    /// PUTs (one per try of a `__manifest` commit) over attempts, less one. Absent for
    /// operations whose tries put more than one, cells of roles and uncounted cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict_retries_per_commit: Option<f64>,
    /// The typical operation's counts: per kind, in all and in round trips, the median over
    /// the successful operations (what contended cells' count verdicts judge). Absent
    /// through REST servers (whose requests are not split by operation) and in records
    /// written before bench kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_median_per_op: Option<crate::stats::TypicalOp>,
    /// The typical commit by how far behind the rest it was (the versions others made
    /// between the one it held and the one it made, and the races it lost on the way), for
    /// each such place at least 5 successful commits held: what several writers' count
    /// verdicts judge. Absent where no commit's requests told it (reads, through REST
    /// servers) and in records written before bench kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_median_by_behind: Option<Vec<crate::measured::Stratum>>,
    /// What the operations cost on each store of the price table: every request they made
    /// (failed ones' too; through REST servers, the servers' in the window) per successful
    /// operation, in dollars per million. Absent without a successful operation, and in
    /// records written before bench priced them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::prices::Cost>,
    /// How far the operation is above the least it needs (its floor, `crate::floor`): the
    /// typical operation's requests and round trips beyond it, by kind, and the floor's share
    /// of its requests. Absent for a cell of roles (a blend of operations) and without counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<crate::floor::Distance>,
    /// Why `io_per_op`, `io_total`, `cost` or `floor` are absent where bench counted the
    /// requests: through REST servers, which cannot tell a failed attempt's requests from
    /// the others', nor a commit's from a read's or another role's operation's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts_unknown: Option<String>,
    /// The hosts the cell's writers ran on, sorted (one unless a launcher spread them).
    #[serde(default)]
    pub hosts: Vec<String>,
    /// The workers' start-up: from a worker's start to its open catalog, in ms, over the
    /// cell's workers; absent where the workers did not report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_ms: Option<OpenMs>,
    /// The workers' peak resident memory, in KiB: the largest and the sum over the cell's
    /// workers; absent where the workers did not report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_rss_peak_kib: Option<RssPeak>,
    /// What the CPU scheduler did to the workers' threads during their measured operations
    /// (Linux): their time on a CPU, their time runnable but waiting for one (a neighbour's
    /// load), and their time on each CPU; absent where the workers did not tell it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_cpu: Option<crate::sched::CpuUse>,
    /// `bench ab` only: which arm's workers measured this record, `A` (the baseline) or
    /// `B` (the candidate); absent from the records of `bench run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<String>,
    /// `bench ab` with pairs inside the cell: this arm's units of the pairs (unit `i` here
    /// and unit `i` of the other arm's record of the same repetition are pair `i`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<PairUnits>,
    /// The variant as a name: build, index maintenance and `[matrix.properties]` values,
    /// `/`-separated (`cow/inline_index/shards=1000`); absent where it is just `variant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant_name: Option<String>,
    /// The build (its name in the plan's `[builds]`) whose workers measured the record;
    /// absent for the running bench's own workers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// The namespace properties of the cell's catalogs (`[namespace]` and
    /// `[matrix.properties]`); absent when there are none.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub properties: std::collections::BTreeMap<String, String>,
    /// The variables set in the workers' environment (`[env]` and `[matrix.env]`);
    /// absent when there are none.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
    /// Cells of table operations: the shared table's history in the golden (its versions,
    /// `matrix.table_versions`), and its rows and latest version before and after the run,
    /// as verification found them. Absent for catalog cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_versions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<TableState>,
    /// Per successful operation (of a mixed cell: per commit), means: the round trips on
    /// its critical path (maximal groups of overlapping requests), the time it waited on
    /// the store (covered by a request), and the rest of its latency (CPU, locks, other
    /// waits). Requests through lance's object-store layer; on local disk lance also reads
    /// and writes files around it. Absent where the workers did not report them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trips_per_op: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_wait_ms_per_op: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_ms_per_op: Option<f64>,
    /// `store_wait_ms_per_op` by kind of request (`get`, `put`, … as in `io_per_op`):
    /// each instant of waiting shared equally among the requests in flight then, so that
    /// the kinds add up to the whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_wait_ms_by_kind: Option<std::collections::BTreeMap<String, f64>>,
    /// `"s3"` where the workers reached a local root as S3 is reached
    /// (`run.local_requests`): `io_per_op` then counts S3's requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_requests: Option<String>,
    /// The first 16 hex digits of the SHA-256 of the worker executable that measured this
    /// record (for a wrapper script, of the script): builds are known by their bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_digest: Option<String>,
    /// The git revision of the lance the workers were built with (40 hex digits), where
    /// the build knows it: a git dependency's commit, or the commit crates.io's package was
    /// made from. `bench publish` gives `dut.version` as `lance_version+<its first 7>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lance_revision: Option<String>,
    /// What the sweep attaches after assembling the record: the copy, the trace, the
    /// history, the wall time (its fields sit among the record's own in the JSON).
    #[serde(flatten)]
    pub attached: Attached,
    /// Readers a cleanup left behind: each failed on a file of `__manifest` that was gone
    /// after a cleanup of the cell, and failed every read after (`crate::stuck`). Absent
    /// where none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stuck_readers: Option<crate::stuck::Stuck>,
    /// `round_trips_per_op` by kind of request: each round trip shared equally among its
    /// requests, so that the kinds add up to the whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trips_by_kind: Option<std::collections::BTreeMap<String, f64>>,
    /// The shortest request of the run's measured operations, in ms: about the latency of
    /// the store it ran on (what `bench predict` takes as measured at).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest_request_ms: Option<f64>,
    /// How the workers reached the catalog, `direct` or `rest`, where the plan says
    /// (`matrix.transport`); absent: direct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// A rest cell: where the client's time went (transport, waiting in the server, the
    /// backend), the servers' requests, memory and CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rest: Option<crate::serve::RestFigures>,
    /// Concurrent and mixed cells: the measured window second by second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<crate::stats::TimeSeries>,
    /// Open-loop cells' own fields.
    #[serde(flatten)]
    pub open_loop: OpenLoopFigures,
    /// A golden that is a tree (`[fixture]`): its shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture: Option<crate::plan::Fixture>,
    /// A cell of roles: one entry per (role, operation of its mix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<RoleFigures>>,
    /// A cell of roles that creates tables and lists them: what its readers saw against
    /// what its writers committed (`consistency::check`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<crate::consistency::Consistency>,
    /// The test hooks set where the run's workers or coordinator ran (`BENCH_OP_DELAY_MS=20`,
    /// …): a test, never a measurement. Absent without any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub planted: Vec<String>,
    /// A cell that draws (a cell of roles: operations and targets; Poisson arrivals): the
    /// generator and the seed its draws come from. Absent for a cell that draws nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draws: Option<Draws>,
    /// A cell that writes: how its writes ended (`ok`, `failed`, `unknown`), how the unknown
    /// ones resolved in the copy, and those answered with an error whose effect is there
    /// (failed but applied). Absent for a cell of reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<crate::audit::Outcomes>,
    /// A cell that lists what `__manifest` stores (`workload.storage_sample_secs`): versions,
    /// files and bytes over the window, their growth, and storage dollars a month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<crate::stored::Stored>,
}

/// Where a cell's draws come from: `generator` (`SplitMix64`), `seed` (a cell of roles:
/// the plan's `workload.seed`, each client's own derived from it; Poisson arrivals: writer
/// 0's, each writer's the next) and `seed_per_repetition` (each repetition drew from a seed
/// of its own, derived from this one and its number).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draws {
    pub generator: String,
    pub seed: u64,
    #[serde(default)]
    pub seed_per_repetition: bool,
}

/// What one operation of one role of a cell measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleFigures {
    pub role: String,
    pub operation: Operation,
    /// Its weight in the role's mix, the role's clients, offered rate (all its operations,
    /// across its clients; none: closed loop) and target distribution.
    pub weight: u32,
    pub clients: u32,
    pub rate: Option<f64>,
    pub targets: String,
    pub attempts: u64,
    /// Successful operations, and their rate over the cell's window.
    pub total_operations: u64,
    pub throughput_ops_per_sec: f64,
    /// Latencies of the successful ones, from the intended start for an open-loop role.
    pub avg_latency_ms: f64,
    pub p50_latency_ms: f64,
    pub p90_latency_ms: f64,
    pub p99_latency_ms: f64,
    pub max_latency_ms: f64,
    /// Failed ones by class, and the first message.
    pub errors: std::collections::BTreeMap<String, u64>,
    pub first_error: Option<String>,
    /// Store requests and critical-path round trips per successful operation.
    pub requests_per_op: Option<f64>,
    pub round_trips_per_op: Option<f64>,
    /// Bytes read and written per successful operation (of the successful ones, as
    /// `requests_per_op`); absent through REST servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes_per_op: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_bytes_per_op: Option<f64>,
    /// The same of the typical operation: the medians over the successful ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_median_per_op: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trips_median_per_op: Option<f64>,
    /// Its commits' typical one by how far behind the others each was (as the record's
    /// `io_median_by_behind`), where it commits to `__manifest`: what the role's count
    /// verdict judges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_median_by_behind: Option<Vec<crate::measured::Stratum>>,
    /// Dollars per million successful ones on each store of the price table, every request
    /// of the operation billed (failed ones' too); absent through REST servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd_per_million_ops: Option<std::collections::BTreeMap<String, f64>>,
    /// Its successful operations second by second, their p50 and p99.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<crate::stats::TimeSeries>,
    /// A cleanup: what its measured runs removed in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleaned: Option<crate::oplog::Cleaned>,
    /// Any other operation of a cell that cleans up: its latency while a cleanup ran and
    /// while none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beside_cleanup: Option<crate::stored::BesideCleanup>,
}

/// An open-loop cell's own fields, absent from a closed-loop cell's record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopFigures {
    /// Open-loop cells: the operations a second offered across the writers
    /// (`concurrent.rate`) and how they arrived (`uniform`, `poisson`); the latencies
    /// above run from each operation's intended start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_ops_per_sec: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<String>,
    /// Open-loop cells: the successful operations' service times (actual start to end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceFigures>,
    /// Open-loop cells: operations that started more than 1 ms after their intended
    /// start, and the largest such lag (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_operations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lag_ms: Option<f64>,
}

/// An open-loop cell's service times, in ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ServiceFigures {
    pub avg_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

/// How a run's copy of its golden went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CopyTime {
    pub objects: u64,
    pub parallelism: u32,
    pub ms: f64,
}

impl Record {
    /// Whether this run fails its cell: it failed verification, or it is a fault campaign's
    /// point that is a finding (`fault.finding`).
    pub fn failed(&self) -> bool {
        !self.verified || (self.attached.fault.as_ref()).is_some_and(|m| m.finding.is_some())
    }

    /// The variant's name: `variant_name`, or the reference's `variant` where the record
    /// has no other dimension.
    pub fn variant_label(&self) -> &str {
        self.variant_name
            .as_deref()
            .unwrap_or(self.variant.as_str())
    }
}

/// The workers' start-up times of one run of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OpenMs {
    pub median: f64,
    pub max: f64,
}

/// The workers' peak memory of one run of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RssPeak {
    pub max: u64,
    pub sum: u64,
}

/// One arm's units of the pairs formed inside a run of a cell (see `stats::paired`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairUnits {
    pub pairing: PairingKind,
    /// Each unit's time: a lockstep (or duet) operation's latency, or a slice's (or duet
    /// bucket's) wall time, in ms.
    pub unit_ms: Vec<f64>,
    /// Successful operations of the cell (commits, for a commit operation) in each unit.
    pub unit_ops: Vec<u64>,
    /// Mixed cells: successful interleaved reads in each unit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unit_reads: Vec<u64>,
    /// `bench ab --precision`: the repetitions of the pilot that fixed how many this cell
    /// runs (on the records after the pilot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pilot_repetitions: Option<u32>,
    /// Whether this arm went first in the run: its copy made first, its workers started
    /// first, its operation or slice first in each turn (arm A in odd repetitions, B in even
    /// ones).
    #[serde(default)]
    pub first: bool,
}

impl PairUnits {
    pub fn new(pairing: PairingKind, u: &ArmUnits, pilot: Option<u32>, first: bool) -> PairUnits {
        // Microseconds are all a unit's time can resolve.
        let ms = |x: f64| (x * 1000.0).round() / 1000.0;
        let reads: Vec<u64> = u.reads.iter().map(|x| x.ops as u64).collect();
        PairUnits {
            pairing,
            unit_ms: u.ops.iter().map(|x| ms(x.ms)).collect(),
            unit_ops: u.ops.iter().map(|x| x.ops as u64).collect(),
            unit_reads: if reads.iter().any(|&r| r > 0) {
                reads
            } else {
                Vec::new()
            },
            pilot_repetitions: pilot,
            first,
        }
    }

    /// The units of the cell's operations (commits).
    pub fn ops(&self) -> Vec<Unit> {
        self.units(&self.unit_ops)
    }

    /// The units of a mixed cell's reads (empty otherwise).
    pub fn reads(&self) -> Vec<Unit> {
        self.units(&self.unit_reads)
    }

    fn units(&self, counts: &[u64]) -> Vec<Unit> {
        self.unit_ms
            .iter()
            .zip(counts)
            .map(|(&ms, &n)| Unit { ms, ops: n as f64 })
            .collect()
    }
}

/// The reads of a mixed cell, with the same meanings as the commit fields of a [`Record`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadFigures {
    pub operation: Operation,
    pub reads_per_write: u64,
    /// Successful reads started inside the window.
    pub total_operations: u64,
    pub attempts: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub throughput_ops_per_sec: f64,
    pub avg_latency_ms: f64,
    pub p50_latency_ms: f64,
    pub p90_latency_ms: f64,
    pub p99_latency_ms: f64,
    pub p999_latency_ms: f64,
    /// The reads' latencies as the HDR histogram holds them (as the record's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_histogram: Option<crate::stats::LatencyHistogram>,
    pub min_latency_ms: f64,
    pub max_latency_ms: f64,
    #[serde(default)]
    pub io_per_op: Option<IoPerOp>,
    #[serde(default)]
    pub io_total: Option<IoCounts>,
    /// The typical read's counts (as the record's `io_median_per_op`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_median_per_op: Option<crate::stats::TypicalOp>,
    /// What the reads cost (every read's requests billed, per successful read) and how far
    /// the typical read is above its floor, as the record's `cost` and `floor` are the
    /// commits'. Absent through REST servers, and in records written before bench gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::prices::Cost>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<crate::floor::Distance>,
}

/// The names of `bench ab`'s arms: A runs the baseline's workers, B the candidate's.
pub const ARM_A: &str = "A";
pub const ARM_B: &str = "B";

fn one() -> u32 {
    1
}

/// What the sweep attaches to a run's record once it is assembled: what the run's copy took,
/// the files it wrote beside the results, and its wall time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Attached {
    /// This run's copy of its golden: objects copied, at how many at once, and the wall
    /// time (before the workers start; in no figure of the cell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<CopyTime>,
    /// This run's trace file (`--trace`), relative to the results directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// This run's history (`run.keep_history`, cells of roles and mixed cells): its folder,
    /// relative to the results directory, holding `history.jsonl` and `versions.jsonl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<String>,
    /// The wall time of this run, in ms: the copies of its golden, the workers, the
    /// verification and the copies' removal (both arms of a pair: one run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<f64>,
    /// The CPUs other processes on the machine kept busy on average while this run's workers
    /// ran (both arms of a pair: one run), in cores: a neighbour's load (`sched::machine`).
    /// Absent where the kernel does not tell it and where a launcher ran the workers (they
    /// are not bench's children).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_cores: Option<f64>,
    /// The machine the run measured on: its cores, memory and CPU model, and its load
    /// average just before the workers started and just after they ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<crate::sched::Host>,
    /// A point of a fault campaign (`[campaign]`): the fault its store gave, the request
    /// that met it and every request the store saw from the arming to the run's end.
    /// Absent outside a campaign.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<crate::plan::campaign::Met>,
    /// `[[nemesis]]`: each window of the store's faults switched on or off during the run,
    /// when (ms since release) and, switched off, the requests it met. Absent without.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nemesis: Vec<crate::plan::nemesis::Switch>,
    /// Operations whose invoke line (written before each begins, what bench learns of those
    /// a worker killed from outside had in flight) a worker could not write, summed over
    /// the workers, and the first error. Absent where every line was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invokes_unwritten: Option<(u64, String)>,
}

/// The shared table of a cell of table operations, as verification found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TableState {
    /// Rows each commit appended (`table.rows_per_commit`).
    pub rows_per_commit: u64,
    /// The table's rows and latest version in the golden, and after the run.
    pub rows_before: u64,
    pub rows_after: u64,
    pub version_before: u64,
    pub version_after: u64,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// One (role, operation)'s figures: 2,000 operations at `tps` a second, no failure.
    pub fn role(role: &str, operation: Operation, tps: f64) -> RoleFigures {
        RoleFigures {
            role: role.into(),
            operation,
            weight: 1,
            clients: 2,
            rate: None,
            targets: "uniform".into(),
            attempts: 2000,
            total_operations: 2000,
            throughput_ops_per_sec: tps,
            avg_latency_ms: 1000.0 / tps,
            p50_latency_ms: 1000.0 / tps,
            p90_latency_ms: 1000.0 / tps,
            p99_latency_ms: 2000.0 / tps,
            max_latency_ms: 3000.0 / tps,
            errors: Default::default(),
            first_error: None,
            requests_per_op: None,
            round_trips_per_op: None,
            requests_median_per_op: None,
            round_trips_median_per_op: None,
            io_median_by_behind: None,
            usd_per_million_ops: None,
            series: None,
            read_bytes_per_op: None,
            written_bytes_per_op: None,
            cleaned: None,
            beside_cleanup: None,
        }
    }

    /// A record with plausible figures, for the tests of what is derived from records.
    pub fn record(mode: ModeKind, variant: Variant, rows: u64, c: u32, tag: &str) -> Record {
        Record {
            variant,
            operation: Operation::CreateNamespace,
            concurrency: c,
            initial_entries: rows,
            duration_secs: if mode == ModeKind::Continuous { 0 } else { 2 },
            total_operations: 10,
            total_duration_ms: 1000.0,
            throughput_ops_per_sec: 10.0,
            avg_latency_ms: 1.234,
            p50_latency_ms: 1.0,
            p90_latency_ms: 2.0,
            p99_latency_ms: 3.0,
            min_latency_ms: 0.5,
            max_latency_ms: 4.0,
            errors: 0,
            manifest_shard_count: 0,
            bench_tag: tag.into(),
            mode,
            plan: "p".into(),
            cell_key: "k".into(),
            started_at: "t0".into(),
            finished_at: "t1".into(),
            bench_version: "0".into(),
            lance_version: "14.0.2".into(),
            hostname: "h".into(),
            storage_scheme: "file".into(),
            attempts: 10,
            setup_ms: 5.0,
            commit_retries: 20,
            p999_latency_ms: 3.5,
            latency_histogram: None,
            conflict_errors: 0,
            not_found_errors: None,
            other_errors: 0,
            first_conflict_error: None,
            first_other_error: None,
            warmup_operations: 0,
            warmup_committed: 0,
            repetition: 1,
            manifest_rows_before: rows,
            manifest_rows_after: rows + 10,
            verified: true,
            verify_error: None,
            verify_unchecked: None,
            reads: None,
            throttled_errors: 0,
            network_errors: 0,
            first_throttled_error: None,
            first_network_error: None,
            requests_resent: None,
            page_size: None,
            attempt_timeout_ms: None,
            timeout_errors: None,
            abandoned_landed: None,
            first_timeout_error: None,
            window_overrun_ms: None,
            stopped_early: None,
            operations_bound: None,
            io_per_op: None,
            io_total: None,
            conflict_retries_per_commit: None,
            io_median_per_op: None,
            io_median_by_behind: None,
            cost: None,
            floor: None,
            counts_unknown: None,
            hosts: vec!["h".into()],
            open_ms: None,
            worker_rss_peak_kib: None,
            worker_cpu: None,
            arm: None,
            paired: None,
            variant_name: None,
            build: None,
            properties: Default::default(),
            env: Default::default(),
            table_versions: None,
            table: None,
            round_trips_per_op: None,
            store_wait_ms_per_op: None,
            other_ms_per_op: None,
            store_wait_ms_by_kind: None,
            local_requests: None,
            build_digest: None,
            lance_revision: None,
            attached: Default::default(),
            stuck_readers: None,
            round_trips_by_kind: None,
            fastest_request_ms: None,
            transport: None,
            rest: None,
            series: None,
            open_loop: OpenLoopFigures::default(),
            fixture: None,
            roles: None,
            consistency: None,
            planted: Vec::new(),
            draws: None,
            outcomes: None,
            storage: None,
        }
    }

    /// Three repetitions of a concurrent cell, the third with one conflict past the retries
    /// (which a median over repetitions would hide).
    pub fn with_a_conflict_in_the_last() -> Vec<Record> {
        (1..=3)
            .map(|i| {
                let mut r = record(
                    ModeKind::Concurrent,
                    Variant::NoIndex,
                    100,
                    4,
                    "conc_inline_false_rows_100_c_4",
                );
                r.repetition = i;
                if i == 3 {
                    r.errors = 1;
                    r.conflict_errors = 1;
                }
                r
            })
            .collect()
    }

    /// The keys of a JSON object line, in order (top level and nested alike).
    fn keys(line: &str) -> Vec<&str> {
        line.split('"')
            .collect::<Vec<_>>()
            .windows(2)
            .filter(|w| w[1].starts_with(':'))
            .map(|w| w[0])
            .collect()
    }

    /// Equal, with floats within their last digits (serde_json parses floats fast, not
    /// always to the nearest value).
    fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
        use serde_json::Value::*;
        match (a, b) {
            (Number(x), Number(y)) if x.is_f64() || y.is_f64() => {
                let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
            }
            // Every field of the old record, unchanged (new fields may follow).
            (Object(x), Object(y)) => x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w))),
            _ => a == b,
        }
    }

    #[test]
    fn records_of_the_default_sweep_read_and_write_back_unchanged() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/results-a.jsonl"),
        )
        .unwrap();
        for line in text.lines() {
            let r: Record = serde_json::from_str(line).unwrap();
            let back = serde_json::to_string(&r).unwrap();
            // The fields in the same order; fields added since come after them.
            let (old, new) = (keys(line), keys(&back));
            assert_eq!(new[..old.len()], old[..], "{line}\n{back}");
            let (x, y): (serde_json::Value, serde_json::Value) = (
                serde_json::from_str(line).unwrap(),
                serde_json::from_str(&back).unwrap(),
            );
            assert!(same(&x, &y), "{line}\n{back}");
        }
    }
}
