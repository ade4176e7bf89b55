//! Fault campaigns (`[campaign]`): one operation's requests, each meeting each fault a real
//! store gives it (`scripts/s3-server.py`'s `/_bench/arm` in front of moto), one point at a
//! time on a fresh copy; each point judged, and the matrix drawn.

use crate::common::*;

/// A small campaign over namespace creation: the trace and four fault kinds at the first
/// three requests of the worker's two operations.
const PLAN: &str = "name = 'campaign'\n[matrix]\nsizes = [10]\ninline = [false]\n\
     [continuous]\noperations = 2\n[run]\nrepetitions = 1\n\
     [campaign]\nfaults = ['reset', 'lose-reply', 'slow-down', 'kill-after']\nrequests = 3\n";

fn point(r: &serde_json::Value) -> String {
    r["fault"]["point"].as_str().unwrap_or_default().to_string()
}

/// Every point ran (two at a time) and was recorded with what the store saw: the trace's
/// requests, each fault on exactly the request at its position, and the worker killed where the fault kills
/// (its operation then unknown and looked up). The matrix marks every point, and the exit
/// code says whether any point is red.
#[test]
fn a_campaign_runs_every_point_on_its_own_copy_and_draws_the_matrix() {
    let server = S3Server::start(&[]);
    let (dir, o, records) = sweep_s3(&server, "s3://bench/campaign", PLAN);
    let mut points: Vec<String> = records.iter().map(point).collect();
    points.sort();
    let mut want: Vec<String> = ["reset", "lose-reply", "slow-down", "kill-after"]
        .iter()
        .flat_map(|k| (1..=3).map(move |at| format!("{k}@{at}")))
        .chain(["trace".to_string()])
        .collect();
    want.sort();
    assert_eq!(points, want, "{}", stderr(&o));

    // Points run two at a time (`campaign.parallel`'s default), each on its own copy: some
    // two points' runs overlap.
    let span = |r: &serde_json::Value| {
        let at = |k: &str| r[k].as_str().unwrap().to_string();
        (at("started_at"), at("finished_at"))
    };
    let overlap = records.iter().enumerate().any(|(i, a)| {
        records[i + 1..].iter().any(|b| {
            let ((s1, e1), (s2, e2)) = (span(a), span(b));
            s1 < e2 && s2 < e1
        })
    });
    assert!(overlap, "{records:?}");

    let trace = records.iter().find(|r| point(r) == "trace").unwrap();
    let requests = trace["fault"]["requests"].as_array().unwrap();
    assert!(
        requests.len() >= 3,
        "two creations make more than 3 requests: {trace}"
    );
    assert!(trace["fault"]["fired_at"].is_null(), "{trace}");
    for (i, q) in requests.iter().enumerate() {
        assert_eq!(q["n"].as_u64(), Some(i as u64 + 1), "{q}");
        assert!(q["fault"].is_null(), "the trace meets no fault: {q}");
    }
    assert_eq!(trace["verified"], true, "{trace}");
    assert_eq!(trace["errors"], 0, "{trace}");

    let mut red = 0;
    for r in records.iter().filter(|r| point(r) != "trace") {
        let (kind, at) = point(r)
            .split_once('@')
            .map(|(k, a)| (k.to_string(), a.to_string()))
            .unwrap();
        let at: u64 = at.parse().unwrap();
        let f = &r["fault"];
        assert_eq!(
            f["fired_at"].as_u64(),
            Some(at),
            "each of 3 positions is reached: {r}"
        );
        let met = &f["requests"][at as usize - 1];
        assert_eq!(met["fault"].as_str(), Some(kind.as_str()), "{r}");
        let faulted: Vec<_> = (f["requests"].as_array().unwrap().iter())
            .filter(|q| q["fault"].is_string())
            .collect();
        match kind.as_str() {
            // SlowDown: the request and its next 2 resends.
            "slow-down" => assert_eq!(faulted.len(), 3, "{r}"),
            _ => assert_eq!(faulted.len(), 1, "{r}"),
        }
        if kind == "kill-after" {
            // The worker died at that request, inside its first creation (which makes more
            // than 3 requests): no operation succeeded, and the one it was in was unknown
            // and looked up.
            assert_eq!(r["total_operations"], 0, "{r}");
            assert!(r["outcomes"]["unknown"].as_u64() >= Some(1), "{r}");
        }
        // A finding: its class and witness kept with the point, its cell failed.
        let finding = r["fault"]["finding"].as_str();
        // A client opened after the run wrote, or the point is a finding.
        assert!(f["new_client"] == "ok" || finding.is_some(), "{r}");
        if r["verified"] != true {
            assert!(finding.is_some(), "an unverified point is a finding: {r}");
        }
        red += u64::from(finding.is_some());
    }

    let matrix = std::fs::read_to_string(dir.path().join("out/campaign.md")).unwrap();
    // The matrix drawn: a chart the matrix and the report show, naming each fault kind.
    let svg = std::fs::read_to_string(dir.path().join("out/charts/campaign_1.svg")).unwrap();
    let texts = svg_texts(&svg);
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("Fault campaign: write-create-namespace"))
    );
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    for text in [&matrix, &report] {
        assert!(text.contains("](charts/campaign_1.svg)"), "{text}");
    }
    for kind in ["reset", "lose-reply", "slow-down", "kill-after"] {
        assert!(matrix.contains(&format!("| {kind} |")), "{matrix}");
        assert!(texts.iter().any(|t| t == kind), "{texts:?}");
    }
    assert!(matrix.contains("13 points"), "{matrix}");
    assert!(
        matrix.contains("1. "),
        "the trace's requests listed: {matrix}"
    );
    let code = o.status.code();
    match red {
        0 => assert_eq!(code, Some(0), "{}", stderr(&o)),
        _ => assert_ne!(code, Some(0), "{}", stderr(&o)),
    }
    assert!(
        stderr(&o).contains("campaign.md")
            || String::from_utf8_lossy(&o.stdout).contains("campaign.md")
    );
}

