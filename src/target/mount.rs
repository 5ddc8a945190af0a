//! Mounting and unmounting, and the mount options the kernel actually applied.

use crate::cmd;
use crate::state::{self, Resource, State};
use anyhow::{Context, Result};
use std::path::Path;

/// Mounts `source` of type `fstype` on `mountpoint` with `opts`; returns seconds taken.
/// The mount point is recorded in the state file first; when the mount fails, the mount
/// point and its record are removed again (the caller has nothing mounted to tear down).
pub fn mount(
    state: &State,
    fstype: &str,
    source: &str,
    mountpoint: &Path,
    opts: &str,
) -> Result<f64> {
    std::fs::create_dir_all(mountpoint)
        .with_context(|| format!("creating mount point {}", mountpoint.display()))?;
    state.add(Resource::Mount {
        path: mountpoint.to_path_buf(),
    })?;
    let mp = mountpoint.to_string_lossy();
    let mut argv = vec!["mount", "-t", fstype];
    if !opts.is_empty() {
        argv.extend(["-o", opts]);
    }
    argv.extend([source, &mp]);
    cmd::run(&argv)
        .map(|o| o.seconds)
        .inspect_err(|_| forget_failed(state, mountpoint))
}

/// After a failed mount command: undoes whatever it left (normally only the mount point
/// and its record; a mount that happened all the same is unmounted).
pub fn forget_failed(state: &State, mountpoint: &Path) {
    let _ = unmount(state, mountpoint);
}

/// Unmounts `mountpoint` (if mounted; retrying while busy), removes the directory and
/// forgets it; returns seconds.
pub fn unmount(state: &State, mountpoint: &Path) -> Result<f64> {
    unmount_with(state, mountpoint, state::umount)
}

/// [`unmount`] with one `umount` and no retry, for a timed unmount (the `provision`
/// workload's): fails when the filesystem is busy rather than timing the waits.
pub fn unmount_once(state: &State, mountpoint: &Path) -> Result<f64> {
    unmount_with(state, mountpoint, state::umount_once)
}

fn unmount_with(state: &State, mountpoint: &Path, umount: fn(&Path) -> Result<f64>) -> Result<f64> {
    let secs = if state::is_mounted(mountpoint) {
        umount(mountpoint)?
    } else {
        0.0
    };
    let _ = crate::owned::remove(mountpoint, crate::owned::Removal::EmptyDir);
    state.remove(&Resource::Mount {
        path: mountpoint.to_path_buf(),
    })?;
    Ok(secs)
}

/// The options in force on `mountpoint` as the kernel reports them in
/// `/proc/self/mountinfo`: per-mount options, then the superblock's, deduplicated
/// (e.g. btrfs adds `discard=async` on a loop device by itself).
pub fn effective_options(mountpoint: &Path) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = mountpoint.to_string_lossy();
    let line = text.lines().rev().find(|l| {
        l.split(' ')
            .nth(4)
            .map(state::unescape_mount_path)
            .as_deref()
            == Some(&*want)
    })?;
    let fields: Vec<&str> = line.split(' ').collect();
    let vfs = fields.get(5)?;
    let sep = fields.iter().position(|f| *f == "-")?;
    let sb = fields.get(sep + 3).copied().unwrap_or("");
    let mut seen = Vec::<&str>::new();
    for o in vfs.split(',').chain(sb.split(',')) {
        if !o.is_empty() && !seen.contains(&o) {
            seen.push(o);
        }
    }
    Some(seen.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_has_effective_options() {
        let o = effective_options(Path::new("/")).expect("/ is mounted");
        assert!(o.contains("rw") || o.contains("ro"), "{o}");
        assert_eq!(
            effective_options(Path::new("/definitely/not/mounted")),
            None
        );
    }
}
