//! A paused writer's namespace creation lost, in lance 14.0.2, with lance's own API alone
//! (docs/findings/paused-writer.md; lance's issue #3718): one `DirectoryNamespace` (manifest
//! mode, on S3) creates namespace `a`, and the store holds a PUT of that creation's commit
//! (the new version's data file); meanwhile another `DirectoryNamespace` creates 3
//! namespaces and lance's cleanup of `__manifest` keeps 1 version; then the store serves
//! the held PUT. The creation of `a` answers success; a namespace opened afterwards does
//! not list `a`.
//!
//!   python3 scripts/s3-server.py --port 9000 --bucket bench &
//!   AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing \
//!     cargo run --release --example paused_writer [ENDPOINT]
//!
//! The store's part is `scripts/s3-server.py`'s `hold` (moto's S3 server in front; asked
//! over plain HTTP here): it holds the 7th request under the root from the arming on (on
//! lance 14.0.2, the PUT of the data file of the version a namespace just opened commits;
//! printed), unapplied, until told to go on. Exits 1 when the creation is lost (lance
//! 14.0.2), 0 when it is listed.

// lance's crates, as bench-lance depends on them (the same versions and features); no
// bench code is called.
use bench_lance::{lance, lance_namespace, lance_namespace_impls};
use std::collections::HashMap;
use std::time::Duration;

use lance::dataset::builder::DatasetBuilder;
use lance::dataset::cleanup::CleanupPolicyBuilder;
use lance_namespace::LanceNamespace;
use lance_namespace::models::{CreateNamespaceRequest, ListNamespacesRequest};
use lance_namespace_impls::{DirectoryNamespace, DirectoryNamespaceBuilder};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn storage(endpoint: &str) -> HashMap<String, String> {
    HashMap::from([
        ("aws_endpoint".to_string(), endpoint.to_string()),
        ("aws_allow_http".to_string(), "true".to_string()),
        ("aws_region".to_string(), "us-east-1".to_string()),
    ])
}

async fn open(root: &str, endpoint: &str) -> DirectoryNamespace {
    let mut props = HashMap::from([
        ("root".to_string(), root.to_string()),
        ("manifest_enabled".to_string(), "true".to_string()),
        ("dir_listing_enabled".to_string(), "false".to_string()),
    ]);
    for (k, v) in storage(endpoint) {
        props.insert(format!("storage.{k}"), v);
    }
    let builder = DirectoryNamespaceBuilder::from_properties(props, None).expect("properties");
    builder.build().await.expect("a namespace")
}

async fn create(ns: &DirectoryNamespace, name: &str) -> Result<(), String> {
    let req = CreateNamespaceRequest {
        id: Some(vec![name.to_string()]),
        ..Default::default()
    };
    ns.create_namespace(req)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// One request to the store's control endpoint: its body.
async fn control(endpoint: &str, method: &str, target: &str, body: &str) -> String {
    let host = endpoint.trim_start_matches("http://");
    let mut s = tokio::net::TcpStream::connect(host)
        .await
        .expect("the store");
    let request = format!(
        "{method} {target} HTTP/1.0\r\nHost: {host}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).await.expect("a request");
    let mut answer = String::new();
    s.read_to_string(&mut answer).await.expect("an answer");
    answer
        .split_once("\r\n\r\n")
        .map_or(answer.clone(), |(_, b)| b.to_string())
}

#[tokio::main]
async fn main() {
    let endpoint = std::env::args()
        .nth(1)
        .unwrap_or("http://127.0.0.1:9000".into());
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let prefix = format!("paused-writer-{}", stamp.map_or(0, |d| d.as_millis()));
    let root = format!("s3://bench/{prefix}");
    let others = open(&root, &endpoint).await;
    create(&others, "seed").await.expect("the first namespace");
    let writer = open(&root, &endpoint).await;
    let under = format!("/bench/{prefix}/");
    let armed = format!(r#"{{"under": "{under}", "fault": "hold@7"}}"#);
    control(&endpoint, "POST", "/_bench/arm", &armed).await;
    let held = tokio::spawn(async move { create(&writer, "a").await });
    let status = format!("/_bench/arm?under={}", under.replace('/', "%2F"));
    let held_request = loop {
        let s: serde_json::Value =
            serde_json::from_str(&control(&endpoint, "GET", &status, "").await).expect("JSON");
        if s["paused"] == "paused" {
            let q = &s["requests"][6];
            let text = |k: &str| q[k].as_str().unwrap_or("?").to_string();
            break format!("{} {} ({})", text("method"), text("key"), text("kind"));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    println!("the writer's creation of a is held at {held_request}");
    for name in ["b1", "b2", "b3"] {
        println!(
            "another client creates {name}: {:?}",
            create(&others, name).await
        );
    }
    let manifest = DatasetBuilder::from_uri(format!("{root}/__manifest"))
        .with_storage_options(storage(&endpoint))
        .load()
        .await
        .expect("__manifest");
    let policy = (CleanupPolicyBuilder::default()
        .retain_n_versions(&manifest, 1)
        .await)
        .expect("a policy")
        .build();
    let removed = manifest
        .cleanup_with_policy(policy)
        .await
        .expect("a cleanup");
    println!(
        "a cleanup keeping 1 version removed {} versions",
        removed.old_versions
    );
    control(
        &endpoint,
        "POST",
        "/_bench/resume",
        &format!(r#"{{"under": "{under}"}}"#),
    )
    .await;
    let answer = held.await.expect("the writer");
    println!("the writer's creation of a answers: {answer:?}");
    control(&endpoint, "DELETE", &status, "").await;
    let listed = (open(&root, &endpoint).await)
        .list_namespaces(ListNamespacesRequest {
            id: Some(vec![]),
            ..Default::default()
        })
        .await
        .expect("a listing");
    println!("a namespace opened now lists {:?}", listed.namespaces);
    if answer.is_ok() && !listed.namespaces.iter().any(|n| n == "a") {
        println!("LOST: the creation of a succeeded and no version the catalog reads holds it");
        std::process::exit(1);
    }
}
