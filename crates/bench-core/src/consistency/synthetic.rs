//! Histories shaped like a run's, for the checkers' tests and their timing
//! (`examples/order_scale.rs`): writers creating tables (and a few namespaces) in two
//! namespaces, a remover dropping the golden's tables, readers listing (in pages or not) and
//! looking entries up, every operation taking a while and overlapping others. A catalog is
//! simulated under them: each commit lands at a moment within its operation (its
//! conditional PUT), the versions in the order they landed, and each read serves the latest
//! version at a moment within its own (each page of a listing at its own moment), showing
//! exactly that version's state. Then faults are planted at the rates asked: a read that
//! shows one entry wrongly, a read that says another version than it served, a range
//! through a server, two commits whose versions are swapped, a version made twice, and
//! versions not known.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{Op, Outcome, Seen, What};
use crate::rng::Rng;
use crate::versions::Page;

/// What a synthetic history is made of.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Operations in all (about).
    pub ops: usize,
    pub writers: u32,
    pub readers: u32,
    /// Mean time of a commit and of a read, and mean pause between a writer's operations and
    /// between a reader's, in µs (each drawn exponential).
    pub commit_us: f64,
    pub read_us: f64,
    pub pause_us: f64,
    pub read_pause_us: f64,
    /// Of the reads, the share that list (the rest look up), and a listing's page size
    /// (`None`: one request).
    pub listings: f64,
    pub page: Option<usize>,
    /// Per operation, the chance of a planted fault, and of a version not known.
    pub faults: f64,
    pub unknown: f64,
    /// Namespaces the writers create tables in (each with the golden's 12 tables): drawn
    /// among `namespaces` for every operation, or, with `window_us`, the one of the window of
    /// time the operation begins in (a new namespace every `window_us`, as one cell after
    /// another, each namespace a run's size however long the history).
    pub namespaces: u32,
    pub window_us: Option<u64>,
    /// Of the creations, the share that are namespaces (in the root), and of the listings
    /// the share that list the root's namespaces.
    pub root: f64,
}

impl Shape {
    /// A small history with every kind of operation and fault, for tests.
    pub fn small() -> Shape {
        Shape {
            ops: 120,
            writers: 3,
            readers: 3,
            commit_us: 3_000.0,
            read_us: 2_000.0,
            pause_us: 1_000.0,
            read_pause_us: 1_000.0,
            listings: 0.6,
            page: Some(3),
            faults: 0.04,
            unknown: 0.05,
            namespaces: 2,
            window_us: None,
            root: 0.12,
        }
    }
}

/// An entry of the simulated catalog: its id and, for a creation, its writer and index.
#[derive(Debug, Clone)]
struct Commit {
    client: u32,
    start_us: u64,
    end_us: u64,
    /// When it landed (its conditional PUT); `None`: it never did.
    at_us: Option<u64>,
    id: String,
    created: Option<(u32, u64)>,
    table: bool,
    outcome: Outcome,
}

const GOLDEN_TABLES: u64 = 12;

/// The namespace an operation begun at `start_us` works in.
fn namespace(rng: &mut Rng, shape: &Shape, start_us: u64) -> String {
    match shape.window_us {
        Some(w) => format!("ns_{}", start_us / w.max(1)),
        None => format!("ns_{}", pick(rng, u64::from(shape.namespaces))),
    }
}

fn exp(rng: &mut Rng, mean: f64) -> u64 {
    (-rng.uniform().ln() * mean) as u64 + 1
}

fn pick(rng: &mut Rng, n: u64) -> u64 {
    rng.next_u64() % n.max(1)
}

/// The simulated catalog: what each version holds.
struct State<'c> {
    commits: &'c [Commit],
    /// When each version landed (version `k + 1` at `landing[k]`).
    landing: Vec<u64>,
    /// Each entry's changes: (version, created), in version order.
    changes: HashMap<&'c str, Vec<(u64, bool)>>,
    /// (namespace, tables) → the ids ever there (the golden's tables, and creations).
    scope: HashMap<(String, bool), Vec<String>>,
}

