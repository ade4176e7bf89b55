//! The plan file as written: a serde mirror of the TOML, before validation.

use std::collections::BTreeMap;

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPlan {
    pub name: String,
    pub root: Option<String>,
    pub operation: Option<String>,
    /// Listings: entries a page, every page listed.
    pub page_size: Option<u64>,
    pub matrix: RawMatrix,
    pub continuous: Option<RawContinuous>,
    pub concurrent: Option<RawConcurrent>,
    pub mixed: Option<RawMixed>,
    #[serde(default)]
    pub storage: BTreeMap<String, String>,
    #[serde(default)]
    pub namespace: BTreeMap<String, toml::Value>,
    /// `[env]`: variables of every worker's environment.
    #[serde(default)]
    pub env: BTreeMap<String, toml::Value>,
    /// `[builds]`: name → worker executable, in the order written.
    #[serde(default)]
    pub builds: toml::Table,
    #[serde(default)]
    pub run: RawRun,
    pub table: Option<RawTable>,
    pub rest: Option<RawRest>,
    /// `[fixture]`: the golden as a tree of namespaces and tables.
    pub fixture: Option<RawFixture>,
    /// `[workload]` and `[[roles]]`: cells of roles.
    pub workload: Option<RawWorkload>,
    #[serde(default)]
    pub roles: Vec<RawRole>,
    /// `[campaign]`: a fault campaign over the plan's operation.
    pub campaign: Option<RawCampaign>,
    /// `[[nemesis]]`: faults of the store on a timeline.
    #[serde(default)]
    pub nemesis: Vec<RawNemesis>,
}

/// One `[[nemesis]]` window as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNemesis {
    pub fault: String,
    pub of: Option<String>,
    pub from_secs: f64,
    pub for_secs: f64,
}

/// `[campaign]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCampaign {
    pub faults: Option<Vec<String>>,
    pub requests: Option<u64>,
    pub parallel: Option<u64>,
    pub keep_versions: Option<u64>,
}

/// `[rest]`: the REST servers of cells whose transport is `rest`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRest {
    pub servers: Option<u32>,
    pub bind: Option<String>,
    pub launcher: Option<String>,
    pub uri: Option<String>,
    pub external: Option<bool>,
    pub parent: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTable {
    pub rows_per_commit: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMatrix {
    /// Rows of flat goldens (a plan with `[fixture]` has none).
    pub sizes: Option<Vec<u64>>,
    /// The target distributions of roles that name none, one dimension value each.
    pub targets: Option<Vec<String>>,
    pub inline: Option<Vec<bool>>,
    pub builds: Option<Vec<String>>,
    /// `[matrix.properties]`: property → the values it takes, in the order written.
    pub properties: Option<toml::Table>,
    /// `[matrix.env]`: variable → the values it takes, in the order written.
    pub env: Option<toml::Table>,
    /// Versions of the shared table in the golden, one dimension value each.
    pub table_versions: Option<Vec<u64>>,
    /// How the workers reach the catalog: "direct", "rest".
    pub transport: Option<Vec<String>>,
    /// REST servers per cell, one dimension value each.
    pub servers: Option<Vec<u32>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawContinuous {
    pub operations: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConcurrent {
    pub concurrency: Vec<u32>,
    pub duration_secs: Option<u64>,
    pub operations: Option<u64>,
    pub rate: Option<f64>,
    pub rates: Option<Vec<f64>>,
    pub arrivals: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMixed {
    pub clients: Vec<u32>,
    pub reads_per_write: u64,
    pub duration_secs: u64,
    pub read_operation: Option<String>,
    pub rate: Option<f64>,
    pub rates: Option<Vec<f64>>,
    pub arrivals: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRun {
    pub cell_timeout_secs: Option<u64>,
    pub commit_retries: Option<u32>,
    pub keep_runs: Option<bool>,
    pub cleanup: Option<String>,
    pub warmup_operations: Option<u64>,
    pub repetitions: Option<u32>,
    pub order: Option<String>,
    pub launcher: Option<String>,
    pub copy_parallelism: Option<u32>,
    pub trace_operations: Option<u32>,
    pub keep_history: Option<bool>,
    pub local_requests: Option<String>,
    pub attempt_timeout_secs: Option<f64>,
}

/// `[fixture]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFixture {
    pub width: u64,
    pub depth: u64,
    /// One value, or a list: one golden (and its cells) per value.
    pub tables_per_namespace: toml::Value,
    pub tables_at: Option<String>,
    pub properties: Option<u64>,
    pub names: Option<String>,
    pub table_data: Option<bool>,
}

/// `[workload]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWorkload {
    pub duration_secs: u64,
    pub seed: Option<u64>,
    pub seed_per_repetition: Option<bool>,
    pub storage_sample_secs: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRole {
    pub name: String,
    pub clients: u64,
    pub rate: Option<f64>,
    pub mix: toml::Table,
    pub targets: Option<String>,
    pub keep_versions: Option<u64>,
    pub older_than_secs: Option<u64>,
}
