//! `report.md` and its SVG charts, derived from the records alone (like `summary.csv`):
//! which charts and lines ([`charts`]), how they are drawn ([`svg`]), and the Markdown
//! around them ([`markdown`]).

mod charts;
mod markdown;
pub mod svg;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::BenchError;
use crate::export::{Record, cells, csv, jsonl};
use crate::files::write_atomic;

pub const REPORT_FILE: &str = "report.md";
pub const CHART_DIR: &str = "charts";

/// What [`write`] produced.
#[derive(Debug)]
pub struct Written {
    pub report: PathBuf,
    pub charts: Vec<PathBuf>,
}

/// Write `report.md` and `charts/*.svg` into `dir` from these records, replacing an
/// earlier report (each file atomically; charts that no longer apply are removed).
pub fn write(dir: &Path, records: &[Record]) -> Result<Written, String> {
    let cells = cells(records);
    let charts = charts::charts(&cells);
    let chart_dir = dir.join(CHART_DIR);
    let io = |what: &str, p: &Path| {
        let msg = format!("cannot {what} {}", p.display());
        move |e: std::io::Error| format!("{msg}: {e}")
    };
    std::fs::create_dir_all(&chart_dir).map_err(io("create", &chart_dir))?;
    let mut written = Vec::new();
    for c in &charts {
        let path = chart_dir.join(&c.file);
        let svg = svg::render(c)?;
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
    // Failed cells are in the checkpoint (they have no records), with their reasons.
    let failed: Vec<(String, String)> = crate::state::State::read(dir)
        .map(|s| {
            s.cells
                .into_iter()
                .filter(|(_, c)| c.status == crate::state::Status::Failed)
                .map(|(id, c)| (id, c.reason.unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let report = dir.join(REPORT_FILE);
    let text = markdown::markdown(records, &cells, &charts, &failed);
    write_atomic(&report, text.as_bytes()).map_err(io("write", &report))?;
    Ok(Written {
        report,
        charts: written,
    })
}

/// `bench report DIR` (and with `summary`, `bench summarize DIR`): rebuild the report (and
/// `summary.csv`) of a results directory from its `results.jsonl`. Returns what to print.
pub fn regenerate(dir: &Path, summary: bool) -> Result<crate::answer::Answer, BenchError> {
    if !dir.is_dir() {
        return Err(BenchError::output(format!(
            "{} is not a results directory: give the directory of a sweep (results/<plan name>/ \
             or its --out), where the report is written",
            dir.display()
        )));
    }
    let (_, records) = jsonl::load(dir).map_err(BenchError::output)?;
    // Read first, so a directory without results gets nothing, not even a lock file.
    let _lock = crate::lock::acquire(dir)?;
    let mut answer = crate::answer::Answer::default();
    // Records of one cell under several keys: those of the key its checkpoint holds count
    // (the rule of the resume), or without a checkpoint the last key in the file.
    let state = crate::state::State::read(dir);
    let mut keys: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for r in &records {
        keys.entry(&r.bench_tag).or_default().insert(&r.cell_key);
    }
    for (tag, k) in keys.iter().filter(|(_, k)| k.len() > 1) {
        answer.note(format!(
            "note: {tag} has records under {} different keys (plan edits, another root or machine); \
             the summary uses {}",
            k.len(),
            match &state {
                Some(_) => "those of the key its checkpoint (state.json) holds",
                None => "the last one in results.jsonl",
            }
        ));
    }
    let records = match &state {
        Some(s) => crate::export::standing(&records, &s.keys()),
        None => records,
    };
    if summary {
        let path = dir.join(csv::SUMMARY_FILE);
        csv::write(&path, &records).map_err(|e| BenchError::io("write", &path, e))?;
        answer.line(format!("summary: {}", path.display()));
    }
    let w = write(dir, &records).map_err(BenchError::output)?;
    answer.line(format!(
        "report:  {} ({} charts in {})",
        w.report.display(),
        w.charts.len(),
        dir.join(CHART_DIR).display()
    ));
    Ok(answer)
}
