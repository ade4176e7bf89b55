//! The storage model checked against a run: bench's own fit of what a catalog that keeps
//! every version stores (`bench_core::stored::Fit`, the model a record's
//! `storage.projection` states), made from a record's samples up to CUTOFF seconds after
//! release, predicts what its last sample held; printed beside what it held and beside a line
//! through the same samples (the growth over the window, carried on). Run by
//! `scripts/figures/soak.sh` on the runs without a cleanup.
//!
//!   storage_model RESULTS.jsonl [CUTOFF]      (default 120)

use bench_core::stored::{Fit, Sample};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: storage_model RESULTS.jsonl [CUTOFF]");
    let cutoff: f64 = args
        .next()
        .map_or(120.0, |c| c.parse().expect("CUTOFF: seconds"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    for line in text.lines() {
        let record: serde_json::Value = serde_json::from_str(line).expect("a JSON record");
        let Some(samples) = record["storage"]["samples"].as_array() else {
            continue;
        };
        let samples: Vec<Sample> = (samples.iter())
            .map(|s| serde_json::from_value(s.clone()).expect("a sample"))
            .collect();
        let first: Vec<Sample> = samples
            .iter()
            .copied()
            .filter(|s| s.t_s <= cutoff)
            .collect();
        let last = *samples.last().expect("a sample");
        let tag = record["bench_tag"].as_str().unwrap_or("?");
        let Some(fit) = Fit::of(&first) else {
            println!("{tag}: no fit from the first {cutoff} s (a cleanup ran, or too few samples)");
            continue;
        };
        let (versions, predicted) = fit.at(last.t_s);
        let (a, b) = (first[0], *first.last().expect("a sample"));
        let line =
            b.bytes as f64 + (b.bytes - a.bytes) as f64 / (b.t_s - a.t_s) * (last.t_s - b.t_s);
        let mb = |x: f64| x / 1e6;
        println!(
            "{tag}: fitted on {} samples to {:.0} s ({} versions, {:.1} MB); at {:.0} s: \
             predicted {versions:.0} versions, {:.1} MB; measured {} versions, {:.1} MB \
             (predicted/measured {:.3}); a line through the same samples {:.1} MB ({:.3})",
            first.len(),
            b.t_s,
            b.versions,
            mb(b.bytes as f64),
            last.t_s,
            mb(predicted),
            last.versions,
            mb(last.bytes as f64),
            predicted / last.bytes as f64,
            mb(line),
            line / last.bytes as f64,
        );
    }
}
