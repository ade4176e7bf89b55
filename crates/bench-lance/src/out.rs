//! What commands print. A reader that went away (`bench compare A B | grep -q REGRESSION`,
//! `| head`) ends the printing, not the command: nothing panics, and the exit code is the
//! command's own.

use std::io::Write;

use crate::answer::Answer;

/// Write text to standard output (every value kept hidden replaced: `bench_core::redact`);
/// a closed pipe is not an error.
pub fn print(text: &str) {
    let text = bench_core::redact::hide(text);
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes()).and_then(|()| o.flush());
}

/// A line to standard output.
pub fn line(text: &str) {
    print(&format!("{text}\n"));
}

/// A line to standard error; a closed pipe is not an error.
pub fn note(text: &str) {
    let text = bench_core::redact::hide(text);
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Print an answer (its notes to standard error first) and give its exit code.
pub fn answer(a: Answer) -> u8 {
    for n in &a.stderr {
        note(n);
    }
    print(&a.stdout);
    a.code
}
