//! A commit of `__manifest` whose reply was lost, deleted although it landed
//! (docs/findings/lost-reply-head.md), as lance's own tests are written: a
//! `DirectoryNamespace` in manifest mode on lance's in-memory store, the store wrapped as
//! lance's tests wrap theirs. The wrapper applies one conditional PUT of a `__manifest`
//! version and then answers it with an error, as a connection reset after the store applied
//! it does; and it answers each HEAD of a version without its length, as an S3 gateway that
//! drops `Content-Length` does.
//!
//! On lance 14.0.2 the namespace cannot read the version back (`checkout_version` HEADs it),
//! takes that for "did not land", and deletes the data file the landed version names: no
//! client can read the catalog again. With the version's HEADs answered as they should be,
//! lance recognises its landed commit, which a fix must keep.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bench_lance::async_trait::async_trait;
use bench_lance::{lance, lance_core, lance_io, lance_namespace, lance_namespace_impls, url};
use futures::stream::BoxStream;
use lance::session::Session;
use lance_io::object_store::providers::memory::MemoryStoreProvider;
use lance_io::object_store::{ObjectStore, ObjectStoreParams, ObjectStoreProvider};
use lance_namespace::LanceNamespace;
use lance_namespace::models::{CreateNamespaceRequest, ListNamespacesRequest};
use lance_namespace_impls::{DirectoryNamespace, DirectoryNamespaceBuilder};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore as OSObjectStore, PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use url::Url;

/// Where `__manifest` keeps its versions.
const VERSIONS: &str = "__manifest/_versions/";

/// One in-memory store shared by every namespace of a test, with its two faults.
#[derive(Debug)]
struct Faulty {
    inner: Arc<dyn OSObjectStore>,
    /// Armed: the next conditional PUT of a version is applied and answered with an error.
    lose_next_reply: AtomicBool,
    /// HEADs of versions answered with a length of 0.
    heads_without_length: bool,
}

impl fmt::Display for Faulty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Faulty({})", self.inner)
    }
}

#[async_trait]
impl OSObjectStore for Faulty {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        let version = location.as_ref().contains(VERSIONS) && matches!(opts.mode, PutMode::Create);
        let put = self.inner.put_opts(location, payload, opts).await?;
        if version && self.lose_next_reply.swap(false, Ordering::SeqCst) {
            return Err(object_store::Error::Generic {
                store: "Faulty",
                source: "connection reset by peer (the write was applied)".into(),
            });
        }
        Ok(put)
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let head = options.head;
        let mut got = self.inner.get_opts(location, options).await?;
        if head && self.heads_without_length && location.as_ref().contains(VERSIONS) {
            got.meta.size = 0;
            got.range = 0..0;
        }
        Ok(got)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// `memory://` served by one [`Faulty`] store: lance's memory provider, its store swapped.
#[derive(Debug)]
struct FaultyMemory(Arc<Faulty>);

#[async_trait]
impl ObjectStoreProvider for FaultyMemory {
    async fn new_store(
        &self,
        base_path: Url,
        params: &ObjectStoreParams,
    ) -> lance_core::Result<ObjectStore> {
        let mut store = MemoryStoreProvider.new_store(base_path, params).await?;
        store.inner = self.0.clone();
        Ok(store)
    }

    fn extract_path(&self, url: &Url) -> lance_core::Result<Path> {
        MemoryStoreProvider.extract_path(url)
    }
}

/// A session whose `memory://` is `store`.
fn session(store: &Arc<Faulty>) -> Arc<Session> {
    let session = Arc::new(Session::default());
    session
        .store_registry()
        .insert("memory", Arc::new(FaultyMemory(store.clone())));
    session
}

async fn open(session: &Arc<Session>) -> DirectoryNamespace {
    DirectoryNamespaceBuilder::new("memory://catalog")
        .manifest_enabled(true)
        .dir_listing_enabled(false)
        .session(session.clone())
        .build()
        .await
        .unwrap()
}

async fn create(ns: &DirectoryNamespace, name: &str) -> lance_core::Result<()> {
    let req = CreateNamespaceRequest {
        id: Some(vec![name.to_string()]),
        ..Default::default()
    };
    ns.create_namespace(req).await.map(|_| ())
}

async fn listed(ns: &DirectoryNamespace) -> lance_core::Result<Vec<String>> {
    let req = ListNamespacesRequest {
        id: Some(vec![]),
        ..Default::default()
    };
    Ok(ns.list_namespaces(req).await?.namespaces)
}

/// Two namespaces created, then a third whose commit's reply is lost: whatever the third's
/// creation answered, a namespace opened afterwards reads the catalog and finds every
/// namespace whose creation succeeded, and a later creation succeeds. `Err`: what did not.
async fn after_a_lost_reply(heads_without_length: bool) -> Result<(), String> {
    let store = Arc::new(Faulty {
        inner: Arc::new(object_store::memory::InMemory::new()),
        lose_next_reply: AtomicBool::new(false),
        heads_without_length,
    });
    let session = session(&store);
    let ns = open(&session).await;
    create(&ns, "ns0").await.unwrap();
    create(&ns, "ns1").await.unwrap();
    store.lose_next_reply.store(true, Ordering::SeqCst);
    let lost = create(&ns, "ns2").await;
    assert!(
        !store.lose_next_reply.load(Ordering::SeqCst),
        "the creation made a conditional PUT of a version"
    );

    let fresh = open(&session).await;
    let names = listed(&fresh).await.map_err(|e| {
        format!("the catalog is unreadable after a lost reply (the creation: {lost:?}): {e}")
    })?;
    for name in ["ns0", "ns1"] {
        if !names.contains(&name.to_string()) {
            return Err(format!("{name}, created, is missing: {names:?}"));
        }
    }
    if lost.is_ok() && !names.contains(&"ns2".to_string()) {
        return Err(format!(
            "ns2's creation succeeded, and it is missing: {names:?}"
        ));
    }
    create(&fresh, "ns3")
        .await
        .map_err(|e| format!("a creation after the lost reply failed: {e}"))
}

#[tokio::test]
async fn a_landed_commit_whose_reply_was_lost_stays_readable() {
    super::red_on_release(
        "lost-reply-head",
        after_a_lost_reply(true).await,
        "the catalog is unreadable after a lost reply",
    );
}

#[tokio::test]
async fn a_lost_reply_whose_version_reads_back_is_recognised() {
    after_a_lost_reply(false).await.unwrap();
}
