//! Requests and bytes by kind, counted inside a worker through lance's own object-store
//! layer: a [`Session`] whose store registry wraps every store it builds (local disk and
//! S3) in a counting store, which forwards each call unchanged.
//!
//! On S3 every request goes through that layer, one call a request (a list counted once a
//! page of 1,000, a batch delete once per 1,000 objects, as S3 answers them). On local disk
//! lance also reads and writes files directly, around the object-store layer; those are
//! taken from the io tracker lance keeps for each store and counted as `get` and `put`.

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use lance::session::Session;
use lance_io::object_store::{
    ObjectStore as LanceStore, ObjectStoreParams, ObjectStoreProvider, ObjectStoreRegistry,
};
use lance_io::utils::tracking_store::IOTracker;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
    Result as OSResult, UploadPart,
};
use url::Url;

use crate::stats::IoCounts;
use bench_core::versions::Touch;

/// S3 answers a list 1,000 keys a page and deletes 1,000 objects a request.
const PAGE: u64 = 1_000;

/// The block lance reads S3 in (its default for cloud stores).
const S3_BLOCK_SIZE: usize = 64 * 1024;

/// The counts of one worker (all its namespaces), shared by its counting stores.
#[derive(Debug, Default)]
pub struct Counters {
    get: AtomicU64,
    put: AtomicU64,
    conditional_put: AtomicU64,
    list: AtomicU64,
    head: AtomicU64,
    delete: AtomicU64,
    copy: AtomicU64,
    read_bytes: AtomicU64,
    written_bytes: AtomicU64,
    /// Local disk: what lance's io trackers saw of the calls counted above, to tell the
    /// direct file reads and writes apart.
    api_reads: AtomicU64,
    api_read_bytes: AtomicU64,
    api_writes: AtomicU64,
    api_written_bytes: AtomicU64,
    trackers: Mutex<Trackers>,
    /// Every request through the counting stores since the last operation's end (see
    /// [`Counters::take`]).
    spans: Mutex<Vec<Timed>>,
    /// Keep each request's key too (a traced operation).
    pub tracing: std::sync::atomic::AtomicBool,
}

/// One request through a counting store: its kind (as in [`IoCounts`]), start, end, bytes
/// and, while [`Counters::tracing`], its key.
#[derive(Debug, Clone)]
pub struct Timed {
    pub kind: &'static str,
    pub start: Instant,
    pub end: Instant,
    pub bytes: u64,
    pub path: Option<String>,
    /// What it said of a version of `__manifest`, where its key is one.
    pub manifest: Option<Touch>,
}

tokio::task_local! {
    /// The call `bench serve` is serving on this task: its requests' touches of `__manifest`
    /// versions are its own.
    pub static CALL: Arc<Touched>;
}

/// What one call of `bench serve` touched, beside what the server as a whole has; `seq`:
/// its place among the server's calls, as they began.
#[derive(Debug)]
pub struct Touched {
    pub touches: Mutex<Vec<Touch>>,
    pub server: Arc<Held>,
    pub seq: u64,
}

/// What a server's calls have touched: the highest version of `__manifest` any named, how
/// many successors were found (each, on local disk, loaded unseen), how many calls began,
/// and the reads that could not tell the version they served, until a probe settles them.
#[derive(Debug, Default)]
pub struct Held {
    pub highest: AtomicU64,
    pub found: AtomicU64,
    pub begun: AtomicU64,
    pub unsettled: Mutex<Vec<Unsettled>>,
    /// Those settled: (client, call, the lowest and the highest version it can have served).
    pub settled: Mutex<Vec<(u32, u64, u64, u64)>>,
}

/// A read of client `client`'s call `call` that served a version of at least `lo` it could
/// not name (one loaded unseen): the version held never goes back, so the first probe of a
/// call begun after it ended (after the `after`-th call began) bounds it from above.
#[derive(Debug)]
pub struct Unsettled {
    pub client: u32,
    pub call: u64,
    pub lo: u64,
    pub after: u64,
}

impl Held {
    /// A probe of call `seq` found version `held` the latest: the reads that ended before
    /// that call began served a version up to it.
    fn settle(&self, seq: u64, held: u64) {
        let mut open = self.unsettled.lock().expect("unsettled");
        if open.is_empty() {
            return;
        }
        let mut settled = self.settled.lock().expect("settled");
        open.retain(|u| {
            let done = seq > u.after && held >= u.lo;
            if done {
                settled.push((u.client, u.call, u.lo, held));
            }
            !done
        });
    }
}

