//! Progress display: bars on a terminal, plain timestamped lines elsewhere (pipes, CI).
//! What a line says, and the estimate of the time left, are the core's
//! (`bench_core::display`): here they are drawn and logged, at the wall clock's time.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use crate::clock::now_utc;
use crate::observer::Observer;
pub use bench_core::display::{
    CellView, Display, Predicted, SweepClock, Work, cell_line, cell_log_line, choose,
};

/// Sweep-wide progress: the overall line and the log.
pub struct Progress {
    multi: Option<MultiProgress>,
    overall: Option<ProgressBar>,
    clock: Arc<Mutex<SweepClock>>,
}

/// Where log lines go, for whoever logs from elsewhere (e.g. the signal handler): above the
/// bars, or to stderr with a timestamp on every line.
#[derive(Clone)]
pub struct Logger {
    multi: Option<MultiProgress>,
}

/// Write a line with its time to stderr. A reader that went away (`bench run | head`)
/// must not stop the sweep: the results are in files, so a failed write is ignored.
fn stamped(line: &str) {
    use std::io::Write;
    let line = bench_core::redact::hide(line);
    let _ = writeln!(std::io::stderr(), "{} {line}", now_utc());
}

impl Logger {
    pub fn log(&self, msg: impl AsRef<str>) {
        match &self.multi {
            Some(multi) => {
                let _ = multi.println(bench_core::redact::hide(msg.as_ref()));
            }
            None => {
                for line in msg.as_ref().lines() {
                    stamped(line);
                }
            }
        }
    }
}

/// A bar that draws one line from a closure, ticking every second.
fn line_bar(
    multi: &MultiProgress,
    line: impl Fn() -> String + Send + Sync + Clone + 'static,
) -> ProgressBar {
    let bar = multi.add(ProgressBar::new(0));
    let style = ProgressStyle::with_template("{line}")
        .expect("valid template")
        .with_key(
            "line",
            move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&line());
            },
        );
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_secs(1));
    bar
}

impl Progress {
    /// `predicted`: the model's cost of all the work left (see `sweep::estimate`).
    pub fn new(display: Display, total_cells: u64, done: u64, predicted: Predicted) -> Progress {
        let clock = SweepClock::new(total_cells, done, predicted, Instant::now());
        let clock = Arc::new(Mutex::new(clock));
        if display != Display::Bars {
            return Progress {
                multi: None,
                overall: None,
                clock,
            };
        }
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let c = clock.clone();
        let overall = line_bar(&multi, move || {
            c.lock().expect("clock").line(Instant::now())
        });
        Progress {
            multi: Some(multi),
            overall: Some(overall),
            clock,
        }
    }

    fn clock(&self) -> std::sync::MutexGuard<'_, SweepClock> {
        self.clock.lock().expect("clock")
    }

    /// Print a line above the bars, or a timestamped line.
    pub fn log(&self, msg: impl AsRef<str>) {
        self.logger().log(msg);
    }

    pub fn logger(&self) -> Logger {
        Logger {
            multi: self.multi.clone(),
        }
    }

    /// A unit of work (a run of a cell, a golden's bootstrap) starts; the model predicts it
    /// takes `predicted`.
    pub fn unit_started(&self, work: Work, predicted: Duration) {
        self.clock().unit_started(work, predicted, Instant::now());
    }

    /// The unit under way is held (`true`: its workers wait in a launcher's queue) or goes
    /// on (`false`); held time is not work, and the estimate does not count it down.
    pub fn unit_held(&self, held: bool) {
        self.clock().unit_held(held, Instant::now());
    }

    /// The unit of work under way finished: what it took teaches the estimate.
    pub fn unit_finished(&self) {
        self.clock().unit_finished(Instant::now());
    }

    /// The unit of work under way took no real work (a golden found ready): forget it.
    pub fn unit_skipped(&self) {
        self.clock().unit_skipped();
    }

    /// More work than was predicted: a run added to a cell (`bench ab` until it decides).
    pub fn extend(&self, work: Work, predicted: Duration) {
        self.clock().extend(work, predicted);
    }

    /// A cell runs on until it decides, for at most `upto` more (`None`: it stopped).
    pub fn extending(&self, upto: Option<Duration>) {
        self.clock().extending(upto, Instant::now());
    }

    /// Work that was predicted but will not run (a golden reused, a cell skipped or failed).
    pub fn skip(&self, work: Work, predicted: Duration) {
        self.clock().skip(work, predicted);
    }

    /// A cell finished (done, failed or skipped).
    pub fn cell_finished(&self) {
        let line = {
            let mut c = self.clock();
            c.cell_finished();
            c.line(Instant::now())
        };
        if self.multi.is_none() {
            self.log(line);
        }
    }

    /// The sweep stopped: finished, or interrupted with what was done said so.
    pub fn finish(&self, interrupted: bool) {
        let line = {
            let mut c = self.clock();
            if interrupted {
                c.interrupted();
            }
            c.line(Instant::now())
        };
        match &self.overall {
            Some(bar) => bar.abandon(),
            None if interrupted => self.log(line),
            None => {}
        }
    }

    /// Start the display of one run of a cell.
    pub fn cell(&self, view: CellView) -> CellBar {
        let view = Arc::new(Mutex::new(view));
        let bar = self.multi.as_ref().map(|multi| {
            let v = view.clone();
            line_bar(multi, move || {
                cell_line(&v.lock().expect("view"), Instant::now())
            })
        });
        CellBar {
            view,
            bar,
            last_line: Mutex::new(Instant::now()),
            progress: Progress {
                multi: self.multi.clone(),
                overall: None,
                clock: self.clock.clone(),
            },
        }
    }
}

/// Live display of the running cell.
pub struct CellBar {
    view: Arc<Mutex<CellView>>,
    bar: Option<ProgressBar>,
    last_line: Mutex<Instant>,
    /// The sweep's progress (its log and clock), without its own line.
    progress: Progress,
}

/// How often a plain-line display reports a running cell.
const LINE_EVERY: Duration = Duration::from_secs(10);

impl CellBar {
    /// In plain-line mode, a line every [`LINE_EVERY`].
    fn maybe_line(&self) {
        if self.bar.is_some() {
            return;
        }
        let mut last = self.last_line.lock().expect("lock");
        if last.elapsed() >= LINE_EVERY {
            *last = Instant::now();
            let line = cell_log_line(&self.view.lock().expect("view"), Instant::now());
            stamped(&line);
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Observer for CellBar {
    fn released(&self) {
        self.view.lock().expect("view").released = Some(Instant::now());
        self.progress.unit_held(false);
    }

    /// A launcher's word before release: shown on the cell's line (and logged once), and
    /// the sweep's clock stops counting the unit down while its workers wait.
    fn waiting(&self, line: &str) {
        let id = {
            let mut v = self.view.lock().expect("view");
            if v.waiting.as_deref() == Some(line) {
                return;
            }
            v.waiting = Some(line.to_string());
            v.id.clone()
        };
        self.progress.unit_held(true);
        self.progress.log(format!("{id}: waiting: {line}"));
    }

    fn op(&self, ok: bool, read: bool) {
        {
            let mut v = self.view.lock().expect("view");
            match (read, ok) {
                (false, true) => v.ops += 1,
                (false, false) => v.errors += 1,
                (true, true) => v.reads += 1,
                (true, false) => v.read_errors += 1,
            }
        }
        self.maybe_line();
    }

    fn worker_done(&self) {
        self.view.lock().expect("view").workers_done += 1;
    }
}
