//! The worker process (`bench worker`, hidden): opens its own `DirectoryNamespace`, reports
//! ready, waits for the coordinator's release on stdin, commits, and reports each operation
//! as one JSON line on stdout. It exits by itself when its stdin closes (coordinator gone).

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::catalog::{self, CatalogConfig};
use crate::plan::Operation;

/// Environment variable carrying the storage options (JSON) to workers, so that secrets
/// never appear on a command line.
pub const STORAGE_ENV: &str = "BENCH_STORAGE_OPTIONS";

/// Exit code of a worker whose coordinator went away.
pub const EXIT_ORPHANED: i32 = 75;

/// One line of a worker's stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case")]
pub enum Event {
    /// The namespace is open and the warm-up done (`warmup_ok` of them committed);
    /// waiting for release.
    Ready {
        #[serde(default)]
        warmup_ok: u64,
    },
    /// One operation finished. `i` is its index within this worker among operations of its
    /// kind (the commits, or in a mixed cell the interleaved reads).
    Op {
        i: u64,
        ms: f64,
        ok: bool,
        /// A read interleaved by a mixed cell (not the cell's committed operation).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        read: bool,
        /// A failed operation was a commit conflict past the retry budget.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        conflict: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        err: Option<String>,
    },
    /// All operations are finished; `elapsed_ms` runs from release to the end of the last.
    Done { elapsed_ms: f64 },
}

/// What a worker does; the coordinator builds it and passes it as arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkerArgs {
    #[arg(long)]
    pub root: String,
    #[arg(long)]
    pub operation: String,
    #[arg(long)]
    pub inline: bool,
    #[arg(long)]
    pub commit_retries: u32,
    #[arg(long)]
    pub worker_id: u32,
    /// Fixed number of operations (continuous cells).
    #[arg(long, conflicts_with = "duration_secs")]
    pub operations: Option<u64>,
    /// Commit until this many seconds after release (concurrent cells).
    #[arg(long)]
    pub duration_secs: Option<u64>,
    /// Operations before release, excluded from the numbers.
    #[arg(long, default_value_t = 0)]
    pub warmup: u64,
    /// Tables in the golden (what `describe-table` reads spread over).
    #[arg(long, default_value_t = 0)]
    pub tables: u64,
    /// Mixed cells: reads of `--read-operation` before each commit.
    #[arg(long, requires = "read_operation")]
    pub reads_per_write: Option<u64>,
    #[arg(long)]
    pub read_operation: Option<String>,
}

impl WorkerArgs {
    pub fn to_args(&self) -> Vec<String> {
        let mut v = vec![
            "worker".to_string(),
            "--root".into(),
            self.root.clone(),
            "--operation".into(),
            self.operation.clone(),
            "--commit-retries".into(),
            self.commit_retries.to_string(),
            "--worker-id".into(),
            self.worker_id.to_string(),
            "--warmup".into(),
            self.warmup.to_string(),
            "--tables".into(),
            self.tables.to_string(),
        ];
        if self.inline {
            v.push("--inline".into());
        }
        if let Some(n) = self.operations {
            v.extend(["--operations".into(), n.to_string()]);
        }
        if let Some(d) = self.duration_secs {
            v.extend(["--duration-secs".into(), d.to_string()]);
        }
        if let (Some(r), Some(op)) = (self.reads_per_write, &self.read_operation) {
            v.extend([
                "--reads-per-write".into(),
                r.to_string(),
                "--read-operation".into(),
                op.clone(),
            ]);
        }
        v
    }
}

fn emit(event: &Event) {
    let mut out = std::io::stdout().lock();
    let line = serde_json::to_string(event).expect("event serialises");
    // A closed stdout means the coordinator is gone.
    if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
        std::process::exit(EXIT_ORPHANED);
    }
}

/// Longest error message a worker reports per failed operation.
const MAX_ERR_CHARS: usize = 500;

/// Test hook: a worker delays its start by this many milliseconds (a slow process start).
pub const START_DELAY_ENV: &str = "BENCH_WORKER_START_DELAY_MS";

fn truncate(mut s: String) -> String {
    if s.len() > MAX_ERR_CHARS {
        let cut = (0..=MAX_ERR_CHARS)
            .rev()
            .find(|&c| s.is_char_boundary(c))
            .unwrap_or(0);
        s.truncate(cut);
    }
    s
}

