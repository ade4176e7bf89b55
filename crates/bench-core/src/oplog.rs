//! The operation log: one record of each operation a cell's workers ran, warm-up included,
//! with one outcome — `ok`, `failed` (it did not take effect) or `unknown` (it may have) —
//! decided here, from the operation's descriptor and its error's class, and nowhere else.
//! Every judge reads this log: the statistics (`stats`), verification (which looks every
//! write that did not succeed up in the copy and writes down whether it landed), the
//! consistency checker, the roles' figures. It sits below them all.
//!
//! A write's failure is `failed` only where its answer is definite before any effect: a
//! commit conflict, an entry not found, a store's refusal (401, 403), each answering a request
//! the client sent once. Anything else is `unknown`, for it may have taken effect all the
//! same: abandoned at its timeout, its connection broken after its request was sent (a lost
//! reply), its worker killed in the middle of it, a 5xx or an error bench cannot class
//! (which say nothing of the effect), an answer after the client resent a request of it
//! (object_store resends on any 5xx, a conditional PUT included, so a 412 may answer the
//! client's own earlier attempt), or a refusal of an operation whose descriptor says it can
//! fail after its effect (lance's `drop_table` removes the entry, then the table's files).
//! Verification looks up both kinds all the same: a write answered with a definite error
//! whose effect is in the catalog is *failed but applied*, a finding about the catalog;
//! nothing the client's own resends could explain is one.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::counts::{CriticalPath, IoCounts};
use crate::plan::{Effect, Entry, Names, Operation};

/// The class of a failed operation, as records count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// A commit conflict past lance's retry budget: the contention ceiling.
    Conflict,
    /// The store asked to slow down (503 SlowDown, 429) past the client's retries.
    Throttled,
    /// The connection broke (reset, closed, timed out) past the client's retries.
    Network,
    /// Any other lance or storage error.
    Other,
    /// An attempt that ran past `run.attempt_timeout_secs`, abandoned (it may or may not
    /// have committed).
    Timeout,
    /// The entry it named was not there: a table or namespace another client of the cell
    /// removed (cells of roles count these apart; elsewhere they are `other`).
    NotFound,
    /// A commit whose worker was killed in the middle of it (a planted fault,
    /// `BENCH_WORKER_KILL_MID_COMMIT`): it may have landed. Counted with `other` outside
    /// cells of roles.
    Killed,
    /// The store refused a request (401, 403) or no credentials were found: a definite
    /// answer the client does not resend. Counted with `other` outside cells of roles.
    Refused,
}

impl ErrorClass {
    /// Its name in records (`conflict`, `throttled`, `network`, `other`, `timeout`,
    /// `not_found`, `killed`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Conflict => "conflict",
            ErrorClass::Throttled => "throttled",
            ErrorClass::Network => "network",
            ErrorClass::Other => "other",
            ErrorClass::Timeout => "timeout",
            ErrorClass::NotFound => "not_found",
            ErrorClass::Killed => "killed",
            ErrorClass::Refused => "refused",
        }
    }

    /// Whether the error is a definite answer that the operation had no effect, as far as
    /// the request it answers goes (Jepsen's `fail`): a conflict, an entry not found, a
    /// store's refusal. Not a reply that never came (a connection that broke, an attempt
    /// bench abandoned, a worker that died), nor a 5xx (throttled, or any other status the
    /// store answered after it may have applied the request), nor an error bench cannot
    /// class: whether those took effect is the copy's to say (Jepsen's `info`).
    pub fn definite(self) -> bool {
        match self {
            ErrorClass::Conflict | ErrorClass::NotFound | ErrorClass::Refused => true,
            ErrorClass::Network
            | ErrorClass::Timeout
            | ErrorClass::Killed
            | ErrorClass::Throttled
            | ErrorClass::Other => false,
        }
    }
}

/// How an operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It succeeded: its effect must be in the catalog.
    Ok,
    /// It failed before any effect: the catalog's own answer (a conflict, an entry not
    /// found, a refusal), or a read that failed.
    Failed,
    /// It may have taken effect: looked up after the cell.
    Unknown,
}

