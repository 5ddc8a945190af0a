//! Fragmentation probes for an aged filesystem (issue 38): how scattered its files are,
//! and how scattered its free space is, measured on the mounted filesystem after fsarena
//! filled and churned it.
//!
//! * **Files**: FIEMAP (`FS_IOC_FIEMAP`, `linux/fiemap.h`; kernel
//!   `Documentation/filesystems/fiemap.rst`) over every regular file of a tree, extents
//!   fetched [`BATCH`] at a time until `FIEMAP_EXTENT_LAST`, with `FIEMAP_FLAG_SYNC` so
//!   that delayed allocation is resolved first. Extents are merged into *fragments* as
//!   e2fsprogs' `filefrag` merges them, with one difference: an extent continues the
//!   previous fragment only when both its physical start is the previous physical end and
//!   its logical start the previous logical end, so a hole in a sparse file starts a new
//!   fragment here where `filefrag` counts a hole whose physical gap equals its logical gap
//!   as no break. For files without holes (all that fsarena writes) the counts are the
//!   same (checked against `filefrag` on ext4, xfs and btrfs in the tests). Inline data
//!   (`FIEMAP_EXTENT_DATA_INLINE`) is one fragment of its own.
//! * **Free space**, in the filesystem's own words where it has a tool for it: ext2/3/4
//!   `e2freefrag DEVICE` (its "Num. free extent", "Free blocks" × "Blocksize" and
//!   "Max. free extent"), xfs `xfs_db -r -c 'sb 0' -c 'p blocksize' -c 'freesp -s' DEVICE`
//!   ("total free extents", "total free blocks" × blocksize; its histogram gives no exact
//!   largest extent, so none is reported); every other filesystem (btrfs first) a probe
//!   file: `fallocate` of min(free / 2, 1 GiB) rounded down to 1 MiB, its fragments
//!   counted by FIEMAP, then deleted — the allocator's answer to "give me this much",
//!   which says how scattered free space is only as far as the allocator looks.
//!
//! Before a device is read the mounted filesystem is synced and then frozen and thawed
//! again (`FIFREEZE`/`FITHAW`, what `fsfreeze -f; fsfreeze -u` does): syncfs alone only
//! forces XFS's log, and after 50 MiB (12800 blocks) were written and synced `xfs_db`
//! still counted the 60384 free blocks of the empty filesystem; after a freeze it counted
//! 47584. A freeze writes the metadata back in place (on ext4 it also empties the
//! journal). It lasts only as long as the two ioctls.

use crate::provision::fs::FsType;
use anyhow::{anyhow, bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Extents fetched per FIEMAP call.
pub const BATCH: usize = 256;
/// `FIEMAP_FLAG_SYNC`: sync the file before mapping it.
pub const FIEMAP_FLAG_SYNC: u32 = 0x0000_0001;
/// `FIEMAP_EXTENT_LAST`: the file's last extent.
pub const FIEMAP_EXTENT_LAST: u32 = 0x0000_0001;
/// `FIEMAP_EXTENT_DATA_INLINE`: data kept inside the metadata; no physical address.
pub const FIEMAP_EXTENT_DATA_INLINE: u32 = 0x0000_0200;
/// The largest probe file (1 GiB).
pub const PROBE_MAX_BYTES: u64 = 1 << 30;
/// Probe sizes are whole MiB.
const MIB: u64 = 1 << 20;

/// [`FreeSpace::method`] of ext2/3/4.
pub const E2FREEFRAG: &str = "e2freefrag";
/// [`FreeSpace::method`] of xfs.
pub const XFS_DB_FREESP: &str = "xfs_db freesp";
/// [`FreeSpace::method`] of every other filesystem.
pub const PROBE_FILE: &str = "probe file";

/// `struct fiemap` of `linux/fiemap.h` without its trailing extent array.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(super) struct FiemapHeader {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
}

/// `struct fiemap_extent` of `linux/fiemap.h`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(super) struct FiemapExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

/// A `struct fiemap` with room for [`BATCH`] extents, as the ioctl reads and writes it.
#[repr(C)]
struct FiemapBuf {
    head: FiemapHeader,
    extents: [FiemapExtent; BATCH],
}

/// `FS_IOC_FIEMAP` = `_IOWR('f', 11, struct fiemap)` (`linux/fs.h`).
pub(super) const FS_IOC_FIEMAP: libc::Ioctl = libc::_IOWR::<FiemapHeader>('f' as u32, 11);
/// `FIFREEZE` = `_IOWR('X', 119, int)` (`linux/fs.h`).
const FIFREEZE: libc::Ioctl = libc::_IOWR::<libc::c_int>('X' as u32, 119);
/// `FITHAW` = `_IOWR('X', 120, int)` (`linux/fs.h`).
const FITHAW: libc::Ioctl = libc::_IOWR::<libc::c_int>('X' as u32, 120);

