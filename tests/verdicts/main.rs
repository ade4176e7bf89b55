//! Verdicts and predictions on real runs: a test binary of its own, run after every other
//! test (`scripts/test.sh` runs it last, alone; `cargo test` runs test binaries one after
//! another), its tests one at a time, so that the load of other tests does not fall on one
//! arm of an A/B (or one of two sweeps compared) more than on the other. Its modules'
//! names (`pairs`, `predictions`, `verdicts`) are what scripts/test.sh skips before it.

#[path = "../it/common.rs"]
#[allow(dead_code)]
mod common;
mod pairs;
mod predictions;
mod verdicts;

/// Held by every test here: they run one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}
