//! The one verification rule, for every kind of cell (continuous, concurrent, mixed, roles,
//! table operations, a catalog bench did not make): every write of the operation log that
//! did not succeed and named what it changed is looked up in the copy and marked landed or
//! not (`Op::landed`); then the copy must equal what it started as plus every write that
//! took effect, exactly — each entry of `__manifest` as many times as expected (one grouped
//! count by id: a duplicate and a missing entry cannot cancel out), each removed entry gone,
//! each property at the value of the last update that took effect, the shared table's
//! versions and rows one per commit that took effect. A write answered with an error whose
//! effect is there is counted (`failed but applied`): a finding about the catalog, not a
//! failure of the cell.
//!
//! Pure: bench-lance reads the catalogs and tables, this module judges what they hold.

use std::collections::{BTreeMap, HashMap};

use crate::oplog::{Op, Outcome};
use crate::plan::Effect;
use crate::versions::{At, Chain, Change};

/// The entries of a `__manifest`: how many rows hold each object id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ids {
    counts: HashMap<String, u32>,
    rows: u64,
}

impl Ids {
    /// The ids of a `__manifest`'s rows, one per row.
    pub fn of<I: IntoIterator<Item = String>>(rows: I) -> Ids {
        let mut ids = Ids::default();
        for id in rows {
            ids.rows += 1;
            *ids.counts.entry(id).or_default() += 1;
        }
        ids
    }

    /// The rows that hold `id`.
    pub fn count(&self, id: &str) -> u32 {
        self.counts.get(id).copied().unwrap_or(0)
    }

    /// Every row.
    pub fn rows(&self) -> u64 {
        self.rows
    }
}

/// How a difference names the write behind it.
fn by(op: &Op) -> String {
    let how = match op.outcome {
        Outcome::Ok => "succeeded".to_string(),
        Outcome::Failed | Outcome::Unknown => format!("{}, looked up", op.outcome.name()),
    };
    format!("{}, {how}", op.name())
}

/// Look up every write of `log` on `__manifest` that did not succeed (in `before`, the
/// catalog the cell started from, and `after`, the copy after it) and mark it landed or
/// not; then hold `after` against `before` and every write that took effect. `None`: they
/// match; otherwise what differs, named (`__manifest holds 102 rows, expected 101: …`).
fn catalog(before: &Ids, after: &Ids, log: &mut [Op]) -> Option<String> {
    for op in log.iter_mut().filter(|o| o.outcome != Outcome::Ok) {
        let Some((id, sign)) = op.catalog_effect() else {
            continue;
        };
        let there = after.count(id) > 0;
        op.landed = Some(match sign > 0 {
            true => there && before.count(id) == 0,
            false => !there && before.count(id) > 0,
        });
    }
    // What the copy must hold: the catalog it started from, each entry once (a name is one
    // entry: one the cell started with in two rows is named too), plus what took effect.
    let mut expected: HashMap<&str, i64> = (before.counts.iter())
        .map(|(id, &n)| (id.as_str(), i64::from(n.min(1))))
        .collect();
    let mut named: HashMap<&str, &Op> = HashMap::new();
    for op in log.iter() {
        let Some((id, sign)) = op.catalog_effect() else {
            continue;
        };
        if op.took_effect() == Some(true) {
            *expected.entry(id).or_default() += sign;
        }
        named.entry(id).or_insert(op);
    }
    let mut diffs: Vec<(&str, i64, u32)> = Vec::new();
    for (&id, &want) in &expected {
        let have = after.count(id);
        if i64::from(have) != want {
            diffs.push((id, want, have));
        }
    }
    for (id, &have) in &after.counts {
        if !expected.contains_key(id.as_str()) {
            diffs.push((id, 0, have));
        }
    }
    if diffs.is_empty() {
        return None;
    }
    diffs.sort();
    let want: i64 = expected.values().sum();
    let said: Vec<String> = (diffs.iter().take(3))
        .map(|&(id, want, have)| {
            let was = before.count(id);
            difference(id, want, have, named.get(id).copied(), was)
        })
        .collect();
    let more = match diffs.len() {
        n if n > 3 => format!("; and {} more", n - 3),
        _ => String::new(),
    };
    Some(format!(
        "__manifest holds {} rows, expected {want}: {}{more}",
        after.rows(),
        said.join("; ")
    ))
}

/// One entry the copy holds otherwise than expected, and why it was expected so (`was`:
/// the rows that held it as the cell began).
fn difference(id: &str, want: i64, have: u32, op: Option<&Op>, was: u32) -> String {
    let held = match have {
        0 => "missing".to_string(),
        1 => "there".to_string(),
        n => format!("held {n} times"),
    };
    let why = match (op, want) {
        (Some(op), _) => by(op),
        (None, 0) => "which no operation created".to_string(),
        (None, _) if was > 1 => {
            format!("the catalog's own, in {was} rows as the cell began: a name is one entry")
        }
        (None, _) => "the catalog's own, which no operation removed".to_string(),
    };
    format!("{id} {held}, expected {} ({why})", want.max(0))
}

/// What the shared table held before a cell and holds after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableCounts {
    pub rows: u64,
    pub version: u64,
}

