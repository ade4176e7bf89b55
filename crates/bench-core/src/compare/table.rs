//! The comparison as an aligned text table and as Markdown, with totals and warnings.

use super::counts::{CountRow, Unit};
use super::readers::ReaderRow;
use super::{Change, Comparison, Figures, MIN_REPETITIONS, Row};

/// A ratio with its confidence interval, when tested: `0.800 [0.742–0.862]`.
fn fmt_ratio(r: &Row, i: usize) -> String {
    if !measured(&r.a, i) || !measured(&r.b, i) {
        return "—".into();
    }
    let Some(ratio) = r.ratios[i] else {
        return "n/a".into();
    };
    match &r.tests[i] {
        Some(t) => format!("{ratio:.3} [{:.3}–{:.3}]", t.ci.0, t.ci.1),
        None => format!("{ratio:.3}"),
    }
}

/// Whether figure `i` exists: a latency (`i` ≥ 1) needs a successful operation in some
/// repetition; a rate is always one (0 is a rate).
fn measured(f: &Figures, i: usize) -> bool {
    i == 0 || f.ops.iter().any(|&n| n > 0)
}

/// A median with its coefficient of variation over the repetitions: `163.295 ±4%`; "—" for a
/// latency of no operation.
fn fmt_value(f: &Figures, i: usize, decimals: usize) -> String {
    if !measured(f, i) {
        return "—".into();
    }
    let s = &f.spread[i];
    match s.cv {
        Some(cv) => format!("{:.decimals$} ±{:.0}%", s.median, cv * 100.0),
        None => format!("{:.decimals$}", s.median),
    }
}

const READ_HEADER: [&str; 11] = [
    "cell",
    "reads/s A",
    "reads/s B",
    "B/A",
    "p50 ms A",
    "p50 ms B",
    "B/A",
    "p99 ms A",
    "p99 ms B",
    "B/A",
    "verdict",
];

const HEADER: [&str; 11] = [
    "cell", "ops/s A", "ops/s B", "B/A", "p50 ms A", "p50 ms B", "B/A", "p99 ms A", "p99 ms B",
    "B/A", "verdict",
];

/// The columns an A/B comparison adds before the verdict: the pairs, the runs they came
/// from, and their time.
const PAIR_HEADER: [&str; 3] = ["pairs", "runs", "time"];

/// A row's cells: the figures, then (paired) its pairs and time, then the verdict.
fn cells(r: &Row, paired: bool) -> Vec<String> {
    let mut v = vec![
        r.cell.clone(),
        fmt_value(&r.a, 0, 3),
        fmt_value(&r.b, 0, 3),
        fmt_ratio(r, 0),
        fmt_value(&r.a, 1, 2),
        fmt_value(&r.b, 1, 2),
        fmt_ratio(r, 1),
        fmt_value(&r.a, 2, 2),
        fmt_value(&r.b, 2, 2),
        fmt_ratio(r, 2),
    ];
    if paired {
        match &r.pairs {
            Some(p) => v.extend([
                format!("{} {}", p.pairs, p.pairing),
                p.runs.to_string(),
                crate::clock::short(std::time::Duration::from_secs_f64(p.secs)),
            ]),
            None => v.extend([String::new(), String::new(), String::new()]),
        }
    }
    v.push(r.verdict());
    v
}

fn header(base: &[&str; 11], paired: bool) -> Vec<String> {
    let mut h: Vec<String> = base[..10].iter().map(|s| s.to_string()).collect();
    if paired {
        h.extend(PAIR_HEADER.map(String::from));
    }
    h.push(base[10].to_string());
    h
}

