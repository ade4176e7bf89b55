//! The cleanup gap in lance 14.0.2, with lance's own API alone (docs/findings/cleanup-gap.md):
//! a warm `DirectoryNamespace` (manifest mode) whose next `__manifest` version a cleanup
//! removed serves the version it holds, whose files the cleanup deleted: every read after it
//! fails, or (where the reader's caches still hold that version's data) misses every commit
//! made since, until the namespace is opened again.
//!
//!   cargo run --release --example cleanup_gap [ROOT]
//!
//! Exits 1 when the reader is stuck (lance 14.0.2), 0 when it recovers.

// lance's crates, as bench-lance depends on them (the same versions and features); no
// bench code is called.
use bench_lance::{lance, lance_namespace, lance_namespace_impls};
use std::collections::HashMap;

use lance::dataset::builder::DatasetBuilder;
use lance::dataset::cleanup::CleanupPolicyBuilder;
use lance_namespace::LanceNamespace;
use lance_namespace::models::{CreateNamespaceRequest, DeclareTableRequest, ListTablesRequest};
use lance_namespace_impls::DirectoryNamespaceBuilder;

async fn open(root: &str) -> lance_namespace_impls::DirectoryNamespace {
    let props = HashMap::from([
        ("root".to_string(), root.to_string()),
        ("manifest_enabled".to_string(), "true".to_string()),
        ("dir_listing_enabled".to_string(), "false".to_string()),
    ]);
    let builder = DirectoryNamespaceBuilder::from_properties(props, None).expect("properties");
    builder.build().await.expect("a namespace")
}

async fn list(ns: &impl LanceNamespace) -> Result<usize, String> {
    let req = ListTablesRequest {
        id: Some(vec!["ns".to_string()]),
        ..Default::default()
    };
    (ns.list_tables(req).await)
        .map(|r| r.tables.len())
        .map_err(|e| e.to_string())
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = std::env::args()
        .nth(1)
        .unwrap_or_else(|| dir.path().display().to_string());
    let (writer, reader) = (open(&root).await, open(&root).await);
    let ns = CreateNamespaceRequest {
        id: Some(vec!["ns".to_string()]),
        ..Default::default()
    };
    writer.create_namespace(ns).await.expect("create ns");
    println!("reader lists ns: {:?}", list(&reader).await);
    for i in 0..10 {
        let req = DeclareTableRequest {
            id: Some(vec!["ns".to_string(), format!("t{i}")]),
            ..Default::default()
        };
        writer.declare_table(req).await.expect("declare");
    }
    // An operator's cleanup of `__manifest`: keep the last 2 versions.
    let manifest = DatasetBuilder::from_uri(format!("{root}/__manifest"))
        .load()
        .await
        .expect("__manifest");
    let policy = CleanupPolicyBuilder::default()
        .retain_n_versions(&manifest, 2)
        .await
        .expect("a policy");
    let removed = manifest
        .cleanup_with_policy(policy.build())
        .await
        .expect("cleanup");
    println!("cleanup removed {} versions", removed.old_versions);
    let fresh = list(&open(&root).await).await;
    println!("a namespace opened now lists ns: {fresh:?}");
    let mut stuck = 0;
    for _ in 0..3 {
        let seen = list(&reader).await;
        println!("the warm reader lists ns: {seen:?}");
        stuck += usize::from(seen.is_err() || seen != fresh);
    }
    if stuck == 3 {
        println!(
            "STUCK: every read of the warm reader after the cleanup failed or missed tables \
             declared before it began"
        );
        std::process::exit(1);
    }
}
