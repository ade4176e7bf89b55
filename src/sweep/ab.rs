//! `bench ab`: the plan's cells run by two builds' workers alternately, A B B A …, each run
//! on a fresh copy of the same golden; then per cell the ratio B/A of throughput, p50 and
//! p99 over the pairs, with its confidence interval and a verdict.

use std::path::PathBuf;

use super::{ARM_A, ARM_B, Arm, RunOptions, Sweep, run};
use crate::compare::{self, VerdictArgs};
use crate::error::{BenchError, exit};
use crate::export::jsonl;

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
    eprintln!(
        "{} A/B of `{}`: A = {} ({}), B = {} ({}), {} pairs per cell",
        crate::clock::now_utc(),
        sweep.plan.name,
        arms[0].exe.display(),
        arms[0].versions,
        arms[1].exe.display(),
        arms[1].versions,
        sweep.plan.run.repetitions
    );
    let report = run(sweep, opts, &arms).await?;
    if report.exit_code() != exit::OK {
        return Ok(report.exit_code());
    }
    let records = jsonl::read_all(&sweep.results_path()).map_err(BenchError::output)?;
    let c = compare::paired(&records, verdict.threshold);
    let name = |arm: &Arm| format!("{} ({})", arm.exe.display(), arm.versions);
    compare::print_comparison(&c, &name(&arms[0]), &name(&arms[1]), None)?;
    Ok(c.exit_code(verdict))
}
