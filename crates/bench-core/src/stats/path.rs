//! Where an operation's time goes: its requests as intervals on one clock, folded into the
//! round trips on its critical path and the time it waited on the store.
//!
//! A round trip on the critical path is a maximal group of requests that overlap in time
//! (each starts before the group's last one ended): requests sent together count once, as
//! they wait on the store together; requests that wait on each other count one each. The
//! store-wait time is the time covered by at least one request (the union of the
//! intervals); the rest of the operation's time is the client's own (CPU, locks, waits on
//! anything but the store).

use serde::{Deserialize, Serialize};

/// An operation's critical path, as a worker reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CriticalPath {
    /// Maximal groups of overlapping requests.
    pub round_trips: u32,
    /// Time covered by at least one request, in ms.
    pub wait_ms: f64,
}

/// The critical path of the requests `spans` (start and end, in ms on any one clock) of an
/// operation that ran from `start` to `end`: the parts of requests outside it are left out.
pub fn critical_path(spans: &[(f64, f64)], start: f64, end: f64) -> CriticalPath {
    let mut inside: Vec<(f64, f64)> = spans
        .iter()
        .map(|&(a, b)| (a.max(start), b.min(end)))
        .filter(|&(a, b)| b >= a && a <= end && b >= start)
        .collect();
    inside.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut path = CriticalPath::default();
    let mut group: Option<(f64, f64)> = None;
    for (a, b) in inside {
        match group {
            Some((ga, gb)) if a < gb => group = Some((ga, gb.max(b))),
            _ => {
                if let Some((ga, gb)) = group {
                    path.wait_ms += gb - ga;
                }
                path.round_trips += 1;
                group = Some((a, b));
            }
        }
    }
    if let Some((ga, gb)) = group {
        path.wait_ms += gb - ga;
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_that_wait_on_each_other_count_one_each_and_parallel_ones_once() {
        // HEAD, then two GETs together, then a PUT that starts exactly as they end, then a
        // conditional PUT after a pause.
        let spans = [
            (0.0, 10.0),
            (12.0, 20.0),
            (13.0, 22.0),
            (22.0, 30.0),
            (40.0, 50.0),
        ];
        let p = critical_path(&spans, 0.0, 55.0);
        assert_eq!(p.round_trips, 4);
        assert!(
            (p.wait_ms - (10.0 + 10.0 + 8.0 + 10.0)).abs() < 1e-9,
            "{p:?}"
        );
        // Only what lies inside the operation counts.
        let p = critical_path(&[(-5.0, 2.0), (60.0, 70.0), (3.0, 4.0)], 0.0, 55.0);
        assert_eq!(p.round_trips, 2);
        assert!((p.wait_ms - 3.0).abs() < 1e-9, "{p:?}");
        assert_eq!(critical_path(&[], 0.0, 1.0), CriticalPath::default());
        // Nested requests are one round trip.
        let p = critical_path(&[(0.0, 10.0), (2.0, 3.0), (4.0, 5.0)], 0.0, 10.0);
        assert_eq!((p.round_trips, p.wait_ms), (1, 10.0));
    }
}
