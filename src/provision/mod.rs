//! Targets: where workloads run. A directory, a tmpfs, or a loop image that fsarena makes
//! with mkfs and mounts — always torn down again.
//!
//! Each trial gets a freshly made filesystem on loop and tmpfs targets ("recreated and
//! freshly mounted for each and every test", as the seed articles did it).

pub mod age;
pub mod blockdev;
pub mod calibrate;
pub(crate) mod devprobe;
pub mod dir;
pub mod fs;
pub mod loopdev;
pub mod loopfs;
pub mod memlimit;
pub mod mount;
pub mod net;
pub mod recorded;
pub mod scratch;
pub mod served;
pub mod tmpfs;

use crate::result::{Provision, TargetInfo};
use crate::state::State;
use anyhow::{anyhow, Result};
use std::path::PathBuf;
use std::sync::Arc;

/// A place to run trials.
pub trait Target {
    /// What the target is, as recorded with the results.
    fn info(&self) -> &TargetInfo;
    /// Measures what only needs measuring once (the device's cold read rates,
    /// [`calibrate`]).
    fn calibrate(&mut self) -> Result<()> {
        Ok(())
    }
    /// Makes a fresh filesystem (or directory) for one trial; returns an empty work directory.
    fn prepare(&mut self) -> Result<PathBuf>;
    /// Says which repetition (from 1) the next [`Self::prepare`] is for: what an aged
    /// target with `independent` aging draws its seed from ([`age::AgeSpec::seed_for`]).
    fn set_repetition(&mut self, _rep: u32) {}
    /// Before a cold phase: sync and drop caches, and remount where the target allows.
    fn reset(&mut self) -> Result<()> {
        if crate::probe::sys::is_root() {
            crate::probe::sys::drop_caches()?;
        }
        Ok(())
    }
    /// The sysfs `stat` file of the device under the target, for I/O accounting.
    fn device_stat(&self) -> Option<PathBuf>;
    /// Provisioning figures of the current (or last) trial.
    fn provision(&self) -> Provision;
    /// Undoes what `prepare` did. Idempotent; also called on error and interrupt.
    fn teardown(&mut self) -> Result<()>;
    /// The filesystem's own tools (mkfs, mount, umount, fsck) on this target's device, for
    /// workloads that time them (`provision`); `None` where there is no device of ours to
    /// make a filesystem on (tmpfs, directories).
    fn tools(&mut self) -> Option<&mut dyn FsTools> {
        None
    }
    /// The run's state file, where a workload records what it starts on the target (a
    /// database server) before it starts it, so that `fsarena cleanup` can stop it after
    /// a `kill -9`; `None` for targets of unit tests.
    fn state(&self) -> Option<Arc<State>> {
        None
    }
}

/// The filesystem's own tools on the device of a prepared target, one external command
/// each (through [`crate::cmd`]). The target stays responsible for what it made: mounts
/// are recorded in the state file as they happen, and `teardown` undoes whatever is
/// mounted or attached at that moment, also when a workload stops half way.
pub trait FsTools {
    /// The filesystem type.
    fn fstype(&self) -> fs::FsType;
    /// Unmounts the filesystem (umount flushes what is dirty first) with one `umount`, not
    /// retried when busy (a timed unmount must not count waits). No-op when unmounted.
    fn unmount(&mut self) -> Result<()>;
    /// Mounts the filesystem with the target's mount options at the usual mount point, so
    /// that the work directory path stays valid. No-op when mounted.
    fn mount(&mut self) -> Result<()>;
    /// Makes a new filesystem on the unmounted device, with the target's mkfs options.
    fn mkfs(&mut self) -> Result<()>;
    /// Checks the unmounted filesystem without changing it
    /// ([`fs::FsType::fsck_argv`]); fails with the checker's output when it finds damage.
    fn fsck(&mut self) -> Result<()>;
    /// Whether mkfs, with the target's options, accepts a device of `size_bytes`: tried on
    /// a scratch image of that size in the image directory (no loop device, no mount),
    /// deleted again. `Err` only when mkfs could not run at all.
    fn mkfs_accepts(&mut self, size_bytes: u64) -> Result<bool>;
    /// What a recorded twin of this target is made of (its filesystem, options, image
    /// directory and state file), for a workload that records the writes reaching the
    /// disk ([`recorded::Recording`]); `None` where the target cannot have one.
    fn twin(&self) -> Option<recorded::Twin> {
        None
    }
}

/// The target's [`FsTools`], or an error saying that `what` needs a loop target.
pub fn tools_of<'t>(t: &'t mut dyn Target, what: &str) -> Result<&'t mut dyn FsTools> {
    let (name, kind) = (t.info().name.clone(), t.info().kind.clone());
    t.tools()
        .ok_or_else(|| anyhow!("{}", needs_loop(what, &name, &kind)))
}

/// Why `what` cannot run on target `name` of `kind` (`tmpfs`, `dir`).
pub fn needs_loop(what: &str, name: &str, kind: &str) -> String {
    format!(
        "{what} needs a loop target (a filesystem fsarena makes on a loop image: \
         --fs ext4, xfs, btrfs, …): it runs mkfs, mount, umount and fsck on the device, \
         and {name} is a {kind} target with no device of fsarena's"
    )
}

