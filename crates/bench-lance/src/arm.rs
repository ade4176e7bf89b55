//! Whose workers run a cell: an arm, checked before any cell runs on it and known by the
//! bytes of its executable. The run loop and one run of a cell both take it from here.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::BenchError;
use crate::plan::BuildId;
use crate::worker::protocol::Versions;

pub use crate::export::record::{ARM_A, ARM_B};

/// Whose workers run a cell: the one unnamed arm of `bench run` (this binary), a build of
/// the plan's `[builds]`, or arm A or B of `bench ab`.
#[derive(Debug, Clone)]
pub struct Arm {
    pub name: Option<&'static str>,
    pub exe: PathBuf,
    /// What the workers are, from the handshake before any cell.
    pub versions: Versions,
    /// The SHA-256 of the executable file, as hex digits (of a wrapper script: the script's;
    /// what it execs is not followed).
    pub digest: String,
    /// The file as it was when digested, to notice a rebuild while the sweep runs.
    stamp: Stamp,
}

/// What changes when a file is rewritten or replaced: its inode, size and modification time.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Stamp {
    fn of(path: &Path) -> std::io::Result<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path)?;
        Ok(Stamp {
            inode: m.ino(),
            len: m.len(),
            modified: m.modified().ok(),
        })
    }
}

/// The SHA-256 of a file's bytes, as hex digits.
pub fn file_digest(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

impl Arm {
    /// Check a worker binary before any cell runs on it: its `worker-info`, and its bytes.
    pub async fn checked(name: Option<&'static str>, exe: PathBuf) -> Result<Arm, BenchError> {
        let named = |e: String| match name {
            Some(n) => BenchError::Usage(format!("arm {n}: {e}")),
            None => BenchError::Usage(e),
        };
        let versions = crate::coordinator::handshake(&exe).await.map_err(named)?;
        // Stamped before the digest: a rewrite while it is read shows as a change later.
        let stamp =
            Stamp::of(&exe).map_err(|e| named(format!("cannot read {}: {e}", exe.display())))?;
        let digest =
            file_digest(&exe).map_err(|e| named(format!("cannot read {}: {e}", exe.display())))?;
        Ok(Arm {
            name,
            exe,
            versions,
            digest,
            stamp,
        })
    }

    /// What the arm's build is, for the cells' keys.
    pub fn id(&self) -> BuildId {
        BuildId {
            identity: self.versions.to_string(),
            digest: self.digest.clone(),
        }
    }

    /// The digest as records carry it and messages show it.
    pub fn short_digest(&self) -> &str {
        &self.digest[..self.digest.len().min(crate::plan::DIGEST_SHOWN)]
    }

    /// An error when the executable was rewritten or replaced since it was checked (a
    /// rebuild while the sweep runs): its runs so far are of the earlier build. `keyed`:
    /// its digest is part of its cells' keys (an arm of `bench ab`, a build of `[builds]`).
    pub fn unchanged(&self, what: &str, keyed: bool) -> Result<(), BenchError> {
        let then = if keyed {
            "run the same command again: the changed build's cells run again"
        } else {
            "run the same command again to go on with the new build"
        };
        match Stamp::of(&self.exe) {
            Ok(s) if s == self.stamp => Ok(()),
            Ok(_) => Err(BenchError::BuildChanged(format!(
                "{what} ({}) changed on disk while the sweep ran (rebuilt?); what it recorded \
                 so far is kept, with its earlier digest {}; {then}",
                self.exe.display(),
                self.short_digest()
            ))),
            Err(e) => Err(BenchError::BuildChanged(format!(
                "{what} ({}) cannot be read any more ({e}): put it back, then run the same \
                 command again",
                self.exe.display()
            ))),
        }
    }
}
