//! ext2, ext3 and ext4 (e2fsprogs).
//!
//! `-E nodiscard` keeps the preallocated image allocated; `lazy_itable_init=0` and
//! `lazy_journal_init=0` make mke2fs write the inode tables and journal now instead of a
//! kernel thread doing it behind the benchmark after the first mount.
//!
//! The read-only check is `e2fsck -f -n`: `-f` checks even a clean filesystem (otherwise
//! e2fsck only reads the superblock and stops), `-n` opens it read-only and answers "no".

use super::{Kernel, Knowledge};

const MKFS_OPTS: &[&str] = &[
    "-F",
    "-q",
    "-E",
    "nodiscard,lazy_itable_init=0,lazy_journal_init=0",
];
const FSCK: &[&str] = &["e2fsck", "-f", "-n"];

const fn ext(name: &'static str, mkfs: &'static str) -> Knowledge {
    Knowledge {
        name,
        mkfs,
        mkfs_opts: MKFS_OPTS,
        mount_type: name,
        mount_helper: None,
        fsck: Some(FSCK),
        package: "e2fsprogs",
        kernel: Kernel::fs(name),
        min_size_bytes: 0,
        default_set: true,
        note: "",
    }
}

pub(super) const EXT2: Knowledge = ext("ext2", "mkfs.ext2");
pub(super) const EXT3: Knowledge = ext("ext3", "mkfs.ext3");
pub(super) const EXT4: Knowledge = ext("ext4", "mkfs.ext4");
