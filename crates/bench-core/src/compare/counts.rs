//! Verdicts from what bench counts exactly: each operation's requests by kind and the bytes
//! it reads and writes. Unlike a time, a count does not move with the machine: one
//! writer's commits make the same requests in every run, on any machine, so one run a side
//! tells a change of one request per operation for sure.
//!
//! The round trips on an operation's critical path are shown beside them and never judged:
//! bench counts them as groups of requests that overlap in time ([`crate::counts::path`]),
//! and whether two requests overlap depends on the scheduler and the store. They are timed
//! figures, not exact counts.
//!
//! The rule: a count changed when every run of B lies beyond every run of A by more than
//! the tolerance — ±0.5 a request per operation (half the smallest change a build can make:
//! one request more in every operation), ±5 % of the bytes (a request's body grows with the
//! catalog's rows and the names in it, a few bytes run to run). Where a cell runs for a
//! time, what it did depends on how much fitted, and where several clients contend, how
//! they interleaved: there 2 runs a side are needed (one gets no count verdict, and says
//! so), and what is judged is
//! - several writers: the typical commit (per kind, the median) of those as far behind the
//!   others — as many versions made by others between the one its client held and the one
//!   it made, as many races lost — at the place every run of both sides held most. A commit
//!   further behind catches up on more versions, and how far behind the commits are is how
//!   the writers interleaved, which a slower build or a busy machine changes; as far
//!   behind, two builds' commits do the same work unless a build changed it. Where no
//!   place is held in every run, or the records do not tell it, no count verdict, and why;
//! - one writer for a time, or several readers: the typical operation;
//! - a cell of roles: per role and operation.

use crate::export::Record;
use crate::export::record::RoleFigures;
use crate::measured::{STRATUM_MIN, Stratum};
use crate::plan::ModeKind;
use crate::stats::median;
use crate::versions::Behind;

/// Requests or round trips per operation that are no change.
pub const COUNT_TOLERANCE: f64 = 0.5;
/// The fraction of A's bytes per operation that is no change.
pub const BYTES_TOLERANCE: f64 = 0.05;

/// What a metric counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Requests,
    /// Timed, not exact: shown, never judged.
    RoundTrips,
    Bytes,
}

impl Unit {
    /// Whether a count of this unit is exact (the same work gives the same count on any
    /// machine), and so judged.
    pub fn exact(self) -> bool {
        self != Unit::RoundTrips
    }
}

/// How a count moved from A to B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    Same,
    /// More requests or bytes in every run of B: worse (round trips move too, unjudged).
    More,
    /// Fewer in every run of B: better.
    Fewer,
}

/// One metric of a cell on both sides (exact, or a timed one shown beside them).
#[derive(Debug, Clone, PartialEq)]
pub struct Count {
    /// `HEAD`, `round trips`, `round trips on list`, `read bytes`, …
    pub name: String,
    pub unit: Unit,
    /// Each run's value per operation.
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub moved: Moved,
}

impl Count {
    pub fn median_a(&self) -> f64 {
        median(self.a.clone())
    }
    pub fn median_b(&self) -> f64 {
        median(self.b.clone())
    }

    /// "+1.0 HEAD per op, 4.0 → 5.0", "+1.0 round trip on the critical path, 7.0 → 8.0",
    /// "+12.3 % written bytes, 50.6 → 56.8 KiB".
    pub fn said(&self) -> String {
        let (a, b) = (self.median_a(), self.median_b());
        match self.unit {
            Unit::Bytes => format!(
                "{:+.1} % {} per op, {:.1} → {:.1} KiB",
                (b / a.max(1.0) - 1.0) * 100.0,
                self.name,
                a / 1024.0,
                b / 1024.0
            ),
            Unit::Requests | Unit::RoundTrips => {
                format!("{:+.1} {} per op, {a:.1} → {b:.1}", b - a, self.name)
            }
        }
    }
}

/// A cell's counts, side by side, and what changed among the exact ones.
#[derive(Debug, Clone, PartialEq)]
pub struct CountRow {
    pub cell: String,
    pub counts: Vec<Count>,
    /// Why the cell's counts get no verdict (a contended cell, or one bounded by time, with
    /// one run a side).
    pub unjudged: Option<String>,
    /// Why its bytes are not among its counts, where they are not ([`BYTES_BY_TIME`]).
    pub bytes_left_out: Option<String>,
    /// Several writers: the place behind the others their commits were judged at ("1
    /// version behind"), which a verdict of the same counts names.
    pub judged_at: Option<String>,
    /// What an operation cost on each side, where every run of both was priced.
    pub cost: Option<CostPair>,
}

/// Dollars per million operations on each store, each side's median over its runs (every
/// request billed, failed ones' too): what a count verdict changes in money.
#[derive(Debug, Clone, PartialEq)]
pub struct CostPair {
    pub usd_per_million_ops: std::collections::BTreeMap<String, (f64, f64)>,
}

impl CostPair {
    /// Both sides' figures of the stores every run of both priced.
    fn of(a: &[&Record], b: &[&Record]) -> Option<CostPair> {
        let first = (a.iter().chain(b)).next()?.cost.as_ref()?;
        let mut out = std::collections::BTreeMap::new();
        for store in first.usd_per_million_ops.keys() {
            let side = |runs: &[&Record]| {
                per_run(runs, |r| {
                    (r.cost.as_ref()).and_then(|c| c.usd_per_million_ops.get(store).copied())
                })
                .map(median)
            };
            if let (Some(x), Some(y)) = (side(a), side(b)) {
                out.insert(store.clone(), (x, y));
            }
        }
        (!out.is_empty()).then_some(CostPair {
            usd_per_million_ops: out,
        })
    }

