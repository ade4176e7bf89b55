//! `bench predict RESULTS --latency-ms L`: what a continuous cell's commits would take on a
//! store whose requests take `L` ms, from what its records measured: the round trips on a
//! commit's critical path, the time each waited beyond the latency of the store it was
//! measured on (the server's own work and the client's handling of the request), and the
//! commit's time away from the store. The latency it was measured at is
//! `--measured-at-ms`, or else the run's fastest request (`fastest_request_ms`): a store's
//! latency plus the least it ever adds.
//!
//! predicted latency = other + round trips × (L + wait / round trips − measured-at)
//!
//! With a latency per kind of request (`--kind-ms put=60`), each kind's round trips
//! (`round_trips_by_kind`: each round trip shared among its requests) take that kind's
//! latency.
//!
//! Only one writer: with several, commits wait on each other's versions (retries), which
//! the records of one writer do not describe. Concurrent and mixed cells are named and left
//! out.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::BenchError;
use crate::export::cells;
use crate::plan::ModeKind;
use crate::stats::median;

/// What `bench predict` is asked (the command line's, as plain values).
#[derive(Debug, Clone)]
pub struct PredictArgs {
    /// A results directory or a results JSONL file.
    pub results: PathBuf,
    /// The latency to predict for, in ms a request.
    pub latency_ms: f64,
    /// The latency the records were measured at; `None`: each cell's fastest request.
    pub measured_at_ms: Option<f64>,
    /// Kinds of request with a latency of their own.
    pub kind_ms: Vec<(String, f64)>,
    /// One JSON object a cell instead of the table.
    pub json: bool,
}

/// One cell's prediction (of one arm, in a results directory of `bench ab`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    pub bench_tag: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arm: Option<String>,
    /// The latency of the store the cell was measured on, and where that figure comes
    /// from: `given` (`--measured-at-ms`), `fastest request` or `unknown` (taken as 0).
    pub measured_at_ms: f64,
    pub measured_at: &'static str,
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

/// `KIND=MS` as the command line gives it, the kind one `io_per_op` has.
pub fn parse_kind_ms(s: &str) -> Result<(String, f64), String> {
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
/// wait per commit, and the round trips by kind of request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Path {
    pub avg: f64,
    pub trips: f64,
    pub wait: f64,
    pub trips_by_kind: std::collections::BTreeMap<String, f64>,
}

/// The latency a commit would have with requests as long as `profile` says, from what it
/// measured with requests `measured_at` ms long.
pub fn latency(p: &Path, measured_at: f64, profile: &Profile) -> f64 {
    if p.trips <= 0.0 {
        return p.avg;
    }
    let other = (p.avg - p.wait).max(0.0);
    let per_trip = (p.wait / p.trips - measured_at).max(0.0);
    let by_kind: f64 = p.trips_by_kind.values().sum();
    let mean_latency = if profile.by_kind.is_empty() || by_kind <= 0.0 {
        profile.ms
    } else {
        // Each kind's round trips take its latency.
        p.trips_by_kind
            .iter()
            .map(|(k, n)| n / by_kind * profile.of(k))
            .sum()
    };
    other + p.trips * (mean_latency + per_trip)
}

