//! Extract an archive of many files, then delete them: the 2001 article's web-cache test
//! (a squid cache of 250,000 files, 3.1 GB, extracted with `tar` and removed with `rm -rf`).
//!
//! The archive is a user's (`archive=PATH`: `.tar`, `.tar.gz`/`.tgz`, `.tar.xz`, `.tar.zst`)
//! or generated from a corpus profile (`profile=web-cache`, `scale`). Either way only the
//! extraction is measured:
//! * a user's archive is decompressed (by `gzip`, `xz` or `zstd`) and read into memory
//!   before the phase, untimed; it must fit in half of the available memory;
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
//! other entry types (devices, FIFOs), counting them. It refuses, with an error naming the
//! entry, anything that could write outside the target: absolute names, `..` components,
//! symlinks whose target is absolute or leaves the extraction root, hard links to names
//! outside it, and paths through an already extracted symlink (every directory on the way
//! is opened relative to the root with `O_NOFOLLOW`; GNU tar follows in-tree symlinks,
//! fsarena does not). A truncated archive or a bad header checksum is an error. An
//! existing file of the same name is replaced, as GNU tar does.
//!
//! Phases `extract` (MB/s of file data; files/s as the extra figure `files_per_s`) and
//! `delete` (files/s, an `rm -r` of the extracted tree). The sync policy applies: under
//! `--sync each` every file and the directory it was made in are fsynced, under the default
//! `--sync end` one syncfs ends each phase.

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext, Worker};
use crate::corpus::{Corpus, Entry, PROFILES};
use crate::data::DataSource;
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::recorder::Op;
use crate::workload::tree;
use crate::workload::{IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{anyhow, bail, Context, Result};
use std::ffi::CString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

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
    build,
};

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    let scale = p.float("scale").expect("default");
    if !(scale > 0.0 && scale <= 100.0) {
        return Err(usage(format!(
            "untar: scale={scale}: must be above 0 and at most 100"
        )));
    }
    let archive = p.text("archive").map(PathBuf::from);
    if let Some(a) = &archive {
        if !a.is_file() {
            return Err(usage(format!(
                "untar: archive={}: no such file",
                a.display()
            )));
        }
        Compression::of(a)?;
    }
    Ok(Box::new(Untar {
        archive,
        profile: p.choice("profile").to_string(),
        scale,
    }))
}

struct Untar {
    archive: Option<PathBuf>,
    profile: String,
    scale: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compression {
    None,
    Gzip,
    Xz,
    Zstd,
}

impl Compression {
    fn of(path: &Path) -> Result<Self> {
        let name = path.to_string_lossy();
        Ok(if name.ends_with(".tar") {
            Compression::None
        } else if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
            Compression::Gzip
        } else if name.ends_with(".tar.xz") || name.ends_with(".txz") {
            Compression::Xz
        } else if name.ends_with(".tar.zst") || name.ends_with(".tzst") {
            Compression::Zstd
        } else {
            return Err(usage(format!(
                "untar: archive={name}: not .tar, .tar.gz, .tar.xz or .tar.zst"
            )));
        })
    }

