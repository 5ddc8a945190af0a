//! fio's JSON (`--output-format=json+` of fio 3.x) for the run's `job` trials, so that the
//! scripts and dashboards that read fio's output read fsarena's `job` results unchanged.
//!
//! * One fio "job" per finished (`ok`) `job` trial: jobname `TARGET rep N: LABEL`, groupid
//!   its index (trials run one after another, like fio's stonewalled groups). Its figures
//!   are those of the trial's `run` phase; `layout` and `verify` are not what fio reports.
//!   A trial's `numjobs` workers are one fio job, as under fio's `group_reporting`.
//! * `read` and `write` from the phase's bytes and its per-operation latency histograms;
//!   `trim` is written with zero operations (the `job` workload never trims), as fio writes
//!   a direction a job did not use.
//! * Latencies: fsarena times each request from when it is queued until its completion is
//!   seen — fio's `lat_ns`. For the engines whose requests are system calls (`psync`,
//!   `mmap`, `null`) that is the call, which is also what fio times as `clat_ns` for its
//!   synchronous engines (their `slat` is not recorded), so `clat_ns` holds the same
//!   histogram there; for `io_uring` and `libaio` submission and completion are not timed
//!   apart, so `clat_ns` and `slat_ns` are left out. `bins` are the stored HDR buckets
//!   (highest value of the bucket, 3 significant digits), and min, max, mean, stddev and
//!   the percentiles are computed from them.
//! * What fsarena does not measure is left out, never written as a guess: see docs/fio.md
//!   ("fio's JSON") for the list.

use crate::error::usage;
use crate::probe::LatencyHistogram;
use crate::result::{PhaseResult, RunResult, Trial};
use anyhow::Result;
use serde_json::{json, Map, Value};

/// The workload whose trials are written.
pub const WORKLOAD: &str = "job";
/// The phase fio would report.
pub const PHASE: &str = "run";
/// The percentiles fio writes by default (`percentile_list`), as its keys spell them.
const PERCENTILES: &[f64] = &[
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
    99.95, 99.99,
];
/// Engines whose timed request is one system call (or none): fio's `clat` is their `lat`.
const SYNC_ENGINES: &[&str] = &["psync", "mmap", "null"];

/// `export --fio-json` and `run --fio-json PATH`.
pub const EXPORTER: super::Exporter = super::Exporter {
    flag: "fio-json",
    export: Some(
        "fio's JSON (as fio 3.x writes with --output-format=json+) of the run's job trials: \
         one fio job per finished trial, from its run phase; fields fsarena does not \
         measure are left out (docs/fio.md)",
    ),
    report: None,
    run: Some(super::AfterRun {
        help: "Write fio's JSON (json+) of the run's job trials to PATH",
        stored: false,
        says: false,
    }),
    writes: super::Writes::Bytes(export),
};

/// The document, pretty-printed, ending with a newline.
pub fn export(run: &RunResult) -> Result<Vec<u8>> {
    let mut out = serde_json::to_vec_pretty(&document(run)?)?;
    out.push(b'\n');
    Ok(out)
}

/// The fio JSON document of `run`; a usage error when it has no finished `job` trial.
pub fn document(run: &RunResult) -> Result<Value> {
    let trials: Vec<(&Trial, &PhaseResult)> = run
        .trials
        .iter()
        .filter(|t| t.workload == WORKLOAD && t.status == "ok")
        .filter_map(|t| t.phases.iter().find(|p| p.name == PHASE).map(|p| (t, p)))
        .collect();
    if trials.is_empty() {
        let mut ran: Vec<&str> = run.trials.iter().map(|t| t.label.as_str()).collect();
        ran.dedup();
        return Err(usage(format!(
            "run {} has no finished job trial with a run phase (it ran: {}); fio's JSON holds \
             only those",
            run.run_id,
            if ran.is_empty() {
                "nothing".to_string()
            } else {
                ran.join(", ")
            }
        )));
    }
    let started = chrono::DateTime::parse_from_rfc3339(&run.started_at).ok();
    let mut doc = Map::new();
    doc.insert(
        "fio version".into(),
        json!(format!("fsarena-{}", run.fsarena_version)),
    );
    if let Some(t) = started {
        doc.insert("timestamp".into(), json!(t.timestamp()));
        doc.insert("timestamp_ms".into(), json!(t.timestamp_millis()));
        // As fio's ctime(3) without its newline, but in UTC rather than local time.
        let utc = t.with_timezone(&chrono::Utc);
        doc.insert(
            "time".into(),
            json!(utc.format("%a %b %e %H:%M:%S %Y").to_string()),
        );
    }
    doc.insert("global options".into(), json!({}));
    let jobs: Vec<Value> = trials
        .iter()
        .enumerate()
        .map(|(i, (t, p))| job(i, t, p))
        .collect();
    doc.insert("jobs".into(), Value::Array(jobs));
    Ok(Value::Object(doc))
}

