//! `bench serve` (hidden): one REST server of a rest cell. It opens the cell's copy as a
//! worker would (`DirectoryNamespace`, its requests counted), serves it with lance's REST
//! adapter on a free port, and times every call the adapter makes of it. It speaks JSON
//! lines on stdout and reads commands on stdin (the core's `serve` module); stdin closing
//! (the coordinator done, or gone) stops it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use bytes::Bytes;
use lance_core::Result;
use lance_namespace::LanceNamespace;
use lance_namespace::models::*;
use lance_namespace_impls::{RestAdapter, RestAdapterConfig};
use tokio::io::AsyncBufReadExt;

use crate::catalog::counting::{CALL, Counters, Held, Touched, Unsettled};
use bench_core::serve::{Call, REPORT, START, ServeArgs, Served, ServerLine, ServerReport};
use bench_core::stats::IoCounts;
use bench_core::versions::Told;

/// Test hook: a server exits (code 3) after serving this many calls, as if it crashed.
pub const SERVER_EXIT_AFTER_ENV: &str = "BENCH_SERVER_EXIT_AFTER";

/// The backend with every call timed: what the adapter serves.
#[derive(Debug)]
struct Timed {
    inner: Arc<dyn LanceNamespace>,
    epoch: Instant,
    /// What it served since the window began, as running sums.
    calls: Mutex<Served>,
    failed: AtomicU64,
    /// Calls served in the process's life, and [`SERVER_EXIT_AFTER_ENV`].
    served: AtomicU64,
    exit_after: Option<u64>,
    /// [`CACHE_ENV`]: listings of tables answered from a view at most this old, each
    /// request's own (its namespace, page and limit), refreshed when older. Held across a
    /// refresh, so views are fetched one after another and never go back.
    cache: Option<(
        std::time::Duration,
        tokio::sync::Mutex<std::collections::HashMap<String, Cached>>,
    )>,
    /// [`PATCH_OWN_ENV`]: the tables this server declared, created or dropped, each with
    /// when it was acknowledged, patched into the cached views (`None`: no patching).
    own: Option<Mutex<Vec<Own>>>,
    /// [`ACK_EARLY_ENV`]: how long before its commit every second declaration is
    /// acknowledged, the declarations so far, and the commits still to land.
    ack_early: Option<AckEarly>,
    /// [`RANDOM_VIEW_ENV`]: how many views of each listing are kept, the views, and the
    /// state of the draw among them.
    recent: Option<Recent>,
    /// What its calls touched of `__manifest`'s versions, and whether its catalog is on local
    /// disk (where lance loads a version it finds without a request naming it).
    held: Arc<Held>,
    local: bool,
    /// What it served on calls that named themselves (a look-up answered without a body),
    /// since the window began: told when it reports.
    told: Mutex<Vec<Told>>,
    /// This server's tickets' high bits, drawn as it starts (a ticket is them and the
    /// call's place among the server's calls), so that servers' tickets differ.
    tickets: u64,
}

/// The call a request names for the server's account of it (`CLIENT:CALL` in its context):
/// a read's, whose answer has no body to say the version in (a look-up) or may not know it
/// yet (a version loaded unseen).
fn caller(request: &dyn std::any::Any) -> Option<(u32, u64)> {
    // Those sent with a body: a listing's request has none, and its context stays home.
    macro_rules! context {
        ($($t:ty),*) => {
            None $(.or_else(|| request.downcast_ref::<$t>().map(|r| r.context.as_ref())))*
        };
    }
    let context = context!(
        TableExistsRequest,
        NamespaceExistsRequest,
        DescribeTableRequest,
        DescribeNamespaceRequest
    )?;
    let (client, call) = context?
        .get(bench_core::versions::CALL_KEY)?
        .split_once(':')?;
    Some((client.parse().ok()?, call.parse().ok()?))
}

/// A response that can carry the version its call made or served in its context
/// ([`bench_core::versions::CONTEXT_KEY`]); those without one (`()`, counts, bytes) say
/// nothing.
trait Placed {
    fn place(&mut self, _said: String) {}
}

