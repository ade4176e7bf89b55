//! A catalog's shape (`[fixture]`): a tree of namespaces `width` wide and `depth` deep, with
//! tables in its leaves (or in every namespace), properties on every entry, plain or hashed
//! names. The golden holds it; its rows are its namespaces and tables. Without `[fixture]`
//! a golden is flat: `matrix.sizes` rows, a third namespaces, the rest tables, at the root.

use serde::{Deserialize, Serialize};

use super::checks::{bounded, invalid, limits};
use super::raw::RawFixture;
use crate::error::PlanError;

/// Where a tree's tables are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TablesAt {
    /// In the deepest namespaces only.
    Leaves,
    /// In every namespace (not at the root).
    Every,
}

/// How entries are named: `ns_1`, `table_3` (their place among their siblings), or the
/// same followed by 8 hex digits of a hash of their path (`ns_1_9f3a02c4`), as catalogs
/// with generated names have them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NameShape {
    Plain,
    Hashed,
}

/// A tree of namespaces and tables, as a golden holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Fixture {
    pub width: u32,
    pub depth: u32,
    pub tables_per_namespace: u32,
    pub tables_at: TablesAt,
    /// Properties of every namespace and table (`prop_<i>` = `value_<i>`).
    pub properties: u32,
    pub names: NameShape,
    /// Every table a dataset of its own (3 rows), so that operations on a table's data
    /// (property updates, drops) find one; else the tables are entries only, as declared.
    pub table_data: bool,
}

/// The separator of an id's parts in `__manifest` (lance's `$`).
pub const DELIMITER: char = '$';

impl Fixture {
    /// Namespaces at level `d` (1: the root's children).
    fn at_level(&self, d: u32) -> u64 {
        u64::from(self.width).saturating_pow(d)
    }

    /// Namespaces before level `d` (levels 1 … d − 1).
    fn before_level(&self, d: u32) -> u64 {
        (1..d).fold(0u64, |n, l| n.saturating_add(self.at_level(l)))
    }

    pub fn namespaces(&self) -> u64 {
        self.before_level(self.depth + 1)
    }

    /// The namespaces that hold tables.
    pub fn holders(&self) -> u64 {
        match self.tables_at {
            TablesAt::Leaves => self.at_level(self.depth),
            TablesAt::Every => self.namespaces(),
        }
    }

    pub fn tables(&self) -> u64 {
        self.holders()
            .saturating_mul(u64::from(self.tables_per_namespace))
    }

    /// Entries of a kind.
    pub fn count(&self, entry: super::Entry) -> u64 {
        match entry {
            super::Entry::Namespace => self.namespaces(),
            super::Entry::Table => self.tables(),
        }
    }

    /// The id of the `k`-th entry of a kind.
    pub fn id(&self, entry: super::Entry, k: u64) -> String {
        match entry {
            super::Entry::Namespace => self.namespace_id(k),
            super::Entry::Table => self.table_id(k),
        }
    }

    /// Rows of the golden's `__manifest`: every namespace and table.
    pub fn rows(&self) -> u64 {
        self.namespaces().saturating_add(self.tables())
    }

    /// The namespaces with children (the root's `""` first): what a listing of namespaces
    /// lists.
    pub fn parents(&self) -> u64 {
        1 + self.before_level(self.depth)
    }

    /// The `k`-th of [`Fixture::parents`]: the root, then every namespace above the leaves.
    pub fn parent_id(&self, k: u64) -> String {
        match k {
            0 => String::new(),
            k => self.namespace_id(k - 1),
        }
    }

    fn name(&self, kind: &str, place: u64, path: &str) -> String {
        match self.names {
            NameShape::Plain => format!("{kind}_{place}"),
            NameShape::Hashed => format!("{kind}_{place}_{:08x}", fnv(path) as u32),
        }
    }

    /// The id of the `k`-th namespace, level by level (`ns_0`, `ns_1`, …, `ns_0$ns_0`, …).
    pub fn namespace_id(&self, k: u64) -> String {
        let mut d = 1;
        let mut j = k;
        while d < self.depth && j >= self.at_level(d) {
            j -= self.at_level(d);
            d += 1;
        }
        // j's digits in base width, most significant first, are its path.
        let w = u64::from(self.width.max(1));
        let mut places: Vec<u64> = (0..d).map(|_| 0).collect();
        for p in places.iter_mut().rev() {
            *p = j % w;
            j /= w;
        }
        let mut id = String::new();
        for place in places {
            if !id.is_empty() {
                id.push(DELIMITER);
            }
            let path = format!("{id}{place}");
            id.push_str(&self.name("ns", place, &path));
        }
        id
    }

