//! Pairs formed inside a cell, decided here without processes or a clock of its own (the
//! driver passes `now`): which arm runs next, and what each pair of units measured.
//!
//! - **Lockstep** (continuous cells): one operation at a time, the arms taking turns in the
//!   order A B, B A, A B, … (which arm leads alternates from repetition to repetition too);
//!   operation `i` of A and operation `i` of B form pair `i`, both on catalogs of the same
//!   size.
//! - **Slices** (concurrent and mixed cells): an arm's writers run for a slice of time, then
//!   are paused (no new operation starts; those in flight finish and count in the slice),
//!   then the other arm's, in the same alternating order, until each arm has run for the
//!   cell's duration; a pair of slices is one pair.
//! - **Duet** (any cell, `--pairing duet`): both arms run at once, unpaced; a continuous
//!   cell's operations pair by index, a timed cell's by the time bucket (of the slice's
//!   length) in which they finished.

use std::time::{Duration, Instant};

use crate::protocol::{Command, OpReport};
use crate::stats::Unit;
pub use crate::stats::paired::{ArmUnits, PairingKind};

/// A command for every worker of one arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Send {
    pub arm: usize,
    pub cmd: Command,
}

fn both(cmd: Command) -> Vec<Send> {
    vec![Send { arm: 0, cmd }, Send { arm: 1, cmd }]
}

/// Which arm runs the `n`-th turn: pairs of turns in the order lead, other; other, lead;
/// lead, other; … (ABBA), so that an order effect and a linear drift weigh on both alike.
fn turn(lead: usize, n: u64) -> usize {
    let pair_lead = if (n / 2).is_multiple_of(2) {
        lead
    } else {
        1 - lead
    };
    if n.is_multiple_of(2) {
        pair_lead
    } else {
        1 - pair_lead
    }
}

/// How a paired run is paced.
#[derive(Debug)]
pub enum Pace {
    Lockstep(Lockstep),
    Slices(Slices),
    /// Duet of continuous cells: units are the arms' operations in order.
    DuetOps([ArmUnits; 2]),
    DuetBuckets(Buckets),
}

impl Pace {
    /// Lockstep pairs of `ops` operations per arm; `lead` (0 for A, 1 for B) goes first.
    pub fn lockstep(ops: u64, lead: usize) -> Pace {
        Pace::Lockstep(Lockstep {
            ops,
            lead,
            turns: 0,
            units: Default::default(),
        })
    }

    /// Slices of `slice` until each arm has run for `per_arm`; arm `k` has `workers[k]`
    /// workers, each of which reports `paused`.
    pub fn slices(slice: Duration, per_arm: Duration, workers: [usize; 2], lead: usize) -> Pace {
        Pace::Slices(Slices {
            slice,
            per_arm,
            workers,
            lead,
            turns: 0,
            active: None,
            spent: [Duration::ZERO; 2],
            ended: [false; 2],
            units: Default::default(),
            idle: Default::default(),
        })
    }

    /// Both arms at once; a continuous cell pairs its operations by index, a timed one by
    /// buckets of `bucket`.
    pub fn duet(continuous: bool, bucket: Duration) -> Pace {
        if continuous {
            Pace::DuetOps(Default::default())
        } else {
            Pace::DuetBuckets(Buckets {
                width: bucket,
                start: None,
                last: None,
                counts: Default::default(),
            })
        }
    }

    pub fn kind(&self) -> PairingKind {
        match self {
            Pace::Lockstep(_) => PairingKind::Lockstep,
            Pace::Slices(_) => PairingKind::Slices,
            Pace::DuetOps(_) | Pace::DuetBuckets(_) => PairingKind::Duet,
        }
    }

    /// Whether the workers run only when told (`--paced`).
    pub fn paced(&self) -> bool {
        matches!(self, Pace::Lockstep(_) | Pace::Slices(_))
    }

