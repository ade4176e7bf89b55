//! Where an operation's time goes: its requests as intervals on one clock, folded into the
//! round trips on its critical path and the time it waited on the store, in all and by
//! kind of request.
//!
//! A round trip on the critical path is a maximal group of requests that overlap in time
//! (each starts before the group's last one ended): requests sent together count once, as
//! they wait on the store together; requests that wait on each other count one each. The
//! store-wait time is the time covered by at least one request (the union of the
//! intervals); the rest of the operation's time is the client's own (CPU, locks, waits on
//! anything but the store). The wait by kind shares each instant of waiting equally among
//! the requests in flight then: the kinds add up to the whole wait. The round trips by kind
//! share each round trip equally among its requests: they add up to the round trips, and
//! say how many a commit makes of each kind (what another latency for one kind moves).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An operation's critical path, as a worker reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CriticalPath {
    /// Maximal groups of overlapping requests.
    pub round_trips: u32,
    /// Time covered by at least one request, in ms.
    pub wait_ms: f64,
    /// `wait_ms` shared among the kinds of request (`get`, `put`, … as in `io_per_op`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub wait_by_kind: BTreeMap<String, f64>,
    /// `round_trips` shared among the kinds of request: each round trip equally among its
    /// requests.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub trips_by_kind: BTreeMap<String, f64>,
    /// The shortest request, in ms: about the store's latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest_ms: Option<f64>,
}

/// One request of an operation: start and end in ms on any one clock, and its kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    pub start: f64,
    pub end: f64,
    pub kind: &'static str,
}

