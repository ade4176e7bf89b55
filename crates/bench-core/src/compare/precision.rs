//! How long `bench ab` runs a cell ([`Until`]): the plan's repetitions; until its
//! throughput interval decides at the threshold (the default: [`decided`]); or a count fixed
//! once by Stein's two-stage rule after a pilot (`--precision`, see `stats::paired`); and
//! the time a cell has taken against its budget.
//!
//! Until decided, the rule looks at the interval after every run, so a fixed 95 % interval
//! would err more often than 5 % in all: each look is another chance for chance to decide
//! (optional stopping). The rule spends its error over the looks instead: the k-th look
//! (k = 1 at the first run count with a test) uses an interval at confidence
//! `1 − α_k`, `α_k = 0.05 · 6 / (π² k²)`, and these add up to at most 0.05 over any number
//! of looks (a union bound: Σ 1/k² = π²/6). So whatever the budget, the chance that a cell
//! whose true change sits at the threshold is decided either way is at most 5 %, and that a
//! cell without a change is called a change at most 2.5 % (`sequential`, and
//! `crates/bench-core/examples/sequential_edge.rs`, which measures both).

use std::time::Duration;

use crate::compare::{Comparison, Row, inside_batches, pairs_of, wall_secs};
use crate::export::Record;
use crate::export::record::{ARM_A, ARM_B};
use crate::plan::Cell;
use crate::stats::RatioTest;
use crate::stats::paired::{half_width, stein_batches};
use crate::stats::{ALPHA, t_critical};
use crate::sweep::state::State;

/// How long `bench ab` runs each cell (beyond the plan's repetitions, within its budget).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Until {
    /// The plan's repetitions and no more (`--no-extend`).
    Repetitions,
    /// The count Stein's rule fixes after a pilot for an interval within ±this fraction
    /// (`--precision`).
    Precision(f64),
    /// Until the throughput interval decides at this threshold (a fraction): it lies
    /// wholly beyond ±threshold (a verdict) or wholly within it (no change that large).
    Decided(f64),
}

/// Whether an interval decides at `threshold` (a fraction): wholly beyond ±threshold, or
/// wholly within it. An interval across either edge of the band cannot tell.
pub fn decides(t: &RatioTest, threshold: f64) -> bool {
    let (lo, hi) = t.ci;
    let (down, up) = (1.0 - threshold, 1.0 + threshold);
    hi < down || lo > up || (lo >= down && hi <= up)
}

/// Whether a row decides at `threshold`: its throughput has a test, and every figure it
/// tests (throughput; p50 where a unit is one operation) decides — so that a row is never
/// left undecided by its p50 when more runs could decide it.
fn row_decides(r: &Row, threshold: f64) -> bool {
    // A paced throughput (a mixed cell's reads/s) is not judged, so it decides nothing.
    let judged = r
        .tests
        .iter()
        .enumerate()
        .filter(|(i, _)| !(r.paced && *i == 0));
    r.tests[0].is_some()
        && judged
            .filter_map(|(_, t)| t.as_ref())
            .all(|t| decides(t, threshold))
}

/// The error the rule may spend at its `look`-th look (1-based): `0.05 · 6 / (π² k²)`.
pub fn look_alpha(look: usize) -> f64 {
    let k = look.max(1) as f64;
    ALPHA * 6.0 / (std::f64::consts::PI.powi(2) * k * k)
}

/// The look a test over `units` observations (crossovers) is: the first count with a test
/// is look 1. A look comes with each new crossover, so every second run.
pub fn look_of(units: usize) -> usize {
    (units + 1)
        .saturating_sub(crate::compare::MIN_REPETITIONS)
        .max(1)
}

/// A 95 % interval over `units` observations (crossovers: a t interval on the log scale,
/// `units − 1` degrees of freedom) as the sequential rule's interval at that look: the same
/// centre, widened by `t(α_k) / t(0.05)`.
pub fn sequential(t: &RatioTest, units: usize) -> RatioTest {
    let df = units.saturating_sub(1).max(1) as f64;
    let scale = t_critical(look_alpha(look_of(units)), df) / t_critical(ALPHA, df);
    let centre = t.ratio.ln();
    let (lo, hi) = (t.ci.0.ln(), t.ci.1.ln());
    RatioTest {
        ratio: t.ratio,
        ci: (
            (centre - (centre - lo) * scale).exp(),
            (centre + (hi - centre) * scale).exp(),
        ),
    }
}

