//! Checks on the `__manifest` version order, where each operation's version is known from
//! its own requests ([`crate::versions`]) rather than inferred: the commits of a cell and the
//! reads of its catalog, each tied to the version it made or served. Every version holds
//! exactly the commits made at or before it, so
//! - a read that served version `v` shows every commit made at or before `v` and none made
//!   after it (`not_its_version`);
//! - a read shows a prefix of the commits it observes, in version order, whatever version
//!   it served: one that shows a commit while missing an earlier one is no state the catalog
//!   ever had (`no_such_state`; two readers that see two commits in opposite orders — a long
//!   fork — make one such read at least);
//! - a client's versions never go back (`versions_back`);
//! - a commit acknowledged before another began made the lower version (`write_order`);
//! - no version is made twice (`one_version_twice`).
//!
//! Each check counts its failures and names the first with the operations, times and
//! versions that prove it. It runs in O(n log n) of the history: the commits a listing
//! observes are looked up by writer, as ranges of their indices, in a tree of versions.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{Op, Outcome, Seen, What, parent};
use crate::versions::Page;

/// One check: how many operations failed it, and the first, named.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
}

impl Check {
    fn found(&mut self, witness: impl FnOnce() -> String) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(witness());
        }
    }
}

/// The checks on the version order, as the record keeps them (`consistency.order`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Order {
    /// Creations and removals of the history, and of them those whose version is known.
    pub commits: u64,
    pub commits_known: u64,
    /// Listings and look-ups of the history, and of them those whose version is known.
    pub reads: u64,
    pub reads_known: u64,
    /// Of the listings, the pages of those listed in more than one page (each judged on its
    /// own), and the pages whose version is known.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pages: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pages_known: u64,
    /// Why the others' are not, and how many of each (`Some` where any are not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<std::collections::BTreeMap<String, u64>>,
    /// A read that served a version and does not show exactly the commits made at or
    /// before it.
    pub not_its_version: Check,
    /// A read that shows a commit and misses one of a lower version.
    pub no_such_state: Check,
    /// A client whose version went back: an operation of a lower version than one before
    /// it.
    pub versions_back: Check,
    /// A commit of a lower version than one acknowledged before it began.
    pub write_order: Check,
    /// A version two commits made.
    pub one_version_twice: Check,
    /// The copy's versions after the cell's first that verification read and held against
    /// the cell's commits (each the effect of one commit that took effect, none missing, each
    /// commit's named version its own; a disagreement fails verification); absent where it
    /// did not read them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain_versions: Option<u64>,
    /// Stale reads restated per version (the per-entry `stale_reads` count them among the
    /// anomalies; these are not counted again).
    #[serde(default)]
    pub stale: Stale,
}

/// Reads that served a version lower than one acknowledged (by more than the clocks' margin)
/// before they began: how many, the first named, how many versions behind the most was, and
/// how long the first version each missed had been acknowledged when it served — at least
/// (to the read's start) and at most (to its end), the greatest of each over the reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stale {
    pub count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    pub versions_behind_max: u64,
    pub lag_low_max_ms: f64,
    pub lag_high_max_ms: f64,
}

impl Order {
    /// The checks, in the order the record names them.
    fn checks(&self) -> [&Check; 5] {
        [
            &self.not_its_version,
            &self.no_such_state,
            &self.versions_back,
            &self.write_order,
            &self.one_version_twice,
        ]
    }

    /// Every failure of every check.
    pub fn violations(&self) -> u64 {
        self.checks().iter().map(|c| c.count).sum()
    }

    /// The first failure named, of the first check that has one.
    pub fn first(&self) -> Option<&str> {
        self.checks().into_iter().find_map(|c| c.first.as_deref())
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A commit of a known version.
#[derive(Clone, Copy)]
struct Made<'h> {
    op: &'h Op,
    v: u64,
}

impl Made<'_> {
    fn said(&self) -> String {
        match &self.op.what {
            What::Created { n, .. } => format!("writer {}'s #{n} (v{})", self.op.client, self.v),
            What::Removed { id, .. } => format!("the removal of {id} (v{})", self.v),
            _ => format!("a commit (v{})", self.v),
        }
    }
}

/// Range minimum and maximum over one writer's creations' versions, in the order of their
/// indices.
struct Tree {
    n: usize,
    min: Vec<(u64, u32)>,
    max: Vec<(u64, u32)>,
}

const NO_MIN: (u64, u32) = (u64::MAX, u32::MAX);
const NO_MAX: (u64, u32) = (0, u32::MAX);

impl Tree {
    fn new(versions: &[u64]) -> Tree {
        let n = versions.len();
        let (mut min, mut max) = (vec![NO_MIN; 2 * n], vec![NO_MAX; 2 * n]);
        for (i, &v) in versions.iter().enumerate() {
            min[n + i] = (v, i as u32);
            max[n + i] = (v, i as u32);
        }
        for i in (1..n).rev() {
            min[i] = min[2 * i].min(min[2 * i + 1]);
            max[i] = max[2 * i].max(max[2 * i + 1]);
        }
        Tree { n, min, max }
    }

