//! The line a sweep logs when a run of a cell is done: one line a person reads at a glance —
//! throughput, latency, errors, whether it verified, and what moved since the cell's run
//! before —; with `--verbose`, what it cost, its distance from the floor, its bytes and what
//! `__manifest` held too (all of which the summary and the report have).

use crate::export::Record;

/// The line of a finished run (`record`), against `before` (the same cell's run before it
/// in this results directory, and arm, if any).
pub fn done(record: &Record, before: Option<&Record>, verbose: bool) -> String {
    let mut s = format!(
        "{} ops, {:.2} ops/s, p50 {:.1} ms, p99 {:.1} ms, {} errors",
        record.total_operations,
        record.throughput_ops_per_sec,
        record.p50_latency_ms,
        record.p99_latency_ms,
        record.errors,
    );
    if let Some(r) = &record.reads {
        s.push_str(&format!(
            "; reads: {} ops, {:.2} ops/s, p50 {:.1} ms, p99 {:.1} ms, {} errors",
            r.total_operations,
            r.throughput_ops_per_sec,
            r.p50_latency_ms,
            r.p99_latency_ms,
            r.errors
        ));
    }
    s.push_str(match record.verified {
        true => "; verified",
        false => "",
    });
    if let (true, Some(unchecked)) = (record.verified, &record.verify_unchecked) {
        s.push_str(&format!(" (NOT CHECKED: {unchecked})"));
    }
    if let Some(moved) = before.and_then(|b| moved(b, record)) {
        s.push_str(&format!("; {moved}"));
    }
    if let Some(late) = late(record) {
        s.push_str(&format!("; {late}"));
    }
    if verbose {
        s.push_str(&details(record, late(record).is_some()));
    }
    if let Some(stuck) = &record.stuck_readers {
        s.push_str(&format!("; {} (first: {})", stuck.counts(), stuck.first));
    }
    if let Some(why) = &record.stopped_early {
        s.push_str(&format!("; STOPPED EARLY: {why}"));
    }
    if let (Some(met), Some((class, witness))) =
        (&record.attached.fault, super::campaign::judge(record))
    {
        let shown = match class.red() {
            true => format!("; point {}: {} ({witness})", met.point, class.name()),
            false => format!("; point {}: {}", met.point, class.name()),
        };
        s.push_str(&shown);
    }
    if !record.verified {
        s.push_str(&format!(
            "; VERIFICATION FAILED: {}",
            record.verify_error.as_deref().unwrap_or("")
        ));
    }
    s
}

/// What moved from the run `b` to `r` of the same cell: throughput and p50, in percent. Two
/// runs of one cell differ by noise alone (10–45 % a cell on a 2-core VM): the line says it
/// is no verdict, which `bench compare` gives over repetitions.
fn moved(b: &Record, r: &Record) -> Option<String> {
    let pct = |new: f64, old: f64| (old > 0.0).then(|| 100.0 * (new - old) / old);
    let ops = pct(r.throughput_ops_per_sec, b.throughput_ops_per_sec)?;
    let p50 = pct(r.p50_latency_ms, b.p50_latency_ms)?;
    Some(format!(
        "against repetition {} (one run each, not a verdict): ops/s {ops:+.0} %, p50 {p50:+.0} %",
        b.repetition
    ))
}

/// An open-loop run whose operations started late: how many, and whether it fell behind
/// the offered rate (its latencies then include the wait).
fn late(record: &Record) -> Option<String> {
    let offered = record.open_loop.offered_ops_per_sec?;
    let late = record.open_loop.late_operations.unwrap_or(0);
    if late == 0 {
        return None;
    }
    let all = record.attempts.max(record.total_operations);
    // Behind, not a burst's queue: many late starts, and the backlog showed (the rate
    // achieved short of the offered one, or a lag a tenth of the window).
    let lag = record.open_loop.max_lag_ms.unwrap_or(0.0);
    let behind = late * 10 >= all
        && (record.throughput_ops_per_sec < 0.95 * offered
            || lag > record.total_duration_ms / 10.0);
    Some(format!(
        "offered {offered:.2}/s, {late} of {all} started late (largest lag {lag:.0} ms){}",
        if behind {
            ": FELL BEHIND the offered rate (its latencies include the wait)"
        } else {
            ""
        }
    ))
}

