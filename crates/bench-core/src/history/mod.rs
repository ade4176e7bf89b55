//! The history file a cell that keeps a history leaves beside its results: its operation log
//! as Jepsen writes a history (`history.jsonl`: one line per event, an operation's
//! invocation and its completion) with bench's own fields beside Jepsen's, and the copy's
//! chain of `__manifest` versions (`versions.jsonl`). [`write`] writes both from what a run
//! measured; [`read`] reads them back into the same log, which [`check`] judges offline and
//! [`elle`] exports for an independent checker.
//!
//! The log is written as the record's checkers read it: after verification, so each write
//! that did not succeed carries what the copy showed (`landed`), and each commit that named
//! no version carries the one the copy's chain placed it at.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::counts::IoCounts;
use crate::offsets::{Bound, Offsets};
use crate::oplog::{Attempt, Cleaned, ErrorClass, Observed, Op, Outcome, Seen};
use crate::plan::Operation;
use crate::versions::{At, Chain, Change, Page};

pub mod check;
pub mod command;
pub mod elle;
pub mod journal;

/// The format this bench writes and the newest it reads.
pub const FORMAT: u32 = 1;
/// Where a results directory keeps its histories: `histories/<cell>_r<repetition>/`.
pub const DIR: &str = "histories";
pub const HISTORY_FILE: &str = "history.jsonl";
pub const VERSIONS_FILE: &str = "versions.jsonl";

/// The first line of `history.jsonl`: which run it is, and what the checkers need besides
/// the events.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The format ([`FORMAT`]).
    pub bench_history: u32,
    pub cell: String,
    pub repetition: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<String>,
    /// Time 0 of the events: the start of the run's first measured operation (its workers'
    /// release), µs on the clock the workers' times are on (on one host the one they share,
    /// `CLOCK_MONOTONIC`).
    pub release_us: u64,
    /// Operations in the log (each an invocation and, unless its worker died first, a
    /// completion).
    pub operations: u64,
    /// The hosts its clients ran on.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Each client's clock offset against the coordinator's (several hosts only): `[lo, hi,
    /// at_us]` at `go`, and after its last operation.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub clocks: BTreeMap<u32, [Option<[i64; 3]>; 2]>,
    /// Spans the clients were paused (`bench ab`'s slices), µs on the wall clock.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paused_us: Vec<[u64; 2]>,
    /// The copy's versions verification held against the commits (absent: not held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain_versions: Option<u64>,
    /// Written as the run went ([`journal`]) and never replaced by the whole history: the
    /// run did not finish (its coordinator stopped). It holds each operation whose report
    /// came, in the order they came; no write in it was looked up on the copy, its
    /// `operations` is 0, and its last line may be cut short.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub journal: bool,
}

/// One line of `history.jsonl` after the header: Jepsen's fields, then bench's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub index: u64,
    /// ns since the header's `release_us` (negative: in the warm-up).
    pub time: i64,
    /// `invoke`, then `ok`, `fail` (it took no effect) or `info` (unknown).
    #[serde(rename = "type")]
    pub kind: String,
    /// The client's process: a client whose operation ended `info` goes on under a new one.
    pub process: u64,
    /// The operation (`create-namespace`, `list-tables`, …).
    pub f: Operation,
    /// The entry it named; a completion's: what it saw (`{"listed": …}`, `{"version": V}`,
    /// `{"cleaned": …}`), or its entry.
    pub value: Value,
    pub client: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<[u32; 2]>,
    /// Its index among its client's operations of its kind.
    pub i: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warm: bool,
    /// Kept without times by its worker: `time` is its end after its worker's release.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untimed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<[String; 2]>,
    /// A completion's: its place in the `__manifest` version order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<At>,
    /// A listing in pages: each page's last name and the version it served.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<Page>,
    /// Its store requests by kind, and bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<IoCounts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A write that did not succeed, as the copy showed it after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landed: Option<bool>,
    /// Requests the store client resent while it ran: a write that did not succeed has it
    /// wherever they were seen (0 included; absent: not seen, e.g. through REST); any other
    /// completion only where it is more than 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resent: Option<u32>,
    /// bench's outcome where `type` does not say it: `failed` for a write answered with a
    /// definite error that landed all the same (`type` `info`: a write that landed is never
    /// `fail`, so that a checker reading only Jepsen's fields sees what bench saw).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
}

/// The run `write` describes: which it is, and what its checkers read besides the log.
pub struct Run<'a> {
    pub cell: &'a str,
    pub repetition: u32,
    pub arm: Option<&'a str>,
    pub hosts: Vec<String>,
    pub clocks: &'a BTreeMap<u32, Offsets>,
    pub paused_us: &'a [[u64; 2]],
    pub chain_versions: Option<u64>,
    /// `[[nemesis]]`: each window switched on or off, as the coordinator made it.
    pub nemesis: &'a [crate::plan::nemesis::Switch],
}

