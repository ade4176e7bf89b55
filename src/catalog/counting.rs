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

/// S3 answers a list 1,000 keys a page and deletes 1,000 objects a request.
const PAGE: u64 = 1_000;

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
    /// Every request's start and end through the counting stores, since the last
    /// operation's end (see [`Counters::path`]).
    spans: Mutex<Vec<(Instant, Instant)>>,
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

    /// A request that started at `t0` has ended.
    fn span(&self, t0: Instant) {
        let t1 = Instant::now();
        self.spans.lock().expect("spans").push((t0, t1));
    }

    /// The critical path of the operation that ran from `start` to `end`, from the requests
    /// since the last call: those outside it (opening, what ran between operations) are left
    /// out, and all are forgotten.
    pub fn path(&self, start: Instant, end: Instant) -> crate::stats::CriticalPath {
        let spans: Vec<(Instant, Instant)> =
            std::mem::take(&mut *self.spans.lock().expect("spans"));
        let ms = |t: Instant| {
            if t >= start {
                (t - start).as_secs_f64() * 1000.0
            } else {
                -((start - t).as_secs_f64() * 1000.0)
            }
        };
        let rel: Vec<(f64, f64)> = spans.iter().map(|&(a, b)| (ms(a), ms(b))).collect();
        crate::stats::critical_path(&rel, 0.0, ms(end))
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

/// A session whose stores count into `counters`, with fresh caches: one per namespace, as
/// a namespace opened without a session has.
pub fn session(counters: &Arc<Counters>) -> Arc<Session> {
    let registry = ObjectStoreRegistry::default();
    for scheme in ["s3", "file"] {
        if let Some(inner) = registry.get_provider(scheme) {
            let provider = CountingProvider {
                inner,
                counters: counters.clone(),
                local: scheme == "file",
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
}

#[async_trait::async_trait]
impl ObjectStoreProvider for CountingProvider {
    async fn new_store(
        &self,
        base: Url,
        params: &ObjectStoreParams,
    ) -> lance_core::Result<LanceStore> {
        let mut store = self.inner.new_store(base, params).await?;
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
        s: BoxStream<'static, OSResult<ObjectMeta>>,
    ) -> BoxStream<'static, OSResult<ObjectMeta>> {
        add(&self.counters.list, 1);
        if self.local {
            add(&self.counters.api_reads, 1);
        }
        let counters = self.counters.clone();
        let seen = Arc::new(AtomicU64::new(0));
        let span = Span::start(&self.counters);
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
        self.write(payload.content_length() as u64);
        let t0 = Instant::now();
        let r = self.inner.put_opts(location, payload, opts).await;
        self.counters.span(t0);
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
        self.counters.span(t0);
        let inner = inner?;
        Ok(Box::new(CountingUpload {
            inner,
            counters: self.counters.clone(),
            local: self.local,
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
        // The round trip: until the answer's head (a body is read as the caller goes).
        self.counters.span(t0);
        let result = result?;
        // What lance's tracker counts: successful gets, with the bytes of the range.
        self.read(if head {
            0
        } else {
            result.range.end - result.range.start
        });
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
        self.counters.span(t0);
        let result = result?;
        self.read(result.iter().map(|b| b.len() as u64).sum());
        Ok(result)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, OSResult<Path>>,
    ) -> BoxStream<'static, OSResult<Path>> {
        let (counters, local) = (self.counters.clone(), self.local);
        let seen = Arc::new(AtomicU64::new(0));
        let span = Span::start(&self.counters);
        let counted = locations
            .inspect_ok(move |_| {
                let _ = &span;
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
        self.listed(self.inner.list(prefix))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, OSResult<ObjectMeta>> {
        self.listed(self.inner.list_with_offset(prefix, offset))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> OSResult<ListResult> {
        add(&self.counters.list, 1);
        if self.local {
            add(&self.counters.api_reads, 1);
        }
        let t0 = Instant::now();
        let r = self.inner.list_with_delimiter(prefix).await;
        self.counters.span(t0);
        r
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> OSResult<()> {
        add(&self.counters.copy, 1);
        self.write(0);
        let t0 = Instant::now();
        let r = self.inner.copy_opts(from, to, options).await;
        self.counters.span(t0);
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
        self.counters.span(t0);
        r
    }
}

/// A request made through a stream (a listing, a batch delete): from its start until the
/// stream is dropped, finished or not.
struct Span {
    counters: Arc<Counters>,
    t0: Instant,
}

impl Span {
    fn start(counters: &Arc<Counters>) -> Span {
        Span {
            counters: counters.clone(),
            t0: Instant::now(),
        }
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        self.counters.span(self.t0);
    }
}

/// A multipart upload whose parts and completion are counted.
#[derive(Debug)]
struct CountingUpload {
    inner: Box<dyn MultipartUpload>,
    counters: Arc<Counters>,
    local: bool,
}

#[async_trait::async_trait]
impl MultipartUpload for CountingUpload {
    fn put_part(&mut self, payload: PutPayload) -> UploadPart {
        add(&self.counters.put, 1);
        self.counters
            .write(self.local, payload.content_length() as u64);
        let part = self.inner.put_part(payload);
        let span = Span::start(&self.counters);
        Box::pin(async move {
            let r = part.await;
            drop(span);
            r
        })
    }

    async fn complete(&mut self) -> OSResult<PutResult> {
        add(&self.counters.put, 1);
        let _span = Span::start(&self.counters);
        self.inner.complete().await
    }

    async fn abort(&mut self) -> OSResult<()> {
        add(&self.counters.delete, 1);
        self.inner.abort().await
    }
}