    /// Both arms are released: what to send first.
    pub fn start(&mut self, now: Instant) -> Vec<Send> {
        match self {
            Pace::Lockstep(l) => l.next(),
            Pace::Slices(s) => s.begin(now),
            Pace::DuetOps(_) => Vec::new(),
            Pace::DuetBuckets(b) => {
                b.start = Some(now);
                Vec::new()
            }
        }
    }

    /// An operation of `arm` finished; an operation out of turn is an error.
    pub fn op(&mut self, arm: usize, op: &OpReport, now: Instant) -> Result<Vec<Send>, String> {
        let done = if op.ok { 1.0 } else { 0.0 };
        match self {
            Pace::Lockstep(l) => l.op(
                arm,
                Unit {
                    ms: op.attempt.ms,
                    ops: done,
                },
            ),
            Pace::Slices(s) => s.op(arm, op.ok, op.attempt.read).map(|()| Vec::new()),
            Pace::DuetOps(units) => {
                let u = Unit {
                    ms: op.attempt.ms,
                    ops: done,
                };
                if op.attempt.read {
                    units[arm].reads.push(u);
                } else {
                    units[arm].ops.push(u);
                }
                Ok(Vec::new())
            }
            Pace::DuetBuckets(b) => {
                b.op(arm, op.ok, op.attempt.read, now);
                Ok(Vec::new())
            }
        }
    }

    /// `arm` reached the cell's bound on its commits: what to send so that its workers end
    /// (after their operations in flight). Slices end its slice under way as a pause would,
    /// and run the other arm's alone until it too is done.
    pub fn end(&mut self, arm: usize) -> Vec<Send> {
        match self {
            Pace::Slices(s) => s.end(arm),
            _ => vec![Send {
                arm,
                cmd: Command::End,
            }],
        }
    }

    /// One worker of `arm` reported `paused`.
    pub fn paused(&mut self, arm: usize, now: Instant) -> Result<Vec<Send>, String> {
        match self {
            Pace::Slices(s) => s.paused(arm, now),
            _ => Err(format!(
                "arm {} reported a pause it was not asked for",
                arm_name(arm)
            )),
        }
    }

    /// When the driver must call [`Pace::tick`] next, if ever.
    pub fn next_tick(&self) -> Option<Instant> {
        match self {
            Pace::Slices(s) => s.deadline(),
            _ => None,
        }
    }

    /// Time passed: what to send now.
    pub fn tick(&mut self, now: Instant) -> Vec<Send> {
        match self {
            Pace::Slices(s) => s.tick(now),
            _ => Vec::new(),
        }
    }

    /// Each arm's pauses between its slices that ended (the other arm ran then); none for
    /// the other ways of pacing, whose arms wait only between single operations.
    pub fn pauses(&self) -> [Vec<(Instant, Instant)>; 2] {
        match self {
            Pace::Slices(s) => s
                .idle
                .clone()
                .map(|v| v.into_iter().filter_map(|(a, b)| Some((a, b?))).collect()),
            _ => Default::default(),
        }
    }

    /// The units of both arms (pair `i` is unit `i` of each).
    pub fn units(self) -> [ArmUnits; 2] {
        match self {
            Pace::Lockstep(l) => l.units,
            Pace::Slices(s) => s.units,
            Pace::DuetOps(u) => u,
            Pace::DuetBuckets(b) => b.units(),
        }
    }
}

/// `A` or `B`.
pub fn arm_name(arm: usize) -> &'static str {
    if arm == 0 { "A" } else { "B" }
}

#[derive(Debug)]
pub struct Lockstep {
    ops: u64,
    lead: usize,
    /// Operations run so far, both arms.
    turns: u64,
    units: [ArmUnits; 2],
}

impl Lockstep {
    fn next(&self) -> Vec<Send> {
        if self.turns >= 2 * self.ops {
            return both(Command::End);
        }
        vec![Send {
            arm: turn(self.lead, self.turns),
            cmd: Command::Step,
        }]
    }

