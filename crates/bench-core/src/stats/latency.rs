//! Latency statistics of a cell: an HDR histogram (microsecond resolution, 3 significant
//! digits) per worker, merged exactly, so memory does not grow with the number of
//! operations; count, mean, min and max are kept exactly.

use hdrhistogram::Histogram;

/// Summary of the latencies (milliseconds) of a cell's successful operations.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LatencySummary {
    pub count: u64,
    pub avg: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub min: f64,
    pub max: f64,
}

/// The latency histogram of a run's successful operations, as its record keeps it (`latency_histogram`), so that any
/// distribution can be drawn again: each distinct value the HDR histogram holds (in µs, the
/// highest of its bucket: 3 significant digits) and how many operations took it.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct LatencyHistogram {
    pub values_us: Vec<u64>,
    pub counts: Vec<u64>,
}

/// Latencies of successful operations, recorded into an HDR histogram.
#[derive(Debug, Clone)]
pub struct Latencies {
    hist: Histogram<u64>,
    sum_ms: f64,
    min_ms: f64,
    max_ms: f64,
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies {
            hist: Histogram::new(3).expect("3 significant digits is valid"),
            sum_ms: 0.0,
            min_ms: f64::INFINITY,
            max_ms: 0.0,
        }
    }
}

impl Latencies {
    pub fn record(&mut self, ms: f64) {
        let us = (ms * 1000.0).round().max(1.0) as u64;
        // The histogram resizes itself; only an absurd value could fail, then saturate.
        if self.hist.record(us).is_err() {
            self.hist.saturating_record(us);
        }
        self.sum_ms += ms;
        self.min_ms = self.min_ms.min(ms);
        self.max_ms = self.max_ms.max(ms);
    }

    /// Merge another worker's latencies exactly (histogram counts add up).
    pub fn merge(&mut self, other: &Latencies) {
        self.hist
            .add(&other.hist)
            .expect("auto-resizing histograms merge");
        self.sum_ms += other.sum_ms;
        self.min_ms = self.min_ms.min(other.min_ms);
        self.max_ms = self.max_ms.max(other.max_ms);
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// The histogram's buckets that hold operations; `None` when none succeeded.
    pub fn histogram(&self) -> Option<LatencyHistogram> {
        (self.count() > 0).then(|| {
            let (values_us, counts) = (self.hist.iter_recorded())
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .unzip();
            LatencyHistogram { values_us, counts }
        })
    }

    /// Summarise; an empty set gives all zeros, as the reference reports.
    pub fn summary(&self) -> LatencySummary {
        let n = self.count();
        if n == 0 {
            return LatencySummary::default();
        }
        // A bucket's highest value can lie just past the largest sample: clamp to it.
        let q = |p: f64| {
            (self.hist.value_at_quantile(p) as f64 / 1000.0).clamp(self.min_ms, self.max_ms)
        };
        LatencySummary {
            count: n,
            avg: self.sum_ms / n as f64,
            p50: q(0.50),
            p90: q(0.90),
            p99: q(0.99),
            p999: q(0.999),
            min: self.min_ms,
            max: self.max_ms,
        }
    }
}

/// Operations per second over a measured window; 0 for an empty window.
pub fn throughput(ops: u64, window_ms: f64) -> f64 {
    if window_ms > 0.0 {
        ops as f64 / (window_ms / 1000.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept histogram holds every operation once, at its value to 3 significant
    /// digits, in order, so that its percentiles can be read again from it alone.
    #[test]
    fn the_kept_histogram_holds_every_operation_at_its_value() {
        let data: Vec<f64> = (1..=1000).map(|i| f64::from(i) * 0.731).collect();
        let l = record_all(&data);
        let h = l.histogram().expect("operations");
        assert_eq!(h.counts.iter().sum::<u64>(), 1000);
        assert_eq!(h.values_us.len(), h.counts.len());
        assert!(h.values_us.windows(2).all(|w| w[0] < w[1]));
        // The 500th operation's value, read from the buckets, is the summary's p50.
        let mut seen = 0;
        let p50 = (h.values_us.iter().zip(&h.counts))
            .find_map(|(v, c)| {
                seen += c;
                (seen >= 500).then_some(*v as f64 / 1000.0)
            })
            .unwrap();
        assert!(
            (p50 - l.summary().p50).abs() <= 0.001 * p50,
            "{p50} vs {:?}",
            l.summary()
        );
        assert!((p50 - 365.5).abs() <= 0.001 * 365.5, "{p50}");
        assert_eq!(Latencies::default().histogram(), None);
    }

    fn record_all(data: &[f64]) -> Latencies {
        let mut l = Latencies::default();
        for &x in data {
            l.record(x);
        }
        l
    }

    /// Within the histogram's precision: 3 significant digits, at 1 µs resolution.
    fn close(hist: f64, exact: f64) -> bool {
        (hist - exact).abs() <= exact * 1e-3 + 0.001
    }

    #[test]
    fn histogram_percentiles_match_exact_ones_within_precision() {
        // A skewed, long-tailed sample like commit latencies: 2 ms to several seconds.
        let mut x: u64 = 0x9e3779b97f4a7c15;
        let mut data: Vec<f64> = (0..20_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let u = (x % 1_000_000) as f64 / 1_000_000.0;
                2.0 + 8.0 * u
                    + if u > 0.97 {
                        3000.0 * (u - 0.97) * 100.0
                    } else {
                        0.0
                    }
            })
            .collect();
        // Two workers, merged.
        let mut a = record_all(&data[..7000]);
        a.merge(&record_all(&data[7000..]));
        let s = a.summary();
        data.sort_by(f64::total_cmp);
        let n = data.len() as f64;
        let exact = |p: f64| data[((n * p).ceil() as usize).max(1) - 1];
        for (got, p) in [(s.p50, 0.5), (s.p90, 0.9), (s.p99, 0.99), (s.p999, 0.999)] {
            assert!(
                close(got, exact(p)),
                "p{p}: histogram {got} vs exact {}",
                exact(p)
            );
        }
        assert_eq!(s.count, 20_000);
        assert_eq!(s.min, data[0]);
        assert_eq!(s.max, data[data.len() - 1]);
        let mean = data.iter().sum::<f64>() / n;
        assert!((s.avg - mean).abs() < 1e-9 * mean);
    }

    #[test]
    fn small_and_empty_samples() {
        assert_eq!(Latencies::default().summary(), LatencySummary::default());
        let s = record_all(&[7.5]).summary();
        assert_eq!(
            (s.p50, s.p99, s.min, s.max, s.avg),
            (7.5, 7.5, 7.5, 7.5, 7.5)
        );
        let s = record_all(&[3.0, 1.0, 2.0]).summary();
        assert_eq!((s.p50, s.p90, s.min, s.max), (2.0, 3.0, 1.0, 3.0));
    }

    #[test]
    fn throughput_over_window() {
        assert_eq!(throughput(50, 10_000.0), 5.0);
        assert_eq!(throughput(0, 1000.0), 0.0);
        assert_eq!(throughput(3, 0.0), 0.0);
    }
}
