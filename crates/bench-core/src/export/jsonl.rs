//! `results.jsonl`: one JSON record per finished cell, appended and fsynced.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::Record;

pub const RESULTS_FILE: &str = "results.jsonl";

/// Append records (a pair's two: its arms' records) as lines in one write (every value kept
/// hidden replaced: [`crate::redact`]), and make them durable before returning. Returns
/// them as every reader of the file reads them back (values hidden; each number as parsed,
/// which may differ from the one written in its last bit): what the derived outputs are
/// made of, so that a summary written after a cell is the one `bench summarize` writes
/// again from the file.
pub fn append_all(path: &Path, records: &[Record]) -> std::io::Result<Vec<Record>> {
    let mut lines = Vec::new();
    for record in records {
        serde_json::to_writer(&mut lines, record).expect("record serialises");
        lines.push(b'\n');
    }
    let lines = crate::redact::hide_json(&lines, true);
    let mut f = OpenOptions::new().create(true).append(true).open(path)?;
    f.write_all(&lines)?;
    f.sync_all()?;
    let read = |l: &[u8]| {
        serde_json::from_slice(l).map_err(|e| {
            std::io::Error::other(format!("a record just written does not read back: {e}"))
        })
    };
    (lines.split(|&b| b == b'\n'))
        .filter(|l| !l.is_empty())
        .map(read)
        .collect()
}

/// What a crash can leave at the end of `results.jsonl`, and what every reader leaves out:
/// a torn last line (a crash mid-write: the file does not end with a newline), then a lone
/// half of a pair (`bench ab` appends a pair's two records in one write, so a crash can
/// leave only the first). `bench run` cuts them from the file ([`repair`]); `bench status`,
/// `bench plan`, `bench merge` and the other readers, which must not write, skip them
/// ([`read_all`]): one rule, so a reader counts exactly what a resume would keep.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tail {
    pub torn: bool,
    pub lone_half: bool,
}

/// How many bytes of `bytes` are whole records (see [`Tail`]), and what is past them.
fn kept(bytes: &[u8]) -> (usize, Tail) {
    let mut tail = Tail::default();
    let mut keep = bytes.len();
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        tail.torn = true;
        keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    }
    let text = String::from_utf8_lossy(&bytes[..keep]);
    let mut lines = text
        .trim_end_matches('\n')
        .rsplit('\n')
        .filter(|l| !l.trim().is_empty());
    let last = lines
        .next()
        .and_then(|l| serde_json::from_str::<Record>(l).ok());
    if let Some(last) = last.filter(|r| r.paired.is_some()) {
        let partner = lines
            .next()
            .and_then(|l| serde_json::from_str::<Record>(l).ok())
            .is_some_and(|p| {
                p.paired.is_some()
                    && p.bench_tag == last.bench_tag
                    && p.cell_key == last.cell_key
                    && p.repetition == last.repetition
                    && p.arm.is_some()
                    && p.arm != last.arm
            });
        if !partner {
            tail.lone_half = true;
            let trimmed = text.trim_end_matches('\n');
            keep = trimmed.rfind('\n').map_or(0, |i| i + 1);
        }
    }
    (keep, tail)
}

