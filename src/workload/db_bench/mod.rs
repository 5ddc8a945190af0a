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
//! the sync policy's syncfs at the end (none under `--sync none`); its wall time, CPU and
//! device figures span the whole process (opening the database and replaying its WAL,
//! closing it), whose rate is `process_ops_per_s`. Between phases, untimed, a db_bench
//! process settles the database (`flush,waitforcompaction`).
//!
//! db_bench's own figures are kept beside, per phase:
//! * `db_bench_ops_per_s` (its ops/sec, the headline) and the latency percentiles of its
//!   `--histogram` (`p50_us`, `p99_us`, `p99_9_us`); for reads the share of keys found
//!   (`found_pct`);
//! * from its `--statistics` tickers ([`output::Statistics`]): WAL syncs and bytes
//!   (`wal_syncs`, `wal_bytes`), the user's bytes written (`user_write_bytes`), the bytes
//!   memtable flushes and compactions wrote (`flush_write_bytes`, `compaction_write_bytes`:
//!   the phase's process and the settling after it, which flushes the memtable the phase
//!   left and runs the compactions it owed), the write amplification
//!   `write_amp = (wal_bytes + flush_write_bytes + compaction_write_bytes) /
//!   user_write_bytes` ([`output::write_amp`]; absent when the phase wrote nothing), and
//!   the time writes were stalled by RocksDB's write controller (`stall_s`,
//!   `rocksdb.stall.micros` / 10^6);
//! * from its per-second report (`--report_interval_seconds=1`, a file outside the
//!   target), the steadiness of its rate ([`crate::workload::steadiness`]): `rate_1s_p1`
//!   and `longest_stall_s`, the longest run of whole seconds without an operation — known
//!   to the second only, and absent when the loop lasted under a second.
//!
//! The phase's own latency histogram has one sample, the whole process (as Bonnie's
//! per-character tests have one per chunk): db_bench's per-operation latencies are its
//! percentiles above, not the phase's `lat_us`.
//!
//! Parameters are db_bench's: `num`, `value_size`, `sync` (an fsync of the WAL per write),
//! `threads`; the seed is the trial's, so repetitions draw the same keys. `opt` passes the
//! user's own flags ([`opt`]), refused when they would move the database's files off the
//! target or are fsarena's own. Everything else is db_bench's default (16-byte keys,
//! values compressible to half with Snappy, 64 MiB memtables, level compaction), as
//! `db_bench --help` names it. The trial's engine ([`crate::result::Engine`]) is RocksDB
//! at the version db_bench prints, its settings `sync` when on and every `opt` item;
//! `disable_wal` and `manual_wal_flush` on are listed as not durable.

pub mod opt;
pub mod output;

use self::opt::Opt;
use self::output::{parse_report, Report, Statistics};
use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext};
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::recorder::Op;
use crate::workload::params::param;
use crate::workload::programs::DB_BENCH;
use crate::workload::steadiness::{self, Steadiness};
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
    param(
        "opt",
        ParamKind::Text,
        "",
        "",
        "more db_bench flags, name=value each, recorded as the engine's settings \
         (quote the list: opt='cache_size=8388608,bloom_bits=10')",
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
    Figure::neither("user_write_bytes", "bytes"),
    Figure::lower("flush_write_bytes", "bytes"),
    Figure::lower("compaction_write_bytes", "bytes"),
    Figure::lower("write_amp", "x"),
    Figure::lower("stall_s", "s"),
    steadiness::FIGURES[0],
    steadiness::FIGURES[1],
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
    /// The user's own flags (`opt`), in the order given.
    opts: Vec<Opt>,
    /// Bytes of a key: db_bench's 16, or the user's `key_size`.
    key_bytes: u64,
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
    let opts = opt::parse(p.text("opt").unwrap_or_default())?;
    let key_bytes = match opts.iter().find(|o| o.name == "key_size") {
        None => KEY_BYTES,
        Some(o) => match o.value.parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(usage(format!(
                    "db_bench: opt item 'key_size={}': a key size is a whole number of bytes",
                    o.value
                )))
            }
        },
    };
    Ok(Box::new(DbBench {
        benchmarks,
        num,
        value_size,
        sync: p.flag("sync"),
        threads,
        opts,
        key_bytes,
    }))
}

