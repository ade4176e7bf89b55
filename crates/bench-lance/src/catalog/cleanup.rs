//! Maintenance: lance's cleanup of `__manifest`'s old versions, run on the catalog's store
//! directly (as an operator's scheduled job runs it), its requests counted with the worker's.

use std::collections::BTreeMap;
use std::sync::Arc;

use lance::dataset::builder::DatasetBuilder;
use lance::dataset::cleanup::CleanupPolicyBuilder;
use lance::session::Session;

use bench_core::oplog::Cleaned;
use bench_core::plan::Retention;

/// What a worker's cleanups use: the catalog's root and storage options, the counting
/// session, and what its role keeps.
pub struct Maintenance {
    pub root: String,
    pub storage: BTreeMap<String, String>,
    pub session: Arc<Session>,
    pub retention: Retention,
}

/// One cleanup (`m`: what the worker was given for it): `__manifest` opened at its latest version, then lance's
/// `cleanup_with_policy` keeping what the role says (files no manifest it keeps references,
/// and only those: unreferenced files younger than lance's 7 days stay, as in-flight
/// commits may own them).
pub async fn run(m: Option<&Maintenance>) -> lance_core::Result<Cleaned> {
    let m = m.ok_or_else(|| {
        lance_core::Error::invalid_input(
            "a cleanup needs what its role keeps, which this worker was not given",
        )
    })?;
    let uri = format!("{}/{}", m.root, super::MANIFEST_DIR);
    let dataset = DatasetBuilder::from_uri(&uri)
        .with_session(m.session.clone())
        .with_storage_options(super::to_hash_map(&m.storage))
        .load()
        .await?;
    let policy = match m.retention {
        Retention::KeepVersions(n) => {
            (CleanupPolicyBuilder::default())
                .retain_n_versions(&dataset, n as usize)
                .await?
        }
        Retention::OlderThanSecs(s) => CleanupPolicyBuilder::default()
            .before_timestamp(chrono::Utc::now() - chrono::Duration::seconds(s as i64)),
    };
    let s = dataset.cleanup_with_policy(policy.build()).await?;
    Ok(Cleaned {
        versions: s.old_versions,
        bytes: s.bytes_removed,
        files: s.old_versions
            + s.data_files_removed
            + s.transaction_files_removed
            + s.index_files_removed
            + s.deletion_files_removed,
        #[cfg(lance_cleanup_counts_failed_deletes)]
        failed_deletes: s.failed_deletes,
        // Releases before 13 do not count them (docs/track-record.md says so).
        #[cfg(not(lance_cleanup_counts_failed_deletes))]
        failed_deletes: 0,
    })
}
