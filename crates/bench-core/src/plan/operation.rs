//! The operation a cell measures: the catalog's, by the reference's names, and those on the
//! shared table of a cell's copy.

use std::fmt;
use std::str::FromStr;

/// The committed catalog operation (or read) a cell measures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Operation {
    /// The plan's default operation (and a record's, where it is built field by field).
    #[default]
    CreateNamespace,
    CreateTable,
    DeclareTable,
    /// Reads: `cold` opens a fresh namespace for every operation (timed with it); warm reads
    /// reuse the worker's namespace and its caches.
    ListNamespaces {
        cold: bool,
    },
    ListTables {
        cold: bool,
    },
    DescribeTable {
        cold: bool,
    },
    /// Reads of one of the golden's entries: a namespace's description, and whether a
    /// namespace or a table exists.
    DescribeNamespace {
        cold: bool,
    },
    NamespaceExists {
        cold: bool,
    },
    TableExists {
        cold: bool,
    },
    /// Commits that remove one of the golden's entries each: a table dropped (its entry and
    /// its directory), a table deregistered (its entry only), an empty namespace dropped.
    DropTable,
    DeregisterTable,
    DropNamespace,
    /// Commits to the shared table: lance's dataset API appending to the table opened
    /// through the namespace (`DatasetBuilder::from_namespace`, then an append with
    /// `InsertBuilder`, as applications do), and the namespace's own
    /// `insert_into_table` with the same rows (as a REST client calls it).
    TableAppend,
    InsertIntoTable,
    /// The append of [`Operation::TableAppend`] with the namespace managing the table's
    /// versions (`table_version_tracking_enabled`, which its cells set): each commit is
    /// the namespace's `create_table_version`.
    CreateTableVersion,
    /// A property update of the shared table: lance's `update_table_schema_metadata`
    /// through the namespace, setting the key `bench_w<worker>` to the operation's index (a
    /// version of the table, no rows).
    UpdateTableMetadata,
    /// Reads of the shared table's history: its latest version, as lance resolves it
    /// (`list_table_versions`, newest first, limit 1), and `describe_table_version`.
    ListTableVersions {
        cold: bool,
    },
    DescribeTableVersion {
        cold: bool,
    },
    /// Maintenance: lance's cleanup of `__manifest`'s old versions (its role's retention:
    /// keep the last N, or those younger than T), run on the catalog's store directly, as an
    /// operator's scheduled job does. It changes no entry; it removes versions and files.
    CleanupVersions,
}

/// What a successful operation leaves behind: what verification checks after a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// One row more in `__manifest`: the object its id names (`<prefix><worker>_<index>`).
    CatalogRow,
    /// One row fewer in `__manifest`: the golden entry it names, and no other.
    CatalogRowGone,
    /// One version more of the shared table, with the plan's `rows_per_commit` rows.
    TableVersion,
    /// One version more of the shared table, no rows, and the property it wrote.
    TableProperty,
    /// Nothing: a read.
    Nothing,
}

/// The kind of a golden's entries: its first third namespaces (`ns_<k>`), the rest tables
/// (`table_<k>`), all at the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entry {
    Namespace,
    Table,
}

impl Entry {
    /// How many entries of this kind a golden of `rows` rows holds.
    pub fn count(self, rows: u64) -> u64 {
        match self {
            Entry::Namespace => rows / 3,
            Entry::Table => rows - rows / 3,
        }
    }
}

/// Which catalog entry each operation of a worker names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Names {
    /// The entry it creates, of a kind: `<prefix><worker>_<index>`, with a run's own mark.
    Creates(Entry, &'static str),
    /// One of the golden's entries of a kind, read, spread over workers as the reference
    /// spreads them: the `(worker × 1,000,000 + index) mod count`-th.
    ReadsGolden(Entry),
    /// One of the golden's entries of a kind, removed, each once: worker `w` of `W` takes
    /// the `w`-th, the `w + W`-th, …, its warm-up first.
    RemovesGolden(Entry),
    /// A namespace's children of a kind, listed (the root's, in a flat golden): all of them
    /// in one request, or in pages of the plan's `page_size`, every page.
    Lists(Entry),
    /// The shared table's property `bench_w<worker>`, set to the operation's index.
    Property,
    /// None: the shared table.
    Root,
}

