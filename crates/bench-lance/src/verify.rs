//! Nothing lost, verified — one rule for every kind of cell ([`bench_core::audit`]): every
//! write of the cell's operation log that did not succeed is looked up in the copy and marked
//! landed or not; then the copy's `__manifest` must hold what the cell started from plus
//! every write that took effect, entry by entry (one scan of its ids, counted by id), the
//! shared table one version per commit that took effect, and every property the value of
//! the last update that did. This module reads the catalogs and tables; the core judges.

use std::collections::BTreeMap;

use bench_core::audit::{self, Ids, TableCounts};
use bench_core::oplog::{Op, Outcome};

use crate::catalog;
use crate::export::record::TableState;

/// The ids of the `__manifest` under `root`, one per row.
pub async fn ids(root: &str, storage: &BTreeMap<String, String>) -> lance_core::Result<Ids> {
    Ok(Ids::of(catalog::object_ids(root, storage).await?))
}

/// The bytes of the data files of `__manifest`'s latest version under `root`: the catalog's
/// state, what a copy-on-write commit rewrites (the floor's bytes: docs/cost.md).
pub async fn state_bytes(
    root: &str,
    storage: &BTreeMap<String, String>,
) -> lance_core::Result<u64> {
    let ds = catalog::load(&format!("{root}/{}", catalog::MANIFEST_DIR), storage).await?;
    let store = ds.object_store(None).await?;
    let mut bytes = 0;
    for fragment in ds.fragments().iter() {
        for file in &fragment.files {
            bytes += match file.file_size_bytes.get() {
                Some(n) => n.get(),
                None => {
                    let path = format!("{}/{}", ds.data_dir(), file.path);
                    store.size(&path.as_str().into()).await?
                }
            };
        }
    }
    Ok(bytes)
}

/// The shared table of a cell of table operations as it was before the cell, and the rows
/// each append adds.
#[derive(Debug, Clone, Copy)]
pub struct TableBefore {
    pub rows: u64,
    pub version: u64,
    pub rows_per_commit: u64,
}

/// What verification found of a cell's copy.
#[derive(Debug)]
pub struct Verified {
    /// Rows in the copy's `__manifest` after the cell.
    pub rows_after: u64,
    pub error: Option<String>,
    /// Cells of table operations: the shared table before and after.
    pub table: Option<TableState>,
    /// The copy's versions after the cell's first held against the cell's commits (`None`:
    /// not read).
    pub chain: Option<u64>,
}

/// The rows verification reads at most to hold the copy's chain of versions against the
/// cell's commits where no commit needs it to be placed: versions after the cell's first
/// times the rows of the copy. Beyond it, the chain is left unread and the record says so.
pub const CHAIN_ROWS: u64 = 2_000_000;

/// Verify the copy at `root` against the cell's operation `log` (each write that did not
/// succeed marked landed or not as the copy shows it), `before` being the ids of the catalog
/// the cell started from, `table` the shared table before it (cells of table operations),
/// `first` the version of `__manifest` the cell began at where the copy is bench's own (the
/// golden's latest; 0 where there was none), so that its chain of versions is held against
/// the cell's commits.
pub async fn cell(
    root: &str,
    storage: &BTreeMap<String, String>,
    before: &Ids,
    log: &mut [Op],
    table: Option<TableBefore>,
    first: Option<u64>,
) -> Verified {
    let after = match ids(root, storage).await {
        Ok(ids) => ids,
        Err(e) => {
            return Verified {
                rows_after: 0,
                error: Some(format!("cannot read the cell's __manifest: {e}")),
                table: None,
                chain: None,
            };
        }
    };
    let mut error = audit::catalog(before, &after, log);
    let mut state = None;
    let uncertain = uncertain(log);
    if let Some(t) = table {
        let (s, e) = shared_table(root, storage, log, t, uncertain).await;
        state = s;
        error = error.or(e);
    }
    // The copy's chain of versions, held against the cell's commits (a copy of bench's whose
    // cell keeps a history, within the budget), and where some commit's requests named no
    // version (through REST, a reply lost, a worker killed), saying which made each.
    let wanted = bench_core::audit::chain_wanted(log);
    let judged = first.filter(|_| bench_core::audit::keeps_history(log));
    let mut checked = None;
    if wanted || judged.is_some() {
        let budget = (!wanted).then_some(after.rows());
        match chain(root, storage, first.unwrap_or(0), budget).await {
            Ok(Some(chain)) => {
                if judged.is_some() {
                    error = both(error, bench_core::audit::judge(log, &chain));
                    checked = Some(chain.versions.len() as u64);
                }
                bench_core::audit::place(log, &chain.changes);
            }
            Ok(None) => {}
            Err(e) => {
                let e = format!("cannot read the copy's versions of __manifest: {e}");
                error = both(error, Some(e));
            }
        }
    }
    if uncertain {
        let manifest = format!("{root}/{}", catalog::MANIFEST_DIR);
        let dangling = dangling_transactions(&manifest, storage, "__manifest", 0).await;
        error = both(error, dangling);
    }
    let holds = properties(root, storage, log).await;
    let properties_error = match holds {
        Ok(holds) => audit::properties(log, &holds),
        Err(e) => Some(e),
    };
    Verified {
        rows_after: after.rows(),
        error: error.or(properties_error),
        table: state,
        chain: checked,
    }
}

