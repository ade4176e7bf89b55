//! `report.md` and its SVG charts, derived from the records alone (like `summary.csv`):
//! throughput and latency against catalog size for continuous cells, throughput and errors
//! against writers for concurrent cells, reads and commits of mixed cells. Every table
//! shows the same numbers as `summary.csv` (they are formatted by the same code).

pub mod chart;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::BenchError;
use crate::export::csv::{self, COLUMNS};
use crate::export::{Record, jsonl};
use chart::{Chart, Series};

pub const REPORT_FILE: &str = "report.md";
pub const CHART_DIR: &str = "charts";

/// What [`write`] produced.
#[derive(Debug)]
pub struct Written {
    pub report: PathBuf,
    pub charts: Vec<PathBuf>,
}

/// One cell: the records of its latest key (its repetitions), of which figures are medians.
struct Cell<'a> {
    reps: Vec<&'a Record>,
}

impl Cell<'_> {
    /// The parameters are the same in every repetition.
    fn first(&self) -> &Record {
        self.reps[0]
    }
    fn med(&self, f: impl Fn(&Record) -> f64) -> f64 {
        csv::med(&self.reps, f)
    }
}

/// The cells of these records, in the summary's order.
fn cells(records: &[Record]) -> Vec<Cell<'_>> {
    csv::rows(records)
        .into_iter()
        .map(|reps| Cell { reps })
        .collect()
}

/// (x, y) points of a series.
type Points = Vec<(f64, f64)>;

fn variant_color(variant: &str) -> usize {
    usize::from(variant != "inline_index")
}

fn rows_label(rows: u64) -> String {
    format!("{} rows", chart::tick(rows as f64))
}

