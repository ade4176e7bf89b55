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
//! catalog's rows and the names in it, a few bytes run to run). Where several writers
//! contend, the mean per operation varies from run to run (a commit that lost to another
//! retries and repeats its requests and its bytes), and where a cell runs for a time, what
//! it did depends on how much fitted: there the requests and bytes judged are the typical
//! operation's (the medians over a run's successful operations: one that committed at its
//! first attempt while fewer than half retry), a cell of roles' per role and operation, with
//! 2 runs a side; one run a side gets no count verdict, and says so.

use crate::export::Record;
use crate::export::record::RoleFigures;
use crate::plan::ModeKind;
use crate::stats::median;

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
            (None, false, false) => "same counts".to_string(),
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

/// Whether a cell's requests and round trips are judged on the typical operation: where the
/// work depends on contention or on the time (every cell but one writer's bounded by its
/// commits), if every run on both sides has it.
fn on_typical(a: &[&Record], b: &[&Record]) -> bool {
    (contended(a[0]) || bounded_by_time(a[0]))
        && (a.iter().chain(b)).all(|r| r.io_median_per_op.is_some())
}

/// The metrics both sides measured in every run: (name, unit, A's runs, B's runs).
fn metrics(a: &[&Record], b: &[&Record]) -> Vec<(String, Unit, Vec<f64>, Vec<f64>)> {
    let mut out = Vec::new();
    let mut add = |name: String, unit, f: &dyn Fn(&Record) -> Option<f64>| {
        if let (Some(va), Some(vb)) = (per_run(a, f), per_run(b, f)) {
            out.push((name, unit, va, vb));
        }
    };
    if on_typical(a, b) {
        for (name, kind) in KINDS {
            add(format!("{name}{MEDIAN}"), Unit::Requests, &|r| {
                r.io_median_per_op.map(|t| kind(&t.kinds()))
            });
        }
        add(
            format!("critical-path round trips{MEDIAN}"),
            Unit::RoundTrips,
            &|r| r.io_median_per_op.and_then(|t| t.round_trips),
        );
        // The typical operation's bytes: the means move with the retries, as requests do.
        add(format!("read bytes{MEDIAN}"), Unit::Bytes, &|r| {
            r.io_median_per_op.and_then(|t| t.read_bytes)
        });
        add(format!("written bytes{MEDIAN}"), Unit::Bytes, &|r| {
            r.io_median_per_op.and_then(|t| t.written_bytes)
        });
        return out;
    }
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
    add_bytes(&mut add);
    out
}

/// The bytes read and written per operation (means).
fn add_bytes(add: &mut impl FnMut(String, Unit, &dyn Fn(&Record) -> Option<f64>)) {
    add("read bytes".into(), Unit::Bytes, &|r| {
        r.io_per_op.map(|p| p.read_bytes)
    });
    add("written bytes".into(), Unit::Bytes, &|r| {
        r.io_per_op.map(|p| p.written_bytes)
    });
}

/// One figure of a role's operation.
type RoleFigure = fn(&RoleFigures) -> Option<f64>;

