//! What `__manifest` stores while a cell runs (`workload.storage_sample_secs`): its copy
//! listed from release every few seconds and once more after the workers end, through the
//! sweep's own store (not counted with the workers' requests).

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::catalog::MANIFEST_DIR;
use crate::store::Store;
use bench_core::stored::Sample;

/// What `__manifest` under `store`'s root holds now, `t0` being release.
async fn listed(store: &Store, t0: Instant) -> Option<Sample> {
    // Its time is when the listing began (a long one ends seconds later).
    let t_s = t0.elapsed().as_secs_f64();
    let listing = store.list(MANIFEST_DIR).await.ok()?;
    let versions = (listing.keys())
        .filter(|k| k.starts_with("_versions/") && k.ends_with(".manifest"))
        .count() as u64;
    Some(Sample {
        t_s,
        versions,
        files: listing.len() as u64,
        bytes: listing.values().sum(),
    })
}

/// Samples of the copy at `root` every `every` seconds from `released` until `done`, and
/// one after: none where the store cannot be opened or the cell never released. A listing
/// that fails leaves its sample out (the others keep their times).
pub(super) async fn sample(
    root: &str,
    storage: &BTreeMap<String, String>,
    every: u64,
    released: &OnceLock<Instant>,
    mut done: watch::Receiver<bool>,
) -> Vec<Sample> {
    let Ok(store) = Store::open(root, storage).await else {
        return Vec::new();
    };
    let t0 = loop {
        if let Some(t) = released.get() {
            break *t;
        }
        if *done.borrow() {
            return Vec::new();
        }
        tokio::select! {
            _ = done.changed() => {}
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
    };
    let mut out = Vec::new();
    for k in 0u32.. {
        let at = t0 + Duration::from_secs(every) * k;
        tokio::select! {
            _ = tokio::time::sleep_until(at.into()) => {}
            _ = done.wait_for(|&d| d) => break,
        }
        out.extend(listed(&store, t0).await);
    }
    out.extend(listed(&store, t0).await);
    out
}
