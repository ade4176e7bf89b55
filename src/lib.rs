//! `bench`: the Lance `__manifest` commit benchmark as a declarative, resumable sweep.
//!
//! Pipeline: CLI -> [`plan`] -> cells -> (golden, isolate, run, verify) per cell ->
//! [`export`]. Workers are this same binary ([`worker`]), driven by [`coordinator`].

pub mod catalog;
pub mod cli;
pub mod coordinator;
pub mod error;
pub mod export;
pub mod fault;
pub mod golden;
pub mod lock;
pub mod plan;
pub mod preflight;
pub mod progress;
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
            Command::Plan { plan, over } => report(
                match sweep::Sweep::prepare(&plan, &over.into_overrides()).await {
                    Ok(s) => sweep::show_plan(&s).await.map(print),
                    Err(e) => Err(e),
                },
            ),
            Command::Status { plan, over } => report(
                sweep::Sweep::prepare(&plan, &over.into_overrides())
                    .await
                    .and_then(|s| sweep::show_status(&s))
                    .map(print),
            ),
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
                    Ok(s) => report(sweep::run(&s, &opts).await.map(|r| r.exit_code())),
                    Err(e) => report(Err(e)),
                }
            }
        }
    });
    // Do not wait for blocking tasks (e.g. a worker's stdin reader) at shutdown.
    runtime.shutdown_background();
    ExitCode::from(code)
}

fn print(text: String) -> u8 {
    print!("{text}");
    exit::OK
}

fn report(result: Result<u8, BenchError>) -> u8 {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}
