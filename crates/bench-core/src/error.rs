//! Domain errors and the process exit codes they map to. Errors keep their source (for
//! classification, e.g. by the S3 preflight); their messages already say what the source
//! said, so the top level prints only the message.

use std::path::{Path, PathBuf};

/// Exit codes of `bench`, documented in the README and docs/sweep.md.
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
    /// `bench merge`: some planned cells are in none of the merged directories.
    pub const INCOMPLETE: u8 = 6;
    /// `bench compare` or `bench ab --fail-on-undecided`: no regression, but some cell's
    /// time could not be judged (its interval across the threshold, or too few runs); with
    /// `--fail-on-finding`, no finding but a verification that could not check a part.
    pub const UNDECIDED: u8 = 7;
    /// `--fail-on-finding`: every cell ran, and some cell's record holds a finding against
    /// the catalog (anomalies, stuck readers or writers, writes failed but applied); a failed cell's 3
    /// comes first.
    pub const FINDING: u8 = 8;
    /// Interrupted by Ctrl-C or SIGTERM; the running cell is pending again.
    pub const INTERRUPTED: u8 = 130;
}

/// Any error a lower layer (lance, object_store, the OS) gave.
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A plan that cannot be used. Messages name the file, key and line to fix.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("cannot read plan {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not valid TOML: {}", plan_name(file), message.trim_end())]
    Syntax {
        file: Option<PathBuf>,
        message: String,
    },
    #[error("invalid {}{}{}: {message}", plan_name(file), key_part(key), line_part(*line))]
    Key {
        file: Option<PathBuf>,
        key: String,
        line: Option<usize>,
        message: String,
    },
}

fn plan_name(file: &Option<PathBuf>) -> String {
    match file {
        Some(p) => format!("plan {}", p.display()),
        None => "plan".to_string(),
    }
}

fn key_part(key: &str) -> String {
    if key.is_empty() || key == "." {
        String::new()
    } else {
        format!(": key `{key}`")
    }
}

fn line_part(line: Option<usize>) -> String {
    line.map(|l| format!(" (line {l})")).unwrap_or_default()
}

impl PlanError {
    /// The same error, naming the plan file it came from.
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

/// Errors of a sweep, each with the exit code it maps to.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The command line (or a value it gave) cannot be used.
    #[error("{0}")]
    Usage(String),
    /// The results directory or a file in it cannot be used.
    #[error("{message}")]
    Output {
        message: String,
        #[source]
        source: Option<std::io::Error>,
    },
    /// The store cannot be used.
    #[error("{message}")]
    Store {
        message: String,
        #[source]
        source: Option<Source>,
    },
    /// A worker build was rewritten while the sweep ran: what it recorded is kept, and the
    /// next run of the same command runs its cells again.
    #[error("{0}")]
    BuildChanged(String),
    #[error("{0}")]
    Internal(String),
}

impl BenchError {
    pub fn exit_code(&self) -> u8 {
        match self {
            BenchError::Plan(_) | BenchError::Usage(_) | BenchError::BuildChanged(_) => {
                exit::BAD_PLAN
            }
            BenchError::Output { .. } | BenchError::Store { .. } => exit::OUTPUT,
            BenchError::Internal(_) => exit::INTERNAL,
        }
    }

    /// An output problem without an underlying I/O error.
    pub fn output(message: impl Into<String>) -> BenchError {
        BenchError::Output {
            message: message.into(),
            source: None,
        }
    }

    /// "cannot WHAT PATH: error", keeping the I/O error.
    pub fn io(what: &str, path: &Path, source: std::io::Error) -> BenchError {
        BenchError::Output {
            message: format!("cannot {what} {}: {source}", path.display()),
            source: Some(source),
        }
    }

    /// A store problem without an underlying error.
    pub fn store(message: impl Into<String>) -> BenchError {
        BenchError::Store {
            message: message.into(),
            source: None,
        }
    }

    /// "CONTEXT: error", keeping the store's error.
    pub fn store_source(
        context: impl std::fmt::Display,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> BenchError {
        BenchError::Store {
            message: format!("{context}: {source}"),
            source: Some(Box::new(source)),
        }
    }
}

/// `map_err` helper: "cannot WHAT PATH: error".
pub fn io_err(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> BenchError {
    let (what, path) = (what.to_string(), path.to_path_buf());
    move |e| BenchError::io(&what, &path, e)
}
