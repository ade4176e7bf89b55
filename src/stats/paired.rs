//! Pairs formed inside a cell (`bench ab`'s lockstep operations, time slices, duet): each
//! pair holds a *unit* of arm A and a unit of arm B measured under the same conditions,
//! and the question is the ratio of the arms' throughputs B/A.
//!
//! **The estimator** is the ratio of the pooled throughputs,
//! `R = (Σ ops_B / Σ ms_B) / (Σ ops_A / Σ ms_A)`: for lockstep pairs (one operation per
//! unit) the ratio of mean latencies A/B, for slices the ratio of the arms' goodputs.
//!
//! **Its interval** comes from non-overlapping *batch means*: consecutive pairs are grouped
//! into batches ([`batch_ranges`]), each batch's sums of the four quantities are taken, and
//! `ln R` is linearised (the delta method) into one influence value per batch,
//! `ψ_j = ops_Bj/mean(ops_B) − ms_Bj/mean(ms_B) − ops_Aj/mean(ops_A) + ms_Aj/mean(ms_A)`,
//! whose mean is 0 by construction. `ln R ± t(k−1) · sd(ψ)/√k` over the `k` batches, taken
//! back with `exp`, is the interval: it always contains `R` (the centre on the log scale).
//!
//! Why batch means: neighbouring commits are correlated (a background compaction, a busy
//! neighbour's phase, the catalog growing by one row a commit), so the pairs are not
//! independent and a plain t over them would be too narrow. Sums over a batch of
//! consecutive pairs are close to independent once a batch outlasts that correlation, and
//! close to normal by the central limit theorem — the classic method of simulation output
//! analysis (Law & Kelton, ch. 9; 10 to 30 batches). Pairing removes most of the
//! correlation before batching: whatever slows both arms of a pair alike cancels in its
//! ratio. A periodic disturbance (a neighbour busy every few seconds) makes the batch
//! values correlated at short lags and anti-correlated at half its period; over many
//! periods that overstates the variance, so the interval errs wide, not narrow.
//!
//! **Until the answer is clear** ([`stein_batches`]): Stein's two-stage procedure. A pilot
//! of `k0` batches gives `s0`; the number of batches that makes the half-width at most `h`
//! is `K = ⌈(t(k0−1) · s0 / h)²⌉`. The count is fixed by the pilot alone, so no later look
//! at the data decides when to stop, and the stated coverage holds; the final interval is
//! the wider of Stein's (`s0`, `k0 − 1` degrees of freedom) and the t interval over all
//! `K` batches ([`throughput_ratio`] with a pilot).

use super::inference::{ALPHA, RatioTest, t_critical};

/// How a paired run formed its pairs, as records name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairingKind {
    /// One operation of each arm in turn (continuous cells).
    Lockstep,
    /// A time slice of each arm in turn (concurrent and mixed cells).
    Slices,
    /// Both arms at once: operations by index, or time buckets.
    Duet,
}

impl PairingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PairingKind::Lockstep => "lockstep",
            PairingKind::Slices => "slices",
            PairingKind::Duet => "duet",
        }
    }

    /// Whether a unit is one operation (lockstep; a duet of a continuous cell) rather than
    /// a stretch of time (slices; a duet's buckets in a timed cell).
    pub fn per_operation(self, continuous: bool) -> bool {
        match self {
            PairingKind::Lockstep => true,
            PairingKind::Slices => false,
            PairingKind::Duet => continuous,
        }
    }

    /// Pairs per batch: a batch of operation pairs holds [`OPS_PER_BATCH`]; time slices
    /// and buckets, seconds long, are a batch each.
    pub fn batch_size(self, continuous: bool) -> usize {
        if self.per_operation(continuous) {
            OPS_PER_BATCH
        } else {
            1
        }
    }
}

/// One arm's share of one pair: the time it took and what it completed in it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Unit {
    /// Milliseconds: a lockstep operation's latency, or a slice's (or bucket's) wall time.
    pub ms: f64,
    /// Successful operations (commits) completed in the unit.
    pub ops: f64,
}

