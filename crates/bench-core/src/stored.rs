//! What keeping a catalog costs: what `__manifest` stores over a cell (versions, files,
//! bytes, listed every `workload.storage_sample_secs`), what that storage costs a month on
//! each store of the price table now and after a month more at the cell's growth, what
//! the cell's cleanups removed, and the other operations' latency while a cleanup ran and
//! while none did.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::oplog::{Cleaned, Observed, Op, Outcome};
use crate::prices::PriceTable;

/// What `__manifest` held at one moment of a cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds after release when its listing began (the first is taken at release).
    pub t_s: f64,
    /// Versions: manifests under `_versions/`.
    pub versions: u64,
    /// Every file under `__manifest/`, manifests included, and their bytes.
    pub files: u64,
    pub bytes: u64,
}

/// Seconds in a month, as storage is billed (30 days).
const MONTH_SECS: f64 = 30.0 * 86_400.0;
const GB: f64 = 1e9;

/// A cell's storage over its window, as its record carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stored {
    /// Every this many seconds, from release; the last sample after the workers ended.
    pub sample_secs: u64,
    pub samples: Vec<Sample>,
    /// From the first sample to the last: bytes and versions added per hour (negative where
    /// cleanups removed more than the writers added).
    pub growth_bytes_per_hour: f64,
    pub growth_versions_per_hour: f64,
    /// Storage dollars a month for the bytes held at the end, on each store of the table.
    pub usd_per_month: BTreeMap<String, f64>,
    /// The same after 30 more days at this growth (never below nothing).
    pub usd_per_month_after_30_days: BTreeMap<String, f64>,
}

impl Stored {
    /// The figures of `samples` (at least two, else none), priced by `table`.
    pub fn of(sample_secs: u64, samples: Vec<Sample>, table: &PriceTable) -> Option<Stored> {
        let (first, last) = (*samples.first()?, *samples.last()?);
        let span = last.t_s - first.t_s;
        if samples.len() < 2 || span <= 0.0 {
            return None;
        }
        let per_sec = (last.bytes as f64 - first.bytes as f64) / span;
        let versions_per_sec = (last.versions as f64 - first.versions as f64) / span;
        let later = (last.bytes as f64 + per_sec * MONTH_SECS).max(0.0);
        let price = |bytes: f64| -> BTreeMap<String, f64> {
            (table.stores.iter())
                .map(|s| (s.name.clone(), bytes / GB * s.storage_gb_month))
                .collect()
        };
        Some(Stored {
            sample_secs,
            growth_bytes_per_hour: per_sec * 3600.0,
            growth_versions_per_hour: versions_per_sec * 3600.0,
            usd_per_month: price(last.bytes as f64),
            usd_per_month_after_30_days: price(later),
            samples,
        })
    }

    /// The last sample: what the catalog held at the end.
    pub fn end(&self) -> Sample {
        self.samples.last().copied().unwrap_or_default()
    }
}

/// Latencies of a set of operations: how many, their median and 99th percentile (ms).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub ops: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

impl Spread {
    fn of(mut ms: Vec<f64>) -> Spread {
        ms.sort_by(f64::total_cmp);
        let at = |q: f64| crate::stats::percentile(&ms, q).unwrap_or(0.0);
        Spread {
            ops: ms.len() as u64,
            p50_ms: at(0.5),
            p99_ms: at(0.99),
        }
    }
}

/// An operation's latency while a cleanup ran (it overlapped one) and while none did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BesideCleanup {
    pub during: Spread,
    pub outside: Spread,
}

/// What a cell's measured operations of role `role`, operation `mix` in its mix, removed
/// (its cleanups' totals; none where it removed nothing or is no cleanup).
pub fn cleaned(log: &[Op], role: u32, mix: u32) -> Option<Cleaned> {
    let mut total = None::<Cleaned>;
    for o in log
        .iter()
        .filter(|o| !o.warm && o.role == Some((role, mix)))
    {
        if let Observed::Cleaned(c) = o.observed {
            *total.get_or_insert_with(Cleaned::default) += c;
        }
    }
    total
}

