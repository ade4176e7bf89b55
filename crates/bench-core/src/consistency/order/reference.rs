//! The checks on the version order written from their definitions, each read held against
//! every commit of the history and each commit against every other, sharing nothing with
//! [`super::check`] but the history's types and [`since`]: the brute force the checks must
//! equal (`the_checks_equal_a_brute_force_reference`, on histories shaped like runs).

use super::super::{Op, Outcome, What, since};
use super::{Order, Stale};

/// What one read (or one page) saw of the commits it observes: the greatest version it
/// shows and the least it misses.
#[derive(Default)]
struct Extremes {
    shown: Option<u64>,
    missed: Option<u64>,
}

impl Extremes {
    fn add(&mut self, v: u64, shows: bool) {
        match shows {
            true => self.shown = Some(self.shown.map_or(v, |s| s.max(v))),
            false => self.missed = Some(self.missed.map_or(v, |m| m.min(v))),
        }
    }
}

fn parent(id: &str) -> &str {
    id.rsplit_once('$').map_or("", |(p, _)| p)
}

fn name(id: &str) -> &str {
    id.rsplit('$').next().unwrap_or(id)
}

fn acked(op: &Op) -> bool {
    matches!(
        op.what,
        What::Created {
            outcome: Outcome::Acknowledged,
            ..
        } | What::Removed {
            outcome: Outcome::Acknowledged,
            ..
        }
    )
}

/// Whether listing `read` shows commit `c` of its scope (a creation of its kind in its
/// namespace; of tables, a table's removal there, where it says what is gone); `None` where
/// `c` is not of its scope.
fn listing_shows(read: &Op, c: &Op) -> Option<bool> {
    let What::Listed {
        namespace,
        tables,
        seen,
        gone,
        ..
    } = &read.what
    else {
        return None;
    };
    match &c.what {
        What::Created { id, n, table, .. } if parent(id) == namespace && table == tables => {
            Some(seen.iter().any(|s| s.writer == c.client && s.has(*n)))
        }
        What::Removed {
            id, table: true, ..
        } if parent(id) == namespace && *tables => gone.as_ref().map(|g| g.contains(id)),
        _ => None,
    }
}

/// Whether `c` removed an entry that listing `read` of tables says is gone.
fn removal_shown(read: &Op, c: &Op) -> bool {
    match (&read.what, &c.what) {
        (
            What::Listed {
                tables: true,
                gone: Some(g),
                ..
            },
            What::Removed { id, .. },
        ) => g.contains(id),
        _ => false,
    }
}

/// The versions an operation made or served.
fn span(v: Option<u64>, to: Option<u64>) -> Option<(u64, u64)> {
    v.map(|lo| (lo, to.unwrap_or(lo).max(lo)))
}

pub fn check(h: &[Op], margin: u64, paused: &[[u64; 2]]) -> Order {
    let mut o = Order::default();
    let commits: Vec<&Op> = (h.iter())
        .filter(|op| matches!(op.what, What::Created { .. } | What::Removed { .. }))
        .collect();
    o.commits = commits.len() as u64;
    let known: Vec<(&Op, u64)> = (commits.iter())
        .filter_map(|op| Some((*op, op.version?)))
        .collect();
    o.commits_known = known.len() as u64;
    // A version made by a commit before it.
    for (k, (_, v)) in known.iter().enumerate() {
        o.one_version_twice.count += u64::from(known[..k].iter().any(|(_, w)| w == v));
    }
    // A commit of a lower version than one acknowledged before it began.
    for (b, vb) in &known {
        let above = |(a, va): &(&Op, u64)| acked(a) && a.end_us + margin < b.start_us && va > vb;
        o.write_order.count += u64::from(known.iter().any(above));
    }
    // A client's operation below the highest version of those it began before it.
    let mut clients: Vec<u32> = h.iter().map(|op| op.client).collect();
    clients.sort_unstable();
    clients.dedup();
    for c in clients {
        let mut ops: Vec<&Op> = (h.iter())
            .filter(|op| op.client == c && op.version.is_some())
            .filter(|op| !matches!(op.what, What::Versioned { .. }))
            .collect();
        ops.sort_by_key(|op| op.start_us);
        for (k, op) in ops.iter().enumerate() {
            let (_, hi) = span(op.version, op.version_to).expect("known");
            let top = ops[..k].iter().filter_map(|p| p.version).max();
            o.versions_back.count += u64::from(top.is_some_and(|t| hi < t));
        }
    }
    o.stale = stale(h, &known, margin, paused);
    for read in h {
        reads(read, &known, &mut o);
    }
    o
}