    /// The least and the greatest version in `[l, r)`, with their places.
    fn query(&self, l: usize, r: usize) -> ((u64, u32), (u64, u32)) {
        let (mut lo, mut hi) = (NO_MIN, NO_MAX);
        let (mut l, mut r) = (l + self.n, r + self.n);
        while l < r {
            if l & 1 == 1 {
                (lo, hi) = (lo.min(self.min[l]), hi.max(self.max[l]));
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                (lo, hi) = (lo.min(self.min[r]), hi.max(self.max[r]));
            }
            (l, r) = (l / 2, r / 2);
        }
        (lo, hi)
    }
}

/// One writer's creations of a kind in one namespace, by index.
struct Writer<'h> {
    indices: Vec<u64>,
    made: Vec<Made<'h>>,
    tree: Tree,
}

/// What a read saw of the commits it observes: the greatest version it shows and the least
/// it misses.
#[derive(Default)]
struct Extremes<'h> {
    shown: Option<Made<'h>>,
    missed: Option<Made<'h>>,
}

impl<'h> Extremes<'h> {
    fn add(&mut self, m: Made<'h>, shows: bool) {
        if shows {
            if self.shown.is_none_or(|s| m.v > s.v) {
                self.shown = Some(m);
            }
        } else if self.missed.is_none_or(|s| m.v < s.v) {
            self.missed = Some(m);
        }
    }
}

/// The commits of known versions, indexed as reads observe them.
#[derive(Default)]
struct Index<'h> {
    /// (namespace, tables) → writer → its creations there.
    created: HashMap<(&'h str, bool), HashMap<u32, Writer<'h>>>,
    /// A namespace → the removals of its tables.
    removed: HashMap<&'h str, Vec<(&'h str, Made<'h>)>>,
    /// An entry → the commits on it (created: true).
    on: HashMap<&'h str, Vec<(bool, Made<'h>)>>,
    /// (namespace, tables) → the creations there and (of tables) the removals, as they
    /// began: what a listing in pages observes, page by page.
    scoped: HashMap<(&'h str, bool), Vec<Made<'h>>>,
}

impl<'h> Index<'h> {
    fn new(known: &[Made<'h>]) -> Index<'h> {
        let mut ix = Index::default();
        // (namespace, tables) → writer → (index, commit).
        type ByWriter<'h> = HashMap<u32, Vec<(u64, Made<'h>)>>;
        let mut by: HashMap<(&str, bool), ByWriter> = HashMap::new();
        for &m in known {
            match &m.op.what {
                What::Created { id, n, table, .. } => {
                    let writers = by.entry((parent(id), *table)).or_default();
                    writers.entry(m.op.client).or_default().push((*n, m));
                    ix.on.entry(id).or_default().push((true, m));
                    ix.scoped.entry((parent(id), *table)).or_default().push(m);
                }
                What::Removed { id, table, .. } => {
                    if *table {
                        ix.removed.entry(parent(id)).or_default().push((id, m));
                        ix.scoped.entry((parent(id), true)).or_default().push(m);
                    }
                    ix.on.entry(id).or_default().push((false, m));
                }
                _ => {}
            }
        }
        for (key, writers) in by {
            let writers = (writers.into_iter())
                .map(|(w, mut made)| {
                    made.sort_by_key(|&(n, m)| (n, m.v));
                    let versions: Vec<u64> = made.iter().map(|(_, m)| m.v).collect();
                    let w2 = Writer {
                        indices: made.iter().map(|&(n, _)| n).collect(),
                        made: made.into_iter().map(|(_, m)| m).collect(),
                        tree: Tree::new(&versions),
                    };
                    (w, w2)
                })
                .collect();
            ix.created.insert(key, writers);
        }
        for commits in ix.scoped.values_mut() {
            commits.sort_by_key(|m| m.op.start_us);
        }
        ix
    }

    /// What each page of a listing of `namespace` in `pages`, which ended at `end_us`, saw of
    /// the commits it observes, each over its own range of names: every commit there begun
    /// before the listing ended, and every one it showed — in time proportional to what it
    /// listed and to the commits begun before it ended, not to the history.
    fn paged(
        &self,
        (namespace, tables): (&str, bool),
        (seen, gone): (&[Seen], Option<&[String]>),
        pages: &[Page],
        end_us: u64,
    ) -> Vec<Extremes<'h>> {
        let mut e: Vec<Extremes> = pages.iter().map(|_| Extremes::default()).collect();
        let last = pages.len().saturating_sub(1);
        // The page whose range holds the entry's name: after the one before's last name,
        // up to its own.
        let page_of = |id: &str| {
            let name = id.rsplit('$').next().unwrap_or(id);
            let i = pages.partition_point(|p| p.through.as_deref().is_some_and(|t| t < name));
            i.min(last)
        };
        let gone: Option<std::collections::HashSet<&str>> = gone
            .filter(|_| tables)
            .map(|g| g.iter().map(String::as_str).collect());
        let by_writer = self.created.get(&(namespace, tables));
        let shows = |m: &Made| match &m.op.what {
            What::Created { n, .. } => Some(
                (seen.iter())
                    .find(|s| s.writer == m.op.client)
                    .is_some_and(|s| s.has(*n)),
            ),
            What::Removed { id, .. } => gone.as_ref().map(|g| g.contains(id.as_str())),
            _ => None,
        };
        let id = |m: &Made<'h>| -> &'h str {
            match &m.op.what {
                What::Created { id, .. } | What::Removed { id, .. } => id,
                _ => "",
            }
        };
        let scoped = self.scoped.get(&(namespace, tables));
        let scoped = scoped.map_or(&[][..], Vec::as_slice);
        let begun = scoped.partition_point(|m| m.op.start_us < end_us);
        for m in &scoped[..begun] {
            if let Some(shown) = shows(m) {
                e[page_of(id(m))].add(*m, shown);
            }
        }
        // Those it showed that began after it ended.
        let later = |m: &&Made| m.op.start_us >= end_us;
        for s in seen {
            let Some(w) = by_writer.and_then(|b| b.get(&s.writer)) else {
                continue;
            };
            for n in s.indices() {
                let i = w.indices.partition_point(|&k| k < n);
                for m in w.made[i..].iter().take_while(|m| match m.op.what {
                    What::Created { n: k, .. } => k == n,
                    _ => false,
                }) {
                    if later(&m) {
                        e[page_of(id(m))].add(*m, true);
                    }
                }
            }
        }
        for g in gone.iter().flatten() {
            for (created, m) in self.on.get(g).into_iter().flatten() {
                if !created && later(&m) {
                    e[page_of(g)].add(*m, true);
                }
            }
        }
        e
    }

