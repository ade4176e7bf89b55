//! A cleanup of a commit that landed, in lance 14.0.2, with lance's own API alone
//! (docs/findings/lost-reply-head.md): creating namespaces through `DirectoryNamespace`
//! (manifest mode) on an S3 store that loses the reply of every 4th conditional PUT after
//! applying it, and answers HEADs of `__manifest`'s versions without the object's length.
//!
//!   python3 scripts/s3-server.py --port 9000 --bucket bench --lose-reply-every 4 \
//!     --head-no-length _versions/ &
//!   AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing \
//!     cargo run --release --example lost_reply_head [ENDPOINT [ROOT]]
//!
//! (`scripts/s3-server.py` is moto's S3 server with those two faults in front of it.) The
//! same program meets the trigger any S3 store produces, a SlowDown burst on the client's
//! look-up instead of the HEAD without length:
//!
//!   python3 scripts/s3-server.py --port 9000 --bucket bench --lose-reply-every 4 \
//!     --slow-down-after-lost-reply 16 &
//!
//! Exits 1 when the catalog is left unreadable (lance 14.0.2), 0 when every commit is kept.

// lance's crates, as bench-lance depends on them (the same versions and features); no
// bench code is called.
use bench_lance::{lance_namespace, lance_namespace_impls};
use std::collections::HashMap;

use lance_namespace::LanceNamespace;
use lance_namespace::models::{CreateNamespaceRequest, ListNamespacesRequest};
use lance_namespace_impls::{DirectoryNamespace, DirectoryNamespaceBuilder};

async fn open(root: &str, endpoint: &str) -> DirectoryNamespace {
    let props = HashMap::from([
        ("root".to_string(), root.to_string()),
        ("manifest_enabled".to_string(), "true".to_string()),
        ("dir_listing_enabled".to_string(), "false".to_string()),
        ("storage.aws_endpoint".to_string(), endpoint.to_string()),
        ("storage.aws_allow_http".to_string(), "true".to_string()),
        ("storage.aws_region".to_string(), "us-east-1".to_string()),
    ]);
    let builder = DirectoryNamespaceBuilder::from_properties(props, None).expect("properties");
    builder.build().await.expect("a namespace")
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let endpoint = args.get(1).map_or("http://127.0.0.1:9000", String::as_str);
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let fresh = format!(
        "s3://bench/lost-reply-head-{}",
        stamp.map_or(0, |d| d.as_millis())
    );
    let root = args.get(2).cloned().unwrap_or(fresh);
    let ns = open(&root, endpoint).await;
    for i in 0..8 {
        let req = CreateNamespaceRequest {
            id: Some(vec![format!("ns{i}")]),
            ..Default::default()
        };
        match ns.create_namespace(req).await {
            Ok(_) => println!("create ns{i}: ok"),
            Err(e) => println!(
                "create ns{i}: {}",
                e.to_string().chars().take(240).collect::<String>()
            ),
        }
    }
    let listed = open(&root, endpoint)
        .await
        .list_namespaces(ListNamespacesRequest {
            id: Some(vec![]),
            ..Default::default()
        })
        .await;
    match listed {
        Ok(r) => println!(
            "a namespace opened now lists {} namespaces",
            r.namespaces.len()
        ),
        Err(e) => {
            let e = e.to_string();
            println!(
                "a namespace opened now cannot list: {}",
                e.chars().take(400).collect::<String>()
            );
            println!("LOST: the catalog's latest version names a file that is gone");
            std::process::exit(1);
        }
    }
}