/// The charts for a set of records, each with its file name (without directory).
fn charts(cells: &[Cell<'_>]) -> Vec<(String, String, Chart)> {
    let mut out = Vec::new();
    let by_mode =
        |m: &str| -> Vec<&Cell<'_>> { cells.iter().filter(|c| c.first().mode == m).collect() };
    let ops: BTreeSet<&str> = cells.iter().map(|c| c.first().operation.as_str()).collect();
    let op = ops.into_iter().collect::<Vec<_>>().join(", ");
    let per_sec = if op.split(", ").all(|o| o.starts_with("write-")) {
        "commits/s"
    } else {
        "operations/s"
    };

    let cont = by_mode("continuous");
    if !cont.is_empty() {
        let mut tps: BTreeMap<&str, Points> = BTreeMap::new();
        let mut lat: BTreeMap<&str, (Points, Points)> = BTreeMap::new();
        for c in &cont {
            let x = c.first().initial_entries as f64;
            let v = c.first().variant.as_str();
            tps.entry(v)
                .or_default()
                .push((x, c.med(|r| r.throughput_ops_per_sec)));
            let l = lat.entry(v).or_default();
            l.0.push((x, c.med(|r| r.p50_latency_ms)));
            l.1.push((x, c.med(|r| r.p99_latency_ms)));
        }
        out.push((
            "continuous_throughput.svg".into(),
            "Continuous: throughput against catalog size".into(),
            Chart {
                title: format!("One writer ({op}): throughput vs catalog size"),
                x_desc: "rows in __manifest (log scale)".into(),
                y_desc: format!("throughput ({per_sec}, log scale)"),
                x_log: true,
                y_log: true,
                x_ticks: None,
                y_integer: false,
                legend_left: false,
                series: tps
                    .into_iter()
                    .map(|(v, points)| Series {
                        name: v.to_string(),
                        points,
                        color: variant_color(v),
                        dashed: false,
                    })
                    .collect(),
            },
        ));
        out.push((
            "continuous_latency.svg".into(),
            "Continuous: p50 and p99 latency against catalog size".into(),
            Chart {
                title: format!("One writer ({op}): latency vs catalog size"),
                x_desc: "rows in __manifest (log scale)".into(),
                y_desc: "latency per operation (ms, log scale)".into(),
                x_log: true,
                y_log: true,
                x_ticks: None,
                y_integer: false,
                legend_left: true,
                series: lat
                    .into_iter()
                    .flat_map(|(v, (p50, p99))| {
                        [
                            Series {
                                name: format!("{v} p50"),
                                points: p50,
                                color: variant_color(v),
                                dashed: false,
                            },
                            Series {
                                name: format!("{v} p99"),
                                points: p99,
                                color: variant_color(v),
                                dashed: true,
                            },
                        ]
                    })
                    .collect(),
            },
        ));
    }

    let conc = by_mode("concurrent");
    let variants: BTreeSet<&str> = conc.iter().map(|c| c.first().variant.as_str()).collect();
    for v in variants {
        let writers: Vec<f64> = conc
            .iter()
            .filter(|c| c.first().variant == v)
            .map(|c| c.first().concurrency)
            .collect::<BTreeSet<u32>>()
            .into_iter()
            .map(f64::from)
            .collect();
        let mut tps: BTreeMap<u64, Points> = BTreeMap::new();
        let mut errs: BTreeMap<u64, Points> = BTreeMap::new();
        for c in conc.iter().filter(|c| c.first().variant == v) {
            let x = f64::from(c.first().concurrency);
            let rows = c.first().initial_entries;
            tps.entry(rows)
                .or_default()
                .push((x, c.med(|r| r.throughput_ops_per_sec)));
            errs.entry(rows)
                .or_default()
                .push((x, c.med(|r| r.errors as f64)));
        }
        let series = |m: BTreeMap<u64, Points>| {
            m.into_iter()
                .enumerate()
                .map(|(i, (rows, points))| Series {
                    name: rows_label(rows),
                    points,
                    color: i,
                    dashed: false,
                })
                .collect()
        };
        out.push((
            format!("concurrent_throughput_{v}.svg"),
            format!("Concurrent ({v}): throughput against writers"),
            Chart {
                title: format!("Concurrent writers, {v}: throughput vs writers"),
                x_desc: "writer processes (log scale)".into(),
                y_desc: format!("total throughput ({per_sec}, log scale)"),
                x_log: true,
                y_log: true,
                x_ticks: Some(writers.clone()),
                y_integer: false,
                legend_left: false,
                series: series(tps),
            },
        ));
        out.push((
            format!("concurrent_errors_{v}.svg"),
            format!("Concurrent ({v}): errors against writers"),
            Chart {
                title: format!("Concurrent writers, {v}: errors vs writers"),
                x_desc: "writer processes (log scale)".into(),
                y_desc: "failed operations per cell (count)".into(),
                x_log: true,
                y_log: false,
                x_ticks: Some(writers),
                y_integer: true,
                legend_left: true,
                series: series(errs),
            },
        ));
    }

    let mixed = by_mode("mixed");
    if !mixed.is_empty() {
        let mut lines: BTreeMap<(&str, u32), (Points, Points)> = BTreeMap::new();
        for c in &mixed {
            let x = c.first().initial_entries as f64;
            let l = lines
                .entry((c.first().variant.as_str(), c.first().concurrency))
                .or_default();
            l.0.push((
                x,
                csv::read_med(&c.reps, |r| r.throughput_ops_per_sec).unwrap_or(0.0),
            ));
            l.1.push((x, c.med(|r| r.throughput_ops_per_sec)));
        }
        let multi = lines.keys().map(|k| k.1).collect::<BTreeSet<_>>().len() > 1;
        let series = lines
            .into_iter()
            .enumerate()
            .flat_map(|(i, ((v, clients), (reads, commits)))| {
                let who = if multi {
                    format!("{v}, {clients} clients")
                } else {
                    v.to_string()
                };
                let color = if multi { i } else { variant_color(v) };
                [
                    Series {
                        name: format!("{who} reads"),
                        points: reads,
                        color,
                        dashed: false,
                    },
                    Series {
                        name: format!("{who} commits"),
                        points: commits,
                        color,
                        dashed: true,
                    },
                ]
            })
            .collect();
        out.push((
            "mixed_throughput.svg".into(),
            "Mixed: reads and commits against catalog size".into(),
            Chart {
                title: "Mixed load: reads and commits vs catalog size".into(),
                x_desc: "rows in __manifest (log scale)".into(),
                y_desc: "throughput (operations/s, log scale)".into(),
                x_log: true,
                y_log: true,
                x_ticks: None,
                y_integer: false,
                legend_left: false,
                series,
            },
        ));
    }
    out
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().expect("output path has a parent");
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// A report section: mode, heading, chart file prefix, and its table's (summary column,
/// heading) pairs.
type Section = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// A Markdown table of some `summary.csv` columns, under their own headings.
fn table(rows: &[&[String; 34]], cols: &[(&str, &str)]) -> String {
    let idx: Vec<usize> = cols
        .iter()
        .map(|(c, _)| {
            COLUMNS
                .iter()
                .position(|k| k == c)
                .expect("a summary column")
        })
        .collect();
    let mut s = String::new();
    s.push_str(&format!(
        "| {} |\n|{}|\n",
        cols.iter().map(|c| c.1).collect::<Vec<_>>().join(" | "),
        cols.iter()
            .map(|c| if c.0 == "variant" { ":---" } else { "---:" })
            .collect::<Vec<_>>()
            .join("|")
    ));
    for r in rows {
        let cells: Vec<&str> = idx.iter().map(|&i| r[i].as_str()).collect();
        s.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    s
}

fn markdown(records: &[Record], cells: &[Cell<'_>], charts: &[(String, String, Chart)]) -> String {
    let set = |f: fn(&Record) -> &str| {
        records
            .iter()
            .map(f)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let first = records
        .iter()
        .map(|r| r.started_at.as_str())
        .min()
        .unwrap_or("");
    let last = records
        .iter()
        .map(|r| r.finished_at.as_str())
        .max()
        .unwrap_or("");
    let mut s = format!("# bench report: {}\n\n", set(|r| r.plan.as_str()));
    s.push_str(&format!(
        "{} cells from {} records in `{}` (operation {}; lance {}; storage {}; host {}; run {} to {}). \
         Throughput counts successful operations in the measured window (release of the workers to \
         the end of the last operation); figures are medians over a cell's repetitions. The tables \
         hold the same numbers as `{}`.\n\n",
        cells.len(),
        records.len(),
        jsonl::RESULTS_FILE,
        set(|r| r.operation.as_str()),
        set(|r| r.lance_version.as_str()),
        set(|r| r.storage_scheme.as_str()),
        set(|r| r.hostname.as_str()),
        first,
        last,
        csv::SUMMARY_FILE,
    ));
    let unverified: Vec<&Cell<'_>> = cells
        .iter()
        .filter(|c| c.reps.iter().any(|r| !r.verified))
        .collect();
    if unverified.is_empty() {
        s.push_str(
            "Verification: every cell's `__manifest` held exactly its reported commits.\n\n",
        );
    } else {
        s.push_str("**Verification FAILED** for these cells; their numbers cannot be trusted:\n\n");
        for c in unverified {
            for r in c.reps.iter().filter(|r| !r.verified) {
                s.push_str(&format!(
                    "- `{}` (repetition {}): {}\n",
                    r.bench_tag,
                    r.repetition,
                    r.verify_error.as_deref().unwrap_or("no reason recorded")
                ));
            }
        }
        s.push('\n');
    }

    let all = csv::table(records);
    let mode_of = |row: &[String; 34]| row[0].clone();
    let chart_md = |prefix: &str| {
        charts
            .iter()
            .filter(|(f, _, _)| f.starts_with(prefix))
            .map(|(f, alt, _)| format!("![{alt}]({CHART_DIR}/{f})\n\n"))
            .collect::<String>()
    };
    let sections: [Section; 3] = [
        (
            "continuous",
            "Continuous cells: one writer, a fixed number of operations",
            "continuous_",
            &[
                ("variant", "variant"),
                ("initial_entries", "rows"),
                ("ops", "ops"),
                ("errors", "errors"),
                ("tps", "ops/s"),
                ("avg_ms", "avg ms"),
                ("p50_ms", "p50 ms"),
                ("p90_ms", "p90 ms"),
                ("p99_ms", "p99 ms"),
                ("max_ms", "max ms"),
                ("verified", "verified"),
                ("repetitions", "reps"),
            ],
        ),
        (
            "concurrent",
            "Concurrent cells: C writers for a fixed duration",
            "concurrent_",
            &[
                ("variant", "variant"),
                ("initial_entries", "rows"),
                ("concurrency", "writers"),
                ("duration_secs", "secs"),
                ("ops", "ops"),
                ("errors", "errors"),
                ("conflicts", "conflicts"),
                ("tps", "ops/s"),
                ("p50_ms", "p50 ms"),
                ("p99_ms", "p99 ms"),
                ("verified", "verified"),
                ("repetitions", "reps"),
            ],
        ),
        (
            "mixed",
            "Mixed cells: C clients, reads between commits",
            "mixed_",
            &[
                ("variant", "variant"),
                ("initial_entries", "rows"),
                ("concurrency", "clients"),
                ("ops", "commits"),
                ("errors", "commit errors"),
                ("tps", "commits/s"),
                ("p50_ms", "commit p50 ms"),
                ("p99_ms", "commit p99 ms"),
                ("read_ops", "reads"),
                ("read_errors", "read errors"),
                ("read_tps", "reads/s"),
                ("read_p50_ms", "read p50 ms"),
                ("read_p99_ms", "read p99 ms"),
                ("verified", "verified"),
                ("repetitions", "reps"),
            ],
        ),
    ];
    for (mode, heading, prefix, cols) in sections {
        let rows: Vec<&[String; 34]> = all.iter().filter(|r| mode_of(r) == mode).collect();
        if rows.is_empty() {
            continue;
        }
        s.push_str(&format!("## {heading}\n\n"));
        s.push_str(&chart_md(prefix));
        s.push_str(&table(&rows, cols));
        s.push('\n');
    }
    s
}

/// Write `report.md` and `charts/*.svg` into `dir` from these records, replacing an
/// earlier report (each file atomically; charts that no longer apply are removed).
pub fn write(dir: &Path, records: &[Record]) -> Result<Written, String> {
    let cells = cells(records);
    let charts = charts(&cells);
    let chart_dir = dir.join(CHART_DIR);
    let io = |what: &str, p: &Path| {
        let msg = format!("cannot {what} {}", p.display());
        move |e: std::io::Error| format!("{msg}: {e}")
    };
    std::fs::create_dir_all(&chart_dir).map_err(io("create", &chart_dir))?;
    let mut written = Vec::new();
    for (file, _, c) in &charts {
        let path = chart_dir.join(file);
        let svg = chart::render(c)?;
        write_atomic(&path, svg.as_bytes()).map_err(io("write", &path))?;
        written.push(path);
    }
    if let Ok(entries) = std::fs::read_dir(&chart_dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "svg") && !written.contains(&p) {
                let _ = std::fs::remove_file(&p);
            }
        }
    }
    let report = dir.join(REPORT_FILE);
    write_atomic(&report, markdown(records, &cells, &charts).as_bytes())
        .map_err(io("write", &report))?;
    Ok(Written {
        report,
        charts: written,
    })
}

/// `bench report DIR` (and with `summary`, `bench summarize DIR`): rebuild the report (and
/// `summary.csv`) of a results directory from its `results.jsonl`. Returns what to print.
pub fn regenerate(dir: &Path, summary: bool) -> Result<String, BenchError> {
    if !dir.is_dir() {
        return Err(BenchError::Output(format!(
            "{} is not a results directory: give the directory of a sweep (results/<plan name>/ \
             or its --out), where the report is written",
            dir.display()
        )));
    }
    let (_, records) = jsonl::load(dir).map_err(BenchError::Output)?;
    // Read first, so a directory without results gets nothing, not even a lock file.
    let _lock = crate::lock::acquire(dir)?;
    let mut out = String::new();
    // Records of one cell under several keys: only the last key counts (as in summary.csv).
    let mut keys: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for r in &records {
        keys.entry(&r.bench_tag).or_default().insert(&r.cell_key);
    }
    for (tag, k) in keys.iter().filter(|(_, k)| k.len() > 1) {
        eprintln!(
            "note: {tag} has records under {} different keys (plan edits, another root or machine); \
             the summary uses the last one in {}",
            k.len(),
            jsonl::RESULTS_FILE
        );
    }
    if summary {
        let path = dir.join(csv::SUMMARY_FILE);
        csv::write(&path, &records)
            .map_err(|e| BenchError::Output(format!("cannot write {}: {e}", path.display())))?;
        out.push_str(&format!("summary: {}\n", path.display()));
    }
    let w = write(dir, &records).map_err(BenchError::Output)?;
    out.push_str(&format!(
        "report:  {} ({} charts in {})\n",
        w.report.display(),
        w.charts.len(),
        dir.join(CHART_DIR).display()
    ));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::csv::tests::record;

    #[test]
    fn charts_follow_the_modes_present() {
        let mut recs = vec![
            record(
                "continuous",
                "inline_index",
                1000,
                1,
                "cont_inline_true_rows_1000",
            ),
            record(
                "continuous",
                "no_index",
                1000,
                1,
                "cont_inline_false_rows_1000",
            ),
            record(
                "concurrent",
                "no_index",
                1000,
                2,
                "conc_inline_false_rows_1000_c_2",
            ),
            record(
                "concurrent",
                "no_index",
                1000,
                4,
                "conc_inline_false_rows_1000_c_4",
            ),
        ];
        recs[3].errors = 7;
        let cells = cells(&recs);
        let names: Vec<String> = charts(&cells).into_iter().map(|c| c.0).collect();
        assert_eq!(
            names,
            [
                "continuous_throughput.svg",
                "continuous_latency.svg",
                "concurrent_throughput_no_index.svg",
                "concurrent_errors_no_index.svg"
            ]
        );
        let errs = &charts(&cells)[3].2;
        assert_eq!(errs.series[0].name, "1k rows");
        assert_eq!(errs.series[0].points, [(2.0, 0.0), (4.0, 7.0)]);
    }
}
