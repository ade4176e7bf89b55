//! One run (repetition) of one cell: a fresh copy of its golden, its workers run
//! ([`super::workers`]), the copy verified against the run's operation log, and the record
//! assembled.

use tokio::sync::watch;

use super::Sweep;
use super::pairing::RunPairing;
use super::workers::{Job, Ran, watch_workers};
use crate::arm::{ARM_A, Arm};
use crate::clock::{now_utc_ms, unix_ms};
use crate::error::BenchError;
use crate::export::Record;
use crate::export::assemble::{self, Provenance, Verification};
use crate::export::record;
use crate::golden::Golden;
use crate::measured::Measured;
use crate::plan::{Catalog, Cell};
use crate::progress::Progress;
use crate::verify;

pub(super) enum CellResult {
    /// One record per arm that ran, in arm order.
    Recorded(Vec<Record>),
    Failed(String),
    Interrupted,
}

/// Write run `repetition` of cell `id` (by `arm`, when paired) as a trace file under
/// `<out>/traces/`; its path relative to `<out>`, or `None` (said) when it cannot be written.
fn write_trace(
    sweep: &Sweep,
    id: &str,
    repetition: u32,
    arm: Option<&str>,
    m: &Measured,
    progress: &Progress,
) -> Option<String> {
    let name = super::workers::run_name(id, repetition, arm);
    let rel = format!("{}/{name}.json", crate::trace::TRACE_DIR);
    // Each traced operation's outcome as the log holds it (resolved by verification).
    let mut traces = m.traces.clone();
    for (w, ops) in &mut traces {
        for op in ops {
            op.outcome = (m.log.iter())
                .find(|o| {
                    o.client == *w
                        && !o.attempt.warm
                        && o.attempt.i == op.i
                        && o.operation.as_str() == op.name
                })
                .map(crate::oplog::Op::said);
        }
    }
    let trace = crate::trace::chrome_trace(&name, &traces);
    let path = sweep.out.join(&rel);
    let written = std::fs::create_dir_all(sweep.out.join(crate::trace::TRACE_DIR))
        .and_then(|_| crate::files::write_atomic(&path, trace.to_string().as_bytes()));
    match written {
        Ok(()) => Some(rel),
        Err(e) => {
            progress.log(format!(
                "warning: {id}: its trace {} was not written ({e}); its results are kept",
                path.display()
            ));
            None
        }
    }
}

/// Whether a run kept a history: some measured operation of its log kept its times (cells
/// of roles, mixed cells), not only one its worker was killed in.
fn keeps_history(m: &Measured) -> bool {
    let killed = Some(bench_core::oplog::ErrorClass::Killed);
    (m.log.iter())
        .any(|o| !o.attempt.warm && o.attempt.at_us.is_some() && o.attempt.class != killed)
}

/// Write run `repetition` of cell `id` (by `arm`, when paired) as its history under
/// `<out>/histories/`: `history.jsonl` and, where verification read the copy's chain of
/// versions, `versions.jsonl`; the folder relative to `<out>`, or `None` (said) when it
/// cannot be written.
fn write_history(
    sweep: &Sweep,
    (id, repetition, arm, chain_versions): (&str, u32, Option<&str>, Option<u64>),
    m: &Measured,
    versions: Option<&bench_core::versions::Chain>,
    progress: &Progress,
) -> Option<String> {
    use bench_core::history;
    let rel = super::workers::history_rel(id, repetition, arm);
    let run = history::Run {
        cell: id,
        repetition,
        arm,
        hosts: m.hosts.iter().cloned().collect(),
        clocks: &m.clocks,
        paused_us: &m.paused_us,
        chain_versions,
        nemesis: &m.nemesis,
    };
    let dir = sweep.out.join(&rel);
    // Written line by line over what the run wrote as it went, off the runtime's worker.
    let written = tokio::task::block_in_place(|| {
        std::fs::create_dir_all(&dir)
            .and_then(|_| {
                let lines = history::lines(&m.log, &run);
                crate::files::write_atomic_lines(&dir.join(history::HISTORY_FILE), lines)
            })
            .and_then(|_| match versions.map(history::versions) {
                Some(c) => {
                    crate::files::write_atomic(&dir.join(history::VERSIONS_FILE), c.as_bytes())
                }
                // A run again of the same repetition leaves no chain of an earlier one.
                None => match std::fs::remove_file(dir.join(history::VERSIONS_FILE)) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                },
            })
    });
    match written {
        Ok(()) => Some(rel),
        Err(e) => {
            progress.log(format!(
                "warning: {id}: its history {} was not written ({e}); its results are kept",
                dir.display()
            ));
            None
        }
    }
}

