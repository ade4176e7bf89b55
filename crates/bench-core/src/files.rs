//! Output files replaced whole: readers (and a crash) see the old file or the new one,
//! never a mix. The one helper behind the checkpoint, the summary and the report.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Replace `path` with `bytes` (every value kept hidden replaced: [`crate::redact`]; in a
/// `.json` or `.jsonl` file by value, never inside a number): a temp file in the same
/// directory, fsync, rename, fsync of the directory. The file gets mode 0666 less the
/// umask, as `results.jsonl` does.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let bytes = match path.extension().and_then(|e| e.to_str()) {
        Some("jsonl") => crate::redact::hide_json(bytes, true),
        Some("json") => crate::redact::hide_json(bytes, false),
        _ => crate::redact::hide_bytes(bytes),
    };
    replace(path, |out| out.write_all(&bytes))
}

/// Replace `path` with `lines` (each a JSON document without its newline), as
/// [`write_atomic`] does, one line at a time: the file is never whole in memory.
pub fn write_atomic_lines(
    path: &Path,
    lines: impl IntoIterator<Item = String>,
) -> std::io::Result<()> {
    replace(path, |out| {
        let mut out = std::io::BufWriter::new(out);
        for line in lines {
            out.write_all(&crate::redact::hide_json(line.as_bytes(), true))?;
            out.write_all(b"\n")?;
        }
        out.flush()
    })
}

/// Replace `path` with what `write` writes: a temp file in the same directory, fsync,
/// rename, fsync of the directory.
fn replace(
    path: &Path,
    write: impl FnOnce(&mut fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path.parent().expect("an output path has a parent");
    let mut tmp = tempfile::Builder::new()
        .permissions(fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    write(tmp.as_file_mut())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_files_with_the_umask_mode_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        // Same mode as a file created the ordinary way (which honours the umask).
        let plain = dir.path().join("plain.txt");
        fs::File::create(&plain).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&p), mode(&plain));
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn lines_are_written_whole_each_with_its_hidden_values_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        crate::redact::keep_hidden(["line-secret-value-1"]);
        let lines = ["{\"a\":1}", "{\"b\":\"line-secret-value-1\"}"].map(str::to_string);
        write_atomic_lines(&p, lines).unwrap();
        let text = fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("{\"a\":1}\n{\"b\":\""), "{text}");
        assert!(!text.contains("line-secret-value-1"), "{text}");
        assert_eq!(text.lines().count(), 2);
    }
}
