//! What passes between the coordinator and a worker: the worker's arguments (nothing
//! secret: storage options go through [`STORAGE_ENV`]) and the JSON lines it prints.

use serde::{Deserialize, Serialize};

use crate::counts::IoCounts;
use crate::plan::Operation;

pub use crate::oplog::ErrorClass;

/// Environment variable carrying the storage options (JSON) to workers, so that secrets
/// never appear on a command line.
pub const STORAGE_ENV: &str = "BENCH_STORAGE_OPTIONS";

/// In [`STORAGE_ENV`], the plan's `[namespace]` properties travel as `namespace.<key>`
/// (through a launcher too, and never on a command line), beside the storage options.
pub const PROPERTY_PREFIX: &str = "namespace.";

/// In what the coordinator hands its worker launch, the plan's `[env]` variables come as
/// `env.<NAME>`: they are set in the workers' environment, not passed in [`STORAGE_ENV`].
pub const ENV_PREFIX: &str = "env.";

/// The test hooks that change what a run measures (a slowdown, requests more, none
/// counted, a cache, a killed worker, a late start, a coordinator's planted fault, `bench
/// ab`'s arms started in a fixed order): a run
/// with any of them set is a test, never a measurement, and its record names them
/// (`planted`).
pub const PLANTED: [&str; 12] = [
    "BENCH_OP_DELAY_MS",
    "BENCH_EXTRA_HEADS",
    "BENCH_UNCOUNTED",
    "BENCH_SERVE_CACHE_MS",
    "BENCH_SERVE_PATCH_OWN_MS",
    "BENCH_SERVE_ACK_EARLY_MS",
    "BENCH_SERVE_RANDOM_VIEW",
    "BENCH_WORKER_KILL_MID_COMMIT",
    "BENCH_WORKER_START_DELAY_MS",
    "BENCH_FAULT",
    "BENCH_WORKER_WALL_STEP",
    "BENCH_AB_START_A_FIRST",
];

/// The hooks of [`PLANTED`] set in an environment (`env`), as `NAME=value`.
pub fn planted(env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    (PLANTED.iter())
        .filter_map(|name| env(name).map(|v| format!("{name}={v}")))
        .collect()
}

/// Exit code of a worker whose coordinator went away.
pub const EXIT_ORPHANED: i32 = 75;

/// The version of this protocol: arguments, events and environment. A coordinator runs
/// only workers that speak its protocol (`bench ab` may run another build's workers).
pub const PROTOCOL_VERSION: u32 = 9;

/// The environment variables a launcher (`run.launcher`) sets to each task's rank, in the
/// order a worker started with `--rank-from-env` looks for them.
pub const RANK_VARS: [&str; 4] = [
    "SLURM_PROCID",
    "OMPI_COMM_WORLD_RANK",
    "PMIX_RANK",
    "PMI_RANK",
];

/// This worker's rank among a launcher's tasks, from the first of [`RANK_VARS`] set.
pub fn rank_from(env: &dyn Fn(&str) -> Option<String>) -> Result<u32, String> {
    for var in RANK_VARS {
        if let Some(v) = env(var) {
            return v
                .trim()
                .parse()
                .map_err(|_| format!("{var}={v:?} is not a rank (a whole number)"));
        }
    }
    Err(format!(
        "started by a launcher (--rank-from-env) but none of {} is set; the launcher must give \
         every task its rank (srun and mpirun do)",
        RANK_VARS.join(", ")
    ))
}

/// The host a worker runs on, as records name it: the Slurm node (`SLURMD_NODENAME`, which
/// tells apart nodes that share a machine), else the hostname.
pub fn host_name(env: &dyn Fn(&str) -> Option<String>) -> String {
    env("SLURMD_NODENAME")
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(hostname)
}

/// One line of a worker's stdout: an event and the id of the worker that sent it (which
/// tells the workers apart when a launcher merges their output into one stream).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// Absent from the lines of a worker that is the only one on its pipe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w: Option<u32>,
    #[serde(flatten)]
    pub event: Event,
}

