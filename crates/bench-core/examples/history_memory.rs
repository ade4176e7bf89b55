//! The memory a history costs beside the log it is written from, in one process: a log of
//! OPERATIONS operations (`history::sample_run`'s shape: declarations, and listings that see
//! every declaration before them) is built, the peak resident memory reset to what the
//! process holds (`/proc/self/clear_refs`), and the history written one way:
//!
//! - `stream`: as a run ends, line by line to a file (`history::lines`,
//!   `files::write_atomic_lines`);
//! - `journal`: as a run goes, each operation handed to the journal as its report would
//!   come (`history::journal`);
//! - `text`: the whole file built in memory first, then written (`history::write`).
//!
//! Prints `operations`, `bytes` (of the file), `extra_kib` (the peak over what the process
//! held before writing) and `held_kib` (what it held then: the log, mostly). Run by `scripts/figures/history-memory.sh`.
//!
//!   history_memory OPERATIONS stream|journal|text

use std::collections::{BTreeMap, BTreeSet};

use bench_core::history;

/// A field of `/proc/self/status`, in KiB.
fn status_kib(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    (text.lines())
        .find_map(|l| {
            l.strip_prefix(field)?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "history_memory OPERATIONS stream|journal|text";
    let ops: u64 = args.get(1).and_then(|n| n.parse().ok()).expect(usage);
    let mode = args.get(2).expect(usage).as_str();
    let log = history::sample_run(ops / 2);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("h").join(history::HISTORY_FILE);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let run = history::Run {
        cell: "memory",
        repetition: 1,
        arm: None,
        hosts: Vec::new(),
        clocks: &BTreeMap::new(),
        paused_us: &[],
        chain_versions: None,
        nemesis: &[],
    };
    // The peak from here on: what writing the history adds to what the process holds.
    std::fs::write("/proc/self/clear_refs", "5").expect("a kernel that resets VmHWM");
    let before = status_kib("VmRSS:");
    match mode {
        "stream" => {
            bench_core::files::write_atomic_lines(&path, history::lines(&log, &run)).unwrap()
        }
        "text" => {
            let (text, _) = history::write(&log, &run, None);
            bench_core::files::write_atomic(&path, text.as_bytes()).unwrap()
        }
        "journal" => {
            let target = history::journal::Target {
                path: path.clone(),
                cell: "memory".to_string(),
                repetition: 1,
                arm: None,
            };
            let mut j = history::journal::Journal::new(target, [0, 1]);
            for k in 1..=log.len() {
                j.catch_up(&log[..k], &BTreeSet::new(), &BTreeMap::new());
            }
            j.close().unwrap();
        }
        other => panic!("{other}: {usage}"),
    }
    let peak = status_kib("VmHWM:");
    println!("operations {}", log.len());
    println!("bytes {}", std::fs::metadata(&path).unwrap().len());
    println!("extra_kib {}", peak.saturating_sub(before));
    println!("held_kib {before}");
}
