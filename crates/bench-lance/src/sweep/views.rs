//! `bench plan` and `bench status`: read-only views of where a sweep stands.

use super::resume::{CellStatus, Stale};
use super::runner::Gate;
use super::{Sweep, arms_in};
use crate::error::BenchError;
use crate::export::{Record, jsonl};
use crate::golden;
use crate::plan::Step;
use crate::state::State;

/// The records for `bench plan` / `bench status`, read without repairing anything; an
/// unreadable file only hides the repetition counts (and says so).
fn records_for_display(sweep: &Sweep) -> Vec<Record> {
    jsonl::read_all(&sweep.results_path()).unwrap_or_else(|e| {
        crate::out::note(&format!("warning: {e}; repetition counts are not shown"));
        Vec::new()
    })
}

/// `N stale (…)`: why, by count: the plan changed, another store, a build changed.
fn stale_counts(all: usize, store: usize, build: usize) -> String {
    let plan = all - store - build;
    let parts: Vec<String> = [
        (plan, "plan changed since they ran"),
        (store, "run against another store"),
        (build, "a build changed"),
    ]
    .iter()
    .filter(|(k, _)| *k > 0)
    .map(|(k, why)| format!("{k}: {why}"))
    .collect();
    match parts.len() {
        0 => format!("{all} stale (plan changed since they ran)"),
        1 => format!(
            "{all} stale ({})",
            parts[0].split_once(": ").map_or("", |p| p.1)
        ),
        _ => format!("{all} stale ({})", parts.join("; ")),
    }
}

/// A note when the directory was run against another store than the one given now.
fn store_note(sweep: &Sweep, state: &State) -> String {
    match sweep.other_store(state) {
        Some(was) => format!(
            "note: {} was run with {}; under the store given now ({}) its cells are stale: \
             give the same options to see where it stands\n",
            sweep.out.display(),
            was.store_args(),
            sweep.root
        ),
        None => String::new(),
    }
}

/// ` (shard 2/3 of 12)` when the sweep is a shard.
fn shard_note(sweep: &Sweep) -> String {
    match sweep.shard {
        Some(s) => format!(" (shard {s} of {} cells)", sweep.planned.len()),
        None => String::new(),
    }
}

/// What a plan runs: its operation, or a plan of roles its roles' mixes.
fn runs_what(plan: &crate::plan::Plan) -> String {
    let Some(r) = &plan.roles else {
        return format!("operation {}", plan.operation);
    };
    let roles: Vec<String> = (r.roles.iter())
        .map(|role| {
            let ops: Vec<String> = role.mix.iter().map(|(op, _)| op.to_string()).collect();
            format!("{} ({})", role.name, ops.join(", "))
        })
        .collect();
    format!("roles {}", roles.join("; "))
}

/// The cells whose runs had test hooks set, a line each (none: nothing).
fn planted_note(records: &[crate::export::Record]) -> String {
    let planted: std::collections::BTreeSet<String> = (records.iter())
        .filter(|r| !r.planted.is_empty())
        .map(|r| format!("  {}: {}\n", r.bench_tag, r.planted.join(", ")))
        .collect();
    match planted.is_empty() {
        true => String::new(),
        false => format!(
            "PLANTED: cells run with test hooks set (tests of bench, not measurements):\n{}",
            planted.into_iter().collect::<String>()
        ),
    }
}

/// `bench plan`: print the cells in order with their status. Runs and writes nothing.
/// `bench plan`'s first lines: the plan, its cells and repetitions, where results go.
fn plan_head(sweep: &Sweep) -> String {
    let plan = &sweep.plan;
    let mixed = match &plan.mixed {
        Some(m) => format!(
            " (mixed cells: {} x {} per commit)",
            m.reads_per_write, m.read_operation
        ),
        None => String::new(),
    };
    let reps = plan.run.repetitions;
    let what = runs_what(plan);
    format!(
        "plan `{}` ({}): {} cells{}, {}, {what}{mixed}\n  results: {}\n  store:   {}\n\n",
        plan.name,
        sweep.plan_path.display(),
        sweep.cells().len(),
        shard_note(sweep),
        crate::plan::count(reps as u64, "repetition", "repetitions") + " each",
        sweep.out.display(),
        sweep.store.root_uri(),
    )
}

