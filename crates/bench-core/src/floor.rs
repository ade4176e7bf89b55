//! The floor: the fewest requests, by kind, and dependent round trips an operation needs on
//! a copy-on-write catalog in an object store, and how far a measured operation is above
//! it. The model (docs/cost.md, "The floor"): a client that holds the catalog's latest
//! state (a warm view) commits by writing the new state's data file, then the new version
//! with one conditional PUT (put-if-absent of the version's key: the commit point); a read
//! that must see every commit acknowledged before it began asks once whether a newer
//! version exists (a HEAD of the next version's key: 404, the view is current). A cold read
//! (no view) finds the newest version (one LIST: versions are named newest first), then
//! reads its manifest and its data file. An index on the catalog, retries and caches are
//! not in the floor: they are what the distance to it shows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::counts::{IoPerOp, TypicalOp};
use crate::plan::{Effect, Operation, Target};

/// An operation's least requests by kind and its dependent round trips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Floor {
    pub put: u32,
    pub get: u32,
    pub head: u32,
    pub list: u32,
    pub delete: u32,
    pub round_trips: u32,
}

impl Floor {
    pub fn requests(&self) -> u32 {
        self.put + self.get + self.head + self.list + self.delete
    }
}

const fn floor(put: u32, get: u32, head: u32, list: u32, delete: u32, round_trips: u32) -> Floor {
    Floor {
        put,
        get,
        head,
        list,
        delete,
        round_trips,
    }
}

/// A catalog commit with a warm view: the data file, then the conditional PUT of the version.
const COMMIT: Floor = floor(2, 0, 0, 0, 0, 2);
/// A read with a warm view: is there a newer version?
const WARM_READ: Floor = floor(0, 0, 1, 0, 0, 1);
/// A read with none: the newest version, its manifest, its data file.
const COLD_READ: Floor = floor(0, 2, 0, 1, 0, 3);

/// The floor of `op`.
pub fn of(op: Operation) -> Floor {
    let read = |cold: bool| if cold { COLD_READ } else { WARM_READ };
    match op {
        Operation::CreateNamespace | Operation::DeclareTable => COMMIT,
        Operation::DeregisterTable | Operation::DropNamespace => COMMIT,
        // The table's data file and its manifest beside the catalog's data file, then the
        // table's manifest, then the catalog's version: 4 PUTs, 3 round trips.
        Operation::CreateTable => floor(4, 0, 0, 0, 0, 3),
        // The entry's commit, then its files: a LIST of its directory and one batch DELETE.
        Operation::DropTable => floor(2, 0, 0, 1, 1, 4),
        Operation::ListNamespaces { cold }
        | Operation::ListTables { cold }
        | Operation::DescribeTable { cold }
        | Operation::DescribeNamespace { cold }
        | Operation::NamespaceExists { cold }
        | Operation::TableExists { cold }
        | Operation::ListTableVersions { cold }
        | Operation::DescribeTableVersion { cold } => read(cold),
        // A table's own commit: its data file, then its version.
        Operation::TableAppend | Operation::InsertIntoTable | Operation::CreateTableVersion => {
            COMMIT
        }
        // A new version of the table with no data: its manifest alone.
        Operation::UpdateTableMetadata => floor(1, 0, 0, 0, 0, 1),
        // A cleanup: one LIST of the versions, then one batch DELETE of the old versions'
        // files (up to 1,000 keys a request on S3).
        Operation::CleanupVersions => floor(0, 0, 0, 1, 1, 2),
    }
}

/// How far a measured operation is above its floor: its requests and round trips beyond it,
/// by kind, and the floor's share of its requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distance {
    /// The floor's requests and round trips.
    pub floor_requests: u32,
    pub floor_round_trips: u32,
    /// The requests beyond the floor (all kinds), and by kind where any (`head`: 3.0).
    pub requests_over: f64,
    pub over_by_kind: BTreeMap<String, f64>,
    /// The round trips beyond it, where the operation's were measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trips_over: Option<f64>,
    /// The floor's requests over the operation's (1: at the floor).
    pub efficiency: f64,
    /// What was set against the floor: `median op` (the typical operation) or `mean`.
    pub of: String,
    /// A catalog operation's bytes: the least it writes and reads (the catalog's state, its
    /// mean over the cell, where a copy-on-write commit rewrites it and a cold read reads
    /// it; nothing for a warm read) and the mean operation's bytes beyond them. Absent
    /// where the state was not read (table operations, cells of roles, REST servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<BytesOver>,
}

