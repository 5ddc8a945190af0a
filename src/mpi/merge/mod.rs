//! The aggregate of the ranks' figures for one phase, as IOR and mdtest compute theirs.
//!
//! Every rank starts a phase when it leaves the same barrier and measures its own wall
//! time from there; the phase ends when the last rank finishes. So, per phase:
//! * wall = max over ranks of the rank's wall (last finish − common start);
//! * operations and bytes = sums over ranks; rates = sum / wall (IOR's "aggregate
//!   bandwidth" = total bytes / (max end − min start));
//! * `rank_first_done_s` / `rank_last_done_s` = the fastest and slowest rank's wall (the
//!   straggler tail is their gap);
//! * with `--stonewall`, the figures when the first rank finished (elbencho's and IOR's
//!   stonewall): each rank's operations completed by then, read from its per-interval
//!   series (linear within the interval that straddles it), summed, over that time;
//! * latency: the ranks' HDR histograms merged bucket by bucket, percentiles read from
//!   the merged histogram — never averaged across ranks.

use crate::probe::hist::LatencyHistogram;
use crate::probe::series::SeriesOut;
use crate::result::{OpLatency, PhaseResult, RankTrial, Trial};
use std::collections::BTreeMap;

/// Rank 0's `trial` with its phases replaced by the aggregate of all `ranks` (rank 0's
/// among them) and the ranks' own figures kept in `ranks`; failed when any rank failed,
/// with that rank's error.
pub fn aggregate(mut trial: Trial, mut ranks: Vec<RankTrial>, stonewall: bool) -> Trial {
    ranks.sort_by_key(|r| r.rank);
    trial.phases = aggregate_phases(&ranks, stonewall);
    crate::workload::after_merge(&trial.workload, &mut trial.phases, &ranks);
    trial.elapsed_s = ranks.iter().filter_map(|r| r.elapsed_s).reduce(f64::max);
    // The first failed rank, else the first interrupted one, else any not `ok` (an
    // unknown status fails the trial too, and says which rank had it).
    let culprit = ranks
        .iter()
        .find(|r| r.status == "failed")
        .or_else(|| ranks.iter().find(|r| r.status == "interrupted"))
        .or_else(|| ranks.iter().find(|r| r.status != "ok"));
    if let Some(bad) = culprit {
        trial.status = if bad.status == "interrupted" {
            bad.status.clone()
        } else {
            "failed".into()
        };
        trial.error = Some(format!(
            "rank {} on {}: {}",
            bad.rank,
            bad.host,
            bad.error.as_deref().unwrap_or(&bad.status)
        ));
    }
    for r in &mut ranks {
        for p in &mut r.phases {
            p.lat_buckets.clear();
        }
    }
    trial.ranks = ranks;
    trial
}

/// The aggregate of each phase that every rank measured (phases are matched by position
/// and name): up to the shortest rank's phases — when a rank stopped early, the later
/// phases the others finished are left out (the trial then carries that rank's failure).
fn aggregate_phases(ranks: &[RankTrial], stonewall: bool) -> Vec<PhaseResult> {
    let n = ranks.iter().map(|r| r.phases.len()).min().unwrap_or(0);
    (0..n)
        .map(|i| {
            let parts: Vec<&PhaseResult> = ranks.iter().map(|r| &r.phases[i]).collect();
            aggregate_phase(&parts, stonewall)
        })
        .collect()
}

