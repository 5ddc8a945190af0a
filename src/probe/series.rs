//! Per-interval time series of operations and bytes during a phase.
//!
//! Buckets start at 10 ms. When a series would exceed [`MAX_BUCKETS`] buckets, adjacent
//! pairs are merged and the interval doubles, so memory stays bounded for phases of any
//! length. At phase end the merged series is coarsened to at most [`MAX_POINTS`] points
//! (never below 10 ms per interval), which gives ≥ 20 points for any phase ≥ 0.2 s.

pub use crate::result::SeriesOut;

/// Width of the finest bucket, nanoseconds.
pub const MIN_INTERVAL_NS: u64 = 10_000_000;
/// Buckets kept while recording before pairs merge.
pub const MAX_BUCKETS: usize = 4096;
/// Points in a reported series at most.
pub const MAX_POINTS: usize = 200;

/// Counts per interval since the phase start.
#[derive(Clone, Debug)]
pub struct Series {
    interval_ns: u64,
    ops: Vec<u64>,
    bytes: Vec<u64>,
    /// The bucket of the last [`Series::add`] and its start: operations finish in time
    /// order, so most land in the same bucket as the one before and need no division.
    cur_idx: usize,
    cur_start_ns: u64,
}

impl Default for Series {
    fn default() -> Self {
        Self::new()
    }
}

impl Series {
    /// An empty series with the finest interval.
    pub fn new() -> Self {
        Self {
            interval_ns: MIN_INTERVAL_NS,
            ops: vec![0],
            bytes: vec![0],
            cur_idx: 0,
            cur_start_ns: 0,
        }
    }

    /// Adds `ops` operations and `bytes` bytes completed at `at_ns` after the phase start.
    #[inline]
    pub fn add(&mut self, at_ns: u64, ops: u64, bytes: u64) {
        // The last bucket again (wrapping: a time before its start fails the test too).
        let idx = if at_ns.wrapping_sub(self.cur_start_ns) < self.interval_ns {
            self.cur_idx
        } else {
            self.locate(at_ns)
        };
        self.ops[idx] += ops;
        self.bytes[idx] += bytes;
    }

    /// The bucket of `at_ns`, made to exist (halving the series when it would exceed
    /// [`MAX_BUCKETS`]), remembered as the current one.
    #[cold]
    fn locate(&mut self, at_ns: u64) -> usize {
        let mut idx = (at_ns / self.interval_ns) as usize;
        while idx >= MAX_BUCKETS {
            self.halve();
            idx = (at_ns / self.interval_ns) as usize;
        }
        if idx >= self.ops.len() {
            self.ops.resize(idx + 1, 0);
            self.bytes.resize(idx + 1, 0);
        }
        self.cur_idx = idx;
        self.cur_start_ns = idx as u64 * self.interval_ns;
        idx
    }

    fn halve(&mut self) {
        self.interval_ns *= 2;
        self.ops = pair_sums(&self.ops);
        self.bytes = pair_sums(&self.bytes);
        self.cur_idx /= 2;
        self.cur_start_ns = self.cur_idx as u64 * self.interval_ns;
    }

    /// Adds another series of the same phase (same start).
    pub fn merge(&mut self, other: &Series) {
        let mut other = other.clone();
        while other.interval_ns < self.interval_ns {
            other.halve();
        }
        while self.interval_ns < other.interval_ns {
            self.halve();
        }
        if other.ops.len() > self.ops.len() {
            self.ops.resize(other.ops.len(), 0);
            self.bytes.resize(other.ops.len(), 0);
        }
        for (i, (&o, &b)) in other.ops.iter().zip(&other.bytes).enumerate() {
            self.ops[i] += o;
            self.bytes[i] += b;
        }
    }

    /// Adds a series that started `offset_ns` after this one's start (the next part of a
    /// phase measured in parts); its buckets land at their start times.
    pub fn append(&mut self, other: &Series, offset_ns: u64) {
        for (i, (&o, &b)) in other.ops.iter().zip(&other.bytes).enumerate() {
            if o > 0 || b > 0 {
                self.add(offset_ns + i as u64 * other.interval_ns, o, b);
            }
        }
    }

    /// The series for a phase of `wall_ns`, coarsened to at most [`MAX_POINTS`] points.
    pub fn finish(&self, wall_ns: u64) -> SeriesOut {
        let mut s = self.clone();
        let needed = (wall_ns / s.interval_ns + 1) as usize;
        if s.ops.len() < needed {
            s.ops.resize(needed, 0);
            s.bytes.resize(needed, 0);
        }
        while s.ops.len() > MAX_POINTS {
            s.halve();
        }
        SeriesOut {
            interval_s: s.interval_ns as f64 / 1e9,
            ops: s.ops,
            bytes: s.bytes,
        }
    }
}

fn pair_sums(v: &[u64]) -> Vec<u64> {
    v.chunks(2).map(|c| c.iter().sum()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn long_phase_stays_bounded_and_keeps_totals() {
        let mut s = Series::new();
        for i in 0..100_000u64 {
            s.add(i * 1_000_000, 1, 10); // one op per ms for 100 s
        }
        assert!(s.ops.len() <= MAX_BUCKETS);
        let out = s.finish(100_000_000_000);
        assert!(out.ops.len() <= MAX_POINTS && out.ops.len() >= 20);
        assert_eq!(out.ops.iter().sum::<u64>(), 100_000);
        assert_eq!(out.bytes.iter().sum::<u64>(), 1_000_000);
    }

    #[test]
    fn short_phase_has_finest_interval() {
        let mut s = Series::new();
        s.add(5_000_000, 1, 1);
        let out = s.finish(300_000_000);
        assert_eq!(out.interval_s, 0.01);
        assert_eq!(out.ops.len(), 31);
    }

    proptest! {
        /// Buckets found through the remembered bucket equal those found by division,
        /// whatever the order of the times (out of order, repeated, across halvings).
        #[test]
        fn buckets_match_division(times in proptest::collection::vec(0u64..100_000_000_000, 1..400)) {
            let mut s = Series::new();
            let mut want = std::collections::BTreeMap::<u64, u64>::new();
            for &t in &times {
                s.add(t, 1, t);
            }
            let out = s.finish(100_000_000_000);
            let interval = (out.interval_s * 1e9).round() as u64;
            for &t in &times {
                *want.entry(t / interval).or_default() += 1;
            }
            for (i, &n) in out.ops.iter().enumerate() {
                prop_assert_eq!(n, want.get(&(i as u64)).copied().unwrap_or(0), "bucket {}", i);
            }
        }

        #[test]
        fn merge_keeps_totals(a in proptest::collection::vec(0u64..200_000_000_000, 0..200),
                              b in proptest::collection::vec(0u64..200_000_000_000, 0..200)) {
            let (mut sa, mut sb) = (Series::new(), Series::new());
            a.iter().for_each(|&t| sa.add(t, 1, 2));
            b.iter().for_each(|&t| sb.add(t, 1, 2));
            sa.merge(&sb);
            let out = sa.finish(200_000_000_000);
            prop_assert_eq!(out.ops.iter().sum::<u64>(), (a.len() + b.len()) as u64);
            prop_assert_eq!(out.bytes.iter().sum::<u64>(), 2 * (a.len() + b.len()) as u64);
        }
    }
}