    fn op(&mut self, arm: usize, u: Unit) -> Result<Vec<Send>, String> {
        let due = turn(self.lead, self.turns);
        if self.turns >= 2 * self.ops || arm != due {
            return Err(format!(
                "arm {} reported an operation out of turn (turn {} is arm {}'s)",
                arm_name(arm),
                self.turns,
                arm_name(due)
            ));
        }
        self.units[arm].ops.push(u);
        self.turns += 1;
        Ok(self.next())
    }
}

/// The slice under way.
#[derive(Debug)]
struct Active {
    arm: usize,
    started: Instant,
    pause_sent: bool,
    paused: usize,
    ops: f64,
    reads: f64,
}

#[derive(Debug)]
pub struct Slices {
    slice: Duration,
    per_arm: Duration,
    workers: [usize; 2],
    lead: usize,
    /// Slices begun so far, both arms.
    turns: u64,
    active: Option<Active>,
    spent: [Duration; 2],
    /// Arms told to end (their bound reached): they run no more slices.
    ended: [bool; 2],
    units: [ArmUnits; 2],
    /// Each arm's pauses between its slices: from its last worker's `paused` to its next
    /// `resume` (none yet: still paused).
    idle: [Vec<(Instant, Option<Instant>)>; 2],
}

impl Slices {
    /// Whether an arm has run all it will: told to end, or its time spent.
    fn finished(&self, arm: usize) -> bool {
        self.ended[arm] || self.spent[arm] >= self.per_arm
    }

    fn begin(&mut self, now: Instant) -> Vec<Send> {
        let mut arm = turn(self.lead, self.turns);
        // An arm that ended its bound runs no more slices: the other runs alone.
        if self.ended[arm] {
            arm = 1 - arm;
        }
        self.turns += 1;
        if let Some((_, end @ None)) = self.idle[arm].last_mut() {
            *end = Some(now);
        }
        self.active = Some(Active {
            arm,
            started: now,
            pause_sent: false,
            paused: 0,
            ops: 0.0,
            reads: 0.0,
        });
        vec![Send {
            arm,
            cmd: Command::Resume,
        }]
    }

    fn deadline(&self) -> Option<Instant> {
        self.active
            .as_ref()
            .filter(|a| !a.pause_sent)
            .map(|a| a.started + self.slice)
    }

    fn tick(&mut self, now: Instant) -> Vec<Send> {
        match &mut self.active {
            Some(a) if !a.pause_sent && now >= a.started + self.slice => {
                a.pause_sent = true;
                vec![Send {
                    arm: a.arm,
                    cmd: Command::Pause,
                }]
            }
            _ => Vec::new(),
        }
    }

    fn op(&mut self, arm: usize, ok: bool, read: bool) -> Result<(), String> {
        match &mut self.active {
            Some(a) if a.arm == arm => {
                if ok {
                    *(if read { &mut a.reads } else { &mut a.ops }) += 1.0;
                }
                Ok(())
            }
            _ => Err(format!(
                "arm {} reported an operation while paused",
                arm_name(arm)
            )),
        }
    }

    fn end(&mut self, arm: usize) -> Vec<Send> {
        self.ended[arm] = true;
        // Mid-slice, the end is the slice's pause: its workers each report `paused` as
        // they stop, and the slice closes as any other.
        if let Some(a) = self.active.as_mut().filter(|a| a.arm == arm) {
            a.pause_sent = true;
        }
        vec![Send {
            arm,
            cmd: Command::End,
        }]
    }

