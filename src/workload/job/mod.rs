//! `job`: a generic I/O job in the manner of fio (Jens Axboe, <https://github.com/axboe/fio>,
//! HOWTO "Job file parameters"): `numjobs` threads each read and/or write `size` bytes of
//! their own `nrfiles` files, sequentially or at random offsets, in blocks of `bs`, through
//! one of the engines `psync`, `io_uring`, `libaio`, `mmap` or `null`, with `iodepth`
//! requests in flight. Parameter names and meanings follow fio's where fio has them; `docs/job.md`
//! lists every parameter, the engine design and how the figures compare with fio's.
//!
//! Phases: `layout` writes the files (1 MiB pwrites of `--data` bytes, or the verify
//! pattern; sequential write-only jobs start from empty files, as fio's do), `run` is the
//! job, `verify` (with `verify=true`) reads every file back and fails the trial on any
//! block that differs. The `null` engine touches no file and has no layout.
//!
//! With `openfiles` under `nrfiles` (psync) a job has at most `openfiles` files open at
//! once and opens the others when their turn comes, as fio does (see `files.rs`).
//!
//! With `shared_file=true` all jobs of the trial — the `numjobs` threads of every MPI
//! rank — share one file in the shared directory, each on its own segments in IOR's
//! segmented layout (see `shared.rs`).
//!
//! Differs from fio: offsets are drawn with replacement (fio's `norandommap=1`) unless
//! `randommap=true` (fio's default); `ramp` runs the job unmeasured
//! for that long and then starts the measured run, which goes on from where the ramp left
//! off, as fio's (the threads stop in between, fio's keep going; the cache policy applies
//! before the ramp — `--cache cold` drops caches before it,
//! never between it and the run, so the ramp warms what the run measures); written files get the sync policy's fsync at the end of the run (default
//! `--sync end`; use `--sync none` for fio's default of no final sync, or `end_fsync`).

mod backend;
mod engine;
mod files;
mod gen;
mod kinds;
mod libaio;
mod phases;
mod shared;
mod uring;
mod verify;

