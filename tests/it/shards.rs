//! Shards and `bench merge` on local disk: the partition from the command line, what a
//! merge takes and what it refuses. (Shards on a real array engine: tests/slurm.)

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::*;

fn ids(path: &Path) -> BTreeSet<String> {
    lines(path)
        .iter()
        .map(|r| r["bench_tag"].as_str().unwrap().to_string())
        .collect()
}

fn merge(out: &Path, inputs: &[&Path]) -> std::process::Output {
    bench().arg("merge").arg(out).args(inputs).output().unwrap()
}

#[test]
fn bad_shard_arguments_and_auto_without_an_array_job_fail_clearly() {
    let (_d, plan, out) = plan_dir(&tiny_plan());
    let cases = [
        ("0/3", "numbered from 1 to 3"),
        ("4/3", "numbered from 1 to 3"),
        ("x", "is not a shard"),
        ("auto", "found no array job"),
        ("auto/3", "found no array job"),
    ];
    for (arg, needle) in cases {
        for cmd in ["plan", "status", "run"] {
            let mut c = bench();
            for var in [
                "SLURM_JOB_ID",
                "SLURM_ARRAY_TASK_ID",
                "SLURM_ARRAY_TASK_COUNT",
                "AWS_BATCH_JOB_ARRAY_INDEX",
                "JOB_COMPLETION_INDEX",
            ] {
                c.env_remove(var);
            }
            let o = c
                .args([cmd, plan.to_str().unwrap(), "--out"])
                .arg(&out)
                .args(["--shard", arg])
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(2), "{cmd} --shard {arg}");
            assert!(stderr(&o).contains(needle), "{cmd} {arg}: {}", stderr(&o));
        }
    }
    assert!(!out.exists(), "nothing written for bad arguments");
    // `auto` reads the array engine's variables.
    let o = bench()
        .args(["plan", plan.to_str().unwrap(), "--out"])
        .arg(&out)
        .args(["--shard", "auto"])
        .env("AWS_BATCH_JOB_ARRAY_INDEX", "1")
        .env("AWS_BATCH_JOB_ARRAY_SIZE", "2")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("(shard 2/2 of 8 cells)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn shards_run_apart_and_merge_into_the_whole_sweep() {
    let (dir, plan, _) = plan_dir(&tiny_plan());
    let shard = |k: u32| dir.path().join(format!("shard-{k}"));
    // Shards meant to be merged share one store.
    let root = dir.path().join("store");
    let root = root.to_str().unwrap();
    // The shards' cells: disjoint, together every cell of the plan.
    let mut seen = Vec::new();
    for k in 1..=3 {
        let o = bench()
            .args(["plan", plan.to_str().unwrap(), "--out"])
            .arg(shard(k))
            .args(["--shard", &format!("{k}/3")])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        seen.extend(
            text.lines()
                .filter_map(|l| l.split_whitespace().nth(1))
                .filter(|w| w.starts_with("cont_") || w.starts_with("conc_"))
                .map(str::to_string),
        );
    }
    let unique: BTreeSet<_> = seen.iter().cloned().collect();
    assert_eq!(seen.len(), 8, "{seen:?}");
    assert_eq!(unique.len(), 8, "every cell in exactly one shard: {seen:?}");

    // Shards 1 and 2 run; the merge says what is missing and exits 6.
    for k in [1, 2] {
        let o = run(
            &plan,
            &shard(k),
            &["--shard", &format!("{k}/3"), "--root", root],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    // A shard's directory refuses another shard (or the whole sweep).
    let o = run(&plan, &shard(1), &["--shard", "2/3", "--root", root]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("holds shard 1/3") && stderr(&o).contains("its own --out"),
        "{}",
        stderr(&o)
    );
    let merged = dir.path().join("merged");
    let o = merge(&merged, &[&shard(1), &shard(2)]);
    assert_eq!(o.status.code(), Some(6), "{}", stdout(&o));
    assert!(stdout(&o).contains("INCOMPLETE: 2 cells"), "{}", stdout(&o));
    let partial = ids(&merged.join("results.jsonl"));
    assert_eq!(partial.len(), 6);

    // The late shard finishes; merging again completes the sweep.
    let o = run(&plan, &shard(3), &["--shard", "3/3", "--root", root]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = merge(&merged, &[&shard(1), &shard(2), &shard(3)]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("8 of 8 cells done"), "{}", stdout(&o));
    assert_eq!(ids(&merged.join("results.jsonl")), unique);
    let records = lines(&merged.join("results.jsonl"));
    assert_eq!(records.len(), 8, "each cell exactly once");
    assert!(records.iter().all(|r| r["verified"] == true));
    let csv = std::fs::read_to_string(merged.join("summary.csv")).unwrap();
    assert_eq!(csv.lines().count(), 9, "{csv}");
    assert!(merged.join("report.md").is_file());
    let sources: serde_json::Value =
        serde_json::from_slice(&std::fs::read(merged.join("merge.json")).unwrap()).unwrap();
    assert_eq!(sources["cells"].as_array().unwrap().len(), 8);

    // A shard that crashed between appending a cell's record and checkpointing it: its
    // records are the truth, as for `bench run` and `bench status` there.
    let state_path = shard(3).join("state.json");
    let saved = std::fs::read_to_string(&state_path).unwrap();
    let mut state: serde_json::Value = serde_json::from_str(&saved).unwrap();
    for cell in state["cells"].as_object_mut().unwrap().values_mut() {
        cell["status"] = "running".into();
    }
    std::fs::write(&state_path, state.to_string()).unwrap();
    let o = merge(&merged, &[&shard(1), &shard(2), &shard(3)]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    std::fs::write(&state_path, saved).unwrap();

    // A shard killed mid-append leaves a torn last line: status and merge leave it out, as
    // a resume would cut it, and write nothing into the shard.
    let results_path = shard(3).join("results.jsonl");
    let whole = std::fs::read(&results_path).unwrap();
    let mut torn = whole.clone();
    torn.extend_from_slice(&whole[..whole.len().min(120) / 2]);
    std::fs::write(&results_path, &torn).unwrap();
    let o = bench()
        .args(["status", plan.to_str().unwrap(), "--out"])
        .arg(shard(3))
        .args(["--shard", "3/3", "--root", root])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let done = whole.iter().filter(|&&b| b == b'\n').count();
    assert!(
        stdout(&o).contains(&format!("{done} done, 0 failed, 0 pending")),
        "{}",
        stdout(&o)
    );
    let o = merge(&merged, &[&shard(1), &shard(2), &shard(3)]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(lines(&merged.join("results.jsonl")).len(), 8);
    assert_eq!(std::fs::read(&results_path).unwrap(), torn);
    std::fs::write(&results_path, &whole).unwrap();

    // A checkpoint with values no plan gives (a hand edit: 0 repetitions) is refused with
    // its path, not a panic, and nothing is written.
    let saved = std::fs::read_to_string(&state_path).unwrap();
    let mut state: serde_json::Value = serde_json::from_str(&saved).unwrap();
    state["sweep"]["repetitions"] = 0.into();
    std::fs::write(&state_path, state.to_string()).unwrap();
    let zero = dir.path().join("zero");
    let o = merge(&zero, &[&shard(1), &shard(2), &shard(3)]);
    assert_eq!(o.status.code(), Some(4), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("0 repetitions") && stderr(&o).contains("state.json"),
        "{}",
        stderr(&o)
    );
    assert!(!zero.join("results.jsonl").exists());
    std::fs::write(&state_path, saved).unwrap();

    // The same directory twice, or an earlier merge beside the shards: identical copies.
    let again = dir.path().join("again");
    let o = merge(&again, &[&shard(1), &shard(1), &merged, &shard(3)]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(lines(&again.join("results.jsonl")).len(), 8);

    // A cell run twice with different results is refused, and nothing is written.
    let twice = dir.path().join("twice");
    let o = run(&plan, &twice, &["--shard", "1/3", "--root", root]);
    assert!(o.status.success(), "{}", stderr(&o));
    let refused = dir.path().join("refused");
    let o = merge(&refused, &[&shard(1), &shard(2), &shard(3), &twice]);
    assert_eq!(o.status.code(), Some(4), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("with different results") && stderr(&o).contains("leave the other"),
        "{}",
        stderr(&o)
    );
    assert!(!refused.join("results.jsonl").exists());

    // A run's own results directory is never overwritten by a merge.
    let before = std::fs::read(shard(2).join("results.jsonl")).unwrap();
    let o = merge(&shard(2), &[&shard(1), &shard(3)]);
    assert_eq!(o.status.code(), Some(4));
    assert!(stderr(&o).contains("not of a merge"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(shard(2).join("results.jsonl")).unwrap(),
        before
    );

    // Shards of another plan are refused.
    let (_o, other, _) = plan_dir(&tiny_plan().replace("sizes = [100, 1000]", "sizes = [100]"));
    let elsewhere = dir.path().join("other");
    let o = run(&other, &elsewhere, &["--shard", "1/3", "--root", root]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = merge(&dir.path().join("mixed"), &[&shard(1), &elsewhere]);
    assert_eq!(o.status.code(), Some(4));
    assert!(stderr(&o).contains("different sweeps"), "{}", stderr(&o));
}

/// The README's commands as written: shards on one machine, each with its own --out beside
/// the others and no --root, share one store by default, and their merge is the sweep.
#[test]
fn shards_without_a_root_share_one_store_and_merge() {
    let (dir, plan, _) = plan_dir(&tiny_plan().replace("sizes = [100, 1000]", "sizes = [100]"));
    let results = dir.path().join("results").join("tiny");
    let shard = |k: u32| results.join(format!("shard-{k}"));
    for k in 1..=2 {
        let o = run(&plan, &shard(k), &["--shard", &format!("{k}/2")]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = merge(&results.join("merged"), &[&shard(1), &shard(2)]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(ids(&results.join("merged").join("results.jsonl")).len(), 4);
    // Their store is beside them, each shard under its own prefix.
    let store = results.join("store");
    assert!(store.join("shard-1-of-2").is_dir() && store.join("shard-2-of-2").is_dir());
}

#[test]
fn a_shard_remembers_its_store_and_merge_refuses_records_of_two_stores() {
    let (dir, plan, _) = plan_dir(&tiny_plan().replace("sizes = [100, 1000]", "sizes = [100]"));
    let shard = |k: u32| dir.path().join(format!("shard-{k}"));
    let (r1, r2) = (dir.path().join("store-1"), dir.path().join("store-2"));
    let (r1, r2) = (r1.to_str().unwrap(), r2.to_str().unwrap());
    let o = run(&plan, &shard(1), &["--shard", "1/2", "--root", r1]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = std::fs::read(shard(1).join("results.jsonl")).unwrap();
    // Resumed without its --root: refused, naming the one to give; nothing runs.
    let o = run(&plan, &shard(1), &["--shard", "1/2"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("was run with --root {r1}")),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(shard(1).join("results.jsonl")).unwrap(),
        before
    );
    // `bench status` without it: the cells are stale because of the store, not the plan.
    let o = bench()
        .args(["status", plan.to_str().unwrap(), "--out"])
        .arg(shard(1))
        .args(["--shard", "1/2"])
        .output()
        .unwrap();
    let text = stdout(&o);
    assert!(text.contains("stale (run against another store)"), "{text}");
    assert!(!text.contains("plan changed"), "{text}");
    assert!(
        text.contains(&format!("was run with --root {r1}")),
        "{text}"
    );
    // With it: done, as it is.
    let o = bench()
        .args(["status", plan.to_str().unwrap(), "--out"])
        .arg(shard(1))
        .args(["--shard", "1/2", "--root", r1])
        .output()
        .unwrap();
    assert!(stdout(&o).contains("0 stale"), "{}", stdout(&o));
    // The other shard against another store: the merge refuses to mix them, unless told.
    let o = run(&plan, &shard(2), &["--shard", "2/2", "--root", r2]);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = dir.path().join("merged");
    let o = merge(&merged, &[&shard(1), &shard(2)]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("different stores") && stderr(&o).contains("--allow-mixed-roots"),
        "{}",
        stderr(&o)
    );
    assert!(!merged.join("results.jsonl").exists());
    let o = bench()
        .arg("merge")
        .arg(&merged)
        .args([&shard(1), &shard(2)])
        .arg("--allow-mixed-roots")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(lines(&merged.join("results.jsonl")).len(), 4);
}

#[test]
fn a_launcher_is_checked_and_one_that_cannot_start_its_tasks_fails_the_cell_with_its_words() {
    let (_d, plan, out) = plan_dir(&tiny_plan().replace("sizes = [100, 1000]", "sizes = [100]"));
    // No {workers}: refused before anything is written.
    let o = run(&plan, &out, &["--launcher", "srun --ntasks=4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("put {workers}"), "{}", stderr(&o));
    assert!(!out.exists());
    // A launcher that fails (as srun does without nodes): every cell fails, saying why.
    let failing = "sh -c 'echo launcher: no nodes for {workers} tasks >&2; exit 1'";
    let o = run(&plan, &out, &["--launcher", failing]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let status = bench_on("status", &plan, &out);
    let text = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(
        text.contains("4 failed") && text.contains("launcher: no nodes for 2 tasks"),
        "{text}"
    );
    assert!(lines(&out.join("results.jsonl")).is_empty());
}
