//! `[table]` and `matrix.table_versions`: the shared table that table operations work on.

use super::checks::{bounded, check_counts, invalid};
use super::{Operation, TableSettings};
use crate::error::PlanError;

/// Rows each table commit appends when the plan does not say (lance #6752's harness).
pub const DEFAULT_ROWS_PER_COMMIT: u64 = 10;

/// Largest history a golden's shared table may be given.
const MAX_TABLE_VERSIONS: u64 = 10_000_000;
/// Largest append.
const MAX_ROWS_PER_COMMIT: u64 = 1_000_000;

/// The table settings of a plan whose operations (the measured one, or a mixed cell's
/// read) include a table operation; `None` for a catalog-only plan, which may then set
/// neither `[table]` nor `matrix.table_versions`.
pub(super) fn settings(
    rows_per_commit: Option<u64>,
    versions: Option<Vec<u64>>,
    operations: &[Operation],
) -> Result<Option<TableSettings>, PlanError> {
    if !operations.iter().any(|op| op.on_table()) {
        let given = [
            (rows_per_commit.is_some(), "table.rows_per_commit"),
            (versions.is_some(), "matrix.table_versions"),
        ];
        return match given.iter().find(|(set, _)| *set) {
            Some((_, key)) => Err(invalid(
                key,
                "applies to the shared table of table operations, and this plan has none; \
                 set `operation` (or `mixed.read_operation`) to one of write-table-append, \
                 write-insert-into-table, warm-read-list-table-versions, \
                 warm-read-describe-table-version (or their cold- forms), or remove it",
            )),
            None => Ok(None),
        };
    }
    let rows_per_commit = bounded(
        "table.rows_per_commit",
        rows_per_commit.unwrap_or(DEFAULT_ROWS_PER_COMMIT),
        "must be at least 1 row",
        MAX_ROWS_PER_COMMIT,
    )?;
    let versions = versions.unwrap_or_else(|| vec![1]);
    check_counts(
        "matrix.table_versions",
        &versions,
        "each history must have at least 1 version (the table's creation)",
        MAX_TABLE_VERSIONS,
    )?;
    Ok(Some(TableSettings {
        rows_per_commit,
        versions,
    }))
}

/// The namespace property that makes the namespace manage a table's versions.
pub const TRACKING: &str = "table_version_tracking_enabled";

/// `write-create-table-version` measures the namespace's `create_table_version`, which
/// commits only with the namespace managing the table's versions: its cells get
/// [`TRACKING`] on; the plan may say so too, but not otherwise.
pub(super) fn tracking(
    operation: Operation,
    namespace: &mut std::collections::BTreeMap<String, String>,
    matrix: &[(String, Vec<String>)],
) -> Result<(), PlanError> {
    if operation != Operation::CreateTableVersion {
        return Ok(());
    }
    let why = "write-create-table-version commits through the namespace's managed versions, \
               which need it on; bench sets it to true for these cells, so remove it (or use \
               write-table-append to compare it off and on)";
    if matrix.iter().any(|(k, _)| k == TRACKING) {
        return Err(invalid(&format!("matrix.properties.{TRACKING}"), why));
    }
    match namespace
        .get(TRACKING)
        .map(|v| v.trim().to_ascii_lowercase())
    {
        Some(v) if v != "true" => Err(invalid(&format!("namespace.{TRACKING}"), why)),
        _ => {
            namespace.insert(TRACKING.to_string(), "true".to_string());
            Ok(())
        }
    }
}