    fn paused(&mut self, arm: usize, now: Instant) -> Result<Vec<Send>, String> {
        let workers = self.workers[arm];
        let Some(a) = self
            .active
            .as_mut()
            .filter(|a| a.arm == arm && a.pause_sent)
        else {
            return Err(format!(
                "arm {} reported a pause it was not asked for",
                arm_name(arm)
            ));
        };
        a.paused += 1;
        if a.paused < workers {
            return Ok(Vec::new());
        }
        let a = self.active.take().expect("a slice is under way");
        self.idle[arm].push((now, None));
        let took = now.saturating_duration_since(a.started);
        let ms = took.as_secs_f64() * 1000.0;
        self.spent[arm] += took;
        self.units[arm].ops.push(Unit { ms, ops: a.ops });
        self.units[arm].reads.push(Unit { ms, ops: a.reads });
        let pair_complete = self.turns.is_multiple_of(2) || self.ended.contains(&true);
        if pair_complete && self.finished(0) && self.finished(1) {
            // An arm already told to end has exited: only the other needs telling.
            return Ok((0..2)
                .filter(|&a| !self.ended[a])
                .map(|arm| Send {
                    arm,
                    cmd: Command::End,
                })
                .collect());
        }
        Ok(self.begin(now))
    }
}

#[derive(Debug)]
pub struct Buckets {
    width: Duration,
    start: Option<Instant>,
    /// The last operation's end, either arm.
    last: Option<Instant>,
    /// Successful (commits, reads) per bucket, per arm.
    counts: [Vec<(f64, f64)>; 2],
}

impl Buckets {
    fn op(&mut self, arm: usize, ok: bool, read: bool, now: Instant) {
        let start = *self.start.get_or_insert(now);
        self.last = Some(self.last.map_or(now, |l| l.max(now)));
        let width = self.width.as_secs_f64().max(1e-3);
        let i = (now.saturating_duration_since(start).as_secs_f64() / width) as usize;
        for c in &mut self.counts {
            if c.len() <= i {
                c.resize(i + 1, (0.0, 0.0));
            }
        }
        if ok {
            let c = &mut self.counts[arm][i];
            *(if read { &mut c.1 } else { &mut c.0 }) += 1.0;
        }
    }

