//! A saved history as Elle's list-append workload, for a checker no one here wrote (Jepsen's
//! Elle through elle-cli, or adya): each kind of entry of each namespace (its tables, its
//! child namespaces) is one list, named `<namespace>/tables` or `<namespace>/namespaces`;
//! each creation appends one element to its parent's list; each listing (in one page) reads
//! its namespace's list, its elements in the order of the `__manifest` versions that added
//! them. An element is the version that added its entry, unique in its list; where that
//! version is not known, `2^62 + writer·2^32 + index` (the creation's writer and index); a
//! listing that saw an entry no creation made reads `2^63 + writer·2^32 + index`, which no
//! append wrote. The commit order goes beside it, as adya's `--transaction-order` takes it:
//! each creation's completion index to the version it made.
//!
//! What list-append cannot say is left out and checked by bench alone: removals (a list is
//! only appended to), listings in pages (each page a snapshot of its own), look-ups of one
//! entry, the shared table's versions, cleanups, and the warm-up.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use crate::oplog::{Observed, Op, Outcome, Seen, created_index, parent};
use crate::plan::{Entry, Names};

/// The list a creation appends to or a listing reads.
fn key(namespace: &str, tables: bool) -> String {
    format!(
        "{namespace}/{}",
        if tables { "tables" } else { "namespaces" }
    )
}

/// What the export wrote, and what it left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exported {
    /// `{"<completion index>": version}` of each creation whose version is known.
    pub order: String,
    pub appends: u64,
    pub reads: u64,
    /// Operations of the history list-append cannot express, by why.
    pub left_out: BTreeMap<&'static str, u64>,
}

/// Why an operation of the log has no place in a list-append history (`None`: it has one).
fn left_out(o: &Op) -> Option<&'static str> {
    match o.operation.describe().names {
        Names::Creates(..) => None,
        Names::Lists(_) => match &o.observed {
            Observed::Listed { pages, .. } if !pages.is_empty() => Some("listings in pages"),
            _ => None,
        },
        Names::RemovesGolden(_) => Some("removals"),
        Names::ReadsGolden(_) => Some("look-ups of one entry"),
        Names::Property | Names::Root => Some("the shared table's commits and reads, cleanups"),
    }
}

/// The list a creation of `o` appends to, or a listing of `o` reads; and whether `o` is a
/// creation.
fn list_of(o: &Op) -> Option<(String, bool)> {
    let id = o.attempt.entry.as_deref()?;
    let tables = o.entry_kind()? == Entry::Table;
    match o.operation.describe().names {
        Names::Creates(..) => Some((key(parent(id), tables), true)),
        Names::Lists(_) => Some((key(id, tables), false)),
        _ => None,
    }
}

const UNPLACED: u64 = 1 << 62;
const UNMADE: u64 = 1 << 63;

fn element(base: u64, writer: u32, n: u64) -> u64 {
    base + (u64::from(writer) << 32) + n
}

/// Each creation of `log` that took effect or may have: its element and its place in the
/// version order (the version it made; where none is known, after every known one, by its
/// end), by (list, writer, index).
fn creations(log: &[Op]) -> HashMap<(String, u32, u64), (u64, u64)> {
    let mut made = HashMap::new();
    for o in log
        .iter()
        .filter(|o| !o.attempt.warm && o.took_effect() != Some(false))
    {
        let (Some((list, true)), Some(id)) = (list_of(o), o.attempt.entry.as_deref()) else {
            continue;
        };
        let leaf = id.rsplit('$').next().unwrap_or_default();
        let Some((w, n, _)) = created_index(leaf) else {
            continue;
        };
        let place = match o.attempt.manifest.and_then(|m| m.made) {
            Some(v) => (v, v),
            None => (
                element(UNPLACED, w, n),
                o.attempt.at_us.map_or(u64::MAX, |a| a[1]),
            ),
        };
        made.insert((list, w, n), place);
    }
    // A version two creations of one list claim (a writer paused across a cleanup writes
    // the version the cleanup removed, which another commit had made) names neither: each
    // is then an element of its own, unique in its list, kept in its place by the version.
    // bench's version-order checker names the clash itself.
    let mut claims: HashMap<(&str, u64), u32> = HashMap::new();
    for ((list, ..), (e, _)) in &made {
        if *e < UNPLACED {
            *claims.entry((list.as_str(), *e)).or_default() += 1;
        }
    }
    let twice: std::collections::HashSet<(String, u64)> = (claims.into_iter())
        .filter(|(_, n)| *n > 1)
        .map(|((list, v), _)| (list.to_string(), v))
        .collect();
    for ((list, w, n), (e, _)) in made.iter_mut() {
        if twice.contains(&(list.clone(), *e)) {
            *e = element(UNPLACED, *w, *n);
        }
    }
    made
}