impl Line {
    /// Parse a line as a launcher prints it: `srun --label` puts `N: ` before it.
    pub fn parse(line: &str) -> Option<Line> {
        let json = match line.find('{') {
            Some(0) => line,
            Some(i) => {
                let label = line[..i].trim().strip_suffix(':')?;
                label.trim().parse::<u64>().ok()?;
                &line[i..]
            }
            None => return None,
        };
        serde_json::from_str(json).ok()
    }
}

/// What a worker binary is: its protocol and the versions it measures with. Printed by
/// `bench worker-info` and carried by every `ready` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Versions {
    pub protocol: u32,
    pub bench: String,
    pub lance: String,
    /// The git revision lance was built from, where it is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lance_revision: Option<String>,
}

impl Versions {
    /// The versions of this binary.
    pub fn own() -> Versions {
        Versions {
            protocol: PROTOCOL_VERSION,
            bench: env!("CARGO_PKG_VERSION").to_string(),
            lance: crate::plan::LANCE_VERSION.to_string(),
            lance_revision: Some(crate::plan::LANCE_REVISION)
                .filter(|r| !r.is_empty())
                .map(str::to_string),
        }
    }
}

impl std::fmt::Display for Versions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bench {} with lance {} (protocol {})",
            self.bench, self.lance, self.protocol
        )
    }
}

/// One line of a worker's stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case")]
pub enum Event {
    /// The namespace is open and the warm-up done (each of its operations reported before);
    /// waiting for release. `versions` says what the worker is.
    Ready {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        versions: Option<Versions>,
        /// Where the worker runs ([`host_name`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
        /// From the worker's start (its `main`) to its open catalog, in ms: start-up and
        /// namespace opening, before any warm-up.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        open_ms: Option<f64>,
        /// The test hooks set in its environment ([`planted`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        planted: Vec<String>,
    },
    /// One operation finished. A worker the coordinator paces or ends at a count of
    /// commits writes each at once; others write theirs together a few times a second (every
    /// other event first writes those before it).
    Op(Box<OpReport>),
    /// A paced worker stopped after `pause` (its operation in flight finished first).
    Paused,
    /// The worker's clock (its host's `CLOCK_MONOTONIC`, in µs, the clock of its operations'
    /// times) when `go` reached it, written at once: with when the coordinator sent `go`
    /// and got this, it bounds the worker's clock's offset from the coordinator's.
    Clock { clock_us: u64 },
    /// After its last operation, the worker asks the coordinator's clock (answered by
    /// [`Command::Time`], addressed to `worker`): the second bound of its offset, in `done`.
    Ask { worker: u32 },
    /// The first operations of the worker with their requests (`--trace`), sent before
    /// `done`.
    Trace { ops: Vec<crate::trace::TracedOp> },
    /// All operations are finished; `elapsed_ms` runs from release to the end of the last
    /// (a paced worker: the time it was let run, from each `step` or `resume` to the end of
    /// the operations it ran then). `io`: every request of the worker's life (opening,
    /// warm-up, operations).
    Done {
        elapsed_ms: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        io: Option<IoCounts>,
        /// The worker's peak resident memory (VmHWM), in KiB.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rss_peak_kib: Option<u64>,
        /// Why the worker stopped before the cell's end, where it did: nothing left for its
        /// operations, or a cell bounded by its commits whose every attempt failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stopped: Option<String>,
        /// The coordinator's answer to `ask`, where it came.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockSample>,
    },
}

/// A worker's clock read against the coordinator's after its last operation: it asked at
/// `asked_us` and heard the answer at `heard_us` (its clock), the coordinator read its own,
/// `answered_us`, in between. So the worker's clock's offset from the coordinator's lies in
/// `[asked_us − answered_us, heard_us − answered_us]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockSample {
    pub asked_us: u64,
    pub answered_us: u64,
    pub heard_us: u64,
}

impl ClockSample {
    /// The bounds of the offset (worker − coordinator, µs) and the worker's time they hold at.
    pub fn bounds(&self) -> (i64, i64, u64) {
        let c = self.answered_us as i64;
        let at = self.asked_us / 2 + self.heard_us / 2;
        (self.asked_us as i64 - c, self.heard_us as i64 - c, at)
    }
}

