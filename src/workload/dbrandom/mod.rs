//! Random database-like I/O: the `random.c` loop of Ricardo Galli's "Ext2, ReiserFS and XFS
//! Benchmarks" (bulma.net, 22 May 2001): files of 1, 10, 100, 250 and 500 MB, and 100
//! cycles that each pick a random file and do 100 random `lseek`+`read`s of 16 KB in it,
//! a quarter of them written back in place and followed by `fsync`.
//!
//! Faithful: the algorithm of `random.c`, draw for draw. Each cycle draws the file
//! (`rand() % NFILES`), opens it `O_RDWR` and fstats it for its size; each try draws a byte
//! offset uniform in [0, size) — not aligned to anything — `lseek`s there and does one
//! `read(2)` of `block` bytes (short at the end of the file), then draws whether to write
//! back (`rand() % 4 == 0`; here `write_pct`% of tries); a write-back `lseek`s back and
//! `write(2)`s the whole buffer — all `block` bytes even after a short read, so files grow
//! slowly past their end, as in the original — and fsyncs the file. `block` defaults to
//! 16 KiB; `block=16536` is the original's `BSIZE` (16,536 bytes, probably meant to be
//! 16,384). Buffered I/O, no `O_DIRECT`, no fadvise. `warmup` passes run unmeasured before
//! the measured one, as the article ran the program three times "to get the cache populated"
//! before timing three runs.
//!
//! Recorded: each cycle's open+fstat is one [`Op::Open`]; each `lseek`+`read` one
//! [`Op::Read`] (bytes read); each write-back's `lseek`+`write` one [`Op::Write`] and its
//! `fsync` one [`Op::Fsync`], so read, write and fsync latencies are separate in
//! `lat_by_op` (add the write and fsync percentiles' samples for "write+fsync"). All of them
//! count as operations (`ops/s`); the phase notes `tries_per_s` (tries ÷ time, the unit of
//! work of `random.c`) and `growth_bytes` (how much the files grew past their end).
//!
//! Phases: `create` writes the files (`<index>-<MiB>.dat`) in 1 MiB `write(2)`s with
//! `--data` bytes — the article used `dd if=/dev/zero bs=1M` — applying the sync policy
//! (`end`: fsync each file at its end, inside the timing). `random` is the loop. Its fsyncs
//! belong to the workload and are done whatever `--sync` says (so `--sync none` only affects
//! `create`, although the `random` phase is still labelled not-synced); nothing else in it
//! needs syncing. `--cache cold` drops caches (and remounts) before `random`, which also
//! discards what warm-up passes loaded: use `warmup` with `--cache keep`.
//!
//! Differs: draws come from a keyed hash of (seed, pass, draw number) with Lemire's
//! multiply-shift instead of glibc `rand()` seeded with the time, so every repetition does
//! the same I/O (warm-up pass `p` uses stream `p`, the measured pass stream 0). Each cycle
//! closes its file; `random.c` never closed them. The printed listing does not compile as
//! published (`if((fd=open(...) < 0)` misses a parenthesis, `seek(` should be `lseek(`);
//! this follows its evident intent. `files` is in MiB (2^20 bytes); the article's `dd
//! bs=1M` made MiB too. `scale` multiplies every size (rounded to a byte).

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::recorder::Op;
use crate::signals::check_stop;
use crate::size::format_size;
use crate::workload::bonnie_files::{hash, write_data};
use crate::workload::params::param;
use crate::workload::{IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::Result;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Most files the list may name.
const MAX_FILES: usize = 1000;
/// Largest `block`.
const MAX_BLOCK: u64 = 64 << 20;
/// Most warm-up passes.
const MAX_WARMUP: u64 = 1000;
/// Piece size of the create phase's writes (`dd bs=1M`).
const CREATE_CHUNK: usize = 1 << 20;
/// Key of the draw streams.
const TAG_DRAWS: u64 = 0x6462_7261_6e64_6f6d;

/// The article's file sizes, MiB.
const DEFAULT_FILES: &str = "1,10,100,250,500";

const PARAMS: &[ParamSpec] = &[
    param(
        "files",
        ParamKind::CountList,
        DEFAULT_FILES,
        "MiB",
        "file sizes (random.c: 1,10,100,250,500)",
    ),
    param(
        "scale",
        ParamKind::Float,
        "1.0",
        "×",
        "multiplies every file size; each scaled file must hold at least one block",
    ),
    param(
        "cycles",
        ParamKind::Count,
        "100",
        "cycles",
        "cycles, each on a randomly chosen file",
    ),
    param(
        "tries",
        ParamKind::Count,
        "100",
        "tries",
        "random reads per cycle",
    ),
    param(
        "block",
        ParamKind::Size,
        "16KiB",
        "bytes",
        "bytes per read and write-back, ≤ 64MiB (random.c's BSIZE was 16536)",
    ),
    param(
        "write_pct",
        ParamKind::Count,
        "25",
        "%",
        "percentage of reads written back at the same offset and fsynced",
    ),
    param(
        "warmup",
        ParamKind::Count,
        "0",
        "passes",
        "unmeasured passes before the measured one (the article ran 3; use --cache keep)",
    ),
    param(
        "fill",
        ParamKind::Count,
        "0",
        "%",
        "instead of `files`: one file of this share of the space free at the trial's start \
         (1-90; a large file scaled to the disk)",
    ),
];

const CREATE: PhaseSpec = PhaseSpec {
    name: "create",
    kind: PhaseKind::Write,
    primary: Primary::MbPerS,
    ops_unit: "writes/s",
};
const RANDOM: PhaseSpec = PhaseSpec {
    name: "random",
    kind: PhaseKind::Write,
    primary: Primary::OpsPerS,
    ops_unit: "ops/s",
};
const PHASES: &[PhaseSpec] = &[CREATE, RANDOM];

/// The random-update rate and what the files took.
pub const FIGURES: &[Figure] = &[
    Figure::neither("file_bytes", "bytes").on(&["create"]),
    Figure::neither("free_bytes_before", "bytes").on(&["create"]),
    Figure::higher("tries_per_s", "tries/s"),
    Figure::neither("growth_bytes", "bytes"),
];

/// The `dbrandom` workload as `fsarena list` shows it and `run` builds it.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "dbrandom",
    about: "random lseek/read/write+fsync on files of 1-500 MiB, like a small database \
            (random.c, Galli 2001)",
    params: PARAMS,
    phases: PHASES,
    figures: FIGURES,
    classic_tool: Some("random.c"),
    param_applies: None,
    after_merge: None,
    resolve: None,
    database: Some(crate::workload::DatabaseRole::Proxy("random")),
    programs: &[],
    phase_time_knobs: &[
        super::Knob::new("scale", &["create"], 0.0),
        super::Knob::new("cycles", &["random"], 0.0),
    ],
    build,
};

