//! Progress display: bars on a terminal, plain timestamped lines elsewhere (pipes, CI).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::clock::now_utc;
use crate::coordinator::Observer;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Display {
    /// Bars when stderr is a terminal and not in CI, lines otherwise.
    Auto,
    Bars,
    Lines,
}

/// The one decision of how to show progress, from the facts that matter.
pub fn choose(requested: Display, stderr_is_terminal: bool, in_ci: bool) -> Display {
    match requested {
        Display::Auto if stderr_is_terminal && !in_ci => Display::Bars,
        Display::Auto => Display::Lines,
        other => other,
    }
}

/// Sweep-wide progress: the overall bar and the log.
pub struct Progress {
    bars: Option<(MultiProgress, ProgressBar)>,
}

impl Progress {
    pub fn new(display: Display, total_cells: u64, already_done: u64) -> Progress {
        let bars = (display == Display::Bars).then(|| {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            let overall = multi.add(ProgressBar::new(total_cells));
            overall.set_style(
                ProgressStyle::with_template(
                    "{prefix:.bold} [{bar:30.cyan/blue}] {pos}/{len} cells  {elapsed_precise} elapsed, ETA {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            overall.set_prefix("sweep");
            overall.set_position(already_done);
            overall.reset_eta();
            (multi, overall)
        });
        Progress { bars }
    }

    /// Print a line above the bars, or a timestamped line.
    pub fn log(&self, msg: impl AsRef<str>) {
        match &self.bars {
            Some((multi, _)) => {
                let _ = multi.println(msg.as_ref());
            }
            None => eprintln!("{} {}", now_utc(), msg.as_ref()),
        }
    }

    /// Start the display of one cell.
    pub fn cell(&self, id: &str, expected_ops: Option<u64>, duration: Option<Duration>) -> CellBar {
        let bar = self.bars.as_ref().map(|(multi, _)| {
            let bar = multi.add(ProgressBar::new(expected_ops.unwrap_or(0)));
            let template = if expected_ops.is_some() {
                "  {prefix} [{bar:30.green/white}] {pos}/{len} operations  {msg}"
            } else {
                "  {prefix} {spinner} {pos} operations  {msg}"
            };
            bar.set_style(
                ProgressStyle::with_template(template)
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            bar.set_prefix(id.to_string());
            bar.set_message("starting workers");
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        CellBar {
            id: id.to_string(),
            bar,
            expected_ops,
            duration,
            ops: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            released: Mutex::new(None),
            last_line: Mutex::new(Instant::now()),
        }
    }

    /// A cell finished (done or failed): advance the overall bar.
    pub fn cell_finished(&self) {
        if let Some((_, overall)) = &self.bars {
            overall.inc(1);
        }
    }

    pub fn finish(&self) {
        if let Some((_, overall)) = &self.bars {
            overall.finish();
        }
    }
}

/// Live display of the running cell: commits so far, ops/s, errors, time left.
pub struct CellBar {
    id: String,
    bar: Option<ProgressBar>,
    expected_ops: Option<u64>,
    duration: Option<Duration>,
    ops: AtomicU64,
    errors: AtomicU64,
    released: Mutex<Option<Instant>>,
    last_line: Mutex<Instant>,
}

/// How often a plain-line display reports a running cell.
const LINE_EVERY: Duration = Duration::from_secs(10);

impl Observer for CellBar {
    fn released(&self) {
        *self.released.lock().expect("lock") = Some(Instant::now());
        if let Some(bar) = &self.bar {
            bar.set_message("running");
        }
    }

    fn op(&self, ok: bool, _read: bool) {
        let ops = self.ops.fetch_add(1, Ordering::Relaxed) + 1;
        if !ok {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        match &self.bar {
            Some(bar) => {
                bar.set_position(ops);
                bar.set_message(self.status(ops));
            }
            None => {
                let mut last = self.last_line.lock().expect("lock");
                if last.elapsed() >= LINE_EVERY {
                    *last = Instant::now();
                    eprintln!(
                        "{}   {}: {ops} operations, {}",
                        now_utc(),
                        self.id,
                        self.status(ops)
                    );
                }
            }
        }
    }
}

impl CellBar {
    fn status(&self, ops: u64) -> String {
        let since = self.released.lock().expect("lock").map(|t| t.elapsed());
        let rate = since
            .filter(|d| d.as_secs_f64() > 0.0)
            .map(|d| ops as f64 / d.as_secs_f64())
            .unwrap_or(0.0);
        let mut s = format!(
            "{rate:.1} ops/s, {} errors",
            self.errors.load(Ordering::Relaxed)
        );
        if let (Some(total), Some(since)) = (self.duration, since) {
            s.push_str(&format!(
                ", {}s left",
                total.saturating_sub(since).as_secs()
            ));
        } else if let Some(n) = self.expected_ops {
            s.push_str(&format!(" ({}%)", ops * 100 / n.max(1)));
        }
        s
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_choice() {
        use Display::*;
        let cases = [
            (Auto, true, false, Bars),
            (Auto, false, false, Lines),
            (Auto, true, true, Lines),
            (Auto, false, true, Lines),
            (Bars, false, true, Bars),
            (Lines, true, false, Lines),
        ];
        for (req, tty, ci, want) in cases {
            assert_eq!(choose(req, tty, ci), want, "{req:?} tty={tty} ci={ci}");
        }
    }
}