/// What the coordinator writes to a worker's stdin, one per line. `go` releases every
/// worker; a paced worker (`--paced`) then runs only when told: `step` runs one operation,
/// `resume` runs operations until `pause` (the one in flight finishes, then `paused` is
/// reported), `end` ends it (it reports `done` and exits). An unpaced worker ignores all
/// but `go`, and `end` when it runs `--until-end`. `time` answers a worker's `ask`. A closed
/// stdin means the coordinator is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Go,
    Step,
    Resume,
    Pause,
    End,
    /// The coordinator's clock (`clock_us`), answering worker `worker`'s `ask` (a launcher's
    /// tasks all read it; the others leave it). `heard_us` is not sent: the worker's reader
    /// sets it to the worker's clock when the line came.
    Time {
        worker: u32,
        clock_us: u64,
        heard_us: u64,
    },
}

impl Command {
    const WORDS: [Command; 5] = [
        Command::Go,
        Command::Step,
        Command::Resume,
        Command::Pause,
        Command::End,
    ];

    /// The line that carries it (without the newline).
    pub fn line(self) -> String {
        match self {
            Command::Go => "go".into(),
            Command::Step => "step".into(),
            Command::Resume => "resume".into(),
            Command::Pause => "pause".into(),
            Command::End => "end".into(),
            Command::Time {
                worker, clock_us, ..
            } => format!("time {worker} {clock_us}"),
        }
    }

    pub fn parse(line: &str) -> Option<Command> {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("time ") {
            let (worker, clock_us) = rest.split_once(' ')?;
            return Some(Command::Time {
                worker: worker.parse().ok()?,
                clock_us: clock_us.trim().parse().ok()?,
                heard_us: 0,
            });
        }
        Command::WORDS.into_iter().find(|c| c.line() == line)
    }
}

/// One finished operation, as a worker reports it: its attempt, as the log keeps it
/// ([`crate::oplog::Attempt`]), whether it succeeded, and what it showed (the coordinator
/// makes it a record of the cell's operation log, [`crate::oplog::Op`], and decides its
/// outcome).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpReport {
    #[serde(flatten)]
    pub attempt: crate::oplog::Attempt,
    pub ok: bool,
    /// A client of a role: the operation's place in its role's mix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<u32>,
    /// A role's or a mixed cell's listing: what it saw of each writer's creations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen: Option<Vec<crate::oplog::Seen>>,
    /// A role's listing of a namespace's tables, in a cell that removes tables: the golden's
    /// tables there it did not see (ids).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gone: Option<Vec<String>>,
    /// In the history: the shared table's version a commit made or a version read returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// A role's or a mixed cell's listing: the names it listed more than once (none: absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twice: Option<Vec<String>>,
    /// A cleanup: what it removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleaned: Option<crate::oplog::Cleaned>,
    /// A listing in more than one page: each page's last name and version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Vec<crate::versions::Page>>,
    /// Invoke lines its worker could not write so far (`BENCH_WORKER_INVOKED`'s file), and
    /// the first error: a kill from outside would leave those operations out of its log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invokes_unwritten: Option<(u64, String)>,
}

impl OpReport {
    /// A report of operation `i` that took `ms` and ended as `ok` says, nothing else told.
    pub fn new(i: u64, ms: f64, ok: bool) -> OpReport {
        OpReport::of(crate::oplog::Attempt::new(i, ms), ok)
    }

    /// A report of `attempt`, ended as `ok` says, nothing else told.
    pub fn of(attempt: crate::oplog::Attempt, ok: bool) -> OpReport {
        OpReport {
            attempt,
            ok,
            op: None,
            seen: None,
            gone: None,
            version: None,
            twice: None,
            cleaned: None,
            pages: None,
            invokes_unwritten: None,
        }
    }
}

/// What a client of a role runs: its role (with the cell's targets), the role's place among
/// the cell's, its place among the cell's clients that remove entries and how many there
/// are (they share the golden's entries), and its own seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleArgs {
    pub index: u32,
    pub role: crate::plan::Role,
    pub remover: u32,
    pub removers: u32,
    pub seed: u64,
}

