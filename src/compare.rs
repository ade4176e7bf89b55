//! `bench compare A B`: the cells of two result sets side by side (throughput, p50 and p99,
//! each with its ratio B/A), changes beyond a noise threshold flagged, and warnings for cells
//! present on one side only or measured with different parameters.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::export::Record;
use crate::export::csv::{med, read_med, rows};

/// Default noise threshold, in percent.
pub const DEFAULT_THRESHOLD_PCT: f64 = 10.0;

/// One cell's compared figures (medians over its repetitions).
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub tps: f64,
    pub p50: f64,
    pub p99: f64,
    pub repetitions: usize,
}

/// How a metric moved from A to B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Same,
    Better,
    Worse,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub cell: String,
    pub a: Figures,
    pub b: Figures,
    /// B/A of throughput, p50, p99 (`None` when A's figure is 0).
    pub ratios: [Option<f64>; 3],
    pub changes: [Change; 3],
    /// What the throughput counts: `ops/s`, or `reads/s` for the reads of a mixed cell.
    pub per_sec: &'static str,
}

impl Row {
    pub fn regressed(&self) -> bool {
        self.changes.contains(&Change::Worse)
    }
    pub fn verdict(&self) -> String {
        let names = [self.per_sec, "p50", "p99"];
        let moved = |want: Change| {
            (0..3)
                .filter(|&i| self.changes[i] == want)
                .map(|i| {
                    format!(
                        "{} {:+.1}%",
                        names[i],
                        (self.ratios[i].unwrap_or(1.0) - 1.0) * 100.0
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (worse, better) = (moved(Change::Worse), moved(Change::Better));
        match (worse.is_empty(), better.is_empty()) {
            (true, true) => String::new(),
            (false, true) => format!("REGRESSION ({worse})"),
            (true, false) => format!("improved ({better})"),
            (false, false) => format!("REGRESSION ({worse}); improved ({better})"),
        }
    }
}

#[derive(Debug, Default)]
pub struct Comparison {
    /// The cells' figures (for mixed cells: their commits).
    pub rows: Vec<Row>,
    /// The reads of mixed cells, compared the same way.
    pub read_rows: Vec<Row>,
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// Cells whose parameters differ: (cell, what differs).
    pub differing: Vec<(String, String)>,
    pub threshold_pct: f64,
}

impl Comparison {
    /// Cells with a regression in any figure (commits or reads).
    pub fn regressions(&self) -> usize {
        self.regressed_cells().len()
    }

    fn regressed_cells(&self) -> std::collections::BTreeSet<&str> {
        self.rows
            .iter()
            .chain(&self.read_rows)
            .filter(|r| r.regressed())
            .map(|r| r.cell.as_str())
            .collect()
    }
}

/// The parameters that make two cells comparable, as (name, value).
fn parameters(r: &Record) -> Vec<(&'static str, String)> {
    let mut p = vec![
        ("operation", r.operation.clone()),
        ("mode", r.mode.clone()),
        ("variant", r.variant.clone()),
        ("initial_entries", r.initial_entries.to_string()),
        ("concurrency", r.concurrency.to_string()),
        ("duration_secs", r.duration_secs.to_string()),
        ("commit_retries", r.commit_retries.to_string()),
        ("warmup_operations", r.warmup_operations.to_string()),
    ];
    if r.mode == "continuous" {
        // A continuous cell starts exactly `operations` operations.
        p.push(("operations", r.attempts.to_string()));
    }
    if let Some(reads) = &r.reads {
        p.push(("read_operation", reads.operation.clone()));
        p.push(("reads_per_write", reads.reads_per_write.to_string()));
    }
    p
}

fn figures(reps: &[&Record]) -> Figures {
    Figures {
        tps: med(reps, |r| r.throughput_ops_per_sec),
        p50: med(reps, |r| r.p50_latency_ms),
        p99: med(reps, |r| r.p99_latency_ms),
        repetitions: reps.len(),
    }
}

/// The figures of a mixed cell's reads, if every repetition has them.
fn read_figures(reps: &[&Record]) -> Option<Figures> {
    Some(Figures {
        tps: read_med(reps, |r| r.throughput_ops_per_sec)?,
        p50: read_med(reps, |r| r.p50_latency_ms)?,
        p99: read_med(reps, |r| r.p99_latency_ms)?,
        repetitions: reps.len(),
    })
}

fn row(cell: &str, a: Figures, b: Figures, t: f64, per_sec: &'static str) -> Row {
    let ratios = [
        ratio(a.tps, b.tps),
        ratio(a.p50, b.p50),
        ratio(a.p99, b.p99),
    ];
    let changes = [
        change(ratios[0], t, true),
        change(ratios[1], t, false),
        change(ratios[2], t, false),
    ];
    Row {
        per_sec,
        cell: cell.to_string(),
        a,
        b,
        ratios,
        changes,
    }
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (a > 0.0).then(|| b / a)
}

/// Classify a ratio: for throughput higher is better, for latency lower is.
fn change(ratio: Option<f64>, threshold: f64, higher_is_better: bool) -> Change {
    match ratio {
        Some(r) if r > 1.0 + threshold => {
            if higher_is_better {
                Change::Better
            } else {
                Change::Worse
            }
        }
        Some(r) if r < 1.0 - threshold => {
            if higher_is_better {
                Change::Worse
            } else {
                Change::Better
            }
        }
        _ => Change::Same,
    }
}

/// Compare the latest records of each cell (by cell id) of A and B.
pub fn compare(a: &[Record], b: &[Record], threshold_pct: f64) -> Comparison {
    let index = |recs: &[Record]| -> BTreeMap<String, Vec<Record>> {
        rows(recs)
            .into_iter()
            .map(|reps| {
                (
                    reps[0].bench_tag.clone(),
                    reps.into_iter().cloned().collect(),
                )
            })
            .collect()
    };
    let (ia, ib) = (index(a), index(b));
    let t = threshold_pct / 100.0;
    let mut c = Comparison {
        threshold_pct,
        ..Comparison::default()
    };
    // In A's summary order, then B's cells that A lacks.
    let order: Vec<&Record> = rows(a).into_iter().map(|reps| reps[0]).collect();
    for first in order {
        let tag = &first.bench_tag;
        let Some(rb) = ib.get(tag) else {
            c.only_a.push(tag.clone());
            continue;
        };
        let ra = &ia[tag];
        let (pa, pb) = (parameters(&ra[0]), parameters(&rb[0]));
        let diffs: Vec<String> = pa
            .iter()
            .zip(&pb)
            .filter(|(x, y)| x != y)
            .map(|((k, x), (_, y))| format!("{k} {x} vs {y}"))
            .chain((pa.len() != pb.len()).then(|| "mode parameters differ".to_string()))
            .collect();
        if !diffs.is_empty() {
            c.differing.push((tag.clone(), diffs.join(", ")));
        }
        let (ra, rb): (Vec<&Record>, Vec<&Record>) = (ra.iter().collect(), rb.iter().collect());
        c.rows
            .push(row(tag, figures(&ra), figures(&rb), t, "ops/s"));
        if let (Some(fa), Some(fb)) = (read_figures(&ra), read_figures(&rb)) {
            c.read_rows.push(row(tag, fa, fb, t, "reads/s"));
        }
    }
    c.only_b = ib
        .keys()
        .filter(|k| !ia.contains_key(*k))
        .cloned()
        .collect();
    c
}

fn fmt_ratio(r: Option<f64>) -> String {
    r.map(|r| format!("{r:.3}")).unwrap_or_else(|| "n/a".into())
}

const READ_HEADER: [&str; 11] = [
    "cell",
    "reads/s A",
    "reads/s B",
    "B/A",
    "p50 ms A",
    "p50 ms B",
    "B/A",
    "p99 ms A",
    "p99 ms B",
    "B/A",
    "verdict",
];

const HEADER: [&str; 11] = [
    "cell", "ops/s A", "ops/s B", "B/A", "p50 ms A", "p50 ms B", "B/A", "p99 ms A", "p99 ms B",
    "B/A", "verdict",
];

fn cells(r: &Row) -> [String; 11] {
    [
        r.cell.clone(),
        format!("{:.3}", r.a.tps),
        format!("{:.3}", r.b.tps),
        fmt_ratio(r.ratios[0]),
        format!("{:.2}", r.a.p50),
        format!("{:.2}", r.b.p50),
        fmt_ratio(r.ratios[1]),
        format!("{:.2}", r.a.p99),
        format!("{:.2}", r.b.p99),
        fmt_ratio(r.ratios[2]),
        r.verdict(),
    ]
}

fn notes(c: &Comparison, a: &str, b: &str) -> Vec<String> {
    let mut n = Vec::new();
    if !c.only_a.is_empty() {
        n.push(format!(
            "only in A ({a}), not compared: {}",
            c.only_a.join(", ")
        ));
    }
    if !c.only_b.is_empty() {
        n.push(format!(
            "only in B ({b}), not compared: {}",
            c.only_b.join(", ")
        ));
    }
    for (cell, d) in &c.differing {
        n.push(format!(
            "{cell} was measured with different parameters: {d}"
        ));
    }
    n
}

/// The comparison as an aligned text table (and one for the reads of mixed cells), then a
/// line of totals.
pub fn text(c: &Comparison) -> String {
    let mut s = table_text(&c.rows, &HEADER);
    if !c.read_rows.is_empty() {
        s.push_str("\nreads of mixed cells:\n");
        s.push_str(&table_text(&c.read_rows, &READ_HEADER));
    }
    s.push_str(&summary_line(c));
    s
}

fn table_text(rows: &[Row], header: &[&str; 11]) -> String {
    let body: Vec<[String; 11]> = rows.iter().map(cells).collect();
    let mut width = header.map(str::len);
    for row in &body {
        for (w, v) in width.iter_mut().zip(row) {
            *w = (*w).max(v.len());
        }
    }
    let mut s = String::new();
    let line = |s: &mut String, vals: &[&str]| {
        let mut l = String::new();
        for (i, v) in vals.iter().enumerate() {
            match i {
                0 => write!(l, "{v:<w$}", w = width[0]),
                10 => write!(l, "  {v}"),
                _ => write!(l, "  {v:>w$}", w = width[i]),
            }
            .expect("write to a String");
        }
        s.push_str(l.trim_end());
        s.push('\n');
    };
    line(&mut s, header);
    for row in &body {
        line(&mut s, &row.each_ref().map(String::as_str));
    }
    s
}

fn summary_line(c: &Comparison) -> String {
    let regressed = c.regressed_cells();
    let improved = c
        .rows
        .iter()
        .chain(&c.read_rows)
        .filter(|r| !regressed.contains(r.cell.as_str()) && r.changes.contains(&Change::Better))
        .map(|r| r.cell.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    format!(
        "{} cells compared: {} regressed, {} improved, {} within ±{}% (B/A above 1 is faster for ops/s, slower for latency)\n",
        c.rows.len(),
        c.regressions(),
        improved,
        c.rows.len() - c.regressions() - improved,
        c.threshold_pct
    )
}

/// The comparison as Markdown: a title naming A and B, the table, totals and warnings.
pub fn markdown(c: &Comparison, a: &str, b: &str) -> String {
    let mut s = format!(
        "# bench compare\n\n- A: `{a}`\n- B: `{b}`\n- noise threshold: ±{}%\n\n",
        c.threshold_pct
    );
    s.push_str(&table_md(&c.rows, &HEADER));
    if !c.read_rows.is_empty() {
        s.push_str("\nReads of mixed cells:\n\n");
        s.push_str(&table_md(&c.read_rows, &READ_HEADER));
    }
    s.push('\n');
    s.push_str(&summary_line(c));
    let notes = notes(c, a, b);
    if !notes.is_empty() {
        s.push_str("\nWarnings:\n\n");
        for n in notes {
            s.push_str(&format!("- {n}\n"));
        }
    }
    s
}

fn table_md(rows: &[Row], header: &[&str; 11]) -> String {
    let mut s = format!(
        "| {} |\n|:---|{}\n",
        header.join(" | "),
        "---:|".repeat(9) + ":---|"
    );
    for r in rows {
        let mut v = cells(r).to_vec();
        v[0] = format!("`{}`", v[0]);
        if r.regressed() {
            v[10] = format!("**{}**", v[10]);
        }
        s.push_str(&format!("| {} |\n", v.join(" | ")));
    }
    s
}

/// Warnings for stderr.
pub fn warnings(c: &Comparison, a: &str, b: &str) -> Vec<String> {
    notes(c, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_respect_direction_and_threshold() {
        assert_eq!(change(Some(1.05), 0.1, true), Change::Same);
        assert_eq!(change(Some(1.2), 0.1, true), Change::Better);
        assert_eq!(change(Some(0.8), 0.1, true), Change::Worse);
        assert_eq!(change(Some(1.2), 0.1, false), Change::Worse);
        assert_eq!(change(Some(0.8), 0.1, false), Change::Better);
        assert_eq!(change(None, 0.1, false), Change::Same);
        assert_eq!(ratio(0.0, 5.0), None);
    }
}