/// A line of the `nemesis` process, as Jepsen writes its nemesis' events: a window of a
/// store fault switched on (`start`) or off (`stop`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NemesisEvent {
    pub index: u64,
    /// ns since the header's `release_us`.
    pub time: i64,
    /// Always `info`: the nemesis' own operations have no outcome to judge.
    #[serde(rename = "type")]
    pub kind: String,
    /// Always `nemesis`.
    pub process: String,
    /// `start` or `stop`.
    pub f: String,
    /// The fault and the kind of request it met: `slow-down of any`.
    pub value: String,
    /// `stop`: the requests the window met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub met: Option<u64>,
    /// Where the store could not be told: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The nemesis' lines of `nemesis`, sorted by time (numbered as they are written).
fn nemesis_events(nemesis: &[crate::plan::nemesis::Switch], release_us: u64) -> Vec<NemesisEvent> {
    let mut switches: Vec<NemesisEvent> = (nemesis.iter())
        .map(|s| NemesisEvent {
            index: 0,
            time: (s.at_us as i64 - release_us as i64) * 1000,
            kind: "info".to_string(),
            process: "nemesis".to_string(),
            f: if s.on { "start" } else { "stop" }.to_string(),
            value: s.fault.clone(),
            met: s.met,
            error: s.error.clone(),
        })
        .collect();
    switches.sort_by_key(|n| n.time);
    switches
}

fn bound(b: Bound) -> [i64; 3] {
    [b.lo, b.hi, b.at_us as i64]
}

fn unbound(b: [i64; 3]) -> Bound {
    Bound {
        lo: b[0],
        hi: b[1],
        at_us: b[2].max(0) as u64,
    }
}

/// A completion's type, from the operation's outcome and what the copy showed of it: a
/// write that landed is never `fail` (Jepsen's word for one that took no effect), but
/// `info`, its outcome unknown to its client.
fn kind(o: &Op) -> &'static str {
    match (o.outcome, o.landed) {
        (Outcome::Ok, _) => "ok",
        (Outcome::Failed, Some(true)) | (Outcome::Unknown, _) => "info",
        (Outcome::Failed, _) => "fail",
    }
}

/// What an operation showed, as a completion's value (`None`: nothing; its entry stands).
fn shown(o: &Observed) -> Option<Value> {
    match o {
        Observed::Nothing => None,
        Observed::Listed {
            seen, gone, twice, ..
        } => Some(json!({"listed": {"seen": seen, "gone": gone, "twice": twice}})),
        Observed::Version(v) => Some(json!({ "version": v })),
        Observed::Cleaned(c) => Some(json!({ "cleaned": c })),
    }
}

/// A completion's value read back (pages apart).
fn observed(v: &Value, pages: Vec<Page>) -> Result<Observed, String> {
    let Some(map) = v.as_object() else {
        return Ok(Observed::Nothing);
    };
    let field = |k: &str| map.get(k).cloned().unwrap_or(Value::Null);
    let bad = |e: serde_json::Error| e.to_string();
    if let Some(l) = map.get("listed") {
        #[derive(Deserialize)]
        struct Listed {
            seen: Vec<Seen>,
            gone: Option<Vec<String>>,
            #[serde(default)]
            twice: Vec<String>,
        }
        let l: Listed = serde_json::from_value(l.clone()).map_err(bad)?;
        return Ok(Observed::Listed {
            seen: l.seen,
            gone: l.gone,
            twice: l.twice,
            pages,
        });
    }
    if map.contains_key("version") {
        return serde_json::from_value(field("version"))
            .map(Observed::Version)
            .map_err(bad);
    }
    if map.contains_key("cleaned") {
        let c: Cleaned = serde_json::from_value(field("cleaned")).map_err(bad)?;
        return Ok(Observed::Cleaned(c));
    }
    Err("a value that is an object holds `listed`, `version` or `cleaned`".to_string())
}

/// An operation's start and end, µs: its own times, or (kept without them) its end after its
/// worker's release.
fn span(o: &Op, release_us: u64) -> [u64; 2] {
    o.attempt.at_us.unwrap_or_else(|| {
        let end = release_us + (o.attempt.end_ms.unwrap_or(0.0) * 1000.0).max(0.0) as u64;
        [end, end]
    })
}

/// The run's events, in order: each operation's invocation at its start and its completion
/// at its end (an operation's before its client's next), numbered, on processes as Jepsen
/// numbers them.
pub fn events(log: &[Op], release_us: u64) -> Vec<Event> {
    numbered(log, release_us)
        .into_iter()
        .map(|(_, e)| e)
        .collect()
}

/// [`events`], each with the index in `log` of its operation.
fn numbered(log: &[Op], release_us: u64) -> Vec<(usize, Event)> {
    let placed = Placed::of(log, release_us);
    (placed.events.iter().enumerate())
        .map(|(n, &x)| {
            (
                (x >> 1) as usize,
                placed.event(log, x, n as u64, release_us),
            )
        })
        .collect()
}