/// What the user asked for, before anything is touched.
#[derive(Clone, Debug)]
pub enum TargetSpec {
    /// A loop image with a real filesystem.
    Loop {
        fs: fs::FsType,
        mkfs_opts: Vec<String>,
        mount_opts: String,
        size_bytes: u64,
    },
    /// A tmpfs of the given size.
    Tmpfs { size_bytes: u64, mount_opts: String },
    /// An existing directory.
    Dir { path: PathBuf },
    /// A whole disk or partition, formatted for every trial. Made only by
    /// [`blockdev::device_spec`], which checks every interlock.
    Device {
        /// The device node, symlinks resolved (`/dev/sdb`).
        path: PathBuf,
        fs: fs::FsType,
        mkfs_opts: Vec<String>,
        mount_opts: String,
        /// What is re-checked right before each write to the device.
        guard: blockdev::Guard,
    },
    /// A network filesystem fsarena mounts (`--net nfs=server:/export`).
    Net(net::NetSpec),
    /// A network filesystem fsarena serves itself, in a guest (`--fs nfs`, `nfs3`, `smb`):
    /// a fresh ext4 of `size_bytes` exported over loopback ([`served`]). `mkfs_opts` go
    /// to the ext4, `mount_opts` to the client.
    Served {
        proto: served::Protocol,
        mkfs_opts: Vec<String>,
        mount_opts: String,
        size_bytes: u64,
    },
}

impl TargetSpec {
    /// `loop`, `tmpfs`, `dir`, `device` or `net`, as [`TargetInfo::kind`] says.
    pub fn kind(&self) -> &'static str {
        match self {
            TargetSpec::Loop { .. } => "loop",
            TargetSpec::Tmpfs { .. } => "tmpfs",
            TargetSpec::Dir { .. } => "dir",
            TargetSpec::Device { .. } => "device",
            TargetSpec::Net(_) => "net",
            TargetSpec::Served { .. } => "served",
        }
    }

    /// The name reports use for this target (`ext4`, `tmpfs`, `dir:/srv`, `xfs@sdb`).
    pub fn name(&self) -> String {
        match self {
            TargetSpec::Loop { fs, .. } => fs.name().to_string(),
            TargetSpec::Tmpfs { .. } => "tmpfs".to_string(),
            TargetSpec::Dir { path } => format!("dir:{}", path.display()),
            TargetSpec::Device { path, fs, .. } => format!(
                "{}@{}",
                fs.name(),
                path.file_name().unwrap_or_default().to_string_lossy()
            ),
            TargetSpec::Net(n) => n.name(),
            TargetSpec::Served { proto, .. } => proto.name().to_string(),
        }
    }
}

/// What targets share within one run.
#[derive(Clone)]
pub struct Env {
    pub run_id: String,
    /// Where images and mount points live (`--image-dir`).
    pub image_dir: PathBuf,
    pub state: Arc<State>,
}

#[cfg(test)]
impl Env {
    /// A run `run_id` whose images go to `image_dir`, with its state file in `state_dir`
    /// (unit tests).
    pub(crate) fn for_test(
        run_id: &str,
        image_dir: &std::path::Path,
        state_dir: &std::path::Path,
    ) -> Env {
        Env {
            run_id: run_id.into(),
            image_dir: image_dir.to_path_buf(),
            state: Arc::new(State::create(state_dir, run_id).expect("a test state file")),
        }
    }
}

/// Builds the target for `spec` under its usual name ([`TargetSpec::name`]).
pub fn build(spec: &TargetSpec, env: &Env) -> Box<dyn Target> {
    build_named(spec, &spec.name(), env)
}

/// Builds the target for `spec` under the name `name`, aged before each trial as `age`
/// says (a spec and the run's seed) — only loop targets age ([`crate::plan`] refuses the
/// others).
pub fn build_aged(
    spec: &TargetSpec,
    name: &str,
    age: Option<(age::AgeSpec, u64)>,
    env: &Env,
) -> Box<dyn Target> {
    match (spec, age) {
        (TargetSpec::Loop { .. }, Some((a, seed))) => Box::new(
            loopfs::LoopTarget::new(spec, env)
                .with_name(name)
                .with_age(a, seed),
        ),
        (TargetSpec::Served { .. }, Some((a, seed))) => {
            Box::new(served::ServedTarget::new(spec, name, env).with_age(a, seed))
        }
        _ => build_named(spec, name, env),
    }
}

/// Builds the target for `spec` under the name `name` (a plan's target name; loop images
/// and mount points are named after it, so it must be a safe file name —
/// [`crate::plan::matrix::valid_name`] — unless it is the usual name).
pub fn build_named(spec: &TargetSpec, name: &str, env: &Env) -> Box<dyn Target> {
    match spec {
        TargetSpec::Loop { .. } => Box::new(loopfs::LoopTarget::new(spec, env).with_name(name)),
        TargetSpec::Tmpfs { .. } => Box::new(tmpfs::TmpfsTarget::new(spec, env).with_name(name)),
        TargetSpec::Dir { path } => Box::new(dir::DirTarget::new(path, env).with_name(name)),
        TargetSpec::Device { .. } => Box::new(blockdev::BlockTarget::new(spec, env)),
        TargetSpec::Net(n) => Box::new(net::NetTarget::new(n, env)),
        TargetSpec::Served { .. } => Box::new(served::ServedTarget::new(spec, name, env)),
    }
}
