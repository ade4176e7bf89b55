//! Which `__manifest` version each operation made or served, known from its own store
//! requests rather than inferred from what reads return.
//!
//! Every version of `__manifest` stays in the store as `_versions/<u64::MAX − v>.manifest`
//! (lance's V2 naming; `<v>.manifest` in V1). A commit is one conditional PUT of that key;
//! before every operation lance's directory catalog asks whether the successor of the
//! version it holds exists (a HEAD of that key: not found, it serves the version it holds),
//! and where it does, loads the latest (on S3 a listing and a GET of that version's
//! manifest; on local disk a directory read and a file read outside the object store, which
//! name no key). A worker sees each of those requests through its counting store and
//! reports, per operation, the version it held as it began, the version its commit made, and
//! the version a read served — or, where local disk loaded one unseen, a lower bound, which
//! the client's next operation settles: its first probe names the version its client held.

use serde::{Deserialize, Serialize};

/// What the store said to one request on a key of a `__manifest` version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    /// A conditional PUT (or a rename) of the version's manifest succeeded: a commit made it.
    Committed(u64),
    /// A HEAD found the version's manifest: a successor exists.
    Found(u64),
    /// A HEAD did not: the version before it is the latest the client knows of.
    Missing(u64),
    /// A GET read the version's manifest: the client loaded it.
    Loaded(u64),
}

impl Touch {
    /// The touch a request of `kind` (`conditional_put`, `copy` for a rename, `head`, `get`)
    /// on `key` made, from whether it succeeded or found nothing (`found`: `Some(true)` it
    /// succeeded, `Some(false)` not found, `None` any other error); `None` where `key` is no
    /// version of `__manifest` or the request says nothing of it.
    pub fn of(kind: &str, key: &str, found: Option<bool>) -> Option<Touch> {
        let v = manifest_version(key)?;
        match (kind, found?) {
            ("conditional_put" | "copy", true) => Some(Touch::Committed(v)),
            ("head", true) => Some(Touch::Found(v)),
            ("head", false) => Some(Touch::Missing(v)),
            ("get", true) => Some(Touch::Loaded(v)),
            _ => None,
        }
    }
}

/// The version of `__manifest` whose manifest `key` is, if it is one:
/// `…/__manifest/_versions/<20 digits>.manifest` (V2: `u64::MAX` minus the version) or
/// `…/__manifest/_versions/<digits>.manifest` (V1).
pub fn manifest_version(key: &str) -> Option<u64> {
    let name = key.strip_suffix(".manifest")?;
    let (dir, file) = name.rsplit_once('/')?;
    if !(dir.ends_with("__manifest/_versions") || dir == "__manifest/_versions") {
        return None;
    }
    if file.is_empty() || !file.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = file.parse().ok()?;
    Some(if file.len() == 20 { u64::MAX - n } else { n })
}

/// One operation's place in the `__manifest` version order, as its requests showed it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct At {
    /// The version its client held as it began: its first probe for a successor names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<u64>,
    /// The version its commit made: the conditional PUT of that version's manifest
    /// succeeded (the last one, where it made more than one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made: Option<u64>,
    /// The version a read served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<u64>,
    /// Through `bench serve`, whose concurrent calls may move the version it holds between a
    /// call's probe and its read: the read served a version from `served` to this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_to: Option<u64>,
    /// A read whose client found a successor and loaded the latest without a request that
    /// names it (local disk): at least this version, until the client's next operation
    /// names the one it held ([`settle`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<u64>,
    /// A look-up through `bench serve`, answered without a body: the number its client gave
    /// the call, by which the server's account of it is found after the cell ([`join`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u64>,
    /// A read through `bench serve` on local disk that loaded a version unseen, whose request
    /// could not name its call (a listing, a GET): the ticket the server gave it in its
    /// response, by which the server's account of it is found after the cell ([`join`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticket: Option<u64>,
}

