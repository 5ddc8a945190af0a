//! PostgreSQL's own benchmark on the target: `pgbench`'s TPC-B-like load and transactions
//! against a PostgreSQL server whose whole cluster lives on the filesystem measured.
//!
//! Per trial, untimed: `initdb` into `pgdata/` of the work directory, the server started
//! listening only on a Unix socket in a directory of its own (no TCP port; see
//! [`server`]). Then two phases:
//! * **`load`**: `pgbench -i -s SCALE` (tables, 100,000 accounts per scale unit, vacuum,
//!   primary keys), one operation timed from start to exit.
//! * **`run`**: `pgbench -c CLIENTS -j JOBS -T DURATION -l`, pgbench's default
//!   TPC-B-like script. Each transaction of the per-transaction log (`-l`, written outside
//!   the target) is one operation, timed from its start to its end as the log gives them,
//!   so the phase's latency percentiles are pgbench's transactions'; the phase's
//!   transactions/s are pgbench's own ("without initial connection time", also kept as
//!   `pgbench_tps`: [`crate::context::Worker::timed_itself`]) with the sync policy's
//!   closing syncfs added to its time, its wall time, CPU and
//!   device figures the whole pgbench process's (its start, its vacuum of the small
//!   tables, its connections); transactions pgbench reports as failed are `failed_tx`;
//!   the CPU seconds the server's processes used during it are `server_cpu_s`.
//!   Between the two, untimed, a `CHECKPOINT` (run by `pgbench -n -t 1 -f`), so the run
//!   does not pay for writing the load's pages under one cache policy and not another.
//!
//! The server stops (fast shutdown) at the end of the trial. Under `--cache cold` it is
//! stopped before each phase, caches dropped and the filesystem remounted, and started
//! again: a server cannot keep running across a remount. Under `--sync end` each phase
//! ends with a syncfs inside its time, as every workload's does.
//!
//! **Server settings** `fsync`, `synchronous_commit`, `wal_sync_method`, `shared_buffers`
//! and `full_page_writes` are passed on the server's command line when given; `server`
//! (the default) keeps PostgreSQL's own default, and the value in effect — given or
//! default — is named in the trial's messages, read from the server with `postgres -C`.
//!
//! Differs from running pgbench by hand: nothing else runs on the cluster; the cluster is
//! new for every trial (a fresh filesystem, as for every workload); autovacuum and
//! checkpoints run as the server's defaults set them, so a short `duration` may see no
//! checkpoint at all (a checkpoint every 5 minutes by default): give `duration` of
//! several minutes to include them.

mod output;
mod profile;
pub mod server;
mod settings;
mod stats;

pub use output::{parse_tx_line, summary_failed, summary_tps, Tx};
use output::{read_tx_logs, run_pgbench, TxLines};
use settings::set_settings;

use crate::context::{PhaseKind, Primary, TrialContext};
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::recorder::Op;
use crate::workload::programs::{postgres_bin_dir, POSTGRES};
use crate::workload::{spec, IoContext, Knob, Params, Workload, WorkloadInfo};
use anyhow::{anyhow, bail, Context, Result};
use server::{Cluster, Settings};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// What the cluster takes after `pgbench -i`, measured with PostgreSQL 15 on ext4 (its
/// `database_bytes`): 69.3 MiB at scale 1, 316 MiB at scale 10, so about 27 MiB per scale
/// unit (tables, indexes and the WAL they wrote) over 42 MiB of `initdb`'s own. Rounded up.
const BASE_BYTES: u64 = 48 << 20;
const BYTES_PER_SCALE: u64 = 32 << 20;

/// The settings named in the trial's messages, given or not.
const SHOWN: [&str; 5] = [
    "fsync",
    "synchronous_commit",
    "wal_sync_method",
    "shared_buffers",
    "full_page_writes",
];

/// Settings that let a commit return before it is on the disk, or leave pages that a
/// power cut can tear.
const NOT_DURABLE: &[(&str, &str)] = &[
    ("fsync", "off"),
    ("synchronous_commit", "off"),
    ("full_page_writes", "off"),
];

const LOAD: crate::context::PhaseSpec = spec("load", PhaseKind::Write, Primary::Seconds, "loads");
const RUN: crate::context::PhaseSpec =
    spec("run", PhaseKind::Write, Primary::OpsPerS, "tx/s");