/// The predictions for the continuous cells of `records`, and the ids of the cells left out
/// (other modes, or records without critical paths). `measured_at`: the latency they were
/// measured at, or `None` for each cell's own fastest request.
pub fn predict(
    records: &[crate::export::Record],
    profile: &Profile,
    measured_at: Option<f64>,
) -> (Vec<Prediction>, Vec<String>) {
    let (mut out, mut skipped) = (Vec::new(), Vec::new());
    for c in cells(records) {
        let r = c.first();
        let name = match &r.arm {
            Some(a) => format!("{} (arm {a})", r.bench_tag),
            None => r.bench_tag.clone(),
        };
        let paths: Option<Vec<Path>> = c
            .reps
            .iter()
            .map(|x| {
                Some(Path {
                    avg: x.avg_latency_ms,
                    trips: x.round_trips_per_op?,
                    wait: x.store_wait_ms_per_op?,
                    trips_by_kind: x.round_trips_by_kind.clone().unwrap_or_default(),
                })
            })
            .collect();
        let Some(paths) = paths.filter(|_| r.mode == ModeKind::Continuous) else {
            skipped.push(name);
            continue;
        };
        let med = |f: &dyn Fn(&Path) -> f64| median(paths.iter().map(f).collect());
        let kinds: std::collections::BTreeSet<&String> =
            paths.iter().flat_map(|p| p.trips_by_kind.keys()).collect();
        let path = Path {
            avg: med(&|p| p.avg),
            trips: med(&|p| p.trips),
            wait: med(&|p| p.wait),
            trips_by_kind: kinds
                .into_iter()
                .map(|k| {
                    let n = med(&|p| p.trips_by_kind.get(k).copied().unwrap_or(0.0));
                    (k.clone(), n)
                })
                .collect(),
        };
        let fastest: Option<Vec<f64>> = c.reps.iter().map(|x| x.fastest_request_ms).collect();
        let (at, how) = match (measured_at, fastest) {
            (Some(ms), _) => (ms, "given"),
            (None, Some(v)) => (median(v), "fastest request"),
            (None, None) => (0.0, "unknown"),
        };
        let predicted = latency(&path, at, profile);
        out.push(Prediction {
            bench_tag: r.bench_tag.clone(),
            arm: r.arm.clone(),
            measured_at_ms: at,
            measured_at: how,
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

/// The cells measured with lance's native local requests (not a store's: a version-hint
/// file, no LIST, direct reads of files), whose round trips say nothing of S3.
fn native_local(records: &[crate::export::Record]) -> Vec<String> {
    let mut v: Vec<String> = records
        .iter()
        .filter(|r| r.storage_scheme == "file" && r.local_requests.is_none())
        .map(|r| r.bench_tag.clone())
        .collect();
    v.dedup();
    v
}

/// `bench predict`: the predictions as a table, or one JSON object a line; and on stderr
/// what they rest on (where the measured latency came from, cells left out, local requests).
pub fn run(args: &PredictArgs) -> Result<crate::answer::Answer, BenchError> {
    let (file, records) = crate::sweep::resume::load(&args.results).map_err(BenchError::output)?;
    let ms = |x: f64| x.is_finite() && x >= 0.0;
    if !(ms(args.latency_ms) && args.measured_at_ms.is_none_or(ms)) {
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
            .any(|r| r.round_trips_per_op.is_some() && r.round_trips_by_kind.is_none())
    {
        return Err(BenchError::Usage(format!(
            "--kind-ms needs the round trips by kind of request (round_trips_by_kind), which \
             some records of {} lack: re-run those cells with this bench, or predict with \
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
    let mut notes = Vec::new();
    let by = |how: &str| preds.iter().filter(|p| p.measured_at == how).count();
    if args.measured_at_ms.is_none() && by("fastest request") > 0 {
        notes.push(
            "measured at: each cell's fastest request, about the latency of the store it ran \
             on (give --measured-at-ms to set it)"
                .to_string(),
        );
    }
    if by("unknown") > 0 {
        notes.push(format!(
            "measured at: {} cells' records do not say their fastest request (recorded by an \
             older bench): taken as 0 ms; give --measured-at-ms",
            by("unknown")
        ));
    }
    let local = native_local(&records);
    if !local.is_empty() {
        notes.push(format!(
            "{} measured on local disk with lance's own local requests (a version-hint file, \
             no LIST, direct reads), not a store's: their round trips predict a local disk, \
             not S3; for a store's, run them with run.local_requests = \"s3\" or on an S3 \
             store",
            crate::plan::count(local.len() as u64, "cell was", "cells were")
        ));
    }
    if !skipped.is_empty() {
        notes.push(format!(
            "not predicted (several writers, or records without round trips): {}",
            skipped.join(", ")
        ));
    }
    Ok(crate::answer::Answer {
        stdout: table(args, &preds),
        stderr: notes,
        code: crate::error::exit::OK,
    })
}

/// The predictions as text: a table, or JSON lines with `--json`.
fn table(args: &PredictArgs, preds: &[Prediction]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    if args.json {
        for p in preds {
            let _ = writeln!(
                s,
                "{}",
                serde_json::to_string(p).expect("a prediction serialises")
            );
        }
        return s;
    }
    let _ = writeln!(
        s,
        "predicted for {} ms a request{}, one writer:\n{:<48} {:>11} {:>12} {:>11} {:>14} {:>14}",
        args.latency_ms,
        args.kind_ms
            .iter()
            .map(|(k, ms)| format!(", {k} {ms} ms"))
            .collect::<String>(),
        "cell",
        "measured at",
        "measured ms",
        "round trips",
        "predicted ms",
        "predicted op/s"
    );
    for p in preds {
        let name = match &p.arm {
            Some(a) => format!("{} (arm {a})", p.bench_tag),
            None => p.bench_tag.clone(),
        };
        let _ = writeln!(
            s,
            "{:<48} {:>11} {:>12.2} {:>11.1} {:>14.2} {:>14.2}",
            name,
            format!("{:.1} ms", p.measured_at_ms),
            p.measured_latency_ms,
            p.round_trips_per_op,
            p.predicted_latency_ms,
            p.predicted_ops_per_sec
        );
    }
    s
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
            trips_by_kind: Default::default(),
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
    fn a_kind_s_latency_moves_its_round_trips() {
        // 10 round trips, 2 of them PUTs, 1 a conditional PUT.
        let p = Path {
            avg: 268.0,
            trips: 10.0,
            wait: 260.0,
            trips_by_kind: [
                ("get".to_string(), 7.0),
                ("put".to_string(), 2.0),
                ("conditional_put".to_string(), 1.0),
            ]
            .into(),
        };
        let mut profile = Profile::flat(40.0);
        profile.by_kind.insert("put".into(), 90.0);
        // 8 + 8 × (40 + 6) + 2 × (90 + 6).
        let l = latency(&p, 20.0, &profile);
        assert!((l - (8.0 + 8.0 * 46.0 + 2.0 * 96.0)).abs() < 1e-9, "{l}");
        // A conditional PUT 20 ms slower than the rest: one round trip of it, 20 ms more,
        // however long it waited where it was measured.
        let mut cput = Profile::flat(40.0);
        cput.by_kind.insert("conditional_put".into(), 60.0);
        let more = latency(&p, 20.0, &cput) - latency(&p, 20.0, &Profile::flat(40.0));
        assert!((more - 20.0).abs() < 1e-9, "{more}");
        // The same latency for every kind is the flat prediction.
        profile.by_kind.insert("put".into(), 40.0);
        assert!((latency(&p, 20.0, &profile) - 468.0).abs() < 1e-9);
        assert!(parse_kind_ms("put=60").is_ok());
        assert!(parse_kind_ms("post=60").unwrap_err().contains("not a kind"));
        assert!(parse_kind_ms("put=-1").is_err());
    }

    /// Without --measured-at-ms, each cell's fastest request is the latency it was
    /// measured at; the arms of an A/B directory are predicted apart, each named.
    #[test]
    fn the_measured_latency_comes_from_the_records_and_arms_are_named() {
        use crate::export::record::tests::record;
        use crate::plan::Variant;
        let rec = |arm: &str, fastest: f64| {
            let mut r = record(ModeKind::Continuous, Variant::NoIndex, 1000, 1, "cont");
            r.arm = Some(arm.into());
            r.avg_latency_ms = 268.0;
            r.round_trips_per_op = Some(10.0);
            r.store_wait_ms_per_op = Some(260.0);
            r.fastest_request_ms = Some(fastest);
            r.storage_scheme = "s3".into();
            r
        };
        let records = [rec("A", 20.0), rec("B", 20.0)];
        let (preds, skipped) = predict(&records, &Profile::flat(40.0), None);
        assert!(skipped.is_empty());
        let arms: Vec<Option<&str>> = preds.iter().map(|p| p.arm.as_deref()).collect();
        assert_eq!(arms, [Some("A"), Some("B")]);
        assert_eq!(preds[0].measured_at, "fastest request");
        assert!((preds[0].predicted_latency_ms - 468.0).abs() < 1e-9);
        // Given, it wins; unknown, it is 0 and said.
        let (given, _) = predict(&records, &Profile::flat(40.0), Some(0.0));
        assert_eq!(given[0].measured_at, "given");
        assert!((given[0].predicted_latency_ms - 668.0).abs() < 1e-9);
        let mut old = records.clone();
        old.iter_mut().for_each(|r| r.fastest_request_ms = None);
        assert_eq!(
            predict(&old, &Profile::flat(40.0), None).0[0].measured_at,
            "unknown"
        );
        // Local disk with lance's own requests is named; S3-shaped local runs are not.
        let mut local = records.to_vec();
        local
            .iter_mut()
            .for_each(|r| r.storage_scheme = "file".into());
        assert_eq!(native_local(&local), ["cont"]);
        local
            .iter_mut()
            .for_each(|r| r.local_requests = Some("s3".into()));
        assert!(native_local(&local).is_empty());
    }
}
