//! The goldens a sweep's cells start from: built once per (size, variant), or the catalog
//! an external server serves, as it was before the cell.

use super::runner::Runner;
use crate::golden::{self, Golden, GoldenConfig};
use crate::plan::{Cell, GoldenSpec};
use crate::progress::Work;

impl Runner<'_> {
    /// A run on an external server's catalog (no golden, no copy): the catalog as it is now,
    /// in a golden's shape. It must hold at least the plan's size (fewer: `root` is not the
    /// catalog the plan describes).
    pub(super) async fn server_catalog(&self, cell: &Cell) -> Result<Golden, String> {
        let root = self.sweep.store.root_uri();
        let uri = cell.rest_uri.as_deref().unwrap_or_default();
        if let Some(parent) = &cell.parent {
            return served_golden(uri, parent, cell).await;
        }
        // What the catalog holds as the run starts, which verification holds it against.
        let ids = match crate::verify::ids(&root, &cell.storage).await {
            Ok(ids) => ids,
            // A catalog nothing was committed to yet has no __manifest.
            Err(lance_core::Error::DatasetNotFound { .. }) => Default::default(),
            Err(e) => {
                return Err(format!(
                    "cannot read the catalog at {root} (the plan's root, which the server at \
                     {uri} must serve): {e}"
                ));
            }
        };
        let rows = ids.rows();
        if rows < cell.golden.rows {
            return Err(format!(
                "the catalog at {root} holds {rows} rows in __manifest, fewer than the plan's \
                 size {} (the least the server's catalog holds): is `root` the catalog the \
                 server at {uri} serves?",
                cell.golden.rows
            ));
        }
        Ok(theirs(cell, ids, None))
    }

    /// Reuse or build a cell's golden (once per sweep), logging which.
    pub(super) async fn golden(&mut self, spec: GoldenSpec) -> Result<Golden, String> {
        if let Some(g) = self.goldens.get(&spec) {
            return g.clone();
        }
        let cfg = GoldenConfig {
            storage: &self.sweep.plan.storage,
            commit_retries: self.sweep.plan.run.commit_retries,
        };
        self.progress.log(format!("golden {}: checking", spec.id()));
        let started = std::time::Instant::now();
        self.progress
            .unit_started(Work::Golden, super::estimate::golden(spec));
        let result = match golden::ensure(&self.sweep.store, spec, &cfg).await {
            Ok((g, reused)) => {
                if reused {
                    self.progress.unit_skipped();
                } else {
                    self.progress.unit_finished();
                }
                self.progress.log(if reused {
                    format!("golden {}: reused", spec.id())
                } else {
                    let table = (g.marker.table).map_or(String::new(), |t| {
                        format!(
                            " and a shared table of {} ({:.2}s of history)",
                            crate::plan::count(t.version, "version", "versions"),
                            t.history_secs
                        )
                    });
                    format!(
                        "golden {}: built {} rows{table} in {:.2}s",
                        spec.id(),
                        g.marker.manifest_rows,
                        started.elapsed().as_secs_f64()
                    )
                });
                Ok(g)
            }
            Err(e) => {
                self.progress
                    .log(format!("golden {}: FAILED: {e}", spec.id()));
                Err(e.to_string())
            }
        };
        self.goldens.insert(spec, result.clone());
        result
    }
}

/// A run's own namespace under the server's `rest.parent`, its golden built there through
/// the server, and what the server lists there: the golden the run starts from.
async fn served_golden(uri: &str, parent: &str, cell: &Cell) -> Result<Golden, String> {
    let rows = cell.golden.rows;
    let (scope, ids) = crate::catalog::served::make_run(uri, parent, rows).await?;
    Ok(theirs(cell, ids, Some(scope)))
}

/// A catalog bench did not make, in a golden's shape: its entries `ids` as the run starts
/// (`scope`: the run's own namespace on the server, where it has one).
fn theirs(cell: &Cell, ids: bench_core::audit::Ids, scope: Option<String>) -> Golden {
    let rows = ids.rows();
    Golden {
        rel: String::new(),
        marker: golden::GoldenMarker {
            format: golden::MARKER_FORMAT,
            rows,
            inline: cell.golden.inline,
            lance_version: crate::plan::LANCE_VERSION.to_string(),
            manifest_rows: rows,
            build_secs: 0.0,
            table: None,
            fixture: None,
        },
        before: Some(std::sync::Arc::new(ids)),
        scope,
    }
}
