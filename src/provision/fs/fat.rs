//! FAT32 through the kernel's vfat driver (dosfstools): what USB sticks and SD cards carry.
//!
//! `-F 32` asks for FAT32 always; without it mkfs.fat picks FAT12/16/32 by size, and a
//! comparison across sizes would compare different filesystems. mkfs.fat issues no
//! discard and asks nothing.
//!
//! The read-only check is `fsck.fat -n` (check without writing anything).

use super::{Kernel, Knowledge};

pub(super) const VFAT: Knowledge = Knowledge {
    name: "vfat",
    mkfs: "mkfs.vfat",
    mkfs_opts: &["-F", "32"],
    mount_type: "vfat",
    mount_helper: None,
    fsck: Some(&["fsck.fat", "-n"]),
    package: "dosfstools",
    kernel: Kernel::fs("vfat"),
    min_size_bytes: 0,
    default_set: false,
    note: "no hard links, symlinks, ownership or files over 4 GiB",
};