/// The order of a run's events, in a few words an operation: the history is written from
/// it, each event made as it is written.
struct Placed {
    /// Each operation's invocation and completion times as the order used them.
    times: Vec<[i64; 2]>,
    /// Each operation's process, as Jepsen numbers them.
    process: Vec<u64>,
    /// The events in order, each its operation's index in the log times 2, plus 1 for its
    /// completion.
    events: Vec<u32>,
}

/// The process of each operation of `log`, as Jepsen numbers them: a client whose
/// operation ended `info` goes on under a new one. `order`: the log's indices by client, in
/// the order each client reported them.
fn processes(log: &[Op], order: &[u32]) -> Vec<u64> {
    let clients = log.iter().map(|o| o.client + 1).max().unwrap_or(0) as u64;
    let mut process = vec![0u64; log.len()];
    let mut infos: BTreeMap<u32, u64> = BTreeMap::new();
    for &k in order {
        let o = &log[k as usize];
        let n = infos.entry(o.client).or_default();
        process[k as usize] = u64::from(o.client) + clients * *n;
        *n += u64::from(kind(o) == "info");
    }
    process
}

impl Placed {
    /// The run's events in order: each operation's invocation at its start and its
    /// completion at its end (an operation's before its client's next).
    fn of(log: &[Op], release_us: u64) -> Placed {
        let n = u32::try_from(log.len()).ok().filter(|n| *n < u32::MAX / 2);
        let n = n.expect("a history holds fewer than 2^31 operations");
        // Each operation's place among its client's, in the order it reported them.
        let mut order: Vec<u32> = (0..n).collect();
        order.sort_by_key(|&k| (log[k as usize].client, k));
        let process = processes(log, &order);
        // Sorted by time, each client's own events in the order it ran them: an event's
        // place is at or after its client's previous event's (a wall clock stepped back
        // moves no time).
        let mut times = vec![[0i64; 2]; log.len()];
        let mut rank = vec![0u32; log.len()];
        let mut after: BTreeMap<u32, i64> = BTreeMap::new();
        let ns = |t: u64| (t as i64 - release_us as i64) * 1000;
        for (r, &k) in order.iter().enumerate() {
            let o = &log[k as usize];
            let [s, e] = span(o, release_us);
            let prev = after.entry(o.client).or_insert(i64::MIN);
            let at_invoke = ns(s).max(*prev);
            let at_done = ns(e).max(at_invoke);
            *prev = at_done;
            // The time written is the one the order used: `time` never goes back as
            // `index` goes on (it differs from the operation's own only where its clock
            // stepped back).
            times[k as usize] = [at_invoke, at_done];
            rank[k as usize] = r as u32;
        }
        drop(order);
        let mut events: Vec<u32> = (0..2 * n).collect();
        events.sort_unstable_by_key(|&x| {
            let (k, done) = ((x >> 1) as usize, x & 1);
            (times[k][done as usize], log[k].client, rank[k], done)
        });
        Placed {
            times,
            process,
            events,
        }
    }

    /// Event `x` (of [`Placed::events`]), numbered `index`.
    fn event(&self, log: &[Op], x: u32, index: u64, release_us: u64) -> Event {
        let (k, done) = ((x >> 1) as usize, x & 1 == 1);
        let (invoke, completion) = pair(&log[k], self.process[k], release_us);
        Event {
            index,
            time: self.times[k][usize::from(done)],
            ..if done { completion } else { invoke }
        }
    }
}

/// Operation `o`'s invocation and completion, on `process`.
fn pair(o: &Op, process: u64, release_us: u64) -> (Event, Event) {
    let [s, e] = span(o, release_us);
    let ns = |t: u64| (t as i64 - release_us as i64) * 1000;
    let invoke = Event {
        index: 0,
        time: ns(s),
        kind: "invoke".to_string(),
        process,
        f: o.operation,
        value: o.attempt.entry.clone().map_or(Value::Null, Value::String),
        client: o.client,
        role: o.role.map(|(a, b)| [a, b]),
        i: o.attempt.i,
        read: o.attempt.read,
        warm: o.attempt.warm,
        untimed: o.attempt.at_us.is_none(),
        entry: o.attempt.entry.clone(),
        property: o.attempt.property.clone().map(|(a, b)| [a, b]),
        manifest: None,
        pages: Vec::new(),
        requests: None,
        ms: None,
        end_ms: None,
        lag_ms: None,
        error_class: None,
        error: None,
        landed: None,
        resent: None,
        outcome: None,
    };
    let pages = match &o.observed {
        Observed::Listed { pages, .. } => pages.clone(),
        _ => Vec::new(),
    };
    let done = Event {
        time: ns(e),
        kind: kind(o).to_string(),
        value: shown(&o.observed).unwrap_or_else(|| invoke.value.clone()),
        manifest: o.attempt.manifest,
        pages,
        requests: o.attempt.io,
        ms: Some(o.attempt.ms),
        end_ms: o.attempt.end_ms,
        lag_ms: o.attempt.lag_ms,
        error_class: o.attempt.class,
        error: o.attempt.err.clone(),
        landed: o.landed,
        // A write that did not succeed: whether its resends were seen decides its outcome.
        resent: match o.outcome != Outcome::Ok && o.is_write() {
            true => o.attempt.resent,
            false => o.attempt.resent.filter(|&n| n > 0),
        },
        outcome: (kind(o) == "info" && o.outcome != Outcome::Unknown).then_some(o.outcome),
        ..invoke.clone()
    };
    (invoke, done)
}