/// What a worker does; the coordinator builds it and passes it as arguments
/// ([`WorkerArgs::to_args`]), which the worker reads back ([`WorkerArgs::parse`]).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerArgs {
    pub root: String,
    pub operation: Operation,
    pub inline: bool,
    pub commit_retries: u32,
    /// This worker's id; with `--rank-from-env`, the id of rank 0 (the others add their
    /// rank).
    pub worker_id: u32,
    /// Started through a launcher: add the task's rank ([`RANK_VARS`]) to `--worker-id`.
    pub rank_from_env: bool,
    /// Run operations only when the coordinator says (`step`, `resume` … `pause`, `end`:
    /// see [`Command`]), for pairs formed inside a cell; `--operations` and
    /// `--duration-secs` are then not used.
    pub paced: bool,
    /// Run operations until the coordinator says `end` (a concurrent cell bounded by its
    /// commits), or the deadline if there is one.
    pub until_end: bool,
    /// Fixed number of operations (continuous cells).
    pub operations: Option<u64>,
    /// Start operations until this many seconds after release (concurrent and mixed cells).
    pub duration_secs: Option<u64>,
    /// Operations before release, excluded from the numbers.
    pub warmup: u64,
    /// Tables in the golden (what `describe-table` reads spread over, and what
    /// `drop-table` removes).
    pub tables: u64,
    /// Namespaces in the golden (what namespace reads spread over, and what
    /// `drop-namespace` removes).
    pub namespaces: u64,
    /// Mixed cells: reads of `--read-operation` before each commit.
    pub reads_per_write: Option<u64>,
    pub read_operation: Option<Operation>,
    /// Report the first N measured operations with their requests (`trace` event).
    pub trace: u32,
    /// A local root reached through the object-store API as S3 is (lance's
    /// `file-object-store`, 64 KiB blocks, no version hint).
    pub s3_shaped: bool,
    /// Abandon a measured operation that runs longer than this, counting it as failed
    /// ([`ErrorClass::Timeout`]); absent: no limit.
    pub attempt_timeout_ms: Option<u64>,
    /// Table operations: rows each commit appends to the shared table.
    pub rows_per_commit: Option<u64>,
    /// Listings: entries a page, every page listed; `None`: one request.
    pub page_size: Option<u32>,
    /// The cell's REST servers (`http://host:port`): the worker reaches the catalog through
    /// lance's `RestNamespace` to the one its id picks (round-robin); empty: directly.
    pub rest: Vec<String>,
    /// Added to the name of everything the worker commits (`--names`): a run's own mark,
    /// where runs share one catalog (an external server's); empty: none.
    pub names: String,
    /// The server's namespace every id the worker names is under (`--scope`, its parts
    /// joined by `$`): a run's own namespace under an external server's `rest.parent`;
    /// empty: the catalog's root.
    pub scope: String,
    /// An open-loop cell: the operations a second offered across its `writers` (each
    /// worker offers its share, from an intended start time for each operation).
    pub rate: Option<f64>,
    pub writers: u32,
    /// The operations arrive as a Poisson process (else evenly spaced).
    pub poisson: bool,
    /// The golden's tree (`[fixture]`); `None`: flat.
    pub fixture: Option<crate::plan::Fixture>,
    /// A client of a role.
    pub role: Option<RoleArgs>,
    /// What the worker's cleanups keep where it is no role's client (a campaign over
    /// `maintain-cleanup-versions`); a role's own retention is its role's.
    pub retention: Option<crate::plan::Retention>,
}

impl WorkerArgs {
    /// Worker `worker_id` of `operation` on `root`, everything else off or absent: one
    /// continuous operation's worth of nothing, for the caller to fill in.
    pub fn new(root: String, operation: Operation, worker_id: u32) -> WorkerArgs {
        WorkerArgs {
            root,
            operation,
            inline: false,
            commit_retries: 0,
            worker_id,
            rank_from_env: false,
            paced: false,
            until_end: false,
            operations: None,
            duration_secs: None,
            warmup: 0,
            tables: 0,
            namespaces: 0,
            reads_per_write: None,
            read_operation: None,
            trace: 0,
            s3_shaped: false,
            attempt_timeout_ms: None,
            rows_per_commit: None,
            page_size: None,
            rest: Vec::new(),
            names: String::new(),
            scope: String::new(),
            rate: None,
            writers: 1,
            poisson: false,
            fixture: None,
            role: None,
            retention: None,
        }
    }

