//! The plan: a raw serde mirror of the TOML file, validated once into [`Plan`], and the
//! pure matrix expansion from a plan into the ordered list of [`Cell`]s.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::error::PlanError;

/// The lance version this binary is built against (pinned in `Cargo.toml`).
pub const LANCE_VERSION: &str = "14.0.2";

// ───────────── raw TOML mirror ─────────────

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    name: String,
    root: Option<String>,
    operation: Option<String>,
    matrix: RawMatrix,
    continuous: Option<RawContinuous>,
    concurrent: Option<RawConcurrent>,
    mixed: Option<RawMixed>,
    #[serde(default)]
    storage: BTreeMap<String, String>,
    #[serde(default)]
    run: RawRun,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    sizes: Vec<u64>,
    inline: Option<Vec<bool>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawContinuous {
    operations: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConcurrent {
    concurrency: Vec<u32>,
    duration_secs: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMixed {
    clients: Vec<u32>,
    reads_per_write: u64,
    duration_secs: u64,
    read_operation: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    cell_timeout_secs: Option<u64>,
    commit_retries: Option<u32>,
    keep_runs: Option<bool>,
    cleanup: Option<String>,
    warmup_operations: Option<u64>,
    repetitions: Option<u32>,
}

// ───────────── validated plan ─────────────

/// The committed catalog operation a cell measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    CreateNamespace,
    CreateTable,
    DeclareTable,
    /// Reads: `cold` opens a fresh namespace for every operation (timed with it); warm reads
    /// reuse the worker's namespace and its caches.
    ListNamespaces {
        cold: bool,
    },
    ListTables {
        cold: bool,
    },
    DescribeTable {
        cold: bool,
    },
}

impl Operation {
    pub const ALL: [Operation; 9] = [
        Operation::CreateNamespace,
        Operation::CreateTable,
        Operation::DeclareTable,
        Operation::ListNamespaces { cold: false },
        Operation::ListTables { cold: false },
        Operation::DescribeTable { cold: false },
        Operation::ListNamespaces { cold: true },
        Operation::ListTables { cold: true },
        Operation::DescribeTable { cold: true },
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Operation::CreateNamespace => "write-create-namespace",
            Operation::CreateTable => "write-create-table",
            Operation::DeclareTable => "write-declare-table",
            Operation::ListNamespaces { cold: false } => "warm-read-list-namespaces",
            Operation::ListTables { cold: false } => "warm-read-list-tables",
            Operation::DescribeTable { cold: false } => "warm-read-describe-table",
            Operation::ListNamespaces { cold: true } => "cold-read-list-namespaces",
            Operation::ListTables { cold: true } => "cold-read-list-tables",
            Operation::DescribeTable { cold: true } => "cold-read-describe-table",
        }
    }

    /// Whether the operation commits to `__manifest` (and so is verified).
    pub fn is_write(self) -> bool {
        matches!(
            self,
            Operation::CreateNamespace | Operation::CreateTable | Operation::DeclareTable
        )
    }

    /// Whether every operation opens a fresh namespace.
    pub fn is_cold(self) -> bool {
        matches!(
            self,
            Operation::ListNamespaces { cold: true }
                | Operation::ListTables { cold: true }
                | Operation::DescribeTable { cold: true }
        )
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Operation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Operation::ALL
            .into_iter()
            .find(|op| op.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Operation::ALL.iter().map(|o| o.as_str()).collect();
                format!(
                    "unknown operation `{s}`; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Continuous {
    pub operations: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Concurrent {
    pub concurrency: Vec<u32>,
    pub duration: Duration,
}

/// Mixed load: `clients` processes, each repeating `reads_per_write` reads of
/// `read_operation` then one commit of the plan's operation, for `duration`.
#[derive(Debug, Clone, PartialEq)]
pub struct Mixed {
    pub clients: Vec<u32>,
    pub reads_per_write: u64,
    pub duration: Duration,
    pub read_operation: Operation,
}

/// The read a `[mixed]` cell interleaves when the plan does not name one.
pub const DEFAULT_MIXED_READ: Operation = Operation::DescribeTable { cold: false };

/// What a finished sweep removes from the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cleanup {
    /// The per-cell copies under `<root>/runs/` (the default).
    Runs,
    /// The copies and the goldens, as the reference does.
    All,
    /// Nothing.
    None,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    pub cell_timeout: Duration,
    pub commit_retries: u32,
    pub keep_runs: bool,
    pub cleanup: Cleanup,
    /// Operations each worker runs before release, excluded from the numbers.
    pub warmup_operations: u64,
    /// How many times each cell runs, each time on a fresh copy of its golden.
    pub repetitions: u32,
}

/// A validated plan: every field already has the type and range the runner needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub name: String,
    /// `root` from the file, if any; the runner resolves the default (`<out>/store`).
    pub root: Option<String>,
    pub operation: Operation,
    pub sizes: Vec<u64>,
    pub inline: Vec<bool>,
    pub continuous: Option<Continuous>,
    pub concurrent: Option<Concurrent>,
    pub mixed: Option<Mixed>,
    pub storage: BTreeMap<String, String>,
    pub run: RunSettings,
}

pub const DEFAULT_CELL_TIMEOUT_SECS: u64 = 1200;
pub const DEFAULT_COMMIT_RETRIES: u32 = 20;

impl Plan {
    /// Read and validate a plan file.
    pub fn load(path: &Path) -> Result<Plan, PlanError> {
        let text = std::fs::read_to_string(path).map_err(|source| PlanError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Plan::parse(&text).map_err(|e| e.in_file(path))
    }

    /// Parse and validate plan text.
    pub fn parse(text: &str) -> Result<Plan, PlanError> {
        let de = toml::de::Deserializer::parse(text).map_err(|e| PlanError::Syntax {
            file: None,
            message: e.to_string(),
        })?;
        let raw: RawPlan = serde_path_to_error::deserialize(de).map_err(|e| {
            let key = e.path().to_string();
            let inner = e.into_inner();
            PlanError::Key {
                file: None,
                key,
                line: inner.span().map(|s| line_of(text, s.start)),
                message: inner.message().to_string(),
            }
        })?;
        validate(raw)
    }
}

impl Plan {
    /// Apply command-line overrides: `--root` replaces `root`, and each
    /// `--storage-option KEY=VALUE` sets (or replaces) one storage option.
    pub fn override_with(&mut self, root: Option<&str>, storage: &[(String, String)]) {
        if let Some(r) = root {
            self.root = Some(r.to_string());
        }
        for (k, v) in storage {
            self.storage.insert(k.clone(), v.clone());
        }
    }
}

/// Whether a storage option holds a credential. Credentials are never part of a cell's
/// key (rotating them must not re-run a sweep), never printed and never written.
pub fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "secret",
        "access_key",
        "token",
        "password",
        "session",
        "credential",
        "key_id",
    ]
    .iter()
    .any(|s| k.contains(s))
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn invalid(key: &str, message: impl Into<String>) -> PlanError {
    PlanError::Key {
        file: None,
        key: key.to_string(),
        line: None,
        message: message.into(),
    }
}

fn check_list<T: PartialEq + fmt::Debug>(key: &str, list: &[T]) -> Result<(), PlanError> {
    if list.is_empty() {
        return Err(invalid(key, "must list at least one value"));
    }
    for (i, v) in list.iter().enumerate() {
        if list[..i].contains(v) {
            return Err(invalid(
                key,
                format!("lists {v:?} twice; remove the duplicate"),
            ));
        }
    }
    Ok(())
}

fn validate(raw: RawPlan) -> Result<Plan, PlanError> {
    let name = raw.name.trim().to_string();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        || name.starts_with('.')
    {
        return Err(invalid(
            "name",
            format!(
                "`{}` is not a usable results directory name; use letters, digits, `-`, `_` or `.`",
                raw.name
            ),
        ));
    }
    if let Some(root) = &raw.root
        && root.trim().is_empty()
    {
        return Err(invalid(
            "root",
            "must not be empty; omit it to use <out>/store",
        ));
    }
    let operation = match raw.operation.as_deref() {
        None => Operation::CreateNamespace,
        Some(s) => s.parse().map_err(|m: String| invalid("operation", m))?,
    };

    check_list("matrix.sizes", &raw.matrix.sizes)?;
    if raw.matrix.sizes.contains(&0) {
        return Err(invalid(
            "matrix.sizes",
            "sizes must be at least 1 (rows already in __manifest)",
        ));
    }
    let inline = raw.matrix.inline.unwrap_or_else(|| vec![true, false]);
    check_list("matrix.inline", &inline)?;

    let continuous = match raw.continuous {
        None => None,
        Some(c) if c.operations == 0 => {
            return Err(invalid("continuous.operations", "must be at least 1"));
        }
        Some(c) => Some(Continuous {
            operations: c.operations,
        }),
    };
    let concurrent = match raw.concurrent {
        None => None,
        Some(c) => {
            check_list("concurrent.concurrency", &c.concurrency)?;
            if c.concurrency.contains(&0) {
                return Err(invalid(
                    "concurrent.concurrency",
                    "every concurrency must be at least 1 writer process",
                ));
            }
            if c.duration_secs == 0 {
                return Err(invalid("concurrent.duration_secs", "must be at least 1"));
            }
            Some(Concurrent {
                concurrency: c.concurrency,
                duration: Duration::from_secs(c.duration_secs),
            })
        }
    };
    let mixed = match raw.mixed {
        None => None,
        Some(m) => {
            check_list("mixed.clients", &m.clients)?;
            if m.clients.contains(&0) {
                return Err(invalid(
                    "mixed.clients",
                    "every client count must be at least 1 process",
                ));
            }
            if m.reads_per_write == 0 {
                return Err(invalid(
                    "mixed.reads_per_write",
                    "must be at least 1; for writes only use [concurrent]",
                ));
            }
            if m.duration_secs == 0 {
                return Err(invalid("mixed.duration_secs", "must be at least 1"));
            }
            let read_operation = match m.read_operation.as_deref() {
                None => DEFAULT_MIXED_READ,
                Some(s) => s
                    .parse()
                    .map_err(|e: String| invalid("mixed.read_operation", e))?,
            };
            if read_operation.is_write() {
                return Err(invalid(
                    "mixed.read_operation",
                    format!("`{read_operation}` is a write; name a warm- or cold-read operation"),
                ));
            }
            if !operation.is_write() {
                return Err(invalid(
                    "operation",
                    format!(
                        "`{operation}` is a read, but [mixed] commits the plan's operation; \
                         use a write- operation (the reads are mixed.read_operation)"
                    ),
                ));
            }
            Some(Mixed {
                clients: m.clients,
                reads_per_write: m.reads_per_write,
                duration: Duration::from_secs(m.duration_secs),
                read_operation,
            })
        }
    };
    if continuous.is_none() && concurrent.is_none() && mixed.is_none() {
        return Err(invalid(
            "continuous",
            "the plan has no [continuous], [concurrent] or [mixed] table, so it has no cells; add one",
        ));
    }
    for (k, v) in &raw.storage {
        if k.trim().is_empty() {
            return Err(invalid("storage", "has an empty key"));
        }
        if v.is_empty() {
            return Err(invalid(&format!("storage.{k}"), "must not be empty"));
        }
    }

    let cell_timeout_secs = raw
        .run
        .cell_timeout_secs
        .unwrap_or(DEFAULT_CELL_TIMEOUT_SECS);
    if cell_timeout_secs == 0 {
        return Err(invalid("run.cell_timeout_secs", "must be at least 1"));
    }
    let keep_runs = raw.run.keep_runs.unwrap_or(false);
    let cleanup = match raw.run.cleanup.as_deref() {
        None if keep_runs => Cleanup::None,
        None => Cleanup::Runs,
        Some("none") => Cleanup::None,
        Some(c @ ("runs" | "all")) if keep_runs => {
            return Err(invalid(
                "run.cleanup",
                format!("`{c}` contradicts `run.keep_runs = true`; use \"none\" or drop keep_runs"),
            ));
        }
        Some("runs") => Cleanup::Runs,
        Some("all") => Cleanup::All,
        Some(other) => {
            return Err(invalid(
                "run.cleanup",
                format!("unknown value `{other}`; expected \"runs\", \"all\" or \"none\""),
            ));
        }
    };
    let run = RunSettings {
        cell_timeout: Duration::from_secs(cell_timeout_secs),
        commit_retries: raw.run.commit_retries.unwrap_or(DEFAULT_COMMIT_RETRIES),
        keep_runs,
        cleanup,
        warmup_operations: raw.run.warmup_operations.unwrap_or(0),
        repetitions: match raw.run.repetitions {
            Some(0) => return Err(invalid("run.repetitions", "must be at least 1")),
            r => r.unwrap_or(1),
        },
    };
    Ok(Plan {
        name,
        root: raw.root.map(|r| r.trim().to_string()),
        operation,
        sizes: raw.matrix.sizes,
        inline,
        continuous,
        concurrent,
        mixed,
        storage: raw.storage,
        run,
    })
}

// ───────────── cells ─────────────

/// How a cell drives its workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One worker process, a fixed number of commits.
    Continuous { operations: u64 },
    /// `concurrency` worker processes, each committing until the deadline.
    Concurrent {
        concurrency: u32,
        duration_secs: u64,
    },
    /// `clients` worker processes, each repeating `reads_per_write` reads of `read` then one
    /// commit, until the deadline.
    Mixed {
        clients: u32,
        reads_per_write: u64,
        read: Operation,
        duration_secs: u64,
    },
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Continuous { .. } => "continuous",
            Mode::Concurrent { .. } => "concurrent",
            Mode::Mixed { .. } => "mixed",
        }
    }
    pub fn workers(self) -> u32 {
        match self {
            Mode::Continuous { .. } => 1,
            Mode::Concurrent { concurrency, .. } => concurrency,
            Mode::Mixed { clients, .. } => clients,
        }
    }
    /// `duration_secs` as the reference reports it: 0 for continuous cells.
    pub fn duration_secs(self) -> u64 {
        match self {
            Mode::Continuous { .. } => 0,
            Mode::Concurrent { duration_secs, .. } | Mode::Mixed { duration_secs, .. } => {
                duration_secs
            }
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
}

/// The (size, inline) pair a golden manifest is bootstrapped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GoldenSpec {
    pub rows: u64,
    pub inline: bool,
}