/// Time 0 of a run's events: the start of its first measured operation (of its first
/// operation where none is measured).
fn release_of(log: &[Op]) -> u64 {
    (log.iter().filter(|o| !o.attempt.warm))
        .filter_map(|o| o.attempt.at_us.map(|a| a[0]))
        .min()
        .or_else(|| {
            log.iter()
                .filter_map(|o| o.attempt.at_us.map(|a| a[0]))
                .min()
        })
        .unwrap_or(0)
}

/// `history.jsonl`'s lines (without their newlines), header first, each made as it is
/// taken: what the history holds beside the log is a few words an event.
pub fn lines<'a>(log: &'a [Op], run: &Run) -> impl Iterator<Item = String> + use<'a> {
    let release_us = release_of(log);
    let header = Header {
        bench_history: FORMAT,
        cell: run.cell.to_string(),
        repetition: run.repetition,
        arm: run.arm.map(str::to_string),
        release_us,
        operations: log.len() as u64,
        hosts: run.hosts.clone(),
        clocks: (run.clocks.iter())
            .map(|(c, o)| (*c, [Some(bound(o.go)), o.done.map(bound)]))
            .collect(),
        paused_us: run.paused_us.to_vec(),
        chain_versions: run.chain_versions,
        journal: false,
    };
    let head = serde_json::to_string(&header).expect("a header serialises");
    let mut switches = nemesis_events(run.nemesis, release_us)
        .into_iter()
        .peekable();
    let placed = Placed::of(log, release_us);
    let mut next = 0;
    let mut index = 0u64;
    // A switch goes before the first event after it.
    let body = std::iter::from_fn(move || {
        let x = placed.events.get(next).copied();
        let at = x.map(|x| placed.times[(x >> 1) as usize][(x & 1) as usize]);
        let line = match switches.next_if(|n| at.is_none_or(|t| n.time < t)) {
            Some(n) => serde_json::to_string(&NemesisEvent { index, ..n }),
            None => {
                next += 1;
                serde_json::to_string(&placed.event(log, x?, index, release_us))
            }
        };
        index += 1;
        Some(line.expect("an event serialises"))
    });
    std::iter::once(head).chain(body)
}

/// The run's history as one text ([`lines`], each ended), and its copy's chain as
/// `versions.jsonl`'s text where verification read one.
pub fn write(log: &[Op], run: &Run, chain: Option<&Chain>) -> (String, Option<String>) {
    let mut text = String::new();
    for line in lines(log, run) {
        text.push_str(&line);
        text.push('\n');
    }
    (text, chain.map(versions))
}

/// One line of `versions.jsonl` after its header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Version {
    pub version: u64,
    /// The entries it added and removed against the version before it (absent: its
    /// changes were not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<Vec<String>>,
}

/// `versions.jsonl`: a header naming the cell's first version, then each version present
/// after it with what it added and removed.
pub fn versions(chain: &Chain) -> String {
    let mut text = json!({"bench_versions": FORMAT, "first": chain.first}).to_string();
    text.push('\n');
    let changes: BTreeMap<u64, &Change> = chain.changes.iter().map(|c| (c.version, c)).collect();
    for &v in &chain.versions {
        let c = changes.get(&v);
        let line = Version {
            version: v,
            added: c.map(|c| c.added.clone()),
            removed: c.map(|c| c.removed.clone()),
        };
        text.push_str(&serde_json::to_string(&line).expect("a version serialises"));
        text.push('\n');
    }
    text
}

/// A saved history read back: its header, and the log as the run's checkers read it.
#[derive(Debug, Clone)]
pub struct Saved {
    pub header: Header,
    pub log: Vec<Op>,
    /// Operations invoked and never completed (their worker died first): each `unknown`.
    pub unfinished: u64,
}

/// Why a file could not be read: its line (1-based; 0: the file as a whole) and what is
/// wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Bad {
    pub line: usize,
    pub why: String,
}

impl std::fmt::Display for Bad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => f.write_str(&self.why),
            n => write!(f, "line {n}: {}", self.why),
        }
    }
}

fn bad(line: usize, why: impl Into<String>) -> Bad {
    Bad {
        line,
        why: why.into(),
    }
}