/// A warning where the plan's cell with the most workers at once would not fit in this
/// machine's memory (per worker: the largest peak its records measured, or the least a
/// worker takes).
pub(super) fn memory_warning(sweep: &Sweep, records: &[crate::export::Record]) -> Option<String> {
    let cell = (sweep.cells().into_iter()).max_by_key(|c| c.mode.workers())?;
    let per = (records.iter())
        .filter_map(|r| r.worker_rss_peak_kib.as_ref().map(|p| p.max))
        .max();
    let machine = bench_core::sched::memory_kib();
    bench_core::workers::memory_note(&cell.id(), cell.mode.workers(), per, machine)
}

pub async fn show_plan(sweep: &Sweep) -> Result<String, BenchError> {
    let state = sweep.state()?;
    let records = records_for_display(sweep);
    let plan = &sweep.plan;
    let mut s = plan_head(sweep);
    if let Some(w) = memory_warning(sweep, &records) {
        s.push_str(&format!("  WARNING: {w}\n\n"));
    }
    if let Some(l) = &plan.run.launcher {
        s.push_str(&format!("  writers start through: {l}\n\n"));
    }
    for line in sweep.namespace_note() {
        s.push_str(&format!("  {line}\n"));
    }
    // Under an external server's namespace: what it serves (a plan that needs more is
    // refused here, exit 2); a server that does not answer yet is said, the plan shown.
    if plan.rest.parent.is_some() {
        match super::open::probe_external(sweep).await {
            Ok(served) => s.push_str(&served_lines(&served.unwrap_or_default())),
            Err(BenchError::Store { message, .. }) => s.push_str(&format!(
                "  what the server serves is not known: {message}\n\n"
            )),
            Err(e) => return Err(e),
        }
    }
    s.push_str(&format!(
        "{:>4}  {:<40} {:<18} {}\n",
        "#", "cell", "key", "status"
    ));
    let arms = arms_in(&records);
    let live = crate::lock::holder(&sweep.out);
    let mut ready = std::collections::BTreeSet::new();
    let mut i = 0;
    for step in &sweep.steps {
        match step {
            Step::Golden(g) => {
                let ready = match golden::find(&sweep.store, *g).await {
                    Some(_) => {
                        ready.insert(*g);
                        "ready"
                    }
                    None => "to build",
                };
                let name = format!("golden {}", g.id());
                s.push_str(&format!("{:>4}  {name:<40} {:<18} {ready}\n", "", ""));
            }
            Step::Cell(c) => {
                i += 1;
                let st = sweep.standing(&state, &records, c, &arms, live.is_some());
                let mut label = st.label();
                if st.status == CellStatus::Stale {
                    let why = super::resume::stale_reason(&state, &records, c);
                    label.push_str(&format!(" ({})", why.label()));
                }
                s.push_str(&format!("{i:>4}  {:<40} {:<18} {label}\n", c.id(), c.key()));
            }
        }
    }
    s.push_str(&store_note(sweep, &state));
    for line in sweep.starved_note(&records) {
        s.push_str(&format!("{line}\n"));
    }
    let left = sweep.predicted_left(&state, &records, &arms, false, &ready);
    s.push_str(&format!(
        "\nestimated time for what is left: {} on a 2-core, 24 GiB VM with local disk (a model \
         of commit cost by catalog size; S3 is many times slower; `bench run` corrects it as \
         cells finish)\n",
        super::estimate::about(left.total())
    ));
    for line in sweep.credentials_note(left.total()).await {
        s.push_str(&format!("{line}\n"));
    }
    // A look at an S3 store (read only): that it is there, and how fast it answers.
    let request_ms = match sweep.store.scheme() {
        "s3" => match crate::store::look(&sweep.store).await {
            Ok(ms) => Some(ms),
            Err(e) => {
                s.push_str(&format!(
                    "warning: the store cannot be used as it is: {e}; `bench run` would stop \
                     there\n"
                ));
                None
            }
        },
        _ => None,
    };
    if let Some(line) = sweep.requests_note(&state, &records, &arms, &ready, request_ms) {
        s.push_str(&format!("{line}\n"));
    }
    Ok(s)
}

