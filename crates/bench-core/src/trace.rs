//! A cell's timeline, to look at: the first few operations of every worker with each
//! object-store request they made (kind, what the object is, bytes, start, end), written
//! as a Chrome trace event file that Perfetto (<https://ui.perfetto.dev>) and
//! `chrome://tracing` open.
//!
//! Layout: one process per worker (`worker 0`, `worker 1`, …); in it, a row `operations`
//! with one slice per operation, and rows `requests 1`, `requests 2`, … with its requests,
//! each on the first row free at its start (requests in flight together sit on rows of
//! their own, so that no two slices on a row overlap). Times are microseconds from the
//! earliest event of the cell, on the workers' hosts' monotonic clocks (one clock for every
//! worker of a host).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Where a sweep's trace files go (`--trace`), under its results directory.
pub const TRACE_DIR: &str = "traces";

/// One request of a traced operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TracedRequest {
    /// As in `io_per_op`: `get`, `head`, `put`, `conditional_put`, `list`, `delete`, `copy`.
    pub kind: String,
    /// The object's key (a listing: its prefix), as the store was asked.
    pub path: String,
    /// Bytes sent or received (a GET: its range; 0 where none or unknown).
    pub bytes: u64,
    /// Start and end in microseconds on the worker's host's monotonic clock.
    pub start_us: u64,
    pub end_us: u64,
}

/// One traced operation of a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TracedOp {
    /// The operation (`create-table`, …) and its index among the worker's operations of
    /// its kind.
    pub name: String,
    pub i: u64,
    pub ok: bool,
    /// Its outcome as the cell's operation log judged it (`unknown, landed`), where the
    /// coordinator told it (it fills it in from the log before the trace is written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    pub start_us: u64,
    pub end_us: u64,
    pub requests: Vec<TracedRequest>,
}

/// What an object is, from its key, as a lance dataset lays out its files: `version` (a
/// version's manifest, `_versions/*.manifest`), `version_hint`, `versions` (the versions
/// folder, listed), `transaction`, `index`, `data`, `deletion`, else `other`.
pub fn path_class(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    if path.contains("_versions/") || path.ends_with("_versions") {
        if name == "latest_version_hint.json" {
            "version_hint"
        } else if name.ends_with(".manifest") {
            "version"
        } else {
            "versions"
        }
    } else if path.contains("_transactions/") {
        "transaction"
    } else if path.contains("_indices/") {
        "index"
    } else if path.contains("_deletions/") {
        "deletion"
    } else if path.contains("data/") && name.ends_with(".lance") {
        "data"
    } else {
        "other"
    }
}

/// The Chrome trace event file of a cell: `workers` holds each worker's id and its traced
/// operations; `title` names the cell (shown as the trace's metadata).
pub fn chrome_trace(title: &str, workers: &[(u32, Vec<TracedOp>)]) -> Value {
    let origin = workers
        .iter()
        .flat_map(|(_, ops)| ops.iter())
        .flat_map(|op| std::iter::once(op.start_us).chain(op.requests.iter().map(|r| r.start_us)))
        .min()
        .unwrap_or(0);
    let at = |us: u64| us.saturating_sub(origin);
    let mut events = Vec::new();
    for (w, ops) in workers {
        let pid = u64::from(*w) + 1;
        events.push(meta(pid, 0, "process_name", &format!("worker {w}")));
        events.push(json!({
            "ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
            "args": {"sort_index": pid}
        }));
        events.push(meta(pid, 0, "thread_name", "operations"));
        // The end of the last request on each row of requests.
        let mut rows: Vec<u64> = Vec::new();
        for op in ops {
            events.push(json!({
                "ph": "X", "pid": pid, "tid": 0,
                "name": format!("{} #{}", op.name, op.i),
                "cat": "operation",
                "ts": at(op.start_us), "dur": op.end_us.saturating_sub(op.start_us),
                "args": {"ok": op.ok, "outcome": op.outcome, "requests": op.requests.len()},
            }));
            let mut requests: Vec<&TracedRequest> = op.requests.iter().collect();
            requests.sort_by_key(|r| (r.start_us, r.end_us));
            for r in requests {
                let row = match rows.iter().position(|&end| end <= r.start_us) {
                    Some(row) => row,
                    None => {
                        rows.push(0);
                        let row = rows.len() - 1;
                        events.push(meta(
                            pid,
                            row as u64 + 1,
                            "thread_name",
                            &format!("requests {}", row + 1),
                        ));
                        row
                    }
                };
                rows[row] = r.end_us.max(r.start_us);
                let class = path_class(&r.path);
                events.push(json!({
                    "ph": "X", "pid": pid, "tid": row as u64 + 1,
                    "name": format!("{} {class}", r.kind),
                    "cat": "request",
                    "ts": at(r.start_us), "dur": r.end_us.saturating_sub(r.start_us),
                    "args": {"kind": r.kind, "class": class, "bytes": r.bytes, "path": r.path},
                }));
            }
        }
    }
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {"cell": title},
    })
}

