//! Nothing lost, verified — one rule for every kind of cell ([`bench_core::audit`]): every
//! write of the cell's operation log that did not succeed is looked up in the copy and marked
//! landed or not; then the copy's `__manifest` must hold what the cell started from plus
//! every write that took effect, entry by entry (one scan of its ids, counted by id), the
//! shared table one version per commit that took effect, and every property the value of
//! the last update that did. This module reads the catalogs and tables; the core judges.

use std::collections::BTreeMap;

use bench_core::audit::{self, Ids, TableCounts};
use bench_core::oplog::Op;

use crate::catalog;
use crate::export::record::TableState;

/// The ids of the `__manifest` under `root`, one per row.
pub async fn ids(root: &str, storage: &BTreeMap<String, String>) -> lance_core::Result<Ids> {
    Ok(Ids::of(catalog::object_ids(root, storage).await?))
}

/// The namespace a client opened after a campaign's point creates, to show the catalog
/// still takes writes (`Met::new_client`).
pub const NEW_CLIENT_NAMESPACE: &str = "bench_new_client";

/// How a client opened on the copy at `root` after its run reaches it: as the cell's own.
fn later_client(root: &str, cell: &crate::plan::Cell) -> catalog::CatalogConfig {
    catalog::CatalogConfig {
        root: root.to_string(),
        inline: cell.golden.inline,
        commit_retries: cell.commit_retries,
        storage: cell.storage.clone(),
        properties: cell.properties.clone(),
    }
}

/// A client opened on the copy at `root` after its run creates a namespace: `"ok"`, or
/// lance's error (a campaign's point: whether a new client can still write).
pub async fn new_client_writes(root: &str, cell: &crate::plan::Cell) -> String {
    let cfg = later_client(root, cell);
    let write = async {
        let ns = catalog::open(&cfg).await?;
        let request = lance_namespace::models::CreateNamespaceRequest {
            id: Some(vec![NEW_CLIENT_NAMESPACE.to_string()]),
            ..Default::default()
        };
        lance_namespace::LanceNamespace::create_namespace(&ns, request).await
    };
    match write.await {
        Ok(_) => "ok".to_string(),
        Err(e) => bench_core::redact::without_source_places(&e.to_string()),
    }
}