    /// What a listing of `namespace` saw of the commits it observes.
    fn listing(
        &self,
        (namespace, tables): (&str, bool),
        seen: &[Seen],
        gone: Option<&[String]>,
    ) -> Extremes<'h> {
        let mut e = Extremes::default();
        for (w, writer) in self.created.get(&(namespace, tables)).into_iter().flatten() {
            let runs = seen
                .iter()
                .find(|s| s.writer == *w)
                .map_or(&[][..], |s| &s.runs);
            let mut from = 0;
            let take = |l: usize, r: usize, shows: bool, e: &mut Extremes<'h>| {
                if l < r {
                    let (lo, hi) = writer.tree.query(l, r);
                    let (_, i) = if shows { hi } else { lo };
                    e.add(writer.made[i as usize], shows);
                }
            };
            for run in runs {
                let l = writer.indices.partition_point(|&n| n < run[0]);
                let r = writer.indices.partition_point(|&n| n < run[1]);
                take(from, l, false, &mut e);
                take(l, r, true, &mut e);
                from = r;
            }
            take(from, writer.indices.len(), false, &mut e);
        }
        if let (Some(gone), true) = (gone, tables) {
            let gone: std::collections::HashSet<&str> = gone.iter().map(String::as_str).collect();
            for &(id, m) in self.removed.get(namespace).into_iter().flatten() {
                e.add(m, gone.contains(id));
            }
        }
        e
    }

    /// What a look-up of `id` that found it or not saw of the commits on it.
    fn probe(&self, id: &str, found: bool) -> Extremes<'h> {
        let mut e = Extremes::default();
        for &(created, m) in self.on.get(id).into_iter().flatten() {
            e.add(m, found == created);
        }
        e
    }
}

/// The versions an operation made or served: one, or a read's range through `bench serve`.
fn span(op: &Op) -> Option<(u64, u64)> {
    let lo = op.version?;
    Some((lo, op.version_to.unwrap_or(lo).max(lo)))
}

/// A version or a range of them, as witnesses say it.
fn said(lo: u64, hi: u64) -> String {
    match lo == hi {
        true => format!("v{lo}"),
        false => format!("v{lo}–v{hi}"),
    }
}

/// How a witness names a read.
fn verb(op: &Op) -> String {
    match &op.what {
        What::Listed { namespace, .. } if namespace.is_empty() => "listed the root".into(),
        What::Listed { namespace, .. } => format!("listed {namespace}"),
        What::Probed { id, .. } => format!("looked up {id}"),
        What::Created { id, .. } => format!("created {id}"),
        What::Removed { id, .. } => format!("removed {id}"),
        What::Versioned { .. } => "read the table's version".into(),
    }
}

/// Check `history` against the version order its operations carry. `t0_us`: the time
/// witnesses tell times from; `margin_us`: how uncertain the clocks are against one another
/// (a commit must be acknowledged that much before another began to be ordered before it).
pub fn check(history: &[Op], t0_us: u64, margin_us: u64) -> Order {
    check_paused(history, t0_us, margin_us, &[])
}

/// [`check`] of a run whose clients were paused in `paused` (`bench ab`'s pairs: one arm
/// waits while the other runs): a stale read's lag counts only the time the run ran, as
/// the checks of what readers saw count it ([`super::since`]).
pub fn check_paused(history: &[Op], t0_us: u64, margin_us: u64, paused: &[[u64; 2]]) -> Order {
    let mut o = Order::default();
    let at = |us: u64| us.saturating_sub(t0_us) as f64 / 1000.0;
    let mut known: Vec<Made> = Vec::new();
    for op in history.iter().filter(|op| op.what.commit().is_some()) {
        o.commits += 1;
        if let Some(v) = op.version {
            known.push(Made { op, v });
        }
    }
    o.commits_known = known.len() as u64;
    o.one_version_twice = twice(&known, &at);
    o.write_order = write_order(&known, margin_us, &at);
    o.versions_back = versions_back(history, &at);
    o.stale = stale(history, &known, (margin_us, paused), &at);
    reads(history, &known, &at, &mut o);
    o
}

