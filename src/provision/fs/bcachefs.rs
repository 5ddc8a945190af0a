//! bcachefs (bcachefs-tools). In mainline Linux from 6.7 to 6.17; newer kernels need the
//! out-of-tree (DKMS) module. Debian 12 has no bcachefs-tools package.
//!
//! `-f` (`--force`) formats over an existing filesystem; bcachefs issues no discard at
//! format time unless `--discard` is given, and has no lazy initialisation.
//!
//! The read-only check is `bcachefs fsck -n` (answer "no" to every repair).

use super::{Kernel, Knowledge};

pub(super) const BCACHEFS: Knowledge = Knowledge {
    name: "bcachefs",
    mkfs: "mkfs.bcachefs",
    mkfs_opts: &["-f"],
    mount_type: "bcachefs",
    mount_helper: None,
    fsck: Some(&["bcachefs", "fsck", "-n"]),
    package: "bcachefs-tools",
    kernel: Kernel::fs("bcachefs"),
    min_size_bytes: 0,
    default_set: false,
    note: "",
};
