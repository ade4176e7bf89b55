//! The clock of the operations' times: this host's `CLOCK_MONOTONIC`, which every process
//! on the host shares and nothing steps (the wall clock can be stepped between two workers'
//! starts, and a step would read as a stale read or a phantom). Across hosts the coordinator
//! bounds each worker's offset from its own (`bench_core::offsets`).
//!
//! Also the planted wall-clock step ([`WALL_STEP_ENV`]), a test fixture.

use std::time::Instant;

/// `W:S`: worker `W` starts with its wall clock `S` seconds off (`+2`, `-1`), through
/// libfaketime (Debian `libfaketime`), its monotonic clock untouched: as if the host's clock
/// had been stepped just before it started. A test fixture, never for a measurement.
pub const WALL_STEP_ENV: &str = "BENCH_WORKER_WALL_STEP";

/// Where Debian's package puts libfaketime (the multi-threaded build).
const FAKETIME_LIBS: [&str; 2] = [
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
];

/// This host's `CLOCK_MONOTONIC`, in µs.
pub fn monotonic_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write to; CLOCK_MONOTONIC exists on every Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000
}

/// A moment of this process (an `Instant`) on the host's monotonic clock: read against it
/// once, at the anchor.
#[derive(Debug, Clone, Copy)]
pub struct Anchor {
    at: Instant,
    monotonic_us: u64,
}

impl Anchor {
    pub fn now() -> Anchor {
        Anchor {
            at: Instant::now(),
            monotonic_us: monotonic_us(),
        }
    }

    /// `t` on the host's monotonic clock, in µs.
    pub fn us(&self, t: Instant) -> u64 {
        match t.checked_duration_since(self.at) {
            Some(d) => self.monotonic_us + d.as_micros() as u64,
            None => (self.monotonic_us).saturating_sub((self.at - t).as_micros() as u64),
        }
    }
}

/// The environment worker `worker` starts with under [`WALL_STEP_ENV`], where it names it:
/// libfaketime preloaded with the step. An error where the setting is malformed or
/// libfaketime is not installed.
pub fn wall_step(worker: u32) -> std::io::Result<Vec<(&'static str, String)>> {
    let Ok(v) = std::env::var(WALL_STEP_ENV) else {
        return Ok(Vec::new());
    };
    let bad = |why: &str| {
        std::io::Error::other(format!(
            "{WALL_STEP_ENV}={v}: {why} (a test fixture: `W:S`, worker W's wall clock S \
             seconds off, e.g. 1:+2)"
        ))
    };
    let (w, secs) = v.split_once(':').ok_or_else(|| bad("no `:`"))?;
    let w: u32 = w.trim().parse().map_err(|_| bad("W is not a worker id"))?;
    let secs: i64 = secs
        .trim()
        .parse()
        .map_err(|_| bad("S is not whole seconds"))?;
    if w != worker {
        return Ok(Vec::new());
    }
    let lib = (FAKETIME_LIBS.iter())
        .find(|p| std::path::Path::new(p).exists())
        .ok_or_else(|| bad("libfaketime is not installed (apt-get install libfaketime)"))?;
    Ok(vec![
        ("LD_PRELOAD", lib.to_string()),
        ("FAKETIME", format!("{secs:+}s")),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".into()),
        ("FAKETIME_NO_CACHE", "1".into()),
    ])
}