/// The aggregate of one phase over the ranks' `parts` (see the module's formulas).
pub fn aggregate_phase(parts: &[&PhaseResult], stonewall: bool) -> PhaseResult {
    let first = parts[0];
    let wall_s = parts.iter().map(|p| p.wall_s).fold(0.0, f64::max);
    let min_wall_s = parts.iter().map(|p| p.wall_s).fold(f64::INFINITY, f64::min);
    let sum = |f: fn(&PhaseResult) -> u64| parts.iter().map(|p| f(p)).sum::<u64>();
    let per_s = |x: f64| if wall_s > 0.0 { x / wall_s } else { 0.0 };
    let ops = sum(|p| p.ops);
    let bytes = sum(|p| p.bytes);
    let mut all = LatencyHistogram::new();
    for p in parts {
        all += &LatencyHistogram::from_buckets(&p.lat_buckets);
    }
    let mut r = PhaseResult {
        name: first.name.clone(),
        wall_s,
        cpu_user_s: parts.iter().map(|p| p.cpu_user_s).sum(),
        cpu_sys_s: parts.iter().map(|p| p.cpu_sys_s).sum(),
        ops,
        bytes,
        bytes_read: sum(|p| p.bytes_read),
        bytes_written: sum(|p| p.bytes_written),
        ops_per_s: per_s(ops as f64),
        mb_per_s: per_s(bytes as f64) / 1e6,
        lat_us: all.percentiles_us(),
        lat_by_op: merge_ops(parts),
        series: merge_series(parts.iter().map(|p| &p.series)),
        dev_read_bytes: sum_some(parts.iter().map(|p| p.dev_read_bytes)),
        dev_write_bytes: sum_some(parts.iter().map(|p| p.dev_write_bytes)),
        dev_read_ios: sum_some(parts.iter().map(|p| p.dev_read_ios)),
        dev_write_ios: sum_some(parts.iter().map(|p| p.dev_write_ios)),
        dev_read_merges: sum_some(parts.iter().map(|p| p.dev_read_merges)),
        dev_write_merges: sum_some(parts.iter().map(|p| p.dev_write_merges)),
        dev_flushes: sum_some(parts.iter().map(|p| p.dev_flushes)),
        dev_discards: sum_some(parts.iter().map(|p| p.dev_discards)),
        dev_discard_bytes: sum_some(parts.iter().map(|p| p.dev_discard_bytes)),
        // Each rank's reading is machine-wide: summed, ranks sharing a machine would count
        // its kernel threads twice. Not measured under MPI.
        kernel_cpu_s: None,
        space_used_bytes: parts.iter().filter_map(|p| p.space_used_bytes).max(),
        dirty_bytes_end: parts.iter().map(|p| p.dirty_bytes_end).max().unwrap_or(0),
        first_done_s: parts.iter().filter_map(|p| p.first_done_s).reduce(f64::min),
        last_done_s: parts.iter().filter_map(|p| p.last_done_s).reduce(f64::max),
        workers: parts.iter().map(|p| p.workers).sum(),
        flags: union_flags(parts),
        primary: first.primary.clone(),
        ops_unit: first.ops_unit.clone(),
        extra: merge_extra(parts, wall_s),
        lat_buckets: all.buckets(),
        ..Default::default()
    };
    r.cpu_pct = per_s(100.0 * (r.cpu_user_s + r.cpu_sys_s));
    r.write_amplification = r
        .dev_write_bytes
        .filter(|_| r.bytes_written > 0)
        .map(|w| w as f64 / r.bytes_written as f64);
    r.extra.insert("ranks".into(), parts.len() as f64);
    r.extra.insert("rank_first_done_s".into(), min_wall_s);
    r.extra.insert("rank_last_done_s".into(), wall_s);
    if stonewall && min_wall_s > 0.0 {
        let (sw_ops, sw_bytes) = parts.iter().fold((0.0, 0.0), |(o, b), p| {
            let (po, pb) = done_by(p, min_wall_s);
            (o + po, b + pb)
        });
        r.extra.insert("stonewall_s".into(), min_wall_s);
        r.extra
            .insert("stonewall_ops_per_s".into(), sw_ops / min_wall_s);
        r.extra
            .insert("stonewall_mb_per_s".into(), sw_bytes / min_wall_s / 1e6);
    }
    r
}

/// The sum of the known values; `None` when none is known (in shared mode only rank 0
/// sees the device).
fn sum_some(v: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    v.flatten().reduce(|a, b| a + b)
}

