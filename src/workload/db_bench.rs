//! RocksDB's own benchmark on the target: `db_bench` (Debian's `rocksdb-tools`), a
//! database in the work directory, its benchmarks `fillseq`, `fillrandom`, `overwrite`,
//! `readrandom` and `readwhilewriting` each a phase.
//!
//! Each phase is one `db_bench --benchmarks=NAME` process on the same database (the fills
//! make it anew, the others open it as the one before left it: `--use_existing_db`), so
//! the cache and sync policies apply between them as between any phases: under `--cache
//! cold` caches are dropped and the filesystem remounted before each. The phase's
//! operations are the `num` db_bench reports done, and its headline is db_bench's own
//! ops/sec, over the benchmark's loop alone ([`crate::context::Worker::timed_itself`]) and
//! the sync policy's syncfs at the end (none under `--sync none`);
//! its wall time, CPU and device figures span the whole process (opening the database
//! and replaying its WAL, closing it), whose rate is `process_ops_per_s`. Between phases,
//! untimed, `flush,waitforcompaction` settles the database. db_bench's own figures are kept
//! beside: `db_bench_ops_per_s` (its ops/sec, the headline) and the latency percentiles of its `--histogram` (`p50_us`, `p99_us`, `p99_9_us`), and
//! from its `--statistics` the WAL syncs (`wal_syncs`), the bytes written to the WAL and
//! by compactions (`wal_bytes`, `compaction_write_bytes`) and for reads the share of keys
//! found (`found_pct`). The phase's own latency histogram has one sample, the whole
//! process (as Bonnie's per-character tests have one per chunk): db_bench's per-operation
//! latencies are its percentiles above, not the phase's `lat_us`.
//!
//! Parameters are db_bench's: `num`, `value_size`, `sync` (an fsync of the WAL per write),
//! `threads`; the seed is the trial's, so repetitions draw the same keys. Everything else
//! is db_bench's default (16-byte keys, values compressible to half with Snappy, 64 MiB
//! memtables, level compaction), as `db_bench --help` names it.

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext};
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::recorder::Op;
use crate::workload::params::param;
use crate::workload::programs::DB_BENCH;
use crate::workload::{spec, IoContext, Knob, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{anyhow, bail, Context, Result};
use std::path::Path;
use std::sync::Mutex;

/// The benchmarks, in the order they run.
pub const BENCHMARKS: [&str; 5] = [
    "fillseq",
    "fillrandom",
    "overwrite",
    "readrandom",
    "readwhilewriting",
];

/// Bytes of a key (db_bench's default `--key_size`).
const KEY_BYTES: u64 = 16;

const PARAMS: &[ParamSpec] = &[
    param(
        "benchmarks",
        ParamKind::Text,
        "fillseq,fillrandom,overwrite,readrandom,readwhilewriting",
        "",
        "db_bench benchmarks to run, in this order (quote the list: benchmarks='a,b')",
    ),
    param(
        "num",
        ParamKind::Count,
        "500000",
        "keys",
        "db_bench --num: keys written or read per benchmark (per thread)",
    ),
    param(
        "value_size",
        ParamKind::Count,
        "100",
        "bytes",
        "db_bench --value_size",
    ),
    param(
        "sync",
        ParamKind::Bool,
        "false",
        "",
        "db_bench --sync: fsync the WAL at every write",
    ),
    param(
        "threads",
        ParamKind::Count,
        "1",
        "threads",
        "db_bench --threads (readwhilewriting adds its writer)",
    ),
];

const PHASES: &[PhaseSpec] = &[
    spec("fillseq", PhaseKind::Write, Primary::OpsPerS, "ops/s"),
    spec("fillrandom", PhaseKind::Write, Primary::OpsPerS, "ops/s"),
    spec("overwrite", PhaseKind::Write, Primary::OpsPerS, "ops/s"),
    spec("readrandom", PhaseKind::Read, Primary::OpsPerS, "ops/s"),
    spec("readwhilewriting", PhaseKind::Write, Primary::OpsPerS, "ops/s"),
];

/// db_bench's own figures, per phase.
pub const FIGURES: &[Figure] = &[
    Figure::higher("db_bench_ops_per_s", "ops/s"),
    Figure::lower("p50_us", "us"),
    Figure::lower("p99_us", "us"),
    Figure::lower("p99_9_us", "us"),
    Figure::neither("wal_syncs", "syncs"),
    Figure::neither("wal_bytes", "bytes"),
    Figure::lower("compaction_write_bytes", "bytes"),
    Figure::neither("found_pct", "%"),
    Figure::higher("process_ops_per_s", "ops/s"),
];

/// The `db_bench` workload as `fsarena list` shows it and `run` builds it.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "db_bench",
    about: "RocksDB's db_bench (fillseq, fillrandom, overwrite, readrandom, \
            readwhilewriting), a database on the target",
    params: PARAMS,
    phases: PHASES,
    figures: FIGURES,
    classic_tool: None,
    param_applies: None,
    after_merge: None,
    resolve: None,
    phase_time_knobs: &[Knob::new("num", &[], 0.0)],
    database: Some(super::DatabaseRole::Engine("readwhilewriting")),
    programs: &[DB_BENCH],
    build,
};