/// What a listing of `list` read (`seen`), written to `line`: the elements of what it saw,
/// in the version order of the appends that made them (`elements`: a buffer).
fn read(
    made: &HashMap<(String, u32, u64), (u64, u64)>,
    (list, seen): (&str, &[Seen]),
    elements: &mut Vec<(u64, u64)>,
    line: &mut String,
) {
    elements.clear();
    let mut probe = (list.to_string(), 0, 0);
    for s in seen {
        for n in s.indices() {
            (probe.1, probe.2) = (s.writer, n);
            let place = made.get(&probe).copied();
            // Seen, and created by no one: an element no append wrote.
            let e = place.map_or(element(UNMADE, s.writer, n), |p| p.0);
            elements.push((place.map_or(u64::MAX, |p| p.1), e));
        }
    }
    elements.sort_unstable();
    line.push('[');
    for (k, (_, e)) in elements.iter().enumerate() {
        if k > 0 {
            line.push(',');
        }
        let _ = write!(line, "{e}");
    }
    line.push(']');
}

/// `log` (as a saved history holds it) as list-append transactions, written to `out` as
/// elle-cli's JSON (an array, one operation a line).
pub fn export(
    log: &[Op],
    release_us: u64,
    out: &mut impl std::io::Write,
) -> std::io::Result<Exported> {
    let mut x = Exported::default();
    let made = creations(log);
    let mut elements: Vec<(u64, u64)> = Vec::new();
    let mut order: BTreeMap<u64, u64> = BTreeMap::new();
    let mut index = 0u64;
    let mut line = String::new();
    out.write_all(b"[")?;
    for (k, e) in super::numbered(log, release_us) {
        let o = &log[k];
        let invoke = e.kind == "invoke";
        if o.attempt.warm {
            continue;
        }
        let why = left_out(o);
        let (None, Some((list, creates))) = (why, list_of(o)) else {
            if invoke {
                *x.left_out.entry(why.unwrap_or("others")).or_default() += 1;
            }
            continue;
        };
        line.clear();
        let quoted = serde_json::to_string(&list).expect("a name serialises");
        let _ = write!(
            line,
            "{}\n{{\"index\":{index},\"time\":{},\"type\":\"{}\",\"process\":{},\"f\":\"txn\",\"value\":[",
            if index > 0 { "," } else { "" },
            e.time,
            e.kind,
            e.process
        );
        match (creates, &o.observed) {
            (true, _) => {
                let leaf = o
                    .attempt
                    .entry
                    .as_deref()
                    .unwrap_or_default()
                    .rsplit('$')
                    .next();
                let (w, n, _) = leaf.and_then(created_index).unwrap_or((0, 0, ""));
                let el = made
                    .get(&(list.clone(), w, n))
                    .map_or(element(UNPLACED, w, n), |p| p.0);
                let _ = write!(line, "[\"append\",{quoted},{el}]");
            }
            (false, Observed::Listed { seen, .. }) if !invoke && o.outcome == Outcome::Ok => {
                let _ = write!(line, "[\"r\",{quoted},");
                read(&made, (&list, seen), &mut elements, &mut line);
                line.push(']');
            }
            (false, _) => {
                let _ = write!(line, "[\"r\",{quoted},null]");
            }
        }
        line.push_str("]}");
        out.write_all(line.as_bytes())?;
        match (invoke, creates) {
            (true, true) => x.appends += 1,
            (true, false) => x.reads += 1,
            _ => {}
        }
        if let (false, Outcome::Ok, Some(v)) =
            (invoke, o.outcome, o.attempt.manifest.and_then(|m| m.made))
        {
            order.insert(index, v);
        }
        index += 1;
    }
    out.write_all(b"\n]\n")?;
    let order: BTreeMap<String, u64> = order.into_iter().map(|(i, v)| (i.to_string(), v)).collect();
    x.order = serde_json::to_string(&order).expect("an order serialises");
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oplog::{Outcome as Logged, sample};
    use crate::plan::Operation;
    use crate::versions::At;

    /// Two creations that claim one version each stay an element of their own, so a later
    /// listing that shows one of them and not the other reads as what it is.
    #[test]
    fn two_creations_claiming_one_version_are_two_elements() {
        let created = |client: u32, name: &str| {
            let mut o = sample(client, Operation::CreateNamespace, 0, name, Logged::Ok);
            o.attempt.manifest = Some(At {
                made: Some(2),
                ..Default::default()
            });
            o
        };
        let log = vec![
            created(0, "bench_w0_0"),
            created(1, "bench_w1_0"),
            created(1, "bench_w1_1"),
        ];
        let made = creations(&log);
        let of = |w: u32, n: u64| made[&(key("", false), w, n)].0;
        assert_ne!(of(0, 0), of(1, 0));
        assert!(of(0, 0) >= UNPLACED && of(1, 0) >= UNPLACED);
        // Their place in the version order is the version they claimed.
        assert_eq!(made[&(key("", false), 0, 0)].1, 2);
    }
}
