//! Outputs of a sweep: the JSONL record of each cell (a documented contract) and the
//! `summary.csv` derived from all records. Both are brought up to date after every cell.

pub mod csv;
pub mod jsonl;

use serde::{Deserialize, Serialize};

/// One finished cell. The first block keeps the reference's `BenchResult` field names and
/// meanings; every field is documented in the README.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    // ── the reference's BenchResult ──
    pub variant: String,
    pub operation: String,
    pub concurrency: u32,
    pub initial_entries: u64,
    pub duration_secs: u64,
    pub total_operations: u64,
    pub total_duration_ms: f64,
    pub throughput_ops_per_sec: f64,
    pub avg_latency_ms: f64,
    pub p50_latency_ms: f64,
    pub p90_latency_ms: f64,
    pub p99_latency_ms: f64,
    pub min_latency_ms: f64,
    pub max_latency_ms: f64,
    pub errors: u64,
    pub manifest_shard_count: u64,
    pub bench_tag: String,
    // ── provenance ──
    pub mode: String,
    pub plan: String,
    pub cell_key: String,
    pub started_at: String,
    pub finished_at: String,
    pub bench_version: String,
    pub lance_version: String,
    pub hostname: String,
    pub storage_scheme: String,
    // ── bench's own figures ──
    pub attempts: u64,
    pub setup_ms: f64,
    pub commit_retries: u32,
    // Fields added after the first release read as 0 / null from older records.
    #[serde(default)]
    pub p999_latency_ms: f64,
    #[serde(default)]
    pub conflict_errors: u64,
    #[serde(default)]
    pub other_errors: u64,
    #[serde(default)]
    pub first_conflict_error: Option<String>,
    #[serde(default)]
    pub first_other_error: Option<String>,
    #[serde(default)]
    pub warmup_operations: u64,
    #[serde(default)]
    pub warmup_committed: u64,
    /// Which repetition of the cell this record is (1-based).
    #[serde(default = "one")]
    pub repetition: u32,
    pub manifest_rows_before: u64,
    pub manifest_rows_after: u64,
    pub verified: bool,
    pub verify_error: Option<String>,
    /// Mixed cells only: the interleaved reads, measured apart from the commits (which the
    /// fields above describe). `null` for other cells.
    #[serde(default)]
    pub reads: Option<ReadFigures>,
}

/// The reads of a mixed cell, with the same meanings as the commit fields of a [`Record`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadFigures {
    pub operation: String,
    pub reads_per_write: u64,
    /// Successful reads started inside the window.
    pub total_operations: u64,
    pub attempts: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub throughput_ops_per_sec: f64,
    pub avg_latency_ms: f64,
    pub p50_latency_ms: f64,
    pub p90_latency_ms: f64,
    pub p99_latency_ms: f64,
    pub p999_latency_ms: f64,
    pub min_latency_ms: f64,
    pub max_latency_ms: f64,
}

fn one() -> u32 {
    1
}

/// The machine's hostname, for provenance.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string())
}
