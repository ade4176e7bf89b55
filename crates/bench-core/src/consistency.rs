//! What readers see, checked against the committed history of a cell of roles: each
//! client's creations (acknowledged, or abandoned at their timeout: indeterminate) and
//! listings of a namespace's tables (what each saw of every writer's creations there), with
//! their start and end on the host's wall clock. From them: how long after its
//! acknowledgement each creation is first seen by each reader (visibility lag), listings
//! that began after a creation was acknowledged and miss it (stale reads), a reader that saw
//! an entry and later does not (monotonic reads), a client that misses its own acknowledged
//! creation (read your writes), and entries seen that no client created (phantoms).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What a listing saw of one writer's creations in the listed namespace: how many, and the
/// highest creation index among them plus one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    pub writer: u32,
    pub count: u64,
    pub top: u64,
}

/// A name bench's creations carry, `<prefix><client>_<n>` (the run's mark after it, if
/// any): the client and its creation's index; `None` for any other name.
pub fn created_index(name: &str) -> Option<(u32, u64)> {
    let prefixes = crate::plan::Operation::ALL
        .iter()
        .filter_map(|o| match o.describe().names {
            crate::plan::Names::Creates(p) => Some(p),
            _ => None,
        });
    let rest = prefixes.into_iter().find_map(|p| name.strip_prefix(p))?;
    let (w, tail) = rest.split_once('_')?;
    let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
    Some((w.parse().ok()?, digits.parse().ok()?))
}

/// What a listing's names show of every writer's creations.
pub fn seen(names: &[String]) -> Vec<Seen> {
    let mut by: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for (w, n) in names.iter().filter_map(|n| created_index(n)) {
        let e = by.entry(w).or_default();
        e.0 += 1;
        e.1 = e.1.max(n + 1);
    }
    (by.into_iter())
        .map(|(writer, (count, top))| Seen { writer, count, top })
        .collect()
}

/// One operation of the history.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    pub client: u32,
    /// Wall clock, µs since the epoch.
    pub start_us: u64,
    pub end_us: u64,
    pub what: What,
}

#[derive(Debug, Clone, PartialEq)]
pub enum What {
    /// The client's `n`-th creation, in `namespace`: acknowledged, or abandoned at its
    /// timeout (`landed` unknown).
    Created {
        namespace: String,
        n: u64,
        acknowledged: bool,
    },
    /// A listing of `namespace`'s tables, and what it saw of each writer's creations.
    Listed { namespace: String, seen: Vec<Seen> },
}

/// The checker's findings, as the record keeps them (`consistency`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Consistency {
    /// Listings checked, and acknowledged and indeterminate creations.
    pub reads: u64,
    pub creations: u64,
    pub indeterminate: u64,
    /// Listings that began after a creation in their namespace was acknowledged and did
    /// not see it, and their share of the listings.
    pub stale_reads: u64,
    pub stale_rate: f64,
    /// From a creation's acknowledgement to the start of each reader's first listing (begun
    /// after it) that saw it, over every (creation, reader) pair seen, in ms.
    pub lag_pairs: u64,
    pub lag_p50_ms: Option<f64>,
    pub lag_p99_ms: Option<f64>,
    pub lag_max_ms: Option<f64>,
    /// A reader that saw fewer of a writer's entries (or a lower one) than it saw before.
    pub monotonic_violations: u64,
    /// A client that listed the namespace of its own acknowledged creation after it and did
    /// not see it (counted in `stale_reads` too).
    pub read_your_writes_violations: u64,
    /// Entries seen beyond any creation a client attempted.
    pub phantoms: u64,
    /// The first violation, named: client, time, what it saw, what it should have seen.
    pub first_violation: Option<String>,
}

impl Consistency {
    /// Whether anything that should not happen did.
    pub fn anomalies(&self) -> u64 {
        self.stale_reads + self.monotonic_violations + self.phantoms
    }
}

/// Per writer and namespace: its creations, by index, with their acknowledgement (`None`:
/// indeterminate).
type Creations = BTreeMap<(u32, String), BTreeMap<u64, Option<u64>>>;

