//! Where a series of results stepped: E-divisive means (Matteson and James, 2014), as
//! MongoDB's and Apache Otava's (formerly Hunter) performance histories use it, with a
//! permutation test of each step found.
//!
//! For a segment of the series and each split of it into a left part of `m` points and a
//! right part of `k`, both at least [`Detector::min_segment`] long, the divergence
//!
//! ```text
//! Q = m·k/(m+k) · ( 2/(m·k) Σ|l − r|  −  2/(m(m−1)) Σ|l − l'|  −  2/(k(k−1)) Σ|r − r'| )
//! ```
//!
//! (sums over the pairs across the split and within each part; α = 1) is largest where the
//! two parts differ most. The best split is a change point when its `Q` is rarely reached
//! by the same values in a random order: `p = (1 + #{Q_perm ≥ Q}) / (1 + permutations)`,
//! at most [`Detector::max_p`]. Each side of a change point is then searched the same way,
//! until no significant split is left. The permutations are drawn from a fixed seed, so the
//! same series always gives the same change points.

use crate::rng::Rng;

/// One step of a series.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    /// The index of the first point after the step.
    pub index: usize,
    /// The mean of the segment before it and after it (up to the neighbouring change points).
    pub before: f64,
    pub after: f64,
    /// The permutation test's p-value.
    pub p: f64,
}

impl ChangePoint {
    /// The change from `before` to `after`, in percent of `before`.
    pub fn change_pct(&self) -> f64 {
        (self.after / self.before - 1.0) * 100.0
    }
}

/// The detector's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detector {
    /// The fewest points on either side of a split.
    pub min_segment: usize,
    /// Random orders of a segment its best split is tested against.
    pub permutations: usize,
    /// The largest p-value that is a change point.
    pub max_p: f64,
    /// The seed of the permutations.
    pub seed: u64,
}

impl Default for Detector {
    fn default() -> Self {
        Detector {
            min_segment: 3,
            permutations: 999,
            max_p: 0.01,
            seed: 0x5eed,
        }
    }
}

impl Detector {
    /// The fewest results a series needs for a change point at its newest `min_segment`
    /// results to be found when it is there. A permutation test cannot give less than the
    /// share of orders that separate the step as well as the series does: a clean step of
    /// `s` results among `n` is matched by 2 of the C(n, s) orders (the `s` at either end),
    /// so p ≥ 2 / C(n, s). The least `n` whose floor is a quarter of `max_p`, so that the
    /// permutations' own sampling (p is estimated from `permutations` draws) rarely lifts a
    /// clean step's p above `max_p`: 18 for the defaults (2 / C(18, 3) = 0.0025).
    pub fn min_results(&self) -> usize {
        let s = self.min_segment.max(2);
        (2 * s..)
            .find(|&n| 2.0 / choose(n, s) <= self.max_p / 4.0)
            .expect("some length reaches any positive max_p")
    }

    /// The change points of `series`, in order of their index; none for a series shorter
    /// than [`Detector::min_results`], whose steps the test could not tell from chance.
    pub fn detect(&self, series: &[f64]) -> Vec<ChangePoint> {
        if series.len() < self.min_results() {
            return Vec::new();
        }
        let mut found = Vec::new();
        let mut rng = Rng::new(self.seed);
        self.search(series, 0, &mut rng, &mut found);
        found.sort_by_key(|&(index, _)| index);
        let cuts: Vec<usize> = found.iter().map(|&(i, _)| i).collect();
        found
            .iter()
            .enumerate()
            .map(|(n, &(index, p))| {
                let from = if n == 0 { 0 } else { cuts[n - 1] };
                let to = cuts.get(n + 1).copied().unwrap_or(series.len());
                ChangePoint {
                    index,
                    before: mean(&series[from..index]),
                    after: mean(&series[index..to]),
                    p,
                }
            })
            .collect()
    }

