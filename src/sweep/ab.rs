//! `bench ab`: the plan's cells run by two builds' workers, paired inside each run of a
//! cell (lockstep operations, time slices, or a duet) or as whole runs A B, B A, …; then
//! per cell the ratio B/A of throughput, p50 and p99 with its confidence interval and a
//! verdict.

use std::path::PathBuf;

use super::{ARM_A, ARM_B, Arm, RunOptions, Sweep, run};
use crate::compare::{self, VerdictArgs};
use crate::error::{BenchError, exit};
use crate::export::jsonl;
use crate::stats::paired::half_width;

/// Check both builds' workers, run the sweep with both arms, and print the paired table.
/// The exit code is the run's when cells failed or it was interrupted; else 5 for a
/// significant regression of B with `--fail-on-regression`; else 0.
pub async fn ab(
    sweep: &Sweep,
    opts: &RunOptions,
    baseline: PathBuf,
    candidate: PathBuf,
    verdict: &VerdictArgs,
) -> Result<u8, BenchError> {
    // Both builds answer before anything is written.
    let arms = [
        Arm::checked(Some(ARM_A), baseline).await?,
        Arm::checked(Some(ARM_B), candidate).await?,
    ];
    let pairs = opts.pairs.expect("bench ab pairs its arms");
    // Time slices share a cell's duration between the arms; a cell bounded by commits
    // alone has none to share.
    if pairs.pairing == super::Pairing::Alternate
        && sweep
            .cells()
            .iter()
            .any(|c| c.mode.bound().is_some() && c.mode.duration_secs() == 0)
    {
        return Err(BenchError::Usage(
            "concurrent cells bounded by `operations` alone have no duration to slice \
             between the arms: give `concurrent.duration_secs` too, or use --pairing duet \
             or --pairing runs"
                .into(),
        ));
    }
    let how = match (pairs.pairing, pairs.precision) {
        (super::Pairing::Runs, _) => format!(
            "{} of whole runs per cell",
            crate::plan::count(sweep.plan.run.repetitions.into(), "pair", "pairs")
        ),
        (p, None) => format!(
            "pairs inside each of a cell's {} ({})",
            crate::plan::count(sweep.plan.run.repetitions.into(), "run", "runs"),
            p.as_str()
        ),
        (p, Some(prec)) => format!(
            "pairs inside each run ({}), runs added until ±{:.1} % or {}s a cell",
            p.as_str(),
            prec * 100.0,
            pairs.budget.as_secs()
        ),
    };
    eprintln!(
        "{} A/B of `{}`: A = {} ({}), B = {} ({}), {how}",
        crate::clock::now_utc(),
        sweep.plan.name,
        arms[0].exe.display(),
        arms[0].versions,
        arms[1].exe.display(),
        arms[1].versions,
    );
    let report = run(sweep, opts, &arms).await?;
    if report.exit_code() != exit::OK {
        return Ok(report.exit_code());
    }
    let records = jsonl::read_all(&sweep.results_path()).map_err(BenchError::output)?;
    let c = compare::paired(&records, verdict.threshold);
    let name = |arm: &Arm| format!("{} ({})", arm.exe.display(), arm.versions);
    compare::print_comparison(&c, &name(&arms[0]), &name(&arms[1]), None)?;
    if let Some(p) = pairs.precision {
        for r in c.rows.iter().chain(&c.read_rows) {
            let Some(t) = &r.tests[0] else { continue };
            let h = half_width(t);
            if h > p * 1.0001 {
                println!(
                    "{} ({}): ±{:.1} %, not ±{:.1} %: its budget of {}s ran out first \
                     (raise --budget-secs, or accept the wider interval)",
                    r.cell,
                    r.per_sec,
                    h * 100.0,
                    p * 100.0,
                    pairs.budget.as_secs()
                );
            }
        }
    }
    Ok(c.exit_code(verdict))
}
