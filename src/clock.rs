//! Wall-clock time for provenance, the checkpoint and log lines.

/// UTC time now, to the second (RFC 3339).
pub fn now_utc() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