/// The validated `dbrandom` configuration.
#[derive(Clone, Debug)]
pub struct DbRandom {
    /// The `files` list as given (MiB), for names.
    mib: Vec<u64>,
    /// Scaled sizes in bytes.
    sizes: Vec<u64>,
    cycles: u64,
    tries: u64,
    block: usize,
    write_pct: u64,
    warmup: u64,
    /// Percent of the free space for one file, instead of `sizes` (0: off).
    fill: u64,
}

/// A `files` list as the parameter is written.
fn mib_text(mib: &[u64]) -> String {
    mib.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    Ok(Box::new(DbRandom::from_params(p)?))
}

impl DbRandom {
    /// Checks the parameters; a violation is a usage error (exit code 2).
    pub fn from_params(p: &Params) -> Result<Self> {
        let count = |k| p.count(k).expect("counts have defaults");
        let mib = p.counts("files").to_vec();
        let scale = p.float("scale").expect("scale has a default");
        let block = p.bytes("block").expect("block has a default");
        let (cycles, tries) = (count("cycles"), count("tries"));
        let (write_pct, warmup, fill) = (count("write_pct"), count("warmup"), count("fill"));
        let sizes: Vec<u64> = mib
            .iter()
            .map(|&m| (m as f64 * (1u64 << 20) as f64 * scale).round() as u64)
            .collect();
        let f = format_size;
        let small = mib.iter().zip(&sizes).find(|(_, &s)| s < block);
        const MAX_READS: u64 = crate::workload::params::MAX_COUNT;
        let problem = if mib.is_empty() || mib.len() > MAX_FILES {
            format!("files: give 1 to {MAX_FILES} sizes in MiB")
        } else if let Some((m, s)) = small {
            format!(
                "files={m} MiB × scale={scale} is {}, smaller than block={}",
                f(*s),
                f(block)
            )
        } else if block == 0 || block > MAX_BLOCK {
            format!("block={}: must be 1 B to {}", f(block), f(MAX_BLOCK))
        } else if cycles == 0 || tries == 0 {
            "cycles and tries must be at least 1".to_string()
        } else if cycles.checked_mul(tries).is_none_or(|n| n > MAX_READS) {
            // The product is the run's length in reads (and overflowed past 2^64).
            format!("cycles={cycles} × tries={tries}: at most {MAX_READS} reads in all")
        } else if write_pct > 100 {
            format!("write_pct={write_pct}: must be 0 to 100")
        } else if warmup > MAX_WARMUP {
            format!("warmup={warmup}: at most {MAX_WARMUP}")
        } else if fill > 90 {
            format!("fill={fill}: give 1 to 90 (percent of the free space), or 0 for `files`")
        } else if fill > 0 && mib_text(&mib) != DEFAULT_FILES {
            // `fill` replaces the list; a list given with it would be silently ignored.
            format!(
                "fill={fill} makes one file of {fill}% of the free space instead of `files`; \
                 give one of them, not both (files={})",
                mib_text(&mib)
            )
        } else {
            return Ok(Self {
                mib,
                sizes,
                cycles,
                tries,
                block: block as usize,
                write_pct,
                warmup,
                fill,
            });
        };
        Err(usage(format!("dbrandom: {problem}")))
    }

