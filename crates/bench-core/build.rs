//! Records which lance this binary is built against, from Cargo.lock, so that a worker
//! reports it (`bench worker-info`, every record's `lance_version`) even when the build
//! replaces lance through `[patch]` with a git revision or a local checkout; and the git
//! revision it was built from, where that is known (`lance_revision`).

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
    // lance's directory catalog patched with the fixes of docs/findings/patches
    // (`scripts/track-record.sh build 14.0.2+fix`): not the release.
    if lance_lock::namespace_patched(&lock) {
        version.push_str("+fix");
    }
    println!("cargo:rustc-env=BENCH_LANCE_VERSION={version}");
    let revision = lance.as_ref().and_then(Lance::revision).unwrap_or_default();
    println!("cargo:rustc-env=BENCH_LANCE_REVISION={revision}");
}
