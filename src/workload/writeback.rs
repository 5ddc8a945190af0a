//! Responsiveness while writing more than memory can hold, after a comment on the seed
//! article "First benchmarks of the ext4 file system" (2006): "If you are going to do
//! sustained writes multiple times the size of the memory you have … the precious dentry
//! and inodecache will be dropped leaving you with a *very* unresponsive system … If you
//! want to DoS any current 2.6 kernel just start a ever running dd write"; it suggests
//! `vm.dirty_ratio = 2` with `vm.dirty_background_ratio = 1`.
//!
//! **Setup** (untimed): `probe_files` directories `probe/s<i>/` with one empty file `f` each
//! (stat probes) and `probe_files` files `probe/r/<i>` of 4 KiB of `--data` bytes (read
//! probes); syncfs; then caches are dropped once (by the cold policy's reset before the
//! phase, or explicitly under `--cache warm|keep`), so no probe file's dentry, inode or
//! data is cached when the phase starts.
//!
//! **Phase `write`**, two workers:
//! * the **writer** (worker 0) streams `size` bytes into `writeback.dat` in `chunk`-sized
//!   `write(2)`s of `--data` bytes ([`Op::Write`]), with no fsync while streaming; the sync
//!   policy applies at the end (`--sync end`: one fsync inside the timing, so the phase's
//!   MB/s is what reached the disk; `each`: an fsync per chunk, which keeps the dirty
//!   backlog small — a useful contrast);
//! * the **prober** (worker 1) starts a round every `probe_ms` (or at once when the last
//!   round took longer, without catching up) until the writer is done. A round is: `lstat`
//!   of the next never-touched `probe/s<i>/f` ([`Op::Stat`]); `open`, 4 KiB `read` and
//!   `close` of the next never-touched `probe/r/<j>` ([`Op::Read`]); create, 4 KiB write,
//!   `fsync` and `close` of a new file `probe/new/<n>` ([`Op::Create`]). The stat and read
//!   files are taken in a seeded shuffled order, so that consecutive probes do not hit
//!   neighbouring inodes. When the pool is used up, rounds go on with the create probe only
//!   (noted as `probe_pool_exhausted_s`).
//!
//! What "cold" means here: each stat probe's dentry and inode, and each read probe's data,
//! were evicted before the phase and not touched since; a metadata block shared with an
//! earlier probe's file (an inode-table block, a block of `probe/`) may be cached by then,
//! and on ext4 every `s<i>` directory's own block is read anew. On tmpfs nothing is ever
//! evicted (drop_caches does not free tmpfs pages), so its probes are memory operations.
//!
//! **Figures**: the probes' latency percentiles per kind in `lat_by_op` (`stat`, `read`,
//! `create`; `write` is the writer's chunks, `fsync` its sync-policy fsync); the series'
//! bytes are the writer's only (probes record 0 bytes), so it is the writer's throughput
//! over time; the phase's `ops` counts probes and chunks alike. Extras: the `vm.dirty_*`
//! settings and limits in force ([`crate::probe::dirty`]), `size_bytes` written,
//! `writer_s` and `writer_mb_per_s` (the writer alone: the phase also waits for the
//! prober's last round), `probe_rounds`, `caches_dropped`, and for each probe kind its
//! p99 and maximum in seconds (`probe_stat_p99_s`, `probe_stat_max_s`, …) for the tables.
//!
//! **Default size**: twice the global dirty limit computed when the trial starts, capped at
//! 90% of the target's free space after setup (a message says so). With the default
//! `dirty_ratio` of 20% on a 24 GiB machine that is ~9 GiB.

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::data::MAX_SLICE;
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::dirty::DirtyState;
use crate::probe::recorder::Op;
use crate::size::format_size;
use crate::workload::params::param;
use crate::workload::{IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{bail, Context, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Size of a read probe's file and read, and of a create probe's file.
const PROBE_BYTES: usize = 4096;
/// The write rate assumed when sizing the probe pool by default (a slow disk), MB/s.
pub const POOL_RATE_MB_PER_S: f64 = 50.0;
/// Bounds of the default probe pool.
pub const POOL_MIN: u64 = 200;
pub const POOL_MAX: u64 = 30_000;
/// Share of the free space after setup the default size may take.
const FREE_SHARE: f64 = 0.9;

const PARAMS: &[ParamSpec] = &[
    param(
        "size",
        ParamKind::Size,
        "",
        "bytes",
        "bytes the writer streams; default 2 × the kernel's dirty limit (vm.dirty_bytes, or \
         vm.dirty_ratio % of MemFree + Active(file) + Inactive(file)), at most 90% of free space",
    ),
    param(
        "probe_ms",
        ParamKind::Count,
        "10",
        "ms",
        "interval between the prober's rounds (stat, 4KiB read, create+fsync)",
    ),
    param(
        "probe_files",
        ParamKind::Count,
        "",
        "files",
        "cold files made for the stat and for the read probes each; default: enough rounds \
         for size at 50 MB/s (200 to 30000)",
    ),
    param(
        "chunk",
        ParamKind::Size,
        "1MiB",
        "bytes",
        "size of the writer's write(2) calls (4KiB to 4MiB)",
    ),
];

const WRITE: PhaseSpec = PhaseSpec {
    name: "write",
    kind: PhaseKind::Write,
    primary: Primary::MbPerS,
    ops_unit: "ops/s",
};

/// The dirty-page settings in force, the writer's own figures and the probes' latency.
pub const FIGURES: &[Figure] = &[
    Figure::neither("dirty_ratio_pct", "%"),
    Figure::neither("dirty_background_ratio_pct", "%"),
    Figure::neither("dirty_bytes", "bytes"),
    Figure::neither("dirty_background_bytes", "bytes"),
    Figure::neither("dirty_expire_centisecs", "centiseconds"),
    Figure::neither("dirty_writeback_centisecs", "centiseconds"),
    Figure::neither("dirtyable_bytes", "bytes"),
    Figure::neither("dirty_limit_bytes", "bytes"),
    Figure::neither("dirty_background_limit_bytes", "bytes"),
    Figure::neither("kernel_dirty_threshold_bytes", "bytes"),
    Figure::neither("kernel_dirty_background_threshold_bytes", "bytes"),
    Figure::neither("size_bytes", "bytes"),
    Figure::lower("writer_s", "s"),
    Figure::higher("writer_mb_per_s", "MB/s"),
    Figure::neither("probe_rounds", "rounds"),
    Figure::neither("caches_dropped", "yes=1"),
    Figure::neither("probe_pool_exhausted_s", "s"),
    Figure::lower("probe_stat_p99_s", "s"),
    Figure::lower("probe_stat_max_s", "s"),
    Figure::lower("probe_read_p99_s", "s"),
    Figure::lower("probe_read_max_s", "s"),
    Figure::lower("probe_create_p99_s", "s"),
    Figure::lower("probe_create_max_s", "s"),
];

/// The `writeback` workload as `fsarena list` shows it and `run` builds it.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "writeback",
    about: "responsiveness under sustained writes: one writer streams 2 × the dirty limit \
            while a prober stats, reads and creates+fsyncs cold files every 10 ms",
    params: PARAMS,
    phases: &[WRITE],
    figures: FIGURES,
    classic_tool: None,
    param_applies: None,
    after_merge: None,
    resolve: None,
    database: None,
    programs: &[],
    phase_time_knobs: &[],
    build,
};

/// The validated `writeback` configuration.
#[derive(Clone, Copy, Debug)]
pub struct Writeback {
    size: Option<u64>,
    probe_ms: u64,
    probe_files: Option<u64>,
    chunk: u64,
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    let chunk = p.bytes("chunk").expect("chunk has a default");
    let probe_ms = p.count("probe_ms").expect("probe_ms has a default");
    let problem = if p.bytes("size") == Some(0) {
        "size=0: nothing to write".to_string()
    } else if !(4096..=MAX_SLICE as u64).contains(&chunk) {
        format!("chunk={}: must be 4KiB to 4MiB", format_size(chunk))
    } else if probe_ms == 0 || probe_ms > 60_000 {
        format!("probe_ms={probe_ms}: must be 1 to 60000")
    } else if p
        .count("probe_files")
        .is_some_and(|n| n == 0 || n > 10_000_000)
    {
        "probe_files must be 1 to 10000000".to_string()
    } else {
        return Ok(Box::new(Writeback {
            size: p.bytes("size"),
            probe_ms,
            probe_files: p.count("probe_files"),
            chunk,
        }));
    };
    Err(usage(format!("writeback: {problem}")))
}

/// The default probe pool for `size` bytes and a round every `probe_ms`: enough rounds for
/// the writer at [`POOL_RATE_MB_PER_S`], within [`POOL_MIN`]..=[`POOL_MAX`].
pub fn default_pool(size: u64, probe_ms: u64) -> u64 {
    let secs = size as f64 / (POOL_RATE_MB_PER_S * 1e6);
    let rounds = (secs * 1000.0 / probe_ms as f64).ceil() as u64;
    rounds.clamp(POOL_MIN, POOL_MAX)
}

/// What the writer reports to the workload after the phase.
#[derive(Default)]
struct Shared {
    writer_done: AtomicBool,
    writer_ns: AtomicU64,
    rounds: AtomicU64,
    /// Nanoseconds after the phase start when the pool ran out (0: never).
    exhausted_ns: AtomicU64,
}

impl Workload for Writeback {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let dirty = DirtyState::read().context("reading the vm.dirty_* settings")?;
        let wanted = self.size.unwrap_or(2 * dirty.limits.limit_bytes);
        let pool = self
            .probe_files
            .unwrap_or_else(|| default_pool(wanted, self.probe_ms));
        let base = cx.workdir().to_path_buf();
        let probe = base.join("probe");
        make_pool(cx, &probe, pool)?;
        let size = self.fit_size(cx, &base, wanted)?;
        // The probe files must be cold when the phase starts: the cold policy drops caches
        // (and remounts) before every phase; under warm and keep it is done here.
        if cx.policy().cache != crate::policy::CachePolicy::Cold {
            cx.reset_caches()?;
        }
        let mut order: Vec<u64> = (0..pool).collect();
        order.shuffle(&mut rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(
            cx.seed() ^ 0x77b7,
        ));
        let shared = Shared::default();
        let file = base.join("writeback.dat");
        cx.phase(&WRITE, 2, |w| {
            if w.idx == 0 {
                let t = Instant::now();
                let res = self.write(w, &file, size);
                shared
                    .writer_ns
                    .store(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
                shared.writer_done.store(true, Ordering::Release);
                res
            } else {
                self.probe(w, &probe, &order, &shared)
            }
        })?;
        self.note(cx, &dirty, size, &shared);
        Ok(())
    }
}

impl Writeback {
    /// The size to write: as asked, or the default capped at the free space (with a
    /// message); an asked size larger than the free space is an error.
    fn fit_size(&self, cx: &mut TrialContext, base: &Path, wanted: u64) -> Result<u64> {
        let free = crate::probe::sys::space(base)?.avail_bytes;
        let room = (free as f64 * FREE_SHARE) as u64;
        if wanted <= room {
            return Ok(wanted);
        }
        if self.size.is_some() {
            bail!(
                "writeback: size={} but the target has {} free: give a smaller size= or a \
                 larger --size",
                format_size(wanted),
                format_size(free)
            );
        }
        cx.message(format!(
            "writeback: the default size {} (2 × the dirty limit) exceeds 90% of the target's \
             {} free; writing {} (use a larger --size to write more than memory holds)",
            format_size(wanted),
            format_size(free),
            format_size(room)
        ));
        Ok(room.max(4096))
    }

    /// Streams `size` bytes into `path`, no fsync until the sync policy's end.
    fn write(&self, w: &mut Worker, path: &Path, size: u64) -> Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .on("create", path)?;
        let mut left = size;
        while left > 0 {
            w.check()?;
            let n = left.min(self.chunk);
            let t = w.start();
            let buf = w.data().slice(n as usize);
            f.write_all(buf).on("write", path)?;
            w.done(Op::Write, t, n);
            w.after_write(&f).on("fsync", path)?;
            left -= n;
        }
        w.end_file(&f).on("fsync", path)?;
        Ok(())
    }

    /// Probe rounds every `probe_ms` until the writer is done.
    fn probe(&self, w: &mut Worker, probe: &Path, order: &[u64], shared: &Shared) -> Result<()> {
        let period = Duration::from_millis(self.probe_ms);
        let start = Instant::now();
        let new_dir = probe.join("new");
        let mut buf = vec![0u8; PROBE_BYTES];
        let mut next = start;
        let mut round = 0usize;
        while !shared.writer_done.load(Ordering::Acquire) {
            w.check()?;
            if let Some(&i) = order.get(round) {
                let p = probe.join(format!("s{i}")).join("f");
                let t = w.start();
                std::fs::symlink_metadata(&p).on("stat", &p)?;
                w.done(Op::Stat, t, 0);
                let p = probe.join("r").join(i.to_string());
                let t = w.start();
                let got = File::open(&p)
                    .and_then(|mut f| f.read(&mut buf))
                    .on("read", &p)?;
                w.done(Op::Read, t, 0);
                if got != PROBE_BYTES {
                    bail!("read {}: {got} bytes, expected {PROBE_BYTES}", p.display());
                }
            } else if round == order.len() {
                shared
                    .exhausted_ns
                    .store(start.elapsed().as_nanos().max(1) as u64, Ordering::Relaxed);
            }
            let p = new_dir.join(round.to_string());
            let t = w.start();
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&p)
                .on("create", &p)?;
            f.write_all(w.data().slice(PROBE_BYTES)).on("write", &p)?;
            f.sync_all().on("fsync", &p)?;
            drop(f);
            w.done(Op::Create, t, 0);
            round += 1;
            next += period;
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            } else {
                next = now;
            }
        }
        shared.rounds.store(round as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Notes the dirty settings and the workload's own figures on the phase.
    fn note(&self, cx: &mut TrialContext, dirty: &DirtyState, size: u64, shared: &Shared) {
        for (k, v) in dirty.figures() {
            cx.note(k, v);
        }
        let writer_s = shared.writer_ns.load(Ordering::Relaxed) as f64 / 1e9;
        cx.note("size_bytes", size as f64);
        cx.note("writer_s", writer_s);
        if writer_s > 0.0 {
            cx.note("writer_mb_per_s", size as f64 / writer_s / 1e6);
        }
        cx.note("probe_rounds", shared.rounds.load(Ordering::Relaxed) as f64);
        let dropped = cx.can_drop_caches();
        cx.note("caches_dropped", if dropped { 1.0 } else { 0.0 });
        let exhausted = shared.exhausted_ns.load(Ordering::Relaxed);
        if exhausted > 0 {
            cx.note("probe_pool_exhausted_s", exhausted as f64 / 1e9);
        }
        let lat: Vec<_> = cx
            .phases()
            .last()
            .map(|p| p.lat_by_op.clone())
            .unwrap_or_default();
        for (op, key) in [("stat", "stat"), ("read", "read"), ("create", "create")] {
            if let Some(l) = lat.iter().find(|l| l.op == op) {
                cx.note(&format!("probe_{key}_p99_s"), l.lat_us.p99 / 1e6);
                cx.note(&format!("probe_{key}_max_s"), l.lat_us.max / 1e6);
            }
        }
    }
}

