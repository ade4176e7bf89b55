//! Wall-clock time for provenance, the checkpoint and log lines.

/// UTC time now, to the second (RFC 3339).
pub fn now_utc() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// UTC time now, to the millisecond (RFC 3339), for records: the time a cell took can be
/// read off them.
pub fn now_utc_ms() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