macro_rules! placed {
    ($($t:ty),* $(,)?) => {$(
        // Before lance 11 a response has no context: nothing is said in it.
        #[cfg(lance_response_context)]
        impl Placed for $t {
            fn place(&mut self, said: String) {
                let context = self.context.get_or_insert_with(Default::default);
                context.insert(bench_core::versions::CONTEXT_KEY.to_string(), said);
            }
        }
        #[cfg(not(lance_response_context))]
        impl Placed for $t {}
    )*};
}

placed!(
    ListNamespacesResponse,
    DescribeNamespaceResponse,
    CreateNamespaceResponse,
    DropNamespaceResponse,
    ListTablesResponse,
    DescribeTableResponse,
    RegisterTableResponse,
    DropTableResponse,
    DeregisterTableResponse,
    CreateTableResponse,
    DeclareTableResponse,
);
impl Placed for () {}
impl Placed for i64 {}
impl Placed for Bytes {}
impl Placed for InsertIntoTableResponse {}
impl Placed for MergeInsertIntoTableResponse {}
impl Placed for UpdateTableResponse {}
impl Placed for DeleteFromTableResponse {}
impl Placed for RestoreTableResponse {}
impl Placed for RenameTableResponse {}
impl Placed for ListTableVersionsResponse {}
impl Placed for CreateTableVersionResponse {}
impl Placed for DescribeTableVersionResponse {}
impl Placed for BatchDeleteTableVersionsResponse {}
#[cfg(lance_batch_commits)]
impl Placed for BatchCreateTableVersionsResponse {}
#[cfg(lance_batch_commits)]
impl Placed for BatchCommitTablesResponse {}
impl Placed for GetTableStatsResponse {}
impl Placed for DescribeTransactionResponse {}
impl Placed for UpdateTableSchemaMetadataResponse {}

/// [`RANDOM_VIEW_ENV`]'s count, and each listing's latest views with the draw among them.
type Recent = (
    usize,
    Mutex<(
        std::collections::HashMap<String, std::collections::VecDeque<ListTablesResponse>>,
        bench_core::rng::Rng,
    )>,
);

/// Test fixture: a server fetches every listing of tables anew, keeps the last this many
/// views of it, and answers from one of them drawn at random, so that a reader's listings
/// go back to views older than ones it saw. Off unless set; never for a measurement.
pub const RANDOM_VIEW_ENV: &str = "BENCH_SERVE_RANDOM_VIEW";

/// [`ACK_EARLY_ENV`]'s delay, declarations so far, and commits still to land.
type AckEarly = (
    std::time::Duration,
    AtomicU64,
    Mutex<Vec<tokio::task::JoinHandle<()>>>,
);

/// A table this server declared, created (`true`) or dropped, in namespace `ns` (its id
/// joined by `$`), acknowledged at `at`.
#[derive(Debug)]
struct Own {
    at: Instant,
    ns: String,
    name: String,
    created: bool,
}

/// Test fixture: with the planted cache's view (refreshed every this many ms), a server
/// answers listings of tables with its own declarations, creations and drops since the view
/// was stamped patched into it — a state no version of the catalog held where another server
/// committed meanwhile (a mixed snapshot; over two servers, each with a writer and a reader, a
/// long fork). Off unless set; never for a measurement.
pub const PATCH_OWN_ENV: &str = "BENCH_SERVE_PATCH_OWN_MS";

/// Test fixture: a server acknowledges every second declaration of a table at once and
/// commits it this many ms later, so that the client's next commit, begun after that
/// acknowledgement, lands first with the lower version. Before it reports, the server waits
/// for every such commit to land. Off unless set; never for a measurement.
pub const ACK_EARLY_ENV: &str = "BENCH_SERVE_ACK_EARLY_MS";