    fn path(&self, dir: &Path, k: usize) -> PathBuf {
        dir.join(format!("{k}-{}.dat", self.mib[k]))
    }
}

impl Workload for DbRandom {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        if self.fill == 0 {
            return self.run_files(cx);
        }
        // One file of `fill`% of what is free now, in whole MiB.
        let free = crate::probe::sys::space(cx.workdir())?.avail_bytes;
        let mib = (free / 100 * self.fill) >> 20;
        let size = mib << 20;
        if size < self.block as u64 {
            return Err(anyhow::anyhow!(
                "dbrandom: fill={}% of {} free is less than one block",
                self.fill,
                format_size(free)
            ));
        }
        let sized = DbRandom {
            mib: vec![mib],
            sizes: vec![size],
            ..self.clone()
        };
        sized.run_files(cx)?;
        cx.note_phase("create", "file_bytes", size as f64);
        cx.note_phase("create", "free_bytes_before", free as f64);
        Ok(())
    }
}

impl DbRandom {
    fn run_files(&self, cx: &mut TrialContext) -> Result<()> {
        let dir = cx.workdir().to_path_buf();
        let seed = cx.seed();
        cx.phase(&CREATE, 1, |w| {
            (0..self.sizes.len()).try_for_each(|k| self.create(w, &self.path(&dir, k), k))
        })?;
        for pass in 1..=self.warmup {
            self.pass(&mut Unmeasured, &dir, Draws::new(seed, pass))?;
        }
        cx.phase(&RANDOM, 1, |w| self.pass(w, &dir, Draws::new(seed, 0)))?;
        let tries = (self.cycles * self.tries) as f64;
        if let Some(wall_s) = cx.phases().last().map(|p| p.wall_s).filter(|&s| s > 0.0) {
            cx.note("tries_per_s", tries / wall_s);
        }
        let mut grown = 0;
        for (k, size) in self.sizes.iter().enumerate() {
            let path = self.path(&dir, k);
            grown += std::fs::metadata(&path).on("stat", &path)?.len() - size;
        }
        cx.note("growth_bytes", grown as f64);
        Ok(())
    }
}

