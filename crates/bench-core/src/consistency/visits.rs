//! Which commits each read is held against. Holding every read against every commit it
//! observes takes reads × commits: hours for a history of a million operations. A read
//! can only change the checker's findings through a commit whose status for its reader
//! changes (shown now, missed before, or the reverse), a commit known before it began that
//! its reader has not seen yet (it may be stale, and its lag runs on), a commit its reader
//! saw before it was known (the lag is taken at the first read after), or one it shows that
//! never landed or was not attempted yet (a phantom, at every read that shows it). Each
//! reader's listings of a namespace are told apart by what changed since its last one (the
//! runs of indices each writer's creations were seen in, the golden tables it missed), so a
//! read costs what changed, not what is there. The findings are the same as holding every
//! read against every commit, in the same order (a test holds them equal on random
//! histories).

use std::collections::{BTreeSet, HashMap, HashSet};

use super::{Fact, Op, Outcome, Read, parent};

/// One writer's creations of one kind in one namespace, by their index: (index, fact), and
/// whether their starts rise with the index (a client's creations, one after another).
struct Writer {
    by_n: Vec<(u64, usize)>,
    rising: bool,
}

/// What each reader of one scope (a namespace's listings of one kind) held last.
#[derive(Default)]
struct Reader {
    /// Its last listing of the scope (its place among the reads), and the last that said
    /// which golden tables it missed.
    prev: Option<usize>,
    prev_gone: Option<usize>,
    /// How many of the scope's commits (by the time they were known) it has passed.
    passed: usize,
    /// Commits known before its last read began that it has not seen since (or saw only
    /// before they were known, their lag still to take).
    pending: BTreeSet<usize>,
}

/// A reader's scope: (reader, namespace, tables).
type Scope<'h> = (u32, &'h str, bool);

pub(super) struct Visits<'h> {
    /// The namespaces with a table removal.
    removals: HashSet<&'h str>,
    /// (namespace, tables) → writer → its creations there.
    writers: HashMap<(&'h str, bool), HashMap<u32, Writer>>,
    /// A namespace → its commits known (acknowledged, or seen landed), by when: (time, fact).
    known: HashMap<&'h str, Vec<(u64, usize)>>,
    /// A namespace → its commits that never landed (a phantom at every read that shows one).
    never: HashMap<&'h str, Vec<usize>>,
    by_id: HashMap<&'h str, Vec<usize>>,
    readers: HashMap<Scope<'h>, Reader>,
    /// Commits a reader's look-ups held since its last listing of their scope.
    probed: HashMap<Scope<'h>, Vec<usize>>,
    /// Hold every read against every commit it observes (the reference the tests hold the
    /// rest against).
    all: bool,
}

/// The symmetric difference of two sets of indices, each as ascending half-open runs.
fn xor(a: &[[u64; 2]], b: &[[u64; 2]]) -> Vec<[u64; 2]> {
    let mut edges: Vec<u64> = a.iter().chain(b).flat_map(|r| [r[0], r[1]]).collect();
    edges.sort_unstable();
    edges.dedup();
    let has = |runs: &[[u64; 2]], n: u64| {
        let i = runs.partition_point(|r| r[1] <= n);
        runs.get(i).is_some_and(|r| r[0] <= n)
    };
    let mut out: Vec<[u64; 2]> = Vec::new();
    for w in edges.windows(2) {
        if has(a, w[0]) != has(b, w[0]) {
            match out.last_mut() {
                Some(r) if r[1] == w[0] => r[1] = w[1],
                _ => out.push([w[0], w[1]]),
            }
        }
    }
    out
}

impl<'h> Visits<'h> {
    /// Whether `read` observes any commit: a listing, one of its kind in its namespace (or,
    /// told the golden's tables it missed, a table removal there); a look-up, one of its
    /// entry.
    pub(super) fn observes(&self, read: &Read) -> bool {
        match read {
            Read::Listing {
                namespace,
                tables,
                gone,
                ..
            } => {
                let created = self.writers.contains_key(&(*namespace, *tables));
                let removed = *tables && gone.is_some() && self.removals.contains(namespace);
                created || removed
            }
            Read::Probe { id, .. } => self.by_id.contains_key(id),
        }
    }