pub use backend::{Caps, Io, IoBackend};
pub use gen::Distribution;
pub use verify::{check_file, file_key, fill as verify_fill, matches as verify_matches, Checked};

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::error::usage;
use crate::figures::Figure;
use crate::policy::SyncPolicy;
use crate::probe::recorder::Op;
use crate::size::format_size;
use crate::workload::params::param;
use crate::workload::tasks::Task;
use crate::workload::{IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{anyhow, Result};
use backend::{Mmap, Null, Psync};
use engine::{JobCfg, Think, Until};
use files::{CachedPsync, JobFiles};
use gen::{BlockSizes, Picker};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Most jobs.
const MAX_JOBS: u64 = 1024;
/// Largest block.
const MAX_BS: u64 = 64 << 20;
/// Piece size of the layout's writes.
const LAYOUT_CHUNK: u64 = 1 << 20;
/// O_DIRECT sizes and offsets must be multiples of this (the smallest logical block size).
const DIRECT_ALIGN: u64 = 512;

const RW: &[&str] = &["read", "write", "randread", "randwrite", "rw", "randrw"];
const ENGINES: &[&str] = &["psync", "io_uring", "libaio", "mmap", "null"];

const PARAMS: &[ParamSpec] = &[
    param("rw", ParamKind::Choice(RW), "read", "", "what to do (fio's rw; rw/randrw mix reads and writes)"),
    param("rwmixread", ParamKind::Count, "50", "%", "share of reads in rw and randrw"),
    param("bs", ParamKind::SizeMix, "4KiB", "bytes", "block size, range (4KiB-64KiB) or weighted list (4KiB:60,64KiB:40)"),
    param("size", ParamKind::Size, "64MiB", "bytes", "bytes per job: its files' total size, and what a size-based job moves"),
    param("nrfiles", ParamKind::Count, "1", "files", "files per job (size is split between them; used round-robin)"),
    param("openfiles", ParamKind::Count, "0", "files", "files a job keeps open at once (psync; 0: all nrfiles); the others are opened when their turn comes, as fio's openfiles"),
    param("numjobs", ParamKind::Count, "1", "jobs", "jobs, each a thread with its own files"),
    param("iodepth", ParamKind::Count, "1", "requests", "requests in flight per job (io_uring, libaio; 1 for the others)"),
    param("engine", ParamKind::Choice(ENGINES), "psync", "", "psync (pread/pwrite), io_uring, libaio (Linux native AIO), mmap, null (no I/O: the tool's own cost)"),
    param("fallback", ParamKind::Choice(&["none", "psync"]), "none", "", "engine=io_uring only: run psync (iodepth 1) where io_uring is unavailable, with a message"),
    param("direct", ParamKind::Bool, "false", "", "O_DIRECT (bs and offset_align multiples of 512 B; buffers 4 KiB aligned)"),
    param("fsync", ParamKind::Count, "0", "writes", "fsync the written files every N writes (0: never)"),
    param("fdatasync", ParamKind::Count, "0", "writes", "fdatasync the written files every N writes (0: never)"),
    param("end_fsync", ParamKind::Bool, "false", "", "fsync every written file at the end of the job, inside the timing"),
    param("runtime", ParamKind::Float, "0", "s", "time-based: run this long, looping over the files (0: size-based)"),
    param("timeout", ParamKind::Float, "0", "s", "size-based: stop after this long if size is not done by then, as fio's runtime without time_based (0: no limit)"),
    param("ramp", ParamKind::Float, "0", "s", "run unmeasured this long first (warm-up excluded from the results)"),
    param("rate", ParamKind::Size, "0", "bytes/s", "limit each job to this many bytes per second (0: no limit)"),
    param("offset_align", ParamKind::Size, "", "bytes", "random offsets are multiples of this (default: the smallest bs)"),
    param("random_distribution", ParamKind::Text, "uniform", "", "uniform, zipf:θ or pareto:h (as in fio)"),
    param("randommap", ParamKind::Bool, "false", "", "random jobs use each block of a file once per pass, as fio's default random map (false: offsets drawn with replacement, fio's norandommap); uniform; with several sizes, a request is shortened to the free blocks at its offset"),
    param("verify", ParamKind::Bool, "false", "", "write a self-checking pattern, read everything back in a verify phase; any difference fails the trial"),
    param("cpus", ParamKind::CountList, "", "cpu", "pin job i to cpus[i mod len] (default: not pinned)"),
    param("fallocate", ParamKind::Choice(&["none", "native", "keep"]), "none", "", "write jobs: preallocate each file in layout, outside the run's clock, as fio's fallocate (native: fallocate(2) mode 0; keep: FALLOC_FL_KEEP_SIZE; fio's default is native)"),
    param("overwrite", ParamKind::Bool, "false", "", "write and randwrite: lay the files out written in full (outside the run's clock), so that the run overwrites data, as fio's overwrite=1; else the run writes into new (or fallocated) files"),
    param("startdelay", ParamKind::Float, "0", "s", "wait this long before the job starts, outside the run's clock (fio's startdelay)"),
    param("pre_read", ParamKind::Bool, "false", "", "before the run, outside its clock, fsync each of the job's files and read it once into the page cache (fio's pre_read after its create_fsync)"),
    param("fsync_on_close", ParamKind::Bool, "false", "", "fsync each written file when the job closes it at its end, inside the timing (fio's fsync_on_close; all files open: openfiles=0)"),
    param("fadvise_hint", ParamKind::Bool, "true", "", "advise the kernel of the pattern when a job opens its files: posix_fadvise RANDOM for random jobs (no readahead), SEQUENTIAL for sequential ones, as fio's default fadvise_hint=1"),
    param("loop_invalidate", ParamKind::Bool, "false", "", "when a job goes round a file again (a sequential job at its end, a random one whose randommap is full), drop the file's pages from the page cache, inside the run's clock, as fio does under invalidate=1 with time_based"),
    param("common_files", ParamKind::Bool, "false", "", "all jobs use one set of files, each over all of it, as fio's jobs that name the same filename (default: each job its own)"),
    param("buffers", ParamKind::Choice(&["once", "refill", "zero"]), "once", "", "what a job writes: its buffers filled from --data once, as fio's default; refill: filled again before every write, outside its latency, as fio's refill_buffers; zero: all zeros, the layout's too, as fio's zero_buffers"),
    param("compress", ParamKind::Count, "0", "%", "this share of each 4 KiB a job writes is zeros, the rest as buffers says, as fio's buffer_compress_percentage (0: as buffers says)"),
    param("file_sets", ParamKind::CountList, "", "jobs", "the jobs in sets that share files, in order: the first N jobs use the first's files, each over all of them, the next M the (N+1)th's, and so on, as fio's jobs of one group that name a filename others do not (the sizes add up to numjobs; default: each job its own)"),
    param("name", ParamKind::Text, "", "", "what reports call this job, when no other workload of the run has that name (fio's name; letters, digits, . _ + -)"),
    param("loops", ParamKind::Count, "1", "", "a size-based job runs this many times in its run phase, each time from its files' start with a new random map, its offsets drawn again (the same ones unless randrepeat=false), its files reopened (their pages dropped with loop_invalidate) and end_fsync done, as fio's loops"),
    param("io_size", ParamKind::Size, "0", "bytes", "bytes a size-based job moves each loop, going round its files as often as that takes (0: size), as fio's io_size"),
    param("thinktime", ParamKind::Float, "0", "s", "after every thinktime_blocks requests, wait for those in flight, then pause this long before the next, inside the run's clock, as fio's thinktime (0: none)"),
    param("thinktime_spin", ParamKind::Float, "0", "s", "of each thinktime pause, this much is a busy wait (the CPU an application's processing takes), the rest a sleep, as fio's thinktime_spin"),
    param("thinktime_blocks", ParamKind::Count, "1", "requests", "requests between two thinktime pauses, as fio's thinktime_blocks"),
    param("randrepeat", ParamKind::Bool, "true", "", "draw the same random offsets in every repetition, from --seed (fio's randrepeat=1); false: repetition r draws from seed + r − 1, a different sequence each repetition that a run with the same --seed repeats (fio's randrepeat=0)"),
    param("shared_file", ParamKind::Bool, "false", "", "all jobs (and MPI ranks) share one file, job t's segment i at (i × jobs + t) × size/nrfiles (IOR's segmented layout)"),
    param("seq_add", ParamKind::Text, "0", "bytes", "sequential jobs: after each request, move on this much more — a hole, or negative a step back (-8KiB after 4 KiB reads reads backwards), wrapping round the file, as fio's rw=read:N"),
    param("files_of", ParamKind::Text, "", "", "in a kind of with: its jobs work on the files of job J of kind K (K:J; the first kind is 1, the first of with 2; jobs from 0), each over all of them, as fio's jobs that differ and name one filename"),
    param("with", ParamKind::Text, "", "", "jobs of other kinds that run at once with these, in one phase, as fio's jobs of one group that differ: kinds separated by ';', each this workload's key=value parameters (with='rw=randwrite,numjobs=2;bs=128KiB'); each kind has files of its own, and the figures are the group's"),
];

const LAYOUT: PhaseSpec = PhaseSpec {
    name: "layout",
    kind: PhaseKind::Write,
    primary: Primary::MbPerS,
    ops_unit: "writes/s",
};
/// The layout of a job that writes into new files (`rw=write` without `overwrite` or
/// `verify`): it only creates them (and preallocates with `fallocate`), so its figure is
/// files per second, not a rate of bytes it never wrote.
const LAYOUT_EMPTY: PhaseSpec = PhaseSpec {
    name: "layout",
    kind: PhaseKind::Meta,
    primary: Primary::OpsPerS,
    ops_unit: "files/s",
};
const RUN: PhaseSpec = PhaseSpec {
    name: "run",
    kind: PhaseKind::Write,
    primary: Primary::OpsPerS,
    ops_unit: "IOPS",
};
const VERIFY: PhaseSpec = PhaseSpec {
    name: "verify",
    kind: PhaseKind::Read,
    primary: Primary::MbPerS,
    ops_unit: "blocks/s",
};
const PHASES: &[PhaseSpec] = &[LAYOUT, RUN, VERIFY];

/// The job's setting that reports need beside its figures.
pub const FIGURES: &[Figure] = &[Figure::neither("iodepth", "requests")];

/// The `job` workload as `fsarena list` shows it and `run` builds it.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "job",
    about: "a fio-like I/O job: read/write/randread/randwrite/rw/randrw with psync, io_uring, \
            libaio, mmap or null engines, iodepth, O_DIRECT, verify (fio, Axboe)",
    params: PARAMS,
    phases: PHASES,
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

/// The I/O engine of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Psync,
    IoUring,
    Libaio,
    Mmap,
    Null,
}

