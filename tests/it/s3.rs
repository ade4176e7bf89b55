//! The same sweeps on s3:// against a real S3-compatible server on 127.0.0.1 (moto).

use std::path::Path;
use std::process::{Command, Output};

use bench_lance::catalog::{self, CatalogConfig};
use bench_lance::golden::{self, GoldenConfig};
use bench_lance::plan::GoldenSpec;
use bench_lance::store::{CLAIM, GOLDEN_MARKER, Store};

use futures::StreamExt;

use crate::common::*;

fn run_s3(server: &S3Server, plan: &Path, out: &Path, root: &str, extra: &[&str]) -> Output {
    let args = server.args(root);
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.extend(extra);
    run_with(bench_s3(), plan, out, &args)
}

on_every_server!(
    tiny_sweep_on_s3_matches_local_leaves_no_runs_and_reuses_goldens,
    tiny_sweep_on_ceph_s_gateway_leaves_no_runs_and_reuses_goldens,
    tiny_sweep_on_seaweedfs_leaves_no_runs_and_reuses_goldens
        => tiny_sweep_leaves_no_runs_and_reuses_goldens
);

fn tiny_sweep_leaves_no_runs_and_reuses_goldens(backend: Backend) {
    let server = S3Server::start_on(backend, &[]);
    let (_dir, plan, out) = plan_dir(&tiny_plan());
    let o = run_s3(&server, &plan, &out, "s3://bench/test", &[]);
    assert_eq!(o.status.code(), Some(0));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 8);
    for r in &records {
        assert_eq!(r["storage_scheme"], "s3", "{r}");
        assert_eq!(r["verified"], true, "{r}");
        let inline = u64::from(r["variant"] == "inline_index");
        let rows = r["initial_entries"].as_u64().unwrap() + inline;
        assert_eq!(r["manifest_rows_before"].as_u64().unwrap(), rows);
        assert_eq!(
            r["manifest_rows_after"].as_u64().unwrap(),
            rows + r["total_operations"].as_u64().unwrap()
        );
    }
    assert_eq!(
        std::fs::read_to_string(out.join("summary.csv"))
            .unwrap()
            .lines()
            .count(),
        9
    );

    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = rt
        .block_on(Store::open("s3://bench/test", &server.storage()))
        .unwrap();
    assert!(
        rt.block_on(store.list("runs")).unwrap().is_empty(),
        "no run prefixes left"
    );
    assert!(
        rt.block_on(store.list("_bench_preflight"))
            .unwrap()
            .is_empty()
    );
    let goldens = rt.block_on(store.list("golden")).unwrap();
    assert_eq!(
        goldens
            .keys()
            .filter(|k| k.ends_with(GOLDEN_MARKER))
            .count(),
        4
    );

    // Another sweep of the same shapes (its continuous cells only, to be quick) reuses the
    // goldens on the bucket.
    let again = out.with_file_name("again");
    let shapes = "name = 'again'\n[matrix]\nsizes = [100, 1000]\ninline = [true, false]\n\
                  [continuous]\noperations = 2\n";
    let plan_again = again.with_extension("toml");
    std::fs::write(&plan_again, shapes).unwrap();
    let o = run_s3(&server, &plan_again, &again, "s3://bench/test", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.matches(": reused").count(), 4, "{err}");
    assert!(!err.contains("built"), "{err}");

    // The root's claim is given back when a run ends. One left by another sweep that died
    // refuses this one (nothing written), naming it and the way out; one left by a run of
    // this very directory on this host is taken over.
    assert_eq!(rt.block_on(store.read(CLAIM)).unwrap(), None);
    let claim = |out: &Path| {
        serde_json::json!({
            "out": std::path::absolute(out).unwrap(), "host": std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim(),
            "pid": 1, "since": "2026-01-01T00:00:00Z"
        })
        .to_string()
    };
    let elsewhere = out.with_file_name("elsewhere");
    rt.block_on(store.write(CLAIM, claim(&elsewhere).as_bytes()))
        .unwrap();
    let before = std::fs::read(out.join("results.jsonl")).unwrap();
    let o = run_s3(&server, &plan, &out, "s3://bench/test", &["--fresh"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains(elsewhere.to_str().unwrap())
            && err.contains("remove s3://bench/test/_bench_claim.json"),
        "{err}"
    );
    assert_eq!(std::fs::read(out.join("results.jsonl")).unwrap(), before);
    rt.block_on(store.write(CLAIM, claim(&out).as_bytes()))
        .unwrap();
    let o = run_s3(&server, &plan, &out, "s3://bench/test", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(rt.block_on(store.read(CLAIM)).unwrap(), None);
}

/// A measured, verified run is never lost to its cleanup: when the store refuses to
/// remove the cell's copy (and, at the end, `runs/`), the record is kept, the sweep says
/// what is left, and it succeeds.
/// A resume needs only the plan: a sweep run with `--root s3://…` and its storage options
/// resumes (and `bench status` reads it) from `bench run PLAN` alone, the store taken from
/// the checkpoint and said; nothing runs again.
#[test]
fn an_s3_sweep_resumes_from_the_plan_alone() {
    let server = S3Server::start(&[]);
    let text = "name = 'again'\n[matrix]\nsizes = [10]\ninline = [false]\n\
                [continuous]\noperations = 2\n[run]\nrepetitions = 1\n";
    let (_d, plan, out) = plan_dir(text);
    let args = server.args("s3://bench/again");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run_with(bench_s3(), &plan, &out, &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let before = std::fs::read(out.join("results.jsonl")).unwrap();
    let o = run_with(bench_s3(), &plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(
        said.contains(
            "the store it was run against, as its checkpoint keeps it: --root s3://bench/again"
        ),
        "{said}"
    );
    assert!(
        said.contains("0 cells run, 1 already done") || said.contains("1 already done"),
        "{said}"
    );
    assert_eq!(std::fs::read(out.join("results.jsonl")).unwrap(), before);
    let o = bench_s3()
        .args([
            "status",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("1 done"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn a_copy_the_store_will_not_remove_costs_no_measurement() {
    let server = S3Server::start(&["--deny-delete", "runs/"]);
    let text = "name = \"undeletable\"\n[matrix]\nsizes = [100]\ninline = [false]\n\
                [continuous]\noperations = 2\n";
    let (_dir, plan, out) = plan_dir(text);
    let o = run_s3(&server, &plan, &out, "s3://bench/undeletable", &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 1, "{err}");
    assert_eq!(records[0]["verified"], true);
    assert!(
        err.contains("was not removed") && err.contains("its results are kept"),
        "{err}"
    );
    assert!(
        err.contains("cleanup (run.cleanup) did not finish"),
        "{err}"
    );
    assert!(server.counts()["denied"].as_u64().unwrap() > 0);
}

/// Credentials from a profile's `credential_process` that expire in 5 minutes, against a
/// sweep estimated at about 15: `bench plan` says so, and `bench run` before any cell
/// (stopped there with Ctrl-C); static keys from the environment give no warning; no
/// secret is printed.
#[test]
fn credentials_that_expire_before_the_estimated_end_are_said_before_any_cell() {
    use std::io::BufRead;
    use std::os::unix::fs::PermissionsExt;
    let server = S3Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let expiry = (chrono::Utc::now() + chrono::Duration::minutes(5))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let process = dir.path().join("creds.sh");
    std::fs::write(
        &process,
        format!(
            "#!/bin/sh\necho '{{\"Version\": 1, \"AccessKeyId\": \"testing\", \
             \"SecretAccessKey\": \"s3cr3t-process\", \"SessionToken\": \"tok-process\", \
             \"Expiration\": \"{expiry}\"}}'\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&process, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = dir.path().join("config");
    std::fs::write(
        &config,
        format!(
            "[profile bench]\ncredential_process = {}\n",
            process.display()
        ),
    )
    .unwrap();
    let plan = dir.path().join("long.toml");
    std::fs::write(
        &plan,
        "name = 'long'\n[matrix]\nsizes = [100]\ninline = [false]\n[concurrent]\n\
         concurrency = [2]\nduration_secs = 900\n[run]\ncell_timeout_secs = 2000\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let with_profile = || {
        let mut c = bench();
        c.env("AWS_CONFIG_FILE", &config)
            .env("AWS_SHARED_CREDENTIALS_FILE", dir.path().join("none"))
            .env("AWS_PROFILE", "bench")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_SECRET_ACCESS_KEY")
            .env_remove("AWS_SESSION_TOKEN");
        c
    };
    let args = server.args("s3://bench/creds");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let no_secret = |text: &str| {
        assert!(
            !text.contains("s3cr3t") && !text.contains("tok-process"),
            "{text}"
        );
    };

    let o = with_profile()
        .arg("plan")
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .args(&args)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        text.contains("credentials: a profile's credential_process (profile bench), expiring"),
        "{text}"
    );
    assert!(
        text.contains("warning: the credentials from a profile's credential_process"),
        "{text}"
    );
    no_secret(&text);

    let mut child = spawn_sweep(with_profile(), "run", &plan, &out, &args);
    let mut before = Vec::new();
    for line in std::io::BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        let warned = line.contains("warning: the credentials from a profile's");
        before.push(line);
        if warned {
            break;
        }
    }
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    let said = before.join("\n");
    assert!(said.contains("warning: the credentials"), "{said}");
    assert!(
        !said.contains("golden inline"),
        "before any golden or cell: {said}"
    );
    no_secret(&said);
    assert_eq!(status.code(), Some(130), "{said}");

    // Static keys from the environment: a line, no warning.
    let o = bench_s3()
        .arg("plan")
        .arg(&plan)
        .arg("--out")
        .arg(dir.path().join("out2"))
        .args(&args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        text.contains("credentials: the environment (AWS_ACCESS_KEY_ID)"),
        "{text}"
    );
    assert!(!text.contains("EnvironmentVariable"), "{text}");
    assert!(text.contains("static keys"), "{text}");
    assert!(!text.contains("warning"), "{text}");
}

/// `bench plan`'s request estimate against the server's own count, in all and kind by kind:
/// a priori (the model) and, for a re-run of the same cells under another key, from the
/// first run's records. The bounds are docs/s3.md's.
#[test]
fn the_request_estimate_comes_close_to_the_servers_count() {
    let server = S3Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("acc.toml");
    let text = "name = 'acc'\n[matrix]\nsizes = [1000]\ninline = [true, false]\n\
                [continuous]\noperations = 10\n[concurrent]\nconcurrency = [2]\noperations = 12\n\
                [run]\ncommit_retries = 20\n";
    let out = dir.path().join("out");
    let args = server.args("s3://bench/acc");
    let args_ref: Vec<&str> = args.iter().map(String::as_str).collect();
    // (edit, the bound on the total, the factor on each kind; on DELETEs, which retries
    // after a conflict make and whose number varies from run to run, a wider one)
    for (edit, within, (factor, deletes)) in [
        ("commit_retries = 20", 0.25, (2.0, 3.0)),
        ("commit_retries = 19", 0.10, (1.25, 2.0)),
    ] {
        std::fs::write(&plan, text.replace("commit_retries = 20", edit)).unwrap();
        let (guess, line) = estimated_requests(&plan, &out, &args);
        server.take_counts();
        let o = sweep_with(bench_s3(), "run", &plan, &out, &args_ref);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let counts = server.take_counts();
        let real: f64 = ["get", "head", "put", "list", "copy", "delete"]
            .iter()
            .map(|k| counts[k].as_f64().unwrap())
            .sum();
        assert!(
            (guess / real - 1.0).abs() <= within,
            "{edit}: estimated {guess}, the server counted {real}"
        );
        for (word, key) in [
            ("GET", "get"),
            ("HEAD", "head"),
            ("PUT", "put"),
            ("LIST", "list"),
            ("COPY", "copy"),
            ("DELETE", "delete"),
        ] {
            let est = estimated_kind(&line, word);
            let got = counts[key].as_f64().unwrap();
            let factor = if key == "delete" { deletes } else { factor };
            assert!(
                est <= got * factor && got <= est * factor,
                "{edit}: {word} estimated {est}, the server counted {got} (within {factor}x): {line}; {counts}"
            );
        }
    }
}

/// One kind's count in `bench plan`'s estimate line (`1,272 GET, 1,493 HEAD, …`).
fn estimated_kind(line: &str, word: &str) -> f64 {
    let counts = line.split(": ").nth(1).unwrap().split(';').next().unwrap();
    counts
        .split(", ")
        .find_map(|part| {
            let mut w = part.split(' ');
            let n = w.next()?.replace(',', "").parse::<f64>().ok()?;
            (w.next() == Some(word)).then_some(n)
        })
        .unwrap_or_else(|| panic!("no {word} in {line}"))
}

on_both_servers!(
    /// Removing a prefix of N objects takes one listing (⌈N/1000⌉ pages) and ⌈N/1000⌉ delete
    /// requests (S3's DeleteObjects), as the server counts them; what is left is nothing.
    a_prefix_is_removed_in_bulk,
    on_ceph_s_gateway_a_prefix_is_removed_in_bulk => prefix_removed_in_bulk
);

fn prefix_removed_in_bulk(backend: Backend) {
    let server = S3Server::start_on(backend, &[]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = Store::open("s3://bench/bulk", &server.storage())
            .await
            .unwrap();
        store.prepare().await.unwrap();
        let n = 1001;
        futures::stream::iter(0..n)
            .map(|i| {
                let store = &store;
                async move { store.write(&format!("runs/c/o{i}"), b"x").await }
            })
            .buffer_unordered(32)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        assert_eq!(store.list("runs/c").await.unwrap().len(), n);
        server.take_counts();
        store.remove_prefix("runs/c").await.unwrap();
        let counts = server.take_counts();
        assert_eq!(
            counts["delete"], 2,
            "1,001 objects in two requests: {counts}"
        );
        // One listing, two pages of 1,000 (S3 may answer a page short of 1,000 with more
        // to come, as Ceph's gateway sometimes does: a third page then).
        let pages = counts["list"].as_u64().unwrap();
        assert!(
            pages == 2 || (backend == Backend::Rgw && pages == 3),
            "one listing, two pages of 1,000: {counts}"
        );
        assert!(store.list("runs/c").await.unwrap().is_empty());
    });
}

on_both_servers!(
    a_cells_copy_holds_exactly_the_goldens_objects_and_leaves_the_golden_unchanged,
    on_ceph_s_gateway_a_cells_copy_holds_exactly_the_goldens_objects
        => cells_copy_holds_the_goldens_objects
);

fn cells_copy_holds_the_goldens_objects(backend: Backend) {
    let server = S3Server::start_on(backend, &[]);
    let storage = server.storage();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = Store::open("s3://bench/iso", &storage).await.unwrap();
        store.prepare().await.unwrap();
        let spec = GoldenSpec::catalog(500, true);
        let cfg = GoldenConfig {
            storage: &storage,
            commit_retries: 20,
        };
        let (g, reused) = golden::ensure(&store, spec, &cfg).await.unwrap();
        assert!(!reused);
        let mut before = store.list(&g.rel).await.unwrap();
        assert!(before.remove(GOLDEN_MARKER).is_some());
        let n = store.copy_prefix(&g.rel, "runs/cell").await.unwrap();
        assert_eq!(n as usize, before.len());
        assert_eq!(
            store.list("runs/cell").await.unwrap(),
            before,
            "same objects, same sizes"
        );

        // Commit into the copy; the golden does not change.
        let ns = std::sync::Arc::new(
            catalog::open(&CatalogConfig {
                root: store.uri("runs/cell"),
                inline: true,
                commit_retries: 20,
                storage: storage.clone(),
                properties: Default::default(),
            })
            .await
            .unwrap(),
        );
        let data = catalog::table_ipc();
        for i in 0..3 {
            let id = catalog::object_id(bench_lance::plan::Operation::CreateNamespace, 0, i, "")
                .unwrap();
            catalog::execute(
                ns.clone(),
                bench_lance::plan::Operation::CreateNamespace,
                catalog::Aim::entry(id),
                &catalog::Inputs::catalog(&data),
            )
            .await
            .unwrap();
        }
        assert_eq!(
            catalog::manifest_rows(&store.uri("runs/cell"), &storage)
                .await
                .unwrap(),
            504
        );
        let mut after = store.list(&g.rel).await.unwrap();
        after.remove(GOLDEN_MARKER);
        assert_eq!(after, before, "the golden is unchanged");
        assert_eq!(
            catalog::manifest_rows(&store.uri(&g.rel), &storage)
                .await
                .unwrap(),
            501
        );
        assert!(golden::find(&store, spec).await.is_some());
    });
}

#[test]
fn preflight_failures_each_say_what_is_wrong_and_write_nothing() {
    let server = S3Server::start(&[]);
    let lax = S3Server::start(&["--ignore-conditional-put"]);
    let strict = S3Server::start(&["--auth"]);
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (dir, plan, _) = plan_dir(&tiny_plan());
    let opts = |endpoint: &str| {
        vec![
            "--storage-option".to_string(),
            format!("aws_endpoint={endpoint}"),
            "--storage-option".into(),
            "aws_allow_http=true".into(),
            "--storage-option".into(),
            "aws_region=us-east-1".into(),
        ]
    };
    let cases: Vec<(&str, String, Vec<String>, bool, &str)> = vec![
        (
            "wrong keys",
            "s3://bench/x".into(),
            opts(&strict.endpoint),
            true,
            "refused these credentials",
        ),
        (
            "missing bucket",
            "s3://nobucket/x".into(),
            opts(&server.endpoint),
            true,
            "bucket `nobucket` does not exist",
        ),
        (
            "unreachable",
            "s3://bench/x".into(),
            opts(&format!("http://127.0.0.1:{dead}")),
            true,
            "cannot reach the S3 endpoint",
        ),
        (
            "no conditional put",
            "s3://bench/x".into(),
            opts(&lax.endpoint),
            true,
            "does not honour conditional PUT",
        ),
        (
            "no credentials",
            "s3://bench/x".into(),
            opts(&server.endpoint),
            false,
            "no AWS credentials found",
        ),
    ];
    for (i, (name, root, options, creds, needle)) in cases.into_iter().enumerate() {
        let out = dir.path().join(format!("out{i}"));
        let mut cmd = if creds { bench_s3() } else { bench() };
        if !creds {
            cmd.env_remove("AWS_ACCESS_KEY_ID")
                .env_remove("AWS_SECRET_ACCESS_KEY")
                .env_remove("AWS_PROFILE")
                .env("AWS_EC2_METADATA_DISABLED", "true")
                .env("AWS_CONFIG_FILE", dir.path().join("none"))
                .env("AWS_SHARED_CREDENTIALS_FILE", dir.path().join("none"));
        }
        let o = cmd
            .arg("run")
            .arg(&plan)
            .arg("--out")
            .arg(&out)
            .args(["--root", &root])
            .args(&options)
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(4), "{name}: {err}");
        assert!(
            err.contains("S3 preflight failed") && err.contains(needle),
            "{name}: {err}"
        );
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{name}: one message: {err}"
        );
        assert!(!out.exists(), "{name}: nothing is written");
    }
    // `bench plan` lists the cells all the same, and says what is wrong with the store.
    let out = dir.path().join("planned");
    let o = bench_s3()
        .arg("plan")
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .args(["--root", "s3://nobucket/x"])
        .args(opts(&server.endpoint))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(0), "{text}{}", stderr(&o));
    assert!(
        text.contains("warning: the store cannot be used as it is")
            && text.contains("bucket `nobucket` does not exist"),
        "{text}"
    );
    assert!(!out.exists(), "bench plan writes nothing");
}

#[test]
fn no_secret_reaches_results_state_logs_or_worker_command_lines() {
    let server = S3Server::start(&[]);
    let secret = "Sup3rSecretValue-do-not-print";
    let text = tiny_plan()
        .replace("sizes = [100, 1000]", "sizes = [100]")
        .replace("inline = [true, false]", "inline = [false]")
        .replace("duration_secs = 2", "duration_secs = 3");
    let (_dir, plan, out) = plan_dir(&text);
    let child = bench()
        .arg("run")
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .args(["--root", "s3://bench/secret", "--progress", "lines"])
        .args(server.options())
        .args(["--storage-option", "aws_access_key_id=testing"])
        .args([
            "--storage-option",
            &format!("aws_secret_access_key={secret}"),
        ])
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read the workers' command lines while the concurrent cell runs.
    let mut seen = 0;
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(60) && seen < 2 {
        for pid in processes_mentioning("s3://bench/secret/runs/") {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            assert!(cmdline.contains(" worker "), "{cmdline}");
            assert!(
                !cmdline.contains(secret),
                "secret on a worker command line: {cmdline}"
            );
            seen += 1;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(seen >= 2, "saw the workers");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let logs = format!("{}{}", stderr(&o), String::from_utf8_lossy(&o.stdout));
    assert!(!logs.contains(secret), "secret in the logs");
    for f in ["results.jsonl", "summary.csv", "state.json"] {
        let text = std::fs::read_to_string(out.join(f)).unwrap();
        assert!(!text.contains(secret), "secret in {f}");
    }
    assert_eq!(lines(&out.join("results.jsonl")).len(), 2);
}

/// `run.local_requests = "s3"`: a local cell's workers make the requests a cell on S3 makes
/// (by kind, per commit, as the server counts them through the workers), where lance's own
/// local store makes others (direct file reads in 4 KiB blocks, a version-hint file).
#[test]
fn s3_shaped_local_requests_are_the_requests_of_s3() {
    let server = S3Server::start(&[]);
    let text = "name = 'shape'\n[matrix]\nsizes = [1000]\ninline = [false, true]\n\
                [continuous]\noperations = 8\n";
    let per_op = |out: &Path| -> Vec<(String, serde_json::Value)> {
        lines(&out.join("results.jsonl"))
            .into_iter()
            .map(|r| {
                assert_eq!(r["verified"], true, "{r}");
                (r["bench_tag"].as_str().unwrap().to_string(), r)
            })
            .collect()
    };
    let (_d1, plan, out_s3) = plan_dir(text);
    let o = run_s3(&server, &plan, &out_s3, "s3://bench/shape", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (_d2, shaped_plan, out_shaped) =
        plan_dir(&format!("{text}[run]\nlocal_requests = \"s3\"\n"));
    let root = out_shaped.with_file_name("store");
    let o = run(
        &shaped_plan,
        &out_shaped,
        &["--root", root.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (_d3, native_plan, out_native) = plan_dir(text);
    let root = out_native.with_file_name("store");
    let o = run(
        &native_plan,
        &out_native,
        &["--root", root.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (on_s3, shaped, native) = (per_op(&out_s3), per_op(&out_shaped), per_op(&out_native));
    assert_eq!(on_s3.len(), 2);
    for (((tag, s3), (tag2, local)), (_, own)) in on_s3.iter().zip(&shaped).zip(&native) {
        assert_eq!(tag, tag2);
        assert_eq!(local["local_requests"], "s3", "{local}");
        assert!(own.get("local_requests").is_none(), "{own}");
        assert_eq!(local["storage_scheme"], "file", "{local}");
        for k in ["get", "put", "conditional_put", "head"] {
            assert_eq!(
                local["io_per_op"][k], s3["io_per_op"][k],
                "{tag}: {k}: S3-shaped local {local} against S3 {s3}"
            );
        }
        // One LIST a commit to find the latest version (S3 lists in order and stops at
        // the first page; a local listing is unordered and read to its end).
        let list = |r: &serde_json::Value| r["io_per_op"]["list"].as_f64().unwrap();
        assert!(list(local) >= 1.0 && list(s3) >= 1.0, "{local} {s3}");
        assert!((list(local) - list(s3)).abs() <= 0.5, "{local} {s3}");
        // Lance's own local store reads files around the object-store layer, in smaller
        // blocks, and writes a version hint: other counts.
        assert_ne!(own["io_per_op"]["get"], s3["io_per_op"]["get"], "{own}");
        assert_ne!(own["io_per_op"]["put"], s3["io_per_op"]["put"], "{own}");
    }
}

on_every_server!(
    /// Writers that contend for `__manifest` race on its conditional PUT, and the store
    /// alone decides each race (on Ceph's gateway and SeaweedFS there is no lock in front
    /// of it): some PUTs are answered 412, and no commit is lost (every cell verified), in
    /// every mode.
    contending_writers_lose_no_commit_on_moto,
    contending_writers_lose_no_commit_on_ceph_s_gateway,
    contending_writers_lose_no_commit_on_seaweedfs => writers_race_on_the_store
);

fn writers_race_on_the_store(backend: Backend) {
    let server = S3Server::start_on(backend, &[]);
    let (_dir, plan, out) = plan_dir(
        "name = 'race'\n[matrix]\nsizes = [100]\ninline = [false]\n\
         [continuous]\noperations = 5\n[concurrent]\nconcurrency = [4]\noperations = 24\n\
         [mixed]\nclients = [3]\nreads_per_write = 2\nread_operation = 'warm-read-list-tables'\n\
         duration_secs = 2\n[run]\ncommit_retries = 50\n",
    );
    let o = run_s3(&server, &plan, &out, "s3://bench/race", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 3);
    for r in &records {
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["errors"], 0, "{r}");
    }
    let counts = server.counts();
    assert!(
        counts["precondition_failed"].as_u64().unwrap() > 0,
        "four writers at once lost some conditional PUTs: {counts}"
    );
}

/// Preflight on a real S3 server: it passes (the store refuses a second conditional PUT
/// of one key by itself), and keys the server does not know are refused by the server,
/// with nothing written.
#[test]
fn preflight_on_ceph_s_gateway_checks_its_conditional_put_and_its_keys() {
    let server = S3Server::start_on(Backend::Rgw, &[]);
    let (_dir, plan, out) = plan_dir(&tiny_plan());
    let o = bench_s3()
        .arg("plan")
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .args(server.args("s3://bench/pre"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = bench_s3()
        .env("AWS_SECRET_ACCESS_KEY", "not-the-secret")
        .arg("run")
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .args(server.args("s3://bench/pre"))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("s3://bench/pre"), "{err}");
    assert!(!out.join("results.jsonl").exists());
    assert!(!err.contains("not-the-secret"), "{err}");
}

/// `scripts/rgw-up.sh` starts a cluster whose gateway answers S3; two run side by side in
/// two folders; `scripts/rgw-down.sh` leaves no process of either and removes its folder.
#[test]
fn ceph_s_gateway_starts_with_rgw_up_and_rgw_down_leaves_no_process() {
    let (a, b) = (RgwCluster::start(), RgwCluster::start());
    assert_ne!(a.endpoint, b.endpoint);
    for c in [&a, &b] {
        let dir = c.dir.to_str().unwrap().to_string();
        // A daemon of each kind, running from this cluster's folder.
        let pids = processes_mentioning(&dir);
        assert!(pids.len() >= 3, "{dir}: {pids:?}");
        let env = std::fs::read_to_string(c.dir.join("env")).unwrap();
        for key in [
            "RGW_ENDPOINT",
            "RGW_BUCKET",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
        ] {
            assert!(env.contains(&format!("export {key}=")), "{env}");
        }
    }
    // Run again on a cluster that is up, the script reuses it.
    let again = Command::new(repo_file("scripts/rgw-up.sh"))
        .arg(&a.dir)
        .output()
        .unwrap();
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).contains(&a.endpoint));
    for c in [a, b] {
        let dir = c.dir.clone();
        let needle = dir.to_str().unwrap().to_string();
        drop(c);
        assert!(
            processes_mentioning(&needle).is_empty(),
            "{needle}: a process is left"
        );
        assert!(!dir.exists());
    }
}

/// An interrupted test run leaves no Ceph daemon behind: a cluster started for an owner
/// process (`RGW_OWNER_PID`, as the tests start theirs) stops by itself once the owner is
/// gone, however it ended (here SIGKILL), and its folder goes with it.
#[test]
fn ceph_s_gateway_stops_by_itself_when_its_owner_dies() {
    let mut owner = Command::new("sleep").arg("600").spawn().unwrap();
    let dir = tempfile::Builder::new()
        .prefix("bench-rgw-owned-")
        .tempdir()
        .unwrap()
        .keep();
    let up = Command::new(repo_file("scripts/rgw-up.sh"))
        .arg(&dir)
        .env("RGW_OWNER_PID", owner.id().to_string())
        .output()
        .unwrap();
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let needle = dir.to_str().unwrap().to_string();
    assert!(processes_mentioning(&needle).len() >= 3);
    owner.kill().unwrap();
    owner.wait().unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !processes_mentioning(&needle).is_empty() || dir.exists() {
        assert!(std::time::Instant::now() < until, "{needle}: left behind");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

on_both_servers!(
    /// A sweep on S3 killed (SIGKILL) while copying a golden, mid-cell and between a result
    /// and its checkpoint resumes with the same command: every cell recorded once and
    /// verified, its root's claim taken over, no run copy left in the bucket.
    a_sweep_on_s3_killed_anywhere_resumes_with_each_cell_once,
    a_sweep_on_ceph_s_gateway_killed_anywhere_resumes_with_each_cell_once
        => killed_then_resumed
);

fn killed_then_resumed(backend: Backend) {
    let server = S3Server::start_on(backend, &[]);
    let (_dir, plan, out) = plan_dir(
        "name = 'resume'\n[matrix]\nsizes = [100]\ninline = [true, false]\n\
         [continuous]\noperations = 4\n[concurrent]\nconcurrency = [2]\nduration_secs = 1\n",
    );
    let root = "s3://bench/resume";
    let count = |out: &Path| {
        let mut by: std::collections::BTreeMap<String, usize> = Default::default();
        for r in lines(&out.join("results.jsonl")) {
            *by.entry(r["bench_tag"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
        by
    };
    for point in ["copy", "cell", "append"] {
        let args = server.args(root);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut crashing = bench_s3();
        crashing.env("BENCH_FAULT", point);
        let o = run_with(crashing, &plan, &out, &args);
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&o.status),
            Some(libc::SIGKILL),
            "{point}: {}",
            stderr(&o)
        );
        assert!(count(&out).values().all(|&n| n == 1), "{point}");
    }
    let o = run_s3(&server, &plan, &out, root, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let by = count(&out);
    assert_eq!(by.len(), 4, "{by:?}");
    assert!(by.values().all(|&n| n == 1), "{by:?}");
    for r in lines(&out.join("results.jsonl")) {
        assert_eq!(r["verified"], true, "{r}");
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = rt.block_on(Store::open(root, &server.storage())).unwrap();
    assert!(rt.block_on(store.list("runs")).unwrap().is_empty());
    assert_eq!(rt.block_on(store.read(CLAIM)).unwrap(), None);
}

/// `bench publish` to an s3:// URI and `bench history` from it: the same table on the
/// store, published once however often; an endpoint that does not answer is refused before
/// anything is written, naming the URI.
#[test]
fn results_publish_to_s3_once_and_their_history_reads_back() {
    let server = S3Server::start(&[]);
    let plan_text = "name = \"pub\"\noperation = \"write-create-namespace\"\n[matrix]\nsizes = [100]\n\
                     inline = [false]\n[continuous]\noperations = 5\n";
    let (_dir, plan, out) = plan_dir(plan_text);
    let o = run(&plan, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let on_s3 = |cmd: &str, target: &[&str], options: &[String]| {
        bench_s3()
            .arg(cmd)
            .args(target)
            .args(options)
            .output()
            .unwrap()
    };
    let to = ["publish", out.to_str().unwrap(), "--to", "s3://bench/db"];
    for expect in ["published 5 rows", "published 0 rows"] {
        let o = on_s3(to[0], &to[1..], &server.options());
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(expect),
            "{}",
            stderr(&o)
        );
    }
    let charts = out.join("history");
    let o = on_s3(
        "history",
        &["s3://bench/db", "--charts", charts.to_str().unwrap()],
        &server.options(),
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    let host = bench_lance::worker::protocol::hostname();
    assert!(
        text.contains(&format!(
            "manifest/pub/file/direct/cont_inline_false_rows_100 on {host} (nanoseconds, 1 result;"
        )),
        "{text}"
    );
    let chart = bench_lance::history::file_name(&format!(
        "manifest/pub/file/direct/cont_inline_false_rows_100 on {host}"
    ));
    assert!(charts.join(chart).is_file());

    let nowhere = [
        "--storage-option".to_string(),
        "aws_endpoint=http://127.0.0.1:9".to_string(),
        "--storage-option".to_string(),
        "aws_allow_http=true".to_string(),
        "--storage-option".to_string(),
        "aws_region=us-east-1".to_string(),
    ];
    let o = on_s3(
        "publish",
        &[out.to_str().unwrap(), "--to", "s3://bench/elsewhere"],
        &nowhere,
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot publish to s3://bench/elsewhere")
            && stderr(&o).contains("cannot reach"),
        "{}",
        stderr(&o)
    );
}

/// The removals on S3, where a dropped table's directory is a prefix with nothing under it.
#[test]
fn removals_on_s3_are_verified_and_their_requests_counted() {
    let server = S3Server::start(&[]);
    for op in crate::catalog_ops::REMOVALS {
        let text = format!(
            "name = 'ops'\noperation = '{op}'\n[matrix]\nsizes = [60]\ninline = [false]\n\
             [continuous]\noperations = 6\n"
        );
        let (_d, o, records) = sweep_s3(&server, "s3://bench/ops", &text);
        assert_eq!(o.status.code(), Some(0), "{op}: {}", stderr(&o));
        let r = &records[0];
        assert_eq!(r["verified"], true, "{op}: {r}");
        assert_eq!(r["errors"], 0, "{op}: {r}");
        assert_eq!(
            r["manifest_rows_after"].as_u64().unwrap() + 6,
            r["manifest_rows_before"].as_u64().unwrap(),
            "{op}: {r}"
        );
        // A dropped table's directory is listed (and holds nothing).
        assert!(crate::catalog_ops::requests(r) > 0.0, "{op}: {r}");
        if op == "write-drop-table" {
            assert!(r["io_per_op"]["list"].as_f64().unwrap() >= 1.0, "{op}: {r}");
        }
    }
}

/// A cell of roles on a tree on S3: the tree's tables written as datasets, its drops,
/// deregistrations and declarations verified against the copy, every role's operations
/// counted.
#[test]
fn roles_on_a_tree_on_s3_are_verified() {
    let server = S3Server::start(&[]);
    // Three seconds: a loaded machine's S3 requests take long enough that one second may
    // hold only a few of each client's seeded draws.
    let text = (crate::roles::drop_heavy("'direct'").replace("keep_runs = true", ""))
        .replace("duration_secs = 1", "duration_secs = 3");
    let (_d, o, records) = sweep_s3(&server, "s3://bench/roles", &text);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &records[0];
    assert_eq!(r["verified"], true, "{r}");
    // Every operation that succeeded has its requests counted.
    for f in r["roles"].as_array().unwrap() {
        if f["total_operations"].as_u64().unwrap() > 0 {
            assert!(f["requests_per_op"].as_f64().unwrap_or(0.0) > 0.0, "{f}");
        }
    }
    let removed = crate::roles::role_op(r, "write-drop-table")["total_operations"]
        .as_u64()
        .unwrap();
    assert!(removed > 0, "{r}");
}

/// On S3, a catalog that does not exist yet: the clients open their namespaces on an empty
/// prefix (the first creates `__manifest` with a conditional PUT, the others find it), the
/// writer's declarations all land, and the readers see each one.
#[test]
fn on_s3_readers_opened_before_the_catalog_existed_see_every_creation() {
    let server = S3Server::start(&[]);
    let text = std::fs::read_to_string(repo_file("plans/empty-root.toml"))
        .unwrap()
        .replace("inline = [true, false]", "inline = [true]")
        .replace("duration_secs = 10", "duration_secs = 3");
    let (_d, o, records) = sweep_s3(&server, "s3://bench/empty", &text);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &records[0];
    assert_eq!(
        (r["verified"].clone(), r["manifest_rows_before"].clone()),
        (true.into(), 0.into()),
        "{r}"
    );
    let commits = crate::roles::role_op(r, "write-declare-table")["total_operations"]
        .as_u64()
        .unwrap();
    let c = crate::roles::consistency(r);
    assert!(
        commits > 0 && c["creations"].as_u64().unwrap() == commits,
        "{c}"
    );
    crate::roles::no_anomaly(c);
    // On S3 a read names the version it loaded: every operation's is known, but a read of
    // the catalog before it was created.
    crate::roles::versions_known(c, 3);
}

/// What readers see on a store that is slow (20 ± 10 ms a request), answers 503 to 10 % of
/// requests and resets 2 % of connections: writers' creations and removals abandoned at the
/// attempt timeout (a commit makes many requests, a listing a few, so the latency alone
/// puts commits past 0.5 s on any machine) may have landed; each is resolved against the
/// copy and judged as it showed (landed: required of every read once one showed it), and the
/// checker reports no anomaly that did not happen.
#[test]
fn readers_see_no_invented_anomaly_on_a_slow_store_that_throttles_and_resets() {
    let server = S3Server::start(&[
        "--latency-ms",
        "20",
        "--jitter-ms",
        "10",
        "--throttle-rate",
        "0.1",
        "--reset-rate",
        "0.02",
        "--seed",
        "7",
    ]);
    let text = "name = 'faults'\n[fixture]\nwidth = 1\ndepth = 1\ntables_per_namespace = 100\n\
                [matrix]\ninline = [false]\n[workload]\nduration_secs = 3\n\
                [[roles]]\nname = 'writers'\nclients = 2\nrate = 10\n[roles.mix]\n\
                'write-declare-table' = 1\n'write-drop-table' = 1\n\
                [[roles]]\nname = 'readers'\nclients = 2\n[roles.mix]\n\
                'warm-read-list-tables' = 3\n'warm-read-table-exists' = 1\n\
                [run]\nattempt_timeout_secs = 0.5\n";
    let (_d, o, records) = sweep_s3(&server, "s3://bench/faults", text);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &records[0];
    assert_eq!(r["verified"], true, "{r}");
    let c = crate::roles::consistency_of(r);
    let indeterminate = c["indeterminate"].as_u64().unwrap();
    assert!(indeterminate > 0, "{c}");
    // Every commit that may have landed resolved: those of unknown outcome (the abandoned
    // ones among them) and any answered with an error whose effect landed all the same.
    let o = &r["outcomes"];
    let landed = c["indeterminate_landed"].as_u64().unwrap();
    assert_eq!(
        o["unknown"].as_u64().unwrap(),
        o["unknown_landed"].as_u64().unwrap() + o["unknown_not_landed"].as_u64().unwrap(),
        "{r}"
    );
    assert!(
        landed >= r["abandoned_landed"].as_u64().unwrap()
            && landed
                <= r["abandoned_landed"].as_u64().unwrap()
                    + o["failed_but_applied"].as_u64().unwrap(),
        "{r}"
    );
    assert!(landed <= indeterminate);
    crate::roles::no_anomaly(c);
    let counts = server.counts();
    assert!(
        counts["throttled"].as_u64().unwrap() > 0 && counts["reset"].as_u64().unwrap() > 0,
        "faults were made: {counts}"
    );
}