impl GoldenSpec {
    /// Directory name of the golden under `<root>/golden/`, as the reference names it.
    pub fn id(self) -> String {
        format!("inline_{}_rows_{}", self.inline, self.rows)
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
}

impl Cell {
    /// The reference's tag for this cell, e.g. `conc_inline_true_rows_1000_c_10`.
    pub fn id(&self) -> String {
        match self.mode {
            Mode::Continuous { .. } => format!("cont_{}", self.golden.id()),
            Mode::Concurrent { concurrency, .. } => {
                format!("conc_{}_c_{}", self.golden.id(), concurrency)
            }
            Mode::Mixed { clients, .. } => format!("mixed_{}_c_{}", self.golden.id(), clients),
        }
    }

    /// `inline_index` or `no_index`, as the reference reports it.
    pub fn variant(&self) -> &'static str {
        if self.golden.inline {
            "inline_index"
        } else {
            "no_index"
        }
    }

    /// A hash of every resolved parameter that affects this cell's numbers. Editing any of
    /// them in the plan changes the key, so the cell runs again.
    pub fn key(&self) -> String {
        let mut h = Sha256::new();
        let mode = match self.mode {
            Mode::Continuous { operations } => format!("continuous;operations={operations}"),
            Mode::Concurrent {
                concurrency,
                duration_secs,
            } => format!("concurrent;concurrency={concurrency};duration_secs={duration_secs}"),
            Mode::Mixed {
                clients,
                reads_per_write,
                read,
                duration_secs,
            } => format!(
                "mixed;clients={clients};reads_per_write={reads_per_write};read={read};duration_secs={duration_secs}"
            ),
        };
        h.update(format!(
            "bench-cell-v1\nlance={LANCE_VERSION}\noperation={}\nrows={}\ninline={}\nmode={mode}\ncommit_retries={}\nroot={}\n",
            self.operation, self.golden.rows, self.golden.inline, self.commit_retries, self.root
        ));
        // Added after v1: hashed only when set, so keys of earlier results stay valid.
        if self.warmup > 0 {
            h.update(format!("warmup={}\n", self.warmup));
        }
        for (k, v) in self.storage.iter().filter(|(k, _)| !is_secret(k)) {
            h.update(format!("storage.{k}={v}\n"));
        }
        let digest = h.finalize();
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// One step of a sweep in execution order: a golden bootstrap or a cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Golden(GoldenSpec),
    Cell(Cell),
}

/// Expand the matrix in the reference's order: for each inline variant, for each size: its
/// golden, then the continuous cell, then one concurrent cell per concurrency, then (bench's
/// addition) one mixed cell per client count.
pub fn expand(plan: &Plan, root: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    for &inline in &plan.inline {
        for &rows in &plan.sizes {
            let golden = GoldenSpec { rows, inline };
            steps.push(Step::Golden(golden));
            let cell = |mode| Cell {
                golden,
                mode,
                operation: plan.operation,
                commit_retries: plan.run.commit_retries,
                warmup: plan.run.warmup_operations,
                root: root.to_string(),
                storage: plan.storage.clone(),
            };
            if let Some(c) = &plan.continuous {
                steps.push(Step::Cell(cell(Mode::Continuous {
                    operations: c.operations,
                })));
            }
            if let Some(c) = &plan.concurrent {
                for &concurrency in &c.concurrency {
                    steps.push(Step::Cell(cell(Mode::Concurrent {
                        concurrency,
                        duration_secs: c.duration.as_secs(),
                    })));
                }
            }
            if let Some(m) = &plan.mixed {
                for &clients in &m.clients {
                    steps.push(Step::Cell(cell(Mode::Mixed {
                        clients,
                        reads_per_write: m.reads_per_write,
                        read: m.read_operation,
                        duration_secs: m.duration.as_secs(),
                    })));
                }
            }
        }
    }
    steps
}

/// Only the cells of an expansion, in order.
pub fn cells(steps: &[Step]) -> Vec<&Cell> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Cell(c) => Some(c),
            Step::Golden(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: &str = r#"
name = "tiny"
[matrix]
sizes = [100, 1000]
inline = [true, false]
[continuous]
operations = 5
[concurrent]
concurrency = [2, 10]
duration_secs = 2
"#;

    #[test]
    fn parses_a_full_plan_with_defaults() {
        let plan = Plan::parse(TINY).unwrap();
        assert_eq!(plan.name, "tiny");
        assert_eq!(plan.operation, Operation::CreateNamespace);
        assert_eq!(plan.sizes, vec![100, 1000]);
        assert_eq!(plan.run.commit_retries, 20);
        assert_eq!(plan.run.cell_timeout, Duration::from_secs(1200));
        assert!(!plan.run.keep_runs);
        assert_eq!(plan.concurrent.unwrap().duration, Duration::from_secs(2));
    }

    #[test]
    fn inline_defaults_to_both_variants() {
        let plan =
            Plan::parse("name='x'\n[matrix]\nsizes=[1]\n[continuous]\noperations=1\n").unwrap();
        assert_eq!(plan.inline, vec![true, false]);
        assert!(plan.concurrent.is_none());
    }

    #[test]
    fn bad_plans_name_the_key() {
        let base = "name = 'x'\n[matrix]\nsizes = [1]\n[continuous]\noperations = 1\n";
        let cases: &[(&str, &str, &str)] = &[
            (
                "name = 'x'\n[matrix]\nsizez = [1]\n",
                "sizez",
                "unknown field",
            ),
            (
                "name = 'x'\nfoo = 1\n[matrix]\nsizes=[1]\n",
                "foo",
                "unknown field",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = 'many'\n",
                "matrix.sizes",
                "invalid type",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = [-1]\n",
                "matrix.sizes[0]",
                "invalid value",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = []\n[continuous]\noperations=1\n",
                "matrix.sizes",
                "at least one",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = [5, 5]\n[continuous]\noperations=1\n",
                "matrix.sizes",
                "twice",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = [0]\n[continuous]\noperations=1\n",
                "matrix.sizes",
                "at least 1",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = [1]\ninline = []\n[continuous]\noperations=1\n",
                "matrix.inline",
                "at least one",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = [1]\ninline = [true, true]\n[continuous]\noperations=1\n",
                "matrix.inline",
                "twice",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = [1]\n[continuous]\noperations = 0\n",
                "continuous.operations",
                "at least 1",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = [1]\n[concurrent]\nconcurrency = [0]\nduration_secs = 1\n",
                "concurrent.concurrency",
                "at least 1",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = [1]\n[concurrent]\nconcurrency = []\nduration_secs = 1\n",
                "concurrent.concurrency",
                "at least one",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = [1]\n[concurrent]\nconcurrency = [2,2]\nduration_secs = 1\n",
                "concurrent.concurrency",
                "twice",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = [1]\n[concurrent]\nconcurrency = [2]\nduration_secs = 0\n",
                "concurrent.duration_secs",
                "at least 1",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = [1]\n[concurrent]\nconcurrency = [2]\n",
                "concurrent",
                "missing field `duration_secs`",
            ),
            (
                "name = 'x'\n[matrix]\nsizes = [1]\n",
                "continuous",
                "no [continuous], [concurrent] or [mixed]",
            ),
            (
                &format!("{base}[mixed]\nclients = [2]\nduration_secs = 1\n"),
                "mixed",
                "missing field `reads_per_write`",
            ),
            (
                &format!("{base}[mixed]\nclients = [0]\nreads_per_write = 3\nduration_secs = 1\n"),
                "mixed.clients",
                "at least 1",
            ),
            (
                &format!("{base}[mixed]\nclients = [2]\nreads_per_write = 0\nduration_secs = 1\n"),
                "mixed.reads_per_write",
                "at least 1",
            ),
            (
                &format!("{base}[mixed]\nclients = [2]\nreads_per_write = 3\nduration_secs = 0\n"),
                "mixed.duration_secs",
                "at least 1",
            ),
            (
                &format!(
                    "{base}[mixed]\nclients = [2]\nreads_per_write = 3\nduration_secs = 1\nread_operation = 'write-create-table'\n"
                ),
                "mixed.read_operation",
                "is a write",
            ),
            (
                &format!(
                    "{base}[mixed]\nclients = [2]\nreads_per_write = 3\nduration_secs = 1\nread_operation = 'list'\n"
                ),
                "mixed.read_operation",
                "unknown operation",
            ),
            (
                "name = 'x'\noperation = 'warm-read-list-tables'\n[matrix]\nsizes = [1]\n[mixed]\nclients = [2]\nreads_per_write = 3\nduration_secs = 1\n",
                "operation",
                "is a read",
            ),
            (
                "name = 'x'\noperation = 'write-drop-table'\n[matrix]\nsizes = [1]\n[continuous]\noperations=1\n",
                "operation",
                "unknown operation",
            ),
            (
                "name = 'a/b'\n[matrix]\nsizes = [1]\n[continuous]\noperations=1\n",
                "name",
                "results directory name",
            ),
            (
                "[matrix]\nsizes = [1]\n[continuous]\noperations=1\n",
                "",
                "missing field `name`",
            ),
            (
                &format!("{base}[run]\ncell_timeout_secs = 0\n"),
                "run.cell_timeout_secs",
                "at least 1",
            ),
            (
                &format!("{base}[run]\nkeep_runs = 'yes'\n"),
                "run.keep_runs",
                "invalid type",
            ),
            (
                &format!("{base}[run]\nretries = 3\n"),
                "run.retries",
                "unknown field",
            ),
            (
                &format!("{base}[storage]\naws_region = 3\n"),
                "storage.aws_region",
                "invalid type",
            ),
            (
                &format!("{base}[storage]\naws_region = ''\n"),
                "storage.aws_region",
                "must not be empty",
            ),
        ];
        for (text, key, needle) in cases {
            let err = Plan::parse(text).expect_err(text).to_string();
            assert!(
                err.contains(needle),
                "plan {text:?}: message {err:?} lacks {needle:?}"
            );
            if !key.is_empty() {
                assert!(
                    err.contains(&format!("`{key}`")),
                    "plan {text:?}: message {err:?} does not name key {key:?}"
                );
            }
        }
    }

    #[test]
    fn syntax_and_type_errors_give_a_line() {
        let err = Plan::parse("name = 'x'\n[matrix]\nsizes = 'many'\n").unwrap_err();
        assert!(err.to_string().contains("line 3"), "{err}");
        let err = Plan::parse("name = 'x\n").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
    }

    fn ids(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|s| match s {
                Step::Golden(g) => format!("golden:{}", g.id()),
                Step::Cell(c) => c.id(),
            })
            .collect()
    }

