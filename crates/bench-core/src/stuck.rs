//! Clients a cleanup left behind: a client whose read (or write) failed on a file of
//! `__manifest` that is gone, after a cleanup of the cell ended, and whose every read (or
//! write) from then on failed. A warm `DirectoryNamespace` of lance 14.0.2 holds the version
//! it last read and asks only whether the next one exists before serving it again; once a
//! cleanup removed that next version (and the files of the one it holds), it serves a
//! version whose files are gone, read after read; a client that only writes meets the same
//! files when its commit counts what it holds (docs/findings/cleanup-gap.md).

use serde::{Deserialize, Serialize};

use crate::oplog::{Cleaned, Observed, Op, Outcome};
use crate::plan::Operation;

/// The clients of a run a cleanup left stuck (the record's `stuck_readers`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stuck {
    /// Readers stuck by the end of the run.
    pub readers: u64,
    /// Their reads that failed, from the first that failed on a file a cleanup removed.
    pub failed_reads: u64,
    /// Writers stuck by the end of the run: each write failed from the first that failed
    /// on a file a cleanup removed (absent: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub writers: u64,
    /// Their writes that failed from then on (absent: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_writes: u64,
    /// The first stuck client's first such operation, named (a reader's before a
    /// writer's): the version it held, the cleanup before it, how many of its operations
    /// failed after it.
    pub first: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Stuck {
    /// What it counts, in a few words: `STUCK READERS: 2 after a cleanup, 5 reads failed`,
    /// and the writers likewise.
    pub fn counts(&self) -> String {
        let mut parts = Vec::new();
        if self.readers > 0 {
            parts.push(format!(
                "STUCK READERS: {} after a cleanup, {} reads failed",
                self.readers, self.failed_reads
            ));
        }
        if self.writers > 0 {
            parts.push(format!(
                "STUCK WRITERS: {} after a cleanup, {} writes failed",
                self.writers, self.failed_writes
            ));
        }
        parts.join("; ")
    }
}

/// Where a version of `__manifest` keeps its files: its data, its indices, its deletions.
const FILES: [&str; 3] = [
    "__manifest/data/",
    "__manifest/_indices/",
    "__manifest/_deletions/",
];

/// Whether `err` says a file a version of `__manifest` names (a data, index or deletion
/// file) was not found — not its versions' folder, nor a version's manifest.
pub fn names_a_gone_file(err: &str) -> bool {
    let gone = ["NotFound", "Not found", "not found", "No such file"];
    gone_file(err).is_some() && gone.iter().any(|g| err.contains(g))
}