/// The latencies of role `role`'s operation `mix` (successful, measured, from its intended
/// start) while a cleanup of the cell ran and while none did; none where the cell ran no
/// cleanup or the operation is one.
pub fn beside_cleanup(log: &[Op], role: u32, mix: u32) -> Option<BesideCleanup> {
    let cleanups: Vec<[u64; 2]> = (log.iter())
        .filter(|o| !o.warm && o.operation.is_maintenance())
        .filter_map(|o| o.at_us)
        .collect();
    if cleanups.is_empty() {
        return None;
    }
    let (mut during, mut outside) = (Vec::new(), Vec::new());
    for o in log
        .iter()
        .filter(|o| !o.warm && o.role == Some((role, mix)))
    {
        if o.operation.is_maintenance() {
            return None;
        }
        let (Some([s, e]), Outcome::Ok) = (o.at_us, o.outcome) else {
            continue;
        };
        let ms = o.ms + o.lag_ms.unwrap_or(0.0);
        match cleanups.iter().any(|&[cs, ce]| s < ce && cs < e) {
            true => during.push(ms),
            false => outside.push(ms),
        }
    }
    Some(BesideCleanup {
        during: Spread::of(during),
        outside: Spread::of(outside),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Operation;

    fn sample(t_s: f64, versions: u64, bytes: u64) -> Sample {
        Sample {
            t_s,
            versions,
            files: versions * 2,
            bytes,
        }
    }

    #[test]
    fn growth_and_dollars_follow_the_samples() {
        let table = PriceTable::builtin();
        let samples = vec![sample(0.0, 10, 1_000_000), sample(10.0, 30, 3_000_000)];
        let s = Stored::of(10, samples, &table).unwrap();
        assert_eq!(s.growth_bytes_per_hour, 200_000.0 * 3600.0);
        assert_eq!(s.growth_versions_per_hour, 2.0 * 3600.0);
        // 3 MB on S3 Standard at $0.023 a GB-month; a month later 3 MB + 200 kB/s × 30 days.
        let std = "s3-standard";
        assert!((s.usd_per_month[std] - 0.003 * 0.023).abs() < 1e-12);
        let later = (3e6 + 2e5 * MONTH_SECS) / 1e9 * 0.023;
        assert!((s.usd_per_month_after_30_days[std] - later).abs() < 1e-9);
        // Shrinking storage is never billed below nothing; one sample says nothing.
        let shrink = vec![sample(0.0, 10, 3_000_000), sample(1.0, 5, 1_000_000)];
        let s = Stored::of(1, shrink, &table).unwrap();
        assert!(s.growth_bytes_per_hour < 0.0);
        assert_eq!(s.usd_per_month_after_30_days[std], 0.0);
        assert!(Stored::of(1, vec![sample(0.0, 1, 1)], &table).is_none());
    }

    fn op(role: (u32, u32), operation: Operation, at: [u64; 2], ms: f64) -> Op {
        Op {
            role: Some(role),
            at_us: Some(at),
            ms,
            ..crate::oplog::sample(0, operation, 0, "", Outcome::Ok)
        }
    }

    #[test]
    fn latencies_split_by_overlap_with_a_cleanup() {
        let clean = Operation::CleanupVersions;
        let read = Operation::DescribeTable { cold: false };
        let mut c = op((1, 0), clean, [100, 200], 0.1);
        c.observed = Observed::Cleaned(Cleaned {
            versions: 3,
            bytes: 30,
            files: 9,
            failed_deletes: 0,
        });
        let log = vec![
            c.clone(),
            c,
            op((0, 0), read, [50, 120], 5.0),
            op((0, 0), read, [150, 160], 7.0),
            op((0, 0), read, [10, 40], 1.0),
            op((0, 0), read, [300, 310], 2.0),
            op((0, 0), read, [400, 420], 3.0),
        ];
        let b = beside_cleanup(&log, 0, 0).unwrap();
        assert_eq!(
            (b.during.ops, b.during.p50_ms, b.during.p99_ms),
            (2, 5.0, 7.0)
        );
        assert_eq!((b.outside.ops, b.outside.p50_ms), (3, 2.0));
        assert!(
            beside_cleanup(&log, 1, 0).is_none(),
            "a cleanup beside itself"
        );
        assert_eq!(cleaned(&log, 1, 0).unwrap().versions, 6);
        assert!(cleaned(&log, 0, 0).is_none());
        let no_cleanup: Vec<Op> = log.into_iter().filter(|o| o.operation == read).collect();
        assert!(beside_cleanup(&no_cleanup, 0, 0).is_none());
    }
}
