//! XFS (xfsprogs). `-K` skips the discard mkfs.xfs would otherwise issue on the device.

pub(super) fn default_opts() -> Vec<String> {
    ["-f", "-K"].map(String::from).to_vec()
}
