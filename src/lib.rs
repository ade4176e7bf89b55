//! `bench`: the Lance `__manifest` commit benchmark as a declarative, resumable sweep.
//!
//! Pipeline: CLI -> [`plan`] -> cells -> (golden, isolate, run, verify) per cell ->
//! [`export`]. Workers are this same binary ([`worker`]), driven by [`coordinator`].

pub mod catalog;
pub mod cli;
pub mod compare;
pub mod coordinator;
pub mod error;
pub mod export;
pub mod fault;
pub mod golden;
pub mod lock;
pub mod plan;
pub mod preflight;
pub mod progress;
pub mod report;
pub mod state;
pub mod stats;
pub mod store;
pub mod sweep;
pub mod verify;
pub mod worker;

use std::process::ExitCode;

use cli::{Cli, Command};
use error::{BenchError, exit};

/// Run the parsed command line and map the outcome to an exit code.
pub fn main(cli: Cli) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("start the tokio runtime");
    let code = runtime.block_on(async {
        match cli.command {
            Command::Worker(args) => match worker::run(args).await {
                Ok(()) => exit::OK,
                Err(e) => {
                    eprintln!("bench worker: {e:#}");
                    exit::INTERNAL
                }
            },
            Command::Plan { plan, over } => finish(
                match sweep::Sweep::prepare(&plan, &over.into_overrides()).await {
                    Ok(s) => sweep::show_plan(&s).await.map(print),
                    Err(e) => Err(e),
                },
            ),
            Command::Status { plan, over } => finish(
                sweep::Sweep::prepare(&plan, &over.into_overrides())
                    .await
                    .and_then(|s| sweep::show_status(&s))
                    .map(print),
            ),
            Command::Report { results } => finish(report::regenerate(&results, false).map(print)),
            Command::Summarize { results } => finish(report::regenerate(&results, true).map(print)),
            Command::Compare {
                a,
                b,
                threshold,
                fail_on_regression,
                markdown,
            } => finish(compare_cmd(
                &a,
                &b,
                threshold,
                fail_on_regression,
                markdown.as_deref(),
            )),
            Command::Run {
                plan,
                over,
                fresh,
                retry_failed,
                progress,
            } => {
                let opts = sweep::RunOptions {
                    fresh,
                    retry_failed,
                    display: progress,
                };
                match sweep::Sweep::prepare(&plan, &over.into_overrides()).await {
                    Ok(s) => finish(sweep::run(&s, &opts).await.map(|r| r.exit_code())),
                    Err(e) => finish(Err(e)),
                }
            }
        }
    });
    // Do not wait for blocking tasks (e.g. a worker's stdin reader) at shutdown.
    runtime.shutdown_background();
    ExitCode::from(code)
}

fn compare_cmd(
    a: &std::path::Path,
    b: &std::path::Path,
    threshold: f64,
    fail_on_regression: bool,
    markdown: Option<&std::path::Path>,
) -> Result<u8, BenchError> {
    let (fa, ra) = export::jsonl::load(a).map_err(BenchError::Output)?;
    let (fb, rb) = export::jsonl::load(b).map_err(BenchError::Output)?;
    let (na, nb) = (fa.display().to_string(), fb.display().to_string());
    let c = compare::compare(&ra, &rb, threshold);
    for w in compare::warnings(&c, &na, &nb) {
        eprintln!("warning: {w}");
    }
    print!("A: {na}\nB: {nb}\n\n{}", compare::text(&c));
    if let Some(path) = markdown {
        std::fs::write(path, compare::markdown(&c, &na, &nb))
            .map_err(|e| BenchError::Output(format!("cannot write {}: {e}", path.display())))?;
        eprintln!("markdown: {}", path.display());
    }
    Ok(if fail_on_regression && c.regressions() > 0 {
        exit::REGRESSION
    } else {
        exit::OK
    })
}

fn print(text: String) -> u8 {
    print!("{text}");
    exit::OK
}

fn finish(result: Result<u8, BenchError>) -> u8 {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}