/// pgbench's own figures beside the phase's.
pub const FIGURES: &[Figure] = &[
    Figure::higher("pgbench_tps", "tx/s"),
    Figure::lower("server_cpu_s", "s"),
    Figure::lower("failed_tx", "tx"),
    Figure::neither("database_bytes", "bytes"),
    crate::workload::steadiness::FIGURES[0],
    crate::workload::steadiness::FIGURES[1],
    Figure::neither("checkpoints", "checkpoints"),
    Figure::neither("checkpoint_buffers", "buffers"),
    Figure::neither("checkpoint_write_s", "s"),
    Figure::lower("checkpoint_sync_s", "s"),
    Figure::lower("wal_bytes", "bytes"),
    Figure::neither("wal_fpi", "images"),
    Figure::neither("wal_syncs", "syncs"),
    Figure::lower("wal_sync_ms", "ms"),
    Figure::lower("dev_read_bytes_per_tx", "bytes"),
];

/// The `pgbench` workload as `fsarena list` shows it and `run` builds it.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "pgbench",
    about: "PostgreSQL's pgbench (TPC-B-like) against a server fsarena starts on the target, \
            on a Unix socket only",
    params: profile::PARAMS,
    phases: &[LOAD, RUN],
    figures: FIGURES,
    classic_tool: None,
    param_applies: None,
    after_merge: None,
    resolve: Some(profile::resolve),
    phase_time_knobs: &[Knob::new("duration", &["run"], 0.0)],
    database: Some(super::DatabaseRole::Engine("run")),
    programs: &[POSTGRES],
    build,
};

/// The validated `pgbench` configuration.
#[derive(Clone, Debug)]
pub struct Pgbench {
    scale: u64,
    clients: u64,
    jobs: u64,
    duration: u64,
    /// The server settings given (not `server`), `set=`'s included.
    settings: Vec<(String, String)>,
    /// The profile, as named.
    profile: String,
    /// Untimed seconds of transactions before the timed ones.
    warmup: u64,
    /// `pgbench -M`.
    protocol: String,
    /// The memory limit of the server's processes, bytes.
    memory: Option<u64>,
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    Ok(Box::new(Pgbench::from_params(p)?))
}

impl Pgbench {
    /// Validates the parameters.
    pub fn from_params(p: &Params) -> Result<Self> {
        // The profile's defaults, when the parameters come without them (a test's).
        let mut p = p.clone();
        profile::resolve(&mut p)?;
        let p = &p;
        let count = |n: &str| p.count(n).unwrap_or(0);
        // pgbench -T takes whole seconds (what --phase-time scales it to, too).
        let seconds = p.float("duration").unwrap_or(0.0).round();
        let (scale, clients, jobs, duration) = (
            count("scale"),
            count("clients"),
            count("jobs"),
            seconds as u64,
        );
        for (n, v) in [
            ("scale", scale),
            ("clients", clients),
            ("jobs", jobs),
            ("duration", duration),
        ] {
            if v == 0 {
                return Err(usage(format!("pgbench: {n} must be at least 1")));
            }
        }
        if jobs > clients {
            return Err(usage(format!(
                "pgbench: jobs={jobs} is more than clients={clients} (pgbench needs a client \
                 per thread)"
            )));
        }
        if clients > 1000 {
            return Err(usage(
                "pgbench: clients is at most 1000 (the server's max_connections is 100 by \
                 default; fsarena raises it to clients + 10)",
            ));
        }
        let mut settings = Vec::new();
        for name in [
            "fsync",
            "synchronous_commit",
            "wal_sync_method",
            "full_page_writes",
        ] {
            let v = p.choice(name);
            if v != "server" {
                settings.push((name.to_string(), v.to_string()));
            }
        }
        let buffers = p.text("shared_buffers").unwrap_or("server");
        if buffers != "server" {
            let b = crate::size::parse_size(buffers).map_err(|e| {
                usage(format!(
                    "pgbench: shared_buffers={}: {e} (a size such as 256MiB, or server)",
                    crate::workload::params::echo(buffers)
                ))
            })?;
            if b < 128 << 10 {
                return Err(usage(
                    "pgbench: shared_buffers is at least 128KiB (PostgreSQL's minimum)",
                ));
            }
            settings.push(("shared_buffers".to_string(), format!("{}kB", b >> 10)));
        }
        settings.extend(set_settings(p.text("set").unwrap_or(""))?);
        if let Some(m) = p.bytes("memory").filter(|m| *m < 64 << 20) {
            return Err(usage(format!(
                "pgbench: memory={} MiB is below 64 MiB (the server alone needs about that)",
                m >> 20
            )));
        }
        Ok(Self {
            scale,
            clients,
            jobs,
            duration,
            settings,
            profile: p.choice("profile").to_string(),
            warmup: p.float("warmup").unwrap_or(0.0).round() as u64,
            protocol: p.choice("protocol").to_string(),
            memory: p.bytes("memory"),
        })
    }