/// The latest version of the `__manifest` at `root` (`None` where it cannot be read).
pub async fn latest(root: &str, storage: &BTreeMap<String, String>) -> Option<u64> {
    let uri = format!("{root}/{}", catalog::MANIFEST_DIR);
    Some(catalog::load(&uri, storage).await.ok()?.version().version)
}

/// Whether some write of the log ended unknown or landed after an error: where a commit's
/// transaction file may have been cleaned up after the commit landed, so where it is looked
/// for (elsewhere nothing is read, and nothing claimed).
fn uncertain(log: &[Op]) -> bool {
    (log.iter())
        .any(|op| op.is_write() && (op.outcome == Outcome::Unknown || op.landed == Some(true)))
}

/// The copy's `__manifest` versions from `first` on, each later one against the one before
/// it where both are there (cleanup removes old ones): the entries it added and removed.
/// Each version is read, 8 at a time, and held only until the next is compared; `None`
/// where `budget` (the copy's rows) times the versions after `first` is more than
/// [`CHAIN_ROWS`].
async fn chain(
    root: &str,
    storage: &BTreeMap<String, String>,
    first: u64,
    budget: Option<u64>,
) -> lance_core::Result<Option<bench_core::versions::Chain>> {
    use futures::{StreamExt, TryStreamExt};
    use std::collections::HashMap;
    let ds = catalog::load(&format!("{root}/{}", catalog::MANIFEST_DIR), storage).await?;
    let ds = &ds;
    let versions: Vec<u64> = (ds.versions().await?.iter())
        .map(|v| v.version)
        .filter(|&v| v >= first)
        .collect();
    let later: Vec<u64> = versions.iter().copied().filter(|&v| v > first).collect();
    if budget.is_some_and(|rows| rows.saturating_mul(later.len() as u64) > CHAIN_ROWS) {
        return Ok(None);
    }
    let mut held = futures::stream::iter(versions)
        .map(|v| async move {
            let at = ds.checkout_version(v).await?;
            let mut ids: HashMap<String, u32> = HashMap::new();
            for id in catalog::ids_of(&at).await? {
                *ids.entry(id).or_default() += 1;
            }
            lance_core::Result::Ok((v, ids))
        })
        .buffered(8);
    // Each version against the one before it, only the two kept. A catalog the cell created:
    // its first version against none.
    let mut was: Option<(u64, HashMap<String, u32>)> = (first == 0).then(|| (0, HashMap::new()));
    let mut chain = Vec::new();
    while let Some((v, after)) = held.try_next().await? {
        if let Some((w, before)) = &was
            && v == w + 1
        {
            let mut change = bench_core::versions::Change {
                version: v,
                ..Default::default()
            };
            for (id, &n) in &after {
                let m = before.get(id).copied().unwrap_or(0);
                change.added.extend((m..n).map(|_| id.clone()));
            }
            for (id, &m) in before {
                let n = after.get(id).copied().unwrap_or(0);
                change.removed.extend((n..m).map(|_| id.clone()));
            }
            chain.push(change);
        }
        was = Some((v, after));
    }
    Ok(Some(bench_core::versions::Chain {
        first,
        versions: later,
        changes: chain,
    }))
}

/// Two findings as one (either, or both said in turn).
fn both(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    }
}

