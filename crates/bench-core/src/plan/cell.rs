//! One cell of a sweep: everything it needs, its id (the reference's tag) and its key.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{LANCE_VERSION, Operation, Transport, is_public_option};

/// How a cell drives its workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One worker process, a fixed number of commits.
    Continuous { operations: u64 },
    /// `concurrency` worker processes, each committing until the deadline (`duration_secs`,
    /// 0 for none) or, with `operations`, until the cell has that many successful commits
    /// across its writers, whichever comes first.
    Concurrent {
        concurrency: u32,
        duration_secs: u64,
        operations: Option<u64>,
        /// An open-loop cell's offered load (`concurrent.rate`); none: closed loop.
        load: Option<Load>,
    },
    /// `clients` worker processes, each repeating `reads_per_write` reads of `read` then one
    /// commit, until the deadline.
    Mixed {
        clients: u32,
        reads_per_write: u64,
        read: Operation,
        duration_secs: u64,
        /// An open-loop cell's offered commits (`mixed.rate`; its reads come
        /// `reads_per_write` to a commit); none: closed loop.
        load: Option<Load>,
    },
    /// The cell's roles (`Cell::roles`) at once, `clients` worker processes in all, until
    /// the deadline.
    Roles { clients: u32, duration_secs: u64 },
}

/// An open-loop cell's offered load: operations a second across its writers (in
/// thousandths, so that a cell stays `Eq`), and how they arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Load {
    pub milli_per_sec: u64,
    pub arrivals: Arrivals,
}

/// How an open-loop cell's operations are spaced: evenly, or as a Poisson process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arrivals {
    Uniform,
    Poisson,
}

impl Arrivals {
    pub fn as_str(self) -> &'static str {
        match self {
            Arrivals::Uniform => "uniform",
            Arrivals::Poisson => "poisson",
        }
    }

    pub fn parse(s: &str) -> Option<Arrivals> {
        match s {
            "uniform" => Some(Arrivals::Uniform),
            "poisson" => Some(Arrivals::Poisson),
            _ => None,
        }
    }
}

impl Load {
    /// Operations a second offered across the cell's writers.
    pub fn rate(self) -> f64 {
        self.milli_per_sec as f64 / 1000.0
    }

    /// The part of a cell's key an offered load adds (nothing for closed loop, so that
    /// earlier keys stay valid).
    fn key_part(load: Option<Load>) -> String {
        load.map_or(String::new(), |l| {
            format!(";rate={};arrivals={}", l.label(), l.arrivals.as_str())
        })
    }

    /// What an offered load adds to a cell's id: `_rate_20`, `_rate_2.5_poisson`.
    fn id_part(load: Option<Load>) -> String {
        load.map_or(String::new(), |l| match l.arrivals {
            Arrivals::Uniform => format!("_rate_{}", l.label()),
            Arrivals::Poisson => format!("_rate_{}_poisson", l.label()),
        })
    }

    /// The rate as ids and keys write it: `20`, `2.5`.
    pub fn label(self) -> String {
        let whole = self.milli_per_sec / 1000;
        match self.milli_per_sec % 1000 {
            0 => whole.to_string(),
            f => format!("{whole}.{}", format!("{f:03}").trim_end_matches('0')),
        }
    }
}

/// The kind of a [`Mode`], as records name it (`mode`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ModeKind {
    #[default]
    Continuous,
    Concurrent,
    Mixed,
    Roles,
}

impl ModeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ModeKind::Continuous => "continuous",
            ModeKind::Concurrent => "concurrent",
            ModeKind::Mixed => "mixed",
            ModeKind::Roles => "roles",
        }
    }
}

impl fmt::Display for ModeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Inline scalar indices on or off, as records name it (`variant`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    #[default]
    InlineIndex,
    NoIndex,
}

