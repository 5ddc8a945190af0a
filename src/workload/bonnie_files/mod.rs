//! The Bonnie++ file tests (`bonnie++ -n`), after Russell Coker's Bonnie++ (1999–2020;
//! `bon_file.cpp` of bonnie++ 1.03 and 2.00a): create, stat and delete 1024 × `files`
//! files, first in sequential and then in random order.
//!
//! Faithful: the six tests in bonnie++'s order. Sequential: create in numeric order, stat in
//! readdir order (stat(2), and for a non-empty file open and read it all in `chunk` pieces),
//! delete in readdir order. Random: create, stat each file once in a random order (as
//! bonnie++'s `random_sort` does), delete in a random order. Names are a 7-digit number
//! (bonnie++ 1.03; 2.00a writes 10 hex digits) and 0–12 characters of bonnie++'s alphabet,
//! number first in the sequential tests and last in the random ones. With `dirs`, files go
//! to subdirectories `00000`, `00001`, … in contiguous blocks of indices, and paths are
//! resolved relative to `Bonnie.<n>` (`*at` calls, as bonnie++ after its chdir). Files are
//! made with `O_CREAT|O_EXCL|O_WRONLY`, 0600, written in `chunk` pieces (default 8 KiB,
//! bonnie++'s `DefaultChunkSize`), sizes uniform in [`min_size`, `max_size`].
//! `Bonnie.<n>` and its subdirectories are made before the create test (untimed) and
//! removed inside the delete tests' timing (not counted as operations). `--sync each` is
//! bonnie++ `-b`. bonnie++ 2.00a calls sync(2) at the end of its create and delete tests,
//! inside the timing (seen with strace): fsarena's default `--sync end` (syncfs) matches it.
//!
//! Differs: names, sizes and random orders are computed on demand from a keyed hash of
//! (seed, instance, pass, index) instead of a name table and `rand()`, so memory does not
//! grow with the number of files and every repetition uses the same names. The random
//! create also permutes the creation order (bonnie++ creates the random-prefixed names in
//! index order), so with `dirs` it hops between directories. `procs` instances are threads
//! working in one phase, each in its own `Bonnie.<n>`, not semaphore-synchronised
//! processes; figures aggregate. Data follows `--data` (incompressible by default), not a
//! zero buffer. No hard-link or symlink modes (max -1/-2); no "+++++" (short phases are
//! timed and flagged).

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::recorder::Op;
use crate::workload::{ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{bail, Context, Result};
use std::ffi::{CStr, OsStr};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Files per unit of `files` (bonnie++ `DirectoryUnit`).
const FILES_UNIT: u64 = 1024;
/// Most files per instance: the number must fit its 7 digits for names to stay unique.
const MAX_FILES: u64 = 9_999_999;
/// Subdirectory names have five digits, as in bonnie++.
const MAX_DIRS: u64 = 99_999;
/// Most random characters in a name (bonnie++ `RandExtraLen`).
const MAX_EXTRA: u64 = 12;
const ALPHABET: &[u8; 62] = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const MAX_CHUNK: u64 = 1 << 20;
const MAX_PROCS: u64 = 4096;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "files",
        kind: ParamKind::Count,
        default: "16",
        unit: "×1024 files",
        help: "files per instance, in units of 1024 (bonnie++ -n)",
    },
    ParamSpec {
        name: "max_size",
        kind: ParamKind::Size,
        default: "0",
        unit: "bytes",
        help: "largest file; 0 with min_size 0 makes empty files",
    },
    ParamSpec {
        name: "min_size",
        kind: ParamKind::Size,
        default: "0",
        unit: "bytes",
        help: "smallest file; sizes are uniform in [min_size, max_size]",
    },
    ParamSpec {
        name: "dirs",
        kind: ParamKind::Count,
        default: "0",
        unit: "directories",
        help: "0: all files in one directory; N: spread over N subdirectories (≤ 99999)",
    },
    ParamSpec {
        name: "procs",
        kind: ParamKind::Count,
        default: "1",
        unit: "instances",
        help: "concurrent instances (threads), each in its own directory Bonnie.<n>",
    },
    ParamSpec {
        name: "chunk",
        kind: ParamKind::Size,
        default: "8KiB",
        unit: "bytes",
        help: "piece size of file reads and writes (bonnie++ -n's 5th field), ≤ 1MiB",
    },
];