fn notes(c: &Comparison, a: &str, b: &str) -> Vec<String> {
    let mut n = Vec::new();
    if !c.only_a.is_empty() {
        n.push(format!(
            "only in A ({a}), not compared: {}",
            c.only_a.join(", ")
        ));
    }
    if !c.only_b.is_empty() {
        n.push(format!(
            "only in B ({b}), not compared: {}",
            c.only_b.join(", ")
        ));
    }
    for (cell, d) in &c.differing {
        n.push(format!(
            "{cell} was measured with different parameters: {d}"
        ));
    }
    n.extend(c.interference.iter().map(|i| i.note()));
    n
}

const COUNT_HEADER: [&str; 10] = [
    "cell",
    "req/op A",
    "req/op B",
    "trips/op A",
    "trips/op B",
    "read KiB/op A",
    "read KiB/op B",
    "written KiB/op A",
    "written KiB/op B",
    "count verdict",
];

fn count_cells(r: &CountRow) -> Vec<String> {
    let pair = |t: Option<(f64, f64)>, scale: f64| match t {
        Some((a, b)) => [format!("{:.1}", a / scale), format!("{:.1}", b / scale)],
        None => ["n/a".to_string(), "n/a".to_string()],
    };
    let mut v = vec![r.cell.clone()];
    v.extend(pair(r.total(Unit::Requests, None), 1.0));
    let trips = |name: &str| r.total(Unit::RoundTrips, Some(name));
    let median = format!("critical-path round trips{}", super::counts::MEDIAN);
    v.extend(pair(
        trips("critical-path round trips").or_else(|| trips(&median)),
        1.0,
    ));
    v.extend(pair(r.total(Unit::Bytes, Some("read bytes")), 1024.0));
    v.extend(pair(r.total(Unit::Bytes, Some("written bytes")), 1024.0));
    v.push(r.verdict());
    v
}

/// Columns aligned: the first to the left, the others to the right (the last to the left
/// too with `text_last`, e.g. a verdict).
fn aligned(rows: &[Vec<String>], text_last: bool) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |v| v.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for r in rows {
        let mut l = String::new();
        for (i, v) in r.iter().enumerate() {
            let pad = width[i].saturating_sub(v.chars().count());
            if i == 0 {
                l.push_str(v);
                l.push_str(&" ".repeat(pad));
            } else if text_last && i + 1 == r.len() {
                l.push_str("  ");
                l.push_str(v);
            } else {
                l.push_str(&" ".repeat(pad + 2));
                l.push_str(v);
            }
        }
        s.push_str(l.trim_end());
        s.push('\n');
    }
    s
}

const READER_HEADER: [&str; 8] = [
    "cell",
    "anomalies/read A",
    "anomalies/read B",
    "lag p50 A",
    "lag p50 B",
    "lag p99 A",
    "lag p99 B",
    "readers verdict",
];

/// What a cell's readers saw on both sides (medians of the runs), and the verdict.
fn reader_cells(r: &ReaderRow) -> Vec<String> {
    let (a, b) = (ReaderRow::medians(&r.a), ReaderRow::medians(&r.b));
    let f = |x: Option<f64>, d: usize| x.map_or("n/a".to_string(), |x| format!("{x:.d$}"));
    // The lag as an interval, lower–upper bound, where the runs tell its lower bound.
    let lag = |m: &[Option<f64>; 4]| match m[3] {
        Some(low) => format!("{low:.1}–{}", f(m[1], 1)),
        None => f(m[1], 1),
    };
    vec![
        r.cell.clone(),
        f(a[0], 3),
        f(b[0], 3),
        lag(&a),
        lag(&b),
        f(a[2], 1),
        f(b[2], 1),
        r.verdict(),
    ]
}

/// What readers saw, as text or as a Markdown table.
fn readers_text(c: &Comparison) -> String {
    let mut rows = vec![READER_HEADER.map(String::from).to_vec()];
    rows.extend(c.readers.iter().map(reader_cells));
    format!(
        "\nwhat readers see (anomalies per read, lag in ms, lower–upper bound; medians of the runs):\n{}",
        aligned(&rows, true)
    )
}