/// A call inside the backend; dropped before [`Timed::note`] (its request dropped), it
/// is taken out uncounted.
struct Inside<'a> {
    timed: &'a Timed,
    entered_us: u64,
    left: bool,
}

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        if !self.left
            && let Ok(mut calls) = self.timed.calls.lock()
        {
            calls.abandon(self.entered_us);
        }
    }
}

/// The request a view of a listing answers: its namespace, page and limit.
fn view_key(request: &ListTablesRequest) -> String {
    format!(
        "{:?}|{:?}|{:?}",
        request.id, request.page_token, request.limit
    )
}

/// A listing as the planted cache keeps it: when it was fetched, and what it said.
type Cached = (Instant, ListTablesResponse);

/// Test fixture: a server answers listings of tables from a view refreshed every this many
/// ms (a caching layer in front of lance's namespace, as a metadata cache would be), so that
/// what readers miss meanwhile is known. Off unless set; never for a measurement.
pub const CACHE_ENV: &str = "BENCH_SERVE_CACHE_MS";

impl Timed {
    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// A call enters the backend now: it is inside until [`Timed::note`] says it left, or
    /// its request is dropped (the guard then says so).
    fn enter(&self) -> Inside<'_> {
        let entered_us = self.now_us();
        self.calls.lock().expect("calls").enter(entered_us);
        Inside {
            timed: self,
            entered_us,
            left: false,
        }
    }

    /// Note a call that has just returned `ok` or not.
    fn note(&self, mut inside: Inside<'_>, mutation: bool, ok: bool) {
        inside.left = true;
        let entered_us = inside.entered_us;
        let left_us = self.now_us();
        if !ok {
            self.failed.fetch_add(1, Ordering::Relaxed);
        }
        self.calls.lock().expect("calls").leave(Call {
            entered_us,
            left_us,
            mutation,
        });
        let served = self.served.fetch_add(1, Ordering::Relaxed) + 1;
        if self.exit_after.is_some_and(|n| served >= n) {
            std::process::exit(3);
        }
    }

    /// A listing of tables, from the planted view where there is one ([`CACHE_ENV`]).
    async fn cached_list_tables(&self, request: ListTablesRequest) -> Result<ListTablesResponse> {
        let Some((period, views)) = &self.cache else {
            return self.drawn_list_tables(request).await;
        };
        let key = view_key(&request);
        let ns = request.id.clone().unwrap_or_default().join("$");
        let mut views = views.lock().await;
        if let Some((at, r)) = views.get(&key)
            && at.elapsed() < *period
        {
            return Ok(self.patched(r.clone(), &ns, *at));
        }
        // Stamped before the listing begins, so that a view shows every commit that landed
        // before its stamp and is served at most `period` after it.
        let at = Instant::now();
        let r = self.inner.list_tables(request).await?;
        views.insert(key, (at, r.clone()));
        Ok(self.patched(r, &ns, at))
    }

    /// A listing of tables answered from one of its last views drawn at random where
    /// [`RANDOM_VIEW_ENV`] is set.
    async fn drawn_list_tables(&self, request: ListTablesRequest) -> Result<ListTablesResponse> {
        let Some((keep, recent)) = &self.recent else {
            return self.inner.list_tables(request).await;
        };
        let key = view_key(&request);
        let r = self.inner.list_tables(request).await?;
        let (views, draw) = &mut *recent.lock().expect("views");
        let kept = views.entry(key).or_default();
        kept.push_back(r);
        if kept.len() > *keep {
            kept.pop_front();
        }
        let i = (draw.next_u64() % kept.len() as u64) as usize;
        Ok(kept[i].clone())
    }

    /// A cached view of namespace `ns` stamped `at`, with this server's own commits since
    /// patched in ([`PATCH_OWN_ENV`]; the last page only).
    fn patched(&self, mut r: ListTablesResponse, ns: &str, at: Instant) -> ListTablesResponse {
        let Some(own) = &self.own else { return r };
        if r.page_token.as_deref().is_some_and(|t| !t.is_empty()) {
            return r;
        }
        for o in (own.lock().expect("own").iter()).filter(|o| o.at > at && o.ns == ns) {
            let there = r.tables.iter().position(|t| *t == o.name);
            match (o.created, there) {
                (true, None) => r.tables.push(o.name.clone()),
                (false, Some(i)) => {
                    r.tables.remove(i);
                }
                _ => {}
            }
        }
        r
    }

    /// Note a table of `id` this server declared, created or dropped just now.
    fn note_own(&self, id: Option<Vec<String>>, created: bool) {
        let (Some(own), Some(mut id)) = (&self.own, id) else {
            return;
        };
        let Some(name) = id.pop() else { return };
        own.lock().expect("own").push(Own {
            at: Instant::now(),
            ns: id.join("$"),
            name,
            created,
        });
    }

    /// A declaration: every second one acknowledged before it is committed where
    /// [`ACK_EARLY_ENV`] is set.
    async fn declared(&self, request: DeclareTableRequest) -> Result<DeclareTableResponse> {
        let id = request.id.clone();
        let Some((delay, n, pending)) = &self.ack_early else {
            let r = self.inner.declare_table(request).await;
            if r.is_ok() {
                self.note_own(id, true);
            }
            return r;
        };
        if n.fetch_add(1, Ordering::Relaxed) % 2 == 1 {
            return self.inner.declare_table(request).await;
        }
        let (inner, delay) = (self.inner.clone(), *delay);
        let commit = tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let _ = inner.declare_table(request).await;
        });
        pending.lock().expect("pending").push(commit);
        Ok(DeclareTableResponse::default())
    }

    /// Wait for the declarations acknowledged early to land ([`ACK_EARLY_ENV`]).
    async fn landed(&self) {
        let Some((_, _, pending)) = &self.ack_early else {
            return;
        };
        let commits: Vec<_> = std::mem::take(&mut *pending.lock().expect("pending"));
        for c in commits {
            let _ = c.await;
        }
    }

    /// Run one call with its requests' touches of `__manifest` kept apart, and say in its
    /// response the version it made (`mutation`) or the versions it served: from the one its
    /// last probe named to the highest any call had named when it returned, as a concurrent
    /// call may move the version the catalog holds before this one reads it. None where no
    /// request of it named one, or where, on local disk, a call found a successor meanwhile
    /// (lance loads it without a request naming it).
    async fn placed<R: Placed>(
        &self,
        (mutation, named): (bool, Option<(u32, u64)>),
        call: impl std::future::Future<Output = Result<R>>,
    ) -> Result<R> {
        let touches = Arc::new(Touched {
            touches: Mutex::new(Vec::new()),
            server: self.held.clone(),
            seq: self.held.begun.fetch_add(1, Ordering::Relaxed) + 1,
        });
        let found = self.held.found.load(Ordering::Relaxed);
        // An error is an answer too (a look-up of an entry not there): told all the same.
        let mut r = CALL.scope(touches.clone(), call).await;
        let touched = std::mem::take(&mut *touches.touches.lock().expect("touches"));
        let Some(mut at) = bench_core::versions::At::of(&touched, mutation) else {
            return r;
        };
        let blind = self.local && self.held.found.load(Ordering::Relaxed) != found;
        if at.made.is_none() && !blind {
            let highest = self.held.highest.load(Ordering::Relaxed);
            at.served_to = at
                .served
                .map(|lo| highest.max(lo))
                .filter(|&hi| Some(hi) != at.served);
        } else if at.made.is_none() {
            // A version loaded unseen: told once a later probe bounds it, under the call's
            // name or, where its request could not name it (a listing), under a ticket its
            // response gives it.
            if let Some(lo) = at.served.or(at.at_least) {
                let (client, call) = named.unwrap_or_else(|| {
                    let ticket = self.tickets | touches.seq;
                    at.ticket = Some(ticket);
                    (bench_core::versions::TICKETED, ticket)
                });
                let after = self.held.begun.load(Ordering::Relaxed);
                let open = Unsettled {
                    client,
                    call,
                    lo,
                    after,
                };
                self.held.unsettled.lock().expect("unsettled").push(open);
            }
            at.served = None;
        }
        if let Some(said) = at.said() {
            if let Some((client, call)) = named {
                let said = said.clone();
                self.told
                    .lock()
                    .expect("told")
                    .push(Told { client, call, said });
            }
            if let Ok(r) = r.as_mut() {
                r.place(said);
            }
        }
        r
    }

    /// What it told of named calls since the window began, the reads settled since among
    /// them.
    fn tell(&self) -> Vec<Told> {
        let settled = std::mem::take(&mut *self.held.settled.lock().expect("settled"));
        let mut told = std::mem::take(&mut *self.told.lock().expect("told"));
        told.extend(settled.into_iter().map(|(client, call, lo, hi)| Told {
            client,
            call,
            said: format!("served={lo}-{hi}"),
        }));
        told
    }

    /// Forget what was served so far (the cell's window begins).
    fn restart(&self) {
        self.calls.lock().expect("calls").restart();
        self.told.lock().expect("told").clear();
        self.held.unsettled.lock().expect("unsettled").clear();
        self.held.settled.lock().expect("settled").clear();
        self.failed.store(0, Ordering::Relaxed);
    }

    /// What was served since [`Timed::restart`] (calls still inside are not counted).
    fn served(&self) -> (u64, u64, f64, f64, u64) {
        let t = self.calls.lock().expect("calls").totals();
        let failed = self.failed.load(Ordering::Relaxed);
        let ms = |us: u64| us as f64 / 1000.0;
        (t.calls, t.mutations, ms(t.busy_us), ms(t.wait_us), failed)
    }
}

