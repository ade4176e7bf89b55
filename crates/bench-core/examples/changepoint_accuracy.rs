//! How well `bench history` finds steps in noisy series, side by side with lance-bench's
//! regression test (the last 4 results against all older ones, Student's t, p < 0.05), on
//! synthetic series of known shape. Run by `scripts/figures/changepoint-accuracy.sh`;
//! prints two Markdown tables (docs/results.md has them).
//!
//! Each series: `n` results of level 100 with Gaussian noise of coefficient of variation
//! `cv`, stepping down by `step` (a slowdown in a throughput series) at its middle (the
//! first line), or at a point drawn between n/3 and 2n/3 (the tables). Both methods are judged two ways:
//! - on the whole series, as a report run after its last result: the detector's change
//!   points (found: one within ±1 of the step; false: any other), the t-test's verdict;
//! - as a report run after every new result (a nightly report): after how many results past
//!   the step each first reports it (delay; the detector only counts a change point within
//!   ±1 of the step), and on step-free series how often a report raises an alarm.

use bench_core::results::history::last_four_p;
use bench_core::rng::Rng;
use bench_core::stats::changepoint::{Detector, best_split};

const SERIES: usize = 10;
const FREE_SERIES: usize = 20;
const T_ALPHA: f64 = 0.05;

fn series(rng: &mut Rng, n: usize, cv: f64, step: f64, at: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let level = if i >= at { 100.0 * (1.0 - step) } else { 100.0 };
            level * (1.0 + cv * rng.normal())
        })
        .collect()
}

/// Whether the detector, on `x`, places a change point within ±1 of `at`; and how many
/// other change points it places.
fn judge(d: &Detector, x: &[f64], at: usize) -> (bool, usize) {
    let cps = d.detect(x);
    let near = cps.iter().filter(|c| c.index.abs_diff(at) <= 1).count();
    (near > 0, cps.len() - near.min(1))
}

/// The first prefix length (from the step on) at which `reports` says yes, as results past
/// the step; `None` if no prefix up to the whole series does.
fn delay(n: usize, at: usize, reports: impl Fn(usize) -> bool) -> Option<usize> {
    (at + 1..=n).find(|&len| reports(len)).map(|len| len - at)
}

fn median(mut v: Vec<usize>) -> String {
    if v.is_empty() {
        return "–".into();
    }
    v.sort();
    let m = v.len() / 2;
    match v.len() % 2 {
        1 => format!("{}", v[m]),
        _ => format!("{}", (v[m - 1] + v[m]) as f64 / 2.0),
    }
}

fn steps_table(d: &Detector, rng: &mut Rng) {
    println!(
        "| noise CV | step | results | E-divisive: found ±1 | E-divisive: false changes | \
         E-divisive: delay | last-4 t-test: flagged at the end | last-4 t-test: delay |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for cv in [0.02, 0.03, 0.05, 0.10] {
        for step in [0.02, 0.05, 0.10, 0.20] {
            for n in [20, 40, 60] {
                let (mut found, mut false_cps, mut flagged) = (0, 0, 0);
                let (mut d_delays, mut t_delays) = (Vec::new(), Vec::new());
                let (mut d_missed, mut t_missed) = (0, 0);
                for _ in 0..SERIES {
                    let at = n / 3 + (rng.next_u64() % (n / 3 + 1) as u64) as usize;
                    let x = series(rng, n, cv, step, at);
                    let (hit, other) = judge(d, &x, at);
                    found += usize::from(hit);
                    false_cps += other;
                    flagged += usize::from(last_four_p(&x).is_some_and(|p| p < T_ALPHA));
                    match delay(n, at, |len| judge(d, &x[..len], at).0) {
                        Some(k) => d_delays.push(k),
                        None => d_missed += 1,
                    }
                    match delay(n, at, |len| {
                        last_four_p(&x[..len]).is_some_and(|p| p < T_ALPHA)
                    }) {
                        Some(k) => t_delays.push(k),
                        None => t_missed += 1,
                    }
                }
                let missed = |m: usize| match m {
                    0 => String::new(),
                    m => format!(" ({m} never)"),
                };
                println!(
                    "| {:.0} % | −{:.0} % | {n} | {found}/{SERIES} | {false_cps} | {}{} | \
                     {flagged}/{SERIES} | {}{} |",
                    cv * 100.0,
                    step * 100.0,
                    median(d_delays),
                    missed(d_missed),
                    median(t_delays),
                    missed(t_missed)
                );
            }
        }
    }
}