impl DbRandom {
    /// Writes file `k` in 1 MiB pieces, applying the sync policy.
    fn create(&self, w: &mut Worker, path: &Path, k: usize) -> Result<()> {
        let f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .on("create", path)?;
        let mut left = self.sizes[k];
        while left > 0 {
            w.check()?;
            let len = left.min(CREATE_CHUNK as u64);
            let t = w.start();
            write_data(w, &f, len, CREATE_CHUNK).on("write", path)?;
            w.done(Op::Write, t, len);
            w.after_write(&f).on("fsync", path)?;
            left -= len;
        }
        w.end_file(&f).on("fsync", path)
    }

    /// One run of `random.c`: `cycles` cycles of `tries` tries, drawing from `draws`.
    fn pass<S: Sink>(&self, s: &mut S, dir: &Path, mut draws: Draws) -> Result<()> {
        let mut buf = vec![0u8; self.block];
        for _ in 0..self.cycles {
            let k = draws.file(self.sizes.len());
            let path = self.path(dir, k);
            let t = Instant::now();
            let mut file = open_rw(&path)?;
            let size = file.metadata().on("fstat", &path)?.len();
            s.record(Op::Open, t, 0);
            for _ in 0..self.tries {
                s.check()?;
                let (off, write) = draws.try_(size, self.write_pct);
                let t = Instant::now();
                file.seek(SeekFrom::Start(off)).on("lseek", &path)?;
                let got = file.read(&mut buf).on("read", &path)?;
                s.record(Op::Read, t, got as u64);
                if write {
                    let t = Instant::now();
                    file.seek(SeekFrom::Start(off)).on("lseek", &path)?;
                    file.write_all(&buf).on("write", &path)?;
                    s.record(Op::Write, t, self.block as u64);
                    let t = Instant::now();
                    file.sync_all().on("fsync", &path)?;
                    s.record(Op::Fsync, t, 0);
                }
            }
        }
        Ok(())
    }
}

fn open_rw(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .on("open", path)
}

/// Where a pass reports its operations: a phase's worker, or nowhere (warm-up).
trait Sink {
    fn record(&mut self, op: Op, t: Instant, bytes: u64);
    fn check(&self) -> Result<()>;
}

impl Sink for Worker<'_> {
    fn record(&mut self, op: Op, t: Instant, bytes: u64) {
        self.done(op, t, bytes);
    }
    fn check(&self) -> Result<()> {
        Worker::check(self)
    }
}

/// A warm-up pass: nothing recorded; stops on SIGINT.
struct Unmeasured;

impl Sink for Unmeasured {
    fn record(&mut self, _: Op, _: Instant, _: u64) {}
    fn check(&self) -> Result<()> {
        check_stop()
    }
}

/// The pseudo-random draws of one pass, in `random.c`'s order: per cycle the file, per try
/// the offset and then whether to write back. Draw `n` of stream `key` is
/// `hash(key, n)` mapped to `[0, bound)` by Lemire's multiply-shift.
#[derive(Clone, Debug)]
pub struct Draws {
    key: u64,
    n: u64,
}

impl Draws {
    /// The draws of pass `pass` (0 is the measured pass) for `seed`.
    pub fn new(seed: u64, pass: u64) -> Self {
        Self {
            key: hash(seed ^ TAG_DRAWS, pass),
            n: 0,
        }
    }

    fn below(&mut self, bound: u64) -> u64 {
        let r = u128::from(hash(self.key, self.n));
        self.n += 1;
        ((r * u128::from(bound)) >> 64) as u64
    }

    /// The file of the next cycle (`rand() % NFILES`).
    pub fn file(&mut self, files: usize) -> usize {
        self.below(files as u64) as usize
    }

    /// The next try in a file of `size` bytes: the offset (`rand() % fsize`) and whether to
    /// write back (`rand() % 4 == 0` for 25%).
    pub fn try_(&mut self, size: u64, write_pct: u64) -> (u64, bool) {
        let off = self.below(size);
        (off, self.below(100) < write_pct)
    }
}

#[cfg(test)]
mod tests;
