//! The checks on the `__manifest` version order against servers planted to break it
//! (`bench serve`'s test fixtures): each fault found in every run and named with a witness
//! a reader can follow by hand.

use crate::common::*;
use crate::roles::{freshness, no_anomaly};

/// The record's `consistency.order`, with every commit's version known (through REST, from
/// the copy's chain of versions).
fn order(r: &serde_json::Value) -> &serde_json::Value {
    let o = &r["consistency"]["order"];
    assert!(o.is_object(), "{r}");
    assert!(o["commits"].as_u64().unwrap() > 0, "{o}");
    assert_eq!(o["commits_known"], o["commits"], "{o}");
    o
}

/// The record of `text`'s one cell, run with the planted fault `planted` (a variable of
/// `bench serve` and its value; none: `None`), which exits 0.
fn record_of(text: &str, planted: Option<(&str, &str)>) -> serde_json::Value {
    let (_d, plan, out) = plan_dir(text);
    let mut cmd = bench();
    if let Some((k, v)) = planted {
        cmd.env(k, v);
    }
    let o = run_with(cmd, &plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    lines(&out.join("results.jsonl")).swap_remove(0)
}

/// Two servers, each with a writer and a reader, each answering listings from a view at
/// most 200 ms old with its own commits since patched in: each reader sees its own server's
/// writer's newest tables and misses the other's older ones — a state no version of the
/// catalog held (and the two readers see the two writers' commits in opposite orders, a long
/// fork). Without the fault the same cell reports none.
#[test]
fn a_server_patching_its_own_commits_into_a_stale_view_is_no_state_the_catalog_had() {
    let text = freshness("'rest'", "2")
        .replace("clients = 1\nrate = 20", "clients = 2\nrate = 10")
        .replace("duration_secs = 2", "duration_secs = 3");
    for planted in [false, true] {
        let fault = (bench_lance::server::PATCH_OWN_ENV, "200");
        let r = &record_of(&text, planted.then_some(fault));
        assert_eq!(r["verified"], true, "{r}");
        let o = order(r);
        if !planted {
            no_anomaly(&r["consistency"]);
            continue;
        }
        let n = &o["no_such_state"];
        assert!(n["count"].as_u64().unwrap() > 0, "{o}");
        // `client 2 listed ns_0 at +812.3 ms: it saw writer 0's #7 (v19) and not writer 1's
        // #6 (v18); no version holds the one without the other`.
        let w = n["first"].as_str().unwrap();
        let v = |after: &str| -> u64 {
            let s = &w[w.find(after).unwrap() + after.len()..];
            let s = &s[s.find("(v").unwrap() + 2..];
            s[..s.find(')').unwrap()].parse().unwrap()
        };
        assert!(
            w.starts_with("client ")
                && w.contains(" listed ns_0 at +")
                && w.ends_with("; no version holds the one without the other")
                && v("it saw ") > v(" and not "),
            "{w}"
        );
    }
}

/// A server that acknowledges every second declaration at once and commits it 300 ms later:
/// the writer's next declaration, begun after that acknowledgement, lands first with the
/// lower version — the write order broken, named with both commits and their versions.
#[test]
fn a_server_acknowledging_before_its_commit_lands_breaks_the_write_order() {
    let text = freshness("'rest'", "1")
        .replace("rate = 20", "rate = 10")
        .replace("duration_secs = 2", "duration_secs = 3");
    let r = &record_of(&text, Some((bench_lance::server::ACK_EARLY_ENV, "300")));
    assert_eq!(r["verified"], true, "{r}");
    let o = order(r);
    let w = &o["write_order"];
    assert!(w["count"].as_u64().unwrap() > 0, "{o}");
    // `worker 0 created ns_0$bench_d0_2 (v13), acknowledged at +200.4 ms; worker 0 created
    // ns_0$bench_d0_3 (v12), begun after it at +300.1 ms, made the lower version`.
    let named = w["first"].as_str().unwrap();
    assert!(
        named.starts_with("worker 0 created ns_0$bench_d0_")
            && named.contains(", acknowledged at +")
            && named.ends_with("made the lower version"),
        "{named}"
    );
    assert!(
        r["planted"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p.as_str().unwrap().starts_with("BENCH_SERVE_ACK_EARLY_MS=")),
        "{r}"
    );
}

/// A server that answers each listing from one of its last 16 views drawn at random (and
/// says the version it fetched): its readers go back to views older than ones they saw —
/// monotonic-read violations and stale reads, the first named — and a listing that misses a
/// commit of the version said is not that version's state.
#[test]
fn a_server_answering_from_a_random_recent_view_makes_readers_go_back() {
    let text = freshness("'rest'", "1").replace("duration_secs = 2", "duration_secs = 3");
    let r = &record_of(&text, Some((bench_lance::server::RANDOM_VIEW_ENV, "16")));
    assert_eq!(r["verified"], true, "{r}");
    let c = &r["consistency"];
    assert!(c["monotonic_violations"].as_u64().unwrap() > 0, "{c}");
    assert!(c["stale_reads"].as_u64().unwrap() > 0, "{c}");
    let named = c["first_violation"].as_str().unwrap();
    assert!(
        named.starts_with("client ") && named.contains(" listed ns_0 at +"),
        "{named}"
    );
    // The commits' versions are known: none of them is out of order; the listings said the
    // version the server fetched, not the one it answered from.
    let o = order(r);
    assert_eq!(o["write_order"]["count"], 0, "{o}");
    let n = &o["not_its_version"];
    assert!(n["count"].as_u64().unwrap() > 0, "{o}");
    let w = n["first"].as_str().unwrap();
    assert!(
        w.contains(" listed ns_0 at +") && w.contains(" served v") && w.contains("did not see"),
        "{w}"
    );
}

/// Exactly once: a golden with one of its tables' rows written twice (its `__manifest`
/// appended to after it was built, as a store that replayed a write would): the cell does not
/// verify, naming the entry in two rows as the cell began, whatever its writers did (on lance
/// 14.0.2 every declaration into such a catalog fails). The same golden before the row was
/// duplicated verified.
#[test]
fn a_golden_with_a_row_written_twice_is_named_and_listed_twice() {
    use bench_lance::lance::dataset::{Dataset, WriteMode, WriteParams};
    let text = freshness("'direct'", "1").replace("servers = [1]\n", "");
    let (d, plan, out) = plan_dir(&text);
    let root = d.path().join("store");
    let at = ["--root", root.to_str().unwrap()];
    let o = run(&plan, &out, &at);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(lines(&out.join("results.jsonl"))[0]["verified"], true);
    let golden = (std::fs::read_dir(root.join("golden")).unwrap().flatten())
        .find(|e| e.path().join("__manifest").is_dir())
        .unwrap()
        .path()
        .join("__manifest");
    let uri = golden.to_str().unwrap().to_string();
    let id = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let ds = Dataset::open(&uri).await.unwrap();
        let mut scan = ds.scan();
        scan.filter("object_type = 'table'").unwrap();
        scan.limit(Some(1), None).unwrap();
        let row = scan.try_into_batch().await.unwrap();
        let ids = row.column(0).as_any();
        let id = (ids.downcast_ref::<arrow::array::StringArray>().unwrap())
            .value(0)
            .to_string();
        let schema = row.schema();
        let reader = arrow::record_batch::RecordBatchIterator::new([Ok(row)], schema);
        let params = WriteParams {
            mode: WriteMode::Append,
            ..Default::default()
        };
        Dataset::write(reader, uri.as_str(), Some(params))
            .await
            .unwrap();
        id
    });
    let again = d.path().join("again");
    let o = run(&plan, &again, &at);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let r = &lines(&again.join("results.jsonl"))[0];
    assert_eq!(r["verified"], false, "{r}");
    let said = r["verify_error"].as_str().unwrap();
    assert!(
        said.contains(&format!(
            "{id} held 2 times, expected 1 (the catalog's own, in 2 rows as the cell began: a \
             name is one entry)"
        )),
        "{said}"
    );
}