const fn phase(name: &'static str, kind: PhaseKind) -> PhaseSpec {
    PhaseSpec {
        name,
        kind,
        primary: Primary::OpsPerS,
        ops_unit: "files/s",
    }
}

const PHASES: &[PhaseSpec] = &[
    phase("seq_create", PhaseKind::Meta),
    phase("seq_stat", PhaseKind::Read),
    phase("seq_delete", PhaseKind::Meta),
    phase("rand_create", PhaseKind::Meta),
    phase("rand_stat", PhaseKind::Read),
    phase("rand_delete", PhaseKind::Meta),
];

/// bonnie++'s file tests' figures are the probe's: it notes none of its own.
pub const FIGURES: &[Figure] = &[];

/// The `bonnie-files` workload: Bonnie++'s file creation, stat and deletion tests.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "bonnie-files",
    about: "Bonnie++ -n file tests (Coker): create, stat, delete 1024×files files, \
            sequential then random order",
    params: PARAMS,
    phases: PHASES,
    figures: FIGURES,
    classic_tool: Some("Bonnie++ -n"),
    param_applies: None,
    after_merge: None,
    resolve: None,
    // `files` is in 1024s.
    database: None,
    programs: &[],
    phase_time_knobs: &[super::Knob::new("files", &[], 1024.0)],
    build,
};

/// Bonnie++'s file tests with validated parameters.
#[derive(Clone, Copy, Debug)]
pub struct BonnieFiles {
    /// Files per instance.
    n: u64,
    min_size: u64,
    max_size: u64,
    dirs: u64,
    procs: u64,
    chunk: usize,
}

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    let count = |k| p.count(k).expect("counts have defaults");
    let size = |k| p.bytes(k).expect("sizes have defaults");
    let (files, procs, dirs) = (count("files"), count("procs"), count("dirs"));
    let (min_size, max_size, chunk) = (size("min_size"), size("max_size"), size("chunk"));
    let problem = if files == 0 || files > MAX_FILES / FILES_UNIT {
        format!(
            "files={files}: must be 1 to {} (×1024)",
            MAX_FILES / FILES_UNIT
        )
    } else if procs == 0 || procs > MAX_PROCS {
        format!("procs={procs}: must be 1 to {MAX_PROCS}")
    } else if dirs > MAX_DIRS {
        format!("dirs={dirs}: must be at most {MAX_DIRS}")
    } else if min_size > max_size {
        format!("min_size ({min_size} B) is larger than max_size ({max_size} B)")
    } else if chunk == 0 || chunk > MAX_CHUNK {
        format!("chunk={chunk}: must be 1 B to 1MiB")
    } else {
        let (n, chunk) = (files * FILES_UNIT, chunk as usize);
        return Ok(Box::new(BonnieFiles {
            n,
            min_size,
            max_size,
            dirs,
            procs,
            chunk,
        }));
    };
    Err(usage(format!("bonnie-files: {problem}")))
}

impl Workload for BonnieFiles {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let base = cx.workdir().to_path_buf();
        for (pass, specs) in [(Pass::Seq, &PHASES[..3]), (Pass::Rand, &PHASES[3..])] {
            let insts: Vec<Instance> = (0..self.procs)
                .map(|idx| Instance::new(*self, &base, cx.seed(), idx, pass))
                .collect();
            for inst in &insts {
                inst.make_dirs()?;
            }
            let procs = insts.len();
            cx.phase(&specs[0], procs, |w| insts[w.idx].create(w))?;
            cx.phase(&specs[1], procs, |w| insts[w.idx].stat(w))?;
            cx.phase(&specs[2], procs, |w| insts[w.idx].delete(w))?;
        }
        Ok(())
    }
}

/// Which half of the tests: names with the number first (sequential) or last (random).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    Seq,
    Rand,
}

/// Keys of the independent pseudo-random streams of one instance and pass.
const TAG_NAME: u64 = 0x6e61_6d65;
const TAG_SIZE: u64 = 0x7369_7a65;
const TAG_CREATE: u64 = 0x6372_6561;
const TAG_STAT: u64 = 0x7374_6174;
const TAG_DELETE: u64 = 0x6465_6c65;

