//! Records which lance this binary is built against, from Cargo.lock, so that a worker
//! reports it (`bench worker-info`, every record's `lance_version`) even when the build
//! replaces lance through `[patch]` with a git revision or a local checkout; and the git
//! revision it was built from, where that is known (`lance_revision`).

// bench-lance's build script reads the rest of it (whether the catalog's crate is a copy).
#[allow(dead_code)]
#[path = "build/lance_lock.rs"]
mod lance_lock;

use lance_lock::Lance;

fn main() {
    println!("cargo:rerun-if-changed=../../Cargo.lock");
    // The workspace's Cargo.lock: the lance the workers (the `bench` package) are built with.
    let lock = std::fs::read_to_string("../../Cargo.lock").unwrap_or_default();
    let lance = Lance::of(&lock);
    let mut version = lance
        .as_ref()
        .and_then(Lance::version)
        .unwrap_or_else(|| "unknown".to_string());
    // lance's directory catalog patched with fixes of docs/findings/patches, as the build
    // says (`scripts/track-record.sh build 14.0.2+fix` sets BENCH_LANCE_FIXES), checked as
    // bench-lance's build checks it: not the release. Cargo runs this again whenever the
    // variable changes.
    println!("cargo:rerun-if-env-changed={}", lance_lock::FIXES_ENV);
    if !lance_lock::checked_fixes(&lock).is_empty() {
        version.push_str("+fix");
    }
    println!("cargo:rustc-env=BENCH_LANCE_VERSION={version}");
    let revision = lance.as_ref().and_then(Lance::revision).unwrap_or_default();
    println!("cargo:rustc-env=BENCH_LANCE_REVISION={revision}");
}
