//! A fault campaign's points judged (`[campaign]`, `plan::campaign`), from their records
//! alone: each one's class and witness ([`judge`]), and the matrix, request position × fault
//! kind, with every red point and the command that runs it again (`campaign.md`, [`write`]).

use std::fmt::Write as _;
use std::path::Path;

use crate::export::Record;
pub use crate::export::point::{Class, held_line, judge};
use crate::plan::campaign::{ENV, FaultKind, Point, Request};

/// The campaign's matrix, in the results directory.
pub const FILE: &str = "campaign.md";

/// A request as the matrix's header names it: `PUT __manifest/_versions/… (conditional)`.
fn request_label(q: &Request) -> String {
    let key = shorten(&q.key);
    match q.kind.as_str() {
        "conditional_put" => format!("{} {key} (conditional)", q.method),
        _ => format!("{} {key}", q.method),
    }
}

/// A key with its run-specific names (version numbers, file ids) kept short.
fn shorten(key: &str) -> String {
    let n = key.chars().count();
    match n {
        0..=60 => key.to_string(),
        _ => format!("…{}", key.chars().skip(n - 57).collect::<String>()),
    }
}

/// A campaign point's record, its point, class and witness.
type Judged<'a> = (&'a Record, Point, Class, String);

/// The campaign points among `records`, judged.
fn judged_points(records: &[Record]) -> Vec<Judged<'_>> {
    (records.iter())
        .filter_map(|r| {
            let (class, witness) = judge(r)?;
            let point = Point::parse(&r.attached.fault.as_ref()?.point).ok()?;
            Some((r, point, class, witness))
        })
        .collect()
}