/// What an operation works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `__manifest`, through the namespace.
    Catalog,
    /// The shared table of a cell's copy: its rows.
    Table,
    /// The shared table's history: its versions.
    TableVersions,
}

/// The shape of an operation in the time and request models (`estimate.rs`,
/// `requests.rs`): a commit of the catalog (and what it costs beyond a plain one), of the
/// shared table, or a read of either.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cost {
    /// A copy-on-write rewrite of `__manifest`, plus `extra_secs` of its own (on local
    /// disk, 2 cores: writing a table's data beside it).
    CatalogCommit { extra_secs: f64 },
    /// An append to the shared table, whatever the catalog's size.
    TableCommit,
    /// A read of `__manifest`: a lookup or a scan warm, a namespace opened anew cold.
    CatalogRead,
    /// A read of the shared table's history.
    TableRead,
}

/// Everything bench knows of an operation, in one place: [`Operation::describe`] gives
/// each operation's, and every stage reads it from there (names, verification, ids,
/// estimates, whether a worker opens a fresh namespace for it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Descriptor {
    /// The name plans, records and the reference use.
    pub name: &'static str,
    pub effect: Effect,
    pub target: Target,
    /// The catalog entry each of its operations names.
    pub names: Names,
    /// A fresh namespace for every operation, opened inside its timing.
    pub cold: bool,
    pub cost: Cost,
    /// Whether a failure may come after its effect: lance's `drop_table` removes the entry,
    /// then the table's files, and a refused delete of a file fails it with the entry gone.
    /// Such a failure's outcome is unknown (looked up after the cell), not failed.
    pub fails_after_effect: bool,
}

/// A catalog commit creating an entry of kind `entry`, `prefix<worker>_<index>`.
const fn catalog_commit(
    name: &'static str,
    entry: Entry,
    prefix: &'static str,
    extra_secs: f64,
) -> Descriptor {
    Descriptor {
        name,
        effect: Effect::CatalogRow,
        target: Target::Catalog,
        names: Names::Creates(entry, prefix),
        cold: false,
        cost: Cost::CatalogCommit { extra_secs },
        fails_after_effect: false,
    }
}

/// A catalog commit removing one of the golden's entries of kind `entry` (and, where
/// `files`, the entry's files after it).
const fn catalog_removal(name: &'static str, entry: Entry, files: bool) -> Descriptor {
    Descriptor {
        name,
        effect: Effect::CatalogRowGone,
        target: Target::Catalog,
        names: Names::RemovesGolden(entry),
        cold: false,
        cost: Cost::CatalogCommit { extra_secs: 0.0 },
        fails_after_effect: files,
    }
}

/// A commit to the shared table.
const fn table_commit(name: &'static str) -> Descriptor {
    Descriptor {
        name,
        effect: Effect::TableVersion,
        target: Target::Table,
        names: Names::Root,
        cold: false,
        cost: Cost::TableCommit,
        fails_after_effect: false,
    }
}

