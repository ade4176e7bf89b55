//! What readers see, checked against the committed history of a cell of roles: each
//! client's creations and removals (acknowledged, or indeterminate: abandoned at their
//! timeout or their connection broken, each resolved against the copy after the cell),
//! listings of a namespace's tables (what each saw of every writer's creations there, and
//! which of the golden's tables there it did not see) and look-ups of one entry (describe,
//! exists: found or not), with their start and end on the host's wall clock. From them: how
//! long after its acknowledgement each commit is first seen by each reader (visibility lag),
//! reads that began after a commit was acknowledged and miss it (stale reads; a removed entry
//! seen again is a resurrection), a reader that saw a commit and later does not (monotonic
//! reads), a client that misses its own acknowledged commit (read your writes), and commits
//! seen that no client made, that did not land, or before they were attempted (phantoms).

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::oplog::Observed;

mod history;
pub mod order;
#[doc(hidden)]
pub mod synthetic;
mod visits;

pub use history::{Op, Outcome, What, history, unknown_versions};

pub use crate::oplog::{Seen, WARM_SUFFIX, created_index, parent, seen};

/// The checker's findings, as the record keeps them (`consistency`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Consistency {
    /// Reads checked: those that observe a commit (a listing of a namespace some commit
    /// touched, a look-up of an entry one did, a version read where appends were made) or
    /// show one no one made; acknowledged creations and removals.
    pub reads: u64,
    pub creations: u64,
    #[serde(default)]
    pub removals: u64,
    /// Acknowledged commits of the shared table, each with the version it made.
    #[serde(default)]
    pub versions: u64,
    /// Commits that may have landed (abandoned, or their connection broken), and how many of
    /// them the copy showed landed (absent where they were not looked up).
    pub indeterminate: u64,
    #[serde(default)]
    pub indeterminate_landed: Option<u64>,
    /// Reads that began after a commit they observe was acknowledged (or, one that landed
    /// without acknowledgement, seen by a read that ended before) and missed it, and their
    /// share of the reads checked.
    pub stale_reads: u64,
    pub stale_rate: f64,
    /// Of the stale reads, those that saw a removed entry after its removal was known.
    #[serde(default)]
    pub resurrections: u64,
    /// The lag's upper bound: from a commit's acknowledgement to the end of each reader's
    /// first listing (begun after it) that showed it, over every (commit, reader) pair seen,
    /// in ms ([`since`]: a read may take the state it serves at any moment up to its end).
    pub lag_pairs: u64,
    pub lag_p50_ms: Option<f64>,
    pub lag_p99_ms: Option<f64>,
    pub lag_max_ms: Option<f64>,
    /// The lag's lower bound over the same pairs: from the acknowledgement to the start of
    /// the reader's last read begun after it that still missed the commit, 0 where every
    /// read begun after it showed it (the upper bound above runs to the first that showed
    /// it, so with no lag at all it is about uniform over the reader's cadence plus a read).
    #[serde(default)]
    pub lag_low_p50_ms: Option<f64>,
    #[serde(default)]
    pub lag_low_p99_ms: Option<f64>,
    #[serde(default)]
    pub lag_low_max_ms: Option<f64>,
    /// (commit, reader) pairs outside the above: the reader read after the acknowledgement
    /// (past the clocks' uncertainty, as a stale read) and never showed the commit by its
    /// last read, so the lag has no upper bound; and the
    /// largest of their lower bounds (from the acknowledgement to the start of the reader's
    /// last read, which missed it), in ms.
    #[serde(default)]
    pub lag_unseen_pairs: u64,
    #[serde(default)]
    pub lag_unseen_low_max_ms: Option<f64>,
    /// The readers' cadence: the median time between two consecutive reads of one reader.
    #[serde(default)]
    pub read_period_ms: Option<f64>,
    /// A reader that saw a commit and later did not.
    pub monotonic_violations: u64,
    /// Reads of a client that missed one of its own acknowledged commits or more (stale reads
    /// too).
    pub read_your_writes_violations: u64,
    /// Commits seen that no client attempted, that the copy showed did not land, or before
    /// they were attempted.
    pub phantoms: u64,
    /// Listings that listed an entry more than once: each name of a catalog is one entry.
    #[serde(default)]
    pub duplicates: u64,
    /// The first violation, named: client, time, what it saw, what it should have seen.
    pub first_violation: Option<String>,
    /// Clients on more than one host: how far each one's clock may be from the
    /// coordinator's after its offset was taken out (the largest half-width of the bounds
    /// `go` and its reply give), in ms. A read must begin twice that after a commit's
    /// acknowledgement to be required to see it. Absent on one host (one clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_uncertainty_ms: Option<f64>,
    /// The time the clients were paused while another arm ran (`bench ab`'s slices), in ms,
    /// which no lag counts. Absent where they never were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_ms: Option<f64>,
    /// The checks on the `__manifest` version order ([`order`]), where the cell's operations
    /// carry their versions (absent where none does, e.g. through REST).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<order::Order>,
}

impl Consistency {
    /// Whether anything that should not happen did.
    pub fn anomalies(&self) -> u64 {
        let order = self.order.as_ref().map_or(0, order::Order::violations);
        self.stale_reads + self.monotonic_violations + self.phantoms + self.duplicates + order
    }

    /// The listings of `log` that listed an entry more than once, counted, the first named
    /// (where no other violation was) with its time from `t0_us`.
    pub fn listed_twice(&mut self, log: &[crate::oplog::Op], t0_us: u64) {
        for o in log.iter().filter(|o| !o.attempt.warm) {
            let Observed::Listed { twice, .. } = &o.observed else {
                continue;
            };
            let Some(name) = twice.first() else {
                continue;
            };
            self.duplicates += 1;
            if self.first_violation.is_none() {
                let at = o
                    .attempt
                    .at_us
                    .map_or(0.0, |[s, _]| ms(s.saturating_sub(t0_us)));
                let whose = match o.attempt.entry.as_deref() {
                    Some("") | None => "the root".to_string(),
                    Some(ns) => ns.to_string(),
                };
                self.first_violation = Some(format!(
                    "client {} listed {whose} at +{at:.1} ms and saw {name} twice",
                    o.client
                ));
            }
        }
    }
}

