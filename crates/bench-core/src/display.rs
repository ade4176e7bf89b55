//! What the progress display says, decided by pure functions of the counts and the clock
//! ([`choose`], [`sweep_line`], [`cell_line`], and the estimate of the time left that
//! learns as the sweep goes), so they are tested without a terminal; every line fits 80
//! columns. The binary draws them (bars on a terminal, timestamped lines elsewhere).

use std::time::{Duration, Instant};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// The widest line the display writes.
pub const WIDTH: usize = 80;

pub use crate::clock::short;

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
}

/// Cut a line to [`WIDTH`] characters.
fn fit(mut s: String) -> String {
    if s.chars().count() > WIDTH {
        s = s.chars().take(WIDTH - 1).collect();
        s.push('…');
    }
    s
}

/// The sweep's line: cells done, time elapsed, the estimate of what is left (and, while a
/// cell of `bench ab` runs on until it decides, the most that may add: `upto`).
pub fn sweep_line(
    done: u64,
    total: u64,
    elapsed: Duration,
    left: Option<Duration>,
    upto: Option<Duration>,
    interrupted: bool,
) -> String {
    let mut s = format!("sweep {done}/{total} cells  {} elapsed", clock(elapsed));
    if interrupted {
        s.push_str(&format!(
            "  interrupted, {} not done",
            total - done.min(total)
        ));
    } else if done >= total {
        s.push_str("  finished");
    } else if let Some(left) = left {
        s.push_str(&format!("  about {} left", short(left)));
        if let Some(more) = upto {
            s.push_str(&format!(", up to {} more to decide", short(more)));
        }
    }
    fit(s)
}

/// What the display knows of the running cell, as its workers report.
#[derive(Debug, Clone, Default)]
pub struct CellView {
    pub id: String,
    pub workers: u32,
    /// Commits (or operations) each continuous worker makes; `None` for timed cells.
    pub expected_ops: Option<u64>,
    /// The deadline after release of concurrent and mixed cells.
    pub duration: Option<Duration>,
    /// Mixed cells count their reads apart.
    pub mixed: bool,
    pub released: Option<Instant>,
    pub ops: u64,
    pub errors: u64,
    pub reads: u64,
    pub read_errors: u64,
    pub workers_done: u32,
    /// Before release: what a launcher last said of the workers (e.g. queued).
    pub waiting: Option<String>,
}

fn rate(n: u64, since: Duration) -> String {
    let secs = since.as_secs_f64();
    if secs <= 0.0 {
        return "-".into();
    }
    let r = n as f64 / secs;
    if r >= 100.0 {
        format!("{r:.0}/s")
    } else {
        format!("{r:.1}/s")
    }
}

/// `  ID  INFO` in [`WIDTH`] columns: a long id loses its middle, not the figures.
fn fit_cell(id: &str, info: &str) -> String {
    let room = WIDTH.saturating_sub(4 + info.chars().count());
    let n = id.chars().count();
    let id = if n <= room || room < 12 {
        id.to_string()
    } else {
        let head: String = id.chars().take((room - 1) / 2).collect();
        let tail: String = id.chars().skip(n - (room - 1 - (room - 1) / 2)).collect();
        format!("{head}…{tail}")
    };
    fit(format!("  {id}  {info}"))
}

/// The running cell's line at `now`, for a bar: 80 columns, a long id losing its middle.
pub fn cell_line(v: &CellView, now: Instant) -> String {
    fit_cell(&v.id, &cell_info(v, now))
}

/// The running cell's line at `now`, for a log (not a terminal): the id whole, so that it
/// can be searched for, and the figures after it.
pub fn cell_log_line(v: &CellView, now: Instant) -> String {
    format!("{}  {}", v.id, cell_info(v, now))
}

/// What the running cell's line says after its id.
fn cell_info(v: &CellView, now: Instant) -> String {
    let Some(released) = v.released else {
        return match &v.waiting {
            Some(said) => format!("waiting: {said}"),
            None => format!(
                "starting {}",
                crate::plan::count(v.workers.into(), "worker", "workers")
            ),
        };
    };
    let since = now.saturating_duration_since(released);
    let what = if v.mixed { "commits" } else { "ops" };
    let mut s = match v.expected_ops {
        Some(n) => format!(
            "{}/{} {what} {}",
            v.ops,
            n * u64::from(v.workers),
            rate(v.ops, since)
        ),
        None => format!("{} {what} {}", v.ops, rate(v.ops, since)),
    };
    if v.mixed {
        s.push_str(&format!(", {} reads {}", v.reads, rate(v.reads, since)));
    }
    let errors = v.errors + v.read_errors;
    if errors > 0 {
        s.push_str(&format!(", {errors} err"));
    }
    if let Some(d) = v.duration {
        let in_flight = v.workers.saturating_sub(v.workers_done);
        if since < d {
            s.push_str(&format!(", {} left", short(d - since)));
        } else if in_flight > 0 {
            s.push_str(&format!(", deadline passed, {in_flight} in flight"));
        }
    }
    s
}