impl At {
    /// An operation's place, from its requests' touches in the order they ended; `None`
    /// where none touched a version of `__manifest`. A read serves the version its client
    /// held after its last touch; a commit's own version is the one it made.
    pub fn of(touches: &[Touch], write: bool) -> Option<At> {
        let first = touches.first()?;
        let mut at = At::default();
        if let Touch::Found(k) | Touch::Missing(k) = *first {
            at.before = k.checked_sub(1);
        }
        for t in touches {
            match *t {
                Touch::Committed(v) => at.made = Some(v),
                // Nothing newer: it serves the version it holds.
                Touch::Missing(k) => (at.served, at.at_least) = (k.checked_sub(1), None),
                // A newer one exists: it loads the latest.
                Touch::Found(k) => (at.served, at.at_least) = (None, Some(k)),
                // Where a version is loaded at or past what is known to exist, that one.
                Touch::Loaded(v)
                    if at.at_least.is_none_or(|k| v >= k) && at.served.is_none_or(|s| v >= s) =>
                {
                    (at.served, at.at_least) = (Some(v), None)
                }
                Touch::Loaded(_) => {}
            }
        }
        if write {
            // A commit's probes and loads are of the versions it committed over.
            (at.served, at.at_least) = (None, None);
        }
        Some(at)
    }
}

/// Settle each read of `log` that served at least a version, unseen, by the next operation
/// of its client through the same namespace (not one opened for a cold read) that names the
/// version it held as it began. Reports of one client arrive in the order it ran them.
pub fn settle(log: &mut [crate::oplog::Op]) {
    let mut open: std::collections::HashMap<u32, usize> = Default::default();
    for i in 0..log.len() {
        let (client, cold) = (log[i].client, log[i].operation.describe().cold);
        let Some(at) = log[i].manifest else { continue };
        if cold {
            continue;
        }
        if let Some(before) = at.before
            && let Some(j) = open.remove(&client)
            && let Some(held) = log[j].manifest.as_mut()
            && held.at_least.is_some_and(|k| before >= k)
        {
            (held.served, held.at_least) = (Some(before), None);
            if let crate::oplog::Observed::Listed { pages, .. } = &mut log[j].observed
                && let Some(last) = pages.last_mut().and_then(|p| p.at.as_mut())
                && last.at_least.is_some_and(|k| before >= k)
            {
                (last.served, last.at_least) = (Some(before), None);
            }
        }
        if at.at_least.is_some() {
            open.insert(client, i);
        }
    }
}

/// One page of a listing in pages (`limit` set), as its requests placed it: the last name it
/// listed (where another page follows: the next page lists the names after it, in lance's
/// byte order) and the version it served. A listing's pages are fetched one after another,
/// each a call of its own, and may each serve another version: each page is the catalog's
/// state at its version over its own range of names only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub through: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<At>,
}

impl Page {
    /// Settle each page that served at least a version, unseen, by the next page's first
    /// probe, which names the version its client held as that page began (the last page's,
    /// with the listing's own, by the client's next operation: [`settle`]).
    pub fn settle(pages: &mut [Page]) {
        for i in 1..pages.len() {
            let before = pages[i].at.and_then(|a| a.before);
            if let (Some(b), Some(held)) = (before, pages[i - 1].at.as_mut())
                && held.at_least.is_some_and(|k| b >= k)
            {
                (held.served, held.at_least) = (Some(b), None);
            }
        }
    }
}

/// The entry of a response's `context` in which `bench serve` tells the client the version
/// its call made (`made=V`) or served (`served=LO-HI`).
pub const CONTEXT_KEY: &str = "bench.manifest_version";

impl At {
    /// What `bench serve` says of a call in its response's context ([`CONTEXT_KEY`]).
    pub fn said(&self) -> Option<String> {
        match (self.made, self.served, self.served_to) {
            (Some(v), _, _) => Some(format!("made={v}")),
            (None, Some(lo), hi) => Some(format!("served={lo}-{}", hi.unwrap_or(lo))),
            (None, None, _) => self.ticket.map(|t| format!("pending={t}")),
        }
    }

