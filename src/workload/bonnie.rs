//! Bonnie and Bonnie++'s I/O tests on one file: per-character and block writes, rewrite,
//! per-character and block reads, and random seeks.
//!
//! Sources: Tim Bray, *Bonnie* (1990, 1996; `Bonnie.c` and its readme "Test Details") and
//! Russell Coker, *Bonnie++* 1.03 and 2.00a (`bon_io.cpp`, `-s size:chunk:seeks:seekers`,
//! `-f`). No code is copied; where this module differs from them, it says so below.
//!
//! * **Order** is Bonnie++'s: `write_char` (putc), `write_block` (write(2)), `rewrite`,
//!   `read_char` (getc), `read_block` (read(2)), `seeks`. Classic Bonnie ran rewrite before
//!   the block write.
//! * **Size** is per instance and rounded down to a multiple of `chunk`, as Bonnie does.
//! * **Per-character tests** write and read `char_size` bytes (default: the whole file;
//!   Bonnie++'s `-f` size; `0` skips both phases, which are then simply not run).
//!   `char_mode=stdio` passes every byte through a buffer of the file's `st_blksize` (like
//!   stdio's putc/getc, without stdio's lock); `char_mode=syscall` does one write()/read()
//!   per byte, as Bonnie++ 2.00 does (1–2 MB/s on ext4 here: use a small `char_size`).
//!   Timing each byte would cost more than the byte, so **latency here is per chunk of
//!   `chunk` chars** (one sample per chunk; ops count the chars).
//! * **Data** comes from the worker's data stream, so `--data` holds (Bonnie wrote
//!   `index & 0x7f`, which compresses). Rewrite and seeks dirty a chunk by overwriting its
//!   first 8 bytes from that stream, where Bonnie incremented one word.
//! * **Rewrite** records the read and the write (lseek included) separately; bytes count
//!   once per chunk, since Bonnie reports rewrite K/s as file size / time.
//! * **Seeks**: `seekers` workers per instance share `seeks` evenly (Bonnie's ticket pipe
//!   and 5 s start-up sleep are not needed for that). Each picks chunk indices uniformly
//!   from a fast RNG seeded from the run's seed and its worker index, so repetitions do the
//!   same work; it preads the chunk (one `seek` op) and, on every 10th seek counting from
//!   its first (Bonnie's `UpdateSeek`), dirties it and pwrites it back. The write-back is
//!   timed as a `write` latency sample but not counted as an op, so ops equal seeks. The
//!   phase runs from the first seeker's start to the last one's end, as in Bonnie.
//! * **Instances** (`procs`, like the 120 Bonnie processes in one seed article) each use
//!   their own file `Bonnie.<idx>`; every phase runs all of them at once. They are threads,
//!   not processes: each opens its own file descriptor and issues the same system calls on
//!   its own file, so the file system does the same work; only user-space scheduling
//!   differs. Figures aggregate across instances.
//! * **Sync policy**: every writing phase ends with the policy's `end_file` inside its
//!   timed region. Under `--sync each` a file is fsynced after each write(2) (block, rewrite,
//!   seek write-back), after each buffer flush in stdio per-char mode (every `st_blksize`
//!   bytes), and after each chunk's worth of bytes in syscall per-char mode.
//! * **Opens are untimed**: each phase opens its file (the block write truncates the file
//!   the per-char write left) and allocates its buffer before its clock starts
//!   ([`Worker::ready`]), as Bonnie unlinks and creates before its timestamp; truncating
//!   rather than unlinking frees the old extents there and then, where an unlink may leave
//!   them to background work inside the timing (XFS's deferred inactivation).
//! * I/O is buffered, as Bonnie's: no O_DIRECT, no mmap; the cache policy decides what is
//!   cached. Memory use does not grow with `size`. Files are left for the target's teardown.

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::recorder::Op;
use crate::size::format_size;
use crate::workload::params::param;
use crate::workload::{spec, IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::Result;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Every this many seeks a seeker writes the chunk back (Bonnie's `UpdateSeek`).
pub const UPDATE_SEEK: u64 = 10;
/// Bytes overwritten from the data stream to dirty a chunk.
const DIRTY_BYTES: usize = 8;
/// Most concurrent workers `procs × seekers` may ask for.
const MAX_WORKERS: u64 = 4096;

const WRITE_CHAR: PhaseSpec = spec("write_char", PhaseKind::Write, Primary::MbPerS, "chars/s");
const WRITE_BLOCK: PhaseSpec = spec("write_block", PhaseKind::Write, Primary::MbPerS, "writes/s");
const REWRITE: PhaseSpec = spec("rewrite", PhaseKind::Write, Primary::MbPerS, "ops/s");
const READ_CHAR: PhaseSpec = spec("read_char", PhaseKind::Read, Primary::MbPerS, "chars/s");
const READ_BLOCK: PhaseSpec = spec("read_block", PhaseKind::Read, Primary::MbPerS, "reads/s");
// Seeks write back 10% of the chunks they read, so the phase is not read-only.
const SEEKS: PhaseSpec = spec("seeks", PhaseKind::Write, Primary::OpsPerS, "seeks/s");

const PHASES: [PhaseSpec; 6] = [
    WRITE_CHAR,
    WRITE_BLOCK,
    REWRITE,
    READ_CHAR,
    READ_BLOCK,
    SEEKS,
];

const PARAMS: &[ParamSpec] = &[
    param("size", ParamKind::Size, "1GiB", "bytes",
        "file size per instance, rounded down to a multiple of chunk"),
    param("chunk", ParamKind::Size, "8KiB", "bytes",
        "block I/O size: a power of two from 256B to 1MiB (as bonnie++)"),
    param("char_size", ParamKind::Size, "", "bytes",
        "bytes of the per-char tests (default: size; 0 skips them; at most size; keep it small with char_mode=syscall)"),
    param("char_mode", ParamKind::Choice(&["stdio", "syscall"]), "stdio", "",
        "per-char I/O: stdio = buffered putc/getc (Bonnie), syscall = one call per byte (bonnie++ 2.00)"),
    param("seeks", ParamKind::Count, "8192", "seeks",
        "random seeks per instance, shared by its seekers (0 skips the seek test)"),
    param("seekers", ParamKind::Count, "3", "workers",
        "concurrent seekers per instance (Bonnie: 3, bonnie++ 2.00: 5)"),
    param("procs", ParamKind::Count, "1", "instances",
        "concurrent Bonnie instances, each with its own file"),
];

/// Bonnie's figures are the probe's: it notes none of its own.
pub const FIGURES: &[Figure] = &[];

/// The Bonnie workload as `fsarena list` shows it and `run` builds it.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "bonnie",
    about: "Bonnie/Bonnie++ I/O tests: per-char and block write, rewrite, per-char and block read, random seeks",
    params: PARAMS,
    phases: &PHASES,
    figures: FIGURES,
    classic_tool: Some("Bonnie"),
    param_applies: None,
    after_merge: None,
    resolve: None,
    // `size` is not one: it is bound to the target's size and to memory (the file must
    // outgrow the cache).
    database: None,
    programs: &[],
    phase_time_knobs: &[super::Knob::new("seeks", &["seeks"], 0.0)],
    build,
};

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    Ok(Box::new(Bonnie::from_params(p)?))
}