    /// "$17.80 → $18.20 a million operations on s3-standard (r2: $16.02 → $16.38, …)".
    pub fn said(&self) -> String {
        let mut it = self.usd_per_million_ops.iter();
        let first = crate::prices::BUILTIN_STORES
            .iter()
            .find_map(|s| self.usd_per_million_ops.get_key_value(*s))
            .or_else(|| it.next());
        let Some((store, (a, b))) = first else {
            return String::new();
        };
        format!("${a:.2} → ${b:.2} a million operations on {store}")
    }
}

impl CountRow {
    /// Some count grew beyond its tolerance in every run.
    pub fn regressed(&self) -> bool {
        self.counts.iter().any(|c| c.moved == Moved::More)
    }

    /// Some count fell beyond its tolerance in every run, and none grew.
    pub fn improved(&self) -> bool {
        !self.regressed() && self.counts.iter().any(|c| c.moved == Moved::Fewer)
    }

    /// The medians of a total (requests, round trips), or of bytes, on both sides: of the
    /// metric named, or (`None`) of the request kinds (conditional PUTs counted once, in
    /// the PUTs).
    pub fn total(&self, unit: Unit, name: Option<&str>) -> Option<(f64, f64)> {
        let kind = |n: &str| {
            let n = n.strip_suffix(MEDIAN).unwrap_or(n);
            n != CONDITIONAL_PUT && KINDS.iter().any(|(k, _)| *k == n)
        };
        let of = (self.counts.iter())
            .filter(|c| c.unit == unit && name.map_or(kind(&c.name), |n| c.name == n));
        let mut found = false;
        let (mut a, mut b) = (0.0, 0.0);
        for c in of {
            found = true;
            a += c.median_a();
            b += c.median_b();
        }
        found.then_some((a, b))
    }

    /// What the change costs, after a verdict: "; cost: $17.80 → $18.20 a million …".
    fn costs(&self) -> String {
        (self.cost.as_ref()).map_or(String::new(), |c| format!("; cost: {}", c.said()))
    }

    /// "REGRESSION (B: +1.0 HEAD per op, 4.0 → 5.0; …)", "improved (…)", "same counts" or
    /// why there is none.
    pub fn verdict(&self) -> String {
        let said = |m: Moved| {
            (self.counts.iter())
                .filter(|c| c.moved == m)
                .map(Count::said)
                .collect::<Vec<_>>()
                .join("; ")
        };
        match (&self.unjudged, self.regressed(), self.improved()) {
            (Some(why), _, _) => format!("no count verdict ({why})"),
            (None, true, _) => {
                let fewer = said(Moved::Fewer);
                let also = if fewer.is_empty() {
                    String::new()
                } else {
                    format!("; improved (B: {fewer})")
                };
                format!(
                    "REGRESSION (B: {}){also}{}",
                    said(Moved::More),
                    self.costs()
                )
            }
            (None, false, true) => {
                format!("improved (B: {}){}", said(Moved::Fewer), self.costs())
            }
            (None, false, false) => match &self.judged_at {
                Some(place) => format!("same counts (commits {place})"),
                None => "same counts".to_string(),
            },
        }
    }
}

/// Conditional PUTs, counted among the PUTs too.
const CONDITIONAL_PUT: &str = "conditional PUT";

/// One kind's count of an operation's requests.
pub(super) type Kind = fn(&crate::stats::IoPerOp) -> f64;

/// The request kinds of `io_per_op`, as a verdict names them.
pub(super) const KINDS: [(&str, Kind); 7] = [
    ("GET", |p| p.get),
    ("PUT", |p| p.put),
    (CONDITIONAL_PUT, |p| p.conditional_put),
    ("LIST", |p| p.list),
    ("HEAD", |p| p.head),
    ("DELETE", |p| p.delete),
    ("COPY", |p| p.copy),
];

/// Each run's value of `f`, if every run of the side has it.
fn per_run(runs: &[&Record], f: impl Fn(&Record) -> Option<f64>) -> Option<Vec<f64>> {
    runs.iter().map(|r| f(r)).collect()
}

/// What a metric of the typical operation is named after: `HEAD (median op)`.
pub const MEDIAN: &str = " (median op)";

/// What a cell's requests and bytes are judged on.
#[derive(Debug, Clone, PartialEq)]
enum Basis {
    /// Each run's means: one writer bounded by its commits, and records without the typical
    /// operation.
    Means,
    /// The typical operation: one writer bounded by time, several readers.
    Typical,
    /// Several writers: the typical commit of those as far behind the rest, a place every
    /// run of both sides held.
    Behind(Behind),
    /// Several writers whose runs share no such place, or whose records do not tell it: no
    /// count verdict, and why.
    Unjudged(String),
}

/// What a cell's counts are judged on. Several writers' commits catch up on the versions
/// the others made, and how many is how they interleaved, which a slower build or a busy
/// machine changes: their counts are judged on commits as far behind on both sides.
fn basis(a: &[&Record], b: &[&Record]) -> Basis {
    let all = || a.iter().chain(b);
    let r = a[0];
    if contended(r) && r.mode != ModeKind::Roles && r.operation.is_write() {
        return match behind(a, b) {
            Ok(place) => Basis::Behind(place),
            Err(why) => Basis::Unjudged(why),
        };
    }
    match (contended(r) || bounded_by_time(r)) && all().all(|r| r.io_median_per_op.is_some()) {
        true => Basis::Typical,
        false => Basis::Means,
    }
}

