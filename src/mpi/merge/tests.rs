use super::*;
use crate::probe::hist::LatencyHistogram;

fn phase(wall_s: f64, ops_per_interval: &[u64], lat_ns: &[u64]) -> PhaseResult {
    let mut h = LatencyHistogram::new();
    lat_ns.iter().for_each(|&l| h.record_ns(l));
    let ops: u64 = ops_per_interval.iter().sum();
    PhaseResult {
        name: "write".into(),
        wall_s,
        ops,
        bytes: ops * 4096,
        bytes_written: ops * 4096,
        series: SeriesOut {
            interval_s: 0.01,
            ops: ops_per_interval.to_vec(),
            bytes: ops_per_interval.iter().map(|o| o * 4096).collect(),
        },
        lat_by_op: vec![OpLatency {
            op: "write".into(),
            count: lat_ns.len() as u64,
            samples: lat_ns.len() as u64,
            lat_us: h.percentiles_us().unwrap_or_default(),
            buckets: h.buckets(),
        }],
        lat_us: h.percentiles_us(),
        lat_buckets: h.buckets(),
        primary: "mb_per_s".into(),
        workers: 1,
        ..Default::default()
    }
}

#[test]
fn sums_take_the_slowest_rank_as_wall_and_merge_histograms() {
    let a = phase(0.02, &[10, 10], &[1000; 20]);
    let b = phase(0.04, &[5, 5, 5, 5], &[9000; 20]);
    let r = aggregate_phase(&[&a, &b], false);
    assert_eq!(r.ops, 40);
    assert_eq!(r.bytes, 40 * 4096);
    assert_eq!(r.wall_s, 0.04);
    assert!((r.ops_per_s - 1000.0).abs() < 1e-9, "{}", r.ops_per_s);
    assert_eq!(r.extra["rank_first_done_s"], 0.02);
    assert_eq!(r.extra["rank_last_done_s"], 0.04);
    assert!(!r.extra.contains_key("stonewall_s"));
    // Half the samples at 1 µs, half at 9 µs: the merged median is not their average.
    let p = r.lat_us.unwrap();
    assert!(p.p50 < 1.1 && p.p90 > 8.9, "{p:?}");
    assert_eq!(r.lat_by_op[0].count, 40);
    assert_eq!(r.series.ops, vec![15, 15, 5, 5]);
    assert_eq!(r.workers, 2);
}

#[test]
fn stonewall_counts_what_every_rank_had_done_when_the_first_finished() {
    let a = phase(0.02, &[10, 10], &[1000; 20]);
    let b = phase(0.04, &[5, 5, 5, 5], &[1000; 20]);
    let r = aggregate_phase(&[&a, &b], true);
    assert_eq!(r.extra["stonewall_s"], 0.02);
    // a: all 20; b: its first two intervals, 10.
    assert!((r.extra["stonewall_ops_per_s"] - 30.0 / 0.02).abs() < 1e-6);
    assert!(r.extra["stonewall_ops_per_s"] > r.ops_per_s);
}

#[test]
fn done_by_is_pro_rata_inside_an_interval() {
    let b = phase(0.04, &[4, 8, 8, 8], &[]);
    assert_eq!(done_by(&b, 0.015).0, 8.0);
    assert_eq!(done_by(&b, 1.0).0, 28.0);
}

#[test]
fn coarser_series_fold_finer_ones() {
    let fine = SeriesOut {
        interval_s: 0.01,
        ops: vec![1, 2, 3, 4, 5],
        bytes: vec![0; 5],
    };
    let coarse = SeriesOut {
        interval_s: 0.02,
        ops: vec![10, 10],
        bytes: vec![0; 2],
    };
    let m = merge_series([&fine, &coarse].into_iter());
    assert_eq!(m.interval_s, 0.02);
    assert_eq!(m.ops, vec![13, 17, 5]);
}

#[test]
fn a_failed_rank_fails_the_trial_with_its_error() {
    let trial = Trial {
        status: "interrupted".into(),
        error: Some("stopped".into()),
        ..crate::mpi::tests::empty_trial()
    };
    let rank = |rank: usize, status: &str, error: Option<&str>| RankTrial {
        rank,
        host: format!("n{rank}"),
        status: status.into(),
        error: error.map(String::from),
        elapsed_s: Some(1.0),
        phases: vec![phase(0.02, &[1], &[1])],
    };
    let t = aggregate(
        trial,
        vec![
            rank(2, "stopped", Some("stopped because rank 1 failed")),
            rank(0, "stopped", None),
            rank(1, "failed", Some("exit 3")),
        ],
        false,
    );
    assert_eq!(t.status, "failed");
    assert_eq!(t.error.as_deref(), Some("rank 1 on n1: exit 3"));
    assert_eq!(
        t.ranks.iter().map(|r| r.rank).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert!(t.ranks.iter().all(|r| r.phases[0].lat_buckets.is_empty()));
    assert_eq!(t.phases[0].ops, 3);
}
