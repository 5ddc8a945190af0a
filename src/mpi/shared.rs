//! The targets of `--mpi shared`: rank 0 provisions the real target (a `--dir` on a
//! shared filesystem, or a tmpfs or loop filesystem that the ranks on its node share) and
//! every other rank works in what rank 0 prepared.
//!
//! Each trial, rank 0 prepares the target, writes a marker file into the directory and
//! sends the path to the others; each of them checks that it sees the marker with this
//! run's id, so a directory that is not really shared (a local path of the same name on
//! another node) fails at once with a clear error instead of measuring N local disks.
//!
//! Caches: rank 0 resets its target as usual (sync and remount a loop filesystem, dropping
//! the caches unless the remount empties them); on every other node the lowest rank there
//! syncs and drops the caches, so each node drops once ([`SharedView::reset`]).

use super::Transport;
use crate::provision::Target;
use crate::result::{Provision, TargetInfo};
use anyhow::{anyhow, Result};
use std::path::PathBuf;
use std::sync::Arc;

/// The marker's file name in the shared directory.
pub const MARKER: &str = ".fsarena-mpi-shared";

/// Rank 0's target under `--mpi shared`: the real one, which also tells the others where
/// it is.
pub struct SharedLead {
    inner: Box<dyn Target>,
    t: Arc<dyn Transport>,
    run_id: String,
}

impl SharedLead {
    /// Wraps rank 0's real target of run `run_id`.
    pub fn new(inner: Box<dyn Target>, t: Arc<dyn Transport>, run_id: &str) -> Self {
        Self {
            inner,
            t,
            run_id: run_id.to_string(),
        }
    }
}

impl Target for SharedLead {
    fn state(&self) -> Option<Arc<crate::state::State>> {
        self.inner.state()
    }
    fn info(&self) -> &TargetInfo {
        self.inner.info()
    }
    fn calibrate(&mut self) -> Result<()> {
        self.inner.calibrate()
    }
    /// Prepares the real target, writes the marker and sends the path to every rank (an
    /// empty path when preparing failed, so that nobody waits).
    fn prepare(&mut self) -> Result<PathBuf> {
        let res = self.inner.prepare().and_then(|p| {
            std::fs::write(p.join(MARKER), self.run_id.as_bytes())
                .map_err(|e| anyhow!("writing the marker into {}: {e}", p.display()))?;
            Ok(p)
        });
        let path = res
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        match self.t.broadcast(path.as_bytes()) {
            Ok(_) => res,
            Err(lost) => Err(anyhow!(
                "sending the target's directory to the others: {lost:?}"
            )),
        }
    }
    fn reset(&mut self) -> Result<()> {
        self.inner.reset()
    }
    fn device_stat(&self) -> Option<PathBuf> {
        self.inner.device_stat()
    }
    fn provision(&self) -> Provision {
        self.inner.provision()
    }
    fn teardown(&mut self) -> Result<()> {
        self.inner.teardown()
    }
    fn tools(&mut self) -> Option<&mut dyn crate::provision::FsTools> {
        self.inner.tools()
    }
}

/// Another rank's view of rank 0's target under `--mpi shared`.
pub struct SharedView {
    info: TargetInfo,
    t: Arc<dyn Transport>,
    run_id: String,
    /// Whether this rank drops the caches of its node (the lowest rank on a node that is
    /// not rank 0's).
    drops_caches: bool,
}

impl SharedView {
    /// The view of rank 0's target described by `info`, for run `run_id`; `hosts` are
    /// the ranks' host names.
    pub fn new(info: TargetInfo, t: Arc<dyn Transport>, run_id: &str, hosts: &[String]) -> Self {
        let me = t.rank();
        let host = hosts.get(me).cloned().unwrap_or_default();
        let first_on_node = hosts.iter().position(|h| *h == host) == Some(me);
        let drops_caches = first_on_node && hosts.first() != Some(&host);
        Self {
            info,
            t,
            run_id: run_id.to_string(),
            drops_caches,
        }
    }
}

impl Target for SharedView {
    fn info(&self) -> &TargetInfo {
        &self.info
    }
    /// Receives the directory rank 0 prepared and checks that this rank sees its marker.
    fn prepare(&mut self) -> Result<PathBuf> {
        let got = self
            .t
            .broadcast(&[])
            .map_err(|lost| anyhow!("receiving rank 0's directory: {lost:?}"))?;
        if got.is_empty() {
            return Err(super::PeerStopped {
                rank: 0,
                host: String::new(),
                what: "could not prepare the target".into(),
            }
            .into());
        }
        let path = PathBuf::from(String::from_utf8_lossy(&got).into_owned());
        let seen = std::fs::read(path.join(MARKER)).ok();
        if seen.as_deref() != Some(self.run_id.as_bytes()) {
            return Err(anyhow!(
                "this rank does not see the directory rank 0 prepared, {} (its marker file \
                 {MARKER} of this run is {}): under --mpi shared every rank must see \
                 the same directory — a --dir on a filesystem all nodes mount (NFS, CephFS, \
                 Lustre, GPFS, BeeGFS); a tmpfs or loop target is shared only by the ranks \
                 on rank 0's node. Use --mpi fleet to test each node's own storage",
                path.display(),
                if seen.is_some() {
                    "another run's"
                } else {
                    "missing"
                }
            ));
        }
        Ok(path)
    }
    fn reset(&mut self) -> Result<()> {
        if self.drops_caches && crate::probe::sys::is_root() {
            crate::probe::sys::drop_caches()?;
        }
        Ok(())
    }
    fn device_stat(&self) -> Option<PathBuf> {
        None
    }
    fn provision(&self) -> Provision {
        Provision::default()
    }
    /// Rank 0 tears the target down; this rank has nothing of its own there.
    fn teardown(&mut self) -> Result<()> {
        Ok(())
    }
}