/// The place behind the others that several writers' commits are judged at, from their
/// records ([`common_place`]).
fn behind(a: &[&Record], b: &[&Record]) -> Result<Behind, String> {
    let strata = |runs: &[&Record]| -> Option<Vec<Vec<Stratum>>> {
        runs.iter().map(|r| r.io_median_by_behind.clone()).collect()
    };
    match (strata(a), strata(b)) {
        (Some(sa), Some(sb)) => common_place(&sa, &sb),
        _ => Err(UNTOLD.to_string()),
    }
}

/// The place behind the others ([`crate::measured::Stratum`]) every run of both sides held
/// commits at (`sa`, `sb`: each run's): of those, the one whose fewest in a run are most (the
/// nearest, of equals); none, and why.
fn common_place(sa: &[Vec<Stratum>], sb: &[Vec<Stratum>]) -> Result<Behind, String> {
    let runs: Vec<&Vec<Stratum>> = sa.iter().chain(sb).collect();
    let held = |place: Behind| -> Option<u64> {
        (runs.iter())
            .map(|s| s.iter().find(|x| x.behind == place).map(|x| x.operations))
            .min()
            .flatten()
    };
    let first = runs.first().map_or(&[][..], |s| &s[..]);
    let common = first
        .iter()
        .filter_map(|s| Some((s.behind, held(s.behind)?)));
    let best = common.max_by(|(p, n), (q, m)| n.cmp(m).then(q.cmp(p)));
    best.map(|(place, _)| place).ok_or_else(|| {
        let commonest = |side: &[Vec<Stratum>]| {
            (side.iter().flatten())
                .max_by_key(|s| s.operations)
                .map_or("none".to_string(), |s| s.behind.said())
        };
        format!(
            "several writers interleaved differently on each side: no place behind the \
             others held {STRATUM_MIN} commits in every run (A's commonest: {}; B's: {}), \
             and commits further behind catch up on more versions",
            commonest(sa),
            commonest(sb)
        )
    })
}

/// Why several writers' records without their commits' places get no count verdict.
pub const UNTOLD: &str = "several writers' commits are judged against commits as far behind \
     the others, and these records do not tell how far behind each was (an older bench's, \
     through REST servers, or commits of a table's versions)";

/// The metrics both sides measured in every run, those judged on `basis` and those shown
/// beside them.
fn metrics(a: &[&Record], b: &[&Record], basis: &Basis) -> (Vec<Metric>, Vec<Metric>) {
    let collect = |fill: &dyn Fn(&mut Add)| {
        let mut out = Vec::new();
        let mut add = |name: String, unit, f: &dyn Fn(&Record) -> Option<f64>| {
            if let (Some(va), Some(vb)) = (per_run(a, f), per_run(b, f)) {
                out.push((name, unit, va, vb));
            }
        };
        fill(&mut add);
        out
    };
    let means = || collect(&|add| add_means(add, a, b));
    let typical = || collect(&|add| add_typical(add, &|r| r.io_median_per_op, MEDIAN));
    let has_typical = (a.iter().chain(b)).all(|r| r.io_median_per_op.is_some());
    match basis {
        Basis::Means => (means(), Vec::new()),
        Basis::Typical => (typical(), Vec::new()),
        Basis::Unjudged(_) if has_typical => (Vec::new(), typical()),
        Basis::Unjudged(_) => (Vec::new(), means()),
        // Judged: the commits as far behind; shown: the typical operation of them all.
        Basis::Behind(place) => {
            let at = |r: &Record| median_at(r.io_median_by_behind.as_deref()?, *place);
            let suffix = format!(" (median op {})", place.said());
            let mut judged = collect(&|add| add_typical(add, &at, &suffix));
            judged.retain(|(_, unit, ..)| unit.exact());
            (judged, if has_typical { typical() } else { Vec::new() })
        }
    }
}

/// One metric on both sides: (name, unit, A's runs, B's runs).
type Metric = (String, Unit, Vec<f64>, Vec<f64>);

/// Adds a metric of every run of both sides.
type Add<'a> = dyn FnMut(String, Unit, &dyn Fn(&Record) -> Option<f64>) + 'a;

/// The typical operation's metrics, `typical` of each run, named with `suffix`: its
/// requests by kind, its round trips and bytes (whose means move with the retries, as the
/// requests do).
fn add_typical(
    add: &mut Add,
    typical: &dyn Fn(&Record) -> Option<crate::stats::TypicalOp>,
    suffix: &str,
) {
    for (name, kind) in KINDS {
        add(format!("{name}{suffix}"), Unit::Requests, &|r| {
            typical(r).map(|t| kind(&t.kinds()))
        });
    }
    add(
        format!("critical-path round trips{suffix}"),
        Unit::RoundTrips,
        &|r| typical(r).and_then(|t| t.round_trips),
    );
    add(format!("read bytes{suffix}"), Unit::Bytes, &|r| {
        typical(r).and_then(|t| t.read_bytes)
    });
    add(format!("written bytes{suffix}"), Unit::Bytes, &|r| {
        typical(r).and_then(|t| t.written_bytes)
    });
}

/// Each run's means: requests by kind, round trips in all and by kind, bytes.
fn add_means(add: &mut Add, a: &[&Record], b: &[&Record]) {
    for (name, kind) in KINDS {
        add(name.to_string(), Unit::Requests, &|r| {
            r.io_per_op.map(|p| kind(&p))
        });
    }
    add("critical-path round trips".into(), Unit::RoundTrips, &|r| {
        r.round_trips_per_op
    });
    let kinds: std::collections::BTreeSet<String> = (a.iter().chain(b))
        .flat_map(|r| r.round_trips_by_kind.iter().flat_map(|m| m.keys().cloned()))
        .collect();
    for k in kinds {
        add(
            format!("critical-path round trips on {k}"),
            Unit::RoundTrips,
            &|r| (r.round_trips_by_kind.as_ref()).map(|m| m.get(&k).copied().unwrap_or(0.0)),
        );
    }
    add_bytes(add);
}