impl Touched {
    fn note(&self, t: Touch) {
        self.touches.lock().expect("touches").push(t);
        let v = match t {
            Touch::Committed(v) | Touch::Loaded(v) | Touch::Lost(v) => v,
            Touch::Missing(k) => {
                self.server.settle(self.seq, k.saturating_sub(1));
                k.saturating_sub(1)
            }
            Touch::Found(k) => {
                self.server.found.fetch_add(1, Ordering::Relaxed);
                k
            }
        };
        self.server.highest.fetch_max(v, Ordering::Relaxed);
    }
}

/// What `requests` said of versions of `__manifest`, in the order they ended.
pub fn touches(requests: &[Timed]) -> Vec<Touch> {
    requests.iter().filter_map(|r| r.manifest).collect()
}

/// Whether a request found what it asked for: `Some(true)` it succeeded, `Some(false)` the
/// key was not there (a HEAD or GET) or already was (a conditional PUT), `None` any other
/// error.
fn found<T>(r: &OSResult<T>) -> Option<bool> {
    match r {
        Ok(_) => Some(true),
        Err(
            object_store::Error::NotFound { .. }
            | object_store::Error::AlreadyExists { .. }
            | object_store::Error::Precondition { .. },
        ) => Some(false),
        Err(_) => None,
    }
}

/// Lance's io trackers of the local stores this worker built.
#[derive(Debug, Default)]
struct Trackers {
    /// The first ones (of the namespace a worker keeps) stay live; those of stores built
    /// for one operation (a cold read's namespace, a created table) are folded into
    /// `folded` once the operation is over, so a snapshot stays cheap.
    live: Vec<IOTracker>,
    /// read iops, read bytes, write iops, written bytes of the folded trackers.
    folded: [u64; 4],
}

/// How many trackers stay live: those of the stores a namespace opens with.
const KEPT: usize = 16;

impl Trackers {
    fn sum(&self) -> [u64; 4] {
        self.live.iter().fold(self.folded, |acc, t| {
            let s = t.stats();
            [
                acc[0] + s.read_iops,
                acc[1] + s.read_bytes,
                acc[2] + s.write_iops,
                acc[3] + s.written_bytes,
            ]
        })
    }
}

fn add(a: &AtomicU64, n: u64) {
    a.fetch_add(n, Ordering::Relaxed);
}

fn load(a: &AtomicU64) -> u64 {
    a.load(Ordering::Relaxed)
}

impl Counters {
    /// Bytes read by a call through a counting store (on local disk, also one of the reads
    /// lance's tracker sees).
    fn read(&self, local: bool, bytes: u64) {
        add(&self.read_bytes, bytes);
        if local {
            add(&self.api_reads, 1);
            add(&self.api_read_bytes, bytes);
        }
    }

    /// Bytes written by a call through a counting store (as [`Counters::read`]).
    fn write(&self, local: bool, bytes: u64) {
        add(&self.written_bytes, bytes);
        if local {
            add(&self.api_writes, 1);
            add(&self.api_written_bytes, bytes);
        }
    }

