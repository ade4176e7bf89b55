//! `bench-core`: everything of `bench` that does not touch lance or the object store, so it
//! builds and tests in a minute: the plan (parsing, validation, expansion into cells and
//! their keys), the checkpoint and the one resume rule, statistics and inference, the
//! records, `results.jsonl` and `summary.csv`, the report and its charts, `bench compare`,
//! `bench merge`, the shard partition and the cost model, and the worker protocol (the JSON
//! lines a worker and its coordinator speak). The `bench` binary runs the catalog, the store
//! and the processes over it. Dependencies inside run one way (docs/architecture.md).

pub mod answer;
pub mod archive;
pub mod clock;
pub mod compare;
pub mod display;
pub mod error;
pub mod estimate;
pub mod export;
pub mod files;
pub mod fold;
pub mod glob;
pub mod history;
pub mod lock;
pub mod merge;
pub mod observer;
pub mod order;
pub mod pace;
pub mod plan;
pub mod precision;
pub mod predict;
pub mod protocol;
pub mod publish;
pub mod report;
pub mod requests;
pub mod resume;
pub mod serve;
pub mod shard;
pub mod state;
pub mod stats;
pub mod trace;
