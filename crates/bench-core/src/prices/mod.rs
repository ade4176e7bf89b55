//! What a catalog's requests cost: a dated table of object stores' list prices (bench's own,
//! `us-east-2026.toml`, or a user's, `--prices FILE`), and the dollars of counted requests
//! on each store. Requests are billed by class: GET and HEAD as reads; PUT (conditional
//! ones included), COPY and LIST as writes; DELETE apart; on S3 Express One Zone also the
//! bytes of each request beyond 512 KiB.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::counts::{IoCounts, IoPerOp};

/// bench's own table.
const BUILTIN: &str = include_str!("us-east-2026.toml");

/// The stores of bench's own table, in its order (`summary.csv` has a column of each).
pub const BUILTIN_STORES: [&str; 5] = [
    "s3-standard",
    "s3-express",
    "gcs-standard",
    "azure-hot",
    "r2",
];

/// Where bench's own table comes from, as records name it.
pub const BUILTIN_NAME: &str = "bench's us-east 2026 list prices";

/// A table of prices: when its prices were read, and each store's.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceTable {
    pub date: String,
    #[serde(rename = "store")]
    pub stores: Vec<Store>,
}

/// One store's prices, in dollars.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Store {
    /// A short name (`s3-standard`), the key of records' and summary columns' figures.
    pub name: String,
    pub title: String,
    pub source: String,
    /// Per 1,000 PUT, COPY, POST and LIST requests.
    pub write_per_1000: f64,
    /// Per 1,000 GET and HEAD requests.
    pub read_per_1000: f64,
    /// Per 1,000 DELETE requests.
    pub delete_per_1000: f64,
    /// Per GB written and read beyond 512 KiB of each request (S3 Express One Zone).
    #[serde(default)]
    pub upload_per_gb: f64,
    #[serde(default)]
    pub retrieval_per_gb: f64,
    /// Per GB stored a month.
    pub storage_gb_month: f64,
}

/// A price table and what records call it: bench's own, or the file it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Priced {
    pub name: String,
    pub table: PriceTable,
}

impl Priced {
    /// bench's own table.
    pub fn builtin() -> Priced {
        Priced {
            name: BUILTIN_NAME.to_string(),
            table: PriceTable::builtin(),
        }
    }

    /// `--prices FILE`, else bench's own.
    pub fn from_arg(path: Option<&std::path::Path>) -> Result<Priced, String> {
        match path {
            None => Ok(Priced::builtin()),
            Some(p) => Ok(Priced {
                name: p.display().to_string(),
                table: PriceTable::read(p)?,
            }),
        }
    }

    /// What operations cost that billed `billed` in all, `ops` of them successful: `None`
    /// for none.
    pub fn cost(&self, billed: &IoCounts, ops: u64) -> Option<Cost> {
        let per_op = billed.per_op(ops)?;
        Some(Cost {
            prices: self.name.clone(),
            usd_per_million_ops: self.table.per_million(&per_op),
            billed_per_op: per_op,
        })
    }
}

/// What a cell's operations cost: every request they made, failed ones' too, per successful
/// operation, and its dollars per million successful operations on each store of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// The price table ([`BUILTIN_NAME`], or the file `--prices` gave).
    pub prices: String,
    pub usd_per_million_ops: BTreeMap<String, f64>,
    pub billed_per_op: IoPerOp,
}

impl PriceTable {
    /// bench's own table.
    pub fn builtin() -> PriceTable {
        PriceTable::parse(BUILTIN, "bench's table").expect("bench's own price table is valid")
    }

    /// A table from a file of the same shape (`--prices FILE`).
    pub fn read(path: &std::path::Path) -> Result<PriceTable, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the price table {}: {e}", path.display()))?;
        PriceTable::parse(&text, &path.display().to_string())
    }

    /// A table from its text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<PriceTable, String> {
        let table: PriceTable = toml::from_str(text).map_err(|e| {
            format!(
                "the price table {origin} is not valid: {}; give each [[store]] name, title, \
                 source, write_per_1000, read_per_1000, delete_per_1000 and \
                 storage_gb_month (see bench's own, docs/cost.md)",
                e.message()
            )
        })?;
        if table.stores.is_empty() {
            return Err(format!("the price table {origin} has no [[store]]"));
        }
        for s in &table.stores {
            let prices = [
                s.write_per_1000,
                s.read_per_1000,
                s.delete_per_1000,
                s.upload_per_gb,
                s.retrieval_per_gb,
                s.storage_gb_month,
            ];
            if prices.iter().any(|p| !p.is_finite() || *p < 0.0) {
                return Err(format!(
                    "the price table {origin}: store `{}` has a price that is negative or \
                     not a number",
                    s.name
                ));
            }
            let plain = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
            if s.name.is_empty() || !s.name.chars().all(plain) {
                return Err(format!(
                    "the price table {origin}: store name `{}` must be lowercase letters, \
                     digits and `-` (it names columns)",
                    s.name
                ));
            }
        }
        let mut names: Vec<&str> = table.stores.iter().map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!(
                "the price table {origin} names store `{}` twice",
                w[0]
            ));
        }
        Ok(table)
    }

    /// Dollars per million operations on each store, of operations that made `io` each.
    pub fn per_million(&self, io: &IoPerOp) -> BTreeMap<String, f64> {
        (self.stores.iter())
            .map(|s| (s.name.clone(), s.dollars(io) * 1e6))
            .collect()
    }
}