/// Makes the probe pool (untimed): `n` directories `s<i>` with an empty file `f`, `n`
/// files `r/<i>` of [`PROBE_BYTES`] data bytes, an empty `new/`; then syncs it all.
fn make_pool(cx: &TrialContext, probe: &Path, n: u64) -> Result<()> {
    let mut data = cx.data().source(0x9b0be);
    let r = probe.join("r");
    for d in [probe, &r, &probe.join("new")] {
        std::fs::create_dir_all(d).on("mkdir", d)?;
    }
    for i in 0..n {
        crate::signals::check_stop()?;
        let dir: PathBuf = probe.join(format!("s{i}"));
        std::fs::create_dir(&dir).on("mkdir", &dir)?;
        let f = dir.join("f");
        File::create(&f).on("create", &f)?;
        let f = r.join(i.to_string());
        std::fs::write(&f, data.slice(PROBE_BYTES)).on("write", &f)?;
    }
    crate::probe::sys::syncfs(probe).on("syncfs", probe)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;
    use crate::policy::{DataPolicy, SyncPolicy};
    use crate::workload::testutil::in_context;
    use crate::workload::WorkloadSpec;

    #[test]
    fn default_pool_covers_the_writer_at_a_slow_rate() {
        assert_eq!(default_pool(1 << 20, 10), POOL_MIN);
        // 5 GB at 50 MB/s is 100 s: 10,000 rounds of 10 ms.
        assert_eq!(default_pool(5_000_000_000, 10), 10_000);
        assert_eq!(default_pool(5_000_000_000, 100), 1_000);
        assert_eq!(default_pool(u64::MAX / 2, 10), POOL_MAX);
    }

    #[test]
    fn bad_parameters_are_usage_errors() {
        for bad in [
            "size=0",
            "chunk=1KiB",
            "chunk=8MiB",
            "probe_ms=0",
            "probe_files=0",
            "sizes=1G",
        ] {
            let err = WorkloadSpec::parse(&format!("writeback:{bad}")).err();
            let err = err.unwrap_or_else(|| panic!("{bad} was accepted"));
            assert_eq!(exit_code(&err), 2, "{bad}: {err:#}");
        }
        assert!(WorkloadSpec::parse("writeback").is_ok());
    }

    #[test]
    fn writer_and_prober_share_the_phase() {
        let spec =
            WorkloadSpec::parse("writeback:size=48MiB,probe_files=50,chunk=64KiB,probe_ms=1")
                .unwrap();
        let workload = (spec.info.build)(&spec.params).unwrap();
        let phases = in_context(DataPolicy::Random, SyncPolicy::End, |cx| {
            workload.run(cx).unwrap();
            let dat = std::fs::metadata(cx.workdir().join("writeback.dat")).unwrap();
            assert_eq!(dat.len(), 48 << 20);
            cx.phases().to_vec()
        });
        assert_eq!(phases.len(), 1);
        let p = &phases[0];
        assert_eq!((p.name.as_str(), p.workers), ("write", 2));
        let count = |op: &str| p.lat_by_op.iter().find(|o| o.op == op).map(|o| o.count);
        assert_eq!(count("write"), Some(768));
        assert_eq!(
            count("fsync"),
            Some(1),
            "the sync policy's fsync at the end"
        );
        let creates = count("create").expect("create probes");
        assert!(creates >= 1);
        assert_eq!(count("stat"), Some(creates.min(50)));
        assert_eq!(count("read"), count("stat"));
        assert_eq!(p.bytes_written, 48 << 20, "probes record no bytes");
        let series_bytes: u64 = p.series.bytes.iter().sum();
        assert_eq!(series_bytes, 48 << 20);
        assert_eq!(p.extra["size_bytes"], (48 << 20) as f64);
        assert_eq!(p.extra["probe_rounds"], creates as f64);
        assert!(p.extra["dirty_ratio_pct"] >= 0.0 && p.extra["dirty_limit_bytes"] > 0.0);
        assert!(p.extra["probe_create_max_s"] >= p.extra["probe_create_p99_s"]);
        assert!(p.extra["writer_s"] > 0.0 && p.extra["writer_s"] <= p.wall_s);
    }

    #[test]
    fn an_asked_size_beyond_free_space_is_refused() {
        let spec = WorkloadSpec::parse("writeback:size=1000TiB,probe_files=1").unwrap();
        let workload = (spec.info.build)(&spec.params).unwrap();
        let err = in_context(DataPolicy::Zeros, SyncPolicy::None, |cx| {
            workload.run(cx).unwrap_err().to_string()
        });
        assert!(
            err.contains("free") && err.contains("size=1000TiB"),
            "{err}"
        );
    }
}
