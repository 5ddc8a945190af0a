//! exFAT (exfatprogs), through the kernel's exfat driver (Linux 5.7 and later).
//!
//! mkfs.exfat asks nothing, issues no discard, and by default does a quick format (only
//! `-f` would zero the whole device).
//!
//! The read-only check is `fsck.exfat -n` (answer "no" to every repair).

use super::{Kernel, Knowledge};

pub(super) const EXFAT: Knowledge = Knowledge {
    name: "exfat",
    mkfs: "mkfs.exfat",
    mkfs_opts: &[],
    mount_type: "exfat",
    mount_helper: None,
    fsck: Some(&["fsck.exfat", "-n"]),
    package: "exfatprogs",
    kernel: Kernel::fs("exfat"),
    min_size_bytes: 0,
    default_set: false,
    note: "no hard links, symlinks or ownership",
};
