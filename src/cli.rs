//! The command line.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::progress::Display;
use crate::worker::WorkerArgs;

/// Run the Lance `__manifest` commit benchmark as a declarative sweep.
#[derive(Debug, Parser)]
#[command(name = "bench", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate a plan and list its cells in order with their status; runs nothing.
    Plan {
        /// The plan file (TOML).
        plan: PathBuf,
        /// Results directory [default: results/<plan name>].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run every pending cell of a plan; re-running the same command resumes.
    Run {
        /// The plan file (TOML).
        plan: PathBuf,
        /// Results directory [default: results/<plan name>].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Start over: move earlier outputs to <out>/previous-<time>/ and run every cell.
        #[arg(long)]
        fresh: bool,
        /// Also re-run cells that failed in an earlier run.
        #[arg(long)]
        retry_failed: bool,
        /// How to show progress.
        #[arg(long, value_enum, default_value_t = Display::Auto)]
        progress: Display,
    },
    /// Show how far a sweep is: done, failed (with reasons), pending and stale cells.
    Status {
        /// The plan file (TOML).
        plan: PathBuf,
        /// Results directory [default: results/<plan name>].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// One worker process of a cell (started by `bench run`).
    #[command(hide = true)]
    Worker(WorkerArgs),
}
