//! The history the checker reads, projected off the operation log: each operation that
//! commits or observes a commit, with its client, its times, its outcome as far as the copy
//! told it, and what it saw; and why the operations whose `__manifest` version is not known
//! have none.

use crate::oplog::{Observed, Seen, created_index};
use crate::plan::{Entry, Names};
use crate::versions::Page;

/// One operation of the history.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    pub client: u32,
    /// Wall clock, µs since the epoch.
    pub start_us: u64,
    pub end_us: u64,
    pub what: What,
    /// The `__manifest` version its commit made or its read served, where its requests
    /// named it ([`crate::versions`]); a read through `bench serve` served one from it to
    /// `version_to`.
    pub version: Option<u64>,
    pub version_to: Option<u64>,
}

/// How a commit of the history ended, as reads must see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Acknowledged,
    /// Not acknowledged, yet it may have landed: its outcome unknown (abandoned at its
    /// timeout, its reply lost, its worker killed, an error after its effect), or an error
    /// whose effect the copy showed all the same. `landed`: what the copy showed after the
    /// cell (`None`: not looked up).
    Indeterminate {
        landed: Option<bool>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum What {
    /// The client's `n`-th creation, entry `id` (a table, or a namespace).
    Created {
        id: String,
        n: u64,
        table: bool,
        outcome: Outcome,
    },
    /// The removal of the golden's entry `id` (a table, or a namespace).
    Removed {
        id: String,
        table: bool,
        outcome: Outcome,
    },
    /// A listing of `namespace`'s tables (`tables`) or namespaces: what it saw of each
    /// writer's creations of that kind, and the golden's tables there it did not see (ids;
    /// `None`: not told, e.g. in a mixed cell or of namespaces).
    Listed {
        namespace: String,
        tables: bool,
        seen: Vec<Seen>,
        gone: Option<Vec<String>>,
        /// A listing in more than one page: each page's range and version (else empty).
        pages: Vec<Page>,
    },
    /// A look-up of entry `id` (describe, exists): whether it was there.
    Probed { id: String, found: bool },
    /// The shared table's version: one an acknowledged commit made (`commit`), or one a
    /// read returned as the latest.
    Versioned { version: u64, commit: bool },
}

impl What {
    /// A listing, a look-up, or a read of the shared table's version.
    pub fn is_read(&self) -> bool {
        matches!(
            self,
            What::Listed { .. } | What::Probed { .. } | What::Versioned { commit: false, .. }
        )
    }

    /// The commit's entry and outcome, for a creation or a removal.
    pub(super) fn commit(&self) -> Option<(&str, Outcome)> {
        match self {
            What::Created { id, outcome, .. } | What::Removed { id, outcome, .. } => {
                Some((id, *outcome))
            }
            What::Listed { .. } | What::Probed { .. } | What::Versioned { .. } => None,
        }
    }
}

/// The history the checker reads, from a cell's operation log: its measured operations that
/// kept their times (a role's client's, a mixed cell's) — every creation and removal that
/// took effect or may have (a failure looked up and found not landed is left out), every
/// listing with what it saw, every look-up (found, or not found), every version of the
/// shared table an acknowledged commit made or a read returned.
pub fn history(log: &[crate::oplog::Op]) -> Vec<Op> {
    log.iter()
        .filter(|o| !o.attempt.warm)
        .filter_map(event)
        .collect()
}

/// One record of the log as an event of the history, if it is one.
fn event(o: &crate::oplog::Op) -> Option<Op> {
    use crate::oplog::Outcome as Logged;
    let [start_us, end_us] = o.attempt.at_us?;
    let ok = o.outcome == Logged::Ok;
    let at = |what| Op {
        client: o.client,
        start_us,
        end_us,
        version: o.attempt.manifest.and_then(|m| m.made.or(m.served)),
        version_to: o
            .attempt
            .manifest
            .filter(|m| m.made.is_none())
            .and_then(|m| m.served_to),
        what,
    };
    // The shared table's version a commit made or a read returned.
    if let (Observed::Version(version), true) = (&o.observed, ok) {
        let commit = o.is_write();
        return Some(at(What::Versioned {
            version: *version,
            commit,
        }));
    }
    let id = o.attempt.entry.clone()?;
    // A commit acknowledged, or one that may have taken effect (its outcome unknown, or an
    // error whose effect the copy showed).
    let outcome = || match (o.outcome, o.landed) {
        (Logged::Ok, _) => Some(Outcome::Acknowledged),
        (Logged::Unknown, landed) => Some(Outcome::Indeterminate { landed }),
        (Logged::Failed, Some(true)) => Some(Outcome::Indeterminate { landed: Some(true) }),
        (Logged::Failed, _) => None,
    };
    let what = match o.operation.describe().names {
        // A listing says what it saw of the creations of its kind.
        Names::Lists(kind) => match &o.observed {
            Observed::Listed {
                seen, gone, pages, ..
            } if ok => {
                let pages = pages.clone();
                // Its versions: from the least any page served to the greatest.
                let lo = pages.iter().filter_map(|p| p.served()).map(|s| s.0).min();
                let hi = pages.iter().filter_map(|p| p.served()).map(|s| s.1).max();
                let paged = !pages.is_empty();
                let mut op = at(What::Listed {
                    namespace: id,
                    tables: kind == Entry::Table,
                    seen: seen.clone(),
                    gone: gone.clone(),
                    pages,
                });
                if paged {
                    op.version = lo;
                    op.version_to = hi.filter(|&h| lo.is_some_and(|l| h > l));
                }
                return Some(op);
            }
            Observed::Listed { .. }
            | Observed::Version(_)
            | Observed::Cleaned(_)
            | Observed::Nothing => return None,
        },
        Names::ReadsGolden(_) => {
            let not_found = o.attempt.class == Some(crate::oplog::ErrorClass::NotFound);
            if !(ok || not_found) {
                return None;
            }
            What::Probed { id, found: ok }
        }
        Names::Creates(kind, _) => {
            let leaf = id.rsplit('$').next().unwrap_or_default();
            let (_, n, _) = created_index(leaf)?;
            What::Created {
                id,
                n,
                table: kind == Entry::Table,
                outcome: outcome()?,
            }
        }
        Names::RemovesGolden(kind) => What::Removed {
            id,
            table: kind == Entry::Table,
            outcome: outcome()?,
        },
        Names::Property | Names::Root => return None,
    };
    Some(at(what))
}

/// Why the operations of `log`'s history whose version is not known have none, and how many
/// of each (none: every one's is known).
pub fn unknown_versions(
    log: &[crate::oplog::Op],
) -> Option<std::collections::BTreeMap<String, u64>> {
    let mut why: std::collections::BTreeMap<String, u64> = Default::default();
    for o in log.iter().filter(|o| !o.attempt.warm) {
        let Some(e) = event(o) else { continue };
        let pages_unknown = match &e.what {
            What::Listed { pages, .. } => pages.iter().any(|p| p.served().is_none()),
            _ => false,
        };
        if (e.version.is_some() && !pages_unknown) || matches!(e.what, What::Versioned { .. }) {
            continue;
        }
        let read = e.what.is_read();
        let said = match o.attempt.manifest {
            _ if e.version.is_some() => {
                "a listing in pages, a page of which named no version it served (one that loaded \
                 a newer version unseen on local disk, bounded by no later probe)"
            }
            None => {
                "no version told: no request of its own named one, and no server did (a read \
                 through an external server; a catalog not yet created has none)"
            }
            Some(m) if read && (m.call.is_some() || m.ticket.is_some()) => {
                "a read through a server on local disk that loaded a version unseen meanwhile, \
                 and no later probe of it bounded the version (its last reads of the cell)"
            }
            Some(m) if read && m.at_least.is_some() => {
                "a read that loaded a newer version unseen (local disk), named by no later \
                 operation of its client"
            }
            Some(_) if read => "a read whose requests named no version it served",
            Some(_) if o.outcome == crate::oplog::Outcome::Unknown => {
                "a commit whose outcome is unknown, no write of a version seen to succeed"
            }
            Some(_) => "a commit with no write of a version seen to succeed",
        };
        *why.entry(said.to_string()).or_default() += 1;
    }
    (!why.is_empty()).then_some(why)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACK: Outcome = Outcome::Acknowledged;

    /// The history is read off the log: each write that took effect or may have (as the
    /// copy showed it), each listing with what it saw of its kind, each look-up found or not
    /// found; the warm-up, records without times, and failures that did not land stay out.
    /// A listing in pages keeps each page's range and version; as one operation it served
    /// from the least of its pages' versions to the greatest.
    #[test]
    fn a_listing_in_pages_keeps_each_page_s_version() {
        use crate::oplog::{Observed, Outcome as Logged, sample};
        use crate::versions::{At, Page};
        let page = |through: Option<&str>, served, served_to| Page {
            through: through.map(str::to_string),
            at: Some(At {
                served,
                served_to,
                ..At::default()
            }),
        };
        let listing = {
            let mut o = sample(
                0,
                crate::plan::Operation::ListTables { cold: false },
                0,
                "ns_0",
                Logged::Ok,
            );
            o.attempt.at_us = Some([1_000, 2_000]);
            o.observed = Observed::Listed {
                seen: vec![],
                gone: None,
                twice: vec![],
                pages: vec![
                    page(Some("b"), Some(7), None),
                    page(Some("d"), None, None),
                    page(None, Some(8), Some(10)),
                ],
            };
            o
        };
        let h = history(&[listing]);
        assert_eq!((h[0].version, h[0].version_to), (Some(7), Some(10)));
        let What::Listed { pages, .. } = &h[0].what else {
            panic!("a listing")
        };
        let got: Vec<_> = (pages.iter())
            .map(|p| {
                (
                    p.through.as_deref(),
                    p.at.and_then(|a| a.served),
                    p.at.and_then(|a| a.served_to),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (Some("b"), Some(7), None),
                (Some("d"), None, None),
                (None, Some(8), Some(10))
            ]
        );
    }

    #[test]
    fn the_history_is_read_off_the_operation_log() {
        use crate::oplog::{ErrorClass, Observed, Outcome as Logged, sample};
        use crate::plan::Operation;
        let at = |mut o: crate::oplog::Op, landed| {
            (o.attempt.at_us, o.landed) = (Some([1_000, 2_000]), landed);
            o
        };
        let listing = {
            let mut o = sample(
                1,
                Operation::ListNamespaces { cold: false },
                0,
                "ns_0",
                Logged::Ok,
            );
            o.observed = Observed::Listed {
                seen: vec![],
                gone: None,
                twice: vec![],
                pages: vec![],
            };
            o
        };
        let mut not_found = sample(
            1,
            Operation::TableExists { cold: false },
            1,
            "ns_0$table_2",
            Logged::Failed,
        );
        not_found.attempt.class = Some(ErrorClass::NotFound);
        let mut warm = sample(
            0,
            Operation::CreateNamespace,
            0,
            "ns_0$bench_w0_0",
            Logged::Ok,
        );
        warm.attempt.warm = true;
        let log = vec![
            at(
                sample(
                    0,
                    Operation::CreateNamespace,
                    1,
                    "ns_0$bench_w0_1",
                    Logged::Ok,
                ),
                None,
            ),
            at(
                sample(
                    0,
                    Operation::DeclareTable,
                    0,
                    "ns_0$bench_d0_0",
                    Logged::Unknown,
                ),
                Some(true),
            ),
            at(
                sample(
                    0,
                    Operation::DeclareTable,
                    1,
                    "ns_0$bench_d0_1",
                    Logged::Failed,
                ),
                Some(true),
            ),
            at(
                sample(
                    0,
                    Operation::DeclareTable,
                    2,
                    "ns_0$bench_d0_2",
                    Logged::Failed,
                ),
                Some(false),
            ),
            at(
                sample(0, Operation::DropTable, 0, "ns_0$table_3", Logged::Unknown),
                None,
            ),
            at(listing, None),
            at(not_found, None),
            at(warm, None),
            sample(0, Operation::DeclareTable, 3, "ns_0$bench_d0_3", Logged::Ok),
        ];
        let what: Vec<What> = history(&log).into_iter().map(|o| o.what).collect();
        let landed = |l| Outcome::Indeterminate { landed: l };
        assert_eq!(
            what,
            [
                What::Created {
                    id: "ns_0$bench_w0_1".into(),
                    n: 1,
                    table: false,
                    outcome: ACK
                },
                What::Created {
                    id: "ns_0$bench_d0_0".into(),
                    n: 0,
                    table: true,
                    outcome: landed(Some(true))
                },
                What::Created {
                    id: "ns_0$bench_d0_1".into(),
                    n: 1,
                    table: true,
                    outcome: landed(Some(true))
                },
                What::Removed {
                    id: "ns_0$table_3".into(),
                    table: true,
                    outcome: landed(None)
                },
                What::Listed {
                    namespace: "ns_0".into(),
                    tables: false,
                    seen: vec![],
                    gone: None,
                    pages: vec![],
                },
                What::Probed {
                    id: "ns_0$table_2".into(),
                    found: false
                },
            ]
        );
    }
}
