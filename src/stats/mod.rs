//! Statistics: latency histograms, what one run of a cell measured, and figures over a
//! cell's repetitions.

mod latency;
mod measured;
mod summary;

pub use latency::{Latencies, LatencySummary, throughput};
pub use measured::{Measured, ReadMeasured};
pub use summary::{extremes, latest_groups, median};
