//! What a cell's workers are told: each one's arguments, from the cell (its operation, its
//! mode, its golden), the copy they work on and the servers they reach it through; in a
//! cell of roles, each client's role, its share of the removals and its own seed.

use crate::plan::{Cell, Entry};
use crate::protocol::WorkerArgs;

/// The arguments of the cell's workers in its repetition `repetition` (from 1), running on
/// the copy at `root` (through the REST servers at `rest`, where the cell has them).
pub fn worker_args(
    cell: &Cell,
    repetition: u32,
    root: &str,
    trace: u32,
    rest: Vec<String>,
    names: &str,
) -> Vec<WorkerArgs> {
    let mix = cell.mode.mixed_reads();
    // A deadline where the cell has one (a bounded concurrent cell may not).
    let duration_secs = (cell.mode.operations().is_none() && cell.mode.duration_secs() > 0)
        .then(|| cell.mode.duration_secs());
    (0..cell.mode.workers())
        .map(|worker_id| WorkerArgs {
            root: root.to_string(),
            operation: cell.operation,
            inline: cell.golden.inline,
            commit_retries: cell.commit_retries,
            worker_id,
            rank_from_env: false,
            paced: false,
            until_end: cell.mode.bound().is_some(),
            warmup: cell.warmup,
            tables: cell.golden.entries(Entry::Table),
            namespaces: cell.golden.entries(Entry::Namespace),
            operations: cell.mode.operations(),
            duration_secs,
            reads_per_write: mix.map(|(_, r)| r),
            read_operation: mix.map(|(op, _)| op),
            trace,
            s3_shaped: cell.s3_shaped,
            attempt_timeout_ms: cell.attempt_timeout_ms,
            rows_per_commit: cell.rows_per_commit,
            page_size: cell.page_size,
            rest: rest.clone(),
            names: names.to_string(),
            scope: String::new(),
            // A mixed cell's load counts its commits; its workers schedule every operation,
            // each commit's reads before it.
            rate: (cell.mode.load()).map(|l| l.rate() * (1 + mix.map_or(0, |(_, r)| r)) as f64),
            writers: cell.mode.workers(),
            poisson: cell
                .mode
                .load()
                .is_some_and(|l| l.arrivals == crate::plan::Arrivals::Poisson),
            fixture: cell.golden.fixture,
            role: None,
            retention: cell.retention,
        })
        .map(|args| with_role(cell, repetition, args))
        .collect()
}

