//! ext2, ext3 and ext4 (e2fsprogs).
//!
//! `-E nodiscard` keeps the preallocated image allocated; `lazy_itable_init=0` and
//! `lazy_journal_init=0` make mke2fs write the inode tables and journal now instead of a
//! kernel thread doing it behind the benchmark after the first mount.
//!
//! The read-only check is `e2fsck -f -n`: `-f` checks even a clean filesystem (otherwise
//! e2fsck only reads the superblock and stops), `-n` opens it read-only and answers "no".

pub(super) fn default_opts() -> Vec<String> {
    [
        "-F",
        "-q",
        "-E",
        "nodiscard,lazy_itable_init=0,lazy_journal_init=0",
    ]
    .map(String::from)
    .to_vec()
}

pub(super) fn fsck_argv(device: &str) -> Vec<String> {
    ["e2fsck", "-f", "-n", device].map(String::from).to_vec()
}
