//! File sets: the size of each file drawn from its distribution, its name, mode and
//! directory, all computed from hashes of the seed so any file can be found without the others.

use super::profiles::spread;
use super::*;

pub(super) const WORDS: &[&str] = &[
    "core", "net", "fs", "mm", "block", "crypto", "sound", "drivers", "arch", "include", "lib",
    "kernel", "init", "ipc", "security", "scripts", "tools", "usb", "pci", "scsi", "video",
    "input", "media", "char", "gpu", "power", "acpi", "irq", "dma", "clk", "gpio", "i2c", "spi",
    "mtd", "tty", "serial", "hid", "ata", "md", "nfs", "ext3", "xfs", "proc", "sysfs", "sched",
    "time", "timer", "signal", "fork", "exit", "page", "slab", "swap", "vmscan", "filemap",
    "inode", "dentry", "super", "namei", "file", "buffer", "bio", "elevator", "socket", "tcp",
    "udp", "ip", "route", "neigh", "dev", "skbuff", "filter", "bridge", "vlan", "wireless", "main",
    "util", "common", "setup", "probe", "config", "debug", "trace", "test", "misc",
];

pub(super) fn word(h: u64) -> &'static str {
    WORDS[(h % WORDS.len() as u64) as usize]
}

/// A uniform double in (0, 1) from a hash.
pub(super) fn unit(h: u64) -> f64 {
    ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// A standard normal variate from two hashes (Box–Muller).
pub(super) fn normal(h1: u64, h2: u64) -> f64 {
    (-2.0 * unit(h1).ln()).sqrt() * (std::f64::consts::TAU * unit(h2)).cos()
}

impl SizeDist {
    /// The raw size of draw `(key, i)` before scaling to the set's total.
    pub(super) fn raw(&self, key: u64, i: u64) -> f64 {
        match *self {
            SizeDist::LogNormal { median, sigma, max } => {
                let z = normal(hash(key, 2 * i), hash(key, 2 * i + 1));
                (median * (sigma * z).exp()).min(max as f64)
            }
            SizeDist::Uniform { lo, hi } => lo as f64 + unit(hash(key, i)) * (hi - lo) as f64,
        }
    }
}

impl FileSet {
    /// `count` files spread over `dirs` (weights per directory), with sizes from `dist`
    /// scaled to add up to `total_bytes`.
    pub fn new(
        key: u64,
        naming: Naming,
        dist: SizeDist,
        count: u64,
        total_bytes: u64,
        weights: &[f64],
    ) -> Self {
        let start = spread(count, weights);
        let raw_sum: f64 = (0..count).map(|i| dist.raw(key, i)).sum();
        let factor = if raw_sum > 0.0 {
            total_bytes as f64 / raw_sum
        } else {
            0.0
        };
        Self {
            key,
            naming,
            dist,
            start,
            factor,
            total_bytes,
        }
    }

    /// Number of files.
    pub fn len(&self) -> u64 {
        *self.start.last().unwrap_or(&0)
    }

    /// Whether the set has no files.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The indices of the files in directory `d`.
    pub fn in_dir(&self, d: usize) -> std::ops::Range<u64> {
        self.start[d]..self.start[d + 1]
    }

    /// The directory of file `i`.
    pub fn dir_of(&self, i: u64) -> usize {
        self.start.partition_point(|&s| s <= i) - 1
    }

    /// The size of file `i` in bytes.
    pub fn size(&self, i: u64) -> u64 {
        (self.dist.raw(self.key, i) * self.factor).round() as u64
    }

    /// The sum of all sizes (equal to the requested total up to rounding).
    pub fn bytes(&self) -> u64 {
        (0..self.len()).map(|i| self.size(i)).sum()
    }

    /// The requested total.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// The mode bits of file `i`: 0644, or 0755 for one file in 500 of source trees.
    pub fn mode(&self, i: u64) -> u32 {
        let exec =
            matches!(self.naming, Naming::Source) && hash(self.key ^ 0x6d6f_6465, i) % 500 == 0;
        if exec {
            0o755
        } else {
            0o644
        }
    }

    /// The name of file `i` (unique within its directory).
    pub fn name(&self, i: u64) -> String {
        let h = hash(self.key ^ 0x6e61_6d65, i);
        let local = i - self.start[self.dir_of(i)];
        match self.naming {
            Naming::Source => {
                let ext = match h % 100 {
                    0..=44 => "c",
                    45..=79 => "h",
                    80..=84 => "S",
                    85..=89 => "txt",
                    _ => "",
                };
                if ext.is_empty() {
                    let base = if h % 2 == 0 { "Makefile" } else { "Kconfig" };
                    format!("{base}.{local}")
                } else {
                    format!("{}-{local}.{ext}", word(h >> 8))
                }
            }
            Naming::Objects => {
                let ext = ["o", "o.cmd", "ko", "mod.c", "a"][(h % 5) as usize];
                format!("{}-{local}.{ext}", word(h >> 8))
            }
            Naming::Squid => format!("{i:08X}"),
            Naming::Maildir => {
                let t = 1_700_000_000 + i * 37;
                format!(
                    "{t}.M{}P{}Q{local}.fsarena,S={}:2,S",
                    h % 1_000_000,
                    1000 + (h >> 20) % 30_000,
                    self.size(i)
                )
            }
            Naming::Media => {
                if h % 2 == 0 {
                    format!("IMG_{local:04}.JPG")
                } else {
                    format!("track-{local:02}.flac")
                }
            }
            Naming::Desktop => {
                let ext = [
                    "txt", "pdf", "odt", "png", "jpg", "html", "xml", "csv", "ini", "log",
                ][(h % 10) as usize];
                format!("{}-{local}.{ext}", word(h >> 8))
            }
        }
    }
}
