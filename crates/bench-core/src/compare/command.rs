//! `bench compare`'s command: what it is asked, which comparison that is (two sets, an A/B
//! set arm against arm, the variants of one directory), and the answer it prints.

use std::path::PathBuf;

use super::*;

/// What `bench compare` is asked (the command line's, as plain values).
#[derive(Debug, Clone)]
pub struct CompareArgs {
    /// The baseline: a results directory or a results JSONL file; alone, a results
    /// directory of `bench ab`.
    pub a: PathBuf,
    /// The candidate, if any.
    pub b: Option<PathBuf>,
    pub verdict: VerdictArgs,
    /// The spread between separate runs, in percent, added to each interval.
    pub between_runs: f64,
    /// Also write the comparison as Markdown here.
    pub markdown: Option<PathBuf>,
    /// Within one results directory: the baseline variant.
    pub against: Option<variants::Selector>,
    /// With `against`: only this variant.
    pub variant: Option<variants::Selector>,
}

/// What makes a verdict, shared by `bench compare` and `bench ab`: the noise threshold in
/// percent, and whether a significant regression exits 5.
#[derive(Debug, Clone)]
pub struct VerdictArgs {
    pub threshold: f64,
    pub fail_on_regression: bool,
    /// Exit 7 where no regression was found but some cell's time was not judged.
    pub fail_on_undecided: bool,
    /// Which verdicts `fail_on_regression` exits on.
    pub gate: Gate,
    /// How the comparison is said on stdout.
    pub format: Format,
}

/// Which verdicts decide the exit code with `--fail-on-regression`: the exact counts (requests,
/// round trips, bytes per operation), the times (throughput, p50, p99), or either.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Gate {
    Counts,
    Time,
    #[default]
    Both,
}

/// How `bench compare` and `bench ab` print their comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// The tables as text, and the verdicts.
    #[default]
    Text,
    /// GitHub-flavoured Markdown for a pull request comment ([`github`]): nothing else on
    /// stdout.
    Github,
    /// One JSON document ([`json::json`]): nothing else on stdout.
    Json,
}

/// Default noise threshold, in percent.
pub const DEFAULT_THRESHOLD_PCT: f64 = 10.0;

/// Default spread between separate runs of the same build, in percent: measured on a
/// 2-core VM with local disk (docs/results.md, "How noisy is a machine").
pub const DEFAULT_BETWEEN_RUNS_PCT: f64 = 100.0;

/// A percentage as the command line gives it (`10`, `2.5`, `5%`), 0 or more.
pub fn parse_threshold(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(format!("`{s}` is not a percentage (e.g. 10 or 2.5)")),
    }
}

/// `bench compare`: the comparison (and its warnings), the Markdown written if asked;
/// exit 5 on a significant regression with `--fail-on-regression`.
pub fn run(args: &CompareArgs) -> Result<Answer, BenchError> {
    let (fa, ra) = crate::sweep::resume::load(&args.a).map_err(BenchError::output)?;
    let na = fa.display().to_string();
    if let Some(against) = &args.against {
        if let Some(b) = &args.b {
            return Err(BenchError::Usage(format!(
                "--against compares the variants inside one results directory; give one \
                 (bench compare {na} --against {against}), not also {}",
                b.display()
            )));
        }
        return run_variants(args, &ra, &na, against);
    }
    let (c, na, nb) = match &args.b {
        Some(b) => {
            let (fb, rb) = crate::sweep::resume::load(b).map_err(BenchError::output)?;
            let nb = fb.display().to_string();
            if mixes_ab(&ra, &rb) {
                let (ab, plain) = if is_ab(&ra) { (&na, &nb) } else { (&nb, &na) };
                return Err(BenchError::Usage(format!(
                    "{ab} holds the two arms of a `bench ab` and {plain} does not, so their \
                     cells do not match; compare the A/B results alone (bench compare {ab}), \
                     or with another A/B results set (arm by arm)"
                )));
            }
            (
                compare(&ra, &rb, args.verdict.threshold, args.between_runs),
                na,
                nb,
            )
        }
        None if is_ab(&ra) => (
            paired(&ra, args.verdict.threshold),
            format!("{na} arm A"),
            format!("{na} arm B"),
        ),
        None => {
            return Err(BenchError::Usage(format!(
                "{na} holds no A/B results (of `bench ab`); give two result sets: bench compare A B"
            )));
        }
    };
    if c.rows.is_empty() {
        return Err(BenchError::output(format!(
            "{na} and {nb} have no cell in common, so nothing can be compared (A holds {}; B \
             holds {}); compare results of the same plan",
            names(&c.only_a),
            names(&c.only_b)
        )));
    }
    let mut answer = comparison_as(&c, &na, &nb, args.verdict.format);
    if let Some(path) = &args.markdown {
        crate::files::write_atomic(path, markdown(&c, &na, &nb).as_bytes())
            .map_err(io_err("write", path))?;
        answer.note(format!("markdown: {}", path.display()));
    }
    answer.code = c.exit_code(&args.verdict);
    Ok(answer)
}