/// Reads of a known version below one acknowledged before they began, each against the
/// earliest acknowledgement of a version above the highest it served (a listing in pages: its
/// highest page's). Commits enter in the order they were acknowledged; a tree over their
/// versions keeps the earliest acknowledgement at or above each, so the history is read in
/// O(n log n).
fn stale(
    history: &[Op],
    known: &[Made],
    (margin_us, paused): (u64, &[[u64; 2]]),
    at: &dyn Fn(u64) -> f64,
) -> Stale {
    let mut st = Stale::default();
    let acked = acknowledged(known);
    let mut versions: Vec<u64> = acked.iter().map(|m| m.v).collect();
    versions.sort_unstable();
    versions.dedup();
    // Fenwick tree over versions, highest first: the earliest acknowledged at or above one.
    let n = versions.len();
    let mut tree: Vec<Option<Made>> = vec![None; n + 1];
    let slot = |v: u64| n - versions.partition_point(|&x| x < v);
    let mut reads: Vec<(&Op, u64, u64)> = (history.iter())
        .filter(|op| matches!(op.what, What::Listed { .. } | What::Probed { .. }))
        .filter_map(|op| span(op).map(|(lo, hi)| (op, lo, hi)))
        .collect();
    reads.sort_by_key(|(op, _, _)| op.start_us);
    let (mut next, mut top): (usize, Option<Made>) = (0, None);
    for (op, lo, hi) in reads {
        while next < acked.len() && acked[next].op.end_us + margin_us < op.start_us {
            let m = acked[next];
            let mut i = slot(m.v);
            while i <= n {
                if tree[i].is_none() {
                    tree[i] = Some(m);
                }
                i += i & i.wrapping_neg();
            }
            top = top.filter(|t| t.v >= m.v).or(Some(m));
            next += 1;
        }
        let Some(t) = top.filter(|t| t.v > hi) else {
            continue;
        };
        // The earliest acknowledged of the versions above `hi`: those at slots up to
        // `slot(hi + 1)`.
        let (mut i, mut missed): (usize, Option<Made>) = (slot(hi + 1), None);
        while i > 0 {
            if let Some(m) = tree[i]
                && missed.is_none_or(|x| m.op.end_us < x.op.end_us)
            {
                missed = Some(m);
            }
            i -= i & i.wrapping_neg();
        }
        let Some(m) = missed else { continue };
        let [low, high] = super::since(m.op.end_us, [op.start_us, op.end_us], margin_us, paused)
            .map(|us| us as f64 / 1000.0);
        st.count += 1;
        st.versions_behind_max = st.versions_behind_max.max(t.v - hi);
        st.lag_low_max_ms = st.lag_low_max_ms.max(low);
        st.lag_high_max_ms = st.lag_high_max_ms.max(high);
        if st.first.is_none() {
            st.first = Some(format!(
                "client {} {} at +{:.1} ms served {}, {} behind {}: {} had been acknowledged \
                 {low:.1}–{high:.1} ms when it served",
                op.client,
                verb(op),
                at(op.start_us),
                said(lo, hi),
                crate::plan::count(t.v - hi, "version", "versions"),
                t.said(),
                m.said()
            ));
        }
    }
    st
}

/// Versions two commits made.
fn twice(known: &[Made], at: &dyn Fn(u64) -> f64) -> Check {
    let mut c = Check::default();
    let mut by_version: HashMap<u64, Made> = HashMap::new();
    for &m in known {
        if let Some(other) = by_version.insert(m.v, m) {
            c.found(|| {
                format!(
                    "v{} was made by worker {} ({} at +{:.1} ms) and by worker {} ({} at +{:.1} ms)",
                    m.v,
                    other.op.client,
                    verb(other.op),
                    at(other.op.start_us),
                    m.op.client,
                    verb(m.op),
                    at(m.op.start_us)
                )
            });
        }
    }
    c
}

/// The acknowledged commits of `known`, in the order they were acknowledged.
fn acknowledged<'h>(known: &[Made<'h>]) -> Vec<Made<'h>> {
    let mut acked: Vec<Made> = (known.iter().copied())
        .filter(|m| {
            m.op.what
                .commit()
                .is_some_and(|(_, o)| o == Outcome::Acknowledged)
        })
        .collect();
    acked.sort_by_key(|m| m.op.end_us);
    acked
}

/// Commits of a lower version than one acknowledged (by more than `margin_us`) before they
/// began.
fn write_order(known: &[Made], margin_us: u64, at: &dyn Fn(u64) -> f64) -> Check {
    let mut c = Check::default();
    let acked = acknowledged(known);
    let mut begun = known.to_vec();
    begun.sort_by_key(|m| m.op.start_us);
    let (mut next, mut highest): (usize, Option<Made>) = (0, None);
    for b in begun {
        while next < acked.len() && acked[next].op.end_us + margin_us < b.op.start_us {
            let a = acked[next];
            if highest.is_none_or(|h| a.v > h.v) {
                highest = Some(a);
            }
            next += 1;
        }
        if let Some(a) = highest.filter(|a| a.v > b.v) {
            c.found(|| {
                format!(
                    "worker {} {} (v{}), acknowledged at +{:.1} ms; worker {} {} (v{}), begun \
                     after it at +{:.1} ms, made the lower version",
                    a.op.client,
                    verb(a.op),
                    a.v,
                    at(a.op.end_us),
                    b.op.client,
                    verb(b.op),
                    b.v,
                    at(b.op.start_us)
                )
            });
        }
    }
    c
}