/// One commit of the history, as reads observe it.
struct Fact<'h> {
    op: &'h Op,
    id: &'h str,
    /// A creation: (writer, index); a removal: `None`.
    created: Option<(u32, u64)>,
    /// Its entry is a table (not a namespace).
    table: bool,
    /// When reads must show it: its acknowledgement, or for an indeterminate one that
    /// landed, the end of the first read that showed it.
    known_us: Option<u64>,
    outcome: Outcome,
}

impl Fact<'_> {
    /// What a read that shows this commit saw: `#n of writer w` or the entry gone.
    fn said(&self) -> String {
        match self.created {
            Some((w, n)) => format!("writer {w}'s #{n}"),
            None => format!("{} removed", self.id),
        }
    }

    fn missed(&self) -> String {
        match self.created {
            Some((w, n)) => format!("did not see writer {w}'s #{n}"),
            None => format!("still saw {}", self.id),
        }
    }
}

/// A read, and what it saw of one commit: `Some(true)` where it shows it (a creation's entry
/// there, a removal's gone), `None` where the read does not observe it.
enum Read<'h> {
    Listing {
        namespace: &'h str,
        tables: bool,
        seen: &'h [Seen],
        gone: Option<HashSet<&'h str>>,
    },
    Probe {
        id: &'h str,
        found: bool,
    },
}

