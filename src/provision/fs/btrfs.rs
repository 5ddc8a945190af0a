//! btrfs (btrfs-progs). `-K` (`--nodiscard`) skips the initial TRIM of the device.
//! Note: the kernel turns on `discard=async` by itself for a device that supports discard,
//! such as a loop device; the effective options are recorded from mountinfo.
//! The read-only check is `btrfs check --readonly` (the default mode, spelled out).
//! mkfs.btrfs refuses a device under 114,294,784 bytes (109 MiB; "minimum size for each
//! btrfs device", btrfs-progs 6.2).

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
    min_size_bytes: 114_294_784,
    default_set: true,
    note: "",
};