/// The plan's cells by where they stand, and what `bench status` lists of them.
#[derive(Default)]
struct Tally {
    count: std::collections::HashMap<CellStatus, usize>,
    /// Cells with some of their repetitions recorded.
    partial: Vec<String>,
    /// Failed cells, each with its reason.
    failures: Vec<String>,
    /// Stale cells whose runs are another store's.
    elsewhere: usize,
    /// Stale cells whose build changed.
    rebuilt: Vec<String>,
}

impl Tally {
    fn of(sweep: &Sweep, state: &State, records: &[Record], live: bool) -> Tally {
        let arms = arms_in(records);
        let mut t = Tally::default();
        for c in &sweep.cells() {
            let st = sweep.standing(state, records, c, &arms, live);
            *t.count.entry(st.status).or_insert(0) += 1;
            if st.status == CellStatus::Stale {
                match super::resume::stale_reason(state, records, c) {
                    Stale::Store => t.elsewhere += 1,
                    why @ Stale::Build { .. } => {
                        t.rebuilt.push(format!("  {}: {}\n", c.id(), why.label()))
                    }
                    Stale::Plan => {}
                }
            }
            if st.partial() {
                t.partial.push(format!("  {}: {}\n", c.id(), st.label()));
            }
            if st.status == CellStatus::Failed {
                let reason = state.cells[&c.id()].reason.clone().unwrap_or_default();
                let reason = reason.replace('\n', "\n      ");
                t.failures.push(format!("  {}: {reason}\n", c.id()));
            }
        }
        t
    }

    fn n(&self, st: CellStatus) -> usize {
        self.count.get(&st).copied().unwrap_or(0)
    }
}

/// Who holds the directory, and which cells it runs now (`live`: the pid of the run that
/// holds it).
fn running_note(state: &State, live: Option<u32>, running_cells: usize) -> String {
    let Some(pid) = live else {
        return String::new();
    };
    let running: Vec<&str> = (state.cells.iter())
        .filter(|(_, c)| c.status == crate::state::Status::Running)
        .map(|(id, _)| id.as_str())
        .collect();
    let now = match running.is_empty() {
        true => String::new(),
        false => format!("; running now: {}", running.join(", ")),
    };
    format!(", {running_cells} running (bench run pid {pid} holds the directory{now})")
}

/// What `--fail-on-finding` gates on, of the records of the plan's cells (under their
/// current keys), each named with its cell and repetition.
pub(super) fn gate(sweep: &Sweep, records: &[crate::export::Record]) -> Gate {
    let keys: std::collections::HashMap<String, String> =
        sweep.cells().iter().map(|c| (c.id(), c.key())).collect();
    let mut gate = Gate::default();
    for r in (records.iter()).filter(|r| keys.get(&r.bench_tag) == Some(&r.cell_key)) {
        let arm = r
            .arm
            .as_deref()
            .map(|a| format!(" [{a}]"))
            .unwrap_or_default();
        let run = format!("{} (repetition {}){arm}", r.bench_tag, r.repetition);
        let found = bench_core::export::findings(r);
        (gate.findings).extend(found.into_iter().map(|f| format!("{run}: {f}")));
        if let Some(u) = bench_core::export::unchecked(r) {
            gate.unchecked.push(format!("{run}: {u}"));
        }
    }
    gate
}

