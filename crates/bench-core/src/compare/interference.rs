//! What the CPU scheduler did to two arms' workers during a cell (the records'
//! `worker_cpu`): whether something else on the machine took the CPU from them in some runs
//! (a neighbour that came and went), and whether both arms met it alike. Said beside an A/B
//! comparison, so that a verdict reached beside a neighbour says so.

use crate::export::Record;
use crate::sched::CpuUse;

/// How much more of their time a run's workers must have waited for a CPU than in the
/// cell's calmest run to count as disturbed: 10 points (a 2-core VM's workers wait 26-31 %
/// of the time they want a CPU when it is idle, as they wake, and up to 53 % beside one busy
/// thread: `scripts/figures/ab-interference.sh cause`).
pub const DISTURBED: f64 = 0.10;

/// A cell's CPU interference, where there was some.
#[derive(Debug, Clone, PartialEq)]
pub struct Interference {
    pub cell: String,
    /// Runs (repetitions) of the cell, and those in which either arm's workers waited at
    /// least [`DISTURBED`] more of their time than in the calmest.
    pub runs: usize,
    pub disturbed: usize,
    /// The least and the most share of their time any arm's workers waited, run by run.
    pub calmest: f64,
    pub worst: f64,
    /// Each arm's share over all its runs.
    pub a: f64,
    pub b: f64,
}

/// Each arm's runs' use of the CPU, where every record has it.
fn uses<'a>(side: &[&'a Record]) -> Option<Vec<&'a CpuUse>> {
    side.iter().map(|r| r.worker_cpu.as_ref()).collect()
}

/// The share of their time a side's workers waited over all its runs.
fn pooled(side: &[&CpuUse]) -> f64 {
    let mut all = CpuUse::default();
    for u in side {
        all += u;
    }
    all.wait_share()
}

impl Interference {
    /// The interference the arms' records (`pa[i]` and `pb[i]` of one repetition) show, if
    /// any run was disturbed; `None` where a record does not tell its CPU.
    pub fn of(cell: &str, pa: &[&Record], pb: &[&Record]) -> Option<Interference> {
        let (ua, ub) = (uses(pa)?, uses(pb)?);
        let shares: Vec<(f64, f64)> = (ua.iter().zip(&ub))
            .map(|(x, y)| (x.wait_share(), y.wait_share()))
            .collect();
        let all = shares.iter().flat_map(|&(x, y)| [x, y]);
        let calmest = all.clone().fold(f64::INFINITY, f64::min);
        let worst = all.fold(0.0, f64::max);
        let disturbed = (shares.iter())
            .filter(|&&(x, y)| x.max(y) >= calmest + DISTURBED)
            .count();
        (disturbed > 0).then(|| Interference {
            cell: cell.to_string(),
            runs: shares.len(),
            disturbed,
            calmest,
            worst,
            a: pooled(&ua),
            b: pooled(&ub),
        })
    }

    /// One line for the notes under an A/B table.
    pub fn note(&self) -> String {
        let pct = |x: f64| x * 100.0;
        let alike = if (self.b - self.a).abs() < 0.03 {
            "both arms met it alike".to_string()
        } else {
            format!(
                "arm {} waited {:.1} points more: it met more of it, or uses the CPU \
                 differently",
                if self.b > self.a { "B" } else { "A" },
                pct((self.b - self.a).abs())
            )
        };
        format!(
            "{}: CPU interference in {} of {} runs: their workers waited for a CPU up to {:.0} % \
             of the time they wanted one, against {:.0} % in the calmest run (arm A {:.1} %, \
             arm B {:.1} % in all: {alike}); each arm goes first in every other run and a \
             crossover of two runs is one observation of the interval, so what the \
             interference gave one arm cancels or widens it",
            self.cell,
            self.disturbed,
            self.runs,
            pct(self.worst),
            pct(self.calmest),
            pct(self.a),
            pct(self.b)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::reps;

    fn with_cpu(records: &mut [Record], waits: &[f64]) {
        for (r, &w) in records.iter_mut().zip(waits) {
            r.worker_cpu = Some(CpuUse {
                busy_ms: 100.0 - w,
                wait_ms: w,
                by_cpu_ms: vec![100.0 - w],
            });
        }
    }

    #[test]
    fn runs_that_waited_far_longer_than_the_calmest_are_named_with_each_arm_s_share() {
        let mut a = reps(&[100.0; 4], Some("A"));
        let mut b = reps(&[100.0; 4], Some("B"));
        with_cpu(&mut a, &[28.0, 50.0, 29.0, 27.0]);
        with_cpu(&mut b, &[27.0, 48.0, 45.0, 28.0]);
        let (pa, pb): (Vec<&Record>, Vec<&Record>) = (a.iter().collect(), b.iter().collect());
        let i = Interference::of("cont", &pa, &pb).expect("two runs disturbed");
        assert_eq!((i.runs, i.disturbed), (4, 2));
        assert!((i.calmest - 0.27).abs() < 1e-9 && (i.worst - 0.50).abs() < 1e-9);
        let note = i.note();
        assert!(
            note.starts_with("cont: CPU interference in 2 of 4 runs: their workers waited for a CPU up to 50 % of the time they wanted one, against 27 % in the calmest run (arm A 33.5 %, arm B 37.0 % in all: arm B waited 3.5 points more"),
            "{note}"
        );
        // A calm machine: nothing to say; a record without its CPU: nothing known.
        with_cpu(&mut b, &[27.0, 30.0, 29.0, 28.0]);
        with_cpu(&mut a, &[28.0, 31.0, 29.0, 27.0]);
        let (pa, pb): (Vec<&Record>, Vec<&Record>) = (a.iter().collect(), b.iter().collect());
        assert_eq!(Interference::of("cont", &pa, &pb), None);
        a[0].worker_cpu = None;
        let pa: Vec<&Record> = a.iter().collect();
        assert_eq!(Interference::of("cont", &pa, &pb), None);
    }
}
