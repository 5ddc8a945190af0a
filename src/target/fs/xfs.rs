//! XFS (xfsprogs). `-K` skips the discard mkfs.xfs would otherwise issue on the device.
//! The read-only check is `xfs_repair -n` (no-modify mode; exit 1 when it finds damage).

use super::{Kernel, Knowledge};

pub(super) const XFS: Knowledge = Knowledge {
    name: "xfs",
    mkfs: "mkfs.xfs",
    mkfs_opts: &["-f", "-K"],
    mount_type: "xfs",
    mount_helper: None,
    fsck: Some(&["xfs_repair", "-n"]),
    package: "xfsprogs",
    kernel: Kernel::fs("xfs"),
    min_size_bytes: 0,
    default_set: true,
    note: "",
};