    /// The server's settings: the given ones, and room for the clients.
    fn server_settings(&self) -> Settings {
        let mut s = self.settings.clone();
        if self.clients + 10 > 100 && !s.iter().any(|(k, _)| k == "max_connections") {
            s.push(("max_connections".to_string(), (self.clients + 10).to_string()));
        }
        s
    }

    /// The engine as data: the server's version and every setting given to it (fsarena's
    /// socket settings aside), with the value as the server shows it.
    fn engine(&self, cluster: &Cluster, settings: &Settings) -> Result<crate::result::Engine> {
        let mut e = crate::result::Engine {
            name: "PostgreSQL".into(),
            version: cluster.setting(settings, "server_version")?,
            ..Default::default()
        };
        // Each as given (`1min`, not the server's `60`); the server's reading of it (which
        // also checks it) decides whether it turns durability off.
        for (k, given) in settings {
            let v = cluster.setting(settings, k)?;
            if NOT_DURABLE.contains(&(k.as_str(), v.as_str())) {
                e.not_durable.push(format!("{k}={given}"));
            }
            e.settings.insert(k.clone(), given.clone());
        }
        Ok(e)
    }

    /// pgbench's argv (without the program) for `args`, on `server`'s socket.
    fn pgbench_argv(sockets: &Path, args: &[String]) -> Vec<String> {
        let mut v = vec![
            "-h".to_string(),
            sockets.display().to_string(),
            "-U".to_string(),
            "postgres".to_string(),
        ];
        v.extend(args.iter().cloned());
        v.push("postgres".to_string());
        v
    }
}

impl Workload for Pgbench {
    fn data_bytes(&self) -> Option<u64> {
        Some(BASE_BYTES.saturating_add(self.scale.saturating_mul(BYTES_PER_SCALE)))
    }

    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let bin = postgres_bin_dir().ok_or_else(|| {
            anyhow!(
                "PostgreSQL's server programs are missing (`fsarena setup --workload pgbench`)"
            )
        })?;
        let workdir = cx.workdir().to_path_buf();
        let log = cx.log_file()?;
        let cluster = Cluster::init(&bin, &workdir.join("pgdata"), &log)?;
        let mut settings = self.server_settings();
        let mut shown = Vec::new();
        for name in SHOWN {
            let mut v = cluster.setting(&settings, name)?;
            // `postgres -C` gives shared_buffers in pages of 8 kB (PostgreSQL's BLCKSZ).
            if let Ok(pages) = v.parse::<u64>().map(|n| n * 8192) {
                if name == "shared_buffers" {
                    v = crate::size::format_size_exact(pages);
                }
            }
            shown.push(format!("{name}={v}"));
        }
        let line = format!(
            "PostgreSQL {} with {}",
            cluster
                .setting(&settings, "server_version")
                .unwrap_or_default(),
            shown.join(" ")
        );
        {
            use std::io::Write;
            let mut l = std::fs::OpenOptions::new()
                .append(true)
                .open(&log)
                .on("open the log", &log)?;
            writeln!(l, "==> fsarena pgbench: {line}").on("write", &log)?;
        }
        cx.message(line);
        let limit = match self.memory {
            Some(_) if cx.target_info().fstype == "tmpfs" => {
                cx.message(
                    "no memory limit on tmpfs: its files are memory, which a limit could only \
                     kill the server over",
                );
                None
            }
            Some(m) => Some(crate::provision::memlimit::MemoryLimit::new(m, cx.state())?),
            None => None,
        };
        let mut engine = self.engine(&cluster, &settings)?;
        engine.profile = Some(self.profile.clone());
        engine.memory_limit_bytes = limit.as_ref().map(|l| l.bytes);
        cx.set_engine(engine);
        // What the server logs and counts, so that its checkpoints and WAL syncs are timed;
        // not among the engine's settings.
        settings.extend(stats::MEASURING.map(|(k, v)| (k.to_string(), v.to_string())));
        // Logs of pgbench go outside the target: they are not the database's writes. In
        // the run's own directory, recorded, so that a killed run leaves none behind.
        let scratch = Scratch::new(cx.state())?;
        let cold = cx.policy().cache == crate::policy::CachePolicy::Cold;

