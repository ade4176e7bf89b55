//! What else ran on the machine during a cell's runs (the records' `others_cpu_cores`: the
//! CPUs other processes kept busy while the workers ran) and what the CPU scheduler did to
//! each arm's workers (`worker_cpu`): whether a neighbour took CPUs in some runs, and whether
//! both arms met it alike. Said beside an A/B comparison, so that a verdict reached beside a
//! neighbour says so.

use crate::export::Record;
use crate::sched::CpuUse;

/// Other processes keeping at least this much of a core busy on average during a run make
/// it disturbed: on an idle machine they keep a few hundredths of one.
pub const DISTURBED_CORES: f64 = 0.2;

/// A cell's CPU interference, where there was some.
#[derive(Debug, Clone, PartialEq)]
pub struct Interference {
    pub cell: String,
    /// Runs (repetitions) of the cell, and those during which other processes kept at least
    /// [`DISTURBED_CORES`] busy.
    pub runs: usize,
    pub disturbed: usize,
    /// The cores other processes kept busy, on average over the runs, and in the worst.
    pub mean_cores: f64,
    pub worst_cores: f64,
    /// Each arm's workers' share of the time they wanted a CPU that they waited for one,
    /// over all its runs, where every record tells it.
    pub waits: Option<(f64, f64)>,
}

/// The share of their time a side's workers waited over all its runs, where every record
/// tells it.
fn pooled(side: &[&Record]) -> Option<f64> {
    let mut all = CpuUse::default();
    for r in side {
        all += r.worker_cpu.as_ref()?;
    }
    Some(all.wait_share())
}

impl Interference {
    /// The interference the arms' records (`pa[i]` and `pb[i]` of one repetition) show, if
    /// any run was disturbed; `None` where a run does not tell what else ran.
    pub fn of(cell: &str, pa: &[&Record], pb: &[&Record]) -> Option<Interference> {
        let cores: Vec<f64> = (pa.iter().zip(pb))
            .map(|(a, b)| a.attached.others_cpu_cores.or(b.attached.others_cpu_cores))
            .collect::<Option<_>>()?;
        let disturbed = cores.iter().filter(|&&c| c >= DISTURBED_CORES).count();
        (disturbed > 0).then(|| Interference {
            cell: cell.to_string(),
            runs: cores.len(),
            disturbed,
            mean_cores: cores.iter().sum::<f64>() / cores.len() as f64,
            worst_cores: cores.iter().copied().fold(0.0, f64::max),
            waits: pooled(pa).zip(pooled(pb)),
        })
    }

    /// One line for the notes under an A/B table.
    pub fn note(&self) -> String {
        let pct = |x: f64| x * 100.0;
        let waits = match self.waits {
            Some((a, b)) => {
                let alike = if (b - a).abs() < 0.03 {
                    "both met it alike".to_string()
                } else {
                    format!(
                        "arm {} waited {:.1} points more: it met more of it, or uses the CPU \
                         differently",
                        if b > a { "B" } else { "A" },
                        pct((b - a).abs())
                    )
                };
                format!(
                    "; arm A's workers waited for a CPU {:.1} % of the time they wanted one, arm \
                     B's {:.1} % ({alike})",
                    pct(a),
                    pct(b)
                )
            }
            None => String::new(),
        };
        format!(
            "{}: a CPU neighbour in {} of {} runs: other processes kept {:.2} cores busy on \
             average while they ran, {:.2} in the worst{waits}. Each arm goes first in every \
             other run and a crossover of two runs is one observation of the interval, so what \
             the neighbour gave one arm cancels or widens it",
            self.cell, self.disturbed, self.runs, self.mean_cores, self.worst_cores
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::reps;

    fn with(records: &mut [Record], others: &[f64], waits: &[f64]) {
        for ((r, &c), &w) in records.iter_mut().zip(others).zip(waits) {
            r.attached.others_cpu_cores = Some(c);
            r.worker_cpu = Some(CpuUse {
                busy_ms: 100.0 - w,
                wait_ms: w,
                by_cpu_ms: vec![100.0 - w],
            });
        }
    }

    #[test]
    fn runs_beside_a_busy_neighbour_are_named_with_each_arm_s_wait() {
        let mut a = reps(&[100.0; 4], Some("A"));
        let mut b = reps(&[100.0; 4], Some("B"));
        let others = [0.02, 0.95, 0.5, 0.01];
        with(&mut a, &others, &[28.0, 50.0, 29.0, 27.0]);
        with(&mut b, &others, &[27.0, 48.0, 45.0, 28.0]);
        let (pa, pb): (Vec<&Record>, Vec<&Record>) = (a.iter().collect(), b.iter().collect());
        let i = Interference::of("cont", &pa, &pb).expect("two runs disturbed");
        assert_eq!((i.runs, i.disturbed), (4, 2));
        assert!((i.mean_cores - 0.37).abs() < 1e-9 && (i.worst_cores - 0.95).abs() < 1e-9);
        let note = i.note();
        assert!(
            note.starts_with(
                "cont: a CPU neighbour in 2 of 4 runs: other processes kept 0.37 cores busy on \
                 average while they ran, 0.95 in the worst; arm A's workers waited for a CPU \
                 33.5 % of the time they wanted one, arm B's 37.0 % (arm B waited 3.5 points \
                 more"
            ),
            "{note}"
        );
        // A quiet machine: nothing to say; a run that does not tell what else ran: nothing
        // known.
        with(&mut a, &[0.02, 0.05, 0.01, 0.03], &[28.0, 31.0, 29.0, 27.0]);
        with(&mut b, &[0.02, 0.05, 0.01, 0.03], &[27.0, 30.0, 29.0, 28.0]);
        let (pa, pb): (Vec<&Record>, Vec<&Record>) = (a.iter().collect(), b.iter().collect());
        assert_eq!(Interference::of("cont", &pa, &pb), None);
        (
            a[0].attached.others_cpu_cores,
            b[0].attached.others_cpu_cores,
        ) = (None, None);
        let pa: Vec<&Record> = a.iter().collect();
        let pb: Vec<&Record> = b.iter().collect();
        assert_eq!(Interference::of("cont", &pa, &pb), None);
    }
}