/// The bytes read and written per operation (means).
fn add_bytes(add: &mut Add) {
    add("read bytes".into(), Unit::Bytes, &|r| {
        r.io_per_op.map(|p| p.read_bytes)
    });
    add("written bytes".into(), Unit::Bytes, &|r| {
        r.io_per_op.map(|p| p.written_bytes)
    });
}

/// One figure of a role's operation.
type RoleFigure = fn(&RoleFigures) -> Option<f64>;

/// The typical commit of a run's at `place`, if it held commits there.
fn median_at(strata: &[Stratum], place: Behind) -> Option<crate::stats::TypicalOp> {
    (strata.iter().find(|s| s.behind == place)).map(|s| s.median)
}

/// A run's figures of (role, operation), if it ran them.
fn role_of<'r>(r: &'r Record, role: &str, op: crate::plan::Operation) -> Option<&'r RoleFigures> {
    (r.roles.iter().flatten()).find(|f| f.role == role && f.operation == op)
}

/// A role's commits judged as several writers' are, as far behind the others on both sides
/// ([`common_place`]): their requests there, or why they cannot be.
fn role_commits(
    a: &[&Record],
    b: &[&Record],
    role: &str,
    op: crate::plan::Operation,
) -> Result<Metric, String> {
    let strata = |runs: &[&Record]| -> Option<Vec<Vec<Stratum>>> {
        let f = |r: &&Record| role_of(r, role, op).and_then(|f| f.io_median_by_behind.clone());
        runs.iter().map(f).collect()
    };
    let (Some(sa), Some(sb)) = (strata(a), strata(b)) else {
        return Err(UNTOLD.to_string());
    };
    let place = common_place(&sa, &sb)?;
    let at = |side: &[Vec<Stratum>]| -> Option<Vec<f64>> {
        (side.iter())
            .map(|run| median_at(run, place).map(|m| m.requests))
            .collect()
    };
    let (va, vb) = (at(&sa).zip(at(&sb))).ok_or(UNTOLD.to_string())?;
    let name = format!("requests (median op {}) of {role}/{op}", place.said());
    Ok((name, Unit::Requests, va, vb))
}

/// A cell of roles' metrics per role and operation of its mix, the ones judged there:
/// the cell's own blend the operations in the proportions that fitted in its window. A
/// role's commits are judged as far behind the others ([`role_commits`]); where a role's
/// cannot be, the cell gets no count verdict, and why (the second value).
fn role_metrics(a: &[&Record], b: &[&Record]) -> (Vec<Metric>, Option<String>) {
    let mut out = Vec::new();
    let mut why = None;
    for f in a[0].roles.iter().flatten() {
        let (role, op) = (f.role.as_str(), f.operation);
        let side = |runs: &[&Record], get: RoleFigure| {
            per_run(runs, |r| role_of(r, role, op).and_then(get))
        };
        let commits = op.is_write().then(|| role_commits(a, b, role, op));
        let judged_behind = matches!(commits, Some(Ok(_)));
        match commits {
            Some(Ok(m)) => out.push(m),
            Some(Err(e)) => {
                why.get_or_insert(format!("{role}/{op}: {e}"));
            }
            None => {}
        }
        // The typical operation's, where every run has it; else the means.
        let figures: [(&str, Unit, RoleFigure, RoleFigure); 2] = [
            (
                "requests",
                Unit::Requests,
                |f| f.requests_median_per_op,
                |f| f.requests_per_op,
            ),
            (
                "critical-path round trips",
                Unit::RoundTrips,
                |f| f.round_trips_median_per_op,
                |f| f.round_trips_per_op,
            ),
        ];
        for (name, unit, median, mean) in figures {
            if judged_behind && unit == Unit::Requests {
                continue;
            }
            let found = match (side(a, median), side(b, median)) {
                (Some(va), Some(vb)) => Some((format!("{name}{MEDIAN}"), va, vb)),
                _ => (side(a, mean).zip(side(b, mean))).map(|(va, vb)| (name.to_string(), va, vb)),
            };
            if let Some((name, va, vb)) = found {
                out.push((format!("{name} of {role}/{op}"), unit, va, vb));
            }
        }
    }
    (out, why)
}

/// How `b`'s runs stand against `a`'s: beyond every one of them by more than `tolerance`.
fn moved(a: &[f64], b: &[f64], tolerance: f64) -> Moved {
    let lo = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo(b) > hi(a) + tolerance {
        Moved::More
    } else if hi(b) < lo(a) - tolerance {
        Moved::Fewer
    } else {
        Moved::Same
    }
}

/// Whether a cell's writers contend (several of them, or a mixed cell's clients), so its
/// counts vary from run to run.
fn contended(r: &Record) -> bool {
    r.concurrency > 1 || r.mode == ModeKind::Mixed
}

/// Whether a cell runs for a time, not a count of commits: how many commits it holds is
/// what fits, and with them the rows each later commit rewrites.
fn bounded_by_time(r: &Record) -> bool {
    match r.mode {
        ModeKind::Continuous => false,
        ModeKind::Concurrent => r.operations_bound.is_none(),
        ModeKind::Mixed | ModeKind::Roles => true,
    }
}

/// Why the bytes of a cell bounded by time are not judged.
pub const BYTES_BY_TIME: &str = "bytes not judged: a cell bounded by time holds as many commits as \
     fit, and a commit reads and writes more the more rows the commits before it left";

