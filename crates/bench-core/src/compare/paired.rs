//! `bench ab`'s comparison: arm A against arm B, pair by pair — whole runs by the paired t
//! interval on log ratios, pairs formed inside runs by the ratio estimator with batch means.

use super::*;

/// Compare arm A with arm B of an A/B results set, pair by pair. Pairs of whole runs
/// (repetition `i` of A with repetition `i` of B, run back to back on fresh copies of the
/// same golden) by the paired t-test on log ratios; pairs formed inside each run
/// (lockstep, slices, duet: the records' `paired` units) by the ratio estimator with batch
/// means (see `stats::paired`).
pub fn paired(records: &[Record], threshold_pct: f64) -> Comparison {
    let t = threshold_pct / 100.0;
    let arm_of = |name: &str| planted(records.iter().filter(|r| r.arm.as_deref() == Some(name)));
    let mut c = Comparison {
        threshold_pct,
        paired: true,
        planted: [arm_of(ARM_A), arm_of(ARM_B)],
        ..Comparison::default()
    };
    let all = cells(records);
    let arm = |x: &CellRecords<'_>| x.first().arm.clone();
    let b_of: BTreeMap<&str, &CellRecords<'_>> = all
        .iter()
        .filter(|x| arm(x).as_deref() == Some(ARM_B))
        .map(|x| (x.first().bench_tag.as_str(), x))
        .collect();
    let mut seen = BTreeSet::new();
    for xa in all.iter().filter(|x| arm(x).as_deref() == Some(ARM_A)) {
        let tag = xa.first().bench_tag.as_str();
        seen.insert(tag);
        let Some(xb) = b_of.get(tag) else {
            c.only_a.push(tag.to_string());
            continue;
        };
        let (pa, pb) = pairs_of(&xa.reps, &xb.reps);
        for (reads, rows, per_sec) in [
            (false, &mut c.rows, "ops/s"),
            (true, &mut c.read_rows, "reads/s"),
        ] {
            let (Some(fa), Some(fb)) = (figures(&pa, reads), figures(&pb, reads)) else {
                continue;
            };
            let mut r = paired_row(tag, (fa, fb), (&pa, &pb), reads, t, per_sec);
            r.explanation = (!reads).then(|| explain::explain(&pa, &pb)).flatten();
            rows.push(r);
        }
        c.counts.extend(counts::count_row(tag, &pa, &pb));
        c.interference
            .extend(interference::Interference::of(tag, &pa, &pb));
        c.readers
            .extend(readers::ReaderRow::of(tag, (&pa, &pb), 0.0));
        c.rows.extend(roles::rows((&pa, &pb), true, (t, 0.0)));
        if let (Some(a), Some(b)) = (io_figures(&pa), io_figures(&pb)) {
            c.io_rows.push(IoRow {
                cell: tag.to_string(),
                a,
                b,
            });
        }
    }
    c.only_b = b_of
        .keys()
        .filter(|k| !seen.contains(*k))
        .map(|k| k.to_string())
        .collect();
    c
}

