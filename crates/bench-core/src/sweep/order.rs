//! The order of a sweep's runs: which cell and repetition come next, and which arm first.
//! Pure: the run loop asks, and the unit tests here check it without lance.

use crate::plan::Order;

/// The order of a sweep's runs: (cell index, repetition) pairs. `groups` gives each cell's
/// group: consecutive cells of one group (the variants of builds and properties of one
/// shape) run each repetition together, in an order rotating by one each repetition, so
/// that a drift of the machine weighs on all of them alike.
pub fn schedule(groups: &[usize], repetitions: u32, order: Order) -> Vec<(usize, u32)> {
    let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        match spans.last_mut() {
            Some(s) if groups[s.start] == *g => s.end = i + 1,
            _ => spans.push(i..i + 1),
        }
    }
    let rotated = move |s: std::ops::Range<usize>, r: u32| {
        let n = s.len();
        let shift = (r as usize - 1) % n;
        (0..n).map(move |i| (s.start + (i + shift) % n, r))
    };
    let reps = 1..=repetitions;
    match order {
        Order::Sequential => spans
            .into_iter()
            .flat_map(|s| reps.clone().flat_map(move |r| rotated(s.clone(), r)))
            .collect(),
        Order::Interleaved => reps
            .flat_map(|r| spans.clone().into_iter().flat_map(move |s| rotated(s, r)))
            .collect(),
    }
}

/// The arms of a repetition in the order they run: A B, then B A, … so that a drift of the
/// machine weighs on both arms alike.
pub fn arm_order<T>(arms: &[T], repetition: u32) -> Vec<&T> {
    let mut order: Vec<&T> = arms.iter().collect();
    if repetition.is_multiple_of(2) {
        order.reverse();
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_runs_a_cell_s_repetitions_together_interleaved_spreads_them() {
        assert_eq!(
            schedule(&[0, 1], 3, Order::Sequential),
            [(0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3)]
        );
        assert_eq!(
            schedule(&[0, 1], 3, Order::Interleaved),
            [(0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3)]
        );
    }

    /// The variants of one shape (cells 1, 2, 3 here) run each repetition together, in an
    /// order that rotates: each goes first once in three repetitions.
    #[test]
    fn variants_of_a_shape_rotate_within_each_repetition() {
        assert_eq!(
            schedule(&[0, 1, 1, 1], 3, Order::Sequential),
            [
                (0, 1),
                (0, 2),
                (0, 3),
                (1, 1),
                (2, 1),
                (3, 1),
                (2, 2),
                (3, 2),
                (1, 2),
                (3, 3),
                (1, 3),
                (2, 3)
            ]
        );
        assert_eq!(
            schedule(&[0, 1, 1], 2, Order::Interleaved),
            [(0, 1), (1, 1), (2, 1), (0, 2), (2, 2), (1, 2)]
        );
    }

    #[test]
    fn arms_alternate_a_b_b_a() {
        let seq: Vec<String> = (1..=4)
            .map(|r| arm_order(&['A', 'B'], r).into_iter().collect())
            .collect();
        assert_eq!(seq, ["AB", "BA", "AB", "BA"]);
    }
}
