//! The report's cells of roles: a table per cell of its (role, operation) figures, a chart
//! per role over time, and list latency against the entries of the listed namespace.

use super::svg::{Chart, Series};
use crate::export::CellRecords;
use crate::export::record::RoleFigures;

/// Chart files of roles over time start with this.
pub const ROLE_TIME: &str = "role_";
/// The chart of list latency against the listed namespace's entries.
pub const LISTING: &str = "listing_latency.svg";

/// Each role of each cell over time (its first run): each operation's successful
/// operations a second (solid) and p99 (dashed), a colour per operation.
fn over_time(c: &CellRecords<'_>) -> Vec<Chart> {
    let first = c.first();
    let Some(roles) = &first.roles else {
        return Vec::new();
    };
    let mut names: Vec<&str> = Vec::new();
    for f in roles {
        if !names.contains(&f.role.as_str()) {
            names.push(&f.role);
        }
    }
    let arm = first
        .arm
        .as_deref()
        .map(|a| format!("_{a}"))
        .unwrap_or_default();
    let window = first.total_duration_ms / 1000.0;
    names
        .into_iter()
        .map(|role| {
            let tag = format!("{}{arm}", first.bench_tag);
            let mut chart = Chart::log_log(
                &format!("{ROLE_TIME}{tag}_{role}.svg"),
                format!(
                    "{tag}, role {role}: each operation a second and its p99, run {}",
                    first.repetition
                ),
                format!("{tag}: role {role}"),
                "seconds from release",
                "operations/s (solid), p99 ms (dashed); log".into(),
            );
            chart.x_log = false;
            for (k, f) in roles.iter().filter(|f| f.role == role).enumerate() {
                let Some(s) = &f.series else { continue };
                let at = |i: usize| i as f64 + 0.5;
                let ops = super::charts::per_second(&s.ops, window);
                let p99 = (s.p99_ms.iter().enumerate()).filter_map(|(i, v)| v.map(|v| (at(i), v)));
                chart
                    .series
                    .push(Series::line(f.operation.to_string(), ops, k));
                let name = format!("{} p99", f.operation);
                chart.series.push(Series::dashed(name, p99.collect(), k));
            }
            chart
        })
        .collect()
}

