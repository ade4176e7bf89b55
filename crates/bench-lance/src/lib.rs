//! `bench`'s library (the binary, src/main.rs, hands it the command line): the Lance
//! `__manifest` commit benchmark as a declarative, resumable sweep.
//!
//! Pipeline: [`cli`] -> [`plan`] (validated, expanded into cells) -> `sweep` (per cell:
//! [`golden`], a copy in the [`store`], the workers run by the [`coordinator`], [`verify`])
//! -> `export` (results.jsonl, summary.csv) -> `report`. Workers are this same binary
//! ([`worker`]), each with its own [`catalog`]. Everything that does not touch lance or the
//! store is in `bench-core` (re-exported here). See docs/architecture.md.

pub mod arm;
pub mod catalog;
pub mod cli;
mod commands;
pub mod coordinator;
pub mod failure;
mod fault;
pub mod golden;
pub mod harness;
pub mod host_clock;
pub mod out;
mod progress;
pub mod resends;
pub mod results_table;
pub mod server;
pub mod store;
mod store_fault;
mod sweep;
pub mod verify;
pub mod worker;

// The lance-free core (crates/bench-core), under the same names as the stages here.
/// A run's operations as Jepsen writes a history (`history.jsonl`); `history` above is the
/// series of a results directory's records.
pub use bench_core::history as op_history;
pub use bench_core::results::{self, history, merge, publish};
pub use bench_core::sweep::{order, resume, state};
pub use bench_core::{
    answer, audit, clock, compare, error, export, files, fold, lock, measured, observer, oplog,
    pace, plan, prices, report, stats, stored, trace,
};

/// When this process started (its `main`): a worker's start-up is timed from here.
pub fn started() -> std::time::Instant {
    static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *STARTED.get_or_init(std::time::Instant::now)
}

pub use commands::{main, usage_error};

// The lance crates this library is built with, for the tests to name the same ones (so the
// lance to test is pinned in one Cargo.toml: this crate's).
pub use {async_trait, lance, lance_core, lance_io, lance_namespace, lance_namespace_impls, url};

/// Whether this build's lance-namespace-impls carries the patch of `finding`
/// (docs/findings/patches/`finding`.patch, applied by `scripts/track-record.sh build
/// 14.0.2+fix`): the findings' tests in lance's style expect it fixed there, and red on
/// the release.
pub fn lance_fixes(finding: &str) -> bool {
    env!("BENCH_LANCE_FIXES").split(',').any(|f| f == finding)
}
