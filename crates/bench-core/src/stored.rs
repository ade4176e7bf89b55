//! What keeping a catalog costs: what `__manifest` stores over a cell (versions, files,
//! bytes, listed every `workload.storage_sample_secs`), what that storage costs a month on
//! each store of the price table now and, for a catalog that keeps every version, after a
//! month more by a stated model fitted to the samples ([`MODEL`]), what
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

/// The model a projection of storage follows, as records state it.
pub const MODEL: &str = "copy-on-write, every version kept: the catalog stores the sum of its \
     versions' sizes, each version's size growing by a fixed amount a version (each holds the \
     whole state), versions made at the rate measured; fitted to the run's samples";

/// A cell's storage over its window, as its record carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stored {
    /// Every this many seconds, from release; the last sample after the workers ended.
    pub sample_secs: u64,
    pub samples: Vec<Sample>,
    /// From the first sample to the last: bytes and versions added per hour (negative where
    /// cleanups removed more than the writers added). Over the window measured only.
    pub growth_bytes_per_hour: f64,
    pub growth_versions_per_hour: f64,
    /// Storage dollars a month for the bytes held at the end, on each store of the table.
    pub usd_per_month: BTreeMap<String, f64>,
    /// What the catalog would store after 30 more days by [`MODEL`]; absent where a version
    /// was removed in the window (a cleanup ran: the model is of a catalog that keeps every
    /// version) or too few samples added versions to fit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection: Option<Projection>,
}

/// A projection of what a catalog that keeps every version stores: [`MODEL`], its fitted
/// parameters, and where it leads after 30 more days.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Projection {
    pub model: String,
    /// The fit: the bytes a version at the window's last version adds, and how many bytes
    /// more each later version adds than the one before.
    pub bytes_per_version: f64,
    pub bytes_per_version_growth: f64,
    /// Versions made an hour over the window, as the model keeps making them.
    pub versions_per_hour: f64,
    /// After 30 more days: versions and bytes held, and the storage dollars a month then.
    pub after_30_days_versions: f64,
    pub after_30_days_bytes: f64,
    pub usd_per_month_after_30_days: BTreeMap<String, f64>,
}

/// The fit of [`MODEL`] to samples: version `k` adds `a + c·k` bytes, so each interval
/// between two samples adds its bytes over its versions at their mean version (least
/// squares, each interval weighted by its versions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// The last sample fitted.
    pub from: Sample,
    /// Versions a second.
    pub rate: f64,
    /// Bytes a version adds: `a + c · version`.
    pub a: f64,
    pub c: f64,
}

impl Fit {
    /// [`MODEL`] fitted to `samples` (in time order); none where a version or a byte was
    /// removed, or fewer than two intervals added versions.
    pub fn of(samples: &[Sample]) -> Option<Fit> {
        let (first, last) = (samples.first()?, samples.last()?);
        let pairs: Vec<(&Sample, &Sample)> = samples.iter().zip(samples.iter().skip(1)).collect();
        if pairs
            .iter()
            .any(|(x, y)| y.versions < x.versions || y.bytes < x.bytes)
        {
            return None;
        }
        let points: Vec<(f64, f64, f64)> = (pairs.iter())
            .filter(|(x, y)| y.versions > x.versions)
            .map(|(x, y)| {
                let dv = (y.versions - x.versions) as f64;
                // Versions x+1 ..= y: their mean version, where a + c·k takes its mean.
                let mid = (x.versions + y.versions + 1) as f64 / 2.0;
                (mid, (y.bytes - x.bytes) as f64 / dv, dv)
            })
            .collect();
        let span = last.t_s - first.t_s;
        if points.len() < 2 || span <= 0.0 {
            return None;
        }
        let w: f64 = points.iter().map(|p| p.2).sum();
        let mx = points.iter().map(|p| p.0 * p.2).sum::<f64>() / w;
        let my = points.iter().map(|p| p.1 * p.2).sum::<f64>() / w;
        let sxx: f64 = points.iter().map(|p| p.2 * (p.0 - mx).powi(2)).sum();
        let sxy: f64 = points.iter().map(|p| p.2 * (p.0 - mx) * (p.1 - my)).sum();
        let c = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        Some(Fit {
            from: *last,
            rate: (last.versions - first.versions) as f64 / span,
            a: my - c * mx,
            c,
        })
    }

    /// Versions and bytes held `t_s` seconds after release by the model.
    pub fn at(&self, t_s: f64) -> (f64, f64) {
        let v0 = self.from.versions as f64;
        let v = v0 + self.rate * (t_s - self.from.t_s).max(0.0);
        // The bytes versions v0+1 ..= v add: the sum of a + c·k over them.
        let added = self.a * (v - v0) + self.c / 2.0 * (v * (v + 1.0) - v0 * (v0 + 1.0));
        (v, self.from.bytes as f64 + added.max(0.0))
    }
}