/// The two kinds of work a sweep predicts, learned apart: the model of one can be off
/// by another factor than the other's (a golden of 1,000 rows builds in milliseconds, far
/// faster than the model says, while its cells run as predicted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    Golden = 0,
    Run = 1,
}

/// The model's prediction of the work left, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Predicted {
    pub goldens: Duration,
    pub runs: Duration,
}

impl Predicted {
    pub fn total(&self) -> Duration {
        self.goldens + self.runs
    }
}

/// What the clock knows of one kind of work.
#[derive(Debug, Clone, Copy, Default)]
struct Learned {
    /// Predicted cost of the work of this kind not yet finished, the current unit included.
    left: Duration,
    /// Actual and predicted seconds of the units of this kind finished so far.
    actual: f64,
    predicted: f64,
}

/// The unit of work under way.
#[derive(Debug, Clone, Copy)]
struct Unit {
    work: Work,
    started: Instant,
    predicted: Duration,
    /// Time it spent held (its workers queued by a launcher): not work, not counted.
    held: Duration,
    held_since: Option<Instant>,
}

impl Unit {
    fn elapsed(&self, now: Instant) -> Duration {
        let holding = self
            .held_since
            .map_or(Duration::ZERO, |h| now.saturating_duration_since(h));
        now.saturating_duration_since(self.started)
            .saturating_sub(self.held + holding)
    }
}

/// The sweep's clock: cells done and the estimate of the time left, learned as it goes.
/// Every method is told the time (`now`), so the estimate is a pure function of what
/// happened when; the binary's display calls them with the wall clock.
#[derive(Debug)]
pub struct SweepClock {
    started: Instant,
    total: u64,
    done: u64,
    kinds: [Learned; 2],
    unit: Option<Unit>,
    interrupted: bool,
    /// A cell runs on until it decides: the most time its budget still allows, counted
    /// down from when it was set.
    upto: Option<(Instant, Duration)>,
}

impl SweepClock {
    /// `predicted`: the model's cost of all the work left (see `estimate`).
    pub fn new(total: u64, done: u64, predicted: Predicted, now: Instant) -> SweepClock {
        let learned = |left| Learned {
            left,
            ..Learned::default()
        };
        SweepClock {
            started: now,
            total,
            done,
            kinds: [learned(predicted.goldens), learned(predicted.runs)],
            unit: None,
            interrupted: false,
            upto: None,
        }
    }

    /// A unit of work (a run of a cell, a golden's bootstrap) starts; the model predicts it
    /// takes `predicted`.
    pub fn unit_started(&mut self, work: Work, predicted: Duration, now: Instant) {
        self.unit = Some(Unit {
            work,
            started: now,
            predicted,
            held: Duration::ZERO,
            held_since: None,
        });
    }

    /// The unit under way is held (`true`: its workers wait in a launcher's queue) or goes
    /// on (`false`); held time is not work, and the estimate does not count it down.
    pub fn unit_held(&mut self, held: bool, now: Instant) {
        if let Some(u) = self.unit.as_mut() {
            match (held, u.held_since) {
                (true, None) => u.held_since = Some(now),
                (false, Some(h)) => {
                    u.held += now.saturating_duration_since(h);
                    u.held_since = None;
                }
                _ => {}
            }
        }
    }

    /// The unit of work under way finished: what it took teaches the estimate.
    pub fn unit_finished(&mut self, now: Instant) {
        if let Some(u) = self.unit.take() {
            let k = &mut self.kinds[u.work as usize];
            k.actual += u.elapsed(now).as_secs_f64();
            k.predicted += u.predicted.as_secs_f64();
            k.left = k.left.saturating_sub(u.predicted);
        }
    }

    /// The unit of work under way took no real work (a golden found ready): forget it.
    pub fn unit_skipped(&mut self) {
        if let Some(u) = self.unit.take() {
            self.skip(u.work, u.predicted);
        }
    }

    /// More work than was predicted: a run added to a cell (`bench ab` until it decides).
    pub fn extend(&mut self, work: Work, predicted: Duration) {
        self.kinds[work as usize].left += predicted;
    }