    /// The REST server this worker uses: its id picks one round-robin; `None`: direct.
    pub fn rest_uri(&self) -> Option<&str> {
        let n = self.rest.len();
        (n > 0).then(|| self.rest[self.worker_id as usize % n].as_str())
    }

    /// The command line of `bench worker` with these arguments.
    pub fn to_args(&self) -> Vec<String> {
        let mut v = vec![
            "worker".to_string(),
            "--root".into(),
            self.root.clone(),
            "--operation".into(),
            self.operation.to_string(),
            "--commit-retries".into(),
            self.commit_retries.to_string(),
            "--worker-id".into(),
            self.worker_id.to_string(),
            "--warmup".into(),
            self.warmup.to_string(),
            "--tables".into(),
            self.tables.to_string(),
        ];
        if self.namespaces > 0 {
            v.extend(["--namespaces".into(), self.namespaces.to_string()]);
        }
        if self.inline {
            v.push("--inline".into());
        }
        if self.rank_from_env {
            v.push("--rank-from-env".into());
        }
        if self.paced {
            v.push("--paced".into());
        }
        if self.until_end {
            v.push("--until-end".into());
        }
        if let Some(n) = self.operations {
            v.extend(["--operations".into(), n.to_string()]);
        }
        if let Some(d) = self.duration_secs {
            v.extend(["--duration-secs".into(), d.to_string()]);
        }
        if let (Some(r), Some(op)) = (self.reads_per_write, self.read_operation) {
            v.extend([
                "--reads-per-write".into(),
                r.to_string(),
                "--read-operation".into(),
                op.to_string(),
            ]);
        }
        if self.trace > 0 {
            v.extend(["--trace".into(), self.trace.to_string()]);
        }
        if self.s3_shaped {
            v.push("--s3-shaped".into());
        }
        if let Some(ms) = self.attempt_timeout_ms {
            v.extend(["--attempt-timeout-ms".into(), ms.to_string()]);
        }
        if let Some(n) = self.rows_per_commit {
            v.extend(["--rows-per-commit".into(), n.to_string()]);
        }
        if let Some(n) = self.page_size {
            v.extend(["--page-size".into(), n.to_string()]);
        }
        if !self.rest.is_empty() {
            v.extend(["--rest".into(), self.rest.join(",")]);
        }
        if !self.names.is_empty() {
            v.extend(["--names".into(), self.names.clone()]);
        }
        if !self.scope.is_empty() {
            v.extend(["--scope".into(), self.scope.clone()]);
        }
        if let Some(r) = self.rate {
            v.extend(["--rate".into(), r.to_string()]);
            if self.poisson {
                v.push("--poisson".into());
            }
        }
        if self.writers != 1 {
            v.extend(["--writers".into(), self.writers.to_string()]);
        }
        if let Some(f) = &self.fixture {
            v.extend([
                "--fixture".into(),
                serde_json::to_string(f).expect("a fixture"),
            ]);
        }
        if let Some(r) = &self.role {
            v.extend(["--role".into(), serde_json::to_string(r).expect("a role")]);
        }
        if let Some(r) = &self.retention {
            v.extend([
                "--retention".into(),
                serde_json::to_string(r).expect("a retention"),
            ]);
        }
        v
    }