        // load
        if cold {
            cx.reset_caches()?;
        }
        // The load is not limited: PostgreSQL builds its keys in memory, as a restore would.
        let mut server = cluster.start(&settings, cx.state(), None)?;
        let pgbench = bin.join("pgbench");
        let load_args = vec![
            "-i".to_string(),
            "-s".to_string(),
            self.scale.to_string(),
            "-q".to_string(),
        ];
        let argv = Self::pgbench_argv(&server.sockets, &load_args);
        let sync_dir = workdir.clone();
        cx.phase_warm(&LOAD, 1, |w| {
            let t = w.start();
            run_pgbench(&pgbench, &argv, scratch.path(), &log, "load", &|| {})?;
            w.done(Op::Other, t, 0);
            w.end_fs(&sync_dir).on("syncfs", &sync_dir)?;
            Ok(())
        })?;
        let pgdata = workdir.join("pgdata");
        let used = crate::workload::space::du(&pgdata)?;
        cx.note_phase("load", "database_bytes", used.blocks_bytes as f64);

        // Untimed, before the run: a checkpoint, so that the run starts from the same state
        // under every cache policy (the load's dirty pages written, not the run's to pay).
        let script = scratch.path().join("checkpoint.sql");
        std::fs::write(&script, "CHECKPOINT;\n").on("write", &script)?;
        let one = ["-n", "-t", "1", "-f"].map(String::from);
        let mut ckpt_args = one.to_vec();
        ckpt_args.push(script.display().to_string());
        let ckpt = Self::pgbench_argv(&server.sockets, &ckpt_args);
        run_pgbench(&pgbench, &ckpt, scratch.path(), &log, "checkpoint", &|| {})?;

        // run
        // Restarted for the run under a memory limit, its pages dropped from the caches, so
        // that what it reads again is charged to its group and held to the limit.
        if cold || limit.is_some() {
            server.stop()?;
            cx.reset_caches()?;
            server = cluster.start(&settings, cx.state(), limit.as_ref())?;
        }
        let load_args = |seconds: u64| {
            ["-c", &self.clients.to_string(), "-j", &self.jobs.to_string()]
                .into_iter()
                .chain(["-M", &self.protocol, "-T", &seconds.to_string()])
                .map(String::from)
                .collect::<Vec<String>>()
        };
        // Untimed, the profile's warm-up: the same transactions, so that the timed ones
        // start from a server and caches in their steady state.
        if self.warmup > 0 {
            let argv = Self::pgbench_argv(&server.sockets, &load_args(self.warmup));
            run_pgbench(&pgbench, &argv, scratch.path(), &log, "warmup", &|| {})?;
        }
        let prefix = scratch.path().join("tx");
        let mut run_args = load_args(self.duration);
        run_args.extend(["-l".to_string(), format!("--log-prefix={}", prefix.display())]);
        let argv = Self::pgbench_argv(&server.sockets, &run_args);
        // The server's own account of the run: its log from here, its WAL counters zeroed.
        let log_from = std::fs::metadata(&log).map_or(0, |m| m.len());
        let wal_counted = match stats::reset_wal(&bin, &server.sockets) {
            Ok(()) => true,
            Err(e) => {
                cx.message(format!("no WAL figures (pg_stat_wal, PostgreSQL 14 and later): {e:#}"));
                false
            }
        };
        let summary = Mutex::new(Summary::default());
        cx.phase_warm(&RUN, 1, |w| {
            let started = (Instant::now(), SystemTime::now());
            let shown = |n| w.show_live(n);
            let cpu0 = server.cpu_s();
            let lines = TxLines::default();
            let out = run_pgbench(&pgbench, &argv, scratch.path(), &log, "run", &|| {
                shown(lines.count(scratch.path(), "tx"))
            })?;
            let server_cpu = cpu0.zip(server.cpu_s()).map(|(a, b)| (b - a).max(0.0));
            let txs = read_tx_logs(scratch.path(), "tx")?;
            let mut failed = 0u64;
            for tx in &txs {
                match tx.latency_us {
                    Some(lat) => {
                        let end = at(started, tx.end_epoch_us);
                        let begin = end
                            .checked_sub(Duration::from_micros(lat))
                            .unwrap_or(started.0);
                        w.done_between(Op::Transaction, begin.max(started.0), end, 0);
                    }
                    None => failed += 1,
                }
            }
            let mut s = summary.lock().unwrap_or_else(|e| e.into_inner());
            s.tps = summary_tps(&out);
            s.failed = failed.max(summary_failed(&out).unwrap_or(0));
            s.transactions = txs.len() as u64 - failed;
            s.server_cpu_s = server_cpu;
            let ends: Vec<f64> = txs
                .iter()
                .filter(|t| t.latency_us.is_some())
                .map(|t| t.end_epoch_us as f64 / 1e6)
                .collect();
            s.steady = crate::workload::steadiness::Steadiness::from_ends(&ends);
            let own = s.tps.filter(|t| *t > 0.0).map(|tps| s.transactions as f64 / tps);
            drop(s);
            let synced = Instant::now();
            w.end_fs(&sync_dir).on("syncfs", &sync_dir)?;
            // The headline is pgbench's own: its transactions over its time, without its
            // start, its vacuum and its connections — and the sync policy's syncfs at the
            // end, timed as in every workload.
            if let Some(own) = own {
                w.timed_itself(own + synced.elapsed().as_secs_f64());
            }
            Ok(())
        })?;
        let s = *summary.lock().unwrap_or_else(|e| e.into_inner());
        if s.transactions == 0 {
            bail!("pgbench ran no transaction; log {}", log.display());
        }
        if let Some(tps) = s.tps {
            cx.note_phase("run", "pgbench_tps", tps);
        }
        cx.note_phase("run", "failed_tx", s.failed as f64);
        // What the transactions read from the device: above 0, the data did not all fit
        // in memory (the io-bound profile's proof).
        let read = cx.phases().last().and_then(|p| p.dev_read_bytes);
        if let Some(read) = read.filter(|_| s.transactions > 0) {
            cx.note_phase("run", "dev_read_bytes_per_tx", read as f64 / s.transactions as f64);
        }
        if let Some(c) = s.server_cpu_s {
            cx.note_phase("run", "server_cpu_s", c);
        }
        if let Some(st) = s.steady {
            cx.note_phase("run", "rate_1s_p1", st.rate_1s_p1);
            cx.note_phase("run", "longest_stall_s", st.longest_stall_s);
        }
        if wal_counted {
            let w = stats::read_wal(&bin, &server.sockets)?;
            cx.note_phase("run", "wal_bytes", w.bytes as f64);
            cx.note_phase("run", "wal_fpi", w.fpi as f64);
            cx.note_phase("run", "wal_syncs", w.syncs as f64);
            if w.syncs > 0 {
                cx.note_phase("run", "wal_sync_ms", w.sync_ms / w.syncs as f64);
            }
        }
        server.stop()?;
        let c = stats::parse_checkpoints(&log_since(&log, log_from));
        cx.note_phase("run", "checkpoints", c.count as f64);
        if c.count > 0 {
            cx.note_phase("run", "checkpoint_buffers", c.buffers as f64);
            cx.note_phase("run", "checkpoint_write_s", c.write_s);
            cx.note_phase("run", "checkpoint_sync_s", c.sync_s);
        }
        Ok(())
    }
}

