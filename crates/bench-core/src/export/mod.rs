//! Outputs of a sweep: the JSONL record of each run of a cell (a documented contract, its
//! schema in [`record`], made by [`assemble`]), appended by [`jsonl`], and the `summary.csv` derived from all records
//! ([`csv`]), brought up to date after every cell. [`cells`] is the view of a results set
//! that the summary, the report and compare share.

pub mod assemble;
pub mod csv;
pub mod jsonl;
pub mod point;
pub mod record;
pub mod roles;

pub use record::{ReadFigures, Record};

use crate::stats::{latest_groups, median};

/// One cell of a results set: its records under its latest key (one per repetition); in
/// an A/B results set, one arm's.
#[derive(Debug, Clone)]
pub struct CellRecords<'a> {
    pub reps: Vec<&'a Record>,
}

impl<'a> CellRecords<'a> {
    /// The cell's parameters are the same in every repetition.
    pub fn first(&self) -> &'a Record {
        self.reps[0]
    }

    /// One figure of every repetition, in file order.
    pub fn values(&self, f: impl Fn(&Record) -> f64) -> Vec<f64> {
        self.reps.iter().map(|r| f(r)).collect()
    }

    /// The spread of one figure over the repetitions (median, interval, variation).
    pub fn spread(&self, f: impl Fn(&Record) -> f64) -> crate::stats::Spread {
        crate::stats::spread(&self.values(f))
    }

    /// The median of one figure over the repetitions.
    pub fn med(&self, f: impl Fn(&Record) -> f64) -> f64 {
        median(self.values(f))
    }

    /// The median of one figure of a mixed cell's reads; `None` unless every repetition
    /// has reads (other modes, or records older than mixed mode).
    pub fn read_med(&self, f: impl Fn(&ReadFigures) -> f64) -> Option<f64> {
        let v: Option<Vec<f64>> = self.reps.iter().map(|r| r.reads.as_ref().map(&f)).collect();
        v.map(median)
    }
}

/// The cells of a results set, sorted as the reference sorts its summary (mode, variant,
/// initial_entries, concurrency, by their names), then by offered rate, then by arm.
pub fn cells(records: &[Record]) -> Vec<CellRecords<'_>> {
    let mut cells: Vec<CellRecords<'_>> = latest_groups(records, |r| {
        (
            (r.bench_tag.as_str(), r.arm.as_deref()),
            r.cell_key.as_str(),
        )
    })
    .into_iter()
    .map(|reps| CellRecords {
        reps: latest_of_each_repetition(reps),
    })
    .collect();
    cells.sort_by(|a, b| {
        let k = |c: &CellRecords<'_>| {
            let r = c.first();
            (
                r.mode.as_str(),
                r.variant.as_str(),
                r.variant_label().to_string(),
                r.initial_entries,
                r.concurrency,
                // Open-loop cells by their offered rate, as a number (not their ids' text).
                r.open_loop
                    .offered_ops_per_sec
                    .map(|x| (x * 1000.0).round() as u64),
                r.arm.clone(),
            )
        };
        k(a).cmp(&k(b))
    });
    cells
}

/// Of a cell's records (one arm, one key), the latest of each repetition, in file order: a
/// repetition run again after it failed verification stands by its newer record.
fn latest_of_each_repetition(reps: Vec<&Record>) -> Vec<&Record> {
    let last: std::collections::BTreeMap<u32, usize> = reps
        .iter()
        .enumerate()
        .map(|(i, r)| (r.repetition, i))
        .collect();
    let keep: std::collections::BTreeSet<usize> = last.into_values().collect();
    reps.into_iter()
        .enumerate()
        .filter(|(i, _)| keep.contains(i))
        .map(|(_, r)| r)
        .collect()
}

/// The records that stand for each cell, by the rule the resume applies: those under the
/// key the checkpoint holds for it (`keys`: the plan's key when the cell last ran or was
/// found done), when there are any; otherwise (no checkpoint, or none recorded under that
/// key yet) its records under the last key in the file. So after a plan edit is reverted,
/// the summary shows the records the resume counts, not the edit's.
pub fn standing(
    records: &[Record],
    keys: &std::collections::BTreeMap<String, String>,
) -> Vec<Record> {
    let has: std::collections::BTreeSet<(&str, &str)> = records
        .iter()
        .map(|r| (r.bench_tag.as_str(), r.cell_key.as_str()))
        .collect();
    records
        .iter()
        .filter(|r| match keys.get(&r.bench_tag) {
            Some(k) if has.contains(&(r.bench_tag.as_str(), k.as_str())) => &r.cell_key == k,
            _ => true,
        })
        .cloned()
        .collect()
}