/// `bench status --fail-on-finding`: its exit code, from what [`show_status`] shows: a
/// failed cell 3, else the gate's ([`Gate::code`]); with the gate, to print.
pub fn status_gate(sweep: &Sweep) -> Result<(u8, Gate), BenchError> {
    let state = sweep.state()?;
    let records = records_for_display(sweep);
    let ids: std::collections::HashSet<String> = sweep.cells().iter().map(|c| c.id()).collect();
    let failed = (state.cells.iter())
        .any(|(id, c)| ids.contains(id) && c.status == crate::state::Status::Failed);
    let gate = gate(sweep, &records);
    let code = match failed {
        true => bench_core::error::exit::CELLS_FAILED,
        false => gate.code(),
    };
    Ok((code, gate))
}

/// `bench status`: counts of done / failed / pending / stale cells, each failure with its
/// reason, and where the outputs are. Reads only.
pub async fn show_status(sweep: &Sweep) -> Result<String, BenchError> {
    let state = sweep.state()?;
    let records = records_for_display(sweep);
    let arms = arms_in(&records);
    let live = crate::lock::holder(&sweep.out);
    let t = Tally::of(sweep, &state, &records, live.is_some());
    let stale = stale_counts(t.n(CellStatus::Stale), t.elsewhere, t.rebuilt.len());
    let mut s = format!(
        "plan `{}`{}: {} cells: {} done, {} failed, {} pending, {stale}, {} interrupted{}\n",
        sweep.plan.name,
        shard_note(sweep),
        sweep.cells().len(),
        t.n(CellStatus::Done),
        t.n(CellStatus::Failed),
        t.n(CellStatus::Pending),
        t.n(CellStatus::Interrupted),
        running_note(&state, live, t.n(CellStatus::Running)),
    );
    let Tally {
        partial,
        failures,
        rebuilt,
        ..
    } = t;
    if !partial.is_empty() {
        s.push_str("cells with some of their repetitions recorded (`bench run` runs the rest):\n");
        s.extend(partial);
    }
    if !failures.is_empty() {
        s.push_str("failed cells (re-run them with `bench run --retry-failed`):\n");
        s.extend(failures);
    }
    if !rebuilt.is_empty() {
        s.push_str("stale because a build changed (their runs of the new build are to run):\n");
        s.extend(rebuilt);
    }
    s.push_str(&planted_note(&records));
    s.push_str(&store_note(sweep, &state));
    if live.is_some()
        && let Ok(now) = std::fs::read_to_string(sweep.out.join(super::workers::RUNNING_FILE))
    {
        s.push_str(&format!("now: {}\n", now.trim()));
    }
    if sweep.store.scheme() == "s3" {
        let ready = std::collections::BTreeSet::new();
        let left = sweep.predicted_left(&state, &records, &arms, false, &ready);
        for line in sweep.credentials_note(left.total()).await {
            s.push_str(&format!("{line}\n"));
        }
    }
    s.push_str(&format!(
        "results: {}\nsummary: {}\nstate:   {}\nstore:   {}\n",
        sweep.results_path().display(),
        sweep.summary_path().display(),
        State::path(&sweep.out).display(),
        sweep.store.root_uri()
    ));
    Ok(s)
}

/// What `bench plan` says an external server serves, operation by operation.
fn served_lines(served: &[crate::catalog::served::Served]) -> String {
    let mut s = "  the server serves:\n".to_string();
    for x in served {
        let rest = crate::catalog::served::rest_name(x.operation);
        s.push_str(&match &x.refused {
            None => format!("    {:<34} {rest:<18} served\n", x.operation.as_str()),
            Some(why) => format!(
                "    {:<34} {rest:<18} NOT served: {why}\n",
                x.operation.as_str()
            ),
        });
    }
    s.push('\n');
    s
}
