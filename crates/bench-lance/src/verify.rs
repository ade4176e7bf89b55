//! Nothing lost, verified: after a write cell, the cell's `__manifest` must hold the rows it
//! started with plus exactly one row per successful commit that creates (less one per
//! successful removal), and every object a worker reported as created must be in it, every
//! entry it reported as removed gone (so no failed operation left or took a row, no reported
//! commit was lost, and a removal took nothing else). An attempt abandoned at its timeout may
//! or may not have committed: each allows one row more (a removal's: one fewer).

use std::collections::BTreeMap;

use crate::catalog;

/// Whether a cell's catalog commits add entries or remove them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Removed,
}

/// What `__manifest` must hold after a cell of catalog commits.
#[derive(Debug, Clone, Copy)]
pub struct CatalogExpect {
    /// The golden's rows.
    pub before: u64,
    /// Warm-up commits that succeeded (counted, not named).
    pub warm: u64,
    pub change: Change,
    /// Attempts abandoned at their timeout.
    pub abandoned: u64,
}

/// Check the catalog under `root` against the measured commits the workers reported,
/// naming the entries each created or removed (`named`). Returns the row count found and
/// what did not match, if anything.
pub async fn commits(
    root: &str,
    storage: &BTreeMap<String, String>,
    e: &CatalogExpect,
    named: &[String],
) -> (u64, Option<String>) {
    let after = match catalog::manifest_rows(root, storage).await {
        Ok(n) => n,
        Err(e) => return (0, Some(format!("cannot read the cell's __manifest: {e}"))),
    };
    let n = e.warm + named.len() as u64;
    let (expected, low, high, sign, what) = match e.change {
        Change::Added => (
            e.before + n,
            e.before + n,
            e.before + n + e.abandoned,
            "+",
            "commits",
        ),
        Change::Removed => {
            let expected = e.before.saturating_sub(n);
            (
                expected,
                expected.saturating_sub(e.abandoned),
                expected,
                "-",
                "removals",
            )
        }
    };
    if after < low || after > high {
        let bound = if e.change == Change::Added { high } else { low };
        return (
            after,
            Some(format!(
                "__manifest holds {after} rows, expected {} {sign} {n} {what} = {expected}{}",
                e.before,
                abandoned_note(e.abandoned, bound)
            )),
        );
    }
    let missing = match catalog::missing_objects(root, storage, named).await {
        Ok(missing) => missing,
        Err(e) => {
            return (
                after,
                Some(format!("cannot look up committed objects: {e}")),
            );
        }
    };
    let error = match e.change {
        Change::Added => (!missing.is_empty()).then(|| {
            format!(
                "{} committed objects are missing from __manifest, e.g. {}",
                missing.len(),
                missing[0]
            )
        }),
        Change::Removed => {
            let kept: Vec<&String> = named.iter().filter(|id| !missing.contains(id)).collect();
            (!kept.is_empty()).then(|| {
                format!(
                    "{} removed entries are still in __manifest, e.g. {}",
                    kept.len(),
                    kept[0]
                )
            })
        }
    };
    (after, error)
}

/// What the shared table of a cell of table operations must hold after it: the golden's
/// rows and version plus `commits` appends of `rows_per_commit` rows, one version each,
/// with up to `abandoned` more.
pub struct TableExpect {
    pub rows_per_commit: u64,
    pub rows_before: u64,
    pub version_before: u64,
    pub commits: u64,
    pub abandoned: u64,
    /// Property updates: each worker's key and the index of its last acknowledged update,
    /// whose value the table must hold (a later abandoned one may have landed instead).
    pub properties: BTreeMap<String, u64>,
}