/// Run one operation; a cold read opens a fresh namespace for it (timed with it).
async fn perform(
    ns: &lance_namespace_impls::DirectoryNamespace,
    cfg: &CatalogConfig,
    op: Operation,
    id: String,
    table_data: &bytes::Bytes,
) -> lance_core::Result<()> {
    if op.is_cold() {
        let fresh = catalog::open(cfg).await?;
        catalog::execute(&fresh, op, id, table_data).await
    } else {
        catalog::execute(ns, op, id, table_data).await
    }
}

pub async fn run(args: WorkerArgs) -> anyhow::Result<()> {
    if let Some(ms) = std::env::var(START_DELAY_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
    {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    let operation: Operation = args.operation.parse().map_err(anyhow::Error::msg)?;
    let storage: BTreeMap<String, String> = match std::env::var(STORAGE_ENV) {
        Ok(json) => serde_json::from_str(&json)?,
        Err(_) => BTreeMap::new(),
    };
    let cfg = CatalogConfig {
        root: args.root.clone(),
        inline: args.inline,
        commit_retries: args.commit_retries,
        storage,
    };
    let mix: Option<(Operation, u64)> = match (&args.read_operation, args.reads_per_write) {
        (Some(op), Some(r)) => Some((op.parse().map_err(anyhow::Error::msg)?, r)),
        _ => None,
    };
    let ns = catalog::open(&cfg).await?;
    let table_data = catalog::table_ipc();
    // The k-th operation of this worker: in a mixed cell `reads_per_write` reads, then one
    // commit, over and over; otherwise always the cell's operation.
    let kind = |k: u64| match mix {
        Some((read, r)) if k % (r + 1) < r => (read, true),
        _ => (operation, false),
    };
    let target = |op: Operation, i: u64, warm: bool| match op {
        Operation::DescribeTable { .. } => {
            catalog::table_to_describe(args.worker_id, i, args.tables)
        }
        _ if warm => catalog::warmup_id(op, args.worker_id, i),
        _ => catalog::object_id(op, args.worker_id, i),
    };

    // Release arrives as a line on stdin; EOF at any time means the coordinator is gone.
    let (go_tx, go_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        let mut go = Some(go_tx);
        loop {
            match lines.next_line().await {
                Ok(Some(l)) if l.trim() == "go" => {
                    if let Some(tx) = go.take() {
                        let _ = tx.send(());
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => std::process::exit(EXIT_ORPHANED),
            }
        }
    });
    // Per kind (commits, reads): how many have run, which numbers the next one.
    let mut counts = [0u64; 2];
    let mut warmup_ok = 0;
    for k in 0..args.warmup {
        let (op, read) = kind(k);
        let i = counts[usize::from(read)];
        counts[usize::from(read)] += 1;
        let ok = perform(&ns, &cfg, op, target(op, i, true), &table_data)
            .await
            .is_ok();
        // In a mixed cell only the commits change the manifest.
        if ok && !(read && mix.is_some()) {
            warmup_ok += 1;
        }
    }
    emit(&Event::Ready { warmup_ok });
    go_rx.await?;

    let release = Instant::now();
    let deadline = args.duration_secs.map(|d| release + Duration::from_secs(d));
    let mut last_end = release;
    let mut counts = [0u64; 2];
    for k in 0.. {
        match (deadline, args.operations) {
            (Some(d), _) if Instant::now() >= d => break,
            (None, Some(n)) if k >= n => break,
            (None, None) => break,
            _ => {}
        }
        let (op, read) = kind(k);
        let i = counts[usize::from(read)];
        counts[usize::from(read)] += 1;
        let start = Instant::now();
        let result = perform(&ns, &cfg, op, target(op, i, false), &table_data).await;
        last_end = Instant::now();
        let ms = (last_end - start).as_secs_f64() * 1000.0;
        let conflict = result.as_ref().is_err_and(catalog::is_conflict);
        let err = result.err().map(|e| truncate(e.to_string()));
        emit(&Event::Op {
            i,
            ms,
            ok: err.is_none(),
            read,
            conflict,
            err,
        });
    }
    emit(&Event::Done {
        elapsed_ms: (last_end - release).as_secs_f64() * 1000.0,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_as_single_json_lines() {
        let events = [
            Event::Ready { warmup_ok: 2 },
            Event::Op {
                i: 3,
                ms: 12.5,
                ok: false,
                read: false,
                conflict: true,
                err: Some("conflict\nline".into()),
            },
            Event::Op {
                i: 4,
                ms: 1.0,
                ok: true,
                read: true,
                conflict: false,
                err: None,
            },
            Event::Done { elapsed_ms: 99.0 },
        ];
        for e in events {
            let line = serde_json::to_string(&e).unwrap();
            assert!(!line.contains('\n'));
            assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), e);
        }
    }
}
