//! JFS, IBM's journalled filesystem (jfsutils), one of the seed articles' contenders.
//!
//! `-q` makes mkfs.jfs proceed without asking for confirmation. mkfs.jfs issues no
//! discard and has no lazy initialisation.
//!
//! The read-only check is `jfs_fsck -n -f`: `-n` opens the filesystem read-only and
//! reports only, `-f` checks even when it is marked clean.

use super::{Kernel, Knowledge};

pub(super) const JFS: Knowledge = Knowledge {
    name: "jfs",
    mkfs: "mkfs.jfs",
    mkfs_opts: &["-q"],
    mount_type: "jfs",
    mount_helper: None,
    fsck: Some(&["jfs_fsck", "-n", "-f"]),
    package: "jfsutils",
    kernel: Kernel::fs("jfs"),
    min_size_bytes: 0,
    default_set: false,
    note: "",
};
