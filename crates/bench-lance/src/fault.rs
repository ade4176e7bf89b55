//! Fault injection for the crash-recovery tests. With `BENCH_FAULT=<point>` in its
//! environment, the coordinator kills itself with SIGKILL the first time it reaches that
//! point, exactly as a crash or `kill -9` would; with `BENCH_FAULT=pause-<point>` it says so
//! on stderr and waits there for a Ctrl-C (at most a minute), so a test can signal it at a
//! step a signal does not cut short. Unset in normal use; never passed to workers.

pub const ENV: &str = "BENCH_FAULT";

/// Points where a crash is injected:
/// - `golden`: after a golden's dataset is written, before its completion marker;
/// - `copy`: in the middle of copying a golden for a cell;
/// - `cell`: while a cell's workers are committing;
/// - `append`: after a result is appended to `results.jsonl`, before the checkpoint.
fn armed() -> Option<&'static str> {
    static ARMED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    ARMED.get_or_init(|| std::env::var(ENV).ok()).as_deref()
}

pub fn point(name: &str) {
    if armed() == Some(name) {
        // SAFETY: kill(2) on our own pid has no memory-safety preconditions.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}

/// Points where a pause is injected (`pause-<point>`):
/// - `verify`: before a measured cell's copy is verified.
pub async fn pause(name: &str, interrupt: &mut tokio::sync::watch::Receiver<bool>) {
    if armed().and_then(|a| a.strip_prefix("pause-")) == Some(name) {
        eprintln!("fault: paused at {name} until interrupted");
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(60),
            interrupt.wait_for(|stop| *stop),
        )
        .await;
    }
}

/// With `BENCH_FAULT=lose-manifest`: before a measured cell's copy (a local `root`) is
/// verified, its `__manifest` is removed, as a store that lost it (or went away) leaves
/// it: the verification fails as it then would.
pub fn lose_manifest(root: &str) {
    if armed() == Some("lose-manifest") && !root.contains("://") {
        let _ = std::fs::remove_dir_all(std::path::Path::new(root).join("__manifest"));
    }
}
