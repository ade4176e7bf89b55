//! What explains a time verdict: the change of an operation's mean time, split as bench
//! measures it — the request kinds and round trips that changed, and of its time, the wait
//! on each kind of request (`store_wait_ms_by_kind`) and the rest (`other_ms_per_op`: CPU,
//! locks, the queue for a writer) — naming what moved most. "+3.1 ms an operation,
//! requests unchanged: most in other (CPU, locks), +3.0 ms", or "−45.2 ms an operation:
//! LIST −343.0 per op; most in waits on list, −44.1 ms".

use crate::export::Record;
use crate::stats::median;

/// A request count or round trip that moved less than this per operation is unchanged.
const MOVED: f64 = super::counts::COUNT_TOLERANCE;

/// The median of `f` over the runs of a side that have it.
fn med(runs: &[&Record], f: impl Fn(&Record) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = runs.iter().filter_map(|r| f(r)).collect();
    (!v.is_empty()).then(|| median(v))
}

/// B − A of `f`'s medians, where both sides have it.
fn delta(a: &[&Record], b: &[&Record], f: impl Fn(&Record) -> Option<f64> + Copy) -> Option<f64> {
    Some(med(b, f)? - med(a, f)?)
}

/// The request kinds whose count per operation moved ("HEAD +1.0 per op"), and the
/// critical path's round trips.
fn requests_moved(a: &[&Record], b: &[&Record]) -> Vec<String> {
    let mut out: Vec<String> = super::counts::KINDS
        .iter()
        .filter_map(|(name, f)| {
            let d = delta(a, b, |r| r.io_per_op.map(|p| f(&p)))?;
            (d.abs() >= MOVED).then(|| format!("{name} {d:+.1} per op"))
        })
        .collect();
    if let Some(d) = delta(a, b, |r| r.round_trips_per_op).filter(|d| d.abs() >= MOVED) {
        out.push(format!("round trips {d:+.1}"));
    }
    out
}

/// Of an operation's time, the part that moved most: a kind's wait, or the rest.
fn moved_most(a: &[&Record], b: &[&Record]) -> Option<(String, f64)> {
    let kinds: std::collections::BTreeSet<String> = (a.iter().chain(b))
        .flat_map(|r| {
            r.store_wait_ms_by_kind
                .iter()
                .flat_map(|m| m.keys().cloned())
        })
        .collect();
    let mut parts: Vec<(String, f64)> = kinds
        .into_iter()
        .filter_map(|k| {
            let d = delta(a, b, |r| {
                (r.store_wait_ms_by_kind.as_ref()).map(|m| m.get(&k).copied().unwrap_or(0.0))
            })?;
            Some((format!("waits on {k}"), d))
        })
        .collect();
    if let Some(d) = delta(a, b, |r| r.other_ms_per_op) {
        parts.push(("other (CPU, locks)".to_string(), d));
    }
    parts
        .into_iter()
        .max_by(|x, y| x.1.abs().total_cmp(&y.1.abs()))
}

/// Why a cell's time moved from A to B, as far as its records tell: none where they hold
/// no mean time.
pub fn explain(a: &[&Record], b: &[&Record]) -> Option<String> {
    let ms = delta(a, b, |r| Some(r.avg_latency_ms).filter(|v| v.is_finite()))?;
    let counted = |runs: &[&Record]| runs.iter().all(|r| r.io_per_op.is_some());
    let most = moved_most(a, b);
    if !(counted(a) && counted(b)) && most.is_none() {
        // Records without the workers' accounting (an older build's): nothing to say.
        return None;
    }
    let requests = requests_moved(a, b);
    let head = match (counted(a) && counted(b), requests.is_empty()) {
        (false, _) => format!("{ms:+.1} ms an operation"),
        (true, true) => format!("{ms:+.1} ms an operation, requests unchanged"),
        (true, false) => format!("{ms:+.1} ms an operation: {}", requests.join(", ")),
    };
    Some(match most {
        Some((part, d)) => format!("{head}; most in {part}, {d:+.1} ms"),
        None => head,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::{ModeKind, Variant};
    use crate::stats::IoPerOp;

    fn run(ms: f64, head: f64, wait_head: f64, other: f64) -> Record {
        let mut r = record(ModeKind::Continuous, Variant::InlineIndex, 1000, 1, "c");
        r.avg_latency_ms = ms;
        r.io_per_op = Some(IoPerOp {
            get: 4.0,
            head,
            ..IoPerOp::default()
        });
        r.round_trips_per_op = Some(3.0 + head);
        r.store_wait_ms_by_kind = Some(
            [("get".to_string(), 2.0), ("head".to_string(), wait_head)]
                .into_iter()
                .collect(),
        );
        r.other_ms_per_op = Some(other);
        r
    }

    /// A slower build without a request more: the time is in "other".
    #[test]
    fn cpu_time_is_named_other() {
        let (a, b) = (run(10.0, 4.0, 1.0, 7.0), run(13.1, 4.0, 1.0, 10.0));
        let e = explain(&[&a], &[&b]).unwrap();
        assert_eq!(
            e,
            "+3.1 ms an operation, requests unchanged; most in other (CPU, locks), +3.0 ms"
        );
    }

    /// One HEAD more: named with its round trip, and its wait moved most.
    #[test]
    fn a_request_more_is_named_by_its_kind_and_its_wait() {
        let (a, b) = (run(10.0, 4.0, 1.0, 7.0), run(12.0, 5.0, 2.9, 7.1));
        let e = explain(&[&a], &[&b]).unwrap();
        assert_eq!(
            e,
            "+2.0 ms an operation: HEAD +1.0 per op, round trips +1.0; most in waits on head, +1.9 ms"
        );
    }
}
