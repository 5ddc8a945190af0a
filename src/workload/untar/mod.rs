//! Extract an archive of many files, then delete them: the 2001 article's web-cache test
//! (a squid cache of 250,000 files, 3.1 GB, extracted with `tar` and removed with `rm -rf`).
//!
//! The archive is a user's (`archive=PATH`: `.tar`, `.tar.gz`/`.tgz`, `.tar.xz`, `.tar.zst`)
//! or generated from a corpus profile (`profile=web-cache`, `scale`). Either way only the
//! extraction is measured:
//! * a user's archive is decompressed in-process (`untar/compression.rs`: no `gzip`, `xz` or
//!   `zstd` binary needed), read into memory and validated once, when the plan is built
//!   and before anything is provisioned: every header and checksum, its length, and every
//!   member's name under the policy below. A fault (bad compression, a bad checksum at
//!   byte N, truncation, a refused member, more than half of the available memory) is a
//!   usage error (exit 2) naming the file. Every trial extracts the same bytes, untimed
//!   until the phase starts;
//! * a generated archive is a tar stream synthesised on the fly from the corpus: headers
//!   are formatted and file data is copied from the trial's in-memory data pool, so a
//!   3.1 GB archive needs neither memory nor disk, and reading it costs what reading an
//!   archive from the page cache costs — a copy per byte.
//!
//! Both go through the same extractor, which does what GNU tar does as root: directories,
//! regular files, symlinks and hard links, with their modes (`mode & 07777`) and
//! modification times (directories' after their contents, as tar does at the end);
//! ownership is not restored. It reads ustar, GNU (`L`/`K` long names, base-256 sizes) and
//! pax (`path`, `linkpath`, `size`) headers, verifies every header checksum, and skips
//! other entry types (devices, FIFOs), counting them. A truncated archive or a bad header
//! checksum is an error. An existing file of the same name is replaced, as GNU tar does.
//!
//! What it writes follows [`confined`](crate::workload::confined), the policy shared with
//! `compile`'s copy of a source tree: symlinks are made exactly as they are, absolute or
//! pointing outside the target included (making one is harmless; following one is what
//! writes outside). Refused, with an error naming the member, is everything that would
//! write outside the target: absolute names, `..` components, members reached through a
//! symlink (every directory on the way is opened relative to the root with `O_NOFOLLOW`;
//! GNU tar follows in-tree symlinks, fsarena does not), and hard links whose target name is
//! absolute, has `..` or is reached through a symlink. A file or hard link whose name is a
//! symlink replaces the symlink, never writes through it.
//!
//! Phases `extract` (MB/s of file data; files/s as the extra figure `files_per_s`) and
//! `delete` (files/s, an `rm -r` of the extracted tree). The sync policy applies: under
//! `--sync each` every file and the directory it was made in are fsynced, under the default
//! `--sync end` one syncfs ends each phase.

mod compression;
mod format;
#[cfg(test)]
mod props;

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::corpus::{Corpus, Entry, PROFILES};
use crate::data::DataSource;
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::recorder::Op;
use crate::workload::confined::{cname, components, Dir, Kind, Preview, Tree};
use crate::workload::tree;
use crate::workload::{IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{anyhow, bail, Context, Result};
use compression::Compression;
use format::{entry_headers, padding, Header, Members, BLOCK};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::Mutex;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "archive",
        kind: ParamKind::Text,
        default: "",
        unit: "path",
        help: "a .tar, .tar.gz/.tgz, .tar.xz or .tar.zst to extract (default: generated)",
    },
    ParamSpec {
        name: "profile",
        kind: ParamKind::Choice(PROFILES),
        default: "web-cache",
        unit: "",
        help: "corpus of the generated archive",
    },
    ParamSpec {
        name: "scale",
        kind: ParamKind::Float,
        default: "1.0",
        unit: "× corpus",
        help: "multiplies the generated corpus (web-cache at 1.0: 250,000 files, 3.1 GB)",
    },
];

/// Whether parameter `name` applied to a trial with `params`: a user's `archive` leaves
/// the generated corpus's `profile` and `scale` unused.
pub fn param_applies(params: &std::collections::BTreeMap<String, String>, name: &str) -> bool {
    let own_archive = params.get("archive").is_some_and(|a| !a.is_empty());
    !(own_archive && matches!(name, "profile" | "scale"))
}

const EXTRACT: PhaseSpec = PhaseSpec {
    name: "extract",
    kind: PhaseKind::Write,
    primary: Primary::MbPerS,
    ops_unit: "entries/s",
};
const DELETE: PhaseSpec = PhaseSpec {
    name: "delete",
    kind: PhaseKind::Meta,
    primary: Primary::OpsPerS,
    ops_unit: "entries/s",
};
const PHASES: &[PhaseSpec] = &[EXTRACT, DELETE];