impl DbBench {
    /// db_bench's argv (without the program) for benchmark `name` on database `db`, its
    /// per-second rates reported to `report` when given.
    fn argv(&self, name: &str, db: &Path, seed: u64, report: Option<&Path>) -> Vec<String> {
        let mut v = vec![
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
        ];
        if let Some(report) = report {
            v.push("--report_interval_seconds=1".into());
            v.push(format!("--report_file={}", report.display()));
        }
        v.extend(self.opts.iter().map(Opt::arg));
        v
    }

    /// The engine as data: RocksDB at `version`, with `sync` when on and the user's
    /// flags as its settings.
    fn engine(&self, version: String) -> crate::result::Engine {
        let mut e = crate::result::Engine {
            name: "RocksDB".into(),
            version,
            ..Default::default()
        };
        if self.sync {
            e.settings.insert("sync".into(), "true".into());
        }
        for o in &self.opts {
            e.settings.insert(o.name.clone(), o.value.clone());
            if o.not_durable() {
                e.not_durable.push(format!("{}={}", o.name, o.value));
            }
        }
        e
    }
}

impl Workload for DbBench {
    fn data_bytes(&self) -> Option<u64> {
        // The keys once, uncompressed, with room for the WAL and compaction's copies.
        let one = self.key_bytes + self.value_size;
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
        let mut engine_known = false;
        for spec in &self.benchmarks {
            let rates_file = scratch.path().join(format!("{}.csv", spec.name));
            let argv = self.argv(spec.name, &db, seed, Some(&rates_file));
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
                let bytes = r.ops.saturating_mul(self.key_bytes + self.value_size);
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
                *got.lock().unwrap_or_else(|e| e.into_inner()) = Some((r, output::version(&out)));
                Ok(())
            })?;
            let Some((r, version)) = got.into_inner().unwrap_or_else(|e| e.into_inner()) else {
                continue;
            };
            if !engine_known {
                cx.set_engine(self.engine(version.unwrap_or_else(|| "unknown".into())));
                engine_known = true;
            }
            // Untimed, before the next phase: the memtable flushed and compactions done,
            // so that each phase starts from a settled database, whatever the last left.
            let settle = self.argv("flush,waitforcompaction", &db, seed, None);
            let settled = run_db_bench(&program, &settle, scratch.path(), &log, "settle")?;
            let rates = std::fs::read_to_string(&rates_file).unwrap_or_default();
            note(cx, &r, &Statistics::parse(&settled), &output::per_second(&rates));
        }
        Ok(())
    }
}

/// Attaches the phase's db_bench figures: its report `r`, the settling's tickers `settle`
/// and its per-second rates.
fn note(cx: &mut TrialContext, r: &Report, settle: &Statistics, rates: &[f64]) {
    let s = &r.stats;
    let sum = |a: Option<f64>, b: Option<f64>| Some(a? + b?);
    let steady = Steadiness::from_rates(rates);
    cx.note("db_bench_ops_per_s", r.ops_per_s);
    for (k, v) in [
        ("p50_us", r.p50_us),
        ("p99_us", r.p99_us),
        ("p99_9_us", r.p99_9_us),
        ("found_pct", r.found_pct),
        ("process_ops_per_s", r.process_ops_per_s),
        ("wal_syncs", s.wal_syncs),
        ("wal_bytes", s.wal_bytes),
        ("user_write_bytes", s.user_write_bytes),
        ("flush_write_bytes", sum(s.flush_write_bytes, settle.flush_write_bytes)),
        (
            "compaction_write_bytes",
            sum(s.compaction_write_bytes, settle.compaction_write_bytes),
        ),
        ("write_amp", output::write_amp(s, settle)),
        ("stall_s", s.stall_micros.map(|us| us / 1e6)),
        ("rate_1s_p1", steady.map(|s| s.rate_1s_p1)),
        ("longest_stall_s", steady.map(|s| s.longest_stall_s)),
    ] {
        if let Some(v) = v {
            cx.note(k, v);
        }
    }
}

