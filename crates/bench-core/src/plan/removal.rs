//! Operations that remove the golden's entries (`write-drop-table`, …): each removes one
//! entry no other operation of the cell names, so a plan must give every worker enough of
//! them. Worker `w` of `W` takes the `w`-th, `w + W`-th, … entry of the kind, its warm-up
//! first; a cell whose workers could run past their share is refused before anything runs.

use super::checks::invalid;
use super::{Entry, Names, Plan};
use crate::error::PlanError;

/// The most operations one worker of a concurrent cell may start: its share of an
/// open-loop cell's offer, or the cell's bound (one worker may make all of it, and start
/// one more before the cell's end reaches it); `None`: unbounded (a closed loop for a time).
fn per_worker(bound: Option<u64>, offered: Option<f64>, workers: u32) -> Option<u64> {
    let bound = bound.map(|b| b + 1);
    let share = offered.map(|n| (n / f64::from(workers.max(1))).ceil() as u64);
    match (bound, share) {
        (Some(b), Some(s)) => Some(b.min(s)),
        (b, s) => b.or(s),
    }
}

/// Refuse a plan whose removals could run out of the golden's entries, or that mixes them
/// with reads of the same golden ([mixed]).
pub(super) fn check(plan: &Plan) -> Result<(), PlanError> {
    let op = plan.operation;
    let Names::RemovesGolden(entry) = op.describe().names else {
        return Ok(());
    };
    if plan.mixed.is_some() {
        return Err(invalid(
            "mixed",
            format!(
                "cannot commit `{op}`: its reads would look up entries its commits remove; \
                 run `{op}` in [continuous] or [concurrent]"
            ),
        ));
    }
    let kind = match entry {
        Entry::Namespace => "namespaces",
        Entry::Table => "tables",
    };
    if entry == Entry::Namespace && !plan.fixtures.is_empty() {
        return Err(invalid(
            "operation",
            format!(
                "`{op}` drops an empty namespace, and every namespace of a [fixture] holds \
                 tables or namespaces; measure it on flat goldens (matrix.sizes)"
            ),
        ));
    }
    let warmup = plan.run.warmup_operations;
    // (key, writers, most operations of one writer) of each kind of cell.
    let mut cells: Vec<(&str, u32, u64)> = Vec::new();
    if let Some(c) = &plan.continuous {
        cells.push(("continuous.operations", 1, c.operations));
    }
    if let Some(c) = &plan.concurrent {
        for &w in &c.concurrency {
            let offers: Vec<Option<f64>> = if c.loads.is_empty() {
                vec![None]
            } else {
                let secs = c.duration.map_or(f64::INFINITY, |d| d.as_secs_f64());
                c.loads.iter().map(|l| Some(l.rate() * secs)).collect()
            };
            for offered in offers {
                let offered = offered.filter(|n| n.is_finite());
                let Some(n) = per_worker(c.operations, offered, w) else {
                    return Err(invalid(
                        "concurrent.operations",
                        format!(
                            "is needed for `{op}`: each operation removes one of the golden's \
                             {kind}, so a concurrent cell needs a bound on its commits \
                             (concurrent.operations) or an offered rate (concurrent.rate) \
                             for bench to check that they suffice"
                        ),
                    ));
                };
                cells.push(("concurrent", w, n));
            }
        }
    }
    // Each golden: the key that sizes it, what it is, and its entries of the kind.
    let goldens = (plan.sizes.iter())
        .map(|&size| {
            let what = format!(
                "{size} rows hold {} {kind} (a golden's first third are namespaces, the rest \
                 tables)",
                entry.count(size)
            );
            ("matrix.sizes", what, entry.count(size))
        })
        .chain(plan.fixtures.iter().map(|f| {
            let what = format!("the tree {} holds {} {kind}", f.label(), f.count(entry));
            ("fixture", what, f.count(entry))
        }));
    for (sized_by, what, have) in goldens {
        for &(key, writers, n) in &cells {
            let need = (warmup + n).saturating_mul(u64::from(writers));
            if need > have {
                return Err(invalid(
                    sized_by,
                    format!(
                        "{what}, but `{op}` removes one per operation and {writers} writer(s) \
                         of up to {} operations each ({key}, with run.warmup_operations = \
                         {warmup}) need {need}; give larger goldens or fewer operations",
                        warmup + n
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::plan::Plan;

    fn plan(body: &str) -> Result<Plan, String> {
        Plan::parse(&format!(
            "name = \"r\"\noperation = \"write-drop-table\"\n[matrix]\nsizes = [30]\n{body}"
        ))
        .map_err(|e| e.to_string())
    }

    /// A golden of 30 rows holds 20 tables and 10 namespaces; every worker must have its
    /// share for every operation it may start, warm-up included.
    #[test]
    fn removals_must_fit_in_the_golden() {
        assert!(plan("[continuous]\noperations = 20").is_ok());
        let e = plan("[continuous]\noperations = 21").unwrap_err();
        assert!(
            e.contains("matrix.sizes")
                && e.contains("30 rows hold 20 tables")
                && e.contains("need 21"),
            "{e}"
        );
        let e = plan("[continuous]\noperations = 19\n[run]\nwarmup_operations = 2").unwrap_err();
        assert!(e.contains("need 21"), "{e}");
        // A bound: one writer may make all of it, and start one more.
        assert!(plan("[concurrent]\nconcurrency = [2]\noperations = 9").is_ok());
        let e = plan("[concurrent]\nconcurrency = [2]\noperations = 10").unwrap_err();
        assert!(
            e.contains("2 writer(s) of up to 11") && e.contains("need 22"),
            "{e}"
        );
        // An offered rate for a time: each writer's share of it.
        assert!(plan("[concurrent]\nconcurrency = [2]\nduration_secs = 2\nrate = 10").is_ok());
        assert!(plan("[concurrent]\nconcurrency = [2]\nduration_secs = 3\nrate = 10").is_err());
        // A closed loop for a time has no bound.
        let e = plan("[concurrent]\nconcurrency = [2]\nduration_secs = 2").unwrap_err();
        assert!(
            e.contains("concurrent.operations") && e.contains("is needed"),
            "{e}"
        );
        // Namespaces: the first third.
        let ns = |body: &str| {
            Plan::parse(&format!(
                "name = \"r\"\noperation = \"write-drop-namespace\"\n[matrix]\nsizes = [30]\n{body}"
            ))
        };
        assert!(ns("[continuous]\noperations = 10").is_ok());
        assert!(ns("[continuous]\noperations = 11").is_err());
    }

    #[test]
    fn removals_are_not_mixed_with_reads_of_the_golden() {
        let e = plan("[mixed]\nclients = [2]\nreads_per_write = 1\nduration_secs = 1").unwrap_err();
        assert!(e.contains("`mixed`") || e.contains("mixed"), "{e}");
        assert!(e.contains("cannot commit `write-drop-table`"), "{e}");
    }
}
