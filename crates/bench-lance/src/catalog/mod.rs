//! The real catalog: `DirectoryNamespace` in manifest mode, the committed operations the
//! benchmark measures, what class a failed one is, and the `__manifest` schema and row
//! count. [`counting`] counts the requests a worker's namespace makes.

pub mod cleanup;
pub mod counting;
pub mod served;
pub mod table;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow::array::{Int32Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use bench_core::versions::{At, Page};
use bytes::Bytes;
use lance::dataset::builder::DatasetBuilder;
use lance_core::datatypes::LANCE_UNENFORCED_PRIMARY_KEY_POSITION;
use lance_io::object_store::{ObjectStoreParams, StorageOptionsAccessor};
use lance_namespace::LanceNamespace;
use lance_namespace::models::{
    CreateNamespaceRequest, CreateTableRequest, DeclareTableRequest, DeregisterTableRequest,
    DescribeNamespaceRequest, DescribeTableRequest, DropNamespaceRequest, DropTableRequest,
    ListNamespacesRequest, ListTablesRequest, NamespaceExistsRequest, TableExistsRequest,
};
use lance_namespace_impls::{DirectoryNamespace, DirectoryNamespaceBuilder};

use crate::plan::{Entry, Fixture, Names, Operation};
use bench_core::rng::Rng;

/// Name of the catalog's dataset under a namespace root.
pub const MANIFEST_DIR: &str = "__manifest";

/// How a worker or the bootstrap opens the catalog.
#[derive(Debug, Clone)]
pub struct CatalogConfig {
    pub root: String,
    pub inline: bool,
    pub commit_retries: u32,
    pub storage: BTreeMap<String, String>,
    /// The plan's `[namespace]` properties, given as lance reads them.
    pub properties: BTreeMap<String, String>,
}

/// Open `DirectoryNamespace` exactly as the reference does: manifest mode, directory listing
/// off, inline optimisation per variant; plus the plan's commit retry budget.
pub async fn open(cfg: &CatalogConfig) -> lance_core::Result<DirectoryNamespace> {
    builder(cfg)?.build().await
}

/// The builder lance makes from a property map (its own convention, so a candidate build
/// reads its new properties the same way): the plan's `[namespace]` properties, with
/// bench's settings and the storage options over them.
fn builder(cfg: &CatalogConfig) -> lance_core::Result<DirectoryNamespaceBuilder> {
    let mut p = to_hash_map(&cfg.properties);
    for (k, v) in [
        ("root", cfg.root.clone()),
        ("manifest_enabled", "true".into()),
        ("dir_listing_enabled", "false".into()),
        ("inline_optimization_enabled", cfg.inline.to_string()),
        ("commit_retries", cfg.commit_retries.to_string()),
    ] {
        p.insert(k.to_string(), v);
    }
    for (k, v) in &cfg.storage {
        p.insert(format!("storage.{k}"), v.clone());
    }
    DirectoryNamespaceBuilder::from_properties(p, None)
}

/// A client of the REST namespace at `uri` (a cell's server): lance's `RestNamespace`.
pub fn open_rest(uri: &str) -> Arc<dyn LanceNamespace> {
    Arc::new(lance_namespace_impls::RestNamespaceBuilder::new(uri).build())
}

/// Whether the REST namespace at `uri` answers: one listing of the root's namespaces (a
/// page of one), within `within`. The error says what the client saw.
pub async fn probe_rest(uri: &str, within: std::time::Duration) -> Result<(), String> {
    let ns = open_rest(uri);
    let mut req = ListNamespacesRequest::new();
    req.id = Some(vec![]);
    req.limit = Some(1);
    match tokio::time::timeout(within, ns.list_namespaces(req)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(error_chain(&e)),
        Err(_) => Err(format!("no answer within {} s", within.as_secs())),
    }
}

/// An error with its sources, `: `-separated (a refused connection is a source's message).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

/// [`open`], with every request of the namespace counted into `counters` (a session of its
/// own, with fresh caches, as without counting).
pub async fn open_counted(
    cfg: &CatalogConfig,
    counters: &std::sync::Arc<counting::Counters>,
) -> lance_core::Result<DirectoryNamespace> {
    builder(cfg)?
        .session(counting::session(counters))
        .build()
        .await
}

pub fn to_hash_map(storage: &BTreeMap<String, String>) -> HashMap<String, String> {
    storage
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The id of the object the `index`-th commit of `worker` creates (its descriptor's
/// prefix), `names` (a run's own mark on a catalog that runs share, else empty) at its end.
/// Distinct from the golden's ids (`ns_*`, `table_*`) and from every other worker's.
/// `None`: the operation creates no object.
pub fn object_id(op: Operation, worker: u32, index: u64, names: &str) -> Option<String> {
    match op.describe().names {
        Names::Creates(_, prefix) => Some(created(prefix, worker, index, names)),
        Names::ReadsGolden(_)
        | Names::RemovesGolden(_)
        | Names::Lists(_)
        | Names::Property
        | Names::Root => None,
    }
}

fn created(prefix: &str, worker: u32, index: u64, names: &str) -> String {
    format!("{prefix}{worker}_{index}{names}")
}

/// The id of the `k`-th golden entry of a kind (see [`crate::golden::manifest_batch`]).
pub fn golden_id(entry: Entry, k: u64) -> String {
    match entry {
        Entry::Namespace => format!("ns_{k}"),
        Entry::Table => format!("table_{k}"),
    }
}

/// The shared table's property worker `w` writes.
pub fn property_key(worker: u32) -> String {
    format!("bench_w{worker}")
}

/// What one operation names: an entry's id as `__manifest` holds it (`ns_0$table_3`; `""`:
/// the root, or for an operation on a table, the cell's shared table), and the property it
/// sets, where it sets one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Aim {
    pub id: String,
    pub property: Option<(String, String)>,
}

impl Aim {
    pub fn entry(id: String) -> Aim {
        Aim { id, property: None }
    }

    /// The id as lance's requests take it: its parts (none for the root).
    pub fn parts(&self) -> Vec<String> {
        id_parts(&self.id)
    }
}

/// An id's parts (none for the root's `""`).
pub fn id_parts(id: &str) -> Vec<String> {
    match id {
        "" => Vec::new(),
        id => id
            .split(crate::plan::DELIMITER)
            .map(str::to_string)
            .collect(),
    }
}

/// The entries of a cell's golden: a tree's, or a flat golden's.
#[derive(Debug, Clone, Copy)]
pub struct Golden {
    pub tables: u64,
    pub namespaces: u64,
    pub fixture: Option<Fixture>,
}

impl Golden {
    fn count(&self, entry: Entry) -> u64 {
        match entry {
            Entry::Namespace => self.namespaces,
            Entry::Table => self.tables,
        }
    }

    /// The id of the `k`-th entry of a kind.
    pub fn id(&self, entry: Entry, k: u64) -> String {
        match &self.fixture {
            Some(f) => f.id(entry, k),
            None => golden_id(entry, k),
        }
    }

    /// What a listing of entries of a kind may list: in a tree, the namespaces with tables
    /// (or with namespaces) and the `k`-th of them; flat: the root alone.
    fn listed(&self, kind: Entry) -> u64 {
        match (self.fixture, kind) {
            (Some(f), Entry::Table) => f.holders(),
            (Some(f), Entry::Namespace) => f.parents(),
            (None, _) => 1,
        }
    }

    fn listed_id(&self, kind: Entry, k: u64) -> String {
        match (self.fixture, kind) {
            (Some(f), Entry::Table) => f.holder_id(k),
            (Some(f), Entry::Namespace) => f.parent_id(k),
            (None, _) => String::new(),
        }
    }

    /// Where a created entry of a kind goes: in a tree, a namespace (`k`-th of those that
    /// may hold it: any for a namespace, those with tables for a table); flat: the root.
    fn parents_of(&self, kind: Entry) -> u64 {
        match (self.fixture, kind) {
            (Some(f), Entry::Namespace) => f.namespaces(),
            (Some(f), Entry::Table) => f.holders(),
            (None, _) => 1,
        }
    }

    fn parent_id(&self, kind: Entry, k: u64) -> String {
        match (self.fixture, kind) {
            (Some(f), Entry::Namespace) => f.namespace_id(k),
            (Some(f), Entry::Table) => f.holder_id(k),
            (None, _) => String::new(),
        }
    }

    /// The `n`-th removal (counted over all removers) of a kind: the last entry first, so
    /// that a hot set (the first entries) is removed last; an error past the last.
    fn removed(&self, op: Operation, entry: Entry, n: u64) -> Result<String, String> {
        let count = self.count(entry);
        match n < count {
            true => Ok(self.id(entry, count - 1 - n)),
            false => Err(out_of(op, entry, count)),
        }
    }
}

fn out_of(op: Operation, entry: Entry, count: u64) -> String {
    let kind = match entry {
        Entry::Namespace => "namespaces",
        Entry::Table => "tables",
    };
    format!(
        "{op}: its share of the golden's {count} {kind} is removed; give the golden more \
         entries (matrix.sizes or [fixture]) or the cell fewer operations"
    )
}

/// An id in `parent` (the root's, without one).
fn child(parent: &str, name: String) -> String {
    match parent {
        "" => name,
        p => format!("{p}{}{name}", crate::plan::DELIMITER),
    }
}

/// What a worker's operations name: its place among the cell's workers and the golden's
/// entries.
#[derive(Debug, Clone, Copy)]
pub struct Targets {
    pub worker: u32,
    pub writers: u32,
    pub golden: Golden,
    /// Warm-up operations before the measured ones (removals take theirs first).
    pub warmup: u64,
}

impl Targets {
    /// The entry the `index`-th operation of `op` (of the warm-up, if `warm`) names: the
    /// object it creates, the golden entry it reads or removes, the namespace it lists, or
    /// the shared table. An error where the worker has removed every golden entry of its
    /// share.
    pub fn of(&self, op: Operation, index: u64, warm: bool, names: &str) -> Result<Aim, String> {
        let w = self.worker;
        let g = &self.golden;
        // Reads spread over the entries as the reference spreads them.
        let spread = |n: u64| (u64::from(w) * 1_000_000 + index) % n.max(1);
        Ok(match op.describe().names {
            Names::Creates(_, prefix) => {
                let warm = if warm {
                    bench_core::consistency::WARM_SUFFIX
                } else {
                    ""
                };
                Aim::entry(format!("{}{warm}", created(prefix, w, index, names)))
            }
            Names::ReadsGolden(entry) => Aim::entry(g.id(entry, spread(g.count(entry)))),
            Names::RemovesGolden(entry) => {
                let nth = if warm { index } else { self.warmup + index };
                let writers = u64::from(self.writers.max(1));
                let k = nth * writers + u64::from(w) % writers;
                if k >= g.count(entry) {
                    return Err(format!(
                        "{} (every {writers}th, from the {w}th)",
                        out_of(op, entry, g.count(entry))
                    ));
                }
                Aim::entry(g.id(entry, k))
            }
            // Its warm-up writes `warm<index>`, which the measured ones overwrite.
            Names::Property => {
                let value = if warm {
                    format!("warm{index}")
                } else {
                    index.to_string()
                };
                Aim {
                    id: String::new(),
                    property: Some((property_key(w), value)),
                }
            }
            Names::Lists(kind) => Aim::entry(g.listed_id(kind, spread(g.listed(kind)))),
            Names::Root => Aim::default(),
        })
    }
}

/// What a client of a role names: entries drawn by its role's distribution (each kind's
/// hottest the first), a share of the removals of its own.
pub struct RoleTargets {
    pub worker: u32,
    /// Its place among the cell's clients that remove entries, and how many they are (they
    /// share the golden's entries: the `n`-th removal of remover `r` of `R` takes the
    /// `n × R + r`-th from the last).
    pub remover: (u32, u32),
    pub golden: Golden,
    pub names: String,
    /// Pickers over the tables, namespaces, listed namespaces and parents of creations, by
    /// operation.
    pickers: std::collections::HashMap<(u8, u64), crate::plan::Picker>,
    distribution: crate::plan::Distribution,
    /// Removals this client has made of each kind of entry (namespaces, tables: each kind's
    /// share its own), and creations (a creation's name carries its index).
    removals: [u64; 2],
    creations: u64,
    /// The golden's tables by namespace, (name, id), once a listing asks.
    tables_by_parent: Option<std::collections::HashMap<String, Vec<(String, String)>>>,
}

impl RoleTargets {
    pub fn new(
        worker: u32,
        remover: (u32, u32),
        golden: Golden,
        names: String,
        d: crate::plan::Distribution,
    ) -> RoleTargets {
        RoleTargets {
            worker,
            remover,
            golden,
            names,
            pickers: Default::default(),
            distribution: d,
            removals: [0; 2],
            creations: 0,
            tables_by_parent: None,
        }
    }

    /// In a cell whose clients remove entries: the golden's tables in `namespace` that a
    /// listing of its `names` did not show (ids), for the consistency checker.
    pub fn gone(&mut self, namespace: &str, names: &[String]) -> Option<Vec<String>> {
        if self.remover.1 == 0 {
            return None;
        }
        let g = self.golden;
        let by = self.tables_by_parent.get_or_insert_with(|| {
            let mut by: std::collections::HashMap<String, Vec<(String, String)>> =
                Default::default();
            for id in (0..g.tables).map(|k| g.id(Entry::Table, k)) {
                let (parent, name) = id.rsplit_once('$').unwrap_or(("", &id));
                (by.entry(parent.to_string()).or_default()).push((name.to_string(), id.clone()));
            }
            by
        });
        let listed: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
        let tables = by.get(namespace).map_or(&[][..], Vec::as_slice);
        Some(
            (tables.iter())
                .filter(|(name, _)| !listed.contains(name.as_str()))
                .map(|(_, id)| id.clone())
                .collect(),
        )
    }

    /// An entry among `n` of a sort (`which`), drawn.
    fn draw(&mut self, which: u8, n: u64, rng: &mut Rng) -> u64 {
        let d = self.distribution;
        (self.pickers)
            .entry((which, n))
            .or_insert_with(|| crate::plan::Picker::new(d, n))
            .pick(rng)
    }

    /// What the client's `k`-th operation, of `op`, names.
    pub fn of(&mut self, op: Operation, k: u64, rng: &mut Rng) -> Result<Aim, String> {
        let g = self.golden;
        let w = self.worker;
        Ok(match op.describe().names {
            Names::Creates(kind, prefix) => {
                let parent = g.parent_id(kind, self.draw(0, g.parents_of(kind), rng));
                self.creations += 1;
                let name = created(prefix, w, self.creations - 1, &self.names);
                Aim::entry(child(&parent, name))
            }
            Names::ReadsGolden(entry) => {
                let n = g.count(entry);
                Aim::entry(g.id(entry, self.draw(1 + entry as u8, n, rng)))
            }
            Names::RemovesGolden(entry) => {
                let (r, of) = self.remover;
                let done = &mut self.removals[usize::from(entry == Entry::Table)];
                let n = *done * u64::from(of.max(1)) + u64::from(r);
                *done += 1;
                Aim::entry(g.removed(op, entry, n)?)
            }
            Names::Lists(kind) => Aim::entry(g.listed_id(kind, self.draw(3, g.listed(kind), rng))),
            Names::Property => Aim {
                id: g.id(
                    Entry::Table,
                    self.draw(1 + Entry::Table as u8, g.tables, rng),
                ),
                property: Some((property_key(w), k.to_string())),
            },
            Names::Root => Aim::default(),
        })
    }
}

/// Whether an error is one of lance's own commit conflicts past its retry budget (a
/// namespace's errors are classed by [`namespace_class`]).
fn is_conflict(e: &lance_core::Error) -> bool {
    use lance_core::Error;
    matches!(
        e,
        Error::CommitConflict { .. }
            | Error::RetryableCommitConflict { .. }
            | Error::TooMuchWriteContention { .. }
            | Error::IncompatibleTransaction { .. }
    )
}

pub use bench_core::protocol::ErrorClass;

/// What class of failure `e` is.
pub fn error_class(e: &lance_core::Error) -> ErrorClass {
    if let Some(class) = namespace_class(e) {
        return class;
    }
    if is_conflict(e) {
        return ErrorClass::Conflict;
    }
    use crate::failure::Fault;
    match crate::failure::classify(e) {
        Fault::Throttled => ErrorClass::Throttled,
        Fault::Network | Fault::Unreachable => ErrorClass::Network,
        Fault::Denied | Fault::NoCredentials => ErrorClass::Refused,
        Fault::NotFound | Fault::Other => ErrorClass::Other,
    }
}

/// Lance's texts of a commit conflict, as they cross a REST server inside an `Internal`
/// error (the adapter answers 500 to a lance error that is not the namespace's own).
const CONFLICT_TEXTS: [&str; 4] = [
    "Commit conflict for version",
    "Retryable commit conflict",
    "Too many concurrent writ",
    "Incompatible transaction",
];

/// The class of a namespace error, as the namespace says it or as a REST client gets it
/// back from the status its server answered: 409 (concurrent modification) and a
/// namespace's own "too many concurrent writes" (429 through REST) are conflicts; any other
/// 429 (a store or server that throttles) is throttled; 503 and a connection that failed
/// are network errors; a request that timed out is a timeout. `None`: not a namespace
/// error, or one these do not cover.
fn namespace_class(e: &lance_core::Error) -> Option<ErrorClass> {
    use lance_namespace::NamespaceError as N;
    let lance_core::Error::Namespace { source, .. } = e else {
        return None;
    };
    let conflict = |m: &str| CONFLICT_TEXTS.iter().any(|t| m.contains(t));
    let Some(ns_error) = source.downcast_ref::<N>() else {
        // A lance error the namespace wrapped in its own words (e.g. "Failed to update
        // schema metadata …: Incompatible transaction …").
        return conflict(&source.to_string()).then_some(ErrorClass::Conflict);
    };
    match ns_error {
        N::ConcurrentModification { .. } => Some(ErrorClass::Conflict),
        N::TableNotFound { .. } | N::NamespaceNotFound { .. } => Some(ErrorClass::NotFound),
        N::Throttling { message } if conflict(message) => Some(ErrorClass::Conflict),
        N::Throttling { .. } => Some(ErrorClass::Throttled),
        N::ServiceUnavailable { message } if timed_out(message) => Some(ErrorClass::Timeout),
        N::ServiceUnavailable { .. } => Some(ErrorClass::Network),
        N::Internal { message } if conflict(message) => Some(ErrorClass::Conflict),
        _ => None,
    }
}

/// Whether a REST client's message says its request timed out (reqwest's wording).
fn timed_out(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    ["timed out", "timedout", "timeout"]
        .iter()
        .any(|t| m.contains(t))
}

/// What operations take besides the entry they name.
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    /// The table `write-create-table` creates, as Arrow IPC.
    pub table_data: &'a Bytes,
    /// The shared table (a worker of a cell of table operations has one).
    pub table: Option<&'a table::TableIo>,
    /// Listings: entries a page (lance's `limit`), every page; `None`: one request.
    pub page_size: Option<u32>,
    /// Cleanups: the catalog's store and what they keep (a maintenance role's client has it).
    pub maintenance: Option<&'a cleanup::Maintenance>,
    /// The namespace every id is under, as a request names it (a run's own under an
    /// external server's `rest.parent`; empty: the root).
    pub scope: &'a str,
}

impl<'a> Inputs<'a> {
    /// For catalog operations without pages: `table_data` only.
    pub fn catalog(table_data: &'a Bytes) -> Inputs<'a> {
        Inputs {
            table_data,
            table: None,
            page_size: None,
            maintenance: None,
            scope: "",
        }
    }
}

/// Every page of a listing: `list` of a page token (lance's "start after") and a limit
/// gives the page's names and the next token, if there are more pages; without a page size,
/// one request unless the server pages on its own. Returns every name listed; a token
/// that comes back is an error, not a loop.
pub async fn every_page<F, Fut>(
    page_size: Option<u32>,
    mut list: F,
) -> lance_core::Result<Vec<String>>
where
    F: FnMut(Option<String>, Option<i32>) -> Fut,
    Fut: std::future::Future<Output = lance_core::Result<(Vec<String>, Option<String>)>>,
{
    let limit = page_size.map(|n| i32::try_from(n).unwrap_or(i32::MAX));
    let mut token = None;
    let mut names = Vec::new();
    // A token given before would list those pages again, and the listing never end.
    let mut given = std::collections::HashSet::new();
    loop {
        let (page, next) = list(token.take(), limit).await?;
        match names.is_empty() {
            true => names = page,
            false => names.extend(page),
        }
        // A server that pages on its own (SeaweedFS: 1,000 entries) gives a token without
        // being asked for a limit: the listing goes on, or it would miss the rest.
        match next.filter(|t| !t.is_empty()) {
            Some(t) if !given.insert(t.clone()) => {
                return Err(lance_core::Error::invalid_input(format!(
                    "the listing's page token `{t}` came back after {}: the catalog does not \
                     advance its pages (a listing in pages of {} would never end)",
                    crate::plan::count(given.len() as u64, "page", "pages"),
                    page_size.unwrap_or_default()
                )));
            }
            Some(t) => token = Some(t),
            None => return Ok(names),
        }
    }
}

/// What `bench serve` said of this worker's calls since [`heard`] was last asked: the
/// version each made or served (a worker runs one operation at a time).
static HEARD: std::sync::Mutex<Option<bench_core::versions::At>> = std::sync::Mutex::new(None);

/// What a response's context says of the version its call made or served.
fn said(context: &Option<std::collections::HashMap<String, String>>) -> Option<At> {
    let said = (context.as_ref()).and_then(|c| c.get(bench_core::versions::CONTEXT_KEY));
    said.and_then(|s| At::heard(s))
}

/// Keep what a response's context says of the version its call made or served.
/// A response's context: what `bench serve` says in it (none before lance 11, whose
/// responses had no context).
trait Told {
    fn told(&self) -> &Option<std::collections::HashMap<String, String>>;
}

macro_rules! told {
    ($($t:ty),* $(,)?) => {$(
        impl Told for $t {
            #[cfg(lance_response_context)]
            fn told(&self) -> &Option<std::collections::HashMap<String, String>> {
                &self.context
            }
            #[cfg(not(lance_response_context))]
            fn told(&self) -> &Option<std::collections::HashMap<String, String>> {
                static NONE: Option<std::collections::HashMap<String, String>> = None;
                &NONE
            }
        }
    )*};
}

told!(
    lance_namespace::models::ListTablesResponse,
    lance_namespace::models::ListNamespacesResponse,
    lance_namespace::models::DescribeTableResponse,
    lance_namespace::models::DescribeNamespaceResponse,
    lance_namespace::models::DropTableResponse,
    lance_namespace::models::DeregisterTableResponse,
    lance_namespace::models::DropNamespaceResponse,
    lance_namespace::models::CreateNamespaceResponse,
    lance_namespace::models::CreateTableResponse,
    lance_namespace::models::DeclareTableResponse,
);

fn hear(context: &Option<std::collections::HashMap<String, String>>) {
    let Some(at) = said(context) else {
        return;
    };
    let mut heard = HEARD.lock().unwrap_or_else(|e| e.into_inner());
    *heard = Some(heard.map_or(at, |h| h.and(at)));
}

/// One page of a listing as it arrived: where another page follows, its token (lance's: the
/// last name it listed, after which the next page lists), when it arrived, and what `bench
/// serve` said of it.
#[derive(Debug)]
pub struct Turned {
    pub through: Option<String>,
    pub at: std::time::Instant,
    pub heard: Option<At>,
}

/// The pages of the listing in pages since [`pages`] was last asked.
static PAGES: std::sync::Mutex<Vec<Turned>> = std::sync::Mutex::new(Vec::new());

/// A page of a listing has arrived, with the token of the next page (none: the last): in
/// lance's catalog the page's last name, after which the next page lists (kept as it is: it
/// runs inside the listing's measured time).
fn turn_page(next: &Option<String>, context: &Option<std::collections::HashMap<String, String>>) {
    let through = next.clone().filter(|t| !t.is_empty());
    PAGES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Turned {
            through,
            at: std::time::Instant::now(),
            heard: said(context),
        });
}

/// The pages of the listing the operation that made `requests` ran, forgotten here, each
/// placed in the `__manifest` version order by its own requests (those that ended after the
/// page before arrived, before it did) or, through REST (`rest`), by what the server said of
/// it; `None` where the operation listed no more than one page.
pub fn pages(requests: &[counting::Timed], rest: bool) -> Option<Vec<Page>> {
    let turned = std::mem::take(&mut *PAGES.lock().unwrap_or_else(|e| e.into_inner()));
    if turned.len() < 2 {
        return None;
    }
    let mut after: Option<std::time::Instant> = None;
    let mut pages: Vec<Page> = (turned.into_iter())
        .map(|t| {
            let touches: Vec<_> = (requests.iter())
                .filter(|r| r.end <= t.at && after.is_none_or(|a| r.end > a))
                .filter_map(|r| r.manifest)
                .collect();
            let at = At::of(&touches, false);
            after = Some(t.at);
            Page {
                through: t.through,
                at: at.or(t.heard.filter(|_| rest)),
            }
        })
        .collect();
    Page::settle(&mut pages);
    Some(pages)
}

/// This worker's id, and how many calls it has named ([`named_call`]).
static CALLER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The worker whose calls these are.
pub fn set_caller(worker: u32) {
    CALLER.store(u64::from(worker), std::sync::atomic::Ordering::Relaxed);
}

/// A request's context naming its call (`CLIENT:CALL`), so that a server can account for it
/// after the cell where its response has no body to say the version in
/// ([`bench_core::fold::join`]); the call's number is kept as what was heard of it.
fn named_call() -> Option<std::collections::HashMap<String, String>> {
    use std::sync::atomic::Ordering::Relaxed;
    let call = CALLS.fetch_add(1, Relaxed) + 1;
    let mut heard = HEARD.lock().unwrap_or_else(|e| e.into_inner());
    let at = heard.get_or_insert_with(Default::default);
    at.call = Some(call);
    let name = format!("{}:{call}", CALLER.load(Relaxed));
    Some([(bench_core::versions::CALL_KEY.to_string(), name)].into())
}

/// What `bench serve` said of the calls since the last time, forgotten here: through REST,
/// an operation's place in the `__manifest` version order.
pub fn heard() -> Option<bench_core::versions::At> {
    HEARD.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// What a client opened on the catalog at `cfg.root` lists directly in the namespace
/// `parent` (`""`: the root): its child namespaces, or its tables (`tables`), every page, as
/// a worker's listing names them.
pub async fn entries_in(
    cfg: &CatalogConfig,
    tables: bool,
    parent: &str,
) -> lance_core::Result<Vec<String>> {
    let ns: Arc<dyn LanceNamespace> = Arc::new(open(cfg).await?);
    let names = list(&ns, tables, id_parts(parent), None).await?;
    Ok(match tables {
        true => names.into_iter().map(last_part).collect(),
        false => names,
    })
}

/// Every page of a namespace's child namespaces, or of its tables (`tables`): their names.
async fn list(
    ns: &Arc<dyn LanceNamespace>,
    tables: bool,
    parent: Vec<String>,
    page_size: Option<u32>,
) -> lance_core::Result<Vec<String>> {
    // The pages of this listing only (where no one asks for them, they go with the next).
    PAGES.lock().unwrap_or_else(|e| e.into_inner()).clear();
    every_page(page_size, |page_token, limit| {
        let (ns, id) = (ns.clone(), Some(parent.clone()));
        async move {
            Ok(match tables {
                true => {
                    let req = ListTablesRequest {
                        id,
                        page_token,
                        limit,
                        ..Default::default()
                    };
                    let r = ns.list_tables(req).await?;
                    hear(r.told());
                    turn_page(&r.page_token, r.told());
                    (r.tables, r.page_token)
                }
                false => {
                    let req = ListNamespacesRequest {
                        id,
                        page_token,
                        limit,
                        ..Default::default()
                    };
                    let r = ns.list_namespaces(req).await?;
                    hear(r.told());
                    turn_page(&r.page_token, r.told());
                    (r.namespaces, r.page_token)
                }
            })
        }
    })
    .await
}

/// What an operation showed, as lance answered it: the names a listing listed, the shared
/// table's version an append committed or a version read returned, what a cleanup removed.
/// The worker makes the log's `oplog::Observed` of it (the names against what the cell's
/// writers create).
#[derive(Debug, Default)]
pub enum Shown {
    #[default]
    Nothing,
    Names(Vec<String>),
    Version(u64),
    Cleaned(bench_core::oplog::Cleaned),
}

// How [`execute`] asks: the request of an operation on one entry (its id, the rest as
// lance defaults it); a look-up's, its call named ([`named_call`]); and a call whose
// response's context may say the version it made or served ([`hear`]).
macro_rules! on {
    ($request:ident, $id:expr) => {
        $request {
            id: Some($id),
            ..Default::default()
        }
    };
}
macro_rules! named {
    ($request:ident, $id:expr) => {
        $request {
            context: named_call(),
            ..on!($request, $id)
        }
    };
}
macro_rules! heard {
    ($call:expr) => {
        hear($call.await?.told())
    };
}

/// Run one operation on the entry `aim` names ([`Targets::of`], [`RoleTargets::of`]), and
/// what it showed.
pub async fn execute(
    ns: Arc<dyn LanceNamespace>,
    op: Operation,
    aim: Aim,
    inputs: &Inputs<'_>,
) -> lance_core::Result<Shown> {
    let Inputs {
        table_data,
        table,
        page_size,
        maintenance,
        scope,
    } = *inputs;
    let id = [id_parts(scope), aim.parts()].concat();
    let shared = || {
        table.ok_or_else(|| {
            lance_core::Error::invalid_input(format!(
                "{op} works on the shared table, which this worker was not given"
            ))
        })
    };
    match op {
        Operation::ListNamespaces { .. } => {
            return Ok(Shown::Names(list(&ns, false, id, page_size).await?));
        }
        Operation::ListTables { .. } => {
            let names = list(&ns, true, id, page_size).await?;
            return Ok(Shown::Names(names.into_iter().map(last_part).collect()));
        }
        // A read names its call, for the server's account of it where its answer cannot say
        // the version (a look-up's has no body; one loaded unseen is told later).
        Operation::DescribeTable { .. } => {
            heard!(ns.describe_table(named!(DescribeTableRequest, id)))
        }
        Operation::DescribeNamespace { .. } => {
            heard!(ns.describe_namespace(named!(DescribeNamespaceRequest, id)))
        }
        Operation::NamespaceExists { .. } => {
            ns.namespace_exists(named!(NamespaceExistsRequest, id))
                .await?
        }
        Operation::TableExists { .. } => ns.table_exists(named!(TableExistsRequest, id)).await?,
        Operation::DropTable => heard!(ns.drop_table(on!(DropTableRequest, id))),
        Operation::DeregisterTable => heard!(ns.deregister_table(on!(DeregisterTableRequest, id))),
        Operation::DropNamespace => heard!(ns.drop_namespace(on!(DropNamespaceRequest, id))),
        Operation::CreateNamespace => heard!(ns.create_namespace(on!(CreateNamespaceRequest, id))),
        Operation::CreateTable => {
            heard!(ns.create_table(on!(CreateTableRequest, id), table_data.clone()))
        }
        Operation::DeclareTable => heard!(ns.declare_table(on!(DeclareTableRequest, id))),
        // With the namespace managing the versions, the append commits through its
        // create_table_version.
        Operation::TableAppend | Operation::CreateTableVersion => {
            return Ok(Shown::Version(table::append(ns, shared()?).await?));
        }
        Operation::InsertIntoTable => {
            let v = table::insert_into(ns, shared()?).await?;
            return Ok(v.map_or(Shown::Nothing, Shown::Version));
        }
        // A table of the golden's tree, or the shared table.
        Operation::UpdateTableMetadata => {
            let table = match id.is_empty() {
                true => shared().map(|_| table::id())?,
                false => Some(id),
            };
            let (key, value) = aim.property.unwrap_or_default();
            table::update_metadata(ns, table, key, value).await?
        }
        Operation::ListTableVersions { .. } => {
            let v = table::latest_version(ns).await?;
            return Ok(v.map_or(Shown::Nothing, Shown::Version));
        }
        Operation::DescribeTableVersion { .. } => {
            return Ok(Shown::Version(table::describe_version(ns).await?));
        }
        Operation::CleanupVersions => {
            return Ok(Shown::Cleaned(cleanup::run(maintenance).await?));
        }
    }
    Ok(Shown::Nothing)
}

/// A listed table's name: the spec of the Lance Namespace has each listed table as its full
/// identifier (SeaweedFS's server answers so), lance's directory catalog its name; a listing
/// of one namespace's tables is held to the names, so the last part is taken.
fn last_part(listed: String) -> String {
    match listed.rsplit_once(crate::plan::DELIMITER) {
        Some((_, name)) => name.to_string(),
        None => listed,
    }
}

/// The schema of the tables bench writes: `write-create-table`'s and the shared table's.
pub fn table_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("name", DataType::Utf8, false),
    ]))
}

