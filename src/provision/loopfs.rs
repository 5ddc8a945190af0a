//! A real filesystem on a loop image: fallocate an image in `--image-dir`, attach a loop
//! device to it with direct I/O (as `losetup --direct-io=on`, but through the descriptor
//! that created the image: [`super::loopdev`]), mkfs it (no discard, no lazy init), mount
//! it; and back.
//!
//! Why each step is as it is (measured on a 2-vCPU KVM guest):
//! * The image is preallocated: a sparse image makes the host filesystem allocate blocks
//!   during the benchmark (where the image directory's filesystem has no fallocate, the
//!   image stays sparse and the target's notes say so).
//! * Direct I/O on the loop device keeps the host page cache from sitting under the
//!   benchmark (without it, "disk" writes ran at page-cache speed). Whether it took effect
//!   is read back from `/sys/block/loopN/loop/dio` and recorded; on a filesystem that
//!   refuses O_DIRECT (ramfs, tmpfs before Linux 6.6, some 9p and FUSE mounts) the loop
//!   device runs buffered and the target's notes say why.
//! * Every trial gets a fresh image and a fresh filesystem; `reset` remounts, which empties
//!   the filesystem's caches of this mount.

use super::age::{self, AgeSpec};
use super::{calibrate, fs::FsType, loopdev, mount, scratch, Env, FsTools, Target, TargetSpec};
use crate::cmd;
use crate::probe::sys;
use crate::result::{Aging, Provision, TargetInfo};
use crate::state::{self, Resource};
use anyhow::{ensure, Context, Result};
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// A loop-image target.
pub struct LoopTarget {
    info: TargetInfo,
    env: Env,
    fs: FsType,
    user_mkfs: Vec<String>,
    seq: u32,
    live: Option<Live>,
    provision: Provision,
    /// How each trial's filesystem is aged after mkfs, with the run's seed.
    age: Option<(AgeSpec, u64)>,
    /// The repetition the next trial is for (`independent` aging seeds each its own).
    rep: u32,
    /// How the last copy of a kept aged image was made, and its seconds.
    copied: Option<(&'static str, f64)>,
}

/// The image, loop device and mount of the current trial.
struct Live {
    image: PathBuf,
    device: Option<String>,
    mountpoint: PathBuf,
    mounted: bool,
}

impl LoopTarget {
    /// The same target under the name `name` (a plan's target name, e.g.
    /// `ext4+data=writeback`); its images and mount point are named after it.
    pub fn with_name(mut self, name: &str) -> Self {
        self.info.name = name.to_string();
        self
    }

    /// A target for `spec` (must be [`TargetSpec::Loop`]).
    pub fn new(spec: &TargetSpec, env: &Env) -> Self {
        let TargetSpec::Loop {
            fs,
            mkfs_opts,
            mount_opts,
            size_bytes,
        } = spec
        else {
            unreachable!("LoopTarget::new takes a loop spec")
        };
        let mut all_mkfs = fs.default_mkfs_opts();
        all_mkfs.extend(mkfs_opts.iter().cloned());
        Self {
            info: TargetInfo {
                name: fs.name().into(),
                fstype: fs.name().into(),
                kind: "loop".into(),
                mkfs_opts: all_mkfs,
                requested_mount_opts: mount_opts.clone(),
                size_bytes: *size_bytes,
                ..Default::default()
            },
            env: env.clone(),
            fs: *fs,
            user_mkfs: mkfs_opts.clone(),
            seq: 0,
            live: None,
            provision: Provision::default(),
            age: None,
            rep: 1,
            copied: None,
        }
    }

    /// The same target, its filesystem aged as `spec` says before each trial,
    /// deterministically from `seed`.
    pub fn with_age(mut self, spec: AgeSpec, seed: u64) -> Self {
        self.set_age(spec, seed);
        self
    }

    /// [`Self::with_age`] in place.
    pub fn set_age(&mut self, spec: AgeSpec, seed: u64) {
        self.info.age = Some(spec.canonical());
        self.age = Some((spec, seed));
    }

