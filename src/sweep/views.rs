//! `bench plan` and `bench status`: read-only views of where a sweep stands.

use super::resume::CellStatus;
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
        eprintln!("warning: {e}; repetition counts are not shown");
        Vec::new()
    })
}

/// ` (shard 2/3 of 12)` when the sweep is a shard.
fn shard_note(sweep: &Sweep) -> String {
    match sweep.shard {
        Some(s) => format!(" (shard {s} of {} cells)", sweep.planned.len()),
        None => String::new(),
    }
}

/// `bench plan`: print the cells in order with their status. Runs and writes nothing.
pub async fn show_plan(sweep: &Sweep) -> Result<String, BenchError> {
    let state = sweep.state()?;
    let records = records_for_display(sweep);
    let plan = &sweep.plan;
    let mixed = match &plan.mixed {
        Some(m) => format!(
            " (mixed cells: {} x {} per commit)",
            m.reads_per_write, m.read_operation
        ),
        None => String::new(),
    };
    let mut s = format!(
        "plan `{}` ({}): {} cells{}, operation {}{mixed}\n  results: {}\n  store:   {}\n\n",
        plan.name,
        sweep.plan_path.display(),
        sweep.cells().len(),
        shard_note(sweep),
        plan.operation,
        sweep.out.display(),
        sweep.store.root_uri(),
    );
    if let Some(l) = &plan.run.launcher {
        s.push_str(&format!("  writers start through: {l}\n\n"));
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
                let label = sweep
                    .standing(&state, &records, c, &arms, live.is_some())
                    .label();
                s.push_str(&format!("{i:>4}  {:<40} {:<18} {label}\n", c.id(), c.key()));
            }
        }
    }
    let left = sweep.predicted_left(&state, &records, &arms, false, &ready);
    s.push_str(&format!(
        "\nestimated time for what is left: {} on a machine like this project's 2-core one \
         with local disk (a model of commit cost by catalog size; S3 is many times slower; \
         `bench run` corrects it as cells finish)\n",
        super::estimate::about(left)
    ));
    Ok(s)
}

/// `bench status`: counts of done / failed / pending / stale cells, each failure with its
/// reason, and where the outputs are. Reads only.
pub fn show_status(sweep: &Sweep) -> Result<String, BenchError> {
    let state = sweep.state()?;
    let records = records_for_display(sweep);
    let cells = sweep.cells();
    let arms = arms_in(&records);
    let live = crate::lock::holder(&sweep.out);
    let mut count = std::collections::HashMap::new();
    let (mut partial, mut failures) = (Vec::new(), Vec::new());
    for c in &cells {
        let st = sweep.standing(&state, &records, c, &arms, live.is_some());
        *count.entry(st.status).or_insert(0) += 1;
        if st.partial() {
            partial.push(format!("  {}: {}\n", c.id(), st.label()));
        }
        if st.status == CellStatus::Failed {
            let reason = state.cells[&c.id()].reason.clone().unwrap_or_default();
            failures.push(format!(
                "  {}: {}\n",
                c.id(),
                reason.replace('\n', "\n      ")
            ));
        }
    }
    let n = |st: CellStatus| count.get(&st).copied().unwrap_or(0);
    let mut s = format!(
        "plan `{}`{}: {} cells: {} done, {} failed, {} pending, {} stale (plan changed since they ran), {} interrupted{}\n",
        sweep.plan.name,
        shard_note(sweep),
        cells.len(),
        n(CellStatus::Done),
        n(CellStatus::Failed),
        n(CellStatus::Pending),
        n(CellStatus::Stale),
        n(CellStatus::Interrupted),
        match live {
            Some(pid) => format!(
                ", {} running (bench run pid {pid} holds the directory)",
                n(CellStatus::Running)
            ),
            None => String::new(),
        },
    );
    if !partial.is_empty() {
        s.push_str("cells with some of their repetitions recorded (`bench run` runs the rest):\n");
        s.extend(partial);
    }
    if !failures.is_empty() {
        s.push_str("failed cells (re-run them with `bench run --retry-failed`):\n");
        s.extend(failures);
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
