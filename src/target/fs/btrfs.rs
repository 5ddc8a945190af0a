//! btrfs (btrfs-progs). `-K` (`--nodiscard`) skips the initial TRIM of the device.
//! Note: the kernel turns on `discard=async` by itself for a device that supports discard,
//! such as a loop device; the effective options are recorded from mountinfo.
//! The read-only check is `btrfs check --readonly` (the default mode, spelled out).

pub(super) fn default_opts() -> Vec<String> {
    ["-f", "-q", "-K"].map(String::from).to_vec()
}

pub(super) fn fsck_argv(device: &str) -> Vec<String> {
    ["btrfs", "check", "--readonly", device]
        .map(String::from)
        .to_vec()
}