/// The format number a first line declares under `key`, refused where it is newer than
/// this bench reads.
fn format_of(first: &Value, key: &str, what: &str) -> Result<(), Bad> {
    let Some(n) = first.get(key).and_then(Value::as_u64) else {
        return Err(bad(
            1,
            format!("not a {what}: its first line has no `{key}` (the format's number)"),
        ));
    };
    if n > u64::from(FORMAT) {
        return Err(bad(
            1,
            format!(
                "a {what} of format {n}, newer than this bench reads (format {FORMAT}): check \
                 it with a bench that reads format {n} or later"
            ),
        ));
    }
    Ok(())
}

/// A file's first line, which names its format under `key` (refused where it is newer than
/// this bench reads), and its other lines that are not blank, numbered from 1.
fn opened<'a>(
    text: &'a str,
    key: &str,
    what: &str,
) -> Result<(Value, impl Iterator<Item = (usize, &'a str)>), Bad> {
    let mut lines = (text.lines().enumerate())
        .map(|(n, l)| (n + 1, l))
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, first) = lines.next().ok_or_else(|| bad(0, "the file is empty"))?;
    let first: Value = serde_json::from_str(first).map_err(|e| bad(1, format!("not JSON: {e}")))?;
    format_of(&first, key, what)?;
    Ok((first, lines))
}

/// Read `history.jsonl`'s text.
pub fn read(text: &str) -> Result<Saved, Bad> {
    let (first, lines) = opened(text, "bench_history", "bench history")?;
    let header: Header = serde_json::from_value(first).map_err(|e| bad(1, e.to_string()))?;
    let mut pending: BTreeMap<u64, (usize, Event)> = BTreeMap::new();
    let mut log = Vec::new();
    let mut last_index = None;
    let mut last_line = 1;
    let mut lines = lines.peekable();
    while let Some((n, line)) = lines.next() {
        last_line = n;
        // A journal's last line may be cut short where its coordinator was killed.
        if header.journal && lines.peek().is_none() && serde_json::from_str::<Value>(line).is_err()
        {
            break;
        }
        // The nemesis' lines: its switches of the store's faults, no client's operation.
        if line.contains("\"nemesis\"")
            && let Ok(nemesis) = serde_json::from_str::<NemesisEvent>(line)
            && nemesis.process == "nemesis"
        {
            if last_index.is_some_and(|l| nemesis.index <= l) {
                return Err(bad(
                    n,
                    format!(
                        "index {} after index {}",
                        nemesis.index,
                        last_index.unwrap_or(0)
                    ),
                ));
            }
            last_index = Some(nemesis.index);
            continue;
        }
        let e: Event = serde_json::from_str(line).map_err(|e| bad(n, e.to_string()))?;
        if last_index.is_some_and(|l| e.index <= l) {
            return Err(bad(
                n,
                format!("index {} after index {}", e.index, last_index.unwrap_or(0)),
            ));
        }
        last_index = Some(e.index);
        match e.kind.as_str() {
            "invoke" => {
                if let Some((m, _)) = pending.insert(e.process, (n, e)) {
                    return Err(bad(
                        n,
                        format!(
                            "an invocation on a process whose invocation of line {m} has not completed"
                        ),
                    ));
                }
            }
            "ok" | "fail" | "info" => {
                let Some((_, invoke)) = pending.remove(&e.process) else {
                    return Err(bad(
                        n,
                        format!(
                            "a completion on process {} with no invocation before it",
                            e.process
                        ),
                    ));
                };
                log.push(op(&header, &invoke, Some(&e)).map_err(|why| bad(n, why))?);
            }
            other => {
                return Err(bad(
                    n,
                    format!("type `{other}`; expected invoke, ok, fail or info"),
                ));
            }
        }
    }
    let unfinished = pending.len() as u64;
    for (_, (n, invoke)) in pending {
        log.push(op(&header, &invoke, None).map_err(|why| bad(n, why))?);
    }
    // A file cut short (a copy stopped midway, a full disk) is no history to judge: the
    // operations it lacks would read as anomalies or as never completed.
    if (log.len() as u64) < header.operations {
        return Err(bad(
            last_line,
            format!(
                "truncated: its header says {} operations, the file holds {} (it ends at line \
                 {last_line}); judge the whole file",
                header.operations,
                log.len()
            ),
        ));
    }
    Ok(Saved {
        header,
        log,
        unfinished,
    })
}