impl Engine {
    fn parse(s: &str) -> Self {
        match s {
            "io_uring" => Self::IoUring,
            "libaio" => Self::Libaio,
            "mmap" => Self::Mmap,
            "null" => Self::Null,
            _ => Self::Psync,
        }
    }

    /// The engine's name as given on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Psync => "psync",
            Self::IoUring => "io_uring",
            Self::Libaio => "libaio",
            Self::Mmap => "mmap",
            Self::Null => "null",
        }
    }

    /// What the engine can do.
    pub fn caps(self) -> Caps {
        match self {
            Self::Psync => Psync::CAPS,
            Self::IoUring => uring::Uring::CAPS,
            Self::Libaio => libaio::Libaio::CAPS,
            Self::Mmap => Mmap::CAPS,
            Self::Null => Null::CAPS,
        }
    }
}

/// The validated `job` configuration.
#[derive(Clone, Debug)]
pub struct Job {
    rw: String,
    read_pct: u64,
    bs: BlockSizes,
    size: u64,
    nrfiles: usize,
    /// `openfiles`: 0 = all.
    openfiles: usize,
    numjobs: usize,
    depth: usize,
    engine: Engine,
    fallback: bool,
    direct: bool,
    fsync: u64,
    fdatasync: u64,
    end_fsync: bool,
    runtime: Option<Duration>,
    ramp: Option<Duration>,
    rate: u64,
    align: u64,
    dist: Distribution,
    verify: bool,
    cpus: Vec<u64>,
    shared: bool,
    /// fallocate(2) mode for the layout of files it does not fill; None: no preallocation.
    fallocate: Option<i32>,
    /// Lay out a write-only job's files written in full (fio's `overwrite=1`).
    overwrite: bool,
    /// `timeout`: a size-based job's time limit.
    timeout: Option<Duration>,
    /// `randommap`: each block once per pass.
    random_map: bool,
    /// `buffers`: "once", "refill" or "zero".
    buffers: &'static str,
    /// `compress`: the share of each 4 KiB written that is zeros.
    compress: u8,
    /// Job `j` works on job `owners[j]`'s files (`common_files`, `file_sets`).
    owners: Vec<usize>,
    /// `loop_invalidate`.
    loop_invalidate: bool,
    /// `fadvise_hint`.
    fadvise_hint: bool,
    /// `startdelay`.
    startdelay: Option<Duration>,
    /// `pre_read`.
    pre_read: bool,
    /// `fsync_on_close`.
    fsync_on_close: bool,
    /// `randrepeat`: the same random choices in every repetition.
    randrepeat: bool,
    /// `loops`: runs of a size-based job.
    loops: u64,
    /// `io_size`: bytes a size-based job moves each loop, when not `size`.
    io_size: Option<u64>,
    /// `thinktime`, `thinktime_spin`, `thinktime_blocks`.
    think: Option<Think>,
    /// `with`: the kinds of job that run at once with this one.
    with: Vec<Job>,
    /// `files_of`: in a kind of `with`, the kind (0: the first) and job whose files
    /// this kind's jobs work on.
    files_of: Option<(usize, usize)>,
    /// Its files are laid out written in full for another kind that reads them.
    fill_for: bool,
    /// `seq_add`: a sequential job's hole (or step back) after each request.
    seq_add: i64,
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    Ok(Box::new(Job::from_params(p)?))
}

