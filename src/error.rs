//! Domain errors and the process exit codes they map to.

use std::fmt;
use std::path::{Path, PathBuf};

/// Exit codes of `bench`, documented in the README.
pub mod exit {
    /// Every cell is done.
    pub const OK: u8 = 0;
    /// An unexpected internal error.
    pub const INTERNAL: u8 = 1;
    /// The plan or the command line is invalid (clap also uses 2 for usage errors).
    pub const BAD_PLAN: u8 = 2;
    /// The sweep ran, but one or more cells failed (or a verification failed).
    pub const CELLS_FAILED: u8 = 3;
    /// The results directory, the checkpoint or the store cannot be used.
    pub const OUTPUT: u8 = 4;
    /// `bench compare --fail-on-regression` found a regression.
    pub const REGRESSION: u8 = 5;
    /// Interrupted by Ctrl-C or SIGTERM; the running cell is pending again.
    pub const INTERRUPTED: u8 = 130;
}

/// A plan that cannot be used. Messages name the file, key and line to fix.
#[derive(Debug)]
pub enum PlanError {
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    Syntax {
        file: Option<PathBuf>,
        message: String,
    },
    Key {
        file: Option<PathBuf>,
        key: String,
        line: Option<usize>,
        message: String,
    },
}

impl PlanError {
    pub fn in_file(self, path: &Path) -> PlanError {
        match self {
            PlanError::Syntax { message, .. } => PlanError::Syntax {
                file: Some(path.to_path_buf()),
                message,
            },
            PlanError::Key {
                key, line, message, ..
            } => PlanError::Key {
                file: Some(path.to_path_buf()),
                key,
                line,
                message,
            },
            other => other,
        }
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |file: &Option<PathBuf>| match file {
            Some(p) => format!("plan {}", p.display()),
            None => "plan".to_string(),
        };
        match self {
            PlanError::Read { path, source } => {
                write!(f, "cannot read plan {}: {source}", path.display())
            }
            PlanError::Syntax { file, message } => {
                write!(
                    f,
                    "{} is not valid TOML: {}",
                    name(file),
                    message.trim_end()
                )
            }
            PlanError::Key {
                file,
                key,
                line,
                message,
            } => {
                write!(f, "invalid {}", name(file))?;
                if !key.is_empty() && key != "." {
                    write!(f, ": key `{key}`")?;
                }
                if let Some(line) = line {
                    write!(f, " (line {line})")?;
                }
                write!(f, ": {message}")
            }
        }
    }
}

impl std::error::Error for PlanError {}

/// Errors of a sweep, each with the exit code it maps to.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Output(String),
    #[error("{0}")]
    Store(String),
    #[error("{0}")]
    Internal(String),
}

impl BenchError {
    pub fn exit_code(&self) -> u8 {
        match self {
            BenchError::Plan(_) | BenchError::Usage(_) => exit::BAD_PLAN,
            BenchError::Output(_) | BenchError::Store(_) => exit::OUTPUT,
            BenchError::Internal(_) => exit::INTERNAL,
        }
    }
}