/// A client opened on the copy at `root` after its run (a campaign's point) lists each
/// namespace the log's creations went to, once: one more client's listings, logged as a
/// worker's would be (its creations seen of this run's `mark`). The history then holds what
/// a later reader finds, so its judges (bench's checker, Elle's, adya) see a write that was
/// acknowledged and is gone as verification sees it. A listing that fails is logged failed.
pub async fn final_reads(root: &str, cell: &crate::plan::Cell, log: &[Op], mark: &str) -> Vec<Op> {
    use crate::plan::{Entry, Names, Operation};
    use bench_core::oplog::{Attempt, ErrorClass, Observed, Outcome, parent, seen};
    let client = log.iter().map(|o| o.client + 1).max().unwrap_or(0);
    let lists: std::collections::BTreeSet<(String, bool)> = (log.iter())
        .filter_map(|o| match o.operation.describe().names {
            Names::Creates(kind, _) => Some((
                parent(o.attempt.entry.as_deref()?).to_string(),
                kind == Entry::Table,
            )),
            _ => None,
        })
        .collect();
    let cfg = later_client(root, cell);
    let mut reads = Vec::new();
    for (i, (namespace, tables)) in lists.into_iter().enumerate() {
        let (start, start_us) = (std::time::Instant::now(), crate::host_clock::monotonic_us());
        let listed = catalog::entries_in(&cfg, tables, &namespace).await;
        let mut attempt = Attempt::new(i as u64, start.elapsed().as_secs_f64() * 1000.0);
        attempt.at_us = Some([start_us, crate::host_clock::monotonic_us()]);
        attempt.entry = Some(namespace);
        // Not the cell's operation.
        attempt.read = true;
        let (outcome, observed) = match listed {
            Ok(names) => {
                let mut once = std::collections::HashSet::new();
                let twice = (names.iter())
                    .filter(|n| !once.insert(*n))
                    .cloned()
                    .collect();
                let seen = seen(&names, mark);
                let pages = Vec::new();
                (
                    Outcome::Ok,
                    Observed::Listed {
                        seen,
                        gone: None,
                        twice,
                        pages,
                    },
                )
            }
            Err(e) => {
                attempt.class = Some(ErrorClass::Other);
                attempt.err = Some(bench_core::redact::without_source_places(&e.to_string()));
                (Outcome::Failed, Observed::Nothing)
            }
        };
        reads.push(Op {
            client,
            role: None,
            operation: match tables {
                true => Operation::ListTables { cold: true },
                false => Operation::ListNamespaces { cold: true },
            },
            attempt,
            outcome,
            observed,
            landed: None,
        });
    }
    reads
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
    /// The copy's chain of versions as it was read, for the run's history.
    pub versions: Option<bench_core::versions::Chain>,
    /// What was asked and could not be checked, and why ([`audit::Verdict::unchecked`]).
    pub unchecked: Option<String>,
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
/// the cell's commits. The core says what to read ([`audit::Asks`]), this reads it all, and
/// the core judges it once ([`audit::verify`]).
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
                error: Some(audit::unreadable(
                    &bench_core::redact::without_source_places(&e.to_string()),
                    latest(root, storage).await,
                    log,
                )),
                table: None,
                chain: None,
                versions: None,
                unchecked: None,
            };
        }
    };
    let asks = audit::Asks::of(log, first);
    let found = read(root, storage, after, &asks, table).await;
    let rows_after = found.after.rows();
    let state = match &found.table {
        Some(Ok(t)) => table.map(|before| TableState {
            rows_per_commit: before.rows_per_commit,
            rows_before: t.before.rows,
            rows_after: t.after.rows,
            version_before: t.before.version,
            version_after: t.after.version,
        }),
        _ => None,
    };
    let versions = match &found.chain {
        Some(Ok(Some(chain))) => Some(chain.clone()),
        _ => None,
    };
    let verdict = audit::verify(log, before, &asks, found);
    Verified {
        versions,
        rows_after,
        error: verdict.error,
        table: state,
        chain: verdict.chain_checked,
        unchecked: verdict.unchecked,
    }
}

/// Verify a run on an external server's namespace (`scope`, under its `rest.parent`)
/// against the run's `log` by what the server lists there, `before` being what it listed
/// when the run began: the entries only (the server's store is not bench's to read: no
/// chain of versions, no transaction files).
pub async fn listed(uri: &str, scope: &str, before: &Ids, log: &mut [Op]) -> Verified {
    let after = match catalog::served::listed_at(uri, scope).await {
        Ok(ids) => ids,
        Err(e) => {
            return Verified {
                rows_after: 0,
                error: Some(format!("cannot list {scope} on the server at {uri}: {e}")),
                table: None,
                chain: None,
                versions: None,
                unchecked: None,
            };
        }
    };
    let asks = audit::Asks::default();
    let found = audit::Found {
        after,
        ..Default::default()
    };
    let rows_after = found.after.rows();
    let verdict = audit::verify(log, before, &asks, found);
    Verified {
        rows_after,
        error: verdict.error,
        table: None,
        chain: verdict.chain_checked,
        versions: None,
        unchecked: verdict.unchecked,
    }
}

/// Everything `asks` asks of the copy at `root`, read (`after`: its `__manifest`'s ids).
async fn read(
    root: &str,
    storage: &BTreeMap<String, String>,
    after: Ids,
    asks: &audit::Asks,
    table: Option<TableBefore>,
) -> audit::Found {
    let mut found = audit::Found {
        after,
        ..Default::default()
    };
    if let Some(before) = table {
        let (shared, dangling) = shared_table(root, storage, before, asks.dangling).await;
        found.table = Some(shared);
        looked(&mut found, dangling);
    }
    if let Some(ask) = asks.chain {
        let budget = ask.bounded.then_some(found.after.rows());
        let read = chain(root, storage, ask.first, budget).await;
        found.chain =
            Some(read.map_err(|e| bench_core::redact::without_source_places(&e.to_string())));
    }
    if asks.dangling {
        let manifest = format!("{root}/{}", catalog::MANIFEST_DIR);
        let dangling = dangling_transactions(&manifest, storage, "__manifest", 0).await;
        looked(&mut found, Some(dangling));
    }
    for (table, keys) in &asks.properties {
        let values = properties(root, storage, table, keys).await;
        found.properties.insert(table.clone(), values);
    }
    found
}

