//! The shared table of table operations: one table (`bench_shared`) in every golden of a
//! plan of table operations, which all writers of a cell's copy share. Appends through
//! lance's dataset API (as applications open a table through the namespace) and through
//! the namespace's `insert_into_table`, reads of its history, and its state for
//! verification.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{Int32Array, RecordBatch, StringArray};
use bytes::Bytes;
use lance::dataset::builder::DatasetBuilder;
use lance::dataset::{InsertBuilder, WriteMode, WriteParams};
use lance::session::Session;
use lance_namespace::LanceNamespace;
use lance_namespace::models::{
    CreateTableRequest, DescribeTableRequest, DescribeTableVersionRequest, InsertIntoTableRequest,
    ListTableVersionsRequest, UpdateTableSchemaMetadataRequest,
};
use lance_namespace_impls::DirectoryNamespace;

/// The shared table's name in the catalog.
pub const SHARED_TABLE: &str = "bench_shared";

/// Rows the shared table holds when a golden creates it.
pub const INITIAL_ROWS: u64 = 10;

pub(super) fn id() -> Option<Vec<String>> {
    Some(vec![SHARED_TABLE.to_string()])
}

/// `n` rows of the shared table ([`super::table_schema`]).
pub fn rows(n: u64) -> RecordBatch {
    let ids: Vec<i32> = (0..n as i32).collect();
    let names: Vec<String> = ids.iter().map(|i| format!("r{i}")).collect();
    RecordBatch::try_new(
        super::table_schema(),
        vec![
            Arc::new(Int32Array::from(ids)),
            Arc::new(StringArray::from(names)),
        ],
    )
    .expect("generated batch matches its schema")
}

/// Whether `location` is under `root` (a copy's table must not be its golden's).
pub fn inside(location: &str, root: &str) -> bool {
    let plain = |u: &str| u.trim_start_matches("file://").to_string();
    plain(location).starts_with(&plain(root))
}

/// What a worker's table operations use: its rows (as a batch and as IPC), and the session
/// and storage options its datasets open with (the session counts their requests).
pub struct TableIo {
    pub batch: RecordBatch,
    pub ipc: Bytes,
    pub session: Arc<Session>,
    pub storage: BTreeMap<String, String>,
}

impl TableIo {
    pub fn new(
        rows_per_commit: u64,
        session: Arc<Session>,
        storage: BTreeMap<String, String>,
    ) -> TableIo {
        let batch = rows(rows_per_commit);
        TableIo {
            ipc: super::ipc(&batch),
            batch,
            session,
            storage,
        }
    }
}

/// `update_table_schema_metadata` of `table` (its id): `key` set to `value`.
pub(super) async fn update_metadata(
    ns: Arc<dyn LanceNamespace>,
    table: Option<Vec<String>>,
    key: String,
    value: String,
) -> lance_core::Result<()> {
    let req = UpdateTableSchemaMetadataRequest {
        id: table,
        metadata: Some([(key, value)].into_iter().collect()),
        ..Default::default()
    };
    ns.update_table_schema_metadata(req).await?;
    Ok(())
}

/// `insert_into_table` of the shared table's rows (as a REST client calls it); the version
/// it committed, where the response says.
pub(super) async fn insert_into(
    ns: Arc<dyn LanceNamespace>,
    io: &TableIo,
) -> lance_core::Result<Option<u64>> {
    let req = InsertIntoTableRequest {
        id: id(),
        mode: Some("append".into()),
        ..Default::default()
    };
    let r = ns.insert_into_table(req, io.ipc.clone()).await?;
    #[cfg(lance_insert_reports_version)]
    let version = r.version.map(|v| v as u64);
    // Releases before 11 do not say: it is looked up, as when a response omits it.
    #[cfg(not(lance_insert_reports_version))]
    let version = {
        let _ = r;
        None
    };
    Ok(version)
}

/// The shared table's latest version, as lance resolves it: newest first, one.
pub(super) async fn latest_version(ns: Arc<dyn LanceNamespace>) -> lance_core::Result<Option<u64>> {
    let req = ListTableVersionsRequest {
        id: id(),
        descending: Some(true),
        limit: Some(1),
        ..Default::default()
    };
    let r = ns.list_table_versions(req).await?;
    Ok(r.versions.first().map(|v| v.version as u64))
}

/// `describe_table_version` of the shared table (its latest): the version it described.
pub(super) async fn describe_version(ns: Arc<dyn LanceNamespace>) -> lance_core::Result<u64> {
    let req = DescribeTableVersionRequest {
        id: id(),
        ..Default::default()
    };
    Ok(ns.describe_table_version(req).await?.version.version as u64)
}

/// Append as an application does: the table opened through the namespace (its location,
/// and the namespace's commits when it manages the table's versions), lance's dataset
/// API appending the rows; conflicts retried as lance does. Returns the version committed.
pub(super) async fn append(ns: Arc<dyn LanceNamespace>, io: &TableIo) -> lance_core::Result<u64> {
    let dataset = DatasetBuilder::from_namespace(ns, vec![SHARED_TABLE.to_string()])
        .await?
        .with_session(io.session.clone())
        .with_storage_options(super::to_hash_map(&io.storage))
        .load()
        .await?;
    let params = WriteParams {
        mode: WriteMode::Append,
        session: Some(io.session.clone()),
        store_params: Some(super::store_params(&io.storage)),
        ..Default::default()
    };
    InsertBuilder::new(Arc::new(dataset))
        .with_params(&params)
        .execute(vec![io.batch.clone()])
        .await
        .map(|d| d.version().version)
}

/// Create the shared table with [`INITIAL_ROWS`] rows through the catalog; returns its
/// location.
pub async fn create(ns: &DirectoryNamespace) -> lance_core::Result<String> {
    let req = CreateTableRequest {
        id: id(),
        ..Default::default()
    };
    let resp = ns
        .create_table(req, super::ipc(&rows(INITIAL_ROWS)))
        .await?;
    match resp.location {
        Some(l) => Ok(l),
        None => location(ns).await,
    }
}

/// Where the catalog says the shared table is.
pub async fn location(ns: &DirectoryNamespace) -> lance_core::Result<String> {
    let req = DescribeTableRequest {
        id: id(),
        ..Default::default()
    };
    ns.describe_table(req).await?.location.ok_or_else(|| {
        lance_core::Error::invalid_input(format!("the catalog has no location for {SHARED_TABLE}"))
    })
}

/// Give the table at `location` `versions` versions in all: metadata-only commits (no
/// data written) after its creation, the fastest history lance allows.
pub async fn grow_history(
    location: &str,
    storage: &BTreeMap<String, String>,
    versions: u64,
) -> lance_core::Result<u64> {
    let mut ds = super::load(location, storage).await?;
    while ds.version().version < versions {
        let n = ds.version().version.to_string();
        ds.update_config([("bench.history", n.as_str())]).await?;
    }
    Ok(ds.version().version)
}

/// The table at `location`: its rows and latest version.
pub async fn state(
    location: &str,
    storage: &BTreeMap<String, String>,
) -> lance_core::Result<TableNow> {
    let ds = super::load(location, storage).await?;
    Ok(TableNow {
        rows: ds.count_rows(None).await? as u64,
        version: ds.version().version,
        properties: ds.schema().metadata.clone(),
    })
}

/// The shared table as verification finds it: rows, latest version, and its schema's
/// metadata (the properties `write-update-table-metadata` writes).
pub struct TableNow {
    pub rows: u64,
    pub version: u64,
    pub properties: std::collections::HashMap<String, String>,
}
