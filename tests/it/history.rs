//! The history a cell of roles keeps (`histories/<cell>_r<N>/`): `bench check` judges it
//! again offline as the record judged it, refuses bad input by its line, and a second judge
//! no one here wrote (adya, a JVM-free Elle, on `bench check --export elle`) agrees with
//! bench on a clean cell and on one whose readers are served from a planted cache.

use std::path::Path;
use std::process::Output;

use crate::common::*;

/// One writer declaring tables at 20 a second, two readers listing their namespace.
fn watched(transport: &str) -> String {
    format!(
        "name = 'watched'\n[fixture]\nwidth = 1\ndepth = 1\ntables_per_namespace = 10\n\
         [matrix]\ninline = [false]\ntransport = ['{transport}']\n\
         [workload]\nduration_secs = 2\n\
         [[roles]]\nname = 'writer'\nclients = 1\nrate = 20\n[roles.mix]\n'write-declare-table' = 1\n\
         [[roles]]\nname = 'readers'\nclients = 2\n[roles.mix]\n'warm-read-list-tables' = 1\n"
    )
}

fn check(path: &Path, extra: &[&str]) -> Output {
    bench().arg("check").arg(path).args(extra).output().unwrap()
}

/// A run of `plan` (with `env` set), its record and its history's folder.
fn kept(
    plan: &str,
    env: Option<(&str, &str)>,
) -> (tempfile::TempDir, serde_json::Value, std::path::PathBuf) {
    let (d, plan, out) = plan_dir(plan);
    let mut cmd = bench();
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    let o = run_with(cmd, &plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = lines(&out.join("results.jsonl")).remove(0);
    let folder = out.join(
        r["history"]
            .as_str()
            .unwrap_or_else(|| panic!("no history: {r}")),
    );
    (d, r, folder)
}

/// The history holds every operation as an invocation and a completion, and `bench check`
/// finds in it exactly what the record says of what readers saw and of how the writes
/// ended; `run.keep_history = false` keeps none.
#[test]
fn a_kept_history_is_judged_again_as_the_record_judged_it() {
    let (_d, r, folder) = kept(&watched("direct"), None);
    let text = std::fs::read_to_string(folder.join("history.jsonl")).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let events = text.lines().count() - 1;
    assert_eq!(
        events as u64,
        2 * header["operations"].as_u64().unwrap(),
        "{header}"
    );
    assert!(folder.join("versions.jsonl").is_file());
    let o = check(&folder, &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let found: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let found = &found[0];
    assert!(r["consistency"].is_object(), "{r}");
    assert_eq!(found["consistency"], r["consistency"]);
    assert_eq!(found["outcomes"], r["outcomes"]);
    assert!(found["chain_versions"].as_u64().unwrap() > 0, "{found}");
    // Without a history kept.
    let (_e, plan, out) = plan_dir(&watched("direct"));
    let o = run(&plan, &out, &["--set", "run.keep_history=false"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        lines(&out.join("results.jsonl"))[0]
            .get("history")
            .is_none()
    );
    assert!(!out.join("histories").exists());
    let o = check(&out, &[]);
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("holds no history"), "{}", stderr(&o));
    // A malformed line, named by its number; nothing of the history changed.
    let broken = out.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    let mut ls: Vec<&str> = text.lines().collect();
    ls[4] = "{\"index\": 3, \"type\": ";
    std::fs::write(broken.join("history.jsonl"), ls.join("\n")).unwrap();
    let o = check(&broken, &[]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("history.jsonl: line 5:"),
        "{}",
        stderr(&o)
    );
    // A history cut short is bad input, named so, never anomalies.
    let cut = out.join("cut");
    std::fs::create_dir_all(&cut).unwrap();
    let half: Vec<&str> = text.lines().take(text.lines().count() / 2).collect();
    std::fs::write(cut.join("history.jsonl"), half.join("\n")).unwrap();
    let o = check(&cut, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("truncated: its header says "),
        "{}",
        stderr(&o)
    );
}

/// The second judge: a clean cell is valid to both; a cell whose readers are served from a
/// view refreshed every 200 ms (`bench serve`'s planted cache) has anomalies to both.
#[test]
fn second_judge_agrees_with_bench_on_a_clean_and_a_cached_cell() {
    let (_a, _, clean) = kept(&watched("direct"), None);
    let cache = (bench_lance::server::CACHE_ENV, "200");
    let (_b, r, cached) = kept(&watched("rest"), Some(cache));
    assert!(r["consistency"]["stale_reads"].as_u64().unwrap() > 0, "{r}");
    for (folder, want) in [(&clean, 0), (&cached, 1)] {
        let (b, a) = both_judges(folder);
        assert!(
            b.0 == want && a.0 == want,
            "bench check (exit {}):\n{}\nadya (exit {}):\n{}",
            b.0,
            b.1,
            a.0,
            a.1
        );
    }
}

/// A writer's three declarations and, after each, a reader's listing that sees them all so
/// far; the second declaration answered with a definite error (a conflict, its requests
/// sent once) though it landed: failed but applied, as bench's verification finds such a
/// write. Written to `dir` as a run writes its history.
fn failed_but_landed(dir: &Path) {
    use bench_lance::op_history::{Run, sample_run, write};
    use bench_lance::oplog::{ErrorClass, Outcome};
    let mut log = sample_run(3);
    let w = &mut log[2];
    (w.outcome, w.landed) = (Outcome::Failed, Some(true));
    w.attempt.class = Some(ErrorClass::Conflict);
    w.attempt.err = Some("a conflict".into());
    w.attempt.resent = Some(0);
    let clocks = std::collections::BTreeMap::new();
    let run = Run {
        cell: "failed_but_landed",
        repetition: 1,
        arm: None,
        hosts: vec!["h".into()],
        clocks: &clocks,
        paused_us: &[],
        chain_versions: None,
        nemesis: &[],
    };
    let (history, _) = write(&log, &run, None);
    std::fs::write(dir.join("history.jsonl"), history).unwrap();
}

/// Both judges read a write that landed after a definite error as bench does: it took
/// effect, so readers that saw it read nothing aborted. The history says `info` for it
/// (never `fail`, Jepsen's word for a write that took no effect); bench counts it failed
/// but applied, a finding of its own, and both find the history valid.
#[test]
fn both_judges_read_a_write_that_landed_after_an_error_as_bench_does() {
    let d = tempfile::tempdir().unwrap();
    failed_but_landed(d.path());
    let text = std::fs::read_to_string(d.path().join("history.jsonl")).unwrap();
    assert!(!text.contains("\"type\":\"fail\""), "{text}");
    let o = check(d.path(), &["--json"]);
    let found: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(found[0]["outcomes"]["failed_but_applied"], 1, "{found}");
    let (b, a) = both_judges(d.path());
    assert!(
        b.0 == 0 && a.0 == 0,
        "bench check (exit {}):\n{}\nadya (exit {}):\n{}",
        b.0,
        b.1,
        a.0,
        a.1
    );
}

/// `bench check`'s exit codes say one thing each: a usage error exits 64, never 2 (which
/// says undecided); a file that is not a history is refused as bad input (3), naming it.
#[test]
fn check_s_usage_errors_and_wrong_files_have_codes_of_their_own() {
    let o = bench()
        .args(["check", "--no-such-flag", "x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(64), "{}", stderr(&o));
    let o = bench().args(["check"]).output().unwrap();
    assert_eq!(o.status.code(), Some(64), "{}", stderr(&o));
    // Another command's usage error keeps the code the README gives it.
    let o = bench().args(["run", "--no-such-flag"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("results.jsonl");
    std::fs::write(&other, "{}\n").unwrap();
    let o = check(&other, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is not a history.jsonl"),
        "{}",
        stderr(&o)
    );
}

/// The invoke files (`BENCH_WORKER_INVOKED`) the workers of coordinator `pid` have.
fn invoke_files_of(pid: u32) -> Vec<std::path::PathBuf> {
    let prefix = format!("bench-invoked-{pid}-");
    (std::fs::read_dir(std::env::temp_dir()).unwrap().flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// The history is written as the run goes: a coordinator killed (SIGKILL) mid-cell leaves
/// it up to its last report, and `bench check` judges it — undecided, never valid, since
/// the run did not finish. The next run removes the invoke files the dead coordinator's
/// workers left, runs the cell again and replaces the history with the whole one, valid.
#[test]
fn a_coordinator_killed_mid_cell_leaves_its_history_so_far() {
    let text = watched("direct").replace("duration_secs = 2", "duration_secs = 6");
    let (_d, plan, out) = plan_dir(&text);
    let mut child = bench()
        .arg("run")
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .args(["--progress", "lines"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let history = |out: &Path| {
        let dir = std::fs::read_dir(out.join("histories"))
            .ok()?
            .flatten()
            .next()?;
        Some(dir.path())
    };
    let events = |folder: &Path| {
        std::fs::read_to_string(folder.join("history.jsonl")).map_or(0, |t| t.lines().count())
    };
    // Killed once the history holds 20 operations, while the cell still runs.
    let folder = loop {
        if let Some(f) = history(&out).filter(|f| events(f) > 40) {
            break f;
        }
        assert!(child.try_wait().unwrap().is_none(), "the run ended first");
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let pid = child.id();
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    child.wait().unwrap();
    assert!(
        !out.join("results.jsonl").is_file()
            || std::fs::read_to_string(out.join("results.jsonl"))
                .unwrap()
                .is_empty(),
        "the cell was not recorded"
    );
    assert!(
        !invoke_files_of(pid).is_empty(),
        "its workers' invoke files are left"
    );
    let o = check(&folder, &[]);
    let said = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(2), "{said}{}", stderr(&o));
    assert!(said.contains("journal: written as the run went"), "{said}");
    assert!(
        said.contains("UNKNOWN: no anomaly in what the run wrote before it stopped"),
        "{said}"
    );
    // The next run: the dead coordinator's invoke files gone, the whole history kept.
    let o = run(&plan, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        invoke_files_of(pid).is_empty(),
        "{:?}",
        invoke_files_of(pid)
    );
    let r = lines(&out.join("results.jsonl")).remove(0);
    assert_eq!(out.join(r["history"].as_str().unwrap()), folder);
    let header: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(folder.join("history.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert!(header.get("journal").is_none(), "{header}");
    assert_eq!(
        events(&folder) as u64,
        1 + 2 * header["operations"].as_u64().unwrap()
    );
    let o = check(&folder, &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}
