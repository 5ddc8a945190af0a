//! ext2, ext3 and ext4 (e2fsprogs).
//!
//! `-E nodiscard` keeps the preallocated image allocated; `lazy_itable_init=0` and
//! `lazy_journal_init=0` make mke2fs write the inode tables and journal now instead of a
//! kernel thread doing it behind the benchmark after the first mount.

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
