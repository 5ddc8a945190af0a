//! Per-operation latency histograms: HDR histograms in nanoseconds that merge exactly.
//!
//! The counters are kept here, in the HDR layout, and recorded inline (the `hdrhistogram`
//! crate's `record` is an out-of-line call with range and resize checks: ~7 ns of the
//! ~30 ns it cost to record an operation); the crate answers the queries.
//!
//! Within a repetition, percentiles are computed from the workers' merged buckets, never
//! averaged across workers (averaging percentiles is a classic aggregation error; see fio
//! issue #1918). Across repetitions, each repetition's percentile is one value of the
//! sample, like its MB/s: summaries give their median, mean and CI and `compare` their
//! geometric means, because a repetition (a fresh filesystem) is the unit whose spread
//! the statistics measure; pooling the buckets would weight a longer repetition more and
//! hide that spread. The buckets are stored for anyone who wants the pooled figure.

pub use crate::result::Percentiles;
use hdrhistogram::Histogram;

/// Highest latency tracked exactly: one hour. Longer values are clamped (and counted).
const MAX_NS: u64 = 3_600_000_000_000;

/// Sub-buckets per power of two: 2048 gives 3 significant digits, as an HDR histogram
/// made with `Histogram::new_with_bounds(1, MAX_NS, 3)`.
const SUB_BUCKET_BITS: u32 = 11;
/// Half of that: the sub-buckets of every bucket but the first are its upper half.
const HALF_BITS: u32 = SUB_BUCKET_BITS - 1;
/// Counters needed up to [`MAX_NS`].
const LEN: usize = index_of(MAX_NS) + 1;

/// The counter of `ns` (1 ≤ ns ≤ [`MAX_NS`]), laid out as the HDR histogram's counts
/// array (`index_for` of the `hdrhistogram` crate, unit 1): bucket `b` holds values with
/// `b` bits below their 11 highest, counter `b × 1024 + (ns >> b)`.
#[inline]
const fn index_of(ns: u64) -> usize {
    let bucket = (64 - SUB_BUCKET_BITS) - (ns | ((1 << SUB_BUCKET_BITS) - 1)).leading_zeros();
    ((bucket as usize) << HALF_BITS) + (ns >> bucket) as usize
}

/// The lowest value that lands in counter `index`.
fn value_of(index: usize) -> u64 {
    let bucket = (index >> HALF_BITS).saturating_sub(1);
    ((index - (bucket << HALF_BITS)) as u64) << bucket
}

/// A latency histogram with 3 significant digits over 1 ns – 1 h.
///
/// Recording is one counter increment at an index computed inline (a shift and a
/// leading-zero count): it is on the hot path of every operation. The counters have the
/// layout of an HDR histogram of the same bounds, and queries (percentiles, buckets) are
/// answered by the `hdrhistogram` crate from a histogram rebuilt from them, so the figures
/// are the crate's, bucket for bucket (a property test checks this).
#[derive(Clone)]
pub struct LatencyHistogram {
    /// Counts per value bucket; zeroed memory, so pages no value lands in stay unmapped.
    counts: Box<[u64]>,
    total: u64,
}

impl std::fmt::Debug for LatencyHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LatencyHistogram({} samples)", self.total)
    }
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self {
            counts: vec![0u64; LEN].into_boxed_slice(),
            total: 0,
        }
    }

    /// Records one latency in nanoseconds (clamped to 1 ns – 1 h).
    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        self.counts[index_of(ns.clamp(1, MAX_NS))] += 1;
        self.total += 1;
    }

    /// Adds all samples of `other`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.total == 0 {
            return;
        }
        for (mine, &theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            if theirs != 0 {
                *mine += theirs;
            }
        }
        self.total += other.total;
    }

    /// Removes the samples of `other`, which must all have been recorded here too (as
    /// bucket counts: removing a sample removes one count from its bucket).
    pub fn subtract(&mut self, other: &LatencyHistogram) {
        for (mine, &theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            if theirs != 0 {
                *mine = mine
                    .checked_sub(theirs)
                    .expect("subtracting samples that were recorded here");
            }
        }
        self.total -= other.total;
    }

    /// Number of recorded samples.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The same samples in an HDR histogram, for queries.
    fn hdr(&self) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, MAX_NS, 3).expect("valid histogram bounds");
        for (i, &n) in self.counts.iter().enumerate() {
            if n != 0 {
                h.saturating_record_n(value_of(i), n);
            }
        }
        h
    }

    /// The value at quantile `q` (0–1) in nanoseconds.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        self.hdr().value_at_quantile(q)
    }

    /// p50, p90, p99, p99.9 and max in microseconds; `None` when empty.
    pub fn percentiles_us(&self) -> Option<Percentiles> {
        if self.total == 0 {
            return None;
        }
        let h = self.hdr();
        let us = |ns: u64| ns as f64 / 1000.0;
        Some(Percentiles {
            p50: us(h.value_at_quantile(0.50)),
            p90: us(h.value_at_quantile(0.90)),
            p99: us(h.value_at_quantile(0.99)),
            p999: us(h.value_at_quantile(0.999)),
            max: us(h.max()),
        })
    }

    /// A histogram rebuilt from [`Self::buckets`] (bucket-exact: percentiles and merges of
    /// the rebuilt histogram equal the original's).
    pub fn from_buckets(buckets: &[(u64, u64)]) -> Self {
        let mut h = Self::new();
        for &(v, n) in buckets {
            h.counts[index_of(v.clamp(1, MAX_NS))] += n;
            h.total += n;
        }
        h
    }

    /// Non-empty buckets as (highest equivalent value in ns, count), for storage and re-merging.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.hdr()
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }
}