    #[test]
    fn expansion_follows_the_reference_order() {
        let plan = Plan::parse(TINY).unwrap();
        let steps = expand(&plan, "/r");
        assert_eq!(
            ids(&steps),
            vec![
                "golden:inline_true_rows_100",
                "cont_inline_true_rows_100",
                "conc_inline_true_rows_100_c_2",
                "conc_inline_true_rows_100_c_10",
                "golden:inline_true_rows_1000",
                "cont_inline_true_rows_1000",
                "conc_inline_true_rows_1000_c_2",
                "conc_inline_true_rows_1000_c_10",
                "golden:inline_false_rows_100",
                "cont_inline_false_rows_100",
                "conc_inline_false_rows_100_c_2",
                "conc_inline_false_rows_100_c_10",
                "golden:inline_false_rows_1000",
                "cont_inline_false_rows_1000",
                "conc_inline_false_rows_1000_c_2",
                "conc_inline_false_rows_1000_c_10",
            ]
        );
        let cells = cells(&steps);
        assert_eq!(cells.len(), 12);
        assert_eq!(cells[0].variant(), "inline_index");
        assert_eq!(cells[8].variant(), "no_index");
        assert_eq!(cells[1].mode.workers(), 2);
        assert_eq!(cells[0].mode.duration_secs(), 0);
    }

