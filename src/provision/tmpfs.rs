//! A tmpfs of `--size`, mounted fresh for each trial. Note: `drop_caches` does not evict
//! tmpfs data, so a "cold" read on tmpfs is a memory read; reports say so.

use super::{mount, Env, Target, TargetSpec};
use crate::probe::sys;
use crate::result::{Provision, TargetInfo};
use anyhow::Result;
use std::path::PathBuf;

/// A tmpfs target.
pub struct TmpfsTarget {
    info: TargetInfo,
    env: Env,
    mountpoint: PathBuf,
    mounted: bool,
    opts: String,
    provision: Provision,
}

impl TmpfsTarget {
    /// The same target under the name `name` (a plan's target name; its mount point too).
    pub fn with_name(mut self, name: &str) -> Self {
        self.mountpoint = self
            .env
            .image_dir
            .join("mnt")
            .join(format!("{}-{name}", self.env.run_id));
        self.info.name = name.to_string();
        self
    }

    /// A tmpfs for `spec` (must be [`TargetSpec::Tmpfs`]).
    pub fn new(spec: &TargetSpec, env: &Env) -> Self {
        let TargetSpec::Tmpfs {
            size_bytes,
            mount_opts,
        } = spec
        else {
            unreachable!("TmpfsTarget::new takes a tmpfs spec")
        };
        let mut opts = format!("size={size_bytes}");
        if !mount_opts.is_empty() {
            opts = format!("{opts},{mount_opts}");
        }
        Self {
            info: TargetInfo {
                name: "tmpfs".into(),
                fstype: "tmpfs".into(),
                kind: "tmpfs".into(),
                requested_mount_opts: mount_opts.clone(),
                size_bytes: *size_bytes,
                notes: vec!["tmpfs lives in memory: drop_caches does not evict it, so cold reads are memory reads".into()],
                work_unmeasured: Some("a memory filesystem has no device".into()),
                ..Default::default()
            },
            mountpoint: env.image_dir.join("mnt").join(format!("{}-tmpfs", env.run_id)),
            env: env.clone(),
            mounted: false,
            opts,
            provision: Provision::default(),
        }
    }
}

impl Target for TmpfsTarget {
    fn state(&self) -> Option<std::sync::Arc<crate::state::State>> {
        Some(std::sync::Arc::clone(&self.env.state))
    }
    fn info(&self) -> &TargetInfo {
        &self.info
    }

    fn prepare(&mut self) -> Result<PathBuf> {
        self.teardown()?;
        crate::state::ensure_owned_dir(&self.env.image_dir.join("mnt"))?;
        let mount_s = mount::mount(
            &self.env.state,
            "tmpfs",
            "fsarena",
            &self.mountpoint,
            &self.opts,
        )?;
        self.mounted = true;
        self.info.mount_opts = mount::effective_options(&self.mountpoint).unwrap_or_default();
        let space = sys::space(&self.mountpoint)?;
        self.provision = Provision {
            mount_s: Some(mount_s),
            capacity_bytes: Some(space.capacity_bytes),
            free_bytes: Some(space.free_bytes),
            ..Default::default()
        };
        let work = self.mountpoint.join("work");
        std::fs::create_dir(&work)?;
        Ok(work)
    }

    fn device_stat(&self) -> Option<PathBuf> {
        None
    }

    fn provision(&self) -> Provision {
        self.provision.clone()
    }

    fn teardown(&mut self) -> Result<()> {
        if self.mounted {
            self.provision.umount_s = Some(mount::unmount(&self.env.state, &self.mountpoint)?);
            self.mounted = false;
        }
        Ok(())
    }
}

impl Drop for TmpfsTarget {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}