/// Hold the shared table against its commits in `log`: one version each, `rows_per_commit`
/// rows each append. Its commits that did not succeed cannot be told apart by what they left
/// (appends of the same rows): how many landed is the versions beyond the successful ones,
/// and each is marked only where that count decides it (all of them, or none).
fn table(
    log: &mut [Op],
    before: TableCounts,
    after: TableCounts,
    rows_per_commit: u64,
) -> Option<String> {
    // The shared table's commits: its appends, and its property updates (named `""`; a
    // role's update of a table of the golden's tree is not one).
    let commits = |o: &&mut Op| match o.operation.describe().effect {
        Effect::TableVersion => true,
        Effect::TableProperty => o.attempt.entry.as_deref() == Some(""),
        Effect::CatalogRow | Effect::CatalogRowGone | Effect::Nothing => false,
    };
    let rows_of = |o: &Op| match o.operation.describe().effect {
        Effect::TableVersion => rows_per_commit,
        Effect::TableProperty | Effect::CatalogRow | Effect::CatalogRowGone | Effect::Nothing => 0,
    };
    let mut ok = (0, 0);
    let mut maybe: Vec<&mut Op> = Vec::new();
    for op in log.iter_mut().filter(commits) {
        match op.outcome {
            Outcome::Ok => ok = (ok.0 + 1, ok.1 + rows_of(op)),
            Outcome::Failed | Outcome::Unknown => maybe.push(op),
        }
    }
    let (least, most) = (
        before.version + ok.0,
        before.version + ok.0 + maybe.len() as u64,
    );
    if after.version < least || after.version > most {
        let up_to = match maybe.len() {
            0 => String::new(),
            n => format!(" (up to {most} with the {n} that did not succeed)"),
        };
        return Some(format!(
            "the shared table is at version {}, expected {} + {} commits = {least}{up_to}",
            after.version, before.version, ok.0
        ));
    }
    let landed = after.version - least;
    let decided = match landed {
        0 => Some(false),
        n if n == maybe.len() as u64 => Some(true),
        _ => None,
    };
    let mut rows = before.rows + ok.1;
    for op in &mut maybe {
        op.landed = decided;
        if decided == Some(true) {
            rows += rows_of(op);
        }
    }
    // Where the count leaves which ones landed open, their rows are all the same size.
    let each = maybe.first().map_or(0, |o| rows_of(o));
    if decided.is_none() {
        rows += landed * each;
    }
    (after.rows != rows).then(|| {
        format!(
            "the shared table holds {} rows, expected {} + {} × {rows_per_commit} = {rows}",
            after.rows,
            before.rows,
            ok.0 + landed
        )
    })
}

/// Hold every property the log's updates set (by table, `""` the shared table, and key)
/// against what the tables hold (`holds`: by (table, key), the value found, if any; a key
/// not in it is not asked, e.g. of a table a write of the log removed). Each key is one
/// worker's, set in the order of its reports: the value must be the last successful
/// update's, or that of a later one that did not succeed (which then landed, and those
/// after it did not).
fn properties(
    log: &mut [Op],
    holds: &BTreeMap<(String, String), Option<String>>,
) -> Option<String> {
    let mut by_key: BTreeMap<(String, String), Vec<&mut Op>> = BTreeMap::new();
    for op in log.iter_mut() {
        if let (Some(table), Some((key, _))) = (&op.attempt.entry, &op.attempt.property) {
            let k = (table.clone(), key.clone());
            by_key.entry(k).or_default().push(op);
        }
    }
    let mut error = None;
    for ((table, key), mut updates) in by_key {
        let Some(found) = holds.get(&(table.clone(), key.clone())) else {
            continue;
        };
        let found = found.as_deref();
        let value = |o: &Op| o.attempt.property.as_ref().map(|p| p.1.clone());
        let last_ok = updates.iter().rposition(|o| o.outcome == Outcome::Ok);
        let from = last_ok.map_or(0, |i| i + 1);
        let shown = (updates[from..].iter())
            .rposition(|o| value(o).as_deref() == found)
            .map(|i| from + i);
        let want = last_ok.and_then(|i| value(updates[i]));
        let holds_ok = want.as_deref() == found;
        for (i, op) in updates.iter_mut().enumerate() {
            if op.outcome == Outcome::Ok {
                continue;
            }
            // One before the last success was overwritten by it, whether it landed or not.
            op.landed = match shown {
                _ if i < from => None,
                Some(s) if i == s => Some(true),
                Some(s) if i > s => Some(false),
                Some(_) => None,
                None => holds_ok.then_some(false),
            };
        }
        if shown.is_none() && !holds_ok && error.is_none() {
            let whose = match table.as_str() {
                "" => "the shared table's".to_string(),
                t => format!("table {t}'s"),
            };
            let quoted = |v: Option<&str>| v.map_or("absent".to_string(), |v| format!("`{v}`"));
            error = Some(format!(
                "{whose} property {key} is {}, expected {}, its last successful update's",
                quoted(found),
                quoted(want.as_deref()),
            ));
        }
    }
    error
}

/// What verification reads of a cell's copy besides its `__manifest`'s ids, as the cell's
/// log asks ([`Asks::of`]). bench-lance reads it all ([`Found`]); [`verify`] judges once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Asks {
    /// The copy's chain of versions (`None`: not read).
    pub chain: Option<ChainAsk>,
    /// Whether the versions of `__manifest` and of the shared table are read for a
    /// transaction file that is gone: where some write may have landed without its answer
    /// saying so (ended unknown, or failed where a failure may come after its effect) —
    /// elsewhere nothing is read, and nothing claimed.
    pub dangling: bool,
    /// The keys each table's properties are read for (`""`: the shared table): those the
    /// log's updates set.
    pub properties: BTreeMap<String, Vec<String>>,
}

/// The copy's chain of versions, as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainAsk {
    /// The version the copy began at (the golden's latest; 0 where there was none).
    pub first: u64,
    /// Held against the cell's commits ([`judge`]): a copy of bench's whose cell keeps a
    /// history.
    pub judged: bool,
    /// Read only within a budget of rows (no commit needs it to be placed).
    pub bounded: bool,
}