    /// Creates a preallocated image (a copy of `from`, a kept aged image, when given) and
    /// attaches it; records both in the state file.
    fn attach_new_image(&mut self, from: Option<&File>) -> Result<Live> {
        state::ensure_owned_dir(&self.env.image_dir)?;
        self.seq += 1;
        let image = self.env.image_dir.join(format!(
            "{}-{}-{}.img",
            self.env.run_id, self.info.name, self.seq
        ));
        let mountpoint = self
            .env
            .image_dir
            .join("mnt")
            .join(format!("{}-{}", self.env.run_id, self.info.name));
        let recorded = Resource::Image {
            path: image.clone(),
        };
        self.env.state.add(recorded.clone())?;
        let f = match loopdev::create_image(&image) {
            Ok(f) => f,
            Err(e) => {
                // Not created, so not ours to delete (it may be someone else's file).
                let _ = self.env.state.remove(&recorded);
                return Err(e).with_context(|| format!("creating image {}", image.display()));
            }
        };
        match self.allocate_and_attach(f, &image, from) {
            Ok(device) => Ok(Live {
                image,
                device: Some(device),
                mountpoint,
                mounted: false,
            }),
            Err(e) => {
                // Nothing holds the image yet to release it later: undo it now (this also
                // detaches a loop device losetup attached before a later step failed).
                if state::undo(&recorded).is_ok() {
                    let _ = self.env.state.remove(&recorded);
                }
                Err(e)
            }
        }
    }

