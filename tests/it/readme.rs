//! The README's commands run as written: every `sh` block, in order, in a folder that holds
//! what a checkout does (the plans, the scripts) with `bench` on the PATH and a candidate
//! build where the A/B example names one; and every plan it names validates.

use std::path::Path;
use std::process::Command;

use crate::common::{RgwSlot, repo_file};

/// The README's `sh` blocks, in order.
fn sh_blocks(readme: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in readme.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(String::new()),
            (Some(b), "```") => {
                blocks.push(std::mem::take(b));
                current = None;
            }
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// The plans the README names (`plans/NAME.toml`).
fn plans_named(readme: &str) -> std::collections::BTreeSet<String> {
    readme
        .split(|c: char| c.is_whitespace() || "`()[],".contains(c))
        .filter(|w| w.starts_with("plans/") && w.ends_with(".toml"))
        .map(str::to_string)
        .collect()
}

/// A folder like a checkout: the plans copied, the scripts linked, `bin/bench` and the A/B
/// example's candidate (`../bench-candidate/target/release/bench`, a copy of this bench).
fn checkout(dir: &Path) -> std::path::PathBuf {
    let repo = dir.join("bench");
    std::fs::create_dir_all(repo.join("plans")).unwrap();
    for e in std::fs::read_dir(repo_file("plans")).unwrap().flatten() {
        std::fs::copy(e.path(), repo.join("plans").join(e.file_name())).unwrap();
    }
    std::os::unix::fs::symlink(repo_file("scripts"), repo.join("scripts")).unwrap();
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_bench"), bin.join("bench")).unwrap();
    let candidate = dir.join("bench-candidate/target/release");
    std::fs::create_dir_all(&candidate).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_bench"), candidate.join("bench")).unwrap();
    repo
}

/// Every command of the README, as a user types it: the two commands' block stands for
/// itself (the default sweep is validated, the test command is what runs this); the S3
/// example starts and stops Ceph's gateway as written.
#[test]
fn every_command_runs_as_written_on_ceph_s_gateway() {
    let readme = std::fs::read_to_string(repo_file("README.md")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let repo = checkout(dir.path());
    let path = format!(
        "{}:{}",
        dir.path().join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let shell = |script: &str| {
        Command::new("bash")
            .args(["-euo", "pipefail", "-c", script])
            .current_dir(&repo)
            .env("PATH", &path)
            .env("RGW_OWNER_PID", std::process::id().to_string())
            .env_remove("CI")
            .output()
            .unwrap()
    };
    let blocks = sh_blocks(&readme);
    assert!(blocks.len() >= 8, "{} sh blocks", blocks.len());
    let mut ran = 0;
    for block in &blocks {
        if block.contains("scripts/test.sh") {
            assert!(block.contains("plans/default.toml"), "{block}");
            continue;
        }
        // At most RGW_AT_ONCE clusters in this test process.
        let _slot = block.contains("rgw-up.sh").then(RgwSlot::take);
        let o = shell(block);
        assert!(
            o.status.success(),
            "README block failed ({}):\n{block}\nstdout:\n{}\nstderr:\n{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 7, "{ran} blocks ran");
    // What the blocks left: the tour's results, a comparison's second run, the traces, the
    // shards' merge, the published table.
    for f in [
        "results/tiny/report.md",
        "results/tiny-again/summary.csv",
        "results/tiny-s3/results.jsonl",
        "results/tiny-traced/traces",
        "results/tiny-merged/merge.json",
        "results/lance-bench/results.lance",
    ] {
        assert!(
            repo.join(f).exists(),
            "{f} missing after the README's commands"
        );
    }
    // Every plan the README names is valid as it stands.
    for plan in plans_named(&readme) {
        let o = shell(&format!("bench plan {plan}"));
        assert!(
            o.status.success(),
            "bench plan {plan}:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