/// A paired comparison's rows judged by the sequential rule's intervals, throughput and p50
/// alike (what `bench ab` run until decided reports, so that its verdicts are the rule's:
/// a p50 looked at after every crossover spends its error over the looks too).
pub fn sequential_verdicts(c: &mut Comparison) {
    let t = c.threshold_pct / 100.0;
    for r in c.rows.iter_mut().chain(c.read_rows.iter_mut()) {
        let Some(units) = r.pairs.as_ref().map(|p| p.units) else {
            continue;
        };
        for i in 0..2 {
            if let Some(test) = r.tests[i] {
                r.retest(i, sequential(&test, units), t);
            }
        }
    }
}

/// Whether the paired records of a cell (under its current key) decide at `threshold` (a
/// fraction) by the sequential rule: every throughput (commits, and a mixed cell's reads)
/// has its interval, and each decides.
pub fn decided(cell: &Cell, records: &[Record], threshold: f64) -> bool {
    let (id, key) = (cell.id(), cell.key());
    let mine: Vec<Record> = records
        .iter()
        .filter(|r| r.bench_tag == id && r.cell_key == key)
        .cloned()
        .collect();
    let mut c = crate::compare::paired(&mine, threshold * 100.0);
    sequential_verdicts(&mut c);
    let rows: Vec<&Row> = c.rows.iter().chain(&c.read_rows).collect();
    !rows.is_empty() && rows.iter().all(|r| row_decides(r, threshold))
}

/// What the A/B table cannot say itself: the cells whose interval did not get where the
/// rule (`until`) asked, and why (the budget ran out; or Stein's count was reached but its
/// runs were noisier than the pilot's).
pub fn notes(c: &Comparison, state: &State, until: Until, budget: Duration) -> Vec<String> {
    let mut out = Vec::new();
    // The cells the rule ran (not the rows of a cell of roles' operations, which it did not
    // look at).
    for r in c.rows.iter().chain(&c.read_rows).filter(|r| !r.of_role) {
        let runs = r.pairs.as_ref().map_or(0, |p| p.runs);
        let pct = |x: f64| (x - 1.0) * 100.0;
        let decided = state.cells.get(&r.cell).and_then(|s| s.precision);
        match (until, r.tests[0]) {
            (Until::Precision(p), Some(t)) if half_width(&t) > p * 1.0001 => {
                let reached = decided.is_some_and(|d| runs as u32 >= d.repetitions);
                let why = if reached {
                    format!(
                        "it ran the {runs} runs Stein's rule asked for after its pilot, but \
                         they were noisier than the pilot's (run it again with --fresh, or \
                         accept the wider interval)"
                    )
                } else {
                    format!(
                        "its budget of {}s ran out after {runs} runs (raise --budget-secs, or \
                         accept the wider interval)",
                        budget.as_secs()
                    )
                };
                out.push(format!(
                    "{} ({}): ±{:.1} %, not ±{:.1} %: {why}",
                    r.cell,
                    r.per_sec,
                    half_width(&t) * 100.0,
                    p * 100.0
                ));
            }
            (Until::Decided(th), test) if !row_decides(r, th) => {
                let names = [r.per_sec, "p50"];
                // The first figure whose interval does not decide, and where it lies.
                let across = (0..2).find_map(|i| {
                    let t = r.tests[i].filter(|t| !decides(t, th))?;
                    Some(format!(
                        "its {} interval {:+.1} %..{:+.1} % reaches across ±{:.1} %: a change                          close to the threshold, or runs too noisy to tell it (raise                          --budget-secs to decide it)",
                        names[i],
                        pct(t.ci.0),
                        pct(t.ci.1),
                        th * 100.0
                    ))
                });
                let why = match (test, across) {
                    (Some(_), Some(why)) => why,
                    _ => format!(
                        "a test needs {} crossovers, {} runs (raise --budget-secs)",
                        crate::compare::MIN_REPETITIONS,
                        2 * crate::compare::MIN_REPETITIONS
                    ),
                };
                out.push(format!(
                    "{} ({}): undecided at ±{:.1} % after {runs} runs, when its budget of {}s \
                     ran out: {why}",
                    r.cell,
                    r.per_sec,
                    th * 100.0,
                    budget.as_secs()
                ));
            }
            _ => {}
        }
    }
    out
}

/// Crossovers the pilot must hold before it can fix the count (each two runs): Stein's count
/// uses the t of the pilot's degrees of freedom (t(3) = 3.18 for 4 crossovers; fewer make
/// it larger still).
pub const PILOT_CROSSOVERS: usize = 4;