    /// Read back what [`WorkerArgs::to_args`] wrote (after `worker`); an argument that is
    /// missing, unknown or malformed is named.
    pub fn parse(args: &[String]) -> Result<WorkerArgs, String> {
        let mut w = WorkerArgs::new(String::new(), Operation::CreateNamespace, 0);
        let mut seen = std::collections::BTreeSet::new();
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let mut value = || {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value"))
            };
            fn num<T: std::str::FromStr>(flag: &str, v: String) -> Result<T, String> {
                v.parse()
                    .map_err(|_| format!("{flag} takes a whole number, not `{v}`"))
            }
            match flag.as_str() {
                "--root" => w.root = value()?,
                "--operation" => w.operation = value()?.parse()?,
                "--read-operation" => w.read_operation = Some(value()?.parse()?),
                "--commit-retries" => w.commit_retries = num(flag, value()?)?,
                "--worker-id" => w.worker_id = num(flag, value()?)?,
                "--operations" => w.operations = Some(num(flag, value()?)?),
                "--duration-secs" => w.duration_secs = Some(num(flag, value()?)?),
                "--warmup" => w.warmup = num(flag, value()?)?,
                "--tables" => w.tables = num(flag, value()?)?,
                "--namespaces" => w.namespaces = num(flag, value()?)?,
                "--reads-per-write" => w.reads_per_write = Some(num(flag, value()?)?),
                "--trace" => w.trace = num(flag, value()?)?,
                "--attempt-timeout-ms" => w.attempt_timeout_ms = Some(num(flag, value()?)?),
                "--rows-per-commit" => w.rows_per_commit = Some(num(flag, value()?)?),
                "--page-size" => w.page_size = Some(num(flag, value()?)?),
                "--rest" => w.rest = value()?.split(',').map(str::to_string).collect(),
                "--names" => w.names = value()?,
                "--scope" => w.scope = value()?,
                "--rate" => {
                    let v = value()?;
                    let r: f64 = v
                        .parse()
                        .map_err(|_| format!("--rate takes a rate, not `{v}`"))?;
                    w.rate = Some(r).filter(|r| r.is_finite() && *r > 0.0);
                }
                "--writers" => w.writers = num(flag, value()?)?,
                "--fixture" => {
                    let v = value()?;
                    w.fixture = Some(
                        serde_json::from_str(&v).map_err(|e| format!("--fixture `{v}`: {e}"))?,
                    );
                }
                "--role" => {
                    let v = value()?;
                    w.role =
                        Some(serde_json::from_str(&v).map_err(|e| format!("--role `{v}`: {e}"))?);
                }
                "--retention" => {
                    let v = value()?;
                    w.retention = Some(
                        serde_json::from_str(&v).map_err(|e| format!("--retention `{v}`: {e}"))?,
                    );
                }
                "--poisson" => w.poisson = true,
                "--inline" => w.inline = true,
                "--rank-from-env" => w.rank_from_env = true,
                "--paced" => w.paced = true,
                "--until-end" => w.until_end = true,
                "--s3-shaped" => w.s3_shaped = true,
                other => return Err(format!("unknown worker argument `{other}`")),
            }
            seen.insert(flag.as_str());
        }
        for required in ["--root", "--operation", "--commit-retries", "--worker-id"] {
            if !seen.contains(required) {
                return Err(format!("the worker needs {required}"));
            }
        }
        if w.operations.is_some() && w.duration_secs.is_some() {
            return Err("--operations and --duration-secs exclude each other".into());
        }
        if w.reads_per_write.is_some() != w.read_operation.is_some() {
            return Err("--reads-per-write and --read-operation go together".into());
        }
        Ok(w)
    }

    /// The read a mixed cell interleaves and how many per commit.
    pub fn mix(&self) -> Option<(Operation, u64)> {
        self.read_operation.zip(self.reads_per_write)
    }
}