    /// A request of `kind` on `location` that started at `t0` has ended, with `bytes`, and
    /// found what it asked for or not ([`found`]).
    fn span(
        &self,
        t0: Instant,
        (kind, location): (&'static str, Option<&Path>),
        bytes: u64,
        found: Option<bool>,
    ) {
        let end = Instant::now();
        let manifest = location.and_then(|l| Touch::of(kind, l.as_ref(), found));
        if let Some(t) = manifest {
            let _ = CALL.try_with(|call| call.note(t));
        }
        let path = if self.tracing.load(Ordering::Relaxed) {
            location.map(|l| l.to_string())
        } else {
            None
        };
        self.spans.lock().expect("spans").push(Timed {
            kind,
            start: t0,
            end,
            bytes,
            path,
            manifest,
        });
    }

    /// The requests since the last call, forgotten here.
    pub fn take(&self) -> Vec<Timed> {
        std::mem::take(&mut *self.spans.lock().expect("spans"))
    }

    /// An operation is over: the stores built for it are done, their trackers folded.
    pub fn operation_over(&self) {
        let mut t = self.trackers.lock().expect("trackers");
        if t.live.len() > KEPT {
            let done: Vec<IOTracker> = t.live.drain(KEPT..).collect();
            for tracker in done {
                let s = tracker.stats();
                t.folded[0] += s.read_iops;
                t.folded[1] += s.read_bytes;
                t.folded[2] += s.write_iops;
                t.folded[3] += s.written_bytes;
            }
        }
    }

    /// Everything counted so far.
    pub fn snapshot(&self) -> IoCounts {
        let [reads, read_bytes, writes, written_bytes] =
            self.trackers.lock().expect("trackers").sum();
        // What the trackers saw beyond the calls through the counting stores: the direct
        // file reads and writes of local disk (none on S3).
        let direct = |tracked: u64, api: &AtomicU64| tracked.saturating_sub(load(api));
        IoCounts {
            get: load(&self.get) + direct(reads, &self.api_reads),
            put: load(&self.put) + direct(writes, &self.api_writes),
            conditional_put: load(&self.conditional_put),
            list: load(&self.list),
            head: load(&self.head),
            delete: load(&self.delete),
            copy: load(&self.copy),
            read_bytes: load(&self.read_bytes) + direct(read_bytes, &self.api_read_bytes),
            written_bytes: load(&self.written_bytes)
                + direct(written_bytes, &self.api_written_bytes),
        }
    }
}

/// The critical path of the operation that ran from `start` to `end`, from its requests:
/// those outside it (opening, what ran between operations) are left out.
pub fn critical_path(
    requests: &[Timed],
    start: Instant,
    end: Instant,
) -> crate::stats::CriticalPath {
    let ms = |t: Instant| {
        if t >= start {
            (t - start).as_secs_f64() * 1000.0
        } else {
            -((start - t).as_secs_f64() * 1000.0)
        }
    };
    let rel: Vec<crate::stats::Request> = requests
        .iter()
        .map(|r| crate::stats::Request {
            start: ms(r.start),
            end: ms(r.end),
            kind: r.kind,
        })
        .collect();
    crate::stats::critical_path(&rel, 0.0, ms(end))
}

/// A session whose stores count into `counters`, with fresh caches: one per namespace, as
/// a namespace opened without a session has.
pub fn session(counters: &Arc<Counters>) -> Arc<Session> {
    let registry = ObjectStoreRegistry::default();
    for scheme in ["s3", "file", "file-object-store"] {
        if let Some(inner) = registry.get_provider(scheme) {
            let provider = CountingProvider {
                inner,
                counters: counters.clone(),
                local: scheme == "file",
                s3_shaped: scheme == "file-object-store",
            };
            registry.insert(scheme, Arc::new(provider));
        }
    }
    Arc::new(Session::new(
        lance::dataset::DEFAULT_INDEX_CACHE_SIZE,
        lance::dataset::DEFAULT_METADATA_CACHE_SIZE,
        Arc::new(registry),
    ))
}

/// Builds stores as lance does, wrapped in a [`CountingStore`].
#[derive(Debug)]
struct CountingProvider {
    inner: Arc<dyn ObjectStoreProvider>,
    counters: Arc<Counters>,
    local: bool,
    /// Local disk through the object-store API, read in S3's 64 KiB blocks.
    s3_shaped: bool,
}

#[async_trait::async_trait]
impl ObjectStoreProvider for CountingProvider {
    async fn new_store(
        &self,
        base: Url,
        params: &ObjectStoreParams,
    ) -> lance_core::Result<LanceStore> {
        let mut store = if self.s3_shaped {
            let mut params = params.clone();
            params.block_size = Some(S3_BLOCK_SIZE);
            self.inner.new_store(base, &params).await?
        } else {
            self.inner.new_store(base, params).await?
        };
        if self.local {
            self.counters
                .trackers
                .lock()
                .expect("trackers")
                .live
                .push(store.io_tracker().clone());
        }
        store.inner = Arc::new(CountingStore {
            inner: store.inner.clone(),
            counters: self.counters.clone(),
            local: self.local,
        });
        Ok(store)
    }

    fn extract_path(&self, url: &Url) -> lance_core::Result<Path> {
        self.inner.extract_path(url)
    }

