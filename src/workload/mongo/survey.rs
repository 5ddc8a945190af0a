//! What mongo.pl recorded after its Create and Copy phases, measured untimed: directories,
//! files, and fragmentation — the physically contiguous runs ("fragments") of every file
//! larger than 16 KiB, divided by the number of such files.
//!
//! The original counted runs with its `map5` helper, one FIBMAP ioctl per block; this uses
//! FIEMAP (`FS_IOC_FIEMAP` with `FIEMAP_FLAG_SYNC`, which like FIBMAP on ext4 first writes
//! delayed allocations out), merging extents that continue each other logically and
//! physically, so a run split only by the extent format's length limit counts once.

use anyhow::{Context, Result};
use std::fs::{self, File};
use std::os::fd::AsRawFd;
use std::path::Path;

/// Files larger than this many bytes are surveyed (`find -size +16k`; mongo.pl's
/// `size > 16384`).
pub const FRAG_MIN_BYTES: u64 = 16 << 10;

/// What a survey found below a directory (the directory itself not counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Survey {
    pub dirs: u64,
    pub files: u64,
    pub files_over_16k: u64,
    /// Contiguous runs of the files over 16 KiB; `None` when the filesystem has no FIEMAP
    /// (tmpfs).
    pub fragments: Option<u64>,
}

impl Survey {
    /// Fragments per file over 16 KiB, when both are known and there are such files.
    pub fn fragmentation(&self) -> Option<f64> {
        let frags = self.fragments?;
        (self.files_over_16k > 0).then(|| frags as f64 / self.files_over_16k as f64)
    }
}

/// Walks everything below `root`: directories, regular files (lstat), and the fragments
/// of files over 16 KiB.
pub fn survey(root: &Path) -> Result<Survey> {
    let mut s = Survey {
        fragments: Some(0),
        ..Default::default()
    };
    walk(root, &mut s)?;
    Ok(s)
}

fn walk(dir: &Path, s: &mut Survey) -> Result<()> {
    let entries = fs::read_dir(dir).with_context(|| format!("readdir {}", dir.display()))?;
    for entry in entries {
        let path = entry
            .with_context(|| format!("readdir {}", dir.display()))?
            .path();
        let md =
            fs::symlink_metadata(&path).with_context(|| format!("lstat {}", path.display()))?;
        if md.is_dir() {
            s.dirs += 1;
            walk(&path, s)?;
        } else if md.is_file() {
            s.files += 1;
            if md.len() > FRAG_MIN_BYTES {
                s.files_over_16k += 1;
                if let Some(total) = s.fragments {
                    s.fragments = runs(&path)?.map(|n| total + n);
                }
            }
        }
    }
    Ok(())
}

const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B; // _IOWR('f', 11, struct fiemap)
const FIEMAP_FLAG_SYNC: u32 = 0x1;
const FIEMAP_EXTENT_LAST: u32 = 0x1;
const EXTENTS_PER_CALL: usize = 128;

/// `struct fiemap_extent` of linux/fiemap.h.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Extent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

/// `struct fiemap` of linux/fiemap.h followed by room for its extents.
#[repr(C)]
struct FiemapBuf {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
    extents: [Extent; EXTENTS_PER_CALL],
}

/// The physically contiguous runs of `path`'s data, or `None` when the filesystem does not
/// support FIEMAP.
pub fn runs(path: &Path) -> Result<Option<u64>> {
    let f = File::open(path).with_context(|| format!("open {}", path.display()))?;
    let mut runs = 0u64;
    let mut prev: Option<Extent> = None;
    let mut start = 0u64;
    loop {
        let mut buf = FiemapBuf {
            start,
            length: u64::MAX - start,
            flags: FIEMAP_FLAG_SYNC,
            mapped_extents: 0,
            extent_count: EXTENTS_PER_CALL as u32,
            reserved: 0,
            extents: [Extent::default(); EXTENTS_PER_CALL],
        };
        // SAFETY: FS_IOC_FIEMAP reads and fills a `struct fiemap` whose `extent_count`
        // extents follow it; `buf` has exactly that layout and lives across the call.
        let rc = unsafe { libc::ioctl(f.as_raw_fd(), FS_IOC_FIEMAP as _, &mut buf) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            return match err.raw_os_error() {
                Some(libc::EOPNOTSUPP | libc::ENOTTY) => Ok(None),
                _ => Err(err).with_context(|| format!("FIEMAP {}", path.display())),
            };
        }
        let got = &buf.extents[..buf.mapped_extents as usize];
        for e in got {
            let continues = prev.is_some_and(|p| {
                p.logical + p.length == e.logical && p.physical + p.length == e.physical
            });
            if !continues {
                runs += 1;
            }
            prev = Some(*e);
        }
        match got.last() {
            Some(e) if e.flags & FIEMAP_EXTENT_LAST == 0 => start = e.logical + e.length,
            _ => return Ok(Some(runs)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn counts_dirs_files_and_big_files() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/small"), vec![1u8; 100]).unwrap();
        fs::write(root.join("a/b/edge"), vec![1u8; 16384]).unwrap();
        fs::write(root.join("big"), vec![1u8; 16385]).unwrap();
        std::os::unix::fs::symlink("big", root.join("link")).unwrap();
        let s = survey(root).unwrap();
        assert_eq!((s.dirs, s.files, s.files_over_16k), (2, 3, 1));
        // On a filesystem with FIEMAP a fresh 16 KiB + 1 B file is one run (or more when
        // the allocator split it); tmpfs has none.
        if let Some(f) = s.fragments {
            assert!(f >= 1, "{f}");
            assert_eq!(s.fragmentation(), Some(f as f64));
        }
    }

    #[test]
    fn a_contiguous_file_is_one_run() {
        // /var/tmp is disk-backed here (ext4 or similar with FIEMAP); skip where it is not.
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = tmp.path().join("f");
        let mut f = File::create(&p).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        match runs(&p).unwrap() {
            None => eprintln!("SKIP: /var/tmp has no FIEMAP"),
            Some(n) => assert!((1..=4).contains(&n), "{n} runs for 1 MiB"),
        }
        let empty = tmp.path().join("e");
        File::create(&empty).unwrap();
        if let Some(n) = runs(&empty).unwrap() {
            assert_eq!(n, 0);
        }
    }
}
