//! No secret written anywhere: every configuration key object_store's Amazon, Azure and
//! Google builders (and its HTTP client) accept, read from object_store's own source as
//! cargo fetched it, given to `bench` with a marker value; every key not known to carry no
//! secret has its value in no file bench wrote and in nothing it printed, on local disk and
//! on S3 (moto).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::*;

/// The source folder of the object_store bench builds against: the newest version in
/// Cargo.lock, where cargo unpacked it (`$CARGO_HOME/registry/src/*/object_store-VERSION`).
fn object_store_source() -> PathBuf {
    let lock = std::fs::read_to_string(repo_file("Cargo.lock")).unwrap();
    let mut versions: Vec<(Vec<u64>, String)> = (lock.split("[[package]]"))
        .filter(|p| p.contains("name = \"object_store\"\n"))
        .filter_map(|p| {
            let v = p
                .split("version = \"")
                .nth(1)?
                .split('"')
                .next()?
                .to_string();
            let key = v.split('.').map(|n| n.parse().unwrap_or(0)).collect();
            Some((key, v))
        })
        .collect();
    versions.sort();
    let version = versions.pop().expect("object_store in Cargo.lock").1;
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap()).join(".cargo"));
    let registry = home.join("registry/src");
    (std::fs::read_dir(&registry).unwrap().flatten())
        .map(|index| index.path().join(format!("object_store-{version}")))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| {
            panic!(
                "object_store {version} unpacked under {}",
                registry.display()
            )
        })
}

/// Every key a `FromStr` of `file` accepts: the string literals of its `from_str`'s match,
/// but a prefix it strips (`"aws_"`) and the client options it hands on.
fn keys_of(file: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let start = text.find("fn from_str(s: &str)").expect("a from_str");
    let body = &text[start..];
    let end = body.find("\n    }\n").expect("its end");
    let mut keys = BTreeSet::new();
    for quoted in body[..end].split('"').skip(1).step_by(2) {
        let plain = quoted
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if plain && !quoted.ends_with('_') && !quoted.is_empty() {
            keys.insert(quoted.to_string());
        }
    }
    keys
}

/// Every key of object_store's S3, Azure and Google builders and of its HTTP client, each
/// also under the prefixes the builders take it with.
fn every_key() -> BTreeSet<String> {
    let src = object_store_source().join("src");
    let mut keys = BTreeSet::new();
    for f in ["aws/builder.rs", "azure/builder.rs", "gcp/builder.rs"] {
        keys.extend(keys_of(&src.join(f)));
    }
    for k in keys_of(&src.join("client/mod.rs")) {
        for p in ["", "aws_", "azure_", "google_"] {
            keys.insert(format!("{p}{k}"));
        }
    }
    keys
}

/// Every file under `dir` and every output given, searched for `needle`: where it is.
fn found_in(dir: &Path, outputs: &[&std::process::Output], needle: &str) -> Vec<String> {
    let mut at = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p)
                && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
            {
                at.push(p.display().to_string());
            }
        }
    }
    for (i, o) in outputs.iter().enumerate() {
        for (stream, text) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
            if text.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                at.push(format!("command {i}'s {stream}"));
            }
        }
    }
    at
}

/// The hidden keys with marker values, as `--storage-option KEY=VALUE` arguments.
fn marked(keys: &[String]) -> Vec<String> {
    (keys.iter().enumerate())
        .flat_map(|(i, k)| {
            [
                "--storage-option".to_string(),
                format!("{k}=MARKER{i:03}secretvalue"),
            ]
        })
        .collect()
}

/// The keys whose values bench hides: those object_store takes that are not known to carry
/// no secret. Every credential among them, and none of the store's whereabouts.
fn hidden_keys() -> Vec<String> {
    let all = every_key();
    assert!(
        all.len() > 150,
        "object_store's keys, read from its source: {all:?}"
    );
    let aws = [
        "aws_secret_access_key",
        "aws_access_key_id",
        "aws_session_token",
    ];
    for k in aws {
        use std::str::FromStr;
        assert!(object_store::aws::AmazonS3ConfigKey::from_str(k).is_ok());
        assert!(all.contains(k), "{k}");
    }
    let hidden: Vec<String> = (all.into_iter())
        .filter(|k| !bench_lance::plan::is_public_option(k))
        .collect();
    for k in aws.iter().chain(&[
        "azure_storage_account_key",
        "account_key",
        "master_key",
        "sas_key",
        "azure_storage_sas_token",
        "azure_client_secret",
        "google_service_account_key",
        "google_application_credentials",
        "bearer_token",
        "proxy_url",
    ]) {
        assert!(hidden.iter().any(|h| h == k), "{k} hidden");
    }
    for public in ["aws_endpoint", "aws_region", "aws_allow_http", "bucket"] {
        assert!(!hidden.iter().any(|h| h == public), "{public} shown");
    }
    hidden
}