    fn calculate_object_store_prefix(
        &self,
        url: &Url,
        storage_options: Option<&std::collections::HashMap<String, String>>,
    ) -> lance_core::Result<String> {
        self.inner
            .calculate_object_store_prefix(url, storage_options)
    }
}

/// Forwards every call to the store lance built, counting it.
#[derive(Debug)]
struct CountingStore {
    inner: Arc<dyn ObjectStore>,
    counters: Arc<Counters>,
    /// Local disk: also keep what lance's io tracker counts of these calls.
    local: bool,
}

/// `inner` counted as a worker's stores are, and its counters (for a test of what the
/// counts hold: `tests/it/units.rs`).
pub fn counted(inner: Arc<dyn ObjectStore>) -> (Arc<dyn ObjectStore>, Arc<Counters>) {
    let counters = Arc::new(Counters::default());
    let store = CountingStore {
        inner,
        counters: counters.clone(),
        local: false,
    };
    (Arc::new(store), counters)
}

impl fmt::Display for CountingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Counting({})", self.inner)
    }
}

impl CountingStore {
    fn read(&self, bytes: u64) {
        self.counters.read(self.local, bytes);
    }

    fn write(&self, bytes: u64) {
        self.counters.write(self.local, bytes);
    }

    /// A listing: one request, and one more for every page after the first.
    fn listed(
        &self,
        prefix: Option<&Path>,
        s: BoxStream<'static, OSResult<ObjectMeta>>,
    ) -> BoxStream<'static, OSResult<ObjectMeta>> {
        add(&self.counters.list, 1);
        if self.local {
            add(&self.counters.api_reads, 1);
        }
        let counters = self.counters.clone();
        let seen = Arc::new(AtomicU64::new(0));
        let span = Span::start(&self.counters, "list", prefix);
        s.inspect_ok(move |_| {
            let _ = &span;
            let n = seen.fetch_add(1, Ordering::Relaxed) + 1;
            if n > PAGE && (n - 1).is_multiple_of(PAGE) {
                add(&counters.list, 1);
            }
        })
        .boxed()
    }
}