/// Check the shared table of the cell's copy at `root` (found through its catalog, which
/// must place it inside the copy). Returns what it holds and what did not match.
pub async fn table(
    root: &str,
    storage: &BTreeMap<String, String>,
    e: &TableExpect,
) -> (Option<crate::export::record::TableState>, Option<String>) {
    let found = async {
        let ns = catalog::open(&catalog::CatalogConfig {
            root: root.to_string(),
            inline: false,
            commit_retries: 0,
            storage: storage.clone(),
            properties: Default::default(),
        })
        .await?;
        let location = catalog::table::location(&ns).await?;
        let state = catalog::table::state(&location, storage).await?;
        Ok::<_, lance_core::Error>((location, state))
    };
    let (location, now) = match found.await {
        Ok(x) => x,
        Err(e) => {
            return (
                None,
                Some(format!("cannot read the cell's shared table: {e}")),
            );
        }
    };
    let (rows, version) = (now.rows, now.version);
    let state = crate::export::record::TableState {
        rows_per_commit: e.rows_per_commit,
        rows_before: e.rows_before,
        rows_after: rows,
        version_before: e.version_before,
        version_after: version,
    };
    let inside = catalog::table::inside(&location, root);
    let (rows_min, v_min) = (
        e.rows_before + e.commits * e.rows_per_commit,
        e.version_before + e.commits,
    );
    let error = if !inside {
        Some(format!(
            "the shared table is at {location}, outside the cell's copy {root}"
        ))
    } else if rows < rows_min || rows > rows_min + e.abandoned * e.rows_per_commit {
        Some(format!(
            "the shared table holds {rows} rows, expected {} + {} commits × {} = {rows_min}{}",
            e.rows_before,
            e.commits,
            e.rows_per_commit,
            abandoned_note(e.abandoned, rows_min + e.abandoned * e.rows_per_commit)
        ))
    } else if version < v_min || version > v_min + e.abandoned {
        Some(format!(
            "the shared table is at version {version}, expected {} + {} commits = {v_min}{}",
            e.version_before,
            e.commits,
            abandoned_note(e.abandoned, v_min + e.abandoned)
        ))
    } else {
        property_error(e, &now.properties)
    };
    (Some(state), error)
}

/// The first property the table does not hold as its last acknowledged update wrote it
/// (with abandoned updates, a later index may have landed instead).
fn property_error(
    e: &TableExpect,
    found: &std::collections::HashMap<String, String>,
) -> Option<String> {
    e.properties.iter().find_map(|(key, &last)| {
        let value = found.get(key);
        let holds = value.is_some_and(|v| {
            v.parse::<u64>()
                .is_ok_and(|v| v == last || (e.abandoned > 0 && v > last))
        });
        (!holds).then(|| {
            format!(
                "the shared table's property {key} is {}, expected {last}, its last \
                 acknowledged update",
                value.map_or("absent".to_string(), |v| format!("`{v}`"))
            )
        })
    })
}

/// " (up to N with the K abandoned attempts)" where attempts were abandoned (N: the
/// bound on the other side, down to it for removals).
fn abandoned_note(abandoned: u64, up_to: u64) -> String {
    if abandoned > 0 {
        format!(" (up to {up_to} with the {abandoned} abandoned attempts)")
    } else {
        String::new()
    }
}

/// What `__manifest` (and the tree's tables) must hold after a cell of roles: the golden's
/// rows, plus the objects its clients created, less the entries they removed, each named;
/// each table property its clients set at its last acknowledged value.
#[derive(Debug, Default)]
pub struct RolesExpect {
    pub before: u64,
    pub created: Vec<String>,
    pub removed: Vec<String>,
    /// Commits abandoned at their timeout (each may have landed): creations, removals,
    /// property updates.
    pub abandoned: [u64; 3],
    /// (table id, key) → the index of its last acknowledged update.
    pub properties: BTreeMap<(String, String), u64>,
    /// The entries of the creations and removals abandoned at their timeout, to look up.
    pub indeterminate: [Vec<String>; 2],
}

