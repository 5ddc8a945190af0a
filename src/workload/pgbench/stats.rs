//! What PostgreSQL itself says about the run phase, for the figures DBAs read:
//! * its **checkpoints**, from the server's log (`log_checkpoints=on`, which fsarena sets):
//!   how many started during the phase (timed or asked for by the WAL's size; not the
//!   shutdown's), and for them the buffers written and the seconds spent writing and
//!   syncing (`checkpoint complete: wrote N buffers …; write=W s, sync=S s, total=T s`),
//!   read once the server has stopped, so that one still running at the phase's end is
//!   counted — hurried by the stop, as PostgreSQL finishes a checkpoint at full speed when
//!   asked to shut down;
//! * its **WAL**, from `pg_stat_wal` (PostgreSQL 14 and later), reset before the phase and
//!   read with `psql` on the server's socket just after it: bytes, full-page images, syncs
//!   and the time they took (`track_wal_io_timing=on`, which fsarena sets: one clock read
//!   per WAL write and sync). The counters of the server's own WAL writer reach the view
//!   on its own schedule, so up to about a second of its syncs may be missing.

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::{Command, Stdio};

/// Settings fsarena gives every server to measure it; they change what the server logs and
/// counts, not what it writes, and are not listed among the engine's settings.
pub const MEASURING: [(&str, &str); 2] = [("log_checkpoints", "on"), ("track_wal_io_timing", "on")];

/// The checkpoints completed in a stretch of the server's log.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Checkpoints {
    pub count: u64,
    pub buffers: u64,
    pub write_s: f64,
    pub sync_s: f64,
    pub total_s: f64,
}

/// The checkpoints that start in `log` (`checkpoint starting: time`, `wal`, …, not
/// `shutdown`), each with the figures of the `checkpoint complete:` line after it
/// (PostgreSQL 10 and later word them so).
pub fn parse_checkpoints(log: &str) -> Checkpoints {
    let mut c = Checkpoints::default();
    let mut counted = false;
    for line in log.lines() {
        if let Some((_, why)) = line.split_once("checkpoint starting: ") {
            counted = !why.contains("shutdown");
            c.count += u64::from(counted);
            continue;
        }
        let Some(rest) = line.split_once("checkpoint complete: ").map(|x| x.1) else {
            continue;
        };
        if !std::mem::take(&mut counted) {
            continue;
        }
        if let Some(n) = rest
            .strip_prefix("wrote ")
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
        {
            c.buffers += n;
        }
        for (key, sum) in [
            ("write=", &mut c.write_s),
            ("sync=", &mut c.sync_s),
            ("total=", &mut c.total_s),
        ] {
            if let Some(x) = seconds_after(rest, key) {
                *sum += x;
            }
        }
    }
    c
}

/// The number of seconds after ` KEY` (`write=0.050 s`) in `text`.
fn seconds_after(text: &str, key: &str) -> Option<f64> {
    let at = text.find(&format!(" {key}"))? + 1 + key.len();
    text[at..].split_whitespace().next()?.parse().ok()
}

/// `pg_stat_wal`'s counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Wal {
    pub records: u64,
    pub fpi: u64,
    pub bytes: u64,
    pub syncs: u64,
    /// Milliseconds the syncs took (0 without `track_wal_io_timing`).
    pub sync_ms: f64,
}

/// The query's one row: `records|fpi|bytes|syncs|sync_ms`.
const WAL_QUERY: &str =
    "SELECT wal_records, wal_fpi, wal_bytes, wal_sync, wal_sync_time FROM pg_stat_wal";

/// Parses psql's unaligned row of [`WAL_QUERY`].
pub fn parse_wal_row(row: &str) -> Option<Wal> {
    let f: Vec<&str> = row.trim().split('|').collect();
    if f.len() != 5 {
        return None;
    }
    Some(Wal {
        records: f[0].parse().ok()?,
        fpi: f[1].parse().ok()?,
        bytes: f[2].parse::<f64>().ok()? as u64,
        syncs: f[3].parse().ok()?,
        sync_ms: f[4].parse().ok()?,
    })
}

/// Runs `sql` with `psql` of `bin` on the server's socket in `sockets`; its one line of
/// output. Untimed.
fn psql(bin: &Path, sockets: &Path, sql: &str) -> Result<String> {
    let out = Command::new(bin.join("psql"))
        .arg("-h")
        .arg(sockets)
        .args(["-U", "postgres", "-X", "-A", "-t", "-q", "-c", sql, "postgres"])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("starting {}", bin.join("psql").display()))?;
    if !out.status.success() {
        bail!(
            "psql -c {sql:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Zeroes `pg_stat_wal` before a phase.
pub fn reset_wal(bin: &Path, sockets: &Path) -> Result<()> {
    psql(bin, sockets, "SELECT pg_stat_reset_shared('wal')").map(|_| ())
}

/// `pg_stat_wal` now.
pub fn read_wal(bin: &Path, sockets: &Path) -> Result<Wal> {
    let row = psql(bin, sockets, WAL_QUERY)?;
    parse_wal_row(&row).with_context(|| format!("pg_stat_wal: not a row of numbers: {row:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_lines_are_summed_and_other_lines_ignored() {
        // PostgreSQL 15's wording (Debian 15.18), two checkpoints and noise between.
        let log = "2026-12-08 00:12:01.001 UTC [812] LOG:  checkpoint starting: time\n\
            2026-12-08 00:12:03.512 UTC [812] LOG:  checkpoint complete: wrote 1710 buffers \
            (10.4%); 0 WAL file(s) added, 0 removed, 0 recycled; write=1.950 s, sync=0.112 s, \
            total=2.101 s; sync files=41, longest=0.031 s, average=0.003 s; distance=27817 kB, \
            estimate=27817 kB\n\
            pgbench: done\n\
            2026-12-08 00:12:30.100 UTC [812] LOG:  checkpoint starting: wal\n\
            2026-12-08 00:12:33.100 UTC [812] LOG:  checkpoint complete: wrote 90 buffers \
            (0.5%); 0 WAL file(s) added, 0 removed, 1 recycled; write=0.050 s, sync=0.020 s, \
            total=0.081 s; sync files=3, longest=0.010 s, average=0.007 s; distance=900 kB, \
            estimate=25125 kB\n\
            2026-12-08 00:12:34.100 UTC [812] LOG:  checkpoint starting: shutdown immediate\n\
            2026-12-08 00:12:34.200 UTC [812] LOG:  checkpoint complete: wrote 7 buffers \
            (0.0%); write=0.001 s, sync=0.001 s, total=0.003 s\n";
        let c = parse_checkpoints(log);
        assert_eq!((c.count, c.buffers), (2, 1800));
        assert!((c.write_s - 2.0).abs() < 1e-9, "{c:?}");
        assert!((c.sync_s - 0.132).abs() < 1e-9, "{c:?}");
        assert!((c.total_s - 2.182).abs() < 1e-9, "{c:?}");
        let started = parse_checkpoints("LOG:  checkpoint starting: wal\n");
        assert_eq!((started.count, started.buffers), (1, 0), "started, not yet complete");
    }

    #[test]
    fn the_wal_row_is_five_numbers() {
        let w = parse_wal_row("12034|311|5623045|2410|1834.551\n").unwrap();
        assert_eq!((w.records, w.fpi, w.bytes, w.syncs), (12034, 311, 5623045, 2410));
        assert!((w.sync_ms - 1834.551).abs() < 1e-9);
        assert_eq!(parse_wal_row("12|3"), None);
        assert_eq!(parse_wal_row("a|b|c|d|e"), None);
    }
}