/// The splitmix64 finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mix.
pub(crate) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A hash of `key` and `i`.
pub(crate) fn hash(key: u64, i: u64) -> u64 {
    mix(key ^ mix(i))
}

/// Appends the Bonnie++ name of file `i`: a 7-digit number and 0–12 random alphanumerics
/// derived from `(key, i)`; the number comes first unless `random_first`.
fn file_name(key: u64, i: u64, random_first: bool, out: &mut Vec<u8>) {
    let h = hash(key ^ TAG_NAME, i);
    let extra = h % (MAX_EXTRA + 1);
    let chars = (0..extra).map(|j| ALPHABET[(hash(h, j) % ALPHABET.len() as u64) as usize]);
    if random_first {
        out.extend(chars);
        let _ = write!(out, "{i:07}");
    } else {
        let _ = write!(out, "{i:07}");
        out.extend(chars);
    }
}

/// A keyed pseudo-random permutation of `[0, n)` computed per index in O(1) memory: a
/// bijection of `[0, 2^bits)` (rounds of key xor, odd multiply and xorshift, each
/// invertible modulo 2^bits) restricted to `[0, n)` by cycle walking (Black & Rogaway
/// 2002): re-apply until the value is below `n`, fewer than 2 times on average.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Permutation {
    n: u64,
    mask: u64,
    shift: u32,
    keys: [u64; 4],
}

impl Permutation {
    pub(crate) fn new(n: u64, key: u64) -> Self {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let mask = u64::MAX.checked_shr(64 - bits).unwrap_or(0);
        let keys = [1, 2, 3, 4].map(|round| hash(key, round));
        Self {
            n,
            mask,
            shift: (bits / 2).max(1),
            keys,
        }
    }

    fn scramble(&self, mut x: u64) -> u64 {
        for k in self.keys {
            x = ((x ^ k) & self.mask).wrapping_mul(k | 1) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }

    /// The `i`-th element of the permutation (`i < n`).
    pub(crate) fn get(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = self.scramble(i);
        while x >= self.n {
            x = self.scramble(x);
        }
        x
    }
}

/// One instance (one bonnie++ process) in one pass.
struct Instance {
    cfg: BonnieFiles,
    /// The trial's work directory, which holds `root`.
    base: PathBuf,
    /// `Bonnie.<n>`.
    root: PathBuf,
    key: u64,
    pass: Pass,
}

impl Instance {
    fn new(cfg: BonnieFiles, base: &Path, seed: u64, idx: u64, pass: Pass) -> Self {
        let key = hash(hash(seed, idx), pass as u64);
        let root = base.join(format!("Bonnie.{idx}"));
        let base = base.to_path_buf();
        Self {
            cfg,
            base,
            root,
            key,
            pass,
        }
    }

    /// Makes `Bonnie.<n>` and its subdirectories (untimed, as bonnie++ does).
    fn make_dirs(&self) -> Result<()> {
        let mk =
            |p: PathBuf| std::fs::create_dir(&p).with_context(|| format!("mkdir {}", p.display()));
        mk(self.root.clone())?;
        (0..self.cfg.dirs).try_for_each(|d| mk(self.subdir(Some(d))))
    }

    /// The subdirectory of file `i`: contiguous blocks of indices, in order.
    fn dir_of(&self, i: u64) -> Option<u64> {
        (self.cfg.dirs > 0).then(|| i * self.cfg.dirs / self.cfg.n)
    }

    fn subdir(&self, d: Option<u64>) -> PathBuf {
        d.map_or_else(|| self.root.clone(), |d| self.root.join(format!("{d:05}")))
    }

    /// The directories that hold files, in order.
    fn data_dirs(&self) -> impl Iterator<Item = PathBuf> + '_ {
        let subdirs = (0..self.cfg.dirs).map(Some);
        let only_root = (self.cfg.dirs == 0).then_some(None);
        only_root.into_iter().chain(subdirs).map(|d| self.subdir(d))
    }

    /// File `i`'s path relative to `root` (`00003/name` or `name`), NUL-terminated.
    fn rel_name(&self, i: u64, out: &mut Vec<u8>) {
        out.clear();
        if let Some(d) = self.dir_of(i) {
            let _ = write!(out, "{d:05}/");
        }
        file_name(self.key, i, self.pass == Pass::Rand, out);
        out.push(0);
    }