    /// What a client heard of its call ([`At::said`]).
    pub fn heard(said: &str) -> Option<At> {
        if let Some(t) = said.strip_prefix("pending=") {
            return Some(At {
                ticket: Some(t.trim().parse().ok()?),
                ..At::default()
            });
        }
        if let Some(v) = said.strip_prefix("made=") {
            let made = Some(v.trim().parse().ok()?);
            return Some(At {
                made,
                ..At::default()
            });
        }
        let (lo, hi) = said.strip_prefix("served=")?.split_once('-')?;
        let (lo, hi): (u64, u64) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
        Some(At {
            served: Some(lo),
            served_to: (hi > lo).then_some(hi),
            ..At::default()
        })
    }

    /// Two calls of one operation (a listing's pages) as one: the last commit's version, and
    /// every version either read served.
    pub fn and(self, o: At) -> At {
        let hi = |a: &At| a.served_to.or(a.served);
        let served = match (self.served, o.served) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let to = hi(&self)
            .max(hi(&o))
            .filter(|&h| served.is_some_and(|lo| h > lo));
        At {
            before: self.before.or(o.before),
            made: o.made.or(self.made),
            served,
            served_to: to,
            at_least: None,
            call: self.call.or(o.call),
            ticket: self.ticket.or(o.ticket),
        }
    }
}

/// The entry of a request's `context` that names a call for the server's account of it
/// (`CLIENT:CALL`), where its response has no body to say the version in.
pub const CALL_KEY: &str = "bench.call";

/// The client a server's account of a ticketed call ([`At::ticket`]) names.
pub const TICKETED: u32 = u32::MAX;

/// Give each read of `log` that named its call ([`At::call`]) or was given a ticket
/// ([`At::ticket`]), and each page of a listing given one, what the servers `told` of it
/// after the cell.
pub fn join(log: &mut [crate::oplog::Op], told: &[crate::serve::Told]) {
    let by: std::collections::HashMap<(u32, u64), &str> = (told.iter())
        .map(|t| ((t.client, t.call), t.said.as_str()))
        .collect();
    let give = |client: u32, at: &mut At| {
        let said = (at.call.map(|c| (client, c)).into_iter())
            .chain(at.ticket.map(|t| (TICKETED, t)))
            .find_map(|k| by.get(&k));
        if let Some(heard) = said.and_then(|s| At::heard(s))
            && at.made.is_none()
            && at.served.is_none()
        {
            (at.served, at.served_to) = (heard.served, heard.served_to);
        }
    };
    for op in log.iter_mut() {
        if let crate::oplog::Observed::Listed { pages, .. } = &mut op.observed {
            for at in pages.iter_mut().filter_map(|p| p.at.as_mut()) {
                give(op.client, at);
            }
        }
        if let Some(at) = op.manifest.as_mut() {
            give(op.client, at);
        }
    }
}

/// One version of `__manifest` against the one before it, as the copy holds them after the
/// cell: the entries (ids) it added and removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    pub version: u64,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

/// The entry a commit of the catalog adds (`true`) or removes, if it is one.
fn effect(op: &crate::oplog::Op) -> Option<(&str, bool)> {
    crate::audit::catalog_effect(op).map(|(id, sign)| (id, sign > 0))
}

/// Whether some commit of the catalog in `log` kept its times (a cell with a history): where
/// the copy's chain of versions is held against the commits ([`judge`]).
pub fn keeps_history(log: &[crate::oplog::Op]) -> bool {
    log.iter().any(timed_commit)
}

/// A commit of the catalog that kept its times.
fn timed_commit(o: &crate::oplog::Op) -> bool {
    o.at_us.is_some() && effect(o).is_some()
}

/// Whether some commit of a cell that keeps a history (its operations on the clock) has no
/// version its requests named: where the copy's chain of versions is worth reading.
pub fn chain_wanted(log: &[crate::oplog::Op]) -> bool {
    (log.iter()).any(|o| {
        timed_commit(o)
            && o.took_effect() != Some(false)
            && o.manifest.is_none_or(|m| m.made.is_none())
    })
}

