//! Bonnie++ 2.00 CSV lines (format "1.98"), so that the `bon_csv2html` and `bon_csv2txt`
//! of the bonnie++ package render fsarena's `bonnie` and `bonnie-files` results beside old
//! bonnie++ results.
//!
//! Source of the format: bonnie++ 2.00a, `bon_time.cpp` (`DoReportIO`, `DoReportFile`,
//! `print_stat`, `print_latency`) for what is written, and `bon_csv2html.cpp` (`COL_*`,
//! `vals[]`) and `bon_csv2txt` for how it is read. A line has [`FIELDS`] comma-separated
//! fields and no quoting; see docs/export.md for the list and what fsarena puts in each.
//!
//! * One line per target × repetition: that repetition's `bonnie` trial (fields 5–20 and
//!   latencies 38–43) and its `bonnie-files` trial (fields 21–37 and latencies 44–49). When
//!   only one of them exists, the other's fields are empty; when a repetition has several
//!   of one kind (the same workload with different parameters), the first of each pair up,
//!   then the second, and so on.
//! * Only trials that finished (`ok`) are written: a failed trial's figures are partial.
//! * As bonnie++: throughput in K/s with K = 1024 bytes, truncated to an integer; seeks/s
//!   with no decimal from 1000 up and one below; files/s truncated; %CPU truncated; the
//!   maximum latency of each test with a unit (`us`, `ms`, `s`), truncated
//!   ([`max_latency_us`]).
//! * Unlike bonnie++: a test fsarena did not run is an empty field and never "+++++" (a
//!   short phase is timed and written like any other: bonnie++ hid phases under 0.5 s);
//!   the version field says `fsarena-VERSION`, not a bonnie++ version; fields 6 (I/O chunk)
//!   and 25 (file chunk), which bonnie++ 2.00a leaves empty in CSV, hold the chunk sizes;
//!   fields 24 and 25 follow the readers' meaning (number of directories, chunk size),
//!   where bonnie++ 2.00a's writer shifts the directories into field 25.

use crate::error::usage;
use crate::result::{PhaseResult, RunResult, Trial};
use crate::size::parse_size;
use anyhow::Result;

/// The format version bon_csv2html and bon_csv2txt accept (field 0).
pub const CSV_VERSION: &str = "1.98";
/// Fields in a line.
pub const FIELDS: usize = 50;
/// The workload that fills the I/O fields.
pub const IO_WORKLOAD: &str = "bonnie";
/// The workload that fills the file-test fields.
pub const FILE_WORKLOAD: &str = "bonnie-files";

/// `bonnie`'s phases, which the workload runs in bonnie++'s column order (putc, write(2),
/// rewrite, getc, read(2), seeks): fields 9–20 and latencies 38–43.
fn io_phases() -> impl Iterator<Item = &'static str> {
    crate::workload::bonnie::INFO.phases.iter().map(|p| p.name)
}

/// `bonnie-files`' phases, in bonnie++'s column order too: fields 26–37 and latencies
/// 44–49.
fn file_phases() -> impl Iterator<Item = &'static str> {
    crate::workload::bonnie_files::INFO
        .phases
        .iter()
        .map(|p| p.name)
}

/// Field indices (bonnie++'s `COL_*` where it has them).
const COL_IO_PARAMS: usize = 5;
const COL_PUTC: usize = 9;
const COL_NUM_FILES: usize = 21;
const COL_SEQ_CREATE: usize = 26;
const COL_PUTC_LATENCY: usize = 38;
const COL_SEQ_CREATE_LATENCY: usize = 44;
/// Longest name written: bon_csv2html reads lines into a 1024-byte buffer.
const MAX_NAME: usize = 100;

/// One output line: a target's repetition with its bonnie and bonnie-files trial.
#[derive(Clone, Copy, Debug)]
pub struct Pair<'a> {
    pub target: &'a str,
    pub rep: u32,
    pub io: Option<&'a Trial>,
    pub files: Option<&'a Trial>,
}

/// The lines of a run: targets in the run's order, repetitions ascending.
pub fn pair(run: &RunResult) -> Vec<Pair<'_>> {
    let ok =
        |t: &&Trial| t.status == "ok" && (t.workload == IO_WORKLOAD || t.workload == FILE_WORKLOAD);
    let mut targets: Vec<&str> = run.targets.iter().map(|t| t.name.as_str()).collect();
    for t in run.trials.iter().filter(ok) {
        if !targets.contains(&t.target.as_str()) {
            targets.push(&t.target);
        }
    }
    let mut out = Vec::new();
    for target in targets {
        let mut reps: Vec<u32> = run
            .trials
            .iter()
            .filter(|t| ok(t) && t.target == target)
            .map(|t| t.rep)
            .collect();
        reps.sort_unstable();
        reps.dedup();
        for rep in reps {
            let of = |workload: &str| -> Vec<&Trial> {
                run.trials
                    .iter()
                    .filter(|t| ok(t) && t.target == target && t.rep == rep)
                    .filter(|t| t.workload == workload)
                    .collect()
            };
            let (io, files) = (of(IO_WORKLOAD), of(FILE_WORKLOAD));
            for i in 0..io.len().max(files.len()) {
                out.push(Pair {
                    target,
                    rep,
                    io: io.get(i).copied(),
                    files: files.get(i).copied(),
                });
            }
        }
    }
    out
}