/// The critical path of the requests (start and end, in ms on any one clock) of an
/// operation that ran from `start` to `end`: the parts of requests outside it are left out.
pub fn critical_path(requests: &[Request], start: f64, end: f64) -> CriticalPath {
    let mut inside: Vec<Request> = requests
        .iter()
        .map(|r| Request {
            start: r.start.max(start),
            end: r.end.min(end),
            kind: r.kind,
        })
        .filter(|r| r.end >= r.start && r.start <= end && r.end >= start)
        .collect();
    inside.sort_by(|x, y| x.start.total_cmp(&y.start));
    let mut path = CriticalPath::default();
    // The group under way: its span and its requests' kinds.
    let mut group: Option<(f64, f64, Vec<&'static str>)> = None;
    let close = |g: (f64, f64, Vec<&'static str>), path: &mut CriticalPath| {
        path.wait_ms += g.1 - g.0;
        let share = 1.0 / g.2.len() as f64;
        for k in g.2 {
            *path.trips_by_kind.entry(k.to_string()).or_default() += share;
        }
    };
    for r in &inside {
        match group.as_mut() {
            Some((_, gb, kinds)) if r.start < *gb => {
                *gb = gb.max(r.end);
                kinds.push(r.kind);
            }
            _ => {
                if let Some(g) = group.take() {
                    close(g, &mut path);
                }
                path.round_trips += 1;
                group = Some((r.start, r.end, vec![r.kind]));
            }
        }
    }
    if let Some(g) = group {
        close(g, &mut path);
    }
    path.wait_by_kind = wait_by_kind(&inside);
    path.fastest_ms = inside
        .iter()
        .map(|r| r.end - r.start)
        .min_by(f64::total_cmp);
    path
}

/// Each stretch between two consecutive starts or ends, shared equally among the requests
/// in flight during it.
fn wait_by_kind(requests: &[Request]) -> BTreeMap<String, f64> {
    let mut edges: Vec<f64> = requests.iter().flat_map(|r| [r.start, r.end]).collect();
    edges.sort_by(f64::total_cmp);
    edges.dedup();
    let mut by: BTreeMap<String, f64> = BTreeMap::new();
    for w in edges.windows(2) {
        let (a, b) = (w[0], w[1]);
        let live: Vec<&Request> = requests
            .iter()
            .filter(|r| r.start <= a && r.end >= b)
            .collect();
        let share = (b - a) / live.len().max(1) as f64;
        for r in live {
            *by.entry(r.kind.to_string()).or_default() += share;
        }
    }
    by
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reqs(spans: &[(f64, f64, &'static str)]) -> Vec<Request> {
        spans
            .iter()
            .map(|&(start, end, kind)| Request { start, end, kind })
            .collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn requests_that_wait_on_each_other_count_one_each_and_parallel_ones_once() {
        // HEAD, then two GETs together, then a PUT that starts exactly as they end, then a
        // conditional PUT after a pause.
        let spans = reqs(&[
            (0.0, 10.0, "head"),
            (12.0, 20.0, "get"),
            (13.0, 22.0, "get"),
            (22.0, 30.0, "put"),
            (40.0, 50.0, "conditional_put"),
        ]);
        let p = critical_path(&spans, 0.0, 55.0);
        assert_eq!(p.round_trips, 4);
        assert!(close(p.wait_ms, 10.0 + 10.0 + 8.0 + 10.0), "{p:?}");
        // Only what lies inside the operation counts.
        let p = critical_path(
            &reqs(&[(-5.0, 2.0, "get"), (60.0, 70.0, "get"), (3.0, 4.0, "get")]),
            0.0,
            55.0,
        );
        assert_eq!(p.round_trips, 2);
        assert!(close(p.wait_ms, 3.0), "{p:?}");
        assert_eq!(critical_path(&[], 0.0, 1.0), CriticalPath::default());
    }

    #[test]
    fn round_trips_are_shared_among_the_kinds_of_their_requests() {
        // A HEAD alone, then a GET and a HEAD together, then three PUTs together, then a
        // conditional PUT alone: 4 round trips, of which the PUTs make one.
        let p = critical_path(
            &reqs(&[
                (0.0, 10.0, "head"),
                (12.0, 20.0, "get"),
                (13.0, 22.0, "head"),
                (23.0, 30.0, "put"),
                (23.5, 31.0, "put"),
                (24.0, 29.0, "put"),
                (40.0, 50.0, "conditional_put"),
            ]),
            0.0,
            55.0,
        );
        assert_eq!(p.round_trips, 4);
        assert!(close(p.trips_by_kind["head"], 1.5), "{p:?}");
        assert!(close(p.trips_by_kind["get"], 0.5), "{p:?}");
        assert!(close(p.trips_by_kind["put"], 1.0), "{p:?}");
        assert!(close(p.trips_by_kind["conditional_put"], 1.0), "{p:?}");
        let sum: f64 = p.trips_by_kind.values().sum();
        assert!(close(sum, 4.0));
        assert_eq!(p.fastest_ms, Some(5.0));
    }

    #[test]
    fn nested_requests_are_one_round_trip() {
        let p = critical_path(
            &reqs(&[(0.0, 10.0, "list"), (2.0, 3.0, "get"), (4.0, 5.0, "get")]),
            0.0,
            10.0,
        );
        assert_eq!((p.round_trips, p.wait_ms), (1, 10.0));
    }

    #[test]
    fn the_wait_by_kind_shares_overlaps_and_adds_up_to_the_wait() {
        // Sequential: each kind its own time.
        let p = critical_path(
            &reqs(&[(0.0, 4.0, "head"), (5.0, 15.0, "get"), (15.0, 18.0, "put")]),
            0.0,
            20.0,
        );
        assert!(close(p.wait_by_kind["head"], 4.0));
        assert!(close(p.wait_by_kind["get"], 10.0));
        assert!(close(p.wait_by_kind["put"], 3.0));
        // Parallel: a PUT and a GET in flight together share the time both are.
        let p = critical_path(&reqs(&[(0.0, 10.0, "put"), (5.0, 20.0, "get")]), 0.0, 20.0);
        assert_eq!(p.round_trips, 1);
        assert!(close(p.wait_by_kind["put"], 5.0 + 2.5), "{p:?}");
        assert!(close(p.wait_by_kind["get"], 2.5 + 10.0), "{p:?}");
        // Nested and clipped: the sum is the union, whatever the shape.
        let p = critical_path(
            &reqs(&[
                (-3.0, 6.0, "list"),
                (1.0, 2.0, "get"),
                (1.5, 9.0, "get"),
                (8.0, 30.0, "put"),
            ]),
            0.0,
            25.0,
        );
        let sum: f64 = p.wait_by_kind.values().sum();
        assert!(close(sum, p.wait_ms), "{p:?}");
        assert!(close(p.wait_ms, 25.0), "{p:?}");
    }
}
