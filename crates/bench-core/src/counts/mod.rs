//! What bench counts of an operation's store requests, exactly: requests by kind and bytes
//! ([`IoCounts`]), and the round trips on its critical path and its wait by kind
//! ([`CriticalPath`]). Below the operation log and the statistics, which both carry them.

mod io;
mod path;

pub use io::{IoCounts, IoPerOp};
pub use path::{CriticalPath, Request, critical_path};
