//! Figures over a cell's repetitions: medians and extremes, and the grouping of records
//! into cells (each cell's records under its latest key).

use std::collections::BTreeMap;

/// The median (the mean of the two middle values for an even count); 0 for none.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The smallest and largest value; (0, 0) for none.
pub fn extremes(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// Group items by id, keeping for each id only the items with the key that id has last
/// (in input order): a cell's records under its latest key, i.e. its repetitions as they
/// stand after any plan edits. Groups come in id order, items in input order.
pub fn latest_groups<'a, T, I: Ord + Clone>(
    items: &'a [T],
    id_key: impl Fn(&'a T) -> (I, &'a str),
) -> Vec<Vec<&'a T>> {
    let mut latest: BTreeMap<I, &str> = BTreeMap::new();
    for item in items {
        let (id, key) = id_key(item);
        latest.insert(id, key);
    }
    let mut groups: BTreeMap<I, Vec<&T>> = BTreeMap::new();
    for item in items {
        let (id, key) = id_key(item);
        if latest[&id] == key {
            groups.entry(id).or_default().push(item);
        }
    }
    groups.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_extremes() {
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(vec![5.0, 30.0, 10.0]), 10.0);
        assert_eq!(median(vec![]), 0.0);
        assert_eq!(extremes(&[5.0, 30.0, 10.0]), (5.0, 30.0));
        assert_eq!(extremes(&[]), (0.0, 0.0));
    }

    #[test]
    fn groups_keep_each_ids_latest_key() {
        let items = [
            ("a", "k1", 1),
            ("b", "k1", 2),
            ("a", "k2", 3),
            ("a", "k2", 4),
            ("b", "k1", 5),
        ];
        let groups = latest_groups(&items, |t| (t.0, t.1));
        let values: Vec<Vec<i32>> = groups
            .iter()
            .map(|g| g.iter().map(|t| t.2).collect())
            .collect();
        assert_eq!(values, [vec![3, 4], vec![2, 5]]);
    }
}