/// How the per-character tests move bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CharMode {
    /// Through a buffer of `st_blksize` bytes, like stdio's putc/getc.
    Stdio,
    /// One write()/read() system call per byte.
    Syscall,
}

/// A validated Bonnie configuration (sizes in bytes, per instance).
#[derive(Clone, Debug)]
pub struct Bonnie {
    /// File size, a multiple of `chunk`.
    pub size: u64,
    pub chunk: u64,
    /// Bytes of the per-character tests; 0 skips them.
    pub char_size: u64,
    pub char_mode: CharMode,
    /// Seeks per instance; 0 skips the seek test.
    pub seeks: u64,
    pub seekers: u64,
    pub procs: u64,
}

impl Bonnie {
    /// Checks the parameters together; a violation is a usage error (exit code 2).
    pub fn from_params(p: &Params) -> Result<Self> {
        let need = |n: &str| p.bytes(n).or(p.count(n)).unwrap_or(0);
        let (chunk, seekers, procs) = (need("chunk"), need("seekers"), need("procs"));
        let raw_size = need("size");
        let size = raw_size - raw_size % chunk.max(1);
        let char_size = p.bytes("char_size").unwrap_or(size);
        let workers = procs.saturating_mul(seekers);
        let f = format_size;
        let problem = if !chunk.is_power_of_two() || !(256..=1 << 20).contains(&chunk) {
            format!("chunk={chunk} bytes must be a power of two from 256B to 1MiB")
        } else if raw_size < chunk {
            format!("size={} is smaller than chunk={}", f(raw_size), f(chunk))
        } else if char_size > size {
            format!("char_size={} exceeds size={}", f(char_size), f(size))
        } else if seekers == 0 || procs == 0 {
            "seekers and procs must be at least 1".into()
        } else if workers > MAX_WORKERS {
            format!("procs × seekers = {workers} workers; at most {MAX_WORKERS} are allowed")
        } else {
            String::new()
        };
        if !problem.is_empty() {
            return Err(usage(format!("bonnie: {problem}")));
        }
        let char_mode = match p.choice("char_mode") {
            "syscall" => CharMode::Syscall,
            _ => CharMode::Stdio,
        };
        let seeks = need("seeks");
        Ok(Self {
            size,
            chunk,
            char_size,
            char_mode,
            seeks,
            seekers,
            procs,
        })
    }
}

