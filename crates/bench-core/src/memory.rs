//! This process's peak resident memory, as the kernel tells it: what a worker reports after
//! its cell, and what the benchmarks under `examples/` print.

/// This process's peak resident memory (VmHWM of /proc/self/status), in KiB; `None` where
/// the kernel does not tell it.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| {
        l.strip_prefix("VmHWM:")?
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse()
            .ok()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_process_has_a_peak() {
        assert!(super::peak_rss_kib().is_some_and(|k| k > 0));
    }
}
