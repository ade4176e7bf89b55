//! `bench check PATH`: each saved history under PATH judged again, offline, and on request
//! exported for Elle. Exit 0 valid, 1 anomalies, 2 something undecided, 3 bad input.

use std::path::{Path, PathBuf};

use super::check::{self, BAD_INPUT, Checked};
use super::{DIR, HISTORY_FILE, VERSIONS_FILE};
use crate::answer::Answer;

/// What `bench check` is asked.
#[derive(Debug, Clone, Default)]
pub struct Ask {
    /// A history's folder, its `history.jsonl`, or a results directory (every history in it).
    pub path: PathBuf,
    pub json: bool,
    /// Also write each history as elle-cli's JSON (`elle.json`) and its commit order
    /// (`transaction-order.json`) in its folder.
    pub export_elle: bool,
}

/// The history folders `path` names.
fn folders(path: &Path) -> Result<Vec<PathBuf>, String> {
    if path.is_file() {
        return Ok(vec![path.parent().unwrap_or(Path::new(".")).to_path_buf()]);
    }
    if path.join(HISTORY_FILE).is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let under = path.join(DIR);
    if !path.is_dir() {
        return Err(format!(
            "{} does not exist: give a history's folder (histories/<cell>_r<N>/ of a results \
             directory), its history.jsonl, or a results directory",
            path.display()
        ));
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(&under)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    found.retain(|p| p.join(HISTORY_FILE).is_file());
    found.sort();
    match found.is_empty() {
        true => Err(format!(
            "{} holds no history: no {HISTORY_FILE} in it, nor under {}/ (cells of roles and \
             mixed cells keep one unless run.keep_history = false)",
            path.display(),
            under.display()
        )),
        false => Ok(found),
    }
}

/// One history folder judged (and exported where asked); why it could not be read.
fn one(dir: &Path, ask: &Ask, answer: &mut Answer) -> Result<Checked, String> {
    let file = dir.join(HISTORY_FILE);
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let saved = super::read(&text).map_err(|b| format!("{}: {b}", file.display()))?;
    let versions = dir.join(VERSIONS_FILE);
    let chain = match versions.is_file() {
        true => {
            let text = std::fs::read_to_string(&versions)
                .map_err(|e| format!("cannot read {}: {e}", versions.display()))?;
            Some(super::read_versions(&text).map_err(|b| format!("{}: {b}", versions.display()))?)
        }
        false => None,
    };
    if ask.export_elle {
        let (h, o) = (dir.join("elle.json"), dir.join("transaction-order.json"));
        let x = export(&saved, &h, &o).map_err(|e| format!("cannot write {}: {e}", h.display()))?;
        let left: Vec<String> = (x.left_out.iter())
            .map(|(why, n)| format!("{n} {why}"))
            .collect();
        answer.note(format!(
            "wrote {} ({} appends, {} reads; left out, checked by bench alone: {}) and {}",
            h.display(),
            x.appends,
            x.reads,
            if left.is_empty() {
                "none".to_string()
            } else {
                left.join(", ")
            },
            o.display()
        ));
    }
    Ok(check::check(&saved, chain.as_ref()))
}

/// Write `saved` for Elle to `history` (through a temporary file beside it) and its commit
/// order to `order`.
fn export(
    saved: &super::Saved,
    history: &Path,
    order: &Path,
) -> std::io::Result<super::elle::Exported> {
    let part = history.with_extension("json.part");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&part)?);
    let x = super::elle::export(&saved.log, saved.header.release_us, &mut out)?;
    std::io::Write::flush(&mut out)?;
    drop(out);
    std::fs::rename(&part, history)?;
    crate::files::write_atomic(order, x.order.as_bytes())?;
    Ok(x)
}

/// `bench check`.
pub fn run(ask: &Ask) -> Answer {
    let mut answer = Answer::default();
    let dirs = match folders(&ask.path) {
        Ok(d) => d,
        Err(e) => {
            answer.note(format!("error: {e}"));
            answer.code = BAD_INPUT;
            return answer;
        }
    };
    let mut all = Vec::new();
    for dir in &dirs {
        match one(dir, ask, &mut answer) {
            Ok(c) => {
                answer.code = answer.code.max(c.status());
                if !ask.json {
                    answer.line(format!("{}:", dir.display()));
                    for l in check::said(&c) {
                        answer.line(format!("  {l}"));
                    }
                }
                all.push((dir.display().to_string(), c));
            }
            Err(e) => {
                answer.note(format!("error: {e}"));
                answer.code = BAD_INPUT;
            }
        }
    }
    if ask.json {
        let rows: Vec<serde_json::Value> = (all.iter())
            .map(|(dir, c)| {
                let mut v = serde_json::to_value(c).expect("findings serialise");
                v["history"] = dir.clone().into();
                v["status"] = c.status().into();
                v["first_violation"] = c.first_violation().into();
                v
            })
            .collect();
        answer.line(serde_json::to_string_pretty(&rows).expect("findings serialise"));
    }
    answer
}