/// A read (warm, or `cold` through a namespace opened for it) of `target`, naming
/// `entry`, by one of its two names (warm, cold).
const fn read(
    target: Target,
    entry: Names,
    cost: Cost,
    cold: bool,
    names: [&'static str; 2],
) -> Descriptor {
    Descriptor {
        name: names[cold as usize],
        effect: Effect::Nothing,
        target,
        names: entry,
        cold,
        cost,
        fails_after_effect: false,
    }
}

/// A read of `__manifest`: of the root's entries, or of one golden entry.
const fn catalog_read(cold: bool, entry: Names, names: [&'static str; 2]) -> Descriptor {
    read(Target::Catalog, entry, Cost::CatalogRead, cold, names)
}

/// A read of the shared table's history.
const fn history_read(cold: bool, names: [&'static str; 2]) -> Descriptor {
    read(
        Target::TableVersions,
        Names::Root,
        Cost::TableRead,
        cold,
        names,
    )
}

impl Operation {
    /// Every operation, in the order plans list them (the names a plan's `operation` is
    /// read from).
    pub const ALL: [Operation; 27] = [
        Operation::CreateNamespace,
        Operation::CreateTable,
        Operation::DeclareTable,
        Operation::DropTable,
        Operation::DeregisterTable,
        Operation::DropNamespace,
        Operation::ListNamespaces { cold: false },
        Operation::ListTables { cold: false },
        Operation::DescribeTable { cold: false },
        Operation::DescribeNamespace { cold: false },
        Operation::NamespaceExists { cold: false },
        Operation::TableExists { cold: false },
        Operation::ListNamespaces { cold: true },
        Operation::ListTables { cold: true },
        Operation::DescribeTable { cold: true },
        Operation::DescribeNamespace { cold: true },
        Operation::NamespaceExists { cold: true },
        Operation::TableExists { cold: true },
        Operation::TableAppend,
        Operation::InsertIntoTable,
        Operation::CreateTableVersion,
        Operation::UpdateTableMetadata,
        Operation::ListTableVersions { cold: false },
        Operation::DescribeTableVersion { cold: false },
        Operation::ListTableVersions { cold: true },
        Operation::DescribeTableVersion { cold: true },
        Operation::CleanupVersions,
    ];

    /// The operation's descriptor: the one place that says what it is.
    pub const fn describe(self) -> Descriptor {
        match self {
            Operation::CreateNamespace => {
                catalog_commit("write-create-namespace", Entry::Namespace, "bench_w", 0.0)
            }
            Operation::CreateTable => {
                catalog_commit("write-create-table", Entry::Table, "bench_t", 0.005)
            }
            Operation::DeclareTable => {
                catalog_commit("write-declare-table", Entry::Table, "bench_d", 0.0)
            }
            Operation::DropTable => catalog_removal("write-drop-table", Entry::Table, true),
            Operation::DeregisterTable => {
                catalog_removal("write-deregister-table", Entry::Table, false)
            }
            Operation::DropNamespace => {
                catalog_removal("write-drop-namespace", Entry::Namespace, false)
            }
            Operation::ListNamespaces { cold } => catalog_read(
                cold,
                Names::Lists(Entry::Namespace),
                ["warm-read-list-namespaces", "cold-read-list-namespaces"],
            ),
            Operation::ListTables { cold } => catalog_read(
                cold,
                Names::Lists(Entry::Table),
                ["warm-read-list-tables", "cold-read-list-tables"],
            ),
            Operation::DescribeTable { cold } => catalog_read(
                cold,
                Names::ReadsGolden(Entry::Table),
                ["warm-read-describe-table", "cold-read-describe-table"],
            ),
            Operation::DescribeNamespace { cold } => catalog_read(
                cold,
                Names::ReadsGolden(Entry::Namespace),
                [
                    "warm-read-describe-namespace",
                    "cold-read-describe-namespace",
                ],
            ),
            Operation::NamespaceExists { cold } => catalog_read(
                cold,
                Names::ReadsGolden(Entry::Namespace),
                ["warm-read-namespace-exists", "cold-read-namespace-exists"],
            ),
            Operation::TableExists { cold } => catalog_read(
                cold,
                Names::ReadsGolden(Entry::Table),
                ["warm-read-table-exists", "cold-read-table-exists"],
            ),
            Operation::TableAppend => table_commit("write-table-append"),
            Operation::InsertIntoTable => table_commit("write-insert-into-table"),
            Operation::CreateTableVersion => table_commit("write-create-table-version"),
            Operation::UpdateTableMetadata => Descriptor {
                name: "write-update-table-metadata",
                effect: Effect::TableProperty,
                target: Target::Table,
                names: Names::Property,
                cold: false,
                cost: Cost::TableCommit,
                fails_after_effect: false,
            },
            Operation::ListTableVersions { cold } => history_read(
                cold,
                [
                    "warm-read-list-table-versions",
                    "cold-read-list-table-versions",
                ],
            ),
            Operation::DescribeTableVersion { cold } => history_read(
                cold,
                [
                    "warm-read-describe-table-version",
                    "cold-read-describe-table-version",
                ],
            ),
            Operation::CleanupVersions => Descriptor {
                name: "maintain-cleanup-versions",
                effect: Effect::Nothing,
                target: Target::Catalog,
                names: Names::Root,
                cold: false,
                cost: Cost::CatalogRead,
                fails_after_effect: false,
            },
        }
    }

    pub fn as_str(self) -> &'static str {
        self.describe().name
    }

    /// Whether the operation works on the cell's shared table (not on `__manifest`).
    pub fn on_table(self) -> bool {
        match self.describe().target {
            Target::Catalog => false,
            Target::Table | Target::TableVersions => true,
        }
    }

    /// Whether the operation commits (to `__manifest`, or to the shared table), and so is
    /// verified.
    pub fn is_write(self) -> bool {
        match self.describe().effect {
            Effect::CatalogRow
            | Effect::CatalogRowGone
            | Effect::TableVersion
            | Effect::TableProperty => true,
            Effect::Nothing => false,
        }
    }

    /// Whether the operation removes one of the golden's entries.
    pub fn removes(self) -> bool {
        self.describe().effect == Effect::CatalogRowGone
    }

    /// Whether the operation lists the root's children (and so takes a page size).
    pub fn lists(self) -> bool {
        match self.describe().names {
            Names::Lists(_) => true,
            Names::Creates(..)
            | Names::ReadsGolden(_)
            | Names::RemovesGolden(_)
            | Names::Property
            | Names::Root => false,
        }
    }

    /// Whether it maintains the catalog (no entry named, no read of one): a role's only, and
    /// never in a warm-up.
    pub fn is_maintenance(self) -> bool {
        self == Operation::CleanupVersions
    }

    /// Whether every operation opens a fresh namespace.
    pub fn is_cold(self) -> bool {
        self.describe().cold
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Operation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Operation::ALL
            .into_iter()
            .find(|op| op.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Operation::ALL.iter().map(|o| o.as_str()).collect();
                format!(
                    "unknown operation `{s}`; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// In records, an operation is its name.
impl serde::Serialize for Operation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Operation {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_name_round_trips() {
        for op in Operation::ALL {
            assert_eq!(op.as_str().parse::<Operation>().unwrap(), op);
            assert_eq!(op.is_write(), op.as_str().starts_with("write-"));
            assert_eq!(op.is_cold(), op.as_str().starts_with("cold-"));
            let name = op.as_str();
            let table = [
                "table-append",
                "into-table",
                "table-version",
                "table-metadata",
            ];
            assert!(
                !name.contains("table-version")
                    || !op.is_write()
                    || op == Operation::CreateTableVersion
            );
            assert_eq!(op.on_table(), table.iter().any(|t| name.contains(t)));
            let json = serde_json::to_string(&op).unwrap();
            assert_eq!(json, format!("\"{op}\""));
            assert_eq!(serde_json::from_str::<Operation>(&json).unwrap(), op);
            // Only catalog commits create objects, each kind under a prefix of its own, and
            // only they remove the golden's entries.
            let d = op.describe();
            assert_eq!(
                matches!(d.names, Names::Creates(..)),
                d.effect == Effect::CatalogRow
            );
            assert_eq!(
                matches!(d.names, Names::RemovesGolden(_)),
                d.effect == Effect::CatalogRowGone
            );
        }
        let prefixes: std::collections::BTreeSet<_> = Operation::ALL
            .iter()
            .filter_map(|o| match o.describe().names {
                Names::Creates(_, p) => Some(p),
                _ => None,
            })
            .collect();
        assert_eq!(prefixes.len(), 3, "{prefixes:?}");
        let names: std::collections::BTreeSet<_> =
            Operation::ALL.iter().map(|o| o.as_str()).collect();
        assert_eq!(names.len(), Operation::ALL.len());
        assert!(serde_json::from_str::<Operation>("\"write-drop\"").is_err());
    }
}