    /// File `i`'s size: uniform in [min_size, max_size] (Lemire's multiply-shift).
    fn size_of(&self, i: u64) -> u64 {
        let span = u128::from(self.cfg.max_size - self.cfg.min_size) + 1;
        let r = u128::from(hash(self.key ^ TAG_SIZE, i));
        self.cfg.min_size + ((r * span) >> 64) as u64
    }

    fn order(&self, tag: u64) -> Option<Permutation> {
        Some(Permutation::new(self.cfg.n, self.key ^ tag))
    }

    /// Creates every file: in numeric order (sequential pass) or a permuted one (random).
    fn create(&self, w: &mut Worker) -> Result<()> {
        let perm = self.order(TAG_CREATE).filter(|_| self.pass == Pass::Rand);
        self.each_indexed(w, perm, Op::Create, |w, root, i, name| {
            let size = self.size_of(i);
            let f = root.create(name)?;
            write_data(w, &f, size, self.cfg.chunk)?;
            w.after_write(&f)?;
            drop(f);
            w.after_dir_change(&self.subdir(self.dir_of(i)))?;
            Ok(size)
        })?;
        w.end_fs(&self.root)
            .context("syncfs after creating files")?;
        Ok(())
    }

    /// Stats every file, reading the data of non-empty ones: in readdir order (sequential
    /// pass) or once each in a random order.
    fn stat(&self, w: &mut Worker) -> Result<()> {
        let mut buf = vec![0u8; self.cfg.chunk];
        match self.pass {
            Pass::Seq => {
                self.each_readdir(w, Op::Stat, |_, d, _, name| d.stat_read(name, &mut buf))
            }
            Pass::Rand => {
                let perm = self.order(TAG_STAT);
                self.each_indexed(w, perm, Op::Stat, |_, d, _, name| {
                    d.stat_read(name, &mut buf)
                })
            }
        }
    }

    /// Deletes every file, in readdir order (sequential pass) or a random order, then the
    /// directories (timed, not counted as operations), then applies the sync policy.
    fn delete(&self, w: &mut Worker) -> Result<()> {
        let unlink = |w: &mut Worker, d: &DirFd, dir: &Path, name: &CStr| {
            d.unlink(name)?;
            w.after_dir_change(dir).map(|_| 0)
        };
        match self.pass {
            Pass::Seq => self.each_readdir(w, Op::Delete, unlink)?,
            Pass::Rand => {
                self.each_indexed(w, self.order(TAG_DELETE), Op::Delete, |w, d, i, n| {
                    unlink(w, d, &self.subdir(self.dir_of(i)), n)
                })?
            }
        }
        let rm =
            |p: PathBuf| std::fs::remove_dir(&p).with_context(|| format!("rmdir {}", p.display()));
        if self.cfg.dirs > 0 {
            self.data_dirs().try_for_each(rm)?;
        }
        rm(self.root.clone())?;
        w.end_fs(&self.base)
            .context("syncfs after deleting files")?;
        Ok(())
    }

    /// Runs `f` on file `perm(k)` (or `k` without `perm`) for k in 0..n, each call timed
    /// and recorded as one `op`; `f` returns the bytes it moved.
    fn each_indexed<F>(
        &self,
        w: &mut Worker,
        perm: Option<Permutation>,
        op: Op,
        mut f: F,
    ) -> Result<()>
    where
        F: FnMut(&mut Worker, &DirFd, u64, &CStr) -> io::Result<u64>,
    {
        let root = DirFd::open(&self.root)?;
        let mut name = Vec::with_capacity(32);
        for k in 0..self.cfg.n {
            w.check()?;
            let i = perm.map_or(k, |p| p.get(k));
            self.rel_name(i, &mut name);
            let t = w.start();
            let bytes = f(w, &root, i, cstr(&name)).with_context(|| root.what(op.name(), &name))?;
            w.done(op, t, bytes);
        }
        Ok(())
    }