/// The units one arm measured in a paired run: of the cell's operations (commits) and, in
/// a mixed cell, of the interleaved reads (the same times, the reads counted).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArmUnits {
    pub ops: Vec<Unit>,
    pub reads: Vec<Unit>,
}

/// The sums of both arms over one batch of consecutive pairs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Batch {
    pub a: Unit,
    pub b: Unit,
}

/// Pairs in a batch of operation pairs (lockstep, duet of continuous cells). Slice and
/// bucket pairs, seconds long each, are a batch each.
pub const OPS_PER_BATCH: usize = 20;

/// The batches of a run's `n` pairs, `size` consecutive pairs each; a remainder of fewer
/// than half a batch joins the last batch (so no batch is a lone pair or two), a longer
/// one is a batch of its own. Batches never span two runs: each run is batched alone.
pub fn batch_ranges(n: usize, size: usize) -> Vec<std::ops::Range<usize>> {
    let size = size.max(1);
    let mut out: Vec<std::ops::Range<usize>> =
        (0..n / size).map(|i| i * size..(i + 1) * size).collect();
    let rest = n % size;
    if rest > 0 {
        match out.last_mut() {
            Some(last) if rest * 2 < size => last.end = n,
            _ => out.push(n - rest..n),
        }
    }
    out
}

/// The batches of one run's pairs (`a[i]` with `b[i]`; extra units of the longer side are
/// not pairs and are left out).
pub fn batches(a: &[Unit], b: &[Unit], size: usize) -> Vec<Batch> {
    let n = a.len().min(b.len());
    batch_ranges(n, size)
        .into_iter()
        .map(|r| {
            let sum = |u: &[Unit]| {
                u[r.clone()].iter().fold(Unit::default(), |s, x| Unit {
                    ms: s.ms + x.ms,
                    ops: s.ops + x.ops,
                })
            };
            Batch {
                a: sum(a),
                b: sum(b),
            }
        })
        .collect()
}

fn mean(v: impl Iterator<Item = f64>) -> (f64, usize) {
    let (s, n) = v.fold((0.0, 0), |(s, n), x| (s + x, n + 1));
    (if n > 0 { s / n as f64 } else { 0.0 }, n)
}

fn sd(v: &[f64]) -> f64 {
    let (m, n) = mean(v.iter().copied());
    if n < 2 {
        return 0.0;
    }
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
}

/// `ln R` and the batches' influence values ψ, or `None` when a side completed nothing
/// (or took no time): then there is no ratio.
fn linearised(batches: &[Batch]) -> Option<(f64, Vec<f64>)> {
    let m = |f: fn(&Batch) -> f64| mean(batches.iter().map(f)).0;
    let (ao, am, bo, bm) = (m(|x| x.a.ops), m(|x| x.a.ms), m(|x| x.b.ops), m(|x| x.b.ms));
    if [ao, am, bo, bm].iter().any(|&v| v <= 0.0 || !v.is_finite()) {
        return None;
    }
    let ln_r = (bo / bm).ln() - (ao / am).ln();
    let psi = batches
        .iter()
        .map(|x| x.b.ops / bo - x.b.ms / bm - x.a.ops / ao + x.a.ms / am)
        .collect();
    Some((ln_r, psi))
}

/// The interval `exp(centre ± half)`.
fn around(centre: f64, half: f64) -> RatioTest {
    RatioTest {
        ratio: centre.exp(),
        ci: ((centre - half).exp(), (centre + half).exp()),
    }
}

/// The throughput ratio B/A over all `batches` with its 95 % interval (batch means, t with
/// `k − 1` degrees of freedom); with a `pilot` (the first batches, when their count was
/// fixed by [`stein_batches`]), the wider of that and Stein's interval. `None` with fewer
/// than 2 batches or a side without a successful operation.
pub fn throughput_ratio(batches: &[Batch], pilot: Option<&[Batch]>) -> Option<RatioTest> {
    let k = batches.len();
    if k < 2 {
        return None;
    }
    let (ln_r, psi) = linearised(batches)?;
    let mut half = t_critical(ALPHA, (k - 1) as f64) * sd(&psi) / (k as f64).sqrt();
    if let Some(p) = pilot.filter(|p| p.len() >= 2)
        && let Some((_, psi0)) = linearised(p)
    {
        let stein = t_critical(ALPHA, (p.len() - 1) as f64) * sd(&psi0) / (k as f64).sqrt();
        half = half.max(stein);
    }
    Some(around(ln_r, half))
}