/// The table `write-create-table` creates: three rows as Arrow IPC, as the reference sends.
pub fn table_ipc() -> Bytes {
    ipc(&table_batch())
}

/// Its three rows.
pub fn table_batch() -> RecordBatch {
    RecordBatch::try_new(
        table_schema(),
        vec![
            Arc::new(Int32Array::from(vec![1, 2, 3])),
            Arc::new(StringArray::from(vec!["a", "b", "c"])),
        ],
    )
    .expect("static batch matches its schema")
}

/// A batch as Arrow IPC, as a REST client sends it.
pub fn ipc(batch: &RecordBatch) -> Bytes {
    let mut buf = Vec::new();
    let mut writer =
        arrow_ipc::writer::StreamWriter::try_new(&mut buf, &batch.schema()).expect("ipc writer");
    writer.write(batch).expect("ipc write to memory");
    writer.finish().expect("ipc finish");
    drop(writer);
    Bytes::from(buf)
}

/// The object-store parameters of a plan's storage options, as lance takes them.
pub fn store_params(storage: &BTreeMap<String, String>) -> ObjectStoreParams {
    ObjectStoreParams {
        storage_options_accessor: Some(Arc::new(StorageOptionsAccessor::with_static_options(
            to_hash_map(storage),
        ))),
        ..Default::default()
    }
}

