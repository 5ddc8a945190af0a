//! Kept aged images: the first trial of an aged target keeps a copy of its image once aged
//! (in `IMAGE_DIR/aged/`, keyed by everything the aged state depends on), and every later
//! trial starts from a fresh copy of it instead of aging again. The copy is a reflink where
//! the image directory's filesystem has them (btrfs, xfs), else a full copy; it is made
//! before the trial starts, so it is never timed. `fsarena cleanup --aged` removes them.
//!
//! A kept image is trusted only as fsarena left it: a regular file (not followed through a
//! symlink) owned by this user, writable by nobody else, beside its record (`.json`, the
//! aging figures the trials that reuse it report). Both are written under a temporary name
//! recorded in the state file, and renamed into place only when complete: a run killed
//! while keeping leaves only what `fsarena cleanup` removes.

use super::AgeSpec;
use crate::provision::fs::FsType;
use crate::provision::TargetSpec;
use crate::result::Aging;
use crate::state::{Resource, State};
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The subdirectory of the image directory that holds kept images.
pub const DIR: &str = "aged";

/// One kept image's place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    dir: PathBuf,
    stem: String,
}

impl Kept {
    /// The kept image for a filesystem `fs` made with `mkfs_opts`, mounted with
    /// `mount_opts`, of `size_bytes`, aged as `age` (canonical) from `seed`, by this
    /// version of fsarena.
    pub fn new(
        image_dir: &Path,
        fs: &str,
        mkfs_opts: &[String],
        mount_opts: &str,
        size_bytes: u64,
        age: &str,
        seed: u64,
    ) -> Kept {
        let key = serde_json::json!({
            "fs": fs, "mkfs": mkfs_opts, "mount": mount_opts, "size_bytes": size_bytes,
            "age": age, "seed": seed, "fsarena": env!("CARGO_PKG_VERSION"),
        });
        let hash = crate::fnv::fnv1a64(key.to_string().as_bytes());
        Kept {
            dir: image_dir.join(DIR),
            stem: format!("{fs}-{hash}"),
        }
    }

    /// Where a loop target of `fs` with all its mkfs options `mkfs_opts` (fsarena's
    /// defaults included) aged as `age` from `seed` keeps its image; `None` with
    /// `--age-cache off`.
    pub fn of(
        image_dir: &Path,
        fs: FsType,
        mkfs_opts: &[String],
        mount_opts: &str,
        size_bytes: u64,
        age: AgeSpec,
        seed: u64,
    ) -> Option<Kept> {
        let key = age.canonical();
        age.keep.then(|| {
            Kept::new(
                image_dir,
                fs.name(),
                mkfs_opts,
                mount_opts,
                size_bytes,
                &key,
                seed,
            )
        })
    }

    /// [`Self::of`] for the target `spec` (`None` but for loop targets): what the space
    /// check before a run counts.
    pub fn for_target(
        spec: &TargetSpec,
        age: AgeSpec,
        seed: u64,
        image_dir: &Path,
    ) -> Option<Kept> {
        // A served target's aged filesystem is the ext4 it serves, mounted with no options.
        let (fs, mkfs_opts, mount_opts, size_bytes) = match spec {
            TargetSpec::Loop {
                fs,
                mkfs_opts,
                mount_opts,
                size_bytes,
            } => (*fs, mkfs_opts, mount_opts.as_str(), *size_bytes),
            TargetSpec::Served {
                mkfs_opts,
                size_bytes,
                ..
            } => (
                crate::provision::served::BACKING,
                mkfs_opts,
                "",
                *size_bytes,
            ),
            _ => return None,
        };
        let mut all_mkfs = fs.default_mkfs_opts();
        all_mkfs.extend(mkfs_opts.iter().cloned());
        Kept::of(image_dir, fs, &all_mkfs, mount_opts, size_bytes, age, seed)
    }

    /// The image file.
    pub fn image(&self) -> PathBuf {
        self.dir.join(format!("{}.img", self.stem))
    }

    /// Its record: the aging that made it.
    pub fn record(&self) -> PathBuf {
        self.dir.join(format!("{}.json", self.stem))
    }