/// The runs of the pilot: [`PILOT_CROSSOVERS`] crossovers.
pub const PILOT_RUNS: usize = 2 * PILOT_CROSSOVERS;

/// What the pilot says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Too few batches yet: one more repetition of pilot.
    MorePilot,
    /// The repetitions the cell needs in all.
    Total(u32),
}

/// The records of a cell under its current key, of one arm.
fn of_arm<'a>(records: &'a [Record], cell: &Cell, arm: &str) -> Vec<&'a Record> {
    let (id, key) = (cell.id(), cell.key());
    records
        .iter()
        .filter(|r| r.bench_tag == id && r.cell_key == key && r.arm.as_deref() == Some(arm))
        .collect()
}

/// Decide, from the repetitions recorded so far (the pilot), how many the cell needs for
/// its throughput ratio's interval to be within ±`precision` (a fraction), commits and, in
/// a mixed cell, reads alike.
pub fn decide(cell: &Cell, records: &[Record], precision: f64) -> Decision {
    let (pa, pb) = pairs_of(&of_arm(records, cell, ARM_A), &of_arm(records, cell, ARM_B));
    let Some(inside) = inside_batches(&pa, &pb, false) else {
        return Decision::MorePilot;
    };
    if inside.blocks.len() < PILOT_CROSSOVERS {
        return Decision::MorePilot;
    }
    // Stein's count is of crossovers: twice as many runs.
    let mut need = pa.len();
    for reads in [false, true] {
        if let Some(inside) = inside_batches(&pa, &pb, reads)
            && let Some(k) = stein_batches(&inside.blocks, precision)
        {
            need = need.max(2 * k);
        }
    }
    Decision::Total(need as u32)
}

/// Whether a run's rule (`bench ab`'s [`Until`] and budget; `None` for `bench run`) has
/// nothing to add to a cell whose repetitions are recorded. `bench run` and `--no-extend`:
/// always; `--precision`: once Stein's count is fixed; until decided: once its records
/// decide at this threshold or its time reached this budget (so a cell asked again at
/// another threshold, or with more time, goes on from its runs).
pub fn rule_stopped(
    rule: Option<(Until, Duration)>,
    state: &State,
    records: &[Record],
    cell: &Cell,
) -> bool {
    let fixed = (state.cells.get(&cell.id()))
        .filter(|c| c.key == cell.key())
        .and_then(|c| c.precision)
        .is_some();
    match rule {
        None | Some((Until::Repetitions, _)) => true,
        Some((Until::Precision(_), _)) => fixed,
        Some((Until::Decided(t), budget)) => {
            decided(cell, records, t) || spent(records, &cell.id(), &cell.key()) >= budget
        }
    }
}

/// How a run of a cell is named among its repetitions (`fixed`: the count it runs so far,
/// `plan`: the plan's): `repetition 2/3`; beyond the count, what decides how many
/// (`repetition 4 of a pilot of at least 5`, `repetition 4, until decided`); `None` for a
/// cell of one repetition.
pub fn repetition_label(
    repetition: u32,
    fixed: u32,
    plan: u32,
    until: Option<Until>,
) -> Option<String> {
    if repetition <= fixed {
        return (fixed > 1).then(|| format!("repetition {repetition}/{fixed}"));
    }
    Some(match until {
        Some(Until::Precision(_)) => format!(
            "repetition {repetition} of a pilot of at least {}",
            plan.max(PILOT_RUNS as u32)
        ),
        _ => format!("repetition {repetition}, until decided"),
    })
}