/// Give each commit of the catalog in `log` whose requests named no version the version of
/// `chain` (the copy's versions after the cell's first, each against the one before) that
/// made its effect: the version that added its entry (a creation) or removed it (a removal)
/// — a reply lost, a worker killed, a client through REST included. Returns how many were
/// placed.
pub fn place(log: &mut [crate::oplog::Op], chain: &[Change]) -> u64 {
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
        if op.manifest.is_some_and(|m| m.made.is_some()) {
            continue;
        }
        let key = effect(op).map(|(id, added)| (id.to_string(), added));
        let Some(v) = key.and_then(|k| at.get_mut(&k)).and_then(|vs| {
            // Each version is one commit's: the first not yet given to another.
            (!vs.is_empty()).then(|| vs.remove(0))
        }) else {
            continue;
        };
        op.manifest.get_or_insert_with(At::default).made = Some(v);
        placed += 1;
    }
    placed
}

/// The copy's `__manifest` versions after the cell as verification read them: the cell's
/// first (the golden's latest; 0 where the catalog did not exist), the later ones present,
/// and each of those against the one before it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chain {
    pub first: u64,
    pub versions: Vec<u64>,
    pub changes: Vec<Change>,
}

/// Hold the copy's chain of versions against the cell's commits in `log` (before
/// [`place`]): every version after the cell's first is there (none missing but where a
/// cleanup of the cell removed it); every entry a version added or removed is the effect of
/// one commit of the cell that took effect, and each such commit's effect is in exactly one
/// version; a commit whose own request named the version it made finds its effect in that
/// version. Versions that changed no entry (a property's update, an index's) pass. `None`:
/// all hold; otherwise the first disagreement named, and how many there were.
pub fn judge(log: &[crate::oplog::Op], chain: &Chain) -> Option<String> {
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
    let mut effects: HashMap<(&str, bool), Vec<&crate::oplog::Op>> = HashMap::new();
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
        let mut left: Vec<&crate::oplog::Op> = effects.into_values().flatten().collect();
        left.sort_by_key(|o| (o.client, o.i));
        for op in left {
            found.push(format!(
                "{} took effect, and no version of the copy made it",
                op.name()
            ));
        }
    }
    let read: std::collections::HashSet<u64> = chain.changes.iter().map(|c| c.version).collect();
    for op in log.iter().filter(|o| o.took_effect() == Some(true)) {
        let (Some((id, added)), Some(v)) = (effect(op), op.manifest.and_then(|m| m.made)) else {
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
    use crate::oplog::{Outcome, sample};
    use crate::plan::Operation;

    fn key(v: u64) -> String {
        format!("root/__manifest/_versions/{:020}.manifest", u64::MAX - v)
    }

    #[test]
    fn what_bench_serve_says_of_a_call_is_heard_as_it_was_said() {
        let made = At {
            made: Some(7),
            ..At::default()
        };
        let served = At {
            served: Some(5),
            served_to: Some(8),
            ..At::default()
        };
        for at in [made, served] {
            assert_eq!(At::heard(&at.said().unwrap()), Some(at));
        }
        let one = At::heard("served=5-5").unwrap();
        assert_eq!((one.served, one.served_to), (Some(5), None));
        assert_eq!(At::heard("served=x-5"), None);
        assert_eq!(At::default().said(), None);
        // A listing's pages: every version either served.
        let pages = one.and(At::heard("served=6-9").unwrap());
        assert_eq!((pages.served, pages.served_to), (Some(5), Some(9)));
    }

    #[test]
    fn a_manifest_key_names_its_version() {
        assert_eq!(manifest_version(&key(7)), Some(7));
        assert_eq!(
            manifest_version("__manifest/_versions/12.manifest"),
            Some(12)
        );
        // Another table's versions, the hint, a staging file: none.
        let table = format!("root/t.lance/_versions/{:020}.manifest", u64::MAX - 3);
        assert_eq!(manifest_version(&table), None);
        assert_eq!(
            manifest_version("__manifest/_versions/version_hint.json"),
            None
        );
        assert_eq!(
            manifest_version("__manifest/_versions/.tmp_7.manifest_9c10"),
            None
        );
        assert_eq!(
            Touch::of("conditional_put", &key(4), Some(true)),
            Some(Touch::Committed(4))
        );
        assert_eq!(Touch::of("conditional_put", &key(4), Some(false)), None);
        assert_eq!(
            Touch::of("head", &key(4), Some(false)),
            Some(Touch::Missing(4))
        );
        assert_eq!(Touch::of("head", &key(4), None), None);
        assert_eq!(Touch::of("list", &key(4), Some(true)), None);
    }

    #[test]
    fn a_read_serves_what_its_client_held_after_its_last_probe() {
        use Touch::*;
        // Nothing newer than 5.
        let a = At::of(&[Missing(6)], false).unwrap();
        assert_eq!((a.before, a.served, a.at_least), (Some(5), Some(5), None));
        // S3: a successor, then the latest loaded by a GET of its manifest.
        let a = At::of(&[Found(6), Loaded(9)], false).unwrap();
        assert_eq!((a.before, a.served), (Some(5), Some(9)));
        // Local disk: the latest loaded unseen.
        let a = At::of(&[Found(6)], false).unwrap();
        assert_eq!((a.served, a.at_least), (None, Some(6)));
        // A namespace opened cold: its manifest loaded, then no successor.
        let a = At::of(&[Loaded(9), Missing(10)], false).unwrap();
        assert_eq!((a.before, a.served), (None, Some(9)));
        // A commit: what it made, over what it held; it serves nothing.
        let a = At::of(&[Found(6), Missing(8), Committed(8)], true).unwrap();
        assert_eq!((a.before, a.made, a.served), (Some(5), Some(8), None));
        assert_eq!(At::of(&[], false), None);
    }

    #[test]
    fn the_next_probe_of_the_same_namespace_settles_a_version_loaded_unseen() {
        let op = |client, operation, at| crate::oplog::Op {
            manifest: Some(at),
            ..sample(client, operation, 0, "", Outcome::Ok)
        };
        let list = Operation::ListTables { cold: false };
        let cold = Operation::ListTables { cold: true };
        let unseen = At {
            before: Some(5),
            at_least: Some(6),
            ..At::default()
        };
        let next = |before| At {
            before: Some(before),
            served: Some(before),
            ..At::default()
        };
        let mut log = vec![
            op(0, list, unseen),
            // Another client's, and a cold read's own namespace: neither settles it.
            op(1, list, next(3)),
            op(0, cold, next(12)),
            op(0, list, next(9)),
            // The last read of a client stays a lower bound.
            op(1, list, unseen),
        ];
        settle(&mut log);
        assert_eq!(log[0].manifest.unwrap().served, Some(9));
        assert_eq!(log[0].manifest.unwrap().at_least, None);
        assert_eq!(log[4].manifest.unwrap().served, None);
        assert_eq!(log[4].manifest.unwrap().at_least, Some(6));
    }

    /// A listing's page that loaded a version unseen is settled by the next page's first
    /// probe; its last page, with the listing, by the client's next operation.
    #[test]
    fn each_page_of_a_listing_is_settled_by_what_follows_it() {
        let unseen = |before, k| At {
            before: Some(before),
            at_least: Some(k),
            ..At::default()
        };
        let page = |through: Option<&str>, at| Page {
            through: through.map(str::to_string),
            at: Some(at),
        };
        let mut pages = vec![
            page(Some("b"), unseen(5, 6)),
            page(Some("d"), unseen(7, 8)),
            // A probe naming less than what the page before found settles nothing.
            page(None, unseen(6, 9)),
        ];
        Page::settle(&mut pages);
        let served: Vec<_> = pages.iter().map(|p| p.at.unwrap().served).collect();
        assert_eq!(served, [Some(7), None, None]);
        assert_eq!(pages[2].at.unwrap().at_least, Some(9));
        let list = Operation::ListTables { cold: false };
        let mut log = vec![
            crate::oplog::Op {
                manifest: Some(unseen(5, 9)),
                observed: crate::oplog::Observed::Listed {
                    seen: vec![],
                    gone: None,
                    twice: vec![],
                    pages,
                },
                ..sample(0, list, 0, "", Outcome::Ok)
            },
            crate::oplog::Op {
                manifest: Some(At {
                    before: Some(11),
                    served: Some(11),
                    ..At::default()
                }),
                ..sample(0, list, 0, "", Outcome::Ok)
            },
        ];
        settle(&mut log);
        let crate::oplog::Observed::Listed { pages, .. } = &log[0].observed else {
            panic!("a listing")
        };
        assert_eq!(pages[2].at.unwrap().served, Some(11));
        assert_eq!(log[0].manifest.unwrap().served, Some(11));
    }

    /// A look-up through `bench serve` is answered without a body: the server's account of
    /// its call, told after the cell, gives it its version — its own client's only.
    #[test]
    fn a_look_up_through_a_server_is_given_what_the_server_told_of_its_call() {
        let call = |client, call| crate::oplog::Op {
            manifest: Some(At {
                call: Some(call),
                ..At::default()
            }),
            ..sample(
                client,
                Operation::TableExists { cold: false },
                0,
                "t",
                Outcome::Ok,
            )
        };
        let mut log = vec![call(0, 1), call(1, 1), call(0, 2)];
        let told = |client, call, said: &str| crate::serve::Told {
            client,
            call,
            said: said.into(),
        };
        join(
            &mut log,
            &[told(0, 1, "served=4-6"), told(0, 2, "served=7-7")],
        );
        let served: Vec<_> = (log.iter())
            .map(|o| o.manifest.map(|m| (m.served, m.served_to)))
            .collect();
        assert_eq!(
            served,
            [
                Some((Some(4), Some(6))),
                Some((None, None)),
                Some((Some(7), None))
            ]
        );
    }

    /// A listing's request cannot name its call: a server on local disk that loaded a
    /// version unseen gives the listing (each page) a ticket in its response, and its account
    /// after the cell is found by it.
    #[test]
    fn a_listing_through_a_server_is_given_what_the_server_told_of_its_ticket() {
        let heard = At::heard("pending=77").unwrap();
        assert_eq!(
            (heard.ticket, heard.said()),
            (Some(77), Some("pending=77".into()))
        );
        let ticketed = |t| Page {
            through: None,
            at: Some(At::heard(&format!("pending={t}")).unwrap()),
        };
        let mut log = vec![crate::oplog::Op {
            manifest: Some(heard.and(At::heard("pending=78").unwrap())),
            observed: crate::oplog::Observed::Listed {
                seen: vec![],
                gone: None,
                twice: vec![],
                pages: vec![ticketed(77), ticketed(78), ticketed(79)],
            },
            ..sample(3, Operation::ListTables { cold: false }, 0, "", Outcome::Ok)
        }];
        let told = |call, said: &str| crate::serve::Told {
            client: TICKETED,
            call,
            said: said.into(),
        };
        join(&mut log, &[told(77, "served=4-5"), told(78, "served=6-6")]);
        assert_eq!(log[0].manifest.unwrap().served, Some(4));
        let crate::oplog::Observed::Listed { pages, .. } = &log[0].observed else {
            panic!("a listing")
        };
        let got: Vec<_> = (pages.iter())
            .map(|p| p.at.map(|a| (a.served, a.served_to)))
            .collect();
        assert_eq!(
            got,
            [
                Some((Some(4), Some(5))),
                Some((Some(6), None)),
                Some((None, None))
            ]
        );
    }

    /// Through REST, or with a reply lost, a commit's requests name no version: the copy's
    /// chain gives it the version that added (or removed) its entry.
    #[test]
    fn the_copy_s_chain_places_commits_whose_requests_named_no_version() {
        let op = |client, operation, entry: &str, made: Option<u64>| crate::oplog::Op {
            at_us: Some([0, 1]),
            manifest: made.map(|v| At {
                made: Some(v),
                ..At::default()
            }),
            ..sample(client, operation, 0, entry, Outcome::Ok)
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
            .map(|o| o.manifest.and_then(|m| m.made))
            .collect();
        assert_eq!(made, [Some(11), Some(13), Some(12), None]);
        assert!(!chain_wanted(&log));
    }

    /// The chain held against the cell's commits: all agree; then each kind of
    /// disagreement named — a version missing, an entry no commit made, a commit no version
    /// made, a commit whose named version holds another's effect.
    #[test]
    fn the_copy_s_chain_is_held_against_the_cell_s_commits() {
        let op = |client, operation, entry: &str, made: Option<u64>| crate::oplog::Op {
            manifest: made.map(|v| At {
                made: Some(v),
                ..At::default()
            }),
            ..sample(client, operation, 0, entry, Outcome::Ok)
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
