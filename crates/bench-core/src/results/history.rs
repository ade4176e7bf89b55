//! `bench history`: the rows of a `results` table (bench's and any other publisher's) as
//! series, one per `benchmark_name` and test bed (`test_bed.name`: two machines' results
//! are two series), ordered by `dut.timestamp` then `timestamp`; where each
//! series stepped ([`crate::stats::changepoint`], on each row's `summary.mean`); what to
//! print of them, and a chart of each.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::report::svg::{Chart, Series as Line};
use crate::stats::changepoint::{ChangePoint, Detector};

/// One row of the table, as history reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub id: String,
    pub benchmark_name: String,
    /// `test_bed.name`: the machine that measured.
    pub test_bed: String,
    pub dut_version: String,
    /// Seconds since the epoch.
    pub dut_timestamp: i64,
    /// Seconds since the epoch.
    pub timestamp: i64,
    /// The row's `summary.mean`.
    pub value: f64,
    /// The row's `summary.min` and `summary.max`: its runs' spread.
    pub min: f64,
    pub max: f64,
    pub units: String,
}

/// One benchmark's results in order, and where they stepped.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    /// The test bed whose results these are.
    pub test_bed: String,
    pub units: String,
    pub points: Vec<Point>,
    pub changes: Vec<ChangePoint>,
    /// Exact counts (requests, bytes: [`exact`]): any step that makes them worse is a
    /// regression. Counts of either kind (round trips too) are stepped by a static
    /// threshold ([`counted`]) instead of change points.
    pub exact: bool,
}

pub use crate::glob::Glob;

/// Whether a larger value is better in these units: rates (`operations/second`, `x per
/// second`) and `recall` are; times (`nanoseconds`, lance-bench's default), counts (round
/// trips too) and everything else are not.
pub fn higher_is_better(units: &str) -> bool {
    let u = units.to_ascii_lowercase();
    counted(units).is_none() && (u.contains('/') || u.contains(" per ") || u.contains("recall"))
}

/// How far a count may move and be the same (the units of `bench publish`'s count rows):
/// requests and round trips per operation ±0.5 (a request more in every operation is a
/// change), bytes per operation ±5 % — as `bench compare` judges them. Of these only
/// requests and bytes are exact ([`exact`]); round trips are requests that overlap in time,
/// which the scheduler moves: their steps are found alike, but judged as a time's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    Absolute(f64),
    Relative(f64),
}

/// Whether counts in these units are exact: the same work gives the same count on any
/// machine (requests and bytes per operation; not round trips, nor any time).
pub fn exact(units: &str) -> bool {
    let [requests, _, bytes] = super::publish::COUNT_UNITS;
    units == requests || units == bytes
}

/// The tolerance of a count's units; none for other units.
pub fn counted(units: &str) -> Option<Tolerance> {
    use crate::compare::counts::{BYTES_TOLERANCE, COUNT_TOLERANCE};
    let [requests, trips, bytes] = super::publish::COUNT_UNITS;
    match units {
        u if u == requests || u == trips => Some(Tolerance::Absolute(COUNT_TOLERANCE)),
        u if u == bytes => Some(Tolerance::Relative(BYTES_TOLERANCE)),
        _ => None,
    }
}

/// The steps of a series of exact counts: each result whose every run lies beyond every
/// run of the result before it by more than the tolerance, from the first result after
/// the step (no permutation test: a count does not move with noise; `p` is 0).
pub fn static_changes(points: &[Point], tolerance: Tolerance) -> Vec<ChangePoint> {
    (1..points.len())
        .filter_map(|i| {
            let (prev, cur) = (&points[i - 1], &points[i]);
            let tol = match tolerance {
                Tolerance::Absolute(t) => t,
                Tolerance::Relative(f) => f * prev.value.abs().max(1.0),
            };
            (cur.min > prev.max + tol || cur.max < prev.min - tol).then_some(ChangePoint {
                index: i,
                before: prev.value,
                after: cur.value,
                p: 0.0,
            })
        })
        .collect()
}

impl Series {
    pub fn higher_is_better(&self) -> bool {
        higher_is_better(&self.units)
    }