/// What the extract wrote, and its rate in files.
pub const FIGURES: &[Figure] = &[
    Figure::neither("files", "files"),
    Figure::higher("files_per_s", "files/s"),
    Figure::neither("skipped_entries", "entries"),
];

/// The `untar` workload.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "untar",
    about: "extract an archive of many files (yours, or a generated web cache), then delete \
            them; only extraction is timed",
    params: PARAMS,
    phases: PHASES,
    figures: FIGURES,
    classic_tool: None,
    param_applies: Some(param_applies),
    after_merge: None,
    resolve: None,
    database: None,
    programs: &[],
    phase_time_knobs: &[],
    build,
};

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    let scale = p.float("scale").expect("default");
    if !(scale > 0.0 && scale <= 100.0) {
        return Err(usage(format!(
            "untar: scale={scale}: must be above 0 and at most 100"
        )));
    }
    let archive = match p.text("archive") {
        Some(a) => Some(Archive::load(Path::new(a))?),
        None => None,
    };
    Ok(Box::new(Untar {
        archive,
        profile: p.choice("profile").to_string(),
        scale,
    }))
}

struct Untar {
    archive: Option<Archive>,
    profile: String,
    scale: f64,
}

/// A user's archive, decompressed and validated once when the plan is built; every
/// trial extracts these bytes.
struct Archive {
    /// The uncompressed tar stream (kept as read: no second copy of a large archive).
    bytes: Vec<u8>,
}

impl Archive {
    /// Reads, decompresses and validates `path` ([`validate`]); every fault — no such
    /// file, bad compression, a bad header, truncation, a refused member, more than half
    /// of the available memory — is a usage error naming the file, before anything is
    /// provisioned.
    fn load(path: &Path) -> Result<Self> {
        let fault = |why: String| usage(format!("untar: archive={}: {why}", path.display()));
        if !path.is_file() {
            return Err(fault("no such file".into()));
        }
        let compression = Compression::of(path)?;
        // Half of MemAvailable; the decompressor's output is counted as it arrives, so a
        // small archive that expands to gigabytes stops at the limit instead of aborting.
        let limit = mem_available().map_or(u64::MAX, |avail| avail / 2);
        let bytes = compression
            .load(path, limit)
            .map_err(|e| fault(format!("{e:#}")))?;
        validate(&bytes).map_err(|e| fault(format!("{e:#}")))?;
        Ok(Self { bytes })
    }
}

/// Bytes of memory available (MemAvailable), if known.
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl Workload for Untar {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let root = cx.workdir().join("x");
        std::fs::create_dir(&root).on("mkdir", &root)?;
        let loaded = self.archive.as_ref().map(|a| a.bytes.as_slice());
        let corpus = match loaded {
            Some(_) => None,
            None => Some(Corpus::new(&self.profile, self.scale, cx.seed())?),
        };
        let pool = cx.data().clone();
        let counts = Mutex::new(Counts::default());
        cx.phase(&EXTRACT, 1, |w| {
            let input: Box<dyn Read> = match (&loaded, &corpus) {
                (Some(bytes), _) => Box::new(*bytes),
                (None, Some(c)) => Box::new(TarStream::new(c, pool.source(0x7461))),
                (None, None) => unreachable!("an archive or a corpus"),
            };
            let c = extract(w, input, &root)?;
            *counts.lock().unwrap() = c;
            w.end_fs(&root).on("syncfs", &root)
        })?;
        let c = counts.into_inner().unwrap();
        let wall = cx.phases().last().map_or(0.0, |p| p.wall_s);
        cx.note("files", c.files as f64);
        cx.note(
            "files_per_s",
            if wall > 0.0 {
                c.files as f64 / wall
            } else {
                0.0
            },
        );
        if c.skipped > 0 {
            cx.note("skipped_entries", c.skipped as f64);
        }
        let parent = cx.workdir().to_path_buf();
        cx.phase(&DELETE, 1, |w| {
            tree::remove_tree(w, &root)?;
            w.end_fs(&parent).on("syncfs", &parent)
        })?;
        Ok(())
    }
}

/// What an extraction made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    pub hardlinks: u64,
    /// Entries of other types (devices, FIFOs, …), not extracted.
    pub skipped: u64,
    pub bytes: u64,
}

