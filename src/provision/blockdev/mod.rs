//! A whole disk or partition the user named with `--device` (or `device =` in a plan):
//! formatted with the target's filesystem for every trial, mounted, used, unmounted — and
//! never deleted or detached. Before anything writes to it, the [`interlock`]s are checked:
//! when the plan is made and again right before calibration and each mkfs.
//!
//! The target is named `FS@NAME` (`xfs@sdb`). What it takes to use a real disk, and every
//! refusal with its message: docs/devices.md.

pub mod interlock;
pub mod sysfs;

use super::{fs::FsType, mount, Env, Target, TargetSpec};
use crate::cmd;
use crate::error::usage;
use crate::probe::sys;
use crate::result::{Provision, TargetInfo};
use anyhow::{anyhow, Context, Result};
use std::path::{Path, PathBuf};

/// What the user confirmed for device targets, and where fsarena keeps its own files.
#[derive(Clone, Debug, Default)]
pub struct Consent {
    /// `--destroy-data-on`: each device target must be named here too.
    pub destroy_data_on: Vec<PathBuf>,
    /// `--force`: format even over a filesystem signature or partition table.
    pub force: bool,
    /// The image directory (its device is never formatted).
    pub image_dir: PathBuf,
    /// The result database, when known (its device is never formatted).
    pub db: Option<PathBuf>,
}

/// What the interlocks need again right before each write to the device.
#[derive(Clone, Debug)]
pub struct Guard {
    /// The confirmed device's number: the path must still name it.
    pub rdev: u64,
    /// Whether `--force` was given.
    pub force: bool,
    /// Paths whose device is never formatted, with what to call them.
    pub protect: Vec<(String, PathBuf)>,
}

/// Validates a device target — the one function `--device` and plan files call. Resolves
/// `path` (symlinks such as /dev/disk/by-id/… followed), checks every interlock, and returns
/// the spec. The error is a usage error saying what was found.
pub fn device_spec(
    path: &Path,
    fs: FsType,
    mkfs_opts: Vec<String>,
    mount_opts: String,
    consent: &Consent,
) -> Result<TargetSpec> {
    let refuse = |why: String| usage(format!("device {}: refused: {why}", path.display()));
    let dev = sysfs::resolve(path).map_err(refuse)?;
    interlock::confirmed(&dev, path, &consent.destroy_data_on).map_err(refuse)?;
    let guard = Guard {
        rdev: dev.rdev,
        force: consent.force,
        protect: interlock::protected_paths(&consent.image_dir, consent.db.as_deref()),
    };
    check(&dev, &guard, true).map_err(refuse)?;
    Ok(TargetSpec::Device {
        path: PathBuf::from(dev.node()),
        fs,
        mkfs_opts,
        mount_opts,
        guard,
    })
}

/// Every interlock after the confirmation, in the order the messages are most useful:
/// protected paths, mounts, swap, loop devices, stacks, signatures (skipped with
/// `signatures == false`: the filesystem on the device is fsarena's own from a trial).
pub fn check(dev: &sysfs::Dev, guard: &Guard, signatures: bool) -> Result<(), String> {
    let family = sysfs::family(dev);
    interlock::not_protected(dev, &family, &guard.protect)?;
    interlock::not_mounted(dev, &family)?;
    interlock::not_swap(dev, &family)?;
    interlock::not_backing_loop(dev, &family)?;
    interlock::not_stacked(dev, &family)?;
    if signatures {
        interlock::blank_or_forced(dev, guard.force)?;
    }
    Ok(())
}

/// Right before a write: `path` still names the confirmed device and every interlock holds.
pub fn recheck(path: &Path, guard: &Guard, signatures: bool) -> Result<sysfs::Dev> {
    let refuse = |why: String| anyhow!("device {}: refused: {why}", path.display());
    let dev = sysfs::resolve(path).map_err(refuse)?;
    if dev.rdev != guard.rdev {
        return Err(refuse(format!(
            "it is now device {}, not the {} that was confirmed",
            sysfs::majmin(dev.rdev),
            sysfs::majmin(guard.rdev)
        )));
    }
    check(&dev, guard, signatures).map_err(refuse)?;
    Ok(dev)
}

/// A block-device target.
pub struct BlockTarget {
    info: TargetInfo,
    env: Env,
    path: PathBuf,
    fs: FsType,
    user_mkfs: Vec<String>,
    guard: Guard,
    mountpoint: PathBuf,
    mounted: bool,
    /// Whether fsarena has written to the device in this run (its signature is then ours).
    written: bool,
    provision: Provision,
}

