//! XFS (xfsprogs). `-K` skips the discard mkfs.xfs would otherwise issue on the device.
//! The read-only check is `xfs_repair -n` (no-modify mode; exit 1 when it finds damage).

pub(super) fn default_opts() -> Vec<String> {
    ["-f", "-K"].map(String::from).to_vec()
}

pub(super) fn fsck_argv(device: &str) -> Vec<String> {
    ["xfs_repair", "-n", device].map(String::from).to_vec()
}