    /// Find the significant change points of `segment` (starting at `offset` in the
    /// series), recursively.
    fn search(&self, segment: &[f64], offset: usize, rng: &mut Rng, found: &mut Vec<(usize, f64)>) {
        let Some((split, q)) = best_split(segment, self.min_segment) else {
            return;
        };
        let mut shuffled = segment.to_vec();
        let mut reached = 0;
        for _ in 0..self.permutations {
            rng.shuffle(&mut shuffled);
            if best_split(&shuffled, self.min_segment).is_some_and(|(_, qp)| qp >= q) {
                reached += 1;
            }
        }
        let p = (1 + reached) as f64 / (1 + self.permutations) as f64;
        if p > self.max_p {
            return;
        }
        found.push((offset + split, p));
        self.search(&segment[..split], offset, rng, found);
        self.search(&segment[split..], offset + split, rng, found);
    }
}

/// C(n, k), as a float (exact for the small n and k it is asked).
fn choose(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
}

/// The split of `x` with the largest divergence `Q` (see the module), and that `Q`: where a
/// single step is most likely, before any test of it; none when `x` is too short to split.
pub fn best_split(x: &[f64], min_segment: usize) -> Option<(usize, f64)> {
    let n = x.len();
    let min = min_segment.max(2);
    if n < 2 * min {
        return None;
    }
    // Left part x[..t], right part x[t..]: the sums across the split and within each part,
    // moved along as t grows by one point.
    let dist = |i: usize, j: usize| (x[i] - x[j]).abs();
    let (mut across, mut left, mut right) = (0.0, 0.0, 0.0);
    for i in 0..n {
        for j in i + 1..n {
            right += dist(i, j);
        }
    }
    let mut best: Option<(usize, f64)> = None;
    for t in 1..n - 1 {
        // Point t - 1 moves from the right part to the left.
        let moved = t - 1;
        let to_left: f64 = (0..moved).map(|i| dist(i, moved)).sum();
        let to_right: f64 = (t..n).map(|j| dist(moved, j)).sum();
        across += to_right - to_left;
        left += to_left;
        right -= to_right;
        let (m, k) = (t as f64, (n - t) as f64);
        if t < min || n - t < min {
            continue;
        }
        let e =
            2.0 * across / (m * k) - 2.0 * left / (m * (m - 1.0)) - 2.0 * right / (k * (k - 1.0));
        let q = m * k / (m + k) * e;
        if best.is_none_or(|(_, b)| q > b) {
            best = Some((t, q));
        }
    }
    best
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` points of mean 100 and noise `cv` (a fraction), stepping by `step` (a fraction)
    /// at `at`.
    fn series(rng: &mut Rng, n: usize, cv: f64, step: f64, at: usize) -> Vec<f64> {
        (0..n)
            .map(|i| {
                let level = if i >= at { 100.0 * (1.0 + step) } else { 100.0 };
                level * (1.0 + cv * rng.normal())
            })
            .collect()
    }

    #[test]
    fn a_five_percent_step_at_three_percent_noise_is_found_about_as_well_as_the_noise_allows() {
        // At this noise a step's place is uncertain: the most likely split alone lies within
        // ±1 of it in about three series of four. The detector's test costs little of that.
        let mut rng = Rng::new(7);
        let d = Detector::default();
        let (mut one, mut three, mut split, mut total) = (0, 0, 0, 0);
        for n in (20..=60).step_by(4) {
            for _ in 0..10 {
                let at = n / 2;
                let x = series(&mut rng, n, 0.03, -0.05, at);
                let cps = d.detect(&x);
                one += usize::from(cps.iter().any(|c| c.index.abs_diff(at) <= 1));
                three += usize::from(cps.iter().any(|c| c.index.abs_diff(at) <= 3));
                let best = best_split(&x, d.min_segment).map(|(i, _)| i);
                split += usize::from(best.is_some_and(|i| i.abs_diff(at) <= 1));
                total += 1;
                for c in cps.iter().filter(|c| c.index.abs_diff(at) <= 1) {
                    assert!((c.change_pct() + 5.0).abs() < 3.0, "{cps:?}");
                }
            }
        }
        assert!(
            one as f64 >= 0.85 * split as f64,
            "{one} within ±1, the best split {split}"
        );
        assert!(
            three as f64 >= 0.8 * total as f64,
            "{three} of {total} within ±3"
        );
    }

    #[test]
    fn series_without_a_step_raise_at_most_one_false_change_in_twenty() {
        let mut rng = Rng::new(11);
        let d = Detector::default();
        let false_changes: usize = (0..20)
            .map(|k| d.detect(&series(&mut rng, 20 + 2 * k, 0.05, 0.0, 0)).len())
            .sum();
        assert!(false_changes <= 1, "{false_changes} false changes");
    }

    #[test]
    fn two_steps_are_both_found_with_their_segments_means() {
        let mut x = vec![100.0; 15];
        x.extend(vec![120.0; 15]);
        x.extend(vec![90.0; 15]);
        let mut rng = Rng::new(3);
        for v in &mut x {
            *v *= 1.0 + 0.01 * rng.normal();
        }
        let cps = Detector::default().detect(&x);
        assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), [15, 30]);
        assert!((cps[0].before - 100.0).abs() < 2.0 && (cps[0].after - 120.0).abs() < 2.0);
        assert!((cps[1].after - 90.0).abs() < 2.0, "{cps:?}");
        assert!(cps.iter().all(|c| c.p <= 0.01));
    }

    /// The minimum is what the test can reach: at it, a clean 2× step at the newest
    /// `min_segment` results is found whatever the permutations' seed; one result fewer
    /// and the floor of p is above a quarter of max_p.
    #[test]
    fn at_the_minimum_a_clean_step_at_the_newest_results_is_found() {
        let d = Detector::default();
        let n = d.min_results();
        assert_eq!(n, 18);
        assert!(2.0 / choose(n - 1, 3) > d.max_p / 4.0);
        assert_eq!(choose(18, 3), 816.0);
        let mut noise = Rng::new(5);
        let mut x: Vec<f64> = (0..n)
            .map(|_| 100.0 * (1.0 + 0.01 * noise.normal()))
            .collect();
        for v in &mut x[n - 3..] {
            *v *= 2.0;
        }
        for seed in 0..30 {
            let cps = Detector { seed, ..d }.detect(&x);
            assert_eq!(
                cps.iter().map(|c| c.index).collect::<Vec<_>>(),
                [n - 3],
                "seed {seed}: {cps:?}"
            );
        }
        // With the old minimum (6: 3 + 3) no order of the permutations could reach p ≤ 0.01.
        assert!(2.0 / choose(6, 3) > d.max_p);
    }

    #[test]
    fn short_or_flat_series_have_none() {
        let d = Detector::default();
        assert!(d.detect(&[]).is_empty());
        assert!(d.detect(&[1.0, 2.0, 3.0, 4.0, 5.0]).is_empty());
        assert!(d.detect(&[7.0; 30]).is_empty());
    }

    #[test]
    fn the_split_sums_match_a_direct_computation() {
        let x: [f64; 7] = [1.0, 4.0, 2.0, 8.0, 7.0, 9.0, 3.0];
        let direct = |t: usize| {
            let (l, r) = x.split_at(t);
            let (m, k) = (l.len() as f64, r.len() as f64);
            let across: f64 = l
                .iter()
                .flat_map(|a| r.iter().map(move |b| (a - b).abs()))
                .sum();
            let within = |p: &[f64]| -> f64 {
                (0..p.len())
                    .flat_map(|i| (i + 1..p.len()).map(move |j| (p[i] - p[j]).abs()))
                    .sum()
            };
            let e = 2.0 * across / (m * k)
                - 2.0 * within(l) / (m * (m - 1.0))
                - 2.0 * within(r) / (k * (k - 1.0));
            m * k / (m + k) * e
        };
        let (t, q) = best_split(&x, 2).unwrap();
        let best = (2..=5).map(direct).fold(f64::MIN, f64::max);
        assert!(
            (q - best).abs() < 1e-9 && (direct(t) - q).abs() < 1e-9,
            "{t} {q} {best}"
        );
    }
}
