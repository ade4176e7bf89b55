//! `bench compare` and `bench ab` of what readers see (the records' `consistency`): each
//! cell's anomalies (stale reads, monotonic-read violations, phantoms, listings of an entry
//! twice, failures of the version order's checks) and visibility lag, A's
//! runs against B's.
//!
//! The rule, as for the exact counts, is separation: a figure moved when every run of B lies
//! beyond every run of A. Anomalies: B has some in every run where A had none in any (one
//! run a side is enough: in a catalog that reads its commits back, one stale read is a
//! change, not noise), or B's anomaly rate (anomalies per read) exceeds A's in every run by
//! more than [`RATE_TOLERANCE`]. Lag, a time: every run of B's median lag beyond every run
//! of A's by more than [`LAG_TOLERANCE`] of A's (or, for separate runs, the spread between
//! runs `--between-runs` allows, if larger) and [`LAG_FLOOR_MS`], with 2 runs a side. The
//! lag judged is its lower bound (to the reader's last read that still missed a commit),
//! where both sides have it: its upper bound (to the first read that showed it) is mostly
//! the readers' cadence, which slower reads or another mix move with nothing seen later.

use super::counts::Moved;
use crate::consistency::Consistency;
use crate::export::Record;
use crate::stats::median;

/// Anomalies per read that are no change.
pub const RATE_TOLERANCE: f64 = 0.01;
/// The fraction of A's median lag, and the ms, that are no change.
pub const LAG_TOLERANCE: f64 = 0.10;
pub const LAG_FLOOR_MS: f64 = 1.0;

/// One cell's readers on both sides: each run's anomalies, reads and lag p50 / p99.
#[derive(Debug, Clone, PartialEq)]
pub struct ReaderRow {
    pub cell: String,
    pub a: Vec<Consistency>,
    pub b: Vec<Consistency>,
    pub anomalies: Moved,
    /// `None`: no lag verdict (fewer than 2 runs a side, or a run without a lag).
    pub lag: Option<Moved>,
    /// Whether the lag judged is its lower bound (every run of both sides has it).
    pub lower: bool,
}

fn rate(c: &Consistency) -> f64 {
    c.anomalies() as f64 / c.reads.max(1) as f64
}

/// Whether `b`'s values all lie beyond `a`'s: above every one by more than `tol(max a)`
/// (`More`), or below by as much (`Fewer`).
fn separated(a: &[f64], b: &[f64], tol: impl Fn(f64) -> f64) -> Moved {
    let max = |v: &[f64]| v.iter().copied().fold(f64::MIN, f64::max);
    let min = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
    if min(b) > max(a) + tol(max(a)) {
        Moved::More
    } else if min(a) > max(b) + tol(max(b)) {
        Moved::Fewer
    } else {
        Moved::Same
    }
}

impl ReaderRow {
    /// The row of a cell whose every run has `consistency` on both sides; `between`: the
    /// fraction separate runs may differ by (0 for pairs).
    pub fn of(cell: &str, (ra, rb): (&[&Record], &[&Record]), between: f64) -> Option<ReaderRow> {
        let side = |r: &[&Record]| -> Option<Vec<Consistency>> {
            r.iter().map(|r| r.consistency.clone()).collect()
        };
        let (a, b) = (side(ra)?, side(rb)?);
        if a.is_empty() || b.is_empty() {
            return None;
        }
        let none = |v: &[Consistency]| v.iter().all(|c| c.anomalies() == 0);
        let every = |v: &[Consistency]| v.iter().all(|c| c.anomalies() > 0);
        let rates = |v: &[Consistency]| v.iter().map(rate).collect::<Vec<_>>();
        let anomalies = match (none(&a), every(&b), none(&b), every(&a)) {
            (true, true, _, _) => Moved::More,
            (_, _, true, true) => Moved::Fewer,
            _ => separated(&rates(&a), &rates(&b), |_| RATE_TOLERANCE),
        };
        // The lower bound where every run has it (older records have the upper alone).
        let low = |v: &[Consistency]| v.iter().all(|c| c.lag_low_p50_ms.is_some());
        let lower = low(&a) && low(&b);
        let lags = |v: &[Consistency]| -> Option<Vec<f64>> {
            (v.iter())
                .map(|c| {
                    if lower {
                        c.lag_low_p50_ms
                    } else {
                        c.lag_p50_ms
                    }
                })
                .collect()
        };
        let lag = match (lags(&a), lags(&b)) {
            (Some(la), Some(lb)) if la.len() >= 2 && lb.len() >= 2 => {
                Some(separated(&la, &lb, |x| {
                    (x * LAG_TOLERANCE.max(between)).max(LAG_FLOOR_MS)
                }))
            }
            _ => None,
        };
        Some(ReaderRow {
            cell: cell.to_string(),
            a,
            b,
            anomalies,
            lag,
            lower,
        })
    }

    pub fn regressed(&self) -> bool {
        self.anomalies == Moved::More || self.lag == Some(Moved::More)
    }

    pub fn improved(&self) -> bool {
        !self.regressed() && (self.anomalies == Moved::Fewer || self.lag == Some(Moved::Fewer))
    }

    /// Medians over a side's runs: anomalies per read, lag p50 and p99 (ms), and the lag's
    /// lower bound's p50.
    pub fn medians(side: &[Consistency]) -> [Option<f64>; 4] {
        let m = |v: Option<Vec<f64>>| v.filter(|v| !v.is_empty()).map(median);
        [
            m(Some(side.iter().map(rate).collect())),
            m(side.iter().map(|c| c.lag_p50_ms).collect()),
            m(side.iter().map(|c| c.lag_p99_ms).collect()),
            m(side.iter().map(|c| c.lag_low_p50_ms).collect()),
        ]
    }

