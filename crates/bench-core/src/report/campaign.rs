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

/// The matrix of the campaign points among `records` (of its plans, per operation, size and
/// variant): a Markdown table, request position × fault kind, the trace's requests, and every
/// red point with its witness and the command that runs it again. `None`: no points.
pub fn matrix(records: &[Record]) -> Option<String> {
    let points: Vec<(&Record, Point, Class, String)> = records
        .iter()
        .filter_map(|r| {
            let (class, witness) = judge(r)?;
            let point = Point::parse(&r.attached.fault.as_ref()?.point).ok()?;
            Some((r, point, class, witness))
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    let mut out = String::from("# Fault campaign\n\n");
    let _ = writeln!(
        out,
        "Each point ran one worker on a fresh copy of the golden, its store giving one fault \
         to one request of its measured operations (positions counted from the first), then \
         verified the copy. Marks: ok safe, u unknown resolved, e error surfaced, ? undecided, \
         · not reached; STUCK, WRONG, LOST and UNREAD (unreadable) are findings.\n"
    );
    let mut groups: Vec<String> = Vec::new();
    for (r, ..) in &points {
        let g = group(r);
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    for g in groups {
        let mine: Vec<_> = points.iter().filter(|p| group(p.0) == g).collect();
        let _ = writeln!(out, "## {g}\n");
        let trace = mine.iter().find(|p| p.1.kind.is_none());
        let width = mine.iter().map(|p| p.1.at).max().unwrap_or(0);
        out.push_str("| fault |");
        for at in 1..=width {
            let _ = write!(out, " {at} |");
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(width as usize));
        out.push('\n');
        for kind in FaultKind::ALL {
            let row: Vec<_> = mine.iter().filter(|p| p.1.kind == Some(kind)).collect();
            if row.is_empty() {
                continue;
            }
            let _ = write!(out, "| {} |", kind.name());
            for at in 1..=width {
                // The latest repetition of the point stands.
                let mark = row
                    .iter()
                    .rev()
                    .find(|p| p.1.at == at)
                    .map_or("", |p| p.2.mark());
                let _ = write!(out, " {mark} |");
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
            crate::files::write_atomic(&path, text.as_bytes())?;
            Ok(true)
        }
    }
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
        // Every operation met the fault (no request after its last faulted one): the store
        // never answered again within the run, so nothing says the worker is stuck.
        let mut inside = stuck.clone();
        for q in &mut inside.attached.fault.as_mut().unwrap().requests {
            q.fault = Some("slow-down".into());
        }
        assert_eq!(judge(&inside).unwrap().0, Class::ErrorSurfaced);
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
        assert_eq!(matrix(&[]), None);
    }
}