/// The versions after `after` of the dataset at `uri` (`what`: `__manifest`, the shared
/// table) whose manifest names a transaction file that is gone: a commit that landed, its
/// transaction file deleted after it — what lance through 10.0.0 did to a commit whose reply
/// was lost (it took the store's error for a failed commit and cleaned up;
/// docs/track-record.md). lance reads a version's transaction from the manifest itself where
/// it is inlined, so nothing else notices: each version is read and its file looked for, 16
/// at a time, in a cell where some write ended [`uncertain`].
async fn dangling_transactions(
    uri: &str,
    storage: &BTreeMap<String, String>,
    what: &str,
    after: u64,
) -> Option<String> {
    use futures::{StreamExt, TryStreamExt};
    let found = async {
        let ds = catalog::load(uri, storage).await?;
        let store = ds.object_store(None).await?;
        let (ds, store) = (&ds, &store);
        let versions = ds
            .versions()
            .await?
            .into_iter()
            .filter(|v| v.version > after);
        let mut gone: Vec<(u64, String)> = futures::stream::iter(versions)
            .map(|v| async move {
                let at = ds.checkout_version(v.version).await?;
                let Some(file) = at.manifest().transaction_file.clone() else {
                    return lance_core::Result::Ok(None);
                };
                let path = format!("{}/{file}", ds.transactions_dir());
                let there = store.exists(&path.as_str().into()).await?;
                Ok((!there).then_some((v.version, file)))
            })
            .buffer_unordered(16)
            .try_filter_map(|x| async move { Ok(x) })
            .try_collect()
            .await?;
        gone.sort();
        lance_core::Result::Ok(gone)
    };
    let gone = match found.await {
        Ok(gone) => gone,
        Err(e) => return Some(format!("cannot read the versions of {what}: {e}")),
    };
    let (first, file) = gone.first()?;
    Some(format!(
        "{} version(s) of {what} name a transaction file that is gone, the first version \
         {first} (_transactions/{file}): a commit that landed and lost its transaction file",
        gone.len()
    ))
}

/// The shared table of the copy at `root` (found through its catalog, which must place it
/// inside the copy), held against its commits; and, where some write ended `uncertain`,
/// its versions' transaction files looked for.
async fn shared_table(
    root: &str,
    storage: &BTreeMap<String, String>,
    log: &mut [Op],
    before: TableBefore,
    uncertain: bool,
) -> (Option<TableState>, Option<String>) {
    let (location, now) = match shared_table_now(root, storage).await {
        Ok(x) => x,
        Err(e) => {
            return (
                None,
                Some(format!("cannot read the cell's shared table: {e}")),
            );
        }
    };
    let state = TableState {
        rows_per_commit: before.rows_per_commit,
        rows_before: before.rows,
        rows_after: now.rows,
        version_before: before.version,
        version_after: now.version,
    };
    if !catalog::table::inside(&location, root) {
        let outside = format!("the shared table is at {location}, outside the cell's copy {root}");
        return (Some(state), Some(outside));
    }
    let counts = |rows, version| TableCounts { rows, version };
    let error = audit::table(
        log,
        counts(before.rows, before.version),
        counts(now.rows, now.version),
        before.rows_per_commit,
    );
    if !uncertain {
        return (Some(state), error);
    }
    let what = "the shared table";
    let dangling = dangling_transactions(&location, storage, what, before.version).await;
    (Some(state), both(error, dangling))
}

/// Where the catalog at `root` says its shared table is, and what that table holds.
async fn shared_table_now(
    root: &str,
    storage: &BTreeMap<String, String>,
) -> lance_core::Result<(String, catalog::table::TableNow)> {
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
    Ok((location, state))
}

/// The value each property the log's updates set holds now, by (table, key) (`""`: the
/// shared table), of every table no write of the log removed.
async fn properties(
    root: &str,
    storage: &BTreeMap<String, String>,
    log: &[Op],
) -> Result<BTreeMap<(String, String), Option<String>>, String> {
    let removed: std::collections::HashSet<&str> = (log.iter())
        .filter(|o| o.operation.removes() && o.took_effect() != Some(false))
        .filter_map(|o| o.entry.as_deref())
        .collect();
    let mut keys: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for o in log {
        if let (Some(table), Some((key, _))) = (&o.entry, &o.property)
            && !removed.contains(table.as_str())
        {
            keys.entry(table).or_default().push(key);
        }
    }
    let mut holds = BTreeMap::new();
    for (table, keys) in keys {
        let found = match table {
            "" => shared_table_now(root, storage).await.map(|(_, now)| now),
            t => catalog::table::state(&format!("{root}/{t}"), storage).await,
        };
        let found = found.map_err(|e| match table {
            "" => format!("cannot read the cell's shared table: {e}"),
            t => format!("cannot read table {t}: {e}"),
        })?;
        for key in keys {
            let value = found.properties.get(key).cloned();
            holds.insert((table.to_string(), key.to_string()), value);
        }
    }
    Ok(holds)
}
