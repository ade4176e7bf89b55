//! `bench predict RESULTS --latency-ms L`: what a continuous cell's commits would take on a
//! store whose requests take `L` ms, from what its records measured: the round trips on a
//! commit's critical path, the time each waited beyond the latency of the store it was
//! measured on (`--measured-at-ms`: the server's own work and the client's handling of
//! the request), and the commit's time away from the store.
//!
//! predicted latency = other + round trips × (L + wait / round trips − measured-at)
//!
//! With a latency per kind of request (`--kind-ms put=60`), each kind's share of the round
//! trips is its share of the wait (`store_wait_ms_by_kind`), and those round trips take
//! that kind's latency.
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
    /// The latency of one kind of request where it differs from --latency-ms, e.g.
    /// `conditional_put=60` (kinds as in io_per_op: get, head, put, conditional_put, list,
    /// delete, copy); repeat for several.
    #[arg(long = "kind-ms", value_name = "KIND=MS", value_parser = parse_kind_ms)]
    pub kind_ms: Vec<(String, f64)>,
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

const KINDS: [&str; 7] = [
    "get",
    "head",
    "put",
    "conditional_put",
    "list",
    "delete",
    "copy",
];

fn parse_kind_ms(s: &str) -> Result<(String, f64), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not KIND=MS"))?;
    if !KINDS.contains(&k) {
        return Err(format!(
            "{k:?} is not a kind of request: {}",
            KINDS.join(", ")
        ));
    }
    match v.parse::<f64>() {
        Ok(ms) if ms.is_finite() && ms >= 0.0 => Ok((k.to_string(), ms)),
        _ => Err(format!("{v:?} is not milliseconds, 0 or more")),
    }
}

/// The latency of a store's requests: one for all, or by kind where given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    pub ms: f64,
    pub by_kind: std::collections::BTreeMap<String, f64>,
}

impl Profile {
    pub fn flat(ms: f64) -> Profile {
        Profile {
            ms,
            by_kind: Default::default(),
        }
    }

    fn of(&self, kind: &str) -> f64 {
        self.by_kind.get(kind).copied().unwrap_or(self.ms)
    }
}

/// What a cell measured (medians over repetitions): mean latency, round trips and store
/// wait per commit, and the wait by kind of request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Path {
    pub avg: f64,
    pub trips: f64,
    pub wait: f64,
    pub wait_by_kind: std::collections::BTreeMap<String, f64>,
}

/// The latency a commit would have with requests as long as `profile` says, from what it
/// measured with requests `measured_at` ms long.
pub fn latency(p: &Path, measured_at: f64, profile: &Profile) -> f64 {
    if p.trips <= 0.0 {
        return p.avg;
    }
    let other = (p.avg - p.wait).max(0.0);
    let per_trip = (p.wait / p.trips - measured_at).max(0.0);
    let by_kind: f64 = p.wait_by_kind.values().sum();
    let mean_latency = if profile.by_kind.is_empty() || by_kind <= 0.0 {
        profile.ms
    } else {
        // Each kind's share of the round trips is its share of the wait.
        p.wait_by_kind
            .iter()
            .map(|(k, w)| w / by_kind * profile.of(k))
            .sum()
    };
    other + p.trips * (mean_latency + per_trip)
}

