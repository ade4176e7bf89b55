//! What a worker's operations showed and when: a listing's creations seen, the shared
//! table's version, each operation on the wall clock, and the traced operations with their
//! requests (`--trace`).

use std::time::Instant;

use super::{Session, protocol};
use crate::catalog::{self, counting::Timed};
use crate::plan::{Entry, Names, Operation};
use crate::trace::{TracedOp, TracedRequest};

impl Session {
    /// What an operation showed, as the history keeps it, into its report: of a listing of
    /// its namespace (`report.target`), what it saw of each writer's creations of this run,
    /// the names it listed more than once, and (a role's listing of tables, where tables are
    /// removed) the golden's tables there it did not see; of the shared table, its version.
    pub(super) fn observe(
        &self,
        op: Operation,
        observed: catalog::Shown,
        report: &mut protocol::OpReport,
    ) {
        match observed {
            catalog::Shown::Names(names) => {
                let tables = op.describe().names == Names::Lists(Entry::Table);
                report.gone = match (&self.role, report.attempt.entry.as_deref()) {
                    (Some(client), Some(namespace)) if tables => {
                        (client.lock().expect("role client").targets).gone(namespace, &names)
                    }
                    _ => None,
                };
                report.seen = Some(bench_core::oplog::seen(&names, &self.args.names));
                let mut once = std::collections::HashSet::new();
                let twice: Vec<String> = (names.iter())
                    .filter(|n| !once.insert(*n))
                    .cloned()
                    .collect();
                report.twice = (!twice.is_empty()).then_some(twice);
            }
            catalog::Shown::Version(v) => report.version = Some(v),
            catalog::Shown::Cleaned(c) => report.cleaned = Some(c),
            catalog::Shown::Nothing => {}
        }
    }

    /// A moment on the host's monotonic clock, in µs ([`crate::host_clock`]): the clock of
    /// the operations' and requests' times.
    pub(super) fn clock_us(&self, t: Instant) -> u64 {
        self.anchor.us(t)
    }

    /// Keep traced operation `i` of kind `op` with its requests; after the last one, keys
    /// are no longer kept.
    pub(super) fn trace(
        &self,
        op: Operation,
        i: u64,
        ok: bool,
        (start, end): (Instant, Instant),
        requests: Vec<Timed>,
    ) {
        let us = |t: Instant| self.clock_us(t);
        let requests = requests
            .into_iter()
            .filter(|r| r.end >= start && r.start <= end)
            .map(|r| TracedRequest {
                kind: r.kind.to_string(),
                path: r.path.unwrap_or_default(),
                bytes: r.bytes,
                start_us: us(r.start.max(start)),
                end_us: us(r.end.min(end)),
            })
            .collect();
        let mut traced = self.traced.lock().expect("traced");
        traced.push(TracedOp {
            name: op.to_string(),
            i,
            ok,
            outcome: None,
            start_us: us(start),
            end_us: us(end),
            requests,
        });
        if traced.len() >= self.args.trace as usize {
            self.counters
                .tracing
                .store(false, std::sync::atomic::Ordering::Relaxed);
        }
    }
}
