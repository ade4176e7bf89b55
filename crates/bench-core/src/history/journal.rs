//! A history written as the run goes, as Jepsen writes its own: each operation's
//! invocation and completion appended to `history.jsonl` as its report reaches the
//! coordinator, on a thread of its own (the coordinator's loop only hands it lines), and
//! flushed whenever no line waits. A coordinator killed mid-cell leaves the history up to
//! its last report, which `bench check` reads ([`super::Header::journal`]). Once the run
//! has ended and been verified, the whole history replaces it ([`super::lines`]): sorted by
//! time, with every write looked up.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use super::{FORMAT, Header, VERSIONS_FILE, bound, kind, pair};
use crate::offsets::Offsets;
use crate::oplog::Op;

/// Where a run's history goes, and which run it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// Its `history.jsonl`.
    pub path: PathBuf,
    pub cell: String,
    pub repetition: u32,
    pub arm: Option<String>,
}

/// A run's history as it is written.
#[derive(Debug)]
pub struct Journal {
    target: Target,
    /// One more than the highest client id: processes are numbered as the whole history's.
    clients: u64,
    /// Operations of the log written so far.
    written: usize,
    /// Operations of the log looked at for kept times before the first line was written.
    scanned: usize,
    /// Time 0 of its events, once the first line is written.
    release_us: Option<u64>,
    /// Each client's operations that ended `info` so far.
    infos: BTreeMap<u32, u64>,
    index: u64,
    tx: Option<mpsc::Sender<String>>,
    thread: Option<std::thread::JoinHandle<Result<u64, String>>>,
}

impl Journal {
    /// A journal of a run whose clients have the ids `clients`; nothing is written until an
    /// operation that kept its times is reported (a cell that keeps no history writes none).
    pub fn new(target: Target, clients: impl IntoIterator<Item = u32>) -> Journal {
        Journal {
            target,
            clients: clients
                .into_iter()
                .map(|c| u64::from(c) + 1)
                .max()
                .unwrap_or(0),
            written: 0,
            scanned: 0,
            release_us: None,
            infos: BTreeMap::new(),
            index: 0,
            tx: None,
            thread: None,
        }
    }

    /// Hand the writer every operation of `log` not handed yet (the log grows only at its
    /// end); the first time one of them kept its times, the header first, from what the run
    /// knows by then (its hosts, its clients' clocks at `go`).
    pub fn catch_up(
        &mut self,
        log: &[Op],
        hosts: &BTreeSet<String>,
        clocks: &BTreeMap<u32, Offsets>,
    ) {
        let release_us = match self.release_us {
            Some(r) => r,
            None => {
                // Only the operations reported since the last call (none before them kept
                // its times): a cell that keeps no history looks at each operation once.
                let new = &log[self.scanned.min(log.len())..];
                self.scanned = log.len();
                let Some(first) = (new.iter())
                    .filter_map(|o| o.attempt.at_us.map(|a| a[0]))
                    .min()
                else {
                    return;
                };
                self.begin(first, hosts, clocks);
                first
            }
        };
        for o in &log[self.written..] {
            let n = self.infos.entry(o.client).or_default();
            let process = u64::from(o.client) + self.clients * *n;
            *n += u64::from(kind(o) == "info");
            let (mut invoke, mut done) = pair(o, process, release_us);
            (invoke.index, done.index) = (self.index, self.index + 1);
            self.index += 2;
            for e in [invoke, done] {
                self.send(serde_json::to_string(&e).expect("an event serialises"));
            }
        }
        self.written = log.len();
    }

    fn begin(
        &mut self,
        release_us: u64,
        hosts: &BTreeSet<String>,
        clocks: &BTreeMap<u32, Offsets>,
    ) {
        self.release_us = Some(release_us);
        let header = Header {
            bench_history: FORMAT,
            cell: self.target.cell.clone(),
            repetition: self.target.repetition,
            arm: self.target.arm.clone(),
            release_us,
            operations: 0,
            hosts: hosts.iter().cloned().collect(),
            clocks: (clocks.iter())
                .map(|(c, o)| (*c, [Some(bound(o.go)), None]))
                .collect(),
            paused_us: Vec::new(),
            chain_versions: None,
            journal: true,
        };
        let (tx, rx) = mpsc::channel();
        let path = self.target.path.clone();
        self.thread = Some(std::thread::spawn(move || writer(&path, rx)));
        self.tx = Some(tx);
        self.send(serde_json::to_string(&header).expect("a header serialises"));
    }