/// Listings in pages of 3 while a writer declares tables in the namespace listed: each page
/// lists the names after the last of the page before, at the version its own call served, so
/// a listing may show a table declared after one it missed whose name fell in an earlier
/// page. Each page is judged at its own version over its own names: none fails, directly or
/// through a server; directly every page's version is known but, at most, the last of each
/// reader's last listing. A server answering each page from a random recent view (and saying
/// the version it fetched) is caught on the page that is not its version's state.
#[test]
fn listings_in_pages_are_judged_page_by_page() {
    let text = freshness("'direct', 'rest'", "1")
        .replace("name = 'fresh'\n", "name = 'fresh'\npage_size = 3\n");
    let (_d, plan, out) = plan_dir(&text);
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!(r["verified"], true, "{r}");
        let c = &r["consistency"];
        no_anomaly(c);
        let o = order(r);
        let n = |k: &str| o[k].as_u64().unwrap_or(0);
        // Ten tables and more, three a page: every listing in four pages at least.
        assert!(n("pages") >= 4 * n("reads"), "{o}");
        if r["transport"] == "direct" {
            assert!(n("pages") - n("pages_known") <= 2, "{o}");
        } else {
            assert!(n("pages_known") > 0, "{o}");
        }
    }
    let text = text.replace("'direct', 'rest'", "'rest'");
    let r = &record_of(&text, Some((bench_lance::server::RANDOM_VIEW_ENV, "16")));
    let w = order(r)["not_its_version"]["first"]
        .as_str()
        .unwrap_or_default();
    // `client 2 listed ns_0 at +16.0 ms (page 1 of 4, names up to table_2) served v2 and did
    // not see writer 0's #0 (v2)`.
    assert!(
        w.contains(" listed ns_0 at +") && w.contains(" (page ") && w.contains(" served v"),
        "{w}"
    );
}
