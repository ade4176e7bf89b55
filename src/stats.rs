//! Latency statistics of a cell, with the reference's definitions.

/// Summary of the latencies (milliseconds) of a cell's successful operations.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LatencySummary {
    pub count: u64,
    pub avg: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub min: f64,
    pub max: f64,
}

/// The reference's percentile: the sorted sample at index `round((n - 1) * p)`.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

impl LatencySummary {
    /// Summarise latencies; an empty set gives all zeros, as the reference reports.
    pub fn from_latencies(mut latencies: Vec<f64>) -> LatencySummary {
        if latencies.is_empty() {
            return LatencySummary::default();
        }
        latencies.sort_by(f64::total_cmp);
        let n = latencies.len();
        LatencySummary {
            count: n as u64,
            avg: latencies.iter().sum::<f64>() / n as f64,
            p50: percentile(&latencies, 0.50),
            p90: percentile(&latencies, 0.90),
            p99: percentile(&latencies, 0.99),
            min: latencies[0],
            max: latencies[n - 1],
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

    #[test]
    fn percentiles_of_one_to_hundred() {
        // 1..=100 shuffled: the summary must not depend on arrival order.
        let data: Vec<f64> = (0..100).map(|i| ((i * 37) % 100 + 1) as f64).collect();
        let s = LatencySummary::from_latencies(data);
        assert_eq!(s.count, 100);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.avg, 50.5);
        // index round(99 * 0.5) = 50 (round half away from zero) -> value 51
        assert_eq!(s.p50, 51.0);
        assert_eq!(s.p90, 90.0); // round(89.1) = 89 -> 90
        assert_eq!(s.p99, 99.0); // round(98.01) = 98 -> 99
    }

    #[test]
    fn small_and_empty_samples() {
        assert_eq!(
            LatencySummary::from_latencies(vec![]),
            LatencySummary::default()
        );
        let s = LatencySummary::from_latencies(vec![7.5]);
        assert_eq!(
            (s.p50, s.p99, s.min, s.max, s.avg),
            (7.5, 7.5, 7.5, 7.5, 7.5)
        );
        let s = LatencySummary::from_latencies(vec![3.0, 1.0, 2.0]);
        assert_eq!((s.p50, s.p90, s.min, s.max), (2.0, 3.0, 1.0, 3.0));
    }

    #[test]
    fn throughput_over_window() {
        assert_eq!(throughput(50, 10_000.0), 5.0);
        assert_eq!(throughput(0, 1000.0), 0.0);
        assert_eq!(throughput(3, 0.0), 0.0);
    }
}