/// The bytes of [`Distance::bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BytesOver {
    /// The catalog's state (`__manifest`'s data files) before and after the cell.
    pub state_before: u64,
    pub state_after: u64,
    pub floor_written: f64,
    pub floor_read: f64,
    pub written_over: f64,
    pub read_over: f64,
}

impl Distance {
    /// `+3 HEAD, +2 LIST` (kinds above the floor, most first), or `at the floor`.
    pub fn said(&self) -> String {
        let mut kinds: Vec<(&String, &f64)> = self
            .over_by_kind
            .iter()
            .filter(|(_, n)| **n >= 0.05)
            .collect();
        kinds.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
        if kinds.is_empty() {
            return "at the floor".to_string();
        }
        let each: Vec<String> = (kinds.iter())
            .map(|(k, n)| format!("+{} {}", trim(**n), k.to_uppercase()))
            .collect();
        each.join(", ")
    }
}

impl Distance {
    /// With the bytes of `op`, whose mean operation moved `mean`'s bytes, on a catalog whose
    /// state was `state` bytes before and after the cell: a catalog commit's floor writes the
    /// state once (its mean over the cell), a cold read's reads it, a warm read's moves
    /// nothing. Other operations are left without.
    pub fn with_bytes(mut self, op: Operation, mean: &IoPerOp, state: [u64; 2]) -> Distance {
        let d = op.describe();
        let held = (state[0] as f64 + state[1] as f64) / 2.0;
        let (written, read) = match (d.target, d.effect, d.cold) {
            (Target::Catalog, Effect::CatalogRow | Effect::CatalogRowGone, _) => (held, 0.0),
            _ if op.is_maintenance() => return self,
            (Target::Catalog, Effect::Nothing, true) => (0.0, held),
            (Target::Catalog, Effect::Nothing, false) => (0.0, 0.0),
            _ => return self,
        };
        self.bytes = Some(BytesOver {
            state_before: state[0],
            state_after: state[1],
            floor_written: written,
            floor_read: read,
            written_over: mean.written_bytes - written,
            read_over: mean.read_bytes - read,
        });
        self
    }

    /// `+41.2 kB written, +3.1 kB read over the floor (a state of 20.0 kB)`; empty without
    /// bytes.
    pub fn bytes_said(&self) -> String {
        let Some(b) = self.bytes else {
            return String::new();
        };
        let kb = |x: f64| format!("{:+.1} kB", x / 1000.0);
        format!(
            "{} written, {} read over the floor (a state of {:.1} kB)",
            kb(b.written_over),
            kb(b.read_over),
            (b.state_before as f64 + b.state_after as f64) / 2000.0
        )
    }
}