#[async_trait::async_trait]
impl ObjectStore for CountingStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> OSResult<PutResult> {
        add(&self.counters.put, 1);
        if !matches!(opts.mode, PutMode::Overwrite) {
            add(&self.counters.conditional_put, 1);
        }
        let bytes = payload.content_length() as u64;
        self.write(bytes);
        let kind = if matches!(opts.mode, PutMode::Overwrite) {
            "put"
        } else {
            "conditional_put"
        };
        let t0 = Instant::now();
        let r = self.inner.put_opts(location, payload, opts).await;
        (self.counters).span(t0, (kind, Some(location)), bytes, found(&r));
        r
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> OSResult<Box<dyn MultipartUpload>> {
        // CreateMultipartUpload; the parts and the completion are counted as they go.
        add(&self.counters.put, 1);
        let t0 = Instant::now();
        let inner = self.inner.put_multipart_opts(location, opts).await;
        (self.counters).span(t0, ("put", Some(location)), 0, None);
        let inner = inner?;
        Ok(Box::new(CountingUpload {
            inner,
            counters: self.counters.clone(),
            local: self.local,
            location: location.clone(),
        }))
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> OSResult<GetResult> {
        let head = options.head;
        add(
            if head {
                &self.counters.head
            } else {
                &self.counters.get
            },
            1,
        );
        let t0 = Instant::now();
        let result = self.inner.get_opts(location, options).await;
        // What lance's tracker counts: successful gets, with the bytes of the range.
        let bytes = match &result {
            Ok(r) if !head => r.range.end - r.range.start,
            _ => 0,
        };
        // The round trip: until the answer's head (a body is read as the caller goes).
        let kind = if head { "head" } else { "get" };
        (self.counters).span(t0, (kind, Some(location)), bytes, found(&result));
        let result = result?;
        self.read(bytes);
        Ok(result)
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> OSResult<Vec<Bytes>> {
        if !self.local {
            // S3 has no call of its own for this: the ranges are coalesced into gets, each
            // of which passes through get_opts above, as without this store.
            return object_store::coalesce_ranges(
                ranges,
                |r| object_store::ObjectStoreExt::get_range(self, location, r),
                object_store::OBJECT_STORE_COALESCE_DEFAULT,
            )
            .await;
        }
        add(&self.counters.get, 1);
        let t0 = Instant::now();
        let result = self.inner.get_ranges(location, ranges).await;
        let bytes = match &result {
            Ok(r) => r.iter().map(|b| b.len() as u64).sum(),
            Err(_) => 0,
        };
        (self.counters).span(t0, ("get", Some(location)), bytes, found(&result));
        let result = result?;
        self.read(bytes);
        Ok(result)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, OSResult<Path>>,
    ) -> BoxStream<'static, OSResult<Path>> {
        let (counters, local) = (self.counters.clone(), self.local);
        let seen = Arc::new(AtomicU64::new(0));
        let mut span = Span::start(&self.counters, "delete", None);
        let counted = locations
            .inspect_ok(move |p| {
                // Named by its first key, where keys are kept.
                if span.location.is_none() && counters.tracing.load(Ordering::Relaxed) {
                    span.location = Some(p.clone());
                }
                let n = seen.fetch_add(1, Ordering::Relaxed);
                // Local disk deletes file by file; S3 a batch of up to 1,000 a request.
                if local || n.is_multiple_of(PAGE) {
                    add(&counters.delete, 1);
                }
                if local {
                    add(&counters.api_writes, 1);
                }
            })
            .boxed();
        self.inner.delete_stream(counted)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, OSResult<ObjectMeta>> {
        self.listed(prefix, self.inner.list(prefix))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, OSResult<ObjectMeta>> {
        self.listed(prefix, self.inner.list_with_offset(prefix, offset))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> OSResult<ListResult> {
        add(&self.counters.list, 1);
        if self.local {
            add(&self.counters.api_reads, 1);
        }
        let t0 = Instant::now();
        let r = self.inner.list_with_delimiter(prefix).await;
        (self.counters).span(t0, ("list", prefix), 0, None);
        r
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> OSResult<()> {
        add(&self.counters.copy, 1);
        self.write(0);
        let t0 = Instant::now();
        let r = self.inner.copy_opts(from, to, options).await;
        (self.counters).span(t0, ("copy", Some(to)), 0, None);
        r
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> OSResult<()> {
        // S3 renames by a copy and a delete; local disk in one call.
        add(&self.counters.copy, 1);
        if !self.local {
            add(&self.counters.delete, 1);
        }
        self.write(0);
        let t0 = Instant::now();
        let r = self.inner.rename_opts(from, to, options).await;
        (self.counters).span(t0, ("copy", Some(to)), 0, found(&r));
        r
    }
}

/// A request made through a stream (a listing, a batch delete): from its start until the
/// stream is dropped, finished or not.
struct Span {
    counters: Arc<Counters>,
    t0: Instant,
    kind: &'static str,
    location: Option<Path>,
    bytes: u64,
}

impl Span {
    fn start(counters: &Arc<Counters>, kind: &'static str, location: Option<&Path>) -> Span {
        Span {
            counters: counters.clone(),
            t0: Instant::now(),
            kind,
            // The key only where it is kept (a traced operation).
            location: location
                .filter(|_| counters.tracing.load(Ordering::Relaxed))
                .cloned(),
            bytes: 0,
        }
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        (self.counters).span(
            self.t0,
            (self.kind, self.location.as_ref()),
            self.bytes,
            None,
        );
    }
}

/// A multipart upload whose parts and completion are counted.
#[derive(Debug)]
struct CountingUpload {
    inner: Box<dyn MultipartUpload>,
    counters: Arc<Counters>,
    local: bool,
    location: Path,
}

#[async_trait::async_trait]
impl MultipartUpload for CountingUpload {
    fn put_part(&mut self, payload: PutPayload) -> UploadPart {
        add(&self.counters.put, 1);
        let bytes = payload.content_length() as u64;
        self.counters.write(self.local, bytes);
        let part = self.inner.put_part(payload);
        let mut span = Span::start(&self.counters, "put", Some(&self.location));
        span.bytes = bytes;
        Box::pin(async move {
            let r = part.await;
            drop(span);
            r
        })
    }

    async fn complete(&mut self) -> OSResult<PutResult> {
        add(&self.counters.put, 1);
        let _span = Span::start(&self.counters, "put", Some(&self.location));
        self.inner.complete().await
    }

    async fn abort(&mut self) -> OSResult<()> {
        add(&self.counters.delete, 1);
        self.inner.abort().await
    }
}