fn meta(pid: u64, tid: u64, what: &str, name: &str) -> Value {
    json!({"ph": "M", "name": what, "pid": pid, "tid": tid, "args": {"name": name}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(kind: &str, path: &str, start_us: u64, end_us: u64) -> TracedRequest {
        TracedRequest {
            kind: kind.into(),
            path: path.into(),
            bytes: 10,
            start_us,
            end_us,
        }
    }

    #[test]
    fn keys_are_classed_as_lance_lays_out_a_dataset() {
        for (path, class) in [
            (
                "r/__manifest/_versions/18446744073709551614.manifest",
                "version",
            ),
            (
                "r/__manifest/_versions/latest_version_hint.json",
                "version_hint",
            ),
            ("r/__manifest/_versions", "versions"),
            ("r/__manifest/_transactions/1-abc.txn", "transaction"),
            ("r/__manifest/_indices/u-u-i-d/index.idx", "index"),
            ("r/__manifest/data/0101-abc.lance", "data"),
            ("r/__manifest/_deletions/0-1-2.arrow", "deletion"),
            ("r/t.lance/other.json", "other"),
        ] {
            assert_eq!(path_class(path), class, "{path}");
        }
    }

    #[test]
    fn a_trace_has_a_process_per_worker_and_rows_without_overlaps() {
        let op = |i: u64, t: u64, requests| TracedOp {
            name: "create-table".into(),
            i,
            ok: true,
            outcome: Some("ok".into()),
            start_us: t,
            end_us: t + 100,
            requests,
        };
        let w0 = vec![
            op(
                0,
                1_000,
                vec![
                    req("head", "r/_versions/1.manifest", 1_000, 1_010),
                    // Two GETs in flight together, and a third nested inside the first.
                    req("get", "r/data/a.lance", 1_020, 1_060),
                    req("get", "r/data/b.lance", 1_030, 1_050),
                    req("get", "r/_indices/x/i.idx", 1_035, 1_040),
                    req("conditional_put", "r/_versions/2.manifest", 1_070, 1_090),
                ],
            ),
            op(1, 1_100, vec![req("list", "r/_versions", 1_110, 1_150)]),
        ];
        let w1 = vec![op(
            0,
            1_005,
            vec![req("put", "r/data/c.lance", 1_006, 1_010)],
        )];
        let trace = chrome_trace("cell", &[(0, w0), (1, w1)]);
        // Valid JSON for a trace viewer, as a string and back.
        let text = serde_json::to_string(&trace).unwrap();
        let back: Value = serde_json::from_str(&text).unwrap();
        let events = back["traceEvents"].as_array().unwrap();
        assert_eq!(back["otherData"]["cell"], "cell");
        let names: Vec<&str> = events
            .iter()
            .filter(|e| e["name"] == "process_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["worker 0", "worker 1"]);
        let slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        // Every slice has what a viewer needs; times start at the earliest event.
        for e in &slices {
            for k in ["name", "ts", "dur", "pid", "tid", "cat"] {
                assert!(!e[k].is_null(), "{k} missing in {e}");
            }
        }
        assert_eq!(
            slices.iter().map(|e| e["ts"].as_u64().unwrap()).min(),
            Some(0)
        );
        assert_eq!(slices.len(), 3 + 7);
        // No two slices on one row overlap.
        for a in &slices {
            for b in &slices {
                if std::ptr::eq(*a, *b) || (&a["pid"], &a["tid"]) != (&b["pid"], &b["tid"]) {
                    continue;
                }
                let (a0, b0) = (a["ts"].as_u64().unwrap(), b["ts"].as_u64().unwrap());
                let (a1, b1) = (
                    a0 + a["dur"].as_u64().unwrap(),
                    b0 + b["dur"].as_u64().unwrap(),
                );
                assert!(a1 <= b0 || b1 <= a0, "{a} overlaps {b}");
            }
        }
        // Three requests in flight at once: three rows of requests in worker 0.
        let rows = events
            .iter()
            .filter(|e| e["pid"] == 1 && e["name"] == "thread_name")
            .count();
        assert_eq!(rows, 1 + 3);
        let cput = slices
            .iter()
            .find(|e| e["args"]["kind"] == "conditional_put")
            .unwrap();
        assert_eq!(cput["name"], "conditional_put version");
        assert_eq!(cput["args"]["bytes"], 10);
    }
}