impl Asks {
    /// What to read of the copy for `log`; `first`: the version the copy began at, where
    /// the copy is bench's own.
    pub fn of(log: &[Op], first: Option<u64>) -> Asks {
        let wanted = chain_wanted(log);
        let judged = first.is_some() && keeps_history(log);
        let chain = (wanted || judged).then(|| ChainAsk {
            first: first.unwrap_or(0),
            judged,
            bounded: !wanted,
        });
        let dangling = (log.iter()).any(|op| {
            op.is_write()
                && match op.outcome {
                    Outcome::Unknown => true,
                    Outcome::Failed => op.operation.describe().fails_after_effect,
                    Outcome::Ok => false,
                }
        });
        let mut properties: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for o in log {
            if let (Some(table), Some((key, _))) = (&o.attempt.entry, &o.attempt.property) {
                let keys = properties.entry(table.clone()).or_default();
                if !keys.contains(key) {
                    keys.push(key.clone());
                }
            }
        }
        Asks {
            chain,
            dangling,
            properties,
        }
    }
}

/// What verification read of a cell's copy: each part as [`Asks`] asked it, or why it could
/// not be read.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The ids of the copy's `__manifest`.
    pub after: Ids,
    /// The shared table (cells of table operations).
    pub table: Option<Result<SharedTable, String>>,
    /// The copy's chain of versions (`Ok(None)`: beyond the budget, left unread).
    pub chain: Option<Result<Option<Chain>, String>>,
    /// Each finding of the transaction files looked for (a version whose file is gone).
    pub dangling: Vec<String>,
    /// What could not be checked, and why (the versions whose transaction files were to be
    /// looked for could not be read: a store whose HEADs give no length): said beside the
    /// verdict, never taken for a finding of the catalog's.
    pub unchecked: Vec<String>,
    /// Each table's properties by key, the value found if any (a table removed by a write
    /// that took effect is not held to them).
    pub properties: BTreeMap<String, Result<BTreeMap<String, Option<String>>, String>>,
}

/// The shared table before and after the cell, and where the catalog placed it.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedTable {
    pub before: TableCounts,
    pub after: TableCounts,
    pub rows_per_commit: u64,
    /// Where the catalog placed it, where that is outside the copy (`PATH, outside the
    /// cell's copy ROOT`).
    pub outside: Option<String>,
}

/// The verdict of one copy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    /// `None`: the copy holds what it should; otherwise what differs, named.
    pub error: Option<String>,
    /// The copy's versions after the cell's first held against the cell's commits.
    pub chain_checked: Option<u64>,
    /// What was asked and could not be checked, and why (`None`: everything asked was).
    pub unchecked: Option<String>,
}

/// Judge what was `found` of a copy against the cell's `log` and `before` (the ids of the
/// catalog the cell started from), once: each write that did not succeed marked landed or
/// not (the catalog's, the shared table's, the properties'); the catalog, the shared table,
/// the chain of versions (and the commits that named no version placed by it), the
/// transaction files and the properties held to what took effect.
pub fn verify(log: &mut [Op], before: &Ids, asks: &Asks, found: Found) -> Verdict {
    let mut error = catalog(before, &found.after, log);
    if let Some(t) = found.table {
        let e = match t {
            Err(e) => Some(e),
            Ok(t) => match t.outside {
                Some(at) => Some(format!("the shared table is at {at}")),
                None => table(log, t.before, t.after, t.rows_per_commit),
            },
        };
        error = error.or(e);
    }
    let mut chain_checked = None;
    match (found.chain, asks.chain) {
        (Some(Ok(Some(chain))), Some(ask)) => {
            if ask.judged {
                error = both(error, judge(log, &chain));
                chain_checked = Some(chain.versions.len() as u64);
            }
            place(log, &chain.changes);
        }
        (Some(Err(e)), _) => {
            let e = format!("cannot read the copy's versions of __manifest: {e}");
            error = both(error, Some(e));
        }
        _ => {}
    }
    for d in found.dangling {
        error = both(error, Some(d));
    }
    let removed: std::collections::HashSet<&str> = (log.iter())
        .filter(|o| o.operation.removes() && o.took_effect() != Some(false))
        .filter_map(|o| o.attempt.entry.as_deref())
        .collect();
    let mut holds = BTreeMap::new();
    let mut unread = None;
    for (t, read) in found.properties {
        if removed.contains(t.as_str()) {
            continue;
        }
        match read {
            Ok(values) => holds.extend(values.into_iter().map(|(k, v)| ((t.clone(), k), v))),
            Err(e) => unread = unread.or(Some(e)),
        }
    }
    let properties_error = match unread {
        Some(e) => Some(e),
        None => properties(log, &holds),
    };
    let unchecked = (!found.unchecked.is_empty()).then(|| found.unchecked.join("; "));
    Verdict {
        error: error.or(properties_error),
        chain_checked,
        unchecked,
    }
}

/// Two findings as one (either, or both said in turn).
fn both(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    }
}

/// How the writes of a cell ended and, for those that did not succeed, how they resolved.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcomes {
    /// Writes (the warm-up's included) that succeeded, that failed, and whose outcome was
    /// unknown (a timeout, a reply lost, a worker killed, an error after the effect).
    pub ok: u64,
    pub failed: u64,
    pub unknown: u64,
    /// Of the unknown ones: those the copy showed landed, and did not (the rest could not
    /// be told apart, e.g. one append to the shared table among several).
    pub unknown_landed: u64,
    pub unknown_not_landed: u64,
    /// Writes answered with a definite error (a refusal, not a reply lost) whose effect is
    /// in the catalog all the same, e.g. a `drop_table` whose file deletes were refused: a
    /// finding about the catalog (verification counts them as landed). A write whose reply
    /// was lost is `unknown` (Jepsen's `info`) and resolves `unknown_landed` or
    /// `unknown_not_landed`, never this.
    pub failed_but_applied: u64,
    /// The first unknown one, named with how it resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_unknown: Option<String>,
    /// The first one failed but applied, named with its error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failed_but_applied: Option<String>,
}