/// One extent as FIEMAP reports it; offsets and length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub logical: u64,
    pub physical: u64,
    pub length: u64,
    /// `FIEMAP_EXTENT_*` flags.
    pub flags: u32,
}

/// Counts fragments as extents arrive, also across FIEMAP batches.
#[derive(Default)]
struct Fragments {
    count: u64,
    /// (logical end, physical end) of the previous extent; `None` after inline data.
    end: Option<(u64, u64)>,
}

impl Fragments {
    fn push(&mut self, e: &Extent) {
        let inline = e.flags & FIEMAP_EXTENT_DATA_INLINE != 0;
        if inline || self.end != Some((e.logical, e.physical)) {
            self.count += 1;
        }
        self.end = (!inline).then(|| {
            (
                e.logical.saturating_add(e.length),
                e.physical.saturating_add(e.length),
            )
        });
    }
}

/// The physically discontiguous fragments of a file with `extents` (in logical order):
/// an extent continues the previous one when its logical and physical starts are the
/// previous extent's ends; inline data is a fragment of its own; no extents, 0.
pub fn count_fragments(extents: &[Extent]) -> u64 {
    let mut f = Fragments::default();
    extents.iter().for_each(|e| f.push(e));
    f.count
}

/// Every extent of `file`, in logical order, fetched [`BATCH`] per FIEMAP call.
pub fn extents(file: &File) -> std::io::Result<Vec<Extent>> {
    let mut all = Vec::new();
    let mut start = 0u64;
    loop {
        let mut buf = Box::new(FiemapBuf {
            head: FiemapHeader {
                fm_start: start,
                fm_length: u64::MAX - start,
                fm_flags: FIEMAP_FLAG_SYNC,
                fm_extent_count: BATCH as u32,
                ..FiemapHeader::default()
            },
            extents: [FiemapExtent::default(); BATCH],
        });
        let ptr: *mut FiemapBuf = &mut *buf;
        // SAFETY: `file` keeps the descriptor open for the call; `buf` is a `struct fiemap`
        // (repr(C), the layout of linux/fiemap.h) followed by room for `fm_extent_count`
        // extents, which is all the kernel writes.
        if unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP, ptr) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let n = (buf.head.fm_mapped_extents as usize).min(BATCH);
        let got = &buf.extents[..n];
        all.extend(got.iter().map(|e| Extent {
            logical: e.fe_logical,
            physical: e.fe_physical,
            length: e.fe_length,
            flags: e.fe_flags,
        }));
        let Some(last) = got.last() else { break };
        let next = last.fe_logical.saturating_add(last.fe_length);
        if last.fe_flags & FIEMAP_EXTENT_LAST != 0 || next <= start || next == u64::MAX {
            break;
        }
        start = next;
    }
    Ok(all)
}

/// Opens `path` for reading without following a symlink at its last component.
fn open_nofollow(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
}

/// The physically discontiguous fragments of the file at `path` ([`count_fragments`]
/// over its FIEMAP [`extents`]); 0 for a file with no extents (empty). Fails with the
/// ioctl's error (`EOPNOTSUPP` on tmpfs, which has no FIEMAP).
pub fn fragments(path: &Path) -> std::io::Result<u64> {
    Ok(count_fragments(&extents(&open_nofollow(path)?)?))
}

/// Whether `e` says the filesystem has no FIEMAP (`EOPNOTSUPP`; `ENOTTY` from a file
/// whose filesystem does not know the ioctl at all).
fn unsupported(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOTTY))
}

/// File fragmentation over a tree ([`files`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FileFrag {
    /// Regular files measured (those with at least one extent).
    pub files: u64,
    /// Their sizes (`st_size`) summed.
    pub bytes: u64,
    /// Mean fragments per file; 0 with no files.
    pub mean: f64,
    /// The 99th percentile of fragments per file, nearest-rank (the ⌈0.99·n⌉-th smallest);
    /// 0 with no files.
    pub p99: u64,
    /// Share (0..=1) of files with more than one fragment.
    pub fragmented_share: f64,
}