/// `--verbose`'s part: the rate offered (where no start was late, which says it), cost,
/// floor and bytes, what `__manifest` held, cleanups.
fn details(record: &Record, late: bool) -> String {
    let mut s = String::new();
    if let (Some(offered), false) = (record.open_loop.offered_ops_per_sec, late) {
        s.push_str(&format!("; offered {offered:.2}/s"));
    }
    if let Some(c) = &record.cost {
        let each: Vec<String> = (c.usd_per_million_ops.iter())
            .map(|(store, usd)| format!("{store} ${usd:.2}"))
            .collect();
        s.push_str(&format!("; a million cost {}", each.join(", ")));
    }
    if let Some(f) = &record.floor {
        s.push_str(&format!(
            "; {:.1} requests over the floor of {} ({})",
            f.requests_over,
            f.floor_requests,
            f.said()
        ));
        if f.bytes.is_some() {
            s.push_str(&format!("; {}", f.bytes_said()));
        }
    }
    if let Some(st) = &record.storage {
        s.push_str(&format!("; __manifest held {}", super::keeping::held(st)));
    }
    for f in record.roles.iter().flatten() {
        if let Some(c) = f.cleaned {
            s.push_str(&format!(
                "; {} cleanups removed {} versions, {:.1} MB",
                f.total_operations,
                c.versions,
                c.bytes as f64 / 1e6
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::record::tests::record;

    /// At a glance: throughput, latency, errors, verified, and what moved since the cell's
    /// run before; cost and the floor only with `--verbose`; a failed verification and an
    /// open-loop run that fell behind always.
    #[test]
    fn a_done_line_is_read_at_a_glance_and_says_more_when_asked() {
        use crate::plan::{ModeKind, Variant};
        let mut r = record(ModeKind::Continuous, Variant::InlineIndex, 1000, 1, "c");
        r.verified = true;
        r.total_operations = 50;
        r.throughput_ops_per_sec = 110.0;
        r.p50_latency_ms = 9.0;
        r.cost = Some(crate::prices::Cost {
            prices: "bench's".into(),
            usd_per_million_ops: [("s3-standard".to_string(), 5.0)].into(),
            billed_per_op: Default::default(),
        });
        let short = done(&r, None, false);
        assert!(
            short.starts_with("50 ops, 110.00 ops/s, p50 9.0 ms"),
            "{short}"
        );
        assert!(short.ends_with("; verified"), "{short}");
        assert!(!short.contains("cost"), "{short}");
        let mut unchecked = r.clone();
        unchecked.verify_unchecked = Some("the transaction files … were not looked for".into());
        let line = done(&unchecked, None, false);
        assert!(
            line.ends_with("; verified (NOT CHECKED: the transaction files … were not looked for)"),
            "{line}"
        );
        assert!(done(&r, None, true).contains("a million cost"));
        let mut before = r.clone();
        before.repetition = 0;
        before.throughput_ops_per_sec = 100.0;
        before.p50_latency_ms = 10.0;
        let line = done(&r, Some(&before), false);
        assert!(
            line.ends_with(
                "; against repetition 0 (one run each, not a verdict): ops/s +10 %, p50 -10 %"
            ),
            "{line}"
        );
        r.verified = false;
        r.verify_error = Some("__manifest holds 102 rows, expected 101".into());
        let failed = done(&r, None, false);
        assert!(
            failed.ends_with("; VERIFICATION FAILED: __manifest holds 102 rows, expected 101"),
            "{failed}"
        );
        assert!(!failed.contains("; verified"));
        r.open_loop.offered_ops_per_sec = Some(20.0);
        r.open_loop.late_operations = Some(40);
        r.attempts = 50;
        r.throughput_ops_per_sec = 15.0;
        assert!(done(&r, None, false).contains("FELL BEHIND"));
    }
}