/// The seed repetition `rep` (from 1) of a job draws from: the run's own, or with
/// `randrepeat=false` the run's plus `rep − 1`, so that each repetition draws another
/// sequence and a run with the same `--seed` draws the same ones again.
pub fn repetition_seed(seed: u64, rep: u32, randrepeat: bool) -> u64 {
    match randrepeat {
        true => seed,
        false => seed.wrapping_add(u64::from(rep.max(1)) - 1),
    }
}

/// `seq_add`: a signed size, refused on a random job.
fn seq_add(p: &Params) -> Result<i64> {
    let text = p.text("seq_add").unwrap_or("0").trim();
    let (neg, abs) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let bytes = crate::size::parse_size(abs)
        .ok()
        .and_then(|b| i64::try_from(b).ok())
        .ok_or_else(|| usage(format!("job: seq_add: '{text}' is not a size (-8KiB, 1MiB)")))?;
    if bytes != 0 && !matches!(p.choice("rw"), "read" | "write") {
        return Err(usage("job: seq_add applies to rw=read and rw=write"));
    }
    if bytes != 0 && !BlockSizes::new(p.size_mix("bs")).is_fixed() {
        return Err(usage("job: seq_add needs one block size"));
    }
    Ok(if neg { -bytes } else { bytes })
}