    /// Preallocates the new image `f`, attaches a loop device to that open file (not to its
    /// name, which someone could have swapped since) and records it; returns the device.
    /// Where the image directory's filesystem has no fallocate, or refuses O_DIRECT, the
    /// image stays sparse, or the loop device buffered, and the target's notes say so.
    fn allocate_and_attach(
        &mut self,
        f: File,
        image: &Path,
        from: Option<&File>,
    ) -> Result<String> {
        let started = std::time::Instant::now();
        let allocated = match from {
            Some(kept) => age::kept::copy(kept, &f, self.info.size_bytes)
                .map(|how| self.copied = Some((how, started.elapsed().as_secs_f64())))
                .map_err(|e| std::io::Error::other(format!("copying the kept aged image: {e:#}"))),
            None => fallocate(&f, self.info.size_bytes),
        };
        match allocated {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
                f.set_len(self.info.size_bytes)
                    .with_context(|| format!("sizing {}", image.display()))?;
                self.note(format!(
                    "image not preallocated: {} has no fallocate, so it allocates while \
                     the benchmark writes",
                    self.image_fs()
                ));
            }
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "preallocating {} bytes for {}",
                        self.info.size_bytes,
                        image.display()
                    )
                })
            }
        }
        let attached = loopdev::attach(&f, image)?;
        let device = attached.device;
        self.env.state.add(Resource::Loop {
            device: device.clone(),
            image: image.to_path_buf(),
        })?;
        self.info.loop_direct_io = Some(attached.direct_io);
        if !attached.direct_io && loopdev::refuses_o_direct(&f) {
            self.note(format!(
                "buffered loop device: {} refuses O_DIRECT, so the host page cache \
                 sits under the device",
                self.image_fs()
            ));
        }
        Ok(device)
    }

    /// Where this target's aged image is kept, when it is aged with `--age-cache on`.
    fn kept(&self) -> Option<age::kept::Kept> {
        let (spec, seed) = self.age?;
        let seed = spec.seed_for(seed, self.rep);
        age::kept::Kept::of(
            &self.env.image_dir,
            self.fs,
            &self.info.mkfs_opts,
            &self.info.requested_mount_opts,
            self.info.size_bytes,
            spec,
            seed,
        )
    }

    /// Keeps a copy of the freshly aged image as `kept`: unmounted for the copy (so that
    /// everything is on the image), mounted again after.
    fn keep(&mut self, kept: &age::kept::Kept, aging: &Aging) -> Result<()> {
        let live = self.live.as_mut().context("no image")?;
        if live.mounted {
            mount::unmount(&self.env.state, &live.mountpoint)?;
            live.mounted = false;
        }
        let image = File::options()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&live.image)
            .with_context(|| format!("opening {}", live.image.display()))?;
        kept.keep(&self.env.state, &image, self.info.size_bytes, aging)
            .with_context(|| {
                format!(
                    "keeping the aged image in {} (--age-cache off ages every trial anew \
                     and keeps nothing)",
                    kept.image().display()
                )
            })?;
        self.mount_now()?;
        Ok(())
    }

    /// The image directory's filesystem, for a note: `the image directory's ramfs`.
    fn image_fs(&self) -> String {
        match super::dir::fstype_of(&self.env.image_dir) {
            Some(fs) => format!("the image directory's {fs}"),
            None => "the image directory's filesystem".into(),
        }
    }

    /// Adds `text` to the target's notes once (every trial attaches anew), and says it on
    /// stderr the first time.
    fn note(&mut self, text: String) {
        if !self.info.notes.contains(&text) {
            crate::term::stderr_note(&format!("fsarena: {}: {text}", self.info.name));
            self.info.notes.push(text);
        }
    }

    fn device(&self) -> Result<&str> {
        self.live
            .as_ref()
            .and_then(|l| l.device.as_deref())
            .context("no loop device attached")
    }

    fn mount_now(&mut self) -> Result<f64> {
        let dev = self.device()?.to_string();
        let live = self.live.as_mut().context("no image")?;
        let secs = mount::mount(
            &self.env.state,
            self.fs.mount_type(),
            &dev,
            &live.mountpoint,
            &self.info.requested_mount_opts,
        )?;
        live.mounted = true;
        Ok(secs)
    }

    fn release(&mut self) -> Result<()> {
        let Some(mut live) = self.live.take() else {
            return Ok(());
        };
        // Every step is tried whatever failed before it (a full disk, a busy mount): what
        // one step leaves is reported, never a reason to leave the rest.
        let mut failed = Vec::new();
        if live.mounted && crate::signals::stop_requested() {
            // The run stops: what is still dirty in this throw-away filesystem need not
            // reach the image that is deleted next (writing it back made umount take
            // seconds after a signal).
            shut_down(&live.mountpoint);
        }
        if live.mounted {
            match mount::unmount(&self.env.state, &live.mountpoint) {
                Ok(s) => self.provision.umount_s = Some(s),
                Err(e) => failed.push(format!("{e:#}")),
            }
            live.mounted = false;
        }
        let mut undo = |r: Resource| match state::undo(&r) {
            Ok(_) => {
                let _ = self.env.state.remove(&r);
            }
            Err(e) => failed.push(format!("{e:#}")),
        };
        if let Some(dev) = live.device.take() {
            undo(Resource::Loop {
                device: dev,
                image: live.image.clone(),
            });
        }
        undo(Resource::Image {
            path: live.image.clone(),
        });
        if !failed.is_empty() {
            anyhow::bail!("{}", failed.join("; "));
        }
        Ok(())
    }
}

/// Shuts the filesystem mounted at `mountpoint` down without writing back what is dirty
/// (`FS_IOC_SHUTDOWN` with `NOLOGFLUSH`, which ext4, xfs, f2fs and btrfs share), so that
/// its umount is quick; every later operation on it fails. Best effort: a filesystem
/// without it is unmounted as usual.
fn shut_down(mountpoint: &Path) {
    /// `_IOR('X', 125, __u32)`.
    const FS_IOC_SHUTDOWN: libc::c_ulong = 0x8004_587d;
    const NOLOGFLUSH: u32 = 2;
    let Ok(dir) = File::open(mountpoint) else {
        return;
    };
    crate::cmd::record(&format!(
        "(ioctl FS_IOC_SHUTDOWN nologflush) {}",
        mountpoint.display()
    ));
    let flags = NOLOGFLUSH;
    // SAFETY: the ioctl reads one u32 from a valid pointer; `dir` is an open descriptor.
    unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&dir),
            FS_IOC_SHUTDOWN,
            &flags,
        )
    };
}