    /// The archive's uncompressed bytes, read into memory (untimed).
    fn load(self, path: &Path) -> Result<Vec<u8>> {
        let tool = match self {
            Compression::None => return std::fs::read(path).on("read", path),
            Compression::Gzip => "gzip",
            Compression::Xz => "xz",
            Compression::Zstd => "zstd",
        };
        let out = std::process::Command::new(tool)
            .arg("-dc")
            .arg(path)
            .output()
            .with_context(|| format!("running {tool} -dc (is {tool} installed?)"))?;
        if !out.status.success() {
            bail!(
                "{tool} -dc {} failed: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(out.stdout)
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
        let loaded: Option<Arc<[u8]>> = match &self.archive {
            Some(path) => {
                let compression = Compression::of(path)?;
                let bytes = compression.load(path)?;
                if let Some(avail) = mem_available() {
                    if bytes.len() as u64 > avail / 2 {
                        bail!(
                            "untar: {} holds {} bytes uncompressed, more than half of the \
                             available memory ({avail} bytes); use a smaller archive",
                            path.display(),
                            bytes.len()
                        );
                    }
                }
                Some(bytes.into())
            }
            None => None,
        };
        let corpus = match loaded {
            Some(_) => None,
            None => Some(Corpus::new(&self.profile, self.scale, cx.seed())?),
        };
        let pool = cx.data().clone();
        let counts = Mutex::new(Counts::default());
        cx.phase(&EXTRACT, 1, |w| {
            let input: Box<dyn Read> = match (&loaded, &corpus) {
                (Some(bytes), _) => Box::new(io::Cursor::new(bytes.clone())),
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

const BLOCK: usize = 512;

/// A tar header's fields, as far as extraction needs them.
#[derive(Clone, Debug)]
struct Header {
    name: Vec<u8>,
    link: Vec<u8>,
    kind: u8,
    size: u64,
    mode: u32,
    mtime: i64,
}

fn octal(field: &[u8]) -> Result<u64> {
    if field.first().is_some_and(|b| b & 0x80 != 0) {
        // GNU base-256: big-endian, the first byte's top bit marks it.
        let mut v: u64 = u64::from(field[0] & 0x7f);
        for &b in &field[1..] {
            v = v
                .checked_mul(256)
                .ok_or_else(|| anyhow!("number too large"))?
                + u64::from(b);
        }
        return Ok(v);
    }
    let text: Vec<u8> = field
        .iter()
        .copied()
        .skip_while(|b| *b == b' ')
        .take_while(|b| *b != 0 && *b != b' ')
        .collect();
    if text.is_empty() {
        return Ok(0);
    }
    u64::from_str_radix(std::str::from_utf8(&text)?, 8)
        .map_err(|_| anyhow!("bad octal field {:?}", String::from_utf8_lossy(field)))
}

fn cstr_field(field: &[u8]) -> Vec<u8> {
    field.iter().copied().take_while(|b| *b != 0).collect()
}

/// Parses one 512-byte header block; `Ok(None)` for an all-zero block.
fn parse_header(b: &[u8; BLOCK], offset: u64) -> Result<Option<Header>> {
    if b.iter().all(|&x| x == 0) {
        return Ok(None);
    }
    let stored = octal(&b[148..156]).with_context(|| format!("header at byte {offset}"))?;
    let sum: u64 = b
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            if (148..156).contains(&i) {
                32
            } else {
                u64::from(x)
            }
        })
        .sum();
    if stored != sum {
        bail!("bad header checksum at byte {offset} of the archive (not a tar, or corrupt)");
    }
    let mut name = cstr_field(&b[0..100]);
    let prefix = cstr_field(&b[345..500]);
    if &b[257..262] == b"ustar" && !prefix.is_empty() && &b[257..263] == b"ustar\0" {
        let mut full = prefix;
        full.push(b'/');
        full.extend_from_slice(&name);
        name = full;
    }
    Ok(Some(Header {
        name,
        link: cstr_field(&b[157..257]),
        kind: b[156],
        size: octal(&b[124..136])?,
        mode: octal(&b[100..108])? as u32,
        mtime: octal(&b[136..148])? as i64,
    }))
}

/// Reads exactly `buf.len()` bytes or fails with "archive truncated".
fn read_full(input: &mut dyn Read, buf: &mut [u8], what: &str) -> Result<()> {
    input.read_exact(buf).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            anyhow!("archive truncated in {what}")
        } else {
            anyhow!(e).context(format!("reading the archive ({what})"))
        }
    })
}

fn padding(size: u64) -> u64 {
    (BLOCK as u64 - size % BLOCK as u64) % BLOCK as u64
}

/// Reads an entry's data into memory (long names, pax records).
fn read_small(input: &mut dyn Read, size: u64, what: &str) -> Result<Vec<u8>> {
    if size > 1 << 20 {
        bail!("{what} of {size} bytes is implausibly large");
    }
    let mut v = vec![0u8; (size + padding(size)) as usize];
    read_full(input, &mut v, what)?;
    v.truncate(size as usize);
    Ok(v)
}

fn skip(input: &mut dyn Read, n: u64, what: &str) -> Result<()> {
    let copied = io::copy(&mut input.take(n), &mut io::sink()).context("reading the archive")?;
    if copied != n {
        bail!("archive truncated in {what}");
    }
    Ok(())
}

/// Parses pax extended header records (`LEN key=value\n`).
fn pax_records(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut rest = data;
    while let Some(sp) = rest.iter().position(|&b| b == b' ') {
        let Some(len) = std::str::from_utf8(&rest[..sp])
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
        else {
            break;
        };
        if len <= sp || len > rest.len() {
            break;
        }
        let rec = &rest[sp + 1..len];
        let rec = rec.strip_suffix(b"\n").unwrap_or(rec);
        if let Some(eq) = rec.iter().position(|&b| b == b'=') {
            let key = String::from_utf8_lossy(&rec[..eq]).into_owned();
            out.push((key, rec[eq + 1..].to_vec()));
        }
        rest = &rest[len..];
    }
    out
}

/// A name from the archive made safe: relative, without `.` or empty components, never
/// `..`. `None` for the archive's root itself (`./`).
fn safe_components(name: &[u8], what: &str) -> Result<Option<Vec<Vec<u8>>>> {
    if name.first() == Some(&b'/') {
        bail!(
            "refusing {what} '{}': absolute name",
            String::from_utf8_lossy(name)
        );
    }
    let mut parts = Vec::new();
    for c in name.split(|&b| b == b'/') {
        match c {
            b"" | b"." => {}
            b".." => bail!(
                "refusing {what} '{}': '..' would leave the target",
                String::from_utf8_lossy(name)
            ),
            c => parts.push(c.to_vec()),
        }
    }
    Ok((!parts.is_empty()).then_some(parts))
}

/// Whether a symlink at `dir` (components below the root) pointing to `target` stays
/// inside the root when resolved lexically.
fn link_stays_inside(dir: &[Vec<u8>], target: &[u8]) -> bool {
    if target.first() == Some(&b'/') {
        return false;
    }
    let mut depth = dir.len() as i64;
    for c in target.split(|&b| b == b'/') {
        match c {
            b"" | b"." => {}
            b".." => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => depth += 1,
        }
    }
    true
}

/// A directory descriptor opened without following symlinks.
struct Dir(File);

fn cpath(c: &[u8]) -> Result<CString> {
    CString::new(c).map_err(|_| anyhow!("name with a NUL byte"))
}

impl Dir {
    fn open_root(path: &Path) -> Result<Dir> {
        let f = File::options()
            .read(true)
            .custom_flags_dir()
            .open(path)
            .on("open", path)?;
        Ok(Dir(f))
    }

    /// Opens the subdirectory `name`, refusing symlinks; when it is missing and `create`,
    /// makes it first. Returns whether it was made.
    fn sub(&self, name: &[u8], create: bool, mode: u32) -> io::Result<(Dir, bool)> {
        let c = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let open = || {
            // SAFETY: valid descriptor and NUL-terminated name.
            let fd = unsafe { libc::openat(self.0.as_raw_fd(), c.as_ptr(), flags) };
            if fd < 0 {
                Err(io::Error::last_os_error())
            } else {
                // SAFETY: a new descriptor nothing else owns.
                Ok(Dir(unsafe { File::from_raw_fd(fd) }))
            }
        };
        match open() {
            Err(e) if create && e.raw_os_error() == Some(libc::ENOENT) => {
                // SAFETY: valid descriptor and NUL-terminated name.
                if unsafe { libc::mkdirat(self.0.as_raw_fd(), c.as_ptr(), mode as libc::mode_t) }
                    != 0
                {
                    let e = io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::EEXIST) {
                        return Err(e);
                    }
                    return open().map(|d| (d, false));
                }
                open().map(|d| (d, true))
            }
            other => other.map(|d| (d, false)),
        }
    }

    fn unlink(&self, name: &CString) {
        // SAFETY: valid descriptor and NUL-terminated name; failure is fine (absent).
        unsafe { libc::unlinkat(self.0.as_raw_fd(), name.as_ptr(), 0) };
    }
}

trait DirFlags {
    fn custom_flags_dir(&mut self) -> &mut Self;
}

impl DirFlags for std::fs::OpenOptions {
    fn custom_flags_dir(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_DIRECTORY)
    }
}