/// Verify the copy at `root` against the run's operation log, one rule for every kind of
/// cell ([`verify::cell`]): each write that did not succeed looked up and marked landed or
/// not in `m.log`, then the copy held against what the cell started from (the golden, or
/// the catalog bench did not make as the run began) plus every write that took effect.
async fn verification(
    cell: &Cell,
    root: &str,
    golden: &Golden,
    golden_root: &str,
    m: &mut Measured,
) -> (Verification, Option<bench_core::versions::Chain>) {
    let rows_before = golden.marker.manifest_rows;
    let empty = cell.golden.is_empty();
    let before = match &golden.before {
        Some(ids) => ids.clone(),
        // A catalog that did not exist: no entry before the cell.
        None if empty => std::sync::Arc::new(bench_core::audit::Ids::default()),
        None => match verify::ids(golden_root, &cell.storage).await {
            Ok(ids) => std::sync::Arc::new(ids),
            Err(e) => {
                let v = Verification {
                    rows_before,
                    rows_after: 0,
                    error: Some(format!("cannot read the golden's __manifest: {e}")),
                    table: None,
                    state_bytes: None,
                    chain: None,
                    unchecked: None,
                    consistency: None,
                };
                return (v, None);
            }
        },
    };
    // A property update writes no rows.
    let writes_rows = cell.operation.describe().effect != crate::plan::Effect::TableProperty;
    let table = match (cell.rows_per_commit, &golden.marker.table) {
        (Some(n), Some(t)) => Some(verify::TableBefore {
            rows: t.rows,
            version: t.version,
            rows_per_commit: if writes_rows { n } else { 0 },
        }),
        _ => None,
    };
    // The version the copy began at, where the copy is bench's own: its chain after it is
    // held against the cell's commits.
    let first = match (&golden.before, empty) {
        (Some(_), _) => None,
        (None, true) => Some(0),
        (None, false) => verify::latest(golden_root, &cell.storage).await,
    };
    let v = match (&golden.scope, &cell.rest_uri) {
        (Some(scope), Some(uri)) => verify::listed(uri, scope, &before, &mut m.log).await,
        _ => verify::cell(root, &cell.storage, &before, &mut m.log, table, first).await,
    };
    let mut error = v.error;
    match (&mut error, &cell.rest_uri, &golden.scope) {
        (Some(e), Some(uri), Some(scope)) => e.push_str(&format!(
            " (as the server at {uri} lists {scope}, the run's own namespace: is anyone else \
             changing it?)"
        )),
        (Some(e), Some(uri), None) => e.push_str(&format!(
            " (is `root`, {root}, the catalog the server at {uri} serves, and no one else \
             committing to it?)"
        )),
        _ => {}
    }
    // The catalog's state before and after, for the floor's bytes (a catalog operation on a
    // copy; best effort: a floor without bytes where it cannot be read).
    let catalog = !cell.operation.on_table() && cell.roles.is_empty() && cell.rest_uri.is_none();
    let state_bytes = match catalog {
        true => {
            let (a, b) = futures::join!(
                verify::state_bytes(golden_root, &cell.storage),
                verify::state_bytes(root, &cell.storage)
            );
            let a = if empty { Ok(0) } else { a };
            a.ok().zip(b.ok()).map(|(a, b)| [a, b])
        }
        false => None,
    };
    let verified = Verification {
        rows_before: before.rows(),
        rows_after: v.rows_after,
        error,
        table: v.table,
        state_bytes,
        chain: v.chain,
        unchecked: v.unchecked,
        consistency: None,
    };
    (verified, v.versions)
}