fn secs(x: f64) -> Option<Duration> {
    (x > 0.0).then(|| Duration::from_secs_f64(x))
}

impl Job {
    /// Checks the parameters, `with`'s kinds included; a violation is a usage error
    /// (exit code 2).
    pub fn from_params(p: &Params) -> Result<Self> {
        kinds::complete(Self::one(p)?, p)
    }

    /// One kind of job: the parameters but `with`.
    fn one(p: &Params) -> Result<Self> {
        let count = |k| p.count(k).expect("counts have defaults");
        let rw = p.choice("rw").to_string();
        let (rwmixread, numjobs) = (count("rwmixread"), count("numjobs"));
        let read_pct = match rw.as_str() {
            "read" | "randread" => 100,
            "write" | "randwrite" => 0,
            _ => rwmixread,
        };
        let bs = BlockSizes::new(p.size_mix("bs"));
        let size = p.bytes("size").expect("size has a default");
        let nrfiles = count("nrfiles");
        let openfiles = count("openfiles");
        let engine = Engine::parse(p.choice("engine"));
        let direct = p.flag("direct");
        let align = p.bytes("offset_align").unwrap_or(bs.min());
        let depth = count("iodepth");
        // (Bounded: numjobs beyond MAX_JOBS is refused below.)
        let owners = files::owners(p, numjobs.min(MAX_JOBS) as usize);
        let dist = Distribution::parse(p.text("random_distribution").unwrap_or("uniform"))
            .map_err(|e| usage(format!("job: random_distribution: {e}")))?;
        let (fsync, fdatasync) = (count("fsync"), count("fdatasync"));
        let (verify, fallback, cpus) = (
            p.flag("verify"),
            p.choice("fallback") == "psync",
            p.counts("cpus"),
        );
        let f = format_size;
        let caps = engine.caps();
        let file_size = size.checked_div(nrfiles).unwrap_or(0);
        let problem = if rwmixread > 100 {
            "rwmixread: give 0 to 100".to_string()
        } else if bs.max() > MAX_BS {
            format!("bs: at most {}", f(MAX_BS))
        } else if nrfiles == 0 || file_size < bs.max() {
            format!(
                "size={} over nrfiles={nrfiles} leaves files of {}, smaller than the largest \
                 block ({})",
                f(size),
                f(file_size),
                f(bs.max())
            )
        } else if !(1..=MAX_JOBS).contains(&numjobs) {
            format!("numjobs: give 1 to {MAX_JOBS}")
        } else if depth == 0 || depth as usize > caps.max_depth {
            format!(
                "iodepth={depth}: engine={} takes 1 to {} (deeper queues need engine=io_uring or engine=libaio)",
                engine.name(),
                caps.max_depth
            )
        } else if direct && !caps.direct {
            format!("direct=true: engine={} cannot do O_DIRECT", engine.name())
        } else if direct && (!bs.all_multiples_of(DIRECT_ALIGN) || align % DIRECT_ALIGN != 0) {
            format!(
                "direct=true needs bs sizes and offset_align that are multiples of \
                 {DIRECT_ALIGN} B (got bs={}, offset_align={})",
                p.to_text_map()["bs"],
                f(align)
            )
        } else if align == 0 {
            "offset_align must be at least 1 B".to_string()
        } else if fsync > 0 && fdatasync > 0 {
            "give fsync or fdatasync, not both".to_string()
        } else if openfiles > 0
            && openfiles < nrfiles
            && matches!(engine, Engine::IoUring | Engine::Libaio | Engine::Mmap)
        {
            format!(
                "openfiles={openfiles} < nrfiles={nrfiles}: engine={} keeps every file of a job \
                 open for its run ({}); use engine=psync, or openfiles=0 (all)",
                engine.name(),
                if engine == Engine::Mmap {
                    "each is mapped"
                } else {
                    "requests in flight hold them"
                }
            )
        } else if fallback && engine != Engine::IoUring {
            "fallback=psync only applies to engine=io_uring".to_string()
        } else if let Some(c) = cpus.iter().find(|&&c| c >= libc::CPU_SETSIZE as u64) {
            format!("cpus: {c} is beyond the largest CPU number")
        } else if verify && (!bs.all_multiples_of(8) || align % 8 != 0) {
            "verify=true needs bs sizes and offset_align that are multiples of 8 B".to_string()
        } else if p.flag("overwrite") && p.choice("fallocate") != "none" {
            "give overwrite=true or fallocate, not both: overwritten files are written in \
             full before the run"
                .to_string()
        } else if p.flag("shared_file") && p.choice("fallocate") != "none" {
            "fallocate applies to a job's own files, not to shared_file=true".to_string()
        } else if p.flag("randommap") && align != bs.min() {
            "randommap=true needs offset_align equal to the smallest block size (fio's map \
             is in blocks of it, and is off with blockalign)"
                .to_string()
        } else if p.flag("randommap") && dist != Distribution::Uniform {
            "randommap=true needs random_distribution=uniform (fio turns its map off for \
             the others)"
                .to_string()
        } else if count("compress") > 100 {
            "compress: give 0 to 100 (%)".to_string()
        } else if let Err(e) = &owners {
            e.clone()
        } else if (p.flag("common_files")
            || owners.as_ref().is_ok_and(|o| o.iter().enumerate().any(|(j, &k)| j != k)))
            && (p.flag("shared_file") || verify)
        {
            "common_files=true or file_sets: not with shared_file=true or verify=true (jobs \
             writing one file overwrite each other's pattern)"
                .to_string()
        } else if let Some(bad) = p.text("name").and_then(|n| {
            n.chars()
                .find(|c| !(c.is_ascii_alphanumeric() || "._+-".contains(*c)))
        }) {
            format!("name: '{bad}' is not a letter, digit, '.', '_', '+' or '-'")
        } else if p.flag("fsync_on_close") && openfiles > 0 && openfiles < nrfiles {
            "fsync_on_close=true needs every file open (openfiles=0): the job engine does \
             not fsync the files openfiles closes on the way"
                .to_string()
        } else if p.flag("pre_read") && p.flag("shared_file") {
            "pre_read applies to a job's own files, not to shared_file=true".to_string()
        } else if p.flag("shared_file") && direct && file_size % DIRECT_ALIGN != 0 {
            format!(
                "shared_file=true with direct=true needs segments (size/nrfiles = {}) that \
                 are multiples of {DIRECT_ALIGN} B",
                f(file_size)
            )
        } else {
            let job = Self {
                rw,
                read_pct,
                bs,
                size,
                nrfiles: nrfiles as usize,
                openfiles: openfiles as usize,
                numjobs: numjobs as usize,
                depth: depth as usize,
                engine,
                fallback,
                direct,
                fsync,
                fdatasync,
                end_fsync: p.flag("end_fsync"),
                runtime: secs(p.float("runtime").unwrap_or(0.0)),
                ramp: secs(p.float("ramp").unwrap_or(0.0)),
                rate: p.bytes("rate").unwrap_or(0),
                align,
                dist,
                verify,
                cpus: cpus.to_vec(),
                shared: p.flag("shared_file"),
                fallocate: match p.choice("fallocate") {
                    "native" => Some(0),
                    "keep" => Some(libc::FALLOC_FL_KEEP_SIZE),
                    _ => None,
                },
                overwrite: p.flag("overwrite"),
                timeout: secs(p.float("timeout").unwrap_or(0.0)),
                random_map: p.flag("randommap"),
                owners: owners.expect("checked above"),
                compress: count("compress") as u8,
                buffers: match p.choice("buffers") {
                    "refill" => "refill",
                    "zero" => "zero",
                    _ => "once",
                },
                loop_invalidate: p.flag("loop_invalidate"),
                fadvise_hint: p.flag("fadvise_hint"),
                startdelay: secs(p.float("startdelay").unwrap_or(0.0)),
                pre_read: p.flag("pre_read"),
                fsync_on_close: p.flag("fsync_on_close"),
                randrepeat: p.flag("randrepeat"),
                loops: count("loops").max(1),
                think: secs(p.float("thinktime").unwrap_or(0.0)).map(|total| Think {
                    every: count("thinktime_blocks").max(1),
                    spin: secs(p.float("thinktime_spin").unwrap_or(0.0)).unwrap_or_default(),
                    total,
                }),
                io_size: p.bytes("io_size").filter(|&b| b > 0),
                with: Vec::new(),
                files_of: kinds::files_of(p)?,
                seq_add: seq_add(p)?,
                fill_for: false,
            };
            return Ok(job);
        };
        Err(usage(format!("job: {problem}")))
    }