    pub(super) fn new(facts: &[Fact<'h>], all: bool) -> Visits<'h> {
        let mut v = Visits {
            removals: HashSet::new(),
            writers: HashMap::new(),
            known: HashMap::new(),
            never: HashMap::new(),
            by_id: HashMap::new(),
            readers: HashMap::new(),
            probed: HashMap::new(),
            all,
        };
        // (namespace, tables) → writer → (index, fact).
        type ByWriter = HashMap<u32, Vec<(u64, usize)>>;
        let mut by: HashMap<(&str, bool), ByWriter> = HashMap::new();
        for (k, f) in facts.iter().enumerate() {
            let ns = parent(f.id);
            v.by_id.entry(f.id).or_default().push(k);
            match f.created {
                Some((w, n)) => by
                    .entry((ns, f.table))
                    .or_default()
                    .entry(w)
                    .or_default()
                    .push((n, k)),
                None if f.table => {
                    v.removals.insert(ns);
                }
                None => {}
            }
            if let Some(t) = f.known_us {
                v.known.entry(ns).or_default().push((t, k));
            }
            if f.outcome
                == (Outcome::Indeterminate {
                    landed: Some(false),
                })
            {
                v.never.entry(ns).or_default().push(k);
            }
        }
        for list in v.known.values_mut() {
            list.sort_unstable();
        }
        for (key, writers) in by {
            let writers = (writers.into_iter())
                .map(|(w, mut by_n)| {
                    by_n.sort_unstable();
                    let starts: Vec<u64> =
                        by_n.iter().map(|&(_, k)| facts[k].op.start_us).collect();
                    let rising = starts.windows(2).all(|s| s[0] <= s[1]);
                    (w, Writer { by_n, rising })
                })
                .collect();
            v.writers.insert(key, writers);
        }
        v
    }

    /// The commits read `i` (of `reads`, in time order) must be held against, in the order
    /// of `facts`; `observed`: every commit it observes.
    pub(super) fn of(
        &mut self,
        i: usize,
        reads: &[(&'h Op, Read<'h>)],
        facts: &[Fact<'h>],
        observed: &[usize],
        margin_us: u64,
    ) -> Vec<usize> {
        let (op, read) = (reads[i].0, &reads[i].1);
        let Read::Listing {
            namespace,
            tables,
            seen,
            gone,
        } = read
        else {
            return observed.to_vec();
        };
        if self.all {
            return observed.to_vec();
        }
        let who = op.client;
        let scope = (who, *namespace, *tables);
        let mut visit: Vec<usize> = self.probed.remove(&scope).unwrap_or_default();
        let reader = self.readers.entry(scope).or_default();
        // The commits known since its last read: each waits for the reader to see it, or,
        // seen before it was known, is held once for its lag.
        let known = self.known.get(namespace).map_or(&[][..], Vec::as_slice);
        while let Some(&(_, k)) = known.get(reader.passed).filter(|(t, _)| *t < op.start_us) {
            reader.passed += 1;
            // A listing of tables observes table creations and removals; of namespaces,
            // namespace creations.
            let f = &facts[k];
            if f.table != *tables || (f.created.is_none() && !f.table) {
                continue;
            }
            reader.pending.insert(k);
        }
        visit.extend(reader.pending.iter().copied());
        // What changed since its last listing of the scope.
        let prev_seen = match reader.prev.map(|p| &reads[p].1) {
            Some(Read::Listing { seen, .. }) => *seen,
            _ => &[][..],
        };
        let prev_gone = match reader.prev_gone.map(|p| &reads[p].1) {
            Some(Read::Listing { gone, .. }) => gone.as_ref(),
            _ => None,
        };
        let none = HashSet::new();
        let writers = self.writers.get(&(*namespace, *tables));
        let runs = |s: &'h [super::Seen], w: u32| {
            s.iter()
                .find(|s| s.writer == w)
                .map_or(&[][..], |s| s.runs.as_slice())
        };
        let ids: BTreeSet<u32> = seen.iter().chain(prev_seen).map(|s| s.writer).collect();
        let end = op.end_us + margin_us;
        for w in ids {
            let Some(writer) = writers.and_then(|ws| ws.get(&w)) else {
                continue;
            };
            let at = |n: u64| writer.by_n.partition_point(|&(m, _)| m < n);
            for r in xor(runs(prev_seen, w), runs(seen, w)) {
                visit.extend(writer.by_n[at(r[0])..at(r[1])].iter().map(|&(_, k)| k));
            }
            // Shown before it was attempted: a phantom at every read that shows it.
            let from = match writer.rising {
                true => writer
                    .by_n
                    .partition_point(|&(_, k)| facts[k].op.start_us <= end),
                false => 0,
            };
            for r in runs(seen, w) {
                let (a, b) = (at(r[0]).max(from), at(r[1]).max(from));
                visit.extend(writer.by_n[a..b].iter().map(|&(_, k)| k));
            }
        }
        let (was, now) = (prev_gone.unwrap_or(&none), gone.as_ref().unwrap_or(&none));
        for id in was.symmetric_difference(now).chain(now.iter()) {
            let on = self.by_id.get(id).map_or(&[][..], Vec::as_slice);
            let changed = !(was.contains(id) && now.contains(id));
            visit.extend(
                on.iter()
                    .filter(|&&k| changed || facts[k].op.start_us > end),
            );
        }
        visit.extend(self.never.get(namespace).into_iter().flatten().copied());
        visit.sort_unstable();
        visit.dedup();
        visit
    }

    /// Read `i` was held against `visited`: what its reader now holds of each.
    pub(super) fn after(
        &mut self,
        i: usize,
        reads: &[(&'h Op, Read<'h>)],
        facts: &[Fact<'h>],
        visited: &[usize],
    ) {
        if self.all {
            return;
        }
        let (op, read) = (reads[i].0, &reads[i].1);
        let who = op.client;
        match read {
            Read::Listing {
                namespace,
                tables,
                gone,
                ..
            } => {
                let reader = self.readers.entry((who, *namespace, *tables)).or_default();
                reader.prev = Some(i);
                if gone.is_some() {
                    reader.prev_gone = Some(i);
                }
                let mut owed = Vec::new();
                for &k in visited {
                    let known = facts[k].known_us.is_some_and(|t| t < op.start_us);
                    match read.shows(&facts[k]) {
                        Some(true) => {
                            reader.pending.remove(&k);
                        }
                        Some(false) if known => {
                            reader.pending.insert(k);
                        }
                        Some(false) => {}
                        // Not observed here (a removal, by a listing not told what it missed):
                        // held again at the next listing of the scope.
                        None => owed.push(k),
                    }
                }
                if !owed.is_empty() {
                    let scope = (who, *namespace, *tables);
                    self.probed.entry(scope).or_default().extend(owed);
                }
            }
            // A look-up changes what its reader holds of its entry's commits: held again at
            // the reader's next listing of their scope.
            Read::Probe { .. } => {
                for &k in visited {
                    let f = &facts[k];
                    let scope = (who, parent(f.id), f.table);
                    self.probed.entry(scope).or_default().push(k);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consistency::{Seen, What};
    use crate::rng::Rng;

    /// A random history: two writers creating tables (and now and then a namespace) in two
    /// namespaces, a remover dropping the golden's tables, three readers listing and looking
    /// up; outcomes acknowledged, or indeterminate (landed, not, not looked up); listings
    /// that show each writer's creations mostly as far as they went, with holes, entries from
    /// the future and entries no one made, and the golden tables gone mostly as removed.
    fn history(rng: &mut Rng) -> Vec<Op> {
        let mut pick = |n: u64| rng.next_u64() % n;
        let mut h: Vec<Op> = Vec::new();
        let mut made: Vec<(u32, String, u64, bool)> = Vec::new();
        let mut removed: Vec<String> = Vec::new();
        let mut t = 1_000u64;
        let mut next = [0u64; 2];
        for _ in 0..120 {
            t += 200 + pick(3_000);
            let (start_us, end_us) = (t, t + 100 + pick(4_000));
            let outcome = match pick(10) {
                0 => Outcome::Indeterminate {
                    landed: [Some(true), Some(false), None][pick(3) as usize],
                },
                _ => Outcome::Acknowledged,
            };
            let ns = ["ns_0", "ns_1"][pick(2) as usize];
            let at = |client, what| Op {
                client,
                start_us,
                end_us,
                what,
                version: None,
                version_to: None,
            };
            match pick(6) {
                0 | 1 => {
                    let w = pick(2) as u32;
                    let n = next[w as usize];
                    next[w as usize] += 1;
                    let table = pick(8) != 0;
                    made.push((w, ns.to_string(), n, table));
                    let id = format!("{ns}$bench_t{w}_{n}");
                    h.push(at(
                        w,
                        What::Created {
                            id,
                            n,
                            table,
                            outcome,
                        },
                    ));
                }
                2 if removed.len() < 8 => {
                    let id = format!("{ns}$table_{}", pick(6));
                    if !removed.contains(&id) {
                        removed.push(id.clone());
                        h.push(at(
                            2,
                            What::Removed {
                                id,
                                table: true,
                                outcome,
                            },
                        ));
                    }
                }
                3 => {
                    let id = match pick(2) {
                        0 => format!("{ns}$table_{}", pick(6)),
                        _ => format!("{ns}$bench_t{}_{}", pick(2), pick(next[0].max(1) + 2)),
                    };
                    let found = pick(2) == 0;
                    h.push(at(3 + pick(3) as u32, What::Probed { id, found }));
                }
                _ => {
                    let tables = pick(6) != 0;
                    let mut seen = Vec::new();
                    for w in 0..2u32 {
                        let mut set: BTreeSet<u64> = (made.iter())
                            .filter(|m| m.0 == w && m.1 == ns && m.3 == tables)
                            .map(|m| m.2)
                            .filter(|_| pick(8) != 0)
                            .collect();
                        if pick(5) == 0 {
                            set.insert(next[w as usize] + pick(3));
                        }
                        let mut runs: Vec<[u64; 2]> = Vec::new();
                        for n in set {
                            match runs.last_mut() {
                                Some(r) if r[1] == n => r[1] = n + 1,
                                _ => runs.push([n, n + 1]),
                            }
                        }
                        if !runs.is_empty() {
                            seen.push(Seen { writer: w, runs });
                        }
                    }
                    let gone = match pick(4) {
                        0 => None,
                        _ => {
                            let mut gone: Vec<String> = (removed.iter())
                                .filter(|id| id.starts_with(ns) && pick(6) != 0)
                                .cloned()
                                .collect();
                            if pick(6) == 0 {
                                gone.push(format!("{ns}$table_{}", pick(6)));
                            }
                            gone.sort();
                            gone.dedup();
                            Some(gone)
                        }
                    };
                    let what = What::Listed {
                        namespace: ns.to_string(),
                        tables,
                        seen,
                        gone,
                        pages: vec![],
                    };
                    h.push(at(3 + pick(3) as u32, what));
                }
            }
        }
        h
    }

    /// Holding each read against the commits that can change a finding gives exactly what
    /// holding it against every commit it observes gives: every count, lag and the first
    /// violation named.
    #[test]
    fn reads_held_against_what_changed_find_what_every_commit_finds() {
        let mut rng = Rng::new(7);
        let mut found = 0;
        for _ in 0..400 {
            let h = history(&mut rng);
            let margin = [0, 2_000][(rng.next_u64() % 2) as usize];
            let every = super::super::held(&h, (0, margin), &[], true);
            let changed = super::super::held(&h, (0, margin), &[], false);
            if changed != every {
                // The shortest failing prefix, then the fewest operations.
                let mut h = h.clone();
                let differ = |h: &[Op]| {
                    super::super::held(h, (0, margin), &[], true)
                        != super::super::held(h, (0, margin), &[], false)
                };
                while h.len() > 1 && differ(&h[..h.len() - 1]) {
                    h.pop();
                }
                let mut i = 0;
                while i < h.len() {
                    let mut g = h.clone();
                    g.remove(i);
                    if differ(&g) {
                        h = g;
                    } else {
                        i += 1;
                    }
                }
                let every = super::super::held(&h, (0, margin), &[], true);
                let changed = super::super::held(&h, (0, margin), &[], false);
                assert_eq!(changed, every, "margin {margin}: {h:#?}");
            }
            found += every.anomalies() + every.lag_pairs;
        }
        assert!(found > 0, "the histories have findings to hold equal");
    }

    #[test]
    fn runs_differ_where_one_set_has_an_index_the_other_has_not() {
        assert_eq!(xor(&[[0, 5]], &[[0, 5]]), Vec::<[u64; 2]>::new());
        assert_eq!(xor(&[[0, 5]], &[[0, 7]]), [[5, 7]]);
        assert_eq!(xor(&[[0, 3], [5, 8]], &[[0, 8]]), [[3, 5]]);
        assert_eq!(xor(&[], &[[2, 4], [6, 7]]), [[2, 4], [6, 7]]);
        assert_eq!(xor(&[[1, 4]], &[[2, 6]]), [[1, 2], [4, 6]]);
    }
}