impl Read<'_> {
    fn shows(&self, f: &Fact) -> Option<bool> {
        let Read::Listing {
            namespace,
            tables,
            seen,
            gone,
        } = self
        else {
            let Read::Probe { id, found } = self else {
                unreachable!()
            };
            return (*id == f.id).then_some(*found == f.created.is_some());
        };
        if parent(f.id) != *namespace {
            return None;
        }
        match f.created {
            // A listing shows the creations of its kind.
            Some((w, n)) => {
                (f.table == *tables).then(|| seen.iter().any(|s| s.writer == w && s.has(n)))
            }
            // A table's removal, where the listing says which of the golden's it missed.
            None => {
                let gone = gone.as_ref().filter(|_| f.table && *tables)?;
                Some(gone.contains(f.id))
            }
        }
    }

    fn verb(&self) -> String {
        match self {
            Read::Listing { namespace: "", .. } => "listed the root".into(),
            Read::Listing { namespace, .. } => format!("listed {namespace}"),
            Read::Probe { id, .. } => format!("looked up {id}"),
        }
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// The checker's state as it goes through the reads in time order.
struct Checker {
    c: Consistency,
    t0_us: u64,
    /// How much later than a commit's acknowledgement a read must begin to be required to
    /// see it (and how much earlier than a commit's start a read must end to be a phantom):
    /// the clocks' uncertainty across hosts, 0 on one host.
    margin_us: u64,
    /// When the clients were paused (`bench ab`'s slices): left out of every lag.
    paused: Vec<[u64; 2]>,
    lags: Vec<f64>,
    /// Each lag's lower bound: from the acknowledgement to the start of the reader's last
    /// read begun after it that still missed the commit (0 where none did).
    lows: Vec<f64>,
    /// (reader, commit) → the acknowledgement and the start of the reader's latest read
    /// begun after it that missed it.
    missed: HashMap<(u32, usize), (u64, u64)>,
    /// (reader, commit) → whether its last read showed it, and whether its lag is counted.
    last: HashMap<(u32, usize), bool>,
    lagged: HashSet<(u32, usize)>,
}

impl Checker {
    fn at(&self, us: u64) -> f64 {
        ms(us.saturating_sub(self.t0_us))
    }

    /// Note a violation, the first one named.
    fn named(&mut self, what: impl FnOnce() -> String) {
        if self.c.first_violation.is_none() {
            self.c.first_violation = Some(what());
        }
    }

    /// Read `op` against one commit it observes (`k`, which it `shows` or not); whether it
    /// missed it (stale), whether that saw a removed entry again, and whether the commit
    /// was its own client's.
    fn against(
        &mut self,
        op: &Op,
        read: &Read,
        k: usize,
        f: &Fact,
        shows: bool,
    ) -> (bool, bool, bool) {
        let (who, at) = (op.client, self.at(op.start_us));
        let never = f.outcome
            == (Outcome::Indeterminate {
                landed: Some(false),
            });
        let early = f.op.start_us > op.end_us + self.margin_us;
        if shows && (never || early) {
            self.c.phantoms += 1;
            let why = match early {
                true => format!("attempted only at +{:.1} ms", self.at(f.op.start_us)),
                false => "which the copy showed never landed".into(),
            };
            let said = format!(
                "client {who} {} at +{at:.1} ms and saw {}, {why}",
                read.verb(),
                f.said()
            );
            self.named(|| said);
        }
        let before = self.last.insert((who, k), shows);
        let went_back = before == Some(true) && !shows;
        let stale = !shows && self.stale(op, read, f);
        if went_back {
            self.c.monotonic_violations += 1;
            let after = match f.created {
                Some(_) => "after seeing it",
                None => "after seeing it gone",
            };
            let said = format!(
                "client {who} {} at +{at:.1} ms and {}, {after}",
                read.verb(),
                f.missed()
            );
            self.named(|| said);
        }
        // Lag from listings only: each shows every entry of its namespace, while the time to
        // a look-up of one drawn entry is the draw's, not the catalog's.
        if matches!(read, Read::Listing { .. })
            && f.outcome == Outcome::Acknowledged
            && f.op.end_us < op.start_us
        {
            self.lag((who, k), f.op.end_us, [op.start_us, op.end_us], shows);
        }
        (
            stale,
            stale && f.created.is_none(),
            stale && f.op.client == op.client,
        )
    }

    /// Whether read `op`, which did not show commit `f`, began after it was known (its
    /// acknowledgement, or a read that showed it landed ended): a stale read, named.
    fn stale(&mut self, op: &Op, read: &Read, f: &Fact) -> bool {
        let Some(known) = f.known_us.filter(|&t| t + self.margin_us < op.start_us) else {
            return false;
        };
        let who = op.client;
        let how = match f.outcome {
            Outcome::Acknowledged => "acknowledged",
            Outcome::Indeterminate { .. } => "seen landed",
        };
        let said = format!(
            "client {who} {} at +{:.1} ms and {}, {how} at +{:.1} ms",
            read.verb(),
            self.at(op.start_us),
            f.missed(),
            self.at(known)
        );
        self.named(|| said);
        true
    }

    /// The shared table's versions: each read (in time order) against the commits
    /// acknowledged before it began — stale below the highest of them (read your writes
    /// where its own is higher), monotonic never below what its reader saw before — and
    /// each commit's lag to each reader's first read begun after it that returned it or
    /// later. No phantom check: other commits (property updates, abandoned appends) make
    /// versions that are not all reported.
    fn versions(&mut self, history: &[Op]) {
        let of = |commit: bool| -> Vec<(&Op, u64)> {
            (history.iter())
                .filter_map(|o| match o.what {
                    What::Versioned { version, commit: c } if c == commit => Some((o, version)),
                    _ => None,
                })
                .collect()
        };
        let (mut commits, mut reads) = (of(true), of(false));
        commits.sort_by_key(|(o, _)| o.end_us);
        reads.sort_by_key(|(o, _)| (o.start_us, o.client));
        self.c.versions += commits.len() as u64;
        let mut last: HashMap<u32, u64> = HashMap::new();
        for (r, seen) in reads.into_iter().filter(|_| !commits.is_empty()) {
            self.c.reads += 1;
            let (who, at) = (r.client, self.at(r.start_us));
            let margin = self.margin_us;
            let before =
                &commits[..commits.partition_point(|(o, _)| o.end_us + margin < r.start_us)];
            let top = |own: bool| {
                (before.iter())
                    .filter(|(o, _)| !own || o.client == who)
                    .max_by_key(|(_, v)| *v)
            };
            if let Some(&(w, v)) = top(false).filter(|(_, v)| seen < *v) {
                self.c.stale_reads += 1;
                if top(true).is_some_and(|(_, own)| seen < *own) {
                    self.c.read_your_writes_violations += 1;
                }
                let said = format!(
                    "client {who} read the table's version at +{at:.1} ms and saw {seen}, not \
                     {v}, acknowledged at +{:.1} ms",
                    self.at(w.end_us)
                );
                self.named(|| said);
            }
            let was = last.get(&who).copied();
            if let Some(was) = was.filter(|&was| seen < was) {
                self.c.monotonic_violations += 1;
                let said = format!(
                    "client {who} read the table's version at +{at:.1} ms and saw {seen}, after \
                     seeing {was}"
                );
                self.named(|| said);
            }
            last.insert(who, seen.max(was.unwrap_or(0)));
            for (k, (w, v)) in before.iter().enumerate() {
                // Keyed apart from the entries' commits (places counted from the end).
                self.lag(
                    (who, usize::MAX - k),
                    w.end_us,
                    [r.start_us, r.end_us],
                    *v <= seen,
                );
            }
        }
    }

    /// A read over `span` (its start and end) by a reader of a commit acknowledged at
    /// `ack_us` (the pair `key`), which showed it or not: the pair's lag ([`since`]), bounded
    /// below by the start of the reader's last read begun after the acknowledgement that
    /// missed it (0 where none did) and above by the end of its first that showed it.
    fn lag(&mut self, key: (u32, usize), ack_us: u64, span: [u64; 2], shows: bool) {
        if !shows {
            let (_, latest) = self.missed.entry(key).or_insert((ack_us, span[0]));
            *latest = (*latest).max(span[0]);
            return;
        }
        if self.lagged.insert(key) {
            self.lags
                .push(ms(since(ack_us, span, self.margin_us, &self.paused)[1]));
            let margin = self.margin_us;
            let low = (self.missed.get(&key))
                .map_or(0, |&(_, t)| since(ack_us, [t, t], margin, &self.paused)[0]);
            self.lows.push(ms(low));
        }
    }

    /// Entries a listing saw that no client attempted to create, and golden tables it did
    /// not see that no client attempted to remove.
    fn unattempted(
        &mut self,
        op: &Op,
        read: &Read,
        attempted: &HashMap<(u32, &str), Vec<u64>>,
        removed: &HashSet<&str>,
    ) {
        let Read::Listing {
            namespace,
            seen,
            gone,
            ..
        } = read
        else {
            return;
        };
        let (who, at) = (op.client, self.at(op.start_us));
        for s in seen.iter() {
            let made = (attempted.get(&(s.writer, *namespace))).map_or(&[][..], Vec::as_slice);
            for r in &s.runs {
                let (a, b) = (
                    made.partition_point(|&n| n < r[0]),
                    made.partition_point(|&n| n < r[1]),
                );
                let missing = (r[1] - r[0]) - (b - a) as u64;
                if missing == 0 {
                    continue;
                }
                self.c.phantoms += missing;
                // The first index of the run no creation attempted.
                let mut made = made[a..b].iter().peekable();
                let n = (r[0]..r[1])
                    .find(|&n| made.next_if_eq(&&n).is_none())
                    .unwrap_or(r[0]);
                let said = format!(
                    "client {who} {} at +{at:.1} ms and saw writer {}'s #{n}, which it never \
                     created",
                    read.verb(),
                    s.writer
                );
                self.named(|| said);
            }
        }
        for id in (gone.iter().flatten()).filter(|id| !removed.contains(*id)) {
            self.c.phantoms += 1;
            let said = format!(
                "client {who} {} at +{at:.1} ms and did not see {id}, which no removal acknowledged or left undecided",
                read.verb()
            );
            self.named(|| said);
        }
    }
}

/// The commits a read observes (their places): a listing's namespace's, a look-up's entry's.
fn observed<'a>(
    read: &Read<'_>,
    by_ns: &'a HashMap<&'a str, Vec<usize>>,
    by_id: &'a HashMap<&'a str, Vec<usize>>,
) -> &'a [usize] {
    let key = match read {
        Read::Listing { namespace, .. } => by_ns.get(*namespace),
        Read::Probe { id, .. } => by_id.get(*id),
    };
    key.map_or(&[], Vec::as_slice)
}

