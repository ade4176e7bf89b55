//! Where goldens and per-cell copies live: local disk or S3 (and S3-compatible stores),
//! through lance's own object store, so credentials, region and endpoint resolve exactly as
//! they do for lance and the workers. Copies on S3 are server-side (CopyObject). An S3
//! root is checked by the [`preflight`] before anything is written.

mod claim;
pub mod credentials;
mod preflight;
pub use preflight::look;

pub use claim::{CLAIM, Claim};

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use lance_io::object_store::{ObjectStore, ObjectStoreRegistry};
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload};

use crate::error::BenchError;

/// Name of the object that marks a golden complete. It is written last and never copied.
pub const GOLDEN_MARKER: &str = "_bench_golden.json";

/// Copies in flight at once when a golden is copied for a cell.
/// Server-side copies in flight at once, unless the plan says (`run.copy_parallelism`).
pub const COPY_PARALLELISM: usize = bench_core::plan::DEFAULT_COPY_PARALLELISM as usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    File,
    S3,
}

#[derive(Debug, Clone)]
pub struct Store {
    scheme: Scheme,
    /// The storage options it was opened with (to open it again).
    storage: BTreeMap<String, String>,
    /// `/abs/path` or `s3://bucket/prefix`, without a trailing slash.
    root: String,
    os: Arc<ObjectStore>,
    base: Path,
    /// Server-side copies in flight at once (`run.copy_parallelism`).
    copy_parallelism: usize,
}

/// One object under a prefix: its path relative to the prefix and its size.
pub type Listing = BTreeMap<String, u64>;

fn err(what: String) -> impl FnOnce(lance_core::Error) -> BenchError {
    move |e| BenchError::store_source(what, e)
}

impl Store {
    /// Resolve the store at `root` with the plan's storage options. Writes nothing.
    pub async fn open(root: &str, storage: &BTreeMap<String, String>) -> Result<Store, BenchError> {
        let (scheme, root) = match root.split_once("://") {
            Some(("s3", rest)) => {
                let rest = rest.trim_end_matches('/');
                if rest.is_empty() || rest.starts_with('/') {
                    return Err(BenchError::Usage(format!(
                        "root `{root}` names no bucket; use s3://BUCKET/PREFIX"
                    )));
                }
                check_http(storage)?;
                (Scheme::S3, format!("s3://{rest}"))
            }
            Some(("file", rest)) => (Scheme::File, local_root(rest)?),
            Some((scheme, _)) => {
                return Err(BenchError::Usage(format!(
                    "root `{root}` uses the `{scheme}://` scheme; bench supports local \
                     directories and s3:// (including S3-compatible stores via aws_endpoint)"
                )));
            }
            None => (Scheme::File, local_root(root)?),
        };
        let params = crate::catalog::store_params(storage);
        let (os, base) = ObjectStore::from_uri_and_params(
            Arc::new(ObjectStoreRegistry::default()),
            &root,
            &params,
        )
        .await
        .map_err(|e| BenchError::Store {
            message: format!(
                "cannot open store `{root}`: {e}{}",
                if scheme == Scheme::S3 {
                    "; check the bucket name, `aws_region` (or AWS_REGION / your profile's \
                     region) and `aws_endpoint` for S3-compatible stores"
                } else {
                    ""
                }
            ),
            source: Some(Box::new(e)),
        })?;
        Ok(Store {
            scheme,
            storage: storage.clone(),
            root,
            os,
            base,
            copy_parallelism: COPY_PARALLELISM,
        })
    }

    /// The same store, copying this many objects at once.
    pub fn with_copy_parallelism(mut self, n: usize) -> Store {
        self.copy_parallelism = n.max(1);
        self
    }

    /// The same store opened anew: credentials resolved again through the AWS chain (a
    /// profile whose keys were rotated, say), as a new process would.
    pub async fn reopen(&self) -> Result<Store, BenchError> {
        Ok(Store::open(&self.root, &self.storage)
            .await?
            .with_copy_parallelism(self.copy_parallelism))
    }