/// The wall time a cell's runs have taken, copies and verification included: a pair's
/// two records share one run's time; whole runs of each arm add up.
pub fn spent(records: &[Record], id: &str, key: &str) -> Duration {
    let secs: f64 = records
        .iter()
        .filter(|r| r.bench_tag == id && r.cell_key == key)
        // A pair inside one run: its time once, on arm A's record.
        .filter(|r| r.paired.is_none() || r.arm.as_deref() == Some(ARM_A))
        .map(wall_secs)
        .sum();
    Duration::from_secs_f64(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell() -> Cell {
        crate::plan::sample(60)
    }

    fn records(reps: u32) -> Vec<Record> {
        at_ratio(reps, 1.05)
    }

    /// Lockstep runs of the cell, B's latency `ratio` times A's.
    fn at_ratio(reps: u32, ratio: f64) -> Vec<Record> {
        let c = cell();
        let mut v = crate::compare::tests::lockstep(reps, 60, ratio);
        for r in &mut v {
            r.cell_key = c.key();
            r.bench_tag = c.id();
            r.started_at = "2026-01-01T00:00:00.000Z".into();
            r.finished_at = "2026-01-01T00:00:02.500Z".into();
        }
        v
    }

    #[test]
    fn the_pilot_needs_four_crossovers_then_stein_fixes_the_count() {
        assert_eq!(decide(&cell(), &records(7), 0.02), Decision::MorePilot);
        // 8 runs, 4 crossovers: the count is fixed; these runs differ by about 1 %, so ±5 %
        // needs no more than the pilot, ±0.01 % far more (and in whole crossovers).
        assert_eq!(decide(&cell(), &records(8), 0.05), Decision::Total(8));
        match decide(&cell(), &records(8), 0.0001) {
            Decision::Total(n) => assert!(n > 8 && n % 2 == 0, "{n}"),
            d => panic!("{d:?}"),
        }
        // 4 runs of 2.5 s, both arms together.
        let c = cell();
        assert_eq!(
            spent(&records(4), &c.id(), &c.key()),
            Duration::from_millis(10_000)
        );
        // A run's whole time where the records have it (copies and verification
        // included), once per pair.
        let mut whole = records(4);
        whole
            .iter_mut()
            .for_each(|r| r.attached.wall_ms = Some(4000.0));
        assert_eq!(
            spent(&whole, &c.id(), &c.key()),
            Duration::from_millis(16_000)
        );
        // Whole runs of each arm (no pairs inside) add up.
        whole.iter_mut().for_each(|r| r.paired = None);
        assert_eq!(
            spent(&whole, &c.id(), &c.key()),
            Duration::from_millis(32_000)
        );
    }

    /// A run beyond the count fixed so far is never "4/3": it says what decides.
    #[test]
    fn runs_beyond_the_plan_s_repetitions_say_what_decides_their_count() {
        let label = |r, fixed, until| repetition_label(r, fixed, 3, until);
        assert_eq!(label(2, 3, None).as_deref(), Some("repetition 2/3"));
        assert_eq!(label(1, 1, None), None);
        assert_eq!(
            label(4, 3, Some(Until::Precision(0.02))).as_deref(),
            Some("repetition 4 of a pilot of at least 8")
        );
        assert_eq!(
            label(4, 3, Some(Until::Decided(0.05))).as_deref(),
            Some("repetition 4, until decided")
        );
        // Once Stein's rule fixed 9: counted against it.
        assert_eq!(
            label(6, 9, Some(Until::Precision(0.02))).as_deref(),
            Some("repetition 6/9")
        );
    }

    /// Whether a cell goes on: by the rule of this run, from its records and checkpoint.
    #[test]
    fn a_cell_goes_on_until_its_rule_is_met() {
        let c = cell();
        let state = State::new("p");
        let undecided = at_ratio(2, 1.08);
        let secs = Duration::from_secs;
        assert!(rule_stopped(None, &state, &undecided, &c), "bench run");
        let no_extend = Some((Until::Repetitions, secs(120)));
        assert!(rule_stopped(no_extend, &state, &undecided, &c));
        let decide = |budget| Some((Until::Decided(0.05), secs(budget)));
        assert!(!rule_stopped(decide(120), &state, &undecided, &c));
        assert!(
            rule_stopped(decide(1), &state, &undecided, &c),
            "budget spent"
        );
        assert!(
            rule_stopped(decide(120), &state, &at_ratio(20, 1.08), &c),
            "decided"
        );
        let stein = Some((Until::Precision(0.02), secs(120)));
        assert!(
            !rule_stopped(stein, &state, &undecided, &c),
            "no count fixed yet"
        );
    }

    /// The error spent over the looks adds up to at most 5 % however many there are; each
    /// look's interval is the 95 % one widened about its centre, more at later looks.
    #[test]
    fn the_rule_spends_its_error_over_the_looks() {
        let total: f64 = (1..100_000).map(look_alpha).sum();
        assert!(total <= ALPHA && total > 0.0499, "{total}");
        assert_eq!(look_of(3), 1);
        assert_eq!(look_of(7), 5);
        let t = RatioTest {
            ratio: 0.95,
            ci: (0.95 / 1.02, 0.95 * 1.02),
        };
        let at = |runs| sequential(&t, runs);
        assert_eq!(at(3).ratio, 0.95);
        // Look 1 at 3 runs: t(0.0304, 2) / t(0.05, 2), about 1.30.
        let widening = |s: RatioTest| (s.ci.1 / s.ratio).ln() / 1.02f64.ln();
        let want = t_critical(look_alpha(1), 2.0) / t_critical(ALPHA, 2.0);
        assert!((want - 1.30).abs() < 0.01, "{want}");
        assert!((widening(at(3)) - want).abs() < 1e-9, "{}", widening(at(3)));
        assert!(look_alpha(8) < look_alpha(2), "later looks spend less");
        assert!(
            widening(at(10)) > 1.5 && widening(at(20)) > 1.5,
            "later looks are wider"
        );
        // Symmetric on the log scale, as the 95 % interval was.
        let s = at(10);
        assert!(((s.ci.1 / s.ratio).ln() - (s.ratio / s.ci.0).ln()).abs() < 1e-12);
        // An interval that decides at 95 % may not at its look.
        let edge = RatioTest {
            ratio: 0.93,
            ci: (0.91, 0.949),
        };
        assert!(decides(&edge, 0.05));
        assert!(!decides(&sequential(&edge, 10), 0.05));
    }

    #[test]
    fn an_interval_decides_beyond_or_within_the_threshold_not_across_it() {
        let t = |lo: f64, hi: f64| RatioTest {
            ratio: (lo * hi).sqrt(),
            ci: (lo, hi),
        };
        for (lo, hi, decided) in [
            (0.90, 0.94, true),  // wholly beyond -5 %
            (1.06, 1.10, true),  // wholly beyond +5 %
            (0.97, 1.02, true),  // wholly within ±5 %
            (0.93, 0.97, false), // across -5 %
            (1.03, 1.07, false), // across +5 %
            (0.90, 1.10, false), // across both
        ] {
            assert_eq!(decides(&t(lo, hi), 0.05), decided, "{lo}..{hi}");
        }
    }

    /// A cell decides once its interval lies beyond or within ±threshold: an 8 % slowdown
    /// or identical builds at ±5 %; not with fewer runs than a test needs. The note says why
    /// one did not.
    #[test]
    fn a_cell_decides_at_the_threshold_and_says_when_it_did_not() {
        let c = cell();
        assert!(decided(&c, &at_ratio(20, 1.08), 0.05), "8 % slower");
        assert!(decided(&c, &at_ratio(20, 1.0), 0.05), "identical");
        // Four runs of the same: t(3) leaves the interval across -5 % yet.
        assert!(!decided(&c, &at_ratio(4, 1.08), 0.05));
        assert!(
            !decided(&c, &at_ratio(2, 1.08), 0.05),
            "two runs: no interval"
        );
        // Records of another key do not count.
        let mut other = at_ratio(20, 1.08);
        other.iter_mut().for_each(|r| r.cell_key = "old".into());
        assert!(!decided(&c, &other, 0.05));
        let cmp = crate::compare::paired(&at_ratio(2, 1.08), 5.0);
        let notes = notes(
            &cmp,
            &State::new("p"),
            Until::Decided(0.05),
            Duration::from_secs(120),
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains(
                "undecided at ±5.0 % after 2 runs, when its budget of 120s ran out: a test \
                 needs 3 crossovers, 6 runs"
            ),
            "{notes:?}"
        );
        // Decided: nothing to say.
        let cmp = crate::compare::paired(&at_ratio(20, 1.08), 5.0);
        assert!(notes_of(&cmp).is_empty());
    }

    fn notes_of(c: &Comparison) -> Vec<String> {
        notes(
            c,
            &State::new("p"),
            Until::Decided(0.05),
            Duration::from_secs(1),
        )
    }

    /// `--precision`: a cell that reached Stein's count but is wider than asked was noisier
    /// than its pilot; one cut short ran out of budget. The note tells them apart.
    #[test]
    fn a_wide_interval_is_blamed_on_what_made_it() {
        let recs = at_ratio(6, 1.05);
        let cmp = crate::compare::paired(&recs, 5.0);
        let mut state = State::new("p");
        let id = cell().id();
        state.decide(
            &id,
            &cell().key(),
            crate::sweep::state::Decided {
                pilot: 6,
                repetitions: 6,
                threshold_pct: None,
            },
        );
        let tight = Until::Precision(0.000_001);
        let reached = notes(&cmp, &state, tight, Duration::from_secs(60));
        assert!(
            reached[0].contains("noisier than the pilot's"),
            "{reached:?}"
        );
        state.decide(
            &id,
            &cell().key(),
            crate::sweep::state::Decided {
                pilot: 6,
                repetitions: 40,
                threshold_pct: None,
            },
        );
        let cut = notes(&cmp, &state, tight, Duration::from_secs(60));
        assert!(
            cut[0].contains("budget of 60s ran out after 6 runs"),
            "{cut:?}"
        );
    }
}