    fn file_size(&self) -> u64 {
        self.size / self.nrfiles as u64
    }

    fn seq(&self) -> bool {
        !self.rw.starts_with("rand")
    }

    fn path(dir: &Path, job: usize, file: usize) -> PathBuf {
        dir.join(files::name(job, file))
    }

    /// Whether the layout writes the files' data (else it makes them empty): always but
    /// for write-only jobs, which write into new files, as fio's do (unless `overwrite`).
    fn fills(&self, engine: Engine) -> bool {
        self.read_pct > 0 || self.verify || self.overwrite || self.fill_for || engine == Engine::Mmap
    }

    /// The job whose files job `job` uses: itself, or the first of its set.
    fn owner(&self, job: usize) -> usize {
        self.owners[job]
    }

}

impl Workload for Job {
    /// `size` per job (in its own files, or its own segments of the shared file); `size`
    /// per set of jobs that share files; of every kind, but those on another's files.
    fn data_bytes(&self) -> Option<u64> {
        let owned = |k: &Job| {
            let owners = (0..k.numjobs)
                .filter(|&j| k.owner(j) == j && k.files_of.is_none())
                .count();
            k.size.saturating_mul(owners as u64)
        };
        Some(self.kinds().map(owned).fold(0, u64::saturating_add))
    }

    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        kinds::run(self, cx)
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_fio_like;
#[cfg(test)]
mod tests_kinds;
#[cfg(test)]
mod tests_openfiles;
