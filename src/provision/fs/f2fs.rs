//! F2FS, the flash-friendly filesystem (f2fs-tools).
//!
//! `-t 0` turns off the discard mkfs.f2fs issues by default (it would punch the
//! preallocated image's blocks back out); `-f` overwrites an existing filesystem, `-q`
//! keeps it quiet. mkfs.f2fs 1.15 fails on images of 40 MiB and less (measured), below
//! fsarena's general 64 MiB floor.
//!
//! The read-only check is `fsck.f2fs -f --dry-run`: `-f` checks the whole filesystem
//! even when it is marked clean, `--dry-run` never writes a fix.

use super::{Kernel, Knowledge};

pub(super) const F2FS: Knowledge = Knowledge {
    name: "f2fs",
    mkfs: "mkfs.f2fs",
    mkfs_opts: &["-f", "-q", "-t", "0"],
    mount_type: "f2fs",
    mount_helper: None,
    fsck: Some(&["fsck.f2fs", "-f", "--dry-run"]),
    package: "f2fs-tools",
    kernel: Kernel::fs("f2fs"),
    min_size_bytes: 0,
    default_set: false,
    note: "",
};
