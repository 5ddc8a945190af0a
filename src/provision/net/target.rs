//! A network filesystem as a target: mounted afresh for each trial, worked on in a marked
//! subdirectory, remounted by `reset`, unmounted and recorded in the state file.

use super::*;

/// A network filesystem target.
pub struct NetTarget {
    pub(super) info: TargetInfo,
    pub(super) env: Env,
    pub(super) spec: NetSpec,
    pub(super) mountpoint: PathBuf,
    pub(super) mounted: bool,
    /// The current trial's work directory on the mount (carries the marker).
    pub(super) work: Option<PathBuf>,
    pub(super) seq: u32,
    pub(super) provision: Provision,
}

impl NetTarget {
    /// A target for `spec`; nothing is mounted until `prepare`.
    pub fn new(spec: &NetSpec, env: &Env) -> Self {
        Self {
            info: TargetInfo {
                name: spec.name(),
                fstype: spec.kind.name().into(),
                kind: "net".into(),
                requested_mount_opts: crate::secret::redact_word(&spec.opts),
                path: Some(spec.source.clone()),
                notes: std::iter::once(format!(
                    "network filesystem ({}): figures include the network and the server; \
                     fsarena cannot mkfs it, each trial works in a fresh subdirectory",
                    spec.kind.name()
                ))
                .chain(spec.check_credentials().ok().flatten())
                .collect(),
                work_unmeasured: Some(
                    "a network filesystem: the server's disk is not counted".into(),
                ),
                ..Default::default()
            },
            mountpoint: env
                .image_dir
                .join("mnt")
                .join(format!("{}-{}", env.run_id, spec.slug())),
            env: env.clone(),
            spec: spec.clone(),
            mounted: false,
            work: None,
            seq: 0,
            provision: Provision::default(),
        }
    }

    /// Mounts the source. `record`: add the mount point to the state file (not on a
    /// remount, whose record stays in place before the work directory's, so that cleanup
    /// removes the work directory while the source is still mounted).
    pub(super) fn mount_now(&mut self, record: bool) -> Result<f64> {
        state::ensure_owned_dir(&self.env.image_dir.join("mnt"))?;
        std::fs::create_dir_all(&self.mountpoint)
            .with_context(|| format!("creating mount point {}", self.mountpoint.display()))?;
        if record {
            self.env.state.add(Resource::Mount {
                path: self.mountpoint.clone(),
            })?;
        }
        let (argv, env) = self.spec.mount_command(&self.mountpoint.to_string_lossy());
        // sshfs leaves a daemon behind: its output must not be a pipe fsarena waits on.
        let out = cmd::run_detached_env(&argv, &env)
            .inspect_err(|_| {
                // A remount keeps its record for the work directory's sake (see above).
                if record {
                    crate::provision::mount::forget_failed(&self.env.state, &self.mountpoint);
                }
            })
            .with_context(|| format!("mounting {}", self.spec.name()))?;
        self.mounted = true;
        Ok(out.seconds)
    }

    pub(super) fn unmount_now(&mut self) -> Result<f64> {
        if !self.mounted {
            return Ok(0.0);
        }
        self.mounted = false;
        crate::provision::mount::unmount(&self.env.state, &self.mountpoint)
    }

    pub(super) fn remove_work(&mut self) -> Result<()> {
        if let Some(work) = self.work.take() {
            let r = Resource::Dir { path: work };
            state::undo(&r)?;
            self.env.state.remove(&r)?;
        }
        Ok(())
    }
}

impl Target for NetTarget {
    fn state(&self) -> Option<std::sync::Arc<crate::state::State>> {
        Some(std::sync::Arc::clone(&self.env.state))
    }
    fn info(&self) -> &TargetInfo {
        &self.info
    }

    fn prepare(&mut self) -> Result<PathBuf> {
        self.teardown()?;
        let mount_s = self.mount_now(true)?;
        if let Some(t) = crate::provision::dir::fstype_of(&self.mountpoint) {
            self.info.fstype = t;
        }
        self.info.mount_opts = crate::secret::redact_word(
            &crate::provision::mount::effective_options(&self.mountpoint).unwrap_or_default(),
        );
        self.seq += 1;
        let work = self
            .mountpoint
            .join(format!("fsarena-{}-{}", self.env.run_id, self.seq));
        self.env.state.add(Resource::Dir { path: work.clone() })?;
        std::fs::create_dir(&work).with_context(|| format!("creating {}", work.display()))?;
        self.work = Some(work.clone());
        std::fs::write(work.join(state::MARKER), b"fsarena work directory\n")?;
        let space = sys::space(&work)?;
        self.provision = Provision {
            mount_s: Some(mount_s),
            capacity_bytes: Some(space.capacity_bytes),
            free_bytes: Some(space.free_bytes),
            ..Default::default()
        };
        let inner = work.join("work");
        std::fs::create_dir(&inner).with_context(|| format!("creating {}", inner.display()))?;
        Ok(inner)
    }

    /// Sync, unmount (the client forgets what it cached), drop caches, mount again.
    fn reset(&mut self) -> Result<()> {
        sys::syncfs(&self.mountpoint).ok();
        if self.mounted {
            state::umount(&self.mountpoint)?;
            self.mounted = false;
        }
        if sys::is_root() {
            sys::drop_caches()?;
        }
        self.mount_now(false)?;
        Ok(())
    }

    fn device_stat(&self) -> Option<PathBuf> {
        None
    }

    fn provision(&self) -> Provision {
        self.provision.clone()
    }

    fn teardown(&mut self) -> Result<()> {
        let removed = if self.mounted {
            self.remove_work()
        } else {
            Ok(())
        };
        if self.mounted {
            self.provision.umount_s = Some(self.unmount_now()?);
        }
        removed
    }
}

impl Drop for NetTarget {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}
