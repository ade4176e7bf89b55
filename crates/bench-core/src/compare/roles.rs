//! `bench compare` and `bench ab` of cells of roles: a row per (role, operation) of each
//! cell's mix, A's against B's, beside the cell's own.

use std::collections::BTreeMap;

use super::paired::run_pairs_row;
use super::{Figures, Row, unpaired_row, wall_secs};
use crate::export::Record;

/// A cell of roles: each (role, operation) of its mix, its figures in every repetition
/// (its rate, p50 and p99), named `<cell>: <role> <operation>`. Empty for other cells.
fn sides(reps: &[&Record]) -> Vec<(String, Figures)> {
    let Some(roles) = reps.first().and_then(|r| r.roles.as_ref()) else {
        return Vec::new();
    };
    (0..roles.len())
        .filter_map(|i| {
            let at = |f: fn(&crate::export::record::RoleFigures) -> f64| -> Option<Vec<f64>> {
                reps.iter()
                    .map(|r| r.roles.as_ref()?.get(i).map(f))
                    .collect()
            };
            let ops = at(|f| f.total_operations as f64)?;
            let figures = Figures::new(
                [
                    at(|f| f.throughput_ops_per_sec)?,
                    at(|f| f.p50_latency_ms)?,
                    at(|f| f.p99_latency_ms)?,
                ],
                ops.into_iter().map(|n| n as u64).collect(),
            );
            let name = format!(
                "{}: {} {}",
                reps[0].bench_tag, roles[i].role, roles[i].operation
            );
            Some((name, figures))
        })
        .collect()
}

/// The rows of a cell of roles' (role, operation)s: A's against B's by name, paired by
/// runs (`paired`) or not.
pub(super) fn rows(
    (ra, rb): (&[&Record], &[&Record]),
    paired: bool,
    (t, between): (f64, f64),
) -> Vec<Row> {
    let b: BTreeMap<String, Figures> = sides(rb).into_iter().collect();
    // Paired runs ran together (their records share one wall time); else one after the other.
    let secs: f64 = match paired {
        true => ra.iter().map(|r| wall_secs(r)).sum(),
        false => ra.iter().chain(rb).map(|r| wall_secs(r)).sum(),
    };
    (sides(ra).into_iter())
        .filter_map(|(name, fa)| {
            let fb = b.get(&name)?.clone();
            let mut row = match paired {
                // bench ab's runs: crossovers.
                true => {
                    let reps: Vec<u32> = ra.iter().map(|r| r.repetition).collect();
                    let units = crate::stats::paired::crossovers(&reps);
                    run_pairs_row(&name, (fa, fb), (reps.len(), &units), secs, t, "ops/s")
                }
                false => unpaired_row(&name, (fa, fb), (t, between), "ops/s"),
            };
            row.of_role = true;
            Some(row)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Change;
    use crate::export::record::tests::{record, role};
    use crate::plan::{ModeKind, Operation, Variant};

    /// Runs of a cell of two roles, the writers' creates at `tps` a second.
    fn runs(tps: [f64; 6]) -> Vec<Record> {
        tps.iter()
            .enumerate()
            .map(|(i, &t)| {
                let mut r = record(ModeKind::Roles, Variant::NoIndex, 54, 5, "roles_x_c_5");
                r.repetition = i as u32 + 1;
                r.roles = Some(vec![
                    role(
                        "readers",
                        Operation::DescribeTable { cold: false },
                        500.0 + i as f64,
                    ),
                    role("writers", Operation::CreateTable, t),
                ]);
                r
            })
            .collect()
    }

    #[test]
    fn a_role_cell_is_compared_operation_by_operation() {
        // Six runs: three crossovers where paired.
        let (a, b) = (
            runs([100.0, 101.0, 99.0, 100.0, 101.0, 99.0]),
            runs([80.0, 81.0, 79.0, 80.0, 81.0, 79.0]),
        );
        let (ra, rb): (Vec<&Record>, Vec<&Record>) = (a.iter().collect(), b.iter().collect());
        for paired in [false, true] {
            let rows = rows((&ra, &rb), paired, (0.05, 0.0));
            let names: Vec<&str> = rows.iter().map(|r| r.cell.as_str()).collect();
            assert_eq!(
                names,
                [
                    "roles_x_c_5: readers warm-read-describe-table",
                    "roles_x_c_5: writers write-create-table"
                ]
            );
            assert_eq!(rows[0].changes[0], Change::Same, "the readers did not move");
            assert_eq!(
                rows[1].changes[0],
                Change::Worse,
                "the writers' creates did"
            );
            assert_eq!(rows[1].pairs.is_some(), paired);
            assert!(rows.iter().all(|r| r.of_role));
        }
        // Cells without roles have no such rows.
        let plain = record(ModeKind::Concurrent, Variant::NoIndex, 54, 5, "conc");
        assert!(rows((&[&plain], &[&plain]), false, (0.05, 0.0)).is_empty());
    }
}
