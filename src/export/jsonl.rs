//! `results.jsonl`: one JSON record per finished cell, appended and fsynced.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::Record;

pub const RESULTS_FILE: &str = "results.jsonl";

/// Append one record as a line and make it durable before returning.
pub fn append(path: &Path, record: &Record) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(record).expect("record serialises");
    line.push(b'\n');
    let mut f = OpenOptions::new().create(true).append(true).open(path)?;
    f.write_all(&line)?;
    f.sync_all()
}

/// Cut a torn last line (a crash mid-write) so that the file ends with a complete line.
/// Earlier lines are never touched. Returns whether anything was cut.
pub fn repair_tail(path: &Path) -> std::io::Result<bool> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(false);
    }
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let f = OpenOptions::new().write(true).open(path)?;
    f.set_len(keep as u64)?;
    f.sync_all()?;
    Ok(true)
}

/// Read every record. Lines that are not records of this format are reported by number.
pub fn read_all(path: &Path) -> Result<Vec<Record>, String> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                format!(
                    "{} line {} is not a bench record ({e}); move the file away or fix that line",
                    path.display(),
                    i + 1
                )
            })
        })
        .collect()
}

/// The records of a results directory (its `results.jsonl`) or of a results JSONL file, for
/// the commands that read finished results. Missing or empty results are an error that
/// names the path.
pub fn load(path: &Path) -> Result<(PathBuf, Vec<Record>), String> {
    let file = if path.is_dir() {
        path.join(RESULTS_FILE)
    } else {
        path.to_path_buf()
    };
    if !file.is_file() {
        return Err(format!(
            "{} has no {RESULTS_FILE}: give a results directory (results/<plan name>/ or a \
             sweep's --out) or a results JSONL file",
            path.display()
        ));
    }
    let records = read_all(&file)?;
    if records.is_empty() {
        return Err(format!(
            "{} holds no records yet; run the sweep first",
            file.display()
        ));
    }
    Ok((file, records))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repair_cuts_only_a_torn_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(RESULTS_FILE);
        assert!(!repair_tail(&p).unwrap());
        fs::write(&p, "{\"a\":1}\n{\"b\":2}\n{\"c\":").unwrap();
        assert!(repair_tail(&p).unwrap());
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"b\":2}\n");
        assert!(!repair_tail(&p).unwrap());
        fs::write(&p, "{\"c\":").unwrap();
        assert!(repair_tail(&p).unwrap());
        assert_eq!(fs::read_to_string(&p).unwrap(), "");
    }
}
