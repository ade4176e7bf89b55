//! The cleanup gap (docs/findings/cleanup-gap.md), as lance's own tests are written: a warm
//! `DirectoryNamespace` (manifest mode, on a temporary directory) holds the version of
//! `__manifest` it last read and, before each operation, asks only whether the next version
//! exists. A cleanup that removed that next version leaves it serving its own version,
//! whose files the cleanup deleted too.
//!
//! On lance 14.0.2 every read of the warm reader that reads its version's files fails, and
//! one its caches answer misses the tables declared since, until it is opened again. The
//! patch (docs/findings/patches/cleanup-gap.patch) heals the first; the second it leaves.
//! What a fix must keep passes: a namespace opened after the cleanup reads everything (the
//! cleanup itself loses nothing), and the same warm namespace, as an idle writer, still
//! writes.

use bench_lance::{lance, lance_core, lance_namespace, lance_namespace_impls};
use lance::dataset::builder::DatasetBuilder;
use lance::dataset::cleanup::CleanupPolicyBuilder;
use lance_namespace::LanceNamespace;
use lance_namespace::models::{CreateNamespaceRequest, DeclareTableRequest, ListTablesRequest};
use lance_namespace_impls::{DirectoryNamespace, DirectoryNamespaceBuilder};

async fn open(root: &str) -> DirectoryNamespace {
    DirectoryNamespaceBuilder::new(root)
        .manifest_enabled(true)
        .dir_listing_enabled(false)
        .build()
        .await
        .unwrap()
}

async fn tables(ns: &DirectoryNamespace) -> lance_core::Result<Vec<String>> {
    let req = ListTablesRequest {
        id: Some(vec!["ns".to_string()]),
        ..Default::default()
    };
    let mut names = ns.list_tables(req).await?.tables;
    names.sort();
    Ok(names)
}

async fn declare(ns: &DirectoryNamespace, table: &str) -> lance_core::Result<()> {
    let req = DeclareTableRequest {
        id: Some(vec!["ns".to_string(), table.to_string()]),
        ..Default::default()
    };
    ns.declare_table(req).await.map(|_| ())
}

/// A catalog with namespace `ns`; `warm` opened on it and listing `ns` once; then 10 tables
/// declared by another client and a cleanup of `__manifest` keeping the last 2 versions.
async fn a_cleanup_past(root: &str) -> DirectoryNamespace {
    a_cleanup_past_tables(root, 0).await
}

/// [`a_cleanup_past`] where the first `seen` of the 10 tables are declared before the warm
/// namespace lists `ns` (so its listing reads them, from files the cleanup then removes).
async fn a_cleanup_past_tables(root: &str, seen: usize) -> DirectoryNamespace {
    let writer = open(root).await;
    let req = CreateNamespaceRequest {
        id: Some(vec!["ns".to_string()]),
        ..Default::default()
    };
    writer.create_namespace(req).await.unwrap();
    for i in 0..seen {
        declare(&writer, &format!("t{i}")).await.unwrap();
    }
    let warm = open(root).await;
    assert_eq!(tables(&warm).await.unwrap(), every_table()[..seen].to_vec());
    for i in seen..10 {
        declare(&writer, &format!("t{i}")).await.unwrap();
    }
    let manifest = DatasetBuilder::from_uri(format!("{root}/__manifest"))
        .load()
        .await
        .unwrap();
    let policy = CleanupPolicyBuilder::default()
        .retain_n_versions(&manifest, 2)
        .await
        .unwrap();
    let removed = manifest.cleanup_with_policy(policy.build()).await.unwrap();
    assert!(removed.old_versions > 0, "the cleanup removed versions");
    warm
}

fn every_table() -> Vec<String> {
    let mut names: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_fresh_namespace_reads_the_catalog_after_a_cleanup() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let _warm = a_cleanup_past(root).await;
    assert_eq!(tables(&open(root).await).await.unwrap(), every_table());
}

/// A warm reader whose version's files the cleanup removed: its listing reads them. On
/// lance 14.0.2 it fails (and every listing after it); with the patch
/// (docs/findings/patches/cleanup-gap.patch) the namespace finds the file gone, resolves
/// the latest version and lists that.
#[tokio::test]
async fn a_warm_reader_whose_files_are_gone_reads_the_latest_version() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let warm = a_cleanup_past_tables(root, 5).await;
    let seen = tables(&warm).await;
    let outcome = match seen {
        Ok(names) if names == every_table() => Ok(()),
        seen => Err(format!("the warm reader after the cleanup: {seen:?}")),
    };
    super::red_on_release("cleanup-gap", outcome, "NotFound");
}

/// A warm reader whose listing its caches answer (its version held no table of `ns`): it
/// reads no file, so nothing tells it that its version is gone, and it misses the 10
/// tables declared since, without an error. On lance 14.0.2 and with the patch alike (a
/// fix would spend a request on every read that finds no newer version:
/// docs/findings/cleanup-gap.md).
#[tokio::test]
async fn a_warm_reader_whose_caches_answer_misses_what_was_declared_since() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let warm = a_cleanup_past(root).await;
    let seen = tables(&warm).await;
    let outcome = match seen {
        Ok(names) if names == every_table() => Ok(()),
        seen => Err(format!("the warm reader after the cleanup: {seen:?}")),
    };
    super::red_unpatched(
        "cleanup-gap",
        outcome,
        "the warm reader after the cleanup: Ok([])",
    );
}

/// An idle writer: the same warm namespace declares a table after the cleanup. On 14.0.2
/// its write succeeds and lands in the latest version (a fresh namespace lists every table
/// and the new one), although its reads fail: what a fix must keep.
#[tokio::test]
async fn a_warm_writer_writes_after_a_cleanup() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let warm = a_cleanup_past(root).await;
    declare(&warm, "t10").await.unwrap();
    let mut want = every_table();
    want.push("t10".to_string());
    want.sort();
    assert_eq!(tables(&open(root).await).await.unwrap(), want);
}
