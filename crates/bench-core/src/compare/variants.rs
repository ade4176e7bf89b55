//! `bench compare DIR --variant V --against A`: variants of one results directory against
//! one another. A variant is named by the values of some of its dimensions: a build of the
//! plan's `[builds]` (`cow`), a value of `[matrix.properties]` (`shards=1000`), or index
//! maintenance (`inline_index`, `no_index`); several, comma-separated. Every cell of the
//! baseline `A` meets the cell that differs from it in those dimensions only.
//!
//! Variants of builds and properties run each repetition of a cell side by side, in
//! rotating order: their runs pair up repetition by repetition (the paired t-test on log
//! ratios, as `bench ab --pairing runs`). Where they did not run side by side (index
//! maintenance, whose cells have their own golden, or a variant added to a finished
//! directory), the cells are compared as separate runs, with `--between-runs` added.

use std::collections::BTreeMap;

use super::paired::paired_row;
use super::{Comparison, MIN_REPETITIONS, figures, io_figures, pairs_of, unpaired_row};
use crate::export::{CellRecords, Record, cells};

/// A dimension a variant is named by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Dim {
    Build,
    Index,
    Property(String),
}

/// A variant as given on the command line: a value for each of some dimensions.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Selector(pub Vec<(Dim, String)>);

impl Selector {
    /// `cow`, `shards=1000`, `no_index`, or several of them comma-separated.
    pub fn parse(s: &str) -> Result<Selector, String> {
        let mut v: Vec<(Dim, String)> = Vec::new();
        for part in s.split(',').map(str::trim) {
            if part.is_empty() {
                return Err(format!(
                    "`{s}` has an empty part; name a build, key=value or an index variant"
                ));
            }
            let (dim, value) = match part.split_once('=') {
                Some((k, val)) => (Dim::Property(k.trim().to_string()), val.trim().to_string()),
                None if part == "inline_index" || part == "no_index" => {
                    (Dim::Index, part.to_string())
                }
                None => (Dim::Build, part.to_string()),
            };
            if v.iter().any(|(d, _)| *d == dim) {
                return Err(format!("`{s}` gives {} twice", dim_name(&dim)));
            }
            v.push((dim, value));
        }
        v.sort();
        Ok(Selector(v))
    }

    fn dims(&self) -> Vec<&Dim> {
        self.0.iter().map(|(d, _)| d).collect()
    }

