//! A run's measured window second by second: what ended in each second from release —
//! successful operations, failures by class, the latencies of the successful ones (all the
//! workers' together: exact percentiles of the merged second, not averages of the
//! workers') — and, for a mixed cell, its successful reads. A second keeps its latencies
//! as they are (8 bytes an operation, as the fold keeps each commit's id), not a histogram
//! (tens of KiB each, which a long window's thousands of seconds would multiply).

use std::collections::BTreeMap;

/// The seconds a timeline keeps at most (a day): an operation reported later than that
/// is counted in the last.
const MAX_SECONDS: usize = 86_400;

#[derive(Debug, Clone, Default)]
struct Second {
    ops: u64,
    reads: u64,
    errors: BTreeMap<&'static str, u64>,
    latencies: Vec<f64>,
}

/// The nearest-rank percentile `p` (0–1) of sorted values; none of none.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let n = sorted.len();
    (n > 0).then(|| sorted[((p * n as f64).ceil() as usize).clamp(1, n) - 1])
}

/// The seconds of one run, filled as its operations are reported.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    seconds: Vec<Second>,
    reads_seen: bool,
}

/// A run's timeline as its record keeps it: one entry a second of the window, from
/// release (entry `i` covers `[i, i + 1)` s; the last one, the rest of the window).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TimeSeries {
    /// Successful operations (a mixed cell's commits) that ended in the second.
    pub ops: Vec<u64>,
    /// Failed ones by class (`conflict`, `throttled`, `network`, `other`, `timeout`), the
    /// classes that occurred only.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, Vec<u64>>,
    /// The median and 99th percentile latency (nearest rank, exact) of the second's
    /// successful operations, in ms; null for a second without one.
    pub p50_ms: Vec<Option<f64>>,
    pub p99_ms: Vec<Option<f64>>,
    /// A mixed cell's successful reads that ended in the second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<Vec<u64>>,
}

impl Timeline {
    fn at(&mut self, end_ms: f64) -> &mut Second {
        let i = ((end_ms.max(0.0) / 1000.0) as usize).min(MAX_SECONDS - 1);
        if self.seconds.len() <= i {
            self.seconds.resize_with(i + 1, Second::default);
        }
        &mut self.seconds[i]
    }

    /// A successful operation (or a mixed cell's read, `read`) of `ms` that ended `end_ms`
    /// after release.
    pub fn success(&mut self, end_ms: f64, ms: f64, read: bool) {
        self.reads_seen |= read;
        let s = self.at(end_ms);
        if read {
            s.reads += 1;
        } else {
            s.ops += 1;
            s.latencies.push(ms);
        }
    }

    /// A failed operation of class `class` that ended `end_ms` after release.
    pub fn failure(&mut self, end_ms: f64, class: &'static str) {
        *self.at(end_ms).errors.entry(class).or_default() += 1;
    }

    /// The series, as the record has it; none for an empty timeline.
    pub fn series(&self) -> Option<TimeSeries> {
        if self.seconds.is_empty() {
            return None;
        }
        let mut errors: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for (i, s) in self.seconds.iter().enumerate() {
            for (class, n) in &s.errors {
                errors
                    .entry(class.to_string())
                    .or_insert_with(|| vec![0; self.seconds.len()])[i] = *n;
            }
        }
        let sorted: Vec<Vec<f64>> = (self.seconds.iter())
            .map(|s| {
                let mut v = s.latencies.clone();
                v.sort_by(f64::total_cmp);
                v
            })
            .collect();
        let pct = |p: f64| sorted.iter().map(|v| percentile(v, p)).collect();
        Some(TimeSeries {
            ops: self.seconds.iter().map(|s| s.ops).collect(),
            errors,
            p50_ms: pct(0.50),
            p99_ms: pct(0.99),
            reads: self
                .reads_seen
                .then(|| self.seconds.iter().map(|s| s.reads).collect()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_land_in_the_second_they_ended_and_percentiles_are_of_the_merged_second() {
        let mut t = Timeline::default();
        // Two workers' operations in second 0: percentiles of all of them together.
        for ms in [1.0, 2.0, 3.0, 4.0, 100.0] {
            t.success(500.0, ms, false);
        }
        t.failure(1500.0, "conflict");
        t.success(2999.0, 7.0, false);
        t.success(2999.0, 0.5, true);
        let s = t.series().unwrap();
        assert_eq!(s.ops, vec![5, 0, 1]);
        assert_eq!(s.errors["conflict"], vec![0, 1, 0]);
        assert_eq!(s.errors.len(), 1, "only classes that occurred");
        let near = |v: Option<f64>, x: f64| (v.unwrap() - x).abs() <= x * 1e-3;
        assert!(near(s.p50_ms[0], 3.0), "{:?}", s.p50_ms);
        assert!(near(s.p99_ms[0], 100.0), "{:?}", s.p99_ms);
        assert!(s.p50_ms[1].is_none() && near(s.p99_ms[2], 7.0), "{s:?}");
        assert_eq!(s.reads, Some(vec![0, 0, 1]));
        assert!(Timeline::default().series().is_none());
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["p50_ms"][1], serde_json::Value::Null);
    }
}
