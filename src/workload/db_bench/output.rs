//! What db_bench prints, read: its version header, its result line and latency
//! percentiles, the `--statistics` tickers, its per-second report file
//! (`--report_interval_seconds`), and the flag it names when it refuses one. The formats
//! are RocksDB 7.8.3's (`tools/db_bench_tool.cc`), kept as captured in `testdata/`.

/// What db_bench reported for one benchmark.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Report {
    pub ops: u64,
    pub ops_per_s: f64,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p99_9_us: Option<f64>,
    pub found_pct: Option<f64>,
    /// The process's `--statistics` tickers.
    pub stats: Statistics,
    /// Operations over the whole process's time (opening the database, replaying its WAL
    /// and closing it included): fsarena's, not db_bench's.
    pub process_ops_per_s: Option<f64>,
}

/// The `--statistics` tickers fsarena keeps from one db_bench process, as RocksDB names
/// them (`rocksdb.NAME COUNT : N`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Statistics {
    /// `rocksdb.wal.synced`: WAL syncs.
    pub wal_syncs: Option<f64>,
    /// `rocksdb.wal.bytes`: bytes written to the WAL.
    pub wal_bytes: Option<f64>,
    /// `rocksdb.flush.write.bytes`: bytes of the SST files that memtable flushes wrote.
    pub flush_write_bytes: Option<f64>,
    /// `rocksdb.compact.write.bytes`: bytes compactions wrote (RocksDB 7.8.3 also counts
    /// here the SST written from the WAL replayed when a database is opened).
    pub compaction_write_bytes: Option<f64>,
    /// `rocksdb.bytes.written`: the user's bytes (keys, values and their batch headers)
    /// handed to the database by its writes.
    pub user_write_bytes: Option<f64>,
    /// `rocksdb.stall.micros`: the time writes were delayed or stopped by RocksDB's write
    /// controller (too many L0 files or memtables, too many bytes owed to compaction).
    pub stall_micros: Option<f64>,
}

impl Statistics {
    /// Reads the tickers from db_bench's output (none when it ran without
    /// `--statistics`).
    pub fn parse(out: &str) -> Self {
        let counter = |key: &str| -> Option<f64> {
            out.split(['\n', '\r']).find_map(|l| {
                let rest = l.strip_prefix(key)?.strip_prefix(" COUNT : ")?;
                rest.trim().parse().ok()
            })
        };
        Self {
            wal_syncs: counter("rocksdb.wal.synced"),
            wal_bytes: counter("rocksdb.wal.bytes"),
            flush_write_bytes: counter("rocksdb.flush.write.bytes"),
            compaction_write_bytes: counter("rocksdb.compact.write.bytes"),
            user_write_bytes: counter("rocksdb.bytes.written"),
            stall_micros: counter("rocksdb.stall.micros"),
        }
    }
}

/// The write amplification of a phase whose process counted `phase` and whose settling
/// (the untimed `flush,waitforcompaction` after it) counted `settle`:
///
/// ```text
/// write_amp = (wal_bytes + flush_write_bytes + compaction_write_bytes) / user_write_bytes
/// ```
///
/// with the WAL and user bytes the phase's, and the flush and compaction bytes the phase's
/// and its settling's (the memtable it left, the compactions it owed): every byte RocksDB
/// wrote for the phase's writes, over the bytes they handed it. `None` when the phase wrote
/// nothing (`readrandom`) or a ticker is missing.
pub fn write_amp(phase: &Statistics, settle: &Statistics) -> Option<f64> {
    let user = phase.user_write_bytes.filter(|b| *b > 0.0)?;
    let written = phase.wal_bytes?
        + phase.flush_write_bytes? + settle.flush_write_bytes?
        + phase.compaction_write_bytes? + settle.compaction_write_bytes?;
    Some(written / user)
}

/// The version from db_bench's header line `RocksDB:    version 7.8.3`.
pub fn version(out: &str) -> Option<String> {
    out.lines().find_map(|l| {
        let rest = l.strip_prefix("RocksDB:")?.trim_start().strip_prefix("version")?;
        let v = rest.trim();
        (!v.is_empty()).then(|| v.to_string())
    })
}