/// Reads of a known version below one acknowledged before they began, each against the
/// earliest acknowledged of the versions above what it served.
fn stale(h: &[Op], known: &[(&Op, u64)], margin: u64, paused: &[[u64; 2]]) -> Stale {
    let mut st = Stale::default();
    let reads =
        (h.iter()).filter(|op| matches!(op.what, What::Listed { .. } | What::Probed { .. }));
    for read in reads {
        let Some((_, hi)) = span(read.version, read.version_to) else {
            continue;
        };
        let before: Vec<&(&Op, u64)> = (known.iter())
            .filter(|(a, _)| acked(a) && a.end_us + margin < read.start_us)
            .collect();
        let Some(top) = before.iter().map(|(_, v)| *v).max().filter(|&t| t > hi) else {
            continue;
        };
        let missed = (before.iter())
            .filter(|(_, v)| *v > hi)
            .min_by_key(|(a, _)| a.end_us)
            .expect("the top one at least");
        let [low, high] = since(
            missed.0.end_us,
            [read.start_us, read.end_us],
            margin,
            paused,
        )
        .map(|us| us as f64 / 1000.0);
        st.count += 1;
        st.versions_behind_max = st.versions_behind_max.max(top - hi);
        st.lag_low_max_ms = st.lag_low_max_ms.max(low);
        st.lag_high_max_ms = st.lag_high_max_ms.max(high);
    }
    st
}

/// One read (each page of a listing in pages on its own) against every commit it
/// observes: what it shows against the version it served, and against the order.
fn reads(read: &Op, known: &[(&Op, u64)], o: &mut Order) {
    let judged: Vec<(Extremes, Option<(u64, u64)>)> = match &read.what {
        What::Listed { pages, .. } if pages.len() > 1 => {
            let mut each: Vec<Extremes> = pages.iter().map(|_| Extremes::default()).collect();
            // A page is held to the commits of its scope begun before the listing ended,
            // and to every commit it showed, each in the page whose names hold its own.
            for (c, v) in known {
                let later = c.start_us >= read.end_us;
                let shows = match (listing_shows(read, c), later) {
                    (Some(shows), false) => shows,
                    (Some(true), true) => true,
                    (None, true) if removal_shown(read, c) => true,
                    _ => continue,
                };
                let (What::Created { id, .. } | What::Removed { id, .. }) = &c.what else {
                    unreachable!("a commit");
                };
                let page = (pages.iter())
                    .position(|p| p.through.as_deref().is_none_or(|t| t >= name(id)))
                    .unwrap_or(pages.len() - 1);
                each[page].add(*v, shows);
            }
            (each.into_iter().zip(pages))
                .map(|(e, p)| {
                    (
                        e,
                        span(p.at.and_then(|a| a.served), p.at.and_then(|a| a.served_to)),
                    )
                })
                .collect()
        }
        What::Listed { .. } => {
            let mut e = Extremes::default();
            for (c, v) in known {
                if let Some(shows) = listing_shows(read, c) {
                    e.add(*v, shows);
                }
            }
            vec![(e, span(read.version, read.version_to))]
        }
        What::Probed { id, found } => {
            let mut e = Extremes::default();
            for (c, v) in known {
                match &c.what {
                    What::Created { id: x, .. } if x == id => e.add(*v, *found),
                    What::Removed { id: x, .. } if x == id => e.add(*v, !*found),
                    _ => {}
                }
            }
            vec![(e, span(read.version, read.version_to))]
        }
        _ => return,
    };
    o.reads += 1;
    o.reads_known += u64::from(judged.iter().all(|(_, s)| s.is_some()));
    if judged.len() > 1 {
        o.pages += judged.len() as u64;
        o.pages_known += judged.iter().filter(|(_, s)| s.is_some()).count() as u64;
    }
    let mixed = |(e, _): &(Extremes, Option<(u64, u64)>)| matches!((e.shown, e.missed), (Some(s), Some(m)) if s > m);
    o.no_such_state.count += u64::from(judged.iter().any(mixed));
    let wrong = |(e, s): &(Extremes, Option<(u64, u64)>)| {
        let Some((lo, hi)) = *s else { return false };
        e.shown.is_some_and(|v| v > hi) || e.missed.is_some_and(|v| v <= lo)
    };
    o.not_its_version.count += u64::from(judged.iter().any(wrong));
}
