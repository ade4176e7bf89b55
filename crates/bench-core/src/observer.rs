//! What a display learns of a running cell: the coordinator tells, the progress display
//! listens, and neither imports the other.

/// What a display learns of a running cell.
pub trait Observer {
    /// The workers were released: the measured window starts.
    fn released(&self) {}
    /// One measured operation finished.
    fn op(&self, _ok: bool, _read: bool) {}
    /// A worker finished its operations.
    fn worker_done(&self) {}
    /// Before release, a launcher said something of its tasks (e.g. that they are queued).
    fn waiting(&self, _line: &str) {}
}

/// Observes nothing.
impl Observer for () {}
