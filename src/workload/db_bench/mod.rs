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
//! A named profile ([`profile`]: `commit-latency`, the default, `steady`, `io-bound`) sets
//! the defaults of `num`, `sync` and some db_bench flags, and is recorded with the engine.
//! Reading phases also note what they read from the device per operation
//! (`dev_read_bytes_per_op`: the phase's device read bytes over db_bench's operations,
//! the whole process's reads included; above 0, reads reached the disk).
//!
//! Parameters are db_bench's: `num`, `value_size`, `sync` (an fsync of the WAL per write),
//! `threads`; the seed is the trial's, so repetitions draw the same keys. `opt` passes the
//! user's own flags ([`opt`]), refused when they would move the database's files off the
//! target or are fsarena's own. Everything else is db_bench's default (16-byte keys,
//! values compressible to half with Snappy, 64 MiB memtables, level compaction), as
//! `db_bench --help` names it. The trial's engine ([`crate::result::Engine`]) is RocksDB
//! at the version db_bench prints, its profile, its settings `sync` when on and every `opt`
//! item (the profile's flags among them);
//! `disable_wal` and `manual_wal_flush` on are listed as not durable.

pub mod opt;
pub mod output;
pub mod profile;

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
        "profile",
        ParamKind::Choice(profile::PROFILES),
        "commit-latency",
        "",
        "what the run answers (docs/databases.md); sets the defaults of num, sync and flags",
    ),
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
        "",
        "keys",
        "db_bench --num: keys written or read per benchmark, per thread (profile's: 10,000, \
         steady 5,000,000, io-bound 1,000,000)",
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
        "",
        "",
        "db_bench --sync: fsync the WAL at every write (profile's: true, steady and \
         io-bound false)",
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
         (quote the list: opt='cache_size=8388608,bloom_bits=10'); an item wins over the \
         profile's flag of that name (steady's: reads=1000000; io-bound's: \
         use_direct_reads=true, use_direct_io_for_flush_and_compaction=true, \
         cache_size=8388608, reads=100000)",
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
    Figure::neither("dev_read_bytes_per_op", "bytes"),
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
    resolve: Some(profile::resolve),
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
    /// The profile, as named.
    profile: &'static str,
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    // The profile's defaults, when the parameters come without them (a test's).
    let mut p = p.clone();
    profile::resolve(&mut p)?;
    let p = &p;
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
    let no_wal = opts.iter().any(|o| o.name == "disable_wal" && o.not_durable());
    if p.flag("sync") && no_wal {
        return Err(usage(format!(
            "db_bench: sync=true (profile {}'s, or given) with disable_wal: RocksDB refuses a \
             synced write without a WAL; give sync=false or profile=steady",
            p.choice("profile")
        )));
    }
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
        profile: profile::PROFILES
            .iter()
            .find(|n| **n == p.choice("profile"))
            .unwrap_or(&profile::PROFILES[0]),
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

    /// The engine as data: RocksDB at `version` under its profile, with `sync` when on and
    /// the flags (the profile's and the user's) as its settings; not durable without
    /// `sync` or with the WAL off.
    fn engine(&self, version: String) -> crate::result::Engine {
        let mut e = crate::result::Engine {
            name: "RocksDB".into(),
            version,
            profile: Some(self.profile.to_string()),
            ..Default::default()
        };
        if self.sync {
            e.settings.insert("sync".into(), "true".into());
        } else {
            // db_bench's default, RocksDB's too: each write reaches the WAL in the page
            // cache and is synced when the OS writes it back, so a power cut loses the
            // last ones (as PostgreSQL's synchronous_commit=off would).
            e.not_durable.push("sync=false".into());
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
            // What its reads took from the device: above 0, they reached the disk (the
            // io-bound profile's proof). Absent where the target has no device (tmpfs).
            let read = cx.phases().last().and_then(|p| p.dev_read_bytes);
            if let Some(read) = read.filter(|_| spec.name.starts_with("read") && r.ops > 0) {
                cx.note("dev_read_bytes_per_op", read as f64 / r.ops as f64);
            }
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
mod tests;
