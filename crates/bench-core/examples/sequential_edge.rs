//! How often `bench ab`'s default rule — run a cell until its throughput interval decides
//! at the threshold, looking after every observation — gives a false verdict, with the error
//! spent over the looks (the rule, `precision::sequential`) and with a fixed 95 % interval at
//! every look (optional stopping), side by side on the same simulated observations. Run by
//! `scripts/figures/ab-edge.sh`; prints a Markdown table (docs/results.md has it).
//!
//! Each simulated cell is a series of paired observations (in `bench ab`, crossovers: two
//! runs, each arm first in one): observation `i`'s throughput ratio B/A is the true ratio
//! times `exp(sd · z_i)` (z standard normal; `sd` the spread of one observation's log ratio:
//! 1 % and 3.5 %), on a level that drifts from one to the next by 10 % (which pairs cancel).
//! The rule starts with 3 observations and adds one at a time until the interval decides or
//! the budget of observations is spent. At the edge (the true change equals the threshold)
//! any decision is false: the change is neither beyond the threshold nor within it. With
//! identical builds a false verdict is a change called beyond the threshold. `decided
//! within` with identical builds is the right answer.

use bench_core::compare::precision::{decides, sequential};
use bench_core::rng::Rng;
use bench_core::stats::paired::{Batch, Unit, throughput_ratio};

const CELLS: usize = 4000;
const FIRST: usize = 3;
const THRESHOLD: f64 = 0.05;

/// One run's batch: `ops` operations of each arm, B's throughput `ratio · exp(sd · z)`
/// times A's, on a level drifting by 10 %.
fn run(rng: &mut Rng, ratio: f64, sd: f64) -> Batch {
    let ops = 50.0;
    let level = 100.0 * (1.0 + 0.1 * rng.normal()).max(0.2);
    let b = level * ratio * (sd * rng.normal()).exp();
    let unit = |tput: f64| Unit {
        ms: ops / tput * 1000.0,
        ops,
    };
    Batch {
        a: unit(level),
        b: unit(b),
    }
}

/// Where a cell ended: decided beyond the threshold, decided within it, or undecided when
/// the budget of runs was spent. `spent`: the rule's sequential interval; else a fixed 95 %.
fn simulate(rng: &mut Rng, ratio: f64, sd: f64, budget: usize, spent: bool) -> (bool, bool) {
    let mut batches: Vec<Batch> = (0..FIRST).map(|_| run(rng, ratio, sd)).collect();
    loop {
        if let Some(t) = throughput_ratio(&batches, None) {
            let t = if spent {
                sequential(&t, batches.len())
            } else {
                t
            };
            if decides(&t, THRESHOLD) {
                let (lo, hi) = t.ci;
                let beyond = hi < 1.0 - THRESHOLD || lo > 1.0 + THRESHOLD;
                return (beyond, !beyond);
            }
        }
        if batches.len() >= budget {
            return (false, false);
        }
        batches.push(run(rng, ratio, sd));
    }
}

fn main() {
    println!(
        "| case | sd of B/A from one observation to the next | observations at most | rule | \
         decided beyond ±5 % | \
         decided within ±5 % | undecided | false verdicts |"
    );
    println!("|---|---:|---:|---|---:|---:|---:|---:|");
    for (case, ratio) in [
        ("at the edge (B 5 % slower)", 1.0 - THRESHOLD),
        ("identical", 1.0),
    ] {
        for sd in [0.01, 0.035] {
            for budget in [10, 40] {
                for spent in [true, false] {
                    let mut rng = Rng::new(0xab + budget as u64);
                    let (mut beyond, mut within) = (0, 0);
                    for _ in 0..CELLS {
                        let (b, w) = simulate(&mut rng, ratio, sd, budget, spent);
                        beyond += usize::from(b);
                        within += usize::from(w);
                    }
                    let undecided = CELLS - beyond - within;
                    let false_verdicts = match ratio == 1.0 {
                        true => beyond,
                        false => beyond + within,
                    };
                    let pct = |n: usize| format!("{:.1} %", 100.0 * n as f64 / CELLS as f64);
                    println!(
                        "| {case} | {:.1} % | {budget} | {} | {} | {} | {} | {} |",
                        sd * 100.0,
                        match spent {
                            true => "error spent over the looks (bench ab)",
                            false => "fixed 95 % at every look",
                        },
                        pct(beyond),
                        pct(within),
                        pct(undecided),
                        pct(false_verdicts)
                    );
                }
            }
        }
    }
    println!("\n{CELLS} simulated cells a row, the rule's first look at {FIRST} observations.");
}