    /// `file` or `s3`, for provenance.
    pub fn scheme(&self) -> &'static str {
        match self.scheme {
            Scheme::File => "file",
            Scheme::S3 => "s3",
        }
    }

    /// The root as a string (part of every cell's key).
    pub fn root_uri(&self) -> String {
        self.root.clone()
    }

    /// URI of `rel` under the root, as lance and `DirectoryNamespace` take it.
    pub fn uri(&self, rel: &str) -> String {
        format!("{}/{rel}", self.root)
    }

    fn path(&self, rel: &str) -> Path {
        rel.split('/')
            .filter(|p| !p.is_empty())
            .fold(self.base.clone(), |p, part| p.join(part))
    }

    /// Create the root if needed and check that everything bench does there is allowed.
    pub async fn prepare(&self) -> Result<(), BenchError> {
        match self.scheme {
            Scheme::File => {
                let path = std::path::Path::new(&self.root);
                let probe = || -> std::io::Result<()> {
                    std::fs::create_dir_all(path)?;
                    tempfile::NamedTempFile::new_in(path)?;
                    Ok(())
                };
                probe().map_err(|e| BenchError::Store {
                    message: format!(
                        "cannot write to store root {}: {e}; choose a writable `root` or --out",
                        path.display()
                    ),
                    source: Some(Box::new(e)),
                })
            }
            Scheme::S3 => preflight::check(self).await,
        }
    }

    /// One try of [`Store::read`].
    async fn read_once(&self, rel: &str) -> Result<Option<Vec<u8>>, BenchError> {
        let what = || format!("cannot read {}", self.uri(rel));
        match self.os.inner.get(&self.path(rel)).await {
            Ok(r) => Ok(Some(
                r.bytes()
                    .await
                    .map_err(|e| BenchError::store_source(what(), e))?
                    .to_vec(),
            )),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(BenchError::store_source(what(), e)),
        }
    }

    /// One try of [`Store::write`].
    async fn write_once(&self, rel: &str, bytes: &[u8]) -> Result<(), BenchError> {
        self.os
            .inner
            .put(&self.path(rel), PutPayload::from(bytes.to_vec()))
            .await
            .map(|_| ())
            .map_err(|e| BenchError::store_source(format!("cannot write {}", self.uri(rel)), e))
    }

    /// Read a small object, `None` when it does not exist.
    pub async fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, BenchError> {
        retrying(|| self.read_once(rel)).await
    }

    /// Write a small object (a whole-object PUT: readers see all of it or nothing).
    pub async fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), BenchError> {
        retrying(|| self.write_once(rel, bytes)).await
    }

    /// Copy one object, server-side on S3.
    pub async fn copy(&self, from: &str, to: &str) -> Result<(), BenchError> {
        retrying(|| self.copy_once(from, to)).await
    }

    /// Delete one object.
    pub async fn delete(&self, rel: &str) -> Result<(), BenchError> {
        retrying(|| self.delete_once(rel)).await
    }

    /// Every object under `rel`, by path relative to `rel`, with its size.
    pub async fn list(&self, rel: &str) -> Result<Listing, BenchError> {
        retrying(|| self.list_once(rel)).await
    }

    /// Write `rel` only if it does not exist (`If-None-Match: *` on S3). `Ok(false)` when it
    /// already existed.
    pub async fn create(&self, rel: &str, bytes: &[u8]) -> Result<bool, object_store::Error> {
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self
            .os
            .inner
            .put_opts(&self.path(rel), PutPayload::from(bytes.to_vec()), opts)
            .await
        {
            Ok(_) => Ok(true),
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. },
            ) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// One try of [`Store::copy`].
    async fn copy_once(&self, from: &str, to: &str) -> Result<(), BenchError> {
        self.os
            .copy(&self.path(from), &self.path(to))
            .await
            .map_err(err(format!(
                "cannot copy {} to {}",
                self.uri(from),
                self.uri(to)
            )))
    }

    /// One try of [`Store::delete`].
    async fn delete_once(&self, rel: &str) -> Result<(), BenchError> {
        self.os
            .delete(&self.path(rel))
            .await
            .map_err(err(format!("cannot delete {}", self.uri(rel))))
    }

    /// One try of [`Store::list`].
    async fn list_once(&self, rel: &str) -> Result<Listing, BenchError> {
        let prefix = self.path(rel);
        let what = format!("cannot list {}", self.uri(rel));
        let metas: Vec<_> = self
            .os
            .list(Some(prefix.clone()))
            .try_collect()
            .await
            .map_err(err(what))?;
        Ok(metas
            .into_iter()
            .filter_map(|m| {
                let rel: Vec<String> = m
                    .location
                    .prefix_match(&prefix)?
                    .map(|p| p.as_ref().to_string())
                    .collect();
                Some((rel.join("/"), m.size))
            })
            .collect())
    }

    /// Remove everything under `rel` (no error if it is absent).
    pub async fn remove_prefix(&self, rel: &str) -> Result<(), BenchError> {
        let what = format!("cannot remove {}", self.uri(rel));
        match self.scheme {
            Scheme::File => match std::fs::remove_dir_all(std::path::Path::new(&self.uri(rel))) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(BenchError::store_source(what, e))
                }
                _ => Ok(()),
            },
            Scheme::S3 => {
                let paths: Vec<Path> = (self.list(rel).await?.into_keys())
                    .map(|o| self.path(&format!("{rel}/{o}")))
                    .collect();
                retrying(|| self.delete_all_once(paths.clone(), rel)).await
            }
        }
    }

    /// One try of removing these objects in bulk: S3's DeleteObjects, up to 1,000 keys a
    /// request (object_store's `delete_stream`). An object already gone counts as removed;
    /// any that failed are named, with how many.
    async fn delete_all_once(&self, paths: Vec<Path>, rel: &str) -> Result<(), BenchError> {
        let n = paths.len();
        let stream = futures::stream::iter(paths.into_iter().map(Ok)).boxed();
        let mut failed: Vec<object_store::Error> = (self.os.inner.delete_stream(stream))
            .filter_map(|r| async move {
                match r {
                    Err(object_store::Error::NotFound { .. }) | Ok(_) => None,
                    Err(e) => Some(e),
                }
            })
            .collect()
            .await;
        let not_removed = failed.len();
        match failed.pop() {
            None => Ok(()),
            // A refused batch names every key of it: the start of its message says enough.
            Some(e) => Err(BenchError::store(format!(
                "cannot remove {} ({not_removed} of its {n} objects, or batches of them, not \
                 removed): {}",
                self.uri(rel),
                shortened(&e.to_string(), 400)
            ))),
        }
    }

    /// Copy every object under `from` to `to` (replacing `to`), except the golden marker,
    /// with bounded parallelism; then check that `to` holds exactly those objects with the
    /// same sizes. Returns the number of objects copied.
    pub async fn copy_prefix(&self, from: &str, to: &str) -> Result<u64, BenchError> {
        self.remove_prefix(to).await?;
        let mut source = self.list(from).await?;
        source.remove(GOLDEN_MARKER);
        if source.is_empty() {
            return Err(BenchError::store(format!(
                "{} holds no objects to copy",
                self.uri(from)
            )));
        }
        futures::stream::iter(source.keys())
            .map(|o| async move {
                let r = self
                    .copy(&format!("{from}/{o}"), &format!("{to}/{o}"))
                    .await;
                crate::fault::point("copy");
                r
            })
            .buffer_unordered(self.copy_parallelism)
            .try_collect::<Vec<()>>()
            .await?;
        let copied = self.list(to).await?;
        if copied != source {
            return Err(BenchError::store(format!(
                "the copy of {} in {} is incomplete: {} of {} objects with matching sizes",
                self.uri(from),
                self.uri(to),
                source
                    .iter()
                    .filter(|(k, v)| copied.get(*k) == Some(v))
                    .count(),
                source.len()
            )));
        }
        Ok(source.len() as u64)
    }
}

