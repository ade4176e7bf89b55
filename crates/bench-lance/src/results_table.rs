//! lance-bench's `results` table, written and read through lance: `bench publish` appends a
//! results directory's rows (`bench_core::results::publish`), `bench history` reads every row back
//! into series (`bench_core::results::history`). The table is the Lance dataset `results.lance`
//! under the URI, as LanceDB keeps a table, in exactly the schema of lance-bench's
//! `packages/lance_bench_db/models.py`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, Float64Array, Float64Builder, Int32Array, Int64Array, ListBuilder,
    RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use lance::dataset::{InsertBuilder, WriteMode, WriteParams};

use crate::answer::Answer;
use crate::error::{BenchError, exit};
use crate::store::Store;
use bench_core::results::history::{self, Glob, Point};
use bench_core::results::publish::{self, Context, Machine, Row};
use bench_core::stats::changepoint::Detector;

/// Where the table is when no URI is given: `LANCE_BENCH_URI`, else `~/.lance-bench`
/// (lance-bench's own default).
pub fn default_uri() -> String {
    match std::env::var("LANCE_BENCH_URI") {
        Ok(u) if !u.is_empty() => u,
        _ => {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            home.join(".lance-bench").display().to_string()
        }
    }
}

fn strings(names: &[&str]) -> Vec<Field> {
    names
        .iter()
        .map(|n| Field::new(*n, DataType::Utf8, true))
        .collect()
}

fn struct_type(fields: Vec<Field>) -> DataType {
    DataType::Struct(Fields::from(fields))
}

/// lance-bench's schema of `results` (every field nullable, as pyarrow makes them).
pub fn schema() -> Arc<Schema> {
    let f64s = |names: &[&str]| -> Vec<Field> {
        names
            .iter()
            .map(|n| Field::new(*n, DataType::Float64, true))
            .collect()
    };
    let dut = [
        strings(&["name", "version"]),
        vec![Field::new("timestamp", DataType::Int64, true)],
    ];
    let test_bed = [
        strings(&["name", "cpu"]),
        vec![Field::new("memory_gb", DataType::Int32, true)],
        strings(&["os"]),
        vec![Field::new("created_at", DataType::Int64, true)],
    ];
    let throughput = [f64s(&["multiplier"]), strings(&["name", "unit_system"])];
    let values = DataType::List(Arc::new(Field::new("item", DataType::Float64, true)));
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, true),
        Field::new("dut", struct_type(dut.concat()), true),
        Field::new("test_bed", struct_type(test_bed.concat()), true),
        Field::new("benchmark_name", DataType::Utf8, true),
        Field::new("values", values, true),
        Field::new(
            "summary",
            struct_type(f64s(&[
                "min",
                "q1",
                "median",
                "q3",
                "max",
                "mean",
                "standard_deviation",
            ])),
            true,
        ),
        Field::new("units", DataType::Utf8, true),
        Field::new("throughput", struct_type(throughput.concat()), true),
        Field::new("metadata", DataType::Utf8, true),
        Field::new("timestamp", DataType::Int64, true),
    ]))
}

fn text<'a>(rows: &'a [&Row], f: impl Fn(&'a Row) -> &'a str) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(rows.iter().map(|r| f(r))))
}

fn int64(rows: &[&Row], f: impl Fn(&Row) -> i64) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| f(r))))
}

fn float(rows: &[&Row], f: impl Fn(&Row) -> f64) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| f(r))))
}

fn nested(ty: &DataType, columns: Vec<ArrayRef>) -> ArrayRef {
    let DataType::Struct(fields) = ty else {
        unreachable!("a struct column")
    };
    Arc::new(StructArray::new(fields.clone(), columns, None))
}

/// The Lance file format `bench publish` creates the table in: 2.1, which lance-bench's
/// pinned readers (pylance 0.39, lancedb 0.25) decode; lance 14's default, 2.2, they cannot.
/// An append keeps the table's own format.
pub const CREATE_FORMAT: &str = "2.1";

/// The Lance file format of a table's data files (`2.0`, `2.1`, `2.2` ...).
pub fn file_format(dataset: &lance::Dataset) -> String {
    let format = &dataset.manifest().data_storage_format;
    #[cfg(lance_concrete_file_version)]
    return format.lance_file_format().to_string();
    #[cfg(not(lance_concrete_file_version))]
    format.version.clone()
}

