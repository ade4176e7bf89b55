//! The checks every part of a plan's validation shares: one error naming a key, counts
//! within bounds, lists without duplicates, the values of a matrix dimension. Below the
//! modules that validate (`validate`, `env`, `table`, `transport`, `removal`), which import
//! from here and never from one another.

use std::fmt;

use crate::error::PlanError;

/// Upper bounds of the plan's values (documented in docs/plan.md).
pub mod limits {
    /// Rows in a golden `__manifest`.
    pub const SIZE: u64 = 1_000_000_000;
    /// Commits of a continuous cell.
    pub const OPERATIONS: u64 = 10_000_000;
    /// Worker processes of one cell (writers or clients).
    pub const WORKERS: u64 = 10_000;
    /// `duration_secs` of concurrent and mixed cells: one day.
    pub const DURATION_SECS: u64 = 86_400;
    /// Reads per commit of a mixed cell.
    pub const READS_PER_WRITE: u64 = 1_000_000;
    /// `run.cell_timeout_secs`: seven days.
    pub const CELL_TIMEOUT_SECS: u64 = 604_800;
    /// lance's commit retry budget.
    pub const COMMIT_RETRIES: u64 = 10_000;
    /// Warm-up operations per worker.
    pub const WARMUP_OPERATIONS: u64 = 1_000_000;
    /// Repetitions of each cell.
    pub const REPETITIONS: u64 = 1_000;
    /// Server-side copies in flight at once.
    pub const COPY_PARALLELISM: u64 = 1_000;
    /// Operations each worker traces (`run.trace_operations`, `--trace`).
    pub const TRACE_OPERATIONS: u64 = 1_000;
    /// Entries a page of a listing (`page_size`; lance takes an i32).
    pub const PAGE_SIZE: u64 = 1_000_000;
    /// Operations a second an open-loop cell may offer (`concurrent.rate`).
    pub const RATE: f64 = 100_000.0;
}

pub(crate) fn invalid(key: &str, message: impl Into<String>) -> PlanError {
    PlanError::Key {
        file: None,
        key: key.to_string(),
        line: None,
        message: message.into(),
    }
}

/// `value` must lie in `1..=max`; `zero` says why 0 is wrong.
pub(crate) fn bounded(key: &str, value: u64, zero: &str, max: u64) -> Result<u64, PlanError> {
    match value {
        0 => Err(invalid(key, zero)),
        v if v > max => Err(invalid(key, format!("must be at most {max}; got {v}"))),
        v => Ok(v),
    }
}

/// `value` may be 0 but no more than `max`.
pub(crate) fn at_most(key: &str, value: u64, max: u64) -> Result<u64, PlanError> {
    if value > max {
        return Err(invalid(key, format!("must be at most {max}; got {value}")));
    }
    Ok(value)
}

/// A list with at least one value and no value twice.
pub(crate) fn check_list<T: PartialEq + fmt::Debug>(
    key: &str,
    list: &[T],
) -> Result<(), PlanError> {
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

/// A list of counts, each in `1..=max`.
pub(crate) fn check_counts<T>(key: &str, list: &[T], zero: &str, max: u64) -> Result<(), PlanError>
where
    T: Copy + Into<u64> + PartialEq + fmt::Debug,
{
    check_list(key, list)?;
    for &v in list {
        bounded(key, v.into(), zero, max)?;
    }
    Ok(())
}

/// Whether a name can be part of a cell's id (a directory name on every store).
pub(crate) fn id_safe(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The values a dimension of the matrix takes (a property, a variable), as text: a list,
/// none twice, each usable in its cells' names (else it belongs in `fixed`, the table for
/// every cell).
pub(crate) fn dimension(
    key: &str,
    v: toml::Value,
    what: &str,
    fixed: &str,
    text: impl Fn(toml::Value) -> Result<String, PlanError>,
) -> Result<Vec<String>, PlanError> {
    let toml::Value::Array(list) = v else {
        return Err(invalid(
            key,
            format!("must be a list of the values the {what} takes, e.g. [\"1\", \"1000\"]"),
        ));
    };
    let values = list.into_iter().map(text).collect::<Result<Vec<_>, _>>()?;
    check_list(key, &values)?;
    if let Some(bad) = values.iter().find(|x| !id_safe(x)) {
        return Err(invalid(
            key,
            format!(
                "value `{bad}` names its cells, so use letters, digits, `-`, `_` or `.`; \
                 a value with other characters can go in {fixed}"
            ),
        ));
    }
    Ok(values)
}
