//! What operations cost in object-store requests and bytes: counts by kind, as a worker
//! measures them through lance's own object-store layer.

use std::ops::{Add, AddAssign, Sub};

use serde::{Deserialize, Serialize};

/// Requests by kind and bytes moved. `put` includes conditional puts, which are counted
/// again in `conditional_put`; `get` includes ranged gets; a HEAD is a `head`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoCounts {
    pub get: u64,
    pub put: u64,
    pub conditional_put: u64,
    pub list: u64,
    pub head: u64,
    pub delete: u64,
    pub copy: u64,
    pub read_bytes: u64,
    pub written_bytes: u64,
}

impl IoCounts {
    /// Every request, of any kind (a conditional put once).
    pub fn requests(&self) -> u64 {
        self.get + self.put + self.list + self.head + self.delete + self.copy
    }

    /// The mean per operation over `ops` operations; `None` for none.
    pub fn per_op(&self, ops: u64) -> Option<IoPerOp> {
        (ops > 0).then(|| {
            let m = |v: u64| v as f64 / ops as f64;
            IoPerOp {
                get: m(self.get),
                put: m(self.put),
                conditional_put: m(self.conditional_put),
                list: m(self.list),
                head: m(self.head),
                delete: m(self.delete),
                copy: m(self.copy),
                read_bytes: m(self.read_bytes),
                written_bytes: m(self.written_bytes),
            }
        })
    }
}

impl Add for IoCounts {
    type Output = IoCounts;
    fn add(self, o: IoCounts) -> IoCounts {
        IoCounts {
            get: self.get + o.get,
            put: self.put + o.put,
            conditional_put: self.conditional_put + o.conditional_put,
            list: self.list + o.list,
            head: self.head + o.head,
            delete: self.delete + o.delete,
            copy: self.copy + o.copy,
            read_bytes: self.read_bytes + o.read_bytes,
            written_bytes: self.written_bytes + o.written_bytes,
        }
    }
}

impl AddAssign for IoCounts {
    fn add_assign(&mut self, o: IoCounts) {
        *self = *self + o;
    }
}

/// What happened between two snapshots of the same counters.
impl Sub for IoCounts {
    type Output = IoCounts;
    fn sub(self, o: IoCounts) -> IoCounts {
        IoCounts {
            get: self.get.saturating_sub(o.get),
            put: self.put.saturating_sub(o.put),
            conditional_put: self.conditional_put.saturating_sub(o.conditional_put),
            list: self.list.saturating_sub(o.list),
            head: self.head.saturating_sub(o.head),
            delete: self.delete.saturating_sub(o.delete),
            copy: self.copy.saturating_sub(o.copy),
            read_bytes: self.read_bytes.saturating_sub(o.read_bytes),
            written_bytes: self.written_bytes.saturating_sub(o.written_bytes),
        }
    }
}

/// [`IoCounts`] per operation (means).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct IoPerOp {
    pub get: f64,
    pub put: f64,
    pub conditional_put: f64,
    pub list: f64,
    pub head: f64,
    pub delete: f64,
    pub copy: f64,
    pub read_bytes: f64,
    pub written_bytes: f64,
}

impl IoPerOp {
    /// Every request per operation, of any kind (a conditional put once).
    pub fn requests(&self) -> f64 {
        self.get + self.put + self.list + self.head + self.delete + self.copy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_subtract_and_average() {
        let a = IoCounts {
            get: 4,
            put: 2,
            conditional_put: 1,
            read_bytes: 100,
            ..IoCounts::default()
        };
        let b = IoCounts {
            get: 10,
            put: 3,
            conditional_put: 2,
            list: 1,
            read_bytes: 160,
            ..IoCounts::default()
        };
        let d = b - a;
        assert_eq!(
            (d.get, d.put, d.conditional_put, d.list, d.read_bytes),
            (6, 1, 1, 1, 60)
        );
        assert_eq!(d.requests(), 8, "a conditional put counts once");
        assert_eq!(a + d, b);
        let per = b.per_op(2).unwrap();
        assert_eq!((per.get, per.read_bytes), (5.0, 80.0));
        assert_eq!(per.requests(), 7.0);
        assert!(b.per_op(0).is_none());
    }
}
