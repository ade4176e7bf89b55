//! Golden bootstrap: one `__manifest` per (size, inline variant), written directly as a Lance
//! dataset in streamed batches, then brought into steady catalog form. A marker written last
//! makes a golden reusable; a golden without a valid marker is rebuilt, never used.

use std::sync::Arc;

use arrow::array::builder::{ListBuilder, StringBuilder};
use arrow::array::{RecordBatch, RecordBatchIterator, StringArray};
use arrow::datatypes::{DataType, Field};
use lance::dataset::{InsertBuilder, WriteMode, WriteParams};
use lance_namespace::LanceNamespace;
use lance_namespace::models::CreateNamespaceRequest;
use serde::{Deserialize, Serialize};

use crate::catalog::{self, CatalogConfig, MANIFEST_DIR};
use crate::error::BenchError;
use crate::plan::{GoldenSpec, LANCE_VERSION};
use crate::store::{GOLDEN_MARKER, Store};

/// Rows per generated batch: memory stays flat whatever the golden's size.
pub const BATCH_ROWS: u64 = 10_000;

/// Id of the namespace created by the one copy-on-write commit of an inline golden.
pub const TRIGGER_ID: &str = "__seed_trigger__";

/// The marker's contents: what the golden was built as, and what it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoldenMarker {
    pub format: u32,
    pub rows: u64,
    pub inline: bool,
    pub lance_version: String,
    /// Rows actually in `__manifest` (the bootstrapped rows, plus the trigger namespace
    /// when inline indices are on).
    pub manifest_rows: u64,
    pub build_secs: f64,
    /// Goldens of table operations: the shared table as built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<GoldenTable>,
    /// A tree's shape (`[fixture]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture: Option<crate::plan::Fixture>,
}

/// The shared table of a golden of table operations: its rows and latest version (its
/// history: `matrix.table_versions`), and the time its history took to build.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GoldenTable {
    pub rows: u64,
    pub version: u64,
    pub history_secs: f64,
}

/// The version of the marker's format: a golden marked with another is rebuilt.
pub const MARKER_FORMAT: u32 = 1;

/// A golden ready to be copied.
#[derive(Debug, Clone)]
pub struct Golden {
    /// Path of the golden under the store root.
    pub rel: String,
    pub marker: GoldenMarker,
    /// A catalog bench did not make (an external server's): its ids when the run started,
    /// which verification holds the catalog after it against. `None`: a golden of bench's,
    /// whose `__manifest` verification reads.
    pub before: Option<std::sync::Arc<bench_core::audit::Ids>>,
    /// A run's own namespace on an external server, under its `rest.parent` (its parts
    /// joined by `$`), where its golden was built through the server: every id the run's
    /// workers name is under it, and verification lists it. `None`: a catalog's root.
    pub scope: Option<String>,
}

impl Golden {
    /// A catalog that does not exist yet: no `__manifest`, nothing to copy.
    pub fn is_empty(&self) -> bool {
        self.before.is_none()
            && self.marker.rows == 0
            && self.marker.fixture.is_none()
            && self.marker.table.is_none()
    }
}

pub fn rel_path(spec: GoldenSpec) -> String {
    format!("golden/{}", spec.id())
}

/// The golden for `spec` if a complete, valid one is in the store.
pub async fn find(store: &Store, spec: GoldenSpec) -> Option<Golden> {
    let rel = rel_path(spec);
    let bytes = store.read(&format!("{rel}/{GOLDEN_MARKER}")).await.ok()??;
    let marker: GoldenMarker = serde_json::from_slice(&bytes).ok()?;
    let valid = marker.format == MARKER_FORMAT
        && marker.rows == spec.rows
        && marker.inline == spec.inline
        && marker.table.map(|t| t.version) == spec.table_versions
        && marker.fixture == spec.fixture
        && marker.lance_version == LANCE_VERSION;
    valid.then_some(Golden {
        rel,
        marker,
        before: None,
        scope: None,
    })
}

/// Reuse a valid golden or (re)build it.
pub async fn ensure(
    store: &Store,
    spec: GoldenSpec,
    cfg: &GoldenConfig<'_>,
) -> Result<(Golden, bool), BenchError> {
    if let Some(g) = find(store, spec).await {
        return Ok((g, true));
    }
    build(store, spec, cfg).await.map(|g| (g, false))
}

pub struct GoldenConfig<'a> {
    pub storage: &'a std::collections::BTreeMap<String, String>,
    pub commit_retries: u32,
}