/// Delegate each listed call of [`LanceNamespace`] to the backend, timed; `manifest` marks
/// the calls that rewrite `__manifest` (lance serialises those within one namespace). The
/// calls not listed answer as lance's default does (unsupported); bench makes none of them.
macro_rules! timed {
    (@mutation manifest) => { true };
    (@mutation other) => { false };
    (@mutation cached) => { false };
    (@mutation declared) => { true };
    (@mutation own) => { true };
    (@mutation dropped) => { true };
    (@call cached $s:ident $name:ident $request:ident) => { $s.cached_list_tables($request).await };
    (@call declared $s:ident $name:ident $request:ident) => { $s.declared($request).await };
    (@call own $s:ident $name:ident $request:ident $(, $data:ident)?) => {{
        let id = $request.id.clone();
        let r = $s.inner.$name($request $(, $data)?).await;
        if r.is_ok() {
            $s.note_own(id, true);
        }
        r
    }};
    (@call dropped $s:ident $name:ident $request:ident) => {{
        let id = $request.id.clone();
        let r = $s.inner.$name($request).await;
        if r.is_ok() {
            $s.note_own(id, false);
        }
        r
    }};
    (@call $kind:ident $s:ident $name:ident $request:ident $(, $data:ident)?) => {
        $s.inner.$name($request $(, $data)?).await
    };
    ($( $(#[$attr:meta])* $kind:ident $name:ident($req:ty $(, $data:ident)?) -> $resp:ty; )*) => {
        #[async_trait]
        impl LanceNamespace for Timed {
            fn namespace_id(&self) -> String {
                self.inner.namespace_id()
            }
            $(
                $(#[$attr])*
                async fn $name(&self, request: $req $(, $data: Bytes)?) -> Result<$resp> {
                    let inside = self.enter();
                    let mutation = timed!(@mutation $kind);
                    let named = caller(&request);
                    let call = async { timed!(@call $kind self $name request $(, $data)?) };
                    let r = self.placed((mutation, named), call).await;
                    self.note(inside, mutation, r.is_ok());
                    r
                }
            )*
        }
    };
}

timed! {
    other list_namespaces(ListNamespacesRequest) -> ListNamespacesResponse;
    other describe_namespace(DescribeNamespaceRequest) -> DescribeNamespaceResponse;
    manifest create_namespace(CreateNamespaceRequest) -> CreateNamespaceResponse;
    manifest drop_namespace(DropNamespaceRequest) -> DropNamespaceResponse;
    other namespace_exists(NamespaceExistsRequest) -> ();
    cached list_tables(ListTablesRequest) -> ListTablesResponse;
    other describe_table(DescribeTableRequest) -> DescribeTableResponse;
    manifest register_table(RegisterTableRequest) -> RegisterTableResponse;
    other table_exists(TableExistsRequest) -> ();
    dropped drop_table(DropTableRequest) -> DropTableResponse;
    manifest deregister_table(DeregisterTableRequest) -> DeregisterTableResponse;
    other count_table_rows(CountTableRowsRequest) -> i64;
    own create_table(CreateTableRequest, data) -> CreateTableResponse;
    declared declare_table(DeclareTableRequest) -> DeclareTableResponse;
    other insert_into_table(InsertIntoTableRequest, data) -> InsertIntoTableResponse;
    other merge_insert_into_table(MergeInsertIntoTableRequest, data) -> MergeInsertIntoTableResponse;
    other update_table(UpdateTableRequest) -> UpdateTableResponse;
    other delete_from_table(DeleteFromTableRequest) -> DeleteFromTableResponse;
    other query_table(QueryTableRequest) -> Bytes;
    other list_all_tables(ListTablesRequest) -> ListTablesResponse;
    other restore_table(RestoreTableRequest) -> RestoreTableResponse;
    manifest rename_table(RenameTableRequest) -> RenameTableResponse;
    other list_table_versions(ListTableVersionsRequest) -> ListTableVersionsResponse;
    other create_table_version(CreateTableVersionRequest) -> CreateTableVersionResponse;
    other describe_table_version(DescribeTableVersionRequest) -> DescribeTableVersionResponse;
    other batch_delete_table_versions(BatchDeleteTableVersionsRequest) -> BatchDeleteTableVersionsResponse;
    #[cfg(lance_batch_commits)]
    other batch_create_table_versions(BatchCreateTableVersionsRequest) -> BatchCreateTableVersionsResponse;
    #[cfg(lance_batch_commits)]
    other batch_commit_tables(BatchCommitTablesRequest) -> BatchCommitTablesResponse;
    other get_table_stats(GetTableStatsRequest) -> GetTableStatsResponse;
    other describe_transaction(DescribeTransactionRequest) -> DescribeTransactionResponse;
    other update_table_schema_metadata(UpdateTableSchemaMetadataRequest) -> UpdateTableSchemaMetadataResponse;
}

/// This process's CPU time so far (user + system), in seconds.
fn cpu_secs() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

fn say(line: &ServerLine) {
    crate::out::line(&serde_json::to_string(line).expect("server lines serialise"));
}

/// The address clients dial: the bound one, or this machine's name where it binds every
/// interface (clients on other machines).
fn advertised(bind: &str, port: u16) -> (String, String) {
    let host = bench_core::protocol::host_name(&|k| std::env::var(k).ok());
    let addr = match bind {
        "0.0.0.0" | "::" => bench_core::protocol::hostname(),
        b if b.contains(':') => format!("[{b}]"),
        b => b.to_string(),
    };
    (format!("http://{addr}:{port}"), host)
}

/// With `RUST_LOG` set (a level: error, warn, info, debug, trace), the server's log
/// records at that level and above go to its stderr; otherwise it is quiet.
struct StderrLog(log::LevelFilter);

impl log::Log for StderrLog {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= self.0
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            let line = format!("{} {}: {}", r.level(), r.target(), r.args());
            crate::out::note(&line);
        }
    }
    fn flush(&self) {}
}

fn log_if_asked() {
    let Some(level) = std::env::var("RUST_LOG").ok() else {
        return;
    };
    let level: log::LevelFilter = level.trim().parse().unwrap_or(log::LevelFilter::Info);
    // Once, for the process's life.
    let logger: &'static StderrLog = Box::leak(Box::new(StderrLog(level)));
    if log::set_logger(logger).is_ok() {
        log::set_max_level(level);
    }
}

/// Serve: a sweep's server (`--supervised`) until stdin closes, answering its commands; a
/// server a user started until SIGINT or SIGTERM.
pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    log_if_asked();
    let cfg = crate::worker::catalog_config(
        &args.root,
        args.inline,
        args.commit_retries,
        args.s3_shaped,
    )?;
    let counters = Arc::new(Counters::default());
    let backend = Arc::new(crate::catalog::open_counted(&cfg, &counters).await?);
    let patch_own = std::env::var(PATCH_OWN_ENV).ok();
    let timed = Arc::new(Timed {
        inner: backend,
        epoch: Instant::now(),
        calls: Mutex::new(Served::default()),
        failed: AtomicU64::new(0),
        served: AtomicU64::new(0),
        exit_after: (std::env::var(SERVER_EXIT_AFTER_ENV).ok()).and_then(|v| v.trim().parse().ok()),
        cache: (std::env::var(CACHE_ENV).ok().or(patch_own.clone()))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|ms| {
                (
                    std::time::Duration::from_millis(ms),
                    tokio::sync::Mutex::new(Default::default()),
                )
            }),
        own: patch_own.map(|_| Mutex::new(Vec::new())),
        recent: (std::env::var(RANDOM_VIEW_ENV).ok())
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .map(|n| {
                (
                    n,
                    Mutex::new((Default::default(), bench_core::rng::Rng::new(7))),
                )
            }),
        held: Arc::new(Held::default()),
        told: Mutex::new(Vec::new()),
        tickets: {
            use std::hash::{BuildHasher, Hasher};
            let drawn = std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish();
            (drawn & 0xff_ffff) << 40
        },
        local: !args.root.starts_with("s3://"),
        ack_early: (std::env::var(ACK_EARLY_ENV).ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|ms| {
                let delay = std::time::Duration::from_millis(ms);
                (delay, AtomicU64::new(0), Mutex::new(Vec::new()))
            }),
    });
    let config = RestAdapterConfig {
        host: args.bind.clone(),
        port: args.port,
    };
    let handle = RestAdapter::new(timed.clone(), config).start().await?;
    let (uri, host) = advertised(&args.bind, handle.port());
    say(&ServerLine::Listening {
        uri: uri.clone(),
        host,
        open_ms: crate::started().elapsed().as_secs_f64() * 1000.0,
    });
    if !args.supervised {
        crate::out::note(&format!(
            "bench serve: serving {} at {uri} (give the plan rest.uri = \"{uri}\" and \
             rest.external = true); Ctrl-C stops it",
            args.root
        ));
        until_stopped().await;
    } else {
        supervised(&timed, &counters).await;
    }
    tokio::task::spawn_blocking(move || handle.shutdown()).await?;
    Ok(())
}

/// A user's server: until SIGINT or SIGTERM.
async fn until_stopped() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// A sweep's server: its coordinator's commands on stdin, until stdin closes.
async fn supervised(timed: &Timed, counters: &Counters) {
    let mut base: (IoCounts, f64) = (counters.snapshot(), cpu_secs());
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        match line.trim() {
            START => {
                timed.restart();
                base = (counters.snapshot(), cpu_secs());
            }
            REPORT => {
                timed.landed().await;
                say(&ServerLine::Told {
                    calls: timed.tell(),
                });
                let (calls, mutations, ms, wait_ms, failed) = timed.served();
                say(&ServerLine::Served(ServerReport {
                    calls,
                    mutations,
                    failed,
                    ms,
                    wait_ms,
                    io: counters.snapshot() - base.0,
                    cpu_secs: cpu_secs() - base.1,
                    rss_peak_kib: bench_core::memory::peak_rss_kib(),
                }));
            }
            _ => {}
        }
    }
}