/// An `http://` endpoint needs `aws_allow_http`; without it the S3 client refuses every
/// request with a bare "builder error", so say so before anything runs.
pub fn check_http(storage: &BTreeMap<String, String>) -> Result<(), BenchError> {
    let option = |keys: &[&'static str]| -> Option<(&'static str, String)> {
        keys.iter()
            .find_map(|&k| storage.get(k).map(|v| (k, v.clone())))
    };
    let endpoint = option(&[
        "aws_endpoint",
        "aws_endpoint_url",
        "endpoint",
        "endpoint_url",
    ])
    .or_else(|| {
        std::env::var("AWS_ENDPOINT_URL")
            .ok()
            .map(|v| ("AWS_ENDPOINT_URL", v))
    })
    .or_else(|| {
        std::env::var("AWS_ENDPOINT")
            .ok()
            .map(|v| ("AWS_ENDPOINT", v))
    });
    let allowed = option(&["aws_allow_http", "allow_http"])
        .map(|(_, v)| v)
        .or_else(|| std::env::var("AWS_ALLOW_HTTP").ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    match endpoint {
        Some((key, url)) if url.starts_with("http://") && !allowed => {
            Err(BenchError::Usage(format!(
                "{key} `{url}` is plain http://, which the S3 client refuses unless `aws_allow_http` \
             is true: add --storage-option aws_allow_http=true (or aws_allow_http = \"true\" \
             under [storage]), or use an https:// endpoint"
            )))
        }
        _ => Ok(()),
    }
}

/// How many times bench's own store calls (copies, listings, deletes, markers) are tried
/// when the store throttles them or a connection breaks: the object store client retries
/// only what it deems idempotent, and a batch delete is not. Conditional writes are never
/// retried here (a second try could meet the first one's object).
const ATTEMPTS: u32 = 5;

async fn retrying<T, F, Fut>(mut op: F) -> Result<T, BenchError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, BenchError>>,
{
    let mut wait = std::time::Duration::from_millis(100);
    let mut attempt = 1;
    loop {
        match op().await {
            Err(e) if attempt < ATTEMPTS && transient(&e) => {
                tokio::time::sleep(wait).await;
                wait *= 2;
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// A throttle or a broken connection: worth another try.
fn transient(e: &BenchError) -> bool {
    matches!(
        crate::failure::classify(e),
        crate::failure::Fault::Throttled | crate::failure::Fault::Network
    )
}

fn local_root(path: &str) -> Result<String, BenchError> {
    let abs = std::path::absolute(path)
        .map_err(|e| BenchError::store_source(format!("cannot resolve store root {path}"), e))?;
    let s = abs.display().to_string();
    Ok(if s.len() > 1 {
        s.trim_end_matches('/').to_string()
    } else {
        s
    })
}

/// `text` cut to about `max` characters (at a character boundary), with how much was left
/// out.
fn shortened(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let cut = (0..=max)
        .rev()
        .find(|&c| text.is_char_boundary(c))
        .unwrap_or(0);
    format!("{}… ({} characters more)", &text[..cut], text.len() - cut)
}
