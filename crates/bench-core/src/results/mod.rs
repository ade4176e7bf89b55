//! A results directory, and results that outlive a sweep.
//!
//! A sweep writes its records (`results.jsonl`), its checkpoint (`state.json`) and the
//! trace files its records name as it goes; everything else in the directory is derived
//! from the records alone ([`Derived`]), by the one writer here ([`write`]), after every
//! cell, at the end of a merge, and by `bench report` and `bench summarize`. [`FILES`] is
//! what a results directory holds, which `--fresh` moves aside ([`archive`]).
//!
//! Results that outlive a sweep: [`merge`] (shards into one directory), [`publish`] (rows
//! of lance-bench's table) and [`history`] (its series and their change points).

pub mod archive;
pub mod history;
pub mod merge;
pub mod publish;

use std::path::Path;

use crate::error::{BenchError, io_err};
use crate::export::{Record, csv, jsonl, roles};
use crate::report;
use crate::sweep::state::STATE_FILE;
use crate::trace::TRACE_DIR;

/// An output derived from a results directory's records alone: never edited, rewritten
/// whole. To add one: a variant, its files ([`Derived::files`]) and its writer
/// ([`Derived::write`]); every place that writes or moves outputs takes it from there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Derived {
    /// `summary.csv`: one row per cell, the figures' medians over its repetitions.
    Summary,
    /// `report.md` and its charts.
    Report,
    /// `roles.csv`: cells of roles, one row per run and (role, operation).
    Roles,
    /// `campaign.md`: a fault campaign's matrix, its points judged.
    Campaign,
}

impl Derived {
    pub const ALL: [Derived; 4] = [
        Derived::Summary,
        Derived::Roles,
        Derived::Campaign,
        Derived::Report,
    ];

    /// The files and folders it owns, under the results directory.
    pub fn files(self) -> &'static [&'static str] {
        match self {
            Derived::Summary => &[csv::SUMMARY_FILE],
            Derived::Report => &[report::REPORT_FILE, report::CHART_DIR],
            Derived::Roles => &[roles::ROLES_FILE],
            Derived::Campaign => &[crate::report::campaign::FILE],
        }
    }

    /// Whether a sweep (or a merge) that cannot write it stops: the summary is the table of
    /// its figures; a report that failed is a warning (the records and the summary are
    /// safe, and `bench report DIR` draws it again).
    pub fn essential(self) -> bool {
        match self {
            Derived::Summary | Derived::Roles | Derived::Campaign => true,
            Derived::Report => false,
        }
    }

    /// Write it into `dir` from `records` (the records that stand); what it wrote, as a
    /// line to show.
    fn write(self, dir: &Path, records: &[Record]) -> Result<String, BenchError> {
        match self {
            Derived::Summary => {
                let path = dir.join(csv::SUMMARY_FILE);
                csv::write(&path, records).map_err(io_err("write", &path))?;
                Ok(format!("summary: {}", path.display()))
            }
            Derived::Roles => {
                let path = dir.join(roles::ROLES_FILE);
                match roles::write(dir, records).map_err(io_err("write", &path))? {
                    true => Ok(format!("roles:   {}", path.display())),
                    false => Ok(String::new()),
                }
            }
            Derived::Campaign => {
                let path = dir.join(crate::report::campaign::FILE);
                match crate::report::campaign::write(dir, records)
                    .map_err(io_err("write", &path))?
                {
                    true => Ok(format!("campaign: {}", path.display())),
                    false => Ok(String::new()),
                }
            }
            Derived::Report => {
                let w = report::write(dir, records).map_err(BenchError::output)?;
                Ok(format!(
                    "report:  {} ({} charts in {})",
                    w.report.display(),
                    w.charts.len(),
                    dir.join(report::CHART_DIR).display()
                ))
            }
        }
    }
}

/// Everything a sweep keeps in its results directory: its checkpoint, its records, the
/// trace files and histories they name, and every derived output.
pub const FILES: [&str; 9] = [
    STATE_FILE,
    jsonl::RESULTS_FILE,
    TRACE_DIR,
    crate::history::DIR,
    csv::SUMMARY_FILE,
    roles::ROLES_FILE,
    crate::report::campaign::FILE,
    report::REPORT_FILE,
    report::CHART_DIR,
];

/// Bring the derived outputs `which` of `dir` up to date from `records`, in order; what
/// each wrote, or its error.
pub fn write(
    dir: &Path,
    records: &[Record],
    which: &[Derived],
) -> Vec<(Derived, Result<String, BenchError>)> {
    which.iter().map(|&d| (d, d.write(dir, records))).collect()
}

/// [`write`] as a sweep and a merge do it: every derived output (the report only where the
/// directory has something to report: a record, or a failed cell), an essential one's
/// failure an error, another's a warning that says how to retry.
pub fn refresh(dir: &Path, records: &[Record], report: bool) -> Result<Vec<String>, BenchError> {
    let which: Vec<Derived> = (Derived::ALL.into_iter())
        .filter(|&d| report || d != Derived::Report)
        .collect();
    let mut warnings = Vec::new();
    for (d, result) in write(dir, records, &which) {
        match result {
            Err(e) if d.essential() => return Err(e),
            Err(e) => warnings.push(format!(
                "warning: the {} was not written: {e}; retry with `bench report {}`",
                d.name(),
                dir.display()
            )),
            Ok(_) => {}
        }
    }
    Ok(warnings)
}