/// The pairs of records: the repetitions both arms have, the last record of each (a
/// repetition recorded twice, e.g. after a lone half of a pair was kept, counts once).
pub fn pairs_of<'a>(a: &[&'a Record], b: &[&'a Record]) -> (Vec<&'a Record>, Vec<&'a Record>) {
    let last = |v: &[&'a Record]| -> BTreeMap<u32, &'a Record> {
        v.iter().map(|r| (r.repetition, *r)).collect()
    };
    let (la, lb) = (last(a), last(b));
    la.iter()
        .filter_map(|(rep, ra)| lb.get(rep).map(|rb| (*ra, *rb)))
        .unzip()
}

/// Wall seconds of a record's run, copies and verification included (`wall_ms`); of
/// records without it, from its start to its end.
pub fn wall_secs(r: &Record) -> f64 {
    r.attached
        .wall_ms
        .map_or_else(|| run_secs(r), |ms| ms / 1000.0)
}

/// Wall seconds of a record's run, from its start to its end.
pub fn run_secs(r: &Record) -> f64 {
    let t = |s: &str| chrono::DateTime::parse_from_rfc3339(s).ok();
    match (t(&r.started_at), t(&r.finished_at)) {
        (Some(a), Some(b)) => (b - a).num_milliseconds().max(0) as f64 / 1000.0,
        _ => 0.0,
    }
}

/// What a cell's runs with pairs formed inside them add up to: their crossovers' sums
/// (`stats::paired::crossovers`), of its operations or of a mixed cell's reads; the pilot's
/// crossovers apart when `--precision` fixed the count after a pilot; the pairs and the runs
/// behind them.
#[derive(Debug, Clone, PartialEq)]
pub struct Inside {
    pub blocks: Vec<Batch>,
    pub pilot: Option<Vec<Batch>>,
    pub pairs: usize,
    pub runs: usize,
}

/// The records' repetitions, in the order given.
fn reps(pa: &[&Record]) -> Vec<u32> {
    pa.iter().map(|r| r.repetition).collect()
}

/// The runs of a cell whose pairs formed inside them (records in pairs, A's and B's of each
/// repetition, from [`pairs_of`]), summed crossover by crossover. `None` unless every record
/// carries its units.
pub fn inside_batches(pa: &[&Record], pb: &[&Record], reads: bool) -> Option<Inside> {
    pa.first()?.paired.as_ref()?;
    let pilot = pa
        .iter()
        .chain(pb)
        .filter_map(|r| r.paired.as_ref()?.pilot_repetitions)
        .max();
    let mut runs = Vec::new();
    let mut pairs = 0;
    for (ra, rb) in pa.iter().zip(pb) {
        let (ua, ub) = (ra.paired.as_ref()?, rb.paired.as_ref()?);
        let (ua, ub) = if reads {
            (ua.reads(), ub.reads())
        } else {
            (ua.ops(), ub.ops())
        };
        // A run without units of this kind (a mixed cell's reads) is no observation.
        let run = (!ua.is_empty() && !ub.is_empty()).then(|| run_batch(&ua, &ub));
        pairs += run.map_or(0, |_| ua.len().min(ub.len()));
        runs.push(run);
    }
    let mut inside = Inside {
        blocks: Vec::new(),
        pilot: pilot.map(|_| Vec::new()),
        pairs,
        runs: runs.iter().flatten().count(),
    };
    for [i, j] in crossovers(&reps(pa)) {
        let (Some(x), Some(y)) = (runs[i], runs[j]) else {
            continue;
        };
        let block = x.plus(y);
        if let (Some(p), Some(before)) = (pilot, inside.pilot.as_mut())
            && pa[j].repetition <= p
        {
            before.push(block);
        }
        inside.blocks.push(block);
    }
    Some(inside)
}

/// A row of an A/B comparison: from pairs inside the runs when the records carry them,
/// else from pairs of whole runs.
pub(super) fn paired_row(
    cell: &str,
    (fa, fb): (Figures, Figures),
    (pa, pb): (&[&Record], &[&Record]),
    reads: bool,
    t: f64,
    per_sec: &'static str,
) -> Row {
    let secs: f64 = pa.iter().chain(pb).map(|r| wall_secs(r)).sum();
    if let Some(inside) = inside_batches(pa, pb, reads) {
        let kind = pa[0].paired.as_ref().map(|p| p.pairing);
        let per_op = kind.is_some_and(|k| k.per_operation(pa[0].mode == ModeKind::Continuous));
        // Paired runs run both arms at once: their records share one wall time.
        let secs: f64 = pa.iter().map(|r| wall_secs(r)).sum();
        // A test needs as many crossovers as an unpaired one needs repetitions.
        let enough = inside.blocks.len() >= MIN_REPETITIONS;
        let throughput = enough
            .then(|| throughput_ratio(&inside.blocks, inside.pilot.as_deref()))
            .flatten();
        // Medians run by run, crossover by crossover, where a unit is one operation; p99 has
        // no paired test.
        let p50 = (enough && per_op && !reads)
            .then(|| {
                let runs: Vec<(Vec<Unit>, Vec<Unit>)> = pa
                    .iter()
                    .zip(pb)
                    .map(|(a, b)| {
                        let units = |r: &Record| r.paired.as_ref().map(|p| p.ops());
                        (units(a).unwrap_or_default(), units(b).unwrap_or_default())
                    })
                    .collect();
                let refs: Vec<(&[Unit], &[Unit])> =
                    runs.iter().map(|(a, b)| (&a[..], &b[..])).collect();
                median_ratio(&refs, &crossovers(&reps(pa)))
            })
            .flatten();
        let tests = [throughput, p50, None];
        let ratios = estimates(&tests, median_ratios(&fa, &fb));
        let mut r = row(cell, (fa, fb), tests, ratios, t, per_sec);
        r.pairs = Some(PairsBehind {
            pairing: kind.map_or("inside", PairingKind::as_str),
            pairs: inside.pairs,
            runs: inside.runs,
            units: inside.blocks.len(),
            crossover: true,
            secs,
        });
        return r;
    }
    // Whole runs of bench ab's arms alternate their order (A B, then B A): crossovers. Runs
    // of a plan's builds rotate in one order: each pair on its own.
    let reps = reps(pa);
    let units = match pa.iter().chain(pb).all(|r| r.arm.is_some()) {
        true => crossovers(&reps),
        false => singles(reps.len()),
    };
    run_pairs_row(cell, (fa, fb), (reps.len(), &units), secs, t, per_sec)
}

/// A row of `runs` pairs of whole runs (repetition `i` of A with repetition `i` of B): the
/// paired t interval on their log ratios over `blocks` (each a crossover of two pairs, or one
/// pair on its own twice), figure by figure.
pub(super) fn run_pairs_row(
    cell: &str,
    (fa, fb): (Figures, Figures),
    (runs, blocks): (usize, &[[usize; 2]]),
    secs: f64,
    t: f64,
    per_sec: &'static str,
) -> Row {
    let enough = blocks.len() >= MIN_REPETITIONS;
    let logs = |i: usize| -> Vec<Option<f64>> {
        fa.values[i]
            .iter()
            .zip(&fb.values[i])
            .map(|(&x, &y)| (x > 0.0 && y > 0.0).then(|| (y / x).ln()))
            .collect()
    };
    let tests = std::array::from_fn(|i| {
        let enough = enough && fa.testable(i) && fb.testable(i);
        enough.then(|| crossover_log(&logs(i), blocks)).flatten()
    });
    // Untested, the geometric mean of the pairs' ratios all the same (as a test would).
    let untested = std::array::from_fn(|i| {
        let l: Option<Vec<f64>> = logs(i).into_iter().collect();
        l.filter(|l| !l.is_empty())
            .map(|l| (l.iter().sum::<f64>() / l.len() as f64).exp())
    });
    let ratios = estimates(&tests, untested);
    let mut r = row(cell, (fa, fb), tests, ratios, t, per_sec);
    r.pairs = Some(PairsBehind {
        pairing: "runs",
        pairs: runs,
        runs,
        units: blocks.len(),
        crossover: blocks.iter().any(|[i, j]| i != j),
        secs,
    });
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::{lockstep, reps};

    #[test]
    fn ab_results_are_compared_pair_by_pair() {
        // Drift over time: each pair B is 20 % slower than its A; six pairs of whole runs,
        // three crossovers.
        let a = reps(&[100.0, 90.0, 80.0, 70.0, 60.0, 50.0], Some("A"));
        let b = reps(&[80.0, 72.5, 64.0, 55.5, 48.0, 40.5], Some("B"));
        let records: Vec<Record> = a.into_iter().chain(b).collect();
        let c = paired(&records, 10.0);
        assert!(c.paired);
        assert_eq!(c.rows.len(), 1);
        let t = c.rows[0].tests[0].unwrap();
        assert!(t.ci.0 < 0.8 && 0.8 < t.ci.1 && t.ci.1 < 0.9, "{t:?}");
        assert_eq!(c.regressions(), 1);
    }

    #[test]
    fn pairs_inside_runs_give_the_pooled_ratio_inside_its_interval() {
        // B 8 % slower on every operation: throughput ratio 1/1.08, p50 ratio 1.08.
        let records = lockstep(6, 60, 1.08);
        let c = paired(&records, 5.0);
        let r = &c.rows[0];
        let t = r.tests[0].unwrap();
        assert!((t.ratio - 1.0 / 1.08).abs() < 0.002, "{t:?}");
        assert_eq!(
            r.ratios[0],
            Some(t.ratio),
            "the printed ratio is the estimate"
        );
        assert!(t.ci.0 <= t.ratio && t.ratio <= t.ci.1);
        let p50 = r.tests[1].unwrap();
        assert!((p50.ratio - 1.08).abs() < 0.03, "{p50:?}");
        assert!(r.tests[2].is_none(), "p99 has no paired test");
        assert_eq!(r.changes[0], Change::Worse);
        let p = r.pairs.as_ref().unwrap();
        assert_eq!(
            (p.pairing, p.pairs, p.runs, p.units),
            ("lockstep", 360, 6, 3)
        );
        assert!(
            r.verdict().starts_with("REGRESSION (ops/s -7.4%"),
            "{}",
            r.verdict()
        );
        // Identical arms but for B's own noise: within noise.
        let c = paired(&lockstep(6, 60, 1.0), 5.0);
        assert_eq!(c.rows[0].verdict(), "within noise");
        // Too few runs for a test: no verdict, said so.
        let c = paired(&lockstep(2, 30, 1.5), 5.0);
        assert_eq!(
            c.rows[0].verdict(),
            "no verdict (2 runs, 1 crossover; a test needs 3)"
        );
    }

    #[test]
    fn paired_runs_print_their_own_estimate() {
        // Pairs of runs whose ratio of medians (0.97) differs from the pairs' geometric mean.
        let a = reps(&[100.0, 50.0, 80.0, 120.0, 90.0, 70.0], Some("A"));
        let b = reps(&[110.0, 60.0, 78.0, 116.0, 100.0, 72.0], Some("B"));
        let records: Vec<Record> = a.into_iter().chain(b).collect();
        let c = paired(&records, 10.0);
        let r = &c.rows[0];
        let t = r.tests[0].unwrap();
        assert_eq!(r.ratios[0], Some(t.ratio));
        assert!(t.ci.0 <= t.ratio && t.ratio <= t.ci.1);
        let p = r.pairs.as_ref().unwrap();
        assert_eq!(
            (p.pairing, p.runs, p.units, p.crossover),
            ("runs", 6, 3, true)
        );
        // Five pairs: two crossovers, the fifth waiting for its partner; no test.
        let c = paired(
            &records[..5]
                .iter()
                .chain(&records[6..11])
                .cloned()
                .collect::<Vec<_>>(),
            10.0,
        );
        assert_eq!(
            c.rows[0].verdict(),
            "no verdict (5 runs, 2 crossovers; a test needs 3)"
        );
    }
}