/// The file of a `__manifest` version an error names (`__manifest/data/….lance`), where it
/// names one.
pub fn gone_file(err: &str) -> Option<&str> {
    let at = FILES.iter().filter_map(|f| err.find(f)).min()?;
    let rest = &err[at..];
    let end = rest
        .find(|c: char| c == '"' || c == '\'' || c == ',' || c == '}' || c.is_whitespace())
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

fn ms(t: u64, t0: u64) -> f64 {
    t.saturating_sub(t0) as f64 / 1000.0
}

/// The clients a cleanup left stuck in `log`, times told from its first measured
/// operation's start; `None` where there are none.
pub fn of(log: &[Op]) -> Option<Stuck> {
    let measured = log.iter().filter(|o| !o.attempt.warm);
    let t0 = measured
        .filter_map(|o| o.attempt.at_us.map(|a| a[0]))
        .min()?;
    stuck(log, t0)
}

/// The clients a cleanup left stuck in `log`, times told from `t0_us`: readers (their
/// reads alone judged), then writers (their writes alone).
fn stuck(log: &[Op], t0_us: u64) -> Option<Stuck> {
    let measured = || log.iter().filter(|o| !o.attempt.warm);
    let cleanups: Vec<&Op> = measured()
        .filter(|o| o.operation == Operation::CleanupVersions && o.outcome == Outcome::Ok)
        .filter(|o| o.attempt.at_us.is_some())
        .collect();
    if cleanups.is_empty() {
        return None;
    }
    let mut stuck = Stuck::default();
    for writes in [false, true] {
        let mine = |o: &&Op| o.is_write() == writes && !o.operation.is_maintenance();
        let mut clients: Vec<u32> = measured().filter(mine).map(|o| o.client).collect();
        clients.sort_unstable();
        clients.dedup();
        for c in clients {
            let ops: Vec<&Op> = measured().filter(|o| o.client == c).filter(mine).collect();
            let Some(k) = first_stuck(&ops, &cleanups) else {
                continue;
            };
            let failed = (ops.len() - k) as u64;
            let (count, failed_ops) = match writes {
                false => (&mut stuck.readers, &mut stuck.failed_reads),
                true => (&mut stuck.writers, &mut stuck.failed_writes),
            };
            *count += 1;
            *failed_ops += failed;
            if stuck.first.is_empty() {
                stuck.first = said(ops[k], ops.len() - k - 1, &cleanups, t0_us);
            }
        }
    }
    (stuck.readers + stuck.writers > 0).then_some(stuck)
}

/// Where a client's operations (`ops`, all reads or all writes) stuck: its first that
/// failed on a gone file of `__manifest` after a cleanup ended, where none after it
/// succeeded.
fn first_stuck(ops: &[&Op], cleanups: &[&Op]) -> Option<usize> {
    let k = ops.iter().position(|o| {
        let failed =
            o.outcome != Outcome::Ok && o.attempt.err.as_deref().is_some_and(names_a_gone_file);
        let start = o.attempt.at_us.map_or(0, |a| a[0]);
        failed
            && cleanups
                .iter()
                .any(|c| c.attempt.at_us.is_some_and(|a| a[1] <= start))
    })?;
    (!ops[k..].iter().any(|o| o.outcome == Outcome::Ok)).then_some(k)
}

/// The first stuck read (or write), in words.
fn said(read: &Op, after: usize, cleanups: &[&Op], t0: u64) -> String {
    let start = read.attempt.at_us.map_or(0, |a| a[0]);
    let held = match read.attempt.manifest.and_then(|m| m.before) {
        Some(v) => format!("held v{v} of __manifest"),
        None => "held a version of __manifest".to_string(),
    };
    let cleanup = (cleanups.iter())
        .filter(|k| k.attempt.at_us.is_some_and(|a| a[1] <= start))
        .max_by_key(|k| k.attempt.at_us.map_or(0, |a| a[1]));
    let by = cleanup.map_or(String::new(), |k| {
        let removed = match k.observed {
            Observed::Cleaned(Cleaned { versions, .. }) => {
                format!(", removing {versions} versions")
            }
            _ => String::new(),
        };
        let end = k.attempt.at_us.map_or(0, |a| a[1]);
        format!(
            " after {} (ended at +{:.1} ms{removed})",
            k.name(),
            ms(end, t0)
        )
    });
    let file = read
        .attempt
        .err
        .as_deref()
        .and_then(gone_file)
        .unwrap_or("__manifest");
    let what = if read.is_write() { "write" } else { "read" };
    format!(
        "client {} {held}; its {} at +{:.1} ms failed: {file} is gone{by}; {after} {what}{} \
         after it failed too, none succeeded",
        read.client,
        read.operation,
        ms(start, t0),
        if after == 1 { "" } else { "s" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oplog::{ErrorClass, sample};
    use crate::versions::At;

    const LIST: Operation = Operation::ListTables { cold: false };
    const GONE: &str = "Failed to read batch: NotFound { uri: \"/r/__manifest/data/0101.lance\" }";

    fn read(client: u32, i: u64, at_ms: u64, ok: bool) -> Op {
        let outcome = if ok { Outcome::Ok } else { Outcome::Failed };
        let mut o = sample(client, LIST, i, "ns_0", outcome);
        o.attempt.at_us = Some([at_ms * 1000, at_ms * 1000 + 500]);
        if !ok {
            (o.attempt.class, o.attempt.err) = (Some(ErrorClass::Other), Some(GONE.to_string()));
            o.attempt.manifest = Some(At {
                before: Some(12),
                ..At::default()
            });
        }
        o
    }

    /// A reader whose reads fail on a gone file after a cleanup, to the end, is stuck; one
    /// that recovers, or that failed before any cleanup, is not; the first is named.
    #[test]
    fn a_reader_that_never_recovers_after_a_cleanup_is_stuck() {
        let mut cleanup = sample(9, Operation::CleanupVersions, 0, "", Outcome::Ok);
        cleanup.attempt.entry = None;
        cleanup.attempt.at_us = Some([90_000, 100_000]);
        cleanup.observed = Observed::Cleaned(Cleaned {
            versions: 7,
            ..Cleaned::default()
        });
        let log = vec![
            cleanup,
            read(1, 0, 50, true),
            read(1, 1, 150, false),
            read(1, 2, 250, false),
            read(1, 3, 350, false),
            // Recovers: not stuck.
            read(2, 0, 150, false),
            read(2, 1, 250, true),
            // Failed before any cleanup ended: not this.
            read(3, 0, 20, false),
        ];
        let s = stuck(&log, 0).unwrap();
        assert_eq!((s.readers, s.failed_reads), (1, 3), "{s:?}");
        assert_eq!(
            s.first,
            "client 1 held v12 of __manifest; its warm-read-list-tables at +150.0 ms failed: \
             __manifest/data/0101.lance is gone after worker 9's maintain-cleanup-versions #0 \
             (ended at +100.0 ms, removing 7 versions); 2 reads after it failed too, none \
             succeeded"
        );
        assert_eq!(of(&log[1..]), None, "no cleanup, no stuck reader");
        // A client that only writes, whose writes fail on a gone file after the cleanup to
        // the end: a stuck writer, counted apart and named after the readers.
        let write = |i: u64, at_ms: u64, ok: bool| {
            let mut w = read(4, i, at_ms, ok);
            w.operation = Operation::DeclareTable;
            w
        };
        let mut both = log.clone();
        both.extend([
            write(0, 10, true),
            write(1, 200, false),
            write(2, 300, false),
        ]);
        let s = stuck(&both, 0).unwrap();
        assert_eq!(
            (s.readers, s.failed_reads, s.writers, s.failed_writes),
            (1, 3, 1, 2)
        );
        assert!(s.first.starts_with("client 1 "), "{}", s.first);
        assert_eq!(
            s.counts(),
            "STUCK READERS: 1 after a cleanup, 3 reads failed; STUCK WRITERS: 1 after a \
             cleanup, 2 writes failed"
        );
        let writer_only: Vec<Op> = both.iter().filter(|o| o.client != 1).cloned().collect();
        let s = stuck(&writer_only, 0).unwrap();
        assert_eq!((s.readers, s.writers), (0, 1));
        assert!(
            s.first
                .contains("its write-declare-table at +200.0 ms failed")
                && s.first
                    .ends_with("1 write after it failed too, none succeeded"),
            "{}",
            s.first
        );
        assert_eq!(of(&log).unwrap().readers, 1);
        assert_eq!(
            gone_file("x \"/a/__manifest/_indices/u/i.idx\" y"),
            Some("__manifest/_indices/u/i.idx")
        );
    }
}