impl<'c> State<'c> {
    fn new(commits: &'c [Commit], version: &[Option<u64>]) -> State<'c> {
        let mut landing: Vec<(u64, u64)> = (commits.iter().zip(version))
            .filter_map(|(c, v)| Some(((*v)?, c.at_us?)))
            .collect();
        landing.sort_unstable();
        let mut changes: HashMap<&str, Vec<(u64, bool)>> = HashMap::new();
        let mut scope: HashMap<(String, bool), Vec<String>> = HashMap::new();
        for (c, v) in commits.iter().zip(version) {
            if let Some(v) = v {
                changes
                    .entry(&c.id)
                    .or_default()
                    .push((*v, c.created.is_some()));
            }
            if c.created.is_some() {
                let key = (super::parent(&c.id).to_string(), c.table);
                scope.entry(key).or_default().push(c.id.clone());
            }
        }
        for list in changes.values_mut() {
            list.sort_unstable();
        }
        // Each scope's ids in the order a listing pages them (by name), the golden's tables
        // among a namespace's.
        for ((ns, tables), ids) in scope.iter_mut() {
            if *tables {
                ids.extend((0..GOLDEN_TABLES).map(|k| format!("{ns}$table_{k}")));
            }
            ids.sort_by(|a, b| name(a).cmp(name(b)));
            ids.dedup();
        }
        State {
            commits,
            landing: landing.into_iter().map(|(_, at)| at).collect(),
            changes,
            scope,
        }
    }

    /// The latest version landed at or before `t_us`.
    fn at(&self, t_us: u64) -> u64 {
        self.landing.partition_point(|&a| a <= t_us) as u64
    }

    /// Whether version `v` holds entry `id`: created at or before `v` (or one of the
    /// golden's tables), and not removed at or before it.
    fn holds(&self, id: &str, v: u64) -> bool {
        let golden = id.contains("$table_");
        let Some(list) = self.changes.get(id) else {
            return golden;
        };
        let k = list.partition_point(|&(cv, _)| cv <= v);
        match k {
            0 => golden,
            _ => list[k - 1].1,
        }
    }

    /// The next page of `namespace`'s tables (the golden's among them) or of its child
    /// namespaces at version `v`: up to `page` ids there, by name, after `through`.
    fn page(&self, scope: (&str, bool), v: u64, through: Option<&str>, page: usize) -> Vec<String> {
        let (namespace, tables) = scope;
        let golden: Vec<String> = match self.scope.get(&(namespace.to_string(), tables)) {
            Some(_) => Vec::new(),
            None => (0..GOLDEN_TABLES)
                .filter(|_| tables)
                .map(|k| format!("{namespace}$table_{k}"))
                .collect(),
        };
        let ids = self
            .scope
            .get(&(namespace.to_string(), tables))
            .unwrap_or(&golden);
        let from = through.map_or(0, |t| ids.partition_point(|id| name(id) <= name(t)));
        (ids[from..].iter())
            .filter(|id| self.holds(id, v))
            .take(page)
            .cloned()
            .collect()
    }
}

/// A listing's `seen`: each writer's creations among `ids`, as runs of their indices.
fn seen(ids: &BTreeSet<String>) -> Vec<Seen> {
    let mut by: BTreeMap<u32, BTreeSet<u64>> = BTreeMap::new();
    for id in ids {
        if let Some((w, n, _)) = crate::oplog::created_index(name(id)) {
            by.entry(w).or_default().insert(n);
        }
    }
    (by.into_iter())
        .map(|(writer, set)| {
            let mut runs: Vec<[u64; 2]> = Vec::new();
            for n in set {
                match runs.last_mut() {
                    Some(r) if r[1] == n => r[1] = n + 1,
                    _ => runs.push([n, n + 1]),
                }
            }
            Seen { writer, runs }
        })
        .collect()
}

/// The commits: each writer's creations and the remover's removals, their times, outcomes
/// and the moments they landed.
fn commits(rng: &mut Rng, shape: &Shape, per_client: usize) -> Vec<Commit> {
    let mut out = Vec::new();
    let mut removed: BTreeSet<String> = BTreeSet::new();
    // Writers 0..writers create; the last client of them removes.
    for client in 0..=shape.writers {
        let mut t = exp(rng, shape.pause_us * 4.0);
        let mut next = 0u64;
        for _ in 0..per_client {
            t += exp(rng, shape.pause_us);
            let (start_us, end_us) = (t, t + exp(rng, shape.commit_us));
            t = end_us;
            let ns = namespace(rng, shape, start_us);
            let (id, created, table) = if client < shape.writers {
                let table = rng.uniform() >= shape.root;
                let n = next;
                next += 1;
                match table {
                    true => (format!("{ns}$bench_d{client}_{n}"), Some((client, n)), true),
                    false => (format!("bench_w{client}_{n}"), Some((client, n)), false),
                }
            } else {
                let id = format!("{ns}$table_{}", pick(rng, GOLDEN_TABLES));
                if !removed.insert(id.clone()) {
                    continue;
                }
                (id, None, true)
            };
            let outcome = match pick(rng, 20) {
                0 => Outcome::Indeterminate { landed: Some(true) },
                1 => Outcome::Indeterminate {
                    landed: Some(false),
                },
                _ => Outcome::Acknowledged,
            };
            let lands = outcome
                != (Outcome::Indeterminate {
                    landed: Some(false),
                });
            let at_us = lands.then(|| start_us + pick(rng, end_us - start_us));
            out.push(Commit {
                client,
                start_us,
                end_us,
                at_us,
                id,
                created,
                table,
                outcome,
            });
        }
    }
    out
}

/// A history of about `shape.ops` operations drawn from `rng`.
pub fn history(rng: &mut Rng, shape: &Shape) -> Vec<Op> {
    let clients = shape.writers + 1 + shape.readers;
    let per_client = (shape.ops / clients as usize).max(1);
    let commits = commits(rng, shape, per_client);
    // Versions in the order the commits landed.
    let mut landed: Vec<usize> = (0..commits.len())
        .filter(|&i| commits[i].at_us.is_some())
        .collect();
    landed.sort_by_key(|&i| commits[i].at_us);
    let mut version = vec![None; commits.len()];
    for (k, &i) in landed.iter().enumerate() {
        version[i] = Some(k as u64 + 1);
    }
    let state = State::new(&commits, &version);
    let mut h: Vec<Op> = Vec::new();
    for (c, v) in commits.iter().zip(&version) {
        let what = match c.created {
            Some((_, n)) => What::Created {
                id: c.id.clone(),
                n,
                table: c.table,
                outcome: c.outcome,
            },
            None => What::Removed {
                id: c.id.clone(),
                table: c.table,
                outcome: c.outcome,
            },
        };
        let v = v.filter(|_| rng.uniform() >= shape.unknown);
        h.push(Op {
            client: c.client,
            start_us: c.start_us,
            end_us: c.end_us,
            what,
            version: v,
            version_to: None,
        });
    }
    plant_in_commits(rng, shape, &mut h);
    for reader in 0..shape.readers {
        let client = shape.writers + 1 + reader;
        let mut t = exp(rng, shape.read_pause_us * 4.0 + 1.0);
        for _ in 0..per_client {
            t += exp(rng, shape.read_pause_us);
            let (start_us, end_us) = (t, t + exp(rng, shape.read_us));
            t = end_us;
            let op = read(rng, shape, &state, (client, start_us, end_us));
            h.push(op);
        }
    }
    h
}

/// Two commits' versions swapped, or one commit given another's version.
fn plant_in_commits(rng: &mut Rng, shape: &Shape, h: &mut [Op]) {
    let n = h.len() as u64;
    for _ in 0..(n as f64 * shape.faults).round() as u64 {
        let (a, b) = (pick(rng, n) as usize, pick(rng, n) as usize);
        match pick(rng, 2) {
            0 => {
                let (va, vb) = (h[a].version, h[b].version);
                (h[a].version, h[b].version) = (vb, va);
            }
            _ => h[a].version = h[b].version,
        }
    }
}

/// One read by `client` over `[start_us, end_us]`: a listing (in pages where the shape has
/// them, each page at its own moment) or a look-up, as the catalog served it, with the
/// faults the shape plants.
fn read(
    rng: &mut Rng,
    shape: &Shape,
    state: &State,
    (client, start_us, end_us): (u32, u64, u64),
) -> Op {
    let ns = namespace(rng, shape, start_us);
    let mut moments: Vec<u64> = (0..4)
        .map(|_| start_us + pick(rng, end_us - start_us))
        .collect();
    moments.sort_unstable();
    let (what, version, version_to) = match rng.uniform() < shape.listings {
        true => listing(rng, shape, state, &ns, &moments),
        false => look_up(rng, shape, state, &ns, moments[0]),
    };
    Op {
        client,
        start_us,
        end_us,
        what,
        version,
        version_to,
    }
}

/// What a read was, and the version it served (or from, to).
type Served = (What, Option<u64>, Option<u64>);

/// A look-up at `moment` of an entry of the catalog, of the golden's, or of one never made.
fn look_up(rng: &mut Rng, shape: &Shape, state: &State, ns: &str, moment: u64) -> Served {
    let id = match pick(rng, 3) {
        0 => format!("{ns}$table_{}", pick(rng, GOLDEN_TABLES)),
        _ => state.commits[pick(rng, state.commits.len() as u64) as usize]
            .id
            .clone(),
    };
    let v = state.at(moment);
    let found = state.holds(&id, v) != (rng.uniform() < shape.faults);
    let version = (rng.uniform() >= shape.unknown).then_some(v);
    (What::Probed { id, found }, version, None)
}

/// A listing of `ns`'s tables (or of the root's namespaces), page after page, each page
/// served at the next of `moments`; with its faults: an entry shown wrongly, a page's version
/// said wrongly, a range through a server.
fn listing(rng: &mut Rng, shape: &Shape, state: &State, ns: &str, moments: &[u64]) -> Served {
    let tables = rng.uniform() >= shape.root;
    let namespace = if tables { ns } else { "" };
    let (mut ids, mut pages) = (BTreeSet::new(), Vec::new());
    let mut through: Option<String> = None;
    for k in 0.. {
        let v = state.at(moments[k.min(moments.len() - 1)]);
        // One more than a page: whether another page follows.
        let size = shape.page.unwrap_or(usize::MAX - 1);
        let mut after = state.page((namespace, tables), v, through.as_deref(), size + 1);
        let last = after.len() <= size;
        after.truncate(size);
        ids.extend(after.iter().cloned());
        through = after.last().cloned().or(through);
        pages.push(Page::served_at(
            (!last).then(|| name(through.as_deref().unwrap_or_default()).to_string()),
            (rng.uniform() >= shape.unknown).then_some(v),
        ));
        if last || shape.page.is_none() {
            break;
        }
    }
    if rng.uniform() < shape.faults {
        let c = &state.commits[pick(rng, state.commits.len() as u64) as usize];
        if !ids.remove(&c.id) {
            ids.insert(c.id.clone());
        }
    }
    for at in pages.iter_mut().filter_map(|p| p.at.as_mut()) {
        if let Some(v) = at.served.as_mut() {
            if rng.uniform() < shape.faults {
                *v = v.saturating_sub(1 + pick(rng, 3));
            }
            if rng.uniform() < shape.faults {
                at.served_to = Some(*v + 1 + pick(rng, 2));
            }
        }
    }
    let gone = tables.then(|| {
        (0..GOLDEN_TABLES)
            .map(|k| format!("{ns}$table_{k}"))
            .filter(|id| !ids.contains(id))
            .collect::<Vec<_>>()
    });
    // As the log gives a listing's version: from the least of its pages' known versions to
    // the greatest; one request's is its only page's.
    let version = pages.iter().filter_map(|p| p.served()).map(|s| s.0).min();
    let highest = pages.iter().filter_map(|p| p.served()).map(|s| s.1).max();
    let version_to = highest.filter(|&hi| Some(hi) != version && pages.len() > 1);
    let what = What::Listed {
        namespace: namespace.to_string(),
        tables,
        seen: seen(&ids),
        gone: gone.filter(|_| pick(rng, 4) != 0),
        pages: if pages.len() > 1 { pages } else { Vec::new() },
    };
    (what, version, version_to)
}

/// An entry's name within its parent (what pages are ordered by).
fn name(id: &str) -> &str {
    id.rsplit('$').next().unwrap_or(id)
}