impl Outcome {
    /// The outcome of `operation` that failed with `class` (`None`: it succeeded), during
    /// which the client resent `resent` requests (`None`: not known, e.g. through REST,
    /// where the server's client resends unseen). The one place that decides it.
    pub fn of(operation: Operation, class: Option<ErrorClass>, resent: Option<u32>) -> Outcome {
        let Some(class) = class else {
            return Outcome::Ok;
        };
        let d = operation.describe();
        // A read changes nothing, whatever became of it.
        if d.effect == Effect::Nothing {
            return Outcome::Failed;
        }
        // Definite only as an answer to requests sent once: after a resend, a 412 or a
        // conflict may answer the client's own earlier attempt, which may have applied.
        if !(class.definite() && resent == Some(0)) {
            return Outcome::Unknown;
        }
        match class {
            // A refusal of the files' deletes after the entry went (lance's drop_table).
            ErrorClass::Refused if d.fails_after_effect => Outcome::Unknown,
            // Answered before the operation changed anything.
            _ => Outcome::Failed,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed => "failed",
            Outcome::Unknown => "unknown",
        }
    }
}

/// What a listing saw of one writer's creations in the listed namespace: their indices, as
/// ascending half-open runs `[from, to)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    pub writer: u32,
    pub runs: Vec<[u64; 2]>,
}

impl Seen {
    pub fn has(&self, n: u64) -> bool {
        let i = self.runs.partition_point(|r| r[1] <= n);
        self.runs.get(i).is_some_and(|r| r[0] <= n)
    }

    pub fn indices(&self) -> impl Iterator<Item = u64> + '_ {
        self.runs.iter().flat_map(|r| r[0]..r[1])
    }
}

/// What every creation's name begins with.
const CREATED: &str = "bench_";

/// What a warm-up's creations end with.
pub const WARM_SUFFIX: &str = "_warm";

/// A name bench's creations carry, `<prefix><client>_<n>` and the run's mark after it (empty
/// but on a catalog runs share): the client, its creation's index and the mark; `None` for
/// any other name, and for a warm-up's creations (`…_warm`), which are not measured.
pub fn created_index(name: &str) -> Option<(u32, u64, &str)> {
    // Called on every name a listing returns: the golden's (`table_3`, `ns_0`) leave at once.
    if !name.starts_with(CREATED) || name.ends_with(WARM_SUFFIX) {
        return None;
    }
    static PREFIXES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    let prefixes = PREFIXES.get_or_init(|| {
        (Operation::ALL.iter())
            .filter_map(|o| match o.describe().names {
                Names::Creates(_, p) => Some(p),
                Names::ReadsGolden(_)
                | Names::RemovesGolden(_)
                | Names::Lists(_)
                | Names::Property
                | Names::Root => None,
            })
            .collect()
    });
    let rest = prefixes.iter().find_map(|p| name.strip_prefix(p))?;
    let (w, tail) = rest.split_once('_')?;
    let digits = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    Some((
        w.parse().ok()?,
        tail[..digits].parse().ok()?,
        &tail[digits..],
    ))
}

/// What a listing's names show of every writer's creations in this run, whose names carry
/// `mark` (a creation of another run on the same catalog is none of them).
pub fn seen(names: &[String], mark: &str) -> Vec<Seen> {
    let mut by: BTreeMap<u32, BTreeSet<u64>> = BTreeMap::new();
    let ours = names.iter().filter_map(|n| created_index(n));
    for (w, n, _) in ours.filter(|&(_, _, m)| m == mark) {
        by.entry(w).or_default().insert(n);
    }
    let runs = |set: BTreeSet<u64>| {
        let mut runs: Vec<[u64; 2]> = Vec::new();
        for n in set {
            match runs.last_mut() {
                Some(r) if r[1] == n => r[1] = n + 1,
                _ => runs.push([n, n + 1]),
            }
        }
        runs
    };
    (by.into_iter())
        .map(|(writer, set)| Seen {
            writer,
            runs: runs(set),
        })
        .collect()
}

/// The namespace an entry's id is in (`""`: the root).
pub fn parent(id: &str) -> &str {
    id.rsplit_once('$').map_or("", |(p, _)| p)
}

/// What an operation showed, where the cell keeps it (cells of roles, mixed cells).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Observed {
    #[default]
    Nothing,
    /// A listing: what it saw of each writer's creations of its kind, and (a role's listing
    /// of tables, in a cell that removes tables) the golden's tables there it did not see.
    Listed {
        seen: Vec<Seen>,
        gone: Option<Vec<String>>,
        /// The names it listed more than once.
        twice: Vec<String>,
        /// A listing in more than one page: each page's range and version (else empty).
        pages: Vec<crate::versions::Page>,
    },
    /// The shared table's version a commit made or a read returned.
    Version(u64),
    /// What a cleanup removed.
    Cleaned(Cleaned),
}