/// The machine's hostname, for provenance.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_as_single_json_lines() {
        let events = [
            Event::Ready {
                versions: Some(Versions::own()),
                host: Some("n1".into()),
                open_ms: Some(104.5),
                planted: vec!["BENCH_OP_DELAY_MS=20".into()],
            },
            Event::Op(Box::new(OpReport::of(
                crate::oplog::Attempt {
                    class: Some(ErrorClass::Conflict),
                    err: Some("conflict\nline".into()),
                    ..crate::oplog::Attempt::new(3, 12.5)
                },
                false,
            ))),
            Event::Op(Box::new(OpReport {
                op: Some(2),
                ..OpReport::of(
                    crate::oplog::Attempt {
                        read: true,
                        warm: true,
                        io: Some(IoCounts {
                            get: 2,
                            read_bytes: 512,
                            ..IoCounts::default()
                        }),
                        path: Some(crate::stats::CriticalPath {
                            round_trips: 3,
                            wait_ms: 0.75,
                            wait_by_kind: [("get".to_string(), 0.75)].into(),
                            ..Default::default()
                        }),
                        end_ms: Some(1234.5),
                        lag_ms: Some(0.25),
                        entry: Some("ns_0$table_1".into()),
                        property: Some(("bench_w0".into(), "7".into())),
                        ..crate::oplog::Attempt::new(4, 1.0)
                    },
                    true,
                )
            })),
            Event::Paused,
            Event::Trace {
                ops: vec![crate::trace::TracedOp {
                    name: "create-table".into(),
                    i: 0,
                    ok: true,
                    outcome: None,
                    start_us: 10,
                    end_us: 20,
                    requests: vec![crate::trace::TracedRequest {
                        kind: "put".into(),
                        path: "r/data/x.lance".into(),
                        bytes: 3,
                        start_us: 11,
                        end_us: 19,
                    }],
                }],
            },
            Event::Done {
                elapsed_ms: 99.0,
                io: Some(IoCounts::default()),
                rss_peak_kib: Some(45_056),
                stopped: Some("nothing left".into()),
                clock: Some(ClockSample {
                    asked_us: 5,
                    answered_us: 3,
                    heard_us: 9,
                }),
            },
            Event::Clock { clock_us: 7 },
            Event::Ask { worker: 2 },
        ];
        for (w, event) in events.into_iter().enumerate() {
            let line = Line {
                w: Some(w as u32),
                event,
            };
            let text = serde_json::to_string(&line).unwrap();
            assert!(!text.contains('\n'));
            assert_eq!(Line::parse(&text), Some(line.clone()));
            // As `srun --label` prints it, with the task number (and padding) before it.
            assert_eq!(Line::parse(&format!("{w}: {text}")), Some(line.clone()));
            assert_eq!(Line::parse(&format!(" 12: {text}")), Some(line));
        }
        let alone = Line::parse(r#"{"ev":"done","elapsed_ms":1.0}"#).unwrap();
        // An operation's fields sit beside its tag, as before the report had a name.
        let op = Line::parse(r#"{"w":2,"ev":"op","i":7,"ms":1.5,"ok":true}"#).unwrap();
        assert_eq!(op.event, Event::Op(Box::new(OpReport::new(7, 1.5, true))));
        assert_eq!(alone.w, None);
        for garbage in ["", "hello", "srun: error: x {", "a: {\"w\":0}", "{not json"] {
            assert_eq!(Line::parse(garbage), None, "{garbage}");
        }
    }

    #[test]
    fn commands_are_single_words_but_the_time() {
        for c in Command::WORDS {
            assert_eq!(Command::parse(&format!(" {}\n", c.line())), Some(c));
        }
        let time = Command::Time {
            worker: 3,
            clock_us: 1_234_567,
            heard_us: 0,
        };
        assert_eq!(time.line(), "time 3 1234567");
        assert_eq!(Command::parse("time 3 1234567\n"), Some(time));
        for garbage in ["stop", "time", "time 3", "time x 5", "time 3 -1"] {
            assert_eq!(Command::parse(garbage), None, "{garbage}");
        }
    }

    /// The answer to `ask` bounds the offset by when it was asked and heard.
    #[test]
    fn a_clock_sample_bounds_the_offset_between_asking_and_hearing() {
        let s = ClockSample {
            asked_us: 10_000,
            answered_us: 4_000,
            heard_us: 10_600,
        };
        assert_eq!(s.bounds(), (6_000, 6_600, 10_300));
    }

    #[test]
    fn ranks_come_from_the_launcher_s_variable() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(rank_from(&env(&[("SLURM_PROCID", "5")])), Ok(5));
        assert_eq!(rank_from(&env(&[("OMPI_COMM_WORLD_RANK", "2")])), Ok(2));
        assert_eq!(
            rank_from(&env(&[("PMI_RANK", "1"), ("SLURM_PROCID", "3")])),
            Ok(3),
            "Slurm's own variable first"
        );
        let err = rank_from(&env(&[])).unwrap_err();
        assert!(err.contains("SLURM_PROCID"), "{err}");
        assert!(err.contains("must give every task its rank"), "{err}");
        let err = rank_from(&env(&[("SLURM_PROCID", "x")])).unwrap_err();
        assert!(err.contains("not a rank"), "{err}");
        assert_eq!(host_name(&env(&[("SLURMD_NODENAME", "n2")])), "n2");
        assert_eq!(host_name(&env(&[])), hostname());
    }

    #[test]
    fn arguments_round_trip_through_the_command_line() {
        let args = WorkerArgs {
            root: "/r".into(),
            operation: Operation::CreateTable,
            inline: true,
            commit_retries: 3,
            worker_id: 7,
            rank_from_env: true,
            paced: true,
            until_end: true,
            operations: None,
            duration_secs: Some(5),
            warmup: 2,
            tables: 66,
            namespaces: 33,
            reads_per_write: Some(10),
            read_operation: Some(Operation::ListTables { cold: true }),
            trace: 4,
            s3_shaped: true,
            attempt_timeout_ms: Some(30_000),
            rows_per_commit: Some(10),
            page_size: Some(50),
            rest: vec!["http://127.0.0.1:1".into(), "http://127.0.0.1:2".into()],
            names: "_r5f3a".into(),
            scope: "tb$bench_r5f3a".into(),
            rate: Some(12.5),
            writers: 4,
            poisson: true,
            fixture: Some(crate::plan::Fixture {
                width: 2,
                depth: 3,
                tables_per_namespace: 5,
                tables_at: crate::plan::TablesAt::Leaves,
                properties: 1,
                names: crate::plan::NameShape::Hashed,
                table_data: true,
            }),
            role: Some(RoleArgs {
                index: 1,
                role: crate::plan::Role {
                    name: "readers".into(),
                    clients: 3,
                    rate: Some(2.5),
                    mix: vec![(Operation::DescribeTable { cold: false }, 50)],
                    targets: crate::plan::Distribution::Zipf { exponent: 1.1 },
                    retention: Some(crate::plan::Retention::KeepVersions(100)),
                },
                remover: 2,
                removers: 5,
                seed: 42,
            }),
            retention: Some(crate::plan::Retention::KeepVersions(1)),
        };
        let line = args.to_args();
        assert_eq!(line[0], "worker");
        let back = WorkerArgs::parse(&line[1..]).unwrap();
        assert_eq!(back, args);
        assert_eq!(
            back.rest_uri(),
            Some("http://127.0.0.1:2"),
            "worker 7 of 2 servers"
        );
        assert_eq!(
            WorkerArgs::new("/r".into(), Operation::CreateTable, 3).rest_uri(),
            None
        );
        assert_eq!(back.mix(), Some((Operation::ListTables { cold: true }, 10)));
        let words = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let base = ["--root", "/r", "--commit-retries", "1", "--worker-id", "0"];
        for (extra, needle) in [
            (&["--operation", "write-drop"][..], "write-drop"),
            (
                &["--operation", "write-create-namespace", "--warmup", "x"][..],
                "--warmup",
            ),
            (
                &["--operation", "write-create-namespace", "--bogus"][..],
                "--bogus",
            ),
            (&["--operation"][..], "needs a value"),
            (&[][..], "needs --operation"),
            (
                &[
                    "--operation",
                    "write-create-namespace",
                    "--operations",
                    "1",
                    "--duration-secs",
                    "1",
                ][..],
                "exclude each other",
            ),
            (
                &[
                    "--operation",
                    "write-create-namespace",
                    "--reads-per-write",
                    "2",
                ][..],
                "go together",
            ),
        ] {
            let line = words(&[&base[..], extra].concat());
            let err = WorkerArgs::parse(&line).unwrap_err();
            assert!(err.contains(needle), "{extra:?}: {err}");
        }
    }
}
