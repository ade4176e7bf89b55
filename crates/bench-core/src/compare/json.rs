//! `--format json` of `bench compare` and `bench ab`: the comparison as one JSON document,
//! for scripts: every cell's figures on both sides, each metric's ratio B/A with its
//! interval and change, the verdict, and what could not be compared.

use serde_json::{Value, json};

use super::counts::{CountRow, Moved, Unit};
use super::{Change, Comparison, IoRow, METRICS, Row};

/// A change as the document names it.
fn change(c: Change) -> &'static str {
    match c {
        Change::Same => "same",
        Change::Undecided => "undecided",
        Change::Untested => "untested",
        Change::Better => "better",
        Change::Worse => "worse",
    }
}

fn row(r: &Row) -> Value {
    let names = [r.per_sec, "p50_ms", "p99_ms"];
    let metrics: Vec<Value> = (0..METRICS)
        .map(|i| {
            json!({
                "metric": names[i],
                "a": r.a.median(i),
                "b": r.b.median(i),
                "ratio": r.ratios[i],
                "ci": r.tests[i].map(|t| [t.ci.0, t.ci.1]),
                "change": change(r.changes[i]),
            })
        })
        .collect();
    json!({
        "cell": r.cell,
        "repetitions": [r.a.repetitions(), r.b.repetitions()],
        "pairs": r.pairs.as_ref().map(|p| json!({
            "pairing": p.pairing, "pairs": p.pairs, "runs": p.runs, "secs": p.secs,
            "crossovers": p.crossover.then_some(p.units),
        })),
        "metrics": metrics,
        "throughput_judged": !r.paced,
        "regressed": r.regressed(),
        "verdict": r.verdict(),
        "explanation": r.explanation,
    })
}

fn moved(m: Moved) -> &'static str {
    match m {
        Moved::Same => "same",
        Moved::More => "more",
        Moved::Fewer => "fewer",
    }
}

fn counts(r: &CountRow) -> Value {
    let metrics: Vec<Value> = (r.counts.iter())
        .map(|c| {
            json!({
                "metric": c.name,
                "unit": match c.unit {
                    Unit::Requests => "requests/operation",
                    Unit::RoundTrips => "round trips/operation",
                    Unit::Bytes => "bytes/operation",
                },
                "a": c.a,
                "b": c.b,
                "change": moved(c.moved),
            })
        })
        .collect();
    json!({
        "cell": r.cell,
        "metrics": metrics,
        "regressed": r.regressed(),
        "improved": r.improved(),
        "unjudged": r.unjudged,
        "bytes_left_out": r.bytes_left_out,
        "usd_per_million_ops": r.cost.as_ref().map(|c| {
            (c.usd_per_million_ops.iter())
                .map(|(store, (a, b))| (store.clone(), json!({"a": a, "b": b})))
                .collect::<serde_json::Map<String, Value>>()
        }),
        "verdict": r.verdict(),
    })
}

fn readers(r: &super::readers::ReaderRow) -> Value {
    let side = |v: &[crate::consistency::Consistency]| -> Vec<Value> {
        (v.iter())
            .map(|c| {
                json!({
                    "reads": c.reads, "anomalies": c.anomalies(), "stale_reads": c.stale_reads,
                    "lag_p50_ms": c.lag_p50_ms, "lag_p99_ms": c.lag_p99_ms,
                    "lag_low_p50_ms": c.lag_low_p50_ms, "read_period_ms": c.read_period_ms,
                    "version_order_violations": c.order.as_ref().map(|o| o.violations()),
                })
            })
            .collect()
    };
    json!({
        "cell": r.cell,
        "a": side(&r.a),
        "b": side(&r.b),
        "anomalies": moved(r.anomalies),
        "lag": r.lag.map(moved),
        "lag_judged": if r.lower { "lower bound" } else { "upper bound" },
        "regressed": r.regressed(),
        "improved": r.improved(),
        "verdict": r.verdict(),
    })
}

fn io(r: &IoRow) -> Value {
    json!({
        "cell": r.cell,
        "requests_per_op": [r.a[0], r.b[0]],
        "read_bytes_per_op": [r.a[1], r.b[1]],
        "written_bytes_per_op": [r.a[2], r.b[2]],
    })
}

/// The comparison of `na` (A) and `nb` (B) as JSON text.
pub fn json(c: &Comparison, na: &str, nb: &str) -> String {
    let doc = json!({
        "a": na,
        "b": nb,
        "threshold_pct": c.threshold_pct,
        "between_runs_pct": c.between_runs_pct,
        "paired": c.paired,
        "cells": c.rows.iter().map(row).collect::<Vec<_>>(),
        "reads": c.read_rows.iter().map(row).collect::<Vec<_>>(),
        "io": c.io_rows.iter().map(io).collect::<Vec<_>>(),
        "counts": c.counts.iter().map(counts).collect::<Vec<_>>(),
        "readers": c.readers.iter().map(readers).collect::<Vec<_>>(),
        "only_a": c.only_a,
        "only_b": c.only_b,
        "differing": c.differing.iter().map(|(cell, what)| json!({"cell": cell, "differs": what})).collect::<Vec<_>>(),
        "interference": c.interference.iter().map(|i| json!({
            "cell": i.cell, "runs": i.runs, "disturbed_runs": i.disturbed,
            "others_cpu_cores_mean": i.mean_cores, "others_cpu_cores_worst": i.worst_cores,
            "wait_share_a": i.waits.map(|w| w.0), "wait_share_b": i.waits.map(|w| w.1),
            "note": i.note(),
        })).collect::<Vec<_>>(),
        "regressions": c.regressions(),
        "improvements": c.improvements(),
        "count_regressions": c.count_regressions(),
        "planted": {"a": c.planted[0], "b": c.planted[1]},
        "count_improvements": c.count_improvements(),
        "reader_regressions": c.reader_regressions(super::Gate::Both),
    });
    serde_json::to_string_pretty(&doc).expect("a comparison serialises") + "\n"
}

#[cfg(test)]
mod tests {
    /// The document holds each cell's ratio, interval, change and verdict as the tables say
    /// them.
    #[test]
    fn a_paired_comparison_as_json() {
        let recs = crate::compare::tests::lockstep(20, 60, 1.08);
        let c = crate::compare::paired(&recs, 5.0);
        let doc: serde_json::Value = serde_json::from_str(&super::json(&c, "a", "b")).unwrap();
        assert_eq!(
            (doc["a"].as_str(), doc["paired"].as_bool()),
            (Some("a"), Some(true))
        );
        let cell = &doc["cells"][0];
        assert_eq!(cell["cell"], c.rows[0].cell.as_str());
        let tput = &cell["metrics"][0];
        assert_eq!(tput["metric"], "ops/s");
        let ratio = tput["ratio"].as_f64().unwrap();
        assert!((ratio - 1.0 / 1.08).abs() < 0.01, "{ratio}");
        let ci = tput["ci"].as_array().unwrap();
        assert!(ci[0].as_f64().unwrap() < ratio && ratio < ci[1].as_f64().unwrap());
        assert_eq!(tput["change"], "worse");
        assert_eq!(cell["regressed"], true);
        assert!(cell["verdict"].as_str().unwrap().starts_with("REGRESSION"));
        assert_eq!(doc["regressions"], 1);
        assert_eq!(cell["pairs"]["runs"], 20);
        assert_eq!(cell["pairs"]["crossovers"], 10);
    }
}
