//! The pure part of running a cell: folding the workers' events (and their exits) into
//! what the cell measured, and deciding when to release them. No processes, no clock.

use crate::stats::{Latencies, Measured};
use crate::worker::Event;
use crate::worker::protocol::Versions;

/// What the driver must do after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    Continue,
    /// Every worker is ready: release them all now.
    Release,
    /// A worker died before release: the cell can never start; stop the others.
    Abort,
}

/// The state of a running cell as its workers' events arrive.
#[derive(Debug)]
pub(super) struct Fold {
    /// The worker id of each worker, by index.
    worker_ids: Vec<u32>,
    /// What every worker must report being, when checked.
    expected: Option<Versions>,
    m: Measured,
    per_worker: Vec<Latencies>,
    per_worker_reads: Vec<Latencies>,
    ready: usize,
    released: bool,
    done: Vec<bool>,
    failures: Vec<String>,
}

impl Fold {
    pub(super) fn new(worker_ids: Vec<u32>, expected: Option<Versions>) -> Fold {
        let n = worker_ids.len();
        Fold {
            worker_ids,
            expected,
            m: Measured::default(),
            per_worker: vec![Latencies::default(); n],
            per_worker_reads: vec![Latencies::default(); n],
            ready: 0,
            released: false,
            done: vec![false; n],
            failures: Vec::new(),
        }
    }

    /// One event of worker `idx`.
    pub(super) fn event(&mut self, idx: usize, event: Event) -> Action {
        match event {
            Event::Ready {
                warmup_ok,
                versions,
            } => {
                if let Some(want) = &self.expected
                    && versions.as_ref() != Some(want)
                {
                    let is = versions
                        .map_or("a build that reports no versions".into(), |v| v.to_string());
                    self.failures.push(format!(
                        "worker {idx} is {is}, not {want} as checked before the sweep started; \
                         was the worker binary replaced?"
                    ));
                    return Action::Abort;
                }
                self.ready += 1;
                self.m.warmup_committed += warmup_ok;
                if self.ready == self.worker_ids.len() && !self.released {
                    self.released = true;
                    return Action::Release;
                }
            }
            Event::Op {
                i,
                ms,
                ok,
                read,
                conflict,
                err,
            } => self.op(idx, i, ms, ok, read, conflict, err),
            Event::Done { elapsed_ms } => {
                self.done[idx] = true;
                self.m.window_ms = self.m.window_ms.max(elapsed_ms);
            }
        }
        Action::Continue
    }

    #[allow(clippy::too_many_arguments)]
    fn op(
        &mut self,
        idx: usize,
        i: u64,
        ms: f64,
        ok: bool,
        read: bool,
        conflict: bool,
        err: Option<String>,
    ) {
        let m = &mut self.m;
        if read {
            m.reads.attempts += 1;
            if ok {
                self.per_worker_reads[idx].record(ms);
            } else {
                m.reads.errors += 1;
                m.reads.first_error = m.reads.first_error.take().or(err);
            }
            return;
        }
        m.attempts += 1;
        if ok {
            self.per_worker[idx].record(ms);
            m.committed.push((self.worker_ids[idx], i));
        } else if conflict {
            m.conflicts += 1;
            m.first_conflict = m.first_conflict.take().or(err);
        } else {
            m.other_errors += 1;
            m.first_other_error = m.first_other_error.take().or(err);
        }
    }

    /// Worker `idx` printed something that is not an event.
    pub(super) fn garbage(&mut self, idx: usize, line: String) {
        self.failures
            .push(format!("worker {idx} printed an unexpected line: {line}"));
    }

    /// Worker `idx` exited; `status` describes how, `tail` is the end of its stderr.
    pub(super) fn exited(
        &mut self,
        idx: usize,
        success: bool,
        status: String,
        tail: String,
    ) -> Action {
        if success && self.done[idx] {
            return Action::Continue;
        }
        self.failures.push(format!(
            "worker {idx} exited with {status} before finishing{}",
            if tail.is_empty() {
                String::new()
            } else {
                format!("; its stderr ends with:\n{tail}")
            }
        ));
        if self.released {
            Action::Continue
        } else {
            Action::Abort
        }
    }

    pub(super) fn set_setup_ms(&mut self, ms: f64) {
        self.m.setup_ms = ms;
    }