impl Variant {
    pub fn of(inline: bool) -> Variant {
        if inline {
            Variant::InlineIndex
        } else {
            Variant::NoIndex
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::InlineIndex => "inline_index",
            Variant::NoIndex => "no_index",
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Mode {
    pub fn kind(self) -> ModeKind {
        match self {
            Mode::Continuous { .. } => ModeKind::Continuous,
            Mode::Concurrent { .. } => ModeKind::Concurrent,
            Mode::Mixed { .. } => ModeKind::Mixed,
            Mode::Roles { .. } => ModeKind::Roles,
        }
    }
    pub fn workers(self) -> u32 {
        match self {
            Mode::Continuous { .. } => 1,
            Mode::Concurrent { concurrency, .. } => concurrency,
            Mode::Mixed { clients, .. } | Mode::Roles { clients, .. } => clients,
        }
    }
    /// `duration_secs` as the reference reports it: 0 for continuous cells.
    pub fn duration_secs(self) -> u64 {
        match self {
            Mode::Continuous { .. } => 0,
            Mode::Concurrent { duration_secs, .. }
            | Mode::Mixed { duration_secs, .. }
            | Mode::Roles { duration_secs, .. } => duration_secs,
        }
    }

    /// An open-loop cell's offered load.
    pub fn load(self) -> Option<Load> {
        match self {
            Mode::Concurrent { load, .. } | Mode::Mixed { load, .. } => load,
            Mode::Continuous { .. } | Mode::Roles { .. } => None,
        }
    }

    /// A concurrent cell's bound on its successful commits, across its writers.
    pub fn bound(self) -> Option<u64> {
        match self {
            Mode::Concurrent { operations, .. } => operations,
            _ => None,
        }
    }

    /// Operations per worker of a continuous cell.
    pub fn operations(self) -> Option<u64> {
        match self {
            Mode::Continuous { operations } => Some(operations),
            _ => None,
        }
    }

    /// The read a mixed cell interleaves and how many per commit.
    pub fn mixed_reads(self) -> Option<(Operation, u64)> {
        match self {
            Mode::Mixed {
                read,
                reads_per_write,
                ..
            } => Some((read, reads_per_write)),
            _ => None,
        }
    }

    /// The part of a cell's key that describes its mode.
    pub(crate) fn key_part(self) -> String {
        match self {
            Mode::Continuous { operations } => format!("continuous;operations={operations}"),
            // A bound adds to the key only where there is one: earlier keys stay valid.
            // So does an offered load.
            Mode::Concurrent {
                concurrency,
                duration_secs,
                operations,
                load,
            } => format!(
                "concurrent;concurrency={concurrency};duration_secs={duration_secs}{}{}",
                operations.map_or(String::new(), |n| format!(";operations={n}")),
                Load::key_part(load)
            ),
            Mode::Mixed {
                clients,
                reads_per_write,
                read,
                duration_secs,
                load,
            } => format!(
                "mixed;clients={clients};reads_per_write={reads_per_write};read={read};duration_secs={duration_secs}{}",
                Load::key_part(load)
            ),
            Mode::Roles {
                clients,
                duration_secs,
            } => format!("roles;clients={clients};duration_secs={duration_secs}"),
        }
    }
}

/// The (size, inline) pair a golden manifest is bootstrapped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GoldenSpec {
    pub rows: u64,
    pub inline: bool,
    /// For table operations: the versions of the shared table the golden holds.
    pub table_versions: Option<u64>,
    /// A tree of namespaces and tables (`rows` its entries); `None`: flat.
    pub fixture: Option<super::Fixture>,
}

impl GoldenSpec {
    /// A catalog that does not exist yet (`matrix.sizes = [0]`): no `__manifest`, no table.
    pub fn is_empty(&self) -> bool {
        self.rows == 0 && self.fixture.is_none() && self.table_versions.is_none()
    }

    /// The golden of catalog operations (no shared table).
    pub fn catalog(rows: u64, inline: bool) -> GoldenSpec {
        GoldenSpec {
            rows,
            inline,
            table_versions: None,
            fixture: None,
        }
    }

    /// Entries of a kind in the golden: a tree's, or a flat golden's first third
    /// namespaces and the rest tables.
    pub fn entries(self, entry: super::Entry) -> u64 {
        match self.fixture {
            Some(f) => f.count(entry),
            None => entry.count(self.rows),
        }
    }

    /// Directory name of the golden under `<root>/golden/`, as the reference names it.
    pub fn id(self) -> String {
        let table = (self.table_versions).map_or(String::new(), |v| format!("_table_v{v}"));
        let tree = (self.fixture).map_or(String::new(), |f| format!("_{}", f.label()));
        format!("inline_{}_rows_{}{tree}{table}", self.inline, self.rows)
    }
}

/// Everything one cell needs; its id and key are derived from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub golden: GoldenSpec,
    pub mode: Mode,
    pub operation: Operation,
    pub commit_retries: u32,
    /// Warm-up operations per worker, before release.
    pub warmup: u64,
    /// Resolved store root (affects the numbers: local disk vs S3).
    pub root: String,
    pub storage: BTreeMap<String, String>,
    /// The namespace properties of every worker's catalog: `[namespace]`'s and this
    /// cell's values of `[matrix.properties]`.
    pub properties: BTreeMap<String, String>,
    /// This cell's values of `[matrix.properties]` and `[matrix.env]`, in the matrix's
    /// order (properties first).
    pub varied: Vec<(String, String)>,
    /// The variables of every worker's environment: `[env]`'s and this cell's values of
    /// `[matrix.env]`.
    pub env: BTreeMap<String, String>,
    /// `run.attempt_timeout_secs`, in ms.
    pub attempt_timeout_ms: Option<u64>,
    /// Table operations: rows each commit appends to the shared table.
    pub rows_per_commit: Option<u64>,
    /// Listings: entries a page, every page listed; `None`: one request.
    pub page_size: Option<u32>,
    /// The build whose workers run the cell (`[builds]`); `None`: the running bench's.
    pub build: Option<CellBuild>,
    /// `bench ab`: the builds of arms A and B, both in the key (a pair needs both arms, so
    /// a rebuild of either runs the cell again).
    pub arms: Option<[BuildId; 2]>,
    /// The workers reach a local root through the object-store API, as S3
    /// (`run.local_requests = "s3"`); never on an S3 root.
    pub s3_shaped: bool,
    /// How the workers reach the catalog: straight to the store, or through REST servers.
    pub transport: Transport,
    /// [`Transport::External`]: the server's address (`rest.uri`).
    pub rest_uri: Option<String>,
    /// [`Transport::External`] with `rest.parent`: the server's namespace under which each
    /// run makes its own, built through the server and verified by its listing.
    pub parent: Option<String>,
    /// A cell of roles: its roles (their targets this cell's) and the seed of their draws;
    /// empty otherwise.
    pub roles: Vec<super::Role>,
    pub seed: u64,
    /// `workload.seed_per_repetition`: each repetition draws from a seed of its own.
    pub seed_per_repetition: bool,
    /// `workload.storage_sample_secs`: what `__manifest` stores, listed this often (not part
    /// of the cell's key: it changes what is recorded, not what runs).
    pub storage_sample_secs: Option<u64>,
    /// `[[nemesis]]`: the store's faults on the cell's timeline.
    pub nemesis: Vec<super::nemesis::Window>,
    /// What the cell's own cleanups keep (a campaign over `maintain-cleanup-versions`,
    /// `campaign.keep_versions`); a role's is its own.
    pub retention: Option<super::Retention>,
}

/// The build of a cell: its name in `[builds]`, its path as the plan gives it, and what it
/// is (its `worker-info` and the digest of its file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellBuild {
    pub name: String,
    pub path: String,
    pub id: BuildId,
}

