//! `bench report`, `bench summarize` and `bench compare` on fixture result sets
//! (tests/fixtures/README.md says where they come from).

use std::path::{Path, PathBuf};

use crate::common::*;

fn fixture(name: &str) -> PathBuf {
    repo_file(&format!("tests/fixtures/{name}"))
}

/// A results directory holding `results.jsonl` with these files' lines.
fn results_dir(files: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    std::fs::create_dir_all(&out).unwrap();
    let text: String = files
        .iter()
        .map(|f| std::fs::read_to_string(fixture(f)).unwrap())
        .collect();
    std::fs::write(out.join("results.jsonl"), text).unwrap();
    (dir, out)
}

fn lines_of(path: &Path) -> Vec<serde_json::Value> {
    lines(path)
}

#[test]
fn report_renders_valid_charts_and_tables_matching_the_results() {
    let (_dir, out) = results_dir(&["results-a.jsonl"]);
    let o = bench_cmd(&["report", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();

    // Each chart: valid SVG, titled axes with units, one legend entry per series.
    let expect: &[(&str, &[&str], &[&str])] = &[
        (
            "continuous_throughput.svg",
            &[
                "rows in __manifest (log scale)",
                "throughput (commits/s, log scale)",
            ],
            &["inline_index", "no_index"],
        ),
        (
            "continuous_latency.svg",
            &[
                "rows in __manifest (log scale)",
                "latency per operation (ms, log scale)",
            ],
            &[
                "inline_index p50",
                "inline_index p99",
                "no_index p50",
                "no_index p99",
            ],
        ),
        (
            "concurrent_throughput_inline_index.svg",
            &[
                "writer processes (log scale)",
                "total throughput (commits/s, log scale)",
            ],
            &["1k rows", "10k rows"],
        ),
        (
            "concurrent_latency_no_index.svg",
            &[
                "writer processes (log scale)",
                "latency per operation (ms, log scale)",
            ],
            &["1k rows p50", "1k rows p99", "10k rows p50", "10k rows p99"],
        ),
        (
            "concurrent_errors_no_index.svg",
            &[
                "writer processes (log scale)",
                "failed operations, all repetitions (count)",
            ],
            &["1k rows", "10k rows"],
        ),
        (
            "mixed_throughput.svg",
            &[
                "rows in __manifest (log scale)",
                "throughput (operations/s, log scale)",
            ],
            &[
                "inline_index reads",
                "inline_index commits",
                "no_index reads",
                "no_index commits",
            ],
        ),
    ];
    for (file, axes, legend) in expect {
        let svg = std::fs::read_to_string(out.join("charts").join(file)).unwrap();
        let texts = svg_texts(&svg);
        for t in axes.iter().chain(legend.iter()) {
            assert!(
                texts.iter().any(|x| x == t),
                "{file} lacks text {t:?}: {texts:?}"
            );
        }
        // One drawn line per series (solid <polyline>s, or dashes for p99 / commits).
        assert!(svg.matches("<polyline").count() >= legend.len(), "{file}");
        assert!(
            report.contains(&format!("(charts/{file})")),
            "report.md embeds {file}"
        );
    }
    let charts = std::fs::read_dir(out.join("charts")).unwrap().count();
    assert_eq!(
        charts, 9,
        "2 continuous, 3 per variant for concurrent, 1 mixed"
    );

    // The tables hold the records' numbers, formatted as summary.csv formats them.
    let rows: Vec<Vec<String>> = report
        .lines()
        .filter(|l| l.starts_with("| ") && !l.contains("variant"))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    let records = lines_of(&out.join("results.jsonl"));
    assert_eq!(rows.len(), records.len(), "one table row per cell");
    for r in &records {
        let f = |k: &str| r[k].as_f64().unwrap();
        let want = [
            r["variant"].as_str().unwrap().to_string(),
            r["initial_entries"].to_string(),
            format!("{:.3}", f("throughput_ops_per_sec")),
            format!("{:.2}", f("p50_latency_ms")),
            format!("{:.2}", f("p99_latency_ms")),
            r["total_operations"].to_string(),
        ];
        let found = rows.iter().any(|row| {
            row[0] == want[0]
                && row[1] == want[1]
                && want[2..].iter().all(|w| row.contains(w))
                && (r["mode"] == "continuous"
                    || row[2].parse::<u64>().ok() == r["concurrency"].as_u64())
        });
        assert!(found, "no table row with {want:?} for {}", r["bench_tag"]);
        if let Some(reads) = r["reads"].as_object() {
            let tps = format!("{:.3}", reads["throughput_ops_per_sec"].as_f64().unwrap());
            assert!(
                rows.iter().any(|row| row.contains(&tps)),
                "reads/s of {}",
                r["bench_tag"]
            );
        }
    }
    assert!(report.contains("Verification: every cell"), "{report}");
}

#[test]
fn summarize_rebuilds_summary_and_report_from_concatenated_results() {
    // Two machines' halves of one sweep, concatenated.
    let (_dir, out) = results_dir(&["results-a.jsonl"]);
    let whole = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let half = whole.lines().count() / 2;
    let (first, second): (Vec<&str>, Vec<&str>) = {
        let l: Vec<&str> = whole.lines().collect();
        (l[..half].to_vec(), l[half..].to_vec())
    };
    std::fs::write(
        out.join("results.jsonl"),
        format!("{}\n{}\n", second.join("\n"), first.join("\n")),
    )
    .unwrap();
    let o = bench_cmd(&["summarize", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("summary.csv"), "{}", stdout(&o));
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut rows = csv.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = rows.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), whole.lines().count(), "one row per cell");
    let col = |row: &Vec<&str>, name: &str| {
        row[header.iter().position(|c| *c == name).unwrap()].to_string()
    };
    // Sorted as the reference sorts (mode, variant, rows, concurrency), whatever the file order.
    let modes: Vec<String> = rows.iter().map(|r| col(r, "mode")).collect();
    let mut sorted = modes.clone();
    sorted.sort();
    assert_eq!(modes, sorted);
    for r in lines_of(&out.join("results.jsonl")) {
        let tag = r["bench_tag"].as_str().unwrap();
        let row = rows
            .iter()
            .find(|row| col(row, "bench_tag") == tag)
            .unwrap();
        assert_eq!(
            col(row, "tps"),
            format!("{:.3}", r["throughput_ops_per_sec"].as_f64().unwrap())
        );
    }
    assert!(out.join("report.md").is_file());

    // No results: one clear message, exit 4, nothing written.
    let empty = tempfile::tempdir().unwrap();
    for cmd in ["summarize", "report"] {
        let o = bench_cmd(&[cmd, empty.path().to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(4), "{cmd}");
        assert!(
            stderr(&o).contains("has no results.jsonl"),
            "{}",
            stderr(&o)
        );
        assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0);
    }
}

#[test]
fn compare_of_repetitions_gives_verdicts_only_beyond_noise() {
    let (a, b) = (fixture("reps-a.jsonl"), fixture("reps-b.jsonl"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    // The fixtures' B is A with known edits, as if both ran in one sitting: no spread
    // between runs to allow for.
    let o = bench_cmd(&["compare", a, b, "--between-runs", "0"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let row = |table: &str, cell: &str| -> String {
        table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(cell))
            .unwrap_or_else(|| panic!("no row for {cell} in\n{text}"))
            .to_string()
    };
    let (main, reads) = text
        .split_once("reads of mixed cells:")
        .expect("a reads table");
    // Every repetition 0.5 x: the interval lies beyond -10 %, whatever the noise.
    let r = row(main, "cont_inline_true_rows_1000");
    assert!(r.contains(" 0.500 ["), "{r}");
    assert!(r.contains("REGRESSION (ops/s -50.0%, CI -"), "{r}");
    let r = row(main, "conc_inline_true_rows_1000_c_2");
    assert!(
        r.contains(" 1.400 [") && r.contains("improved (ops/s +40.0%"),
        "{r}"
    );
    // 0.88 x the median, but spread +-30 %: the test's own ratio (of the geometric means,
    // inside its interval) 0.822, beyond the threshold, its interval across it: undecided,
    // never "within noise".
    let r = row(main, "cont_inline_false_rows_1000");
    assert!(
        r.contains(" 0.822 [0.589–1.149]")
            && r.ends_with("undecided (ops/s -17.8%, CI -41.1%..+14.9%, p50 +0.0%, CI -25.4%..+34.0%: across ±10%)"),
        "{r}"
    );
    // The same repetitions in another order: 1.000, but spread ±15 %: undecided at ±10 %.
    let r = row(main, "cont_inline_false_rows_10000");
    assert!(
        r.contains(" 1.000 [") && r.contains("undecided (ops/s +0.0%"),
        "{r}"
    );
    // Spread ±6 %: its interval wholly inside ±10 %, within noise.
    let r = row(main, "conc_inline_true_rows_10000_c_2");
    assert!(
        r.contains(" 1.000 [0.916–1.091]") && r.ends_with("within noise"),
        "{r}"
    );
    // Two repetitions in B: no verdict for that cell.
    let r = row(main, "cont_inline_true_rows_10000");
    assert!(r.ends_with("no verdict (5/2 repetitions)"), "{r}");
    // The reads of a mixed cell served 1.57 x as often but 1.26 x as slow, its commits
    // untouched: their pace is shown and not judged, their latency is: a regression.
    let r = row(reads, "mixed_inline_true_rows_1000_c_2");
    assert!(
        r.contains(" 1.570 [") && r.contains("REGRESSION (p50 +26.0%"),
        "{r}"
    );
    assert!(!r.contains("improved") && !r.contains("reads/s +"), "{r}");
    assert!(reads.contains("it is shown, not judged; its reads are judged by their latency"));
    assert!(
        row(main, "mixed_inline_true_rows_1000_c_2").ends_with("CI -9.5%..+10.5%: across ±10%)")
    );
    assert!(
        text.contains(
            "12 cells compared: 2 regressed, 1 improved, 1 within noise, 7 undecided, 1 \
             without a verdict"
        ),
        "{text}"
    );
    // A gate that must not pass what it could not judge: exit 7 where nothing regressed.
    let o = bench_cmd(&[
        "compare",
        a,
        a,
        "--between-runs",
        "0",
        "--fail-on-undecided",
    ]);
    assert_eq!(o.status.code(), Some(7), "{}", stdout(&o));

    let o = bench_cmd(&[
        "compare",
        a,
        b,
        "--fail-on-regression",
        "--between-runs",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(5), "{}", stdout(&o));
    // As a pull request comment: the cells with a verdict (the mixed cell's reads among
    // them), then every cell in <details>; the same exit code.
    let o = bench_cmd(&[
        "compare",
        a,
        b,
        "--fail-on-regression",
        "--between-runs",
        "0",
        "--format",
        "github",
    ]);
    assert_eq!(o.status.code(), Some(5), "{}", stdout(&o));
    let md = stdout(&o);
    let (head, all) = md.split_once("<details>").expect("a details block");
    assert!(
        head.starts_with(
            "**bench**: 2 cells regressed, 1 improved beyond ±10 % (of 12 cells; 7 undecided)"
        ),
        "{md}"
    );
    for cell in [
        "cont_inline_true_rows_1000`",
        "conc_inline_true_rows_1000_c_2`",
        "mixed_inline_true_rows_1000_c_2`",
    ] {
        assert!(head.contains(cell) && all.contains(cell), "{cell}: {md}");
    }
    assert!(!head.contains("cont_inline_false_rows_10000`"), "{md}");
    assert!(all.contains("cont_inline_false_rows_10000`"), "{md}");
    assert!(
        md.trim_end().ends_with("</details>"),
        "nothing after it: {md}"
    );
    // As separate runs (the default spread between runs, 100 %: two runs of one build can
    // differ by 2x), neither the 40 % improvement nor the halving is a verdict: undecided.
    let o = bench_cmd(&["compare", a, b]);
    let text = stdout(&o);
    for cell in [
        "conc_inline_true_rows_1000_c_2",
        "cont_inline_true_rows_1000",
    ] {
        let r = row(&text, cell);
        assert!(r.contains("undecided (ops/s "), "{r}");
    }
    assert!(
        text.contains("widened by the ±100% two separate runs differ by")
            && text.contains("use `bench ab`"),
        "{text}"
    );
    // Nothing moved beyond 60 % with confidence.
    let o = bench_cmd(&["compare", a, b, "--fail-on-regression", "--threshold", "60"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("0 regressed, 0 improved"),
        "{}",
        stdout(&o)
    );
}

/// `--json` (`--format json`): the same comparison as one document, nothing else on stdout.
#[test]
fn compare_as_json_holds_each_cell_s_ratio_interval_and_verdict() {
    let (a, b) = (fixture("reps-a.jsonl"), fixture("reps-b.jsonl"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for flag in [&["--json"][..], &["--format", "json"][..]] {
        let args = [&["compare", a, b, "--between-runs", "0"][..], flag].concat();
        let o = bench_cmd(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let cell = |id: &str| {
            doc["cells"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["cell"] == id)
                .unwrap_or_else(|| panic!("{id} in {doc}"))
                .clone()
        };
        let slow = cell("cont_inline_true_rows_1000");
        assert_eq!(slow["metrics"][0]["change"], "worse", "{slow}");
        assert!((slow["metrics"][0]["ratio"].as_f64().unwrap() - 0.5).abs() < 1e-9);
        assert!(slow["verdict"].as_str().unwrap().starts_with("REGRESSION"));
        let noisy = cell("cont_inline_false_rows_1000");
        assert_eq!(noisy["metrics"][0]["change"], "undecided", "{noisy}");
        let steady = cell("conc_inline_true_rows_10000_c_2");
        assert_eq!(steady["metrics"][0]["change"], "same", "{steady}");
        assert!(doc["regressions"].as_u64().unwrap() >= 1, "{doc}");
        assert!(!doc["reads"].as_array().unwrap().is_empty(), "{doc}");
    }
}

#[test]
fn compare_gives_ratios_warnings_and_no_verdict_for_single_runs() {
    let (a, b) = (fixture("results-a.jsonl"), fixture("results-b.jsonl"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = bench_cmd(&["compare", a, b]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let row = |cell: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(cell))
            .unwrap_or_else(|| panic!("no row for {cell} in\n{text}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    // One repetition a side: the ratios, but no verdict, however large the change.
    let no_verdict = "no verdict (1/1 repetitions)";
    // B's throughput is 0.8 x A's.
    let r = row("cont_inline_true_rows_1000");
    assert_eq!(r[3], "0.800", "{r:?}");
    assert_eq!(r[10..].join(" "), no_verdict, "{r:?}");
    // B's p99 is 1.5 x A's.
    let r = row("cont_inline_false_rows_10000");
    assert_eq!(r[9], "1.500", "{r:?}");
    // B's throughput is 1.25 x A's; 1.05 x in another cell.
    assert_eq!(row("conc_inline_true_rows_1000_c_2")[3], "1.250");
    assert_eq!(row("conc_inline_false_rows_1000_c_4")[3], "1.050");
    // The reads of mixed cells are compared in their own table: B's reads/s is 0.5 x A's.
    let reads = text
        .split("reads of mixed cells:")
        .nth(1)
        .expect("a reads table");
    let r: Vec<&str> = reads
        .lines()
        .find(|l| l.starts_with("mixed_inline_true_rows_1000_c_4 "))
        .expect("the mixed cell's reads")
        .split_whitespace()
        .collect();
    assert_eq!(r[3], "0.500", "{r:?}");
    assert!(
        text.contains(
            "19 cells compared: 0 regressed, 0 improved, 0 within noise, 0 undecided, 19 \
             without a verdict"
        ),
        "{text}"
    );
    assert_eq!(
        text.matches("set `run.repetitions = 5`").count(),
        1,
        "said once: {text}"
    );
    let err = stderr(&o);
    assert!(
        err.contains("only in A") && err.contains("mixed_inline_false_rows_10000_c_4"),
        "{err}"
    );
    assert!(
        err.contains("only in B") && err.contains("cont_inline_true_rows_100000"),
        "{err}"
    );
    assert!(
        err.contains("conc_inline_true_rows_10000_c_4 was measured with different parameters: commit_retries 20 vs 5"),
        "{err}"
    );
    // No verdict, so nothing fails the build.
    let o = bench_cmd(&["compare", a, b, "--fail-on-regression"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));

    // The same run against itself: every ratio 1.
    let o = bench_cmd(&["compare", a, a, "--fail-on-regression"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o)
            .lines()
            .filter(|l| l.starts_with("co") || l.starts_with("mi"))
            .all(|l| { l.split_whitespace().filter(|v| v.contains("1.000")).count() == 3 }),
        "{}",
        stdout(&o)
    );

    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("cmp.md");
    let o = bench_cmd(&["compare", a, b, "--markdown", md.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("| cell | ops/s A | ops/s B | B/A |"), "{md}");
    assert!(md.contains("| `cont_inline_true_rows_1000` |"), "{md}");
    assert!(md.contains(no_verdict), "{md}");
    assert!(md.contains("only in B"), "{md}");

    // Two result sets without a cell in common: refused, exit 4.
    let other = dir.path().join("other.jsonl");
    let one_cell: String = std::fs::read_to_string(b)
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"bench_tag\":\"cont_inline_true_rows_100000\""))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&other, one_cell).unwrap();
    let o = bench_cmd(&["compare", a, other.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4), "{}", stdout(&o));
    assert!(stderr(&o).contains("no cell in common"), "{}", stderr(&o));

    let o = bench_cmd(&["compare", a, "/nonexistent/results"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        stderr(&o).contains("/nonexistent/results has no results"),
        "{}",
        stderr(&o)
    );
    let o = bench_cmd(&["compare", a, b, "--threshold", "ten"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a percentage"), "{}", stderr(&o));
}

/// A reader that goes away (`| grep -q REGRESSION`, `| head`) ends the printing, not the
/// command: no panic, and the exit code is the command's own.
#[test]
fn a_closed_pipe_does_not_make_a_command_panic() {
    let (a, b) = (fixture("results-a.jsonl"), fixture("results-b.jsonl"));
    let dir = tempfile::tempdir().unwrap();
    let tiny = repo_file("plans/tiny.toml");
    let out = dir.path().join("out");
    for args in [
        vec!["compare", a.to_str().unwrap(), b.to_str().unwrap()],
        vec![
            "plan",
            tiny.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    ] {
        let mut child = bench()
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader closes its end before bench writes.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_ne!(o.status.code(), Some(101), "{args:?}: {err}");
    }
}

/// The small things a new user meets first: `bench --help` says what bench is, and
/// `bench ab --help` names its own default results directory.
#[test]
fn ab_help_names_its_own_results_directory() {
    let o = bench_cmd(&["--help"]);
    let text = stdout(&o);
    assert!(
        text.starts_with("Declarative sweeps of the Lance __manifest commit benchmark\n"),
        "{text}"
    );
    let o = bench_cmd(&["ab", "--help"]);
    let text = stdout(&o);
    assert!(text.contains("results/<plan name>-ab"), "{text}");
}
