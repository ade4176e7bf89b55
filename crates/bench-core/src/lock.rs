//! One runner per results directory: an advisory lock on `<out>/.lock`, released by the
//! kernel when the holder exits, however it exits (so a stale lock never blocks).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

use crate::error::BenchError;

pub const LOCK_FILE: &str = ".lock";

/// How long a run waits for a lock held for an instant (by a `bench status`).
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(20);
const LOCK_TRIES: u32 = 50;

/// Held for as long as the value lives.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

pub fn acquire(out: &Path) -> Result<RunLock, BenchError> {
    let path = out.join(LOCK_FILE);
    let mut file = open(&path)?;
    // `bench status` (and `bench plan`) look at the lock for an instant with a shared lock:
    // a run that starts in that instant waits it out rather than fail. A run holds it for
    // good, and is named.
    let mut tries = 0;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) if tries < LOCK_TRIES => {
                tries += 1;
                std::thread::sleep(LOCK_RETRY);
            }
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.rewind();
                let _ = file.read_to_string(&mut holder);
                let who = match holder.trim() {
                    "" => "another bench process".to_string(),
                    pid => format!("another bench run (pid {pid})"),
                };
                return Err(BenchError::output(format!(
                    "results directory {} is in use by {who}; wait for it to finish or stop \
                     it, or use another --out",
                    out.display(),
                )));
            }
            Err(TryLockError::Error(e)) => {
                return Err(BenchError::output(format!(
                    "cannot lock {}: {e}",
                    path.display()
                )));
            }
        }
    }
    say(&mut file, &path, std::process::id().to_string().as_bytes())?;
    Ok(RunLock { _file: file })
}

/// Open (or create) a file to hold an advisory lock on, keeping what it says.
pub fn open(path: &Path) -> Result<File, BenchError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| BenchError::io("open lock", path, e))
}

/// Replace what a held lock file says about its holder.
pub fn say(file: &mut File, path: &Path, holder: &[u8]) -> Result<(), BenchError> {
    let write = |f: &mut File| -> std::io::Result<()> {
        f.set_len(0)?;
        f.rewind()?;
        f.write_all(holder)?;
        f.sync_all()
    };
    write(file).map_err(|e| BenchError::io("write lock", path, e))
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

    #[test]
    fn a_run_waits_out_a_status_that_looks_at_the_lock() {
        // `bench status` holds a shared lock for an instant; a run starting then waits.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(LOCK_FILE), "").unwrap();
        let look = File::open(dir.path().join(LOCK_FILE)).unwrap();
        look.try_lock_shared().unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(look);
        });
        acquire(dir.path()).expect("the run waited for the look to end");
        release.join().unwrap();
    }
}
