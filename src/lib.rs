//! `bench`: the Lance `__manifest` commit benchmark as a declarative, resumable sweep.
//!
//! Pipeline: [`cli`] -> [`plan`] (validated, expanded into cells) -> `sweep` (per cell:
//! [`golden`], a copy in the [`store`], the workers run by the [`coordinator`], [`verify`])
//! -> `export` (results.jsonl, summary.csv) -> `report`. Workers are this same binary
//! ([`worker`]), each with its own [`catalog`]. See the README's "Architecture".

pub mod catalog;
pub mod cli;
mod clock;
mod compare;
pub mod coordinator;
mod error;
mod export;
mod fault;
mod files;
pub mod golden;
mod lock;
pub mod plan;
mod progress;
mod report;
mod state;
mod stats;
pub mod store;
mod sweep;
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
    let code = runtime.block_on(dispatch(cli.command));
    // Do not wait for blocking tasks (e.g. a worker's stdin reader) at shutdown.
    runtime.shutdown_background();
    ExitCode::from(code)
}

async fn dispatch(command: Command) -> u8 {
    let result = match command {
        Command::Worker(args) => {
            return match worker::run(args).await {
                Ok(()) => exit::OK,
                Err(e) => {
                    eprintln!("bench worker: {e:#}");
                    exit::INTERNAL
                }
            };
        }
        Command::Plan { plan, over } => match sweep::Sweep::prepare(&plan, &over.into()).await {
            Ok(s) => sweep::show_plan(&s).await.map(print),
            Err(e) => Err(e),
        },
        Command::Status { plan, over } => sweep::Sweep::prepare(&plan, &over.into())
            .await
            .and_then(|s| sweep::show_status(&s))
            .map(print),
        Command::Report { results } => report::regenerate(&results, false).map(print),
        Command::Summarize { results } => report::regenerate(&results, true).map(print),
        Command::Compare(args) => compare::run(&args),
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
            match sweep::Sweep::prepare(&plan, &over.into()).await {
                Ok(s) => sweep::run(&s, &opts).await.map(|r| r.exit_code()),
                Err(e) => Err(e),
            }
        }
    };
    finish(result)
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