/// The history's commits, counted into `c` (and how many indeterminate ones landed).
fn commits<'h>(history: &'h [Op], c: &mut Consistency) -> Vec<Fact<'h>> {
    let mut facts: Vec<Fact> = Vec::new();
    for op in history {
        let Some((id, outcome)) = op.what.commit() else {
            continue;
        };
        let created = match &op.what {
            What::Created { n, .. } => Some((op.client, *n)),
            _ => None,
        };
        match (outcome, created) {
            (Outcome::Acknowledged, Some(_)) => c.creations += 1,
            (Outcome::Acknowledged, None) => c.removals += 1,
            (Outcome::Indeterminate { .. }, _) => c.indeterminate += 1,
        }
        let known_us = (outcome == Outcome::Acknowledged).then_some(op.end_us);
        let table = match &op.what {
            What::Removed { table, .. } | What::Created { table, .. } => *table,
            What::Listed { .. } | What::Probed { .. } | What::Versioned { .. } => false,
        };
        facts.push(Fact {
            op,
            id,
            created,
            table,
            known_us,
            outcome,
        });
    }
    let resolved: Option<Vec<bool>> = (facts.iter())
        .filter_map(|f| match f.outcome {
            Outcome::Indeterminate { landed } => Some(landed),
            Outcome::Acknowledged => None,
        })
        .collect();
    c.indeterminate_landed = resolved
        .filter(|_| c.indeterminate > 0)
        .map(|l| l.iter().filter(|&&b| b).count() as u64);
    facts
}

/// The history's reads, in time order (each client's in its own order too).
fn reads(history: &[Op]) -> Vec<(&Op, Read<'_>)> {
    let mut reads: Vec<(&Op, Read)> = (history.iter())
        .filter_map(|o| match &o.what {
            What::Listed {
                namespace,
                tables,
                seen,
                gone,
                pages: _,
            } => Some((
                o,
                Read::Listing {
                    namespace,
                    tables: *tables,
                    seen,
                    gone: (gone.as_ref()).map(|g| g.iter().map(String::as_str).collect()),
                },
            )),
            What::Probed { id, found } => Some((o, Read::Probe { id, found: *found })),
            What::Created { .. } | What::Removed { .. } | What::Versioned { .. } => None,
        })
        .collect();
    reads.sort_by_key(|(o, _)| (o.start_us, o.client));
    reads
}

/// How long after an acknowledgement at `ack_us` a read over `span` (its start and end, µs)
/// took the state it served: at least to its start, at most to its end, since the state
/// may have been read at any moment between (each without the time the clients were
/// `paused`), and each widened by `margin_us`, how far the clocks of the acknowledgement and
/// the read may disagree (0 on one host's clock; on several hosts, their offsets' bounds).
/// A read that missed the commit bounds its lag below by the first, one that showed it
/// above by the second; a stale read's figures of how long the version it missed had been
/// acknowledged are the pair. Every lag bench gives comes from here.
pub fn since(ack_us: u64, span: [u64; 2], margin_us: u64, paused: &[[u64; 2]]) -> [u64; 2] {
    let ran = |to_us: u64| {
        let off: u64 = (paused.iter())
            .map(|&[a, b]| b.min(to_us).saturating_sub(a.max(ack_us)))
            .sum();
        to_us.saturating_sub(ack_us).saturating_sub(off)
    };
    [
        ran(span[0]).saturating_sub(margin_us),
        ran(span[1]) + margin_us,
    ]
}

/// Check a history (in any order). `t0_us`: the time the findings' times are told from
/// (the release); `margin_us`: how uncertain the clocks the history's times come from are
/// against one another (0: one clock).
pub fn check(history: &[Op], t0_us: u64, margin_us: u64) -> Consistency {
    check_paused(history, t0_us, margin_us, &[])
}

/// [`check`] of a history whose clients were paused at times (`bench ab`'s slices, while the
/// other arm ran: `paused_us`, on the history's clock): a lag counts only the time they ran.
pub fn check_paused(
    history: &[Op],
    t0_us: u64,
    margin_us: u64,
    paused_us: &[[u64; 2]],
) -> Consistency {
    held(history, (t0_us, margin_us), paused_us, false)
}

/// [`check`] holding every read against every commit it observes: the reference the checker
/// is held equal to (its tests, `scripts/figures/order-scale.sh`), in reads × commits.
#[doc(hidden)]
pub fn check_every_pair(history: &[Op], t0_us: u64, margin_us: u64) -> Consistency {
    held(history, (t0_us, margin_us), &[], true)
}

/// An indeterminate commit that landed is known from the end of the first read that showed
/// it.
fn seen_landed<'h>(facts: &mut [Fact<'h>], reads: &[(&'h Op, Read<'h>)]) {
    let mut landed: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, f) in facts.iter().enumerate() {
        if f.outcome == (Outcome::Indeterminate { landed: Some(true) }) {
            landed.entry(parent(f.id)).or_default().push(k);
        }
    }
    for (o, read) in reads {
        let ns = match read {
            Read::Listing { namespace, .. } => *namespace,
            Read::Probe { id, .. } => parent(id),
        };
        for &k in landed.get(ns).into_iter().flatten() {
            let f = &facts[k];
            if read.shows(f) == Some(true) {
                facts[k].known_us = Some(f.known_us.map_or(o.end_us, |t| t.min(o.end_us)));
            }
        }
    }
}

