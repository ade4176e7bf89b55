//! Preflight of an S3 root, before any golden or cell: credentials, bucket, and every
//! operation bench and lance need under the prefix (write, read, list, server-side copy,
//! delete, and conditional PUT, on which lance's commit safety depends).

use std::error::Error;

use super::Store;
use crate::error::BenchError;
use crate::failure::{Fault, classify};

/// Turn a failed step into what is wrong and what to do.
fn explain(store: &Store, step: &str, error: &(dyn Error + 'static)) -> BenchError {
    let root = store.root_uri();
    let bucket = root
        .trim_start_matches("s3://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string();
    let fault = classify(error);
    let what = match fault {
        // Only a missing bucket makes a write (the first step) or a listing not found.
        Fault::NotFound if step == "write" || step == "list" => format!(
            "bucket `{bucket}` does not exist (or these credentials cannot see it); create it \
             or give a bucket that does"
        ),
        Fault::Denied => format!(
            "the store refused these credentials to {step} under {root}; check \
             AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or the policy of the bucket"
        ),
        Fault::NoCredentials => "no AWS credentials found; set AWS_ACCESS_KEY_ID and \
             AWS_SECRET_ACCESS_KEY, choose a profile with AWS_PROFILE, or run where an instance \
             or container role is available"
            .to_string(),
        Fault::Unreachable | Fault::Network => format!(
            "cannot reach the S3 endpoint for {root}; check `aws_endpoint` (and \
             `aws_allow_http` for http://), the network, and that the server is running"
        ),
        Fault::Throttled => format!(
            "the store is throttling requests to {step} under {root} (503 SlowDown); wait and \
             try again, or ask for a higher request rate on the bucket"
        ),
        Fault::NotFound | Fault::Other => format!("cannot {step} under {root}"),
    };
    // The credential chain's own message is a dump of every provider it tried (IMDS
    // included): shown only when asked for.
    if fault == Fault::NoCredentials && std::env::var_os("RUST_LOG").is_none() {
        return BenchError::store(format!(
            "S3 preflight failed: {what} (set RUST_LOG=debug to see what each credential \
             provider answered)"
        ));
    }
    // The first line of the store's answer is enough to tell what it said.
    let error = error.to_string();
    let mut detail: String = error
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(400)
        .collect();
    if detail.len() < error.len() {
        detail.push_str(" …");
    }
    BenchError::store(format!("S3 preflight failed: {what} ({detail})"))
}

/// A read-only look at an S3 root, for `bench plan`: that the bucket is there and these
/// credentials may list it, and how long a request takes there: the median of seven reads
/// of an object that does not exist, in ms (what the request estimate's model takes).
pub async fn look(store: &Store) -> Result<f64, BenchError> {
    store
        .list("_bench_look")
        .await
        .map_err(|e| explain(store, "list", &e))?;
    let mut ms = Vec::new();
    for _ in 0..7 {
        let began = std::time::Instant::now();
        store
            .read("_bench_look/absent")
            .await
            .map_err(|e| explain(store, "read", &e))?;
        ms.push(began.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(crate::stats::median(ms))
}

/// A step whose answer was wrong rather than an error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Unexpected(&'static str);

/// Check the S3 root. Leaves nothing behind when it succeeds.
pub(super) async fn check(store: &Store) -> Result<(), BenchError> {
    let dir = format!(
        "_bench_preflight/{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default()
    );
    let probe = format!("{dir}/probe");
    let copy = format!("{dir}/probe-copy");
    let cond = format!("{dir}/conditional");
    let body = b"bench preflight probe";
    let fail = |step: &str, e: &(dyn Error + 'static)| explain(store, step, e);

    store
        .write(&probe, body)
        .await
        .map_err(|e| fail("write", &e))?;
    match store.read(&probe).await.map_err(|e| fail("read", &e))? {
        Some(b) if b == body => {}
        _ => {
            return Err(fail(
                "read back what was written",
                &Unexpected("the object differs"),
            ));
        }
    }
    let listing = store.list(&dir).await.map_err(|e| fail("list", &e))?;
    if !listing.contains_key("probe") {
        return Err(fail(
            "list",
            &Unexpected("a written object is missing from the listing"),
        ));
    }
    store
        .copy(&probe, &copy)
        .await
        .map_err(|e| fail("copy objects (server-side CopyObject)", &e))?;
    let conditional = "write with If-None-Match: *";
    let first = store
        .create(&cond, body)
        .await
        .map_err(|e| fail(conditional, &e))?;
    let second = store
        .create(&cond, body)
        .await
        .map_err(|e| fail(conditional, &e))?;
    for o in [&probe, &copy, &cond] {
        store.delete(o).await.map_err(|e| fail("delete", &e))?;
    }
    if !first || second {
        return Err(BenchError::store(format!(
            "S3 preflight failed: the store at {} does not honour conditional PUT \
             (If-None-Match: *): a second create of the same object succeeded. Lance's commits \
             are not safe there; use a store that supports conditional writes",
            store.root_uri()
        )));
    }
    Ok(())
}