/// The latest version of the dataset at `uri`.
pub async fn load(
    uri: &str,
    storage: &BTreeMap<String, String>,
) -> lance_core::Result<lance::Dataset> {
    DatasetBuilder::from_uri(uri)
        .with_storage_options(to_hash_map(storage))
        .load()
        .await
}

/// The `__manifest` schema of the 14.0.2 directory catalog.
pub fn manifest_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("object_id", DataType::Utf8, false).with_metadata(
            [(
                LANCE_UNENFORCED_PRIMARY_KEY_POSITION.to_string(),
                "0".to_string(),
            )]
            .into(),
        ),
        Field::new("object_type", DataType::Utf8, false),
        Field::new("location", DataType::Utf8, true),
        Field::new("metadata", DataType::Utf8, true),
        Field::new(
            "base_objects",
            DataType::List(Arc::new(Field::new("object_id", DataType::Utf8, true))),
            true,
        ),
    ]))
}

/// Rows in the `__manifest` dataset under a namespace root (latest version).
pub async fn manifest_rows(
    root_uri: &str,
    storage: &BTreeMap<String, String>,
) -> lance_core::Result<u64> {
    let ds = load(&format!("{root_uri}/{MANIFEST_DIR}"), storage).await?;
    Ok(ds.count_rows(None).await? as u64)
}

/// Every `object_id` in the manifest under a namespace root (latest version), one per row:
/// what verification counts by id.
pub async fn object_ids(
    root_uri: &str,
    storage: &BTreeMap<String, String>,
) -> lance_core::Result<Vec<String>> {
    let ds = load(&format!("{root_uri}/{MANIFEST_DIR}"), storage).await?;
    ids_of(&ds).await
}

/// The object ids of `ds`'s rows (a `__manifest` at some version), one per row.
pub async fn ids_of(ds: &lance::Dataset) -> lance_core::Result<Vec<String>> {
    let batch = ds.scan().project(&["object_id"])?.try_into_batch().await?;
    let ids = batch
        .column(0)
        .as_any()
        .downcast_ref::<StringArray>()
        .map(|a| a.iter().flatten().map(str::to_string).collect())
        .unwrap_or_default();
    Ok(ids)
}