/// What looking for transaction files that are gone gave (`None`: not looked for): a
/// finding, or what could not be checked.
fn looked(found: &mut audit::Found, dangling: Option<Result<Option<String>, String>>) {
    match dangling {
        Some(Ok(gone)) => found.dangling.extend(gone),
        Some(Err(unread)) => found.unchecked.push(unread),
        None => {}
    }
}

/// The latest version of the `__manifest` at `root` (`None` where it cannot be read).
pub async fn latest(root: &str, storage: &BTreeMap<String, String>) -> Option<u64> {
    let uri = format!("{root}/{}", catalog::MANIFEST_DIR);
    Some(catalog::load(&uri, storage).await.ok()?.version().version)
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

/// The versions after `after` of the dataset at `uri` (`what`: `__manifest`, the shared
/// table) whose manifest names a transaction file that is gone: a commit that landed, its
/// transaction file deleted after it — what lance through 10.0.0 did to a commit whose reply
/// was lost (it took the store's error for a failed commit and cleaned up;
/// docs/track-record.md). lance reads a version's transaction from the manifest itself where
/// it is inlined, so nothing else notices: each version is read and its file looked for, 16
/// at a time, in a cell where some write may have landed unanswered ([`audit::Asks::dangling`]).
/// `Err`: the versions could not be read (a store whose HEADs give no length), so nothing was
/// looked for — what could not be checked, not a finding.
async fn dangling_transactions(
    uri: &str,
    storage: &BTreeMap<String, String>,
    what: &str,
    after: u64,
) -> Result<Option<String>, String> {
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
    let gone = found.await.map_err(|e| {
        let e = bench_core::redact::without_source_places(&e.to_string());
        format!(
            "the transaction files of {what} were not looked for: cannot read its versions: {e}"
        )
    })?;
    Ok(gone.first().map(|(first, file)| {
        format!(
            "{} version(s) of {what} name a transaction file that is gone, the first version \
             {first} (_transactions/{file}): a commit that landed and lost its transaction file",
            gone.len()
        )
    }))
}

/// The shared table of the copy at `root` (found through its catalog, which must place it
/// inside the copy) against what it was `before`; and, where `dangling` asks it (inside the
/// copy), its versions' transaction files looked for.
async fn shared_table(
    root: &str,
    storage: &BTreeMap<String, String>,
    before: TableBefore,
    dangling: bool,
) -> (
    Result<audit::SharedTable, String>,
    Option<Result<Option<String>, String>>,
) {
    let (location, now) = match shared_table_now(root, storage).await {
        Ok(x) => x,
        Err(e) => {
            return (
                Err(format!("cannot read the cell's shared table: {e}")),
                None,
            );
        }
    };
    let inside = catalog::table::inside(&location, root);
    let shared = audit::SharedTable {
        before: TableCounts {
            rows: before.rows,
            version: before.version,
        },
        after: TableCounts {
            rows: now.rows,
            version: now.version,
        },
        rows_per_commit: before.rows_per_commit,
        outside: (!inside).then(|| format!("{location}, outside the cell's copy {root}")),
    };
    let what = "the shared table";
    let gone = match dangling && inside {
        true => Some(dangling_transactions(&location, storage, what, before.version).await),
        false => None,
    };
    (Ok(shared), gone)
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

/// The value each of `keys` holds now among the properties of `table` (`""`: the shared
/// table) of the copy at `root`.
async fn properties(
    root: &str,
    storage: &BTreeMap<String, String>,
    table: &str,
    keys: &[String],
) -> Result<BTreeMap<String, Option<String>>, String> {
    let found = match table {
        "" => shared_table_now(root, storage).await.map(|(_, now)| now),
        t => catalog::table::state(&format!("{root}/{t}"), storage).await,
    };
    let found = found.map_err(|e| match table {
        "" => format!("cannot read the cell's shared table: {e}"),
        t => format!("cannot read table {t}: {e}"),
    })?;
    Ok((keys.iter())
        .map(|k| (k.clone(), found.properties.get(k).cloned()))
        .collect())
}