/// Allocates `len` bytes of real blocks for `f` (not a sparse file).
fn fallocate(f: &File, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: fallocate on an open descriptor with mode 0 and a valid range.
    let rc = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, len as libc::off_t) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether unmounting and mounting a loop filesystem again leaves nothing of it cached. The
/// unmount evicts the filesystem's pages, dentries and inodes, and the loop device's own
/// page cache goes at its last close (an umount); with the loop in direct-I/O mode the host
/// never caches the image's pages either. Then dropping every cache of the machine
/// (`drop_caches`) adds nothing cold and costs noise: every other process reads its files
/// back from the disk during the next phase. Measured on ext4 (docs/validation.md, "Noise
/// between repetitions"): the cold phases read as many bytes from the device either way,
/// while the disk's reads during A/A runs fell from 214 to 98 MB/s and the phases ran
/// 7–20% faster under the same load.
/// Without direct I/O (`Some(false)`, or not known) the image's pages sit in the host's
/// page cache, and only a drop empties them.
pub(crate) fn remount_is_cold(loop_direct_io: Option<bool>) -> bool {
    loop_direct_io == Some(true)
}

impl Target for LoopTarget {
    fn state(&self) -> Option<std::sync::Arc<crate::state::State>> {
        Some(std::sync::Arc::clone(&self.env.state))
    }
    fn info(&self) -> &TargetInfo {
        &self.info
    }

    fn calibrate(&mut self) -> Result<()> {
        let live = self.attach_new_image(None)?;
        self.live = Some(live);
        let bytes = calibrate::CALIBRATE_BYTES.min(self.info.size_bytes / 2);
        let rates = calibrate::measure(self.device()?, bytes);
        self.release()?;
        self.seq = 0;
        rates?.record(&mut self.info);
        Ok(())
    }

    fn prepare(&mut self) -> Result<PathBuf> {
        self.release()?;
        let kept = self.kept();
        let reuse = match &kept {
            Some(k) => k.open(self.info.size_bytes)?,
            None => None,
        };
        let live = self.attach_new_image(reuse.as_ref().map(|r| &r.0))?;
        self.live = Some(live);
        let dev = self.device()?.to_string();
        let mkfs_s = match reuse {
            Some(_) => None,
            None => {
                let argv = self.fs.mkfs_argv(&dev, &self.user_mkfs);
                Some(cmd::run_stoppable(&argv).context("mkfs failed")?.seconds)
            }
        };
        // mkfs may have ended just as a stop was asked for: no mount then.
        crate::signals::check_stop()?;
        let mount_s = self.mount_now()?;
        let mp = self
            .live
            .as_ref()
            .map(|l| l.mountpoint.clone())
            .context("no mount")?;
        self.info.mount_opts = mount::effective_options(&mp).unwrap_or_default();
        let space = sys::space(&mp)?;
        self.provision = Provision {
            mkfs_s,
            mount_s: Some(mount_s),
            umount_s: None,
            capacity_bytes: Some(space.capacity_bytes),
            free_bytes: Some(space.free_bytes),
            aging: None,
        };
        if let Some((spec, seed)) = self.age {
            let seed = spec.seed_for(seed, self.rep);
            let aging = match reuse {
                Some((_, aging)) => Aging {
                    seed: Some(seed),
                    reused: true,
                    copy_s: self.copied.map(|c| c.1),
                    copy_how: self.copied.map(|c| c.0.to_string()),
                    ..aging
                },
                None => {
                    let done = age::age_mounted(&mp, &spec, seed, &self.info.name)?;
                    FsTools::unmount(self)?;
                    self.mount_now()?;
                    let aging =
                        age::measure(&mp, &spec, seed, &done, &self.info.name, self.fs, &dev)?;
                    if let Some(k) = &kept {
                        self.keep(k, &aging)?;
                    }
                    aging
                }
            };
            self.provision.free_bytes = Some(sys::space(&mp)?.free_bytes);
            self.provision.aging = Some(aging);
        }
        let work = mp.join("work");
        std::fs::create_dir(&work).with_context(|| format!("creating {}", work.display()))?;
        Ok(work)
    }