    #[test]
    fn mixed_cells_follow_the_concurrent_ones() {
        let plan = Plan::parse(
            "name='x'\n[matrix]\nsizes=[7]\ninline=[true]\n[concurrent]\nconcurrency=[2]\nduration_secs=1\n\
             [mixed]\nclients=[4, 1]\nreads_per_write=100\nduration_secs=3\n",
        )
        .unwrap();
        let steps = expand(&plan, "/r");
        assert_eq!(
            ids(&steps),
            vec![
                "golden:inline_true_rows_7",
                "conc_inline_true_rows_7_c_2",
                "mixed_inline_true_rows_7_c_4",
                "mixed_inline_true_rows_7_c_1",
            ]
        );
        let c = cells(&steps)[1];
        assert_eq!(c.mode.name(), "mixed");
        assert_eq!(c.mode.workers(), 4);
        assert_eq!(c.mode.duration_secs(), 3);
        assert_eq!(c.mode.mixed_reads(), Some((DEFAULT_MIXED_READ, 100)));
        let other = Plan::parse(
            "name='x'\n[matrix]\nsizes=[7]\ninline=[true]\n[concurrent]\nconcurrency=[2]\nduration_secs=1\n\
             [mixed]\nclients=[4, 1]\nreads_per_write=10\nduration_secs=3\nread_operation='cold-read-list-tables'\n",
        )
        .unwrap();
        let c2 = cells(&expand(&other, "/r"))[1].clone();
        assert_eq!(c2.id(), c.id());
        assert_ne!(
            c2.key(),
            c.key(),
            "reads_per_write and the read are in the key"
        );
    }

