//! How long the checks on the `__manifest` version order take, and how much memory, on a
//! synthetic history of N operations, of one of two shapes:
//! - `plain`: 8 writers creating tables in one namespace (a quarter of the operations, each
//!   commit the next version), 8 readers listing it (half) and looking one of its tables up
//!   (a quarter), one operation at a time, each read showing exactly the version it served;
//! - `run`: shaped like a freshness run (`bench_core::consistency::synthetic`): writers and
//!   readers whose operations take the times given (exponential, with a pause between a
//!   client's operations) and overlap, commits landing within their operations and reads
//!   serving the version of a moment within theirs, listings (in pages of 50) and look-ups,
//!   removals of the golden's tables, some outcomes unknown; a new namespace every 10 s of
//!   the history, as one freshness cell after another, so that a listing lists what a
//!   cell's does however long the history.
//!
//! Prints `ops build_ms order_ms per_entry_ms peak_rss_kib findings`: the time of the checks on the
//! version order, then of the per-entry checks (stale reads, lag, monotonic reads, phantoms)
//! of the same history, the process's peak resident memory, and what they found (0); with
//! `REFERENCE` set, on stderr, the time of the same per-entry checks holding every read
//! against every commit. Run by `scripts/figures/order-scale.sh`
//! (docs/results.md has its figures).
//!
//!   order_scale N [plain|run] [WRITERS] [COMMIT_MS READ_MS PAUSE_MS READ_PAUSE_MS]

use bench_core::consistency::order;
use bench_core::consistency::synthetic::{self, Shape};
use bench_core::consistency::{Op, Outcome, Seen, What};

fn peak_rss_kib() -> u64 {
    bench_core::memory::peak_rss_kib().unwrap_or(0)
}

fn history(n: u64, writers: u32) -> Vec<Op> {
    let mut made = vec![0u64; writers as usize];
    let mut version = 100;
    let mut h = Vec::with_capacity(n as usize);
    for i in 0..n {
        let t = i * 100;
        let at = |client, what, version| Op {
            client,
            start_us: t,
            end_us: t + 50,
            what,
            version: Some(version),
            version_to: None,
        };
        match i % 4 {
            0 => {
                let w = ((i / 4) % u64::from(writers)) as u32;
                version += 1;
                let k = made[w as usize];
                made[w as usize] += 1;
                h.push(at(
                    w,
                    What::Created {
                        id: format!("ns_0$bench_t{w}_{k}"),
                        n: k,
                        table: true,
                        outcome: Outcome::Acknowledged,
                    },
                    version,
                ));
            }
            1 | 2 => {
                let seen = (0..writers)
                    .filter(|&w| made[w as usize] > 0)
                    .map(|w| Seen {
                        writer: w,
                        runs: vec![[0, made[w as usize]]],
                    })
                    .collect();
                let what = What::Listed {
                    namespace: "ns_0".into(),
                    tables: true,
                    seen,
                    gone: None,
                    pages: vec![],
                };
                h.push(at(writers + (i % 8) as u32, what, version));
            }
            _ => {
                let w = (i % u64::from(writers)) as u32;
                let k = i % 1000;
                let what = What::Probed {
                    id: format!("ns_0$bench_t{w}_{k}"),
                    found: k < made[w as usize],
                };
                h.push(at(writers + (i % 8) as u32, what, version));
            }
        }
    }
    h
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let shape = args.next().unwrap_or_else(|| "plain".into());
    let writers: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(8);
    let mut ms = || args.next().and_then(|a| a.parse::<f64>().ok());
    let (commit_ms, read_ms, pause_ms, read_pause_ms) = (ms(), ms(), ms(), ms());
    let t = std::time::Instant::now();
    let h = match shape.as_str() {
        "plain" => history(n, writers),
        "run" => {
            let shape = Shape {
                ops: n as usize,
                writers,
                readers: 8,
                commit_us: commit_ms.unwrap_or(20.0) * 1000.0,
                read_us: read_ms.unwrap_or(2.2) * 1000.0,
                pause_us: pause_ms.unwrap_or(30.0) * 1000.0,
                read_pause_us: read_pause_ms.unwrap_or(0.1) * 1000.0,
                listings: 2.0 / 3.0,
                page: Some(50),
                faults: 0.0,
                unknown: 0.01,
                namespaces: 1,
                // A new namespace every 10 s of the history: one freshness cell after
                // another, each namespace a cell's size however long the history.
                window_us: Some(10_000_000),
                root: 0.0,
            };
            synthetic::history(&mut bench_core::rng::Rng::new(1), &shape)
        }
        other => panic!("a shape is plain or run, not {other}"),
    };
    let n = h.len() as u64;
    let build_ms = t.elapsed().as_secs_f64() * 1000.0;
    let t = std::time::Instant::now();
    let o = order::check(&h, 0, 0);
    let check_ms = t.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(o.commits + o.reads, n);
    // Then the per-entry checks (stale reads, lag, monotonic reads, phantoms) of the same
    // history.
    let t = std::time::Instant::now();
    let c = bench_core::consistency::check(&h, 0, 0);
    let per_entry_ms = t.elapsed().as_secs_f64() * 1000.0;
    // With `REFERENCE` set, beside it the same checks holding every read against every
    // commit it observes (reads × commits), which must find the same.
    if std::env::var_os("REFERENCE").is_some() {
        let t = std::time::Instant::now();
        let every = bench_core::consistency::check_every_pair(&h, 0, 0);
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(every, c);
        eprintln!("{ms:.0}");
    }
    println!(
        "{n} {build_ms:.0} {check_ms:.0} {per_entry_ms:.0} {} {}",
        peak_rss_kib(),
        o.violations() + c.anomalies()
    );
}