/// Stein's two-stage rule: how many batches in all make the throughput ratio's 95 %
/// interval at most ±`precision` (a fraction: 0.02 for ±2 %, on the log scale
/// `ln(1 + precision)`), from a pilot of batches. `None` without a ratio in the pilot or
/// with fewer than 2 pilot batches. Never fewer than the pilot's own count.
pub fn stein_batches(pilot: &[Batch], precision: f64) -> Option<usize> {
    let k0 = pilot.len();
    if k0 < 2 || precision <= 0.0 {
        return None;
    }
    let (_, psi) = linearised(pilot)?;
    let h = (1.0 + precision).ln();
    let need = (t_critical(ALPHA, (k0 - 1) as f64) * sd(&psi) / h).powi(2);
    Some((need.ceil() as usize).max(k0))
}

/// The half-width of an interval on the log scale, as a fraction (0.021 for ±2.1 %).
pub fn half_width(t: &RatioTest) -> f64 {
    ((t.ci.1 / t.ci.0).ln() / 2.0).exp() - 1.0
}

/// The ratio of medians B/A of operation pairs, batch by batch: the geometric mean over
/// batches of `median(B's latencies) / median(A's latencies)` in each, with the t interval
/// over the batches' log ratios. Units with no successful operation are left out of the
/// medians. `None` with fewer than 2 batches that have a median on both sides.
pub fn median_ratio(runs: &[(&[Unit], &[Unit])], size: usize) -> Option<RatioTest> {
    let med = |u: &[Unit]| {
        let v: Vec<f64> = u.iter().filter(|x| x.ops > 0.0).map(|x| x.ms).collect();
        (!v.is_empty()).then(|| super::median(v))
    };
    let logs: Vec<f64> = runs
        .iter()
        .flat_map(|&(a, b)| {
            let n = a.len().min(b.len());
            batch_ranges(n, size).into_iter().filter_map(move |r| {
                match (med(&a[r.clone()]), med(&b[r])) {
                    (Some(x), Some(y)) if x > 0.0 && y > 0.0 => Some((y / x).ln()),
                    _ => None,
                }
            })
        })
        .collect();
    let k = logs.len();
    if k < 2 {
        return None;
    }
    let (m, _) = mean(logs.iter().copied());
    let half = t_critical(ALPHA, (k - 1) as f64) * sd(&logs) / (k as f64).sqrt();
    Some(around(m, half))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// splitmix64: a small seeded generator, so the simulations are the same every time.
    pub struct Rng(u64);
    impl Rng {
        pub fn new(seed: u64) -> Rng {
            Rng(seed)
        }
        pub fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        /// Uniform in (0, 1).
        pub fn uniform(&mut self) -> f64 {
            ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        /// Standard normal (Box–Muller).
        pub fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    fn op(ms: f64) -> Unit {
        Unit { ms, ops: 1.0 }
    }

    #[test]
    fn batches_are_consecutive_pairs_and_a_short_remainder_joins_the_last() {
        assert_eq!(batch_ranges(20, 10), [0..10, 10..20]);
        assert_eq!(batch_ranges(24, 10), [0..10, 10..24], "4 < 5 joins");
        assert_eq!(
            batch_ranges(26, 10),
            [0..10, 10..20, 20..26],
            "6 is its own"
        );
        assert_eq!(batch_ranges(3, 10), vec![0..3], "fewer than a batch: one");
        assert_eq!(batch_ranges(0, 10), Vec::<std::ops::Range<usize>>::new());
        assert_eq!(batch_ranges(3, 1), [0..1, 1..2, 2..3]);
        let a: Vec<Unit> = (0..12).map(|i| op(f64::from(i))).collect();
        let b: Vec<Unit> = (0..11).map(|_| op(1.0)).collect();
        let bs = batches(&a, &b, 10);
        assert_eq!(bs.len(), 1, "11 pairs: the twelfth A is no pair");
        assert_eq!(
            bs[0].a,
            Unit {
                ms: 55.0,
                ops: 11.0
            }
        );
        assert_eq!(
            bs[0].b,
            Unit {
                ms: 11.0,
                ops: 11.0
            }
        );
    }

    #[test]
    fn the_ratio_is_the_ratio_of_pooled_throughputs_and_lies_in_its_interval() {
        // B takes 10 % longer on every operation, with noise: R = mean(A) / mean(B).
        let mut rng = Rng::new(7);
        let (a, b): (Vec<Unit>, Vec<Unit>) = (0..200)
            .map(|_| {
                let base = 10.0 * (1.0 + 0.2 * rng.normal()).max(0.2);
                (op(base), op(base * 1.1 + 0.3 * rng.normal()))
            })
            .unzip();
        let t = throughput_ratio(&batches(&a, &b, OPS_PER_BATCH), None).unwrap();
        let pooled = a.iter().map(|u| u.ms).sum::<f64>() / b.iter().map(|u| u.ms).sum::<f64>();
        assert!((t.ratio - pooled).abs() < 1e-12, "{t:?} {pooled}");
        assert!(t.ci.0 < t.ratio && t.ratio < t.ci.1);
        assert!(t.ci.0 < 1.0 / 1.1 && 1.0 / 1.1 < t.ci.1, "{t:?}");
        assert!(t.ci.1 < 0.95, "a 10 % slowdown is seen: {t:?}");
        // Slices: B completes 20 % fewer operations in the same time.
        let slice = |ops| Unit { ms: 1000.0, ops };
        let bs: Vec<Batch> = (0..8)
            .map(|i| Batch {
                a: slice(100.0 + f64::from(i % 3)),
                b: slice(80.0 + f64::from(i % 2)),
            })
            .collect();
        let t = throughput_ratio(&bs, None).unwrap();
        assert!((t.ratio - 644.0 / 807.0).abs() < 1e-12, "{t:?}");
        assert!(t.ci.0 < t.ratio && t.ratio < t.ci.1);
        // No ratio without a successful operation on a side, nor from a single batch.
        let none: Vec<Batch> = bs
            .iter()
            .map(|x| Batch {
                b: slice(0.0),
                ..*x
            })
            .collect();
        assert!(throughput_ratio(&none, None).is_none());
        assert!(throughput_ratio(&bs[..1], None).is_none());
    }

    /// Lockstep pairs with a known ratio and correlated noise: an AR(1) machine state that
    /// slows both arms of a pair alike, plus each operation's own AR(1) noise.
    fn simulated(rng: &mut Rng, n: usize, ratio: f64, phi: f64) -> (Vec<Unit>, Vec<Unit>) {
        let (mut shared, mut own_a, mut own_b) = (0.0, 0.0, 0.0);
        let innov = (1.0 - phi * phi).sqrt();
        (0..n)
            .map(|_| {
                shared = phi * shared + innov * rng.normal();
                own_a = phi * own_a + innov * rng.normal();
                own_b = phi * own_b + innov * rng.normal();
                let machine = (0.3 * shared).exp();
                let a = 10.0 * machine * (0.15 * own_a).exp();
                let b = 10.0 * machine * (0.15 * own_b).exp() / ratio;
                (op(a), op(b))
            })
            .unzip()
    }

    #[test]
    fn the_interval_covers_a_known_ratio_about_95_times_in_100_under_correlation() {
        // 2,000 simulated cells of 400 correlated pairs (lag-1 correlation 0.5), seed fixed.
        // Batch means of 10 pairs cover the true ratio in 93.5-96.5 % of them (the binomial
        // spread of 2,000 draws at 95 % is ±1 %); a plain t over single pairs would not
        // (it undercovers under positive correlation).
        let mut rng = Rng::new(2024);
        let truth = 1.0 / 1.08;
        // The pooled ratio's own target: E(A)/E(B) = ratio exactly (same lognormal shape).
        let (mut covered, mut single_covered) = (0, 0);
        let runs = 2000;
        for _ in 0..runs {
            let (a, b) = simulated(&mut rng, 400, truth, 0.5);
            let t = throughput_ratio(&batches(&a, &b, OPS_PER_BATCH), None).unwrap();
            covered += usize::from(t.ci.0 <= truth && truth <= t.ci.1);
            let t1 = throughput_ratio(&batches(&a, &b, 1), None).unwrap();
            single_covered += usize::from(t1.ci.0 <= truth && truth <= t1.ci.1);
        }
        let rate = covered as f64 / runs as f64;
        let single = single_covered as f64 / runs as f64;
        assert!((0.935..=0.965).contains(&rate), "batch means cover {rate}");
        assert!(single < 0.91, "unbatched pairs undercover: {single}");
    }

    #[test]
    fn stein_fixes_the_count_from_the_pilot_and_reaches_the_precision() {
        let mut rng = Rng::new(99);
        let (a, b) = simulated(&mut rng, 10 * OPS_PER_BATCH, 1.0 / 1.05, 0.3);
        let pilot = batches(&a, &b, OPS_PER_BATCH);
        assert_eq!(pilot.len(), 10);
        let k = stein_batches(&pilot, 0.02).unwrap();
        assert!(k > 10, "±2 % needs more than the pilot: {k}");
        // A wide target needs no more than the pilot.
        assert_eq!(stein_batches(&pilot, 0.5), Some(10));
        // Run the rest: the final interval (the wider of Stein's and the t of all batches)
        // is within about the precision asked (Stein's is exactly ±2 % at K batches).
        let (a2, b2) = simulated(&mut rng, (k - 10) * OPS_PER_BATCH, 1.0 / 1.05, 0.3);
        let mut all = pilot.clone();
        all.extend(batches(&a2, &b2, OPS_PER_BATCH));
        let t = throughput_ratio(&all, Some(&pilot)).unwrap();
        let stein_only = throughput_ratio(&all, None).unwrap();
        assert!(half_width(&t) >= half_width(&stein_only) - 1e-12);
        assert!(half_width(&t) <= 0.021, "{t:?}: ±{:.4}", half_width(&t));
        assert!(stein_batches(&pilot[..1], 0.02).is_none());
    }

    #[test]
    fn stein_keeps_its_coverage_over_many_sequential_cells() {
        // 1,000 cells each decided by its own pilot: coverage stays at 95 % (92.5-97.5 %
        // allows the binomial spread of 1,000 draws) although the count is data-dependent.
        let mut rng = Rng::new(5);
        let truth = 1.0 / 1.05;
        let mut covered = 0;
        let cells = 1000;
        for _ in 0..cells {
            let (a, b) = simulated(&mut rng, 10 * OPS_PER_BATCH, truth, 0.3);
            let pilot = batches(&a, &b, OPS_PER_BATCH);
            let k = stein_batches(&pilot, 0.03).unwrap().min(200);
            let (a2, b2) = simulated(&mut rng, (k - 10) * OPS_PER_BATCH, truth, 0.3);
            let mut all = pilot.clone();
            all.extend(batches(&a2, &b2, OPS_PER_BATCH));
            let t = throughput_ratio(&all, Some(&pilot)).unwrap();
            covered += usize::from(t.ci.0 <= truth && truth <= t.ci.1);
        }
        let rate = covered as f64 / cells as f64;
        assert!((0.925..=0.975).contains(&rate), "coverage {rate}");
    }

    #[test]
    fn median_ratios_come_batch_by_batch_and_skip_failed_operations() {
        let a: Vec<Unit> = (0..40).map(|i| op(10.0 + f64::from(i % 5))).collect();
        let mut b: Vec<Unit> = a.iter().map(|u| op(u.ms * 1.2)).collect();
        b[3] = Unit {
            ms: 500.0,
            ops: 0.0,
        }; // failed: not in the median
        let t = median_ratio(&[(&a, &b)], 10).unwrap();
        assert!((t.ratio - 1.2).abs() < 0.01, "{t:?}");
        assert!(t.ci.0 <= t.ratio && t.ratio <= t.ci.1);
        assert!(
            median_ratio(&[(&a[..10], &b[..10])], 10).is_none(),
            "one batch"
        );
        let h = half_width(&RatioTest {
            ratio: 1.0,
            ci: (1.0 / 1.05, 1.05),
        });
        assert!((h - 0.05).abs() < 1e-12);
    }
}