async fn build(
    store: &Store,
    spec: GoldenSpec,
    cfg: &GoldenConfig<'_>,
) -> Result<Golden, BenchError> {
    let rel = rel_path(spec);
    let fail = |what: &str, e: lance_core::Error| {
        BenchError::store_source(format!("failed to {what} golden {}", spec.id()), e)
    };
    // Whatever is there has no valid marker: a half-written or outdated golden.
    store.remove_prefix(&rel).await?;
    let started = std::time::Instant::now();
    let root = store.uri(&rel);
    if spec.is_empty() {
        // A catalog that does not exist yet: no `__manifest`, only the marker. Each cell's
        // clients open their catalogs on an empty copy, before the first commit.
        return mark(store, spec, rel, (0, None), started).await;
    }

    write_rows(&root, spec, cfg)
        .await
        .map_err(|e| fail("write", e))?;
    if let Some(f) = spec.fixture.filter(|f| f.table_data) {
        table_data(&root, &f, cfg)
            .await
            .map_err(|e| fail("write the tables of", e))?;
    }
    if spec.inline {
        // One commit through the catalog rewrites the manifest into steady form: a single
        // fragment with its inline scalar indices. (Without indices, the first commit of
        // each cell does this rewrite, as in the reference.)
        trigger_rewrite(&root, cfg)
            .await
            .map_err(|e| fail("index", e))?;
    }
    let table = match spec.table_versions {
        Some(versions) => Some(
            shared_table(&root, spec.inline, versions, cfg)
                .await
                .map_err(|e| fail("build the shared table of", e))?,
        ),
        None => None,
    };
    let manifest_rows = catalog::manifest_rows(&root, cfg.storage)
        .await
        .map_err(|e| fail("count rows of", e))?;
    let expected = spec.rows + u64::from(spec.inline) + u64::from(table.is_some());
    if manifest_rows != expected {
        return Err(BenchError::store(format!(
            "golden {} holds {manifest_rows} rows, expected {expected}",
            spec.id()
        )));
    }
    mark(store, spec, rel, (manifest_rows, table), started).await
}

/// Mark the golden at `rel` complete: its marker, written last.
async fn mark(
    store: &Store,
    spec: GoldenSpec,
    rel: String,
    (manifest_rows, table): (u64, Option<GoldenTable>),
    started: std::time::Instant,
) -> Result<Golden, BenchError> {
    let marker = GoldenMarker {
        format: MARKER_FORMAT,
        rows: spec.rows,
        inline: spec.inline,
        lance_version: LANCE_VERSION.to_string(),
        manifest_rows,
        build_secs: started.elapsed().as_secs_f64(),
        table,
        fixture: spec.fixture,
    };
    crate::fault::point("golden");
    let json = serde_json::to_vec_pretty(&marker).expect("marker serialises");
    store
        .write(&format!("{rel}/{GOLDEN_MARKER}"), &json)
        .await
        .map_err(|e| {
            BenchError::store(format!("failed to mark complete golden {}: {e}", spec.id()))
        })?;
    Ok(Golden {
        rel,
        marker,
        before: None,
        scope: None,
    })
}

/// Write the golden's `__manifest` directly as a Lance dataset, streamed in batches.
async fn write_rows(
    root: &str,
    spec: GoldenSpec,
    cfg: &GoldenConfig<'_>,
) -> lance_core::Result<()> {
    let batches = (0..spec.rows.div_ceil(BATCH_ROWS)).map(move |b| {
        let start = b * BATCH_ROWS;
        let len = BATCH_ROWS.min(spec.rows - start);
        Ok(match &spec.fixture {
            Some(f) => tree_batch(f, start, len),
            None => manifest_batch(start, len, spec.rows),
        })
    });
    let reader = RecordBatchIterator::new(batches, catalog::manifest_schema());
    let params = WriteParams {
        mode: WriteMode::Create,
        store_params: Some(catalog::store_params(cfg.storage)),
        ..Default::default()
    };
    InsertBuilder::new(format!("{root}/{MANIFEST_DIR}").as_str())
        .with_params(&params)
        .execute_stream(reader)
        .await
        .map(|_| ())
}

/// The one commit through the catalog that brings an inline golden into steady form.
async fn trigger_rewrite(root: &str, cfg: &GoldenConfig<'_>) -> lance_core::Result<()> {
    let ns = catalog::open(&CatalogConfig {
        root: root.to_string(),
        inline: true,
        commit_retries: cfg.commit_retries,
        storage: cfg.storage.clone(),
        properties: Default::default(),
    })
    .await?;
    let mut req = CreateNamespaceRequest::new();
    req.id = Some(vec![TRIGGER_ID.to_string()]);
    ns.create_namespace(req).await.map(|_| ())
}

/// Create the shared table of table operations through the catalog, inside the golden,
/// and give it `versions` versions.
async fn shared_table(
    root: &str,
    inline: bool,
    versions: u64,
    cfg: &GoldenConfig<'_>,
) -> lance_core::Result<GoldenTable> {
    let ns = catalog::open(&CatalogConfig {
        root: root.to_string(),
        inline,
        commit_retries: cfg.commit_retries,
        storage: cfg.storage.clone(),
        properties: Default::default(),
    })
    .await?;
    let location = catalog::table::create(&ns).await?;
    if !catalog::table::inside(&location, root) {
        // A copy would share it with the golden and every other copy.
        return Err(lance_core::Error::invalid_input(format!(
            "the catalog put the shared table at {location}, outside the golden {root}"
        )));
    }
    let started = std::time::Instant::now();
    let version = catalog::table::grow_history(&location, cfg.storage, versions).await?;
    Ok(GoldenTable {
        rows: catalog::table::INITIAL_ROWS,
        version,
        history_secs: started.elapsed().as_secs_f64(),
    })
}

