//! NILFS2, a log-structured filesystem with continuous snapshots (nilfs-tools).
//!
//! `-K` keeps mkfs.nilfs2 from discarding the device, `-f` overwrites an existing
//! filesystem, `-q` keeps it quiet. With its default 8 MiB segments mkfs.nilfs2 2.2.9
//! refuses devices under 134221824 bytes (128 MiB + 4 KiB, measured). The mount helper
//! `mount.nilfs2` starts the `nilfs_cleanerd` garbage collector, which runs behind the
//! benchmark as it would in use.
//!
//! nilfs-tools ships no checker, so there is no read-only check (`provision` refuses
//! nilfs2 targets and says so).

use super::{Kernel, Knowledge};

pub(super) const NILFS2: Knowledge = Knowledge {
    name: "nilfs2",
    mkfs: "mkfs.nilfs2",
    mkfs_opts: &["-f", "-q", "-K"],
    mount_type: "nilfs2",
    mount_helper: None,
    fsck: None,
    package: "nilfs-tools",
    kernel: Kernel::fs("nilfs2"),
    min_size_bytes: (128 << 20) + 4096,
    default_set: false,
    note: "",
};