/// Each writer's creations attempted in each namespace, by index.
fn attempted<'h>(facts: &[Fact<'h>]) -> HashMap<(u32, &'h str), Vec<u64>> {
    let mut attempted: HashMap<(u32, &str), Vec<u64>> = HashMap::new();
    for f in facts {
        if let Some((w, n)) = f.created {
            attempted.entry((w, parent(f.id))).or_default().push(n);
        }
    }
    for made in attempted.values_mut() {
        made.sort_unstable();
        made.dedup();
    }
    attempted
}

/// [`check_paused`], every read held against every commit it observes where `all` (the
/// reference), or against those that can change a finding ([`visits`]).
fn held(
    history: &[Op],
    (t0_us, margin_us): (u64, u64),
    paused_us: &[[u64; 2]],
    all: bool,
) -> Consistency {
    let mut c = Consistency::default();
    let mut facts = commits(history, &mut c);
    let reads = reads(history);
    // The commits each read observes: by namespace for listings, by entry for look-ups.
    let (mut by_ns, mut by_id) = (
        HashMap::<&str, Vec<usize>>::new(),
        HashMap::<&str, Vec<usize>>::new(),
    );
    for (k, f) in facts.iter().enumerate() {
        by_id.entry(f.id).or_default().push(k);
        by_ns.entry(parent(f.id)).or_default().push(k);
    }
    seen_landed(&mut facts, &reads);
    let attempted = attempted(&facts);
    let removed: HashSet<&str> = (facts.iter())
        .filter(|f| f.created.is_none())
        .map(|f| f.id)
        .collect();
    let mut k = Checker {
        c,
        t0_us,
        margin_us,
        paused: paused_us.to_vec(),
        lags: Vec::new(),
        lows: Vec::new(),
        missed: HashMap::new(),
        last: HashMap::new(),
        lagged: HashSet::new(),
    };
    let mut visits = visits::Visits::new(&facts, all);
    for (at, (o, read)) in reads.iter().enumerate() {
        // Only reads that observe a commit (or show one no one made) are checked and
        // counted: a look-up of an entry no one touched could not have been stale.
        let checked = visits.observes(read);
        let (mut stale, mut resurrected, mut own) = (false, false, false);
        let observed = observed(read, &by_ns, &by_id);
        let visit = visits.of(at, &reads, &facts, observed, k.margin_us);
        for &i in &visit {
            if let Some(shows) = read.shows(&facts[i]) {
                let (s, r, o) = k.against(o, read, i, &facts[i], shows);
                (stale, resurrected, own) = (stale || s, resurrected || r, own || o);
            }
        }
        visits.after(at, &reads, &facts, &visit);
        let phantoms = k.c.phantoms;
        k.unattempted(o, read, &attempted, &removed);
        k.c.reads += u64::from(checked || k.c.phantoms > phantoms);
        k.c.stale_reads += u64::from(stale);
        k.c.resurrections += u64::from(resurrected);
        k.c.read_your_writes_violations += u64::from(own);
    }
    k.versions(history);
    // Each held to the rule of a stale read: its last miss began past the clocks' margin.
    let unseen: Vec<u64> = (k.missed.iter())
        .filter(|&(key, &(ack, t))| !k.lagged.contains(key) && t > ack + k.margin_us)
        .map(|(_, &(ack, t))| since(ack, [t, t], k.margin_us, &k.paused)[0])
        .collect();
    let mut c = k.c;
    c.stale_rate = match c.reads {
        0 => 0.0,
        n => c.stale_reads as f64 / n as f64,
    };
    let sorted = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v
    };
    let (lags, lows) = (sorted(k.lags), sorted(k.lows));
    c.lag_pairs = lags.len() as u64;
    let pct = |v: &[f64], p| crate::stats::percentile(v, p);
    (c.lag_p50_ms, c.lag_p99_ms, c.lag_max_ms) =
        (pct(&lags, 0.5), pct(&lags, 0.99), lags.last().copied());
    (c.lag_low_p50_ms, c.lag_low_p99_ms, c.lag_low_max_ms) =
        (pct(&lows, 0.5), pct(&lows, 0.99), lows.last().copied());
    c.lag_unseen_pairs = unseen.len() as u64;
    c.lag_unseen_low_max_ms = unseen.iter().max().map(|&us| ms(us));
    c.read_period_ms = read_period(history);
    let paused: u64 = paused_us.iter().map(|&[a, b]| b.saturating_sub(a)).sum();
    c.paused_ms = (!paused_us.is_empty()).then(|| ms(paused));
    c
}

