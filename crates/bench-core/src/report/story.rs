//! The report's first paragraph: what the sweep shows, in up to three sentences drawn from
//! its numbers (medians over repetitions): how one writer's commit latency grows with the
//! catalog, what the variants cost against each other at the largest size, and what more
//! writers do to throughput, latency and failures.

use std::collections::{BTreeMap, BTreeSet};

use crate::export::{CellRecords, Record};
use crate::plan::ModeKind;

/// A latency in ms, to the precision a reader compares.
fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0} ms")
    } else if x >= 10.0 {
        format!("{x:.1} ms")
    } else {
        format!("{x:.2} ms")
    }
}

/// A throughput, to the precision a reader compares: 0.73 is not "1", nor 0.27 "0".
fn per_sec(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0}")
    } else if x >= 1.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A row count with its thousands apart (10,000).
fn rows(n: u64) -> String {
    crate::sweep::requests::group(n)
}

/// How many times `b` is `a`, as a reader says it.
fn times(a: f64, b: f64) -> String {
    let r = b / a;
    if r >= 10.0 {
        format!("×{r:.0}")
    } else {
        format!("×{r:.1}")
    }
}

/// Closed-loop cells of a mode, outside an A/B set.
fn of_mode<'a, 'b>(cells: &'b [CellRecords<'a>], mode: ModeKind) -> Vec<&'b CellRecords<'a>> {
    (cells.iter())
        .filter(|c| c.first().mode == mode && c.first().open_loop.offered_ops_per_sec.is_none())
        .filter(|c| c.reps.iter().all(|r| r.total_operations > 0))
        .collect()
}

/// Fewer repetitions than this give a cell no interval worth the name.
const FIRM_REPETITIONS: usize = 3;

/// Fewer operations than this make a median that moves with one of them.
const FIRM_MEDIAN: u64 = 20;

const P50: fn(&Record) -> f64 = |r| r.p50_latency_ms;