/// The rows as one batch of [`schema`]. `throughput` is null in every row (bench's values
/// are times already), as a null struct; for a table in format 2.0, which cannot store a
/// struct's own nulls, as a struct of nulls (`struct_nulls`).
pub fn batch(rows: &[&Row], struct_nulls: bool) -> RecordBatch {
    let schema = schema();
    let ty = |name: &str| {
        schema
            .field_with_name(name)
            .expect("a column")
            .data_type()
            .clone()
    };
    let mut values = ListBuilder::new(Float64Builder::new()).with_field(Arc::new(Field::new(
        "item",
        DataType::Float64,
        true,
    )));
    for r in rows {
        values.values().append_slice(&r.values);
        values.append(true);
    }
    let DataType::Struct(throughput) = ty("throughput") else {
        unreachable!("a struct column")
    };
    let columns: Vec<ArrayRef> = vec![
        text(rows, |r| &r.id),
        nested(
            &ty("dut"),
            vec![
                text(rows, |r| &r.dut.name),
                text(rows, |r| &r.dut.version),
                int64(rows, |r| r.dut.timestamp),
            ],
        ),
        nested(
            &ty("test_bed"),
            vec![
                text(rows, |r| &r.test_bed.name),
                text(rows, |r| &r.test_bed.cpu),
                Arc::new(Int32Array::from_iter_values(
                    rows.iter().map(|r| r.test_bed.memory_gb),
                )),
                text(rows, |r| &r.test_bed.os),
                int64(rows, |r| r.test_bed.created_at),
            ],
        ),
        text(rows, |r| &r.benchmark_name),
        Arc::new(values.finish()),
        nested(
            &ty("summary"),
            vec![
                float(rows, |r| r.summary.min),
                float(rows, |r| r.summary.q1),
                float(rows, |r| r.summary.median),
                float(rows, |r| r.summary.q3),
                float(rows, |r| r.summary.max),
                float(rows, |r| r.summary.mean),
                float(rows, |r| r.summary.standard_deviation),
            ],
        ),
        text(rows, |r| &r.units),
        match struct_nulls {
            true => Arc::new(StructArray::new_null(throughput, rows.len())),
            false => {
                let children: Vec<ArrayRef> = throughput
                    .iter()
                    .map(|f| arrow::array::new_null_array(f.data_type(), rows.len()))
                    .collect();
                Arc::new(StructArray::new(throughput, children, None))
            }
        },
        text(rows, |r| &r.metadata),
        int64(rows, |r| r.timestamp),
    ];
    RecordBatch::try_new(schema, columns).expect("columns of the schema")
}

/// The store at the URI, checked writable (or only readable) before anything is written.
async fn open_store(
    uri: &str,
    storage: &BTreeMap<String, String>,
    write: bool,
) -> Result<Store, BenchError> {
    let store = Store::open(uri, storage).await?;
    if !write {
        return Ok(store);
    }
    if store.scheme() == "file" {
        let root = store.root_uri();
        let dir = Path::new(&root);
        let probe =
            std::fs::create_dir_all(dir).and_then(|()| tempfile::NamedTempFile::new_in(dir));
        if let Err(e) = probe {
            return Err(BenchError::store(format!(
                "cannot publish to {uri}: cannot write there ({e}); give --to a writable \
                 directory or an s3:// URI"
            )));
        }
        return Ok(store);
    }
    store
        .prepare()
        .await
        .map_err(|e| BenchError::store(format!("cannot publish to {uri}: {e}")))?;
    Ok(store)
}

/// The table, or `None` where there is none yet.
async fn load(
    store: &Store,
    storage: &BTreeMap<String, String>,
) -> Result<Option<lance::Dataset>, BenchError> {
    let uri = store.uri(&format!("{}.lance", publish::TABLE));
    match crate::catalog::load(&uri, storage).await {
        Ok(d) => Ok(Some(d)),
        Err(lance_core::Error::DatasetNotFound { .. }) => Ok(None),
        Err(e) => Err(BenchError::store_source(
            format!("cannot open the results table {uri}"),
            e,
        )),
    }
}

/// The ids already in the table.
async fn ids(dataset: &lance::Dataset) -> lance_core::Result<BTreeSet<String>> {
    let batch = dataset.scan().project(&["id"])?.try_into_batch().await?;
    let col = batch.column(0).as_any().downcast_ref::<StringArray>();
    Ok(col
        .map(|c| c.iter().flatten().map(String::from).collect())
        .unwrap_or_default())
}