impl std::ops::AddAssign<&LatencyHistogram> for LatencyHistogram {
    fn add_assign(&mut self, rhs: &LatencyHistogram) {
        self.merge(rhs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn percentiles_of_known_samples() {
        let mut h = LatencyHistogram::new();
        for ns in 1..=1000u64 {
            h.record_ns(ns * 1000);
        }
        let p = h.percentiles_us().unwrap();
        assert!((p.p50 - 500.0).abs() / 500.0 < 0.002, "{p:?}");
        assert!((p.p99 - 990.0).abs() / 990.0 < 0.002, "{p:?}");
        assert!((p.max - 1000.0).abs() / 1000.0 < 0.002, "{p:?}");
        assert!(LatencyHistogram::new().percentiles_us().is_none());
    }

    #[test]
    fn layout_matches_hdr() {
        let h = Histogram::<u64>::new_with_bounds(1, MAX_NS, 3).unwrap();
        // The crate allocates the last bucket whole; values above MAX_NS are clamped here.
        assert!(LEN <= h.distinct_values());
        for v in [
            1,
            2,
            2047,
            2048,
            2049,
            4095,
            4096,
            1_000_000,
            MAX_NS - 1,
            MAX_NS,
        ] {
            assert_eq!(value_of(index_of(v)), h.lowest_equivalent(v), "{v}");
        }
    }

    proptest! {
        /// Percentiles and buckets are the HDR histogram's for the same samples.
        #[test]
        fn same_figures_as_hdr(values in proptest::collection::vec(0u64..u64::MAX, 1..300)) {
            let mut ours = LatencyHistogram::new();
            let mut hdr = Histogram::<u64>::new_with_bounds(1, MAX_NS, 3).unwrap();
            for &v in &values {
                let v = v >> (v % 64); // spread over every magnitude
                ours.record_ns(v);
                hdr.saturating_record(v.clamp(1, MAX_NS));
            }
            let theirs: Vec<_> = hdr
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect();
            prop_assert_eq!(ours.buckets(), theirs);
            prop_assert_eq!(ours.count(), hdr.len());
            for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
                prop_assert_eq!(ours.quantile_ns(q), hdr.value_at_quantile(q));
            }
            prop_assert_eq!(ours.percentiles_us().unwrap().max, hdr.max() as f64 / 1000.0);
            let rebuilt = LatencyHistogram::from_buckets(&ours.buckets());
            prop_assert_eq!(rebuilt.buckets(), ours.buckets());
        }

        /// Merging per-worker histograms gives exactly the histogram of all samples.
        #[test]
        fn merge_equals_recording_everything(
            a in proptest::collection::vec(1u64..10_000_000_000, 0..300),
            b in proptest::collection::vec(1u64..10_000_000_000, 0..300),
        ) {
            let (mut ha, mut hb, mut all) =
                (LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new());
            a.iter().for_each(|&v| { ha.record_ns(v); all.record_ns(v) });
            b.iter().for_each(|&v| { hb.record_ns(v); all.record_ns(v) });
            ha += &hb;
            prop_assert_eq!(ha.count(), (a.len() + b.len()) as u64);
            prop_assert_eq!(ha.buckets(), all.buckets());
            for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
                prop_assert_eq!(ha.quantile_ns(q), all.quantile_ns(q));
            }
        }
    }
}
