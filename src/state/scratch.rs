//! A private directory for a run's own files that are neither the target's nor results (a
//! program's scratch logs): made in the image directory beside the state directory, in the
//! run's state file before it exists, and removed with its record when dropped — or by
//! `fsarena cleanup` after a `kill -9`, which a temporary directory in `/tmp` would outlive.

use super::{ensure_owned_dir, Resource, State};
use crate::owned::{self, Removal};
use anyhow::{Context, Result};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

static SEQ: AtomicU64 = AtomicU64::new(0);

/// A directory of the run's own ([`State::scratch_dir`]).
pub struct ScratchDir {
    path: PathBuf,
    state: Arc<State>,
}

impl ScratchDir {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let r = Resource::Dir {
            path: self.path.clone(),
        };
        if owned::remove(&self.path, Removal::Tree).is_ok() {
            let _ = self.state.remove(&r);
        }
    }
}

impl State {
    /// A new directory `<image dir>/<stem>-<pid>-<n>`, mode 0700, recorded before it is
    /// made (module docs).
    pub fn scratch_dir(self: &Arc<Self>, stem: &str) -> Result<ScratchDir> {
        let state_dir = self.path.parent().unwrap_or(Path::new("."));
        let base = state_dir.parent().unwrap_or(state_dir);
        ensure_owned_dir(base)?;
        let n = SEQ.fetch_add(1, Ordering::Relaxed) + 1;
        let path = base.join(format!("{stem}-{}-{n}", std::process::id()));
        let r = Resource::Dir { path: path.clone() };
        self.add(r.clone())?;
        if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(&path) {
            // Not made here, so not ours to remove.
            let _ = self.remove(&r);
            return Err(e).with_context(|| format!("creating {}", path.display()));
        }
        Ok(ScratchDir {
            path,
            state: Arc::clone(self),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_dir_is_recorded_while_it_lives_and_gone_with_its_record_after() {
        let tmp = tempfile::tempdir().unwrap();
        let state = Arc::new(State::create(&tmp.path().join("state"), "r1").unwrap());
        let dir = state.scratch_dir("fsarena-test").unwrap();
        let path = dir.path().to_path_buf();
        assert!(path.is_dir() && path.starts_with(tmp.path()));
        let saved = || std::fs::read_to_string(tmp.path().join("state/r1.json")).unwrap();
        assert!(saved().contains(path.to_str().unwrap()), "{}", saved());
        std::fs::write(path.join("log"), b"x").unwrap();
        drop(dir);
        assert!(!path.exists());
        assert!(!saved().contains(path.to_str().unwrap()), "{}", saved());
    }
}