/// What a worker build is: what its `worker-info` says (bench and lance versions) and a
/// digest of the executable file it is (for a wrapper script, of the script). A rebuild
/// changes the digest, so the cells it runs run again.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct BuildId {
    pub identity: String,
    /// The file's SHA-256, as hex digits (the first [`DIGEST_SHOWN`] of them in records);
    /// empty where unknown.
    pub digest: String,
}

/// Hex digits of a build's digest that records carry and messages show.
pub const DIGEST_SHOWN: usize = 16;

impl BuildId {
    /// The digest as records carry it: its first [`DIGEST_SHOWN`] hex digits.
    pub fn short(&self) -> &str {
        &self.digest[..self.digest.len().min(DIGEST_SHOWN)]
    }
}

impl Cell {
    /// Whether the cell is a fault campaign's point (its workers get [`super::campaign::ENV`]).
    pub fn campaign_point(&self) -> bool {
        self.env.contains_key(super::campaign::ENV)
    }

    /// The cell's id: the reference's tag (e.g. `conc_inline_true_rows_1000_c_10`), then
    /// its build and its values of `[matrix.properties]` where the plan has those
    /// dimensions (`..._c_10_cow_shards-1000`).
    pub fn id(&self) -> String {
        let mut id = self.shape_id();
        if let Some(b) = &self.build {
            id.push('_');
            id.push_str(&b.name);
        }
        for (k, v) in &self.varied {
            id.push_str(&format!("_{k}-{v}"));
        }
        id
    }