    /// The `k`-th namespace that holds tables.
    pub fn holder_id(&self, h: u64) -> String {
        match self.tables_at {
            TablesAt::Leaves => self.namespace_id(self.before_level(self.depth) + h),
            TablesAt::Every => self.namespace_id(h),
        }
    }

    /// The id of the `k`-th table: its namespace's, then its own name.
    pub fn table_id(&self, k: u64) -> String {
        let per = u64::from(self.tables_per_namespace.max(1));
        let parent = self.holder_id(k / per);
        let place = k % per;
        let path = format!("{parent}{DELIMITER}t{place}");
        format!("{parent}{DELIMITER}{}", self.name("table", place, &path))
    }

    /// Each entry's properties, as the `__manifest` row's metadata holds them (JSON).
    pub fn metadata(&self) -> Option<String> {
        (self.properties > 0).then(|| {
            let pairs: Vec<String> = (0..self.properties)
                .map(|i| format!("\"prop_{i}\":\"value_{i}\""))
                .collect();
            format!("{{{}}}", pairs.join(","))
        })
    }

    /// How ids and directories name it: `tree_w2_d3_t5`, then what differs from the
    /// defaults (`_every`, `_p4`, `_hashed`, `_data`).
    pub fn label(&self) -> String {
        let mut s = format!(
            "tree_w{}_d{}_t{}",
            self.width, self.depth, self.tables_per_namespace
        );
        if self.tables_at == TablesAt::Every {
            s.push_str("_every");
        }
        if self.properties > 0 {
            s.push_str(&format!("_p{}", self.properties));
        }
        if self.names == NameShape::Hashed {
            s.push_str("_hashed");
        }
        if self.table_data {
            s.push_str("_data");
        }
        s
    }
}

/// FNV-1a, 64 bits: a hashed name's digits, the same on every machine.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Entries of a fixture: at most a golden's rows.
const MAX_WIDTH: u64 = 1_000;
const MAX_DEPTH: u64 = 8;
const MAX_PROPERTIES: u64 = 100;