/// On local disk: `bench plan`, `bench run`, `bench status` and `bench report` given every
/// hidden key; no marker anywhere they wrote or printed. A value given without its key is
/// not echoed either.
#[test]
fn no_value_of_a_hidden_option_is_written_or_printed_on_local_disk() {
    let hidden = hidden_keys();
    let (dir, plan, out) = plan_dir(&tiny_plan());
    let opts = marked(&hidden);
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let with = |cmd: &str, extra: &[&str]| {
        bench()
            .arg(cmd)
            .arg(&plan)
            .arg("--out")
            .arg(&out)
            .args(extra)
            .args(&opts)
            .output()
            .unwrap()
    };
    let planned = with("plan", &[]);
    let ran = with("run", &["--progress", "lines"]);
    assert_eq!(ran.status.code(), Some(0), "{}", stderr(&ran));
    let status = with("status", &[]);
    let report = bench().arg("report").arg(&out).output().unwrap();
    let bare = with("run", &["--storage-option", "MARKERbare0secretvalue"]);
    assert_eq!(bare.status.code(), Some(2), "{}", stderr(&bare));
    let outputs = [&planned, &ran, &status, &report, &bare];
    let leaks = found_in(dir.path(), &outputs, "MARKER");
    assert!(
        leaks.is_empty(),
        "{} hidden keys; a marker in {leaks:?}",
        hidden.len()
    );
    // The run is recorded all the same, its public options kept for a resume.
    assert_eq!(lines(&out.join("results.jsonl")).len(), 8);
}

/// On S3 (moto, which takes any credentials): the credentials themselves given as markers,
/// with every other hidden key; the sweep runs, and no marker is anywhere it wrote or
/// printed, its workers' output and records included.
#[test]
fn no_value_of_a_hidden_option_is_written_or_printed_on_s3() {
    let server = S3Server::start(&[]);
    let hidden: Vec<String> = (hidden_keys().into_iter())
        // Options that would send the S3 client elsewhere for its credentials or encrypt
        // with a customer's key are not for moto; their values are hidden all the same.
        .filter(|k| !k.contains("container_") && !k.contains("sse_") && !k.contains("web_identity"))
        .filter(|k| !k.contains("role_") && !k.contains("metadata") && !k.contains("proxy"))
        .collect();
    let (dir, plan, out) = plan_dir(&tiny_plan().replace("sizes = [100, 1000]", "sizes = [100]"));
    let opts = [server.args("s3://bench/secrets"), marked(&hidden)].concat();
    let o = run_with(
        bench(),
        &plan,
        &out,
        &opts.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert!(records.iter().all(|r| r["verified"] == true), "{records:?}");
    let leaks = found_in(dir.path(), &[&o], "MARKER");
    assert!(leaks.is_empty(), "a marker in {leaks:?}");
    // The credentials were the markers: moto saw them as the access key.
    let by_key = server.counts()["by_access_key"].clone();
    assert!(
        by_key
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k.starts_with("MARKER")),
        "{by_key}"
    );
}

/// A URL given under a public option (an endpoint, a base URL, an authority host) may carry
/// a password and a signature: its userinfo and its secret query values are in no file
/// bench wrote and in nothing it printed, short ones too, while the rest of the URL (the
/// host a resume checks) is kept.
#[test]
fn a_url_option_s_userinfo_and_signature_are_written_and_printed_nowhere() {
    let keys = [
        "endpoint",
        "aws_endpoint_url",
        "endpoint_url_sts",
        "google_base_url",
        "metadata_endpoint",
        "authority_host",
    ];
    let (dir, plan, out) = plan_dir(&tiny_plan().replace("sizes = [100, 1000]", "sizes = [100]"));
    let opts: Vec<String> = (keys.iter().enumerate())
        .flat_map(|(i, k)| {
            [
                "--storage-option".to_string(),
                format!(
                    "{k}=http://MARKERuser{i}:MKp{i}@127.0.0.1:9/x?X-Amz-Signature=MARKERsig{i}"
                ),
            ]
        })
        .collect();
    let with = |cmd: &str| {
        bench()
            .arg(cmd)
            .arg(&plan)
            .arg("--out")
            .arg(&out)
            .args(&opts)
            .output()
            .unwrap()
    };
    let planned = with("plan");
    let ran = with("run");
    assert_eq!(ran.status.code(), Some(0), "{}", stderr(&ran));
    let status = with("status");
    let report = bench().arg("report").arg(&out).output().unwrap();
    let outputs = [&planned, &ran, &status, &report];
    for needle in ["MARKER", ":MKp"] {
        let leaks = found_in(dir.path(), &outputs, needle);
        assert!(leaks.is_empty(), "{needle} in {leaks:?}");
    }
    let state = std::fs::read_to_string(out.join("state.json")).unwrap();
    assert!(state.contains("127.0.0.1:9/x"), "{state}");
}
