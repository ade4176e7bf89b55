//! The requests the store client resends, counted as it resends them: object_store resends
//! a request after a 5xx, a 429 or a broken connection (a conditional PUT included), and says
//! so in an event of its retry loop before each resend; above it, lance's throttling layer
//! (lance-io's AIMD store) sends the whole request again after an error object_store gave
//! up on after its retries, and says so too. A worker counts those events, so each
//! operation can tell whether an answer it got may answer its own earlier attempt
//! ([`bench_core::oplog::Outcome::of`]).

use std::sync::atomic::{AtomicU64, Ordering};

use tracing::subscriber::Interest;
use tracing::{Event, Metadata, span};

/// The module whose events are object_store's resends, one before each.
const RETRY_TARGET: &str = "object_store::client::retry";
/// lance's throttling layer: its event before it sends a request again carries the backoff
/// it waits first (its other events on this target do not).
const THROTTLE_TARGET: &str = "lance::object_store::throttle";
const THROTTLE_RESEND_FIELD: &str = "backoff_ms";

static RESENT: AtomicU64 = AtomicU64::new(0);

/// A subscriber that only counts resends; every other event and span is off.
struct Resends;

impl Resends {
    fn counts(m: &Metadata<'_>) -> bool {
        let lance_resends =
            m.target() == THROTTLE_TARGET && m.fields().field(THROTTLE_RESEND_FIELD).is_some();
        m.is_event() && (m.target() == RETRY_TARGET || lance_resends)
    }
}

impl tracing::Subscriber for Resends {
    fn register_callsite(&self, m: &'static Metadata<'static>) -> Interest {
        match Self::counts(m) {
            true => Interest::always(),
            false => Interest::never(),
        }
    }

    fn enabled(&self, m: &Metadata<'_>) -> bool {
        Self::counts(m)
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::DEBUG)
    }

    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        // Never called: no span is enabled.
        span::Id::from_u64(1)
    }

    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}

    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}

    fn event(&self, _: &Event<'_>) {
        RESENT.fetch_add(1, Ordering::Relaxed);
    }

    fn enter(&self, _: &span::Id) {}

    fn exit(&self, _: &span::Id) {}
}

/// Count this process's resends from now on (once; the process's global subscriber, which
/// nothing else of a worker sets). Returns whether they are counted.
pub fn count() -> bool {
    static SET: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SET.get_or_init(|| tracing::subscriber::set_global_default(Resends).is_ok())
}

/// The requests resent since [`count`] began.
pub fn so_far() -> u64 {
    RESENT.load(Ordering::Relaxed)
}
