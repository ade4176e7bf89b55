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

/// Milliseconds since the Unix epoch, now (a mark unique to one run of a cell).
pub fn unix_ms() -> u64 {
    (unix_micros() / 1000) as u64
}

/// Microseconds since the Unix epoch, now (a mark unique to one run's namespace on a
/// server, or to one probe of it).
pub fn unix_micros() -> u128 {
    (chrono::Utc::now().timestamp_micros().max(0)) as u128
}

/// A duration as `1h02m`, `4m10s` or `37s`.
pub fn short(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}
