//! The harness benchmark's helper (`examples/harness.rs`, run by
//! `scripts/figures/harness-bench.sh`): the same commits straight through
//! `DirectoryNamespace` in one process, and golden bootstrap speed and memory. Here in the
//! library, so that the example is a line to build.
//!
//!   harness direct DIR ROWS OPS INLINE [counted]
//!       # prints: direct <ms per commit> <ops/s>; with `counted`, through a namespace
//!       # whose requests are counted and timed, with a snapshot and the critical path of
//!       # every commit, as a worker does
//!   harness golden DIR ROWS              # prints: golden <rows> <secs> <rows/s> <peak RSS MiB>

use std::collections::BTreeMap;
use std::time::Instant;

use crate::catalog::{self, CatalogConfig};
use crate::golden::{self, GoldenConfig};
use crate::plan::{GoldenSpec, Operation};
use crate::store::Store;

fn peak_rss_mib() -> f64 {
    bench_core::memory::peak_rss_kib().map_or(0.0, |kb| kb as f64 / 1024.0)
}

/// `harness ARGS` (the example's `main`): see the module's doc.
pub fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("start the tokio runtime");
    runtime.block_on(run());
}

async fn run() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| -> &str {
        args.get(i)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("usage: harness direct|golden DIR ROWS [OPS INLINE]"))
    };
    let storage = BTreeMap::new();
    let store = Store::open(arg(1), &storage).await.expect("open store");
    store.prepare().await.expect("prepare store");
    let rows: u64 = arg(2).parse().expect("ROWS");
    let cfg = GoldenConfig {
        storage: &storage,
        commit_retries: 20,
    };
    match arg(0) {
        "golden" => golden_speed(&store, rows, &cfg).await,
        "direct" => {
            let ops: u64 = arg(3).parse().expect("OPS");
            let inline: bool = arg(4).parse().expect("INLINE");
            let spec = GoldenSpec::catalog(rows, inline);
            let (g, _) = golden::ensure(&store, spec, &cfg).await.expect("golden");
            store
                .copy_prefix(&g.rel, "runs/direct")
                .await
                .expect("copy");
            let cfg = CatalogConfig {
                root: store.uri("runs/direct"),
                inline,
                commit_retries: 20,
                storage: storage.clone(),
                properties: Default::default(),
            };
            let counted = args.get(5).is_some_and(|a| a == "counted");
            let counters = std::sync::Arc::new(catalog::counting::Counters::default());
            // The worst case of the workers' accounting: every request's key kept, as for
            // the operations `--trace` writes.
            counters
                .tracing
                .store(counted, std::sync::atomic::Ordering::Relaxed);
            let ns = if counted {
                catalog::open_counted(&cfg, &counters).await
            } else {
                catalog::open(&cfg).await
            }
            .map(std::sync::Arc::new)
            .expect("open catalog");
            let data = catalog::table_ipc();
            let op = Operation::CreateNamespace;
            let mut requests = 0;
            let start = Instant::now();
            for i in 0..ops {
                let before = counted.then(|| counters.snapshot());
                let began = Instant::now();
                catalog::execute(
                    ns.clone(),
                    op,
                    catalog::Aim::entry(
                        catalog::object_id(op, 0, i, "").expect("a commit that creates"),
                    ),
                    &catalog::Inputs::catalog(&data),
                )
                .await
                .expect("commit");
                if let Some(before) = before {
                    requests += (counters.snapshot() - before).requests();
                    // The commit's critical path, as a worker folds it.
                    let requests = counters.take();
                    std::hint::black_box(catalog::counting::critical_path(
                        &requests,
                        began,
                        Instant::now(),
                    ));
                    counters.operation_over();
                }
            }
            let secs = start.elapsed().as_secs_f64();
            if counted {
                eprintln!("{:.1} requests per commit", requests as f64 / ops as f64);
            }
            println!(
                "direct {:.3} {:.3}",
                secs * 1000.0 / ops as f64,
                ops as f64 / secs
            );
            store.remove_prefix("runs/direct").await.expect("clean");
        }
        other => panic!("unknown mode {other}"),
    }
}

/// `harness golden DIR ROWS`: a golden of ROWS rows built from nothing, its time and memory.
async fn golden_speed(store: &Store, rows: u64, cfg: &GoldenConfig<'_>) {
    let spec = GoldenSpec::catalog(rows, false);
    store
        .remove_prefix(&golden::rel_path(spec))
        .await
        .expect("clear");
    let start = Instant::now();
    golden::ensure(store, spec, cfg).await.expect("golden");
    let secs = start.elapsed().as_secs_f64();
    println!(
        "golden {rows} {secs:.3} {:.0} {:.1}",
        rows as f64 / secs,
        peak_rss_mib()
    );
}
