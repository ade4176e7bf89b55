//! Each step of a kept history, timed in one process on a history a run wrote: reading
//! `history.jsonl` (and `versions.jsonl`) back into the log, writing the log again as the run
//! writes it, judging it as `bench check` does, exporting it for Elle. Prints one line per
//! step: `step median_ms min_ms max_ms` over REPS repetitions, then the operations, the file's
//! bytes, and the process's peak resident memory (the history read once per repetition,
//! everything else dropped between steps). Run by `scripts/figures/history-scale.sh`
//! (docs/results.md has its figures).
//!
//!   history_scale FOLDER [REPS]

use std::time::Instant;

use bench_core::history;

fn peak_rss_kib() -> u64 {
    bench_core::memory::peak_rss_kib().unwrap_or(0)
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let folder = std::path::Path::new(args.get(1).expect("history_scale FOLDER [REPS]"));
    let reps: usize = args
        .get(2)
        .map_or(3, |r| r.parse().expect("REPS is a count"));
    let text = std::fs::read_to_string(folder.join(history::HISTORY_FILE)).expect("history.jsonl");
    let versions = std::fs::read_to_string(folder.join(history::VERSIONS_FILE)).ok();
    let mut times: [Vec<f64>; 4] = Default::default();
    let mut ops = 0;
    for _ in 0..reps {
        let t = Instant::now();
        let saved = history::read(&text).expect("a history");
        let chain = versions
            .as_deref()
            .map(|v| history::read_versions(v).expect("versions"));
        times[0].push(ms(t));
        ops = saved.log.len();
        let t = Instant::now();
        let run = history::Run {
            cell: &saved.header.cell,
            repetition: saved.header.repetition,
            arm: saved.header.arm.as_deref(),
            hosts: saved.header.hosts.clone(),
            clocks: &history::clocks(&saved.header),
            paused_us: &saved.header.paused_us,
            chain_versions: saved.header.chain_versions,
            nemesis: &[],
        };
        let (written, _) = history::write(&saved.log, &run, chain.as_ref());
        times[1].push(ms(t));
        assert_eq!(written.len(), text.len(), "written again as it was");
        let t = Instant::now();
        let c = history::check::check(&saved, chain.as_ref());
        times[2].push(ms(t));
        assert_eq!(
            c.status(),
            history::check::VALID,
            "{:?}",
            history::check::said(&c)
        );
        let t = Instant::now();
        let mut sink = std::io::sink();
        let x = history::elle::export(&saved.log, saved.header.release_us, &mut sink)
            .expect("written to nowhere");
        times[3].push(ms(t));
        assert!(x.appends > 0);
    }
    for (name, mut t) in ["read", "write", "check", "export"].into_iter().zip(times) {
        t.sort_by(f64::total_cmp);
        println!(
            "{name} {:.1} {:.1} {:.1}",
            t[t.len() / 2],
            t[0],
            t[t.len() - 1]
        );
    }
    println!("operations {ops}");
    println!("bytes {}", text.len());
    println!("peak_rss_kib {}", peak_rss_kib());
}