    /// A cell runs on until it decides, for at most `upto` more (`None`: it stopped).
    pub fn extending(&mut self, upto: Option<Duration>, now: Instant) {
        self.upto = upto.map(|d| (now, d));
    }

    /// Work that was predicted but will not run (a golden reused, a cell skipped or failed).
    pub fn skip(&mut self, work: Work, predicted: Duration) {
        let k = &mut self.kinds[work as usize];
        k.left = k.left.saturating_sub(predicted);
    }

    /// A cell finished (done, failed or skipped).
    pub fn cell_finished(&mut self) {
        self.done += 1;
    }

    /// The sweep stopped early: its line says what was left.
    pub fn interrupted(&mut self) {
        self.interrupted = true;
    }

    /// How much the model of a kind of work is off on this machine: actual over predicted,
    /// within bounds; before any unit of it finished, the other kind's factor, else 1.
    fn scale(&self, work: Work) -> f64 {
        let ratio = |k: &Learned| (k.predicted > 0.0).then(|| k.actual / k.predicted);
        let other = &self.kinds[1 - work as usize];
        ratio(&self.kinds[work as usize])
            .or_else(|| ratio(other))
            .unwrap_or(1.0)
            .clamp(0.05, 50.0)
    }

    /// The estimate of the time left at `now`.
    pub fn left(&self, now: Instant) -> Duration {
        let mut left = Duration::ZERO;
        for work in [Work::Golden, Work::Run] {
            let k = &self.kinds[work as usize];
            let scale = self.scale(work);
            match self.unit.filter(|u| u.work == work) {
                Some(u) => {
                    left += k.left.saturating_sub(u.predicted).mul_f64(scale);
                    left += u.predicted.mul_f64(scale).saturating_sub(u.elapsed(now));
                }
                None => left += k.left.mul_f64(scale),
            }
        }
        left
    }

