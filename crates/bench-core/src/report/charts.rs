//! Which charts a results set gets, and their lines: throughput and latency against
//! catalog size for continuous cells, throughput and errors against writers for concurrent
//! cells, reads and commits of mixed cells. Drawing is [`super::svg`]'s job.

use std::collections::{BTreeMap, BTreeSet};

use super::svg::{Chart, Series, tick};
use crate::export::CellRecords;
use crate::plan::{ModeKind, Variant};

/// (x, y) points of a series.
type Points = Vec<(f64, f64)>;

/// A line's points and their error bars (x, low, high).
#[derive(Default)]
struct Line {
    points: Points,
    bars: Vec<(f64, f64, f64)>,
}

impl Line {
    /// Add a cell's median of a figure at `x`, with its interval when it has repetitions.
    fn push(&mut self, x: f64, c: &CellRecords<'_>, f: fn(&crate::export::Record) -> f64) {
        let s = c.spread(f);
        self.points.push((x, s.median));
        if let Some((lo, hi)) = s.ci {
            self.bars.push((x, lo, hi));
        }
    }

    fn series(self, name: String, color: usize, dashed: bool) -> Series {
        let mut s = if dashed {
            Series::dashed(name, self.points, color)
        } else {
            Series::line(name, self.points, color)
        };
        s.bars = self.bars;
        s
    }
}

/// A line's key: the variant's name and, in an A/B results set, the arm.
type Key = (String, Option<String>);

fn key(c: &CellRecords<'_>) -> Key {
    (c.first().variant_label().to_string(), c.first().arm.clone())
}

fn key_name((v, arm): &Key) -> String {
    match arm {
        Some(a) => format!("{v} (arm {a})"),
        None => v.clone(),
    }
}

/// The variants of a results set, in order: each has its own colour in every chart, and
/// arm B of an A/B set one more of its own.
struct Colors(Vec<String>);