/// What one cleanup of `__manifest` removed, as lance counts it (`RemovalStats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cleaned {
    /// Versions (manifests) removed.
    pub versions: u64,
    /// Bytes of every file removed.
    pub bytes: u64,
    /// Files removed: manifests, data, transaction, index and deletion files.
    pub files: u64,
    /// Files it could not delete (the next cleanup finds them again).
    pub failed_deletes: u64,
}

impl std::ops::AddAssign for Cleaned {
    fn add_assign(&mut self, o: Cleaned) {
        self.versions += o.versions;
        self.bytes += o.bytes;
        self.files += o.files;
        self.failed_deletes += o.failed_deletes;
    }
}

/// One attempt at an operation, as its worker ran it and told it: its index, the entry it
/// named, its times, its requests, its error. The worker's report carries it on the wire
/// ([`crate::protocol::OpReport`]) and the log's record keeps it as told ([`Op`]), beside
/// what the coordinator judged of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// Its index among its worker's operations of its kind (commits, or interleaved reads;
    /// a warm-up's own).
    pub i: u64,
    /// Its time, from its actual start; an open-loop operation's `lag_ms` after its
    /// intended one (its latency is both).
    pub ms: f64,
    /// A read a mixed cell interleaves between its commits (not the cell's operation).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read: bool,
    /// Run in the warm-up, before release: not measured, but what it did is in the copy.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warm: bool,
    /// The entry it named (created, removed, read, listed; `""`: the root, or for a property
    /// update the shared table); `None`: none (the shared table's rows and history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// A property update: the key it set and the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<(String, String)>,
    /// Its start and end on its worker's wall clock (µs since the epoch), where the cell
    /// keeps a history (cells of roles, mixed cells).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_us: Option<[u64; 2]>,
    /// When it ended, in ms after its worker's release (for the record's time series).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_ms: Option<f64>,
    /// Its requests by kind and bytes (requests through lance's object-store layer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<IoCounts>,
    /// Its requests' round trips on its critical path and the time it waited on the store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<CriticalPath>,
    /// What kind of failure it was (a report: as its worker classed it; the log: every
    /// failure has one, `other` where the worker named none, and a success none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<ErrorClass>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub err: Option<String>,
    /// Its place in the `__manifest` version order: the version it made or served, as its
    /// requests showed it (`None`: no request of it named one, e.g. through REST).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<crate::versions::At>,
    /// What the CPU scheduler did to its worker's threads while it ran: their time on a
    /// CPU, waiting for one, and where (Linux; `None` elsewhere, and for workers that do not
    /// tell it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<crate::sched::CpuUse>,
    /// Requests the store client resent while it ran (object_store's retries after a 5xx,
    /// a 429 or a broken connection); `None`: not seen (through REST the server's client
    /// resends, and workers that do not tell it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resent: Option<u32>,
}

impl Attempt {
    /// Attempt `i`, which took `ms`, nothing else told.
    pub fn new(i: u64, ms: f64) -> Attempt {
        Attempt {
            i,
            ms,
            ..Attempt::default()
        }
    }
}

/// One operation of a cell, as its worker reported it and the coordinator judged it.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    /// The worker (client) that ran it, by its id.
    pub client: u32,
    /// A role's client: its role's place among the cell's and the operation's in its mix.
    pub role: Option<(u32, u32)>,
    pub operation: Operation,
    /// What its worker told of it.
    pub attempt: Attempt,
    pub outcome: Outcome,
    pub observed: Observed,
    /// A write that did not succeed, looked up in the copy after the cell: whether its
    /// effect is there (`None`: not looked up, or not knowable, e.g. one append among
    /// several of the shared table).
    pub landed: Option<bool>,
}

impl Op {
    /// The effect this write names: an entry of `__manifest` created (`1`) or removed
    /// (`-1`).
    pub fn catalog_effect(&self) -> Option<(&str, i64)> {
        let id = self.attempt.entry.as_deref()?;
        match self.operation.describe().effect {
            Effect::CatalogRow => Some((id, 1)),
            Effect::CatalogRowGone => Some((id, -1)),
            Effect::TableVersion | Effect::TableProperty | Effect::Nothing => None,
        }
    }

    /// Whether the operation changes the catalog or the shared table.
    pub fn is_write(&self) -> bool {
        self.operation.is_write()
    }