/// Listings of tables in cells whose golden is a tree: their p50 and p99 (median over runs)
/// against the tables of the listed namespace, a line per operation (warm, cold) and page
/// size. None where fewer than two sizes were measured.
fn listing(cells: &[CellRecords<'_>]) -> Option<Chart> {
    // Each line's p50 and p99 points.
    type Points = Vec<(f64, f64)>;
    let mut lines: std::collections::BTreeMap<String, (Points, Points)> = Default::default();
    for c in cells {
        let first = c.first();
        let (Some(f), Some(roles)) = (&first.fixture, &first.roles) else {
            continue;
        };
        let x = f64::from(f.tables_per_namespace);
        for (i, role) in roles.iter().enumerate() {
            if !role.operation.lists() || role.operation.as_str().contains("namespaces") {
                continue;
            }
            let of = |g: fn(&RoleFigures) -> f64| {
                c.med(|r| r.roles.as_ref().and_then(|v| v.get(i)).map_or(f64::NAN, g))
            };
            let page = first
                .page_size
                .map_or(String::new(), |p| format!(", pages of {p}"));
            let line = lines
                .entry(format!("{}{page}", role.operation))
                .or_default();
            line.0.push((x, of(|r| r.p50_latency_ms)));
            line.1.push((x, of(|r| r.p99_latency_ms)));
        }
    }
    if lines.values().all(|(p50, _)| p50.len() < 2) {
        return None;
    }
    let mut chart = Chart::log_log(
        LISTING,
        "list latency (p50 solid, p99 dashed) against the tables of the listed namespace".into(),
        "Listing a namespace's tables".into(),
        "tables in the listed namespace (log scale)",
        "latency, ms (log scale)".into(),
    );
    for (k, (name, (mut p50, mut p99))) in lines.into_iter().enumerate() {
        p50.sort_by(|a, b| a.0.total_cmp(&b.0));
        p99.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .series
            .push(Series::line(format!("{name} p50"), p50, k));
        chart
            .series
            .push(Series::dashed(format!("{name} p99"), p99, k));
    }
    Some(chart)
}

/// Every chart of the cells of roles.
pub fn charts(cells: &[CellRecords<'_>]) -> Vec<Chart> {
    let mut out: Vec<Chart> = cells.iter().flat_map(over_time).collect();
    out.extend(listing(cells));
    out
}

/// The report's section on cells of roles: each cell's table of (role, operation) figures
/// (its first run; `roles.csv` has every run), then the charts.
pub fn section(cells: &[CellRecords<'_>], charts: &[Chart]) -> String {
    let with: Vec<&CellRecords<'_>> = cells.iter().filter(|c| c.first().roles.is_some()).collect();
    if with.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "## Roles\n\nEach cell of roles runs all its roles at once on one copy of its golden. \
         Per role and operation (its first run; `roles.csv` has every run): successful \
         operations and their rate over the cell's window, latency (from the intended start \
         for a role with a rate), failures by class (`not_found`: an entry another client \
         removed), store requests per operation.\n\n",
    );
    for c in with {
        let first = c.first();
        s.push_str(&format!(
            "**{}** ({}verified: {})\n\n| role | operation | targets | ops | ops/s | p50 ms | p99 ms | errors | requests/op |\n|---|---|---|---:|---:|---:|---:|---|---:|\n",
            first.bench_tag,
            first.fixture.map_or(String::new(), |f| format!("{}, ", f.label())),
            if first.verified { "yes" } else { "NO" },
        ));
        for f in first.roles.iter().flatten() {
            let errors: Vec<String> = f.errors.iter().map(|(k, v)| format!("{k} {v}")).collect();
            // A latency of no successful operation does not exist.
            let ms = |v: f64| match f.total_operations {
                0 => "—".to_string(),
                _ => format!("{v:.2}"),
            };
            s.push_str(&format!(
                "| {} | {} | {} | {} | {:.1} | {} | {} | {} | {} |\n",
                f.role,
                f.operation,
                f.targets,
                f.total_operations,
                f.throughput_ops_per_sec,
                ms(f.p50_latency_ms),
                ms(f.p99_latency_ms),
                if errors.is_empty() {
                    "0".into()
                } else {
                    errors.join(", ")
                },
                f.requests_per_op.map_or("".into(), |x| format!("{x:.1}")),
            ));
        }
        s.push('\n');
        if let Some(c) = &first.consistency {
            s.push_str(&readers_saw(c));
        }
    }
    for c in charts
        .iter()
        .filter(|c| c.file.starts_with(ROLE_TIME) || c.file == LISTING)
    {
        s.push_str(&format!(
            "![{}]({}/{})\n\n",
            c.alt,
            super::CHART_DIR,
            c.file
        ));
    }
    s
}

/// The lag's lower bound and the readers' cadence, where the record has them: " (at least
/// 0.0 ms at p50, …; a reader reads every 4.1 ms)".
fn lag_interval(c: &crate::consistency::Consistency) -> String {
    let seen = match (c.lag_low_p50_ms, c.read_period_ms) {
        (Some(low), Some(period)) => format!(
            " (at least {low:.1} ms at p50, to the last read that still missed a commit; \
             a reader reads every {period:.1} ms)"
        ),
        _ => String::new(),
    };
    match c.lag_unseen_low_max_ms {
        Some(low) => format!(
            "{seen}, and {} (commit, reader) pairs never seen: a lag without bound, at least \
             {low:.1} ms",
            c.lag_unseen_pairs
        ),
        None => seen,
    }
}

/// What a cell's readers saw (its first run's `consistency`), said in a paragraph.
pub(super) fn readers_saw(c: &crate::consistency::Consistency) -> String {
    let ms = |x: Option<f64>| x.map_or("–".into(), |v| format!("{v:.1}"));
    let landed = c
        .indeterminate_landed
        .map_or(String::new(), |n| format!(", {n} of them landed"));
    format!(
        "What readers saw: {} reads against {} creations, {} removals and {} table versions ({} \
         indeterminate{}); \
         visibility lag p50 {} ms, p99 {} ms, max {} ms{}; {} stale reads ({:.2} %, {} \
         resurrections), {} monotonic and {} read-your-writes violations, {} phantoms{}.\n\n",
        c.reads,
        c.creations,
        c.removals,
        c.versions,
        c.indeterminate,
        landed,
        ms(c.lag_p50_ms),
        ms(c.lag_p99_ms),
        ms(c.lag_max_ms),
        lag_interval(c),
        c.stale_reads,
        c.stale_rate * 100.0,
        c.resurrections,
        c.monotonic_violations,
        c.read_your_writes_violations,
        c.phantoms,
        c.first_violation
            .as_ref()
            .map_or(String::new(), |v| format!("; first: {v}"))
    ) + &version_order(c)
}

/// The checks on the `__manifest` version order, said in a paragraph (none where the
/// cell's operations carry no version).
fn version_order(c: &crate::consistency::Consistency) -> String {
    let Some(o) = &c.order else {
        return String::new();
    };
    let first = o.first().map_or(String::new(), |w| format!("; first: {w}"));
    let pages = match o.pages {
        0 => String::new(),
        n => format!(
            " (listings in pages judged page by page: {} of {n} pages known)",
            o.pages_known
        ),
    };
    let s = &o.stale;
    let stale = match s.count {
        0 => "none served a version below one acknowledged before it began".to_string(),
        n => format!(
            "{n} served a version below one acknowledged before it began, at most {} behind, \
             the first version missed acknowledged at most {:.1}–{:.1} ms when served{}",
            crate::plan::count(s.versions_behind_max, "version", "versions"),
            s.lag_low_max_ms,
            s.lag_high_max_ms,
            s.first
                .as_ref()
                .map_or(String::new(), |w| format!(" (first: {w})"))
        ),
    };
    format!(
        "The version order: {} of {} commits and {} of {} reads with their `__manifest` \
         version known{pages}; {} reads not of the version they served, {} of no state the \
         catalog had, {} clients whose version went back, {} commits of a lower version than \
         one acknowledged before them, {} versions made twice{first}. Of the reads of a known \
         version, {stale}.\n\n",
        o.commits_known,
        o.commits,
        o.reads_known,
        o.reads,
        o.not_its_version.count,
        o.no_such_state.count,
        o.versions_back.count,
        o.write_order.count,
        o.one_version_twice.count,
    )
}
