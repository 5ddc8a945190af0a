//! What pgbench writes: running it with its output kept, its per-transaction log
//! (`-l`) and its summary.

use crate::workload::IoContext;
use anyhow::{anyhow, bail, Result};
use std::path::{Path, PathBuf};

/// Runs pgbench with `argv` in `cwd` (its logs go there), its output appended to `log`
/// and returned; `tick` is called every half second while it runs (to show progress);
/// fails on a non-zero exit with the log's end
/// ([`crate::workload::command::run_engine`]).
pub(super) fn run_pgbench(
    program: &Path,
    argv: &[String],
    cwd: &Path,
    log: &Path,
    what: &str,
    tick: &dyn Fn(),
) -> Result<String> {
    use std::io::Write;
    let out_path = cwd.join(format!("{what}.out"));
    let out = std::fs::File::create(&out_path).on("create", &out_path)?;
    let err = std::fs::OpenOptions::new()
        .append(true)
        .open(log)
        .on("open the log", log)?;
    let status = crate::workload::command::run_engine(program, argv, cwd, out, err, tick)?;
    let text = std::fs::read_to_string(&out_path).unwrap_or_default();
    if let Ok(mut l) = std::fs::OpenOptions::new().append(true).open(log) {
        let _ = writeln!(l, "==> fsarena pgbench {what}\n{text}");
    }
    if !status.success() {
        bail!(
            "pgbench {what} {}; log {}, last lines:\n{}",
            crate::workload::command::how_it_ended(status),
            log.display(),
            crate::workload::command::tail(log)
        );
    }
    Ok(text)
}

/// One line of pgbench's per-transaction log.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tx {
    /// Latency in µs; `None` for a failed or skipped transaction.
    pub latency_us: Option<u64>,
    /// When it ended, µs since the epoch.
    pub end_epoch_us: u64,
}

/// Parses one line of pgbench's per-transaction log: `client_id transaction_no time
/// script_no time_epoch time_us [schedule_lag] [retries]`, where `time` is the latency in
/// µs, or `failed`/`skipped`.
pub fn parse_tx_line(line: &str) -> Option<Tx> {
    let f: Vec<&str> = line.split_ascii_whitespace().collect();
    if f.len() < 6 {
        return None;
    }
    let secs: u64 = f[4].parse().ok()?;
    let micros: u64 = f[5].parse().ok()?;
    let latency_us = match f[2] {
        "failed" | "skipped" => None,
        t => Some(t.parse().ok()?),
    };
    Some(Tx {
        latency_us,
        end_epoch_us: secs * 1_000_000 + micros,
    })
}

/// Lines written so far to the logs `PREFIX.PID[.N]` in a directory (pgbench writes them
/// in blocks): about the transactions done, for the progress display. Each call reads only
/// what was appended since the last: reading the whole logs every half second read tens of
/// MB a second by the end of a 10-minute `steady` run, on the CPUs the run needs.
#[derive(Default)]
pub(super) struct TxLines {
    /// Per log file: bytes read, newlines in them.
    seen: std::sync::Mutex<std::collections::HashMap<PathBuf, (u64, u64)>>,
}

impl TxLines {
    pub(super) fn count(&self, dir: &Path, prefix: &str) -> u64 {
        use std::io::{Read, Seek, SeekFrom};
        let want = format!("{prefix}.");
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                if !e.file_name().to_str().is_some_and(|n| n.starts_with(&want)) {
                    continue;
                }
                let (at, lines) = seen.entry(e.path()).or_default();
                let Ok(mut f) = std::fs::File::open(e.path()) else {
                    continue;
                };
                let mut new = Vec::new();
                if f.seek(SeekFrom::Start(*at)).is_ok() && f.read_to_end(&mut new).is_ok() {
                    *at += new.len() as u64;
                    *lines += new.iter().filter(|&&c| c == b'\n').count() as u64;
                }
            }
        }
        seen.values().map(|(_, n)| n).sum()
    }
}

/// Every transaction of the logs `PREFIX.PID[.N]` in `dir`.
pub(super) fn read_tx_logs(dir: &Path, prefix: &str) -> Result<Vec<Tx>> {
    let mut txs = Vec::new();
    let want = format!("{prefix}.");
    for e in std::fs::read_dir(dir).on("read", dir)? {
        let e = e.on("read", dir)?;
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with(&want) {
            continue;
        }
        let path: PathBuf = e.path();
        let text = std::fs::read_to_string(&path).on("read", &path)?;
        for (i, line) in text.lines().enumerate() {
            let tx = parse_tx_line(line).ok_or_else(|| {
                anyhow!(
                    "{}, line {}: not a pgbench transaction log line: {line:?}",
                    path.display(),
                    i + 1
                )
            })?;
            txs.push(tx);
        }
    }
    Ok(txs)
}

/// pgbench's `tps = N (without initial connection time)` (pgbench 14 and later; older
/// ones print `(excluding connections establishing)`).
pub fn summary_tps(out: &str) -> Option<f64> {
    out.lines()
        .filter(|l| l.starts_with("tps = "))
        .find(|l| l.contains("without initial connection") || l.contains("excluding"))
        .or_else(|| out.lines().find(|l| l.starts_with("tps = ")))
        .and_then(|l| l["tps = ".len()..].split_whitespace().next()?.parse().ok())
}

/// pgbench's `number of failed transactions: N (…)` (pgbench 15 and later).
pub fn summary_failed(out: &str) -> Option<u64> {
    out.lines()
        .find_map(|l| l.strip_prefix("number of failed transactions: "))
        .and_then(|r| r.split_whitespace().next()?.parse().ok())
}
