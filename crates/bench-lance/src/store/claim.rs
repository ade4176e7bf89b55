//! One sweep per store root. Two sweeps with different results directories but the same
//! root would remove each other's live copies (`runs/`) and goldens (`run.cleanup`), so a
//! run claims its root before it writes anything there, naming itself (results directory,
//! host, pid), and a second sweep on the root is refused with the holder's name.
//!
//! On local disk the claim is an advisory lock on `<root>/_bench_claim.json`, released by
//! the kernel however its holder exits. On S3 it is that object, created only if absent
//! (`If-None-Match: *`) and removed when the run ends; one left by a run that died is taken
//! over by the next run of the same results directory on the same host (which holds that
//! directory's lock, so the old run is gone), and otherwise named with the way to remove it.

use std::fs::{File, TryLockError};
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Scheme, Store};
use crate::error::BenchError;

/// The claim's name under the root.
pub const CLAIM: &str = "_bench_claim.json";

/// Who holds a root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Holder {
    out: String,
    host: String,
    pid: u32,
    since: String,
}

impl Holder {
    fn me(out: &Path) -> Holder {
        let out = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
        Holder {
            out: out.display().to_string(),
            host: crate::worker::protocol::hostname(),
            pid: std::process::id(),
            since: crate::clock::now_utc(),
        }
    }
}

/// A root held for as long as the value lives (local disk), or until [`Claim::release`]
/// (S3).
#[derive(Debug)]
pub enum Claim {
    /// The locked file: the lock lasts as long as it is open.
    Local {
        _file: File,
    },
    S3(Store),
}

fn refused(store: &Store, holder: Option<Holder>, remove: bool) -> BenchError {
    let who = match holder {
        Some(h) => format!(
            "the sweep writing to {} on {} (pid {}, since {})",
            h.out, h.host, h.pid, h.since
        ),
        None => "another sweep".to_string(),
    };
    BenchError::output(format!(
        "store root {} is in use by {who}: two sweeps on one root remove each other's copies \
         and goldens; give this sweep another --root{}",
        store.root_uri(),
        if remove {
            format!(
                ", or, if that sweep is no longer running, remove {} and run again",
                store.uri(CLAIM)
            )
        } else {
            " or wait for it to finish".to_string()
        }
    ))
}

impl Store {
    /// Claim the root for the sweep writing to `out` (whose lock the caller holds).
    pub async fn claim(&self, out: &Path) -> Result<Claim, BenchError> {
        let me = Holder::me(out);
        let bytes = serde_json::to_vec(&me).expect("holder serialises");
        match self.scheme {
            Scheme::File => {
                let path = Path::new(&self.root).join(CLAIM);
                let mut file = crate::lock::open(&path)?;
                match file.try_lock() {
                    Ok(()) => {}
                    Err(TryLockError::WouldBlock) => {
                        let mut text = String::new();
                        let _ = file.read_to_string(&mut text);
                        return Err(refused(self, serde_json::from_str(&text).ok(), false));
                    }
                    Err(TryLockError::Error(e)) => {
                        return Err(BenchError::io("lock claim", &path, e));
                    }
                }
                crate::lock::say(&mut file, &path, &bytes)?;
                Ok(Claim::Local { _file: file })
            }
            Scheme::S3 => {
                let created = self.create(CLAIM, &bytes).await.map_err(|e| {
                    BenchError::store_source(format!("cannot claim {}", self.uri(CLAIM)), e)
                })?;
                if !created {
                    let held: Option<Holder> = self
                        .read(CLAIM)
                        .await?
                        .and_then(|b| serde_json::from_slice(&b).ok());
                    match held {
                        // A run of this results directory on this host that died: take over.
                        Some(h) if h.out == me.out && h.host == me.host => {
                            self.write(CLAIM, &bytes).await?
                        }
                        other => return Err(refused(self, other, true)),
                    }
                }
                Ok(Claim::S3(self.clone()))
            }
        }
    }
}

impl Claim {
    /// Give the root back. On S3 a failure is a warning on stderr: the next run of the same
    /// results directory takes the claim over.
    pub async fn release(self) {
        if let Claim::S3(store) = self
            && let Err(e) = store.delete(CLAIM).await
        {
            crate::out::note(&format!(
                "warning: the claim {} was not removed ({e}); the next run of this results \
                 directory takes it over, another sweep on this root is refused until it is \
                 removed",
                store.uri(CLAIM)
            ));
        }
    }
}