    /// Whether it took effect, as far as is known: it succeeded, or it was looked up and
    /// landed.
    pub fn took_effect(&self) -> Option<bool> {
        match self.outcome {
            Outcome::Ok => Some(true),
            Outcome::Failed | Outcome::Unknown => self.landed,
        }
    }

    /// An operation answered with a definite error whose effect is in the catalog all the
    /// same (a `drop_table` whose file deletes were refused): a finding about the catalog.
    /// A write whose reply was lost, or whose answer came after the client resent a request
    /// of it (the answer may be to its own earlier attempt), is unknown, resolved landed or
    /// not, never this.
    pub fn failed_but_applied(&self) -> bool {
        self.outcome != Outcome::Ok
            && self.landed == Some(true)
            && self.attempt.class.is_some_and(ErrorClass::definite)
            && self.attempt.resent == Some(0)
    }

    /// A write answered with what would be a definite error, but after the client resent a
    /// request of it (or where its resends are not seen): the answer may be to its own
    /// earlier attempt, so its outcome is unknown.
    pub fn possibly_resent(&self) -> bool {
        self.outcome == Outcome::Unknown
            && self.attempt.class.is_some_and(ErrorClass::definite)
            && self.attempt.resent != Some(0)
    }

    /// The kind of entry it creates, removes or lists, from its descriptor.
    pub fn entry_kind(&self) -> Option<Entry> {
        match self.operation.describe().names {
            Names::Creates(kind, _)
            | Names::RemovesGolden(kind)
            | Names::ReadsGolden(kind)
            | Names::Lists(kind) => Some(kind),
            Names::Property | Names::Root => None,
        }
    }

    /// Its outcome in words, with how it resolved where it was looked up: `ok`, `failed`,
    /// `unknown, landed`, `failed, did not land`.
    pub fn said(&self) -> String {
        match (self.outcome, self.landed) {
            (Outcome::Ok, _) | (_, None) => self.outcome.name().to_string(),
            (o, Some(true)) => format!("{}, landed", o.name()),
            (o, Some(false)) => format!("{}, did not land", o.name()),
        }
    }

    /// How messages name it: `worker 2's write-create-namespace #7 (bench_w2_7)`.
    pub fn name(&self) -> String {
        let what = match (&self.attempt.entry, &self.attempt.property) {
            (Some(e), Some((k, v))) if e.is_empty() => format!(" ({k}={v})"),
            (Some(e), Some((k, v))) => format!(" ({e}: {k}={v})"),
            (Some(e), None) if !e.is_empty() => format!(" ({e})"),
            _ => String::new(),
        };
        let warm = if self.attempt.warm {
            " of its warm-up"
        } else {
            ""
        };
        format!(
            "worker {}'s {} #{}{warm}{what}",
            self.client, self.operation, self.attempt.i
        )
    }
}