/// Text safe in a comma-separated field without quoting: commas and control characters
/// become `_`, and the text is cut at `max` characters.
pub fn field_text(s: &str, max: usize) -> String {
    s.chars()
        .map(|c| if c == ',' || c.is_control() { '_' } else { c })
        .take(max)
        .collect()
}

/// A file size as bonnie++ writes it (`print_size(.., "MG")`): whole MiB as `NM`, whole
/// GiB as `NG`. Sizes that are not whole MiB, which bonnie++ cannot run, as `NK` or `NB`.
pub fn size_text(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    if bytes % MIB == 0 {
        let mib = bytes / MIB;
        if mib > 0 && mib % 1024 == 0 {
            format!("{}G", mib / 1024)
        } else {
            format!("{mib}M")
        }
    } else if bytes % 1024 == 0 {
        format!("{}K", bytes / 1024)
    } else {
        format!("{bytes}B")
    }
}

/// A chunk size as bonnie++ writes it (`print_size(.., " km")`): `256`, `8k`, `1m`.
pub fn chunk_text(bytes: u64) -> String {
    let mut n = bytes;
    let mut unit = "";
    for u in ["k", "m"] {
        if n == 0 || n % 1024 != 0 {
            break;
        }
        n /= 1024;
        unit = u;
    }
    format!("{n}{unit}")
}

/// A latency as bonnie++ writes it: whole seconds above 99.999999 s, whole milliseconds
/// above 0.099999 s, else whole microseconds; empty for zero.
pub fn latency_text(us: f64) -> String {
    if !(us.is_finite() && us > 0.0) {
        return String::new();
    }
    let s = us / 1e6;
    if s > 99.999999 {
        format!("{}s", s as u64)
    } else if s > 0.099999 {
        format!("{}ms", (s * 1000.0) as u64)
    } else {
        format!("{}us", us as u64)
    }
}

/// Seeks per second as bonnie++ writes them: `%.0f` from 1000 up, `%.1f` below.
pub fn seeks_text(per_s: f64) -> String {
    if per_s >= 1000.0 {
        format!("{per_s:.0}")
    } else {
        format!("{per_s:.1}")
    }
}

/// Whether a phase has a wall time to divide by.
fn timed(p: &PhaseResult) -> bool {
    p.wall_s.is_finite() && p.wall_s > 0.0
}

/// Throughput in K/s (1024 bytes), truncated as bonnie++'s `int(stat)`.
pub fn kib_per_s_text(p: &PhaseResult) -> String {
    if !timed(p) {
        return String::new();
    }
    ((p.bytes as f64 / 1024.0 / p.wall_s) as u64).to_string()
}

/// %CPU truncated to an integer, as bonnie++'s `int(CPU / Elapsed * 100)`.
pub fn cpu_text(p: &PhaseResult) -> String {
    if !(timed(p) && p.cpu_pct.is_finite()) {
        return String::new();
    }
    (p.cpu_pct.max(0.0) as u64).to_string()
}

/// The slowest timed operation of a test, in µs, as bonnie++ reports the maximum latency
/// per test: the largest maximum over the phase's operation kinds, so that timed parts
/// that are not counted as operations (seek write-backs) are in; the sync policy's fsyncs
/// (`fsync`), which bonnie++ does not time per operation, are out. Falls back to the
/// phase-wide `lat_us` when there is no per-kind breakdown.
pub fn max_latency_us(p: &PhaseResult) -> Option<f64> {
    let per_op = p
        .lat_by_op
        .iter()
        .filter(|o| o.op != "fsync")
        .map(|o| o.lat_us.max)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    per_op.or(p.lat_us.map(|l| l.max))
}

/// The value of a size parameter in bytes (`32MiB`), if the trial has it.
fn param_bytes(t: &Trial, key: &str) -> Option<u64> {
    t.params.get(key).and_then(|v| parse_size(v).ok())
}

/// The value of a count parameter, if the trial has it.
fn param_count(t: &Trial, key: &str) -> Option<u64> {
    t.params.get(key).and_then(|v| v.parse().ok())
}

fn find<'a>(t: &'a Trial, phase: &str) -> Option<&'a PhaseResult> {
    t.phases.iter().find(|p| p.name == phase)
}

fn opt<T: ToString>(x: Option<T>) -> String {
    x.map(|x| x.to_string()).unwrap_or_default()
}