fn readers_md(rows: &[&ReaderRow]) -> String {
    let cells = rows.iter().map(|r| (reader_cells(r), r.regressed()));
    verdicts_md(&READER_HEADER, cells)
}

/// The exact counts per operation of both sides, and their verdicts.
fn counts_text(c: &Comparison) -> String {
    let mut rows = vec![COUNT_HEADER.map(String::from).to_vec()];
    rows.extend(c.counts.iter().map(count_cells));
    format!(
        "\ncounts per successful operation (medians of the runs; requests and bytes exact, round trips timed and not judged):\n{}",
        aligned(&rows, true)
    )
}

/// The line of totals of the count verdicts, and their rule.
fn counts_line(c: &Comparison) -> String {
    let n = c.counts.len();
    let unjudged = c.counts.iter().filter(|r| r.unjudged.is_some()).count();
    let (worse, better) = (c.count_regressions(), c.count_improvements());
    let by_time = c
        .counts
        .iter()
        .filter(|r| r.bytes_left_out.is_some())
        .count();
    format!(
        "counts: {worse} regressed, {better} improved, {} the same{} (a count changed when every \
         run of B lies beyond every run of A by more than ±{} a request per operation, or ±{} \
         % of its bytes; round trips are counted as requests that overlap in time, which the \
         scheduler and the store move, and are shown, not judged; several writers' counts \
         (judged on commits as far behind the others on both sides), and those of a cell \
         bounded by time, need 2 runs a side{})\n",
        n - worse - better - unjudged,
        if unjudged > 0 {
            format!(", {unjudged} without a count verdict")
        } else {
            String::new()
        },
        super::counts::COUNT_TOLERANCE,
        super::counts::BYTES_TOLERANCE * 100.0,
        match by_time {
            0 => String::new(),
            n => format!("; in {n} cell(s) {}", super::counts::BYTES_BY_TIME),
        }
    )
}

/// The comparison as an aligned text table (and one for the reads of mixed cells, one for
/// the requests and bytes per operation), then a line of totals.
pub fn text(c: &Comparison) -> String {
    let mut s = table_text(&c.rows, &HEADER, c.paired);
    if !c.read_rows.is_empty() {
        s.push_str("\nreads of mixed cells:\n");
        s.push_str(&table_text(&c.read_rows, &READ_HEADER, c.paired));
        s.push_str(&format!("({})\n", super::PACED_READS));
    }
    if !c.counts.is_empty() {
        s.push_str(&counts_text(c));
    }
    if !c.readers.is_empty() {
        s.push_str(&readers_text(c));
    }
    s.push_str(&summary_line(c));
    if !c.counts.is_empty() {
        s.push_str(&counts_line(c));
    }
    if !c.readers.is_empty() {
        s.push_str(&readers_line(c));
    }
    s.push_str(&planted_line(c));
    s
}

