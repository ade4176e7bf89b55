//! What bench counts of an operation's store requests, exactly: requests by kind and bytes
//! ([`IoCounts`]), and the round trips on its critical path and its wait by kind
//! ([`CriticalPath`]), and the typical operation's ([`Typical`]). Below the operation log and the statistics, which both carry them.

mod io;
mod path;
mod typical;

pub use io::{IoCounts, IoPerOp};
pub use path::{CriticalPath, Request, critical_path};
pub use typical::{Typical, TypicalOp};