/// The fixtures `[fixture]` describes: one per value of `tables_per_namespace`.
pub(super) fn fixtures(raw: RawFixture) -> Result<Vec<Fixture>, PlanError> {
    let width = bounded(
        "fixture.width",
        raw.width,
        "must be at least 1 namespace per parent",
        MAX_WIDTH,
    )? as u32;
    let depth = bounded(
        "fixture.depth",
        raw.depth,
        "must be at least 1 level of namespaces",
        MAX_DEPTH,
    )? as u32;
    let per: Vec<u64> = match raw.tables_per_namespace {
        toml::Value::Integer(n) if n >= 0 => vec![n as u64],
        toml::Value::Array(list) => list
            .iter()
            .map(|v| v.as_integer().filter(|&n| n >= 0).map(|n| n as u64))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                invalid(
                    "fixture.tables_per_namespace",
                    "must be a count, or a list of counts (one golden each)",
                )
            })?,
        _ => {
            return Err(invalid(
                "fixture.tables_per_namespace",
                "must be a count, or a list of counts (one golden each)",
            ));
        }
    };
    super::checks::check_list("fixture.tables_per_namespace", &per)?;
    let tables_at = match raw.tables_at.as_deref() {
        None | Some("leaves") => TablesAt::Leaves,
        Some("every") => TablesAt::Every,
        Some(other) => {
            return Err(invalid(
                "fixture.tables_at",
                format!("is `{other}`; use \"leaves\" (the default) or \"every\""),
            ));
        }
    };
    let names = match raw.names.as_deref() {
        None | Some("plain") => NameShape::Plain,
        Some("hashed") => NameShape::Hashed,
        Some(other) => {
            return Err(invalid(
                "fixture.names",
                format!("is `{other}`; use \"plain\" (the default) or \"hashed\""),
            ));
        }
    };
    let properties = super::checks::at_most(
        "fixture.properties",
        raw.properties.unwrap_or(0),
        MAX_PROPERTIES,
    )? as u32;
    per.into_iter()
        .map(|t| {
            let f = Fixture {
                width,
                depth,
                tables_per_namespace: u32::try_from(t).unwrap_or(u32::MAX),
                tables_at,
                properties,
                names,
                table_data: raw.table_data.unwrap_or(false),
            };
            let rows = f.rows();
            if rows > limits::SIZE || u64::from(f.tables_per_namespace) != t {
                return Err(invalid(
                    "fixture",
                    format!(
                        "holds {rows} entries, more than a golden may ({}); make it narrower, \
                         shallower or with fewer tables",
                        limits::SIZE
                    ),
                ));
            }
            Ok(f)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(width: u32, depth: u32, t: u32, at: TablesAt) -> Fixture {
        Fixture {
            width,
            depth,
            tables_per_namespace: t,
            tables_at: at,
            properties: 0,
            names: NameShape::Plain,
            table_data: false,
        }
    }

    #[test]
    fn a_tree_counts_and_names_its_entries_level_by_level() {
        // warp's default: 2 wide, 3 deep, 5 tables in each leaf.
        let f = tree(2, 3, 5, TablesAt::Leaves);
        assert_eq!(f.namespaces(), 2 + 4 + 8);
        assert_eq!(f.tables(), 8 * 5);
        assert_eq!(f.rows(), 54);
        assert_eq!(f.parents(), 1 + 2 + 4);
        let ns: Vec<String> = (0..f.namespaces()).map(|k| f.namespace_id(k)).collect();
        assert_eq!(ns[0], "ns_0");
        assert_eq!(ns[1], "ns_1");
        assert_eq!(ns[2], "ns_0$ns_0");
        assert_eq!(ns[5], "ns_1$ns_1");
        assert_eq!(ns[6], "ns_0$ns_0$ns_0");
        assert_eq!(ns[13], "ns_1$ns_1$ns_1");
        let unique: std::collections::BTreeSet<_> = ns.iter().collect();
        assert_eq!(unique.len(), ns.len());
        assert_eq!(f.table_id(0), "ns_0$ns_0$ns_0$table_0");
        assert_eq!(f.table_id(7), "ns_0$ns_0$ns_1$table_2");
        assert_eq!(f.table_id(39), "ns_1$ns_1$ns_1$table_4");
        assert_eq!(f.parent_id(0), "");
        assert_eq!(f.parent_id(3), "ns_0$ns_0");
        // Every table's namespace is one of the tree's.
        for k in 0..f.tables() {
            let id = f.table_id(k);
            let (parent, _) = id.rsplit_once(DELIMITER).unwrap();
            assert!(ns.iter().any(|n| n == parent), "{id}");
        }
        let every = tree(2, 2, 3, TablesAt::Every);
        assert_eq!(every.tables(), 6 * 3);
        assert_eq!(every.table_id(0), "ns_0$table_0");
        assert_eq!(every.table_id(17), "ns_1$ns_1$table_2");
    }

    #[test]
    fn hashed_names_keep_their_place_and_differ_by_path() {
        let f = Fixture {
            names: NameShape::Hashed,
            properties: 2,
            ..tree(2, 2, 2, TablesAt::Leaves)
        };
        let a = f.namespace_id(2);
        let b = f.namespace_id(4);
        assert!(a.starts_with("ns_0_") && a.contains("$ns_0_"), "{a}");
        assert_ne!(a.split('$').nth(1), b.split('$').nth(1), "{a} {b}");
        assert_eq!(f.namespace_id(2), a, "the same on every call");
        assert_eq!(
            f.metadata().as_deref(),
            Some(r#"{"prop_0":"value_0","prop_1":"value_1"}"#)
        );
        assert_eq!(f.label(), "tree_w2_d2_t2_p2_hashed");
    }

    #[test]
    fn fixtures_are_read_one_per_count_of_tables() {
        let raw = |extra: &str| -> RawFixture {
            toml::from_str(&format!("width = 2\ndepth = 1\n{extra}")).unwrap()
        };
        let fs = fixtures(raw("tables_per_namespace = [10, 100]")).unwrap();
        assert_eq!(fs.len(), 2);
        assert_eq!(fs[1].tables(), 200);
        for (extra, key) in [
            ("tables_per_namespace = -1", "fixture.tables_per_namespace"),
            (
                "tables_per_namespace = [1, 1]",
                "fixture.tables_per_namespace",
            ),
            (
                "tables_per_namespace = 1\ntables_at = 'roots'",
                "fixture.tables_at",
            ),
            ("tables_per_namespace = 1\nnames = 'uuid'", "fixture.names"),
            (
                "tables_per_namespace = 1\nproperties = 101",
                "fixture.properties",
            ),
        ] {
            let e = fixtures(raw(extra)).unwrap_err().to_string();
            assert!(e.contains(key), "{extra}: {e}");
        }
        let deep: RawFixture =
            toml::from_str("width = 1000\ndepth = 8\ntables_per_namespace = 1").unwrap();
        assert!(fixtures(deep).unwrap_err().to_string().contains("narrower"));
    }
}
