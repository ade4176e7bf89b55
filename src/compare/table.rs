//! The comparison as an aligned text table and as Markdown, with totals and warnings.

use std::fmt::Write as _;

use super::{Change, Comparison, Row};

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