/// The cells (ids, with the arm in an A/B results set) of which a repetition measured no
/// successful operation (of a mixed cell: no commit or no read): their figures do not exist.
pub fn without_operations(records: &[Record]) -> Vec<String> {
    cells(records)
        .iter()
        .filter(|c| {
            c.reps.iter().any(|r| {
                r.total_operations == 0 || r.reads.as_ref().is_some_and(|x| x.total_operations == 0)
            })
        })
        .map(|c| {
            let r = c.first();
            match &r.arm {
                Some(a) => format!("{} (arm {a})", r.bench_tag),
                None => r.bench_tag.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::record::tests::record;

    #[test]
    fn the_checkpoints_key_stands_for_a_cell_when_it_has_records() {
        use crate::plan::{ModeKind, Variant};
        let rec = |tag: &str, key: &str, ops: u64| {
            let mut r = record(ModeKind::Continuous, Variant::NoIndex, 100, 1, tag);
            r.cell_key = key.to_string();
            r.total_operations = ops;
            r
        };
        // a: run under k1, edited (k2), reverted (k1 again); b: edited, not yet re-run.
        let records = [rec("a", "k1", 5), rec("a", "k2", 6), rec("b", "k1", 5)];
        let keys = [("a", "k1"), ("b", "k3")]
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .into();
        let kept = super::standing(&records, &keys);
        assert_eq!(kept, [records[0].clone(), records[2].clone()]);
        let ops: Vec<u64> = super::cells(&kept)
            .iter()
            .map(|c| c.first().total_operations)
            .collect();
        assert_eq!(ops, [5, 5]);
        // Without a checkpoint: the last key in the file.
        let latest = super::cells(&records);
        assert_eq!(latest[0].first().total_operations, 6);
    }
    use super::*;
    use crate::plan::{ModeKind, Variant};

    /// Open-loop cells of one shape come in the order of their offered rate, as numbers
    /// (10, 60, 500), not of their ids as text (10, 500, 60).
    #[test]
    fn open_loop_cells_are_sorted_by_their_offered_rate() {
        let recs: Vec<Record> = [500.0, 10.0, 60.0]
            .into_iter()
            .map(|rate| {
                let mut r = record(
                    ModeKind::Concurrent,
                    Variant::NoIndex,
                    1000,
                    4,
                    &format!("conc_c_4_rate_{rate}"),
                );
                r.open_loop.offered_ops_per_sec = Some(rate);
                r
            })
            .collect();
        let order: Vec<f64> = cells(&recs)
            .iter()
            .filter_map(|c| c.first().open_loop.offered_ops_per_sec)
            .collect();
        assert_eq!(order, [10.0, 60.0, 500.0]);
    }

    /// A repetition run again after it failed verification stands by its newer record.
    #[test]
    fn a_repetition_run_again_stands_by_its_newer_record() {
        let rec = |rep: u32, verified: bool| Record {
            repetition: rep,
            verified,
            ..record(ModeKind::Continuous, Variant::NoIndex, 100, 1, "c")
        };
        let recs = [rec(1, false), rec(2, true), rec(1, true)];
        let all = cells(&recs);
        let reps: Vec<(u32, bool)> = all[0]
            .reps
            .iter()
            .map(|r| (r.repetition, r.verified))
            .collect();
        assert_eq!(reps, [(2, true), (1, true)]);
    }

    #[test]
    fn cells_are_sorted_as_the_reference_and_the_latest_key_wins() {
        let mut newer = record(
            ModeKind::Continuous,
            Variant::NoIndex,
            1000,
            1,
            "cont_inline_false_rows_1000",
        );
        newer.total_operations = 11;
        newer.cell_key = "k2".into(); // re-run after a plan edit: supersedes the old record
        let records = vec![
            record(
                ModeKind::Continuous,
                Variant::NoIndex,
                1000,
                1,
                "cont_inline_false_rows_1000",
            ),
            record(
                ModeKind::Concurrent,
                Variant::InlineIndex,
                1000,
                10,
                "conc_inline_true_rows_1000_c_10",
            ),
            record(
                ModeKind::Concurrent,
                Variant::InlineIndex,
                1000,
                2,
                "conc_inline_true_rows_1000_c_2",
            ),
            record(
                ModeKind::Continuous,
                Variant::InlineIndex,
                10000,
                1,
                "cont_inline_true_rows_10000",
            ),
            record(
                ModeKind::Continuous,
                Variant::InlineIndex,
                100,
                1,
                "cont_inline_true_rows_100",
            ),
            newer,
        ];
        let cells = cells(&records);
        let tags: Vec<_> = cells.iter().map(|c| c.first().bench_tag.as_str()).collect();
        assert_eq!(
            tags,
            [
                "conc_inline_true_rows_1000_c_2",
                "conc_inline_true_rows_1000_c_10",
                "cont_inline_true_rows_100",
                "cont_inline_true_rows_10000",
                "cont_inline_false_rows_1000",
            ]
        );
        assert_eq!(cells[4].reps.len(), 1);
        assert_eq!(cells[4].first().total_operations, 11);
    }
}

/// What a record found against the catalog, in words (empty: nothing): a copy that failed
/// verification, a campaign's red point, anomalies of the consistency checker, readers a
/// cleanup left stuck, writes answered with a definite error whose effect landed. What
/// `--fail-on-finding` gates on.
pub fn findings(r: &Record) -> Vec<String> {
    let mut out = Vec::new();
    if !r.verified {
        let why = r.verify_error.as_deref().unwrap_or("no reason recorded");
        out.push(format!("verification failed: {why}"));
    }
    if let Some(f) = r.attached.fault.as_ref().and_then(|f| f.finding.as_ref()) {
        out.push(format!("campaign point {f}"));
    }
    if let Some(c) = &r.consistency
        && c.anomalies() > 0
    {
        let first = c.first_violation.as_deref().unwrap_or("none named");
        out.push(format!("{} anomalies (first: {first})", c.anomalies()));
    }
    if let Some(s) = r.stuck_readers.as_ref() {
        let mut stuck = Vec::new();
        let count = crate::plan::count;
        if s.readers > 0 {
            stuck.push(count(s.readers, "stuck reader", "stuck readers"));
        }
        if s.writers > 0 {
            stuck.push(count(s.writers, "stuck writer", "stuck writers"));
        }
        if !stuck.is_empty() {
            out.push(format!("{} (first: {})", stuck.join(", "), s.first));
        }
    }
    if let Some(o) = r.outcomes.as_ref().filter(|o| o.failed_but_applied > 0) {
        let first = o
            .first_failed_but_applied
            .as_deref()
            .unwrap_or("none named");
        out.push(format!(
            "{} writes failed but applied (first: {first})",
            o.failed_but_applied
        ));
    }
    out
}

/// What a verified record's verification was asked to check and could not, and why
/// (`None`: it checked all it was asked to, or it failed, which [`findings`] names): no
/// finding against the catalog, and no proof that the catalog kept its promises either.
pub fn unchecked(r: &Record) -> Option<&str> {
    r.verified.then_some(())?;
    r.verify_unchecked.as_deref()
}

#[cfg(test)]
mod findings_tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::{ModeKind, Variant};

    /// Each kind of finding is named; a clean record has none.
    #[test]
    fn a_record_s_findings_are_named_one_by_one() {
        let clean = record(ModeKind::Continuous, Variant::NoIndex, 10, 1, "c");
        assert!(findings(&clean).is_empty());
        let mut r = clean.clone();
        r.verified = false;
        r.verify_error = Some("x missing".into());
        r.outcomes = Some(crate::audit::Outcomes {
            failed_but_applied: 2,
            first_failed_but_applied: Some("w0 #1: 403".into()),
            ..Default::default()
        });
        r.consistency = Some(crate::consistency::Consistency {
            stale_reads: 3,
            first_violation: Some("client 1 missed #0".into()),
            ..Default::default()
        });
        assert_eq!(
            findings(&r),
            [
                "verification failed: x missing",
                "3 anomalies (first: client 1 missed #0)",
                "2 writes failed but applied (first: w0 #1: 403)",
            ]
        );
    }

    /// What a verified record could not check is said apart from its findings; a failed
    /// verification's is its finding.
    #[test]
    fn what_a_verification_could_not_check_is_no_finding_but_is_said() {
        let mut r = record(ModeKind::Continuous, Variant::NoIndex, 10, 1, "c");
        r.verify_unchecked = Some("the transaction files were not looked for".into());
        assert!(findings(&r).is_empty());
        assert_eq!(
            unchecked(&r),
            Some("the transaction files were not looked for")
        );
        r.verified = false;
        assert_eq!(unchecked(&r), None);
        assert_eq!(findings(&r), ["verification failed: no reason recorded"]);
    }
}