    /// Every bucket is `width` long but the last, which ends with the last operation.
    fn units(self) -> [ArmUnits; 2] {
        let n = self.counts[0].len();
        let width_ms = self.width.as_secs_f64() * 1000.0;
        let span_ms = match (self.start, self.last) {
            (Some(s), Some(l)) => l.saturating_duration_since(s).as_secs_f64() * 1000.0,
            _ => 0.0,
        };
        self.counts.map(|c| {
            let ms = |i: usize| {
                if i + 1 == n {
                    (span_ms - width_ms * i as f64).max(1e-3)
                } else {
                    width_ms
                }
            };
            ArmUnits {
                ops: (0..n)
                    .map(|i| Unit {
                        ms: ms(i),
                        ops: c[i].0,
                    })
                    .collect(),
                reads: (0..n)
                    .map(|i| Unit {
                        ms: ms(i),
                        ops: c[i].1,
                    })
                    .collect(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(ms: f64, ok: bool, read: bool) -> OpReport {
        OpReport::of(
            crate::oplog::Attempt {
                read,
                ..crate::oplog::Attempt::new(0, ms)
            },
            ok,
        )
    }

    /// One command to one arm.
    fn to(arm: usize, cmd: Command) -> Vec<Send> {
        vec![Send { arm, cmd }]
    }

    fn step(arm: usize) -> Vec<Send> {
        to(arm, Command::Step)
    }

    #[test]
    fn lockstep_alternates_a_b_b_a_and_pairs_operation_by_operation() {
        let t = Instant::now();
        let mut p = Pace::lockstep(3, 0);
        assert!(p.paced());
        assert_eq!(p.start(t), step(0));
        // Out of turn: B cannot report before A's operation is done.
        assert!(p.op(1, &op(1.0, true, false), t).is_err());
        let mut order = vec![0];
        let mut sends = p.op(0, &op(1.0, true, false), t).unwrap();
        while sends[0].cmd == Command::Step {
            let arm = sends[0].arm;
            order.push(arm);
            let ms = if arm == 0 { 10.0 } else { 11.0 };
            sends = p
                .op(arm, &op(ms, arm == 0 || order.len() != 3, false), t)
                .unwrap();
        }
        assert_eq!(order, [0, 1, 1, 0, 0, 1], "A B, B A, A B");
        assert_eq!(sends, both(Command::End));
        let [a, b] = p.units();
        assert_eq!(a.ops.len(), 3);
        assert_eq!(b.ops.len(), 3);
        assert_eq!(
            b.ops[1],
            Unit { ms: 11.0, ops: 0.0 },
            "B's failed operation"
        );
        // B leads in the next repetition; no operations: end at once.
        assert_eq!(Pace::lockstep(2, 1).start(t), step(1));
        assert_eq!(Pace::lockstep(0, 0).start(t), both(Command::End));
    }

    #[test]
    fn slices_alternate_pause_with_operations_in_flight_and_lose_none() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut p = Pace::slices(ms(100), ms(200), [2, 2], 0);
        let resume = |arm| to(arm, Command::Resume);
        assert_eq!(p.start(t0), resume(0));
        assert_eq!(p.next_tick(), Some(t0 + ms(100)));
        assert!(p.tick(t0 + ms(50)).is_empty());
        // B's workers are paused: an operation of theirs is an error.
        assert!(p.op(1, &op(1.0, true, false), t0).is_err());
        for _ in 0..5 {
            p.op(0, &op(1.0, true, false), t0).unwrap();
        }
        p.op(0, &op(1.0, false, false), t0).unwrap();
        let pause = p.tick(t0 + ms(100));
        assert_eq!(
            pause,
            vec![Send {
                arm: 0,
                cmd: Command::Pause
            }]
        );
        assert_eq!(p.next_tick(), None, "no second pause");
        // An operation in flight when the pause was sent finishes and counts in the slice.
        p.op(0, &op(40.0, true, false), t0 + ms(130)).unwrap();
        assert!(p.paused(0, t0 + ms(120)).unwrap().is_empty(), "one of two");
        assert_eq!(p.paused(0, t0 + ms(140)).unwrap(), resume(1));
        assert!(p.paused(0, t0 + ms(141)).is_err(), "not asked");
        // B's slice, then B again (B A), then A: four slices, 200 ms each arm.
        let mut t = t0 + ms(140);
        let mut arms = vec![0];
        let mut next = resume(1);
        while next[0].cmd == Command::Resume {
            let arm = next[0].arm;
            arms.push(arm);
            for _ in 0..4 {
                p.op(arm, &op(1.0, true, false), t).unwrap();
            }
            t += ms(100);
            assert_eq!(p.tick(t)[0].cmd, Command::Pause);
            p.paused(arm, t).unwrap();
            next = p.paused(arm, t + ms(5)).unwrap();
            t += ms(5);
        }
        assert_eq!(arms, [0, 1, 1, 0], "A B, B A");
        assert_eq!(next, both(Command::End));
        // Each arm's pauses between its slices: A's while B ran both of its own, B's none
        // between them; a pause that never ended (the last) is none.
        assert_eq!(
            p.pauses(),
            [
                vec![(t0 + ms(140), t0 + ms(350))],
                vec![(t0 + ms(245), t0 + ms(245))]
            ]
        );
        let [a, b] = p.units();
        assert_eq!(a.ops.len(), 2);
        assert_eq!(
            a.ops[0],
            Unit {
                ms: 140.0,
                ops: 6.0
            },
            "5 + the one in flight"
        );
        assert_eq!(
            b.ops[0],
            Unit {
                ms: 105.0,
                ops: 4.0
            }
        );
        assert_eq!(a.reads[0].ops, 0.0);
    }

    /// A concurrent cell with both a bound and a duration: the arm that reaches its bound
    /// mid-slice ends there (its workers report `paused` as they stop), and the other arm
    /// runs its slices alone until its time is spent; then it is told to end.
    #[test]
    fn an_arm_that_reaches_its_bound_ends_its_slice_and_the_other_goes_on() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut p = Pace::slices(ms(100), ms(200), [2, 2], 0);
        let (resume, end) = (|arm| to(arm, Command::Resume), |arm| to(arm, Command::End));
        assert_eq!(p.start(t0), resume(0));
        p.op(0, &op(1.0, true, false), t0 + ms(10)).unwrap();
        // A's bound, mid-slice: it is told to end, not to pause.
        assert_eq!(p.end(0), end(0));
        assert_eq!(p.next_tick(), None, "no pause after the end");
        // Each of its workers stops and says so; the slice closes, B's begins.
        assert!(p.paused(0, t0 + ms(30)).unwrap().is_empty());
        assert_eq!(p.paused(0, t0 + ms(40)).unwrap(), resume(1));
        // B runs alone: two slices of 100 ms, then it is told to end (A has exited).
        let mut t = t0 + ms(40);
        let mut next = resume(1);
        let mut slices = 0;
        while next == resume(1) {
            slices += 1;
            p.op(1, &op(1.0, true, false), t).unwrap();
            t += ms(100);
            assert_eq!(p.tick(t)[0].cmd, Command::Pause);
            p.paused(1, t).unwrap();
            next = p.paused(1, t).unwrap();
        }
        assert_eq!(slices, 2);
        assert_eq!(next, end(1));
        let [a, b] = p.units();
        assert_eq!((a.ops.len(), b.ops.len()), (1, 2));
        assert_eq!(a.ops[0], Unit { ms: 40.0, ops: 1.0 });
        // B's bound after A's time ran out: B's slice ends, and the cell with it.
        let mut p = Pace::slices(ms(100), ms(100), [1, 1], 0);
        p.start(t0);
        p.tick(t0 + ms(100));
        assert_eq!(p.paused(0, t0 + ms(100)).unwrap(), resume(1));
        assert_eq!(p.end(1), end(1));
        assert_eq!(p.paused(1, t0 + ms(150)).unwrap(), end(0));
    }

    #[test]
    fn duet_pairs_operations_by_index_or_by_bucket() {
        let t0 = Instant::now();
        let mut p = Pace::duet(true, Duration::from_secs(1));
        assert!(!p.paced());
        assert!(p.start(t0).is_empty());
        p.op(1, &op(3.0, true, false), t0).unwrap();
        p.op(0, &op(2.0, true, false), t0).unwrap();
        p.op(0, &op(4.0, false, false), t0).unwrap();
        let [a, b] = p.units();
        assert_eq!(
            a.ops,
            [Unit { ms: 2.0, ops: 1.0 }, Unit { ms: 4.0, ops: 0.0 }]
        );
        assert_eq!(b.ops, [Unit { ms: 3.0, ops: 1.0 }]);

        let ms = Duration::from_millis;
        let mut p = Pace::duet(false, ms(1000));
        p.start(t0);
        p.op(0, &op(1.0, true, false), t0 + ms(10)).unwrap();
        p.op(1, &op(1.0, true, true), t0 + ms(20)).unwrap();
        p.op(1, &op(1.0, true, false), t0 + ms(1500)).unwrap();
        p.op(0, &op(1.0, true, false), t0 + ms(2250)).unwrap();
        let [a, b] = p.units();
        let counts = |u: &[Unit]| u.iter().map(|x| x.ops).collect::<Vec<_>>();
        assert_eq!(counts(&a.ops), [1.0, 0.0, 1.0]);
        assert_eq!(counts(&b.ops), [0.0, 1.0, 0.0]);
        assert_eq!(counts(&b.reads), [1.0, 0.0, 0.0]);
        assert_eq!(
            a.ops[2].ms, 250.0,
            "the last bucket ends with the last operation"
        );
        assert_eq!(a.ops[0].ms, 1000.0);
    }
}