    /// "REGRESSION (B: anomalies in every run, 0.870 a read, A none)", "improved (…)",
    /// "same", with why the lag has no verdict where it has none.
    pub fn verdict(&self) -> String {
        let ([ra, up_a, _, low_a], [rb, up_b, _, low_b]) =
            (Self::medians(&self.a), Self::medians(&self.b));
        let (la, lb, which) = match self.lower {
            true => (low_a, low_b, "lag's lower bound p50"),
            false => (up_a, up_b, "lag p50"),
        };
        let mut said = Vec::new();
        if self.anomalies != Moved::Same {
            let f = |x: Option<f64>| x.unwrap_or(0.0);
            said.push(format!(
                "anomalies {:.3} → {:.3} a read in every run",
                f(ra),
                f(rb)
            ));
        }
        if self.lag.is_some_and(|m| m != Moved::Same) {
            let ms = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.1}"));
            said.push(format!("{which} {} → {} ms in every run", ms(la), ms(lb)));
        }
        let unjudged = match self.lag {
            None => "; the lag needs 2 runs a side with a lag",
            Some(_) => "",
        };
        match (self.regressed(), self.improved()) {
            (true, _) => format!("REGRESSION (B: {}){unjudged}", said.join("; ")),
            (_, true) => format!("improved (B: {}){unjudged}", said.join("; ")),
            _ => format!("same{unjudged}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::{ModeKind, Variant};

    fn runs(stale: &[u64], lag: &[f64]) -> Vec<Record> {
        (stale.iter().zip(lag))
            .enumerate()
            .map(|(i, (&s, &l))| {
                let mut r = record(ModeKind::Roles, Variant::NoIndex, 54, 5, "roles_x_c_5");
                r.repetition = i as u32 + 1;
                r.consistency = Some(Consistency {
                    reads: 100,
                    stale_reads: s,
                    lag_p50_ms: Some(l),
                    ..Default::default()
                });
                r
            })
            .collect()
    }

    fn row(a: &[Record], b: &[Record]) -> ReaderRow {
        let (ra, rb): (Vec<&Record>, Vec<&Record>) = (a.iter().collect(), b.iter().collect());
        ReaderRow::of("c", (&ra, &rb), 0.0).unwrap()
    }

    #[test]
    fn stale_reads_where_a_had_none_are_a_regression_even_in_one_run() {
        let (a, b) = (runs(&[0], &[1.0]), runs(&[87], &[100.0]));
        let r = row(&a, &b);
        assert_eq!((r.anomalies, r.lag), (Moved::More, None));
        assert!(r.regressed());
        assert_eq!(
            r.verdict(),
            "REGRESSION (B: anomalies 0.000 → 0.870 a read in every run); the lag needs 2 \
             runs a side with a lag"
        );
        assert_eq!(row(&b, &a).anomalies, Moved::Fewer);
    }

    #[test]
    fn lag_is_judged_by_separation_with_two_runs_a_side() {
        let a = runs(&[0, 0, 0], &[1.0, 1.2, 1.1]);
        let same = runs(&[0, 0, 0], &[1.3, 0.9, 1.5]);
        let r = row(&a, &same);
        assert_eq!((r.anomalies, r.lag), (Moved::Same, Some(Moved::Same)));
        assert_eq!(r.verdict(), "same");
        let slower = runs(&[0, 0, 0], &[5.0, 6.0, 5.5]);
        let r = row(&a, &slower);
        assert_eq!(r.lag, Some(Moved::More));
        // Separate runs that may differ by 400 %: within it, no change.
        let (ra, rs): (Vec<&Record>, Vec<&Record>) = (a.iter().collect(), slower.iter().collect());
        let apart = ReaderRow::of("c", (&ra, &rs), 4.0).unwrap();
        assert_eq!(apart.lag, Some(Moved::Same));
        assert!(
            r.verdict().contains("lag p50 1.1 → 5.5 ms"),
            "{}",
            r.verdict()
        );
        // Within the floor of 1 ms: no change.
        let near = runs(&[0, 0, 0], &[1.9, 2.0, 2.1]);
        assert_eq!(row(&a, &near).lag, Some(Moved::Same));
        // Anomalies in only some runs of B, at rates within the tolerance: the same.
        let some = runs(&[0, 1, 0], &[1.0, 1.2, 1.1]);
        assert_eq!(row(&a, &some).anomalies, Moved::Same);
    }

    /// Where the runs tell the lag's lower bound, it is what is judged: slower reads move
    /// the upper bound (the time to the next read) with nothing seen later, no verdict; a
    /// cache that hides commits moves the lower bound too, a regression.
    #[test]
    fn the_lag_s_lower_bound_is_judged_not_the_readers_cadence() {
        let with = |upper: &[f64], lower: &[f64]| {
            let mut rs = runs(&[0, 0, 0], upper);
            for (r, &l) in rs.iter_mut().zip(lower) {
                r.consistency.as_mut().unwrap().lag_low_p50_ms = Some(l);
            }
            rs
        };
        let a = with(&[2.2, 2.0, 2.4], &[0.0, 0.0, 0.0]);
        let slower_reads = with(&[8.4, 8.1, 8.9], &[0.0, 0.0, 0.0]);
        let r = row(&a, &slower_reads);
        assert_eq!(r.lag, Some(Moved::Same), "{}", r.verdict());
        assert!(r.lower && !r.regressed());
        let cached = with(&[101.0, 99.0, 103.0], &[60.0, 58.0, 63.0]);
        let r = row(&a, &cached);
        assert_eq!(r.lag, Some(Moved::More));
        assert!(
            r.verdict()
                .contains("lag's lower bound p50 0.0 → 60.0 ms in every run"),
            "{}",
            r.verdict()
        );
    }
}