    fn matches(&self, r: &Record) -> bool {
        let c = coordinates(r);
        self.0.iter().all(|(d, v)| c.get(d) == Some(v))
    }
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(d, v)| match d {
                Dim::Property(k) => format!("{k}={v}"),
                _ => v.clone(),
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

fn dim_name(d: &Dim) -> String {
    match d {
        Dim::Build => "a build".into(),
        Dim::Index => "the index variant".into(),
        Dim::Property(k) => format!("property {k}"),
    }
}

/// Where a record's cell lies in the dimensions of its plan: its build (if the plan named
/// builds), its index variant, and its values of `[matrix.properties]`.
fn coordinates(r: &Record) -> BTreeMap<Dim, String> {
    let mut c = BTreeMap::new();
    if let Some(b) = &r.build {
        c.insert(Dim::Build, b.clone());
    }
    c.insert(Dim::Index, r.variant.to_string());
    for (k, v) in varied(r) {
        c.insert(Dim::Property(k.to_string()), v.to_string());
    }
    c
}

/// A record's values of `[matrix.properties]`, from its variant name.
fn varied(r: &Record) -> Vec<(&str, &str)> {
    r.variant_name
        .as_deref()
        .map(|n| n.split('/').filter_map(|p| p.split_once('=')).collect())
        .unwrap_or_default()
}

/// The id a record's cell shares with the cells that differ from it in build and
/// properties only (the reference's tag): its id without their suffix.
fn shape_id(r: &Record) -> &str {
    let mut suffix = String::new();
    if let Some(b) = &r.build {
        suffix.push_str(&format!("_{b}"));
    }
    for (k, v) in varied(r) {
        suffix.push_str(&format!("_{k}-{v}"));
    }
    r.bench_tag.strip_suffix(&suffix).unwrap_or(&r.bench_tag)
}

/// What must be equal for two cells to meet, given the dimensions compared: everything
/// else about them.
fn shape(r: &Record, dims: &[&Dim]) -> String {
    let mut p: Vec<(&str, String)> = super::parameters(r)
        .into_iter()
        .filter(|(k, _)| {
            !(*k == "variant" && dims.contains(&&Dim::Index)
                || *k == "commit_retries"
                    && dims.contains(&&Dim::Property("commit_retries".into())))
        })
        .collect();
    for (d, v) in coordinates(r) {
        if !dims.contains(&&d) {
            p.push(("dim", format!("{d:?}={v}")));
        }
    }
    format!("{p:?}")
}

/// A row's name: the reference's tag and the values of the dimensions not compared.
fn row_name(r: &Record, dims: &[&Dim]) -> String {
    let mut name = shape_id(r).to_string();
    if let Some(b) = r.build.as_ref().filter(|_| !dims.contains(&&Dim::Build)) {
        name.push_str(&format!(" {b}"));
    }
    for (k, v) in varied(r) {
        if !dims.contains(&&Dim::Property(k.to_string())) {
            name.push_str(&format!(" {k}={v}"));
        }
    }
    name
}

/// Whether two cells ran side by side: the same shape, on one host (by one sweep: shards
/// on other machines interleave in time without running side by side), each repetition of
/// one beside the same repetition of the other (nothing of either in between), as the run
/// loop rotates builds and properties.
fn side_by_side(a: &[&Record], b: &[&Record]) -> bool {
    if a.is_empty() || shape_id(a[0]) != shape_id(b[0]) || a.len() != b.len() {
        return false;
    }
    if a.iter().chain(b).any(|r| r.hostname != a[0].hostname) {
        return false;
    }
    let mut all: Vec<(&str, u32, bool)> = a
        .iter()
        .map(|r| (r.started_at.as_str(), r.repetition, false))
        .chain(
            b.iter()
                .map(|r| (r.started_at.as_str(), r.repetition, true)),
        )
        .collect();
    all.sort();
    all.chunks(2)
        .all(|w| w.len() == 2 && w[0].1 == w[1].1 && w[0].2 != w[1].2)
}

/// The comparisons of variants against `against`: of `variant`, or of every other variant
/// in the same dimensions when `None`; each with its name, in the order found.
pub fn compare_variants(
    records: &[Record],
    against: &Selector,
    variant: Option<&Selector>,
    threshold_pct: f64,
    between_runs_pct: f64,
) -> Result<Vec<(Selector, Comparison)>, String> {
    if records.iter().any(|r| r.arm.is_some()) {
        return Err(
            "these are the two arms of a `bench ab`: compare them without --against \
                    (arm B against arm A, pair by pair)"
                .into(),
        );
    }
    let dims = against.dims();
    if let Some(v) = variant
        && v.dims() != dims
    {
        return Err(format!(
            "--variant {v} and --against {against} name different dimensions; name the same \
             ones (e.g. --variant cow --against main, or --variant shards=1000 --against \
             shards=1)"
        ));
    }
    let all = cells(records);
    let present = present(&all, &dims);
    let candidates = candidates(&present, against, variant)?;
    let by_shape: BTreeMap<(String, Selector), &CellRecords<'_>> = all
        .iter()
        .filter_map(|c| {
            let s = present.iter().find(|s| s.matches(c.first()))?;
            Some(((shape(c.first(), &dims), s.clone()), c))
        })
        .collect();
    let mut out = Vec::new();
    for v in candidates {
        let mut pairs = Vec::new();
        let mut only_a = Vec::new();
        for xa in all.iter().filter(|c| against.matches(c.first())) {
            match by_shape.get(&(shape(xa.first(), &dims), v.clone())) {
                Some(xb) => pairs.push((xa, *xb)),
                None => only_a.push(xa.first().bench_tag.clone()),
            }
        }
        let c = comparison(&pairs, only_a, &dims, (threshold_pct, between_runs_pct));
        out.push((v, c));
    }
    Ok(out)
}

/// The variants the records hold in these dimensions, in the order found.
fn present(all: &[CellRecords<'_>], dims: &[&Dim]) -> Vec<Selector> {
    let mut v: Vec<Selector> = Vec::new();
    for c in all {
        let co = coordinates(c.first());
        let sel: Option<Vec<(Dim, String)>> = dims
            .iter()
            .map(|d| co.get(d).map(|x| ((*d).clone(), x.clone())))
            .collect();
        if let Some(s) = sel.map(Selector)
            && !v.contains(&s)
        {
            v.push(s);
        }
    }
    v
}

/// The variants to compare with `against`: `variant`, or every other one there is; an
/// unknown one is named with those there are.
fn candidates(
    present: &[Selector],
    against: &Selector,
    variant: Option<&Selector>,
) -> Result<Vec<Selector>, String> {
    let known = || {
        present
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !present.contains(against) {
        return Err(format!(
            "no cell is of variant `{against}`{}",
            if present.is_empty() {
                String::from(": the records have no such dimension")
            } else {
                format!("; the directory has {}", known())
            }
        ));
    }
    let candidates: Vec<Selector> = match variant {
        Some(v) if !present.contains(v) => {
            return Err(format!(
                "no cell is of variant `{v}`; the directory has {}",
                known()
            ));
        }
        Some(v) if v == against => {
            return Err(format!("--variant and --against both name `{v}`"));
        }
        Some(v) => vec![v.clone()],
        None => present.iter().filter(|s| *s != against).cloned().collect(),
    };
    if candidates.is_empty() {
        return Err(format!(
            "the directory has no variant other than `{against}` in those dimensions"
        ));
    }
    Ok(candidates)
}

/// One variant against the baseline, cell by cell: paired run by run where every pair of
/// cells ran side by side, else as separate runs (`between_runs_pct` added).
fn comparison(
    pairs: &[(&CellRecords<'_>, &CellRecords<'_>)],
    only_a: Vec<String>,
    dims: &[&Dim],
    (threshold_pct, between_runs_pct): (f64, f64),
) -> Comparison {
    let paired = !pairs.is_empty() && pairs.iter().all(|(a, b)| side_by_side(&a.reps, &b.reps));
    let t = threshold_pct / 100.0;
    let side = |b: bool| {
        (pairs.iter())
            .flat_map(|(a, x)| if b { &x.reps } else { &a.reps })
            .flat_map(|r| r.planted.iter().cloned())
            .collect()
    };
    let mut c = Comparison {
        threshold_pct,
        between_runs_pct: if paired { 0.0 } else { between_runs_pct },
        paired,
        only_a,
        planted: [side(false), side(true)],
        ..Comparison::default()
    };
    for (xa, xb) in pairs {
        let name = row_name(xa.first(), dims);
        for (reads, per_sec) in [(false, "ops/s"), (true, "reads/s")] {
            let (Some(fa), Some(fb)) = (figures(&xa.reps, reads), figures(&xb.reps, reads)) else {
                continue;
            };
            let row = if paired {
                let (pa, pb) = pairs_of(&xa.reps, &xb.reps);
                let (Some(fa), Some(fb)) = (figures(&pa, reads), figures(&pb, reads)) else {
                    continue;
                };
                paired_row(&name, (fa, fb), (&pa, &pb), reads, t, per_sec)
            } else {
                unpaired_row(&name, (fa, fb), (t, between_runs_pct / 100.0), per_sec)
            };
            if reads {
                c.read_rows.push(row);
            } else {
                c.rows.push(row);
            }
        }
        if let (Some(a), Some(b)) = (io_figures(&xa.reps), io_figures(&xb.reps)) {
            c.io_rows.push(super::IoRow { cell: name, a, b });
        }
    }
    c
}

/// The variants ordered by their throughput against the baseline: the geometric mean of
/// their cells' ratios, with the range of the cells' intervals and how many cells moved
/// significantly. Lines of text, best first.
pub fn ranking(comparisons: &[(Selector, Comparison)], against: &Selector) -> Vec<String> {
    let mut ranked: Vec<(f64, String)> = comparisons
        .iter()
        .filter_map(|(v, c)| {
            let logs: Vec<f64> = c
                .rows
                .iter()
                .filter_map(|r| r.ratios[0])
                .filter(|x| *x > 0.0)
                .map(f64::ln)
                .collect();
            if logs.is_empty() {
                return None;
            }
            let g = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
            let cis: Vec<(f64, f64)> = c
                .rows
                .iter()
                .filter_map(|r| r.tests[0])
                .map(|t| t.ci)
                .collect();
            let range = if cis.is_empty() {
                format!("no interval: fewer than {MIN_REPETITIONS} repetitions")
            } else {
                let lo = cis.iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
                let hi = cis.iter().map(|x| x.1).fold(f64::NEG_INFINITY, f64::max);
                format!("cells' 95 % intervals within ×{lo:.3}..×{hi:.3}")
            };
            let worse = c
                .rows
                .iter()
                .filter(|r| r.changes[0] == super::Change::Worse)
                .count();
            let better = c
                .rows
                .iter()
                .filter(|r| r.changes[0] == super::Change::Better)
                .count();
            Some((
                g,
                format!(
                    "{v}: throughput ×{g:.3} of {against} ({range}; of {} cells {worse} \
                     significantly slower, {better} faster)",
                    c.rows.len()
                ),
            ))
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    ranked.into_iter().map(|(_, s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::{ModeKind, Variant};

    /// Three repetitions of a continuous cell of `build` (with `prop` varied), throughput
    /// `tps` times a little noise, started in rotation with its siblings.
    fn runs(build: &str, prop: &str, tps: f64, slot: usize) -> Vec<Record> {
        (1..=3u32)
            .map(|rep| {
                let base = "cont_inline_false_rows_100";
                let mut r = record(ModeKind::Continuous, Variant::NoIndex, 100, 1, base);
                r.bench_tag = format!("{base}_{build}_k-{prop}");
                r.cell_key = r.bench_tag.clone();
                r.build = Some(build.into());
                r.variant_name = Some(format!("{build}/no_index/k={prop}"));
                r.repetition = rep;
                r.throughput_ops_per_sec = tps * (1.0 + 0.01 * f64::from(rep % 2));
                r.started_at = format!("2026-01-01T00:{:02}:{slot:02}Z", rep);
                r
            })
            .collect()
    }

    fn directory() -> Vec<Record> {
        let mut all = Vec::new();
        for (slot, (b, tps)) in [("main", 100.0), ("slow5", 60.0), ("slow20", 25.0)]
            .into_iter()
            .enumerate()
        {
            all.extend(runs(b, "0", tps, slot * 2));
            all.extend(runs(b, "1", tps * 1.02, slot * 2 + 1));
        }
        all
    }

    #[test]
    fn builds_meet_cell_by_cell_paired_and_rank_in_order() {
        let recs = directory();
        let against = Selector::parse("main").unwrap();
        let cs = compare_variants(&recs, &against, None, 10.0, 100.0).unwrap();
        assert_eq!(cs.len(), 2);
        for (v, c) in &cs {
            assert!(c.paired, "{v}: rotated runs pair up");
            assert_eq!(c.rows.len(), 2, "one row per property value");
            assert!(c.rows.iter().all(|r| r.regressed()), "{v}: {:?}", c.rows);
            assert!(c.rows[0].cell.contains("k=0"), "{}", c.rows[0].cell);
        }
        let rank = ranking(&cs, &against);
        assert!(rank[0].starts_with("slow5: throughput ×0.6"), "{rank:?}");
        assert!(rank[1].starts_with("slow20: throughput ×0.2"), "{rank:?}");
        // A property against another, builds held equal.
        let k = compare_variants(
            &recs,
            &Selector::parse("k=0").unwrap(),
            Some(&Selector::parse("k=1").unwrap()),
            10.0,
            100.0,
        )
        .unwrap();
        assert_eq!(k[0].1.rows.len(), 3, "one row per build");
        assert!(k[0].1.rows.iter().all(|r| !r.regressed()));
    }

    #[test]
    fn unknown_or_mismatched_variants_are_named() {
        let recs = directory();
        let sel = |s: &str| Selector::parse(s).unwrap();
        let err = compare_variants(&recs, &sel("cow"), None, 10.0, 100.0).unwrap_err();
        assert!(
            err.contains("the directory has main, slow20, slow5"),
            "{err}"
        );
        let err =
            compare_variants(&recs, &sel("main"), Some(&sel("k=1")), 10.0, 100.0).unwrap_err();
        assert!(err.contains("different dimensions"), "{err}");
        assert!(Selector::parse("main,slow5").is_err());
    }

    /// `--variant slow5 --against main`, at ±10 % with a spread of 100 % between runs.
    fn slow5_against_main(recs: &[Record]) -> Vec<(Selector, Comparison)> {
        let sel = |s: &str| Selector::parse(s).unwrap();
        compare_variants(recs, &sel("main"), Some(&sel("slow5")), 10.0, 100.0).unwrap()
    }

    /// Shards merged from two machines: their runs interleave in time, but one machine's
    /// builds never ran beside the other's; a difference between the machines is no pair.
    #[test]
    fn variants_from_different_hosts_are_separate_runs() {
        let mut recs = directory();
        for r in recs
            .iter_mut()
            .filter(|r| r.build.as_deref() == Some("slow5"))
        {
            r.hostname = "other-machine".into();
        }
        let cs = slow5_against_main(&recs);
        assert!(!cs[0].1.paired, "interleaved in time, but on two hosts");
        assert_eq!(cs[0].1.between_runs_pct, 100.0);
    }

    #[test]
    fn variants_not_run_side_by_side_are_separate_runs() {
        let mut recs = directory();
        // slow5 ran after everything of main: no pairs.
        for r in recs
            .iter_mut()
            .filter(|r| r.build.as_deref() == Some("slow5"))
        {
            r.started_at = r.started_at.replace("2026-01-01", "2026-01-02");
        }
        let cs = slow5_against_main(&recs);
        assert!(!cs[0].1.paired);
        assert_eq!(cs[0].1.between_runs_pct, 100.0);
    }
}
