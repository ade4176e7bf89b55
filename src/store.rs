//! Where goldens and per-cell copies live: copy, delete and small-object access under the
//! store root. Local disk today; `s3://` roots are refused with a clear message.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::BenchError;

/// Name of the object that marks a golden complete. It is written last and never copied.
pub const GOLDEN_MARKER: &str = "_bench_golden.json";

#[derive(Debug, Clone)]
pub enum Store {
    Local(PathBuf),
}

impl Store {
    /// Open the store at `root`, creating a local root if needed.
    pub fn open(root: &str) -> Result<Store, BenchError> {
        if let Some((scheme, _)) = root.split_once("://")
            && scheme != "file"
        {
            return Err(BenchError::Usage(format!(
                "root `{root}` uses the `{scheme}://` scheme, which this version of bench does not \
                 support yet; use a local directory (or omit `root` to use <out>/store)"
            )));
        }
        let path = PathBuf::from(root.strip_prefix("file://").unwrap_or(root));
        let path = std::path::absolute(&path).map_err(|e| {
            BenchError::Store(format!("cannot resolve store root {}: {e}", path.display()))
        })?;
        Ok(Store::Local(path))
    }

    /// Create the root if needed and check that it can be written.
    pub fn prepare(&self) -> Result<(), BenchError> {
        match self {
            Store::Local(path) => {
                let probe = || -> std::io::Result<()> {
                    fs::create_dir_all(path)?;
                    tempfile::NamedTempFile::new_in(path)?;
                    Ok(())
                };
                probe().map_err(|e| {
                    BenchError::Store(format!(
                        "cannot write to store root {}: {e}; choose a writable `root` or --out",
                        path.display()
                    ))
                })
            }
        }
    }

    /// `file` or `s3`, for provenance.
    pub fn scheme(&self) -> &'static str {
        match self {
            Store::Local(_) => "file",
        }
    }

    /// The root as a string (part of every cell's key).
    pub fn root_uri(&self) -> String {
        match self {
            Store::Local(p) => p.display().to_string(),
        }
    }

    /// URI of `rel` under the root, as lance and `DirectoryNamespace` take it.
    pub fn uri(&self, rel: &str) -> String {
        match self {
            Store::Local(p) => p.join(rel).display().to_string(),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        match self {
            Store::Local(p) => p.join(rel),
        }
    }

    /// Read a small object, `None` when it does not exist.
    pub fn read(&self, rel: &str) -> std::io::Result<Option<Vec<u8>>> {
        match fs::read(self.path(rel)) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Write a small object durably and atomically (temp file, fsync, rename).
    pub fn write(&self, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
        let path = self.path(rel);
        let dir = path.parent().expect("object path has a parent");
        fs::create_dir_all(dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(bytes)?;
        tmp.as_file().sync_all()?;
        tmp.persist(&path).map_err(|e| e.error)?;
        fs::File::open(dir)?.sync_all()
    }

    /// Remove everything under `rel` (no error if it is absent).
    pub fn remove_prefix(&self, rel: &str) -> std::io::Result<()> {
        match fs::remove_dir_all(self.path(rel)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Whether anything exists under `rel`.
    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }

    /// Copy every object under `from` to `to` (replacing `to`), except the golden marker.
    /// Returns the number of objects copied.
    pub fn copy_prefix(&self, from: &str, to: &str) -> std::io::Result<u64> {
        self.remove_prefix(to)?;
        copy_dir(&self.path(from), &self.path(to))
    }
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<u64> {
    fs::create_dir_all(to)?;
    let mut n = 0;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_name() == GOLDEN_MARKER {
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            n += copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
            n += 1;
            crate::fault::point("copy");
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_skips_the_marker_and_replaces_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap()).unwrap();
        store.prepare().unwrap();
        store.write("g/__manifest/a.lance", b"a").unwrap();
        store
            .write("g/__manifest/_versions/1.manifest", b"m")
            .unwrap();
        store.write(&format!("g/{GOLDEN_MARKER}"), b"{}").unwrap();
        store.write("runs/c/stale", b"old").unwrap();
        assert_eq!(store.copy_prefix("g", "runs/c").unwrap(), 2);
        assert_eq!(
            store
                .read("runs/c/__manifest/_versions/1.manifest")
                .unwrap(),
            Some(b"m".to_vec())
        );
        assert!(!store.exists(&format!("runs/c/{GOLDEN_MARKER}")));
        assert!(!store.exists("runs/c/stale"));
        store.remove_prefix("runs/c").unwrap();
        assert!(!store.exists("runs/c"));
        store.remove_prefix("runs/c").unwrap();
    }

    #[test]
    fn s3_roots_are_refused_clearly() {
        let err = Store::open("s3://bucket/prefix").unwrap_err().to_string();
        assert!(err.contains("s3://"), "{err}");
    }
}
