//! `bench check`: a saved history judged again, offline, by the checkers that judged it as
//! the run ended — what readers saw ([`crate::measured::Measured::consistency`]), how its
//! writes ended ([`crate::audit::Outcomes`]) and, where the copy's chain of versions was
//! kept, the chain held against the commits ([`crate::audit::chain_findings`]).

use serde::Serialize;

use super::Saved;
use crate::audit::Outcomes;
use crate::consistency::Consistency;
use crate::oplog::{Op, Outcome};
use crate::versions::Chain;

/// Exit statuses of `bench check`: valid, anomalies found, something undecided, bad input.
pub const VALID: u8 = 0;
pub const ANOMALIES: u8 = 1;
pub const UNKNOWN: u8 = 2;
pub const BAD_INPUT: u8 = 3;

/// What `bench check` found in a history.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Checked {
    pub cell: String,
    pub repetition: u32,
    pub operations: u64,
    /// Operations invoked and never completed (their worker died with them in flight).
    pub unfinished: u64,
    /// What readers saw, as the record's `consistency` has it (absent: the history has no
    /// reads that observe a commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consistency: Option<Consistency>,
    /// How the writes ended, as the record's `outcomes` has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<Outcomes>,
    /// The copy's versions held against the commits (absent: no `versions.jsonl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_versions: Option<u64>,
    /// Where the chain and the commits disagree, the first disagreement named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_error: Option<String>,
    /// Writes whose effect neither their answer nor the copy told, named.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undecided: Vec<String>,
    /// The history was written as the run went and the run did not finish
    /// ([`super::Header::journal`]): valid is never its verdict, only anomalies or undecided.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub journal: bool,
}

impl Checked {
    /// Anomalies: what readers saw that they should not have, and disagreements of the
    /// chain with the commits.
    pub fn anomalies(&self) -> u64 {
        let seen = match (&self.consistency, self.journal) {
            (None, _) => 0,
            (Some(c), false) => c.anomalies(),
            // A journal lacks the operations in flight when its run stopped: an entry seen
            // that no write in it made, a version no commit in it made, may be theirs. Only
            // what the reads present show among themselves and the writes present counts.
            (Some(c), true) => c.stale_reads + c.monotonic_violations + c.duplicates,
        };
        seen + u64::from(self.chain_error.is_some())
    }

    /// The exit status: anomalies first, then what could not be decided.
    pub fn status(&self) -> u8 {
        match (self.anomalies(), self.undecided.is_empty() && !self.journal) {
            (n, _) if n > 0 => ANOMALIES,
            (_, false) => UNKNOWN,
            _ => VALID,
        }
    }

    /// The first violation, named with its witness.
    pub fn first_violation(&self) -> Option<String> {
        // None where nothing counts as an anomaly (a journal's phantoms, say).
        if self.anomalies() == 0 {
            return None;
        }
        let seen = (self.consistency.as_ref())
            .filter(|c| c.anomalies() > 0)
            .and_then(|c| {
                c.first_violation.clone().or_else(|| {
                    (c.order.as_ref())
                        .and_then(|o| o.first())
                        .map(str::to_string)
                })
            });
        seen.or_else(|| self.chain_error.clone())
    }
}

/// Whether `chain` holds every version after its first, each with what it changed: only
/// then does an entry found in no change mean its write did not land (a cleanup's gap may
/// have taken the very version that made it).
fn complete(chain: &Chain) -> bool {
    let consecutive = (chain.versions.iter())
        .zip(chain.first + 1..)
        .all(|(&v, want)| v == want);
    let told: std::collections::BTreeSet<u64> = chain.changes.iter().map(|c| c.version).collect();
    consecutive && chain.versions.iter().all(|v| told.contains(v))
}

/// Resolve each write of `log` that did not succeed and that the run left unresolved (an
/// operation whose worker died with it in flight) against `chain`: landed where a version
/// of the copy added (or removed) its entry; not landed where no version did and the chain
/// is [`complete`]; left undecided where it has gaps.
fn resolve(log: &mut [Op], chain: &Chain) {
    let changed = |id: &str, added: bool| {
        (chain.changes.iter()).any(|c| match added {
            true => c.added.iter().any(|a| a == id),
            false => c.removed.iter().any(|r| r == id),
        })
    };
    let whole = complete(chain);
    for op in log.iter_mut() {
        if op.outcome == Outcome::Ok || op.landed.is_some() {
            continue;
        }
        if let Some((id, sign)) = op.catalog_effect() {
            op.landed = match changed(id, sign > 0) {
                true => Some(true),
                false => whole.then_some(false),
            };
        }
    }
}