impl Store {
    /// The dollars of one operation's requests and bytes (`io`, means per operation).
    pub fn dollars(&self, io: &IoPerOp) -> f64 {
        let writes = io.put + io.copy + io.list;
        let reads = io.get + io.head;
        let gb = 1e9;
        writes * self.write_per_1000 / 1000.0
            + reads * self.read_per_1000 / 1000.0
            + io.delete * self.delete_per_1000 / 1000.0
            + io.written_bytes_beyond_512k * self.upload_per_gb / gb
            + io.read_bytes_beyond_512k * self.retrieval_per_gb / gb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A commit of 3 writes (2 PUTs, one of them conditional, and a LIST) and 7 reads (4 GET,
    /// 3 HEAD): $17.8 a million on S3 Standard, $16.0 on R2, $3.60 on S3 Express; DELETEs
    /// are free; bytes beyond 512 KiB of a request cost on Express alone.
    #[test]
    fn a_commit_costs_its_requests_by_class() {
        let t = PriceTable::builtin();
        let names: Vec<&str> = t.stores.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, BUILTIN_STORES);
        let commit = IoPerOp {
            put: 2.0,
            conditional_put: 1.0,
            list: 1.0,
            get: 4.0,
            head: 3.0,
            delete: 5.0,
            ..IoPerOp::default()
        };
        let m = t.per_million(&commit);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(m["s3-standard"], 3.0 * 5.0 + 7.0 * 0.4), "{m:?}");
        assert!(close(m["gcs-standard"], m["s3-standard"]), "{m:?}");
        assert!(close(m["azure-hot"], m["s3-standard"]), "{m:?}");
        assert!(close(m["r2"], 3.0 * 4.5 + 7.0 * 0.36), "{m:?}");
        assert!(close(m["s3-express"], 3.0 * 1.13 + 7.0 * 0.03), "{m:?}");
        let large = IoPerOp {
            written_bytes_beyond_512k: 1e9,
            read_bytes_beyond_512k: 2e9,
            ..commit
        };
        let l = t.per_million(&large);
        assert!(close(l["s3-standard"], m["s3-standard"]));
        assert!(close(
            l["s3-express"] - m["s3-express"],
            (0.0032 + 2.0 * 0.0006) * 1e6
        ));
    }

    /// A user's table is checked: each error names the table and what is wrong.
    #[test]
    fn a_table_of_one_s_own_is_checked() {
        let store = |name: &str, write: &str| {
            format!(
                "date = 'x'\n[[store]]\nname = '{name}'\ntitle = 't'\nsource = 's'\n\
                 write_per_1000 = {write}\nread_per_1000 = 0.1\ndelete_per_1000 = 0\n\
                 storage_gb_month = 0.02\n"
            )
        };
        let ok = PriceTable::parse(&store("mine", "1.0"), "mine.toml").unwrap();
        assert_eq!(ok.stores[0].upload_per_gb, 0.0);
        for (text, needle) in [
            (store("mine", "-1.0"), "negative"),
            (store("Mine Store", "1.0"), "lowercase"),
            (
                store("mine", "1.0").replace("read_per_1000", "reads"),
                "not valid",
            ),
            ("date = 'x'\nstore = []\n".to_string(), "no [[store]]"),
            (
                store("a", "1.0") + &store("a", "1.0").replace("date = 'x'\n", ""),
                "twice",
            ),
        ] {
            let e = PriceTable::parse(&text, "mine.toml").unwrap_err();
            assert!(e.contains("mine.toml") && e.contains(needle), "{e}");
        }
    }
}