fn create(path: &Path) -> Result<File> {
    File::create(path).on("creating", path)
}

fn open_rw(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .on("opening", path)
}

/// The stdio-like buffer size: the file's `st_blksize`, or 1 byte in syscall mode.
fn char_buffer(file: &File, mode: CharMode) -> std::io::Result<usize> {
    Ok(match mode {
        CharMode::Syscall => 1,
        CharMode::Stdio => (file.metadata()?.blksize() as usize).clamp(512, 1 << 20),
    })
}

impl Workload for Bonnie {
    /// One file of `size` per instance.
    fn data_bytes(&self) -> Option<u64> {
        Some(self.size.saturating_mul(self.procs))
    }

    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let dir: PathBuf = cx.workdir().to_path_buf();
        let file = |idx: usize| dir.join(format!("Bonnie.{idx}"));
        let procs = self.procs as usize;
        let chars = self.char_size > 0;
        if chars {
            cx.phase(&WRITE_CHAR, procs, |w| self.write_char(w, &file(w.idx)))?;
        }
        cx.phase(&WRITE_BLOCK, procs, |w| self.write_block(w, &file(w.idx)))?;
        cx.phase(&REWRITE, procs, |w| self.rewrite(w, &file(w.idx)))?;
        if chars {
            cx.phase(&READ_CHAR, procs, |w| self.read_char(w, &file(w.idx)))?;
        }
        cx.phase(&READ_BLOCK, procs, |w| self.read_block(w, &file(w.idx)))?;
        if self.seeks > 0 {
            let seed = cx.seed();
            let seekers = self.seekers as usize;
            cx.phase(&SEEKS, procs * seekers, |w| {
                self.seeker(w, &file(w.idx / seekers), seed)
            })?;
        }
        Ok(())
    }
}

impl Bonnie {
    fn chunks(&self) -> u64 {
        self.size / self.chunk
    }

    /// putc() of `char_size` bytes, through the stdio-like buffer or one write() each.
    fn write_char(&self, w: &mut Worker, path: &Path) -> Result<()> {
        let mut file = create(path)?;
        let stdio = self.char_mode == CharMode::Stdio;
        let mut buf = vec![0u8; char_buffer(&file, self.char_mode).on("stat", path)?];
        w.ready();
        let mut fill = 0;
        let mut left = self.char_size;
        while left > 0 {
            w.check()?;
            let n = left.min(self.chunk);
            let t = w.start();
            for _ in 0..n {
                buf[fill] = w.data().byte();
                fill += 1;
                if fill == buf.len() {
                    file.write_all(&buf)
                        .on("write(2) of putc buffer to", path)?;
                    fill = 0;
                    if stdio {
                        w.after_write(&file).on("fsync", path)?;
                    }
                }
            }
            left -= n;
            if left == 0 && fill > 0 {
                // fclose: the last partial buffer, timed with the last chunk.
                file.write_all(&buf[..fill])
                    .on("write(2) of putc buffer to", path)?;
                if stdio {
                    w.after_write(&file).on("fsync", path)?;
                }
            }
            w.done_batch(Op::Write, t, n, n);
            if !stdio {
                w.after_write(&file).on("fsync", path)?;
            }
        }
        w.end_file(&file).on("fsync", path)
    }

