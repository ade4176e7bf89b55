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
    /// A conditional PUT (or a rename) of the version's manifest found it already there:
    /// another commit made it first, and this one lost the race for it.
    Lost(u64),
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
            ("conditional_put" | "copy", false) => Some(Touch::Lost(v)),
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
    /// A commit's conditional PUTs of a version another commit had made first: the races it
    /// lost on its way to the version it made.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// How far behind the rest a commit was: the versions other commits made between the one its
/// client held as it began and the one it made, and how many of those it learned of by
/// losing a race (the rest its first probe found). Where several writers contend, how much
/// catching up a commit does is how the writers interleaved, not what the build does: two
/// commits as far behind do the same work.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Behind {
    pub versions: u64,
    pub lost: u32,
}

impl Behind {
    /// "1 version behind", "2 versions behind, 1 race lost".
    pub fn said(&self) -> String {
        let s = |n: u64| if n == 1 { "" } else { "s" };
        let mut out = format!("{} version{} behind", self.versions, s(self.versions));
        if self.lost > 0 {
            let lost = u64::from(self.lost);
            out += &format!(", {lost} race{} lost", s(lost));
        }
        out
    }
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
                Touch::Lost(_) => at.lost += 1,
            }
        }
        if write {
            // A commit's probes and loads are of the versions it committed over.
            (at.served, at.at_least) = (None, None);
        }
        Some(at)
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
    /// A page that served `version` (`None`: not known), after names up to `through`.
    pub fn served_at(through: Option<String>, version: Option<u64>) -> Page {
        let at = version.map(|v| At {
            served: Some(v),
            ..At::default()
        });
        Page { through, at }
    }

    /// The versions it served, least and greatest (through `bench serve`, a range), where
    /// known.
    pub fn served(&self) -> Option<(u64, u64)> {
        let at = self.at?;
        let lo = at.served?;
        Some((lo, at.served_to.unwrap_or(lo).max(lo)))
    }

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
            lost: self.lost + o.lost,
        }
    }

    /// How far behind the rest a commit was ([`Behind`]), where its requests named both the
    /// version it held and the one it made.
    pub fn behind(&self) -> Option<Behind> {
        let (before, made) = (self.before?, self.made?);
        Some(Behind {
            versions: made.checked_sub(before)?.checked_sub(1)?,
            lost: self.lost,
        })
    }
}

/// The entry of a request's `context` that names a call for the server's account of it
/// (`CLIENT:CALL`), where its response has no body to say the version in.
pub const CALL_KEY: &str = "bench.call";

/// The client a server's account of a ticketed call ([`At::ticket`]) names.
pub const TICKETED: u32 = u32::MAX;

/// What a server said of one call of client `client` (its `call`-th named call): the
/// version it served ([`At::said`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Told {
    pub client: u32,
    pub call: u64,
    pub said: String,
}

/// One version of `__manifest` against the one before it, as the copy holds them after the
/// cell: the entries (ids) it added and removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    pub version: u64,
    pub added: Vec<String>,
    pub removed: Vec<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

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
        // Already there: another commit won it.
        assert_eq!(
            Touch::of("conditional_put", &key(4), Some(false)),
            Some(Touch::Lost(4))
        );
        assert_eq!(Touch::of("conditional_put", &key(4), None), None);
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

    /// How far behind a commit was: the versions others made between the one it held and
    /// the one it made, and the races it lost on the way; a read, or a commit whose held
    /// version no request named, is none.
    #[test]
    fn a_commit_is_as_far_behind_as_the_versions_others_made_before_it() {
        use Touch::*;
        // Held 5; its probe found 6, loaded 6; 7 was missing, but its PUT of 7 lost; it
        // loaded 7 and made 8.
        let a = At::of(
            &[
                Found(6),
                Loaded(6),
                Missing(7),
                Lost(7),
                Loaded(7),
                Committed(8),
            ],
            true,
        )
        .unwrap();
        let behind = a.behind().unwrap();
        assert_eq!((behind.versions, behind.lost), (2, 1));
        assert_eq!(behind.said(), "2 versions behind, 1 race lost");
        // Nobody else in between: none behind.
        let alone = At::of(&[Missing(6), Committed(6)], true).unwrap();
        assert_eq!(
            alone.behind().map(|b| b.said()).as_deref(),
            Some("0 versions behind")
        );
        assert_eq!(
            At::of(&[Found(6), Missing(7), Committed(7)], true)
                .and_then(|a| a.behind())
                .map(|b| b.said()),
            Some("1 version behind".to_string())
        );
        assert_eq!(At::of(&[Missing(6)], false).unwrap().behind(), None);
        assert_eq!(At::of(&[Committed(6)], true).unwrap().behind(), None);
        // The races of a listing's pages add up; none are written out.
        let two = a.and(a);
        assert_eq!(two.lost, 2);
        let json = serde_json::to_string(&alone).unwrap();
        assert!(!json.contains("lost"), "{json}");
    }
}