    /// How much worse `change` made the series, in percent (negative: better).
    pub fn worse_pct(&self, change: &ChangePoint) -> f64 {
        match self.higher_is_better() {
            true => -change.change_pct(),
            false => change.change_pct(),
        }
    }

    /// The newest change point, when it made the series worse by more than `pct` percent;
    /// of exact counts, when it made them worse at all (a request more is a regression,
    /// however small a part of the whole).
    pub fn regressed(&self, pct: f64) -> Option<&ChangePoint> {
        let beyond = if self.exact { 0.0 } else { pct };
        self.changes.last().filter(|c| self.worse_pct(c) > beyond)
    }
}

/// The series of `points` whose names match `pattern` (all without one), one per name and
/// test bed: a row counted once by its id (two publishers of the same results at the same
/// moment may both add it), ordered by `dut_timestamp` then `timestamp`, with their change
/// points (none below the detector's [`Detector::min_results`]).
pub fn series(points: Vec<Point>, pattern: Option<&Glob>, detector: &Detector) -> Vec<Series> {
    let mut seen = BTreeSet::new();
    let mut by_name: BTreeMap<(String, String), Vec<Point>> = BTreeMap::new();
    for p in points {
        if pattern.is_some_and(|g| !g.matches(&p.benchmark_name)) || !seen.insert(p.id.clone()) {
            continue;
        }
        let key = (p.benchmark_name.clone(), p.test_bed.clone());
        by_name.entry(key).or_default().push(p);
    }
    by_name
        .into_iter()
        .map(|((name, test_bed), mut points)| {
            points.sort_by_key(|p| (p.dut_timestamp, p.timestamp));
            let values: Vec<f64> = points.iter().map(|p| p.value).collect();
            let counts = counted(&points[0].units);
            Series {
                units: points[0].units.clone(),
                changes: match counts {
                    Some(t) => static_changes(&points, t),
                    None => detector.detect(&values),
                },
                exact: exact(&points[0].units),
                name,
                test_bed,
                points,
            }
        })
        .collect()
}

/// lance-bench's regression test (`scripts/regression_report.py`), for comparison: the
/// p-value of Student's two-sample t-test (pooled variance, two-sided) of the last 4 values
/// against all older ones; `None` below 6 values, as there.
pub fn last_four_p(values: &[f64]) -> Option<f64> {
    const RECENT: usize = 4;
    if values.len() < RECENT + 2 {
        return None;
    }
    let (older, recent) = values.split_at(values.len() - RECENT);
    let (m1, v1) = crate::stats::mean_var(older);
    let (m2, v2) = crate::stats::mean_var(recent);
    let (n1, n2) = (older.len() as f64, recent.len() as f64);
    let pooled = ((n1 - 1.0) * v1 + (n2 - 1.0) * v2) / (n1 + n2 - 2.0);
    if pooled <= 0.0 {
        return Some(if m1 == m2 { 1.0 } else { 0.0 });
    }
    let t = (m2 - m1) / (pooled * (1.0 / n1 + 1.0 / n2)).sqrt();
    Some(crate::stats::t_two_sided_p(t, n1 + n2 - 2.0))
}

/// When a time was, for people (UTC, to the minute).
fn when(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| secs.to_string())
}

/// A value with a few significant digits.
fn num(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.1}"),
        a if a >= 1.0 => format!("{v:.2}"),
        _ => format!("{v:.4}"),
    }
}

/// A series of exact counts' threshold, for people.
fn tolerance_said(series: &Series) -> String {
    match counted(&series.units) {
        Some(Tolerance::Absolute(t)) => format!("±{t} of the result before"),
        Some(Tolerance::Relative(f)) => format!("±{} % of the result before", f * 100.0),
        None => String::new(),
    }
}