/// The validated `db_bench` configuration.
#[derive(Clone, Debug)]
pub struct DbBench {
    benchmarks: Vec<&'static PhaseSpec>,
    num: u64,
    value_size: u64,
    sync: bool,
    threads: u64,
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    let mut benchmarks = Vec::new();
    for name in p.text("benchmarks").unwrap_or_default().split(',') {
        let name = name.trim();
        let spec = PHASES.iter().find(|s| s.name == name).ok_or_else(|| {
            usage(format!(
                "db_bench: unknown benchmark '{}'; valid: {}",
                crate::workload::params::echo(name),
                BENCHMARKS.join(", ")
            ))
        })?;
        if benchmarks.iter().any(|b: &&PhaseSpec| b.name == name) {
            return Err(usage(format!("db_bench: benchmark {name} is given twice")));
        }
        benchmarks.push(spec);
    }
    let fresh = |s: &PhaseSpec| s.name.starts_with("fill");
    if !fresh(benchmarks[0]) {
        return Err(usage(format!(
            "db_bench: {} needs a database: start the list with fillseq or fillrandom",
            benchmarks[0].name
        )));
    }
    let count = |n: &str| p.count(n).unwrap_or(0);
    let (num, value_size, threads) = (count("num"), count("value_size"), count("threads"));
    if num == 0 || value_size == 0 || threads == 0 {
        return Err(usage("db_bench: num, value_size and threads must be at least 1"));
    }
    if value_size > 64 << 20 {
        return Err(usage("db_bench: value_size is at most 64MiB"));
    }
    Ok(Box::new(DbBench {
        benchmarks,
        num,
        value_size,
        sync: p.flag("sync"),
        threads,
    }))
}

impl DbBench {
    /// db_bench's argv (without the program) for benchmark `name` on database `db`.
    fn argv(&self, name: &str, db: &Path, seed: u64) -> Vec<String> {
        vec![
            format!("--db={}", db.display()),
            format!("--benchmarks={name}"),
            format!("--use_existing_db={}", u8::from(!name.starts_with("fill"))),
            format!("--num={}", self.num),
            format!("--value_size={}", self.value_size),
            format!("--sync={}", u8::from(self.sync)),
            format!("--threads={}", self.threads),
            // 0 would ask db_bench for a random seed.
            format!("--seed={}", seed.max(1)),
            "--histogram=1".into(),
            "--statistics=1".into(),
        ]
    }
}