    /// The reference's tag: the id shared by the cells that differ only in build and
    /// properties (they run each repetition together, in rotating order).
    pub fn shape_id(&self) -> String {
        match self.mode {
            Mode::Continuous { .. } => format!("cont_{}", self.golden.id()),
            Mode::Concurrent {
                concurrency, load, ..
            } => format!(
                "conc_{}_c_{}{}",
                self.golden.id(),
                concurrency,
                Load::id_part(load)
            ),
            Mode::Mixed { clients, load, .. } => format!(
                "mixed_{}_c_{}{}",
                self.golden.id(),
                clients,
                Load::id_part(load)
            ),
            Mode::Roles { clients, .. } => format!("roles_{}_c_{clients}", self.golden.id()),
        }
    }

    /// `inline_index` or `no_index`, as the reference reports it.
    pub fn variant(&self) -> Variant {
        Variant::of(self.golden.inline)
    }

    /// The builds whose workers run the cell: its `[builds]` entry, or `bench ab`'s two
    /// arms; empty for the running bench's own workers.
    pub fn builds(&self) -> Vec<(Option<&'static str>, &BuildId)> {
        match (&self.build, &self.arms) {
            (Some(b), _) => vec![(None, &b.id)],
            (None, Some([a, b])) => vec![(Some("A"), a), (Some("B"), b)],
            (None, None) => Vec::new(),
        }
    }

    /// The variant as a name: build, index maintenance and the values of
    /// `[matrix.properties]`, e.g. `cow/inline_index/shards=1000`; just `inline_index` or
    /// `no_index` for a plan without builds and property dimensions.
    pub fn variant_name(&self) -> String {
        let mut parts: Vec<String> = self.build.iter().map(|b| b.name.clone()).collect();
        parts.push(self.variant().to_string());
        parts.extend(self.varied.iter().map(|(k, v)| format!("{k}={v}")));
        parts.join("/")
    }

