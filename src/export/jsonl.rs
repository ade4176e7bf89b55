//! `results.jsonl`: one JSON record per finished cell, appended and fsynced.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::Record;

pub const RESULTS_FILE: &str = "results.jsonl";

/// Append records (a pair's two: its arms' records) as lines in one write, and make them
/// durable before returning.
pub fn append_all(path: &Path, records: &[Record]) -> std::io::Result<()> {
    let mut lines = Vec::new();
    for record in records {
        serde_json::to_writer(&mut lines, record).expect("record serialises");
        lines.push(b'\n');
    }
    let mut f = OpenOptions::new().create(true).append(true).open(path)?;
    f.write_all(&lines)?;
    f.sync_all()
}

/// The records of a pair (`bench ab` with pairs inside a cell) are appended together, so
/// a crash can leave only one of them at the very end: cut such a lone half, as a torn line
/// is cut (its pair then runs again). Returns whether anything was cut.
pub fn cut_lone_half(path: &Path) -> std::io::Result<bool> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines().rev().filter(|l| !l.trim().is_empty());
    let Some(last) = lines.next() else {
        return Ok(false);
    };
    let Ok(last_rec) = serde_json::from_str::<Record>(last) else {
        return Ok(false);
    };
    if last_rec.paired.is_none() {
        return Ok(false);
    }
    let partner = lines
        .next()
        .and_then(|l| serde_json::from_str::<Record>(l).ok())
        .is_some_and(|p| {
            p.paired.is_some()
                && p.bench_tag == last_rec.bench_tag
                && p.cell_key == last_rec.cell_key
                && p.repetition == last_rec.repetition
                && p.arm.is_some()
                && p.arm != last_rec.arm
        });
    if partner {
        return Ok(false);
    }
    let trimmed = text.trim_end_matches('\n');
    let keep = trimmed.rfind('\n').map_or(0, |i| i + 1);
    let f = OpenOptions::new().write(true).open(path)?;
    f.set_len(keep as u64)?;
    f.sync_all()?;
    Ok(true)
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

    #[test]
    fn a_pair_is_appended_whole_and_a_lone_half_at_the_end_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(RESULTS_FILE);
        let pair = crate::compare::tests::lockstep(2, 20, 1.0);
        let plain = super::super::record::tests::record(
            crate::plan::ModeKind::Continuous,
            crate::plan::Variant::NoIndex,
            100,
            1,
            "x",
        );
        append_all(&p, std::slice::from_ref(&plain)).unwrap();
        append_all(&p, &pair[..2]).unwrap();
        assert!(!cut_lone_half(&p).unwrap(), "a whole pair stays");
        assert_eq!(read_all(&p).unwrap().len(), 3);
        // A crash after the first half of the second pair: that half is cut.
        append_all(&p, &pair[2..3]).unwrap();
        assert!(cut_lone_half(&p).unwrap());
        assert_eq!(
            read_all(&p).unwrap(),
            [plain.clone(), pair[0].clone(), pair[1].clone()]
        );
        assert!(!cut_lone_half(&p).unwrap());
        // A record without pairs is never a half.
        append_all(&p, std::slice::from_ref(&plain)).unwrap();
        assert!(!cut_lone_half(&p).unwrap());
    }
}