impl Outcomes {
    /// The writes of `log`, as resolved; `None` where it holds none.
    pub fn of(log: &[Op]) -> Option<Outcomes> {
        let mut o = Outcomes::default();
        let mut writes = 0;
        for op in log.iter().filter(|o| o.is_write()) {
            writes += 1;
            match op.outcome {
                Outcome::Ok => o.ok += 1,
                Outcome::Failed => o.failed += 1,
                Outcome::Unknown => {
                    o.unknown += 1;
                    o.unknown_landed += u64::from(op.landed == Some(true));
                    o.unknown_not_landed += u64::from(op.landed == Some(false));
                    if o.first_unknown.is_none() {
                        let resolved = match op.landed {
                            Some(true) => "landed",
                            Some(false) => "did not land",
                            None => "not told apart",
                        };
                        let mut why = op.attempt.class.map_or("unknown", |c| c.name()).to_string();
                        if op.possibly_resent() {
                            why.push_str(", possibly an answer to its own resend");
                        }
                        o.first_unknown = Some(format!("{} ({why}): {resolved}", op.name()));
                    }
                }
            }
            if op.failed_but_applied() {
                o.failed_but_applied += 1;
                if o.first_failed_but_applied.is_none() {
                    let err = op.attempt.err.as_deref().unwrap_or("an error");
                    o.first_failed_but_applied = Some(format!("{}: {err}", op.name()));
                }
            }
        }
        (writes > 0).then_some(o)
    }
}

/// The entry a commit of the catalog adds (`true`) or removes, if it is one.
fn effect(op: &Op) -> Option<(&str, bool)> {
    op.catalog_effect().map(|(id, sign)| (id, sign > 0))
}

/// Whether some commit of the catalog in `log` kept its times (a cell with a history): where
/// the copy's chain of versions is held against the commits ([`judge`]).
fn keeps_history(log: &[Op]) -> bool {
    log.iter().any(timed_commit)
}

/// A commit of the catalog that kept its times.
fn timed_commit(o: &Op) -> bool {
    o.attempt.at_us.is_some() && effect(o).is_some()
}

/// Whether some commit of a cell that keeps a history (its operations on the clock) has no
/// version its requests named: where the copy's chain of versions is worth reading.
fn chain_wanted(log: &[Op]) -> bool {
    (log.iter()).any(|o| {
        timed_commit(o)
            && o.took_effect() != Some(false)
            && o.attempt.manifest.is_none_or(|m| m.made.is_none())
    })
}

/// Give each commit of the catalog in `log` whose requests named no version the version of
/// `chain` (the copy's versions after the cell's first, each against the one before) that
/// made its effect: the version that added its entry (a creation) or removed it (a removal)
/// — a reply lost, a worker killed, a client through REST included. Returns how many were
/// placed.
fn place(log: &mut [Op], chain: &[Change]) -> u64 {
    use std::collections::HashMap;
    let mut at: HashMap<(String, bool), Vec<u64>> = HashMap::new();
    for c in chain {
        for id in &c.added {
            at.entry((id.clone(), true)).or_default().push(c.version);
        }
        for id in &c.removed {
            at.entry((id.clone(), false)).or_default().push(c.version);
        }
    }
    let mut placed = 0;
    for op in log.iter_mut() {
        if op.attempt.manifest.is_some_and(|m| m.made.is_some()) {
            continue;
        }
        let key = effect(op).map(|(id, added)| (id.to_string(), added));
        let Some(v) = key.and_then(|k| at.get_mut(&k)).and_then(|vs| {
            // Each version is one commit's: the first not yet given to another.
            (!vs.is_empty()).then(|| vs.remove(0))
        }) else {
            continue;
        };
        op.attempt.manifest.get_or_insert_with(At::default).made = Some(v);
        placed += 1;
    }
    placed
}

/// Why the copy's `__manifest` could not be read (`err`), in words: where a file of it is
/// gone, the version that names it (`latest`, the copy's latest as its listing shows it)
/// and the last write before it whose outcome bench could not see (the one that most
/// likely made that version: lance deleted the files of a commit that landed).
pub fn unreadable(err: &str, latest: Option<u64>, log: &[Op]) -> String {
    let Some(file) = (crate::stuck::names_a_gone_file(err))
        .then(|| crate::stuck::gone_file(err))
        .flatten()
    else {
        return format!("cannot read the cell's __manifest: {err}");
    };
    let version = latest.map_or("the catalog's latest version".to_string(), |v| {
        format!("the catalog's latest version, v{v},")
    });
    // The first of the writes that did not succeed at the log's end (every write after it
    // failed too: the one most likely to have made that version), else the last whose
    // outcome bench could not see (a lost reply, a timeout), else the last that failed; and
    // how many writes after it failed.
    let writes: Vec<&Op> = log
        .iter()
        .filter(|o| o.is_write() && !o.attempt.warm)
        .collect();
    let tail = (writes.iter().rposition(|o| o.outcome == Outcome::Ok)).map_or(0, |k| k + 1);
    let at = (tail < writes.len())
        .then_some(tail)
        .or_else(|| writes.iter().rposition(|o| o.outcome == Outcome::Unknown))
        .or_else(|| writes.iter().rposition(|o| o.outcome != Outcome::Ok));
    let before = at.map_or(String::new(), |k| {
        let o = writes[k];
        let after = writes[k + 1..]
            .iter()
            .filter(|o| o.outcome != Outcome::Ok)
            .count();
        format!(
            "; the write before it whose outcome was not ok: {} ({}, {}), and {after} failed \
             after it",
            o.name(),
            o.outcome.name(),
            o.attempt.class.map_or("", |c| c.name())
        )
    });
    format!("{version} names {file}, which is gone: every read of __manifest fails{before}")
}

/// The copy's `chain` held against the commits of `log` as verification holds it
/// ([`judge`]), for a saved history judged again (`bench check`): `None` where they agree.
pub fn chain_findings(log: &[Op], chain: &Chain) -> Option<String> {
    judge(log, chain)
}