/// The groups the points fall in, in the order of their first point.
fn groups(points: &[Judged<'_>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (r, ..) in points {
        let g = group(r);
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

/// A fault kind's row of a matrix: the class at each position (`None`: not run).
type Row = (FaultKind, Vec<Option<Class>>);

/// One group's matrix: its widest position, and for each fault kind it ran, the class at
/// each position (the latest repetition of a point stands; `None`: not run).
fn grid(mine: &[&Judged<'_>]) -> (u32, Vec<Row>) {
    let width = mine.iter().map(|p| p.1.at).max().unwrap_or(0);
    let rows = (FaultKind::ALL.into_iter())
        .filter_map(|kind| {
            let row: Vec<_> = mine.iter().filter(|p| p.1.kind == Some(kind)).collect();
            (!row.is_empty()).then(|| {
                let marks = (1..=width)
                    .map(|at| row.iter().rev().find(|p| p.1.at == at).map(|p| p.2))
                    .collect();
                (kind, marks)
            })
        })
        .collect();
    (width, rows)
}

/// The chart of the `i`-th group's matrix, under the results directory.
fn chart_file(i: usize) -> String {
    format!("{}/campaign_{}.svg", super::CHART_DIR, i + 1)
}

/// A class's colour in the chart: the findings red, the rest from green (safe) to grey.
fn colour(class: Class) -> &'static str {
    match class {
        Class::NotReached => "#e0e0e0",
        Class::Safe => "#9fd89f",
        Class::UnknownResolved => "#a9cce3",
        Class::ErrorSurfaced => "#f5e79e",
        Class::Undecided => "#f8c471",
        Class::Anomaly | Class::Stuck | Class::Wrong | Class::Lost | Class::Unreadable => "#e74c3c",
    }
}

/// Each group's matrix drawn, a square per point coloured by its class and marked as in the
/// table: (its path under the results directory, the SVG document).
pub fn charts(records: &[Record]) -> Vec<(String, String)> {
    let points = judged_points(records);
    let (cell, left, top) = (46, 210, 56);
    (groups(&points).into_iter().enumerate())
        .map(|(i, g)| {
            let mine: Vec<_> = points.iter().filter(|p| group(p.0) == g).collect();
            let (width, rows) = grid(&mine);
            let (w, h) = (
                left + cell * width as usize + 20,
                top + cell * rows.len() + 60,
            );
            let mut svg = format!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
                 font-family=\"sans-serif\" font-size=\"13\">\n\
                 <rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n\
                 <text x=\"10\" y=\"22\" font-size=\"15\">Fault campaign: {}</text>\n\
                 <text x=\"{left}\" y=\"44\">request position</text>\n",
                escape(&g)
            );
            for at in 1..=width as usize {
                let x = left + cell * (at - 1) + cell / 2;
                let _ = writeln!(
                    svg,
                    "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{at}</text>",
                    top - 2
                );
            }
            for (row, (kind, marks)) in rows.iter().enumerate() {
                let y = top + cell * row;
                let _ = writeln!(
                    svg,
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                    left - 8,
                    y + cell / 2 + 5,
                    kind.name()
                );
                for (col, class) in marks.iter().enumerate() {
                    let Some(class) = class else { continue };
                    let x = left + cell * col;
                    let _ = writeln!(
                        svg,
                        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" \
                         stroke=\"white\"><title>{}@{}: {}</title></rect>\n\
                         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\">{}</text>",
                        x,
                        y,
                        cell,
                        cell,
                        colour(*class),
                        kind.name(),
                        col + 1,
                        class.name(),
                        x + cell / 2,
                        y + cell / 2 + 4,
                        escape(class.mark())
                    );
                }
            }
            let y = top + cell * rows.len() + 30;
            let _ = writeln!(
                svg,
                "<text x=\"10\" y=\"{y}\">green safe, blue unknown resolved, yellow error \
                 surfaced, orange undecided, grey not reached, red a finding</text>\n</svg>"
            );
            (chart_file(i), svg)
        })
        .collect()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The matrix of the campaign points among `records` (of its plans, per operation, size and
/// variant): a Markdown table, request position × fault kind, the trace's requests, and every
/// red point with its witness and the command that runs it again. `None`: no points.
pub fn matrix(records: &[Record]) -> Option<String> {
    let points = judged_points(records);
    if points.is_empty() {
        return None;
    }
    let mut out = String::from("# Fault campaign\n\n");
    let _ = writeln!(
        out,
        "Each point ran one worker on a fresh copy of the golden, its store giving one fault \
         to one request of its measured operations (positions counted from the first), then \
         verified the copy. Marks: ok safe, u unknown resolved, e error surfaced, ? undecided, \
         · not reached; ANOM (a read anomaly), STUCK, WRONG, LOST and UNREAD (unreadable) are \
         findings.\n"
    );
    for (i, g) in groups(&points).into_iter().enumerate() {
        let mine: Vec<_> = points.iter().filter(|p| group(p.0) == g).collect();
        let _ = writeln!(out, "## {g}\n");
        let _ = writeln!(out, "![Fault campaign: {g}]({})\n", chart_file(i));
        let trace = mine.iter().find(|p| p.1.kind.is_none());
        let (width, rows) = grid(&mine);
        out.push_str("| fault |");
        for at in 1..=width {
            let _ = write!(out, " {at} |");
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(width as usize));
        out.push('\n');
        for (kind, marks) in &rows {
            let _ = write!(out, "| {} |", kind.name());
            for class in marks {
                let _ = write!(out, " {} |", class.map_or("", Class::mark));
            }
            out.push('\n');
        }
        if let Some((r, ..)) = trace
            && let Some(met) = &r.attached.fault
        {
            let _ = writeln!(
                out,
                "\nThe requests of the trace ({}, no fault), by position:\n",
                r.bench_tag
            );
            for q in &met.requests {
                let _ = writeln!(out, "{}. {}", q.n, request_label(q));
            }
        }
        let red: Vec<_> = mine.iter().filter(|p| p.2.red()).collect();
        let _ = writeln!(out, "\n{} points, {} red.\n", mine.len(), red.len());
        for (r, point, class, witness) in red.iter().map(|p| (p.0, p.1, p.2, &p.3)) {
            let _ = writeln!(
                out,
                "- **{}** at {}: {witness}\n  replay: `bench run PLAN --only '{}' \
                 --retry-failed` (PLAN the file of the plan `{}`; the sweep's --root and \
                 --storage-option, the store run by scripts/s3-server.py)",
                class.name(),
                point.spec(),
                r.bench_tag,
                r.plan,
            );
        }
    }
    Some(out)
}

/// The matrix as a section of the report (its headings one level down); empty without
/// campaign points.
pub fn section(records: &[Record]) -> String {
    matrix(records).map_or(String::new(), |m| {
        let text =
            m.replace("\n## ", "\n### ")
                .replacen("# Fault campaign", "## Fault campaign", 1);
        format!("{}\n\n", text.trim_end())
    })
}

/// Whether a cell's id names a campaign's point (`…_BENCH_STORE_FAULT-reset@3`).
pub fn is_point(cell_id: &str) -> bool {
    cell_id.contains(&format!("_{ENV}-"))
}

/// The points a matrix draws together: one operation on one golden, of one variant (its
/// build and the values of its other dimensions; the point's own left out).
fn group(r: &Record) -> String {
    let variant = r.variant.to_string();
    let name = r.variant_name.as_deref().unwrap_or(&variant);
    let point = format!("{ENV}=");
    let parts: Vec<&str> = name.split('/').filter(|p| !p.starts_with(&point)).collect();
    format!(
        "{} on {} rows, {}",
        r.operation,
        r.initial_entries,
        parts.join("/")
    )
}

/// Write `campaign.md` into `dir` where `records` hold campaign points (and remove it where
/// they no longer do). Returns whether it was written.
pub fn write(dir: &Path, records: &[Record]) -> std::io::Result<bool> {
    let path = dir.join(FILE);
    match matrix(records) {
        None => match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(false),
        },
        Some(text) => {
            write_charts(dir, records)?;
            crate::files::write_atomic(&path, text.as_bytes())?;
            Ok(true)
        }
    }
}

/// The paths of the charts [`write_charts`] draws for `records` under `dir`.
pub fn chart_paths(dir: &Path, records: &[Record]) -> Vec<std::path::PathBuf> {
    let groups = groups(&judged_points(records)).len();
    (0..groups).map(|i| dir.join(chart_file(i))).collect()
}

/// Write each group's chart under `dir`; their paths.
pub fn write_charts(dir: &Path, records: &[Record]) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    for (file, svg) in charts(records) {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        crate::files::write_atomic(&path, svg.as_bytes())?;
        out.push(path);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::campaign::Met;
    use crate::plan::{ModeKind, Variant};

    fn point(spec: &str, fired: bool, requests: u32) -> Record {
        let p = Point::parse(spec).unwrap();
        let mut r = record(ModeKind::Continuous, Variant::NoIndex, 10, 1, spec);
        r.attempts = 3;
        r.total_operations = 3;
        // As the sweep names it: the point is a dimension of the cells.
        r.variant_name = Some(format!("no_index/{ENV}={spec}"));
        r.attached.fault = Some(Met {
            point: spec.to_string(),
            fired_at: fired.then_some(p.at),
            requests: (1..=requests)
                .map(|n| Request {
                    n,
                    method: "GET".into(),
                    key: format!("__manifest/k{n}"),
                    kind: "get".into(),
                    fault: None,
                })
                .collect(),
            finding: None,
            new_client: None,
            while_paused: None,
        });
        r
    }

    #[test]
    fn a_point_is_judged_by_what_its_record_shows_worst_first() {
        assert_eq!(judge(&point("reset@2", true, 5)).unwrap().0, Class::Safe);
        let not = judge(&point("reset@9", false, 5)).unwrap();
        assert_eq!(not.0, Class::NotReached);
        assert!(not.1.contains("made 5 requests"), "{}", not.1);
        let head = judge(&point("head-no-length@2", false, 5)).unwrap();
        assert!(head.1.contains("was a GET of __manifest/k2"), "{}", head.1);

        let mut err = point("slow-down-window@1", true, 5);
        err.errors = 1;
        err.first_throttled_error = Some("SlowDown".into());
        assert_eq!(
            judge(&err).unwrap(),
            (Class::ErrorSurfaced, "SlowDown".into())
        );

        let mut stuck = err.clone();
        stuck.total_operations = 0;
        assert_eq!(judge(&stuck).unwrap().0, Class::Stuck);
        // A client opened after the run that cannot write makes any point stuck.
        let mut fresh = point("reset@2", true, 5);
        fresh.attached.fault.as_mut().unwrap().new_client = Some("NotFound: x.lance".into());
        assert_eq!(
            judge(&fresh).unwrap(),
            (
                Class::Stuck,
                "a client opened after the run could not write: NotFound: x.lance".into()
            )
        );
        fresh.attached.fault.as_mut().unwrap().new_client = Some("ok".into());
        assert_eq!(judge(&fresh).unwrap().0, Class::Safe);
        // A read the catalog served stale, without an error: an anomaly, not safe, and
        // below a worker that is stuck.
        let mut stale = fresh.clone();
        stale.consistency = Some(crate::consistency::Consistency {
            stale_reads: 2,
            first_violation: Some("client 0 listed the root and did not see #1".into()),
            ..Default::default()
        });
        assert_eq!(
            judge(&stale).unwrap(),
            (
                Class::Anomaly,
                "2 anomalies of reads, the first: client 0 listed the root and did not see #1"
                    .into()
            )
        );
        assert!(Class::Anomaly.red() && !Class::Undecided.red());
        // A client a cleanup left stuck, though an operation of it succeeded before.
        let mut left = fresh.clone();
        left.stuck_readers = Some(crate::stuck::Stuck {
            readers: 1,
            failed_reads: 1,
            first: "client 0 held v2 of __manifest; …".into(),
            ..Default::default()
        });
        assert_eq!(
            judge(&left).unwrap(),
            (
                Class::Stuck,
                "a cleanup left a client stuck: client 0 held v2 of __manifest; …".into()
            )
        );
        stale.total_operations = 0;
        stale.errors = 1;
        stale.attempts = 2;
        assert_eq!(judge(&stale).unwrap().0, Class::Stuck);
        // Every operation met the fault (no request after its last faulted one): the store
        // never answered again within the run, so nothing says the worker is stuck.
        let mut inside = stuck.clone();
        for q in &mut inside.attached.fault.as_mut().unwrap().requests {
            q.fault = Some("slow-down".into());
        }
        assert_eq!(judge(&inside).unwrap().0, Class::ErrorSurfaced);
        // A fault that answers its key's later requests (a SlowDown burst after a lost
        // reply): requests of other keys after it say nothing; one of its key served does.
        let mut keyed = point("lose-reply-then-slow-down@2", true, 5);
        (keyed.total_operations, keyed.errors) = (0, 2);
        let requests = &mut keyed.attached.fault.as_mut().unwrap().requests;
        for q in requests.iter_mut().skip(1).take(3) {
            (q.key, q.fault) = ("__manifest/k2".into(), Some("slow-down".into()));
        }
        assert_eq!(judge(&keyed).unwrap().0, Class::ErrorSurfaced);
        keyed.attached.fault.as_mut().unwrap().requests[4].key = "__manifest/k2".into();
        assert_eq!(judge(&keyed).unwrap().0, Class::Stuck);
        // A killed worker makes no later operation: that is not stuck.
        let mut killed = point("kill-after@1", true, 1);
        killed.total_operations = 0;
        killed.outcomes = Some(crate::audit::Outcomes {
            unknown: 1,
            unknown_landed: 1,
            first_unknown: Some("w0_0 (killed): landed".into()),
            ..Default::default()
        });
        assert_eq!(judge(&killed).unwrap().0, Class::UnknownResolved);
        killed.outcomes.as_mut().unwrap().unknown_landed = 0;
        assert_eq!(judge(&killed).unwrap().0, Class::Undecided);

        let mut lost = point("lose-reply@1", true, 5);
        lost.verified = false;
        lost.verify_error =
            Some("__manifest holds 10 rows, expected 11: w0_1 missing, expected 1 (ok)".into());
        assert_eq!(judge(&lost).unwrap().0, Class::Lost);
        lost.verify_error = Some("the catalog's latest version, v4, names a.lance, which is gone: every read of __manifest fails".into());
        assert_eq!(judge(&lost).unwrap().0, Class::Unreadable);
        lost.verify_error = Some("__manifest holds 12 rows, expected 11: w0_1 held 2 times".into());
        assert_eq!(judge(&lost).unwrap().0, Class::Wrong);
        // An unverified record is red even where its fault never fired.
        lost.attached.fault.as_mut().unwrap().fired_at = None;
        assert!(judge(&lost).unwrap().0.red());
        // A record of no campaign is not judged.
        let mut plain = point("trace", false, 0);
        plain.attached.fault = None;
        assert_eq!(judge(&plain), None);
    }

    #[test]
    fn a_witness_is_one_line_however_long_the_store_s_error() {
        let mut r = point("reset@1", true, 3);
        r.verified = false;
        r.verify_error = Some(format!(
            "x missing, expected 1\n<Error>{}</Error>",
            "y".repeat(500)
        ));
        let (class, witness) = judge(&r).unwrap();
        assert_eq!(class, Class::Lost);
        assert!(
            !witness.contains('\n') && witness.chars().count() == 240,
            "{witness}"
        );
        assert!(
            witness.starts_with("x missing, expected 1 <Error>"),
            "{witness}"
        );
    }

    #[test]
    fn a_red_pause_point_names_what_ran_while_its_worker_was_held() {
        let held = crate::plan::campaign::WhilePaused {
            others: 3,
            others_ok: 3,
            cleaned_versions: Some(3),
            held_ms: 190.0,
            ..Default::default()
        };
        let mut lost = point("pause@6", true, 8);
        lost.verified = false;
        lost.verify_error = Some("w0_0 missing, expected 1 (succeeded)".into());
        lost.attached.fault.as_mut().unwrap().while_paused = Some(held.clone());
        let (class, witness) = judge(&lost).unwrap();
        assert_eq!(class, Class::Lost);
        assert_eq!(
            witness,
            "w0_0 missing, expected 1 (succeeded) (while the worker was held: 3 of 3 commits by \
             another client, then a cleanup keeping 1 version removed 3)"
        );
        // A point that is not red keeps its witness as it is.
        let mut safe = point("pause@1", true, 8);
        safe.attached.fault.as_mut().unwrap().while_paused = Some(held);
        assert!(!judge(&safe).unwrap().1.contains("held"));
    }

    #[test]
    fn the_matrix_marks_each_point_lists_the_trace_and_replays_each_red_point() {
        let trace = point("trace", false, 3);
        let safe = point("reset@1", true, 3);
        let mut lost = point("reset@2", true, 3);
        lost.verified = false;
        lost.verify_error = Some("x missing, expected 1".into());
        let far = point("reset@3", false, 2);
        let text = matrix(&[trace, safe, lost, far]).unwrap();
        assert!(text.contains("| reset | ok | LOST | · |"), "{text}");
        assert!(text.contains("1. GET __manifest/k1"), "{text}");
        assert!(text.contains("4 points, 1 red."), "{text}");
        assert!(text.contains("**LOST** at reset@2: x missing"), "{text}");
        assert!(text.contains("--only 'reset@2'"), "{text}");
        assert!(text.contains("![Fault campaign: write-create-namespace on 10 rows, no_index](charts/campaign_1.svg)"), "{text}");
        assert_eq!(matrix(&[]), None);
        // The chart: a square per point, coloured by class, each titled with its point.
        let records = [point("trace", false, 3), point("reset@1", true, 3), {
            let mut lost = point("reset@2", true, 3);
            lost.verified = false;
            lost.verify_error = Some("x missing, expected 1".into());
            lost
        }];
        let drawn = charts(&records);
        assert_eq!(drawn.len(), 1);
        let (file, svg) = &drawn[0];
        assert_eq!(file, "charts/campaign_1.svg");
        assert_eq!(svg.matches("<rect ").count(), 1 + 2, "{svg}");
        assert!(
            svg.contains("fill=\"#e74c3c\" stroke=\"white\"><title>reset@2: LOST</title>"),
            "{svg}"
        );
        assert!(svg.contains("<title>reset@1: safe</title>"), "{svg}");
    }
}