    /// write(2) of the whole file in `chunk` pieces; creates or truncates it first, untimed.
    fn write_block(&self, w: &mut Worker, path: &Path) -> Result<()> {
        let mut file = create(path)?;
        let chunk = self.chunk as usize;
        w.ready();
        for _ in 0..self.chunks() {
            w.check()?;
            let t = w.start();
            file.write_all(w.data().slice(chunk))
                .on("write(2) to", path)?;
            w.done(Op::Write, t, self.chunk);
            w.after_write(&file).on("fsync", path)?;
        }
        w.end_file(&file).on("fsync", path)
    }

    /// For each chunk: read it, dirty it, lseek back and write it.
    fn rewrite(&self, w: &mut Worker, path: &Path) -> Result<()> {
        let mut file = open_rw(path)?;
        let mut buf = vec![0u8; self.chunk as usize];
        let back = SeekFrom::Current(-(self.chunk as i64));
        w.ready();
        for _ in 0..self.chunks() {
            w.check()?;
            let t = w.start();
            file.read_exact(&mut buf).on("rewrite read(2) of", path)?;
            w.done(Op::Read, t, 0);
            buf[..DIRTY_BYTES].copy_from_slice(w.data().slice(DIRTY_BYTES));
            let t = w.start();
            file.seek(back).on("lseek(2) back in", path)?;
            file.write_all(&buf).on("rewrite write(2) to", path)?;
            w.done(Op::Write, t, self.chunk);
            w.after_write(&file).on("fsync", path)?;
        }
        w.end_file(&file).on("fsync", path)
    }

    /// getc() of `char_size` bytes, counting byte values as Bonnie does.
    fn read_char(&self, w: &mut Worker, path: &Path) -> Result<()> {
        let mut file = File::open(path).on("opening", path)?;
        let mut buf = vec![0u8; char_buffer(&file, self.char_mode).on("stat", path)?];
        let (mut pos, mut len) = (0, 0);
        let mut counts = [0u64; 256];
        w.ready();
        let mut left = self.char_size;
        while left > 0 {
            w.check()?;
            let n = left.min(self.chunk);
            let t = w.start();
            for _ in 0..n {
                if pos == len {
                    len = file.read(&mut buf).on("getc read(2) of", path)?;
                    if len == 0 {
                        let eof = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
                        return Err(eof).on("getc read(2) of", path);
                    }
                    pos = 0;
                }
                counts[buf[pos] as usize] += 1;
                pos += 1;
            }
            w.done_batch(Op::Read, t, n, n);
            left -= n;
        }
        std::hint::black_box(&counts);
        Ok(())
    }

    /// read(2) of the whole file in `chunk` pieces.
    fn read_block(&self, w: &mut Worker, path: &Path) -> Result<()> {
        let mut file = File::open(path).on("opening", path)?;
        let mut buf = vec![0u8; self.chunk as usize];
        w.ready();
        for _ in 0..self.chunks() {
            w.check()?;
            let t = w.start();
            file.read_exact(&mut buf).on("read(2) of", path)?;
            w.done(Op::Read, t, self.chunk);
            std::hint::black_box(&buf);
        }
        Ok(())
    }

