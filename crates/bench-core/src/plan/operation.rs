//! The operation a cell measures: the catalog's, by the reference's names, and those on the
//! shared table of a cell's copy.

use std::fmt;
use std::str::FromStr;

/// The committed catalog operation (or read) a cell measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
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
    /// Reads of the shared table's history: its latest version, as lance resolves it
    /// (`list_table_versions`, newest first, limit 1), and `describe_table_version`.
    ListTableVersions {
        cold: bool,
    },
    DescribeTableVersion {
        cold: bool,
    },
}

impl Operation {
    pub const ALL: [Operation; 16] = [
        Operation::CreateNamespace,
        Operation::CreateTable,
        Operation::DeclareTable,
        Operation::ListNamespaces { cold: false },
        Operation::ListTables { cold: false },
        Operation::DescribeTable { cold: false },
        Operation::ListNamespaces { cold: true },
        Operation::ListTables { cold: true },
        Operation::DescribeTable { cold: true },
        Operation::TableAppend,
        Operation::InsertIntoTable,
        Operation::CreateTableVersion,
        Operation::ListTableVersions { cold: false },
        Operation::DescribeTableVersion { cold: false },
        Operation::ListTableVersions { cold: true },
        Operation::DescribeTableVersion { cold: true },
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Operation::CreateNamespace => "write-create-namespace",
            Operation::CreateTable => "write-create-table",
            Operation::DeclareTable => "write-declare-table",
            Operation::ListNamespaces { cold: false } => "warm-read-list-namespaces",
            Operation::ListTables { cold: false } => "warm-read-list-tables",
            Operation::DescribeTable { cold: false } => "warm-read-describe-table",
            Operation::ListNamespaces { cold: true } => "cold-read-list-namespaces",
            Operation::ListTables { cold: true } => "cold-read-list-tables",
            Operation::DescribeTable { cold: true } => "cold-read-describe-table",
            Operation::TableAppend => "write-table-append",
            Operation::InsertIntoTable => "write-insert-into-table",
            Operation::CreateTableVersion => "write-create-table-version",
            Operation::ListTableVersions { cold: false } => "warm-read-list-table-versions",
            Operation::DescribeTableVersion { cold: false } => "warm-read-describe-table-version",
            Operation::ListTableVersions { cold: true } => "cold-read-list-table-versions",
            Operation::DescribeTableVersion { cold: true } => "cold-read-describe-table-version",
        }
    }

    /// Whether the operation works on the cell's shared table (not on `__manifest`).
    pub fn on_table(self) -> bool {
        matches!(
            self,
            Operation::TableAppend
                | Operation::InsertIntoTable
                | Operation::CreateTableVersion
                | Operation::ListTableVersions { .. }
                | Operation::DescribeTableVersion { .. }
        )
    }

    /// Whether the operation commits (to `__manifest`, or to the shared table), and so is
    /// verified.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            Operation::CreateNamespace
                | Operation::CreateTable
                | Operation::DeclareTable
                | Operation::TableAppend
                | Operation::InsertIntoTable
                | Operation::CreateTableVersion
        )
    }

    /// Whether every operation opens a fresh namespace.
    pub fn is_cold(self) -> bool {
        matches!(
            self,
            Operation::ListNamespaces { cold: true }
                | Operation::ListTables { cold: true }
                | Operation::DescribeTable { cold: true }
                | Operation::ListTableVersions { cold: true }
                | Operation::DescribeTableVersion { cold: true }
        )
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
            let table = ["table-append", "into-table", "table-version"];
            assert!(
                !name.contains("table-version")
                    || !op.is_write()
                    || op == Operation::CreateTableVersion
            );
            assert_eq!(op.on_table(), table.iter().any(|t| name.contains(t)));
            let json = serde_json::to_string(&op).unwrap();
            assert_eq!(json, format!("\"{op}\""));
            assert_eq!(serde_json::from_str::<Operation>(&json).unwrap(), op);
        }
        assert!(serde_json::from_str::<Operation>("\"write-drop\"").is_err());
    }
}