    /// A hash of every resolved parameter that affects this cell's numbers. Editing any of
    /// them in the plan changes the key, so the cell runs again.
    pub fn key(&self) -> String {
        let mut h = Sha256::new();
        h.update(format!(
            "bench-cell-v1\nlance={LANCE_VERSION}\noperation={}\nrows={}\ninline={}\nmode={}\ncommit_retries={}\nroot={}\n",
            self.operation,
            self.golden.rows,
            self.golden.inline,
            self.mode.key_part(),
            self.commit_retries,
            self.root
        ));
        // Added after v1: hashed only when set, so keys of earlier results stay valid.
        if self.warmup > 0 {
            h.update(format!("warmup={}\n", self.warmup));
        }
        for w in &self.nemesis {
            h.update(format!("nemesis={}\n", w.describe()));
        }
        for (k, v) in self.storage.iter().filter(|(k, _)| is_public_option(k)) {
            // A URL's credentials are no part of what the cell measures.
            h.update(format!("storage.{k}={}\n", crate::redact::shown_value(v)));
        }
        for (k, v) in &self.properties {
            h.update(format!("namespace.{k}={v}\n"));
        }
        if let Some(b) = &self.build {
            h.update(format!(
                "build={}\nbuild_path={}\nbuild_identity={}\n",
                b.name, b.path, b.id.identity
            ));
            // Added with digests: a cell recorded before is stale, as its build is unknown.
            h.update(format!("build_digest={}\n", b.id.digest));
        }
        if let Some([a, b]) = &self.arms {
            h.update(format!(
                "arm.A={};{}\narm.B={};{}\n",
                a.identity, a.digest, b.identity, b.digest
            ));
        }
        if self.s3_shaped {
            h.update("local_requests=s3\n");
        }
        for (k, v) in &self.env {
            h.update(format!("env.{k}={v}\n"));
        }
        if let Some(ms) = self.attempt_timeout_ms {
            h.update(format!("attempt_timeout_ms={ms}\n"));
        }
        if let Some(n) = self.rows_per_commit {
            h.update(format!("table_rows_per_commit={n}\n"));
        }
        if let Some(n) = self.page_size {
            h.update(format!("page_size={n}\n"));
        }
        if let Some(v) = self.golden.table_versions {
            h.update(format!("table_versions={v}\n"));
        }
        h.update(self.transport.key_lines(self.rest_uri.as_deref()));
        if let Some(p) = &self.parent {
            h.update(format!("rest_parent={p}\n"));
        }
        if let Some(f) = &self.golden.fixture {
            h.update(format!("fixture={}\n", f.label()));
        }
        for r in &self.roles {
            h.update(r.key_line());
        }
        if !self.roles.is_empty() {
            h.update(format!("seed={}\n", self.seed));
        }
        if self.seed_per_repetition {
            h.update("seed_per_repetition=true\n");
        }
        if let Some(r) = self.retention {
            h.update(format!("retention={}\n", r.label()));
        }
        let digest = h.finalize();
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// A continuous cell of `operations` commits at 100 rows, no index, for unit tests.
#[cfg(test)]
pub fn sample(operations: u64) -> Cell {
    Cell {
        golden: GoldenSpec {
            rows: 100,
            inline: false,
            table_versions: None,
            fixture: None,
        },
        mode: Mode::Continuous { operations },
        operation: Operation::CreateNamespace,
        commit_retries: 20,
        warmup: 0,
        root: "/r".into(),
        storage: BTreeMap::new(),
        properties: BTreeMap::new(),
        varied: Vec::new(),
        env: BTreeMap::new(),
        attempt_timeout_ms: None,
        rows_per_commit: None,
        page_size: None,
        build: None,
        arms: None,
        s3_shaped: false,
        transport: Transport::Direct,
        rest_uri: None,
        parent: None,
        roles: Vec::new(),
        seed: 0,
        seed_per_repetition: false,
        storage_sample_secs: None,
        nemesis: Vec::new(),
        retention: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_variants_serialise_as_the_reference_names_them() {
        for (k, s) in [
            (ModeKind::Continuous, "continuous"),
            (ModeKind::Concurrent, "concurrent"),
            (ModeKind::Mixed, "mixed"),
        ] {
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{s}\""));
            assert_eq!(k.as_str(), s);
        }
        for (v, s) in [
            (Variant::InlineIndex, "inline_index"),
            (Variant::NoIndex, "no_index"),
        ] {
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{s}\""));
            assert_eq!(
                serde_json::from_str::<Variant>(&format!("\"{s}\"")).unwrap(),
                v
            );
        }
        assert_eq!(Variant::of(true), Variant::InlineIndex);
    }

    #[test]
    fn a_key_is_stable_for_the_same_parameters() {
        // Keys of results recorded by earlier releases must stay valid: pin one.
        let cell = Cell {
            golden: GoldenSpec {
                rows: 1000,
                inline: true,
                table_versions: None,
                fixture: None,
            },
            ..sample(50)
        };
        let mut h = Sha256::new();
        // The lance version is the build's (from Cargo.lock), so a candidate build's keys
        // differ from the baseline's, as they must.
        h.update(format!(
            "bench-cell-v1\nlance={LANCE_VERSION}\noperation=write-create-namespace\nrows=1000\ninline=true\n\
             mode=continuous;operations=50\ncommit_retries=20\nroot=/r\n"
        ));
        let want: String = h.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(cell.key(), want);
        assert_eq!(cell.id(), "cont_inline_true_rows_1000");
        // S3-shaped local requests are another measurement: another key, the same id.
        let shaped = Cell {
            s3_shaped: true,
            ..cell.clone()
        };
        assert_ne!(shaped.key(), want);
        assert_eq!(shaped.id(), cell.id());
        // So is an attempt timeout, and each value of a worker's variable.
        let timed = Cell {
            attempt_timeout_ms: Some(30_000),
            ..cell.clone()
        };
        assert_ne!(timed.key(), want);
        let hint = |v: &str| Cell {
            env: [("LANCE_USE_VERSION_HINT".to_string(), v.to_string())].into(),
            ..cell.clone()
        };
        assert_ne!(hint("0").key(), want);
        assert_ne!(hint("0").key(), hint("1").key());
    }
}
