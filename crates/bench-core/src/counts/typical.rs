//! The typical operation's counts: the median, over a run's successful operations, of each
//! kind of request, of all of them, of the bytes read and written and of the round trips on
//! the critical path.
//!
//! Where several writers contend, an operation that lost to another retries and repeats
//! its requests, so the mean per operation moves with how many lost in that run. The
//! median operation does not: while fewer than half retry it is one that committed at its
//! first attempt, the same work in every run, and a build that adds a request to every
//! operation moves it by exactly that request.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{IoCounts, IoPerOp};

/// The medians ([`Typical::medians`]): per kind as in `IoPerOp`, `requests` of every kind
/// (a conditional put once), the bytes read and written (absent from records written
/// before bench took them), and `round_trips` where the operations reported their paths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TypicalOp {
    pub get: f64,
    pub put: f64,
    pub conditional_put: f64,
    pub list: f64,
    pub head: f64,
    pub delete: f64,
    pub copy: f64,
    pub requests: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trips: Option<f64>,
}

impl TypicalOp {
    /// Its requests by kind as an [`IoPerOp`] (no bytes), for what judges `io_per_op`'s.
    pub fn kinds(&self) -> IoPerOp {
        IoPerOp {
            get: self.get,
            put: self.put,
            conditional_put: self.conditional_put,
            list: self.list,
            head: self.head,
            delete: self.delete,
            copy: self.copy,
            ..IoPerOp::default()
        }
    }
}

/// How many operations made each count, per kind (the order of [`TypicalOp`]'s fields).
#[derive(Debug, Clone, Default)]
pub struct Typical {
    kinds: [BTreeMap<u64, u64>; 8],
    /// Bytes read and written.
    bytes: [BTreeMap<u64, u64>; 2],
    trips: BTreeMap<u64, u64>,
    ops: u64,
}

impl Typical {
    /// One successful operation's requests, and its critical path's round trips if known.
    pub fn add(&mut self, io: &IoCounts, round_trips: Option<u32>) {
        let values = [
            io.get,
            io.put,
            io.conditional_put,
            io.list,
            io.head,
            io.delete,
            io.copy,
            io.requests(),
        ];
        for (map, v) in self.kinds.iter_mut().zip(values) {
            *map.entry(v).or_default() += 1;
        }
        for (map, v) in self.bytes.iter_mut().zip([io.read_bytes, io.written_bytes]) {
            *map.entry(v).or_default() += 1;
        }
        if let Some(t) = round_trips {
            *self.trips.entry(u64::from(t)).or_default() += 1;
        }
        self.ops += 1;
    }

    /// How many operations were added.
    pub fn operations(&self) -> u64 {
        self.ops
    }

    /// The medians of the operations added; `None` without any.
    pub fn medians(&self) -> Option<TypicalOp> {
        let k: Vec<f64> = self.kinds.iter().map(median).collect::<Option<_>>()?;
        Some(TypicalOp {
            get: k[0],
            put: k[1],
            conditional_put: k[2],
            list: k[3],
            head: k[4],
            delete: k[5],
            copy: k[6],
            requests: k[7],
            read_bytes: median(&self.bytes[0]),
            written_bytes: median(&self.bytes[1]),
            round_trips: median(&self.trips),
        })
    }
}

/// The median of values given by how many times each occurs (the mean of the two middle
/// ones for an even count); `None` for none.
fn median(counts: &BTreeMap<u64, u64>) -> Option<f64> {
    let n: u64 = counts.values().sum();
    if n == 0 {
        return None;
    }
    // The values at ranks (n - 1) / 2 and n / 2 (0-based).
    let at = |rank: u64| {
        let mut seen = 0;
        for (&v, &c) in counts {
            seen += c;
            if rank < seen {
                return v;
            }
        }
        unreachable!("a rank below the count")
    };
    Some((at((n - 1) / 2) + at(n / 2)) as f64 / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eight operations at 7 requests and 3 that retried: the median operation is one of
    /// the eight, whatever the retries cost; a planted request moves it by one.
    #[test]
    fn the_median_operation_is_the_one_that_did_not_retry() {
        // A retry reads and writes again: its bytes grow with its requests.
        let op = |head: u64, get: u64| IoCounts {
            head,
            get,
            put: 1,
            conditional_put: 1,
            read_bytes: 1_000 * get,
            written_bytes: 900 + 100 * head,
            ..IoCounts::default()
        };
        let mut t = Typical::default();
        for _ in 0..8 {
            t.add(&op(4, 2), Some(5));
        }
        for k in 1..=3 {
            t.add(&op(4 + 4 * k, 2 + 3 * k), Some(5 + 4 * k as u32));
        }
        let m = t.medians().unwrap();
        assert_eq!(
            (m.head, m.get, m.requests, m.round_trips),
            (4.0, 2.0, 7.0, Some(5.0))
        );
        assert_eq!(
            (m.read_bytes, m.written_bytes),
            (Some(2_000.0), Some(1_300.0))
        );
        let mut planted = Typical::default();
        for _ in 0..8 {
            planted.add(&op(5, 2), None);
        }
        let p = planted.medians().unwrap();
        assert_eq!((p.head, p.requests, p.round_trips), (5.0, 8.0, None));
        // An even count: the mean of the middle two.
        let mut two = Typical::default();
        two.add(&op(4, 2), None);
        two.add(&op(6, 2), None);
        assert_eq!(two.medians().unwrap().head, 5.0);
        assert!(Typical::default().medians().is_none());
    }
}
