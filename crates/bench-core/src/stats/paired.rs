//! Pairs formed inside a cell (`bench ab`'s lockstep operations, time slices, duet): each
//! pair holds a *unit* of arm A and a unit of arm B measured under the same conditions,
//! and the question is the ratio of the arms' throughputs B/A.
//!
//! **The estimator** is the ratio of the pooled throughputs,
//! `R = (Σ ops_B / Σ ms_B) / (Σ ops_A / Σ ms_A)`: for lockstep pairs (one operation per
//! unit) the ratio of mean latencies A/B, for slices the ratio of the arms' goodputs.
//!
//! **Its interval** treats each *crossover* of the cell as one observation: runs `2j − 1`
//! and `2j` (both arms' processes on fresh copies, arm A first in the one and arm B in the
//! other: its copy made first, its workers started first, its operation first in each
//! turn), the sums of their pairs ([`crossovers`]). `ln R` is linearised (the delta method)
//! into one influence value per crossover,
//! `ψ_j = ops_Bj/mean(ops_B) − ms_Bj/mean(ms_B) − ops_Aj/mean(ops_A) + ms_Aj/mean(ms_A)`
//! (mean 0 by construction), and `ln R ± t(k−1) · sd(ψ)/√k` over the `k` crossovers, taken
//! back with `exp`, is the interval; it always contains `R`.
//!
//! Why not the pairs themselves: inside a run, pairing cancels whatever slows both arms
//! alike (a neighbour's load, the machine's drift), so a run's ratio is precise — but each
//! run has its own processes (their memory layout, their caches, where their copies lie),
//! and that luck is shared by every pair of the run: more pairs in one run cannot average it
//! away, only more runs can. On a 2-core VM it is as large as the noise of a run's 100 pairs
//! (runs' ratios spread by 2.4 % where their pairs explain 1.8 %), so batches of pairs inside
//! runs would give intervals too narrow; the unit tests show both on simulated runs.
//!
//! Why crossovers and not single runs: what going first gives a process is shared by the
//! runs taken close together, and is the same arm's in each while the order is fixed.
//! Beside a CPU neighbour, runs taken in one of its busy phases favoured the same arm, run
//! after run (their ratios' lag-1 correlation +0.11 to +0.19 with A always started first),
//! so an interval over single runs, looked at after a few of them, decided on that luck. In
//! a crossover each arm goes first once, so whatever going first gives cancels inside it
//! (the lag-1 correlation of consecutive runs became negative, and that of consecutive
//! crossovers −0.31 to −0.03: `scripts/figures/ab-interference.sh cause`); a run whose
//! partner has not run yet is in no crossover.
//!
//! **Until the answer is clear** ([`stein_batches`]): Stein's two-stage procedure. A pilot
//! of `k0` runs gives `s0`; the number of runs that makes the half-width at most `h` is
//! `K = ⌈(t(k0−1) · s0 / h)²⌉`. The count is fixed by the pilot alone, so no later look at
//! the data decides when to stop, and the stated coverage holds; the final interval is the
//! wider of Stein's (`s0`, `k0 − 1` degrees of freedom) and the t interval over all `K`
//! runs ([`throughput_ratio`] with a pilot).

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

/// The sums of both arms over one run's pairs: the unit of the interval.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Batch {
    pub a: Unit,
    pub b: Unit,
}

impl Batch {
    /// Two runs' sums added: a crossover's.
    pub fn plus(self, o: Batch) -> Batch {
        let add = |x: Unit, y: Unit| Unit {
            ms: x.ms + y.ms,
            ops: x.ops + y.ops,
        };
        Batch {
            a: add(self.a, o.a),
            b: add(self.b, o.b),
        }
    }
}

/// The crossovers among a cell's runs, given their repetitions: the indices of runs
/// `2j − 1` and `2j` (arm A first in the one, arm B in the other), in order of `j`. A run
/// whose partner is missing is in none.
pub fn crossovers(reps: &[u32]) -> Vec<[usize; 2]> {
    let at = |r: u32| reps.iter().position(|&x| x == r);
    let mut odd: Vec<u32> = reps.iter().copied().filter(|r| r % 2 == 1).collect();
    odd.sort_unstable();
    odd.dedup();
    odd.into_iter()
        .filter_map(|r| Some([at(r)?, at(r + 1)?]))
        .collect()
}