/// Append `rows`, creating the table if it is missing. lance retries an append's commit
/// against concurrent ones; a creation is an overwrite to lance, which it commits over a
/// table another publisher created at the same moment: [`restore_overwritten`] then puts
/// back what that erased.
async fn append(
    store: &Store,
    storage: &BTreeMap<String, String>,
    existing: Option<lance::Dataset>,
    rows: &[&Row],
) -> lance_core::Result<()> {
    let uri = store.uri(&format!("{}.lance", publish::TABLE));
    let dataset = match existing {
        Some(d) => d,
        None => {
            let mut params = write_params(storage, WriteMode::Create);
            params.data_storage_version = Some(CREATE_FORMAT.parse().expect("a Lance file format"));
            let created = InsertBuilder::new(uri.as_str())
                .with_params(&params)
                .execute(vec![batch(rows, true)])
                .await;
            match created {
                Err(lance_core::Error::DatasetAlreadyExists { .. }) => {
                    crate::catalog::load(&uri, storage).await?
                }
                Ok(d) => return restore_overwritten(d, storage).await,
                Err(e) => return Err(e),
            }
        }
    };
    let rows = batch(rows, file_format(&dataset) != "2.0");
    append_batch(dataset, storage, rows).await
}

fn write_params(storage: &BTreeMap<String, String>, mode: WriteMode) -> WriteParams {
    WriteParams {
        mode,
        store_params: Some(crate::catalog::store_params(storage)),
        ..Default::default()
    }
}

/// Append to the table in its own format (lance takes the dataset's when none is given).
async fn append_batch(
    dataset: lance::Dataset,
    storage: &BTreeMap<String, String>,
    batch: RecordBatch,
) -> lance_core::Result<()> {
    InsertBuilder::new(Arc::new(dataset))
        .with_params(&write_params(storage, WriteMode::Append))
        .execute(vec![batch])
        .await
        .map(|_| ())
}

/// After this publisher created the table: if its creation landed on a version other than
/// the first, it replaced a table another publisher had just created (and perhaps appended
/// to); the rows of the version before it that the table no longer has are appended again.
async fn restore_overwritten(
    created: lance::Dataset,
    storage: &BTreeMap<String, String>,
) -> lance_core::Result<()> {
    let version = created.version().version;
    if version <= 1 {
        return Ok(());
    }
    let before = created.checkout_version(version - 1).await?;
    let lost = before.scan().try_into_batch().await?;
    let mut latest = created;
    latest.checkout_latest().await?;
    let have = ids(&latest).await?;
    let col = lost
        .column_by_name("id")
        .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned());
    let Some(col) = col else { return Ok(()) };
    let keep = arrow::array::BooleanArray::from_iter(
        col.iter()
            .map(|id| Some(id.is_some_and(|i| !have.contains(i)))),
    );
    let missing = arrow::compute::filter_record_batch(&lost, &keep).map_err(|e| {
        lance_core::Error::invalid_input(format!("cannot select the rows to restore: {e}"))
    })?;
    if missing.num_rows() == 0 {
        return Ok(());
    }
    append_batch(latest, storage, missing).await
}

/// What `bench publish` takes.
#[derive(Debug, Clone)]
pub struct PublishArgs {
    pub results: PathBuf,
    pub to: Option<String>,
    pub storage: BTreeMap<String, String>,
    pub dut_name: String,
    pub dut_version: Option<String>,
    pub dut_timestamp: Option<i64>,
    pub test_bed: Option<String>,
}