    /// The kept image, opened for reading, and its record; `None` when there is none yet.
    /// Refuses an image that is not a regular file of `size_bytes` owned by this user and
    /// writable by nobody else.
    pub fn open(&self, size_bytes: u64) -> Result<Option<(File, Aging)>> {
        let image = self.image();
        let f = match File::options()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&image)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("opening {}", image.display())),
        };
        let m = f.metadata()?;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if !m.is_file() || m.uid() != me || m.mode() & 0o022 != 0 || m.len() != size_bytes {
            bail!(
                "{} is not a kept image fsarena made (a regular file of {size_bytes} bytes, \
                 owned by uid {me}, writable by nobody else): remove it, or run \
                 `fsarena cleanup --aged`",
                image.display()
            );
        }
        let text = match read_nofollow(&self.record()) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(e).with_context(|| format!("reading {}", self.record().display()))
            }
        };
        let aging: Aging = serde_json::from_str(&text)
            .with_context(|| format!("reading {}", self.record().display()))?;
        Ok(Some((f, aging)))
    }

    /// Keeps a copy of the (unmounted) aged image `from` of `size_bytes`, with its record.
    /// The copy is written under a temporary name recorded in `state` and renamed into
    /// place when complete.
    pub fn keep(&self, state: &State, from: &File, size_bytes: u64, aging: &Aging) -> Result<()> {
        crate::owned::ensure_owned_dir(&self.dir)?;
        // Both written under names of this process, recorded in the state file first, so
        // that runs keeping the same image at once do not meet, and a killed one leaves
        // only what `fsarena cleanup` removes. The record goes into place last: an image
        // with its record is complete.
        let tmp = |ext: &str| {
            self.dir
                .join(format!(".{}.{}.{ext}.tmp", self.stem, std::process::id()))
        };
        let (image_tmp, record_tmp) = (tmp("img"), tmp("json"));
        let recorded = [&image_tmp, &record_tmp].map(|p| Resource::Image { path: p.clone() });
        for r in &recorded {
            state.add(r.clone())?;
        }
        let res = (|| -> Result<()> {
            let to = super::super::loopdev::create_image(&image_tmp)
                .with_context(|| format!("creating {}", image_tmp.display()))?;
            copy(from, &to, size_bytes)
                .with_context(|| format!("copying the aged image to {}", image_tmp.display()))?;
            let mut r = super::super::loopdev::create_image(&record_tmp)
                .with_context(|| format!("creating {}", record_tmp.display()))?;
            r.write_all(serde_json::to_string_pretty(aging)?.as_bytes())?;
            r.sync_all()?;
            std::fs::rename(&image_tmp, self.image())?;
            std::fs::rename(&record_tmp, self.record())?;
            Ok(())
        })();
        for r in &recorded {
            if res.is_err() {
                let _ = crate::state::undo(r);
            }
            let _ = state.remove(r);
        }
        res
    }
}

fn read_nofollow(path: &Path) -> std::io::Result<String> {
    let mut f = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let mut s = String::new();
    std::io::Read::read_to_string(&mut f, &mut s)?;
    Ok(s)
}

/// Copies `len` bytes of `from` into the empty file `to`: a reflink (`FICLONE`) where the
/// filesystem shares blocks, else preallocated and copied (`copy_file_range`), and synced:
/// a copy still being written back by the host would compete with the trial for the disk
/// (the loop device reads and writes the image with direct I/O beside it). Returns
/// `"reflink"` or `"copy"`.
pub fn copy(from: &File, to: &File, len: u64) -> Result<&'static str> {
    /// `_IOW(0x94, 9, int)`.
    const FICLONE: libc::c_ulong = 0x4004_9409;
    // SAFETY: FICLONE takes the source descriptor as its argument; both are open.
    let rc = unsafe { libc::ioctl(to.as_raw_fd(), FICLONE, from.as_raw_fd()) };
    if rc == 0 {
        to.sync_all().context("syncing the reflink")?;
        return Ok("reflink");
    }
    // SAFETY: fallocate on an open descriptor with mode 0 and a valid range.
    if unsafe { libc::fallocate(to.as_raw_fd(), 0, 0, len as libc::off_t) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EOPNOTSUPP) {
            return Err(e).context("preallocating the copy");
        }
    }
    crate::provision::loopdev::copy_range(from, to, 0, len)?;
    to.sync_all().context("syncing the copy")?;
    Ok("copy")
}