/// Attempts at each table of a tree: a store that breaks a connection now and then (its
/// commit's conditional PUT is not retried) does not fail a golden of thousands of tables.
const TABLE_ATTEMPTS: u32 = 3;

/// Every table of a tree a dataset of its own (3 rows, as `write-create-table` writes), at
/// the location its `__manifest` row names, several at once. A table whose write fails is
/// written again, over whatever it left (a commit that landed before its reply was lost
/// gets a second version of the same rows).
async fn table_data(
    root: &str,
    f: &crate::plan::Fixture,
    cfg: &GoldenConfig<'_>,
) -> lance_core::Result<()> {
    use futures::{StreamExt, TryStreamExt};
    let params = |mode| WriteParams {
        mode,
        store_params: Some(catalog::store_params(cfg.storage)),
        ..Default::default()
    };
    let batch = catalog::table_batch();
    futures::stream::iter(0..f.tables())
        .map(|k| {
            let uri = format!("{root}/{}", f.table_id(k));
            let (create, overwrite) = (params(WriteMode::Create), params(WriteMode::Overwrite));
            let batch = batch.clone();
            async move {
                let mut attempt = 1;
                loop {
                    let params = if attempt == 1 { &create } else { &overwrite };
                    let written = InsertBuilder::new(uri.as_str())
                        .with_params(params)
                        .execute(vec![batch.clone()])
                        .await;
                    match written {
                        Ok(_) => return Ok(()),
                        Err(e) if attempt >= TABLE_ATTEMPTS => return Err(e),
                        Err(_) => attempt += 1,
                    }
                }
            }
        })
        .buffer_unordered(16)
        .try_collect()
        .await
}

/// Rows `[start, start + len)` of a tree: its namespaces level by level, then its tables,
/// each with the tree's properties; a table's location is its id.
pub fn tree_batch(f: &crate::plan::Fixture, start: u64, len: u64) -> RecordBatch {
    let namespaces = f.namespaces();
    let props = f.metadata();
    let table_meta = match f.metadata() {
        Some(p) => format!(r#"{{"bench":"true",{}"#, &p[1..]),
        None => r#"{"bench":"true"}"#.to_string(),
    };
    let mut rows = Vec::with_capacity(len as usize);
    for i in start..start + len {
        rows.push(if i < namespaces {
            (f.namespace_id(i), "namespace", None, props.clone())
        } else {
            let id = f.table_id(i - namespaces);
            (id.clone(), "table", Some(id), Some(table_meta.clone()))
        });
    }
    batch_of(rows)
}

/// Rows `[start, start + len)` of a golden of `total` rows: the first third namespaces,
/// the rest tables, as the reference bootstraps them.
pub fn manifest_batch(start: u64, len: u64, total: u64) -> RecordBatch {
    let ns_count = crate::plan::Entry::Namespace.count(total);
    let rows = (start..start + len)
        .map(|i| {
            if i < ns_count {
                let id = catalog::golden_id(crate::plan::Entry::Namespace, i);
                (id, "namespace", None, None)
            } else {
                let id = catalog::golden_id(crate::plan::Entry::Table, i - ns_count);
                let meta = Some(r#"{"bench":"true"}"#.to_string());
                (id.clone(), "table", Some(id), meta)
            }
        })
        .collect();
    batch_of(rows)
}

/// `__manifest` rows: (object id, type, location, metadata) each.
type Row = (String, &'static str, Option<String>, Option<String>);

fn batch_of(rows: Vec<Row>) -> RecordBatch {
    let len = rows.len();
    let mut ids = Vec::with_capacity(len);
    let mut types = Vec::with_capacity(len);
    let mut locations = Vec::with_capacity(len);
    let mut metadata = Vec::with_capacity(len);
    for (id, kind, location, meta) in rows {
        ids.push(id);
        types.push(kind);
        locations.push(location);
        metadata.push(meta);
    }
    let mut base_objects = ListBuilder::new(StringBuilder::new()).with_field(Arc::new(Field::new(
        "object_id",
        DataType::Utf8,
        true,
    )));
    for _ in 0..len {
        base_objects.append_null();
    }
    RecordBatch::try_new(
        catalog::manifest_schema(),
        vec![
            Arc::new(StringArray::from(ids)),
            Arc::new(StringArray::from(types)),
            Arc::new(StringArray::from(locations)),
            Arc::new(StringArray::from(metadata)),
            Arc::new(base_objects.finish()),
        ],
    )
    .expect("generated batch matches the manifest schema")
}
