//! XFS (xfsprogs). `-K` skips the discard mkfs.xfs would otherwise issue on the device.
//! The read-only check is `xfs_repair -n` (no-modify mode; exit 1 when it finds damage).
//! mkfs.xfs (xfsprogs 5.19 and later) refuses a filesystem under 300 MiB ("Filesystem must
//! be larger than 300MB"; 314,572,799 bytes fail, 314,572,800 pass with xfsprogs 6.1).

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
    min_size_bytes: 300 << 20,
    default_set: true,
    note: "",
};