/// `n` pairs of runs each on its own, in the shape of [`crossovers`] (each pair twice): for
/// pairs whose order does not alternate.
pub fn singles(n: usize) -> Vec<[usize; 2]> {
    (0..n).map(|i| [i, i]).collect()
}

/// The geometric mean of per-run log ratios, crossover by crossover (a crossover's value:
/// the mean of its two runs'), with the t interval over the crossovers; `None` with fewer
/// than 2 crossovers whose runs both have a value.
pub fn crossover_log(logs: &[Option<f64>], blocks: &[[usize; 2]]) -> Option<RatioTest> {
    let v: Vec<f64> = blocks
        .iter()
        .filter_map(|&[i, j]| Some((logs.get(i).copied()?? + logs.get(j).copied()??) / 2.0))
        .collect();
    let k = v.len();
    if k < 2 {
        return None;
    }
    let (m, _) = mean(v.iter().copied());
    let half = t_critical(ALPHA, (k - 1) as f64) * sd(&v) / (k as f64).sqrt();
    Some(around(m, half))
}

/// The sums of one run's pairs (`a[i]` with `b[i]`; extra units of the longer side are
/// not pairs and are left out).
pub fn run_batch(a: &[Unit], b: &[Unit]) -> Batch {
    let n = a.len().min(b.len());
    let sum = |u: &[Unit]| {
        u[..n].iter().fold(Unit::default(), |s, x| Unit {
            ms: s.ms + x.ms,
            ops: s.ops + x.ops,
        })
    };
    Batch {
        a: sum(a),
        b: sum(b),
    }
}

fn mean(v: impl Iterator<Item = f64>) -> (f64, usize) {
    let (s, n) = v.fold((0.0, 0), |(s, n), x| (s + x, n + 1));
    (if n > 0 { s / n as f64 } else { 0.0 }, n)
}

fn sd(v: &[f64]) -> f64 {
    super::inference::mean_var(v).1.sqrt()
}

/// `ln R` and the runs' influence values ψ, or `None` when a side completed nothing (or
/// took no time): then there is no ratio.
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

/// The throughput ratio B/A over the runs' `batches` with its 95 % interval (t with `k − 1`
/// degrees of freedom); with a `pilot` (the first runs, when their count was fixed by
/// [`stein_batches`]), the wider of that and Stein's interval. `None` with fewer than 2 runs
/// or a side without a successful operation.
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

/// Stein's two-stage rule: how many runs in all make the throughput ratio's 95 % interval
/// at most ±`precision` (a fraction: 0.02 for ±2 %, on the log scale `ln(1 + precision)`),
/// from a pilot of runs. `None` without a ratio in the pilot or with fewer than 2 pilot
/// runs. Never fewer than the pilot's own count.
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