    /// What the cell measured, or why it failed.
    pub(super) fn finish(mut self) -> Result<Measured, String> {
        if !self.failures.is_empty() {
            return Err(self.failures.join("\n"));
        }
        for (w, r) in self.per_worker.iter().zip(&self.per_worker_reads) {
            self.m.latencies.merge(w);
            self.m.reads.latencies.merge(r);
        }
        Ok(self.m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready(warmup_ok: u64) -> Event {
        Event::Ready {
            warmup_ok,
            versions: None,
        }
    }

    fn op(i: u64, ms: f64, ok: bool) -> Event {
        Event::Op {
            i,
            ms,
            ok,
            read: false,
            conflict: false,
            err: None,
        }
    }

    #[test]
    fn release_comes_once_when_every_worker_is_ready() {
        let mut f = Fold::new(vec![0, 1], None);
        assert_eq!(f.event(1, ready(2)), Action::Continue);
        assert_eq!(f.event(0, ready(1)), Action::Release);
        assert_eq!(f.event(0, ready(0)), Action::Continue);
        for idx in 0..2 {
            assert_eq!(
                f.event(idx, Event::Done { elapsed_ms: 1.0 }),
                Action::Continue
            );
            assert_eq!(
                f.exited(idx, true, "exit 0".into(), String::new()),
                Action::Continue
            );
        }
        assert_eq!(f.finish().unwrap().warmup_committed, 3);
    }

    #[test]
    fn events_fold_into_counts_classes_latencies_and_the_window() {
        let mut f = Fold::new(vec![7, 9], None);
        f.event(0, ready(0));
        f.event(1, ready(0));
        f.event(0, op(0, 2.0, true));
        f.event(1, op(0, 4.0, true));
        f.event(
            1,
            Event::Op {
                i: 1,
                ms: 9.0,
                ok: false,
                read: false,
                conflict: true,
                err: Some("c1".into()),
            },
        );
        f.event(
            1,
            Event::Op {
                i: 2,
                ms: 9.0,
                ok: false,
                read: false,
                conflict: true,
                err: Some("c2".into()),
            },
        );
        f.event(
            0,
            Event::Op {
                i: 1,
                ms: 9.0,
                ok: false,
                read: false,
                conflict: false,
                err: Some("boom".into()),
            },
        );
        f.event(
            0,
            Event::Op {
                i: 0,
                ms: 0.5,
                ok: true,
                read: true,
                conflict: false,
                err: None,
            },
        );
        f.event(
            0,
            Event::Op {
                i: 1,
                ms: 0.7,
                ok: false,
                read: true,
                conflict: false,
                err: Some("r".into()),
            },
        );
        f.event(0, Event::Done { elapsed_ms: 30.0 });
        f.event(1, Event::Done { elapsed_ms: 45.0 });
        f.set_setup_ms(12.0);
        let m = f.finish().unwrap();
        assert_eq!((m.attempts, m.conflicts, m.other_errors), (5, 2, 1));
        assert_eq!(m.first_conflict.as_deref(), Some("c1"));
        assert_eq!(m.first_other_error.as_deref(), Some("boom"));
        assert_eq!(m.committed, [(7, 0), (9, 0)], "worker ids, not indices");
        assert_eq!(m.latencies.summary().count, 2);
        assert_eq!(m.latencies.summary().max, 4.0);
        assert_eq!((m.reads.attempts, m.reads.errors), (2, 1));
        assert_eq!(m.reads.latencies.summary().count, 1);
        assert_eq!(m.window_ms, 45.0, "the slowest worker's window");
        assert_eq!(m.setup_ms, 12.0);
    }

    #[test]
    fn a_worker_lost_before_release_aborts_and_after_release_fails_the_cell() {
        let mut f = Fold::new(vec![0, 1], None);
        f.event(0, ready(0));
        assert_eq!(
            f.exited(1, false, "exit status: 1".into(), "oops".into()),
            Action::Abort
        );
        let err = f.finish().unwrap_err();
        assert!(
            err.contains("worker 1 exited with exit status: 1") && err.contains("oops"),
            "{err}"
        );

        let mut f = Fold::new(vec![0], None);
        f.event(0, ready(0));
        f.event(0, op(0, 1.0, true));
        // Exit 0 without `done` is a failure too.
        assert_eq!(
            f.exited(0, true, "exit status: 0".into(), String::new()),
            Action::Continue
        );
        assert!(f.finish().is_err());

        let mut f = Fold::new(vec![0], None);
        f.garbage(0, "hello".into());
        assert!(f.finish().unwrap_err().contains("unexpected line: hello"));
    }

    #[test]
    fn a_worker_of_another_build_stops_the_cell_before_release() {
        let own = Versions::own();
        let mut f = Fold::new(vec![0, 1], Some(own.clone()));
        let ok = Event::Ready {
            warmup_ok: 0,
            versions: Some(own.clone()),
        };
        assert_eq!(f.event(0, ok), Action::Continue);
        let other = Versions {
            lance: "0.0.1".into(),
            ..own
        };
        let stranger = Event::Ready {
            warmup_ok: 0,
            versions: Some(other),
        };
        assert_eq!(f.event(1, stranger), Action::Abort);
        let err = f.finish().unwrap_err();
        assert!(
            err.contains("worker 1 is bench") && err.contains("lance 0.0.1"),
            "{err}"
        );
        let mut f = Fold::new(vec![0], Some(Versions::own()));
        assert_eq!(f.event(0, ready(0)), Action::Abort);
        assert!(f.finish().unwrap_err().contains("reports no versions"));
    }
}
