//! Whether another user could steer a path that root writes to: the check shared by the
//! image directory (`plan::imagedir`) and the run registry (`disturb::registry`).
//!
//! As OpenSSH's StrictModes and sudo check their files, every directory of the path must be
//! owned by root (or the user) and not writable by group or others unless it has the sticky
//! bit, and no symlink on the way as typed may belong to another user. It sits here, below
//! the plan, because the probe's registry needs it too.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// What the trust check needs to know of one path (from `lstat`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    pub uid: u32,
    pub mode: u32,
    pub is_symlink: bool,
}

impl Entry {
    /// Reads `path`'s entry with `lstat` (a symlink is not followed).
    pub fn of(path: &Path) -> std::io::Result<Entry> {
        let m = std::fs::symlink_metadata(path)?;
        Ok(Entry {
            uid: m.uid(),
            mode: m.mode(),
            is_symlink: m.file_type().is_symlink(),
        })
    }
}

/// Why another user could steer `real` (the resolved image directory), or `None`: a
/// symlink on the way as typed (`existing`, the part of it that exists) owned by someone
/// else than `me` or root, or a directory of `real` owned by another user or writable by
/// group or others without the sticky bit. `entry` is `lstat`.
pub fn untrusted(
    existing: &Path,
    real: &Path,
    me: u32,
    entry: &dyn Fn(&Path) -> Option<Entry>,
) -> Option<String> {
    let ok_owner = |uid: u32| uid == 0 || uid == me;
    for p in existing.ancestors() {
        if let Some(e) = entry(p).filter(|e| e.is_symlink && !ok_owner(e.uid)) {
            return Some(format!(
                "{} is a symlink owned by uid {}, another user: that user chooses where \
                 fsarena would create, format and mount; remove it or use another \
                 --image-dir",
                p.display(),
                e.uid
            ));
        }
    }
    let mut dirs: Vec<&Path> = real.ancestors().collect();
    dirs.reverse();
    for p in dirs {
        let Some(e) = entry(p) else { continue }; // not made yet: fsarena makes it
        if !ok_owner(e.uid) {
            return Some(format!(
                "{} is owned by uid {}, another user, who could replace what fsarena \
                 makes in it; use a directory owned by root",
                p.display(),
                e.uid
            ));
        }
        let sticky = e.mode & 0o1000 != 0;
        if e.mode & 0o022 != 0 && !sticky {
            return Some(format!(
                "{} is writable by {} (mode {:o}) without the sticky bit: other users \
                 could rename or replace what fsarena makes in it; chmod go-w it or use \
                 another --image-dir",
                p.display(),
                if e.mode & 0o002 != 0 {
                    "everyone"
                } else {
                    "its group"
                },
                e.mode & 0o7777
            ));
        }
    }
    None
}
