//! What bench finds in lance 14.0.2 (docs/findings/), each run as its plan and named in the
//! words of the finding. These tests hold that bench names what lance does, not that lance
//! is fixed: a later lance that fixes one turns its test red, and its track-record row green.

use crate::common::*;

/// The cleanup gap (plans/cleanup-gap.toml, local disk): readers slower than the cleanup of
/// `__manifest` are stuck, and the record, the summary, the report and the run's line say
/// so: how many, their failed reads, the first named with the version it held, the file
/// that was gone and the cleanup before it.
#[test]
fn the_cleanup_gap_leaves_readers_stuck_and_bench_names_them() {
    let (_d, plan, out) =
        plan_dir(&std::fs::read_to_string(repo_file("plans/cleanup-gap.toml")).unwrap());
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &lines(&out.join("results.jsonl"))[0];
    assert_eq!(r["verified"], true, "the writer's commits all landed: {r}");
    let s = &r["stuck_readers"];
    assert!(s["readers"].as_u64().unwrap() >= 1, "{r}");
    assert!(s["failed_reads"].as_u64().unwrap() >= s["readers"].as_u64().unwrap());
    let first = s["first"].as_str().unwrap();
    for words in [
        " held v",
        " is gone after ",
        "maintain-cleanup-versions #",
        "none succeeded",
    ] {
        assert!(first.contains(words), "{words:?} in {first}");
    }
    assert!(stderr(&o).contains("STUCK READERS: "), "{}", stderr(&o));
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let (head, row) = summary.split_once('\n').unwrap();
    let col = head.split(',').position(|c| c == "stuck_readers").unwrap();
    assert_eq!(
        row.split(',').nth(col),
        Some(s["readers"].to_string().as_str())
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("**Readers a cleanup left behind**"),
        "{report}"
    );
    // CI can gate on it: with --fail-on-finding, `bench run` (resumed: nothing left to
    // run) and `bench status` exit 8, each naming the cell and what it found.
    let o = run(&plan, &out, &["--fail-on-finding"]);
    assert_eq!(o.status.code(), Some(8), "{}", stderr(&o));
    assert!(stderr(&o).contains("FINDING "), "{}", stderr(&o));
    let stuck = format!(
        "{} (first: client",
        if s["readers"] == 1 {
            "1 stuck reader"
        } else {
            "stuck readers"
        }
    );
    assert!(stderr(&o).contains(&stuck), "{stuck} in {}", stderr(&o));
    assert_eq!(bench_on("status", &plan, &out).status.code(), Some(0));
    let o = bench()
        .args([
            "status",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .arg("--fail-on-finding")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(8), "{}", stderr(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("findings (--fail-on-finding):"), "{said}");
    assert!(said.contains("stuck readers"), "{said}");
}

/// The same deletion on a correct store (plans/lost-reply-slowdown.toml): a campaign of one
/// fault, a reply lost after the store applied the request, then 503 SlowDown to the next
/// 16 requests, at each of the first 10 requests of two namespace creations. Where the lost
/// reply was the conditional PUT of a `__manifest` version, lance 14.0.2's look-up meets the
/// burst, it deletes the data file of the version that landed, and the point is UNREADABLE,
/// naming the version, the file and the write; a point whose lost reply was any other
/// request loses nothing. The campaign exits 3.
#[test]
fn a_lost_commit_reply_then_a_slowdown_burst_loses_a_landed_commit() {
    let text = std::fs::read_to_string(repo_file("plans/lost-reply-slowdown.toml")).unwrap();
    let server = S3Server::start(&[]);
    let (_d, o, records) = sweep_s3(&server, "s3://bench/lost-reply-slowdown", &text);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(records.len(), 11, "the trace and 10 points");
    let mut red = 0;
    for r in &records {
        let f = &r["fault"];
        let Some(at) = f["fired_at"].as_u64() else {
            continue;
        };
        let met = &f["requests"][at as usize - 1];
        let commit = met["kind"] == "conditional_put"
            && met["key"]
                .as_str()
                .unwrap()
                .starts_with("__manifest/_versions/");
        let finding = f["finding"].as_str();
        match commit {
            true => {
                let finding = finding.unwrap_or_else(|| panic!("a lost commit reply: {r}"));
                assert!(
                    finding.starts_with("UNREADABLE: the catalog's latest version, v"),
                    "{finding}"
                );
                assert!(
                    finding.contains(", which is gone: every read of __manifest fails"),
                    "{finding}"
                );
                // A client opened afterwards cannot write either.
                let fresh = f["new_client"].as_str().unwrap();
                assert!(fresh != "ok" && fresh.contains("NotFound"), "{fresh}");
                red += 1;
            }
            false => assert_eq!(finding, None, "{r}"),
        }
    }
    assert!(red >= 1, "{records:?}");
}

/// A `__manifest` commit whose reply was lost, on a store whose HEADs of manifest versions
/// give no length (plans/lost-reply-head.toml): lance 14.0.2 cannot tell that the version
/// landed, deletes its data file, and every later operation fails; verification names the
/// version, the file that is gone and the write whose reply was lost. With the HEADs
/// answered with their length, the same lost replies lose nothing: lance recognises its
/// own commits.
#[test]
fn a_lost_reply_checked_by_heads_without_length_loses_a_landed_commit() {
    let text = std::fs::read_to_string(repo_file("plans/lost-reply-head.toml")).unwrap();
    let lose = ["--lose-reply-every", "4", "--lose-reply-under", "/runs/"];
    let server = S3Server::start(&[&lose[..], &["--head-no-length", "_versions/"]].concat());
    let (_d, o, records) = sweep_s3(&server, "s3://bench/lost-reply-head", &text);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let r = &records[0];
    let e = r["verify_error"].as_str().unwrap();
    for words in [
        "the catalog's latest version, v",
        " names __manifest/data/",
        ", which is gone: every read of __manifest fails",
        "(unknown, network)",
    ] {
        assert!(e.contains(words), "{words:?} in {e}");
    }
    let counts = server.counts();
    assert!(counts["no_length"].as_u64().unwrap() > 0, "{counts}");
    assert!(counts["lost_reply"].as_u64().unwrap() > 0, "{counts}");
    // The control: the same lost replies, HEADs with their length.
    let server = S3Server::start(&lose);
    let (_e, o, records) = sweep_s3(&server, "s3://bench/lost-reply-head", &text);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(records[0]["verified"], true, "{}", records[0]);
    assert!(server.counts()["lost_reply"].as_u64().unwrap() > 0);
}

/// The same store (HEADs of versions without their length, every 4th conditional PUT's
/// reply lost) under appends to the shared table: lance's table path cannot read a version
/// back either, takes the outcome for unknown and deletes nothing. The appends end unknown
/// and landed, and the cell verifies; verification cannot read the versions whose
/// transaction files it would look for, and says so in `verify_unchecked` rather than fail
/// the cell for a store's fault.
#[test]
fn versions_a_store_will_not_let_bench_read_are_said_unchecked_not_failed() {
    let faults = [
        "--lose-reply-every",
        "4",
        "--lose-reply-under",
        "/runs/",
        "--head-no-length",
        "_versions/",
    ];
    let server = S3Server::start(&faults);
    let plan = "name = 'append-head'\noperation = 'write-table-append'\n[matrix]\n\
                sizes = [20]\ninline = [false]\n[continuous]\noperations = 8\n";
    let (d, o, records) = sweep_s3(&server, "s3://bench/append-head", plan);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &records[0];
    assert_eq!(r["verified"], true, "{r}");
    assert!(r["outcomes"]["unknown"].as_u64().unwrap() > 0, "{r}");
    let unchecked = r["verify_unchecked"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"));
    assert!(
        unchecked.starts_with("the transaction files of the shared table were not looked for: "),
        "{unchecked}"
    );
    assert!(
        stderr(&o).contains("verified (NOT CHECKED: "),
        "{}",
        stderr(&o)
    );
    let counts = server.counts();
    assert!(counts["no_length"].as_u64().unwrap() > 0, "{counts}");
    // Where a gate looks: the summary counts it, the report names it, and a gate on
    // findings does not pass it: `bench run --fail-on-finding` (resumed, nothing left to
    // run) exits 7, naming the cell and what was not checked.
    let out = d.path().join("out");
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let (head, row) = summary.split_once('\n').unwrap();
    let col = head.split(',').position(|c| c == "verify_unchecked");
    assert_eq!(
        row.trim_end().split(',').nth(col.unwrap()),
        Some("1"),
        "{summary}"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("**Not checked**"), "{report}");
    let mut args = server.args("s3://bench/append-head");
    args.push("--fail-on-finding".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run_with(bench_s3(), &d.path().join("plan.toml"), &out, &args);
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    let said = format!(
        "NOT CHECKED {} (repetition 1): the transaction files",
        r["bench_tag"].as_str().unwrap()
    );
    assert!(stderr(&o).contains(&said), "{said} in {}", stderr(&o));
}

/// A writer paused in its commit while others commit and a cleanup keeps 1 version
/// (plans/paused-writer.toml, lance #3718): a campaign of `pause` at each of the first 10
/// requests of two namespace creations. At each point the store stopped the worker at that
/// request; meanwhile the other client's 3 creations succeeded and the cleanup removed
/// versions; every copy that verifies holds the other client's entries. Where the held
/// request was a PUT of the first creation's commit (its data file, or the version's PUT if
/// absent), lance wrote the version the cleanup removed and answered success: LOST, the
/// witness naming the write and the load it was found under. Held elsewhere, nothing is
/// lost (a worker whose handle's files the cleanup removed may be STUCK: the cleanup gap).
/// Each point's history holds both clients and a later client's listing, and `bench check`
/// and adya read it alike: a lost write is an anomaly to both. The campaign exits 3.
#[test]
fn a_paused_writer_commits_into_a_version_a_cleanup_removed_and_is_lost() {
    let text = std::fs::read_to_string(repo_file("plans/paused-writer.toml")).unwrap();
    let server = S3Server::start(&[]);
    let (d, o, records) = sweep_s3(&server, "s3://bench/paused-writer", &text);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(records.len(), 11, "the trace and 10 points");
    let mut lost = 0;
    for r in &records {
        // Each point keeps its history, the other client's operations in it: `bench check`
        // reads back the outcomes the record judged, and adya's verdict is bench's.
        let folder = d.path().join("out").join(r["history"].as_str().unwrap());
        let (b, a) = both_judges(&folder);
        assert_eq!(b.0, a.0, "bench check:\n{}\nadya:\n{}", b.1, a.1);
        let (_, found) = check_json(&folder);
        assert_eq!(found[0]["outcomes"], r["outcomes"], "{r}");
        // A client's listing after the run is in the history: a write acknowledged and
        // lost is an anomaly to both judges, from the history alone.
        let lost = (r["fault"]["finding"].as_str()).is_some_and(|f| f.starts_with("LOST: "));
        if lost {
            assert_eq!(b.0, 1, "bench check sees the lost write:\n{}", b.1);
        }
        if r["fault"]["while_paused"].is_object() {
            let text = std::fs::read_to_string(folder.join("history.jsonl")).unwrap();
            assert!(text.contains("\"process\":1"), "the other client: {text}");
        }
    }
    for r in records.iter().filter(|r| r["fault"]["point"] != "trace") {
        let f = &r["fault"];
        let at = f["fired_at"]
            .as_u64()
            .unwrap_or_else(|| panic!("reached: {r}"));
        let held = &f["requests"][at as usize - 1];
        assert_eq!(held["fault"], "pause", "{r}");
        let w = &f["while_paused"];
        assert_eq!(
            (&w["others"], &w["others_ok"]),
            (&3.into(), &3.into()),
            "{r}"
        );
        assert!(w["cleaned_versions"].as_u64() >= Some(1), "{r}");
        if r["verified"] == true {
            let rows = r["manifest_rows_after"].as_u64();
            assert!(rows >= Some(13), "the golden's 10 and the other's 3: {r}");
        }
        // The catalog takes a new client's write whatever the paused worker met.
        assert_eq!(f["new_client"], "ok", "{r}");
        let finding = f["finding"].as_str().unwrap_or_default();
        if held["method"] == "PUT" {
            assert!(finding.starts_with("LOST: "), "{r}");
            for words in [
                "bench_w0_0 missing",
                "succeeded",
                "while the worker was held: 3 of 3 commits by another client, then a cleanup \
                 keeping 1 version removed",
            ] {
                assert!(finding.contains(words), "{words:?} in {finding}");
            }
            lost += 1;
        } else {
            assert!(finding.is_empty() || finding.starts_with("STUCK: "), "{r}");
        }
    }
    assert!(lost >= 1, "{records:?}");
    // lance's errors keep what they say, not where in lance's source they were raised.
    for r in &records {
        assert!(!r.to_string().contains(".cargo/registry"), "{r}");
    }
    // Points are judged, not measured: the closing lines warn of no empty measurement.
    assert!(
        !stderr(&o).contains("measured no successful operation"),
        "{}",
        stderr(&o)
    );
}

/// A plan of roles run for 3 s with `--fail-on-finding` (the readers' reads at +0, +1 and
/// +2 s, the idle writer's writes at +0 and +2 s, the first cleanup at +0.5 s), which must
/// exit 8: its directory, results folder, output and record.
fn gated_for_3_s(
    plan: &str,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::process::Output,
    serde_json::Value,
) {
    let (d, plan, out) = plan_dir(&std::fs::read_to_string(repo_file(plan)).unwrap());
    let set = ["--fail-on-finding", "--set", "workload.duration_secs=3"];
    let o = run(&plan, &out, &set);
    assert_eq!(o.status.code(), Some(8), "{}", stderr(&o));
    let r = lines(&out.join("results.jsonl")).remove(0);
    (d, out, o, r)
}

/// The cleanup gap's silent form (plans/silent-stale.toml, local disk): readers whose
/// listing their caches answer are served a version a cleanup removed, without an error.
/// The consistency checker names it (stale reads, with a witness), no read fails, no reader
/// is stuck, and a gate on findings stops on it.
#[test]
fn a_reader_served_silently_stale_after_a_cleanup_is_named_by_the_checker() {
    let (_d, _out, o, r) = gated_for_3_s("plans/silent-stale.toml");
    let r = &r;
    assert_eq!(r["verified"], true, "the writer's commits all landed: {r}");
    assert_eq!(
        (&r["errors"], &r["stuck_readers"]),
        (&0.into(), &serde_json::Value::Null),
        "{r}"
    );
    let c = &r["consistency"];
    assert!(c["stale_reads"].as_u64() >= Some(1), "{r}");
    assert!(c["lag_unseen_pairs"].as_u64() >= Some(1), "{r}");
    let first = c["first_violation"].as_str().unwrap();
    for words in [
        " listed ns_0 at +",
        " and did not see writer 0's #",
        ", acknowledged at +",
    ] {
        assert!(first.contains(words), "{words:?} in {first}");
    }
    assert!(stderr(&o).contains("FINDING "), "{}", stderr(&o));
}

/// The cleanup gap reaches writers (plans/idle-writer.toml, local disk): an idle writer's
/// commits fail on an index file the cleanup removed, every one from then on; the record,
/// the summary, the run's line and a gate on findings name the stuck writer, and the busy
/// writer's commits verify.
#[test]
fn an_idle_writer_a_cleanup_left_behind_is_named_a_stuck_writer() {
    let (_d, out, o, r) = gated_for_3_s("plans/idle-writer.toml");
    let r = &r;
    assert_eq!(r["verified"], true, "{r}");
    let s = &r["stuck_readers"];
    assert_eq!(
        (&s["readers"], &s["writers"]),
        (&0.into(), &1.into()),
        "{r}"
    );
    assert!(s["failed_writes"].as_u64() >= Some(1), "{r}");
    let first = s["first"].as_str().unwrap();
    for words in [
        "client 1 held v",
        "its write-declare-table at +",
        " is gone after ",
        "maintain-cleanup-versions #",
    ] {
        assert!(first.contains(words), "{words:?} in {first}");
    }
    assert!(
        stderr(&o).contains("STUCK WRITERS: 1 after a cleanup"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("1 stuck writer (first: client 1"),
        "{}",
        stderr(&o)
    );
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let (head, row) = summary.split_once('\n').unwrap();
    let col = head.split(',').position(|c| c == "stuck_writers").unwrap();
    assert_eq!(row.trim_end().split(',').nth(col), Some("1"), "{summary}");
}

/// A reader paused across a cleanup (plans/paused-reader.toml): a campaign of `pause` at
/// each of the first 6 requests of three warm listings. At each point the other client's 3
/// creations and a cleanup keeping 1 version ran while the reader was held; the resumed
/// reader meets files the cleanup removed, and every point is STUCK, naming the file that
/// is gone; the catalog itself verifies and takes a new client's write.
#[test]
fn a_reader_paused_across_a_cleanup_is_stuck_at_every_point() {
    let text = std::fs::read_to_string(repo_file("plans/paused-reader.toml")).unwrap();
    let server = S3Server::start(&[]);
    let (_d, o, records) = sweep_s3(&server, "s3://bench/paused-reader", &text);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(records.len(), 7, "the trace and 6 points");
    for r in records.iter().filter(|r| r["fault"]["point"] != "trace") {
        assert_eq!(r["verified"], true, "{r}");
        let f = &r["fault"];
        assert_eq!(f["new_client"], "ok", "{r}");
        let w = &f["while_paused"];
        assert_eq!(
            (&w["others"], &w["others_ok"]),
            (&3.into(), &3.into()),
            "{r}"
        );
        let finding = f["finding"].as_str().unwrap_or_default();
        assert!(finding.starts_with("STUCK: "), "{r}");
        assert!(
            finding.contains(" is gone") || finding.contains("NotFound"),
            "{finding}"
        );
        assert!(
            finding.contains("while the worker was held: 3 of 3 commits"),
            "{finding}"
        );
    }
}