/// The counts of one cell, A's runs against B's; none where a side measured none.
pub fn count_row(cell: &str, a: &[&Record], b: &[&Record]) -> Option<CountRow> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    // What a cell bounded by time did depends on how much fitted: its bytes are left out,
    // its requests judged by their spread, as several writers' are.
    let by_time = bounded_by_time(a[0]);
    let basis = basis(a, b);
    let judged_at = match &basis {
        Basis::Behind(place) => Some(place.said()),
        _ => None,
    };
    let (mut found, mut blend) = metrics(a, b, &basis);
    for m in [&mut found, &mut blend] {
        m.retain(|(_, unit, ..)| !(by_time && *unit == Unit::Bytes));
    }
    // A cell of roles is judged per role and operation; its blend is shown, not judged.
    let roles = a[0].mode == ModeKind::Roles;
    let mut roles_why = None;
    if roles {
        let (per_role, why) = role_metrics(a, b);
        blend = std::mem::replace(&mut found, per_role);
        roles_why = why;
    }
    if found.is_empty() && blend.is_empty() {
        return None;
    }
    let one_run = a.len() < 2 || b.len() < 2;
    let unjudged = match (contended(a[0]), by_time) {
        _ if roles && found.is_empty() => Some(
            "a cell of roles is judged per role and operation, and through REST servers its \
             requests are not split by role",
        ),
        (true, _) if one_run => Some(
            "several writers' counts vary from run to run: a count verdict needs 2 runs a side",
        ),
        (false, true) if one_run => Some(
            "a cell bounded by time does as much as fits, which a faster build or machine \
             changes: a count verdict needs 2 runs a side",
        ),
        _ => None,
    }
    .map(str::to_string)
    .or(match basis {
        Basis::Unjudged(why) => Some(why),
        _ => roles_why,
    });
    let bytes_left_out = by_time.then(|| BYTES_BY_TIME.to_string());
    let shown = blend.into_iter().map(|(name, unit, a, b)| Count {
        name,
        unit,
        a,
        b,
        moved: Moved::Same,
    });
    let counts = found
        .into_iter()
        .map(|(name, unit, va, vb)| {
            let tolerance = match unit {
                Unit::Requests | Unit::RoundTrips => COUNT_TOLERANCE,
                Unit::Bytes => BYTES_TOLERANCE * median(va.clone()).max(1.0),
            };
            let moved = match &unjudged {
                None if unit.exact() => moved(&va, &vb, tolerance),
                _ => Moved::Same,
            };
            Count {
                name,
                unit,
                a: va,
                b: vb,
                moved,
            }
        })
        .chain(shown)
        .collect();
    Some(CountRow {
        cell: cell.to_string(),
        counts,
        unjudged,
        bytes_left_out,
        judged_at,
        cost: CostPair::of(a, b),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::Variant;
    use crate::stats::IoPerOp;

    fn run(mode: ModeKind, writers: u32, head: f64, trips: f64) -> Record {
        let mut r = record(mode, Variant::InlineIndex, 1000, writers, "c");
        r.io_per_op = Some(IoPerOp {
            get: 4.0,
            put: 3.0,
            conditional_put: 1.0,
            head,
            read_bytes: 50_000.0,
            written_bytes: 48_000.0,
            ..IoPerOp::default()
        });
        r.round_trips_per_op = Some(trips);
        r.round_trips_by_kind = Some(
            [("get".to_string(), 2.0), ("head".to_string(), head)]
                .into_iter()
                .collect(),
        );
        r
    }

    /// One request more per operation in one run a side of one writer: a regression that
    /// names the kind and the round trip; the same runs on both sides: same counts.
    #[test]
    fn one_more_head_per_operation_is_a_count_regression_from_one_run() {
        let (a, b) = (
            run(ModeKind::Continuous, 1, 4.0, 7.0),
            run(ModeKind::Continuous, 1, 5.0, 8.0),
        );
        let row = count_row("c", &[&a], &[&b]).unwrap();
        assert!(row.regressed(), "{}", row.verdict());
        let v = row.verdict();
        assert!(
            v.starts_with("REGRESSION (B: +1.0 HEAD per op, 4.0 → 5.0"),
            "{v}"
        );
        // Round trips are timed (requests that overlap in time): shown, never a verdict.
        assert!(!v.contains("round trips"), "{v}");
        assert!(!v.contains("GET"), "{v}");
        let trips = (row.counts.iter()).find(|c| c.name == "critical-path round trips");
        assert_eq!(
            trips.map(|c| (c.median_a(), c.median_b(), c.moved)),
            Some((7.0, 8.0, Moved::Same))
        );
        let (mut fewer_trips, mut more_trips) = (a.clone(), a.clone());
        (
            fewer_trips.round_trips_per_op,
            more_trips.round_trips_per_op,
        ) = (Some(3.0), Some(12.0));
        let only_trips = count_row("c", &[&fewer_trips], &[&more_trips]).unwrap();
        assert_eq!(only_trips.verdict(), "same counts");
        let same = count_row("c", &[&a], &[&a.clone()]).unwrap();
        assert_eq!(same.verdict(), "same counts");
        // Fewer: an improvement.
        let back = count_row("c", &[&b], &[&a]).unwrap();
        assert!(back.improved() && back.verdict().starts_with("improved (B: -1.0 HEAD"));
        // Priced, a verdict says what the HEAD more costs: $0.40 a million on S3 Standard.
        let priced = |r: &Record, head: u64| {
            let mut r = r.clone();
            let io = crate::stats::IoCounts {
                get: 4,
                put: 3,
                conditional_put: 1,
                head,
                ..Default::default()
            };
            r.cost = crate::prices::Priced::builtin().cost(&io, 1);
            r
        };
        let (pa, pb) = (priced(&a, 4), priced(&b, 5));
        let v = count_row("c", &[&pa], &[&pb]).unwrap().verdict();
        assert!(
            v.ends_with("; cost: $18.20 → $18.60 a million operations on s3-standard"),
            "{v}"
        );
        let same = count_row("c", &[&pa], &[&pa.clone()]).unwrap();
        assert_eq!(same.verdict(), "same counts");
        assert!(same.cost.unwrap().usd_per_million_ops.contains_key("r2"));
    }

    /// Half a request per operation, or 4 % more bytes, is within the tolerance.
    #[test]
    fn changes_within_the_tolerance_are_no_verdict() {
        let a = run(ModeKind::Continuous, 1, 4.0, 7.0);
        let mut b = run(ModeKind::Continuous, 1, 4.4, 7.4);
        b.io_per_op.as_mut().unwrap().written_bytes *= 1.04;
        assert_eq!(
            count_row("c", &[&a], &[&b]).unwrap().verdict(),
            "same counts"
        );
        b.io_per_op.as_mut().unwrap().written_bytes = 48_000.0 * 1.06;
        let v = count_row("c", &[&a], &[&b]).unwrap().verdict();
        assert!(v.starts_with("REGRESSION (B: +6.0 % written bytes"), "{v}");
    }

    /// A typical operation of `get` GETs and `head` HEADs (bytes growing with the GETs).
    fn op(get: f64, head: f64) -> crate::stats::TypicalOp {
        crate::stats::TypicalOp {
            get,
            put: 1.0,
            conditional_put: 1.0,
            head,
            requests: 1.0 + get + head,
            read_bytes: Some(10_000.0 * get),
            written_bytes: Some(48_000.0),
            round_trips: Some(1.0 + get + head),
            ..Default::default()
        }
    }

    /// A run of four writers bounded by their commits: its typical commit, and its commits
    /// by how far behind they were (versions behind, commits, their typical one).
    fn writers(typical: crate::stats::TypicalOp, strata: &[(u64, u64, f64, f64)]) -> Record {
        let mut r = run(ModeKind::Concurrent, 4, typical.head, 7.0);
        r.operations_bound = Some(200);
        r.io_median_per_op = Some(typical);
        r.io_median_by_behind = Some(
            (strata.iter())
                .map(|&(versions, operations, get, head)| Stratum {
                    behind: Behind { versions, lost: 0 },
                    operations,
                    median: op(get, head),
                })
                .collect(),
        );
        r
    }

    /// Several writers: one run a side is no verdict; with two, their commits are judged
    /// against commits as far behind on the other side. A build whose commits wait longer
    /// lets the others commit more in between: its typical commit catches up on more
    /// versions (here 2 GETs more), which is how the writers interleaved, not a request the
    /// build added; as far behind, its commits make the same requests: same counts. One HEAD
    /// more in every commit is a regression named by it and by the place judged.
    #[test]
    fn several_writers_are_judged_on_commits_as_far_behind() {
        let a = [
            writers(op(2.0, 4.0), &[(0, 40, 2.0, 4.0), (1, 30, 3.0, 4.0)]),
            writers(op(2.0, 4.0), &[(0, 45, 2.0, 4.0), (1, 25, 3.0, 4.0)]),
        ];
        let one = count_row("c", &[&a[0]], &[&a[1]]).unwrap();
        assert!(
            one.verdict()
                .starts_with("no count verdict (several writers' counts vary"),
            "{}",
            one.verdict()
        );
        let slower = [
            writers(op(4.0, 4.0), &[(1, 12, 3.0, 4.0), (2, 50, 4.0, 4.0)]),
            writers(op(4.0, 4.0), &[(1, 9, 3.0, 4.0), (2, 55, 4.0, 4.0)]),
        ];
        let same = count_row("c", &[&a[0], &a[1]], &[&slower[0], &slower[1]]).unwrap();
        assert_eq!(same.verdict(), "same counts (commits 1 version behind)");
        // The table's figures are still the typical operation's, shown.
        assert_eq!(same.total(Unit::Requests, None), Some((7.0, 9.0)));
        let head = [
            writers(op(4.0, 5.0), &[(1, 12, 3.0, 5.0), (2, 50, 4.0, 5.0)]),
            writers(op(4.0, 5.0), &[(1, 9, 3.0, 5.0), (2, 55, 4.0, 5.0)]),
        ];
        let v = count_row("c", &[&a[0], &a[1]], &[&head[0], &head[1]])
            .unwrap()
            .verdict();
        assert!(
            v.starts_with(
                "REGRESSION (B: +1.0 HEAD (median op 1 version behind) per op, 4.0 → 5.0"
            ),
            "{v}"
        );
        assert!(!v.contains("GET") && !v.contains("round trips"), "{v}");
    }

    /// Of the places every run held, the one the fewest of any run held is most (here
    /// 1 behind, at least 25 in every run, over none behind, 5 in one); where no place is
    /// held in every run, no verdict, and the commonest place of each side named.
    #[test]
    fn the_place_judged_is_the_one_every_run_held_most() {
        let a = [
            writers(op(2.0, 4.0), &[(0, 40, 2.0, 4.0), (1, 30, 3.0, 4.0)]),
            writers(op(2.0, 4.0), &[(0, 5, 2.0, 4.0), (1, 25, 3.0, 4.0)]),
        ];
        let b = [
            writers(op(2.0, 4.0), &[(0, 50, 2.0, 4.0), (1, 30, 3.0, 4.0)]),
            writers(op(2.0, 4.0), &[(0, 60, 2.0, 4.0), (1, 40, 3.0, 4.0)]),
        ];
        let (ra, rb) = ([&a[0], &a[1]], [&b[0], &b[1]]);
        assert_eq!(
            behind(&ra, &rb),
            Ok(Behind {
                versions: 1,
                lost: 0
            })
        );
        let apart = [
            writers(op(4.0, 4.0), &[(2, 50, 4.0, 4.0)]),
            writers(op(5.0, 4.0), &[(2, 20, 4.0, 4.0), (3, 40, 5.0, 4.0)]),
        ];
        let row = count_row("c", &ra, &[&apart[0], &apart[1]]).unwrap();
        let v = row.verdict();
        assert!(
            v.starts_with(
                "no count verdict (several writers interleaved differently on each side: no \
                 place behind the others held 5 commits in every run (A's commonest: 0 \
                 versions behind; B's: 2 versions behind)"
            ),
            "{v}"
        );
        assert!(!row.regressed() && !row.improved());
        // Its typical operations are shown all the same, unjudged.
        assert_eq!(row.total(Unit::Requests, None), Some((7.0, 9.5)));
        // Records that do not tell how far behind each commit was: no verdict, and why.
        let mut old = a.clone();
        old.iter_mut().for_each(|r| r.io_median_by_behind = None);
        let v = count_row("c", &[&old[0], &old[1]], &rb).unwrap().verdict();
        assert_eq!(v, format!("no count verdict ({UNTOLD})"));
    }

    /// Four writers bounded by their commits, whose runs differ only in their retries: the
    /// means of bytes grow with the retries (a retry reads and rewrites the state again),
    /// the commits' as far behind do not. No byte verdict; 6 % more bytes in every commit of
    /// B: one, named by the place judged.
    #[test]
    fn several_writers_bytes_are_judged_on_commits_as_far_behind() {
        let with = |retried: f64, written: f64| {
            let mut r = writers(op(2.0, 4.0), &[(0, 40, 2.0, 4.0), (1, 30, 3.0, 4.0)]);
            let io = r.io_per_op.as_mut().unwrap();
            io.read_bytes *= 1.0 + retried;
            io.written_bytes *= 1.0 + retried;
            for s in r.io_median_by_behind.iter_mut().flatten() {
                s.median.written_bytes = Some(written);
            }
            r
        };
        // A lost a race in 5 % of its commits, B in 40 %: the means differ by a third.
        let a = [with(0.05, 48_000.0), with(0.06, 48_000.0)];
        let b = [with(0.40, 48_000.0), with(0.45, 48_000.0)];
        let same = count_row("c", &[&a[0], &a[1]], &[&b[0], &b[1]]).unwrap();
        assert_eq!(same.verdict(), "same counts (commits 0 versions behind)");
        assert!(
            (same.counts.iter()).any(|c| c.name == "written bytes (median op 0 versions behind)"
                && c.moved == Moved::Same)
        );
        let more = [with(0.05, 50_880.0), with(0.06, 50_880.0)];
        let v = count_row("c", &[&a[0], &a[1]], &[&more[0], &more[1]])
            .unwrap()
            .verdict();
        assert!(
            v.starts_with("REGRESSION (B: +6.0 % written bytes (median op 0 versions behind)"),
            "{v}"
        );
    }

    /// Several readers make no versions: judged on their typical operation, with 2 runs a
    /// side; records of a build that did not keep it, by their means.
    #[test]
    fn several_readers_are_judged_on_their_typical_operation() {
        let readers = |head: f64| {
            let mut r = run(ModeKind::Concurrent, 4, head + 2.0, 7.0);
            r.operation = crate::plan::Operation::ListTables { cold: false };
            r.io_median_per_op = Some(op(1.0, head));
            r
        };
        let a = [readers(1.0), readers(1.0)];
        let b = [readers(2.0), readers(2.0)];
        let v = count_row("c", &[&a[0], &a[1]], &[&b[0], &b[1]])
            .unwrap()
            .verdict();
        assert!(
            v.starts_with("REGRESSION (B: +1.0 HEAD (median op) per op, 1.0 → 2.0"),
            "{v}"
        );
        let mut old = b[1].clone();
        old.io_median_per_op = None;
        let v = count_row("c", &[&a[0], &a[1]], &[&b[0], &old])
            .unwrap()
            .verdict();
        assert!(v.contains("HEAD per op") && !v.contains(MEDIAN), "{v}");
    }

    /// A cell bounded by time does as much as fits: one run a side is no verdict, and its
    /// bytes, which grow with the commits before each, are never judged; bounded by its
    /// commits, one writer's counts are judged from one run.
    #[test]
    fn a_cell_bounded_by_time_needs_runs_and_leaves_its_bytes_out() {
        let timed = |head, bytes| {
            let mut r = run(ModeKind::Concurrent, 1, head, 7.0);
            r.io_per_op.as_mut().unwrap().read_bytes = bytes;
            r
        };
        // A faster B fits more commits in its window: its bytes a commit grow.
        let (a, b) = (timed(4.0, 50_000.0), timed(4.0, 95_000.0));
        let one = count_row("c", &[&a], &[&b]).unwrap();
        assert!(!one.regressed(), "{}", one.verdict());
        assert!(
            one.verdict().contains("a cell bounded by time"),
            "{}",
            one.verdict()
        );
        let two = count_row("c", &[&a, &a], &[&b, &b]).unwrap();
        assert_eq!(two.verdict(), "same counts");
        assert!(two.counts.iter().all(|c| c.unit != Unit::Bytes));
        assert_eq!(two.bytes_left_out.as_deref(), Some(BYTES_BY_TIME));
        // One request more, in every run: still found.
        let more = count_row(
            "c",
            &[&a, &a],
            &[&timed(5.0, 50_000.0), &timed(5.0, 60_000.0)],
        );
        assert!(more.unwrap().regressed());
        // Bounded by its commits: judged from one run, bytes included.
        let (mut a, mut b) = (a, b);
        (a.operations_bound, b.operations_bound) = (Some(50), Some(50));
        let bounded = count_row("c", &[&a], &[&b]).unwrap();
        assert!(bounded.regressed() && bounded.bytes_left_out.is_none());
        assert!(
            bounded.verdict().contains("read bytes"),
            "{}",
            bounded.verdict()
        );
    }

    /// A cell of roles is judged per role and operation: its blend moves with how many of
    /// each fitted (here B's readers did twice as many listings, of fewer requests each) and
    /// is no verdict; one request more in a role's operation, in every run, is.
    #[test]
    fn a_cell_of_roles_is_judged_per_role_and_operation() {
        use crate::export::record::tests::role;
        use crate::plan::Operation;
        // The writers' commits, 1 version behind the other writer's: `declare` requests.
        let cell = |blend_head: f64, list: f64, declare: f64| {
            let mut r = run(ModeKind::Roles, 3, blend_head, 7.0);
            let mut readers = role("readers", Operation::ListTables { cold: false }, 500.0);
            readers.requests_per_op = Some(list);
            readers.round_trips_per_op = Some(list);
            let mut writers = role("writers", Operation::DeclareTable, 50.0);
            writers.requests_per_op = Some(declare + 1.0);
            writers.round_trips_per_op = Some(declare - 2.0);
            writers.io_median_by_behind = Some(vec![Stratum {
                behind: Behind {
                    versions: 1,
                    lost: 0,
                },
                operations: 30,
                median: crate::stats::TypicalOp {
                    requests: declare,
                    ..Default::default()
                },
            }]);
            r.roles = Some(vec![readers, writers]);
            r
        };
        let a = [cell(4.0, 3.0, 10.0), cell(4.1, 3.0, 10.0)];
        let b = [cell(2.0, 3.0, 10.0), cell(2.2, 3.0, 10.0)];
        let same = count_row("c", &[&a[0], &a[1]], &[&b[0], &b[1]]).unwrap();
        assert_eq!(same.verdict(), "same counts");
        assert!(
            same.total(Unit::Requests, None).is_some(),
            "the blend shown"
        );
        let more = [cell(4.0, 4.0, 10.0), cell(4.0, 4.0, 10.0)];
        let v = count_row("c", &[&a[0], &a[1]], &[&more[0], &more[1]])
            .unwrap()
            .verdict();
        assert!(
            v.starts_with("REGRESSION (B: +1.0 requests of readers/warm-read-list-tables per op"),
            "{v}"
        );
        assert!(!v.contains("writers"), "{v}");
        // A writer's commits as far behind, one request more: named by its place.
        let declare = [cell(4.0, 3.0, 11.0), cell(4.0, 3.0, 11.0)];
        let v = count_row("c", &[&a[0], &a[1]], &[&declare[0], &declare[1]])
            .unwrap()
            .verdict();
        assert!(
            v.starts_with(
                "REGRESSION (B: +1.0 requests (median op 1 version behind) of \
                 writers/write-declare-table per op, 10.0 → 11.0"
            ),
            "{v}"
        );
        // No place held on both sides, or records that do not tell it: no verdict, and why.
        let mut apart = b.clone();
        for r in &mut apart {
            let w = (r.roles.iter_mut().flatten()).find(|f| f.role == "writers");
            let s = w.unwrap().io_median_by_behind.as_mut().unwrap();
            s[0].behind.versions = 3;
        }
        let v = count_row("c", &[&a[0], &a[1]], &[&apart[0], &apart[1]])
            .unwrap()
            .verdict();
        assert!(
            v.starts_with(
                "no count verdict (writers/write-declare-table: several writers interleaved \
                 differently on each side"
            ),
            "{v}"
        );
        let mut untold = b.clone();
        (untold.iter_mut().flat_map(|r| r.roles.iter_mut().flatten()))
            .for_each(|f| f.io_median_by_behind = None);
        let v = count_row("c", &[&a[0], &a[1]], &[&untold[0], &untold[1]])
            .unwrap()
            .verdict();
        assert_eq!(
            v,
            format!("no count verdict (writers/write-declare-table: {UNTOLD})")
        );
        // Through REST servers no role has counts of its own: no verdict, and why.
        let rest = |r: &Record| {
            let mut r = r.clone();
            (r.roles.iter_mut().flatten()).for_each(|f| f.requests_per_op = None);
            (r.roles.iter_mut().flatten()).for_each(|f| f.round_trips_per_op = None);
            (r.roles.iter_mut().flatten()).for_each(|f| f.io_median_by_behind = None);
            r
        };
        let (ra, rb) = (rest(&a[0]), rest(&more[0]));
        let v = count_row("c", &[&ra, &ra], &[&rb, &rb]).unwrap().verdict();
        assert!(v.contains("not split by role"), "{v}");
    }

    /// Records without counts (an older build's) give no row.
    #[test]
    fn no_counts_no_row() {
        let mut a = run(ModeKind::Continuous, 1, 4.0, 7.0);
        a.io_per_op = None;
        a.round_trips_per_op = None;
        a.round_trips_by_kind = None;
        assert!(count_row("c", &[&a], &[&a]).is_none());
    }
}
