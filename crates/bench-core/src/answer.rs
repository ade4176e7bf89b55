//! What a command that reads results answers, for the binary to print: the core computes
//! it and prints nothing.

/// Text for standard output, lines for standard error (warnings and notes, each printed
/// on its own line), and the exit code.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    pub stdout: String,
    pub stderr: Vec<String>,
    pub code: u8,
}

impl Answer {
    /// Add a line to standard output.
    pub fn line(&mut self, s: impl AsRef<str>) {
        self.stdout.push_str(s.as_ref());
        self.stdout.push('\n');
    }

    /// Add a line to standard error.
    pub fn note(&mut self, s: impl Into<String>) {
        self.stderr.push(s.into());
    }
}
