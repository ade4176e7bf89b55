//! A fault campaign's point judged from its record alone (`[campaign]`,
//! `plan::campaign`): its class and the witness that shows it ([`judge`]). `summary.csv`
//! gives each point its class; `report::campaign` draws them as the matrix.

use std::fmt::Write as _;

use crate::export::Record;
use crate::plan::campaign::{FaultKind, Point};

/// How a point ended, worst last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// The fault did not meet a request (the run made fewer; not a HEAD): nothing judged.
    NotReached,
    /// Every write acknowledged, present.
    Safe,
    /// A write whose outcome the client could not know, looked up in the copy.
    UnknownResolved,
    /// A write answered with an error, nothing lost, the catalog sound.
    ErrorSurfaced,
    /// A write whose outcome could not be told from the copy.
    Undecided,
    /// A read saw what the writes deny (the consistency checker's anomalies: a read that
    /// missed a write acknowledged before it began, a phantom, an entry listed twice, a
    /// version out of order), the copy itself sound.
    Anomaly,
    /// No later operation of the worker succeeded.
    Stuck,
    /// The copy holds other than its writes say (an entry twice, one not written).
    Wrong,
    /// An acknowledged write is gone.
    Lost,
    /// No client can read the catalog.
    Unreadable,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::NotReached => "not reached",
            Class::Safe => "safe",
            Class::UnknownResolved => "unknown resolved",
            Class::ErrorSurfaced => "error surfaced",
            Class::Undecided => "undecided",
            Class::Anomaly => "ANOMALY",
            Class::Stuck => "STUCK",
            Class::Wrong => "WRONG",
            Class::Lost => "LOST",
            Class::Unreadable => "UNREADABLE",
        }
    }

    /// Its mark in the matrix.
    pub fn mark(self) -> &'static str {
        match self {
            Class::NotReached => "·",
            Class::Safe => "ok",
            Class::UnknownResolved => "u",
            Class::ErrorSurfaced => "e",
            Class::Undecided => "?",
            Class::Anomaly => "ANOM",
            Class::Stuck => "STUCK",
            Class::Wrong => "WRONG",
            Class::Lost => "LOST",
            Class::Unreadable => "UNREAD",
        }
    }

    /// A finding: what a catalog must never do.
    pub fn red(self) -> bool {
        self >= Class::Anomaly
    }
}

/// A witness as one line of at most 240 characters (a store's error may run to pages).
fn one_line(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.chars().count() {
        0..=240 => line,
        _ => format!("{}…", line.chars().take(239).collect::<String>()),
    }
}

/// A point's class and its witness (what in the record shows it, on one line); `None`: the
/// record is no campaign's point.
pub fn judge(r: &Record) -> Option<(Class, String)> {
    let (class, witness) = judged(r)?;
    // A red point of a pause names what ran while its worker was held: the finding is the
    // catalog's under that load, and a reader must see it.
    let held = (r.attached.fault.as_ref())
        .and_then(|f| f.while_paused.as_ref())
        .filter(|_| class.red());
    let witness = match held {
        Some(w) => format!(
            "{} (while the worker was held: {})",
            one_line(&witness),
            held_line(w)
        ),
        None => one_line(&witness),
    };
    Some((class, witness))
}

/// What ran while a pause point held its worker, in a few words.
pub fn held_line(w: &crate::plan::campaign::WhilePaused) -> String {
    let mut out = format!("{} of {} commits by another client", w.others_ok, w.others);
    match (&w.cleaned_versions, &w.cleanup_error) {
        (Some(v), _) => {
            let _ = write!(out, ", then a cleanup keeping 1 version removed {v}");
        }
        (None, Some(e)) => {
            let _ = write!(out, ", then a cleanup that failed: {}", one_line(e));
        }
        (None, None) => {}
    }
    if let Some(e) = &w.others_error {
        let _ = write!(out, "; the other client: {}", one_line(e));
    }
    out
}

fn judged(r: &Record) -> Option<(Class, String)> {
    let met = r.attached.fault.as_ref()?;
    let point = Point::parse(&met.point).ok()?;
    if !r.verified {
        let err = r.verify_error.clone().unwrap_or_default();
        let class = if err.starts_with("cannot read the cell's __manifest")
            || err.contains("which is gone")
        {
            Class::Unreadable
        } else if err.contains(" missing, expected") {
            Class::Lost
        } else {
            Class::Wrong
        };
        return Some((class, err));
    }
    if point.kind.is_some() && met.fired_at.is_none() {
        let why = match met.requests.get(point.at as usize - 1) {
            None => format!(
                "the run made {} requests; request {} never came",
                met.requests.len(),
                point.at
            ),
            Some(q) => format!("request {} was a {} of {}", point.at, q.method, q.key),
        };
        return Some((Class::NotReached, why));
    }
    if let Some(e) = met.new_client.as_deref().filter(|e| *e != "ok") {
        return Some((
            Class::Stuck,
            format!("a client opened after the run could not write: {e}"),
        ));
    }
    let killed = point.kind.is_some_and(FaultKind::kills);
    // Stuck only where the store answered again before the run ended (a request after the
    // last one the fault met; of the same key, where the fault answers that key's later
    // requests): a worker whose every operation met the fault is not stuck.
    let last_met = met.requests.iter().rposition(|q| q.fault.is_some());
    let keyed = point.kind.is_some_and(FaultKind::keyed);
    let answered_after = last_met.is_none_or(|i| {
        let key = &met.requests[i].key;
        (met.requests[i + 1..].iter()).any(|q| !keyed || q.key == *key)
    });
    if !killed && answered_after && r.total_operations == 0 && r.attempts >= 2 {
        return Some((
            Class::Stuck,
            format!(
                "none of the worker's {} operations succeeded after the fault: {}",
                r.attempts,
                first_error(r).unwrap_or("no error recorded")
            ),
        ));
    }
    // A client whose every operation failed, from one after a cleanup on, on a file the
    // cleanup removed: stuck though an operation before it succeeded.
    if let Some(s) = r.stuck_readers.as_ref() {
        return Some((
            Class::Stuck,
            format!("a cleanup left a client stuck: {}", s.first),
        ));
    }
    // What a read showed against what was written: a reader the catalog served silently
    // stale (no error) is no safe point.
    if let Some(c) = r.consistency.as_ref().filter(|c| c.anomalies() > 0) {
        let first = c.first_violation.as_deref().unwrap_or("none named");
        let witness = format!("{} anomalies of reads, the first: {first}", c.anomalies());
        return Some((Class::Anomaly, witness));
    }
    let outcomes = r.outcomes.clone().unwrap_or_default();
    if outcomes.unknown > outcomes.unknown_landed + outcomes.unknown_not_landed {
        return Some((Class::Undecided, outcomes.first_unknown.unwrap_or_default()));
    }
    if outcomes.unknown > 0 {
        return Some((
            Class::UnknownResolved,
            outcomes.first_unknown.unwrap_or_default(),
        ));
    }
    if r.errors > 0 {
        let err = first_error(r).unwrap_or("an error");
        return Some((Class::ErrorSurfaced, err.to_string()));
    }
    Some((
        Class::Safe,
        format!(
            "{} operations, every one acknowledged and present",
            r.attempts
        ),
    ))
}

fn first_error(r: &Record) -> Option<&str> {
    [
        &r.first_other_error,
        &r.first_throttled_error,
        &r.first_network_error,
        &r.first_timeout_error,
        &r.first_conflict_error,
    ]
    .into_iter()
    .find_map(|e| e.as_deref())
}
