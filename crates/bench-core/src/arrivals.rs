//! An open-loop worker's intended start times: its share of the cell's offered rate, evenly
//! spaced (the writers' starts interleaved) or as a Poisson process (its own seed). Pure:
//! the worker waits for each one.

use std::time::{Duration, Instant};

use crate::protocol::WorkerArgs;
use crate::rng::Rng;

/// The seed of writer 0's Poisson arrivals; writer `w`'s is this plus `w`.
pub const POISSON_SEED: u64 = 0x0a11_0000;

/// The intended starts of one worker's operations.
pub struct Schedule {
    at: Instant,
    interval: Duration,
    rng: Option<Rng>,
}

impl Schedule {
    /// The schedule of the worker `args` describes, offered `rate` operations a second
    /// across its cell's writers, from `release`.
    pub fn new(args: &WorkerArgs, rate: f64, release: Instant) -> Schedule {
        let writers = args.writers.max(1);
        let interval = Duration::from_secs_f64(f64::from(writers) / rate);
        let rng = (args.poisson).then(|| Rng::new(POISSON_SEED + u64::from(args.worker_id)));
        let mut s = Schedule {
            at: release,
            interval,
            rng,
        };
        // Evenly spaced: worker w of C starts w/C of an interval in; a Poisson process
        // starts with its first gap.
        let first = match s.rng {
            Some(_) => s.gap(),
            None => interval.mul_f64(f64::from(args.worker_id % writers) / f64::from(writers)),
        };
        s.at += first;
        s
    }

    fn gap(&mut self) -> Duration {
        match &mut self.rng {
            Some(rng) => self.interval.mul_f64(-rng.uniform().ln()),
            None => self.interval,
        }
    }

    /// The next operation's intended start.
    pub fn next_start(&mut self) -> Instant {
        let at = self.at;
        self.at = at + self.gap();
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Operation;

    fn worker(id: u32, writers: u32, poisson: bool) -> WorkerArgs {
        WorkerArgs {
            writers,
            poisson,
            ..WorkerArgs::new("/r".into(), Operation::CreateNamespace, id)
        }
    }

    /// Two writers offered 10 a second: each every 200 ms, the second 100 ms after the
    /// first, so that together they offer one every 100 ms.
    #[test]
    fn evenly_spaced_writers_interleave_their_starts() {
        let t0 = Instant::now();
        let starts = |id| {
            let mut s = Schedule::new(&worker(id, 2, false), 10.0, t0);
            (0..3).map(|_| s.next_start() - t0).collect::<Vec<_>>()
        };
        let ms = |v: Vec<Duration>| v.iter().map(|d| d.as_millis()).collect::<Vec<_>>();
        assert_eq!(ms(starts(0)), [0, 200, 400]);
        assert_eq!(ms(starts(1)), [100, 300, 500]);
    }

    /// A Poisson process of 100 a second for one writer: gaps average 10 ms, vary (about
    /// as much as they average), and the same seed gives the same starts.
    #[test]
    fn poisson_arrivals_average_the_rate_and_repeat_with_their_seed() {
        let t0 = Instant::now();
        let starts = || {
            let mut s = Schedule::new(&worker(3, 1, true), 100.0, t0);
            (0..2000).map(|_| s.next_start()).collect::<Vec<_>>()
        };
        let a = starts();
        assert_eq!(a, starts(), "seeded by the worker");
        let gaps: Vec<f64> = (a.windows(2))
            .map(|w| (w[1] - w[0]).as_secs_f64() * 1000.0)
            .collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((mean - 10.0).abs() < 1.0, "{mean}");
        assert!(
            (sd / mean - 1.0).abs() < 0.15,
            "exponential gaps: {sd} / {mean}"
        );
    }
}
