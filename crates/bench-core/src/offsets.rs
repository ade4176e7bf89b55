//! How far a worker's clock is from the coordinator's, bounded twice: when `go` reached it
//! and after its last operation. Across hosts the checker of what readers see moves each
//! client's times onto the coordinator's clock by this offset, interpolated between the two
//! bounds (a clock that runs at another rate), and widens every comparison across clients
//! by what remains uncertain: the bounds' half-widths and how much the offset changed
//! between them (a step anywhere in between is within it).

/// The offset (worker − coordinator, µs) lies in `[lo, hi]` at the worker's time `at_us`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    pub lo: i64,
    pub hi: i64,
    pub at_us: u64,
}

impl Bound {
    fn mid(&self) -> f64 {
        (self.lo as f64 + self.hi as f64) / 2.0
    }

    fn half(&self) -> f64 {
        (self.hi - self.lo).max(0) as f64 / 2.0
    }
}

/// A worker's offset bounds: at `go`, and after its last operation where it was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offsets {
    pub go: Bound,
    pub done: Option<Bound>,
}

impl Offsets {
    /// The offset at the worker's time `t` (interpolated between the bounds, held outside
    /// them), and the half-width of the interval it is known within; `None` without the
    /// second bound: a clock bounded only once is not bounded over the cell.
    pub fn at(&self, t: u64) -> Option<(i64, u64)> {
        let done = self.done?;
        let (a, b) = (self.go, done);
        let change = (b.mid() - a.mid()).abs();
        let span = b.at_us as f64 - a.at_us as f64;
        let f = match span > 0.0 {
            true => ((t as f64 - a.at_us as f64) / span).clamp(0.0, 1.0),
            false => 0.5,
        };
        let mid = a.mid() + f * (b.mid() - a.mid());
        let half = a.half().max(b.half()) + change;
        Some((mid.round() as i64, half.ceil() as u64))
    }

    /// The half-width of what remains uncertain over the cell, where bounded twice.
    pub fn uncertainty_us(&self) -> Option<u64> {
        self.at(self.go.at_us).map(|(_, half)| half)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(lo: i64, hi: i64, at_us: u64) -> Bound {
        Bound { lo, hi, at_us }
    }

    /// A clock 50 ms ahead that gains 1 ms over the cell: its offset is interpolated, and
    /// the uncertainty is the wider bound's half plus the change.
    #[test]
    fn an_offset_is_interpolated_between_its_bounds_and_widened_by_its_change() {
        let o = Offsets {
            go: bound(49_000, 51_000, 1_000_000),
            done: Some(bound(50_500, 51_500, 3_000_000)),
        };
        assert_eq!(o.at(1_000_000), Some((50_000, 1_000 + 1_000)));
        assert_eq!(o.at(2_000_000), Some((50_500, 2_000)));
        assert_eq!(o.at(3_000_000), Some((51_000, 2_000)));
        // Before the first bound and after the second: held at the nearer one.
        assert_eq!(o.at(0), Some((50_000, 2_000)));
        assert_eq!(o.at(9_000_000), Some((51_000, 2_000)));
        assert_eq!(o.uncertainty_us(), Some(2_000));
    }

    /// A clock stepped 30 ms between the bounds: wherever the step was, the offset at any
    /// time lies within the interpolation's interval.
    #[test]
    fn a_step_between_the_bounds_stays_within_the_uncertainty() {
        let o = Offsets {
            go: bound(-500, 500, 0),
            done: Some(bound(29_500, 30_500, 10_000)),
        };
        for t in (0..=10_000).step_by(500) {
            let (mid, half) = o.at(t).unwrap();
            for truth in [0, 30_000] {
                assert!(
                    (mid - truth).unsigned_abs() <= half,
                    "t {t}: {mid} ± {half}"
                );
            }
        }
    }

    /// Bounded only at `go` (the worker died, or its answer never came): not bounded.
    #[test]
    fn a_clock_bounded_once_is_not_bounded() {
        let o = Offsets {
            go: bound(-100, 100, 0),
            done: None,
        };
        assert_eq!(o.at(0), None);
        assert_eq!(o.uncertainty_us(), None);
    }
}
