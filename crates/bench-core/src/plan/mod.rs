//! The plan: a raw serde mirror of the TOML file ([`raw`]), validated once ([`validate`])
//! into [`Plan`], and the pure matrix expansion ([`expand`]) into the ordered [`Cell`]s.

pub mod campaign;
mod cell;
mod checks;
mod env;
mod expand;
mod fixture;
mod messages;
pub mod nemesis;
mod operation;
mod raw;
mod removal;
mod role;
mod table;
mod transport;
mod validate;
/// Why a plan of roles takes no launcher (`run.launcher`, `--launcher`): a launcher starts
/// every task with one command line, and each client of a role runs its own role and seed.
pub const LAUNCHER_WITH_ROLES: &str = "starts every task with one command line, and each \
    client of [[roles]] runs its own role with its own seed; run the roles without a launcher \
    (their clients are local processes), or measure a concurrent or mixed cell through it";

pub use checks::limits;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

#[cfg(test)]
pub use cell::sample;
pub use cell::{
    Arrivals, BuildId, Cell, CellBuild, DIGEST_SHOWN, GoldenSpec, Load, Mode, ModeKind, Variant,
};
pub use expand::{Step, cells, expand};
pub use fixture::{DELIMITER, Fixture, NameShape, TablesAt};
pub use operation::{Cost, Descriptor, Effect, Entry, Names, Operation, Target};
pub use role::{Distribution, HOT_SHARE, Picker, Retention, Role, Workload, client_seed};
pub use table::DEFAULT_ROWS_PER_COMMIT;
pub use transport::{Catalog, Client, RestSettings, Transport, used_operations};

use crate::error::PlanError;
use crate::redact::keep_options_hidden;
pub use crate::redact::{hides, is_public_option, looks_secret};