/// Isolate, run and verify one repetition of a cell (checkpointed as running) by one arm's
/// workers, or by both arms' together (`pair`: each arm on its own copy); the copies are
/// removed afterwards
/// unless `keep_runs`. A failed removal is a warning: the measurement is kept, and what is
/// left is removed by the sweep's cleanup or by the next run of the cell.
pub(super) async fn run_one(
    sweep: &Sweep,
    job: Job<'_>,
    pair: Option<RunPairing>,
    progress: &Progress,
    interrupt: &mut watch::Receiver<bool>,
) -> Result<CellResult, BenchError> {
    let Job {
        cell, repetition, ..
    } = job;
    let id = cell.id();
    builds_unchanged(&job)?;
    let began = std::time::Instant::now();
    let run_rel = format!("runs/{id}");
    // Opened anew for every run, as the workers are: credentials that changed since the
    // sweep started (rotated keys in a profile) are picked up here too.
    let store = &sweep.store.reopen().await?;
    let pace = pair
        .filter(|_| job.arms.len() == 2)
        .map(|p| p.pace(cell, repetition));
    // Paired, each arm has its own copy under the cell's prefix.
    let rels: Vec<String> = if pace.is_some() {
        (job.arms.iter())
            .map(|a| format!("{run_rel}/{}", a.name.unwrap_or(ARM_A)))
            .collect()
    } else {
        vec![run_rel.clone()]
    };
    // A server bench did not start: its catalog itself, where each run marks the names of
    // what it commits as its own.
    let catalog = cell.transport.catalog();
    let copied = match catalog {
        Catalog::Theirs => Ok(Vec::new()),
        Catalog::Copies => {
            let first = pace.as_ref().map_or(0, |(_, first)| *first);
            copy_golden(sweep, store, job.golden, &rels, first).await
        }
    };
    let mut result = match copied {
        Err(reason) => {
            let _ = store.remove_prefix(&run_rel).await;
            return Ok(CellResult::Failed(reason));
        }
        Ok(copies) => {
            let (roots, names) = match catalog {
                // A namespace of the run's own needs no mark.
                Catalog::Theirs if job.golden.scope.is_some() => {
                    (vec![store.root_uri()], String::new())
                }
                Catalog::Theirs => (vec![store.root_uri()], format!("_r{:x}", unix_ms())),
                Catalog::Copies => (rels.iter().map(|r| store.uri(r)).collect(), String::new()),
            };
            let started_at = now_utc_ms();
            let first = pace.as_ref().map(|(_, first)| *first);
            let before = Beside::now(sweep);
            let ran = watch_workers(sweep, &job, &roots, &names, pace, progress, interrupt).await;
            let (others, host) = before.end();
            let run = Run {
                sweep,
                job: &job,
                roots: &roots,
                copies: &copies,
                started_at,
                scheme: store.scheme(),
                pilot: pair.and_then(|p| p.pilot),
                first,
                others,
                host,
                names: &names,
            };
            run.result(ran, progress, interrupt).await
        }
    };
    if !sweep.plan.run.keep_runs
        && catalog == Catalog::Copies
        && let Err(e) = store.remove_prefix(&run_rel).await
    {
        progress.log(format!(
            "warning: {id}: its copy {run_rel} was not removed ({e}); its results are kept, \
             and the sweep's cleanup (run.cleanup) or its next run removes it"
        ));
    }
    if let CellResult::Recorded(records) = &mut result {
        // The run's whole time, copies, verification and removal included: what a budget
        // counts.
        let ms = (began.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0;
        for r in records {
            r.attached.wall_ms = Some(ms);
        }
    }
    Ok(result)
}

/// Copy the golden to each of `rels` (one per arm that runs on a copy of its own), the copy
/// of arm `first` first (the arm that goes first in the run: whatever being the latest copy
/// gives, each arm has it in turn): how each copy went, or why one failed.
async fn copy_golden(
    sweep: &Sweep,
    store: &crate::store::Store,
    golden: &Golden,
    rels: &[String],
    first: usize,
) -> Result<Vec<record::CopyTime>, String> {
    let mut copies = vec![record::CopyTime::default(); rels.len()];
    for k in (0..rels.len()).map(|k| (k + first) % rels.len()) {
        let rel = &rels[k];
        let began = std::time::Instant::now();
        let copied = match golden.is_empty() {
            // Nothing to copy: the copy is a root where nothing is yet.
            true => store.remove_prefix(rel).await.map(|()| 0),
            false => store.copy_prefix(&golden.rel, rel).await,
        };
        let objects = copied.map_err(|e| {
            format!(
                "cannot copy golden {} to {rel}: {e}; make room or fix the store, then re-run \
                 with --retry-failed",
                golden.rel
            )
        })?;
        copies[k] = record::CopyTime {
            objects,
            parallelism: sweep.plan.run.copy_parallelism,
            ms: (began.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0,
        };
    }
    Ok(copies)
}

/// One run of a cell, once its workers are done: what the records need of it.
struct Run<'a> {
    sweep: &'a Sweep,
    job: &'a Job<'a>,
    roots: &'a [String],
    copies: &'a [record::CopyTime],
    started_at: String,
    scheme: &'static str,
    /// Precision mode, after its pilot: the pilot's repetitions (recorded with the units).
    pilot: Option<u32>,
    /// Paired: the arm that went first in this run.
    first: Option<usize>,
    /// The cores other processes kept busy while the workers ran.
    others: Option<f64>,
    /// The machine, with its load before and after the workers.
    host: bench_core::sched::Host,
    /// The mark of the run's creations' names (empty on a copy of its own).
    names: &'a str,
}

impl Run<'_> {
    /// A campaign point's fault at each root: what met it, as the store tells (and the fault
    /// removed); none outside a campaign.
    async fn fault_met(&self) -> Result<Vec<bench_core::plan::campaign::Met>, String> {
        let cell = self.job.cell;
        let mut met = Vec::new();
        if cell.campaign_point() {
            for root in self.roots {
                met.push(crate::store_fault::read_back(&cell.storage, root).await?);
            }
        }
        Ok(met)
    }

    /// What the workers measured, verified and made records of (one per arm).
    async fn result(
        &self,
        ran: Ran,
        progress: &Progress,
        interrupt: &mut watch::Receiver<bool>,
    ) -> CellResult {
        // A campaign's point: what met its fault, read back (and the fault removed, so that
        // neither verification nor the copy's removal meets it) however the run ended.
        let met = self.fault_met().await;
        let (measured, units) = match ran {
            Ran::Interrupted => return CellResult::Interrupted,
            Ran::Failed(reason) => return CellResult::Failed(reason),
            Ran::Measured(measured, units) => (measured, units),
        };
        let met = match met {
            Ok(met) => met,
            Err(reason) => return CellResult::Failed(reason),
        };
        crate::fault::pause("verify", interrupt).await;
        let (cell, arms) = (self.job.cell, self.job.arms);

        let mut records = Vec::new();
        let golden_root = self.sweep.store.uri(&self.job.golden.rel);
        let mut measured = measured;
        for (k, (m, root)) in measured.iter_mut().zip(self.roots).enumerate() {
            crate::fault::lose_manifest(root);
            // A campaign's point: a later reader's look at what the run left, in the log
            // the checkers and the history read.
            if met.get(k).is_some() {
                let reads = crate::verify::final_reads(root, cell, &m.log, self.names).await;
                m.log.extend(reads);
            }
            let (mut v, versions) =
                verification(cell, root, self.job.golden, &golden_root, m).await;
            // The checker reads the log as verification left it (each write that did not
            // succeed looked up).
            v.consistency = m.consistency(v.chain);
            let chain_versions = v.chain;
            let p = Provenance {
                plan: &self.sweep.plan.name,
                arm: arms[k].name,
                versions: &arms[k].versions,
                digest: Some(&arms[k].digest),
                repetition: self.job.repetition,
                started_at: self.started_at.clone(),
                finished_at: now_utc_ms(),
                storage_scheme: self.scheme,
                prices: &self.sweep.prices,
            };
            let mut r = assemble::assemble(cell, m, v, p);
            let new_client = match met.get(k) {
                Some(_) => Some(crate::verify::new_client_writes(root, cell).await),
                None => None,
            };
            r.attached.fault = met.get(k).cloned().map(|mut f| {
                f.while_paused = m.while_paused.take();
                f.new_client = new_client;
                f
            });
            if let Some((class, witness)) = bench_core::report::campaign::judge(&r)
                && class.red()
                && let Some(f) = r.attached.fault.as_mut()
            {
                f.finding = Some(format!("{}: {witness}", class.name()));
            }
            r.attached.nemesis = m.nemesis.clone();
            // The coordinator's own hooks too (a planted fault of its own, the cache of the
            // servers it starts).
            r.planted.extend(bench_core::protocol::planted(&|k: &str| {
                std::env::var(k).ok()
            }));
            r.planted.sort();
            r.planted.dedup();
            r.attached.copy = self.copies.get(k).copied();
            r.attached.others_cpu_cores = self.others.map(|c| (c * 1000.0).round() / 1000.0);
            r.attached.machine = Some(self.host.clone());
            let (id, rep) = (cell.id(), self.job.repetition);
            if !m.traces.is_empty() {
                r.attached.trace = write_trace(self.sweep, &id, rep, arms[k].name, m, progress);
            }
            r.attached.invokes_unwritten = unwritten(&id, m, progress);
            if self.sweep.plan.run.keep_history && keeps_history(m) {
                let run = (id.as_str(), rep, arms[k].name, chain_versions);
                r.attached.history = write_history(self.sweep, run, m, versions.as_ref(), progress);
            }
            r.paired = units.as_ref().map(|(u, kind)| {
                let first = self.first == Some(k);
                record::PairUnits::new(*kind, &u[k], self.pilot, first)
            });
            records.push(r);
        }
        CellResult::Recorded(records)
    }
}

