//! The worker process (`bench worker`, hidden): opens its own `DirectoryNamespace`, runs its
//! warm-up, reports ready, waits for the coordinator's release on stdin, runs its
//! operations, and reports each as one JSON line on stdout ([`protocol`]). It exits by
//! itself when its stdin closes (coordinator gone).

pub use bench_core::protocol;

mod attempt;
mod observe;
mod pacing;
mod plan;
mod report;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lance_namespace::LanceNamespace;

use protocol::Versions;
pub use protocol::{EXIT_ORPHANED, Event, STORAGE_ENV, WorkerArgs};

use crate::catalog::counting::Counters;
use crate::catalog::{self, CatalogConfig};
use crate::trace::TracedOp;
use attempt::Planted;
use pacing::{Commands, read_commands, released};
use plan::RoleClient;
use report::{LIVE, emit};

/// Test hook: a worker delays its start by this many milliseconds (a slow process start).
pub const START_DELAY_ENV: &str = "BENCH_WORKER_START_DELAY_MS";

/// Test hook: a worker adds this many milliseconds (a decimal number) of busy CPU inside
/// every timed operation: a known slowdown, planted.
pub const OP_DELAY_ENV: &str = "BENCH_OP_DELAY_MS";

/// Test hook: a worker exits with [`EXIT_TEST_CRASH`] right after its N-th measured
/// operation, as a worker that crashes mid-cell.
pub const EXIT_AFTER_ENV: &str = "BENCH_WORKER_EXIT_AFTER";

/// Test hook (a planted fault): `W:N` makes worker `W` kill itself (SIGKILL) in the middle of
/// its `N`-th measured commit, once the commit's first store request is made (or, where it
/// makes none of its own, e.g. through a REST server, once it ends), after reporting it
/// `killed`: a commit that may have landed, as a crashed client's would. Its cell goes on
/// without it.
pub const KILL_MID_COMMIT_ENV: &str = "BENCH_WORKER_KILL_MID_COMMIT";

/// Where a worker writes each write operation before it begins, a JSON line an operation
/// (its report as it would end were the worker to die with it in flight: `killed`, it may
/// have landed), set by the coordinator for the workers it starts itself. Each line is one
/// write(2) into a file: it survives the worker's death, and the coordinator is not woken
/// for it. The coordinator reads it only when a worker was killed from outside: every
/// operation written there and never reported is unknown, and looked up.
pub const INVOKED_ENV: &str = "BENCH_WORKER_INVOKED";

/// Test hook: a worker makes this many HEAD requests more inside every timed operation
/// (of `__manifest`'s version hint, through its counted store): a known request change,
/// planted, as a build that asks the store once more per operation would.
pub const EXTRA_HEADS_ENV: &str = "BENCH_EXTRA_HEADS";

/// Measurement hook: a worker opens its namespace without the counting session (no
/// requests, bytes or round trips in its reports), to measure what the accounting costs
/// (`scripts/figures/fidelity.sh accounting`).
pub const UNCOUNTED_ENV: &str = "BENCH_UNCOUNTED";

/// The exit code of a worker stopped by [`EXIT_AFTER_ENV`].
pub const EXIT_TEST_CRASH: i32 = 86;

/// A duration in milliseconds from the environment, if set and valid.
fn env_ms(name: &str) -> Option<Duration> {
    let ms: f64 = std::env::var(name).ok()?.trim().parse().ok()?;
    (ms.is_finite() && ms > 0.0).then(|| Duration::from_secs_f64(ms / 1000.0))
}

/// A worker's open catalog and what its operations need.
struct Session {
    args: WorkerArgs,
    cfg: CatalogConfig,
    ns: Arc<dyn LanceNamespace>,
    /// The shared table's rows and how its datasets open (table operations only).
    table: Option<catalog::table::TableIo>,
    /// The catalog's store and what cleanups keep (a client of a role that cleans up).
    maintenance: Option<catalog::cleanup::Maintenance>,
    /// Every request of this worker's namespaces, counted.
    counters: Arc<Counters>,
    table_data: bytes::Bytes,
    /// The planted slowdown of every timed operation ([`OP_DELAY_ENV`]).
    op_delay: Option<Duration>,
    /// The planted requests of every timed operation ([`EXTRA_HEADS_ENV`]).
    planted: Option<Planted>,
    /// Test hook: exit after this many measured operations ([`EXIT_AFTER_ENV`]).
    exit_after: Option<u64>,
    /// Planted fault: killed in the middle of this measured commit ([`KILL_MID_COMMIT_ENV`]).
    kill_at: Option<u64>,
    /// Where each operation is written before it begins ([`INVOKED_ENV`]).
    invoked: Option<std::sync::Mutex<Invoked>>,
    /// The traced operations so far (`--trace`).
    traced: std::sync::Mutex<Vec<TracedOp>>,
    /// A moment on both clocks, to put operations and requests on the host's monotonic one.
    anchor: crate::host_clock::Anchor,
    /// A client of a role.
    role: Option<std::sync::Mutex<RoleClient>>,
    /// Whether the store client's resends are seen (directly; through REST the server's
    /// client resends).
    resends: bool,
}