    /// The sweep's line at `now`.
    pub fn line(&self, now: Instant) -> String {
        sweep_line(
            self.done,
            self.total,
            now.saturating_duration_since(self.started),
            Some(self.left(now)),
            self.upto
                .map(|(since, d)| d.saturating_sub(now.saturating_duration_since(since))),
            self.interrupted,
        )
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

    const LONGEST_ID: &str = "mixed_inline_false_rows_1000000000_c_10000";

    fn view(expected_ops: Option<u64>, duration: Option<u64>, mixed: bool) -> (CellView, Instant) {
        let t0 = Instant::now();
        let v = CellView {
            id: LONGEST_ID.into(),
            workers: 4,
            expected_ops,
            duration: duration.map(Duration::from_secs),
            mixed,
            released: Some(t0),
            ops: 412,
            errors: 3,
            reads: 40_120,
            read_errors: 0,
            workers_done: 1,
            waiting: None,
        };
        (v, t0)
    }

    #[test]
    fn cell_lines_tell_time_and_fit_80_columns() {
        let s = Duration::from_secs;
        let (v, t0) = view(None, Some(30), false);
        let line = cell_line(&v, t0 + s(10));
        assert!(line.contains("412 ops 41.2/s, 3 err, 20s left"), "{line}");
        // Past the deadline with workers finishing their last commit.
        let line = cell_line(&v, t0 + s(37));
        assert!(line.contains("deadline passed, 3 in flight"), "{line}");
        assert!(!line.contains("left"), "{line}");
        // Mixed cells: commits and reads apart.
        let (v, t0) = view(None, Some(30), true);
        let line = cell_line(&v, t0 + s(10));
        assert!(
            line.contains("412 commits 41.2/s, 40120 reads 4012/s"),
            "{line}"
        );
        let (v, t0) = view(Some(50), None, false);
        assert!(cell_line(&v, t0 + s(4)).contains("412/200 ops"));
        let starting = CellView {
            released: None,
            ..v
        };
        assert!(cell_line(&starting, t0).contains("starting 4 workers"));
        let one = CellView {
            workers: 1,
            ..starting.clone()
        };
        assert!(
            cell_line(&one, t0).contains("starting 1 worker"),
            "{}",
            cell_line(&one, t0)
        );
        assert!(!cell_line(&one, t0).contains("1 workers"));
        // A launcher holds the workers in its queue: its words, within 80 columns.
        let queued = CellView {
            waiting: Some("srun: job 7 queued and waiting for resources".into()),
            ..starting
        };
        let line = cell_line(&queued, t0);
        assert!(
            line.contains("waiting: srun: job 7 queued and waiting for resources"),
            "{line}"
        );
        assert!(line.chars().count() <= WIDTH, "{line}");
        for (v, t) in [view(None, Some(30), true), view(Some(50), None, false)] {
            for later in [1, 29, 31, 4000] {
                let line = cell_line(&v, t + s(later));
                assert!(
                    line.chars().count() <= WIDTH,
                    "{} chars: {line}",
                    line.chars().count()
                );
                // The id gave way, not the figures.
                assert!(
                    line.starts_with("  mixed_") && line.contains("_c_10000"),
                    "{line}"
                );
                // In a log (not a terminal) the id stays whole, with the same figures.
                let logged = cell_log_line(&v, t + s(later));
                assert!(logged.starts_with(&format!("{LONGEST_ID}  ")), "{logged}");
                let info = line.rsplit("  ").next().unwrap().trim_end_matches('…');
                assert!(logged.contains(info), "{logged} vs {line}");
            }
        }
    }

    #[test]
    fn the_sweep_line_ticks_and_says_what_an_interrupt_left() {
        let s = Duration::from_secs;
        assert_eq!(
            sweep_line(5, 12, s(143), Some(s(250)), None, false),
            "sweep 5/12 cells  00:02:23 elapsed  about 4m10s left"
        );
        assert_eq!(
            sweep_line(5, 12, s(188), Some(s(205)), None, false),
            "sweep 5/12 cells  00:03:08 elapsed  about 3m25s left"
        );
        // A cell of bench ab runs on until it decides: the most its budget may add.
        assert_eq!(
            sweep_line(5, 12, s(188), Some(s(5)), Some(s(95)), false),
            "sweep 5/12 cells  00:03:08 elapsed  about 5s left, up to 1m35s more to decide"
        );
        assert_eq!(
            sweep_line(5, 12, s(200), None, None, true),
            "sweep 5/12 cells  00:03:20 elapsed  interrupted, 7 not done"
        );
        assert_eq!(
            sweep_line(12, 12, s(3700), None, None, false),
            "sweep 12/12 cells  01:01:40 elapsed  finished"
        );
    }

    #[test]
    fn the_estimate_learns_each_kind_of_work_apart_and_counts_down() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let predicted = Predicted {
            goldens: s(10),
            runs: s(300),
        };
        let mut c = SweepClock::new(3, 0, predicted, t0);
        c.unit_started(Work::Run, s(100), t0);
        // Unlearned: the model's own figure, counting down within the unit.
        assert_eq!(c.left(t0), s(310));
        assert_eq!(c.left(t0 + s(40)), s(270));
        // The unit over-ran: it never counts below what comes after it.
        assert_eq!(c.left(t0 + s(150)), s(210));

        // A golden the model thought 10 s long took 0.1 s: the goldens' factor is 0.01
        // (0.05 at the floor), and the runs, until one finishes, take it from them ...
        let mut c = SweepClock::new(3, 0, predicted, t0);
        c.unit_started(Work::Golden, s(10), t0);
        c.unit_finished(t0 + Duration::from_millis(100));
        assert_eq!(c.left(t0), s(15));
        // ... but one run that took its model's time puts the runs back at 1, whatever
        // the goldens did: what is left is the model's 200 s.
        c.unit_started(Work::Run, s(100), t0);
        c.unit_finished(t0 + s(100));
        assert_eq!(c.left(t0), s(200));
        // A run whose workers wait in a launcher's queue: the wait does not count down.
        c.unit_started(Work::Run, s(100), t0);
        c.unit_held(true, t0 + s(10));
        assert_eq!(c.left(t0 + s(60)), s(190), "10 s ran, then held");
        c.unit_held(false, t0 + s(60));
        assert_eq!(c.left(t0 + s(70)), s(180), "20 s ran in all");
        // A golden found ready took no work: forgotten, not learned from.
        let mut c = SweepClock::new(3, 0, predicted, t0);
        c.unit_started(Work::Golden, s(10), t0);
        c.unit_skipped();
        assert_eq!(c.left(t0 + s(5)), s(300));
        // A cell of bench ab runs on: its budget shows, counted down, beside the estimate.
        c.extending(Some(s(95)), t0);
        c.cell_finished();
        assert_eq!(
            c.line(t0 + s(5)),
            "sweep 1/3 cells  00:00:05 elapsed  about 5m00s left, up to 1m30s more to decide"
        );
        c.interrupted();
        assert!(c.line(t0 + s(5)).ends_with("interrupted, 2 not done"));
    }
}