/// One writer against the catalog's size: each variant's p50 at its smallest and largest
/// size.
fn growth(cont: &[&CellRecords<'_>]) -> Option<String> {
    let mut by: BTreeMap<&str, BTreeMap<u64, f64>> = BTreeMap::new();
    for c in cont {
        (by.entry(c.first().variant_label()).or_default())
            .insert(c.first().initial_entries, c.med(P50));
    }
    let parts: Vec<String> = (by.iter())
        .filter(|(_, m)| m.len() >= 2)
        .map(|(v, m)| {
            let ((s0, a), (s1, b)) = (m.first_key_value().unwrap(), m.last_key_value().unwrap());
            format!(
                "from {} at {} rows to {} at {} with {v} ({})",
                ms(*a),
                rows(*s0),
                ms(*b),
                rows(*s1),
                times(*a, *b)
            )
        })
        .collect();
    (!parts.is_empty()).then(|| format!("One writer's commit p50 goes {}.", parts.join(", and ")))
}

/// The variants against each other at the largest size one writer measured (else the
/// fewest writers): the fastest variant's p50 beside each other's.
fn variants(cells: &[&CellRecords<'_>]) -> Option<String> {
    let size = cells.iter().map(|c| c.first().initial_entries).max()?;
    let writers = (cells.iter())
        .filter(|c| c.first().initial_entries == size)
        .map(|c| c.first().concurrency)
        .min()?;
    let mut p50: BTreeMap<&str, f64> = BTreeMap::new();
    for c in cells {
        let r = c.first();
        if r.initial_entries == size && r.concurrency == writers {
            p50.insert(r.variant_label(), c.med(P50));
        }
    }
    let (fast, base) = p50.iter().min_by(|a, b| a.1.total_cmp(b.1))?;
    let others: Vec<String> = (p50.iter())
        .filter(|(v, _)| *v != fast)
        .map(|(v, x)| {
            format!(
                "{v} takes {} ({} against {})",
                times(*base, *x),
                ms(*x),
                ms(*base)
            )
        })
        .collect();
    (!others.is_empty()).then(|| {
        let who = match writers {
            1 => "one writer".to_string(),
            n => format!("{n} writers"),
        };
        format!(
            "At {} rows ({who}), {} is the fastest variant: {}.",
            rows(size),
            fast,
            others.join("; ")
        )
    })
}

/// Writers at the largest size: per variant, total throughput and p99 from the fewest to
/// the most writers, and the failed operations at the most.
fn writers(conc: &[&CellRecords<'_>]) -> Option<String> {
    let size = conc.iter().map(|c| c.first().initial_entries).max()?;
    let mut by: BTreeMap<&str, BTreeMap<u32, &CellRecords<'_>>> = BTreeMap::new();
    for c in conc.iter().filter(|c| c.first().initial_entries == size) {
        (by.entry(c.first().variant_label()).or_default()).insert(c.first().concurrency, c);
    }
    let counts: BTreeSet<u32> = by.values().flat_map(|m| m.keys().copied()).collect();
    let (lo, hi) = (*counts.first()?, *counts.last()?);
    if lo == hi {
        return None;
    }
    let parts: Vec<String> = (by.iter())
        .filter_map(|(v, m)| {
            let (a, b) = (m.get(&lo)?, m.get(&hi)?);
            let tps = |c: &CellRecords<'_>| c.med(|r| r.throughput_ops_per_sec);
            let p99 = |c: &CellRecords<'_>| c.med(|r| r.p99_latency_ms);
            let failed: u64 = b.reps.iter().map(|r| r.errors).sum();
            let tried: u64 = b.reps.iter().map(|r| r.errors + r.total_operations).sum();
            let fail = match failed {
                0 => String::new(),
                n => format!(", {n} of {tried} operations failing"),
            };
            Some(format!(
                "{v} from {} to {} ops/s with p99 from {} to {}{fail}",
                per_sec(tps(a)),
                per_sec(tps(b)),
                ms(p99(a)),
                ms(p99(b)),
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "From {lo} to {hi} writers at {} rows, total throughput goes {}.",
            rows(size),
            parts.join("; ")
        )
    })
}

/// What the sweep shows, as a paragraph (empty when its cells say nothing comparable: one
/// cell, or an A/B set, whose own section speaks).
pub fn paragraph(cells: &[CellRecords<'_>]) -> String {
    if cells.iter().any(|c| c.first().arm.is_some()) {
        return String::new();
    }
    let cont = of_mode(cells, ModeKind::Continuous);
    let conc = of_mode(cells, ModeKind::Concurrent);
    let sentences: Vec<String> = [
        growth(&cont),
        variants(if cont.is_empty() { &conc } else { &cont }),
        writers(&conc),
    ]
    .into_iter()
    .flatten()
    .collect();
    if sentences.is_empty() {
        return String::new();
    }
    let fewest = (cont.iter().chain(&conc))
        .flat_map(|c| c.reps.iter().map(|r| r.total_operations))
        .min()
        .unwrap_or(0);
    let rough = match fewest < FIRM_MEDIAN {
        true => format!(
            " These medians rest on as few as {fewest} operations a cell: read them as rough."
        ),
        false => String::new(),
    };
    // Separate runs of one cell differ by tens of percent on a shared machine: without
    // repetitions, a ratio in these sentences may be that alone.
    let reps = (cont.iter().chain(&conc))
        .map(|c| c.reps.len())
        .min()
        .unwrap_or(0);
    let noise = match reps < FIRM_REPETITIONS {
        true => format!(
            " Each cell ran {}: two runs of one cell can differ by tens of percent, so a \
             difference smaller than that may be noise (`run.repetitions = 5` gives each \
             figure an interval).",
            crate::plan::count(reps as u64, "time", "times")
        ),
        false => String::new(),
    };
    format!(
        "**What it shows.** {}{rough}{noise}\n\n",
        sentences.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::cells;
    use crate::export::record::tests::record;
    use crate::plan::{ModeKind::*, Variant::*};

    #[test]
    fn the_paragraph_is_drawn_from_the_cells_numbers() {
        let mut recs = Vec::new();
        for (variant, size, p50) in [
            (InlineIndex, 100, 4.0),
            (InlineIndex, 10_000, 40.0),
            (NoIndex, 100, 2.0),
            (NoIndex, 10_000, 5.0),
        ] {
            let mut r = record(
                Continuous,
                variant,
                size,
                1,
                &format!("cont_{variant}_{size}"),
            );
            r.p50_latency_ms = p50;
            recs.push(r);
        }
        for (c, tps, p99, errors) in [(1, 100.0, 10.0, 0), (8, 60.0, 400.0, 3)] {
            let mut r = record(Concurrent, NoIndex, 10_000, c, &format!("conc_{c}"));
            (r.throughput_ops_per_sec, r.p99_latency_ms, r.errors) = (tps, p99, errors);
            recs.push(r);
        }
        let p = paragraph(&cells(&recs));
        assert!(
            p.contains("from 4.00 ms at 100 rows to 40.0 ms at 10,000 with inline_index (×10)"),
            "{p}"
        );
        assert!(
            p.contains("2.00 ms at 100 rows to 5.00 ms at 10,000 with no_index (×2.5)"),
            "{p}"
        );
        assert!(
            p.contains("At 10,000 rows (one writer), no_index is the fastest variant: inline_index takes ×8.0 (40.0 ms against 5.00 ms)"),
            "{p}"
        );
        assert!(
            p.contains("From 1 to 8 writers at 10,000 rows, total throughput goes no_index from 100 to 60 ops/s with p99 from 10.0 ms to 400 ms, 3 of 13 operations failing"),
            "{p}"
        );
        assert!(p.contains("as few as 10 operations a cell"), "{p}");
        assert!(
            p.contains("Each cell ran 1 time: two runs of one cell"),
            "{p}"
        );
        // With repetitions, no such warning.
        let mut five = Vec::new();
        for rep in 1..=5 {
            for r in &recs {
                let mut r = r.clone();
                (r.repetition, r.total_operations) = (rep, 100);
                five.push(r);
            }
        }
        let p = paragraph(&cells(&five));
        assert!(
            !p.contains("may be noise") && !p.contains("read them as rough"),
            "{p}"
        );
        // A throughput under 1 a second keeps its decimals: never "from 1 to 0 ops/s".
        let slow: Vec<Record> = (recs.iter().cloned())
            .map(|mut r| {
                r.throughput_ops_per_sec /= 100.0;
                r
            })
            .collect();
        let p = paragraph(&cells(&slow));
        assert!(p.contains("no_index from 1.0 to 0.60 ops/s"), "{p}");
        // One cell alone says nothing comparable.
        assert_eq!(paragraph(&cells(&recs[..1])), "");
    }
}