/// One change of a series: where, the means before and after, the change, its p-value (or
/// an exact count's threshold), and whether it made things worse (beyond `fail_pct`).
fn change_line(series: &Series, c: &ChangePoint, fail_pct: Option<f64>) -> String {
    let n = series.points.len();
    let at = &series.points[c.index];
    let verdict = match series.worse_pct(c) {
        w if w > 0.0 => "worse",
        _ => "better",
    };
    let test = match counted(&series.units).is_some() {
        true => format!(
            "every run beyond the result before by more than {}",
            tolerance_said(series)
        ),
        false => format!("p = {:.3}", c.p),
    };
    let beyond = match fail_pct.filter(|&p| series.regressed(p) == Some(c)) {
        Some(_) if series.exact => ", a regression (a count)".to_string(),
        Some(p) => format!(", a regression beyond {p} %"),
        None => String::new(),
    };
    format!(
        "  change at result {} of {n} (dut {}, {}): {} -> {} ({:+.1} %, {test}): {verdict}{beyond}",
        c.index + 1,
        at.dut_version,
        when(at.timestamp),
        num(c.before),
        num(c.after),
        c.change_pct(),
    )
}

/// What `bench history` prints: per series its last value and each change point (where,
/// the means before and after, the change, its p-value, and whether it made things worse).
pub fn text(all: &[Series], detector: &Detector, fail_pct: Option<f64>) -> String {
    let mut s = String::new();
    let needs = detector.min_results();
    for series in all {
        let n = series.points.len();
        let last = &series.points[n - 1];
        let better = if series.higher_is_better() {
            "higher"
        } else {
            "lower"
        };
        let _ = writeln!(
            s,
            "{} on {} ({}, {}; {better} is better)",
            series.name,
            series.test_bed,
            series.units,
            crate::plan::count(n as u64, "result", "results")
        );
        let _ = writeln!(
            s,
            "  last: {} (dut {}, {})",
            num(last.value),
            last.dut_version,
            when(last.timestamp)
        );
        if series.exact && series.changes.is_empty() {
            let _ = writeln!(
                s,
                "  the same counts throughout (a static threshold: {})",
                tolerance_said(series)
            );
        } else if n < needs && !series.exact {
            let _ = writeln!(
                s,
                "  too few results for a change point ({n}; needs {needs}: fewer cannot reach \
                 p ≤ {} at a step of {} results)",
                detector.max_p, detector.min_segment
            );
        } else if series.changes.is_empty() {
            let _ = writeln!(s, "  no change point");
        }
        for c in &series.changes {
            let _ = writeln!(s, "{}", change_line(series, c, fail_pct));
        }
    }
    let changed = all.iter().filter(|x| !x.changes.is_empty()).count();
    let _ = write!(s, "{} series, {changed} with a change point", all.len());
    if let Some(p) = fail_pct {
        let worse = all.iter().filter(|x| x.regressed(p).is_some()).count();
        let _ = write!(
            s,
            "; {worse} whose newest change is a regression beyond {p} %"
        );
    }
    let _ = writeln!(
        s,
        " (E-divisive means, α = 1, {} permutations, p ≤ {}, at least {} results a segment \
         and {} a series)",
        detector.permutations,
        detector.max_p,
        detector.min_segment,
        detector.min_results()
    );
    s
}

/// `bench history --json`: every series with its points and change points, and whether
/// its newest change is a regression beyond `fail_pct`.
pub fn json(all: &[Series], detector: &Detector, fail_pct: Option<f64>) -> String {
    use serde_json::json;
    let series: Vec<serde_json::Value> = all
        .iter()
        .map(|s| {
            json!({
                "benchmark_name": s.name,
                "test_bed": s.test_bed,
                "units": s.units,
                "higher_is_better": s.higher_is_better(),
                "points": s.points.iter().map(|p| json!({
                    "id": p.id,
                    "dut_version": p.dut_version,
                    "dut_timestamp": p.dut_timestamp,
                    "timestamp": p.timestamp,
                    "value": p.value,
                })).collect::<Vec<_>>(),
                "exact": s.exact,
                "changes": s.changes.iter().map(|c| json!({
                    "index": c.index,
                    "result": c.index + 1,
                    "before": c.before,
                    "after": c.after,
                    "change_pct": c.change_pct(),
                    "p": (!s.exact).then_some(c.p),
                    "worse": s.worse_pct(c) > 0.0,
                })).collect::<Vec<_>>(),
                "regressed": fail_pct.map(|p| s.regressed(p).is_some()),
            })
        })
        .collect();
    let doc = json!({
        "detector": {
            "method": "e-divisive means",
            "permutations": detector.permutations,
            "max_p": detector.max_p,
            "min_segment": detector.min_segment,
            "min_results": detector.min_results(),
        },
        "fail_on_regression_pct": fail_pct,
        "series": series,
    });
    serde_json::to_string_pretty(&doc).expect("series serialise") + "\n"
}

