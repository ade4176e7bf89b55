//! Nothing lost, verified: after a write cell, the cell's `__manifest` must hold the rows it
//! started with plus exactly one row per successful commit, and every object a worker
//! reported as committed must be in it (so no failed operation left a row, and no reported
//! commit was lost). An attempt abandoned at its timeout may or may not have committed: each
//! allows one row more.

use std::collections::BTreeMap;

use crate::catalog;

/// Check the catalog under `root` against the commits the workers reported. `before` is
/// the row count before the measured operations (the golden's rows plus warm-up commits);
/// `abandoned` the attempts abandoned at their timeout. Returns the row count found and
/// what did not match, if anything.
pub async fn commits(
    root: &str,
    storage: &BTreeMap<String, String>,
    before: u64,
    committed: &[String],
    abandoned: u64,
) -> (u64, Option<String>) {
    let after = match catalog::manifest_rows(root, storage).await {
        Ok(n) => n,
        Err(e) => return (0, Some(format!("cannot read the cell's __manifest: {e}"))),
    };
    let expected = before + committed.len() as u64;
    if after < expected || after > expected + abandoned {
        let also = if abandoned > 0 {
            format!(
                " (up to {} with the {abandoned} abandoned attempts)",
                expected + abandoned
            )
        } else {
            String::new()
        };
        return (
            after,
            Some(format!(
                "__manifest holds {after} rows, expected {before} + {} commits = {expected}{also}",
                committed.len()
            )),
        );
    }
    match catalog::missing_objects(root, storage, committed).await {
        Ok(missing) if missing.is_empty() => (after, None),
        Ok(missing) => (
            after,
            Some(format!(
                "{} committed objects are missing from __manifest, e.g. {}",
                missing.len(),
                missing[0]
            )),
        ),
        Err(e) => (
            after,
            Some(format!("cannot look up committed objects: {e}")),
        ),
    }
}
