//! Fault injection for the crash-recovery tests. With `BENCH_FAULT=<point>` in its
//! environment, the coordinator kills itself with SIGKILL the first time it reaches that
//! point, exactly as a crash or `kill -9` would. Unset in normal use; never passed to workers.

pub const ENV: &str = "BENCH_FAULT";

/// Points where a crash is injected:
/// - `golden`: after a golden's dataset is written, before its completion marker;
/// - `copy`: in the middle of copying a golden for a cell;
/// - `cell`: while a cell's workers are committing;
/// - `append`: after a result is appended to `results.jsonl`, before the checkpoint.
pub fn point(name: &str) {
    static ARMED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let armed = ARMED.get_or_init(|| std::env::var(ENV).ok());
    if armed.as_deref() == Some(name) {
        // SAFETY: kill(2) on our own pid has no memory-safety preconditions.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}