/// The ratio of medians B/A of operation pairs: per run `median(B's latencies) /
/// median(A's latencies)`, their logs averaged crossover by crossover ([`crossover_log`]).
/// Units with no successful operation are left out of the medians. `None` with fewer than
/// 2 crossovers that have a median on both sides in both runs.
pub fn median_ratio(runs: &[(&[Unit], &[Unit])], blocks: &[[usize; 2]]) -> Option<RatioTest> {
    let med = |u: &[Unit]| {
        let v: Vec<f64> = u.iter().filter(|x| x.ops > 0.0).map(|x| x.ms).collect();
        (!v.is_empty()).then(|| super::median(v))
    };
    let logs: Vec<Option<f64>> = runs
        .iter()
        .map(|&(a, b)| {
            let n = a.len().min(b.len());
            match (med(&a[..n]), med(&b[..n])) {
                (Some(x), Some(y)) if x > 0.0 && y > 0.0 => Some((y / x).ln()),
                _ => None,
            }
        })
        .collect();
    crossover_log(&logs, blocks)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub use crate::rng::Rng;

    fn op(ms: f64) -> Unit {
        Unit { ms, ops: 1.0 }
    }

    #[test]
    fn a_run_is_the_sum_of_its_pairs() {
        let a: Vec<Unit> = (0..12).map(|i| op(f64::from(i))).collect();
        let b: Vec<Unit> = (0..11).map(|_| op(1.0)).collect();
        let r = run_batch(&a, &b);
        assert_eq!(
            r.a,
            Unit {
                ms: 55.0,
                ops: 11.0
            },
            "the twelfth A is no pair"
        );
        assert_eq!(
            r.b,
            Unit {
                ms: 11.0,
                ops: 11.0
            }
        );
    }

    #[test]
    fn the_ratio_is_the_ratio_of_pooled_throughputs_and_lies_in_its_interval() {
        // Lockstep runs: B takes 10 % longer on every operation, with noise.
        let mut rng = Rng::new(7);
        let runs: Vec<(Vec<Unit>, Vec<Unit>)> = (0..8)
            .map(|_| {
                (0..50)
                    .map(|_| {
                        let base = 10.0 * (1.0 + 0.2 * rng.normal()).max(0.2);
                        (op(base), op(base * 1.1 + 0.3 * rng.normal()))
                    })
                    .unzip()
            })
            .collect();
        let bs: Vec<Batch> = runs.iter().map(|(a, b)| run_batch(a, b)).collect();
        let t = throughput_ratio(&bs, None).unwrap();
        let total = |f: fn(&Batch) -> f64| bs.iter().map(f).sum::<f64>();
        let pooled = total(|x| x.a.ms) / total(|x| x.b.ms);
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
        // No ratio without a successful operation on a side, nor from a single run.
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

    /// A run of `n` lockstep pairs with a known ratio: each arm's process has its own luck
    /// for the whole run (sd `process` on the log scale), the machine slows both arms of a
    /// pair alike (AR(1), lag-1 correlation 0.5), and each operation has its own AR(1) noise.
    fn simulated_run(rng: &mut Rng, n: usize, ratio: f64, process: f64) -> (Vec<Unit>, Vec<Unit>) {
        let phi: f64 = 0.5;
        let innov = (1.0 - phi * phi).sqrt();
        let (luck_a, luck_b) = (
            (process * rng.normal()).exp(),
            (process * rng.normal()).exp(),
        );
        let (mut shared, mut own_a, mut own_b) = (0.0, 0.0, 0.0);
        (0..n)
            .map(|_| {
                shared = phi * shared + innov * rng.normal();
                own_a = phi * own_a + innov * rng.normal();
                own_b = phi * own_b + innov * rng.normal();
                let machine = (0.3 * shared).exp();
                let a = 10.0 * machine * luck_a * (0.05 * own_a).exp();
                let b = 10.0 * machine * luck_b * (0.05 * own_b).exp() / ratio;
                (op(a), op(b))
            })
            .unzip()
    }

    /// The interval over batches of 20 consecutive pairs, as if pairs inside a run were
    /// independent of the run.
    fn by_pair_batches(runs: &[(Vec<Unit>, Vec<Unit>)]) -> RatioTest {
        let bs: Vec<Batch> = runs
            .iter()
            .flat_map(|(a, b)| {
                a.chunks(20)
                    .zip(b.chunks(20))
                    .map(|(x, y)| run_batch(x, y))
                    .collect::<Vec<_>>()
            })
            .collect();
        throughput_ratio(&bs, None).unwrap()
    }

    #[test]
    fn runs_as_the_unit_cover_a_known_ratio_95_times_in_100_and_pair_batches_do_not() {
        // 2,000 simulated cells of 10 runs of 100 pairs, each process's luck 1 % (sd), seed
        // fixed. The interval over runs covers the true ratio in 93.5-96.5 % of them (the
        // binomial spread of 2,000 draws at 95 % is ±1 %); batches of pairs, blind to the
        // runs' luck, cover far less.
        let mut rng = Rng::new(2024);
        let truth = 1.0 / 1.08;
        let (mut by_run, mut by_pairs) = (0, 0);
        let cells = 2000;
        for _ in 0..cells {
            let runs: Vec<_> = (0..10)
                .map(|_| simulated_run(&mut rng, 100, truth, 0.01))
                .collect();
            let bs: Vec<Batch> = runs.iter().map(|(a, b)| run_batch(a, b)).collect();
            let t = throughput_ratio(&bs, None).unwrap();
            by_run += usize::from(t.ci.0 <= truth && truth <= t.ci.1);
            let t = by_pair_batches(&runs);
            by_pairs += usize::from(t.ci.0 <= truth && truth <= t.ci.1);
        }
        let rate = |n: usize| n as f64 / cells as f64;
        eprintln!(
            "coverage: runs {}, pair batches {}",
            rate(by_run),
            rate(by_pairs)
        );
        assert!(
            (0.935..=0.965).contains(&rate(by_run)),
            "runs cover {}",
            rate(by_run)
        );
        assert!(
            rate(by_pairs) < 0.85,
            "pair batches cover {}",
            rate(by_pairs)
        );
    }

    fn runs(rng: &mut Rng, k: usize, ratio: f64) -> Vec<Batch> {
        (0..k)
            .map(|_| {
                let (a, b) = simulated_run(rng, 100, ratio, 0.01);
                run_batch(&a, &b)
            })
            .collect()
    }

    #[test]
    fn stein_fixes_the_count_from_the_pilot_and_reaches_the_precision() {
        let mut rng = Rng::new(99);
        let pilot = runs(&mut rng, 5, 1.0 / 1.05);
        let k = stein_batches(&pilot, 0.005).unwrap();
        assert!(k > 5, "±0.5 % needs more than the pilot: {k}");
        // A wide target needs no more than the pilot.
        assert_eq!(stein_batches(&pilot, 0.5), Some(5));
        // Run the rest: the final interval (the wider of Stein's and the t of all runs) is
        // within about the precision asked (Stein's is exactly ±0.5 % at K runs).
        let mut all = pilot.clone();
        all.extend(runs(&mut rng, k - 5, 1.0 / 1.05));
        let t = throughput_ratio(&all, Some(&pilot)).unwrap();
        let t_only = throughput_ratio(&all, None).unwrap();
        assert!(half_width(&t) >= half_width(&t_only) - 1e-12);
        assert!(half_width(&t) <= 0.0051, "{t:?}: ±{:.4}", half_width(&t));
        assert!(stein_batches(&pilot[..1], 0.02).is_none());
    }

    #[test]
    fn stein_keeps_its_coverage_over_many_sequential_cells() {
        // 1,000 cells each decided by its own pilot of 5 runs: coverage stays at 95 % or
        // above (92.5-99 % allows the binomial spread of 1,000 draws and the wider of two
        // intervals) although the count is data-dependent.
        let mut rng = Rng::new(5);
        let truth = 1.0 / 1.05;
        let mut covered = 0;
        let cells = 1000;
        for _ in 0..cells {
            let pilot = runs(&mut rng, 5, truth);
            let k = stein_batches(&pilot, 0.01).unwrap().min(60);
            let mut all = pilot.clone();
            all.extend(runs(&mut rng, k - 5, truth));
            let t = throughput_ratio(&all, Some(&pilot)).unwrap();
            covered += usize::from(t.ci.0 <= truth && truth <= t.ci.1);
        }
        let rate = covered as f64 / cells as f64;
        eprintln!("coverage with Stein's count: {rate}");
        assert!((0.925..=0.99).contains(&rate), "coverage {rate}");
    }

    #[test]
    fn a_crossover_is_two_runs_each_arm_first_in_one() {
        // Repetitions as recorded (in any order): 1 with 2, 3 with 4; 5 waits for 6; 7
        // alone has no partner; a run with an even number and no odd one is in none.
        assert_eq!(
            crossovers(&[2, 1, 3, 5, 4, 7, 10]),
            vec![[1, 0], [2, 4]],
            "runs 5, 7 and 10 have no partner yet"
        );
        assert!(crossovers(&[1]).is_empty());
        let x = Batch {
            a: op(2.0),
            b: op(3.0),
        };
        assert_eq!(
            x.plus(x),
            Batch {
                a: Unit { ms: 4.0, ops: 2.0 },
                b: Unit { ms: 6.0, ops: 2.0 }
            }
        );
        // Logs by crossover: a run without a value leaves its crossover out.
        let t = crossover_log(
            &[Some(0.1), Some(0.3), Some(0.2), Some(0.2), None, Some(0.0)],
            &crossovers(&[1, 2, 3, 4, 5, 6]),
        )
        .unwrap();
        assert!((t.ratio - 0.2f64.exp()).abs() < 1e-12, "{t:?}");
        assert!(
            (t.ci.0 - t.ratio).abs() < 1e-12,
            "both crossovers at 0.2: no spread"
        );
    }

    #[test]
    fn crossovers_of_whole_runs_cancel_drift() {
        // Pairs of whole runs, B 18-22 % slower in each whatever the machine did between
        // them: the interval over their crossovers holds 1.2.
        let logs: Vec<Option<f64>> = [1.21, 1.19, 1.2, 1.22, 1.18, 1.2]
            .iter()
            .map(|r: &f64| Some(r.ln()))
            .collect();
        let t = crossover_log(&logs, &crossovers(&[1, 2, 3, 4, 5, 6])).unwrap();
        assert!(t.ci.0 > 1.15 && t.ci.0 < 1.2 && 1.2 < t.ci.1, "{t:?}");
        let same = crossover_log(&[Some(0.0); 4], &crossovers(&[1, 2, 3, 4])).unwrap();
        assert_eq!((same.ratio, same.ci), (1.0, (1.0, 1.0)));
    }

    /// A run of `n` lockstep pairs in which the arm that goes first (`first`) is slowed by
    /// `position` (a factor on its latencies: what going first gives a process beside a
    /// neighbour), the rest as [`simulated_run`].
    fn positioned_run(
        rng: &mut Rng,
        ratio: f64,
        first: usize,
        position: f64,
    ) -> (Vec<Unit>, Vec<Unit>) {
        let (a, b) = simulated_run(rng, 60, ratio, 0.01);
        let slow = |v: Vec<Unit>, me: usize| -> Vec<Unit> {
            let f = if me == first { position } else { 1.0 };
            v.into_iter().map(|u| Unit { ms: u.ms * f, ..u }).collect()
        };
        (slow(a, 0), slow(b, 1))
    }

    #[test]
    fn crossovers_cancel_what_going_first_gives_and_single_runs_with_a_fixed_order_do_not() {
        // 2,000 simulated cells of 6 runs, identical builds (truth 1.0). Going first slows
        // a process by a factor that lasts a phase of the neighbour (here the whole cell:
        // sd 5 % from cell to cell). With A always first (bench ab before crossovers), the
        // interval over single runs covers the truth far less than 95 %; with the first arm
        // alternating and crossovers as the unit, it covers it 95 times in 100.
        let mut rng = Rng::new(79);
        let cells = 2000;
        let (mut fixed_order, mut crossed) = (0, 0);
        for _ in 0..cells {
            let position = (0.05 * rng.normal()).exp();
            let fixed: Vec<Batch> = (0..6)
                .map(|_| {
                    let (a, b) = positioned_run(&mut rng, 1.0, 0, position);
                    run_batch(&a, &b)
                })
                .collect();
            let t = throughput_ratio(&fixed, None).unwrap();
            fixed_order += usize::from(t.ci.0 <= 1.0 && 1.0 <= t.ci.1);
            let runs: Vec<Batch> = (1..=6u32)
                .map(|rep| {
                    let first = ((rep + 1) % 2) as usize;
                    let (a, b) = positioned_run(&mut rng, 1.0, first, position);
                    run_batch(&a, &b)
                })
                .collect();
            let blocks: Vec<Batch> = crossovers(&[1, 2, 3, 4, 5, 6])
                .iter()
                .map(|&[i, j]| runs[i].plus(runs[j]))
                .collect();
            let t = throughput_ratio(&blocks, None).unwrap();
            crossed += usize::from(t.ci.0 <= 1.0 && 1.0 <= t.ci.1);
        }
        let rate = |n: usize| n as f64 / cells as f64;
        eprintln!(
            "coverage: fixed order {}, crossovers {}",
            rate(fixed_order),
            rate(crossed)
        );
        assert!(rate(fixed_order) < 0.5, "fixed order {}", rate(fixed_order));
        assert!(
            (0.935..=0.99).contains(&rate(crossed)),
            "crossovers {}",
            rate(crossed)
        );
    }

    #[test]
    fn median_ratios_come_run_by_run_and_skip_failed_operations() {
        let a: Vec<Unit> = (0..40).map(|i| op(10.0 + f64::from(i % 5))).collect();
        let mut b: Vec<Unit> = a.iter().map(|u| op(u.ms * 1.2)).collect();
        b[3] = Unit {
            ms: 500.0,
            ops: 0.0,
        }; // failed: not in the median
        let runs: Vec<(&[Unit], &[Unit])> = (0..4)
            .map(|k| (&a[10 * k..10 * k + 10], &b[10 * k..10 * k + 10]))
            .collect();
        let t = median_ratio(&runs, &crossovers(&[1, 2, 3, 4])).unwrap();
        assert!((t.ratio - 1.2).abs() < 0.01, "{t:?}");
        assert!(t.ci.0 <= t.ratio && t.ratio <= t.ci.1);
        assert!(
            median_ratio(&runs[..2], &crossovers(&[1, 2])).is_none(),
            "one crossover"
        );
        let h = half_width(&RatioTest {
            ratio: 1.0,
            ci: (1.0 / 1.05, 1.05),
        });
        assert!((h - 0.05).abs() < 1e-12);
    }
}
