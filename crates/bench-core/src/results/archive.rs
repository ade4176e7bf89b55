//! `--fresh`: the outputs of an earlier run are moved aside, never deleted.

use std::path::{Path, PathBuf};

use crate::error::{BenchError, io_err};

/// Move the outputs of an earlier run into `previous-<time>/` (nothing is deleted): the
/// records' trace files go with them, so that the paths they name still hold.
pub fn archive_outputs(out: &Path) -> Result<Option<PathBuf>, BenchError> {
    let present: Vec<_> = super::FILES
        .iter()
        .filter(|f| out.join(f).exists())
        .collect();
    if present.is_empty() {
        return Ok(None);
    }
    // A directory of its own, never one that exists: two --fresh runs within one second
    // get `previous-<time>` and `previous-<time>-2`, and no archive is overwritten.
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let mut n = 1;
    let dest = loop {
        let dest = match n {
            1 => out.join(format!("previous-{stamp}")),
            n => out.join(format!("previous-{stamp}-{n}")),
        };
        match std::fs::create_dir(&dest) {
            Ok(()) => break dest,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
            Err(e) => return Err(io_err("create", &dest)(e)),
        }
    };
    for f in present {
        let from = out.join(f);
        std::fs::rename(&from, dest.join(f)).map_err(io_err("move away", &from))?;
    }
    Ok(Some(dest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::jsonl;
    use crate::trace::TRACE_DIR;

    /// Three archives in a row (within one second, as two quick `--fresh` runs): each in a
    /// directory of its own, none overwriting another.
    #[test]
    fn fresh_archives_never_overwrite_one_another() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        let mut dests = Vec::new();
        for i in 0..3 {
            std::fs::write(out.join(jsonl::RESULTS_FILE), format!("run {i}\n")).unwrap();
            dests.push(archive_outputs(out).unwrap().unwrap());
        }
        assert!(!out.join(jsonl::RESULTS_FILE).exists());
        let kept: std::collections::BTreeSet<String> = dests
            .iter()
            .map(|d| std::fs::read_to_string(d.join(jsonl::RESULTS_FILE)).unwrap())
            .collect();
        assert_eq!(kept.len(), 3, "{dests:?}");
        assert_eq!(
            archive_outputs(out).unwrap(),
            None,
            "nothing left to archive"
        );
        // The trace files go with the records that name them (relative paths still hold).
        std::fs::write(out.join(jsonl::RESULTS_FILE), "run 4\n").unwrap();
        std::fs::create_dir_all(out.join(TRACE_DIR)).unwrap();
        std::fs::write(out.join(TRACE_DIR).join("c_r1.json"), "{}").unwrap();
        let kept = out.join(crate::history::DIR).join("c_r1");
        std::fs::create_dir_all(&kept).unwrap();
        std::fs::write(kept.join("history.jsonl"), "{}").unwrap();
        let dest = archive_outputs(out).unwrap().unwrap();
        assert!(dest.join(TRACE_DIR).join("c_r1.json").is_file());
        assert!(!out.join(TRACE_DIR).exists());
        assert!(dest.join("histories/c_r1/history.jsonl").is_file());
        assert!(!out.join(crate::history::DIR).exists());
    }
}