impl BlockTarget {
    /// A target for `spec` (must be [`TargetSpec::Device`]).
    pub fn new(spec: &TargetSpec, env: &Env) -> Self {
        let TargetSpec::Device {
            path,
            fs,
            mkfs_opts,
            mount_opts,
            guard,
        } = spec
        else {
            unreachable!("BlockTarget::new takes a device spec")
        };
        let name = spec.name();
        let mut all_mkfs = fs.default_mkfs_opts();
        all_mkfs.extend(mkfs_opts.iter().cloned());
        let size_bytes = sysfs::resolve(path).map(|d| d.size_bytes()).unwrap_or(0);
        Self {
            info: TargetInfo {
                name: name.clone(),
                fstype: fs.name().into(),
                kind: "device".into(),
                mkfs_opts: all_mkfs,
                requested_mount_opts: mount_opts.clone(),
                size_bytes,
                path: Some(path.display().to_string()),
                notes: vec![format!(
                    "block device {}: formatted by fsarena for every trial",
                    path.display()
                )],
                ..Default::default()
            },
            mountpoint: env
                .image_dir
                .join("mnt")
                .join(format!("{}-{name}", env.run_id)),
            env: env.clone(),
            path: path.clone(),
            fs: *fs,
            user_mkfs: mkfs_opts.clone(),
            guard: guard.clone(),
            mounted: false,
            written: false,
            provision: Provision::default(),
        }
    }

    /// Re-checks the interlocks before a write; from now on the signature is ours.
    fn before_write(&mut self) -> Result<String> {
        let dev = recheck(&self.path, &self.guard, !self.written)?;
        self.written = true;
        Ok(dev.node())
    }

    fn unmount(&mut self) -> Result<Option<f64>> {
        if !self.mounted {
            return Ok(None);
        }
        let s = mount::unmount(&self.env.state, &self.mountpoint)?;
        self.mounted = false;
        Ok(Some(s))
    }

    fn mount_now(&mut self) -> Result<f64> {
        crate::state::ensure_owned_dir(&self.env.image_dir.join("mnt"))?;
        let node = self.path.to_string_lossy().into_owned();
        let s = mount::mount(
            &self.env.state,
            self.fs.name(),
            &node,
            &self.mountpoint,
            &self.info.requested_mount_opts,
        )?;
        self.mounted = true;
        Ok(s)
    }
}

impl Target for BlockTarget {
    fn state(&self) -> Option<std::sync::Arc<crate::state::State>> {
        Some(std::sync::Arc::clone(&self.env.state))
    }
    fn info(&self) -> &TargetInfo {
        &self.info
    }

    fn calibrate(&mut self) -> Result<()> {
        self.unmount()?;
        let node = self.before_write()?;
        let bytes = super::calibrate::CALIBRATE_BYTES.min(self.info.size_bytes / 2);
        super::calibrate::measure(&node, bytes)?.record(&mut self.info);
        Ok(())
    }

    fn prepare(&mut self) -> Result<PathBuf> {
        self.unmount()?;
        let node = self.before_write()?;
        let mkfs_s = cmd::run_stoppable(&self.fs.mkfs_argv(&node, &self.user_mkfs))
            .context("mkfs failed")?
            .seconds;
        crate::signals::check_stop()?;
        let mount_s = self.mount_now()?;
        self.info.mount_opts = mount::effective_options(&self.mountpoint).unwrap_or_default();
        let space = sys::space(&self.mountpoint)?;
        self.provision = Provision {
            mkfs_s: Some(mkfs_s),
            mount_s: Some(mount_s),
            umount_s: None,
            capacity_bytes: Some(space.capacity_bytes),
            free_bytes: Some(space.free_bytes),
            aging: None,
        };
        let work = self.mountpoint.join("work");
        std::fs::create_dir(&work).with_context(|| format!("creating {}", work.display()))?;
        Ok(work)
    }

    fn reset(&mut self) -> Result<()> {
        sys::syncfs(&self.mountpoint).ok();
        self.unmount()?;
        sys::drop_caches()?;
        self.mount_now()?;
        Ok(())
    }

    fn device_stat(&self) -> Option<PathBuf> {
        let name = self.path.file_name()?;
        Some(Path::new("/sys/class/block").join(name).join("stat"))
    }

    fn provision(&self) -> Provision {
        self.provision.clone()
    }

    /// Unmounts; the device itself is left as it is (with fsarena's last filesystem on it).
    fn teardown(&mut self) -> Result<()> {
        if let Some(s) = self.unmount()? {
            self.provision.umount_s = Some(s);
        }
        Ok(())
    }
}

impl Drop for BlockTarget {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}
