//! Which of lance's APIs this build has, from the lance version in the workspace's
//! Cargo.lock: bench follows lance 14.0.2, and `scripts/track-record.sh` builds it against
//! older releases to reproduce their bugs. Each API an older release lacks is a `cfg` named
//! after it, set from the release that brought it; the code without it does without (and
//! says so where a record would otherwise claim something, such as a cleanup's failed
//! deletes).

// bench-core's build script reads the rest of it (the revision).
#[allow(dead_code)]
#[path = "../bench-core/build/lance_lock.rs"]
mod lance_lock;

/// (cfg, the first lance major version that has it).
const SINCE: [(&str, u64); 5] = [
    // `DataStorageFormat::lance_file_format` (a table's exact file format; before: its
    // `version` text).
    ("lance_concrete_file_version", 10),
    // `InsertIntoTableResponse::version` (lance-namespace-reqwest-client 0.11).
    ("lance_insert_reports_version", 11),
    // A response's `context` (the same client): where `bench serve` says a call's version.
    ("lance_response_context", 11),
    // `RemovalStats::failed_deletes`.
    ("lance_cleanup_counts_failed_deletes", 13),
    // `LanceNamespace::batch_create_table_versions` and `batch_commit_tables`.
    ("lance_batch_commits", 14),
];

fn main() {
    println!("cargo:rerun-if-changed=../../Cargo.lock");
    let lock = std::fs::read_to_string("../../Cargo.lock").unwrap_or_default();
    // Unknown (no lock yet): the newest, as Cargo.toml pins it.
    let major = lance_lock::Lance::of(&lock)
        .and_then(|l| l.version.split('.').next()?.parse::<u64>().ok())
        .unwrap_or(u64::MAX);
    // The patches of docs/findings/patches the build applied to lance's crates, as it says
    // (BENCH_LANCE_FIXES, set by `scripts/track-record.sh build 14.0.2+fix`): the findings
    // the lance-style tests (tests/it/lance_style) then expect fixed. Each must name a patch
    // there.
    println!("cargo:rerun-if-env-changed={}", lance_lock::FIXES_ENV);
    let fixes = lance_lock::checked_fixes(&lock);
    println!("cargo:rustc-env=BENCH_LANCE_FIXES={}", fixes.join(","));
    for (cfg, since) in SINCE {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        if major >= since {
            println!("cargo:rustc-cfg={cfg}");
        }
    }
}