/// What a run could not write as it went, said: the invoke lines its workers could not
/// write (summed, with the first error, for the record) and its history's journal.
fn unwritten(id: &str, m: &Measured, progress: &Progress) -> Option<(u64, String)> {
    if let Some(e) = &m.journal_error {
        progress.log(format!(
            "warning: {id}: its history could not be written as the run went ({e}); it is \
             written whole after verification"
        ));
    }
    let (n, e) = (m.invokes_unwritten.values())
        .map(|(n, e)| (*n, e.clone()))
        .reduce(|(a, e), (b, _)| (a + b, e))?;
    progress.log(format!(
        "warning: {id}: {n} operation(s) could not be written to their workers' invoke files \
         ({e}): a worker killed from outside may leave one it had in flight out of the log"
    ));
    Some((n, e))
}

/// How messages name an arm: `arm B`, `build cow`, or this bench.
fn arm_label(arm: &Arm, cell: &Cell) -> String {
    match (arm.name, &cell.build) {
        (Some(n), _) => format!("arm {n}"),
        (None, Some(b)) => format!("build {}", b.name),
        (None, None) => "the bench binary".to_string(),
    }
}

/// A build rebuilt while the sweep runs is no longer the one its cells' keys name.
fn builds_unchanged(job: &Job<'_>) -> Result<(), BenchError> {
    for arm in job.arms {
        let named = arm.name.is_some() || job.cell.build.is_some();
        arm.unchanged(&arm_label(arm, job.cell), named)?;
    }
    Ok(())
}

/// What ran beside a run's workers: the machine's CPU time and load average as they start,
/// and at [`Beside::end`] the cores others kept busy and the machine with both loads.
struct Beside {
    machine: Option<bench_core::sched::Machine>,
    host: bench_core::sched::Host,
}

impl Beside {
    fn now(sweep: &Sweep) -> Beside {
        let host = bench_core::sched::Host {
            load_start: bench_core::sched::load_average(),
            ..bench_core::sched::host()
        };
        Beside {
            machine: machine_before_workers(sweep),
            host,
        }
    }

    fn end(self) -> (Option<f64>, bench_core::sched::Host) {
        let others = self.machine.and_then(|b| b.others_now());
        let host = bench_core::sched::Host {
            load_end: bench_core::sched::load_average(),
            ..self.host
        };
        (others, host)
    }
}

/// The machine's CPU time before a run's workers start, where they are bench's children (a
/// launcher's tasks are not): what else kept its CPUs busy meanwhile is then
/// [`Machine::others_now`](bench_core::sched::Machine::others_now).
fn machine_before_workers(sweep: &Sweep) -> Option<bench_core::sched::Machine> {
    (sweep.plan.run.launcher.is_none())
        .then(bench_core::sched::machine)
        .flatten()
}