/// `bench publish DIR [--to URI]`.
pub async fn publish(a: &PublishArgs) -> Result<Answer, BenchError> {
    // Only done cells: a row of a cell still running would be followed by another of the
    // same runs and more once it finishes.
    let finished = bench_core::sweep::resume::finished(&a.results)?;
    let mut answer = Answer::default();
    for (id, s) in &finished.unfinished {
        answer.note(format!(
            "{id}: left out, {} (publish it once it is done: resume the sweep, or \
             --retry-failed)",
            s.label()
        ));
    }
    if finished.records.is_empty() {
        return Err(BenchError::Usage(format!(
            "no cell of {} is done: nothing to publish (run or resume the sweep first)",
            a.results.display()
        )));
    }
    let records = finished.records;
    let ctx = Context {
        dut_name: a.dut_name.clone(),
        dut_version: a.dut_version.clone(),
        dut_timestamp: a.dut_timestamp,
        test_bed: a.test_bed.clone(),
        machine: machine(),
        now: chrono::Utc::now().timestamp(),
    };
    let made = publish::rows(&records, &ctx);
    for n in &made.notes {
        answer.note(n.clone());
    }
    let uri = a.to.clone().unwrap_or_else(default_uri);
    let store = open_store(&uri, &a.storage, true).await?;
    let table = store.uri(&format!("{}.lance", publish::TABLE));
    let existing = load(&store, &a.storage).await?;
    let have = match &existing {
        Some(d) => ids(d)
            .await
            .map_err(|e| BenchError::store_source(format!("cannot read {table}"), e))?,
        None => BTreeSet::new(),
    };
    if let Some(d) = &existing {
        let format = file_format(d);
        if format.as_str() > CREATE_FORMAT {
            answer.note(format!(
                "note: {table} is in Lance file format {format}, which lance-bench's pinned \
                 readers (pylance 0.39, lancedb 0.25) cannot decode; appended in it all the \
                 same (bench publish creates new tables in {CREATE_FORMAT})"
            ));
        }
    }
    let new: Vec<&Row> = made.rows.iter().filter(|r| !have.contains(&r.id)).collect();
    // Rows of cells published before they were extended: the new rows hold their runs.
    let stale: BTreeSet<&str> = (new.iter().flat_map(|r| &r.supersedes))
        .map(String::as_str)
        .filter(|id| have.contains(*id))
        .collect();
    if !new.is_empty() {
        append(&store, &a.storage, existing, &new)
            .await
            .map_err(|e| BenchError::store_source(format!("cannot append to {table}"), e))?;
    }
    if !stale.is_empty() {
        remove_rows(&store, &a.storage, &stale)
            .await
            .map_err(|e| BenchError::store_source(format!("cannot update {table}"), e))?;
    }
    let replaced = match stale.len() {
        0 => String::new(),
        n => format!(
            "; {} of fewer runs of the same cells replaced",
            bench_core::plan::count(n as u64, "row", "rows")
        ),
    };
    answer.line(format!(
        "published {} to {table} ({} already there{replaced})",
        bench_core::plan::count(new.len() as u64, "row", "rows"),
        made.rows.len() - new.len()
    ));
    Ok(answer)
}

/// Remove the rows of `ids` (after the rows that replace them are in: a publisher stopped
/// between the two leaves both, and its next run removes the old ones).
async fn remove_rows(
    store: &Store,
    storage: &BTreeMap<String, String>,
    ids: &BTreeSet<&str>,
) -> lance_core::Result<()> {
    let uri = store.uri(&format!("{}.lance", publish::TABLE));
    let mut dataset = crate::catalog::load(&uri, storage).await?;
    let quoted: Vec<String> = ids.iter().map(|id| format!("'{id}'")).collect();
    dataset
        .delete(&format!("id IN ({})", quoted.join(", ")))
        .await
        .map(|_| ())
}