/// Fields 5–8 and 9–20 and latencies 38–43 from a bonnie trial.
fn io_fields(f: &mut [String], t: &Trial) {
    let chunk = param_bytes(t, "chunk");
    // bonnie rounds the file down to a multiple of the chunk, as Bonnie did.
    let size = param_bytes(t, "size").map(|s| match chunk {
        Some(c) if c > 0 => s / c * c,
        _ => s,
    });
    f[COL_IO_PARAMS] = opt(size.map(size_text));
    f[COL_IO_PARAMS + 1] = opt(chunk.map(chunk_text));
    f[COL_IO_PARAMS + 2] = opt(param_count(t, "seeks"));
    f[COL_IO_PARAMS + 3] = opt(param_count(t, "seekers"));
    for (i, name) in io_phases().enumerate() {
        let Some(p) = find(t, name) else { continue };
        let col = COL_PUTC + 2 * i;
        f[col] = if name == "seeks" {
            if timed(p) && p.ops_per_s.is_finite() {
                seeks_text(p.ops_per_s)
            } else {
                String::new()
            }
        } else {
            kib_per_s_text(p)
        };
        f[col + 1] = cpu_text(p);
        f[COL_PUTC_LATENCY + i] = opt(max_latency_us(p).map(latency_text));
    }
}

/// Fields 21–37 and latencies 44–49 from a bonnie-files trial.
fn file_fields(f: &mut [String], t: &Trial) {
    let max = param_bytes(t, "max_size").unwrap_or(0);
    let min = param_bytes(t, "min_size").unwrap_or(0);
    f[COL_NUM_FILES] = opt(param_count(t, "files"));
    // As bonnie++: a max size only when files have data, a min size only with a max.
    if max > 0 {
        f[COL_NUM_FILES + 1] = max.to_string();
        if min > 0 {
            f[COL_NUM_FILES + 2] = min.to_string();
        }
    }
    f[COL_NUM_FILES + 3] = match param_count(t, "dirs") {
        Some(d) if d > 0 => d.to_string(),
        _ => String::new(),
    };
    f[COL_NUM_FILES + 4] = opt(param_bytes(t, "chunk").map(chunk_text));
    for (i, name) in file_phases().enumerate() {
        let Some(p) = find(t, name) else { continue };
        let col = COL_SEQ_CREATE + 2 * i;
        if timed(p) && p.ops_per_s.is_finite() {
            f[col] = (p.ops_per_s.max(0.0) as u64).to_string();
        }
        f[col + 1] = cpu_text(p);
        f[COL_SEQ_CREATE_LATENCY + i] = opt(max_latency_us(p).map(latency_text));
    }
}

/// The 50 fields of one line.
pub fn fields(run: &RunResult, pair: &Pair) -> Vec<String> {
    let mut f = vec![String::new(); FIELDS];
    f[0] = CSV_VERSION.to_string();
    f[1] = field_text(&format!("fsarena-{}", run.fsarena_version), MAX_NAME);
    f[2] = field_text(pair.target, MAX_NAME);
    let procs = |t: Option<&Trial>| t.and_then(|t| param_count(t, "procs"));
    f[3] = procs(pair.io)
        .or(procs(pair.files))
        .unwrap_or(1)
        .to_string();
    f[4] = run.policy.seed.to_string();
    if let Some(t) = pair.io {
        io_fields(&mut f, t);
    }
    if let Some(t) = pair.files {
        file_fields(&mut f, t);
    }
    f
}

/// `export --bonnie-csv`.
pub const EXPORTER: super::Exporter = super::Exporter {
    flag: "bonnie-csv",
    export: Some(
        "Bonnie++ 2.00 CSV lines (format 1.98) for bon_csv2html and bon_csv2txt: one per \
         target × repetition, joining its finished bonnie and bonnie-files trials; a test not \
         run is an empty field, never \"+++++\"",
    ),
    report: None,
    run: None,
    writes: super::Writes::Bytes(export),
};

/// The bonnie++ CSV lines of the run's bonnie and bonnie-files trials (no header line, as
/// bonnie++ writes for a single test; bon_csv2txt would complain about one).
pub fn export(run: &RunResult) -> Result<Vec<u8>> {
    let ours: Vec<&Trial> = run
        .trials
        .iter()
        .filter(|t| t.workload == IO_WORKLOAD || t.workload == FILE_WORKLOAD)
        .collect();
    if ours.is_empty() {
        let mut labels: Vec<&str> = run.trials.iter().map(|t| t.label.as_str()).collect();
        labels.dedup();
        return Err(usage(format!(
            "run {} has no bonnie or bonnie-files trials (it ran: {}); the Bonnie++ CSV \
             holds only those: use --csv or --json for every workload",
            run.run_id,
            if labels.is_empty() {
                "nothing".to_string()
            } else {
                labels.join(", ")
            }
        )));
    }
    let pairs = pair(run);
    if pairs.is_empty() {
        return Err(usage(format!(
            "none of the {} bonnie and bonnie-files trials of run {} finished (statuses: {}); \
             the Bonnie++ CSV holds only finished trials: see --csv for what was measured",
            ours.len(),
            run.run_id,
            ours.iter()
                .map(|t| t.status.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut out = String::new();
    for p in &pairs {
        out.push_str(&fields(run, p).join(","));
        out.push('\n');
    }
    Ok(out.into_bytes())
}

#[cfg(test)]
mod tests;