    /// Runs `f` on every file in readdir order, streaming each directory; `f` and the
    /// readdir that found the file are timed and recorded together as one `op`.
    fn each_readdir<F>(&self, w: &mut Worker, op: Op, mut f: F) -> Result<()>
    where
        F: FnMut(&mut Worker, &DirFd, &Path, &CStr) -> io::Result<u64>,
    {
        let (mut name, mut count) = (Vec::new(), 0);
        for dir in self.data_dirs() {
            let d = DirFd::open(&dir)?;
            let mut entries = std::fs::read_dir(&dir).with_context(|| d.what("readdir", b""))?;
            loop {
                w.check()?;
                let t = w.start();
                let Some(entry) = entries.next() else { break };
                let entry = entry.with_context(|| d.what("readdir", b""))?;
                if entry_name(&entry, &mut name) {
                    let bytes =
                        f(w, &d, &dir, cstr(&name)).with_context(|| d.what(op.name(), &name))?;
                    w.done(op, t, bytes);
                    count += 1;
                }
            }
        }
        if count != self.cfg.n {
            let (n, root) = (self.cfg.n, self.root.display());
            bail!("{}: expected {n} files in {root}, found {count}", op.name());
        }
        Ok(())
    }
}

/// Writes `size` bytes of the worker's data stream to `f` in pieces of `chunk`.
pub(crate) fn write_data(w: &mut Worker, mut f: &File, size: u64, chunk: usize) -> io::Result<()> {
    let mut left = size;
    while left > 0 {
        let len = left.min(chunk as u64) as usize;
        f.write_all(w.data().slice(len))?;
        left -= len as u64;
    }
    Ok(())
}

/// Puts a directory entry's name, NUL-terminated, into `out`; false for dot files.
fn entry_name(entry: &std::fs::DirEntry, out: &mut Vec<u8>) -> bool {
    let name = entry.file_name();
    out.clear();
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    !name.as_bytes().starts_with(b".")
}

/// A name built by this file: NUL-terminated, without interior NULs.
pub(crate) fn cstr(name: &[u8]) -> &CStr {
    CStr::from_bytes_with_nul(name).expect("names are NUL-terminated and NUL-free")
}

/// A directory open for `*at` system calls, so that each operation resolves one short
/// relative name, as bonnie++ does after its chdir, rather than a long absolute path.
pub(crate) struct DirFd {
    file: File,
    path: PathBuf,
}

impl DirFd {
    pub(crate) fn open(path: &Path) -> Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut opts = std::fs::OpenOptions::new();
        opts.read(true).custom_flags(libc::O_DIRECTORY);
        let file = opts
            .open(path)
            .with_context(|| format!("opening directory {}", path.display()))?;
        Ok(Self {
            file,
            path: path.to_path_buf(),
        })
    }

    /// "`op` PATH" for error messages; `name` may end in its NUL.
    pub(crate) fn what(&self, op: &str, name: &[u8]) -> String {
        let name = OsStr::from_bytes(name.strip_suffix(&[0]).unwrap_or(name));
        format!("{op} {}", self.path.join(name).display())
    }

    pub(crate) fn open_at(&self, name: &CStr, flags: libc::c_int) -> io::Result<File> {
        // SAFETY: `name` is NUL-terminated and the directory descriptor is open.
        let fd = unsafe { libc::openat(self.file.as_raw_fd(), name.as_ptr(), flags, 0o600) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a new descriptor that nothing else owns.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// open(O_CREAT|O_EXCL|O_WRONLY, 0600), as bonnie++ 2.00a.
    pub(crate) fn create(&self, name: &CStr) -> io::Result<File> {
        self.open_at(
            name,
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
        )
    }

    /// stat(2) the file and, when it has data, read all of it; returns the bytes read.
    fn stat_read(&self, name: &CStr, buf: &mut [u8]) -> io::Result<u64> {
        // SAFETY: an all-zero `stat` is valid; fstatat fills it from a NUL-terminated name.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstatat(self.file.as_raw_fd(), name.as_ptr(), &mut st, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let (size, mut done) = (st.st_size as u64, 0);
        if size > 0 {
            let mut f = self.open_at(name, libc::O_RDONLY | libc::O_CLOEXEC)?;
            while done < size {
                let len = (size - done).min(buf.len() as u64) as usize;
                match f.read(&mut buf[..len])? {
                    0 => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "file shrank")),
                    got => done += got as u64,
                }
            }
        }
        Ok(done)
    }

    fn unlink(&self, name: &CStr) -> io::Result<()> {
        // SAFETY: `name` is NUL-terminated and the directory descriptor is open.
        if unsafe { libc::unlinkat(self.file.as_raw_fd(), name.as_ptr(), 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