/// What a member is, and its name in messages.
fn kind_of(h: &Header) -> (Kind, &'static str) {
    match h.kind {
        b'5' => (Kind::Dir, "directory"),
        b'2' => (Kind::Symlink, "symlink"),
        b'1' => (Kind::HardLink, "hard link"),
        b'0' | 0 | b'7' => (Kind::File, "file"),
        _ => (Kind::Other, "entry"),
    }
}

/// Reads the whole tar stream in `bytes` without writing anything, as the extractor will:
/// every header and the data's length, and every name under the [`confined`](crate::workload::confined) policy.
/// Returns what extracting it makes (`dirs`: the directory members only).
pub fn validate(bytes: &[u8]) -> Result<Counts> {
    let mut members = Members::new(Box::new(bytes));
    let mut preview = Preview::default();
    let mut counts = Counts::default();
    while let Some(h) = members.next()? {
        let (kind, what) = kind_of(&h);
        preview.check(kind, &h.name, &h.link, what)?;
        match kind {
            Kind::Dir => counts.dirs += 1,
            Kind::Symlink => counts.symlinks += 1,
            Kind::HardLink => counts.hardlinks += 1,
            Kind::File => {
                counts.files += 1;
                counts.bytes += h.size;
            }
            Kind::Other => counts.skipped += 1,
        }
    }
    Ok(counts)
}

/// Extracts the tar stream `input` below `root` (an existing directory), under the
/// [`confined`](crate::workload::confined) policy; see the module documentation for what is done.
pub fn extract(w: &mut Worker, input: Box<dyn Read + '_>, root: &Path) -> Result<Counts> {
    let tree = Tree::open(root)?;
    let mut members = Members::new(input);
    let mut counts = Counts::default();
    let mut buf = vec![0u8; 1 << 20];
    // Directories' modes and mtimes, set after everything else (their contents change
    // the mtimes).
    let mut dir_times: Vec<(Vec<Vec<u8>>, i64, u32)> = Vec::new();
    let mut cached_parent: Option<(Vec<Vec<u8>>, Dir)> = None;
    loop {
        w.check()?;
        let Some(h) = members.next()? else { break };
        let (kind, what) = kind_of(&h);
        let Some(parts) = components(&h.name, what)? else {
            continue;
        };
        let shown = String::from_utf8_lossy(&h.name).into_owned();
        let (leaf, dirs) = parts.split_last().expect("not empty");
        // Walk to the parent, making missing directories, never through a symlink; the
        // last parent is kept, as a directory's entries are usually contiguous.
        let parent = match cached_parent.take() {
            Some((p, d)) if p.as_slice() == dirs => d,
            _ => tree.walk(dirs, true, what, &shown, &mut counts.dirs)?,
        };
        let leaf_c = cname(leaf)?;
        let target = tree.path_of(&parts);
        let parent_path = tree.path_of(dirs);
        let t = w.start();
        match kind {
            Kind::Dir => {
                parent
                    .sub(leaf, Some(h.mode & 0o7777))
                    .map_err(|e| match e.raw_os_error() {
                        Some(libc::ELOOP) | Some(libc::ENOTDIR) => anyhow!(
                            "refusing directory '{shown}': it would replace a symlink or a \
                             file (a symlink is never followed)"
                        ),
                        _ => anyhow!(e).context(format!("mkdir {}", target.display())),
                    })?;
                w.done(Op::Mkdir, t, 0);
                counts.dirs += 1;
                dir_times.push((parts.clone(), h.mtime, h.mode & 0o7777));
                w.after_dir_change(&parent_path).on("fsync", &parent_path)?;
            }
            Kind::Symlink => {
                parent.symlink(&leaf_c, &h.link).on("symlink", &target)?;
                parent
                    .set_times(&leaf_c, h.mtime)
                    .on("utimensat", &target)?;
                w.done(Op::Symlink, t, 0);
                counts.symlinks += 1;
                w.after_dir_change(&parent_path).on("fsync", &parent_path)?;
            }
            Kind::HardLink => {
                let Some(src) = components(&h.link, "hard link target")? else {
                    bail!("refusing hard link '{shown}' to the archive root");
                };
                let (src_leaf, src_dirs) = src.split_last().expect("not empty");
                let sdir = tree.walk(src_dirs, false, what, &shown, &mut 0)?;
                parent
                    .hard_link(&leaf_c, &sdir, &cname(src_leaf)?)
                    .on("link", &target)?;
                w.done(Op::Other, t, 0);
                counts.hardlinks += 1;
                w.after_dir_change(&parent_path).on("fsync", &parent_path)?;
            }
            Kind::File => {
                let mut f = parent.create_file(&leaf_c).on("create", &target)?;
                let mut left = h.size;
                while left > 0 {
                    let n = left.min(buf.len() as u64) as usize;
                    members.read_data(&mut buf[..n])?;
                    f.write_all(&buf[..n]).on("write", &target)?;
                    left -= n as u64;
                }
                use std::os::unix::fs::PermissionsExt;
                f.set_permissions(std::fs::Permissions::from_mode(h.mode & 0o7777))
                    .on("chmod", &target)?;
                let ts = libc::timespec {
                    tv_sec: h.mtime as libc::time_t,
                    tv_nsec: 0,
                };
                // SAFETY: valid descriptor, two timespecs.
                if unsafe { libc::futimens(f.as_raw_fd(), [ts, ts].as_ptr()) } != 0 {
                    return Err(io::Error::last_os_error()).on("futimens", &target);
                }
                w.after_write(&f).on("fsync", &target)?;
                drop(f);
                w.done(Op::Create, t, h.size);
                counts.files += 1;
                counts.bytes += h.size;
                w.after_dir_change(&parent_path).on("fsync", &parent_path)?;
            }
            Kind::Other => counts.skipped += 1,
        }
        cached_parent = Some((dirs.to_vec(), parent));
    }
    // Directories' modes and times last, deepest first, as tar does; each through a
    // descriptor opened without following symlinks.
    dir_times.sort_by_key(|(p, _, _)| std::cmp::Reverse(p.len()));
    for (parts, mtime, mode) in dir_times {
        let shown = String::from_utf8_lossy(&parts.join(&b'/')).into_owned();
        let d = tree.walk(&parts, false, "directory", &shown, &mut 0)?;
        d.set_mode_and_times(mode, mtime).with_context(|| {
            format!(
                "setting the mode and time of {}",
                tree.path_of(&parts).display()
            )
        })?;
    }
    Ok(counts)
}