/// This machine, as lance-bench's test bed has it.
fn machine() -> Machine {
    let host = bench_core::sched::host();
    let kib = host.memory_kib as f64;
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    Machine {
        hostname: bench_core::protocol::hostname(),
        cpu: host.cpu_model,
        memory_gb: (kib / (1024.0 * 1024.0)).round() as i32,
        os: format!("{} {}", capitalised(std::env::consts::OS), release.trim())
            .trim()
            .to_string(),
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// What `bench history` takes.
#[derive(Debug, Clone)]
pub struct HistoryArgs {
    pub uri: Option<String>,
    pub storage: BTreeMap<String, String>,
    pub benchmark: Option<Glob>,
    pub fail_on_regression: Option<f64>,
    pub charts: PathBuf,
    pub json: bool,
}

/// `bench history [URI]`.
pub async fn history(a: &HistoryArgs) -> Result<Answer, BenchError> {
    let uri = a.uri.clone().unwrap_or_else(default_uri);
    let store = open_store(&uri, &a.storage, false).await?;
    let table = store.uri(&format!("{}.lance", publish::TABLE));
    let Some(dataset) = load(&store, &a.storage).await? else {
        return Err(BenchError::store(format!(
            "no results table at {table}: publish results there first (bench publish DIR --to \
             {uri})"
        )));
    };
    let points = read_points(&dataset)
        .await
        .map_err(|e| BenchError::store_source(format!("cannot read {table}"), e))?;
    let detector = Detector::default();
    let all = history::series(points, a.benchmark.as_ref(), &detector);
    if all.is_empty() {
        return Err(BenchError::Usage(match &a.benchmark {
            Some(g) => format!("no benchmark in {table} matches `{}`", g.0),
            None => format!("{table} holds no results"),
        }));
    }
    let mut answer = Answer {
        stdout: match a.json {
            true => history::json(&all, &detector, a.fail_on_regression),
            false => history::text(&all, &detector, a.fail_on_regression),
        },
        ..Answer::default()
    };
    let written = write_charts(&a.charts, &all)?;
    answer.note(format!("charts: {written} in {}", a.charts.display()));
    if let Some(p) = a.fail_on_regression
        && all.iter().any(|s| s.regressed(p).is_some())
    {
        answer.code = exit::REGRESSION;
    }
    Ok(answer)
}

fn write_charts(dir: &Path, all: &[history::Series]) -> Result<usize, BenchError> {
    std::fs::create_dir_all(dir).map_err(|e| BenchError::io("create", dir, e))?;
    for s in all {
        let chart = history::chart(s);
        let svg = bench_core::report::svg::render(&chart).map_err(BenchError::output)?;
        let path = dir.join(&chart.file);
        bench_core::files::write_atomic(&path, svg.as_bytes())
            .map_err(|e| BenchError::io("write", &path, e))?;
    }
    Ok(all.len())
}

/// A column of the type lance-bench gives it, or an error naming it.
fn column<'a, T: Array + 'static>(
    c: Option<&'a ArrayRef>,
    what: &str,
) -> lance_core::Result<&'a T> {
    c.and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| {
            lance_core::Error::invalid_input(format!("the table's `{what}` is not lance-bench's"))
        })
}

/// Every row of the table as history reads it (a row without a name or a mean is left out;
/// a missing id counts the row by its place, a missing time as 0).
async fn read_points(dataset: &lance::Dataset) -> lance_core::Result<Vec<Point>> {
    let columns = [
        "id",
        "benchmark_name",
        "dut",
        "test_bed",
        "timestamp",
        "summary",
        "units",
    ];
    let batch = dataset.scan().project(&columns)?.try_into_batch().await?;
    let top = |name: &str| batch.column_by_name(name);
    let id = column::<StringArray>(top("id"), "id")?;
    let name = column::<StringArray>(top("benchmark_name"), "benchmark_name")?;
    let units = column::<StringArray>(top("units"), "units")?;
    let ts = column::<Int64Array>(top("timestamp"), "timestamp")?;
    let dut = column::<StructArray>(top("dut"), "dut")?;
    let summary = column::<StructArray>(top("summary"), "summary")?;
    let test_bed = column::<StructArray>(top("test_bed"), "test_bed")?;
    let bed = column::<StringArray>(test_bed.column_by_name("name"), "test_bed.name")?;
    let version = column::<StringArray>(dut.column_by_name("version"), "dut.version")?;
    let dut_ts = column::<Int64Array>(dut.column_by_name("timestamp"), "dut.timestamp")?;
    let mean = column::<Float64Array>(summary.column_by_name("mean"), "summary.mean")?;
    let min = column::<Float64Array>(summary.column_by_name("min"), "summary.min")?;
    let max = column::<Float64Array>(summary.column_by_name("max"), "summary.max")?;
    let or_mean = |a: &Float64Array, i: usize| match a.is_null(i) || !a.value(i).is_finite() {
        true => mean.value(i),
        false => a.value(i),
    };
    let text = |a: &StringArray, i: usize| (!a.is_null(i)).then(|| a.value(i).to_string());
    let int = |a: &Int64Array, i: usize| if a.is_null(i) { 0 } else { a.value(i) };
    Ok((0..batch.num_rows())
        .filter(|&i| !name.is_null(i) && !mean.is_null(i) && mean.value(i).is_finite())
        .map(|i| Point {
            id: text(id, i).unwrap_or_else(|| format!("row {i}")),
            benchmark_name: name.value(i).to_string(),
            test_bed: text(bed, i).unwrap_or_default(),
            dut_version: text(version, i).unwrap_or_default(),
            dut_timestamp: int(dut_ts, i),
            timestamp: int(ts, i),
            value: mean.value(i),
            min: or_mean(min, i),
            max: or_mean(max, i),
            units: text(units, i).unwrap_or_default(),
        })
        .collect())
}