impl Stored {
    /// The figures of `samples` (at least two, else none), priced by `table`; a projection
    /// only where the cell kept every version (`keeps_all`: no cleanup in it).
    pub fn of(
        sample_secs: u64,
        samples: Vec<Sample>,
        table: &PriceTable,
        keeps_all: bool,
    ) -> Option<Stored> {
        let (first, last) = (*samples.first()?, *samples.last()?);
        let span = last.t_s - first.t_s;
        if samples.len() < 2 || span <= 0.0 {
            return None;
        }
        let per_sec = (last.bytes as f64 - first.bytes as f64) / span;
        let versions_per_sec = (last.versions as f64 - first.versions as f64) / span;
        let price = |bytes: f64| -> BTreeMap<String, f64> {
            (table.stores.iter())
                .map(|s| (s.name.clone(), s.storage_dollars(bytes)))
                .collect()
        };
        let projection = Fit::of(&samples).filter(|_| keeps_all).map(|f| {
            let (versions, bytes) = f.at(last.t_s + MONTH_SECS);
            Projection {
                model: MODEL.to_string(),
                bytes_per_version: f.a + f.c * last.versions as f64,
                bytes_per_version_growth: f.c,
                versions_per_hour: f.rate * 3600.0,
                after_30_days_versions: versions,
                after_30_days_bytes: bytes,
                usd_per_month_after_30_days: price(bytes),
            }
        });
        Some(Stored {
            sample_secs,
            growth_bytes_per_hour: per_sec * 3600.0,
            growth_versions_per_hour: versions_per_sec * 3600.0,
            usd_per_month: price(last.bytes as f64),
            projection,
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
        .filter(|o| !o.attempt.warm && o.role == Some((role, mix)))
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
        .filter(|o| !o.attempt.warm && o.operation.is_maintenance())
        .filter_map(|o| o.attempt.at_us)
        .collect();
    if cleanups.is_empty() {
        return None;
    }
    let (mut during, mut outside) = (Vec::new(), Vec::new());
    for o in log
        .iter()
        .filter(|o| !o.attempt.warm && o.role == Some((role, mix)))
    {
        if o.operation.is_maintenance() {
            return None;
        }
        let (Some([s, e]), Outcome::Ok) = (o.attempt.at_us, o.outcome) else {
            continue;
        };
        let ms = o.attempt.ms + o.attempt.lag_ms.unwrap_or(0.0);
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
        let s = Stored::of(10, samples, &table, true).unwrap();
        assert_eq!(s.growth_bytes_per_hour, 200_000.0 * 3600.0);
        assert_eq!(s.growth_versions_per_hour, 2.0 * 3600.0);
        // 3 MB on S3 Standard at $0.023 a (binary) GB-month.
        let std = "s3-standard";
        let gib = (1u64 << 30) as f64;
        assert!((s.usd_per_month[std] - 3e6 / gib * 0.023).abs() < 1e-12);
        // One interval does not fit the model: no projection.
        assert!(s.projection.is_none());
        // Shrinking storage (a cleanup) has none either; one sample says nothing.
        let shrink = vec![
            sample(0.0, 10, 3_000_000),
            sample(1.0, 12, 3_200_000),
            sample(2.0, 5, 1_000_000),
        ];
        let s = Stored::of(1, shrink, &table, true).unwrap();
        assert!(s.growth_bytes_per_hour < 0.0);
        assert!(s.projection.is_none());
        assert!(Stored::of(1, vec![sample(0.0, 1, 1)], &table, true).is_none());
    }

    /// A copy-on-write catalog that keeps every version, each version holding the whole
    /// state (1,000 bytes + 10 bytes a version): the sum of its versions grows with the square
    /// of the versions. Fitted on its first samples, the model gives the bytes of its later
    /// ones exactly, where a line through the first samples falls short.
    #[test]
    fn the_model_fits_a_catalog_that_keeps_every_version() {
        let size = |v: u64| 1_000 + 10 * v;
        let held = |v: u64| (1..=v).map(size).sum::<u64>();
        // 5 versions a second, sampled every 10 s for 10 minutes.
        let all: Vec<Sample> = (0..=60)
            .map(|i| {
                let v = 5 * 10 * i as u64;
                sample(10.0 * i as f64, v, held(v))
            })
            .collect();
        let first: Vec<Sample> = all.iter().copied().filter(|s| s.t_s <= 120.0).collect();
        let f = Fit::of(&first).unwrap();
        assert!(
            (f.c - 10.0).abs() < 1e-9 && (f.a - 1_000.0).abs() < 1e-6,
            "{f:?}"
        );
        let (v, bytes) = f.at(600.0);
        let last = all.last().unwrap();
        assert_eq!(v, last.versions as f64);
        assert!((bytes - last.bytes as f64).abs() < 1.0, "{bytes} {last:?}");
        let line = first[0].bytes as f64
            + (first.last().unwrap().bytes - first[0].bytes) as f64 / 120.0 * 600.0;
        assert!(line < 0.5 * last.bytes as f64, "a line gives {line}");
        // The record's projection states its model and prices its bytes.
        let table = PriceTable::builtin();
        // A cell that ran a cleanup gets none, whatever its samples show.
        assert!(
            Stored::of(10, first.clone(), &table, false)
                .unwrap()
                .projection
                .is_none()
        );
        let s = Stored::of(10, first, &table, true).unwrap();
        let p = s.projection.unwrap();
        assert_eq!(p.model, MODEL);
        assert_eq!(p.versions_per_hour, 5.0 * 3600.0);
        let month = f.at(120.0 + MONTH_SECS).1;
        assert_eq!(p.after_30_days_bytes, month);
        assert!(p.usd_per_month_after_30_days["s3-standard"] > 0.0);
    }

    fn op(role: (u32, u32), operation: Operation, at: [u64; 2], ms: f64) -> Op {
        let mut o = crate::oplog::sample(0, operation, 0, "", Outcome::Ok);
        o.role = Some(role);
        o.attempt.at_us = Some(at);
        o.attempt.ms = ms;
        o
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