fn read_bytes(path: &Path) -> std::io::Result<Vec<u8>> {
    match fs::read(path) {
        Ok(b) => Ok(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Cut what a crash left at the end of the file (see [`Tail`]), so that it ends with whole
/// records; earlier lines are never touched. Returns what was cut.
pub fn repair(path: &Path) -> std::io::Result<Tail> {
    let bytes = read_bytes(path)?;
    let (keep, tail) = kept(&bytes);
    if keep < bytes.len() {
        let f = OpenOptions::new().write(true).open(path)?;
        f.set_len(keep as u64)?;
        f.sync_all()?;
    }
    Ok(tail)
}

/// Read every whole record, leaving out what a crash left at the end (see [`Tail`]). A line
/// before that which is not a record of this format is reported by number.
pub fn read_all(path: &Path) -> Result<Vec<Record>, String> {
    let bytes = read_bytes(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let (keep, _) = kept(&bytes);
    String::from_utf8_lossy(&bytes[..keep])
        .lines()
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

    const TORN: Tail = Tail {
        torn: true,
        lone_half: false,
    };
    const HALF: Tail = Tail {
        torn: false,
        lone_half: true,
    };

    #[test]
    fn repair_cuts_only_a_torn_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(RESULTS_FILE);
        assert_eq!(repair(&p).unwrap(), Tail::default());
        fs::write(&p, "{\"a\":1}\n{\"b\":2}\n{\"c\":").unwrap();
        assert_eq!(repair(&p).unwrap(), TORN);
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"b\":2}\n");
        assert_eq!(repair(&p).unwrap(), Tail::default());
        fs::write(&p, "{\"c\":").unwrap();
        assert_eq!(repair(&p).unwrap(), TORN);
        assert_eq!(fs::read_to_string(&p).unwrap(), "");
    }

    /// The readers (status, plan, merge) leave out exactly what a resume cuts, without
    /// writing: the same records either way.
    #[test]
    fn a_reader_skips_what_a_repair_cuts_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(RESULTS_FILE);
        let plain = super::super::record::tests::record(
            crate::plan::ModeKind::Continuous,
            crate::plan::Variant::NoIndex,
            100,
            1,
            "x",
        );
        append_all(&p, &[plain.clone(), plain.clone()]).unwrap();
        let whole = fs::read(&p).unwrap();
        // What was appended is returned as a reader reads it back, to the last bit of
        // every number (a cost of 22.815 written and parsed may round to another cent).
        let mut priced = plain.clone();
        priced.avg_latency_ms = 0.1 + 0.2 + 22.515;
        let other = dir.path().join("other.jsonl");
        let back = append_all(&other, std::slice::from_ref(&priced)).unwrap();
        assert_eq!(back, read_all(&other).unwrap());
        // A crash mid-write: half of a third record, no newline.
        let mut torn = whole.clone();
        torn.extend_from_slice(&whole[..whole.len() / 3]);
        fs::write(&p, &torn).unwrap();
        assert_eq!(read_all(&p).unwrap(), [plain.clone(), plain.clone()]);
        assert_eq!(fs::read(&p).unwrap(), torn, "a reader writes nothing");
        // Even a whole record without its newline is a torn write.
        let line_end = whole.iter().position(|&b| b == b'\n').unwrap();
        fs::write(&p, &whole[..line_end]).unwrap();
        assert!(read_all(&p).unwrap().is_empty());
        assert_eq!(repair(&p).unwrap(), TORN);
        assert!(read_all(&p).unwrap().is_empty());
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
        assert_eq!(repair(&p).unwrap(), Tail::default(), "a whole pair stays");
        assert_eq!(read_all(&p).unwrap().len(), 3);
        // A crash after the first half of the second pair: a reader leaves that half out,
        // and a repair cuts it.
        append_all(&p, &pair[2..3]).unwrap();
        assert_eq!(read_all(&p).unwrap().len(), 3);
        assert_eq!(repair(&p).unwrap(), HALF);
        assert_eq!(
            read_all(&p).unwrap(),
            [plain.clone(), pair[0].clone(), pair[1].clone()]
        );
        assert_eq!(repair(&p).unwrap(), Tail::default());
        // A record without pairs is never a half; a torn line after a lone half takes both.
        append_all(&p, std::slice::from_ref(&plain)).unwrap();
        assert_eq!(repair(&p).unwrap(), Tail::default());
        append_all(&p, &pair[2..3]).unwrap();
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"{\"torn").unwrap();
        assert_eq!(read_all(&p).unwrap().len(), 4);
        assert_eq!(
            repair(&p).unwrap(),
            Tail {
                torn: true,
                lone_half: true
            }
        );
        assert_eq!(read_all(&p).unwrap().len(), 4);
    }
}