/// Where pgbench's own logs go: a directory of the run's, recorded in its state file; a
/// private temporary directory where the target keeps no state.
enum Scratch {
    Run(crate::state::ScratchDir),
    Temp(tempfile::TempDir),
}

impl Scratch {
    fn new(state: Option<std::sync::Arc<crate::state::State>>) -> Result<Scratch> {
        let made = match state {
            Some(s) => s.scratch_dir("pgbench-logs").map(Scratch::Run),
            None => tempfile::Builder::new()
                .prefix("fsarena-pgbench-")
                .tempdir()
                .map(Scratch::Temp)
                .map_err(Into::into),
        };
        made.context("creating a directory for pgbench's logs")
    }

    fn path(&self) -> &Path {
        match self {
            Scratch::Run(d) => d.path(),
            Scratch::Temp(d) => d.path(),
        }
    }
}

/// What the run phase read from pgbench.
#[derive(Clone, Copy, Default)]
struct Summary {
    /// Its per-second rates and stalls.
    steady: Option<crate::workload::steadiness::Steadiness>,
    tps: Option<f64>,
    /// CPU seconds the server's processes used during the run.
    server_cpu_s: Option<f64>,
    failed: u64,
    transactions: u64,
}

/// The trial's log from byte `from` on (what the server logged since).
fn log_since(log: &Path, from: u64) -> String {
    let text = std::fs::read(log).unwrap_or_default();
    String::from_utf8_lossy(text.get(from as usize..).unwrap_or_default()).into_owned()
}

/// The [`Instant`] of `epoch_us` (µs since the epoch), given one moment known on both
/// clocks.
fn at(known: (Instant, SystemTime), epoch_us: u64) -> Instant {
    let then = SystemTime::UNIX_EPOCH + Duration::from_micros(epoch_us);
    match then.duration_since(known.1) {
        Ok(after) => known.0 + after,
        Err(e) => known.0.checked_sub(e.duration()).unwrap_or(known.0),
    }
}

#[cfg(test)]
mod tests;