/// Runs db_bench with `argv`, its output kept in `dir` and appended to `log`, and
/// returned; stopped with its process group on Ctrl-C; fails on a non-zero exit, naming
/// the flag when db_bench refused one.
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
        let refused = output::refused_flag(&text)
            .map(|(flag, why)| {
                let given = argv
                    .iter()
                    .find(|a| a.starts_with(&format!("--{flag}=")))
                    .map_or(format!("--{flag}"), String::clone);
                format!(": it refused {given} ({why}; check the opt parameter)")
            })
            .unwrap_or_default();
        bail!(
            "db_bench {what} {}{refused}; log {}, last lines:\n{}",
            crate::workload::command::how_it_ended(status),
            log.display(),
            crate::workload::command::tail(log)
        );
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;

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

    /// `opt` quoted as the spec's lists are: its items reach db_bench's argv after
    /// fsarena's own flags (also in the settling's), and the engine records them.
    #[test]
    fn opt_items_are_flags_and_settings() {
        let build = |s: &str| {
            let spec = crate::workload::WorkloadSpec::parse(&format!("db_bench:{s}"))?;
            (spec.info.build)(&spec.params)
        };
        for bad in ["opt='db=/tmp/x'", "opt='num=5'", "opt=bloom_bits", "opt='key_size=x'"] {
            let e = build(bad).map(|_| ()).unwrap_err();
            assert_eq!(exit_code(&e), 2, "{bad}: {e:#}");
        }
        let p = crate::workload::WorkloadSpec::parse(
            "db_bench:opt='cache_size=8388608,disable_wal=1,key_size=20',sync=true,num=10",
        )
        .unwrap();
        let w = DbBench {
            opts: opt::parse(p.params.text("opt").unwrap()).unwrap(),
            benchmarks: vec![&PHASES[1]],
            num: 10,
            value_size: 100,
            sync: true,
            threads: 1,
            key_bytes: 20,
        };
        let argv = w.argv("fillrandom", Path::new("/t/rocksdb"), 7, Some(Path::new("/s/r.csv")));
        let tail: Vec<&str> = argv[argv.len() - 4..].iter().map(String::as_str).collect();
        assert_eq!(
            tail,
            [
                "--report_file=/s/r.csv",
                "--cache_size=8388608",
                "--disable_wal=1",
                "--key_size=20",
            ]
        );
        assert!(argv.contains(&"--report_interval_seconds=1".to_string()));
        let settle = w.argv("flush,waitforcompaction", Path::new("/t/rocksdb"), 7, None);
        assert!(settle.iter().all(|a| !a.starts_with("--report")));
        assert!(settle.contains(&"--cache_size=8388608".to_string()));
        let e = w.engine("7.8.3".into());
        assert_eq!(
            e.describe(),
            "RocksDB 7.8.3; set cache_size=8388608 disable_wal=1 key_size=20 sync=true; \
             NOT DURABLE (disable_wal=1)"
        );
        assert_eq!(w.data_bytes(), Some(10 * 120 * 3));
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
        // The fills' bytes reach an SST at the latest in the settling after them.
        for p in &phases[..2] {
            assert!(p.extra["write_amp"] > 1.0, "{}: {:?}", p.name, p.extra);
            assert!(p.extra["user_write_bytes"] > 0.0, "{}", p.name);
            assert!(p.extra.contains_key("stall_s"), "{}", p.name);
        }
        assert!(!phases[3].extra.contains_key("write_amp"), "{:?}", phases[3].extra);
        // A flag db_bench does not know: the error names it.
        let unknown = crate::workload::WorkloadSpec::parse(
            "db_bench:num=300,benchmarks=fillrandom,opt='nosuchflag=1'",
        )
        .unwrap();
        let e = crate::workload::testutil::in_context(
            crate::policy::DataPolicy::Random,
            crate::policy::SyncPolicy::End,
            |cx| unknown.workload.run(cx),
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("refused --nosuchflag=1"), "{e:#}");
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
        let engine = crate::workload::testutil::in_context(
            crate::policy::DataPolicy::Random,
            crate::policy::SyncPolicy::End,
            |cx| synced.workload.run(cx).map(|_| cx.take_engine()),
        )
        .unwrap()
        .unwrap();
        assert_eq!(engine.name, "RocksDB");
        assert!(engine.version.starts_with(|c: char| c.is_ascii_digit()), "{engine:?}");
        assert_eq!(engine.settings_text(), "sync=true");
    }
}