fn union_flags(parts: &[&PhaseResult]) -> Vec<String> {
    let mut flags: Vec<String> = Vec::new();
    for f in parts.iter().flat_map(|p| &p.flags) {
        if !flags.contains(f) {
            flags.push(f.clone());
        }
    }
    flags
}

/// Workload figures: a rate (`…_per_s`) is turned back into a count with its rank's
/// wall time and the counts are divided by the aggregate wall, like the standard rates;
/// any other figure is the mean over the ranks that have it.
fn merge_extra(parts: &[&PhaseResult], wall_s: f64) -> BTreeMap<String, f64> {
    let mut acc: BTreeMap<String, (f64, f64, usize)> = BTreeMap::new();
    for p in parts {
        for (k, v) in &p.extra {
            let e = acc.entry(k.clone()).or_insert((0.0, 0.0, 0));
            e.0 += v * p.wall_s;
            e.1 += v;
            e.2 += 1;
        }
    }
    acc.into_iter()
        .map(|(k, (count, sum, n))| {
            let v = match k.ends_with("_per_s") {
                true if wall_s > 0.0 => count / wall_s,
                true => 0.0,
                false => sum / n as f64,
            };
            (k, v)
        })
        .collect()
}

/// Per operation kind: counts added, histograms merged from their buckets.
fn merge_ops(parts: &[&PhaseResult]) -> Vec<OpLatency> {
    let mut by_op: Vec<(String, u64, LatencyHistogram)> = Vec::new();
    for o in parts.iter().flat_map(|p| &p.lat_by_op) {
        let h = LatencyHistogram::from_buckets(&o.buckets);
        match by_op.iter_mut().find(|(name, _, _)| *name == o.op) {
            Some((_, count, acc)) => {
                *count += o.count;
                *acc += &h;
            }
            None => by_op.push((o.op.clone(), o.count, h)),
        }
    }
    by_op
        .into_iter()
        .map(|(op, count, h)| OpLatency {
            op,
            count,
            samples: h.count(),
            lat_us: h.percentiles_us().unwrap_or_default(),
            buckets: h.buckets(),
        })
        .collect()
}

/// The ranks' series added interval by interval, at the coarsest rank's interval (the
/// intervals are all 10 ms × a power of two, so finer ones fold exactly).
pub fn merge_series<'a>(series: impl Iterator<Item = &'a SeriesOut>) -> SeriesOut {
    let series: Vec<&SeriesOut> = series.collect();
    let interval_s = series.iter().map(|s| s.interval_s).fold(0.0, f64::max);
    let mut out = SeriesOut {
        interval_s,
        ops: Vec::new(),
        bytes: Vec::new(),
    };
    for s in series {
        let k = if s.interval_s > 0.0 {
            ((interval_s / s.interval_s).round() as usize).max(1)
        } else {
            1
        };
        for (dst, src) in [(&mut out.ops, &s.ops), (&mut out.bytes, &s.bytes)] {
            for (i, chunk) in src.chunks(k).enumerate() {
                if dst.len() <= i {
                    dst.resize(i + 1, 0);
                }
                dst[i] += chunk.iter().sum::<u64>();
            }
        }
    }
    out
}

/// Operations and bytes that `p` had completed `t_s` seconds after its start, from its
/// series: whole intervals before `t_s` and the straddling one pro rata; everything when
/// `t_s` is at or after its end.
pub fn done_by(p: &PhaseResult, t_s: f64) -> (f64, f64) {
    if t_s >= p.wall_s {
        return (p.ops as f64, p.bytes as f64);
    }
    let s = &p.series;
    if s.interval_s <= 0.0 {
        return (0.0, 0.0);
    }
    let whole = (t_s / s.interval_s).floor() as usize;
    let frac = t_s / s.interval_s - whole as f64;
    let part = |v: &[u64]| {
        let before: u64 = v.iter().take(whole).sum();
        before as f64 + frac * v.get(whole).copied().unwrap_or(0) as f64
    };
    (part(&s.ops), part(&s.bytes))
}

#[cfg(test)]
mod tests;
