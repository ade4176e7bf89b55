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

/// The effect a write names: an entry of `__manifest` created or removed.
pub(crate) fn catalog_effect(op: &Op) -> Option<(&str, i64)> {
    let id = op.entry.as_deref()?;
    match op.operation.describe().effect {
        Effect::CatalogRow => Some((id, 1)),
        Effect::CatalogRowGone => Some((id, -1)),
        Effect::TableVersion | Effect::TableProperty | Effect::Nothing => None,
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
pub fn catalog(before: &Ids, after: &Ids, log: &mut [Op]) -> Option<String> {
    for op in log.iter_mut().filter(|o| o.outcome != Outcome::Ok) {
        let Some((id, sign)) = catalog_effect(op) else {
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
        let Some((id, sign)) = catalog_effect(op) else {
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
pub fn table(
    log: &mut [Op],
    before: TableCounts,
    after: TableCounts,
    rows_per_commit: u64,
) -> Option<String> {
    // The shared table's commits: its appends, and its property updates (named `""`; a
    // role's update of a table of the golden's tree is not one).
    let commits = |o: &&mut Op| match o.operation.describe().effect {
        Effect::TableVersion => true,
        Effect::TableProperty => o.entry.as_deref() == Some(""),
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
pub fn properties(
    log: &mut [Op],
    holds: &BTreeMap<(String, String), Option<String>>,
) -> Option<String> {
    let mut by_key: BTreeMap<(String, String), Vec<&mut Op>> = BTreeMap::new();
    for op in log.iter_mut() {
        if let (Some(table), Some((key, _))) = (&op.entry, &op.property) {
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
        let value = |o: &Op| o.property.as_ref().map(|p| p.1.clone());
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
                        let why = op.class.map_or("unknown", |c| c.name());
                        o.first_unknown = Some(format!("{} ({why}): {resolved}", op.name()));
                    }
                }
            }
            if op.failed_but_applied() {
                o.failed_but_applied += 1;
                if o.first_failed_but_applied.is_none() {
                    let err = op.err.as_deref().unwrap_or("an error");
                    o.first_failed_but_applied = Some(format!("{}: {err}", op.name()));
                }
            }
        }
        (writes > 0).then_some(o)
    }
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

    /// A commit whose reply was lost and that landed, one that did not, and a refused drop
    /// whose entry is gone: each looked up and judged as it landed; the copy verifies.
    #[test]
    fn writes_that_did_not_succeed_are_looked_up_and_judged_as_they_landed() {
        let before = ids(&["ns_0", "table_1", "table_2"]);
        let after = ids(&["ns_0", "table_1", "bench_w0_0", "bench_w0_1"]);
        let mut drop = sample(1, Operation::DropTable, 0, "table_2", Outcome::Unknown);
        (drop.class, drop.err) = (Some(ErrorClass::Other), Some("403 AccessDenied".into()));
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
        nothing.entry = None;
        log.push(nothing);
        assert_eq!(catalog(&before, &before.clone(), &mut log), None);
        assert_eq!(log[1].landed, None);
        assert_eq!(Outcomes::of(&log[..1]), None, "no write, no outcomes");
    }

    fn update(value: &str, outcome: Outcome) -> Op {
        Op {
            property: Some(("bench_w0".into(), value.into())),
            ..sample(0, Operation::UpdateTableMetadata, 0, "", outcome)
        }
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
        let append = |o| Op {
            entry: None,
            ..sample(0, Operation::TableAppend, 0, "", o)
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
}