/// The lance version this binary is built against, as Cargo.lock has it (`build.rs`): the
/// crates.io version pinned in `Cargo.toml`, or with `+git.<rev>` / `+path` when a build
/// replaces lance through `[patch]`.
pub const LANCE_VERSION: &str = env!("BENCH_LANCE_VERSION");
/// The plan's text with `sets` applied (`None` without any, or when the text is not TOML:
/// its own parse then says where). A value is read as TOML (`20`, `true`, `[1, 2]`,
/// `"x"`), else taken as text (`--set name=nightly`).
fn with_sets(text: &str, sets: &[(String, String)]) -> Result<Option<String>, PlanError> {
    if sets.is_empty() {
        return Ok(None);
    }
    let Ok(mut doc) = text.parse::<toml::Table>() else {
        return Ok(None);
    };
    for (key, value) in sets {
        let bad = |why: String| PlanError::Key {
            file: None,
            key: key.clone(),
            line: None,
            message: format!("--set {}: {why}", given(key, value)),
        };
        let parsed = format!("v = {value}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.clone()));
        let parts: Vec<&str> = key.split('.').collect();
        if parts.iter().any(|p| p.trim().is_empty()) {
            return Err(bad("a key is a dotted path such as run.repetitions".into()));
        }
        let (last, tables) = parts.split_last().expect("a key has a part");
        let mut at = &mut doc;
        let mut i = 0;
        while i < tables.len() {
            let part = tables[i];
            // A list of tables (`[[roles]]`): the next part names one of them by its `name`.
            let listed = (at.get(part).and_then(toml::Value::as_array))
                .is_some_and(|a| !a.is_empty() && a.iter().all(toml::Value::is_table));
            if listed {
                let Some(&name) = tables.get(i + 1) else {
                    return Err(bad(format!(
                        "`{part}` is a list; name one of its entries: {part}.<name>.<key>"
                    )));
                };
                let items = at.get_mut(part).and_then(toml::Value::as_array_mut);
                at = (items.into_iter().flatten())
                    .filter_map(toml::Value::as_table_mut)
                    .find(|t| t.get("name").and_then(toml::Value::as_str) == Some(name))
                    .ok_or_else(|| bad(format!("no entry of `{part}` is named `{name}`")))?;
                i += 2;
                continue;
            }
            let entry = at
                .entry(part.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            at = entry
                .as_table_mut()
                .ok_or_else(|| bad(format!("`{}` is not a table", parts[..=i].join("."))))?;
            i += 1;
        }
        at.insert(last.to_string(), parsed);
    }
    toml::to_string(&doc)
        .map(Some)
        .map_err(|e| PlanError::Syntax {
            file: None,
            message: format!("the plan with --set applied cannot be written back: {e}"),
        })
}

/// The git revision (40 hex digits) of the lance this binary is built against, where it is
/// known (a git dependency's commit, or the commit crates.io's package was made from);
/// empty otherwise. Not part of any key: lance's version already is.
pub const LANCE_REVISION: &str = env!("BENCH_LANCE_REVISION");

#[derive(Debug, Clone, PartialEq)]
pub struct Continuous {
    pub operations: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Concurrent {
    pub concurrency: Vec<u32>,
    /// Each writer starts commits until this long after release (at least one of this and
    /// `operations` is set).
    pub duration: Option<Duration>,
    /// The cell ends once its writers have this many successful commits together.
    pub operations: Option<u64>,
    /// Open-loop cells: the offered loads, one cell per value (per concurrency); empty:
    /// closed loop.
    pub loads: Vec<Load>,
}

/// Mixed load: `clients` processes, each repeating `reads_per_write` reads of
/// `read_operation` then one commit of the plan's operation, for `duration`.
#[derive(Debug, Clone, PartialEq)]
pub struct Mixed {
    pub clients: Vec<u32>,
    pub reads_per_write: u64,
    pub duration: Duration,
    pub read_operation: Operation,
    /// Open-loop cells: the commits a second offered, one cell per value (per client
    /// count); empty: closed loop.
    pub loads: Vec<Load>,
}

/// The shared table that table operations work on: what each commit appends, and the
/// histories (versions in the golden) the cells start from, one dimension value each.
#[derive(Debug, Clone, PartialEq)]
pub struct TableSettings {
    pub rows_per_commit: u64,
    pub versions: Vec<u64>,
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

/// In which order a sweep runs the repetitions of its cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Every repetition of a cell, then the next cell (the default).
    Sequential,
    /// Repetition 1 of every cell, then repetition 2 of every cell, ...: slow drifts of the
    /// machine spread over all cells instead of biasing one.
    Interleaved,
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
    pub order: Order,
    /// Start each cell's writers through this command (`run.launcher`), not as children.
    pub launcher: Option<Launcher>,
    /// Server-side copies in flight at once when a cell's copy of its golden is made
    /// (`run.copy_parallelism`); not part of a cell's key (it changes no figure of a cell).
    pub copy_parallelism: u32,
    /// Each worker's first operations written with their requests as a trace file of the
    /// run (`run.trace_operations`, `--trace`; 0: none); not part of a cell's key.
    pub trace_operations: u32,
    /// Each run of a cell that keeps a history (cells of roles, mixed cells) writes it
    /// beside the results, `histories/<cell>_r<repetition>/` (`run.keep_history`, default
    /// true); not part of a cell's key.
    pub keep_history: bool,
    /// `run.local_requests = "s3"`: on a local root, the workers reach the disk through the
    /// object-store API as they reach S3 (lance's `file-object-store`), in S3's 64 KiB
    /// blocks, without the version-hint file; their requests are then S3's in kind and
    /// number. In the cells' keys when set.
    pub s3_shaped_local: bool,
    /// `run.attempt_timeout_secs`, in ms: a measured operation that takes longer is
    /// abandoned and counted as failed with the class `timeout`. In the cells' keys when set.
    pub attempt_timeout_ms: Option<u64>,
}

/// `run.copy_parallelism` when the plan does not say.
pub const DEFAULT_COPY_PARALLELISM: u32 = 16;

/// A command that starts a cell's C writers as C tasks, possibly on other hosts
/// (`run.launcher`, `--launcher`), e.g. `srun --ntasks={workers} --input=all ...`; the
/// worker's command line follows it. `{workers}` is replaced by C.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher(String);

impl Launcher {
    /// Check a template: not empty, `{workers}` present, no other placeholder.
    pub fn parse(template: &str) -> Result<Launcher, String> {
        let t = template.trim();
        if t.is_empty() {
            return Err("is empty; give a command such as \
                 \"srun --ntasks={workers} --input=all --kill-on-bad-exit=1\", or leave it out"
                .into());
        }
        let rest = t.replace("{workers}", "");
        if rest.len() == t.len() {
            return Err(format!(
                "`{t}` does not say how many tasks to start: put {{workers}} where the task \
                 count goes (e.g. srun --ntasks={{workers}}); bench replaces it with the cell's \
                 writers"
            ));
        }
        if let Some(i) = rest.find('{') {
            let end = rest[i..].find('}').map_or(rest.len(), |j| i + j + 1);
            return Err(format!(
                "`{}` is not a placeholder bench knows; the only one is {{workers}}",
                &rest[i..end]
            ));
        }
        Ok(Launcher(t.to_string()))
    }

    /// The command for a cell of `workers` writers.
    pub fn command(&self, workers: u32) -> String {
        self.0.replace("{workers}", &workers.to_string())
    }
}

impl std::fmt::Display for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A validated plan: every field already has the type and range the runner needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub name: String,
    /// `root` from the file, if any; the runner resolves the default (`<out>/store`).
    pub root: Option<String>,
    pub operation: Operation,
    /// Listings: entries a page, every page listed (`page_size`); `None`: one request.
    pub page_size: Option<u32>,
    /// Rows of the flat goldens (`matrix.sizes`); empty with a `[fixture]`.
    pub sizes: Vec<u64>,
    /// `[fixture]`: the goldens' trees, one per count of tables a namespace; empty: flat.
    pub fixtures: Vec<Fixture>,
    /// `[[roles]]`: the roles every cell of roles runs at once, whether each names its own
    /// targets, and `[workload]`; `None`: no cells of roles.
    pub roles: Option<Roles>,
    pub inline: Vec<bool>,
    pub continuous: Option<Continuous>,
    pub concurrent: Option<Concurrent>,
    pub mixed: Option<Mixed>,
    pub storage: BTreeMap<String, String>,
    /// `[namespace]`: properties given to every worker's `DirectoryNamespace` as lance
    /// reads them (`DirectoryNamespaceBuilder::from_properties`), values as strings.
    pub namespace: BTreeMap<String, String>,
    /// `[matrix.properties]`: each property a dimension, with the values it takes.
    pub property_matrix: Vec<(String, Vec<String>)>,
    /// The shared table of table operations; `None` for a plan of catalog operations.
    pub table: Option<TableSettings>,
    /// `[env]`: variables set in every worker's environment.
    pub env: BTreeMap<String, String>,
    /// `[matrix.env]`: each variable a dimension, with the values it takes.
    pub env_matrix: Vec<(String, Vec<String>)>,
    /// The builds every cell runs under (`[builds]`, `matrix.builds`), in order; empty:
    /// the running bench's own workers, unnamed.
    pub builds: Vec<Build>,
    /// `bench ab`: its two arms' builds, once checked (part of every cell's key).
    pub arms: Option<[BuildId; 2]>,
    pub run: RunSettings,
    /// How the cells' workers reach the catalog (`matrix.transport` × `matrix.servers`),
    /// in order; `[Direct]` unless the plan says.
    pub transports: Vec<Transport>,
    /// `[rest]`: where the REST servers listen.
    pub rest: RestSettings,
    /// `[campaign]`: its points are the last dimension of `env_matrix`; `None`: no campaign.
    pub campaign: Option<campaign::Campaign>,
    /// `[[nemesis]]`: the store's faults on every cell's timeline; empty: none.
    pub nemesis: Vec<nemesis::Window>,
}

/// A plan's roles and how their cells run.
#[derive(Debug, Clone, PartialEq)]
pub struct Roles {
    pub roles: Vec<Role>,
    /// Whether each role names its own targets (else it takes each of `matrix.targets`).
    pub own_targets: Vec<bool>,
    /// `matrix.targets`: one cell per value; empty: each role's own (or uniform).
    pub targets: Vec<Distribution>,
    pub workload: Workload,
}

/// A worker build of `[builds]`: a name and a bench executable.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Build {
    pub name: String,
    /// As the plan gives it; the runner resolves it (`"bench"`: the running binary).
    pub path: String,
    /// What the build is (its `worker-info` and the digest of its file), once the runner
    /// has checked it; part of its cells' keys, so that a rebuilt build re-runs its cells.
    pub id: Option<BuildId>,
}

/// `[builds]`'s name for the running bench itself.
pub const THIS_BENCH: &str = "bench";

/// The namespace properties `DirectoryNamespaceBuilder::from_properties` reads in the
/// lance this build is pinned to (14.0.2), besides those bench sets itself; `storage.*` and
/// `credential_vendor.*` are prefixes.
pub const KNOWN_NAMESPACE_PROPERTIES: [&str; 6] = [
    "commit_retries",
    "table_version_tracking_enabled",
    "dir_listing_to_manifest_migration_enabled",
    "vend_input_storage_options",
    "vend_input_storage_options_refresh_interval_millis",
    "ops_metrics_enabled",
];

impl Plan {
    /// The cells' commit retry budget: `[namespace]`'s `commit_retries` where given (lance's
    /// own property), else `run.commit_retries`.
    pub fn commit_retries(&self) -> u32 {
        self.commit_retries_with(&self.namespace)
    }

    /// The retry budget of a cell with these properties.
    pub fn commit_retries_with(&self, properties: &BTreeMap<String, String>) -> u32 {
        properties
            .get("commit_retries")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(self.run.commit_retries)
    }

    /// Every namespace key of the plan: `[namespace]`'s and `[matrix.properties]`'.
    fn namespace_keys(&self) -> impl Iterator<Item = &str> {
        self.namespace
            .keys()
            .chain(self.property_matrix.iter().map(|(k, _)| k))
            .map(String::as_str)
    }

    /// `[namespace]` keys the pinned lance does not read: they would do nothing unless the
    /// workers' build reads them (a candidate with a new property).
    pub fn unread_namespace_keys(&self) -> Vec<&str> {
        self.namespace_keys()
            .filter(|k| {
                !KNOWN_NAMESPACE_PROPERTIES.contains(k) && !k.starts_with("credential_vendor.")
            })
            .collect()
    }
}

pub const DEFAULT_CELL_TIMEOUT_SECS: u64 = 1200;
pub const DEFAULT_COMMIT_RETRIES: u32 = 20;

impl Plan {
    /// Read and validate a plan file.
    pub fn load(path: &Path) -> Result<Plan, PlanError> {
        Plan::load_with(path, &[])
    }

    /// Load a plan with keys set from the command line (`--set KEY=VALUE`, a dotted key
    /// path and a TOML value, or text), each as if the plan said it: validated with the
    /// rest, and part of the cells' keys.
    pub fn load_with(path: &Path, sets: &[(String, String)]) -> Result<Plan, PlanError> {
        let text = std::fs::read_to_string(path).map_err(|source| PlanError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let Some(set) = with_sets(&text, sets)? else {
            return Plan::parse(&text).map_err(|e| e.in_file(path));
        };
        Plan::parse(&set).map_err(|e| {
            // Its lines are the rewritten plan's: the key says where.
            let given: Vec<String> = sets
                .iter()
                .map(|(k, v)| format!("--set {}", given(k, v)))
                .collect();
            match e.in_file(path) {
                PlanError::Key {
                    file, key, message, ..
                } => PlanError::Key {
                    file,
                    key,
                    line: None,
                    message: format!("{message} (with {})", given.join(" ")),
                },
                other => other,
            }
        })
    }

    /// Parse and validate plan text.
    pub fn parse(text: &str) -> Result<Plan, PlanError> {
        let de = toml::de::Deserializer::parse(text).map_err(|e| PlanError::Syntax {
            file: None,
            message: e.to_string() + &messages::unclosed(text, e.span()),
        })?;
        let raw: raw::RawPlan = serde_path_to_error::deserialize(de).map_err(|e| {
            let key = e.path().to_string();
            let inner = e.into_inner();
            let line = inner
                .span()
                .map(|s| line_of(text, s.start))
                .or_else(|| messages::locate(text, &key));
            PlanError::Key {
                file: None,
                message: messages::plain(&key, inner.message()),
                key,
                line,
            }
        })?;
        // Validation names the key; the text says where it is. A plan's hidden storage
        // options are kept hidden from then on in this process (`redact`).
        let plan = validate::validate(raw);
        if let Ok(p) = &plan {
            keep_options_hidden(&p.storage);
        }
        plan.map_err(|e| match e {
            PlanError::Key {
                file,
                key,
                line: None,
                message,
            } => PlanError::Key {
                file,
                line: messages::locate(text, &key),
                key,
                message,
            },
            other => other,
        })
    }

    /// Apply command-line overrides: `--root` replaces `root`, and each
    /// `--storage-option KEY=VALUE` sets (or replaces) one storage option.
    pub fn override_with(&mut self, root: Option<&str>, storage: &[(String, String)]) {
        if let Some(r) = root {
            self.root = Some(r.to_string());
        }
        for (k, v) in storage {
            self.storage.insert(k.clone(), v.clone());
        }
        keep_options_hidden(&self.storage);
    }
}

/// `1 repetition`, `5 repetitions`: a count with its noun.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `KEY=VALUE` as a message may show it: the value of a key whose values are hidden
/// ([`hides`]) replaced.
pub fn given(key: &str, value: &str) -> String {
    match hides(key) {
        true => format!("{key}=(hidden)"),
        false => format!("{key}={}", crate::redact::shown_value(value)),
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Storage options are hidden unless known to carry no secret: every credential
    /// object_store's S3, Azure and Google builders take (under each of their names), and
    /// any option bench does not know; the store's whereabouts and switches are shown.
    #[test]
    fn only_options_known_to_carry_no_secret_are_shown() {
        for secret in [
            "aws_secret_access_key",
            "secret_access_key",
            "aws_access_key_id",
            "aws_session_token",
            "token",
            "aws_sse_customer_key_base64",
            "aws_container_credentials_full_uri",
            "azure_storage_account_key",
            "account_key",
            "access_key",
            "master_key",
            "azure_storage_master_key",
            "sas_key",
            "azure_storage_sas_token",
            "azure_client_secret",
            "bearer_token",
            "azure_storage_encryption_key",
            "azure_fabric_session_token",
            "google_service_account_key",
            "service_account_key",
            "google_application_credentials",
            "proxy_url",
            "a_future_option",
        ] {
            assert!(!is_public_option(secret), "{secret}");
            assert!(hides(&format!("storage.{secret}")), "{secret}");
            assert_eq!(
                given(&format!("storage.{secret}"), "v"),
                format!("storage.{secret}=(hidden)")
            );
        }
        for public in [
            "aws_endpoint",
            "endpoint",
            "AWS_REGION",
            "region",
            "aws_allow_http",
            "allow_http",
            "aws_virtual_hosted_style_request",
            "bucket",
            "azure_storage_account_name",
            "azure_container_name",
            "google_bucket",
            "aws_conditional_put",
            "timeout",
            "aws_timeout",
            "lance_aimd_max_rate",
            "download_retry_count",
        ] {
            assert!(is_public_option(public), "{public}");
            assert!(!hides(&format!("storage.{public}")), "{public}");
        }
        // Outside [storage], a key is hidden where its name looks like a secret's.
        assert!(!hides("run.repetitions") && hides("env.MY_API_KEY"));
    }

    pub const TINY: &str = r#"
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
        assert_eq!(
            plan.concurrent.unwrap().duration,
            Some(Duration::from_secs(2))
        );
    }

    /// `--set KEY=VALUE` is a key as if the plan said it: the same plan, the same cells and
    /// keys; a wrong one is refused as the plan's own would be, naming it.
    #[test]
    fn set_keys_are_as_if_the_plan_said_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(&path, TINY).unwrap();
        let set = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Plan::load_with(&path, &pairs)
        };
        let given = set(&[
            ("continuous.operations", "7"),
            ("matrix.sizes", "[100]"),
            ("run.repetitions", "3"),
            ("name", "nightly"),
        ])
        .unwrap();
        let written = Plan::parse(
            &TINY
                .replace("operations = 5", "operations = 7")
                .replace("sizes = [100, 1000]", "sizes = [100]")
                .replace(
                    "name = \"tiny\"",
                    "name = \"nightly\"\n[run]\nrepetitions = 3",
                ),
        )
        .unwrap();
        assert_eq!(given.name, "nightly");
        assert_eq!(given.run.repetitions, 3);
        let keys = |p: &Plan| -> Vec<(String, String)> {
            crate::plan::cells(&expand(p, "/r"))
                .iter()
                .map(|c| (c.id(), c.key()))
                .collect()
        };
        assert_eq!(keys(&given), keys(&written));
        // Validated with the rest, naming the key and the --set.
        let e = set(&[("continuous.operations", "0")])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("continuous.operations") && e.contains("--set continuous.operations=0"),
            "{e}"
        );
        let e = set(&[("continuous.bogus", "1")]).unwrap_err().to_string();
        assert!(e.contains("bogus"), "{e}");
        let e = set(&[("matrix.sizes.x", "1")]).unwrap_err().to_string();
        assert!(e.contains("`matrix.sizes` is not a table"), "{e}");
        // Without any, the plan as it is.
        assert_eq!(keys(&set(&[]).unwrap()), keys(&Plan::parse(TINY).unwrap()));
    }

    #[test]
    fn inline_defaults_to_both_variants() {
        let plan =
            Plan::parse("name='x'\n[matrix]\nsizes=[1]\n[continuous]\noperations=1\n").unwrap();
        assert_eq!(plan.inline, vec![true, false]);
        assert!(plan.concurrent.is_none());
    }

    #[test]
    fn syntax_and_type_errors_give_a_line() {
        let err = Plan::parse("name = 'x'\n[matrix]\nsizes = 'many'\n").unwrap_err();
        assert!(err.to_string().contains("line 3"), "{err}");
        let err = Plan::parse("name = 'x\n").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
    }

    #[test]
    fn launcher_templates_are_checked() {
        let l = Launcher::parse(" srun --ntasks={workers} --label ").unwrap();
        assert_eq!(l.command(6), "srun --ntasks=6 --label");
        for (t, needle) in [
            ("", "is empty"),
            ("srun --ntasks=4", "put {workers}"),
            (
                "srun -n {workers} -N {nodes}",
                "`{nodes}` is not a placeholder",
            ),
            ("srun -n {workers} {", "`{` is not a placeholder"),
        ] {
            let err = Launcher::parse(t).unwrap_err();
            assert!(err.contains(needle), "{t}: {err}");
        }
        let plan = Plan::parse(&format!("{TINY}[run]\nlauncher = \"srun -n 2\"\n")).unwrap_err();
        assert!(plan.to_string().contains("run.launcher"), "{plan}");
    }

    /// The lance this binary reports (from Cargo.lock) is the one Cargo.toml asks for: the
    /// exact pin here, or any version a candidate's relaxed requirement (`"14"`) allows.
    #[test]
    fn lance_version_matches_cargo_toml() {
        let manifest = include_str!("../../../bench-lance/Cargo.toml");
        let wanted = manifest
            .split("\nlance = { version = \"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("Cargo.toml names lance's version");
        let built = LANCE_VERSION.split('+').next().unwrap();
        assert!(
            built.starts_with(wanted.trim_start_matches(['=', '^', '~'])),
            "built with lance {LANCE_VERSION}, Cargo.toml asks for {wanted}"
        );
    }

    #[test]
    fn shipped_plans_are_valid() {
        for f in [
            "plans/default.toml",
            "plans/seed-panel.toml",
            "plans/tiny.toml",
            "plans/variants.toml",
            "plans/mixed-100to1.toml",
            "plans/table-append.toml",
            "plans/long-history.toml",
            "plans/rest-vs-direct.toml",
        ] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(f);
            Plan::load(&path).unwrap_or_else(|e| panic!("{f}: {e}"));
        }
    }
}