impl FileFrag {
    /// The figures of files with fragment counts `counts` (each ≥ 1) and `bytes` in all.
    pub fn of(counts: &[u64], bytes: u64) -> FileFrag {
        let n = counts.len();
        if n == 0 {
            return FileFrag {
                files: 0,
                bytes,
                mean: 0.0,
                p99: 0,
                fragmented_share: 0.0,
            };
        }
        let mut sorted = counts.to_vec();
        sorted.sort_unstable();
        // Nearest rank: the smallest value with at least 99 % of the files at or below it,
        // in integers (⌈99·n/100⌉) to stay clear of 0.99·n rounding up past n.
        let rank = (99 * n).div_ceil(100).max(1);
        FileFrag {
            files: n as u64,
            bytes,
            mean: counts.iter().sum::<u64>() as f64 / n as f64,
            p99: sorted[rank - 1],
            fragmented_share: counts.iter().filter(|&&c| c > 1).count() as f64 / n as f64,
        }
    }
}

/// Calls `each` with every regular file under `dir` (directories descended, symlinks
/// and other types neither followed nor measured).
fn walk(dir: &Path, each: &mut dyn FnMut(&Path, u64) -> Result<()>) -> Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .with_context(|| format!("the type of {}", path.display()))?;
        if kind.is_dir() {
            walk(&path, each)?;
        } else if kind.is_file() {
            let size = entry
                .metadata()
                .with_context(|| format!("stat {}", path.display()))?
                .size();
            each(&path, size)?;
        }
    }
    Ok(())
}

/// File fragmentation of every regular file under `root` ([`fragments`]; empty files are
/// not counted). One file that cannot be mapped fails the whole measurement; a
/// filesystem without FIEMAP (tmpfs) says so (a tree with no regular file there is 0 files).
pub fn files(root: &Path) -> Result<FileFrag> {
    let mut counts = Vec::new();
    let mut bytes = 0u64;
    walk(root, &mut |path, size| {
        let n = fragments(path).map_err(|e| {
            if unsupported(&e) {
                anyhow!(
                    "FIEMAP is unsupported on the filesystem of {} (asked about {}: {e}); \
                     file fragmentation cannot be measured there",
                    root.display(),
                    path.display()
                )
            } else {
                anyhow!(e).context(format!("FIEMAP of {}", path.display()))
            }
        })?;
        if n > 0 {
            counts.push(n);
            bytes += size;
        }
        Ok(())
    })?;
    Ok(FileFrag::of(&counts, bytes))
}

/// Free-space fragmentation ([`free_space`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FreeSpace {
    /// How it was measured: [`E2FREEFRAG`], [`XFS_DB_FREESP`] or [`PROBE_FILE`].
    pub method: &'static str,
    /// Free extents (the probe file's fragments).
    pub extents: u64,
    /// Free bytes (the probe file's size).
    pub free_bytes: u64,
    /// The largest free extent, where the tool reports it (e2freefrag only).
    pub largest_bytes: Option<u64>,
}

impl FreeSpace {
    /// Mean bytes per free extent: free bytes / extents; 0 with no extents.
    pub fn mean_extent_bytes(&self) -> f64 {
        if self.extents == 0 {
            0.0
        } else {
            self.free_bytes as f64 / self.extents as f64
        }
    }
}

/// The first whitespace-separated word after `key` on the line that starts with `key`.
fn word_after<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix(key))
        .and_then(|rest| rest.split_whitespace().next())
}

/// The number after `key`, or an error naming the tool and the missing line.
fn number_after(text: &str, key: &str, tool: &str) -> Result<u64> {
    let word = word_after(text, key)
        .ok_or_else(|| anyhow!("{tool} printed no '{key}' line; it printed:\n{text}"))?;
    word.parse()
        .with_context(|| format!("{tool}'s '{key}' is not a count: '{word}'"))
}

/// Parses `e2freefrag DEVICE`'s report (e2fsprogs `misc/e2freefrag.c`): "Blocksize: N
/// bytes", "Free blocks: N (P%)", "Max. free extent: N KB" (KB = 1024 bytes) and
/// "Num. free extent: N".
pub fn parse_e2freefrag(text: &str) -> Result<FreeSpace> {
    let tool = "e2freefrag";
    let block = number_after(text, "Blocksize:", tool)?;
    let free = number_after(text, "Free blocks:", tool)?;
    let max_kib = number_after(text, "Max. free extent:", tool)?;
    let extents = number_after(text, "Num. free extent:", tool)?;
    Ok(FreeSpace {
        method: E2FREEFRAG,
        extents,
        free_bytes: free * block,
        largest_bytes: Some(max_kib * 1024),
    })
}

