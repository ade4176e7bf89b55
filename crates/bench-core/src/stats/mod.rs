//! Statistics: latency histograms, what one run of a cell measured, figures over a cell's
//! repetitions, and what repetitions can tell (spread, significance), and what pairs formed
//! inside a cell tell ([`paired`]).

pub mod changepoint;
mod inference;
mod latency;
pub mod paired;
mod summary;
mod timeline;

pub use crate::counts::{
    CriticalPath, IoCounts, IoPerOp, Request, Typical, TypicalOp, critical_path,
};
pub use inference::{
    ALPHA, RatioTest, Spread, mean_var, spread, t_critical, t_two_sided_p, welch_log,
};
pub use latency::{Latencies, LatencyHistogram, LatencySummary, throughput};
pub use paired::Unit;
pub use summary::{extremes, latest_groups, median};
pub use timeline::{TimeSeries, Timeline, percentile};