/// Check a cell of roles' copy at `root`; returns the rows found, what did not match
/// (naming the entries) and, where it matched, whether each of the abandoned creations and
/// removals landed (each looked up: a creation's entry there, a removal's gone), by entry.
pub async fn roles(
    root: &str,
    storage: &BTreeMap<String, String>,
    e: &RolesExpect,
) -> (u64, Option<String>, Option<BTreeMap<String, bool>>) {
    let (after, error) = roles_checked(root, storage, e).await;
    if error.is_some() {
        return (after, error, None);
    }
    let [created, removed] = &e.indeterminate;
    let mut ids = created.clone();
    ids.extend(removed.iter().cloned());
    match catalog::missing_objects(root, storage, &ids).await {
        Ok(missing) => {
            let landed = (created.iter().map(|id| (id.clone(), !missing.contains(id))))
                .chain(removed.iter().map(|id| (id.clone(), missing.contains(id))))
                .collect();
            (after, None, Some(landed))
        }
        Err(err) => (
            after,
            Some(format!("cannot look up the abandoned commits: {err}")),
            None,
        ),
    }
}

async fn roles_checked(
    root: &str,
    storage: &BTreeMap<String, String>,
    e: &RolesExpect,
) -> (u64, Option<String>) {
    let after = match catalog::manifest_rows(root, storage).await {
        Ok(n) => n,
        Err(err) => return (0, Some(format!("cannot read the cell's __manifest: {err}"))),
    };
    let [created, removed] = [e.created.len() as u64, e.removed.len() as u64];
    let expected = (e.before + created).saturating_sub(removed);
    let (low, high) = (
        expected.saturating_sub(e.abandoned[1]),
        expected + e.abandoned[0],
    );
    if after < low || after > high {
        let abandoned = e.abandoned[0] + e.abandoned[1];
        return (
            after,
            Some(format!(
                "__manifest holds {after} rows, expected {} + {created} created - {removed} \
                 removed = {expected}{}",
                e.before,
                match abandoned {
                    0 => String::new(),
                    n => format!(" ({low} to {high} with the {n} abandoned commits)"),
                }
            )),
        );
    }
    let mut ids = e.created.clone();
    ids.extend(e.removed.iter().cloned());
    let missing = match catalog::missing_objects(root, storage, &ids).await {
        Ok(m) => m,
        Err(err) => return (after, Some(format!("cannot look up the entries: {err}"))),
    };
    let lost: Vec<&String> = e.created.iter().filter(|id| missing.contains(id)).collect();
    let kept: Vec<&String> = e
        .removed
        .iter()
        .filter(|id| !missing.contains(id))
        .collect();
    if let Some(id) = lost.first() {
        return (
            after,
            Some(format!(
                "{} created objects are missing from __manifest, e.g. {id}",
                lost.len()
            )),
        );
    }
    if let Some(id) = kept.first() {
        return (
            after,
            Some(format!(
                "{} removed entries are still in __manifest, e.g. {id}",
                kept.len()
            )),
        );
    }
    (after, properties(root, storage, e).await)
}

/// The first table property that does not hold its last acknowledged update's value.
async fn properties(
    root: &str,
    storage: &BTreeMap<String, String>,
    e: &RolesExpect,
) -> Option<String> {
    let mut tables: BTreeMap<&str, Vec<(&str, u64)>> = BTreeMap::new();
    for ((table, key), &last) in &e.properties {
        if !e.removed.contains(table) {
            tables.entry(table).or_default().push((key, last));
        }
    }
    for (table, keys) in tables {
        let found = match catalog::table::state(&format!("{root}/{table}"), storage).await {
            Ok(now) => now.properties,
            Err(err) => return Some(format!("cannot read table {table}: {err}")),
        };
        for (key, last) in keys {
            let value = found.get(key);
            let holds = value.is_some_and(|v| {
                v.parse::<u64>()
                    .is_ok_and(|v| v == last || (e.abandoned[2] > 0 && v > last))
            });
            if !holds {
                return Some(format!(
                    "table {table}'s property {key} is {}, expected {last}, its last \
                     acknowledged update",
                    value.map_or("absent".to_string(), |v| format!("`{v}`"))
                ));
            }
        }
    }
    None
}
