//! What a catalog's requests cost: a dated table of object stores' list prices (bench's own,
//! `us-east-2026.toml`, or a user's, `--prices FILE`), and the dollars of counted requests
//! on each store. Requests are billed by class: GET and HEAD as reads; PUT (conditional
//! ones included), COPY and LIST as writes; DELETE apart; on S3 Express One Zone also every
//! byte each PUT uploads and each GET retrieves, per GB of the store's own unit
//! (`gb_bytes`: AWS's is binary).

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
    /// The day its prices were read from `source` (bench's own table gives it for every
    /// store; a user's may leave it out).
    #[serde(default)]
    pub read: String,
    /// Per 1,000 PUT, COPY, POST and LIST requests.
    pub write_per_1000: f64,
    /// Per 1,000 GET and HEAD requests.
    pub read_per_1000: f64,
    /// Per 1,000 DELETE requests.
    pub delete_per_1000: f64,
    /// Per GB of every byte each PUT uploads and each GET retrieves (S3 Express One Zone's
    /// data upload and retrieval).
    #[serde(default)]
    pub upload_per_gb: f64,
    #[serde(default)]
    pub retrieval_per_gb: f64,
    /// Per GB stored a month.
    pub storage_gb_month: f64,
    /// The bytes of the GB the per-GB prices are in: 1073741824 (a binary GB, as AWS, Google
    /// and Azure bill; the default) or 1000000000.
    #[serde(default = "binary_gb")]
    pub gb_bytes: f64,
}

fn binary_gb() -> f64 {
    (1u64 << 30) as f64
}

/// What one operation's requests and bytes cost on a store, by what it is billed for.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bill {
    /// Its requests, each at its class's price.
    pub requests: f64,
    /// The bytes its PUTs uploaded and its GETs retrieved, where the store bills them.
    pub upload: f64,
    pub retrieval: f64,
}

impl Bill {
    pub fn total(&self) -> f64 {
        self.requests + self.upload + self.retrieval
    }
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
                s.gb_bytes,
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
    /// What one operation's requests and bytes (`io`, means per operation) cost.
    pub fn bill(&self, io: &IoPerOp) -> Bill {
        let writes = io.put + io.copy + io.list;
        let reads = io.get + io.head;
        Bill {
            requests: writes * self.write_per_1000 / 1000.0
                + reads * self.read_per_1000 / 1000.0
                + io.delete * self.delete_per_1000 / 1000.0,
            upload: io.written_bytes / self.gb_bytes * self.upload_per_gb,
            retrieval: io.read_bytes / self.gb_bytes * self.retrieval_per_gb,
        }
    }

    /// The dollars of one operation's requests and bytes (`io`, means per operation).
    pub fn dollars(&self, io: &IoPerOp) -> f64 {
        self.bill(io).total()
    }

    /// The dollars a month of storing `bytes`.
    pub fn storage_dollars(&self, bytes: f64) -> f64 {
        bytes / self.gb_bytes * self.storage_gb_month
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(name: &str) -> Store {
        let t = PriceTable::builtin();
        (t.stores.into_iter().find(|s| s.name == name)).expect("a store of bench's table")
    }

    /// Dollars to the cent, as the providers' examples give them.
    fn cents(x: f64) -> f64 {
        (x * 100.0).round() / 100.0
    }

    /// AWS's own worked example for S3 Express One Zone (S3 FAQs, "Example 1", us-east-1):
    /// a million PUTs and nine million GETs of 10 KB, 10 GB stored for 30 days. Requests
    /// $1.13 and $0.27, data upload $0.03 and retrieval $0.05 — every byte of a 10 KB request
    /// billed, per binary GB —, storage $1.10: $2.58 in all (the deletes are free).
    #[test]
    fn s3_express_bills_as_aws_s_worked_example() {
        let express = store("s3-express");
        let kb10 = 10.0 * 1024.0;
        let put = IoPerOp {
            put: 1.0,
            written_bytes: kb10,
            ..IoPerOp::default()
        };
        let get = IoPerOp {
            get: 1.0,
            read_bytes: kb10,
            ..IoPerOp::default()
        };
        let (p, g) = (express.bill(&put), express.bill(&get));
        assert_eq!(cents(p.requests * 1e6), 1.13);
        assert_eq!(cents(p.upload * 1e6), 0.03);
        assert_eq!(cents(g.requests * 9e6), 0.27);
        assert_eq!(cents(g.retrieval * 9e6), 0.05);
        let delete = IoPerOp {
            delete: 1.0,
            ..IoPerOp::default()
        };
        assert_eq!(express.dollars(&delete), 0.0);
        let storage = express.storage_dollars(10.0 * (1u64 << 30) as f64);
        assert_eq!(cents(storage), 1.10);
        let all = cents(p.requests * 1e6)
            + cents(p.upload * 1e6)
            + cents(g.requests * 9e6)
            + cents(g.retrieval * 9e6)
            + cents(storage);
        assert_eq!(cents(all), 2.58);
        // Below 512 KiB a request is billed by its bytes too (a 1 KiB PUT is not free).
        let small = IoPerOp {
            written_bytes: 1024.0,
            ..put
        };
        assert!(express.bill(&small).upload > 0.0);
    }

    /// Cloudflare's own examples (R2 pricing, "R2 billing examples"): 290,000,000 billable
    /// reads (GetObject and HeadObject are Class B) cost $104.40; 990 GB-months $14.85.
    #[test]
    fn r2_bills_as_cloudflare_s_worked_examples() {
        let r2 = store("r2");
        let read = |get: f64, head: f64| IoPerOp {
            get,
            head,
            ..IoPerOp::default()
        };
        assert_eq!(cents(r2.dollars(&read(1.0, 0.0)) * 290e6), 104.40);
        assert_eq!(cents(r2.dollars(&read(0.0, 1.0)) * 290e6), 104.40);
        assert_eq!(cents(r2.storage_dollars(990e9)), 14.85);
        // ListObjects is Class A, with PutObject and CopyObject ($4.50 a million).
        let list = IoPerOp {
            list: 1.0,
            ..IoPerOp::default()
        };
        assert_eq!(cents(r2.dollars(&list) * 1e6), 4.50);
    }

    /// Every store of bench's table names its source and the day it was read, and the GB
    /// its per-GB prices are in; bytes are billed only where the store bills them.
    #[test]
    fn every_row_is_dated_cited_and_in_its_unit() {
        let t = PriceTable::builtin();
        let names: Vec<&str> = t.stores.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, BUILTIN_STORES);
        for s in &t.stores {
            assert!(s.source.starts_with("https://"), "{}", s.name);
            assert_eq!(s.read.len(), "2026-12-05".len(), "{}", s.name);
            assert!(
                [1e9, (1u64 << 30) as f64].contains(&s.gb_bytes),
                "{}",
                s.name
            );
            let bytes = IoPerOp {
                written_bytes: 1e9,
                read_bytes: 1e9,
                ..IoPerOp::default()
            };
            let billed = s.dollars(&bytes) > 0.0;
            assert_eq!(billed, s.name == "s3-express", "{}", s.name);
        }
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
