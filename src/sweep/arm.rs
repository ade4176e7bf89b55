//! Whose workers run a cell: an arm, checked before any cell runs on it. The run loop and
//! one run of a cell both take it from here.

use std::path::PathBuf;

use crate::error::BenchError;
use crate::worker::protocol::Versions;

pub use crate::export::record::{ARM_A, ARM_B};

/// Whose workers run a cell: the one unnamed arm of `bench run` (this binary), or arm A or
/// B of `bench ab`.
#[derive(Debug, Clone)]
pub struct Arm {
    pub name: Option<&'static str>,
    pub exe: PathBuf,
    /// What the workers are, from the handshake before any cell.
    pub versions: Versions,
}

impl Arm {
    /// Check a worker binary before any cell runs on it.
    pub async fn checked(name: Option<&'static str>, exe: PathBuf) -> Result<Arm, BenchError> {
        let versions = crate::coordinator::handshake(&exe)
            .await
            .map_err(|e| match name {
                Some(n) => BenchError::Usage(format!("arm {n}: {e}")),
                None => BenchError::Usage(e),
            })?;
        Ok(Arm {
            name,
            exe,
            versions,
        })
    }
}