    fn send(&self, line: String) {
        if let Some(tx) = &self.tx {
            // The writer gone: it failed, and says why when closed.
            let _ = tx.send(line);
        }
    }

    /// Let the writer write what is left, and wait for it: the lines written, or why the
    /// journal could not be written (its run's history is then written whole at the end,
    /// or not at all).
    pub fn close(mut self) -> Result<u64, String> {
        drop(self.tx.take());
        match self.thread.take() {
            None => Ok(0),
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err("its writer panicked".to_string())),
        }
    }
}

/// The journal's writer: `path` made anew (an earlier run's `versions.jsonl` beside it
/// removed: it is no chain of this run), each line of `rx` appended with its hidden values
/// replaced, flushed whenever no line waits.
fn writer(path: &Path, rx: mpsc::Receiver<String>) -> Result<u64, String> {
    let failed = |e: std::io::Error, rx: mpsc::Receiver<String>| {
        // Drained, so that the run goes on unhindered to its end.
        rx.into_iter().for_each(drop);
        Err(format!("cannot write {}: {e}", path.display()))
    };
    let opened = (|| {
        let dir = path.parent().expect("a history has a folder");
        std::fs::create_dir_all(dir)?;
        match std::fs::remove_file(dir.join(VERSIONS_FILE)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        std::fs::File::create(path).map(std::io::BufWriter::new)
    })();
    let mut out = match opened {
        Ok(o) => o,
        Err(e) => return failed(e, rx),
    };
    let mut lines = 0u64;
    loop {
        let line = match rx.try_recv() {
            Ok(l) => l,
            Err(mpsc::TryRecvError::Disconnected) => break,
            Err(mpsc::TryRecvError::Empty) => {
                if let Err(e) = out.flush() {
                    return failed(e, rx);
                }
                match rx.recv() {
                    Ok(l) => l,
                    Err(_) => break,
                }
            }
        };
        let written = out
            .write_all(&crate::redact::hide_json(line.as_bytes(), true))
            .and_then(|_| out.write_all(b"\n"));
        if let Err(e) = written {
            return failed(e, rx);
        }
        lines += 1;
    }
    match out.flush() {
        Ok(()) => Ok(lines),
        Err(e) => failed(e, rx),
    }
}

impl crate::fold::Journal for Journal {
    fn catch_up(&mut self, log: &[Op], hosts: &BTreeSet<String>, clocks: &BTreeMap<u32, Offsets>) {
        Journal::catch_up(self, log, hosts, clocks)
    }

    fn close(self: Box<Self>) -> Result<u64, String> {
        Journal::close(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{check, read, sample_run};

    fn target(dir: &Path) -> Target {
        Target {
            path: dir.join("h").join(crate::history::HISTORY_FILE),
            cell: "c".to_string(),
            repetition: 1,
            arm: None,
        }
    }

    /// Reported one at a time, a run's operations are in the journal as they came; it reads
    /// back as the log they make, and `bench check` judges it, undecided at best: the run
    /// did not finish.
    #[test]
    fn a_journal_reads_back_as_the_operations_reported_so_far() {
        let dir = tempfile::tempdir().unwrap();
        let t = target(dir.path());
        std::fs::create_dir_all(t.path.parent().unwrap()).unwrap();
        let stale = t.path.parent().unwrap().join(VERSIONS_FILE);
        std::fs::write(&stale, "{}").unwrap();
        let run = sample_run(6);
        let mut j = Journal::new(t.clone(), [0, 1]);
        let mut log = Vec::new();
        for o in run.iter().take(9) {
            log.push(o.clone());
            j.catch_up(&log, &BTreeSet::new(), &BTreeMap::new());
        }
        assert_eq!(j.close(), Ok(1 + 2 * 9));
        assert!(!stale.exists(), "an earlier run's chain is left beside it");
        let text = std::fs::read_to_string(&t.path).unwrap();
        let saved = read(&text).unwrap();
        assert!(saved.header.journal);
        assert_eq!(saved.log.len(), 9);
        assert_eq!(saved.log, log, "read back as reported");
        let c = check::check(&saved, None);
        assert_eq!(c.status(), check::UNKNOWN, "{:?}", check::said(&c));
        assert!(check::said(&c).iter().any(|l| l.contains("did not finish")));
        // Cut mid-line, as a kill leaves it: the cut line is left out, the rest judged.
        let cut = &text[..text.len() - 20];
        let saved = read(cut).unwrap();
        assert_eq!(
            (saved.log.len(), saved.unfinished),
            (9, 1),
            "the cut one unknown"
        );
        // A whole history with a line cut short is refused as before.
        let whole = text.replace(",\"journal\":true", "");
        assert!(read(&whole[..whole.len() - 20]).is_err());
    }

    /// A journal that cannot be written says why when closed, and holds up nothing.
    #[test]
    fn a_journal_that_cannot_be_written_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-folder");
        std::fs::write(&file, "").unwrap();
        let mut j = Journal::new(
            Target {
                path: file.join("h").join("history.jsonl"),
                ..target(dir.path())
            },
            [0, 1],
        );
        let run = sample_run(3);
        for k in 1..=run.len() {
            j.catch_up(&run[..k], &BTreeSet::new(), &BTreeMap::new());
        }
        let err = j.close().unwrap_err();
        assert!(
            err.contains("cannot write") && err.contains("not-a-folder"),
            "{err}"
        );
    }

    /// A run none of whose operations kept its times writes nothing.
    #[test]
    fn nothing_is_written_before_an_operation_kept_its_times() {
        let dir = tempfile::tempdir().unwrap();
        let t = target(dir.path());
        let mut run = sample_run(2);
        for o in &mut run {
            o.attempt.at_us = None;
        }
        let mut j = Journal::new(t.clone(), [0, 1]);
        for k in 1..=run.len() {
            j.catch_up(&run[..k], &BTreeSet::new(), &BTreeMap::new());
        }
        assert_eq!(j.close(), Ok(0));
        assert!(!t.path.exists());
        // Timed ones after them: the journal begins there, with every operation before.
        let mut log = run.clone();
        log.extend(sample_run(2));
        let mut j = Journal::new(t.clone(), [0, 1]);
        for k in 1..=log.len() {
            j.catch_up(&log[..k], &BTreeSet::new(), &BTreeMap::new());
        }
        assert_eq!(j.close(), Ok(1 + 2 * 8));
        let saved = read(&std::fs::read_to_string(&t.path).unwrap()).unwrap();
        assert_eq!(saved.log.len(), 8);
    }

    /// A fold given a journal writes each operation as its report comes: before the cell
    /// ends, the history holds every operation reported so far.
    #[test]
    fn a_fold_writes_its_history_as_the_reports_come() {
        use crate::fold::{Fold, Runs};
        use crate::plan::Operation;
        use crate::protocol::{Event, OpReport};
        let dir = tempfile::tempdir().unwrap();
        let t = target(dir.path());
        let runs = [0, 1].map(|id| Runs::plain(id, Operation::CreateNamespace));
        let mut f = Fold::new(runs.to_vec(), None);
        f.journal(Box::new(Journal::new(t.clone(), [0, 1])));
        for w in 0..2 {
            f.event(
                w,
                Event::Ready {
                    versions: None,
                    host: None,
                    open_ms: None,
                    planted: Vec::new(),
                },
            );
        }
        for (k, o) in sample_run(3).into_iter().enumerate() {
            let mut r = OpReport::of(o.attempt, true);
            r.attempt.io = Some(Default::default());
            f.event(k % 2, Event::Op(Box::new(r)));
        }
        // The writer flushes whenever no line waits: the lines arrive without the cell
        // ending (waited for, up to 5 s).
        let lines = (0..1000)
            .map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(5));
                std::fs::read_to_string(&t.path).map_or(0, |t| t.lines().count())
            })
            .find(|&n| n == 1 + 2 * 6);
        assert_eq!(
            lines,
            Some(13),
            "the header and 6 operations' two events each"
        );
        let saved = read(&std::fs::read_to_string(&t.path).unwrap()).unwrap();
        assert!(saved.header.journal);
        assert_eq!(saved.log.len(), 6);
        for w in 0..2 {
            f.event(
                w,
                Event::Done {
                    elapsed_ms: 10.0,
                    io: Some(Default::default()),
                    rss_peak_kib: None,
                    stopped: None,
                    clock: None,
                },
            );
        }
        assert!(f.finish().unwrap().journal_error.is_none());
    }
}
