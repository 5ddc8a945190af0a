//! How steady a database engine's phase was, second by second: the figures a DBA reads
//! beside the average rate, because an average hides a checkpoint or a compaction that
//! stopped the commits for two seconds.
//!
//! * `rate_1s_p1`: the 1st percentile (nearest rank) of the phase's whole-second rates —
//!   its worst second under 100 seconds, its 1%-worst beyond;
//! * `longest_stall_s`: the longest time in which no operation completed, between the
//!   first operation's end and the last's.
//!
//! Seconds are counted from the first operation's end (second k holds the ends in
//! (k, k + 1] after it), and the last, partial second is left out (its rate would be low for no reason of the engine's).

use crate::figures::Figure;

/// The figures, declared by the workloads that record them.
pub const FIGURES: [Figure; 2] = [
    Figure::higher("rate_1s_p1", "ops/s"),
    Figure::lower("longest_stall_s", "s"),
];

/// A phase's steadiness.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Steadiness {
    /// The 1st percentile of the whole-second rates, operations per second.
    pub rate_1s_p1: f64,
    /// The longest time without a completed operation, seconds.
    pub longest_stall_s: f64,
}

impl Steadiness {
    /// From the moments operations ended (seconds on any one clock, in any order);
    /// `None` with fewer than two, or less than one whole second between the first and
    /// the last.
    pub fn from_ends(ends_s: &[f64]) -> Option<Self> {
        let mut ends: Vec<f64> = ends_s.iter().copied().filter(|x| x.is_finite()).collect();
        if ends.len() < 2 {
            return None;
        }
        ends.sort_by(f64::total_cmp);
        let first = ends[0];
        let seconds = (ends[ends.len() - 1] - first).floor() as usize;
        if seconds == 0 {
            return None;
        }
        // The first operation's end opens the count: second k holds the ends in
        // (first + k, first + k + 1].
        let mut counts = vec![0u64; seconds];
        for &e in &ends[1..] {
            let k = ((e - first).ceil() as usize).saturating_sub(1);
            if let Some(c) = counts.get_mut(k) {
                *c += 1;
            }
        }
        let rates: Vec<f64> = counts.iter().map(|&c| c as f64).collect();
        let longest = ends.windows(2).map(|w| w[1] - w[0]).fold(0.0f64, f64::max);
        Some(Self {
            rate_1s_p1: p1(&rates),
            longest_stall_s: longest,
        })
    }

    /// From an engine's own report of its rate each second (db_bench's
    /// `--report_interval_seconds=1`): the stall is the longest run of seconds with no
    /// operation, so it is known to the second only. `None` when there is no second.
    pub fn from_rates(per_second: &[f64]) -> Option<Self> {
        if per_second.is_empty() {
            return None;
        }
        let (mut run, mut longest) = (0u32, 0u32);
        for &r in per_second {
            run = if r <= 0.0 { run + 1 } else { 0 };
            longest = longest.max(run);
        }
        Some(Self {
            rate_1s_p1: p1(per_second),
            longest_stall_s: f64::from(longest),
        })
    }
}

/// The 1st percentile by nearest rank: the ⌈n/100⌉-th smallest.
fn p1(rates: &[f64]) -> f64 {
    let mut v = rates.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = v.len().div_ceil(100).max(1);
    v[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_two_second_stop_is_the_longest_stall_and_the_worst_second() {
        // 100 ops/s for 10 s, with nothing completing between 4.0 and 6.0.
        let ends: Vec<f64> = (0..1000)
            .map(|i| f64::from(i) * 0.01 + 0.005)
            .filter(|t| !(4.0..6.0).contains(t))
            .collect();
        let s = Steadiness::from_ends(&ends).unwrap();
        assert!((s.longest_stall_s - 2.01).abs() < 1e-6, "{s:?}");
        assert_eq!(s.rate_1s_p1, 0.0);
        let steady: Vec<f64> = (0..1000).map(|i| f64::from(i) * 0.01).collect();
        let s = Steadiness::from_ends(&steady).unwrap();
        assert_eq!(s.rate_1s_p1, 100.0);
        assert!((s.longest_stall_s - 0.01).abs() < 1e-9);
    }

    #[test]
    fn too_short_a_phase_has_no_steadiness() {
        assert_eq!(Steadiness::from_ends(&[1.0]), None);
        assert_eq!(Steadiness::from_ends(&[1.0, 1.5, 1.9]), None);
        assert_eq!(Steadiness::from_rates(&[]), None);
    }

    #[test]
    fn reported_rates_give_whole_seconds_of_stall() {
        let s = Steadiness::from_rates(&[900.0, 0.0, 0.0, 850.0, 0.0, 1000.0]).unwrap();
        assert_eq!((s.rate_1s_p1, s.longest_stall_s), (0.0, 2.0));
        let rates: Vec<f64> = (1..=200).map(f64::from).collect();
        // n = 200: the 2nd smallest.
        assert_eq!(Steadiness::from_rates(&rates).unwrap().rate_1s_p1, 2.0);
    }
}