    /// One seeker: its share of the instance's seeks, each a pread of a random chunk, every
    /// [`UPDATE_SEEK`]th one dirtied and written back.
    fn seeker(&self, w: &mut Worker, path: &Path, seed: u64) -> Result<()> {
        let j = w.idx as u64 % self.seekers;
        let mine = self.seeks / self.seekers + u64::from(j < self.seeks % self.seekers);
        let file = open_rw(path)?;
        let stream = (w.idx as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ stream);
        let mut buf = vec![0u8; self.chunk as usize];
        w.ready();
        for i in 0..mine {
            w.check()?;
            let off = rng.gen_range(0..self.chunks()) * self.chunk;
            let t = w.start();
            file.read_exact_at(&mut buf, off)
                .on("seek pread(2) of", path)?;
            w.done(Op::Seek, t, self.chunk);
            if i % UPDATE_SEEK == 0 {
                buf[..DIRTY_BYTES].copy_from_slice(w.data().slice(DIRTY_BYTES));
                let t = w.start();
                file.write_all_at(&buf, off).on("seek pwrite(2) to", path)?;
                w.done_batch(Op::Write, t, 0, self.chunk);
                w.after_write(&file).on("fsync", path)?;
            }
        }
        w.end_file(&file).on("fsync", path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{DataPolicy, SyncPolicy};
    use crate::result::PhaseResult;
    use crate::workload::testutil::in_context;

    /// Runs bonnie with `params`; returns the phases and the contents of `Bonnie.0`.
    fn run(params: &str, data: DataPolicy, sync: SyncPolicy) -> (Vec<PhaseResult>, Vec<u8>) {
        let p = Params::parse("bonnie", PARAMS, params).unwrap();
        in_context(data, sync, |cx| {
            build(&p).unwrap().run(cx).unwrap();
            let content = std::fs::read(cx.workdir().join("Bonnie.0")).unwrap();
            (cx.phases().to_vec(), content)
        })
    }

    #[test]
    fn stdio_putc_flushes_the_last_partial_buffer() {
        let p = Params::parse("bonnie", PARAMS, "size=64KiB,char_size=10001").unwrap();
        let b = Bonnie::from_params(&p).unwrap();
        let len = in_context(DataPolicy::Random, SyncPolicy::None, |cx| {
            let path = cx.workdir().join("Bonnie.0");
            cx.phase(&WRITE_CHAR, 1, |w| b.write_char(w, &path))
                .unwrap();
            std::fs::metadata(&path).unwrap().len()
        });
        assert_eq!(len, 10001);
    }

    fn names(phases: &[PhaseResult]) -> Vec<&str> {
        phases.iter().map(|p| p.name.as_str()).collect()
    }

    /// The phase names in order, without `skip`.
    fn all_but(skip: &[&str]) -> Vec<&'static str> {
        let all = PHASES.iter().map(|p| p.name);
        all.filter(|n| !skip.contains(n)).collect()
    }

    fn phase<'a>(phases: &'a [PhaseResult], name: &str) -> &'a PhaseResult {
        phases.iter().find(|p| p.name == name).unwrap()
    }

    /// How many `op` operations `p` counted (latency samples may be more).
    fn count(p: &PhaseResult, op: &str) -> u64 {
        p.lat_by_op.iter().find(|o| o.op == op).unwrap().count
    }

    #[test]
    fn all_phases_move_the_whole_file_per_instance() {
        let params = "size=1MiB,chunk=8KiB,seeks=200,seekers=2,procs=2";
        let (phases, content) = run(params, DataPolicy::Random, SyncPolicy::End);
        assert_eq!(names(&phases), all_but(&[]));
        let total = 2u64 << 20;
        for p in phases.iter().filter(|p| p.name != "seeks") {
            assert_eq!(p.bytes, total, "{}", p.name);
        }
        assert_eq!(phase(&phases, "write_block").ops, total / 8192);
        assert_eq!(phase(&phases, "rewrite").ops, 2 * total / 8192);
        assert_eq!(phase(&phases, "write_char").ops, total);
        let seeks = phase(&phases, "seeks");
        assert_eq!((seeks.ops, seeks.workers), (400, 4));
        assert_eq!(seeks.primary, "ops_per_s");
        // 200 seeks per instance over 2 seekers: 10 write-backs each, timed, not counted.
        assert_eq!(count(seeks, "write"), 0);
        assert_eq!(seeks.bytes, (400 + 40) * 8192);
        assert_eq!(content.len(), 1 << 20);
        let zeros = content.iter().filter(|&&b| b == 0).count();
        assert!(zeros < content.len() / 100, "random data has {zeros} zeros");
    }

    #[test]
    fn zeros_policy_writes_zeros_and_char_size_zero_skips_char_phases() {
        let params = "size=256KiB,chunk=4KiB,seeks=50,char_size=0";
        let (phases, content) = run(params, DataPolicy::Zeros, SyncPolicy::None);
        assert_eq!(names(&phases), all_but(&["write_char", "read_char"]));
        assert_eq!(content.len(), 256 << 10);
        assert!(
            content.iter().all(|&b| b == 0),
            "--data zeros gave non-zeros"
        );
        assert!(phases[0].flags.iter().any(|f| f == "not-synced"));
    }

    #[test]
    fn syscall_mode_rounds_size_and_fsyncs_under_each() {
        let params = "size=100000,chunk=1KiB,char_size=3000,char_mode=syscall,seeks=0";
        let (phases, content) = run(params, DataPolicy::Text, SyncPolicy::Each);
        assert_eq!(names(&phases), all_but(&["seeks"]));
        let size = 100000 / 1024 * 1024;
        assert_eq!(content.len(), size as usize);
        assert_eq!(phase(&phases, "write_block").bytes, size);
        for name in ["write_char", "read_char"] {
            let p = phase(&phases, name);
            assert_eq!((p.ops, p.bytes), (3000, 3000), "{name}");
        }
        // One fsync per chunk's worth of chars (3000 bytes in 1 KiB chunks), one per write.
        assert_eq!(count(phase(&phases, "write_char"), "fsync"), 3);
        assert_eq!(count(phase(&phases, "write_block"), "fsync"), size / 1024);
    }

    /// What one phase's workers run.
    type PhaseFn = fn(&Bonnie, &mut Worker, &Path) -> Result<()>;

    /// One phase of bonnie (params `size=64KiB,chunk=8KiB`) on a FIFO named `Bonnie.0`,
    /// whose other end a thread opens only 0.5 s later: the phase's own open waits that
    /// long. Returns the phase's wall time.
    fn wall_with_slow_open(spec: PhaseSpec, run: PhaseFn) -> f64 {
        use std::time::Duration;
        let p = Params::parse("bonnie", PARAMS, "size=64KiB,chunk=8KiB").unwrap();
        let b = Bonnie::from_params(&p).unwrap();
        in_context(DataPolicy::Random, SyncPolicy::None, |cx| {
            let path = cx.workdir().join("Bonnie.0");
            let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            // SAFETY: `c` is a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            let peer_path = path.clone();
            let writes = spec.kind == PhaseKind::Write;
            let peer = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(500));
                if writes {
                    let mut f = File::open(&peer_path).unwrap();
                    std::io::copy(&mut f, &mut std::io::sink()).unwrap();
                } else {
                    let mut f = OpenOptions::new().write(true).open(&peer_path).unwrap();
                    f.write_all(&[7u8; 64 << 10]).unwrap();
                }
            });
            cx.phase(&spec, 1, |w| run(&b, w, &path)).unwrap();
            peer.join().unwrap();
            cx.phases()[0].wall_s
        })
    }

    /// Opening the file — and truncating the one the per-char write left — is not timed,
    /// in any phase: a 0.5 s open shows in no phase's wall time.
    #[test]
    fn opening_the_file_is_not_timed() {
        let phases: [(PhaseSpec, PhaseFn); 4] = [
            (WRITE_CHAR, Bonnie::write_char),
            (WRITE_BLOCK, Bonnie::write_block),
            (READ_CHAR, Bonnie::read_char),
            (READ_BLOCK, Bonnie::read_block),
        ];
        for (spec, run) in phases {
            let wall_s = wall_with_slow_open(spec, run);
            assert!(wall_s < 0.25, "{}: {wall_s} s", spec.name);
        }
    }

    #[test]
    fn bad_parameters_are_usage_errors() {
        let bad = [
            "size=4KiB",
            "chunk=3000",
            "chunk=128",
            "chunk=2MiB",
            "seekers=0",
        ];
        let more = [
            "procs=0",
            "size=1MiB,char_size=2MiB",
            "procs=2000,seekers=3",
        ];
        for text in bad.iter().chain(&more) {
            let p = Params::parse("bonnie", PARAMS, text).unwrap();
            let err = build(&p).err().expect(text);
            assert_eq!(crate::error::exit_code(&err), 2, "{text}: {err}");
        }
        let p = Params::parse("bonnie", PARAMS, "size=1000000,chunk=256").unwrap();
        let b = Bonnie::from_params(&p).unwrap();
        assert_eq!((b.size, b.char_size), (999_936, 999_936));
    }
}
