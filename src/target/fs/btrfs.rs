//! btrfs (btrfs-progs). `-K` (`--nodiscard`) skips the initial TRIM of the device.
//! Note: the kernel turns on `discard=async` by itself for a device that supports discard,
//! such as a loop device; the effective options are recorded from mountinfo.
//! The read-only check is `btrfs check --readonly` (the default mode, spelled out).

use super::{Kernel, Knowledge};

pub(super) const BTRFS: Knowledge = Knowledge {
    name: "btrfs",
    mkfs: "mkfs.btrfs",
    mkfs_opts: &["-f", "-q", "-K"],
    mount_type: "btrfs",
    mount_helper: None,
    fsck: Some(&["btrfs", "check", "--readonly"]),
    package: "btrfs-progs",
    kernel: Kernel::fs("btrfs"),
    min_size_bytes: 0,
    default_set: true,
    note: "",
};