/// One operation of the log, from its invocation and its completion (`None`: its worker
/// died with it in flight: unknown).
fn op(h: &Header, invoke: &Event, done: Option<&Event>) -> Result<Op, String> {
    let at = |t: i64| (h.release_us as i64 + t.div_euclid(1000)).max(0) as u64;
    let end = done.map_or(invoke.time, |d| d.time);
    let (outcome, class) = match done.map(|d| d.kind.as_str()) {
        Some("ok") => (Outcome::Ok, None),
        Some("fail") => (Outcome::Failed, done.and_then(|d| d.error_class)),
        Some(_) => (
            done.and_then(|d| d.outcome).unwrap_or(Outcome::Unknown),
            done.and_then(|d| d.error_class),
        ),
        None => (Outcome::Unknown, Some(ErrorClass::Killed)),
    };
    let d = done.unwrap_or(invoke);
    let observed = match done {
        Some(d) => observed(&d.value, d.pages.clone())?,
        None => Observed::Nothing,
    };
    Ok(Op {
        client: invoke.client,
        role: invoke.role.map(|[a, b]| (a, b)),
        operation: invoke.f,
        attempt: Attempt {
            i: invoke.i,
            ms: d.ms.unwrap_or(0.0),
            read: invoke.read,
            warm: invoke.warm,
            entry: invoke.entry.clone(),
            property: invoke.property.clone().map(|[a, b]| (a, b)),
            at_us: (!invoke.untimed).then(|| [at(invoke.time), at(end)]),
            end_ms: d.end_ms,
            lag_ms: d.lag_ms,
            io: d.requests,
            path: None,
            class,
            err: match done {
                Some(d) => d.error.clone(),
                None => Some("invoked and never completed: its worker died with it".to_string()),
            },
            manifest: d.manifest,
            cpu: None,
            resent: done.and_then(|d| d.resent),
        },
        outcome,
        observed,
        landed: d.landed,
    })
}

/// The clock offsets a header keeps, as the checker reads them.
pub fn clocks(h: &Header) -> BTreeMap<u32, Offsets> {
    (h.clocks.iter())
        .filter_map(|(c, [go, done])| {
            Some((
                *c,
                Offsets {
                    go: unbound((*go)?),
                    done: done.map(unbound),
                },
            ))
        })
        .collect()
}

/// Read `versions.jsonl`'s text: the chain verification read.
pub fn read_versions(text: &str) -> Result<Chain, Bad> {
    let (first, lines) = opened(text, "bench_versions", "bench versions file")?;
    let mut chain = Chain {
        first: (first.get("first").and_then(Value::as_u64))
            .ok_or_else(|| bad(1, "no `first` (the version the copy began at)"))?,
        ..Chain::default()
    };
    for (n, line) in lines {
        let v: Version = serde_json::from_str(line).map_err(|e| bad(n, e.to_string()))?;
        chain.versions.push(v.version);
        if v.added.is_some() || v.removed.is_some() {
            chain.changes.push(Change {
                version: v.version,
                added: v.added.unwrap_or_default(),
                removed: v.removed.unwrap_or_default(),
            });
        }
    }
    Ok(chain)
}

/// A run for tests of what reads a history: writer 0 declares `ns_0$bench_d0_<k>` over
/// [10k, 10k + 5] ms (k < `n`), making version 11 + k; reader 1 lists ns_0 over [10k + 7,
/// 10k + 8] ms and sees #0 to #k.
pub fn sample_run(n: u64) -> Vec<Op> {
    use crate::oplog::sample;
    const DECLARE: Operation = Operation::DeclareTable;
    const LIST: Operation = Operation::ListTables { cold: false };
    let mut log = Vec::new();
    for k in 0..n {
        let t = 1_000_000 + k * 10_000;
        let mut w = sample(0, DECLARE, k, &format!("ns_0$bench_d0_{k}"), Outcome::Ok);
        w.attempt.at_us = Some([t, t + 5_000]);
        w.attempt.end_ms = Some((k * 10 + 5) as f64);
        w.attempt.manifest = Some(At {
            before: Some(10 + k),
            made: Some(11 + k),
            ..At::default()
        });
        let mut r = sample(1, LIST, k, "ns_0", Outcome::Ok);
        r.attempt.at_us = Some([t + 7_000, t + 8_000]);
        r.observed = Observed::Listed {
            seen: vec![Seen {
                writer: 0,
                runs: vec![[0, k + 1]],
            }],
            gone: None,
            twice: vec![],
            pages: vec![],
        };
        r.attempt.manifest = Some(At {
            served: Some(11 + k),
            ..At::default()
        });
        log.extend([w, r]);
    }
    log
}

#[cfg(test)]
mod tests {
    use super::check::{ANOMALIES, UNKNOWN, VALID, check, said};
    use super::*;

    fn chain_of(n: u64) -> Chain {
        Chain {
            first: 10,
            versions: (11..11 + n).collect(),
            changes: (0..n)
                .map(|k| Change {
                    version: 11 + k,
                    added: vec![format!("ns_0$bench_d0_{k}")],
                    removed: vec![],
                })
                .collect(),
        }
    }

