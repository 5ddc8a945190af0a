//! Command-line definitions (clap). Nothing outside `main` and `plan` sees these types.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Default directory for loop images, mount points and state files.
pub const DEFAULT_IMAGE_DIR: &str = "/var/tmp/fsarena";

/// fsarena: provision real filesystems, run classic and modern workloads on them, repeat,
/// and report honestly.
#[derive(Debug, Parser)]
#[command(name = "fsarena", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run workloads on filesystems (with no workload: bonnie and bonnie-files at modest
    /// sizes on every filesystem this machine can make).
    Run(Box<RunArgs>),
    /// List workloads with their parameters, and filesystems this machine can make.
    List,
    /// Undo what a killed run left behind (mounts, loop devices, images, work directories).
    Cleanup(CleanupArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workloads, each as NAME or NAME:key=value,... (see `fsarena list`).
    #[arg(value_name = "WORKLOAD")]
    pub workloads: Vec<String>,
    /// Filesystems to make on loop images, comma-separated (ext2,ext3,ext4,xfs,btrfs,tmpfs).
    /// Default: every one this machine can make (none when only --dir is given).
    #[arg(long, value_name = "LIST")]
    pub fs: Option<String>,
    /// Also run in an existing directory (fsarena works in a fresh subdirectory of it).
    #[arg(long, value_name = "PATH")]
    pub dir: Vec<PathBuf>,
    /// Size of each loop image and tmpfs (K M G T = powers of 1024, KB MB GB TB = of 1000).
    #[arg(long, value_name = "SIZE", default_value = "4GiB")]
    pub size: String,
    /// Directory for loop images, mount points and the state file.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_IMAGE_DIR)]
    pub image_dir: PathBuf,
    /// Extra mkfs options for one filesystem, e.g. --mkfs-opt 'xfs=-d agcount=120'.
    #[arg(long = "mkfs-opt", value_name = "FS=OPTS")]
    pub mkfs_opt: Vec<String>,
    /// Mount options for one filesystem, e.g. --mount-opt ext4=data=writeback,noatime.
    #[arg(long = "mount-opt", value_name = "FS=OPTS")]
    pub mount_opt: Vec<String>,
    /// Repetitions of every workload on every target (each on a freshly made filesystem).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub reps: u32,
    /// Cache state before each phase: cold (sync, drop caches, remount), warm (read phases
    /// run once unmeasured first), keep (nothing).
    #[arg(long, value_name = "cold|warm|keep", default_value = "cold")]
    pub cache: String,
    /// When writes are synced: end (fsync/syncfs inside the timing), none (old Bonnie,
    /// flagged not-synced), each (fsync after every write, like bonnie++ -b).
    #[arg(long, value_name = "end|none|each", default_value = "end")]
    pub sync: String,
    /// Data written: random (incompressible), zeros, text (compresses like source code),
    /// compress:PCT.
    #[arg(
        long,
        value_name = "random|zeros|text|compress:PCT",
        default_value = "random"
    )]
    pub data: String,
    /// Seed of every random choice (the same in every repetition).
    #[arg(long, value_name = "N", default_value_t = 42)]
    pub seed: u64,
    /// Write the whole run as JSON to PATH.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// No progress lines; only the result tables.
    #[arg(long)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// The image directory the runs used.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_IMAGE_DIR)]
    pub image_dir: PathBuf,
}
