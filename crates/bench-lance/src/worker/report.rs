//! What a worker says: its events as JSON lines on stdout ([`protocol`]), at once or, for a
//! worker nobody paces, its operations' reports a few times a second.

use std::io::Write;
use std::time::{Duration, Instant};

use super::protocol::{self, EXIT_ORPHANED, Event};

/// Longest error message a worker reports per failed operation.
pub(super) const MAX_ERR_CHARS: usize = 500;

/// Reports of operations not yet written, and when the last were.
pub(super) struct Pending {
    text: String,
    written: Option<Instant>,
}

pub(super) static PENDING: std::sync::Mutex<Pending> = std::sync::Mutex::new(Pending {
    text: String::new(),
    written: None,
});

/// The coordinator acts on each operation's report as it comes (a paced worker's, or one
/// whose cell ends at a count of commits): reports are written at once. Otherwise they go
/// out together every [`REPORT_EVERY`], so that the coordinator wakes a few times a second,
/// not once an operation, beside the measured commits.
pub(super) static LIVE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// How often a worker that is not [`LIVE`] writes its operations' reports.
pub(super) const REPORT_EVERY: Duration = Duration::from_millis(200);

/// Print one event of worker `w` as a line for the coordinator: at once, or an operation's
/// report with the others of the last [`REPORT_EVERY`] (every other event writes those
/// before it).
pub(super) fn emit(w: u32, event: Event) {
    let op = matches!(event, Event::Op(_));
    let line =
        serde_json::to_string(&protocol::Line { w: Some(w), event }).expect("event serialises");
    let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    pending.text.push_str(&line);
    pending.text.push('\n');
    let due = pending.written.is_none_or(|t| t.elapsed() >= REPORT_EVERY);
    if op && !LIVE.load(std::sync::atomic::Ordering::Relaxed) && !due {
        return;
    }
    write_pending(&mut pending);
}

/// Write the reports not yet written, in one write.
pub(super) fn write_pending(pending: &mut Pending) {
    let mut out = std::io::stdout().lock();
    // A closed stdout means the coordinator is gone.
    if out
        .write_all(pending.text.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        std::process::exit(EXIT_ORPHANED);
    }
    pending.text.clear();
    pending.written = Some(Instant::now());
}

pub(super) fn truncate(s: String) -> String {
    // No build machine's source paths in what a user reads.
    let mut s = bench_core::redact::without_source_places(&s);
    if s.len() > MAX_ERR_CHARS {
        let cut = (0..=MAX_ERR_CHARS)
            .rev()
            .find(|&c| s.is_char_boundary(c))
            .unwrap_or(0);
        s.truncate(cut);
    }
    s
}