fn set_times(dir: &Dir, name: &CString, mtime: i64, nofollow: bool) -> io::Result<()> {
    let ts = libc::timespec {
        tv_sec: mtime as libc::time_t,
        tv_nsec: 0,
    };
    let times = [ts, ts];
    let flags = if nofollow {
        libc::AT_SYMLINK_NOFOLLOW
    } else {
        0
    };
    // SAFETY: valid descriptor, NUL-terminated name, two timespecs.
    if unsafe { libc::utimensat(dir.0.as_raw_fd(), name.as_ptr(), times.as_ptr(), flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Opens the directory `dirs` below the root, making missing ones (counted in `counts`),
/// never through a symlink.
fn walk_to(
    root_dir: &Dir,
    dirs: &[Vec<u8>],
    what: &str,
    shown: &str,
    root: &Path,
    counts: &mut Counts,
) -> Result<Dir> {
    let mut parent = Dir(root_dir.0.try_clone().context("dup")?);
    for (i, d) in dirs.iter().enumerate() {
        let (next, made) = parent.sub(d, true, 0o755).map_err(|e| {
            let p = String::from_utf8_lossy(&dirs[..=i].join(&b'/')).into_owned();
            if e.raw_os_error() == Some(libc::ELOOP) || e.raw_os_error() == Some(libc::ENOTDIR) {
                anyhow!("refusing {what} '{shown}': '{p}' is not a directory (a symlink?)")
            } else {
                anyhow!(e).context(format!("mkdir {}", root.join(&p).display()))
            }
        })?;
        if made {
            counts.dirs += 1;
        }
        parent = next;
    }
    Ok(parent)
}

/// Extracts the tar stream `input` below `root` (an existing directory); see the module
/// documentation for what is done and refused.
pub fn extract(w: &mut Worker, mut input: Box<dyn Read + '_>, root: &Path) -> Result<Counts> {
    let root_dir = Dir::open_root(root)?;
    let mut counts = Counts::default();
    let mut block = [0u8; BLOCK];
    let mut buf = vec![0u8; 1 << 20];
    let (mut long_name, mut long_link): (Option<Vec<u8>>, Option<Vec<u8>>) = (None, None);
    let mut pax: Vec<(String, Vec<u8>)> = Vec::new();
    // Directories' mtimes, set after everything else (their contents change them).
    let mut dir_times: Vec<(Vec<Vec<u8>>, i64, u32)> = Vec::new();
    let mut offset = 0u64;
    let mut zero_blocks = 0;
    let mut cached_parent: Option<(Vec<Vec<u8>>, Dir)> = None;
    loop {
        w.check()?;
        match input.read(&mut block[..1]) {
            Ok(0) => break, // end of data at a block boundary: accepted, as GNU tar does
            Ok(_) => read_full(&mut input, &mut block[1..], "a header")?,
            Err(e) => return Err(anyhow!(e).context("reading the archive")),
        }
        let Some(mut h) = parse_header(&block, offset)? else {
            zero_blocks += 1;
            offset += BLOCK as u64;
            if zero_blocks == 2 {
                break;
            }
            continue;
        };
        zero_blocks = 0;
        offset += BLOCK as u64;
        for (k, v) in pax.drain(..) {
            match k.as_str() {
                "path" => h.name = v,
                "linkpath" => h.link = v,
                "size" => {
                    h.size = std::str::from_utf8(&v)
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .ok_or_else(|| anyhow!("bad pax size"))?
                }
                "mtime" => {
                    if let Some(t) = std::str::from_utf8(&v)
                        .ok()
                        .and_then(|s| s.split('.').next())
                        .and_then(|s| s.parse().ok())
                    {
                        h.mtime = t;
                    }
                }
                _ => {}
            }
        }
        if let Some(n) = long_name.take() {
            h.name = n;
        }
        if let Some(l) = long_link.take() {
            h.link = l;
        }
        let data_len = h.size + padding(h.size);
        match h.kind {
            b'L' => {
                long_name = Some(cstr_field(&read_small(&mut input, h.size, "a long name")?));
                offset += data_len;
                continue;
            }
            b'K' => {
                long_link = Some(cstr_field(&read_small(&mut input, h.size, "a long link")?));
                offset += data_len;
                continue;
            }
            b'x' => {
                pax = pax_records(&read_small(&mut input, h.size, "a pax header")?);
                offset += data_len;
                continue;
            }
            b'g' => {
                skip(&mut input, data_len, "a global pax header")?;
                offset += data_len;
                continue;
            }
            _ => {}
        }
        let what = match h.kind {
            b'5' => "directory",
            b'2' => "symlink",
            b'1' => "hard link",
            b'0' | 0 | b'7' => "file",
            _ => "entry",
        };
        let Some(parts) = safe_components(&h.name, what)? else {
            skip(&mut input, data_len, "an entry's data")?;
            offset += data_len;
            continue;
        };
        let shown = String::from_utf8_lossy(&h.name).into_owned();
        let (leaf, dirs) = parts.split_last().expect("not empty");
        // Walk to the parent, making missing directories, never through a symlink; the
        // last parent is kept, as a directory's entries are usually contiguous.
        let parent = match cached_parent.take() {
            Some((p, d)) if p.as_slice() == dirs => d,
            _ => walk_to(&root_dir, dirs, what, &shown, root, &mut counts)?,
        };
        let leaf_c = cpath(leaf)?;
        let target = root.join(String::from_utf8_lossy(&parts.join(&b'/')).as_ref());
        let parent_path = target.parent().unwrap_or(root).to_path_buf();
        let t = w.start();
        match h.kind {
            b'5' => {
                let (_, made) = parent
                    .sub(leaf, true, h.mode & 0o7777)
                    .map_err(|e| anyhow!(e).context(format!("mkdir {}", target.display())))?;
                let _ = made;
                w.done(Op::Mkdir, t, 0);
                counts.dirs += 1;
                dir_times.push((parts.clone(), h.mtime, h.mode & 0o7777));
                w.after_dir_change(&parent_path).on("fsync", &parent_path)?;
            }
            b'2' => {
                if !link_stays_inside(dirs, &h.link) {
                    bail!(
                        "refusing symlink '{shown}' -> '{}': it points outside the target",
                        String::from_utf8_lossy(&h.link)
                    );
                }
                parent.unlink(&leaf_c);
                let link_c = cpath(&h.link)?;
                // SAFETY: valid descriptor and NUL-terminated strings.
                if unsafe {
                    libc::symlinkat(link_c.as_ptr(), parent.0.as_raw_fd(), leaf_c.as_ptr())
                } != 0
                {
                    return Err(io::Error::last_os_error()).on("symlink", &target);
                }
                set_times(&parent, &leaf_c, h.mtime, true).on("utimensat", &target)?;
                w.done(Op::Symlink, t, 0);
                counts.symlinks += 1;
                w.after_dir_change(&parent_path).on("fsync", &parent_path)?;
            }
            b'1' => {
                let Some(src) = safe_components(&h.link, "hard link target")? else {
                    bail!("refusing hard link '{shown}' to the archive root");
                };
                let (src_leaf, src_dirs) = src.split_last().expect("not empty");
                let mut sdir = Dir(root_dir.0.try_clone().context("dup")?);
                for d in src_dirs {
                    sdir = sdir
                        .sub(d, false, 0)
                        .map_err(|e| {
                            anyhow!(e)
                                .context(format!("hard link '{shown}': its target's directory"))
                        })?
                        .0;
                }
                parent.unlink(&leaf_c);
                let src_c = cpath(src_leaf)?;
                // SAFETY: valid descriptors and NUL-terminated names; no symlink following.
                if unsafe {
                    libc::linkat(
                        sdir.0.as_raw_fd(),
                        src_c.as_ptr(),
                        parent.0.as_raw_fd(),
                        leaf_c.as_ptr(),
                        0,
                    )
                } != 0
                {
                    return Err(io::Error::last_os_error()).on("link", &target);
                }
                w.done(Op::Other, t, 0);
                counts.hardlinks += 1;
                w.after_dir_change(&parent_path).on("fsync", &parent_path)?;
            }
            b'0' | 0 | b'7' => {
                let flags = libc::O_WRONLY
                    | libc::O_CREAT
                    | libc::O_EXCL
                    | libc::O_NOFOLLOW
                    | libc::O_CLOEXEC;
                let open = || {
                    // SAFETY: valid descriptor and NUL-terminated name.
                    unsafe { libc::openat(parent.0.as_raw_fd(), leaf_c.as_ptr(), flags, 0o600) }
                };
                let mut fd = open();
                if fd < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST) {
                    parent.unlink(&leaf_c);
                    fd = open();
                }
                if fd < 0 {
                    return Err(io::Error::last_os_error()).on("create", &target);
                }
                // SAFETY: a new descriptor nothing else owns.
                let mut f = unsafe { File::from_raw_fd(fd) };
                let mut left = h.size;
                while left > 0 {
                    let n = left.min(buf.len() as u64) as usize;
                    read_full(&mut input, &mut buf[..n], "a file's data")?;
                    f.write_all(&buf[..n]).on("write", &target)?;
                    left -= n as u64;
                }
                skip(&mut input, padding(h.size), "a file's padding")?;
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
                offset += data_len;
                cached_parent = Some((dirs.to_vec(), parent));
                continue;
            }
            _ => {
                counts.skipped += 1;
            }
        }
        cached_parent = Some((dirs.to_vec(), parent));
        skip(&mut input, data_len, "an entry's data")?;
        offset += data_len;
    }
    // Directories' modes and times last, deepest first, as tar does.
    dir_times.sort_by_key(|(p, _, _)| std::cmp::Reverse(p.len()));
    for (parts, mtime, mode) in dir_times {
        let (leaf, dirs) = parts.split_last().expect("not empty");
        let mut d = Dir(root_dir.0.try_clone().context("dup")?);
        for c in dirs {
            d = d
                .sub(c, false, 0)
                .context("reopening a directory for its time")?
                .0;
        }
        let leaf = cpath(leaf)?;
        // SAFETY: valid descriptor and NUL-terminated name.
        if unsafe { libc::fchmodat(d.0.as_raw_fd(), leaf.as_ptr(), mode as libc::mode_t, 0) } != 0 {
            return Err(io::Error::last_os_error()).context("setting a directory's mode");
        }
        set_times(&d, &leaf, mtime, true).context("setting a directory's time")?;
    }
    Ok(counts)
}

/// The first mtime of generated entries (2023-11-14), one second apart.
const GENERATED_MTIME: i64 = 1_700_000_000;

/// Formats a ustar header for `name` (a GNU long-name entry is emitted before it by the
/// caller when the name exceeds 100 bytes).
pub fn ustar_header(
    name: &[u8],
    kind: u8,
    size: u64,
    mode: u32,
    mtime: i64,
    link: &[u8],
) -> [u8; BLOCK] {
    let mut b = [0u8; BLOCK];
    let n = name.len().min(100);
    b[..n].copy_from_slice(&name[..n]);
    let put = |b: &mut [u8; BLOCK], at: usize, len: usize, v: u64| {
        let s = format!("{v:0width$o}\0", width = len - 1);
        b[at..at + len].copy_from_slice(s.as_bytes());
    };
    put(&mut b, 100, 8, u64::from(mode));
    put(&mut b, 108, 8, 0);
    put(&mut b, 116, 8, 0);
    put(&mut b, 124, 12, size);
    put(&mut b, 136, 12, mtime as u64);
    b[156] = kind;
    let l = link.len().min(100);
    b[157..157 + l].copy_from_slice(&link[..l]);
    b[257..263].copy_from_slice(b"ustar\0");
    b[263..265].copy_from_slice(b"00");
    b[148..156].fill(b' ');
    let sum: u64 = b.iter().map(|&x| u64::from(x)).sum();
    let s = format!("{sum:06o}\0 ");
    b[148..156].copy_from_slice(s.as_bytes());
    b
}

/// The header blocks (a GNU `L` entry first when the name is long) for one entry.
fn entry_headers(name: &[u8], kind: u8, size: u64, mode: u32, mtime: i64, link: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(3 * BLOCK);
    if name.len() > 100 {
        let mut long = name.to_vec();
        long.push(0);
        out.extend_from_slice(&ustar_header(
            b"././@LongLink",
            b'L',
            long.len() as u64,
            0,
            0,
            b"",
        ));
        out.extend_from_slice(&long);
        out.resize(out.len() + padding(long.len() as u64) as usize, 0);
    }
    out.extend_from_slice(&ustar_header(name, kind, size, mode, mtime, link));
    out
}

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
mod tests {
    use super::*;
    use crate::context::{PhaseKind, PhaseSpec, Primary};
    use crate::data::DataPool;
    use crate::error::exit_code;
    use crate::policy::{DataPolicy, SyncPolicy};
    use crate::workload::testutil::in_context;
    use crate::workload::WorkloadSpec;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    const SPEC: PhaseSpec = PhaseSpec {
        name: "x",
        kind: PhaseKind::Write,
        primary: Primary::MbPerS,
        ops_unit: "",
    };

    /// A tar archive made of (name, kind, data, link) entries, with end blocks.
    fn archive(entries: &[(&str, u8, &[u8], &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, kind, data, link) in entries {
            out.extend(entry_headers(
                name.as_bytes(),
                *kind,
                data.len() as u64,
                0o644,
                1_600_000_000,
                link.as_bytes(),
            ));
            out.extend_from_slice(data);
            out.resize(out.len() + padding(data.len() as u64) as usize, 0);
        }
        out.extend([0u8; 2 * BLOCK]);
        out
    }

    /// Extracts `bytes` into `<tmp>/in/x`; returns the result and whether anything appeared
    /// in `<tmp>/in` besides `x` or in `<tmp>` besides `in`.
    fn try_extract(bytes: Vec<u8>) -> (Result<Counts>, Vec<String>) {
        in_context(DataPolicy::Random, SyncPolicy::None, |cx| {
            let inner = cx.workdir().join("in");
            let root = inner.join("x");
            std::fs::create_dir_all(&root).unwrap();
            let res = std::sync::Mutex::new(None);
            let _ = cx.phase(&SPEC, 1, |w| {
                let r = extract(w, Box::new(io::Cursor::new(bytes.clone())), &root);
                let failed = r.is_err();
                *res.lock().unwrap() = Some(r);
                if failed {
                    bail!("failed")
                } else {
                    Ok(())
                }
            });
            let mut outside: Vec<String> = std::fs::read_dir(&inner)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n != "x")
                .collect();
            outside.extend(
                std::fs::read_dir(cx.workdir())
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .filter(|n| n != "in"),
            );
            (res.into_inner().unwrap().unwrap(), outside)
        })
    }

    #[test]
    fn hostile_archives_are_refused_and_write_nothing_outside() {
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            (
                "absolute",
                archive(&[("/tmp/evil", b'0', b"x", "")]),
                "absolute",
            ),
            ("dotdot", archive(&[("../evil", b'0', b"x", "")]), "'..'"),
            (
                "inner dotdot",
                archive(&[("a/../../evil", b'0', b"x", "")]),
                "'..'",
            ),
            (
                "symlink to /etc",
                archive(&[("etc", b'2', b"", "/etc")]),
                "outside",
            ),
            (
                "symlink up then through it",
                archive(&[("a", b'2', b"", ".."), ("a/evil", b'0', b"x", "")]),
                "outside",
            ),
            (
                "through an inside symlink",
                archive(&[
                    ("d/", b'5', b"", ""),
                    ("l", b'2', b"", "d"),
                    ("l/evil", b'0', b"x", ""),
                ]),
                "not a directory",
            ),
            (
                "hard link to /etc/passwd",
                archive(&[("p", b'1', b"", "/etc/passwd")]),
                "absolute",
            ),
            (
                "hard link up",
                archive(&[("p", b'1', b"", "../evil")]),
                "'..'",
            ),
        ];
        for (what, bytes, msg) in cases {
            let (res, outside) = try_extract(bytes);
            let err = format!("{:#}", res.expect_err(what));
            assert!(err.contains(msg), "{what}: {err}");
            assert!(
                outside.is_empty(),
                "{what}: wrote {outside:?} outside the target"
            );
        }
    }

    #[test]
    fn truncated_and_corrupt_archives_are_errors() {
        let good = archive(&[("f", b'0', &[7u8; 3000], "")]);
        for cut in [100, 512 + 1000, 512 + 3000] {
            let (res, _) = try_extract(good[..cut].to_vec());
            let err = format!("{:#}", res.unwrap_err());
            assert!(err.contains("truncated"), "cut at {cut}: {err}");
        }
        let mut bad = good.clone();
        bad[10] ^= 0x20;
        let err = format!("{:#}", try_extract(bad).0.unwrap_err());
        assert!(err.contains("checksum"), "{err}");
        let (res, _) = try_extract(good);
        assert_eq!(res.unwrap().bytes, 3000);
    }

    #[test]
    fn generated_stream_is_a_valid_tar_and_round_trips() {
        let corpus = Corpus::new("source-tree", 0.01, 5).unwrap();
        let pool = DataPool::new(DataPolicy::Text, 1);
        let mut bytes = Vec::new();
        TarStream::new(&corpus, pool.source(0))
            .read_to_end(&mut bytes)
            .unwrap();
        let t = corpus.totals();
        // GNU tar lists it without complaint.
        let tmp = tempfile::tempdir().unwrap();
        let tar_path = tmp.path().join("a.tar");
        std::fs::write(&tar_path, &bytes).unwrap();
        let out = std::process::Command::new("tar")
            .arg("tf")
            .arg(&tar_path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let listed = String::from_utf8_lossy(&out.stdout).lines().count() as u64;
        assert_eq!(listed, t.files + t.dirs + t.symlinks);
        // GNU tar's extraction and ours agree file by file.
        let by_tar = tmp.path().join("tar");
        std::fs::create_dir(&by_tar).unwrap();
        let st = std::process::Command::new("tar")
            .args(["xf"])
            .arg(&tar_path)
            .arg("-C")
            .arg(&by_tar)
            .status()
            .unwrap();
        assert!(st.success());
        let bytes2 = bytes.clone();
        in_context(DataPolicy::Text, SyncPolicy::None, |cx| {
            let root = cx.workdir().join("x");
            std::fs::create_dir(&root).unwrap();
            let got = std::sync::Mutex::new(Counts::default());
            cx.phase(&SPEC, 1, |w| {
                *got.lock().unwrap() =
                    extract(w, Box::new(io::Cursor::new(bytes2.clone())), &root)?;
                Ok(())
            })
            .unwrap();
            let c = got.into_inner().unwrap();
            assert_eq!(
                (c.files, c.dirs, c.symlinks, c.bytes),
                (t.files, t.dirs, t.symlinks, t.bytes)
            );
            let diff = std::process::Command::new("diff")
                .arg("-r")
                .arg(&by_tar)
                .arg(&root)
                .output()
                .unwrap();
            assert!(
                diff.status.success(),
                "{}",
                String::from_utf8_lossy(&diff.stdout)
            );
            for e in corpus.entries().take(300) {
                let (ours, theirs) = (root.join(e.path()), by_tar.join(e.path()));
                let (a, b) = (
                    std::fs::symlink_metadata(&ours).unwrap(),
                    std::fs::symlink_metadata(&theirs).unwrap(),
                );
                assert_eq!(
                    (a.mode(), a.mtime(), a.len()),
                    (b.mode(), b.mtime(), b.len()),
                    "{}",
                    e.path()
                );
                if let Entry::Symlink { target, .. } = e {
                    assert_eq!(std::fs::read_link(&ours).unwrap(), Path::new(&target));
                }
            }
        });
    }

    #[test]
    fn long_names_pax_and_replacing_files() {
        let long = format!("{}/f", "d".repeat(150));
        let mut bytes = archive(&[
            (&format!("{}/", "d".repeat(150)), b'5', b"", ""),
            (&long, b'0', b"abc", ""),
        ]);
        bytes.truncate(bytes.len() - 2 * BLOCK);
        let rec = b"20 path=paxname.txt\n";
        bytes.extend(ustar_header(
            b"PaxHeader",
            b'x',
            rec.len() as u64,
            0o644,
            0,
            b"",
        ));
        bytes.extend_from_slice(rec);
        bytes.resize(bytes.len() + padding(rec.len() as u64) as usize, 0);
        bytes.extend(ustar_header(b"short", b'0', 2, 0o640, 1_600_000_000, b""));
        bytes.extend_from_slice(b"hi");
        bytes.resize(bytes.len() + padding(2) as usize, 0);
        // The same name again: replaced.
        bytes.extend(ustar_header(
            b"paxname.txt",
            b'0',
            1,
            0o600,
            1_600_000_000,
            b"",
        ));
        bytes.extend_from_slice(b"!");
        bytes.resize(bytes.len() + padding(1) as usize, 0);
        bytes.extend([0u8; 2 * BLOCK]);
        in_context(DataPolicy::Random, SyncPolicy::Each, |cx| {
            let root = cx.workdir().join("x");
            std::fs::create_dir(&root).unwrap();
            cx.phase(&SPEC, 1, |w| {
                extract(w, Box::new(io::Cursor::new(bytes.clone())), &root).map(|_| ())
            })
            .unwrap();
            assert_eq!(std::fs::read(root.join(&long)).unwrap(), b"abc");
            assert_eq!(std::fs::read(root.join("paxname.txt")).unwrap(), b"!");
            assert!(
                !root.join("short").exists(),
                "the pax path replaced the name"
            );
            let mode = std::fs::metadata(root.join("paxname.txt"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        });
    }

    #[test]
    fn bad_parameters_are_usage_errors() {
        for bad in [
            "scale=0",
            "profile=kernel",
            "archive=/nonexistent.tar",
            "archive=/etc/passwd",
        ] {
            let err = WorkloadSpec::parse(&format!("untar:{bad}")).err();
            let err = err.unwrap_or_else(|| panic!("{bad} was accepted"));
            assert_eq!(exit_code(&err), 2, "{bad}: {err:#}");
        }
    }

    #[test]
    fn end_to_end_generated_web_cache() {
        let spec = WorkloadSpec::parse("untar:scale=0.002").unwrap();
        let workload = (spec.info.build)(&spec.params).unwrap();
        in_context(DataPolicy::Random, SyncPolicy::End, |cx| {
            workload.run(cx).unwrap();
            let p = cx.phases();
            assert_eq!(p[0].extra["files"], 500.0);
            let corpus = Corpus::new("web-cache", 0.002, cx.seed()).unwrap().totals();
            assert_eq!(p[0].bytes_written, corpus.bytes);
            assert_eq!(
                p[1].ops,
                corpus.files + corpus.dirs + 1,
                "files, dirs and the root"
            );
            assert_eq!(std::fs::read_dir(cx.workdir()).unwrap().count(), 0);
        });
    }
}
