//! `roles.csv`: one row per run of a cell of roles and per (role, operation of its mix),
//! written where the records have cells of roles (and removed where they no longer do).

use std::path::Path;

use super::Record;

pub const ROLES_FILE: &str = "roles.csv";

/// Its columns, in order (documented in docs/output-format.md).
pub const COLUMNS: [&str; 24] = [
    "bench_tag",
    "repetition",
    "arm",
    "role",
    "operation",
    "weight",
    "clients",
    "rate",
    "targets",
    "attempts",
    "ops",
    "tps",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "max_ms",
    "conflicts",
    "not_found",
    "other_errors",
    "errors",
    "requests_per_op",
    "round_trips_per_op",
    "cleaned_versions",
    "cleaned_bytes",
];

/// The rows of every record of a cell of roles.
pub fn table(records: &[Record]) -> Vec<[String; COLUMNS.len()]> {
    let mut rows = Vec::new();
    for r in records {
        for f in r.roles.iter().flatten() {
            let n = |c: &str| f.errors.get(c).copied().unwrap_or(0);
            let class = |c: &str| n(c).to_string();
            let opt = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x:.2}"));
            // A latency of no successful operation does not exist: empty.
            let ms = |v: f64| match f.total_operations {
                0 => String::new(),
                _ => format!("{v:.2}"),
            };
            rows.push([
                r.bench_tag.clone(),
                r.repetition.to_string(),
                r.arm.clone().unwrap_or_default(),
                f.role.clone(),
                f.operation.to_string(),
                f.weight.to_string(),
                f.clients.to_string(),
                f.rate.map_or(String::new(), |x| x.to_string()),
                f.targets.clone(),
                f.attempts.to_string(),
                f.total_operations.to_string(),
                format!("{:.3}", f.throughput_ops_per_sec),
                ms(f.p50_latency_ms),
                ms(f.p90_latency_ms),
                ms(f.p99_latency_ms),
                ms(f.max_latency_ms),
                class("conflict"),
                class("not_found"),
                // Any other failure: a store's refusal among them.
                (n("other") + n("refused")).to_string(),
                f.errors.values().sum::<u64>().to_string(),
                opt(f.requests_per_op),
                opt(f.round_trips_per_op),
                f.cleaned.map_or(String::new(), |c| c.versions.to_string()),
                f.cleaned.map_or(String::new(), |c| c.bytes.to_string()),
            ]);
        }
    }
    rows
}

/// Rewrite `roles.csv` in `dir` from the records (atomically), or remove it where no
/// record has roles. Whether one was written.
pub fn write(dir: &Path, records: &[Record]) -> std::io::Result<bool> {
    let path = dir.join(ROLES_FILE);
    let rows = table(records);
    if rows.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(false),
        };
    }
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(COLUMNS)?;
    for row in rows {
        w.write_record(row)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    crate::files::write_atomic(&path, &bytes)?;
    Ok(true)
}