impl Workload for DbBench {
    fn data_bytes(&self) -> Option<u64> {
        // The keys once, uncompressed, with room for the WAL and compaction's copies.
        let one = KEY_BYTES + self.value_size;
        Some(self.num.saturating_mul(self.threads).saturating_mul(one) * 3)
    }

    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let program = (DB_BENCH.find)()
            .ok_or_else(|| anyhow!("db_bench is missing (`fsarena setup --workload db_bench`)"))?;
        let workdir = cx.workdir().to_path_buf();
        let db = workdir.join("rocksdb");
        let log = cx.log_file()?;
        let seed = cx.seed();
        // db_bench's output goes outside the target: it is not the database's writes.
        let scratch = tempfile::Builder::new()
            .prefix("fsarena-db_bench-")
            .tempdir()
            .context("creating a directory for db_bench's output")?;
        for spec in &self.benchmarks {
            let argv = self.argv(spec.name, &db, seed);
            let got = Mutex::new(None);
            cx.phase(spec, 1, |w| {
                let t = w.start();
                let out = run_db_bench(&program, &argv, scratch.path(), &log, spec.name)?;
                let process_s = t.elapsed().as_secs_f64();
                let mut r = parse_report(&out, spec.name).ok_or_else(|| {
                    anyhow!(
                        "db_bench {}: no result line in its output; log {}",
                        spec.name,
                        log.display()
                    )
                })?;
                let bytes = r.ops.saturating_mul(KEY_BYTES + self.value_size);
                w.done_batch(Op::Other, t, r.ops, bytes);
                r.process_ops_per_s = (process_s > 0.0).then(|| r.ops as f64 / process_s);
                let synced = std::time::Instant::now();
                w.end_fs(&workdir).on("syncfs", &workdir)?;
                // The headline is db_bench's own: its operations over its loop's time, and
                // the sync policy's syncfs at the end, timed as in every workload.
                if r.ops_per_s > 0.0 {
                    let sync_s = synced.elapsed().as_secs_f64();
                    w.timed_itself(r.ops as f64 / r.ops_per_s + sync_s);
                }
                *got.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                Ok(())
            })?;
            let Some(r) = got.into_inner().unwrap_or_else(|e| e.into_inner()) else {
                continue;
            };
            // Untimed, before the next phase: the memtable flushed and compactions done,
            // so that each phase starts from a settled database, whatever the last left.
            let settle = self.argv("flush,waitforcompaction", &db, seed);
            run_db_bench(&program, &settle, scratch.path(), &log, "settle")?;
            cx.note("db_bench_ops_per_s", r.ops_per_s);
            for (k, v) in [
                ("p50_us", r.p50_us),
                ("p99_us", r.p99_us),
                ("p99_9_us", r.p99_9_us),
                ("found_pct", r.found_pct),
                ("process_ops_per_s", r.process_ops_per_s),
                ("wal_syncs", r.wal_syncs),
                ("wal_bytes", r.wal_bytes),
                ("compaction_write_bytes", r.compaction_write_bytes),
            ] {
                if let Some(v) = v {
                    cx.note(k, v);
                }
            }
        }
        Ok(())
    }
}

/// Runs db_bench with `argv`, its output kept in `dir` and appended to `log`, and
/// returned; stopped with its process group on Ctrl-C; fails on a non-zero exit.
fn run_db_bench(program: &Path, argv: &[String], dir: &Path, log: &Path, what: &str) -> Result<String> {
    use std::io::Write;
    let out_path = dir.join(format!("{what}.out"));
    let out = std::fs::File::create(&out_path).on("create", &out_path)?;
    let err = out.try_clone().on("dup", &out_path)?;
    let status = crate::workload::command::run_engine(program, argv, dir, out, err, &|| {})?;
    let text = std::fs::read_to_string(&out_path).unwrap_or_default();
    // Its progress lines ("... finished N ops", carriage-returned) are left out of the log.
    let kept: Vec<&str> = text
        .split(['\n', '\r'])
        .filter(|l| !l.trim_start().starts_with("... finished"))
        .collect();
    if let Ok(mut l) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        let _ = writeln!(l, "==> fsarena db_bench {}\n{}", argv.join(" "), kept.join("\n"));
    }
    if !status.success() {
        bail!(
            "db_bench {what} {}; log {}, last lines:\n{}",
            crate::workload::command::how_it_ended(status),
            log.display(),
            crate::workload::command::tail(log)
        );
    }
    Ok(text)
}

