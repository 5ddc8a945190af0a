//! Per-operation latency histograms: HDR histograms in nanoseconds that merge exactly.
//!
//! Percentiles are computed from the merged buckets, never averaged across workers or
//! repetitions (averaging percentiles is a classic aggregation error; see fio issue #1918).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest latency tracked exactly: one hour. Longer values are clamped (and counted).
const MAX_NS: u64 = 3_600_000_000_000;

/// A latency histogram with 3 significant digits over 1 ns – 1 h.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

/// Percentiles of a histogram, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self {
            h: Histogram::new_with_bounds(1, MAX_NS, 3).expect("valid histogram bounds"),
        }
    }

    /// Records one latency in nanoseconds.
    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        self.h.saturating_record(ns.clamp(1, MAX_NS));
    }

    /// Adds all samples of `other`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.h
            .add(&other.h)
            .expect("histograms with equal bounds merge");
    }

    /// Removes the samples of `other`, which must all have been recorded here too (as
    /// bucket counts: removing a sample removes one count from its bucket).
    pub fn subtract(&mut self, other: &LatencyHistogram) {
        self.h
            .subtract(&other.h)
            .expect("subtracting samples that were recorded here");
    }

    /// Number of recorded samples.
    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// The value at quantile `q` (0–1) in nanoseconds.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        self.h.value_at_quantile(q)
    }

    /// p50, p90, p99, p99.9 and max in microseconds; `None` when empty.
    pub fn percentiles_us(&self) -> Option<Percentiles> {
        if self.h.is_empty() {
            return None;
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Some(Percentiles {
            p50: us(self.h.value_at_quantile(0.50)),
            p90: us(self.h.value_at_quantile(0.90)),
            p99: us(self.h.value_at_quantile(0.99)),
            p999: us(self.h.value_at_quantile(0.999)),
            max: us(self.h.max()),
        })
    }

    /// A histogram rebuilt from [`Self::buckets`] (bucket-exact: percentiles and merges of
    /// the rebuilt histogram equal the original's).
    pub fn from_buckets(buckets: &[(u64, u64)]) -> Self {
        let mut h = Self::new();
        for &(v, n) in buckets {
            h.h.saturating_record_n(v.clamp(1, MAX_NS), n);
        }
        h
    }

    /// Non-empty buckets as (highest equivalent value in ns, count), for storage and re-merging.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.h
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

    proptest! {
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
