//! `bench ab`: the plan's cells run by two builds' workers, paired inside each run of a
//! cell (lockstep operations, time slices, or a duet) or as whole runs A B, B A, …; by
//! default each cell runs until its interval decides at the threshold; then per cell the
//! ratio B/A of throughput, p50 and p99 with its confidence interval and a verdict.

use super::{Arm, RunOptions, Sweep, Until, run};
use crate::compare::{self, VerdictArgs};
use crate::error::{BenchError, exit};
use crate::export::jsonl;

/// Run the sweep with both arms (checked before, see [`Arm::checked`]), and print the
/// paired table. The exit code is the run's when cells failed or it was interrupted; else
/// 5 for a significant regression of B with `--fail-on-regression`; else 0.
pub async fn ab(
    sweep: &Sweep,
    opts: &RunOptions,
    arms: &[Arm; 2],
    verdict: &VerdictArgs,
) -> Result<u8, BenchError> {
    let pairs = opts.pairs.expect("bench ab pairs its arms");
    // Pairs need two catalogs alike (one copy per arm); an external server has one.
    if let Some(uri) = &sweep.plan.rest.external {
        return Err(BenchError::Usage(format!(
            "bench ab compares two builds on copies of one golden, and this plan measures the \
             server at {uri} on its own catalog (rest.external): run the server of each build \
             in turn with `bench run`, then `bench compare` the two results directories"
        )));
    }
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
    eprintln!(
        "{} A/B of `{}`: A = {} ({}, digest {}), B = {} ({}, digest {}), {}",
        crate::clock::now_utc(),
        sweep.plan.name,
        arms[0].exe.display(),
        arms[0].versions,
        arms[0].short_digest(),
        arms[1].exe.display(),
        arms[1].versions,
        arms[1].short_digest(),
        how(sweep, &pairs)
    );
    let report = run(sweep, opts, arms).await?;
    // A verification that could not check everything (`--fail-on-finding`'s 7) still gets
    // its verdict; the 7 stands unless the verdict's own code is worse.
    let ran = report.exit_code();
    if ran != exit::OK && ran != exit::UNDECIDED {
        return Ok(ran);
    }
    let mut c = compare::paired(&current_records(sweep)?, verdict.threshold);
    // Run until decided, a cell's interval is the rule's (its error spent over the looks),
    // and so is its verdict.
    let sequential = matches!(pairs.until, Until::Decided(_));
    if sequential {
        super::precision::sequential_verdicts(&mut c);
    }
    let name = |arm: &Arm| {
        format!(
            "{} ({}, digest {})",
            arm.exe.display(),
            arm.versions,
            arm.short_digest()
        )
    };
    let (a, b) = (name(&arms[0]), name(&arms[1]));
    let mut answer = compare::comparison_as(&c, &a, &b, verdict.format);
    let state = sweep.state()?;
    let mut notes = super::precision::notes(&c, &state, pairs.until, pairs.budget);
    if sequential && !c.rows.is_empty() {
        notes.push(
            "intervals are the stopping rule's: a cell looked at after each run has its error \
             spent over the looks (the k-th at 1 − 0.05·6/(π²k²)), so its verdict errs at most \
             5 % however many runs it took (docs/ab.md)"
                .to_string(),
        );
    }
    if arms[0].digest == arms[1].digest {
        notes.push(format!(
            "A and B are the same file (digest {}): every difference between them is the \
             machine's, so a verdict of improved or regressed here is a false alarm",
            arms[0].short_digest()
        ));
    }
    for note in notes {
        // A pull request comment is the comparison alone.
        match verdict.format {
            compare::Format::Text => answer.line(note),
            compare::Format::Github | compare::Format::Json => answer.note(note),
        }
    }
    answer.code = match c.exit_code(verdict) {
        exit::OK => ran,
        code => code,
    };
    Ok(crate::out::answer(answer))
}

/// The records of this plan's cells under their keys now: never those of another build or
/// an earlier plan in the same directory.
fn current_records(sweep: &Sweep) -> Result<Vec<crate::export::Record>, BenchError> {
    let records = jsonl::read_all(&sweep.results_path()).map_err(BenchError::output)?;
    let current: std::collections::BTreeSet<(String, String)> =
        sweep.cells().iter().map(|c| (c.id(), c.key())).collect();
    Ok(records
        .into_iter()
        .filter(|r| current.contains(&(r.bench_tag.clone(), r.cell_key.clone())))
        .collect())
}

/// How the arms are paired and how long each cell goes on, for the first line.
fn how(sweep: &Sweep, pairs: &super::AbOptions) -> String {
    let reps = sweep.plan.run.repetitions;
    let budget = pairs.budget.as_secs();
    match (pairs.pairing, pairs.until) {
        (super::Pairing::Runs, Until::Repetitions) => format!(
            "{} of whole runs per cell",
            crate::plan::count(reps.into(), "pair", "pairs")
        ),
        (super::Pairing::Runs, Until::Decided(t)) => format!(
            "pairs of whole runs, {reps} a cell and more until its interval decides at \
             ±{:.1} % or {budget}s",
            t * 100.0
        ),
        (p, Until::Repetitions) => format!(
            "pairs inside each of a cell's {} ({})",
            crate::plan::count(reps.into(), "run", "runs"),
            p.as_str()
        ),
        (p, Until::Precision(prec)) => format!(
            "pairs inside each run ({}), runs added until ±{:.1} % or {budget}s a cell",
            p.as_str(),
            prec * 100.0,
        ),
        (p, Until::Decided(t)) => format!(
            "pairs inside each run ({}), {reps} runs a cell and more until its interval \
             decides at ±{:.1} % or {budget}s",
            p.as_str(),
            t * 100.0,
        ),
    }
}