fn free_table(d: &Detector, rng: &mut Rng) {
    println!(
        "| noise CV | results | E-divisive: series with a false change | E-divisive: reports \
         with an alarm | last-4 t-test: series flagged at the end | last-4 t-test: reports \
         with an alarm |"
    );
    println!("|---|---|---|---|---|---|");
    for cv in [0.02, 0.05, 0.10] {
        for n in [20, 40, 60] {
            let (mut d_series, mut t_series) = (0, 0);
            let (mut d_alarms, mut t_alarms, mut reports) = (0, 0, 0);
            for _ in 0..FREE_SERIES {
                let x = series(rng, n, cv, 0.0, n);
                d_series += usize::from(!d.detect(&x).is_empty());
                t_series += usize::from(last_four_p(&x).is_some_and(|p| p < T_ALPHA));
                for len in 6..=n {
                    reports += 1;
                    d_alarms += usize::from(!d.detect(&x[..len]).is_empty());
                    t_alarms += usize::from(last_four_p(&x[..len]).is_some_and(|p| p < T_ALPHA));
                }
            }
            let pct = |k: usize| format!("{:.1} %", 100.0 * k as f64 / reports as f64);
            println!(
                "| {:.0} % | {n} | {d_series}/{FREE_SERIES} | {} | {t_series}/{FREE_SERIES} | {} |",
                cv * 100.0,
                pct(d_alarms),
                pct(t_alarms)
            );
        }
    }
}

/// A 5 % step at noise CV 3 % at the middle of 20 to 60 results: how often the detector
/// places a change point within ±1 (and ±3) of it, how often it finds any, and how often the
/// most likely split alone (before any test) is within ±1: the limit the noise sets.
fn middle(d: &Detector, rng: &mut Rng) {
    let (mut one, mut three, mut any, mut split, mut total) = (0, 0, 0, 0, 0);
    for n in (20..=60).step_by(4) {
        for _ in 0..SERIES {
            let at = n / 2;
            let x = series(rng, n, 0.03, 0.05, at);
            let cps = d.detect(&x);
            let near = |k: usize| cps.iter().any(|c| c.index.abs_diff(at) <= k);
            one += usize::from(near(1));
            three += usize::from(near(3));
            any += usize::from(!cps.is_empty());
            let best = best_split(&x, d.min_segment).map(|(i, _)| i);
            split += usize::from(best.is_some_and(|i| i.abs_diff(at) <= 1));
            total += 1;
        }
    }
    println!(
        "A 5 % step at noise CV 3 % at the middle of 20, 24, ... 60 results ({SERIES} series \
         each, {total} in all): a change point within ±1 of it in {one}, within ±3 in {three}, \
         any change point in {any}; the most likely split alone lies within ±1 in {split}.\n"
    );
}

fn main() {
    let d = Detector::default();
    let mut rng = Rng::new(2026);
    println!(
        "Detector: E-divisive means, α = 1, {} permutations, p ≤ {}, segments of at least {}; \
         lance-bench: last 4 against all older, Student's t, p < {T_ALPHA}. {SERIES} series a \
         row with a step, {FREE_SERIES} without; seed 2026.\n",
        d.permutations, d.max_p, d.min_segment
    );
    middle(&d, &mut rng);
    steps_table(&d, &mut rng);
    println!();
    free_table(&d, &mut rng);
}
