//! NTFS through ntfs-3g, a FUSE driver in user space (package ntfs-3g). The kernel needs
//! only FUSE for block devices (`fuseblk`); `mount -t ntfs-3g` runs the helper
//! `mount.ntfs-3g`; a plain `umount` unmounts it, and the loop device detaches after.
//!
//! `-Q` (quick) skips mkntfs's default of zeroing the whole device and scanning for bad
//! sectors, which would write the image in full; `-F` lets it work on a device that is
//! not a partition (a loop device or an image), `-q` keeps it quiet.
//!
//! The read-only check is `ntfsfix -n` (report what it would fix, write nothing); it
//! checks the boot sector and the MFT mirror, far less than chkdsk would.
//!
//! Figures measure a FUSE filesystem: every operation crosses to the ntfs-3g process and
//! back, so they are not comparable with the kernel's ntfs3 driver.

use super::{Kernel, Knowledge};

pub(super) const NTFS: Knowledge = Knowledge {
    name: "ntfs",
    mkfs: "mkfs.ntfs",
    mkfs_opts: &["-F", "-Q", "-q"],
    mount_type: "ntfs-3g",
    mount_helper: Some("mount.ntfs-3g"),
    fsck: Some(&["ntfsfix", "-n"]),
    package: "ntfs-3g",
    kernel: Kernel {
        fs: "fuseblk",
        module: "fuse",
        what: "FUSE for block devices (fuseblk), which ntfs-3g needs",
    },
    min_size_bytes: 0,
    default_set: false,
    note: "ntfs-3g over FUSE",
};