/// Which side ran with test hooks set, and which: its runs are tests, not measurements.
fn planted_line(c: &Comparison) -> String {
    let said: Vec<String> = (["A", "B"].iter().zip(&c.planted))
        .filter(|(_, p)| !p.is_empty())
        .map(|(side, p)| {
            format!(
                "{side} ({})",
                p.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    match said.is_empty() {
        true => String::new(),
        false => format!(
            "PLANTED: test hooks were set in the runs of {}: they are tests, not measurements\n",
            said.join(" and ")
        ),
    }
}

/// The line of totals of the readers' verdicts, and their rule.
fn readers_line(c: &Comparison) -> String {
    let worse = c.reader_regressions(super::Gate::Both);
    let better = c.readers.iter().filter(|r| r.improved()).count();
    format!(
        "readers: {worse} regressed, {better} improved, {} the same (anomalies changed when B \
         has some in every run and A none, or B's per read lie beyond A's in every run by more \
         than {}; the lag p50 when every run of B lies beyond every run of A by more than {} % \
         (or the spread between separate runs, --between-runs) and {} ms, with 2 runs a side)\n",
        c.readers.len() - worse - better,
        super::readers::RATE_TOLERANCE,
        super::readers::LAG_TOLERANCE * 100.0,
        super::readers::LAG_FLOOR_MS,
    )
}

fn table_text(rows: &[Row], base: &[&str; 11], paired: bool) -> String {
    let mut all = vec![header(base, paired)];
    all.extend(rows.iter().map(|r| cells(r, paired)));
    aligned(&all, true)
}

fn summary_line(c: &Comparison) -> String {
    if c.rows.is_empty() {
        return "no cell in common: nothing was compared\n".to_string();
    }
    let improved = c.improvements();
    let inside = c
        .rows
        .iter()
        .any(|r| r.pairs.as_ref().is_some_and(|p| p.pairing != "runs"));
    let crossed = c
        .rows
        .iter()
        .any(|r| r.pairs.as_ref().is_some_and(|p| p.crossover));
    let test = match (c.paired, inside) {
        (true, true) => {
            "the ratio of the arms' pooled throughputs, each crossover of a cell's runs (two \
             runs, each arm first in one) one observation (p50: the runs' median ratios; p99 \
             not tested)"
                .to_string()
        }
        (true, false) if crossed => {
            "the paired t-test on log ratios, each crossover of pairs of runs (A B, then B A) \
             one observation"
                .to_string()
        }
        (true, false) => "the paired t-test on log ratios".to_string(),
        (false, _) if c.between_runs_pct > 0.0 => format!(
            "Welch's t-test on logarithms, widened by the ±{}% two separate runs differ by \
             (--between-runs)",
            c.between_runs_pct
        ),
        (false, _) => "Welch's t-test on logarithms".to_string(),
    };
    let untested = c.untested();
    let undecided = c.undecided();
    let mut s = format!(
        "{} compared: {} regressed, {} improved, {} within noise, {undecided} undecided{} (a \
         verdict needs the ratio's 95 % confidence interval [..], by {test}, to lie entirely \
         beyond ±{}%, within noise entirely within it, undecided across it; p50 and p99 are \
         tested only with at least 20 and 1,000 operations a repetition; B/A above 1 is \
         faster for ops/s, slower for latency; ±% is the coefficient of variation over \
         repetitions)\n",
        crate::plan::count(c.rows.len() as u64, "cell", "cells"),
        c.regressions(),
        improved,
        c.rows.len() - c.regressions() - improved - untested - undecided,
        if untested > 0 {
            format!(", {untested} without a verdict")
        } else {
            String::new()
        },
        c.threshold_pct
    );
    if untested > 0 {
        let (cells, have) = if untested == 1 {
            ("1 cell", "has")
        } else {
            ("cells", "have")
        };
        let cells = if untested == 1 {
            cells.to_string()
        } else {
            format!("{untested} {cells}")
        };
        s.push_str(&format!(
            "{cells} {have} fewer than {MIN_REPETITIONS} repetitions (or runs) on a side, too \
             few to tell a change from noise: set `run.repetitions = 5` in the plan and run \
             both sides again\n"
        ));
    }
    if !c.paired {
        s.push_str(
            "separate runs differ by what the machine did between them; to decide between two \
             builds, use `bench ab`, which pairs them inside each run\n",
        );
    }
    s
}

/// The comparison as Markdown: a title naming A and B, the table, totals and warnings.
pub fn markdown(c: &Comparison, a: &str, b: &str) -> String {
    let mut s = format!(
        "# bench compare\n\n- A: `{a}`\n- B: `{b}`\n- noise threshold: ±{}%\n\n",
        c.threshold_pct
    );
    s.push_str(&tables_markdown(c));
    let notes = notes(c, a, b);
    if !notes.is_empty() {
        s.push_str("\nWarnings:\n\n");
        for n in notes {
            s.push_str(&format!("- {n}\n"));
        }
    }
    s
}

/// A comparison as a pull request comment (GitHub-flavoured Markdown): a one-line headline,
/// a table of only the cells with a verdict (where none has one, the undecided ones), and
/// every table inside `<details>`. Warnings stay on stderr, so this is all of stdout.
pub fn github(c: &Comparison, a: &str, b: &str) -> String {
    let cells = c.rows.len();
    let t = c.threshold_pct;
    let (worse, better) = (c.regressions(), c.improvements());
    let (cworse, cbetter) = (c.count_regressions(), c.count_improvements());
    let counts = match c.counts.is_empty() {
        true => String::new(),
        false if cworse + cbetter == 0 => "; the same counts".to_string(),
        false => format!("; counts: {cworse} regressed, {cbetter} improved"),
    };
    let rworse = c.reader_regressions(super::Gate::Both);
    let counts = match rworse {
        0 => counts,
        n => format!("{counts}; readers: {n} regressed"),
    };
    let (undecided, untested) = (c.undecided(), c.untested());
    let mut s = if worse + better + undecided + untested == 0 {
        format!("**bench**: no change beyond ±{t} % in {cells} cells{counts}\n\n")
    } else if worse + better == 0 {
        // Not "no change": an undecided cell could hide one.
        format!(
            "**bench**: no verdict at ±{t} % in {}: {undecided} undecided (an interval across \
             ±{t} %), {untested} untested, {} within noise{counts}\n\n",
            crate::plan::count(cells as u64, "cell", "cells"),
            cells - undecided - untested
        )
    } else {
        let regressed = crate::plan::count(worse as u64, "cell regressed", "cells regressed");
        let undecided = match undecided {
            0 => String::new(),
            n => format!("; {n} undecided"),
        };
        format!(
            "**bench**: {regressed}, {better} improved beyond ±{t} % (of {cells} \
             cells{undecided}){counts}\n\n"
        )
    };
    s.push_str(&format!("A: `{a}` · B: `{b}`\n\n"));
    // The cells with a verdict; where none has one, the undecided ones (one could hide a
    // change).
    let shown = |r: &Row| match worse + better {
        0 => r.undecided(),
        _ => (r.changes.iter()).any(|ch| matches!(ch, Change::Better | Change::Worse)),
    };
    let moved = |rows: &[Row]| -> Vec<Row> { rows.iter().filter(|r| shown(r)).cloned().collect() };
    let (rows, reads) = (moved(&c.rows), moved(&c.read_rows));
    if !rows.is_empty() {
        s.push_str(&table_md(&rows, &HEADER, c.paired));
    }
    if !reads.is_empty() {
        s.push_str("\nReads of mixed cells:\n\n");
        s.push_str(&table_md(&reads, &READ_HEADER, c.paired));
    }
    let changed: Vec<CountRow> = (c.counts.iter())
        .filter(|r| r.regressed() || r.improved())
        .cloned()
        .collect();
    if !changed.is_empty() {
        s.push_str("\nCounts that changed:\n\n");
        s.push_str(&counts_md(&changed));
    }
    let readers: Vec<&ReaderRow> = (c.readers.iter())
        .filter(|r| r.regressed() || r.improved())
        .collect();
    if !readers.is_empty() {
        s.push_str("\nWhat readers see, changed:\n\n");
        s.push_str(&readers_md(&readers));
    }
    if !s.ends_with("\n\n") {
        s.push('\n');
    }
    s.push_str(&format!(
        "<details>\n<summary>Every cell ({cells})</summary>\n\n{}\n</details>\n",
        tables_markdown(c)
    ));
    s
}

/// The tables and the totals as Markdown (for the comparison's file and the report).
pub fn tables_markdown(c: &Comparison) -> String {
    let mut s = table_md(&c.rows, &HEADER, c.paired);
    if !c.read_rows.is_empty() {
        s.push_str("\nReads of mixed cells:\n\n");
        s.push_str(&table_md(&c.read_rows, &READ_HEADER, c.paired));
        s.push_str(&format!("\nNot judged: {}.\n", super::PACED_READS));
    }
    if !c.counts.is_empty() {
        s.push_str("\nCounts per successful operation (medians of the runs; requests and bytes exact, round trips timed and not judged):\n\n");
        s.push_str(&counts_md(&c.counts));
    }
    if !c.readers.is_empty() {
        s.push_str("\nWhat readers see (anomalies per read, lag in ms, lower–upper bound; medians of the runs):\n\n");
        s.push_str(&readers_md(&c.readers.iter().collect::<Vec<_>>()));
    }
    s.push('\n');
    s.push_str(&summary_line(c));
    if !c.counts.is_empty() {
        s.push_str(&counts_line(c));
    }
    if !c.readers.is_empty() {
        s.push_str(&readers_line(c));
    }
    s
}

/// Count rows as a Markdown table, a changed count in bold.
fn counts_md(rows: &[CountRow]) -> String {
    let cells = rows.iter().map(|r| (count_cells(r), r.regressed()));
    verdicts_md(&COUNT_HEADER, cells)
}

/// Rows of a cell's name, figures and verdict (last) as a Markdown table, the cell as code
/// and a regression's verdict in bold.
fn verdicts_md(header: &[&str], rows: impl Iterator<Item = (Vec<String>, bool)>) -> String {
    let mut s = format!(
        "| {} |\n|:---|{}:---|\n",
        header.join(" | "),
        "---:|".repeat(header.len() - 2)
    );
    for (mut v, regressed) in rows {
        v[0] = format!("`{}`", v[0]);
        if regressed {
            let last = v.len() - 1;
            v[last] = format!("**{}**", v[last]);
        }
        s.push_str(&format!("| {} |\n", v.join(" | ")));
    }
    s
}

fn table_md(rows: &[Row], base: &[&str; 11], paired: bool) -> String {
    let h = header(base, paired);
    let mut s = format!(
        "| {} |\n|:---|{}\n",
        h.join(" | "),
        "---:|".repeat(h.len() - 2) + ":---|"
    );
    for r in rows {
        let mut v = cells(r, paired);
        v[0] = format!("`{}`", v[0]);
        if r.regressed() {
            let last = v.len() - 1;
            v[last] = format!("**{}**", v[last]);
        }
        s.push_str(&format!("| {} |\n", v.join(" | ")));
    }
    s
}

/// Warnings for stderr.
pub fn warnings(c: &Comparison, a: &str, b: &str) -> Vec<String> {
    notes(c, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::Record;
    use crate::export::record::tests::{record, role};
    use crate::plan::{ModeKind, Operation, Variant};

    /// An operation that never succeeded on a side has no latency there: "—", not 0.00, and
    /// no ratio of it.
    #[test]
    fn a_latency_of_no_operation_is_a_dash() {
        let cell = |writes: u64| {
            let mut r = record(ModeKind::Roles, Variant::NoIndex, 54, 2, "roles_x_c_2");
            let mut w = role("writers", Operation::DropTable, 5.0);
            if writes == 0 {
                (w.total_operations, w.throughput_ops_per_sec) = (0, 0.0);
                (w.p50_latency_ms, w.p99_latency_ms) = (0.0, 0.0);
            }
            r.roles = Some(vec![w]);
            r
        };
        let (a, b) = (cell(2000), cell(0));
        let (ra, rb): (Vec<&Record>, Vec<&Record>) = (vec![&a], vec![&b]);
        let rows = super::super::roles::rows((&ra, &rb), false, (0.05, 0.0));
        let shown = cells(&rows[0], false);
        assert_eq!(shown[2], "0.000", "a rate of none is 0: {shown:?}");
        assert_eq!(
            &shown[4..10],
            ["200.00", "—", "—", "400.00", "—", "—"],
            "{shown:?}"
        );
    }
}