/// Parses `xfs_db -r -c 'sb 0' -c 'p blocksize' -c 'freesp -s' DEVICE`: "blocksize = N",
/// then the histogram and "total free extents N", "total free blocks M".
pub fn parse_xfs_freesp(text: &str) -> Result<FreeSpace> {
    let tool = "xfs_db";
    let block = number_after(text, "blocksize =", tool)?;
    let extents = number_after(text, "total free extents", tool)?;
    let free = number_after(text, "total free blocks", tool)?;
    Ok(FreeSpace {
        method: XFS_DB_FREESP,
        extents,
        free_bytes: free * block,
        largest_bytes: None,
    })
}

/// One ioctl without argument data on the directory `dir`.
fn dir_ioctl(dir: &File, request: libc::Ioctl) -> std::io::Result<()> {
    let mut unused: libc::c_int = 0;
    // SAFETY: the descriptor is open for the call; FIFREEZE/FITHAW ignore their argument,
    // given a valid int anyway.
    if unsafe { libc::ioctl(dir.as_raw_fd(), request, &mut unused) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Writes everything of the filesystem mounted at `mountpoint` back in place, so that a
/// tool reading the device sees what the mounted filesystem sees: syncfs, then a freeze
/// and a thaw at once.
fn checkpoint(mountpoint: &Path) -> Result<()> {
    crate::probe::sys::syncfs(mountpoint)
        .with_context(|| format!("syncfs {}", mountpoint.display()))?;
    let dir =
        File::open(mountpoint).with_context(|| format!("opening {}", mountpoint.display()))?;
    dir_ioctl(&dir, FIFREEZE)
        .with_context(|| format!("freezing {} (FIFREEZE)", mountpoint.display()))?;
    dir_ioctl(&dir, FITHAW).with_context(|| {
        format!(
            "thawing {0} (FITHAW); it may still be frozen: fsfreeze -u {0}",
            mountpoint.display()
        )
    })
}

/// Free-space fragmentation of the filesystem `fs` on `device`, mounted at `mountpoint`:
/// `e2freefrag` for ext2/3/4, `xfs_db freesp` for xfs, a probe file in `probe_dir` (a
/// directory of that filesystem) for the others (module docs). Needs root for the
/// device and the freeze.
pub fn free_space(
    fs: FsType,
    device: &str,
    mountpoint: &Path,
    probe_dir: &Path,
) -> Result<FreeSpace> {
    match fs {
        FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => {
            checkpoint(mountpoint)?;
            let out = crate::cmd::run(&["e2freefrag", device])?;
            parse_e2freefrag(&out.stdout)
        }
        FsType::Xfs => {
            checkpoint(mountpoint)?;
            let argv = ["xfs_db", "-r", "-c", "sb 0", "-c", "p blocksize"];
            let out = crate::cmd::run(&[&argv[..], &["-c", "freesp -s", device]].concat())?;
            parse_xfs_freesp(&out.stdout)
        }
        _ => probe_file(probe_dir),
    }
}

/// Removes a file when dropped.
struct Removed(PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The probe size for `avail_bytes` free: min(free / 2, [`PROBE_MAX_BYTES`]), whole MiB.
pub fn probe_bytes(avail_bytes: u64) -> u64 {
    (avail_bytes / 2).min(PROBE_MAX_BYTES) / MIB * MIB
}

/// Allocates a probe file in `dir` ([`probe_bytes`] of the space available there),
/// counts its fragments and deletes it again.
fn probe_file(dir: &Path) -> Result<FreeSpace> {
    crate::probe::sys::syncfs(dir).with_context(|| format!("syncfs {}", dir.display()))?;
    let avail = crate::probe::sys::space(dir)?.avail_bytes;
    let size = probe_bytes(avail);
    if size == 0 {
        bail!(
            "too little free space for a free-space probe file in {} ({avail} bytes free; \
             it needs 2 MiB)",
            dir.display()
        );
    }
    let path = dir.join(format!(".fsarena-freespace-probe-{}", std::process::id()));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .with_context(|| format!("creating the probe file {}", path.display()))?;
    let _removed = Removed(path.clone());
    let len = libc::off_t::try_from(size).context("probe size")?;
    // SAFETY: `file` keeps the descriptor open for the call; fallocate takes no pointers.
    if unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("fallocate {size} bytes for {}", path.display()));
    }
    let extents = extents(&file).with_context(|| format!("FIEMAP of {}", path.display()))?;
    Ok(FreeSpace {
        method: PROBE_FILE,
        extents: count_fragments(&extents),
        free_bytes: size,
        largest_bytes: None,
    })
}

#[cfg(test)]
#[path = "frag_tests.rs"]
mod tests;
