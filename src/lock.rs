//! One runner per results directory: an advisory lock on `<out>/.lock`, released by the
//! kernel when the holder exits, however it exits (so a stale lock never blocks).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

use crate::error::BenchError;

pub const LOCK_FILE: &str = ".lock";

/// Held for as long as the value lives.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

pub fn acquire(out: &Path) -> Result<RunLock, BenchError> {
    let path = out.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| BenchError::io("open lock", &path, e))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            return Err(BenchError::output(format!(
                "results directory {} is in use by another bench run (pid {}); wait for it to \
                 finish or stop it, or use another --out",
                out.display(),
                holder.trim()
            )));
        }
        Err(TryLockError::Error(e)) => {
            return Err(BenchError::output(format!(
                "cannot lock {}: {e}",
                path.display()
            )));
        }
    }
    let write_pid = |f: &mut File| -> std::io::Result<()> {
        f.set_len(0)?;
        f.rewind()?;
        write!(f, "{}", std::process::id())?;
        f.sync_all()
    };
    write_pid(&mut file).map_err(|e| BenchError::io("write lock", &path, e))?;
    Ok(RunLock { _file: file })
}

/// The pid of the run holding `out`'s lock, if one does (read only: takes nothing).
pub fn holder(out: &Path) -> Option<u32> {
    let mut file = File::open(out.join(LOCK_FILE)).ok()?;
    match file.try_lock_shared() {
        Ok(()) => None,
        Err(TryLockError::WouldBlock) => {
            let mut pid = String::new();
            file.read_to_string(&mut pid).ok()?;
            pid.trim().parse().ok()
        }
        Err(TryLockError::Error(_)) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_names_the_holder_and_a_released_lock_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let held = acquire(dir.path()).unwrap();
        let err = acquire(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        assert_eq!(holder(dir.path()), Some(std::process::id()));
        drop(held);
        assert_eq!(holder(dir.path()), None);
        acquire(dir.path()).unwrap();
    }
}
