//! The commands: the parsed command line dispatched to the stages, what they answer
//! printed, and their outcome mapped to an exit code.

use std::process::ExitCode;

use crate::cli::{self, Cli, Command};
use crate::error::{BenchError, exit};
use crate::{compare, merge, out, results, results_table, sweep, worker};

/// Run the parsed command line and map the outcome to an exit code.
pub fn main(cli: Cli) -> ExitCode {
    match &cli.command {
        Command::Worker { args } => return ExitCode::from(run_worker(args)),
        Command::Serve { args } => return ExitCode::from(run_server(args)),
        _ => {}
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("start the tokio runtime");
    let code = runtime.block_on(dispatch(cli.command));
    // Do not wait for blocking tasks (e.g. a worker's stdin reader) at shutdown.
    runtime.shutdown_background();
    ExitCode::from(code)
}

/// A command line clap could not parse: its message printed, and its exit code — clap's (0
/// for `--help`, 2 for a usage error), but 64 for `bench check`, whose 2 means undecided.
pub fn usage_error(e: clap::Error) -> ExitCode {
    let _ = e.print();
    let code = e.exit_code();
    let command = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    match (code, command.as_deref()) {
        (2, Some("check")) => ExitCode::from(bench_core::history::command::USAGE),
        _ => ExitCode::from(u8::try_from(code).unwrap_or(2)),
    }
}

async fn dispatch(command: Command) -> u8 {
    let result = match command {
        Command::Worker { .. } | Command::Serve { .. } => {
            unreachable!("run_worker and run_server run on runtimes of their own")
        }
        Command::WorkerInfo => {
            let v = worker::protocol::Versions::own();
            out::line(&serde_json::to_string(&v).expect("versions serialise"));
            return exit::OK;
        }
        Command::Plan { plan, over } => match sweep::Sweep::prepare(&plan, &over.into()).await {
            Ok(s) => sweep::show_plan(&s).await.map(print),
            Err(e) => Err(e),
        },
        Command::Status {
            plan,
            over,
            fail_on_finding,
        } => match sweep::Sweep::prepare(&plan, &over.into()).await {
            Ok(s) => status(&s, fail_on_finding).await,
            Err(e) => Err(e),
        },
        Command::Check { path, json, export } => {
            let ask = bench_core::history::command::Ask {
                path,
                json,
                export_elle: export.is_some(),
            };
            Ok(out::answer(bench_core::history::command::run(&ask)))
        }
        Command::Report { results } => results::regenerate(&results, false).map(out::answer),
        Command::Summarize { results } => results::regenerate(&results, true).map(out::answer),
        Command::Compare(args) => compare::run(&args.into()).map(out::answer),
        Command::Predict(args) => bench_core::predict::run(&args.into()).map(out::answer),
        Command::Publish(args) => results_table::publish(&args.into()).await.map(out::answer),
        Command::History(args) => results_table::history(&args.into()).await.map(out::answer),
        Command::Merge {
            out,
            shards,
            allow_mixed_roots,
        } => merge::run(&out, &shards, allow_mixed_roots).map(out::answer),
        Command::Run { plan, run } => run_cmd(&plan, run, None).await,
        Command::Ab {
            plan,
            candidate,
            baseline,
            run,
            pairs,
            verdict,
        } => match pairs.options(verdict.threshold) {
            Ok(p) => run_cmd(&plan, run, Some((baseline, candidate, p, verdict.into()))).await,
            Err(e) => Err(BenchError::Usage(e)),
        },
    };
    finish(result)
}

/// `bench worker ARGS`: one worker process of a cell.
fn run_worker(args: &[String]) -> u8 {
    match worker::WorkerArgs::parse(args) {
        Ok(a) => on_own_runtime("bench worker", a.s3_shaped, worker::run(a)),
        Err(e) => {
            out::note(&format!("bench worker: {e}"));
            exit::BAD_PLAN
        }
    }
}

/// `bench serve ARGS`: one REST server of a rest cell.
fn run_server(args: &[String]) -> u8 {
    match bench_core::serve::ServeArgs::parse(args) {
        Ok(a) => on_own_runtime("bench serve", a.s3_shaped, crate::server::run(a)),
        Err(e) => {
            out::note(&format!("bench serve: {e}"));
            exit::BAD_PLAN
        }
    }
}

/// Run a worker's or a server's process on a runtime of its own; its error said as `who`.
fn on_own_runtime(
    who: &str,
    s3_shaped: bool,
    process: impl std::future::Future<Output = anyhow::Result<()>>,
) -> u8 {
    if s3_shaped && std::env::var_os(worker::VERSION_HINT_ENV).is_none() {
        // S3 has no version-hint file: lance writes none when this is off (unless the plan
        // sets it, `[env]`). Read by lance once, at its first commit. SAFETY: set before any
        // thread of this process starts.
        unsafe { std::env::set_var(worker::VERSION_HINT_ENV, "0") };
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("start the tokio runtime");
    let code = runtime.block_on(async {
        match process.await {
            Ok(()) => exit::OK,
            Err(e) => {
                out::note(&format!("{who}: {e:#}"));
                exit::INTERNAL
            }
        }
    });
    // Do not wait for blocking tasks (e.g. the stdin reader) at shutdown.
    runtime.shutdown_background();
    code
}

/// `bench run`, or with two builds `bench ab`.
async fn run_cmd(
    plan: &std::path::Path,
    args: cli::RunArgs,
    ab: Option<(
        Option<std::path::PathBuf>,
        std::path::PathBuf,
        sweep::AbOptions,
        compare::VerdictArgs,
    )>,
) -> Result<u8, BenchError> {
    let opts = sweep::RunOptions {
        fresh: args.fresh,
        retry_failed: args.retry_failed,
        display: args.progress,
        verbose: args.verbose,
        pairs: ab.as_ref().map(|(_, _, p, _)| *p),
        fail_on_finding: args.fail_on_finding,
    };
    let mut over: sweep::Overrides = args.over.into();
    over.trace = args.trace;
    over.prices = args.prices;
    let own = std::env::current_exe()
        .map_err(|e| BenchError::Internal(format!("cannot locate the bench binary: {e}")))?;
    match ab {
        None => {
            let arm = sweep::Arm::checked(None, own).await?;
            let s = sweep::Sweep::prepare(plan, &over).await?;
            Ok(sweep::run(&s, &opts, &[arm]).await?.exit_code())
        }
        Some((baseline, candidate, _, verdict)) => {
            // Both builds answer, and are known by their bytes, before anything is written:
            // their digests are part of every cell's key.
            let arms = [
                sweep::Arm::checked(Some(sweep::ARM_A), baseline.unwrap_or(own)).await?,
                sweep::Arm::checked(Some(sweep::ARM_B), candidate).await?,
            ];
            over.ab = Some(arms.clone());
            let s = sweep::Sweep::prepare(plan, &over).await?;
            sweep::ab(&s, &opts, &arms, &verdict).await
        }
    }
}

/// `bench status`, with `--fail-on-finding` its findings named and its exit code.
async fn status(s: &sweep::Sweep, gate: bool) -> Result<u8, BenchError> {
    let mut text = sweep::show_status(s).await?;
    if !gate {
        return Ok(print(text));
    }
    let (code, gate) = sweep::status_gate(s)?;
    if !gate.findings.is_empty() || !gate.unchecked.is_empty() {
        text.push_str("findings (--fail-on-finding):\n");
        text.extend(gate.lines().map(|f| format!("  {f}\n")));
    }
    out::print(&text);
    Ok(code)
}

fn print(text: String) -> u8 {
    out::print(&text);
    exit::OK
}

fn finish(result: Result<u8, BenchError>) -> u8 {
    match result {
        Ok(code) => code,
        Err(e) => {
            out::note(&format!("error: {e}"));
            e.exit_code()
        }
    }
}
