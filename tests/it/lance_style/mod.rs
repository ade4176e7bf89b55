//! Each finding of docs/findings as lance's own tests are written (README.md beside them):
//! lance's public API alone, on lance's in-memory store or a temporary directory, a store
//! wrapped where the finding needs a fault. On lance's release each expects the failure
//! the finding describes; on the build with the findings' patches
//! (`scripts/track-record.sh build 14.0.2+fix`) each expects the findings its patches fix fixed.

mod cleanup_gap;
mod lost_reply_head;

/// A finding's check (`Err`: what went wrong): on the release it fails as the finding says
/// (`want` in its message); on a build patched for it ([`bench_lance::lance_fixes`]) it
/// passes. The day a release passes it, this says the finding is fixed there.
fn red_on_release(finding: &str, outcome: Result<(), String>, want: &str) {
    match (bench_lance::lance_fixes(finding), outcome) {
        (true, Ok(())) => {}
        (true, Err(e)) => panic!("{finding}: the patched build does not fix it: {e}"),
        (false, outcome) => red_unpatched(finding, outcome, want),
    }
}

/// A finding's check that no patch of docs/findings/patches fixes: it fails as the finding
/// says (`want` in its message) on the release and on the patched build alike. The day it
/// passes, this says the finding is fixed there.
fn red_unpatched(finding: &str, outcome: Result<(), String>, want: &str) {
    match outcome {
        Err(e) => assert!(
            e.contains(want),
            "{finding}: it failed otherwise than docs/findings/{finding}.md says: {e}"
        ),
        Ok(()) => panic!(
            "{finding}: this build no longer fails as docs/findings/{finding}.md says: it is \
             fixed here; say so in the finding and in the track record, and make this test \
             expect it to pass"
        ),
    }
}