/// The first mtime of generated entries (2023-11-14), one second apart.
const GENERATED_MTIME: i64 = 1_700_000_000;

/// A tar stream generated from a corpus: headers, then file data from the data pool.
pub struct TarStream<'a> {
    entries: Box<dyn Iterator<Item = Entry> + 'a>,
    data: DataSource,
    /// Header bytes (or padding) not yet handed out.
    pending: Vec<u8>,
    pending_at: usize,
    /// File data bytes left of the current entry, then its padding.
    data_left: u64,
    pad_left: u64,
    index: i64,
    finished: bool,
}

impl<'a> TarStream<'a> {
    pub fn new(corpus: &'a Corpus, data: DataSource) -> Self {
        Self {
            entries: Box::new(corpus.entries()),
            data,
            pending: Vec::new(),
            pending_at: 0,
            data_left: 0,
            pad_left: 0,
            index: 0,
            finished: false,
        }
    }

    fn next_entry(&mut self) {
        self.pending.clear();
        self.pending_at = 0;
        let mtime = GENERATED_MTIME + self.index;
        self.index += 1;
        match self.entries.next() {
            Some(Entry::Dir { path }) => {
                let name = format!("{path}/");
                self.pending = entry_headers(name.as_bytes(), b'5', 0, 0o755, mtime, b"");
            }
            Some(Entry::File { path, size, mode }) => {
                self.pending = entry_headers(path.as_bytes(), b'0', size, mode, mtime, b"");
                self.data_left = size;
                self.pad_left = padding(size);
            }
            Some(Entry::Symlink { path, target }) => {
                self.pending =
                    entry_headers(path.as_bytes(), b'2', 0, 0o777, mtime, target.as_bytes());
            }
            None => {
                self.pending = vec![0u8; 2 * BLOCK];
                self.finished = true;
            }
        }
    }
}

impl Read for TarStream<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.pending_at < self.pending.len() {
                let n = buf.len().min(self.pending.len() - self.pending_at);
                buf[..n].copy_from_slice(&self.pending[self.pending_at..self.pending_at + n]);
                self.pending_at += n;
                return Ok(n);
            }
            if self.data_left > 0 {
                let n = (buf.len() as u64)
                    .min(self.data_left)
                    .min(crate::data::MAX_SLICE as u64) as usize;
                buf[..n].copy_from_slice(self.data.slice(n));
                self.data_left -= n as u64;
                return Ok(n);
            }
            if self.pad_left > 0 {
                let n = (buf.len() as u64).min(self.pad_left) as usize;
                buf[..n].fill(0);
                self.pad_left -= n as u64;
                return Ok(n);
            }
            if self.finished {
                return Ok(0);
            }
            self.next_entry();
        }
    }
}

#[cfg(test)]
mod tests;