/// A count as short as it is exact: `3`, `2.5`.
fn trim(x: f64) -> String {
    if x.fract().abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// The distance from the floor of `op` of an operation that made `io` (requests by kind)
/// and `trips` round trips; `of` names what `io` is.
fn distance(op: Operation, io: &IoPerOp, trips: Option<f64>, of: &str) -> Distance {
    let f = self::of(op);
    // A COPY is a PUT to the store; the floor has none.
    let kinds = [
        ("put", io.put + io.copy, f.put),
        ("get", io.get, f.get),
        ("head", io.head, f.head),
        ("list", io.list, f.list),
        ("delete", io.delete, f.delete),
    ];
    let mut over_by_kind = BTreeMap::new();
    let mut actual = 0.0;
    for (kind, n, least) in kinds {
        actual += n;
        let over = n - f64::from(least);
        if over.abs() >= 1e-9 {
            over_by_kind.insert(kind.to_string(), over);
        }
    }
    let least = f64::from(f.requests());
    Distance {
        floor_requests: f.requests(),
        floor_round_trips: f.round_trips,
        requests_over: actual - least,
        over_by_kind,
        round_trips_over: trips.map(|t| t - f64::from(f.round_trips)),
        // Never clamped: below the floor (`requests_over` < 0, an efficiency above 1) is a
        // bug of bench's counts or of the floor's model, and shows as such.
        efficiency: if actual > 0.0 { least / actual } else { 1.0 },
        of: of.to_string(),
        bytes: None,
    }
}

/// The typical operation's distance from the floor.
pub fn of_typical(op: Operation, t: &TypicalOp) -> Distance {
    distance(op, &t.kinds(), t.round_trips, "median op")
}

/// The mean operation's distance from the floor (where the typical one is not known).
pub fn of_mean(op: Operation, io: &IoPerOp, trips: Option<f64>) -> Distance {
    distance(op, io, trips, "mean")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A declaration that made 2 PUTs, 4 GETs and 3 HEADs and 7 round trips: 7 requests and
    /// 5 round trips over its floor of 2 PUTs in 2, at 2/9 of its requests.
    #[test]
    fn the_distance_names_each_kind_above_the_floor() {
        let t = TypicalOp {
            put: 2.0,
            conditional_put: 1.0,
            get: 4.0,
            head: 3.0,
            requests: 9.0,
            round_trips: Some(7.0),
            ..TypicalOp::default()
        };
        let d = of_typical(Operation::DeclareTable, &t);
        assert_eq!((d.floor_requests, d.floor_round_trips), (2, 2));
        assert_eq!(d.requests_over, 7.0);
        assert_eq!(d.round_trips_over, Some(5.0));
        assert!((d.efficiency - 2.0 / 9.0).abs() < 1e-12);
        assert_eq!(d.said(), "+4 GET, +3 HEAD");
        // At the floor, and a warm read that made one HEAD.
        let at = TypicalOp {
            put: 2.0,
            round_trips: Some(2.0),
            ..TypicalOp::default()
        };
        assert_eq!(
            of_typical(Operation::CreateNamespace, &at).said(),
            "at the floor"
        );
        let read = IoPerOp {
            head: 1.0,
            get: 0.5,
            ..IoPerOp::default()
        };
        let d = of_mean(Operation::ListTables { cold: false }, &read, None);
        assert_eq!(
            (d.said(), d.efficiency),
            ("+0.5 GET".to_string(), 1.0 / 1.5)
        );
        assert_eq!(d.of, "mean");
    }

    /// A commit's floor writes the catalog's state (its mean over the cell), a cold read's
    /// reads it, a warm read's moves nothing; a table's operations have no bytes floor.
    #[test]
    fn the_bytes_over_the_floor_are_beyond_the_state() {
        let mean = IoPerOp {
            put: 3.0,
            written_bytes: 50_000.0,
            read_bytes: 4_000.0,
            ..IoPerOp::default()
        };
        let state = [10_000, 30_000];
        let d = of_mean(Operation::DeclareTable, &mean, None).with_bytes(
            Operation::DeclareTable,
            &mean,
            state,
        );
        let b = d.bytes.unwrap();
        assert_eq!((b.floor_written, b.floor_read), (20_000.0, 0.0));
        assert_eq!((b.written_over, b.read_over), (30_000.0, 4_000.0));
        assert_eq!(
            d.bytes_said(),
            "+30.0 kB written, +4.0 kB read over the floor (a state of 20.0 kB)"
        );
        let with = |op: Operation| of_mean(op, &mean, None).with_bytes(op, &mean, state).bytes;
        let cold = with(Operation::ListTables { cold: true }).unwrap();
        assert_eq!((cold.floor_written, cold.floor_read), (0.0, 20_000.0));
        let warm = with(Operation::ListTables { cold: false }).unwrap();
        assert_eq!((warm.floor_read, warm.read_over), (0.0, 4_000.0));
        assert!(with(Operation::TableAppend).is_none());
        assert!(with(Operation::CleanupVersions).is_none());
        assert_eq!(
            of_mean(Operation::TableAppend, &mean, None).bytes_said(),
            ""
        );
    }

    /// Every operation has a floor, and every floor has at least one request and a round
    /// trip per dependent step.
    #[test]
    fn every_operation_has_a_floor() {
        for op in Operation::ALL {
            let f = of(op);
            assert!(f.requests() >= 1 && f.round_trips >= 1, "{op}");
            assert!(f.round_trips <= f.requests(), "{op}");
        }
    }
}