/// The predictions for the continuous cells of `records`, and the ids of the cells left out
/// (other modes, or records without critical paths).
pub fn predict(
    records: &[crate::export::Record],
    profile: &Profile,
    measured_at: f64,
) -> (Vec<Prediction>, Vec<String>) {
    let (mut out, mut skipped) = (Vec::new(), Vec::new());
    for c in cells(records) {
        let r = c.first();
        let paths: Option<Vec<Path>> = c
            .reps
            .iter()
            .map(|x| {
                Some(Path {
                    avg: x.avg_latency_ms,
                    trips: x.round_trips_per_op?,
                    wait: x.store_wait_ms_per_op?,
                    wait_by_kind: x.store_wait_ms_by_kind.clone().unwrap_or_default(),
                })
            })
            .collect();
        let Some(paths) = paths.filter(|_| r.mode == ModeKind::Continuous) else {
            skipped.push(r.bench_tag.clone());
            continue;
        };
        let med = |f: &dyn Fn(&Path) -> f64| median(paths.iter().map(f).collect());
        let kinds: std::collections::BTreeSet<&String> =
            paths.iter().flat_map(|p| p.wait_by_kind.keys()).collect();
        let path = Path {
            avg: med(&|p| p.avg),
            trips: med(&|p| p.trips),
            wait: med(&|p| p.wait),
            wait_by_kind: kinds
                .into_iter()
                .map(|k| {
                    let w = med(&|p| p.wait_by_kind.get(k).copied().unwrap_or(0.0));
                    (k.clone(), w)
                })
                .collect(),
        };
        let predicted = latency(&path, measured_at, profile);
        out.push(Prediction {
            bench_tag: r.bench_tag.clone(),
            measured_latency_ms: path.avg,
            round_trips_per_op: path.trips,
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
    let profile = Profile {
        ms: args.latency_ms,
        by_kind: args.kind_ms.iter().cloned().collect(),
    };
    if !profile.by_kind.is_empty()
        && records
            .iter()
            .any(|r| r.round_trips_per_op.is_some() && r.store_wait_ms_by_kind.is_none())
    {
        return Err(BenchError::Usage(format!(
            "--kind-ms needs the wait by kind of request (store_wait_ms_by_kind), which some \
             records of {} lack: re-run those cells with this bench, or predict with \
             --latency-ms alone",
            file.display()
        )));
    }
    let (preds, skipped) = predict(&records, &profile, args.measured_at_ms);
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
            "predicted for {} ms a request{} (measured at {} ms), one writer:\n{:<40} {:>12} {:>11} {:>14} {:>14}",
            args.latency_ms,
            args.kind_ms
                .iter()
                .map(|(k, ms)| format!(", {k} {ms} ms"))
                .collect::<String>(),
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
        let p = Path {
            avg: 268.0,
            trips: 10.0,
            wait: 260.0,
            wait_by_kind: Default::default(),
        };
        let l = latency(&p, 20.0, &Profile::flat(40.0));
        assert!((l - 468.0).abs() < 1e-9, "{l}");
        assert!((latency(&p, 20.0, &Profile::flat(20.0)) - 268.0).abs() < 1e-9);
        let none = Path {
            avg: 5.0,
            ..Path::default()
        };
        assert_eq!(latency(&none, 0.0, &Profile::flat(40.0)), 5.0);
    }

    #[test]
    fn a_kind_s_latency_moves_its_share_of_the_round_trips() {
        // 10 round trips, 2 of them PUTs by their share of the wait (52 of 260 ms).
        let p = Path {
            avg: 268.0,
            trips: 10.0,
            wait: 260.0,
            wait_by_kind: [("get".to_string(), 208.0), ("put".to_string(), 52.0)].into(),
        };
        let mut profile = Profile::flat(40.0);
        profile.by_kind.insert("put".into(), 90.0);
        // 8 + 8 × (40 + 6) + 2 × (90 + 6).
        let l = latency(&p, 20.0, &profile);
        assert!((l - (8.0 + 8.0 * 46.0 + 2.0 * 96.0)).abs() < 1e-9, "{l}");
        // The same latency for every kind is the flat prediction.
        profile.by_kind.insert("put".into(), 40.0);
        assert!((latency(&p, 20.0, &profile) - 468.0).abs() < 1e-9);
        assert!(parse_kind_ms("put=60").is_ok());
        assert!(parse_kind_ms("post=60").unwrap_err().contains("not a kind"));
        assert!(parse_kind_ms("put=-1").is_err());
    }
}