/// A worker's life: its session opened, its warm-up, `ready`, the release, its
/// operations, and `done` with what it measured.
pub async fn run(mut args: WorkerArgs) -> anyhow::Result<()> {
    let env = |k: &str| std::env::var(k).ok();
    if args.rank_from_env {
        args.worker_id += protocol::rank_from(&env).map_err(anyhow::Error::msg)?;
    }
    let w = args.worker_id;
    let live = args.paced || args.until_end;
    LIVE.store(live, std::sync::atomic::Ordering::Relaxed);
    catalog::set_caller(w);
    if let Some(d) = env_ms(START_DELAY_ENV) {
        tokio::time::sleep(d).await;
    }
    let session = Session::open(args).await?;
    let open_ms = crate::started().elapsed().as_secs_f64() * 1000.0;
    let mut commands = read_commands();
    session.counters.take(); // the requests that opened the catalog: no operation's
    session.warm_up().await;
    emit(
        w,
        Event::Ready {
            versions: Some(Versions::own()),
            host: Some(protocol::host_name(&env)),
            open_ms: Some(open_ms),
            planted: protocol::planted(&env),
        },
    );
    released(&mut commands).await?;
    // A campaign's point: its store gives the fault to the k-th request from here on.
    if let Ok(point) = std::env::var(bench_core::plan::campaign::ENV)
        && point != bench_core::plan::campaign::OTHER
    {
        let (storage, root) = (&session.cfg.storage, &session.cfg.root);
        crate::store_fault::arm(storage, root, &point, std::process::id())
            .await
            .map_err(anyhow::Error::msg)?;
    }
    let clock_us = session.clock_us(Instant::now());
    emit(w, Event::Clock { clock_us });
    if session.args.trace > 0 {
        (session.counters.tracing).store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let release = Instant::now();
    let (elapsed, stopped) = if session.args.paced {
        session.paced(release, &mut commands).await
    } else {
        let (end, stopped) = session.measure(release, &mut commands).await;
        (end - release, stopped)
    };
    session.done(elapsed, stopped, &mut commands).await;
    Ok(())
}

impl Session {
    /// The catalog opened as `args` say, with every request counted, and what the cell's
    /// operations need beside it: the shared table, a role's cleanup, a planted request.
    async fn open(args: WorkerArgs) -> anyhow::Result<Session> {
        let cfg = catalog_config(&args.root, args.inline, args.commit_retries, args.s3_shaped)?;
        let counters = Arc::new(Counters::default());
        let ns = open(&cfg, &counters, args.rest_uri()).await?;
        // Table operations (the cell's, or a mixed cell's read) get the shared table's rows
        // (the plan's default where a coordinator does not say) and a counted session.
        let on_table =
            args.operation.on_table() || args.read_operation.is_some_and(|r| r.on_table());
        let table = on_table.then(|| {
            let n = (args.rows_per_commit).unwrap_or(bench_core::plan::DEFAULT_ROWS_PER_COMMIT);
            let session = crate::catalog::counting::session(&counters);
            catalog::table::TableIo::new(n, session, cfg.storage.clone())
        });
        // A role's cleanup keeps what its role says; a campaign's, what the campaign says.
        let retention = (args.role.as_ref())
            .and_then(|r| r.role.retention)
            .or(args.retention);
        let maintenance = retention.map(|retention| catalog::cleanup::Maintenance {
            root: cfg.root.clone(),
            storage: cfg.storage.clone(),
            session: crate::catalog::counting::session(&counters),
            retention,
        });
        let heads: u32 = (std::env::var(EXTRA_HEADS_ENV).ok())
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let planted = match heads {
            0 => None,
            n => Some(Planted::open(&cfg, &counters, n).await?),
        };
        Ok(Session {
            ns,
            table,
            maintenance,
            counters,
            cfg,
            table_data: catalog::table_ipc(),
            op_delay: env_ms(OP_DELAY_ENV),
            planted,
            exit_after: std::env::var(EXIT_AFTER_ENV)
                .ok()
                .and_then(|v| v.trim().parse().ok()),
            kill_at: kill_at(args.worker_id),
            invoked: invoked_file()?,
            traced: std::sync::Mutex::new(Vec::new()),
            anchor: crate::host_clock::Anchor::now(),
            role: role_client(&args),
            resends: crate::resends::count() && args.rest_uri().is_none(),
            args,
        })
    }

    /// The requests the store client resent since it had resent `before`
    /// ([`crate::resends::so_far`]); `None` where they are not seen.
    fn resent_since(&self, before: u64) -> Option<u32> {
        let n = crate::resends::so_far().saturating_sub(before);
        self.resends.then(|| u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// After the last operation: the trace, the clock asked again, and `done` with what the
    /// worker measured over `elapsed`.
    async fn done(&self, elapsed: Duration, stopped: Option<String>, commands: &mut Commands) {
        let w = self.args.worker_id;
        let ops = std::mem::take(&mut *self.traced.lock().expect("traced"));
        if !ops.is_empty() {
            emit(w, Event::Trace { ops });
        }
        let clock = pacing::ask_time(w, commands).await;
        emit(
            w,
            Event::Done {
                elapsed_ms: elapsed.as_secs_f64() * 1000.0,
                io: Some(self.counters.snapshot()),
                rss_peak_kib: bench_core::memory::peak_rss_kib(),
                stopped,
                clock,
            },
        );
    }
}

/// The file [`INVOKED_ENV`] names, opened to append, and the lines it could not take.
#[derive(Debug)]
struct Invoked {
    file: std::fs::File,
    /// Lines not written, and the first error.
    unwritten: Option<(u64, String)>,
}

/// The file [`INVOKED_ENV`] names, opened to append.
fn invoked_file() -> anyhow::Result<Option<std::sync::Mutex<Invoked>>> {
    let Some(path) = std::env::var_os(INVOKED_ENV) else {
        return Ok(None);
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.to_string_lossy()))?;
    Ok(Some(std::sync::Mutex::new(Invoked {
        file,
        unwritten: None,
    })))
}

/// This worker's commit to be killed in ([`KILL_MID_COMMIT_ENV`]: `W:N`), if it is `W`.
fn kill_at(worker: u32) -> Option<u64> {
    let v = std::env::var(KILL_MID_COMMIT_ENV).ok()?;
    let (w, n) = v.trim().split_once(':')?;
    (w.parse::<u32>().ok()? == worker).then(|| n.parse().ok())?
}

/// A role's client: its role, targets and seeded draws, from its arguments.
fn role_client(args: &WorkerArgs) -> Option<std::sync::Mutex<RoleClient>> {
    let r = args.role.as_ref()?;
    let golden = catalog::Golden {
        tables: args.tables,
        namespaces: args.namespaces,
        fixture: args.fixture,
    };
    Some(std::sync::Mutex::new(RoleClient {
        role: r.role.clone(),
        targets: catalog::RoleTargets::new(
            args.worker_id,
            (r.remover, r.removers),
            golden,
            args.names.clone(),
            r.role.targets,
        ),
        rng: bench_core::rng::Rng::new(r.seed),
        exhausted: Default::default(),
    }))
}

/// A worker's catalog: its own `DirectoryNamespace` (its requests counted), or a client of
/// the cell's REST server (`rest`; the server counts the catalog's requests).
async fn open(
    cfg: &CatalogConfig,
    counters: &Arc<Counters>,
    rest: Option<&str>,
) -> lance_core::Result<Arc<dyn LanceNamespace>> {
    Ok(match rest {
        Some(uri) => catalog::open_rest(uri),
        None if std::env::var_os(UNCOUNTED_ENV).is_some() => Arc::new(catalog::open(cfg).await?),
        None => Arc::new(catalog::open_counted(cfg, counters).await?),
    })
}

/// The catalog a worker (or a cell's REST server) opens on `root`: the storage options and
/// namespace properties from the environment the coordinator gave it ([`STORAGE_ENV`]).
pub fn catalog_config(
    root: &str,
    inline: bool,
    commit_retries: u32,
    s3_shaped: bool,
) -> anyhow::Result<CatalogConfig> {
    let given: BTreeMap<String, String> = match std::env::var(STORAGE_ENV) {
        Ok(json) => serde_json::from_str(&json)?,
        Err(_) => BTreeMap::new(),
    };
    let (properties, storage): (BTreeMap<_, _>, BTreeMap<_, _>) = given
        .into_iter()
        .partition(|(k, _)| k.starts_with(protocol::PROPERTY_PREFIX));
    let properties = properties
        .into_iter()
        .map(|(k, v)| (k[protocol::PROPERTY_PREFIX.len()..].to_string(), v))
        .collect();
    // Whatever this process says (an error's text, a report) never shows a credential.
    bench_core::redact::keep_options_hidden(&storage);
    Ok(CatalogConfig {
        root: if s3_shaped {
            s3_shaped_root(root)?
        } else {
            root.to_string()
        },
        inline,
        commit_retries,
        storage,
        properties,
    })
}

/// The URI of a local root as lance's `file-object-store` (local disk through the
/// object-store API, as a remote store is reached).
fn s3_shaped_root(root: &str) -> anyhow::Result<String> {
    let path = root.strip_prefix("file://").unwrap_or(root);
    let abs = std::path::absolute(path)?;
    let url = url::Url::from_file_path(&abs)
        .map_err(|()| anyhow::anyhow!("{} is not a local path", abs.display()))?;
    Ok(url.as_str().replacen("file:", "file-object-store:", 1))
}

/// Lance's environment switch of the version-hint file, off for S3-shaped requests.
pub const VERSION_HINT_ENV: &str = "LANCE_USE_VERSION_HINT";