/// Judge `saved` (with the copy's `chain`, where it was kept) as the run's checkers did.
pub fn check(saved: &Saved, chain: Option<&Chain>) -> Checked {
    let h = &saved.header;
    let mut m = crate::measured::Measured {
        log: saved.log.clone(),
        hosts: h.hosts.iter().cloned().collect(),
        clocks: super::clocks(h),
        paused_us: h.paused_us.clone(),
        ..Default::default()
    };
    if let Some(chain) = chain {
        resolve(&mut m.log, chain);
    }
    let chain_error = chain.and_then(|c| crate::audit::chain_findings(&m.log, c));
    let undecided = (m.log.iter())
        .filter(|o| o.is_write() && o.outcome == Outcome::Unknown && o.landed.is_none())
        .map(|o| format!("{} ({})", o.name(), o.said()))
        .collect();
    Checked {
        cell: h.cell.clone(),
        repetition: h.repetition,
        operations: saved.log.len() as u64,
        unfinished: saved.unfinished,
        consistency: m.consistency(h.chain_versions),
        outcomes: Outcomes::of(&m.log),
        chain_versions: chain.map(|c| c.versions.len() as u64),
        chain_error,
        undecided,
        journal: h.journal,
    }
}

/// What `bench check` prints of `c`.
pub fn said(c: &Checked) -> Vec<String> {
    let mut out = vec![format!(
        "cell {}, repetition {}: {}{}",
        c.cell,
        c.repetition,
        crate::plan::count(c.operations, "operation", "operations"),
        match c.unfinished {
            0 => String::new(),
            n => format!(" ({n} invoked and never completed: unknown)"),
        }
    )];
    if let Some(o) = &c.outcomes {
        out.push(format!(
            "writes: {} ok, {} failed, {} unknown ({} landed, {} did not)",
            o.ok, o.failed, o.unknown, o.unknown_landed, o.unknown_not_landed
        ));
    }
    match &c.consistency {
        Some(k) => out.push(format!(
            "readers: {} reads checked, {} stale, {} monotonic violations, {} phantoms, {} \
             duplicates, {} version-order violations",
            k.reads,
            k.stale_reads,
            k.monotonic_violations,
            k.phantoms,
            k.duplicates,
            k.order.as_ref().map_or(0, |o| o.violations())
        )),
        None => out.push("readers: no read observes a commit; nothing to check".to_string()),
    }
    match (c.chain_versions, &c.chain_error) {
        (None, _) => out.push("chain: not kept (no versions.jsonl); not checked".to_string()),
        (Some(n), None) => out.push(format!(
            "chain: {} held against the commits: they agree",
            crate::plan::count(n, "version", "versions")
        )),
        (Some(_), Some(e)) => out.push(format!("chain: {e}")),
    }
    if c.journal {
        out.push(
            "journal: written as the run went, and the run did not finish (its coordinator \
             stopped): it ends at the last report that came, no write in it was looked up on \
             the copy, and phantoms and version-order violations are not counted as anomalies \
             (the operations in flight at the end are not in it)"
                .to_string(),
        );
    }
    for u in c.undecided.iter().take(3) {
        out.push(format!("undecided: {u}"));
    }
    out.push(match (c.status(), c.first_violation()) {
        (ANOMALIES, v) => format!(
            "ANOMALIES ({}): first: {}",
            c.anomalies(),
            v.unwrap_or_default()
        ),
        (UNKNOWN, _) if c.undecided.is_empty() => {
            "UNKNOWN: no anomaly in what the run wrote before it stopped".to_string()
        }
        (UNKNOWN, _) => format!(
            "UNKNOWN: {} whose effect the history does not tell",
            crate::plan::count(c.undecided.len() as u64, "write", "writes")
        ),
        _ => "valid".to_string(),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An unknown write whose entry no kept version added is `not landed` only where the
    /// chain has every version after its first with its changes; after a gap (a cleanup
    /// took versions) it stays undecided.
    #[test]
    fn a_chain_with_gaps_leaves_an_unknown_write_undecided() {
        use crate::versions::Change;
        let whole = Chain {
            first: 4,
            versions: vec![5, 6],
            changes: vec![
                Change {
                    version: 5,
                    ..Default::default()
                },
                Change {
                    version: 6,
                    ..Default::default()
                },
            ],
        };
        assert!(complete(&whole));
        let gap = Chain {
            versions: vec![6],
            changes: vec![],
            ..whole.clone()
        };
        assert!(!complete(&gap));
        let untold = Chain {
            changes: vec![Change {
                version: 6,
                ..Default::default()
            }],
            ..whole.clone()
        };
        assert!(!complete(&untold));
    }
}
