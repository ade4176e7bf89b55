//! What repetitions can tell: the spread of a figure (a distribution-free confidence
//! interval of its median and its coefficient of variation), and how two sets of
//! repetitions compare: the ratio B/A with its confidence interval, from Welch's t on
//! logarithms for independent sets, or the paired t on log ratios for the pairs `bench ab`
//! measures.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Significance level of the tests, and 1 − the confidence of their intervals.
pub const ALPHA: f64 = 0.05;

/// The confidence the median's interval aims at.
pub const MEDIAN_CI_LEVEL: f64 = 0.95;

/// The spread of one figure over a cell's repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    /// The distribution-free interval of the median: the order statistics
    /// `[x(k), x(n+1-k)]` with the largest `k` whose coverage is at least 95 %, or the
    /// extremes (`k = 1`) when even they cover less; `None` for a single value.
    pub ci: Option<(f64, f64)>,
    /// The interval's exact coverage, `1 − 2·P(Bin(n, ½) < k)` (e.g. 0.75 for 3 values,
    /// 0.9375 for 5, 0.979 for 7).
    pub level: f64,
    /// Coefficient of variation: sample standard deviation over mean; `None` for fewer
    /// than two values or a zero mean.
    pub cv: Option<f64>,
}

/// P(Bin(n, ½) ≤ k).
fn binomial_half_cdf(n: usize, k: usize) -> f64 {
    let mut term = 0.5f64.powi(n as i32); // C(n, 0) / 2^n
    let mut sum = term;
    for i in 1..=k.min(n) {
        term *= (n + 1 - i) as f64 / i as f64;
        sum += term;
    }
    sum.min(1.0)
}

/// The spread of `values` (any order).
pub fn spread(values: &[f64]) -> Spread {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = super::median(v.clone());
    let (mean, var) = mean_var(&v);
    let cv = (n >= 2 && mean != 0.0).then(|| var.sqrt() / mean.abs());
    if n < 2 {
        return Spread {
            median,
            ci: None,
            level: 0.0,
            cv,
        };
    }
    let coverage = |k: usize| 1.0 - 2.0 * binomial_half_cdf(n, k - 1);
    let k = (1..=n / 2)
        .rev()
        .find(|&k| coverage(k) >= MEDIAN_CI_LEVEL)
        .unwrap_or(1);
    Spread {
        median,
        ci: Some((v[k - 1], v[n - k])),
        level: coverage(k),
        cv,
    }
}

/// Student's t with `df` degrees of freedom (statrs); `df` must be positive.
fn student_t(df: f64) -> StudentsT {
    StudentsT::new(0.0, 1.0, df).expect("positive degrees of freedom")
}

/// Two-sided p-value of Student's t with `df` degrees of freedom.
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    (2.0 * (1.0 - student_t(df).cdf(t.abs()))).clamp(0.0, 1.0)
}

/// The t with two-sided tail probability `p` (e.g. 0.05 → 2.776 for df = 4).
pub fn t_critical(p: f64, df: f64) -> f64 {
    student_t(df).inverse_cdf(1.0 - p / 2.0)
}

/// A ratio B/A estimated from repetitions: its point value and confidence interval (at
/// 1 − [`ALPHA`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioTest {
    pub ratio: f64,
    pub ci: (f64, f64),
}

/// The mean and the sample variance (over n − 1) of `v`: the one place both are computed.
/// The variance of fewer than two values is 0; the mean of none is 0.
pub fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n.max(1) as f64;
    if n < 2 {
        return (mean, 0.0);
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, var)
}

/// Logarithms of positive values; `None` if any is not positive.
fn logs(v: &[f64]) -> Option<Vec<f64>> {
    v.iter()
        .map(|&x| (x > 0.0 && x.is_finite()).then(|| x.ln()))
        .collect()
}

fn ratio_test(diff: f64, se: f64, df: f64) -> RatioTest {
    if se == 0.0 || !se.is_finite() {
        // No spread at all: any difference is certain, none is none.
        let r = diff.exp();
        return RatioTest {
            ratio: r,
            ci: (r, r),
        };
    }
    let half = t_critical(ALPHA, df) * se;
    RatioTest {
        ratio: diff.exp(),
        ci: ((diff - half).exp(), (diff + half).exp()),
    }
}