    fn saved(log: &[Op], chain: &Chain) -> (String, String) {
        let clocks = BTreeMap::new();
        let run = Run {
            cell: "c",
            repetition: 1,
            arm: None,
            hosts: vec!["h".into()],
            clocks: &clocks,
            paused_us: &[],
            chain_versions: Some(chain.versions.len() as u64),
            nemesis: &[],
        };
        let (h, v) = write(log, &run, Some(chain));
        (h, v.unwrap())
    }

    fn judged(history: &str, versions: &str) -> check::Checked {
        let s = read(history).unwrap();
        check(&s, Some(&read_versions(versions).unwrap()))
    }

    /// A written history reads back as the same log, its events Jepsen's (an invocation
    /// before its completion on one process, indices in order), and `bench check` finds what
    /// the run's own checker found.
    #[test]
    fn a_history_reads_back_as_the_log_the_run_judged() {
        let log = sample_run(5);
        let (h, v) = saved(&log, &chain_of(5));
        let s = read(&h).unwrap();
        assert_eq!(s.log, log);
        assert_eq!(s.unfinished, 0);
        assert_eq!(read_versions(&v).unwrap(), chain_of(5));
        let lines: Vec<Value> = (h.lines().skip(1))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 20);
        assert_eq!(lines[0]["type"], "invoke");
        assert_eq!(lines[0]["time"], 0);
        assert_eq!(lines[1]["type"], "ok");
        assert_eq!(lines[1]["time"], 5_000_000);
        assert_eq!(lines[1]["manifest"]["made"], 11);
        let m = crate::measured::Measured {
            log: log.clone(),
            hosts: ["h".to_string()].into(),
            ..Default::default()
        };
        let c = judged(&h, &v);
        assert_eq!(c.consistency, m.consistency(Some(5)));
        assert_eq!(c.consistency.as_ref().unwrap().reads, 5);
        assert_eq!(c.outcomes, crate::audit::Outcomes::of(&log));
        assert_eq!((c.chain_error.clone(), c.status()), (None, VALID), "{c:?}");
        assert_eq!(said(&c).last().unwrap(), "valid");
    }

    /// A declaration answered with a conflict (sent once) whose entry landed all the same:
    /// failed but applied to bench, and in the history `info`, never `fail` (Jepsen's word
    /// for a write that took no effect), with bench's own outcome beside it; it reads back
    /// as the same log, and the list-append export gives it to a second judge as `info`.
    #[test]
    fn a_write_that_landed_is_never_written_as_failed() {
        let mut log = sample_run(3);
        let w = &mut log[2];
        (w.outcome, w.landed) = (Outcome::Failed, Some(true));
        w.attempt.class = Some(ErrorClass::Conflict);
        w.attempt.resent = Some(0);
        w.attempt.err = Some("a conflict".into());
        assert!(w.failed_but_applied());
        let (h, v) = saved(&log, &chain_of(3));
        let done: Value = (h.lines())
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|e| e["entry"] == "ns_0$bench_d0_1" && e["type"] != "invoke")
            .unwrap();
        assert_eq!(done["type"], "info", "{done}");
        assert_eq!(done["outcome"], "failed", "{done}");
        assert_eq!(done["resent"], 0, "{done}");
        assert!(!h.contains("\"type\":\"fail\""), "{h}");
        let s = read(&h).unwrap();
        assert_eq!(s.log, log);
        let c = judged(&h, &v);
        assert_eq!(c.outcomes.as_ref().unwrap().failed_but_applied, 1, "{c:?}");
        assert_eq!(c.status(), VALID, "{c:?}");
        let mut out = Vec::new();
        elle::export(&s.log, s.header.release_us, &mut out).unwrap();
        let txns: Vec<Value> = serde_json::from_slice(&out).unwrap();
        let appends: Vec<&str> = (txns.iter())
            .filter(|t| t["value"][0][0] == "append" && t["type"] != "invoke")
            .map(|t| t["type"].as_str().unwrap())
            .collect();
        assert_eq!(appends, ["ok", "info", "ok"]);
    }

    /// Edited by hand: a listing that misses an acknowledged declaration (a stale read), one
    /// that sees a table no one declared (a phantom), and a chain without one declaration's
    /// version (a lost write): each caught, with its witness named.
    #[test]
    fn planted_anomalies_are_caught_with_their_witness() {
        let (h, v) = saved(&sample_run(5), &chain_of(5));
        let edit = |from: &str, to: &str| {
            assert!(h.contains(from), "{from}");
            h.replacen(from, to, 1)
        };
        // The last listing sees #0 to #3, not #4 acknowledged 2 ms before it began.
        let stale = edit("\"runs\":[[0,5]]", "\"runs\":[[0,4]]");
        let c = judged(&stale, &v);
        assert_eq!(c.status(), ANOMALIES);
        let k = c.consistency.as_ref().unwrap();
        assert_eq!(k.stale_reads, 1, "{k:?}");
        let first = c.first_violation().unwrap();
        assert!(
            first.contains("client 1") && first.contains("#4"),
            "{first}"
        );
        // The first listing sees #7, which no one declared.
        let phantom = edit("\"runs\":[[0,1]]", "\"runs\":[[0,1],[7,8]]");
        let c = judged(&phantom, &v);
        assert_eq!(c.status(), ANOMALIES);
        assert!(c.consistency.as_ref().unwrap().phantoms > 0, "{c:?}");
        // v13 of the copy does not hold #2, acknowledged.
        let lost = v.replacen("\"added\":[\"ns_0$bench_d0_2\"]", "\"added\":[]", 1);
        assert_ne!(lost, v);
        let c = judged(&h, &lost);
        assert_eq!(c.status(), ANOMALIES);
        let e = c.chain_error.unwrap();
        assert!(
            e.contains("bench_d0_2") && e.contains("took effect, and no version of the copy"),
            "{e}"
        );
    }

    /// A declaration invoked and never completed (its worker died): unknown, and decided by
    /// the copy's chain where it was kept; without the chain, `bench check` says it cannot
    /// decide (exit 2).
    #[test]
    fn an_operation_never_completed_is_unknown_and_looked_up() {
        let log = sample_run(3);
        let (h, v) = saved(&log, &chain_of(3));
        // Drop the last declaration's completion (and the listing after it).
        let kept: Vec<&str> = h
            .lines()
            .filter(|l| {
                let completion = l.contains("\"type\":\"ok\"") && l.contains("bench_d0_2");
                let listing = l.contains("\"i\":2") && l.contains("list-tables");
                !(completion || listing)
            })
            .collect();
        // The listing was never run: the header counts the operations that were.
        let n = log.len();
        let cut = kept.join("\n").replacen(
            &format!("\"operations\":{n}"),
            &format!("\"operations\":{}", n - 1),
            1,
        );
        let s = read(&cut).unwrap();
        assert_eq!(s.unfinished, 1);
        let lost = s
            .log
            .iter()
            .find(|o| o.attempt.i == 2 && o.client == 0)
            .unwrap();
        assert_eq!(lost.outcome, Outcome::Unknown);
        let c = check(&s, Some(&read_versions(&v).unwrap()));
        assert_eq!(c.outcomes.as_ref().unwrap().unknown_landed, 1, "{c:?}");
        assert_eq!(c.status(), VALID, "{c:?}");
        let c = check(&s, None);
        assert_eq!(c.status(), UNKNOWN, "{c:?}");
        assert!(c.undecided[0].contains("#2"), "{:?}", c.undecided);
    }

    /// A malformed line is named by its number; a history of a newer format is refused with
    /// the format it needs.
    #[test]
    fn bad_input_is_named_by_its_line() {
        let (h, _) = saved(&sample_run(2), &chain_of(2));
        let mut lines: Vec<String> = h.lines().map(String::from).collect();
        lines[3] = "{\"index\": 2, \"type\": \"ok\"".to_string();
        let e = read(&lines.join("\n")).unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        let newer = h.replacen("\"bench_history\":1", "\"bench_history\":2", 1);
        let e = read(&newer).unwrap_err().to_string();
        assert!(e.contains("format 2") && e.contains("format 1"), "{e}");
        let e = read("{\"index\":0}\n").unwrap_err().to_string();
        assert!(e.contains("bench_history"), "{e}");
        assert_eq!(read("").unwrap_err().line, 0);
    }

    /// A client whose operation ended `info` goes on under a new process.
    #[test]
    fn a_client_goes_on_under_a_new_process_after_an_unknown_end() {
        let mut log = sample_run(3);
        log[2].outcome = Outcome::Unknown;
        log[2].attempt.class = Some(ErrorClass::Network);
        let processes: Vec<(u64, u64)> = events(&log, 1_000_000)
            .iter()
            .filter(|e| e.client == 0 && e.kind == "invoke")
            .map(|e| (e.i, e.process))
            .collect();
        assert_eq!(processes, [(0, 0), (1, 0), (2, 2)]);
    }

    /// The export for Elle: each declaration an append to its namespace's list of tables,
    /// each listing a read of that list in the version order; the commit order beside.
    #[test]
    fn the_export_is_list_append() {
        let log = sample_run(3);
        let mut text = Vec::new();
        let x = elle::export(&log, 1_000_000, &mut text).unwrap();
        let ops: Vec<Value> = serde_json::from_slice(&text).unwrap();
        assert_eq!((x.appends, x.reads), (3, 3));
        assert_eq!(ops.len(), 12);
        assert_eq!(ops[1]["value"], json!([["append", "ns_0/tables", 11]]));
        let last = &ops[11];
        assert_eq!(last["type"], "ok");
        assert_eq!(last["value"], json!([["r", "ns_0/tables", [11, 12, 13]]]));
        let order: BTreeMap<String, u64> = serde_json::from_str(&x.order).unwrap();
        assert_eq!(order.values().copied().collect::<Vec<_>>(), [11, 12, 13]);
    }
}