    /// Before a cold phase: syncfs, unmount, mount again — and drop the machine's caches
    /// only when the remount does not empty them (`remount_is_cold`).
    fn reset(&mut self) -> Result<()> {
        let mp = self
            .live
            .as_ref()
            .map(|l| l.mountpoint.clone())
            .context("no mount")?;
        sys::syncfs(&mp).ok();
        if let Some(live) = self.live.as_mut() {
            if live.mounted {
                mount::unmount(&self.env.state, &mp)?;
                live.mounted = false;
            }
        }
        if !remount_is_cold(self.info.loop_direct_io) {
            sys::drop_caches()?;
        }
        self.mount_now()?;
        Ok(())
    }

    fn device_stat(&self) -> Option<PathBuf> {
        let dev = self.live.as_ref()?.device.as_ref()?;
        Some(
            Path::new("/sys/block")
                .join(dev.trim_start_matches("/dev/"))
                .join("stat"),
        )
    }

    fn provision(&self) -> Provision {
        self.provision.clone()
    }

    fn teardown(&mut self) -> Result<()> {
        self.release()
    }

    fn set_repetition(&mut self, rep: u32) {
        self.rep = rep;
    }

    fn tools(&mut self) -> Option<&mut dyn FsTools> {
        Some(self)
    }
}

impl LoopTarget {
    /// The attached loop device, which must not be mounted (for mkfs and fsck).
    fn unmounted_device(&self, what: &str) -> Result<String> {
        let live = self.live.as_ref().context("no loop device attached")?;
        ensure!(
            !live.mounted,
            "{what} needs the filesystem unmounted; it is mounted at {}",
            live.mountpoint.display()
        );
        Ok(self.device()?.to_string())
    }
}

impl FsTools for LoopTarget {
    fn fstype(&self) -> FsType {
        self.fs
    }

    fn unmount(&mut self) -> Result<()> {
        if let Some(live) = self.live.as_mut() {
            if live.mounted {
                mount::unmount_once(&self.env.state, &live.mountpoint)?;
                live.mounted = false;
            }
        }
        Ok(())
    }

    fn mount(&mut self) -> Result<()> {
        let live = self.live.as_ref().context("no loop device attached")?;
        if !live.mounted {
            self.mount_now()?;
        }
        Ok(())
    }

    fn mkfs(&mut self) -> Result<()> {
        let dev = self.unmounted_device("mkfs")?;
        cmd::run_stoppable(&self.fs.mkfs_argv(&dev, &self.user_mkfs)).context("mkfs failed")?;
        Ok(())
    }

    fn fsck(&mut self) -> Result<()> {
        let dev = self.unmounted_device("fsck")?;
        let argv = self
            .fs
            .fsck_argv(&dev)
            .with_context(|| format!("{} has no read-only checker", self.fs.name()))?;
        cmd::run_stoppable(&argv)
            .with_context(|| format!("the read-only check of {dev} found damage or failed"))?;
        Ok(())
    }

    fn mkfs_accepts(&mut self, size_bytes: u64) -> Result<bool> {
        scratch::mkfs_accepts(
            &self.env,
            self.fs,
            &self.user_mkfs,
            &self.info.name,
            size_bytes,
        )
    }

    fn twin(&self) -> Option<super::recorded::Twin> {
        Some(super::recorded::Twin {
            fs: self.fs,
            mkfs_opts: self.user_mkfs.clone(),
            mount_opts: self.info.requested_mount_opts.clone(),
            image_dir: self.env.image_dir.clone(),
            state: std::sync::Arc::clone(&self.env.state),
            name: self.info.name.clone(),
        })
    }
}

impl Drop for LoopTarget {
    fn drop(&mut self) {
        let _ = self.release();
    }
}