/// `bench compare DIR --against A [--variant V]`: each variant against the baseline, then
/// the variants in order of their throughput.
fn run_variants(
    args: &CompareArgs,
    records: &[Record],
    name: &str,
    against: &variants::Selector,
) -> Result<Answer, BenchError> {
    if args.verdict.format == Format::Github {
        return Err(BenchError::Usage(format!(
            "--format github says one comparison (two result sets, or an A/B directory); \
             for the variants of {name} against {against}, write them with --markdown FILE"
        )));
    }
    let cs = variants::compare_variants(
        records,
        against,
        args.variant.as_ref(),
        args.verdict.threshold,
        args.between_runs,
    )
    .map_err(|m| BenchError::Usage(format!("{name}: {m}")))?;
    let mut md = String::new();
    let mut answer = Answer::default();
    for (i, (v, c)) in cs.iter().enumerate() {
        if i > 0 {
            answer.line("");
        }
        let (na, nb) = (
            format!("{name}, variant {against}"),
            format!("{name}, variant {v}"),
        );
        let one = comparison(c, &na, &nb);
        answer.stdout.push_str(&one.stdout);
        answer.stderr.extend(one.stderr);
        md.push_str(&format!(
            "## {v} against {against}\n\n{}\n",
            markdown(c, &na, &nb)
        ));
        // A regression anywhere (5) before a cell not judged (7).
        answer.code = match (answer.code, c.exit_code(&args.verdict)) {
            (exit::REGRESSION, _) | (_, exit::REGRESSION) => exit::REGRESSION,
            (a, b) => a.max(b),
        };
    }
    // The ranking, with one variant too (its line sums its cells up).
    answer.line(format!(
        "\nvariants by throughput against {against}, best first:"
    ));
    md.push_str(&format!("## Variants by throughput against {against}\n\n"));
    for line in variants::ranking(&cs, against) {
        answer.line(format!("  {line}"));
        md.push_str(&format!("- {line}\n"));
    }
    if let Some(path) = &args.markdown {
        crate::files::write_atomic(path, md.as_bytes()).map_err(io_err("write", path))?;
        answer.note(format!("markdown: {}", path.display()));
    }
    Ok(answer)
}

/// Whether records are of `bench ab` (each carries its arm).
fn is_ab(records: &[Record]) -> bool {
    records.iter().any(|r| r.arm.is_some())
}

/// One results set of `bench ab` and one of `bench run`: their cells never match.
pub(super) fn mixes_ab(a: &[Record], b: &[Record]) -> bool {
    is_ab(a) != is_ab(b)
}

/// A few cell ids, for a message.
fn names(ids: &[String]) -> String {
    match ids.len() {
        0 => "no cells".to_string(),
        n if n <= 3 => ids.join(", "),
        n => format!("{}, … ({n} cells)", ids[..3].join(", ")),
    }
}

/// A comparison in `format`, with its warnings (on stderr in either).
pub fn comparison_as(c: &Comparison, na: &str, nb: &str, format: Format) -> Answer {
    let mut answer = comparison(c, na, nb);
    match format {
        Format::Text => {}
        Format::Github => answer.stdout = github(c, na, nb),
        Format::Json => answer.stdout = json::json(c, na, nb),
    }
    answer
}

/// A comparison as text, with its warnings.
pub fn comparison(c: &Comparison, na: &str, nb: &str) -> Answer {
    Answer {
        stdout: format!("A: {na}\nB: {nb}\n\n{}", text(c)),
        stderr: warnings(c, na, nb)
            .into_iter()
            .map(|w| format!("warning: {w}"))
            .collect(),
        code: exit::OK,
    }
}
