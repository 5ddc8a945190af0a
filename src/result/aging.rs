//! How a trial's filesystem was aged (`run --age`), as recorded and exported.

use serde::{Deserialize, Serialize};

/// Aging of one trial's filesystem: what was done, and how fragmented it left files and
/// free space (docs/aging.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Aging {
    /// The profile and its parameters: `desktop:fill=75,churn=2`.
    pub spec: String,
    /// The seed the aging drew from: the run's `--seed`, or with `independent` the
    /// repetition's own. Absent in runs recorded before it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Seconds the aging took (when the filesystem is a copy of a kept image: the aging
    /// that made the image).
    pub seconds: f64,
    /// Creates, changes and deletes.
    pub operations: u64,
    pub bytes_written: u64,
    /// Files and directories the aging left.
    pub files: u64,
    pub dirs: u64,
    /// Times the filesystem was full before aging reached its goal (its metadata, or
    /// space it reserves, took more than planned): each time a file was deleted to go on.
    #[serde(default)]
    pub full: u64,
    /// Space the filesystem reports used after aging (statfs), of its capacity.
    pub used_bytes: u64,
    pub capacity_bytes: u64,
    /// Whether this trial's filesystem is a copy of an image aged before (`--age-cache`).
    pub reused: bool,
    /// Seconds this trial's copy of the kept image took (`reused` trials; before the
    /// trial, never in its figures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_s: Option<f64>,
    /// How it was copied: `reflink` (blocks shared, where the image directory's
    /// filesystem has them) or `copy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_how: Option<String>,
    /// Fragments per aged file (FIEMAP; physically contiguous extents count as one).
    pub file_fragments: Option<FileFragments>,
    /// How the free space is split.
    pub free_space: Option<FreeSpace>,
}

/// Fragments per file over the aged files that hold data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileFragments {
    pub files: u64,
    pub mean: f64,
    pub p99: u64,
    /// Share (0–1) of files in more than one fragment.
    pub fragmented_share: f64,
}

/// The free space's extents, by the filesystem's own report where it has one.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FreeSpace {
    /// `e2freefrag`, `xfs_db freesp` or `probe file` (the extents of a file fallocated into
    /// the free space: `free_bytes` is then the probe's size).
    pub method: String,
    pub extents: u64,
    pub free_bytes: u64,
    pub largest_bytes: Option<u64>,
}
