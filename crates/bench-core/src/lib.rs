//! `bench-core`: everything of `bench` that does not touch lance or the object store, so it
//! builds and tests in a minute: the plan (parsing, validation, operations and transports,
//! expansion into cells and their keys), the sweep's rules (`sweep`: the checkpoint, the one
//! resume rule, shards, the cost model), statistics and inference, the records
//! (`results.jsonl`, `summary.csv`), the report and its charts, `bench compare` and `bench
//! ab`'s stopping rule, a results directory and the results that outlive a sweep
//! (`results`: the derived outputs' one writer, merge, publish, history), and the worker
//! protocol. The `bench` binary runs the catalog, the store and the processes over it.
//! Dependencies inside run one way (docs/architecture.md).

pub mod answer;
pub mod arrivals;
pub mod audit;
pub mod clock;
pub mod compare;
pub mod consistency;
pub mod counts;
pub mod display;
pub mod error;
pub mod export;
pub mod files;
pub mod floor;
pub mod fold;
pub mod glob;
pub mod history;
#[cfg(test)]
mod layers;
pub mod lock;
pub mod measured;
pub mod memory;
pub mod observer;
pub mod offsets;
pub mod oplog;
pub mod pace;
pub mod plan;
pub mod predict;
pub mod prices;
pub mod protocol;
pub mod redact;
pub mod report;
pub mod results;
pub mod rng;
pub mod sched;
pub mod serve;
pub mod stats;
pub mod stored;
pub mod stuck;
pub mod sweep;
pub mod trace;
pub mod versions;
pub mod workers;