impl Colors {
    fn of(cells: &[CellRecords<'_>]) -> Colors {
        let names: BTreeSet<String> = cells.iter().map(|c| key(c).0).collect();
        Colors(names.into_iter().collect())
    }

    fn of_key(&self, (v, arm): &Key) -> usize {
        let i = self.0.iter().position(|x| x == v).unwrap_or(0);
        i + if arm.as_deref() == Some(crate::export::record::ARM_B) {
            self.0.len()
        } else {
            0
        }
    }
}

const ROWS_AXIS: &str = "rows in __manifest (log scale)";
const WRITERS_AXIS: &str = "writer processes (log scale)";

fn rows_label(rows: u64) -> String {
    format!("{} rows", tick(rows as f64))
}

/// What the throughput axes count: commits, or operations when any cell reads.
fn per_sec(cells: &[CellRecords<'_>]) -> &'static str {
    if cells.iter().all(|c| c.first().operation.is_write()) {
        "commits/s"
    } else {
        "operations/s"
    }
}

/// The charts for these cells, in the report's order.
pub fn charts(cells: &[CellRecords<'_>]) -> Vec<Chart> {
    let by_mode = |m: ModeKind| -> Vec<&CellRecords<'_>> {
        cells.iter().filter(|c| c.first().mode == m).collect()
    };
    let ops: BTreeSet<&str> = cells.iter().map(|c| c.first().operation.as_str()).collect();
    let op = ops.into_iter().collect::<Vec<_>>().join(", ");
    let per_sec = per_sec(cells);
    let colors = Colors::of(cells);
    let mut out = continuous(&by_mode(ModeKind::Continuous), &op, per_sec, &colors);
    out.extend(io(&by_mode(ModeKind::Continuous), &op, &colors));
    // Named variants (builds, properties) meet in one chart per size; the two index
    // variants alone keep a chart each, with a line per size.
    // Against writers, the closed-loop cells; open-loop ones against their offered load.
    let closed: Vec<&CellRecords<'_>> = by_mode(ModeKind::Concurrent)
        .into_iter()
        .filter(|c| c.first().open_loop.offered_ops_per_sec.is_none())
        .collect();
    if cells.iter().any(|c| c.first().variant_name.is_some()) {
        out.extend(concurrent_by_size(&closed, per_sec, &colors));
    } else {
        out.extend(concurrent(&closed, per_sec));
    }
    // Mixed cells against size, the closed-loop ones; open-loop ones against their load.
    let mixed_closed: Vec<&CellRecords<'_>> = by_mode(ModeKind::Mixed)
        .into_iter()
        .filter(|c| c.first().open_loop.offered_ops_per_sec.is_none())
        .collect();
    out.extend(mixed(&mixed_closed, &colors));
    out.extend(offered_load(&by_mode(ModeKind::Concurrent), "concurrent"));
    out.extend(offered_load(&by_mode(ModeKind::Mixed), "mixed"));
    out.extend(cells.iter().filter_map(over_time));
    out
}

/// An open-loop curve: p99 from the intended start, service p99, achieved rate, each
/// against the offered rate.
#[derive(Default)]
struct Curve {
    p99: Points,
    service: Points,
    achieved: Points,
}

/// Open-loop cells of one mode (`concurrent`, `mixed`: its commits), two charts per
/// variant, a colour per size and writer count: p99 latency from the intended start
/// (solid) and the service p99 (dashed) against the offered rate; and the achieved rate
/// against the offered one, beside the line where they are equal (a cell that kept up lies
/// on it).
fn offered_load(cells: &[&CellRecords<'_>], mode: &str) -> Vec<Chart> {
    let mut by_variant: BTreeMap<Key, BTreeMap<(u64, u32), Curve>> = BTreeMap::new();
    for c in cells {
        let r = c.first();
        let Some(rate) = r.open_loop.offered_ops_per_sec else {
            continue;
        };
        let curve = by_variant
            .entry(key(c))
            .or_default()
            .entry((r.initial_entries, r.concurrency))
            .or_default();
        curve.p99.push((rate, c.med(|r| r.p99_latency_ms)));
        let service =
            |r: &crate::export::Record| r.open_loop.service.map_or(f64::NAN, |s| s.p99_ms);
        curve.service.push((rate, c.med(service)));
        curve
            .achieved
            .push((rate, c.med(|r| r.throughput_ops_per_sec)));
    }
    let mut out = Vec::new();
    for (k, curves) in by_variant {
        let name = key_name(&k).replace([' ', '(', ')', '/'], "_");
        let mut latency = Chart::log_log(
            &format!("{mode}_offered_load_{name}.svg"),
            format!("{mode}, {}: p99 latency against offered load", key_name(&k)),
            format!(
                "{}: p99 from the intended start (solid), service p99 (dashed)",
                key_name(&k)
            ),
            "offered operations/s (log scale)",
            "p99 latency, ms (log scale)".into(),
        );
        let mut achieved = Chart::log_log(
            &format!("{mode}_achieved_{name}.svg"),
            format!("{mode}, {}: achieved against offered rate", key_name(&k)),
            format!("{}: achieved against offered rate", key_name(&k)),
            "offered operations/s (log scale)",
            "achieved operations/s (log scale)".into(),
        );
        let (mut lo, mut hi) = (f64::MAX, f64::MIN);
        for (i, ((rows, c), curve)) in curves.into_iter().enumerate() {
            let label = format!("{}, {c} writers", rows_label(rows));
            for &(x, _) in &curve.achieved {
                (lo, hi) = (lo.min(x), hi.max(x));
            }
            latency
                .series
                .push(Series::line(label.clone(), curve.p99, i));
            latency.series.push(Series::dashed(
                format!("{label}, service"),
                curve.service,
                i,
            ));
            achieved.series.push(Series::line(label, curve.achieved, i));
        }
        let equal = vec![(lo, lo), (hi, hi)];
        achieved
            .series
            .push(Series::dashed("achieved = offered", equal, 9));
        out.extend([latency, achieved]);
    }
    out
}

/// The file names of the charts over time start so.
pub const OVER_TIME: &str = "over_time_";

/// A concurrent or mixed cell's window second by second: successful operations a second
/// (solid; the last, shorter second as a rate over its length, left out under a quarter of
/// a second) and the second's p99 latency (dashed), a colour per repetition; none for a
/// cell whose records have no series.
/// A second-by-second count as a rate, each point at its second's middle: the last second
/// is the rest of the window (`window`, in s), its count over its length, unless it is too
/// short to say a rate.
pub(super) fn per_second(counts: &[u64], window: f64) -> Points {
    (counts.iter().enumerate())
        .filter_map(|(i, &n)| {
            let width = (window - i as f64).clamp(0.0, 1.0);
            (width >= 0.25).then(|| (i as f64 + 0.5, n as f64 / width))
        })
        .collect()
}

fn over_time(c: &CellRecords<'_>) -> Option<Chart> {
    let first = c.first();
    let arm = first
        .arm
        .as_deref()
        .map(|a| format!("_{a}"))
        .unwrap_or_default();
    let mut chart = Chart::log_log(
        &format!("{OVER_TIME}{}{arm}.svg", first.bench_tag),
        format!(
            "{}{arm}: operations and p99 latency, second by second",
            first.bench_tag
        ),
        format!("{}{arm}: second by second", first.bench_tag),
        "seconds from release",
        "operations/s (solid), p99 ms (dashed); log".into(),
    );
    chart.x_log = false;
    for (k, r) in c.reps.iter().enumerate() {
        let s = r.series.as_ref()?;
        let at = |i: usize| i as f64 + 0.5;
        // The last second is the rest of the window: its count over its length, unless
        // it is too short to say a rate.
        let window = r.total_duration_ms / 1000.0;
        let ops = per_second(&s.ops, window);
        let p99 = (s.p99_ms.iter().enumerate()).filter_map(|(i, v)| v.map(|v| (at(i), v)));
        let rep = r.repetition;
        let what = if s.reads.is_some() { "commits" } else { "ops" };
        chart
            .series
            .push(Series::line(format!("{what}, run {rep}"), ops, k));
        // A mixed cell's reads a second, dotted apart by their own line.
        if let Some(reads) = &s.reads {
            let reads = per_second(reads, window);
            chart
                .series
                .push(Series::line(format!("reads, run {rep}"), reads, k + 10));
        }
        chart
            .series
            .push(Series::dashed(format!("p99, run {rep}"), p99.collect(), k));
    }
    nemesis_bars(&mut chart, first);
    Some(chart)
}

/// `[[nemesis]]`: each window of the store's faults (of the first run) as a bar above the
/// lines, from the moment it was switched on to the moment it was switched off.
fn nemesis_bars(chart: &mut Chart, r: &crate::export::Record) {
    let top = (chart.series.iter())
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let mut open: BTreeMap<&str, f64> = BTreeMap::new();
    for (k, s) in r.attached.nemesis.iter().enumerate() {
        let at = s.at_ms / 1000.0;
        if s.on {
            open.insert(s.fault.as_str(), at);
            continue;
        }
        let Some(from) = open.remove(s.fault.as_str()) else {
            continue;
        };
        // Each window a little higher than the one before, so that windows at once show.
        let y = top.max(1.0) * (1.5 + 0.1 * k as f64);
        chart.series.push(Series::line(
            format!("nemesis: {}", s.fault),
            vec![(from, y), (at, y)],
            6,
        ));
    }
}

fn continuous(cont: &[&CellRecords<'_>], op: &str, per_sec: &str, colors: &Colors) -> Vec<Chart> {
    if cont.is_empty() {
        return Vec::new();
    }
    let mut tps: BTreeMap<Key, Line> = BTreeMap::new();
    let mut lat: BTreeMap<Key, (Line, Line)> = BTreeMap::new();
    for c in cont {
        let x = c.first().initial_entries as f64;
        tps.entry(key(c))
            .or_default()
            .push(x, c, |r| r.throughput_ops_per_sec);
        let l = lat.entry(key(c)).or_default();
        l.0.push(x, c, |r| r.p50_latency_ms);
        l.1.push(x, c, |r| r.p99_latency_ms);
    }
    let mut throughput = Chart::log_log(
        "continuous_throughput.svg",
        "Continuous: throughput against catalog size".into(),
        format!("One writer ({op}): throughput vs catalog size"),
        ROWS_AXIS,
        format!("throughput ({per_sec}, log scale)"),
    );
    throughput.series = tps
        .into_iter()
        .map(|(k, line)| line.series(key_name(&k), colors.of_key(&k), false))
        .collect();
    let mut latency = Chart::log_log(
        "continuous_latency.svg",
        "Continuous: p50 and p99 latency against catalog size".into(),
        format!("One writer ({op}): latency vs catalog size"),
        ROWS_AXIS,
        "latency per operation (ms, log scale)".into(),
    );
    latency.legend_left = true;
    latency.series = lat
        .into_iter()
        .flat_map(|(k, (p50, p99))| {
            [
                p50.series(format!("{} p50", key_name(&k)), colors.of_key(&k), false),
                p99.series(format!("{} p99", key_name(&k)), colors.of_key(&k), true),
            ]
        })
        .collect();
    vec![throughput, latency]
}

/// Requests and bytes per operation of the continuous cells, against rows (where measured).
fn io(cont: &[&CellRecords<'_>], op: &str, colors: &Colors) -> Vec<Chart> {
    let mut requests: BTreeMap<Key, Points> = BTreeMap::new();
    let mut bytes: BTreeMap<Key, (Points, Points)> = BTreeMap::new();
    for c in cont {
        let per: Option<Vec<crate::stats::IoPerOp>> = c.reps.iter().map(|r| r.io_per_op).collect();
        let Some(per) = per else { continue };
        let med = |f: fn(&crate::stats::IoPerOp) -> f64| {
            crate::stats::median(per.iter().map(f).collect())
        };
        let x = c.first().initial_entries as f64;
        requests
            .entry(key(c))
            .or_default()
            .push((x, med(|p| p.requests())));
        let b = bytes.entry(key(c)).or_default();
        b.0.push((x, med(|p| p.read_bytes) / 1024.0));
        b.1.push((x, med(|p| p.written_bytes) / 1024.0));
    }
    if requests.is_empty() {
        return Vec::new();
    }
    let mut req = Chart::log_log(
        "continuous_io_requests.svg",
        "Continuous: object-store requests per operation against catalog size".into(),
        format!("One writer ({op}): requests per operation vs catalog size"),
        ROWS_AXIS,
        "requests per operation (log scale)".into(),
    );
    req.series = requests
        .into_iter()
        .map(|(k, points)| Series::line(key_name(&k), points, colors.of_key(&k)))
        .collect();
    let mut kb = Chart::log_log(
        "continuous_io_bytes.svg",
        "Continuous: KiB read and written per operation against catalog size".into(),
        format!("One writer ({op}): bytes per operation vs catalog size"),
        ROWS_AXIS,
        "KiB per operation (log scale)".into(),
    );
    kb.legend_left = true;
    kb.series = bytes
        .into_iter()
        .flat_map(|(k, (read, written))| {
            [
                Series::line(format!("{} read", key_name(&k)), read, colors.of_key(&k)),
                Series::dashed(
                    format!("{} written", key_name(&k)),
                    written,
                    colors.of_key(&k),
                ),
            ]
        })
        .collect();
    vec![req, kb]
}

fn concurrent(conc: &[&CellRecords<'_>], per_sec: &str) -> Vec<Chart> {
    let variants: BTreeSet<Variant> = conc.iter().map(|c| c.first().variant).collect();
    let mut out = Vec::new();
    for v in variants {
        let of_variant: Vec<&&CellRecords<'_>> =
            conc.iter().filter(|c| c.first().variant == v).collect();
        let by_size = |m: Vec<((u64, Option<String>), Line)>| -> Vec<Series> {
            m.into_iter()
                .enumerate()
                .map(|(i, ((rows, arm), line))| {
                    let name = match arm {
                        Some(a) => format!("{} (arm {a})", rows_label(rows)),
                        None => rows_label(rows),
                    };
                    line.series(name, i, false)
                })
                .collect()
        };
        out.extend(against_writers(
            &of_variant,
            |c| (c.first().initial_entries, c.first().arm.clone()),
            by_size,
            (&v.to_string(), &v.to_string()),
            per_sec,
        ));
    }
    out
}

/// Concurrent cells of named variants: per catalog size, throughput and errors against
/// writers, a line per variant.
fn concurrent_by_size(conc: &[&CellRecords<'_>], per_sec: &str, colors: &Colors) -> Vec<Chart> {
    let sizes: BTreeSet<u64> = conc.iter().map(|c| c.first().initial_entries).collect();
    let mut out = Vec::new();
    for rows in sizes {
        let of_size: Vec<&&CellRecords<'_>> = conc
            .iter()
            .filter(|c| c.first().initial_entries == rows)
            .collect();
        let by_variant = |m: Vec<(Key, Line)>| -> Vec<Series> {
            m.into_iter()
                .map(|(k, line)| line.series(key_name(&k), colors.of_key(&k), false))
                .collect()
        };
        out.extend(against_writers(
            &of_size,
            key,
            by_variant,
            (
                &format!("rows_{rows}"),
                &format!("{}, by variant", rows_label(rows)),
            ),
            per_sec,
        ));
    }
    out
}

/// Total throughput, p50 and p99 latency, and failed operations against writers of some
/// concurrent cells, a line per `line_of`, drawn by `series` (latency: p50 solid, p99
/// dashed, one colour); `(file, what)`: the charts' file suffix and what their titles say
/// they show.
fn against_writers<K: Ord>(
    cells: &[&&CellRecords<'_>],
    line_of: impl Fn(&CellRecords<'_>) -> K,
    series: impl Fn(Vec<(K, Line)>) -> Vec<Series>,
    (file, what): (&str, &str),
    per_sec: &str,
) -> [Chart; 3] {
    let writers: Vec<f64> = cells
        .iter()
        .map(|c| c.first().concurrency)
        .collect::<BTreeSet<u32>>()
        .into_iter()
        .map(f64::from)
        .collect();
    let mut tps: BTreeMap<K, Line> = BTreeMap::new();
    let mut errs: BTreeMap<K, Line> = BTreeMap::new();
    let (mut p50, mut p99): (BTreeMap<K, Line>, BTreeMap<K, Line>) = Default::default();
    for c in cells {
        let x = f64::from(c.first().concurrency);
        tps.entry(line_of(c))
            .or_default()
            .push(x, c, |r| r.throughput_ops_per_sec);
        // A latency exists only where a writer's operation succeeded.
        if c.reps.iter().all(|r| r.total_operations > 0) {
            p50.entry(line_of(c))
                .or_default()
                .push(x, c, |r| r.p50_latency_ms);
            p99.entry(line_of(c))
                .or_default()
                .push(x, c, |r| r.p99_latency_ms);
        }
        errs.entry(line_of(c))
            .or_default()
            .points
            .push((x, c.reps.iter().map(|r| r.errors as f64).sum()));
    }
    let mut throughput = Chart::log_log(
        &format!("concurrent_throughput_{file}.svg"),
        format!("Concurrent ({what}): throughput against writers"),
        format!("Concurrent writers, {what}: throughput vs writers"),
        WRITERS_AXIS,
        format!("total throughput ({per_sec}, log scale)"),
    );
    throughput.x_ticks = Some(writers.clone());
    throughput.series = series(tps.into_iter().collect());
    let mut latency = Chart::log_log(
        &format!("concurrent_latency_{file}.svg"),
        format!("Concurrent ({what}): p50 and p99 latency against writers"),
        format!("Concurrent writers, {what}: latency vs writers"),
        WRITERS_AXIS,
        "latency per operation (ms, log scale)".into(),
    );
    latency.x_ticks = Some(writers.clone());
    latency.legend_left = true;
    let named = |m: BTreeMap<K, Line>, q: &'static str, dashed: bool| {
        series(m.into_iter().collect())
            .into_iter()
            .map(move |mut s| {
                s.name = format!("{} {q}", s.name);
                s.dashed = dashed;
                s
            })
    };
    latency.series = named(p50, "p50", false)
        .zip(named(p99, "p99", true))
        .flat_map(|(a, b)| [a, b])
        .collect();
    let mut errors = Chart::log_log(
        &format!("concurrent_errors_{file}.svg"),
        format!("Concurrent ({what}): errors against writers"),
        format!("Concurrent writers, {what}: errors vs writers"),
        WRITERS_AXIS,
        "failed operations, all repetitions (count)".into(),
    );
    errors.x_ticks = Some(writers);
    errors.y_log = false;
    errors.y_integer = true;
    errors.legend_left = true;
    errors.nested = true;
    errors.series = series(errs.into_iter().collect());
    [throughput, latency, errors]
}

fn mixed(mixed: &[&CellRecords<'_>], colors: &Colors) -> Vec<Chart> {
    if mixed.is_empty() {
        return Vec::new();
    }
    let mut lines: BTreeMap<(Key, u32), (Points, Points)> = BTreeMap::new();
    for c in mixed {
        let x = c.first().initial_entries as f64;
        let l = lines.entry((key(c), c.first().concurrency)).or_default();
        l.0.push((
            x,
            c.read_med(|r| r.throughput_ops_per_sec).unwrap_or(f64::NAN),
        ));
        l.1.push((x, c.med(|r| r.throughput_ops_per_sec)));
    }
    let multi = lines.keys().map(|k| k.1).collect::<BTreeSet<_>>().len() > 1;
    let mut chart = Chart::log_log(
        "mixed_throughput.svg",
        "Mixed: reads and commits against catalog size".into(),
        "Mixed load: reads and commits vs catalog size".into(),
        ROWS_AXIS,
        "throughput (operations/s, log scale)".into(),
    );
    chart.series = lines
        .into_iter()
        .enumerate()
        .flat_map(|(i, ((k, clients), (reads, commits)))| {
            let (who, color) = if multi {
                (format!("{}, {clients} clients", key_name(&k)), i)
            } else {
                (key_name(&k), colors.of_key(&k))
            };
            [
                Series::line(format!("{who} reads"), reads, color),
                Series::dashed(format!("{who} commits"), commits, color),
            ]
        })
        .collect();
    vec![chart]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::cells;
    use crate::export::record::tests::record;
    use crate::plan::ModeKind::*;
    use crate::plan::Variant::*;

    /// Open-loop mixed cells: against their offered load (p99 and achieved), not on the
    /// closed-loop chart against size; over time, a mixed cell's reads beside its commits.
    #[test]
    fn open_loop_mixed_cells_are_drawn_against_their_load_and_their_reads_over_time() {
        let mut recs: Vec<crate::export::Record> = [10.0, 20.0]
            .into_iter()
            .map(|rate| {
                let mut r = record(Mixed, NoIndex, 1000, 1, &format!("mixed_c_1_rate_{rate}"));
                r.open_loop.offered_ops_per_sec = Some(rate);
                r.throughput_ops_per_sec = rate * 0.9;
                r.total_duration_ms = 2000.0;
                r.series = Some(crate::stats::TimeSeries {
                    ops: vec![5, 4],
                    errors: Default::default(),
                    p50_ms: vec![Some(3.0), Some(4.0)],
                    p99_ms: vec![Some(9.0), Some(8.0)],
                    reads: Some(vec![10, 8]),
                });
                r
            })
            .collect();
        recs.push(record(Mixed, NoIndex, 1000, 1, "mixed_closed"));
        let all = charts(&cells(&recs));
        let names: Vec<&str> = all.iter().map(|c| c.file.as_str()).collect();
        assert!(
            names.contains(&"mixed_offered_load_no_index.svg"),
            "{names:?}"
        );
        let achieved = all
            .iter()
            .find(|c| c.file == "mixed_achieved_no_index.svg")
            .expect("achieved against offered");
        assert_eq!(achieved.series[0].points, [(10.0, 9.0), (20.0, 18.0)]);
        assert_eq!(achieved.series[1].name, "achieved = offered");
        // The closed-loop mixed chart has the closed-loop cell alone.
        let closed = all
            .iter()
            .find(|c| c.file == "mixed_throughput.svg")
            .unwrap();
        assert!(
            closed.series.iter().all(|s| s.points.len() == 1),
            "{:?}",
            closed.series
        );
        let over = all
            .iter()
            .find(|c| c.file == "over_time_mixed_c_1_rate_10.svg")
            .expect("over time");
        let reads = over
            .series
            .iter()
            .find(|s| s.name == "reads, run 1")
            .expect("reads");
        assert_eq!(reads.points, [(0.5, 10.0), (1.5, 8.0)]);
    }

    #[test]
    fn charts_follow_the_modes_present() {
        let mut recs = vec![
            record(
                Continuous,
                InlineIndex,
                1000,
                1,
                "cont_inline_true_rows_1000",
            ),
            record(Continuous, NoIndex, 1000, 1, "cont_inline_false_rows_1000"),
            record(
                Concurrent,
                NoIndex,
                1000,
                2,
                "conc_inline_false_rows_1000_c_2",
            ),
            record(
                Concurrent,
                NoIndex,
                1000,
                4,
                "conc_inline_false_rows_1000_c_4",
            ),
        ];
        recs[3].errors = 7;
        recs[3].p50_latency_ms = 2.0;
        recs[3].p99_latency_ms = 9.0;
        let charts = charts(&cells(&recs));
        let names: Vec<&str> = charts.iter().map(|c| c.file.as_str()).collect();
        assert_eq!(
            names,
            [
                "continuous_throughput.svg",
                "continuous_latency.svg",
                "concurrent_throughput_no_index.svg",
                "concurrent_latency_no_index.svg",
                "concurrent_errors_no_index.svg"
            ]
        );
        // Latency against writers: p50 solid and p99 dashed, a colour per size.
        let lat = &charts[3];
        let (p50, p99) = (&lat.series[0], &lat.series[1]);
        assert_eq!(
            (p50.name.as_str(), p99.name.as_str()),
            ("1k rows p50", "1k rows p99")
        );
        assert_eq!(p50.points, [(2.0, 1.0), (4.0, 2.0)]);
        assert_eq!(p99.points, [(2.0, 3.0), (4.0, 9.0)]);
        assert!(!p50.dashed && p99.dashed && p50.color == p99.color);
        let errs = &charts[4];
        assert_eq!(errs.series[0].name, "1k rows");
        assert_eq!(errs.series[0].points, [(2.0, 0.0), (4.0, 7.0)]);
        assert!(!errs.y_log && errs.y_integer);
        assert_eq!(charts[1].series.len(), 4, "p50 and p99 per variant");
        assert!(charts[1].series[1].dashed);
    }
}