/// The operations per second of each whole second, from the file db_bench writes with
/// `--report_interval_seconds=1 --report_file=F`: a header `secs_elapsed,interval_qps`,
/// then `SECONDS,OPS` for every second of the benchmark's loop (the last, partial second
/// is not written).
pub fn per_second(csv: &str) -> Vec<f64> {
    csv.lines()
        .filter_map(|l| l.split_once(',')?.1.trim().parse().ok())
        .collect()
}

/// The flag db_bench refused, from its `ERROR: unknown command line flag 'NAME'` or
/// `ERROR: illegal value 'V' specified for TYPE flag 'NAME'`, with the reason.
pub fn refused_flag(out: &str) -> Option<(String, &'static str)> {
    out.lines().find_map(|l| {
        let l = l.trim().strip_prefix("ERROR: ")?;
        let why = if l.starts_with("unknown command line flag") {
            "db_bench has no such flag"
        } else if l.starts_with("illegal value") {
            "db_bench does not take that value"
        } else {
            return None;
        };
        let name = l.trim_end().strip_suffix('\'')?.rsplit_once('\'')?.1;
        Some((name.to_string(), why))
    })
}

/// Parses db_bench's output for benchmark `name`: its result line `NAME : X micros/op Y
/// ops/sec Z seconds N operations; … (F of N found)`, the `Percentiles:` line of the
/// histogram after it, and the `--statistics` tickers.
pub fn parse_report(out: &str, name: &str) -> Option<Report> {
    // Progress lines end in carriage returns, not newlines: split on both.
    let lines: Vec<&str> = out.split(['\n', '\r']).collect();
    let at = lines.iter().position(|l| {
        l.split_once(':')
            .is_some_and(|(n, rest)| n.trim() == name && rest.contains("ops/sec"))
    })?;
    let line = lines[at];
    let words: Vec<&str> = line.split_whitespace().collect();
    let before = |unit: &str| -> Option<f64> {
        let i = words.iter().position(|w| w.trim_end_matches(';') == unit)?;
        words.get(i.checked_sub(1)?)?.parse().ok()
    };
    let mut r = Report {
        ops_per_s: before("ops/sec")?,
        ops: before("operations")? as u64,
        stats: Statistics::parse(out),
        ..Default::default()
    };
    if let Some(found) = line.split_once('(').map(|(_, f)| f) {
        let f: Vec<&str> = found.split_whitespace().collect();
        if let (Some(a), Some(b)) = (f.first(), f.get(2)) {
            if let (Ok(a), Ok(b)) = (a.parse::<f64>(), b.parse::<f64>()) {
                if b > 0.0 {
                    r.found_pct = Some(100.0 * a / b);
                }
            }
        }
    }
    if let Some(p) = lines[at..].iter().find_map(|l| l.strip_prefix("Percentiles:")) {
        let w: Vec<&str> = p.split_whitespace().collect();
        let value = |key: &str| {
            let i = w.iter().position(|x| *x == key)?;
            w.get(i + 1)?.parse().ok()
        };
        r.p50_us = value("P50:");
        r.p99_us = value("P99:");
        r.p99_9_us = value("P99.9:");
    }
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `db_bench --benchmarks=fillrandom --statistics=1 --num=300000 --histogram=1
    /// --seed=1 --write_buffer_size=1048576 --report_interval_seconds=1 --report_file=F`
    /// on this machine (ext4), and its report file.
    const FILL: &str = include_str!("testdata/fillrandom-7.8.3.txt");
    const FILL_CSV: &str = include_str!("testdata/fillrandom-7.8.3.csv");
    /// `readrandom` on that database (`--use_existing_db=1`, same flags).
    const READ: &str = include_str!("testdata/readrandom-7.8.3.txt");
    /// `--benchmarks=flush,waitforcompaction --use_existing_db=1 --statistics=1` after a
    /// fillrandom of 1,000,000 keys with the default 64 MiB memtable.
    const SETTLE: &str = include_str!("testdata/settle-7.8.3.txt");

    const OUT: &str = "RocksDB:    version 7.8.3\n\
        ... finished 100 ops\r... finished 200 ops\rDB path: [/x/rocksdb]\n\
        readrandom   :       3.021 micros/op 330649 ops/sec 0.060 seconds 20000 operations;   31.6 MB/s (17283 of 20000 found)\n\
        \n\
        Microseconds per read:\n\
        Count: 20000 Average: 3.1980  StdDev: 26.40\n\
        Percentiles: P50: 2.31 P75: 2.86 P99: 5.71 P99.9: 60.72 P99.99: 170.00\n\
        STATISTICS:\n\
        rocksdb.wal.synced COUNT : 7\n\
        rocksdb.wal.bytes COUNT : 123456\n\
        rocksdb.compact.write.bytes COUNT : 0\n";

    #[test]
    fn reads_db_bench_output() {
        let r = parse_report(OUT, "readrandom").unwrap();
        assert_eq!(r.ops, 20000);
        assert_eq!(r.ops_per_s, 330649.0);
        assert_eq!(r.p50_us, Some(2.31));
        assert_eq!(r.p99_us, Some(5.71));
        assert_eq!(r.p99_9_us, Some(60.72));
        assert!((r.found_pct.unwrap() - 86.415).abs() < 1e-9);
        assert_eq!(r.stats.wal_syncs, Some(7.0));
        assert_eq!(r.stats.wal_bytes, Some(123456.0));
        assert_eq!(r.stats.compaction_write_bytes, Some(0.0));
        assert_eq!(r.stats.user_write_bytes, None);
        assert_eq!(parse_report(OUT, "fillseq"), None);
        let fill = "fillseq      :       7.079 micros/op 141208 ops/sec 0.142 seconds 20000 operations;   15.6 MB/s\n";
        let r = parse_report(fill, "fillseq").unwrap();
        assert_eq!((r.ops, r.found_pct, r.p99_us), (20000, None, None));
    }

    #[test]
    fn reads_a_real_fillrandom() {
        assert_eq!(version(FILL).as_deref(), Some("7.8.3"));
        let r = parse_report(FILL, "fillrandom").unwrap();
        assert_eq!((r.ops, r.ops_per_s), (300000, 125216.0));
        assert_eq!(r.p99_us, Some(14.90));
        let s = r.stats;
        assert_eq!(s.user_write_bytes, Some(39_300_000.0));
        assert_eq!(s.wal_bytes, Some(39_300_000.0));
        assert_eq!(s.flush_write_bytes, Some(19_898_204.0));
        assert_eq!(s.compaction_write_bytes, Some(54_300_034.0));
        assert_eq!(s.stall_micros, Some(0.0));
        assert_eq!(s.wal_syncs, Some(0.0));
        assert_eq!(per_second(FILL_CSV), [133230.0, 107010.0]);
    }

    #[test]
    fn write_amp_counts_the_settling_and_is_absent_without_writes() {
        let fill = Statistics::parse(FILL);
        let settle = Statistics::parse(SETTLE);
        // The settling wrote no user bytes, only the SST of the WAL it replayed.
        assert_eq!(settle.user_write_bytes, Some(0.0));
        assert_eq!(settle.compaction_write_bytes, Some(5_157_106.0));
        assert_eq!(settle.flush_write_bytes, Some(0.0));
        let amp = write_amp(&fill, &settle).unwrap();
        let want = (39_300_000.0 + 19_898_204.0 + 54_300_034.0 + 5_157_106.0) / 39_300_000.0;
        assert!((amp - want).abs() < 1e-12, "{amp}");
        assert!(amp > 3.0);
        let read = parse_report(READ, "readrandom").unwrap();
        assert_eq!(read.found_pct, Some(100.0));
        assert_eq!(write_amp(&read.stats, &settle), None);
        assert_eq!(write_amp(&Statistics::default(), &settle), None);
    }

    #[test]
    fn names_the_flag_db_bench_refused() {
        let out = include_str!("testdata/unknown-flag-7.8.3.txt");
        assert_eq!(
            refused_flag(out),
            Some(("nosuchflag".to_string(), "db_bench has no such flag"))
        );
        let bad = "ERROR: illegal value 'abc' specified for int64 flag 'cache_size'\n";
        assert_eq!(
            refused_flag(bad),
            Some(("cache_size".to_string(), "db_bench does not take that value"))
        );
        assert_eq!(refused_flag(FILL), None);
        assert_eq!(version("no header"), None);
        assert!(per_second("secs_elapsed,interval_qps\n").is_empty());
    }
}