/// `bench report DIR` (and with `summary`, `bench summarize DIR`): the report (and
/// `summary.csv`) of a results directory drawn again from its records, those that stand by
/// the resume rule. Returns what to print.
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
    for note in several_keys(dir, &records) {
        answer.note(note);
    }
    let records = crate::sweep::resume::stand(dir, records);
    let which: Vec<Derived> = (Derived::ALL.into_iter())
        .filter(|&d| summary || d != Derived::Summary)
        .collect();
    for (_, written) in write(dir, &records, &which) {
        answer.line(written?);
    }
    Ok(answer)
}

/// A note for each cell with records under several keys (plan edits, another root or
/// machine): which of them the outputs use.
fn several_keys(dir: &Path, records: &[Record]) -> Vec<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut keys: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for r in records {
        keys.entry(&r.bench_tag).or_default().insert(&r.cell_key);
    }
    let uses = match crate::sweep::state::State::read(dir).is_some() {
        true => "those of the key its checkpoint (state.json) holds",
        false => "the last one in results.jsonl",
    };
    (keys.iter().filter(|(_, k)| k.len() > 1))
        .map(|(tag, k)| {
            format!(
                "note: {tag} has records under {} different keys (plan edits, another root or \
                 machine); the summary uses {uses}",
                k.len()
            )
        })
        .collect()
}

impl Derived {
    /// What it is called in messages.
    pub fn name(self) -> &'static str {
        match self {
            Derived::Summary => "summary",
            Derived::Report => "report",
            Derived::Roles => "roles table",
            Derived::Campaign => "campaign matrix",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every derived output's files are among the directory's files (what `--fresh` moves
    /// aside), and no two outputs own the same file.
    #[test]
    fn every_derived_file_is_a_results_file_of_one_output() {
        let mut owned: Vec<&str> = Derived::ALL
            .iter()
            .flat_map(|d| d.files())
            .copied()
            .collect();
        for f in &owned {
            assert!(FILES.contains(f), "{f} is not in FILES");
        }
        owned.sort();
        let n = owned.len();
        owned.dedup();
        assert_eq!(owned.len(), n, "a file owned twice");
    }

    /// The sweep's writer: a summary and a report from the records; without the report when
    /// asked; a report that cannot be written is a warning, a summary an error.
    #[test]
    fn refresh_writes_the_outputs_and_says_what_failed() {
        use crate::export::record::tests::record;
        use crate::plan::{ModeKind, Variant};
        let dir = tempfile::tempdir().unwrap();
        let records = vec![record(
            ModeKind::Continuous,
            Variant::InlineIndex,
            100,
            1,
            "c",
        )];
        assert!(refresh(dir.path(), &records, false).unwrap().is_empty());
        assert!(dir.path().join(csv::SUMMARY_FILE).is_file());
        assert!(!dir.path().join(report::REPORT_FILE).exists());
        assert!(refresh(dir.path(), &records, true).unwrap().is_empty());
        assert!(dir.path().join(report::REPORT_FILE).is_file());
        // A file where the charts' folder goes: the report fails, the summary is written.
        std::fs::remove_dir_all(dir.path().join(report::CHART_DIR)).unwrap();
        std::fs::write(dir.path().join(report::CHART_DIR), "not a folder").unwrap();
        let warnings = refresh(dir.path(), &records, true).unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("warning: the report was not written"));
        assert!(warnings[0].contains("bench report"));
        // A folder where the summary goes: an error.
        std::fs::remove_file(dir.path().join(csv::SUMMARY_FILE)).unwrap();
        std::fs::create_dir(dir.path().join(csv::SUMMARY_FILE)).unwrap();
        assert!(refresh(dir.path(), &records, false).is_err());
    }

    /// docs/architecture.md's "To add …" section names real places: each file exists, and
    /// each `path::function` (or `Type::CONST`) it names is defined in a file of its paragraph.
    #[test]
    fn architecture_names_real_places() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
        let section = doc
            .split("## To add …")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .expect("a To add section");
        let mut checked = 0;
        for paragraph in section.split("\n\n") {
            let quoted: Vec<&str> = paragraph.split('`').skip(1).step_by(2).collect();
            let files: Vec<String> = (quoted.iter())
                .filter(|q| q.starts_with("crates/") && q.ends_with(".rs"))
                .map(|f| {
                    std::fs::read_to_string(root.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
                })
                .collect();
            for name in quoted
                .iter()
                .filter(|q| !q.contains(' ') && q.contains("::"))
            {
                let item = name.rsplit("::").next().unwrap();
                let wanted = match item.chars().next() {
                    // A variant (a scratch one, or one of an enum's values): not a definition.
                    Some(c) if c.is_uppercase() && item.chars().any(|c| c.is_lowercase()) => {
                        continue;
                    }
                    Some(c) if c.is_uppercase() => format!("const {item}"),
                    _ => format!("fn {item}"),
                };
                assert!(
                    files.iter().any(|f| f.contains(&wanted)),
                    "docs/architecture.md names `{name}`, but no file of its paragraph defines `{wanted}`"
                );
                checked += 1;
            }
        }
        assert!(checked >= 15, "{checked} names checked");
    }
}