/// What db_bench reported for one benchmark.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Report {
    pub ops: u64,
    pub ops_per_s: f64,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p99_9_us: Option<f64>,
    pub found_pct: Option<f64>,
    pub wal_syncs: Option<f64>,
    pub wal_bytes: Option<f64>,
    pub compaction_write_bytes: Option<f64>,
    /// Operations over the whole process's time (opening the database, replaying its WAL
    /// and closing it included): fsarena's, not db_bench's.
    pub process_ops_per_s: Option<f64>,
}

/// Parses db_bench's output for benchmark `name`: its result line `NAME : X micros/op Y
/// ops/sec Z seconds N operations; … (F of N found)`, the `Percentiles:` line of the
/// histogram after it, and the `--statistics` counters.
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
    let counter = |key: &str| -> Option<f64> {
        lines.iter().find_map(|l| {
            let rest = l.strip_prefix(key)?.strip_prefix(" COUNT : ")?;
            rest.trim().parse().ok()
        })
    };
    r.wal_syncs = counter("rocksdb.wal.synced");
    r.wal_bytes = counter("rocksdb.wal.bytes");
    r.compaction_write_bytes = counter("rocksdb.compact.write.bytes");
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;

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
        assert_eq!(r.wal_syncs, Some(7.0));
        assert_eq!(r.wal_bytes, Some(123456.0));
        assert_eq!(r.compaction_write_bytes, Some(0.0));
        assert_eq!(parse_report(OUT, "fillseq"), None);
        let fill = "fillseq      :       7.079 micros/op 141208 ops/sec 0.142 seconds 20000 operations;   15.6 MB/s\n";
        let r = parse_report(fill, "fillseq").unwrap();
        assert_eq!((r.ops, r.found_pct, r.p99_us), (20000, None, None));
    }

    #[test]
    fn parameters() {
        let p = |s: &str| crate::workload::WorkloadSpec::parse(&format!("db_bench:{s}")).map(|_| ());
        for bad in [
            "benchmarks=readrandom",
            "benchmarks='fillseq,nosuch'",
            "benchmarks='fillseq,fillseq'",
            "num=0",
            "threads=0",
            "value_size=0",
        ] {
            let e = p(bad).unwrap_err();
            assert_eq!(exit_code(&e), 2, "{bad}: {e:#}");
        }
        p("benchmarks='fillrandom,readrandom',num=1000").unwrap();
    }

    /// The real db_bench on a temporary directory: every benchmark a phase with db_bench's
    /// count, its figures read; `sync=true` syncs the WAL at every write.
    #[test]
    fn runs_db_bench() {
        if (DB_BENCH.find)().is_none() {
            eprintln!("SKIP db_bench run: db_bench is not installed (rocksdb-tools)");
            return;
        }
        let w = crate::workload::WorkloadSpec::parse("db_bench:num=2000,value_size=64").unwrap();
        let phases = crate::workload::testutil::in_context(
            crate::policy::DataPolicy::Random,
            crate::policy::SyncPolicy::End,
            |cx| w.workload.run(cx).map(|_| cx.phases().to_vec()),
        )
        .unwrap();
        let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, BENCHMARKS);
        for p in &phases {
            assert!(p.ops >= 2000, "{}: {}", p.name, p.ops);
            assert!(p.extra["db_bench_ops_per_s"] > 0.0, "{}", p.name);
            assert!(p.extra.contains_key("p99_us"), "{}", p.name);
        }
        assert!(phases[3].extra["found_pct"] > 50.0);
        let synced = crate::workload::WorkloadSpec::parse(
            "db_bench:num=300,benchmarks=fillrandom,sync=true",
        )
        .unwrap();
        let phases = crate::workload::testutil::in_context(
            crate::policy::DataPolicy::Random,
            crate::policy::SyncPolicy::End,
            |cx| synced.workload.run(cx).map(|_| cx.phases().to_vec()),
        )
        .unwrap();
        assert!(phases[0].extra["wal_syncs"] >= 300.0, "{:?}", phases[0].extra);
    }
}
