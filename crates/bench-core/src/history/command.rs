//! `bench check PATH`: each saved history under PATH judged again, offline, and on request
//! exported for Elle. Exit 0 valid, 1 anomalies, 2 something undecided, 3 bad input; over
//! several histories anomalies in any come first, then bad input, then undecided ([`worst`]).
//! A usage error of the command line exits 64 (`USAGE`), never a code of a judgement.

use std::path::{Path, PathBuf};

use super::check::{self, ANOMALIES, BAD_INPUT, Checked, UNKNOWN};
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

/// The exit status of `bench check`'s command line when it cannot be parsed (sysexits'
/// `EX_USAGE`): apart from every status of a judgement.
pub const USAGE: u8 = 64;

/// The status of several histories' judgements: anomalies in any first (something a
/// history shows went wrong), then bad input (a history that could not be judged may hide
/// more), then undecided, then valid.
pub fn worst(a: u8, b: u8) -> u8 {
    let rank = |c: u8| match c {
        ANOMALIES => 3,
        BAD_INPUT => 2,
        UNKNOWN => 1,
        _ => 0,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// The history folders `path` names.
fn folders(path: &Path) -> Result<Vec<PathBuf>, String> {
    if path.is_file() {
        if path.file_name() != Some(std::ffi::OsStr::new(HISTORY_FILE)) {
            return Err(format!(
                "{} is not a {HISTORY_FILE}: give a history's folder (histories/<cell>_r<N>/ of \
                 a results directory), its {HISTORY_FILE}, or a results directory",
                path.display()
            ));
        }
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

/// The closing line over several histories: the exit status, and which histories gave each
/// status that is not valid.
fn closing(code: u8, gave: &[(u8, String)]) -> String {
    let named = |status: u8, what: &str| {
        let dirs: Vec<&str> = (gave.iter())
            .filter(|(s, _)| *s == status)
            .map(|(_, d)| d.as_str())
            .collect();
        (!dirs.is_empty()).then(|| format!("{what} in {}", dirs.join(", ")))
    };
    let parts: Vec<String> = [
        named(ANOMALIES, "anomalies"),
        named(BAD_INPUT, "bad input"),
        named(UNKNOWN, "undecided"),
    ]
    .into_iter()
    .flatten()
    .collect();
    match parts.is_empty() {
        true => format!("exit {code}: {} histories, every one valid", gave.len()),
        false => format!("exit {code}: {}", parts.join("; ")),
    }
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
    // Which history gave which status, for the closing line.
    let mut gave: Vec<(u8, String)> = Vec::new();
    for dir in &dirs {
        match one(dir, ask, &mut answer) {
            Ok(c) => {
                answer.code = worst(answer.code, c.status());
                gave.push((c.status(), dir.display().to_string()));
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
                answer.code = worst(answer.code, BAD_INPUT);
                gave.push((BAD_INPUT, dir.display().to_string()));
            }
        }
    }
    if dirs.len() > 1 {
        answer.note(closing(answer.code, &gave));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_several_histories_anomalies_come_first_then_bad_input_then_undecided() {
        use check::VALID;
        assert_eq!(worst(UNKNOWN, ANOMALIES), ANOMALIES);
        assert_eq!(worst(ANOMALIES, UNKNOWN), ANOMALIES);
        assert_eq!(worst(BAD_INPUT, ANOMALIES), ANOMALIES);
        assert_eq!(worst(UNKNOWN, BAD_INPUT), BAD_INPUT);
        assert_eq!(worst(VALID, UNKNOWN), UNKNOWN);
        assert_eq!(worst(VALID, VALID), VALID);
        let gave = [
            (UNKNOWN, "a".to_string()),
            (ANOMALIES, "b".to_string()),
            (VALID, "c".to_string()),
        ];
        assert_eq!(
            closing(ANOMALIES, &gave),
            "exit 1: anomalies in b; undecided in a"
        );
    }

    #[test]
    fn a_file_that_is_not_a_history_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("results.jsonl");
        std::fs::write(&other, "{}").unwrap();
        let err = folders(&other).unwrap_err();
        assert!(err.contains("is not a history.jsonl"), "{err}");
        let answer = run(&Ask {
            path: other,
            ..Ask::default()
        });
        assert_eq!(answer.code, BAD_INPUT);
    }
}
