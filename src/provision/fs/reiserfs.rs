//! ReiserFS 3.6 (reiserfsprogs), the seed articles' favourite for small files. Linux
//! removed it in 6.13; older kernels still mount it.
//!
//! `-f` makes mkreiserfs proceed without asking, `-q` keeps it quiet. Its default 32 MiB
//! journal makes it refuse images of 32 MiB and less (measured), below fsarena's 64 MiB
//! floor. No discard, no lazy initialisation.
//!
//! The read-only check is `reiserfsck --check --yes --quiet`: `--check` only reports
//! (the default mode, spelled out), `--yes` skips the "do you want to run" question.

use super::{Kernel, Knowledge};

pub(super) const REISERFS: Knowledge = Knowledge {
    name: "reiserfs",
    mkfs: "mkfs.reiserfs",
    mkfs_opts: &["-f", "-q"],
    mount_type: "reiserfs",
    mount_helper: None,
    fsck: Some(&["reiserfsck", "--check", "--yes", "--quiet"]),
    package: "reiserfsprogs",
    kernel: Kernel::fs("reiserfs"),
    min_size_bytes: 0,
    default_set: false,
    note: "removed from Linux in 6.13",
};