/// Each client's versions (made or served), in the order it ran its operations: an
/// operation below the highest before it went back.
fn versions_back(history: &[Op], at: &dyn Fn(u64) -> f64) -> Check {
    let mut c = Check::default();
    let mut clients: HashMap<u32, Vec<&Op>> = HashMap::new();
    for op in history.iter().filter(|op| op.version.is_some()) {
        if !matches!(op.what, What::Versioned { .. }) {
            clients.entry(op.client).or_default().push(op);
        }
    }
    let mut clients: Vec<_> = clients.into_iter().collect();
    clients.sort_by_key(|(c, _)| *c);
    for (client, mut ops) in clients {
        ops.sort_by_key(|op| op.start_us);
        // The operation of the highest version so far (the low end of a read's range).
        let mut top: Option<(&Op, u64)> = None;
        for op in ops {
            let Some((lo, hi)) = span(op) else { continue };
            match top {
                Some((t, tv)) if hi < tv => c.found(|| {
                    format!(
                        "client {client} went back from v{tv} ({} at +{:.1} ms) to {} ({} at \
                         +{:.1} ms)",
                        verb(t),
                        at(t.start_us),
                        said(lo, hi),
                        verb(op),
                        at(op.start_us)
                    )
                }),
                Some((_, tv)) if lo <= tv => {}
                _ => top = Some((op, lo)),
            }
        }
    }
    c
}

/// What a read (or one page of a listing) saw of the commits it observes, the versions it
/// served, and how a witness names the page (empty: the whole read).
type Judged<'h> = (Extremes<'h>, Option<(u64, u64)>, String);

/// Each read against the commits of `known` it observes: what it shows against the version
/// it served, and against the order itself. A listing in pages is judged page by page, each
/// over its own range of names at the version it served.
fn reads(history: &[Op], known: &[Made], at: &dyn Fn(u64) -> f64, o: &mut Order) {
    let index = Index::new(known);
    for op in history {
        let judged: Vec<Judged> = match &op.what {
            What::Listed {
                namespace,
                tables,
                seen,
                gone,
                pages,
            } if pages.len() > 1 => {
                let scope = (namespace.as_str(), *tables);
                let e = index.paged(scope, (seen, gone.as_deref()), pages, op.end_us);
                let n = pages.len();
                (e.into_iter().zip(pages).enumerate())
                    .map(|(i, (e, p))| {
                        let span = p.served();
                        let through = match (&p.through, i.checked_sub(1)) {
                            (Some(t), _) => format!("up to {t}"),
                            (None, Some(b)) => {
                                format!("after {}", pages[b].through.as_deref().unwrap_or_default())
                            }
                            (None, None) => "every name".into(),
                        };
                        (
                            e,
                            span,
                            format!(" (page {} of {n}, names {through})", i + 1),
                        )
                    })
                    .collect()
            }
            What::Listed {
                namespace,
                tables,
                seen,
                gone,
                ..
            } => {
                let e = index.listing((namespace, *tables), seen, gone.as_deref());
                vec![(e, span(op), String::new())]
            }
            What::Probed { id, found } => vec![(index.probe(id, *found), span(op), String::new())],
            _ => continue,
        };
        o.reads += 1;
        if judged.iter().all(|(_, span, _)| span.is_some()) {
            o.reads_known += 1;
        }
        if judged.len() > 1 {
            o.pages += judged.len() as u64;
            o.pages_known += judged.iter().filter(|(_, span, _)| span.is_some()).count() as u64;
        }
        let who = |page: &str| {
            format!(
                "client {} {} at +{:.1} ms{page}",
                op.client,
                verb(op),
                at(op.start_us)
            )
        };
        let mixed = judged
            .iter()
            .find_map(|(e, _, page)| match (e.shown, e.missed) {
                (Some(s), Some(m)) if s.v > m.v => Some((s, m, page)),
                _ => None,
            });
        if let Some((s, m, page)) = mixed {
            o.no_such_state.found(|| {
                format!(
                    "{}: it saw {} and not {}; no version holds the one without the other",
                    who(page),
                    s.said(),
                    m.said()
                )
            });
        }
        let wrong = judged.iter().find_map(|(e, span, page)| {
            let (lo, hi) = (*span)?;
            let wrong = match (e.shown, e.missed) {
                (Some(s), _) if s.v > hi => format!("saw {}, made after it", s.said()),
                (_, Some(m)) if m.v <= lo => format!("did not see {}", m.said()),
                _ => return None,
            };
            Some(format!("{} served {} and {wrong}", who(page), said(lo, hi)))
        });
        if let Some(wrong) = wrong {
            o.not_its_version.found(|| wrong);
        }
    }
}

