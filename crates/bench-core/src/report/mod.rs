//! `report.md` and its SVG charts, derived from the records alone (like `summary.csv`):
//! which charts and lines ([`charts`]), how they are drawn ([`svg`]), and the Markdown
//! around them ([`markdown`]).

pub mod campaign;
mod charts;
pub mod keeping;
pub mod line;
mod markdown;
mod roles;
mod story;
pub mod svg;

use std::path::{Path, PathBuf};

use crate::export::{Record, cells};
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
    // A fault campaign's points are judged in their own section, never drawn or tabled as
    // measurements.
    let measured: Vec<Record> = (records.iter())
        .filter(|r| r.attached.fault.is_none())
        .cloned()
        .collect();
    let cells = cells(&measured);
    let mut charts = charts::charts(&cells);
    charts.extend(roles::charts(&cells));
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
    // The campaign's matrices, drawn with campaign.md (which is written first): kept.
    written.extend(campaign::chart_paths(dir, records));
    if let Ok(entries) = std::fs::read_dir(&chart_dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "svg") && !written.contains(&p) {
                let _ = std::fs::remove_file(&p);
            }
        }
    }
    // Failed cells are in the checkpoint (they have no records), with their reasons.
    let failed: Vec<(String, String)> = crate::sweep::state::State::read(dir)
        .map(|s| {
            s.cells
                .into_iter()
                .filter(|(id, c)| {
                    c.status == crate::sweep::state::Status::Failed && !campaign::is_point(id)
                })
                .map(|(id, c)| (id, c.reason.unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let report = dir.join(REPORT_FILE);
    let text = markdown::markdown((records, &measured), &cells, &charts, &failed);
    write_atomic(&report, text.as_bytes()).map_err(io("write", &report))?;
    Ok(Written {
        report,
        charts: written,
    })
}