/// A file name for a series' chart: its name with every character other than letters,
/// digits, `.`, `-` and `_` as `_`.
pub fn file_name(name: &str) -> String {
    let base: String = name
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                true => c,
                false => '_',
            },
        )
        .collect();
    format!("{base}.svg")
}

/// A series' chart: its results in order, the mean of each segment between change points
/// (dashed), and each change point (a vertical line).
pub fn chart(series: &Series) -> Chart {
    let n = series.points.len();
    let values: Vec<(f64, f64)> = series
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| ((i + 1) as f64, p.value))
        .collect();
    let (lo, hi) = values
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), p| (l.min(p.1), h.max(p.1)));
    let mut lines = vec![Line::line("result (summary.mean)", values, 0)];
    let mut cuts: Vec<usize> = vec![0];
    cuts.extend(series.changes.iter().map(|c| c.index));
    cuts.push(n);
    for (k, w) in cuts.windows(2).enumerate() {
        let mean = series.points[w[0]..w[1]]
            .iter()
            .map(|p| p.value)
            .sum::<f64>()
            / (w[1] - w[0]) as f64;
        let pts = vec![((w[0] + 1) as f64, mean), (w[1] as f64, mean)];
        lines.push(Line::dashed(format!("mean of segment {}", k + 1), pts, 1));
    }
    for c in &series.changes {
        let x = c.index as f64 + 0.5;
        let label = format!(
            "change at result {} ({:+.1} %)",
            c.index + 1,
            c.change_pct()
        );
        lines.push(Line::dashed(label, vec![(x, lo), (x, hi)], 2));
    }
    Chart {
        file: file_name(&format!("{} on {}", series.name, series.test_bed)),
        alt: format!(
            "{} on {}: {n} results in order, with change points",
            series.name, series.test_bed
        ),
        title: format!("{} on {}", series.name, series.test_bed),
        x_desc: "result (in order of dut.timestamp, then timestamp)".into(),
        y_desc: series.units.clone(),
        x_log: false,
        y_log: false,
        x_ticks: None,
        y_integer: false,
        // The legend at the top of the side whose results are lower, away from the points.
        legend_left: {
            let half = |r: &[Point]| r.iter().map(|p| p.value).sum::<f64>() / r.len().max(1) as f64;
            half(&series.points[..n / 2]) < half(&series.points[n / 2..])
        },
        nested: false,
        series: lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(name: &str, id: &str, dut: i64, ts: i64, value: f64) -> Point {
        Point {
            id: id.into(),
            benchmark_name: name.into(),
            test_bed: "vm".into(),
            dut_version: "14.0.2".into(),
            dut_timestamp: dut,
            timestamp: ts,
            value,
            min: value,
            max: value,
            units: "operations/second".into(),
        }
    }

    /// A published series of requests per operation: 10 results of 22 requests, then one
    /// more from the 7th on. The static threshold flags the 7th, and only it; identical
    /// builds' series (the same count throughout) have no change; a contended cell's counts
    /// that wobble within their runs' spread do not step.
    #[test]
    fn a_request_more_is_flagged_from_the_first_result_after_it() {
        let counts = |after: f64| -> Vec<Point> {
            (0..10)
                .map(|i| {
                    let v = if i >= 6 { after } else { 22.0 };
                    Point {
                        units: "requests/operation".into(),
                        ..point("m/requests", &format!("r{i}"), i, i, v)
                    }
                })
                .collect()
        };
        let all = series(counts(23.0), None, &Detector::default());
        assert!(all[0].exact && !all[0].higher_is_better());
        // Round trips are timed, not exact: stepped alike, fewer better, but a regression
        // only beyond PCT, as a time.
        let trips: Vec<Point> = (counts(23.0).into_iter())
            .map(|p| Point {
                units: "round trips/operation".into(),
                ..p
            })
            .collect();
        let t = series(trips, None, &Detector::default());
        assert!(!t[0].exact && !t[0].higher_is_better(), "{:?}", t[0]);
        let found: Vec<usize> = t[0].changes.iter().map(|c| c.index).collect();
        assert_eq!(found, [6], "{:?}", t[0].changes);
        assert!(t[0].regressed(50.0).is_none() && t[0].regressed(4.0).is_some());
        assert_eq!(all[0].changes.len(), 1, "{:?}", all[0].changes);
        assert_eq!(all[0].changes[0].index, 6);
        assert!(
            all[0].regressed(50.0).is_some(),
            "a request more regresses whatever PCT says"
        );
        let t = text(&all, &Detector::default(), Some(5.0));
        assert!(
            t.contains("change at result 7 of 10") && t.contains("a regression (a count)"),
            "{t}"
        );
        let same = series(counts(22.0), None, &Detector::default());
        assert!(same[0].changes.is_empty());
        assert!(text(&same, &Detector::default(), None).contains("the same counts throughout"));
        // Runs spread 40 to 46 round trips (retries): a mean of 44 after 42 is no step.
        let wobble: Vec<Point> = [42.0, 44.0, 41.0, 45.0]
            .iter()
            .enumerate()
            .map(|(i, &v)| Point {
                units: "round trips/operation".into(),
                min: 40.0,
                max: 46.0,
                ..point("m/round_trips", &format!("w{i}"), i as i64, i as i64, v)
            })
            .collect();
        assert!(
            series(wobble, None, &Detector::default())[0]
                .changes
                .is_empty()
        );
    }

    /// 18 results of `name`, 100 then `after` from the 13th on, with a little noise, given
    /// in reverse order.
    fn stepped(name: &str, after: f64) -> Vec<Point> {
        let noise = [
            0.4, -0.8, 0.3, 0.9, -0.5, 0.1, -0.3, 0.7, -0.9, 0.2, 0.6, -0.4, 0.5, -0.2, 0.8, -0.6,
            0.1, -0.7,
        ];
        (0..18)
            .rev()
            .map(|i| {
                let level = if i >= 12 { after } else { 100.0 };
                point(
                    name,
                    &format!("{name}{i}"),
                    0,
                    1000 + i as i64,
                    level + noise[i],
                )
            })
            .collect()
    }

    #[test]
    fn a_series_is_ordered_by_build_then_time_and_a_row_counts_once() {
        let pts = vec![
            point("s", "c", 2, 1, 3.0),
            point("s", "a", 1, 5, 1.0),
            point("s", "b", 1, 9, 2.0),
            point("s", "a", 1, 5, 1.0),
            point("t", "d", 0, 0, 9.0),
        ];
        let all = series(pts, Some(&Glob("s*".into())), &Detector::default());
        assert_eq!(all.len(), 1);
        let v: Vec<f64> = all[0].points.iter().map(|p| p.value).collect();
        assert_eq!(v, vec![1.0, 2.0, 3.0]);
    }

    #[test]
    fn a_planted_step_is_found_at_its_result_and_judged_by_the_units() {
        let d = Detector::default();
        let mut pts = stepped("manifest/p/slower", 60.0);
        pts.extend(stepped("manifest/p/faster", 140.0));
        let all = series(pts, None, &d);
        let slower = all.iter().find(|s| s.name.ends_with("slower")).unwrap();
        assert_eq!(slower.changes.len(), 1);
        assert_eq!(slower.changes[0].index, 12);
        assert!(slower.regressed(20.0).is_some());
        assert!(
            slower.regressed(50.0).is_none(),
            "a 40 % drop is not beyond 50 %"
        );
        let faster = all.iter().find(|s| s.name.ends_with("faster")).unwrap();
        assert!(
            faster.regressed(1.0).is_none(),
            "more operations a second is better"
        );
        // In a time unit the same rise is worse.
        let mut slow_times = faster.clone();
        slow_times.units = "nanoseconds".into();
        assert!(slow_times.regressed(20.0).is_some());
        let t = text(&all, &d, Some(20.0));
        assert!(t.contains("change at result 13 of 18"), "{t}");
        assert!(t.contains("a regression beyond 20 %"), "{t}");
        assert!(
            t.contains("2 series, 2 with a change point; 1 whose newest"),
            "{t}"
        );
    }

    #[test]
    fn short_series_say_why_they_have_no_change_point() {
        let d = Detector::default();
        // 17 results of a clean step: one fewer than the test can judge.
        let all = series(stepped("x", 50.0).into_iter().take(17).collect(), None, &d);
        assert!(all[0].changes.is_empty());
        assert!(
            text(&all, &d, None).contains("too few results for a change point (17; needs 18"),
            "{}",
            text(&all, &d, None)
        );
    }

    /// Two machines' results of one benchmark are two series: mixed, a fast and a slow
    /// machine would look like steps.
    #[test]
    fn test_beds_are_series_of_their_own() {
        let mut pts = stepped("m", 100.0);
        let other: Vec<Point> = stepped("m", 100.0)
            .into_iter()
            .map(|p| Point {
                id: format!("{}-b", p.id),
                test_bed: "laptop".into(),
                value: p.value * 3.0,
                ..p
            })
            .collect();
        pts.extend(other);
        let all = series(pts, None, &Detector::default());
        assert_eq!(all.len(), 2);
        assert!(
            all.iter()
                .all(|s| s.changes.is_empty() && s.points.len() == 18)
        );
        let t = text(&all, &Detector::default(), None);
        assert!(t.contains("m on laptop") && t.contains("m on vm"), "{t}");
    }

    #[test]
    fn the_last_four_test_is_student_s_pooled_t_test() {
        assert_eq!(last_four_p(&[1.0, 2.0, 3.0, 4.0, 5.0]), None);
        // scipy.stats.ttest_ind([1, 2, 3, 4], [3, 4, 5, 6]).pvalue: t = 2.191, df = 6, p = 0.0710
        let p = last_four_p(&[1.0, 2.0, 3.0, 4.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        assert!((p - 0.070988).abs() < 1e-4, "{p}");
        assert_eq!(last_four_p(&[2.0; 8]), Some(1.0));
    }

    #[test]
    fn history_as_json_has_every_point_and_change() {
        let d = Detector::default();
        let all = series(stepped("manifest/p/slower", 60.0), None, &d);
        let doc: serde_json::Value = serde_json::from_str(&json(&all, &d, Some(20.0))).unwrap();
        let s = &doc["series"][0];
        assert_eq!(s["benchmark_name"], "manifest/p/slower");
        assert_eq!(s["test_bed"], "vm");
        assert_eq!(s["points"].as_array().unwrap().len(), 18);
        assert_eq!(s["changes"][0]["result"], 13);
        assert_eq!(s["changes"][0]["worse"], true);
        assert_eq!(s["regressed"], true);
        assert_eq!(doc["detector"]["min_results"], 18);
    }

    #[test]
    fn globs_match_runs_of_characters() {
        let g = Glob("manifest/*/cont_*".into());
        assert!(g.matches("manifest/default/cont_inline_true_rows_1000"));
        assert!(!g.matches("ivf/default/cont_x"));
        assert!(Glob("a?c".into()).matches("abc") && !Glob("a?c".into()).matches("ac"));
    }

    #[test]
    fn a_chart_has_the_results_the_segments_and_the_change() {
        let d = Detector::default();
        let all = series(stepped("manifest/p/c", 60.0), None, &d);
        let c = chart(&all[0]);
        assert_eq!(c.file, "manifest_p_c_on_vm.svg");
        assert_eq!(c.series.len(), 4, "results, two segment means, one change");
        let svg = crate::report::svg::render(&c).unwrap();
        assert!(svg.contains("change at result 13"));
    }
}