/// A record of `client`'s `operation` #`i` on `entry`, ended as `outcome` (a failure's
/// class a conflict, or for an unknown outcome a broken connection), nothing else told: for
/// tests of what judges the log.
pub fn sample(client: u32, operation: Operation, i: u64, entry: &str, outcome: Outcome) -> Op {
    Op {
        client,
        role: None,
        operation,
        attempt: Attempt {
            entry: Some(entry.to_string()),
            class: match outcome {
                Outcome::Ok => None,
                Outcome::Failed => Some(ErrorClass::Conflict),
                Outcome::Unknown => Some(ErrorClass::Network),
            },
            err: (outcome != Outcome::Ok).then(|| "an error".to_string()),
            // Sent once, as far as a write that did not succeed needs to say.
            resent: (outcome != Outcome::Ok && operation.is_write()).then_some(0),
            ..Attempt::new(i, 1.0)
        },
        outcome,
        observed: Observed::Nothing,
        landed: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each class's outcome, for a creation, a removal that fails after its effect, and a
    /// read, answering requests sent once: only a conflict, an entry not found and a
    /// refusal are definite; a 5xx (throttled) and an error bench cannot class say nothing
    /// of the effect.
    #[test]
    fn the_outcome_comes_from_the_descriptor_and_the_class() {
        use ErrorClass::*;
        let create = Operation::CreateNamespace;
        let drop = Operation::DropTable;
        let read = Operation::DescribeTable { cold: false };
        let once = Some(0);
        for (class, create_is, drop_is) in [
            (Conflict, Outcome::Failed, Outcome::Failed),
            (NotFound, Outcome::Failed, Outcome::Failed),
            (Refused, Outcome::Failed, Outcome::Unknown),
            (Throttled, Outcome::Unknown, Outcome::Unknown),
            (Other, Outcome::Unknown, Outcome::Unknown),
            (Network, Outcome::Unknown, Outcome::Unknown),
            (Timeout, Outcome::Unknown, Outcome::Unknown),
            (Killed, Outcome::Unknown, Outcome::Unknown),
        ] {
            assert_eq!(
                Outcome::of(create, Some(class), once),
                create_is,
                "{class:?}"
            );
            assert_eq!(Outcome::of(drop, Some(class), once), drop_is, "{class:?}");
            assert_eq!(
                Outcome::of(read, Some(class), once),
                Outcome::Failed,
                "{class:?}"
            );
        }
        for op in Operation::ALL {
            assert_eq!(Outcome::of(op, None, once), Outcome::Ok);
            assert_eq!(Outcome::of(op, None, Some(3)), Outcome::Ok);
        }
        // Only lance's drop_table does anything after its commit.
        let after: Vec<_> = (Operation::ALL.iter())
            .filter(|o| o.describe().fails_after_effect)
            .collect();
        assert_eq!(after, [&Operation::DropTable]);
    }

    /// After the client resent a request of a write (object_store resends on any 5xx, a
    /// conditional PUT included), or where its resends are not seen (through REST), even a
    /// conflict or a 412 may answer its own earlier attempt: unknown, looked up, and never
    /// failed but applied when it landed. Sent once, the same answer is definite, and a
    /// landed write answered so is failed but applied. Reads stay failed.
    #[test]
    fn an_answer_the_clients_own_resend_could_explain_is_unknown() {
        use ErrorClass::*;
        let create = Operation::CreateNamespace;
        for class in [Conflict, NotFound, Refused] {
            for resent in [Some(1), Some(10), None] {
                assert_eq!(
                    Outcome::of(create, Some(class), resent),
                    Outcome::Unknown,
                    "{class:?} after {resent:?} resends"
                );
            }
        }
        let read = Operation::DescribeTable { cold: false };
        assert_eq!(Outcome::of(read, Some(Conflict), None), Outcome::Failed);

        let landed = |class: ErrorClass, resent: Option<u32>| {
            let mut op = sample(0, create, 0, "bench_w0_0", Outcome::Failed);
            op.attempt.class = Some(class);
            op.attempt.resent = resent;
            op.outcome = Outcome::of(create, Some(class), resent);
            op.landed = Some(true);
            op
        };
        let once = landed(Conflict, Some(0));
        assert!(once.failed_but_applied() && !once.possibly_resent());
        for resent in [Some(2), None] {
            let op = landed(Conflict, resent);
            assert!(
                !op.failed_but_applied() && op.possibly_resent(),
                "{resent:?}"
            );
        }
        // A 5xx after resends is unknown, and not a definite answer resent.
        let op = landed(Other, Some(2));
        assert!(!op.failed_but_applied() && !op.possibly_resent());
        assert_eq!(op.outcome, Outcome::Unknown);
    }

    #[test]
    fn a_listing_s_names_say_what_it_saw_of_each_writer() {
        assert_eq!(created_index("bench_d3_17"), Some((3, 17, "")));
        assert_eq!(created_index("bench_t0_2_r5f3a"), Some((0, 2, "_r5f3a")));
        assert_eq!(created_index("table_3"), None);
        assert_eq!(created_index("bench_d0_2_r5f3a_warm"), None);
        // Every creation's prefix passes the quick test.
        for o in Operation::ALL {
            if let Names::Creates(_, p) = o.describe().names {
                assert!(p.starts_with(CREATED), "{p}");
            }
        }
        let names = [
            "bench_d1_0",
            "bench_d1_4",
            "bench_d1_5",
            "table_9",
            "bench_d0_2",
            // Another run's, on the same catalog.
            "bench_d0_3_r1",
        ]
        .map(String::from);
        let s = seen(&names, "");
        assert_eq!(
            s,
            [
                Seen {
                    writer: 0,
                    runs: vec![[2, 3]]
                },
                Seen {
                    writer: 1,
                    runs: vec![[0, 1], [4, 6]]
                }
            ]
        );
        assert!(s[1].has(5) && s[1].has(0) && !s[1].has(3) && !s[1].has(6));
        assert_eq!(
            seen(&names, "_r1"),
            [Seen {
                writer: 0,
                runs: vec![[3, 4]]
            }]
        );
        assert_eq!(parent("ns_0$ns_1$table_3"), "ns_0$ns_1");
        assert_eq!(parent("table_3"), "");
    }
}