/// Welch's t-test on the logarithms of two independent sets of repetitions: the ratio of
/// their geometric means B/A, its interval, and p. `None` with fewer than two values on a
/// side or a value that is not positive.
pub fn welch_log(a: &[f64], b: &[f64]) -> Option<RatioTest> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (la, lb) = (logs(a)?, logs(b)?);
    let ((ma, va), (mb, vb)) = (mean_var(&la), mean_var(&lb));
    let (sa, sb) = (va / la.len() as f64, vb / lb.len() as f64);
    let se = (sa + sb).sqrt();
    // Welch–Satterthwaite degrees of freedom.
    let df = (sa + sb).powi(2)
        / (sa.powi(2) / (la.len() as f64 - 1.0) + sb.powi(2) / (lb.len() as f64 - 1.0));
    Some(ratio_test(
        mb - ma,
        se,
        if df.is_finite() { df } else { 1.0 },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The interval excludes 1: significant at [`ALPHA`].
    fn significant(t: &RatioTest) -> bool {
        t.ci.0 > 1.0 || t.ci.1 < 1.0
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn student_t_matches_tables() {
        // Two-sided 5 % critical values from any t table.
        for (df, t) in [
            (1.0, 12.706),
            (2.0, 4.303),
            (4.0, 2.776),
            (8.0, 2.306),
            (30.0, 2.042),
        ] {
            assert!(
                close(t_critical(0.05, df), t, 1e-3),
                "df {df}: {}",
                t_critical(0.05, df)
            );
            assert!(close(t_two_sided_p(t, df), 0.05, 1e-4), "df {df}");
        }
        assert!(close(t_two_sided_p(0.0, 5.0), 1.0, 1e-12));
        assert_eq!(t_two_sided_p(f64::INFINITY, 5.0), 0.0);
    }

    #[test]
    fn median_intervals_are_order_statistics_with_their_coverage() {
        let s = spread(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.ci, s.level), (2.0, Some((1.0, 3.0)), 0.75));
        let s = spread(&[5.0, 1.0, 4.0, 2.0, 3.0]);
        assert_eq!((s.ci, s.level), (Some((1.0, 5.0)), 0.9375));
        // Eight values: [x(2), x(7)] covers 1 − 2·9/256 = 0.9297 < 0.95, so the extremes.
        let v: Vec<f64> = (1..=8).map(f64::from).collect();
        assert_eq!(spread(&v).ci, Some((1.0, 8.0)));
        // Nine: [x(2), x(8)] covers 1 − 2·10/512 = 0.961.
        let v: Vec<f64> = (1..=9).map(f64::from).collect();
        let s = spread(&v);
        assert_eq!(s.ci, Some((2.0, 8.0)));
        assert!(close(s.level, 1.0 - 20.0 / 512.0, 1e-12));
        let one = spread(&[7.0]);
        assert_eq!((one.ci, one.cv), (None, None));
        let s = spread(&[9.0, 11.0]);
        assert!(close(s.cv.unwrap(), 2f64.sqrt() / 10.0, 1e-12));
    }

    #[test]
    fn welch_finds_a_doubling_and_not_noise() {
        let a = [100.0, 104.0, 97.0, 101.0, 99.0];
        let half: Vec<f64> = a.iter().map(|x| x / 2.0).collect();
        let t = welch_log(&a, &half).unwrap();
        assert!(close(t.ratio, 0.5, 1e-12) && significant(&t), "{t:?}");
        assert!(t.ci.0 < 0.5 && 0.5 < t.ci.1);
        let b = [101.0, 98.0, 103.0, 99.0, 100.0];
        let t = welch_log(&a, &b).unwrap();
        assert!(!significant(&t) && t.ci.0 < 1.0 && 1.0 < t.ci.1, "{t:?}");
        assert!(welch_log(&a, &[1.0]).is_none());
        assert!(welch_log(&a, &[0.0, 1.0]).is_none());
    }
}