/// One fio job: trial `t`'s run phase `p`, in reporting group `group`.
fn job(group: usize, t: &Trial, p: &PhaseResult) -> Value {
    // Every kind's engine (`with`'s kinds name theirs, or take psync): the histogram is a
    // completion latency only when all of them are synchronous.
    let with = t.params.get("with").map_or("", String::as_str);
    let kinds = with.split(';').filter(|k| !k.trim().is_empty()).map(|k| {
        k.split(',')
            .find_map(|item| item.trim().strip_prefix("engine="))
            .unwrap_or("psync")
    });
    let sync = t
        .params
        .get("engine")
        .map(String::as_str)
        .into_iter()
        .chain(kinds)
        .all(|e| SYNC_ENGINES.contains(&e))
        && t.params.contains_key("engine");
    let mut j = Map::new();
    j.insert(
        "jobname".into(),
        json!(format!("{} rep {}: {}", t.target, t.rep, t.label)),
    );
    j.insert("groupid".into(), json!(group));
    j.insert("error".into(), json!(0));
    j.insert("job options".into(), json!(t.params));
    j.insert("read".into(), direction(p, "read", p.bytes_read, sync));
    j.insert("write".into(), direction(p, "write", p.bytes_written, sync));
    j.insert("trim".into(), direction(p, "trim", 0, sync));
    j.insert("job_runtime".into(), json!(ms(run_s(p))));
    if let Some(e) = t.elapsed_s {
        j.insert("elapsed".into(), json!(e.round() as u64));
    }
    if p.wall_s > 0.0 {
        j.insert("usr_cpu".into(), json!(p.cpu_user_s / p.wall_s * 100.0));
        j.insert("sys_cpu".into(), json!(p.cpu_sys_s / p.wall_s * 100.0));
    }
    Value::Object(j)
}

/// The seconds phase `p`'s rates are over: its wall time, or less where the workload left
/// time out of them (an engine's teardown, as fio's runtime does).
fn run_s(p: &PhaseResult) -> f64 {
    match p.ops > 0 && p.ops_per_s > 0.0 {
        true => p.ops as f64 / p.ops_per_s,
        false => p.wall_s,
    }
}

/// Milliseconds, as fio's integer `runtime`.
fn ms(s: f64) -> u64 {
    (s * 1000.0).round() as u64
}

/// fio's figures of one direction (`read`, `write`, `trim`) of phase `p`, which moved
/// `bytes` in that direction.
fn direction(p: &PhaseResult, op: &str, bytes: u64, sync: bool) -> Value {
    let lat = p.lat_by_op.iter().find(|l| l.op == op);
    let ios = lat.map_or(0, |l| l.count);
    let secs = run_s(p);
    let per_s = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
    let bw_bytes = per_s(bytes as f64).floor() as u64;
    let mut d = Map::new();
    d.insert("io_bytes".into(), json!(bytes));
    d.insert("io_kbytes".into(), json!(bytes / 1024));
    d.insert("bw_bytes".into(), json!(bw_bytes));
    d.insert("bw".into(), json!(bw_bytes / 1024));
    d.insert("iops".into(), json!(per_s(ios as f64)));
    d.insert("runtime".into(), json!(if ios > 0 { ms(secs) } else { 0 }));
    d.insert("total_ios".into(), json!(ios));
    // A finished trial had none: the workload fails on a short I/O and drops none.
    d.insert("short_ios".into(), json!(0));
    d.insert("drop_ios".into(), json!(0));
    let buckets = lat.map_or(&[][..], |l| l.buckets.as_slice());
    let stats = latency(buckets);
    if sync {
        d.insert("clat_ns".into(), stats.clone());
    }
    d.insert("lat_ns".into(), stats);
    Value::Object(d)
}

/// fio's latency object (min, max, mean, stddev, N, and with samples `percentile` and
/// `bins`) of the HDR `buckets` (ns at each bucket's highest value, count).
fn latency(buckets: &[(u64, u64)]) -> Value {
    let n: u64 = buckets.iter().map(|b| b.1).sum();
    if n == 0 {
        // As fio writes a latency with no sample (and no percentiles nor bins: a reader
        // cannot tell an empty histogram from none).
        return json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0});
    }
    let sum: f64 = buckets.iter().map(|&(v, c)| v as f64 * c as f64).sum();
    let mean = sum / n as f64;
    let sq: f64 = buckets
        .iter()
        .map(|&(v, c)| (v as f64 - mean).powi(2) * c as f64)
        .sum();
    let stddev = if n > 1 {
        (sq / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let h = LatencyHistogram::from_buckets(buckets);
    let percentile: Map<String, Value> = PERCENTILES
        .iter()
        .map(|&q| (format!("{q:.6}"), json!(h.quantile_ns(q / 100.0))))
        .collect();
    let bins: Map<String, Value> = buckets
        .iter()
        .map(|&(v, c)| (v.to_string(), json!(c)))
        .collect();
    json!({
        "min": buckets.iter().map(|b| b.0).min(),
        "max": buckets.iter().map(|b| b.0).max(),
        "mean": mean,
        "stddev": stddev,
        "N": n,
        "percentile": percentile,
        "bins": bins,
    })
}

#[cfg(test)]
mod tests;
