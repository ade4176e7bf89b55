//! Shared helpers of the integration tests: the real `bench` binary on temp dirs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bench() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bench"));
    cmd.env_remove("CI");
    cmd
}

pub fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A temp dir holding a plan file with `text`; returns (dir, plan path, out dir).
pub fn plan_dir(text: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(&plan, text).unwrap();
    let out = dir.path().join("out");
    (dir, plan, out)
}

pub fn tiny_plan() -> String {
    std::fs::read_to_string(repo_file("plans/tiny.toml")).unwrap()
}

pub fn run(plan: &Path, out: &Path, extra: &[&str]) -> Output {
    let output = bench()
        .arg("run")
        .arg(plan)
        .arg("--out")
        .arg(out)
        .args(["--progress", "lines"])
        .args(extra)
        .output()
        .unwrap();
    eprintln!(
        "--- bench run stderr ---\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

pub fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Pids of live processes whose command line mentions `needle`.
pub fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let zombie = stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z'));
            if cmdline.contains(needle) && !zombie {
                pids.push(pid);
            }
        }
    }
    pids
}