/// The median time between two consecutive reads of one reader, over every reader: the
/// cadence that bounds how finely a lag is seen.
fn read_period(history: &[Op]) -> Option<f64> {
    let mut starts: HashMap<u32, Vec<u64>> = HashMap::new();
    for o in history.iter().filter(|o| o.what.is_read()) {
        starts.entry(o.client).or_default().push(o.start_us);
    }
    let mut gaps: Vec<f64> = Vec::new();
    for mut s in starts.into_values() {
        s.sort_unstable();
        gaps.extend(s.windows(2).map(|w| ms(w[1] - w[0])));
    }
    gaps.sort_by(f64::total_cmp);
    crate::stats::percentile(&gaps, 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACK: Outcome = Outcome::Acknowledged;

    fn created(client: u32, n: u64, end_ms: u64) -> Op {
        Op {
            client,
            start_us: (end_ms - 5) * 1000,
            end_us: end_ms * 1000,
            version: None,
            version_to: None,
            what: What::Created {
                id: format!("ns_0$bench_d{client}_{n}"),
                n,
                table: true,
                outcome: ACK,
            },
        }
    }

    fn removed(client: u32, table: u64, end_ms: u64, outcome: Outcome) -> Op {
        Op {
            client,
            start_us: (end_ms - 5) * 1000,
            end_us: end_ms * 1000,
            version: None,
            version_to: None,
            what: What::Removed {
                id: format!("ns_0$table_{table}"),
                table: true,
                outcome,
            },
        }
    }

    /// A listing of ns_0 by `client` at `start_ms`: (writer, indices seen from 0) and the
    /// golden tables it did not see.
    fn listed(client: u32, start_ms: u64, seen: &[(u32, u64)], gone: &[u64]) -> Op {
        Op {
            client,
            start_us: start_ms * 1000,
            end_us: start_ms * 1000 + 1000,
            version: None,
            version_to: None,
            what: What::Listed {
                namespace: "ns_0".into(),
                tables: true,
                seen: (seen.iter())
                    .filter(|s| s.1 > 0)
                    .map(|&(writer, n)| Seen {
                        writer,
                        runs: vec![[0, n]],
                    })
                    .collect(),
                pages: vec![],
                gone: Some(gone.iter().map(|t| format!("ns_0$table_{t}")).collect()),
            },
        }
    }

    fn probed(client: u32, start_ms: u64, table: u64, found: bool) -> Op {
        Op {
            client,
            start_us: start_ms * 1000,
            end_us: start_ms * 1000 + 1000,
            version: None,
            version_to: None,
            what: What::Probed {
                id: format!("ns_0$table_{table}"),
                found,
            },
        }
    }

    #[test]
    fn a_commit_a_reader_never_shows_has_a_lag_bounded_below_only() {
        // #0 acknowledged at 10 ms, #1 at 20 ms; reader 1 lists every 4 ms and shows #0 from
        // 16 ms but never #1 (as a reader frozen on an old view would); reader 2 lists once,
        // at 2 ms, before either.
        let mut h = vec![
            created(0, 0, 10),
            created(0, 1, 20),
            listed(2, 2, &[(0, 0)], &[]),
        ];
        for t in (0..40).step_by(4) {
            h.push(listed(1, t, &[(0, u64::from(t > 14))], &[]));
        }
        let c = check(&h, 0, 0);
        // (#0, reader 1): missed by the read begun at 12, shown by the one from 16 to 17 ms:
        // lag in [2, 7] ms.
        assert_eq!(
            (c.lag_pairs, c.lag_low_max_ms, c.lag_max_ms),
            (1, Some(2.0), Some(7.0))
        );
        // (#1, reader 1): missed by every read from 24 to 36 ms: at least 16 ms, no upper
        // bound. Reader 2 read before either acknowledgement: no pair.
        assert_eq!(
            (c.lag_unseen_pairs, c.lag_unseen_low_max_ms),
            (1, Some(16.0))
        );
        // Stale: the read at 12 ms (#0) and the four from 24 ms (#1).
        assert_eq!(c.stale_reads, 5, "{c:?}");
        // With clocks 20 ms uncertain (clients on several hosts), the last miss of #1 (16 ms
        // after it) is within the margin: no stale read, so no pair never seen either.
        let c = check(&h, 0, 20_000);
        assert_eq!(
            (c.lag_unseen_pairs, c.lag_unseen_low_max_ms),
            (0, None),
            "{c:?}"
        );
    }

    #[test]
    fn a_strongly_consistent_history_has_no_anomaly_and_a_lag_of_the_next_read() {
        // Writer 0 creates #0 at 10 ms and #1 at 20 ms and removes table_4 at 30 ms;
        // reader 1 lists every 4 ms.
        let mut h = vec![created(0, 0, 10), created(0, 1, 20), removed(0, 4, 30, ACK)];
        for t in (0..40).step_by(4) {
            let n = match t {
                t if t > 20 => 2,
                t if t > 10 => 1,
                _ => 0,
            };
            let gone: &[u64] = if t > 30 { &[4] } else { &[] };
            h.push(listed(1, t, &[(0, n)], gone));
        }
        h.push(probed(2, 31, 4, false));
        let c = check(&h, 0, 0);
        assert_eq!(c.reads, 11);
        assert_eq!((c.creations, c.removals), (2, 1));
        assert_eq!(c.anomalies(), 0, "{c:?}");
        assert_eq!(c.lag_pairs, 3);
        // Acknowledged at 10, 20 and 30; the next listings ran from 12, 24 and 32, 1 ms each
        // (a look-up gives no lag: when it reads an entry is the draw's).
        assert_eq!(c.lag_p50_ms, Some(3.0));
        assert_eq!(c.lag_max_ms, Some(5.0));
        // No read begun after an acknowledgement missed it: the lag's lower bound is 0, and
        // its upper bound the time to the end of the reader's next listing, every 4 ms.
        assert_eq!(c.lag_low_max_ms, Some(0.0));
        assert_eq!(c.read_period_ms, Some(4.0));
        assert!(c.first_violation.is_none());
    }

    #[test]
    fn stale_reads_going_backwards_and_phantoms_are_named() {
        let h = vec![
            created(0, 0, 10),
            // Begins after #0's acknowledgement and misses it: stale.
            listed(1, 12, &[], &[]),
            listed(1, 16, &[(0, 1)], &[]),
            // Sees less than before: stale and not monotonic.
            listed(1, 20, &[], &[]),
            // A writer's #1 to #5 that it never created: phantoms.
            listed(2, 24, &[(0, 6)], &[]),
            // Its own creation, missed: read your writes.
            listed(0, 30, &[], &[]),
        ];
        let c = check(&h, 0, 0);
        assert_eq!(c.stale_reads, 3, "{c:?}");
        assert_eq!(c.monotonic_violations, 1);
        assert_eq!(c.phantoms, 5);
        assert_eq!(c.read_your_writes_violations, 1);
        assert!((c.stale_rate - 0.6).abs() < 1e-9);
        let first = c.first_violation.unwrap();
        assert_eq!(
            first,
            "client 1 listed ns_0 at +12.0 ms and did not see writer 0's #0, acknowledged at \
             +10.0 ms"
        );
    }

    /// A reader that keeps missing a commit it began after: the lag's lower bound is the
    /// start of its last read that missed it, the upper the end of the first that showed it.
    #[test]
    fn a_lag_is_bounded_below_by_the_last_read_that_missed_it() {
        let mut h = vec![created(0, 0, 10)];
        for (t, seen) in [(12, 0), (16, 0), (20, 1), (24, 1)] {
            h.push(listed(1, t, &[(0, seen)], &[]));
        }
        let c = check(&h, 0, 0);
        assert_eq!(
            (c.lag_low_p50_ms, c.lag_p50_ms),
            (Some(6.0), Some(11.0)),
            "{c:?}"
        );
        assert_eq!(c.stale_reads, 2);
        // Paused from 13 to 15 ms and from 17 to 19 (`bench ab`'s slices, the other arm
        // running): each bound counts only the time the clients ran.
        let paused = check_paused(&h, 0, 0, &[[13_000, 15_000], [17_000, 19_000]]);
        assert_eq!(
            (paused.lag_low_p50_ms, paused.lag_p50_ms),
            (Some(4.0), Some(7.0)),
            "{paused:?}"
        );
        assert_eq!((paused.paused_ms, c.paused_ms), (Some(4.0), None));
    }

    /// A lag's bounds: from the acknowledgement to the start of the last read begun after it
    /// that missed the commit, and to the end of the first that showed it, since a read may
    /// take the state it serves at any moment between its start and its end.
    #[test]
    fn a_lag_runs_to_the_end_of_the_first_read_that_showed_it() {
        // Acknowledged at 10 ms; one long listing from 20 to 110 ms shows it: [0, 100].
        let mut show = listed(1, 20, &[(0, 1)], &[]);
        show.end_us = 110_000;
        let c = check(&[created(0, 0, 10), show.clone()], 0, 0);
        assert_eq!((c.lag_low_max_ms, c.lag_max_ms), (Some(0.0), Some(100.0)));
        // A read from 12 to 19 ms that missed it first: at least 2 ms.
        let mut miss = listed(1, 12, &[(0, 0)], &[]);
        miss.end_us = 19_000;
        let c = check(&[created(0, 0, 10), miss.clone(), show.clone()], 0, 0);
        assert_eq!((c.lag_low_max_ms, c.lag_max_ms), (Some(2.0), Some(100.0)));
        // The one function both checkers take their bounds from, less a pause.
        assert_eq!(since(10_000, [12_000, 110_000], 0, &[]), [2_000, 100_000]);
        assert_eq!(
            since(10_000, [12_000, 110_000], 0, &[[50_000, 60_000]]),
            [2_000, 90_000]
        );
        // On several hosts, each bound widened by how far their clocks may disagree.
        assert_eq!(since(10_000, [12_000, 110_000], 1_500, &[]), [500, 101_500]);
        assert_eq!(since(10_000, [11_000, 11_000], 1_500, &[])[0], 0);
        let c = check(&[created(0, 0, 10), miss, show], 0, 1_500);
        assert_eq!((c.lag_low_max_ms, c.lag_max_ms), (Some(0.5), Some(101.5)));
    }

    /// A listing that lists an entry twice is an anomaly of its own, named.
    #[test]
    fn a_listing_that_lists_an_entry_twice_is_named() {
        use crate::oplog::{Observed, Outcome as Logged, sample};
        use crate::plan::Operation;
        let listing = |twice: &[&str]| {
            let mut o = sample(
                2,
                Operation::ListTables { cold: false },
                0,
                "ns_0",
                Logged::Ok,
            );
            o.attempt.at_us = Some([5_000, 6_000]);
            o.observed = Observed::Listed {
                seen: vec![],
                gone: None,
                twice: twice.iter().map(|n| n.to_string()).collect(),
                pages: vec![],
            };
            o
        };
        let mut c = Consistency::default();
        c.listed_twice(&[listing(&[]), listing(&["bench_d0_3"])], 1_000);
        assert_eq!((c.duplicates, c.anomalies()), (1, 1));
        assert_eq!(
            c.first_violation.as_deref(),
            Some("client 2 listed ns_0 at +4.0 ms and saw bench_d0_3 twice")
        );
    }

    /// Read your writes is counted by read: a listing that misses two of its client's own
    /// commits is one violation (and one stale read).
    #[test]
    fn read_your_writes_is_counted_per_read() {
        let h = vec![
            created(0, 0, 10),
            created(0, 1, 11),
            listed(0, 20, &[], &[]),
            listed(0, 30, &[(0, 2)], &[]),
        ];
        let c = check(&h, 0, 0);
        assert_eq!(
            (c.reads, c.stale_reads, c.read_your_writes_violations),
            (2, 1, 1),
            "{c:?}"
        );
    }

    #[test]
    fn a_removed_entry_seen_again_is_a_resurrection_and_one_gone_unremoved_a_phantom() {
        let h = vec![
            removed(0, 4, 10, ACK),
            listed(1, 12, &[], &[4]),
            // Seen again after its removal was acknowledged, by a listing and a look-up.
            listed(1, 16, &[], &[]),
            probed(2, 18, 4, true),
            // table_7 gone, which no one removed; table_9 not found.
            listed(2, 20, &[], &[4, 7]),
            probed(1, 22, 9, false),
        ];
        let c = check(&h, 0, 0);
        assert_eq!((c.stale_reads, c.resurrections), (2, 2), "{c:?}");
        assert_eq!(c.monotonic_violations, 1);
        assert_eq!(
            c.phantoms, 1,
            "a look-up of an entry no one touched is not judged"
        );
        assert_eq!(c.reads, 4, "nor counted among the reads checked");
        assert_eq!(
            c.first_violation.unwrap(),
            "client 1 listed ns_0 at +16.0 ms and still saw ns_0$table_4, acknowledged at \
             +10.0 ms"
        );
    }

    #[test]
    fn an_indeterminate_commit_is_judged_by_what_the_copy_showed() {
        let maybe = |landed| Outcome::Indeterminate { landed };
        let indeterminate = |n, landed| Op {
            what: What::Created {
                id: format!("ns_0$bench_d0_{n}"),
                n,
                table: true,
                outcome: maybe(landed),
            },
            ..created(0, n, 10)
        };
        // Unresolved: no anomaly either way.
        let h = vec![
            indeterminate(0, None),
            listed(1, 12, &[], &[]),
            listed(1, 14, &[(0, 1)], &[]),
        ];
        let c = check(&h, 0, 0);
        assert_eq!((c.indeterminate, c.indeterminate_landed), (1, None));
        assert_eq!(c.anomalies(), 0, "{c:?}");
        // Landed: required of every read begun after the first that saw it ended (15 ms).
        let h = vec![
            indeterminate(0, Some(true)),
            listed(1, 12, &[], &[]),
            listed(1, 14, &[(0, 1)], &[]),
            listed(2, 15, &[], &[]),
            listed(2, 16, &[], &[]),
        ];
        let c = check(&h, 0, 0);
        assert_eq!(c.indeterminate_landed, Some(1));
        assert_eq!((c.stale_reads, c.lag_pairs), (1, 0), "{c:?}");
        assert!(
            (c.first_violation.unwrap()).ends_with("seen landed at +15.0 ms"),
            "the read that proved it landed names the time"
        );
        // Did not land, yet seen: a phantom; and a removal that did not land, seen gone.
        let h = vec![
            indeterminate(0, Some(false)),
            removed(0, 3, 10, maybe(Some(false))),
            listed(1, 12, &[(0, 1)], &[3]),
        ];
        let c = check(&h, 0, 0);
        assert_eq!((c.phantoms, c.indeterminate_landed), (2, Some(0)), "{c:?}");
        // Seen before it was attempted.
        let h = vec![created(0, 0, 50), listed(1, 12, &[(0, 1)], &[])];
        let c = check(&h, 0, 0);
        assert_eq!(c.phantoms, 1, "{c:?}");
        assert!(
            c.first_violation
                .unwrap()
                .ends_with("attempted only at +45.0 ms")
        );
    }

    fn version(client: u32, at_ms: u64, version: u64, commit: bool) -> Op {
        Op {
            client,
            start_us: (at_ms - 2) * 1000,
            end_us: at_ms * 1000,
            version: None,
            version_to: None,
            what: What::Versioned { version, commit },
        }
    }

    #[test]
    fn table_versions_are_read_against_the_acknowledged_commits() {
        // Writer 0 commits versions 2 and 3 (acknowledged at 10 and 20 ms); reader 1's reads
        // end 2 ms after they begin.
        let h = vec![
            version(0, 10, 2, true),
            version(0, 20, 3, true),
            version(1, 9, 1, false),
            version(1, 15, 2, false),
            version(1, 25, 3, false),
        ];
        let c = check(&h, 0, 0);
        assert_eq!((c.versions, c.reads), (2, 3));
        assert_eq!(c.anomalies(), 0, "{c:?}");
        // Version 2 first read by the read from 13 to 15 ms, version 3 by the one from 23 to
        // 25 ms: each at most 5 ms after its acknowledgement.
        assert_eq!((c.lag_pairs, c.lag_max_ms), (2, Some(5.0)));
        // Behind an acknowledged commit, and back from what it saw.
        let h = vec![
            version(0, 10, 2, true),
            version(0, 20, 3, true),
            version(1, 25, 3, false),
            version(1, 30, 2, false),
            version(0, 35, 2, false),
        ];
        let c = check(&h, 0, 0);
        assert_eq!((c.stale_reads, c.monotonic_violations), (2, 1), "{c:?}");
        assert_eq!(c.read_your_writes_violations, 1);
        assert_eq!(
            c.first_violation.unwrap(),
            "client 1 read the table's version at +28.0 ms and saw 2, not 3, acknowledged at \
             +20.0 ms"
        );
    }

    /// A listing of namespaces shows the namespaces created there, not the tables, and a
    /// listing of tables the reverse.
    #[test]
    fn a_listing_shows_the_creations_of_its_kind() {
        let created_ns = Op {
            what: What::Created {
                id: "ns_0$bench_w0_1".into(),
                n: 1,
                table: false,
                outcome: ACK,
            },
            ..created(0, 1, 10)
        };
        let mut namespaces = listed(1, 12, &[(0, 2)], &[]);
        if let What::Listed { tables, seen, .. } = &mut namespaces.what {
            (*tables, seen[0].runs) = (false, vec![[1, 2]]);
        }
        // Writer 0's table #0 and namespace #1; a listing of tables sees only #0, one of
        // namespaces only #1.
        let h = vec![
            created(0, 0, 10),
            created_ns,
            listed(1, 12, &[(0, 1)], &[]),
            namespaces,
        ];
        let c = check(&h, 0, 0);
        assert_eq!(c.anomalies(), 0, "{c:?}");
        assert_eq!(c.lag_pairs, 2);
    }

    #[test]
    fn other_namespaces_are_apart() {
        let mut h = vec![listed(1, 12, &[], &[])];
        h.push(Op {
            what: What::Created {
                id: "ns_1$bench_d0_1".into(),
                n: 1,
                table: true,
                outcome: ACK,
            },
            ..created(0, 1, 11)
        });
        let c = check(&h, 0, 0);
        assert_eq!(c.anomalies(), 0, "{c:?}");
    }
}
