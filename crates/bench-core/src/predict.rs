//! `bench predict RESULTS --latency-ms L`: what a continuous cell's commits would take on a
//! store whose requests take `L` ms, from what its records measured: the round trips on a
//! commit's critical path, the time each waited beyond the latency of the store it was
//! measured on (`--measured-at-ms`: the server's own work and the client's handling of
//! the request), and the commit's time away from the store.
//!
//! predicted latency = other + round trips × (L + wait / round trips − measured-at)
//!
//! Only one writer: with several, commits wait on each other's versions (retries), which
//! the records of one writer do not describe. Concurrent and mixed cells are named and left
//! out.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::BenchError;
use crate::export::{cells, jsonl};
use crate::plan::ModeKind;
use crate::stats::median;

/// `bench predict`.
#[derive(Debug, Clone, clap::Args)]
pub struct PredictArgs {
    /// A results directory or a results JSONL file.
    pub results: PathBuf,
    /// The latency of the store to predict for, in ms a request.
    #[arg(long, value_name = "MS")]
    pub latency_ms: f64,
    /// The latency of the store the records were measured on, in ms a request (0 for
    /// local disk or a store on this machine; e.g. 20 for `scripts/s3-server.py
    /// --latency-ms 20`).
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    pub measured_at_ms: f64,
    /// One JSON object a cell instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// One cell's prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    pub bench_tag: String,
    pub measured_latency_ms: f64,
    pub round_trips_per_op: f64,
    pub predicted_latency_ms: f64,
    pub predicted_ops_per_sec: f64,
}

/// The latency a commit would have with requests `latency_ms` long, from its measured
/// mean latency, round trips and store wait (medians over repetitions).
pub fn latency(avg: f64, trips: f64, wait: f64, measured_at: f64, latency_ms: f64) -> f64 {
    if trips <= 0.0 {
        return avg;
    }
    let other = (avg - wait).max(0.0);
    let per_trip = (wait / trips - measured_at).max(0.0);
    other + trips * (latency_ms + per_trip)
}

/// The predictions for the continuous cells of `records`, and the ids of the cells left out
/// (other modes, or records without critical paths).
pub fn predict(
    records: &[crate::export::Record],
    latency_ms: f64,
    measured_at: f64,
) -> (Vec<Prediction>, Vec<String>) {
    let (mut out, mut skipped) = (Vec::new(), Vec::new());
    for c in cells(records) {
        let r = c.first();
        let paths: Option<Vec<(f64, f64, f64)>> = c
            .reps
            .iter()
            .map(|x| {
                Some((
                    x.avg_latency_ms,
                    x.round_trips_per_op?,
                    x.store_wait_ms_per_op?,
                ))
            })
            .collect();
        let Some(paths) = paths.filter(|_| r.mode == ModeKind::Continuous) else {
            skipped.push(r.bench_tag.clone());
            continue;
        };
        let med = |f: fn(&(f64, f64, f64)) -> f64| median(paths.iter().map(f).collect());
        let (avg, trips, wait) = (med(|p| p.0), med(|p| p.1), med(|p| p.2));
        let predicted = latency(avg, trips, wait, measured_at, latency_ms);
        out.push(Prediction {
            bench_tag: r.bench_tag.clone(),
            measured_latency_ms: avg,
            round_trips_per_op: trips,
            predicted_latency_ms: predicted,
            predicted_ops_per_sec: if predicted > 0.0 {
                1000.0 / predicted
            } else {
                0.0
            },
        });
    }
    (out, skipped)
}

/// `bench predict`: print the predictions (a table, or JSON lines).
pub fn run(args: &PredictArgs) -> Result<u8, BenchError> {
    let (file, records) = jsonl::load(&args.results).map_err(BenchError::output)?;
    let ms = |x: f64| x.is_finite() && x >= 0.0;
    if !(ms(args.latency_ms) && ms(args.measured_at_ms)) {
        return Err(BenchError::Usage(
            "--latency-ms and --measured-at-ms are milliseconds, 0 or more".into(),
        ));
    }
    let (preds, skipped) = predict(&records, args.latency_ms, args.measured_at_ms);
    if preds.is_empty() {
        return Err(BenchError::output(format!(
            "{} has no continuous cell whose records carry round trips (round_trips_per_op); \
             run continuous cells with this bench to predict them",
            file.display()
        )));
    }
    if args.json {
        for p in &preds {
            println!(
                "{}",
                serde_json::to_string(p).expect("a prediction serialises")
            );
        }
    } else {
        println!(
            "predicted for {} ms a request (measured at {} ms), one writer:\n{:<40} {:>12} {:>11} {:>14} {:>14}",
            args.latency_ms,
            args.measured_at_ms,
            "cell",
            "measured ms",
            "round trips",
            "predicted ms",
            "predicted op/s"
        );
        for p in &preds {
            println!(
                "{:<40} {:>12.2} {:>11.1} {:>14.2} {:>14.2}",
                p.bench_tag,
                p.measured_latency_ms,
                p.round_trips_per_op,
                p.predicted_latency_ms,
                p.predicted_ops_per_sec
            );
        }
    }
    if !skipped.is_empty() {
        eprintln!(
            "not predicted (several writers, or records without round trips): {}",
            skipped.join(", ")
        );
    }
    Ok(crate::error::exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latency_moves_by_the_round_trips_times_the_change() {
        // 10 round trips that waited 260 ms at 20 ms a request (6 ms each beyond it), and
        // 8 ms of the commit's own: at 40 ms, 8 + 10 × 46.
        let l = latency(268.0, 10.0, 260.0, 20.0, 40.0);
        assert!((l - 468.0).abs() < 1e-9, "{l}");
        assert!((latency(268.0, 10.0, 260.0, 20.0, 20.0) - 268.0).abs() < 1e-9);
        assert_eq!(latency(5.0, 0.0, 0.0, 0.0, 40.0), 5.0);
    }
}