    #[test]
    fn omitted_tables_skip_their_cells() {
        let plan =
            Plan::parse("name='x'\n[matrix]\nsizes=[7]\ninline=[false]\n[concurrent]\nconcurrency=[3]\nduration_secs=1\n")
                .unwrap();
        assert_eq!(
            ids(&expand(&plan, "/r")),
            vec!["golden:inline_false_rows_7", "conc_inline_false_rows_7_c_3"]
        );
    }

    #[test]
    fn keys_change_only_with_the_parameters_of_a_cell() {
        let a = Plan::parse(TINY).unwrap();
        let b = Plan::parse(&TINY.replace("operations = 5", "operations = 6")).unwrap();
        let ka: Vec<_> = cells(&expand(&a, "/r")).iter().map(|c| c.key()).collect();
        let kb: Vec<_> = cells(&expand(&b, "/r")).iter().map(|c| c.key()).collect();
        let changed: Vec<_> = cells(&expand(&a, "/r"))
            .iter()
            .zip(ka.iter().zip(&kb))
            .filter(|(_, (x, y))| x != y)
            .map(|(c, _)| c.id())
            .collect();
        assert_eq!(
            changed,
            vec![
                "cont_inline_true_rows_100",
                "cont_inline_true_rows_1000",
                "cont_inline_false_rows_100",
                "cont_inline_false_rows_1000"
            ]
        );
        let kr: Vec<_> = cells(&expand(&a, "/other"))
            .iter()
            .map(|c| c.key())
            .collect();
        assert!(
            ka.iter().zip(&kr).all(|(x, y)| x != y),
            "root is part of the key"
        );
        let mut unique = ka.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ka.len(), "every cell has its own key");
    }

    #[test]
    fn cleanup_defaults_follow_keep_runs() {
        let base = "name='x'\n[matrix]\nsizes=[1]\n[continuous]\noperations=1\n";
        let c = |extra: &str| Plan::parse(&format!("{base}{extra}")).unwrap().run.cleanup;
        assert_eq!(c(""), Cleanup::Runs);
        assert_eq!(c("[run]\nkeep_runs = true\n"), Cleanup::None);
        assert_eq!(c("[run]\ncleanup = 'all'\n"), Cleanup::All);
        assert_eq!(c("[run]\ncleanup = 'none'\n"), Cleanup::None);
    }

    #[test]
    fn credentials_are_not_part_of_the_key_but_other_options_are() {
        let mut a = Plan::parse(TINY).unwrap();
        let key = |p: &Plan| cells(&expand(p, "s3://b/p"))[0].key();
        let k0 = key(&a);
        a.override_with(None, &[("aws_secret_access_key".into(), "s3cr3t".into())]);
        a.override_with(None, &[("aws_access_key_id".into(), "AKIA".into())]);
        a.override_with(None, &[("aws_session_token".into(), "tok".into())]);
        assert_eq!(key(&a), k0);
        a.override_with(
            None,
            &[("aws_endpoint".into(), "http://127.0.0.1:9".into())],
        );
        assert_ne!(key(&a), k0);
        a.override_with(Some("s3://other/p"), &[]);
        assert_eq!(a.root.as_deref(), Some("s3://other/p"));
    }

    #[test]
    fn every_operation_name_round_trips() {
        for op in Operation::ALL {
            assert_eq!(op.as_str().parse::<Operation>().unwrap(), op);
            assert_eq!(op.is_write(), op.as_str().starts_with("write-"));
            assert_eq!(op.is_cold(), op.as_str().starts_with("cold-"));
        }
    }

    #[test]
    fn lance_version_matches_cargo_toml() {
        let manifest = include_str!("../Cargo.toml");
        assert!(manifest.contains(&format!("lance = {{ version = \"={LANCE_VERSION}\"")));
    }

    #[test]
    fn shipped_plans_are_valid() {
        for f in [
            "plans/default.toml",
            "plans/seed-panel.toml",
            "plans/tiny.toml",
        ] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(f);
            Plan::load(&path).unwrap_or_else(|e| panic!("{f}: {e}"));
        }
    }
}