#[cfg(test)]
mod reference;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consistency::Outcome;

    const ACK: Outcome = Outcome::Acknowledged;

    /// The checks equal the brute-force reference on 400 histories shaped like runs
    /// (writers and readers overlapping, listings in pages and not, removals, look-ups,
    /// versions not known or given as ranges, planted faults of every kind), with clocks of
    /// one host and uncertain ones: every count and the stale reads' figures, and a first
    /// witness exactly where something was found. Each kind of failure is found in some.
    #[test]
    fn the_checks_equal_a_brute_force_reference() {
        use crate::consistency::synthetic::{Shape, history};
        let mut rng = crate::rng::Rng::new(11);
        let mut pauses = crate::rng::Rng::new(12);
        let mut found = [0u64; 6];
        for k in 0..400 {
            let shape = Shape {
                page: [None, Some(2), Some(3), Some(5)][k % 4],
                ..Shape::small()
            };
            let h = history(&mut rng, &shape);
            let margin = [0, 1_500][k % 2];
            // Every third history paused somewhere in its span, as bench ab's pairs are.
            let end = h.iter().map(|o| o.end_us).max().unwrap_or(0);
            let paused: Vec<[u64; 2]> = match k % 3 {
                0 => {
                    let a = pauses.next_u64() % end.max(1);
                    vec![[a, a + pauses.next_u64() % (end / 2 + 1)]]
                }
                _ => Vec::new(),
            };
            let got = check_paused(&h, 0, margin, &paused);
            let want = reference::check(&h, margin, &paused);
            let counts = |o: &Order| {
                (
                    [o.commits, o.commits_known, o.reads, o.reads_known],
                    [o.pages, o.pages_known],
                    o.checks().map(|c| c.count),
                    (o.stale.count, o.stale.versions_behind_max),
                    (o.stale.lag_low_max_ms, o.stale.lag_high_max_ms),
                )
            };
            assert_eq!(
                counts(&got),
                counts(&want),
                "history {k}, margin {margin}: {h:#?}"
            );
            for c in got.checks() {
                assert_eq!(c.first.is_some(), c.count > 0, "{c:?}");
            }
            assert_eq!(got.stale.first.is_some(), got.stale.count > 0);
            let counted = got.checks().map(|c| c.count);
            for (f, c) in found
                .iter_mut()
                .zip(counted.into_iter().chain([got.stale.count]))
            {
                *f += c;
            }
        }
        assert!(found.iter().all(|&n| n > 0), "every kind found: {found:?}");
    }

    fn created(client: u32, n: u64, ms: [u64; 2], v: u64) -> Op {
        Op {
            client,
            start_us: ms[0] * 1000,
            end_us: ms[1] * 1000,
            version: Some(v),
            version_to: None,
            what: What::Created {
                id: format!("ns_0$bench_d{client}_{n}"),
                n,
                table: true,
                outcome: ACK,
            },
        }
    }

    fn listed(client: u32, ms: u64, seen: &[(u32, &[[u64; 2]])], v: Option<u64>) -> Op {
        Op {
            client,
            start_us: ms * 1000,
            end_us: ms * 1000 + 500,
            version: v,
            version_to: None,
            what: What::Listed {
                namespace: "ns_0".into(),
                tables: true,
                seen: (seen.iter())
                    .map(|&(writer, runs)| Seen {
                        writer,
                        runs: runs.to_vec(),
                    })
                    .collect(),
                gone: None,
                pages: vec![],
            },
        }
    }

    /// Writer 0's #0, #1, #2 made v11, v12, v14; writer 1's #0 made v13.
    fn commits() -> Vec<Op> {
        vec![
            created(0, 0, [1, 2], 11),
            created(0, 1, [3, 4], 12),
            created(1, 0, [3, 5], 13),
            created(0, 2, [6, 7], 14),
        ]
    }

    #[test]
    fn reads_that_show_exactly_their_version_pass() {
        let mut h = commits();
        h.push(listed(2, 2, &[(0, &[[0, 1]])], Some(11)));
        h.push(listed(2, 5, &[(0, &[[0, 2]]), (1, &[[0, 1]])], Some(13)));
        // Its version unknown: only a prefix is asked of it.
        h.push(listed(3, 8, &[(0, &[[0, 3]]), (1, &[[0, 1]])], None));
        let o = check(&h, 0, 0);
        assert_eq!(o.violations(), 0, "{o:?}");
        assert_eq!(
            (o.commits, o.commits_known, o.reads, o.reads_known),
            (4, 4, 3, 2)
        );
    }

    /// A server that patched its own commit into an older view: it says v12 and shows
    /// writer 1's #0 (v13) too — every entry of it was once true, the whole never was.
    #[test]
    fn a_read_that_is_no_state_the_catalog_had_is_named() {
        let mut h = commits();
        h.push(listed(2, 8, &[(0, &[[0, 1]]), (1, &[[0, 1]])], Some(12)));
        let o = check(&h, 0, 0);
        assert_eq!(o.no_such_state.count, 1, "{o:?}");
        assert_eq!(o.not_its_version.count, 1);
        assert_eq!(
            o.no_such_state.first.as_deref(),
            Some(
                "client 2 listed ns_0 at +8.0 ms: it saw writer 1's #0 (v13) and not writer \
                 0's #1 (v12); no version holds the one without the other"
            )
        );
        assert_eq!(
            o.not_its_version.first.as_deref(),
            Some(
                "client 2 listed ns_0 at +8.0 ms served v12 and saw writer 1's #0 (v13), made after it"
            )
        );
    }

    /// A read of v12 begun after v13 and v14 were acknowledged is two versions behind, the
    /// first it missed acknowledged 3.0–3.5 ms before it served; one begun before v13 was
    /// acknowledged is not stale.
    #[test]
    fn a_read_behind_the_versions_acknowledged_before_it_is_stale_per_version() {
        let seen: &[(u32, &[[u64; 2]])] = &[(0, &[[0, 2]])];
        let mut h = commits();
        h.push(listed(2, 4, seen, Some(12)));
        h.push(listed(2, 8, seen, Some(12)));
        let o = check(&h, 0, 0);
        assert_eq!(o.violations(), 0, "{o:?}");
        let s = &o.stale;
        assert_eq!((s.count, s.versions_behind_max), (1, 2), "{s:?}");
        assert_eq!((s.lag_low_max_ms, s.lag_high_max_ms), (3.0, 3.5));
        assert_eq!(
            s.first.as_deref(),
            Some(
                "client 2 listed ns_0 at +8.0 ms served v12, 2 versions behind writer 0's #2 \
                 (v14): writer 1's #0 (v13) had been acknowledged 3.0–3.5 ms when it served"
            )
        );
        // Within the clocks' margin nothing is behind.
        assert_eq!(check(&h, 0, 4_000).stale.count, 0);
    }

    /// `op`, a listing, in pages: each page's last name (`None`: the last) and version.
    fn in_pages(mut op: Op, pages: &[(Option<&str>, Option<u64>)]) -> Op {
        if let What::Listed { pages: p, .. } = &mut op.what {
            *p = (pages.iter())
                .map(|&(through, version)| Page::served_at(through.map(str::to_string), version))
                .collect();
        }
        op
    }

    /// Names sort as bench_d0_0 < bench_d0_1 < bench_d0_2 < bench_d1_0. A listing whose
    /// first page (up to bench_d0_1) served v11 and second v14 saw writer 0's #2 (v14) and
    /// not its #1 (v12): as one read, no state; page by page, each page its version's.
    #[test]
    fn a_listing_in_pages_is_judged_page_by_page() {
        let seen: &[(u32, &[[u64; 2]])] = &[(0, &[[0, 1], [2, 3]]), (1, &[[0, 1]])];
        let pages = [(Some("bench_d0_1"), Some(11)), (None, Some(14))];
        let mut h = commits();
        h.push(in_pages(listed(2, 8, seen, None), &pages));
        let o = check(&h, 0, 0);
        assert_eq!(o.violations(), 0, "{o:?}");
        assert_eq!(
            (o.reads, o.reads_known, o.pages, o.pages_known),
            (1, 1, 2, 2)
        );
        // The same names as one page are no state the catalog had.
        let mut h = commits();
        h.push(listed(2, 8, seen, None));
        assert_eq!(check(&h, 0, 0).no_such_state.count, 1);
        // A page of unknown version is still a state of some version, or no state.
        let mut h = commits();
        h.push(in_pages(
            listed(2, 8, seen, None),
            &[(pages[0].0, None), pages[1]],
        ));
        let o = check(&h, 0, 0);
        assert_eq!(
            (o.violations(), o.reads_known, o.pages_known),
            (0, 0, 1),
            "{o:?}"
        );
    }

    /// A page that is not its version's state over its own names is named, with its page.
    #[test]
    fn a_page_that_is_not_its_version_is_named_with_its_page() {
        // The second page served v14 and missed writer 1's #0 (v13).
        let seen: &[(u32, &[[u64; 2]])] = &[(0, &[[0, 3]])];
        let mut h = commits();
        h.push(in_pages(
            listed(2, 8, seen, None),
            &[(Some("bench_d0_1"), Some(12)), (None, Some(14))],
        ));
        let o = check(&h, 0, 0);
        assert_eq!((o.not_its_version.count, o.no_such_state.count), (1, 1));
        assert_eq!(
            o.not_its_version.first.as_deref(),
            Some(
                "client 2 listed ns_0 at +8.0 ms (page 2 of 2, names after bench_d0_1) served \
                 v14 and did not see writer 1's #0 (v13)"
            )
        );
        // A page showing a commit begun after the listing ended, of a later version.
        let mut h = commits();
        h.push(in_pages(
            listed(2, 5, &[(0, &[[0, 1], [2, 3]])], None),
            &[(Some("bench_d0_1"), Some(11)), (None, Some(11))],
        ));
        let o = check(&h, 0, 0);
        assert_eq!(o.not_its_version.count, 1, "{o:?}");
        assert_eq!(
            o.not_its_version.first.as_deref(),
            Some(
                "client 2 listed ns_0 at +5.0 ms (page 2 of 2, names after bench_d0_1) served \
                 v11 and saw writer 0's #2 (v14), made after it"
            )
        );
    }

    /// Two readers see two commits in opposite orders (a long fork): the one against the
    /// version order is no state the catalog had, whatever version it says.
    #[test]
    fn a_long_fork_makes_a_read_of_no_state() {
        let mut h = commits();
        h.push(listed(2, 5, &[(0, &[[0, 2]])], None));
        h.push(listed(3, 5, &[(0, &[[0, 1]]), (1, &[[0, 1]])], None));
        let o = check(&h, 0, 0);
        assert_eq!(o.no_such_state.count, 1, "{o:?}");
        assert!(
            o.no_such_state
                .first
                .unwrap()
                .starts_with("client 3 listed ns_0")
        );
    }

    #[test]
    fn a_read_missing_a_commit_of_its_version_and_versions_going_back_are_named() {
        let mut h = commits();
        // Says v14, misses writer 0's #2 (v14).
        h.push(listed(2, 8, &[(0, &[[0, 2]]), (1, &[[0, 1]])], Some(14)));
        // Then v13: back.
        h.push(listed(2, 9, &[(0, &[[0, 2]]), (1, &[[0, 1]])], Some(13)));
        let o = check(&h, 0, 0);
        assert_eq!((o.not_its_version.count, o.no_such_state.count), (1, 0));
        assert!(
            o.not_its_version
                .first
                .unwrap()
                .ends_with("did not see writer 0's #2 (v14)")
        );
        assert_eq!(o.versions_back.count, 1);
        assert_eq!(
            o.versions_back.first.as_deref(),
            Some(
                "client 2 went back from v14 (listed ns_0 at +8.0 ms) to v13 (listed ns_0 at +9.0 ms)"
            )
        );
    }

    /// Through `bench serve` a read served a version within a range: it must show a state of
    /// one of them, and a client goes back only below the range's low end.
    #[test]
    fn a_read_served_within_a_range_is_held_to_one_of_its_versions() {
        let ranged = |client, ms, seen: &[(u32, &[[u64; 2]])], (lo, hi)| Op {
            version_to: Some(hi),
            ..listed(client, ms, seen, Some(lo))
        };
        let mut h = commits();
        // v12–v14: writer 0's #0, #1 and writer 1's #0 (v13) is a state within it.
        h.push(ranged(2, 8, &[(0, &[[0, 2]]), (1, &[[0, 1]])], (12, 14)));
        // v11–v12 by the same client: not below v12, so not back.
        h.push(ranged(2, 9, &[(0, &[[0, 2]])], (11, 12)));
        let o = check(&h, 0, 0);
        assert_eq!(o.violations(), 0, "{o:?}");
        // v11–v12 showing writer 1's #0 (v13); then v10–v11, below v12: back.
        h.push(ranged(3, 8, &[(0, &[[0, 2]]), (1, &[[0, 1]])], (11, 12)));
        h.push(ranged(2, 10, &[(0, &[[0, 1]])], (10, 11)));
        let o = check(&h, 0, 0);
        assert_eq!(
            (o.not_its_version.count, o.versions_back.count),
            (1, 1),
            "{o:?}"
        );
        assert!(
            (o.not_its_version.first.unwrap())
                .ends_with("served v11–v12 and saw writer 1's #0 (v13), made after it")
        );
        assert!(
            o.versions_back
                .first
                .unwrap()
                .contains("from v12 (listed ns_0 at +8.0 ms) to v10–v11")
        );
    }

    #[test]
    fn a_commit_acknowledged_before_another_began_has_the_lower_version() {
        let mut h = commits();
        // Writer 1's #1 began at 8 ms, after v14 was acknowledged at 7 ms, yet made v10; and
        // it made a version another commit made.
        h.push(created(1, 1, [8, 9], 10));
        h.push(created(1, 2, [10, 11], 14));
        let o = check(&h, 0, 0);
        assert_eq!(o.write_order.count, 1, "{o:?}");
        assert!(
            o.write_order
                .first
                .unwrap()
                .contains("(v10), begun after it at +8.0 ms")
        );
        assert_eq!(o.one_version_twice.count, 1);
        // Within the clocks' uncertainty, not ordered: only the duplicate stays.
        let o = check(&h, 0, 7_000);
        assert_eq!((o.write_order.count, o.one_version_twice.count), (0, 1));
    }

    #[test]
    fn look_ups_and_removals_are_read_against_their_versions() {
        let removed = |client, ms: [u64; 2], v| Op {
            client,
            start_us: ms[0] * 1000,
            end_us: ms[1] * 1000,
            version: Some(v),
            version_to: None,
            what: What::Removed {
                id: "ns_0$table_1".into(),
                table: true,
                outcome: ACK,
            },
        };
        let probe = |client, ms: u64, found, v| Op {
            client,
            start_us: ms * 1000,
            end_us: ms * 1000 + 500,
            version: Some(v),
            version_to: None,
            what: What::Probed {
                id: "ns_0$table_1".into(),
                found,
            },
        };
        let gone = |client, ms: u64, gone: bool, v| Op {
            what: What::Listed {
                namespace: "ns_0".into(),
                tables: true,
                seen: vec![],
                gone: Some(if gone {
                    vec!["ns_0$table_1".into()]
                } else {
                    vec![]
                }),
                pages: vec![],
            },
            ..probe(client, ms, true, v)
        };
        let h = vec![
            removed(0, [1, 2], 7),
            probe(1, 3, false, 7),
            probe(2, 4, true, 6),
            gone(3, 5, true, 7),
            gone(4, 6, false, 6),
        ];
        let o = check(&h, 0, 0);
        assert_eq!(o.violations(), 0, "{o:?}");
        // Found at v7, after its removal made v7; listed at v8 with it there.
        let h = vec![
            removed(0, [1, 2], 7),
            probe(1, 3, true, 7),
            gone(2, 5, false, 8),
        ];
        let o = check(&h, 0, 0);
        assert_eq!(o.not_its_version.count, 2, "{o:?}");
        assert!(
            (o.not_its_version.first.unwrap())
                .ends_with("did not see the removal of ns_0$table_1 (v7)")
        );
    }
}