/// A client of a cell of roles: its role (clients numbered role after role), whose rate it
/// shares with the role's other clients, and its own seed.
fn with_role(cell: &Cell, repetition: u32, mut args: WorkerArgs) -> WorkerArgs {
    let removes = |r: &crate::plan::Role| r.mix.iter().any(|(op, _)| op.removes());
    let removers: u32 = (cell.roles.iter().filter(|r| removes(r)))
        .map(|r| r.clients)
        .sum();
    let (mut first, mut first_remover) = (0, 0);
    for (index, role) in cell.roles.iter().enumerate() {
        if args.worker_id < first + role.clients {
            args.operation = role.mix[0].0;
            args.rate = role.rate;
            args.writers = role.clients;
            args.role = Some(crate::protocol::RoleArgs {
                index: index as u32,
                role: role.clone(),
                remover: first_remover + (args.worker_id - first),
                removers,
                seed: crate::plan::client_seed(
                    cell.seed,
                    if cell.seed_per_repetition {
                        repetition
                    } else {
                        0
                    },
                    index,
                    args.worker_id,
                ),
            });
            return args;
        }
        first += role.clients;
        if removes(role) {
            first_remover += role.clients;
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Distribution, Mode, Operation, Role};

    fn role(name: &str, clients: u32, mix: &[Operation]) -> Role {
        Role {
            name: name.into(),
            clients,
            rate: Some(f64::from(clients) * 2.0),
            mix: mix.iter().map(|&op| (op, 1)).collect(),
            targets: Distribution::Uniform,
            retention: None,
        }
    }

    /// Clients are numbered role after role; those of roles that remove entries share the
    /// golden's among them, in that order; each has a seed of its own.
    #[test]
    fn clients_take_their_role_its_rate_and_their_share_of_the_removals() {
        let cell = Cell {
            mode: Mode::Roles {
                clients: 5,
                duration_secs: 2,
            },
            roles: vec![
                role("droppers", 2, &[Operation::DropTable]),
                role("readers", 1, &[Operation::ListTables { cold: false }]),
                role(
                    "mixed",
                    2,
                    &[Operation::DeclareTable, Operation::DeregisterTable],
                ),
            ],
            ..crate::plan::sample(1)
        };
        let args = worker_args(&cell, 1, "/copy", 0, vec![], "");
        let got: Vec<_> = (args.iter())
            .map(|a| {
                let r = a.role.as_ref().unwrap();
                (
                    a.worker_id,
                    r.index,
                    a.operation,
                    r.remover,
                    r.removers,
                    a.writers,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (0, 0, Operation::DropTable, 0, 4, 2),
                (1, 0, Operation::DropTable, 1, 4, 2),
                (2, 1, Operation::ListTables { cold: false }, 2, 4, 1),
                (3, 2, Operation::DeclareTable, 2, 4, 2),
                (4, 2, Operation::DeclareTable, 3, 4, 2),
            ]
        );
        assert_eq!(
            args[3].rate,
            Some(4.0),
            "the role's rate, shared by its clients"
        );
        let seeds = |args: &[WorkerArgs]| -> Vec<u64> {
            args.iter().map(|a| a.role.as_ref().unwrap().seed).collect()
        };
        let set: std::collections::BTreeSet<_> = seeds(&args).into_iter().collect();
        assert_eq!(set.len(), 5);
        assert!(
            args.iter()
                .all(|a| a.duration_secs == Some(2) && a.root == "/copy")
        );
        // Every repetition replays the same draws; with `seed_per_repetition` each draws
        // its own, the same again when the repetition runs again.
        let again = worker_args(&cell, 2, "/copy", 0, vec![], "");
        assert_eq!(seeds(&again), seeds(&args));
        let varied = Cell {
            seed_per_repetition: true,
            ..cell.clone()
        };
        let (one, two) = (
            seeds(&worker_args(&varied, 1, "/copy", 0, vec![], "")),
            seeds(&worker_args(&varied, 2, "/copy", 0, vec![], "")),
        );
        assert!(one.iter().zip(&two).all(|(a, b)| a != b), "{one:?} {two:?}");
        assert_eq!(seeds(&worker_args(&varied, 2, "/copy", 0, vec![], "")), two);
        assert_ne!(varied.key(), cell.key(), "another measurement: another key");
    }

    /// A mixed cell's workers interleave its reads, and an open-loop one schedules every
    /// operation (its reads with its commits); a cell bounded by its commits runs until the
    /// coordinator ends it.
    #[test]
    fn a_cell_s_mode_says_what_each_worker_runs_and_until_when() {
        let mixed = Cell {
            mode: Mode::Mixed {
                clients: 2,
                reads_per_write: 3,
                read: Operation::DescribeTable { cold: false },
                duration_secs: 4,
                load: Some(crate::plan::Load {
                    milli_per_sec: 5_000,
                    arrivals: crate::plan::Arrivals::Poisson,
                }),
            },
            ..crate::plan::sample(1)
        };
        let args = worker_args(&mixed, 1, "/c", 2, vec!["http://s:1".into()], "_r1");
        assert_eq!(args.len(), 2);
        let a = &args[1];
        assert_eq!(a.mix(), Some((Operation::DescribeTable { cold: false }, 3)));
        assert_eq!((a.rate, a.poisson, a.writers), (Some(20.0), true, 2));
        assert_eq!(
            (a.duration_secs, a.operations, a.until_end),
            (Some(4), None, false)
        );
        assert_eq!((a.trace, a.names.as_str(), a.rest.len()), (2, "_r1", 1));
        let bounded = Cell {
            mode: Mode::Concurrent {
                concurrency: 3,
                duration_secs: 0,
                operations: Some(50),
                load: None,
            },
            ..crate::plan::sample(1)
        };
        let args = worker_args(&bounded, 1, "/c", 0, vec![], "");
        assert!(
            args.iter()
                .all(|a| a.until_end && a.duration_secs.is_none())
        );
        let cont = worker_args(&crate::plan::sample(7), 1, "/c", 0, vec![], "");
        assert_eq!(cont.len(), 1);
        assert_eq!((cont[0].operations, cont[0].tables), (Some(7), 67));
    }
}

/// A worker's peak resident memory where no record of the plan says it: the least a
/// worker of lance 14.0.2 took in bench's own runs (83 MB, a continuous worker on a catalog
/// of 10 rows; its record's `worker_rss_peak_kib`). Larger catalogs take more.
pub const WORKER_KIB_AT_LEAST: u64 = 80_000;

/// A warning where a cell's workers at once would not fit in this machine's memory:
/// `most` workers of `cell`, at `per_worker_kib` each (measured by the plan's records, or
/// `None`: [`WORKER_KIB_AT_LEAST`]), against `machine_kib` (0: unknown, no warning).
pub fn memory_note(
    cell: &str,
    most: u32,
    per_worker_kib: Option<u64>,
    machine_kib: u64,
) -> Option<String> {
    let (per, how) = match per_worker_kib {
        Some(k) => (k, "the largest its records measured"),
        None => (WORKER_KIB_AT_LEAST, "the least a worker takes"),
    };
    let need = per * u64::from(most);
    if machine_kib == 0 || need * 10 <= machine_kib * 8 {
        return None;
    }
    let gb = |kib: u64| kib as f64 / (1024.0 * 1024.0);
    Some(format!(
        "{cell} runs {most} workers at once: at {:.0} MB each ({how}) about {:.1} GB, more than \
         this machine's {:.1} GB can hold (80 %): they would swap or be killed. Lower its \
         writers, or run it where memory allows; the time estimate is the matrix's, not the \
         machine's",
        per as f64 / 1024.0,
        gb(need),
        gb(machine_kib)
    ))
}

#[cfg(test)]
mod memory_tests {
    use super::*;

    #[test]
    fn workers_that_would_not_fit_in_memory_are_warned_of() {
        let gib = 1024 * 1024;
        // 10,000 workers at 80 MB: about 760 GB on a 24 GB machine.
        let n = memory_note("conc_c_10000", 10_000, None, 24 * gib).unwrap();
        assert!(n.contains("10000 workers at once"), "{n}");
        assert!(n.contains("about 762.9 GB") && n.contains("24.0 GB"), "{n}");
        // 8 workers fit; the machine's memory unknown: nothing said.
        assert_eq!(memory_note("c", 8, None, 24 * gib), None);
        assert_eq!(memory_note("c", 10_000, None, 0), None);
        // Measured per worker: its own figure.
        let n = memory_note("c", 100, Some(300 * 1024), 24 * gib).unwrap();
        assert!(
            n.contains("300 MB each (the largest its records measured)"),
            "{n}"
        );
    }
}
