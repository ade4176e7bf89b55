//! What a worker runs next: the next operation of its pattern (a role's client draws it
//! from its mix, a mixed cell interleaves its reads) and the entry it names.

use super::Session;
use crate::catalog;
use crate::plan::Operation;

/// A client of a role: its role, what it names, and its seeded draws.
pub(super) struct RoleClient {
    pub(super) role: bench_core::plan::Role,
    pub(super) targets: catalog::RoleTargets,
    pub(super) rng: bench_core::rng::Rng,
    /// Removals that have nothing left to remove.
    pub(super) exhausted: std::collections::HashSet<Operation>,
}

/// Whether this worker runs a campaign's point (or its other client): its operations go
/// into the point's history, to be judged again offline.
fn in_campaign() -> bool {
    static IN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *IN.get_or_init(|| std::env::var_os(bench_core::plan::campaign::ENV).is_some())
}

/// What an operation names, as its report says: its entry and the property it sets.
pub(super) type Named = (Option<String>, Option<(String, String)>);

/// Why a write a role's client drew in its warm-up names nothing (the warm-up skips it).
const WARM_WRITE: &str = "a write drawn in the warm-up, which runs reads only";

/// Draws a role's client makes for an operation with something left to name before it
/// stops.
pub(super) const EXHAUSTED_DRAWS: u32 = 10_000;

/// The next operation of a worker's pattern: what it is, whether it is a read interleaved
/// by a mixed cell (or a role's read), its index among its kind, its place in a role's mix,
/// and what it names.
pub(super) struct Planned {
    pub(super) op: Operation,
    pub(super) read: bool,
    pub(super) i: u64,
    pub(super) mix: Option<u32>,
    /// Into the cell's history for the consistency checker (a role's client, a mixed cell,
    /// a campaign's point).
    pub(super) history: bool,
    /// What it names; or why it names nothing, and whether the worker stops for it (a role's
    /// client reports a used-up removal once and draws on).
    pub(super) aim: Result<catalog::Aim, (String, bool)>,
}

impl Planned {
    /// What the operation names, as its report says: the entry (a commit's, a look-up's, a
    /// listing's namespace, a property update's table: `""` for the root and the shared
    /// table) and the property it sets; nothing where it names nothing (the shared table's
    /// rows and history) or had nothing left to name.
    pub(super) fn named(&self) -> (Option<String>, Option<(String, String)>) {
        let Ok(aim) = &self.aim else {
            return (None, None);
        };
        match self.op.describe().names {
            bench_core::plan::Names::Root => (None, None),
            bench_core::plan::Names::Creates(..)
            | bench_core::plan::Names::ReadsGolden(_)
            | bench_core::plan::Names::RemovesGolden(_)
            | bench_core::plan::Names::Lists(_)
            | bench_core::plan::Names::Property => (Some(aim.id.clone()), aim.property.clone()),
        }
    }
}

impl Session {
    /// The k-th operation of this worker (`counts`: its operations so far by kind, commits
    /// and reads): a role's client draws one from its mix and its target from its
    /// distribution; in a mixed cell `reads_per_write` reads, then one commit, over and
    /// over; otherwise always the cell's operation.
    pub(super) fn plan(&self, k: u64, counts: &mut [u64; 2], warm: bool) -> Planned {
        if let Some(client) = &self.role {
            let mut c = client.lock().expect("role client");
            let c = &mut *c;
            // A removal with nothing left of its share fails once, saying so; from then on
            // the client draws its mix's other operations (none left: it stops).
            let (at, op, aim) = (0..EXHAUSTED_DRAWS)
                .map(|_| {
                    let (at, op) = c.role.draw(&mut c.rng);
                    // The warm-up runs reads only: a write drawn there names nothing, so it
                    // takes no removal of the client's share and no creation's index.
                    if warm && op.is_write() {
                        return (at, op, Err(WARM_WRITE.to_string()));
                    }
                    (at, op, c.targets.of(op, k, &mut c.rng))
                })
                .find(|(_, op, aim)| {
                    aim.is_ok()
                        || aim.as_ref().is_err_and(|e| e == WARM_WRITE)
                        || c.exhausted.insert(*op)
                })
                .map(|(at, op, aim)| {
                    let more = "its client draws its role's other operations from now on";
                    (at, op, aim.map_err(|e| (format!("{e}; {more}"), false)))
                })
                .unwrap_or_else(|| {
                    let why = "every operation of its role's mix has nothing left to name";
                    (0, c.role.mix[0].0, Err((why.to_string(), true)))
                });
            // A role's operations are all the cell's own (its record's headline figures);
            // `roles` has each apart.
            return Planned {
                op,
                read: false,
                i: k,
                mix: Some(at as u32),
                history: true,
                aim,
            };
        }
        let (op, read) = match self.args.mix() {
            Some((read, r)) if k % (r + 1) < r => (read, true),
            _ => (self.args.operation, false),
        };
        let i = counts[usize::from(read)];
        counts[usize::from(read)] += 1;
        let targets = catalog::Targets {
            worker: self.args.worker_id,
            writers: self.args.writers,
            golden: catalog::Golden {
                tables: self.args.tables,
                namespaces: self.args.namespaces,
                fixture: self.args.fixture,
            },
            warmup: self.args.warmup,
        };
        Planned {
            op,
            read,
            i,
            mix: None,
            history: self.args.mix().is_some() || in_campaign(),
            // Nothing left for a removal: the worker stops.
            aim: targets
                .of(op, i, warm, &self.args.names)
                .map_err(|e| (e, true)),
        }
    }

    /// Before an operation, untimed: a table to drop on local disk gets the directory
    /// lance's `drop_table` removes after its entry (a flat golden's tables are entries
    /// only, as declared tables are, and on local disk removing a missing directory fails;
    /// on an object store it is a listing that finds nothing).
    pub(super) fn prepare(&self, op: Operation, aim: &catalog::Aim) {
        if op != Operation::DropTable {
            return;
        }
        let root = self
            .args
            .root
            .strip_prefix("file://")
            .unwrap_or(&self.args.root);
        if !root.contains("://") {
            // A failure shows as the drop's own.
            let _ = std::fs::create_dir_all(std::path::Path::new(root).join(&aim.id));
        }
    }
}