/// Hold the copy's chain of versions against the cell's commits in `log` (before
/// [`place`]): every version after the cell's first is there (none missing but where a
/// cleanup of the cell removed it); every entry a version added or removed is the effect of
/// one commit of the cell that took effect, and each such commit's effect is in exactly one
/// version; a commit whose own request named the version it made finds its effect in that
/// version. Versions that changed no entry (a property's update, an index's) pass. `None`:
/// all hold; otherwise the first disagreement named, and how many there were.
fn judge(log: &[Op], chain: &Chain) -> Option<String> {
    use std::collections::HashMap;
    let mut found: Vec<String> = Vec::new();
    let cleaned = (log.iter()).any(|o| o.operation == crate::plan::Operation::CleanupVersions);
    let mut expect = chain.first + 1;
    for &v in &chain.versions {
        if v > expect && !cleaned {
            found.push(match v - 1 == expect {
                true => format!(
                    "v{expect} of the copy is missing, and no cleanup of the cell removed it"
                ),
                false => format!(
                    "v{expect}–v{} of the copy are missing, and no cleanup of the cell removed \
                     them",
                    v - 1
                ),
            });
        }
        expect = expect.max(v + 1);
    }
    // Each effect of the cell's commits that took effect, by (entry, added).
    let mut effects: HashMap<(&str, bool), Vec<&Op>> = HashMap::new();
    for op in log.iter().filter(|o| o.took_effect() == Some(true)) {
        if let Some((id, added)) = effect(op) {
            effects.entry((id, added)).or_default().push(op);
        }
    }
    let mut made: HashMap<u64, Vec<(&str, bool)>> = HashMap::new();
    for c in &chain.changes {
        let changed =
            (c.added.iter().map(|id| (id, true))).chain(c.removed.iter().map(|id| (id, false)));
        for (id, added) in changed {
            made.entry(c.version).or_default().push((id, added));
            let ops = effects.get_mut(&(id.as_str(), added));
            if ops.is_none_or(|o| o.pop().is_none()) {
                found.push(format!(
                    "v{} {} {id}, which no commit of the cell that took effect did",
                    c.version,
                    if added { "added" } else { "removed" }
                ));
            }
        }
    }
    // Where a cleanup removed versions, effects in them are not there to find.
    if !cleaned {
        let mut left: Vec<&Op> = effects.into_values().flatten().collect();
        left.sort_by_key(|o| (o.client, o.attempt.i));
        for op in left {
            found.push(format!(
                "{} took effect, and no version of the copy made it",
                op.name()
            ));
        }
    }
    let read: std::collections::HashSet<u64> = chain.changes.iter().map(|c| c.version).collect();
    for op in log.iter().filter(|o| o.took_effect() == Some(true)) {
        let (Some((id, added)), Some(v)) = (effect(op), op.attempt.manifest.and_then(|m| m.made))
        else {
            continue;
        };
        if read.contains(&v) && !made.get(&v).is_some_and(|m| m.contains(&(id, added))) {
            found.push(format!(
                "{} named v{v} as the version it made, and v{v} of the copy did not {} {id}",
                op.name(),
                if added { "add" } else { "remove" }
            ));
        }
    }
    let first = found.first()?;
    Some(match found.len() {
        1 => format!("the copy's chain of versions: {first}"),
        n => format!(
            "the copy's chain of versions: {first} (and {} more)",
            crate::plan::count(n as u64 - 1, "disagreement", "disagreements")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oplog::{ErrorClass, sample};
    use crate::plan::Operation;

    fn ids(v: &[&str]) -> Ids {
        Ids::of(v.iter().map(|s| s.to_string()))
    }

    const CREATE: Operation = Operation::CreateNamespace;

    /// A `__manifest` whose latest version names a file that is gone: the version, the file
    /// and the write whose outcome bench could not see before it, named; any other error as
    /// it came.
    #[test]
    fn an_unreadable_catalog_names_its_version_its_file_and_the_write_before() {
        let log = vec![
            sample(0, CREATE, 0, "bench_w0_0", Outcome::Ok),
            sample(0, CREATE, 1, "bench_w0_1", Outcome::Unknown),
            sample(0, CREATE, 2, "bench_w0_2", Outcome::Failed),
        ];
        let err = "Failed to count rows: NotFound { uri: \"r/__manifest/data/01.lance\", x }";
        assert_eq!(
            unreadable(err, Some(5), &log),
            "the catalog's latest version, v5, names __manifest/data/01.lance, which is gone: \
             every read of __manifest fails; the write before it whose outcome was not ok: \
             worker 0's write-create-namespace #1 (bench_w0_1) (unknown, network), and 1 \
             failed after it"
        );
        // Every write after it unknown too (errors that say nothing of the effect): still
        // the first of them, after the last that succeeded.
        let mut later = log.clone();
        let mut w = sample(0, CREATE, 3, "bench_w0_3", Outcome::Unknown);
        w.attempt.class = Some(ErrorClass::Other);
        later[2] = w;
        assert!(
            unreadable(err, Some(5), &later)
                .ends_with("#1 (bench_w0_1) (unknown, network), and 1 failed after it")
        );
        for other in ["connection refused", "Not found: /r/__manifest/_versions"] {
            assert_eq!(
                unreadable(other, None, &log),
                format!("cannot read the cell's __manifest: {other}")
            );
        }
    }

    /// A commit whose reply was lost and that landed, one that did not, and a refused drop
    /// whose entry is gone: each looked up and judged as it landed; the copy verifies.
    #[test]
    fn writes_that_did_not_succeed_are_looked_up_and_judged_as_they_landed() {
        let before = ids(&["ns_0", "table_1", "table_2"]);
        let after = ids(&["ns_0", "table_1", "bench_w0_0", "bench_w0_1"]);
        let mut drop = sample(1, Operation::DropTable, 0, "table_2", Outcome::Unknown);
        (drop.attempt.class, drop.attempt.err) =
            (Some(ErrorClass::Refused), Some("403 AccessDenied".into()));
        let mut log = vec![
            sample(0, CREATE, 0, "bench_w0_0", Outcome::Ok),
            sample(0, CREATE, 1, "bench_w0_1", Outcome::Unknown),
            sample(0, CREATE, 2, "bench_w0_2", Outcome::Unknown),
            // A conflict that did not land, and one of a removal.
            sample(0, CREATE, 3, "bench_w0_3", Outcome::Failed),
            sample(1, Operation::DropTable, 1, "table_1", Outcome::Failed),
            drop,
        ];
        assert_eq!(catalog(&before, &after, &mut log), None);
        let landed: Vec<_> = log.iter().map(|o| o.landed).collect();
        assert_eq!(
            landed,
            [
                None,
                Some(true),
                Some(false),
                Some(false),
                Some(false),
                Some(true)
            ]
        );
        let o = Outcomes::of(&log).unwrap();
        assert_eq!((o.ok, o.failed, o.unknown), (1, 2, 3));
        assert_eq!((o.unknown_landed, o.unknown_not_landed), (2, 1));
        // The lost reply (a network error: the catalog never said it failed) is unknown,
        // resolved landed; only the refused drop was answered with an error and applied.
        assert_eq!(o.failed_but_applied, 1);
        assert!(
            (o.first_unknown.unwrap())
                .starts_with("worker 0's write-create-namespace #1 (bench_w0_1) (network): landed"),
        );
        assert!(
            (o.first_failed_but_applied.unwrap())
                .contains("write-drop-table #0 (table_2): 403 AccessDenied"),
        );
    }

    /// A creation answered with a conflict after its client resent a request of it: unknown,
    /// named as possibly an answer to its own resend, and looked up; landed, it is not
    /// failed but applied.
    #[test]
    fn a_conflict_after_a_resend_is_unknown_and_named_so() {
        let before = ids(&["ns_0"]);
        let after = ids(&["ns_0", "bench_w0_0"]);
        let mut op = sample(0, CREATE, 0, "bench_w0_0", Outcome::Failed);
        op.attempt.resent = Some(2);
        op.outcome = Outcome::of(CREATE, op.attempt.class, op.attempt.resent);
        assert_eq!(op.outcome, Outcome::Unknown);
        let mut log = vec![op];
        assert_eq!(catalog(&before, &after, &mut log), None);
        let o = Outcomes::of(&log).unwrap();
        assert_eq!((o.unknown_landed, o.failed_but_applied), (1, 0));
        let first = o.first_unknown.unwrap();
        assert!(
            first.contains("(conflict, possibly an answer to its own resend): landed"),
            "{first}"
        );
    }

    /// Exactly once: a catalog that began with an entry in two rows (a golden with a row
    /// duplicated) does not verify, whatever the cell did, and says it was so from the start.
    #[test]
    fn an_entry_the_cell_began_with_in_two_rows_is_named() {
        let before = ids(&["ns_0", "table_1", "table_1"]);
        let after = ids(&["ns_0", "table_1", "table_1", "bench_w0_0"]);
        let mut log = vec![sample(0, CREATE, 0, "bench_w0_0", Outcome::Ok)];
        assert_eq!(
            catalog(&before, &after, &mut log).as_deref(),
            Some(
                "__manifest holds 4 rows, expected 3: table_1 held 2 times, expected 1 (the \
                 catalog's own, in 2 rows as the cell began: a name is one entry)"
            )
        );
        assert_eq!(catalog(&ids(&["ns_0"]), &ids(&["ns_0"]), &mut []), None);
    }

    /// A duplicated id and a missing one cannot cancel out: both are named, with the write
    /// behind each.
    #[test]
    fn a_duplicate_and_a_missing_entry_are_both_named() {
        let before = ids(&["ns_0"]);
        let after = ids(&["ns_0", "bench_w0_0", "bench_w0_0"]);
        let mut log = vec![
            sample(0, CREATE, 0, "bench_w0_0", Outcome::Ok),
            sample(0, CREATE, 1, "bench_w0_1", Outcome::Ok),
        ];
        let err = catalog(&before, &after, &mut log).unwrap();
        assert_eq!(
            err,
            "__manifest holds 3 rows, expected 3: bench_w0_0 held 2 times, expected 1 (worker \
             0's write-create-namespace #0 (bench_w0_0), succeeded); bench_w0_1 missing, \
             expected 1 (worker 0's write-create-namespace #1 (bench_w0_1), succeeded)"
        );
        // An entry no one made, a golden entry no one removed, a removal that left it.
        let before = ids(&["ns_0", "table_1"]);
        let after = ids(&["table_1", "stray"]);
        let mut log = vec![sample(0, Operation::DropTable, 0, "table_1", Outcome::Ok)];
        let err = catalog(&before, &after, &mut log).unwrap();
        assert!(
            err.starts_with("__manifest holds 2 rows, expected 1: "),
            "{err}"
        );
        for said in [
            "ns_0 missing, expected 1 (the catalog's own, which no operation removed)",
            "stray there, expected 0 (which no operation created)",
            "table_1 there, expected 0 (worker 0's write-drop-table #0 (table_1), succeeded)",
        ] {
            assert!(err.contains(said), "{said}: {err}");
        }
    }

    /// Reads leave the catalog as it was; a write that named nothing is not looked up.
    #[test]
    fn a_cell_of_reads_leaves_the_catalog_as_it_was() {
        let before = ids(&["ns_0", "table_1"]);
        let mut log = vec![sample(
            0,
            Operation::DescribeTable { cold: false },
            0,
            "table_1",
            Outcome::Ok,
        )];
        let mut nothing = sample(0, Operation::DropTable, 1, "", Outcome::Failed);
        nothing.attempt.entry = None;
        log.push(nothing);
        assert_eq!(catalog(&before, &before.clone(), &mut log), None);
        assert_eq!(log[1].landed, None);
        assert_eq!(Outcomes::of(&log[..1]), None, "no write, no outcomes");
    }

    /// What a log asks of its copy: the transaction files only where some write may have
    /// landed unanswered (an unknown one, or a failure that may come after its effect, not
    /// a conflict), the properties its updates set, table by table.
    #[test]
    fn a_log_asks_what_its_judge_needs() {
        let ok = sample(0, CREATE, 0, "a", Outcome::Ok);
        let conflict = sample(0, CREATE, 1, "b", Outcome::Failed);
        assert_eq!(Asks::of(&[ok.clone(), conflict], None), Asks::default());
        let lost = sample(0, CREATE, 2, "c", Outcome::Unknown);
        assert!(Asks::of(&[ok.clone(), lost], None).dangling);
        let refused = sample(0, Operation::DropTable, 3, "t", Outcome::Failed);
        assert!(Asks::of(&[refused], None).dangling);
        let asks = Asks::of(
            &[update("1", Outcome::Ok), update("2", Outcome::Unknown)],
            None,
        );
        assert_eq!(
            asks.properties,
            [("".to_string(), vec!["bench_w0".to_string()])].into()
        );
    }

    /// One judgement of everything read: the catalog, the shared table where the catalog
    /// placed it, the properties of the tables that stand (a removed table's read failing is
    /// no finding; a standing one's is).
    #[test]
    fn what_was_found_is_judged_once_in_full() {
        let before = ids(&["x"]);
        let mut log = vec![sample(0, CREATE, 0, "a", Outcome::Ok)];
        let asks = Asks::of(&log, None);
        let found = |after: &[&str]| Found {
            after: ids(after),
            ..Found::default()
        };
        assert_eq!(
            verify(&mut log, &before, &asks, found(&["x", "a"])),
            Verdict::default()
        );
        let v = verify(&mut log, &before, &asks, found(&["x"]));
        assert!(v.error.unwrap().contains("expected"));
        let counts = |rows, version| TableCounts { rows, version };
        let placed = |outside: Option<&str>| Found {
            table: Some(Ok(SharedTable {
                before: counts(0, 1),
                after: counts(0, 1),
                rows_per_commit: 0,
                outside: outside.map(str::to_string),
            })),
            ..found(&["x", "a"])
        };
        assert_eq!(verify(&mut log, &before, &asks, placed(None)).error, None);
        let v = verify(
            &mut log,
            &before,
            &asks,
            placed(Some("/elsewhere, outside the cell's copy /c")),
        );
        assert_eq!(
            v.error.as_deref(),
            Some("the shared table is at /elsewhere, outside the cell's copy /c")
        );
        let mut drop = sample(0, Operation::DropTable, 1, "t", Outcome::Ok);
        drop.attempt.entry = Some("t".into());
        let mut log = vec![drop];
        let unread = |t: &str| Found {
            properties: [(t.to_string(), Err(format!("cannot read table {t}")))].into(),
            ..found(&["x"])
        };
        let before = ids(&["x", "t"]);
        assert_eq!(verify(&mut log, &before, &asks, unread("t")).error, None);
        let v = verify(&mut log, &before, &asks, unread("u"));
        assert_eq!(v.error.as_deref(), Some("cannot read table u"));
    }

    /// A check asked and not made (the versions whose transaction files were to be looked
    /// for could not be read) is said beside the verdict, and fails nothing; a transaction
    /// file found gone does.
    #[test]
    fn what_could_not_be_checked_is_said_and_is_no_finding() {
        let before = ids(&["x"]);
        let mut log = vec![sample(0, CREATE, 0, "a", Outcome::Unknown)];
        let asks = Asks::of(&log, None);
        assert!(asks.dangling);
        let why = "the transaction files of __manifest were not looked for: cannot read its \
                   versions: Range started at 0 and ended at 0";
        let found = |dangling: &[&str], unchecked: &[&str]| Found {
            after: ids(&["x", "a"]),
            dangling: dangling.iter().map(|d| d.to_string()).collect(),
            unchecked: unchecked.iter().map(|u| u.to_string()).collect(),
            ..Found::default()
        };
        let v = verify(&mut log, &before, &asks, found(&[], &[why]));
        assert_eq!(v.error, None, "landed, and nothing found wrong");
        assert_eq!(v.unchecked.as_deref(), Some(why));
        assert_eq!(log[0].landed, Some(true));
        let gone = "1 version(s) of __manifest name a transaction file that is gone";
        let v = verify(&mut log, &before, &asks, found(&[gone], &[]));
        assert_eq!((v.error.as_deref(), v.unchecked), (Some(gone), None));
    }

    fn update(value: &str, outcome: Outcome) -> Op {
        let mut o = sample(0, Operation::UpdateTableMetadata, 0, "", outcome);
        o.attempt.property = Some(("bench_w0".into(), value.into()));
        o
    }

    #[test]
    fn a_property_holds_its_last_successful_update_or_a_later_one_that_landed() {
        let holds = |v: Option<&str>| -> BTreeMap<(String, String), Option<String>> {
            [(("".into(), "bench_w0".into()), v.map(str::to_string))].into()
        };
        let mut log = vec![
            update("warm0", Outcome::Ok),
            update("0", Outcome::Unknown),
            update("1", Outcome::Ok),
            update("2", Outcome::Unknown),
            update("3", Outcome::Unknown),
        ];
        assert_eq!(properties(&mut log, &holds(Some("1"))), None);
        let landed: Vec<_> = log.iter().map(|o| o.landed).collect();
        assert_eq!(landed, [None, None, None, Some(false), Some(false)]);
        assert_eq!(properties(&mut log, &holds(Some("2"))), None);
        let landed: Vec<_> = log.iter().map(|o| o.landed).collect();
        assert_eq!(landed, [None, None, None, Some(true), Some(false)]);
        let err = properties(&mut log, &holds(Some("0"))).unwrap();
        assert_eq!(
            err,
            "the shared table's property bench_w0 is `0`, expected `1`, its last successful \
             update's"
        );
        assert!(properties(&mut log, &holds(None)).is_some());
    }

    #[test]
    fn the_shared_table_holds_one_version_per_commit_that_took_effect() {
        let append = |o| {
            let mut o = sample(0, Operation::TableAppend, 0, "", o);
            o.attempt.entry = None;
            o
        };
        let before = TableCounts {
            rows: 10,
            version: 2,
        };
        let at = |version, rows| TableCounts { rows, version };
        let mut log = vec![
            append(Outcome::Ok),
            append(Outcome::Unknown),
            append(Outcome::Ok),
        ];
        assert_eq!(table(&mut log, before, at(5, 40), 10), None);
        assert_eq!(log[1].landed, Some(true));
        assert_eq!(table(&mut log, before, at(4, 30), 10), None);
        assert_eq!(log[1].landed, Some(false));
        let err = table(&mut log, before, at(6, 50), 10).unwrap();
        assert!(
            err.contains("version 6, expected 2 + 2 commits = 4 (up to 5 with the 1"),
            "{err}"
        );
        let err = table(&mut log, before, at(4, 31), 10).unwrap();
        assert_eq!(
            err,
            "the shared table holds 31 rows, expected 10 + 2 × 10 = 30"
        );
        // Two unknown, one landed: which one is not told apart.
        log.push(append(Outcome::Unknown));
        assert_eq!(table(&mut log, before, at(5, 40), 10), None);
        assert_eq!((log[1].landed, log[3].landed), (None, None));
    }

    /// Through REST, or with a reply lost, a commit's requests name no version: the copy's
    /// chain gives it the version that added (or removed) its entry.
    #[test]
    fn the_copy_s_chain_places_commits_whose_requests_named_no_version() {
        let op = |client, operation, entry: &str, made: Option<u64>| {
            let mut o = sample(client, operation, 0, entry, Outcome::Ok);
            o.attempt.at_us = Some([0, 1]);
            o.attempt.manifest = made.map(|v| At {
                made: Some(v),
                ..At::default()
            });
            o
        };
        let mut log = vec![
            op(0, Operation::DeclareTable, "ns_0$bench_d0_0", None),
            op(0, Operation::DropTable, "ns_0$table_3", None),
            op(1, Operation::DeclareTable, "ns_0$bench_d1_0", Some(12)),
            op(1, Operation::ListTables { cold: false }, "ns_0", None),
        ];
        assert!(chain_wanted(&log));
        let chain = [
            Change {
                version: 11,
                added: vec!["ns_0$bench_d0_0".into()],
                removed: vec![],
            },
            Change {
                version: 12,
                added: vec!["ns_0$bench_d1_0".into()],
                removed: vec![],
            },
            Change {
                version: 13,
                added: vec![],
                removed: vec!["ns_0$table_3".into()],
            },
        ];
        assert_eq!(place(&mut log, &chain), 2);
        let made: Vec<Option<u64>> = log
            .iter()
            .map(|o| o.attempt.manifest.and_then(|m| m.made))
            .collect();
        assert_eq!(made, [Some(11), Some(13), Some(12), None]);
        assert!(!chain_wanted(&log));
    }

    /// The chain held against the cell's commits: all agree; then each kind of
    /// disagreement named — a version missing, an entry no commit made, a commit no version
    /// made, a commit whose named version holds another's effect.
    #[test]
    fn the_copy_s_chain_is_held_against_the_cell_s_commits() {
        let op = |client, operation, entry: &str, made: Option<u64>| {
            let mut o = sample(client, operation, 0, entry, Outcome::Ok);
            o.attempt.manifest = made.map(|v| At {
                made: Some(v),
                ..At::default()
            });
            o
        };
        let change = |version, added: &[&str], removed: &[&str]| Change {
            version,
            added: added.iter().map(|s| s.to_string()).collect(),
            removed: removed.iter().map(|s| s.to_string()).collect(),
        };
        let log = vec![
            op(0, Operation::DeclareTable, "ns_0$bench_d0_0", Some(11)),
            op(0, Operation::DropTable, "ns_0$table_3", None),
            op(1, Operation::ListTables { cold: false }, "ns_0", None),
        ];
        let chain = |versions: &[u64], changes| Chain {
            first: 10,
            versions: versions.to_vec(),
            changes,
        };
        let good = vec![
            change(11, &["ns_0$bench_d0_0"], &[]),
            // An index's or a property's version changes no entry.
            change(12, &[], &[]),
            change(13, &[], &["ns_0$table_3"]),
        ];
        assert_eq!(judge(&log, &chain(&[11, 12, 13], good.clone())), None);
        let said = |versions: &[u64], changes| judge(&log, &chain(versions, changes)).unwrap();
        assert_eq!(
            said(&[11, 13], vec![good[0].clone(), good[2].clone()]),
            "the copy's chain of versions: v12 of the copy is missing, and no cleanup of the \
             cell removed it"
        );
        let mut extra = good.clone();
        extra[1].added.push("ns_0$stray".into());
        assert_eq!(
            said(&[11, 12, 13], extra),
            "the copy's chain of versions: v12 added ns_0$stray, which no commit of the cell \
             that took effect did"
        );
        assert_eq!(
            said(&[11, 12, 13], good[..2].to_vec()),
            "the copy's chain of versions: worker 0's write-drop-table #0 (ns_0$table_3) took \
             effect, and no version of the copy made it"
        );
        let swapped = vec![
            change(11, &[], &["ns_0$table_3"]),
            change(12, &["ns_0$bench_d0_0"], &[]),
        ];
        assert_eq!(
            said(&[11, 12], swapped),
            "the copy's chain of versions: worker 0's write-declare-table #0 (ns_0$bench_d0_0) \
             named v11 as the version it made, and v11 of the copy did not add ns_0$bench_d0_0"
        );
    }
}