/// A campaign on local disk has no store to give its faults: its cells fail saying so, and
/// nothing is judged.
#[test]
fn a_campaign_off_s3_fails_its_points_naming_the_fix() {
    let (_dir, plan, out) = plan_dir(PLAN);
    let o = run_with(bench(), &plan, &out, &[]);
    assert_ne!(o.status.code(), Some(0));
    let text = format!("{}{}", stderr(&o), String::from_utf8_lossy(&o.stdout));
    assert!(text.contains("--root s3://"), "{text}");
    assert!(!out.join("campaign.md").exists());
    assert!(!out.join("results.jsonl").exists(), "nothing ran");
}

/// The `delay` kind: the store applies the request and holds its reply past the client's
/// timeout (a store holding 3 s, a client given `timeout = 1s`, where the defaults are 35 s
/// and 30 s). The client gives up waiting and sends the request again before the reply comes:
/// the store sees the same request next. Each point is judged like any other.
#[test]
fn a_reply_held_past_the_client_s_timeout_is_sent_again_and_the_point_judged() {
    let server = S3Server::start(&["--delay-secs", "3"]);
    let plan = "name = 'delay'\n[matrix]\nsizes = [10]\ninline = [false]\n\
                [continuous]\noperations = 2\n[run]\nrepetitions = 1\n\
                [campaign]\nfaults = ['delay']\nrequests = 2\n";
    let (_dir, plan, out) = plan_dir(plan);
    let mut args = server.args("s3://bench/delay");
    args.extend(["--storage-option".to_string(), "timeout=1s".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run_with(bench_s3(), &plan, &out, &args);
    let records = lines(&out.join("results.jsonl"));
    let mut points: Vec<String> = records.iter().map(point).collect();
    points.sort();
    assert_eq!(points, ["delay@1", "delay@2", "trace"], "{}", stderr(&o));
    for r in records.iter().filter(|r| point(r) != "trace") {
        let f = &r["fault"];
        let at = f["fired_at"].as_u64().expect("the fault fired") as usize;
        let requests = f["requests"].as_array().unwrap();
        let (held, next) = (&requests[at - 1], &requests[at]);
        assert_eq!(held["fault"], "delay", "{r}");
        assert_eq!(
            (&next["method"], &next["key"]),
            (&held["method"], &held["key"]),
            "the client sent the held request again: {r}"
        );
        assert!(next["fault"].is_null(), "{r}");
        assert!(f["new_client"] == "ok" || f["finding"].is_string(), "{r}");
        if r["verified"] != true {
            assert!(
                f["finding"].is_string(),
                "an unverified point is a finding: {r}"
            );
        }
    }
    let matrix = std::fs::read_to_string(out.join("campaign.md")).unwrap();
    assert!(
        matrix.contains("| delay |") && matrix.contains("3 points"),
        "{matrix}"
    );
}

/// A mixed cell with two windows of the store's faults on its timeline (`[[nemesis]]`):
/// 503 SlowDown to every request from 1 s for 1 s, and every conditional PUT's reply lost
/// from 1.5 s for 0.5 s. Each window was switched on no earlier than its time and off after,
/// met requests, and is in the record and in the history as the `nemesis` process' start
/// and stop, in time order among the clients' events; `bench check` reads the history back
/// and judges it as the record did; the cell verifies (every write whose reply was lost
/// looked up).
#[test]
fn nemesis_windows_are_switched_on_the_cell_s_timeline_and_kept_in_its_history() {
    let server = S3Server::start(&[]);
    let plan = "name = 'nemesis'\n[matrix]\nsizes = [10]\ninline = [false]\n\
                [mixed]\nclients = [2]\nreads_per_write = 1\nduration_secs = 3\n\
                read_operation = 'warm-read-list-namespaces'\n[run]\nrepetitions = 1\n\
                [[nemesis]]\nfault = 'slow-down'\nfrom_secs = 1\nfor_secs = 1\n\
                [[nemesis]]\nfault = 'lose-reply'\nof = 'conditional_put'\nfrom_secs = 1.5\n\
                for_secs = 0.5\n";
    let (_d, o, records) = sweep_s3(&server, "s3://bench/nemesis", plan);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &records[0];
    assert_eq!(r["verified"], true, "{r}");
    let switches = r["nemesis"].as_array().unwrap();
    let of = |fault: &str, on: bool| {
        (switches.iter())
            .find(|s| s["fault"] == fault && s["on"] == on)
            .unwrap_or_else(|| panic!("no switch of {fault}: {r}"))
            .clone()
    };
    for (fault, from_ms) in [
        ("slow-down of any", 1000.0),
        ("lose-reply of conditional_put", 1500.0),
    ] {
        let (on, off) = (of(fault, true), of(fault, false));
        assert!(on["at_ms"].as_f64().unwrap() >= from_ms, "{on}");
        assert!(off["at_ms"].as_f64() > on["at_ms"].as_f64(), "{off}");
        assert!(
            on["error"].is_null() && off["error"].is_null(),
            "{switches:?}"
        );
    }
    assert!(
        of("slow-down of any", false)["met"].as_u64() > Some(0),
        "{switches:?}"
    );
    assert!(server.counts()["throttled"].as_u64() > Some(0));

    let folder = _d.path().join("out").join(r["history"].as_str().unwrap());
    let text = std::fs::read_to_string(folder.join("history.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let nemesis: Vec<_> = lines.iter().filter(|e| e["process"] == "nemesis").collect();
    assert_eq!(nemesis.len(), 4, "{nemesis:?}");
    assert!(nemesis.iter().all(|e| e["type"] == "info"));
    for (i, e) in lines.iter().enumerate() {
        assert_eq!(e["index"].as_u64(), Some(i as u64), "{e}");
    }
    let (o, found) = check_json(&folder);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(found[0]["outcomes"], r["outcomes"]);
}

/// A campaign over lance's cleanup of `__manifest` (`operation =
/// "maintain-cleanup-versions"` with `campaign.keep_versions`): each point's worker cleans
/// up keeping 1 version of the golden's, the trace shows its requests (its listings of the
/// versions, then its deletes of what only the older version named, a POST for S3's
/// multi-object delete), and every point keeps the catalog whole: verified, and a client
/// opened afterwards writes.
#[test]
fn a_campaign_over_cleanup_keeps_the_catalog_whole_at_every_point() {
    let server = S3Server::start(&[]);
    let plan = "name = 'cleanup'\noperation = 'maintain-cleanup-versions'\n[matrix]\n\
                sizes = [10]\ninline = [true]\n[continuous]\noperations = 2\n\
                [run]\nrepetitions = 1\n[campaign]\nkeep_versions = 1\n\
                faults = ['lose-reply', 'kill-after']\nrequests = 2\n";
    let (_dir, o, records) = sweep_s3(&server, "s3://bench/cleanup", plan);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut points: Vec<String> = records.iter().map(point).collect();
    points.sort();
    assert_eq!(
        points,
        [
            "kill-after@1",
            "kill-after@2",
            "lose-reply@1",
            "lose-reply@2",
            "trace"
        ],
        "{}",
        stderr(&o)
    );
    let trace = records.iter().find(|r| point(r) == "trace").unwrap();
    let requests = trace["fault"]["requests"].as_array().unwrap();
    assert_eq!(
        requests[0]["method"], "GET",
        "a listing of the versions first: {trace}"
    );
    assert!(
        requests.iter().any(|q| q["method"] == "POST"
            && q["key"].as_str().unwrap().contains("__manifest/_versions/")),
        "the older version's manifest deleted: {trace}"
    );
    for r in &records {
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["fault"]["new_client"], "ok", "{r}");
        assert!(r["fault"]["finding"].is_null(), "{r}");
    }
}