/// The checker's state as it reads the listings in time order.
struct Checker<'h> {
    c: Consistency,
    created: Creations,
    t0_us: u64,
    lags: Vec<f64>,
    /// (reader, writer, namespace) → the last (count, top) it saw, and the first creation
    /// whose lag it has not counted.
    last: BTreeMap<(u32, u32, &'h str), (u64, u64)>,
    counted: BTreeMap<(u32, u32, &'h str), u64>,
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

impl<'h> Checker<'h> {
    fn at(&self, us: u64) -> f64 {
        ms(us.saturating_sub(self.t0_us))
    }

    /// Note a violation, the first one named.
    fn named(&mut self, what: impl FnOnce() -> String) {
        if self.c.first_violation.is_none() {
            self.c.first_violation = Some(what());
        }
    }

    /// One listing of `namespace` by `r.client`: against each writer's creations there.
    fn listing(&mut self, r: &Op, namespace: &'h str, seen: &[Seen]) {
        self.c.reads += 1;
        let writers: Vec<(u32, BTreeMap<u64, Option<u64>>)> = (self.created.iter())
            .filter(|((_, ns), _)| ns == namespace)
            .map(|((w, _), by_n)| (*w, by_n.clone()))
            .collect();
        let mut stale = false;
        for (writer, by_n) in writers {
            let s = (seen.iter().find(|s| s.writer == writer)).map_or((0, 0), |s| (s.count, s.top));
            stale |= self.visible(r, namespace, writer, &by_n, s);
            // Phantoms: beyond every creation the writer attempted there.
            let attempted = by_n.keys().next_back().map_or(0, |n| n + 1);
            if s.1 > attempted {
                self.c.phantoms += 1;
                let at = self.at(r.start_us);
                self.named(|| {
                    format!(
                        "client {} listed {namespace} at +{at:.1} ms and saw writer {writer}'s \
                         #{}, which it never created",
                        r.client,
                        s.1 - 1
                    )
                });
            }
            // Monotonic: never fewer, never a lower top than this reader saw before.
            let before = self.last.insert((r.client, writer, namespace), s);
            if let Some((count, top)) = before.filter(|&(n, t)| s.0 < n || s.1 < t) {
                self.c.monotonic_violations += 1;
                let at = self.at(r.start_us);
                self.named(|| {
                    format!(
                        "client {} listed {namespace} at +{at:.1} ms and saw {} of writer \
                         {writer}'s entries, after seeing {}",
                        r.client,
                        saw(s),
                        saw((count, top))
                    )
                });
            }
            // Lag: this reader's first listing begun after a creation's acknowledgement that
            // saw it. A writer's creations are acknowledged in the order of their indices, so
            // each reader counts them in that order, from the first it has not counted.
            let next = self
                .counted
                .entry((r.client, writer, namespace))
                .or_default();
            for (&n, ack) in by_n.range((*next).min(s.1)..s.1) {
                match ack {
                    Some(a) if *a < r.start_us => self.lags.push(ms(r.start_us - a)),
                    // Acknowledged after this listing began: a later one counts it.
                    Some(_) => break,
                    None => {}
                }
                *next = n + 1;
            }
        }
        if stale {
            self.c.stale_reads += 1;
        }
    }

    /// Whether listing `r`, which saw `(count, top)` of `writer`'s entries, missed one
    /// acknowledged before it began: beyond its top, or one below it (its count short of
    /// those acknowledged there).
    fn visible(
        &mut self,
        r: &Op,
        namespace: &str,
        writer: u32,
        by_n: &BTreeMap<u64, Option<u64>>,
        s: (u64, u64),
    ) -> bool {
        let acked = |n: &u64, ack: &Option<u64>| ack.filter(|&a| a < r.start_us).map(|a| (*n, a));
        let missed = by_n.range(s.1..).find_map(|(n, a)| acked(n, a));
        let below = by_n.range(..s.1).filter_map(|(n, a)| acked(n, a)).count() as u64;
        if missed.is_none() && s.0 >= below {
            return false;
        }
        if r.client == writer {
            self.c.read_your_writes_violations += 1;
        }
        let at = self.at(r.start_us);
        let should = match missed {
            Some((n, ack)) => format!("not #{n}, acknowledged at +{:.1} ms", self.at(ack)),
            None => format!("fewer than the {below} below it acknowledged before"),
        };
        self.named(|| {
            format!(
                "client {} listed {namespace} at +{at:.1} ms and saw {} of writer {writer}'s \
                 entries, {should}",
                r.client,
                saw(s)
            )
        });
        true
    }
}

/// What a listing saw of a writer's entries, said: `none`, or `3 (up to #7)`.
fn saw((count, top): (u64, u64)) -> String {
    match count {
        0 => "none".into(),
        n => format!("{n} (up to #{})", top.saturating_sub(1)),
    }
}

/// Check a history (in any order). `t0_us`: the time the findings' times are told from
/// (the release).
pub fn check(history: &[Op], t0_us: u64) -> Consistency {
    let mut k = Checker {
        c: Consistency::default(),
        created: BTreeMap::new(),
        t0_us,
        lags: Vec::new(),
        last: BTreeMap::new(),
        counted: BTreeMap::new(),
    };
    for op in history {
        if let What::Created {
            namespace,
            n,
            acknowledged,
        } = &op.what
        {
            let ack = acknowledged.then_some(op.end_us);
            (k.created.entry((op.client, namespace.clone())).or_default()).insert(*n, ack);
            match acknowledged {
                true => k.c.creations += 1,
                false => k.c.indeterminate += 1,
            }
        }
    }
    let mut reads: Vec<(&Op, &str, &[Seen])> = (history.iter())
        .filter_map(|o| match &o.what {
            What::Listed { namespace, seen } => Some((o, namespace.as_str(), &seen[..])),
            What::Created { .. } => None,
        })
        .collect();
    // In time order (each client's in its own order too).
    reads.sort_by_key(|(o, _, _)| (o.start_us, o.client));
    for (r, namespace, seen) in reads {
        k.listing(r, namespace, seen);
    }
    let mut c = k.c;
    c.stale_rate = match c.reads {
        0 => 0.0,
        n => c.stale_reads as f64 / n as f64,
    };
    let mut lags = k.lags;
    lags.sort_by(f64::total_cmp);
    c.lag_pairs = lags.len() as u64;
    let pct = |p| crate::stats::percentile(&lags, p);
    (c.lag_p50_ms, c.lag_p99_ms, c.lag_max_ms) = (pct(0.5), pct(0.99), lags.last().copied());
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_s_names_say_what_it_saw_of_each_writer() {
        assert_eq!(created_index("bench_d3_17"), Some((3, 17)));
        assert_eq!(created_index("bench_t0_2_r5f3a"), Some((0, 2)));
        assert_eq!(created_index("table_3"), None);
        let names = ["bench_d1_0", "bench_d1_4", "table_9", "bench_d0_2"].map(String::from);
        assert_eq!(
            seen(&names),
            [
                Seen {
                    writer: 0,
                    count: 1,
                    top: 3
                },
                Seen {
                    writer: 1,
                    count: 2,
                    top: 5
                }
            ]
        );
    }

    fn created(client: u32, n: u64, end_ms: u64) -> Op {
        Op {
            client,
            start_us: (end_ms - 5) * 1000,
            end_us: end_ms * 1000,
            what: What::Created {
                namespace: "ns_0".into(),
                n,
                acknowledged: true,
            },
        }
    }

    fn listed(client: u32, start_ms: u64, seen: &[(u32, u64, u64)]) -> Op {
        Op {
            client,
            start_us: start_ms * 1000,
            end_us: start_ms * 1000 + 1000,
            what: What::Listed {
                namespace: "ns_0".into(),
                seen: (seen.iter())
                    .map(|&(writer, count, top)| Seen { writer, count, top })
                    .collect(),
            },
        }
    }

    #[test]
    fn a_strongly_consistent_history_has_no_anomaly_and_a_lag_of_the_next_read() {
        // Writer 0 creates #0 at 10 ms and #1 at 20 ms; reader 1 lists every 4 ms.
        let mut h = vec![created(0, 0, 10), created(0, 1, 20)];
        for t in (0..40).step_by(4) {
            let n = match t {
                t if t > 20 => 2,
                t if t > 10 => 1,
                _ => 0,
            };
            h.push(listed(1, t, &[(0, n, n)]));
        }
        let c = check(&h, 0);
        assert_eq!(c.reads, 10);
        assert_eq!(c.creations, 2);
        assert_eq!(c.anomalies(), 0, "{c:?}");
        assert_eq!(c.lag_pairs, 2);
        // Acknowledged at 10 and 20; the next listings began at 12 and 24.
        assert_eq!(c.lag_p50_ms, Some(2.0));
        assert_eq!(c.lag_max_ms, Some(4.0));
        assert!(c.first_violation.is_none());
    }

    #[test]
    fn stale_reads_going_backwards_and_phantoms_are_named() {
        let h = vec![
            created(0, 0, 10),
            // Begins after #0's acknowledgement and misses it: stale.
            listed(1, 12, &[]),
            listed(1, 16, &[(0, 1, 1)]),
            // Sees less than before: stale and not monotonic.
            listed(1, 20, &[]),
            // A writer's #5 that it never created: a phantom.
            listed(2, 24, &[(0, 2, 6)]),
            // Its own creation, missed: read your writes.
            listed(0, 30, &[]),
        ];
        let c = check(&h, 0);
        assert_eq!(c.stale_reads, 3, "{c:?}");
        assert_eq!(c.monotonic_violations, 1);
        assert_eq!(c.phantoms, 1);
        assert_eq!(c.read_your_writes_violations, 1);
        assert!((c.stale_rate - 0.6).abs() < 1e-9);
        let first = c.first_violation.unwrap();
        assert!(
            first.contains("client 1 listed ns_0 at +12.0 ms")
                && first.contains("not #0, acknowledged at +10.0 ms"),
            "{first}"
        );
    }

    #[test]
    fn an_indeterminate_creation_is_no_anomaly_either_way_and_other_namespaces_are_apart() {
        let mut h = vec![Op {
            what: What::Created {
                namespace: "ns_0".into(),
                n: 0,
                acknowledged: false,
            },
            ..created(0, 0, 10)
        }];
        h.push(listed(1, 12, &[]));
        h.push(listed(1, 14, &[(0, 1, 1)]));
        // A creation elsewhere is not missed by a listing of ns_0.
        h.push(Op {
            what: What::Created {
                namespace: "ns_1".into(),
                n: 1,
                acknowledged: true,
            },
            ..created(0, 1, 11)
        });
        let c = check(&h, 0);
        assert_eq!(c.indeterminate, 1);
        assert_eq!(c.anomalies(), 0, "{c:?}");
    }
}
