//! The report's "What keeping it costs": for each run that listed what `__manifest` stores
//! (`workload.storage_sample_secs`), what it held at the end and its growth, the storage's
//! dollars a month, what its cleanups removed, and the other operations' latency while a
//! cleanup ran and while none did.

use crate::export::Record;
use crate::stored::Stored;

const MB: f64 = 1e6;
/// The store the section prices storage on (every store's is in the record).
const PRICED: &str = "s3-standard";

/// `2,401 versions, 19.9 MB (+2,375 MB an hour)`: what a run's `__manifest` held at the end.
pub fn held(s: &Stored) -> String {
    let end = s.end();
    format!(
        "{} versions, {:.1} MB ({:+.0} MB an hour)",
        end.versions,
        end.bytes as f64 / MB,
        s.growth_bytes_per_hour / MB
    )
}

/// The section; nothing where no record listed its storage.
pub fn section(records: &[Record]) -> String {
    let stored: Vec<(&Record, &Stored)> = (records.iter())
        .filter_map(|r| Some((r, r.storage.as_ref()?)))
        .collect();
    if stored.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "## What keeping it costs\n\nWhat `__manifest` held at the end of each run (listed \
         every `workload.storage_sample_secs` from release; the record's `storage` has every \
         sample), its growth from the first listing to the last, and its storage a month on \
         S3 Standard now and, for a catalog that keeps every version, after 30 days by the \
         record's model (`storage.projection`: each version holds the whole state, so the sum \
         of the versions grows with the square of the commits; — where a cleanup removed \
         versions or too few samples added any; every store's in the record). \
         Cleanups: what the maintenance role's runs removed in all. Beside them, each other \
         operation's p50 and p99 while no cleanup ran and while one did.\n\n\
         | cell | run | held at the end | $ a month now | after 30 days | cleanups removed |\n\
         |---|---|---|---|---|---|\n",
    );
    for (r, st) in &stored {
        let price = |m: &std::collections::BTreeMap<String, f64>| {
            m.get(PRICED).map_or("—".into(), |usd| format!("{usd:.4}"))
        };
        let cleaned: Vec<String> = (r.roles.iter().flatten())
            .filter_map(|f| {
                let c = f.cleaned?;
                Some(format!(
                    "{} runs: {} versions, {} files, {:.1} MB",
                    f.total_operations,
                    c.versions,
                    c.files,
                    c.bytes as f64 / MB
                ))
            })
            .collect();
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            r.bench_tag,
            r.repetition,
            held(st),
            price(&st.usd_per_month),
            (st.projection.as_ref())
                .map_or("—".into(), |p| price(&p.usd_per_month_after_30_days)),
            if cleaned.is_empty() {
                "none".to_string()
            } else {
                cleaned.join("; ")
            }
        ));
    }
    let beside: Vec<String> = (stored.iter())
        .flat_map(|(r, _)| r.roles.iter().flatten().map(move |f| (r, f)))
        .filter_map(|(r, f)| {
            let b = f.beside_cleanup?;
            Some(format!(
                "| `{}` | {} | {} `{}` | {:.1} / {:.1} ({}) | {:.1} / {:.1} ({}) |\n",
                r.bench_tag,
                r.repetition,
                f.role,
                f.operation,
                b.outside.p50_ms,
                b.outside.p99_ms,
                b.outside.ops,
                b.during.p50_ms,
                b.during.p99_ms,
                b.during.ops
            ))
        })
        .collect();
    if !beside.is_empty() {
        s.push_str(
            "\n| cell | run | role, operation | p50 / p99 ms without a cleanup (ops) | \
             during one (ops) |\n|---|---|---|---|---|\n",
        );
        s.push_str(&beside.concat());
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::record::tests::record;
    use crate::plan::{ModeKind, Operation, Variant};
    use crate::stored::{BesideCleanup, Sample, Spread};

    #[test]
    fn the_section_says_what_was_held_removed_and_slowed() {
        let mut r = record(ModeKind::Roles, Variant::InlineIndex, 201, 5, "roles_a");
        let samples = vec![
            Sample {
                t_s: 0.0,
                versions: 2,
                files: 13,
                bytes: 1_000_000,
            },
            Sample {
                t_s: 3600.0,
                versions: 400,
                files: 2_401,
                bytes: 21_000_000,
            },
        ];
        let table = crate::prices::PriceTable::builtin();
        r.storage = Stored::of(10, samples, &table, true);
        let mut clean =
            crate::export::record::tests::role("maintenance", Operation::CleanupVersions, 0.1);
        clean.total_operations = 12;
        clean.cleaned = Some(crate::oplog::Cleaned {
            versions: 2_000,
            bytes: 150_000_000,
            files: 12_000,
            failed_deletes: 0,
        });
        let mut reader = crate::export::record::tests::role(
            "readers",
            Operation::ListTables { cold: false },
            20.0,
        );
        let spread = |ops, p50_ms, p99_ms| Spread {
            ops,
            p50_ms,
            p99_ms,
        };
        reader.beside_cleanup = Some(BesideCleanup {
            during: spread(6, 9.0, 18.5),
            outside: spread(594, 6.0, 9.8),
        });
        r.roles = Some(vec![clean, reader]);
        let text = section(&[r]);
        for want in [
            "| `roles_a` | 1 | 400 versions, 21.0 MB (+20 MB an hour) | 0.0004 | — |",
            "12 runs: 2000 versions, 12000 files, 150.0 MB",
            "| readers `warm-read-list-tables` | 6.0 / 9.8 (594) | 9.0 / 18.5 (6) |",
        ] {
            assert!(text.contains(want), "{want}\n{text}");
        }
        let plain = record(ModeKind::Roles, Variant::InlineIndex, 201, 5, "roles_b");
        assert_eq!(section(&[plain]), "");
    }
}