/// A cell of roles' metrics per role and operation of its mix, the ones judged there:
/// the cell's own blend the operations in the proportions that fitted in its window.
fn role_metrics(a: &[&Record], b: &[&Record]) -> Vec<(String, Unit, Vec<f64>, Vec<f64>)> {
    fn of<'r>(r: &'r Record, role: &str, op: crate::plan::Operation) -> Option<&'r RoleFigures> {
        (r.roles.iter().flatten()).find(|f| f.role == role && f.operation == op)
    }
    let mut out = Vec::new();
    for f in a[0].roles.iter().flatten() {
        let (role, op) = (f.role.as_str(), f.operation);
        let side =
            |runs: &[&Record], get: RoleFigure| per_run(runs, |r| of(r, role, op).and_then(get));
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
            let found = match (side(a, median), side(b, median)) {
                (Some(va), Some(vb)) => Some((format!("{name}{MEDIAN}"), va, vb)),
                _ => (side(a, mean).zip(side(b, mean))).map(|(va, vb)| (name.to_string(), va, vb)),
            };
            if let Some((name, va, vb)) = found {
                out.push((format!("{name} of {role}/{op}"), unit, va, vb));
            }
        }
    }
    out
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
    let mut found = metrics(a, b);
    found.retain(|(_, unit, ..)| !(by_time && *unit == Unit::Bytes));
    // A cell of roles is judged per role and operation; its blend is shown, not judged.
    let roles = a[0].mode == ModeKind::Roles;
    let blend = match roles {
        true => std::mem::replace(&mut found, role_metrics(a, b)),
        false => Vec::new(),
    };
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
    .map(str::to_string);
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

    /// Contended cells: one run a side is no verdict; with more, B's runs must all lie
    /// beyond A's spread.
    #[test]
    fn contended_counts_are_judged_by_their_spread() {
        let a = run(ModeKind::Concurrent, 4, 4.0, 7.0);
        let b = run(ModeKind::Concurrent, 4, 5.5, 8.5);
        let one = count_row("c", &[&a], &[&b]).unwrap();
        assert!(!one.regressed());
        assert!(
            one.verdict()
                .starts_with("no count verdict (several writers"),
            "{}",
            one.verdict()
        );
        // A's runs spread from 4 to 6 HEAD (retries): B at 5.5 and 6.2 is inside it.
        let a2 = run(ModeKind::Concurrent, 4, 6.0, 9.0);
        let b2 = run(ModeKind::Concurrent, 4, 6.2, 9.2);
        let within = count_row("c", &[&a, &a2], &[&b, &b2]).unwrap();
        assert!(!within.regressed(), "{}", within.verdict());
        // B's every run beyond A's every run by more than 0.5: a regression.
        let b3 = run(ModeKind::Concurrent, 4, 7.0, 10.0);
        let b4 = run(ModeKind::Concurrent, 4, 7.5, 10.5);
        let beyond = count_row("c", &[&a, &a2], &[&b3, &b4]).unwrap();
        assert!(beyond.regressed(), "{}", beyond.verdict());
    }

    /// Contended runs whose means move with their retries (here by 2 HEAD an operation) but
    /// whose typical operation is the same: same counts; a HEAD more in the typical
    /// operation of every run of B: a regression named by it.
    #[test]
    fn contended_cells_are_judged_on_their_typical_operation() {
        use crate::stats::TypicalOp;
        let with = |mean_head: f64, head: f64| {
            let mut r = run(ModeKind::Concurrent, 4, mean_head, 7.0 + mean_head);
            r.io_median_per_op = Some(TypicalOp {
                get: 2.0,
                put: 1.0,
                conditional_put: 1.0,
                head,
                requests: 3.0 + head,
                round_trips: Some(3.0 + head),
                ..TypicalOp::default()
            });
            r
        };
        let a = [with(6.0, 4.0), with(8.5, 4.0)];
        let b = [with(9.0, 4.0), with(10.5, 4.0)];
        let same = count_row("c", &[&a[0], &a[1]], &[&b[0], &b[1]]).unwrap();
        assert_eq!(same.verdict(), "same counts");
        // Its table shows the typical operation's requests and round trips.
        assert_eq!(same.total(Unit::Requests, None), Some((7.0, 7.0)));
        let planted = [with(6.5, 5.0), with(7.0, 5.0)];
        let v = count_row("c", &[&a[0], &a[1]], &[&planted[0], &planted[1]])
            .unwrap()
            .verdict();
        assert!(
            v.starts_with("REGRESSION (B: +1.0 HEAD (median op) per op, 4.0 → 5.0"),
            "{v}"
        );
        assert!(!v.contains("round trips"), "{v}");
        // A side without it (an older build's records): the means, as before.
        let mut old = b[1].clone();
        old.io_median_per_op = None;
        let newer = with(9.5, 4.0);
        let v = count_row("c", &[&a[0], &a[1]], &[&newer, &old])
            .unwrap()
            .verdict();
        assert!(v.contains("HEAD per op") && !v.contains(MEDIAN), "{v}");
    }

    /// Four writers bounded by their commits, whose runs differ only in their retries: the
    /// means of bytes grow with the retries (a retry reads and rewrites the state again),
    /// the typical operation's do not. No byte verdict; 6 % more bytes in the typical
    /// operation of every run of B: one, named by it.
    #[test]
    fn contended_bytes_are_judged_on_the_typical_operation() {
        use crate::stats::TypicalOp;
        let with = |retried: f64, written: f64| {
            let mut r = run(ModeKind::Concurrent, 4, 4.0, 7.0);
            r.operations_bound = Some(200);
            let io = r.io_per_op.as_mut().unwrap();
            io.read_bytes *= 1.0 + retried;
            io.written_bytes *= 1.0 + retried;
            r.io_median_per_op = Some(TypicalOp {
                get: 4.0,
                put: 3.0,
                conditional_put: 1.0,
                head: 4.0,
                requests: 11.0,
                read_bytes: Some(50_000.0),
                written_bytes: Some(written),
                round_trips: Some(7.0),
                ..TypicalOp::default()
            });
            r
        };
        // A lost a race in 5 % of its commits, B in 40 %: the means differ by a third.
        let a = [with(0.05, 48_000.0), with(0.06, 48_000.0)];
        let b = [with(0.40, 48_000.0), with(0.45, 48_000.0)];
        let same = count_row("c", &[&a[0], &a[1]], &[&b[0], &b[1]]).unwrap();
        assert_eq!(same.verdict(), "same counts");
        assert!(
            same.counts
                .iter()
                .any(|c| c.name == format!("written bytes{MEDIAN}"))
        );
        let more = [with(0.05, 50_880.0), with(0.06, 50_880.0)];
        let v = count_row("c", &[&a[0], &a[1]], &[&more[0], &more[1]])
            .unwrap()
            .verdict();
        assert!(
            v.starts_with("REGRESSION (B: +6.0 % written bytes (median op)"),
            "{v}"
        );
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
        let cell = |blend_head: f64, list: f64, declare: f64| {
            let mut r = run(ModeKind::Roles, 3, blend_head, 7.0);
            let mut readers = role("readers", Operation::ListTables { cold: false }, 500.0);
            readers.requests_per_op = Some(list);
            readers.round_trips_per_op = Some(list);
            let mut writers = role("writers", Operation::DeclareTable, 50.0);
            writers.requests_per_op = Some(declare);
            writers.round_trips_per_op = Some(declare - 2.0);
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
        // Through REST servers no role has counts of its own: no verdict, and why.
        let rest = |r: &Record| {
            let mut r = r.clone();
            (r.roles.iter_mut().flatten()).for_each(|f| f.requests_per_op = None);
            (r.roles.iter_mut().flatten()).for_each(|f| f.round_trips_per_op = None);
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
