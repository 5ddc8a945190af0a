//! `space`: how much disk a tree of files takes, and how much compression saves.
//!
//! Source: the comment under "First benchmarks of the ext4 file system" (2006, seed
//! article 004) whose table's second column "measures the amount of disk used to store
//! 655MB of raw data (which was 3 different copies of the Linux kernel sources)": reiser4
//! with lzo and gzip compression 278 and 213 MB, ext2/3/4 816, xfs 779. The same comment
//! warns that "bonnie++ writes test files which are almost all zeros, compression speeds
//! things up dramatically" — run this workload with `--data zeros`, `text` and `random` to
//! see how much of a compressing filesystem's speed is the data's doing.
//!
//! One timed phase, `store`: `copies` copies (default 3) of the corpus `profile` at `scale`
//! (default `source-tree` at 1.0: 21,280 files, 222 MiB a copy), each generated from its
//! own seed (three *different* trees), written into `copy-1`, `copy-2`, … of the work
//! directory with contents from `--data`; the sync policy applies as to any write phase.
//! Then, untimed, a syncfs (whatever `--sync` says: delayed allocation and compression
//! happen at writeback, so space is only accounted after it) and the figures, attached to
//! the phase as extra figures:
//!
//! * `logical_bytes` — the sum of st_size of the regular files (the "raw data"); checked
//!   against the corpus's own total.
//! * `used_statfs_bytes` — used blocks ((f_blocks − f_bfree) × f_frsize) after the store
//!   minus before it, both read right after a syncfs: the filesystem's own account,
//!   metadata included (inode tables that grow, directories, btrfs's metadata chunks and
//!   their DUP copy). On a directory target, other writers to that filesystem add noise.
//! * `used_blocks_bytes` — the sum of st_blocks × 512 over every file, directory and
//!   symlink written, what `du` adds up. btrfs counts *uncompressed* bytes in st_blocks
//!   (measured here: a 200,000-byte file of zeros on `compress=zstd` reports 392 blocks,
//!   while statfs shows 40 MB of such files taking 1.9 MB), so on btrfs only the statfs
//!   figure shows compression.
//! * `efficiency` = logical_bytes / used_statfs_bytes and `blocks_efficiency` =
//!   logical_bytes / used_blocks_bytes (better higher, as its `FIGURES` declare).
//!   Above 1: the data takes less room than its size (compression, inline small files);
//!   below 1: block rounding and metadata cost more than they save.

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext};
use crate::corpus::{Corpus, PROFILES};
use crate::error::usage;
use crate::figures::Figure;
use crate::probe::recorder::Op;
use crate::probe::sys;
use crate::workload::{IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::{ensure, Result};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "profile",
        kind: ParamKind::Choice(PROFILES),
        default: "source-tree",
        unit: "",
        help: "corpus stored in each copy",
    },
    ParamSpec {
        name: "scale",
        kind: ParamKind::Float,
        default: "1.0",
        unit: "× corpus",
        help: "multiplies each copy (source-tree at 1.0: 21,280 files, 222 MiB)",
    },
    ParamSpec {
        name: "copies",
        kind: ParamKind::Count,
        default: "3",
        unit: "trees",
        help: "copies stored, each generated from its own seed (3: the seed's 3 kernel trees)",
    },
];

const STORE: PhaseSpec = PhaseSpec {
    name: "store",
    kind: PhaseKind::Write,
    primary: Primary::MbPerS,
    ops_unit: "entries/s",
};

/// What the stored files take, and logical bytes per byte used.
pub const FIGURES: &[Figure] = &[
    Figure::neither("logical_bytes", "bytes"),
    Figure::neither("used_statfs_bytes", "bytes"),
    Figure::neither("used_blocks_bytes", "bytes"),
    Figure::higher("efficiency", "ratio"),
    Figure::higher("blocks_efficiency", "ratio"),
];

/// The `space` workload.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "space",
    about: "store copies of a corpus (3 source trees) and report logical bytes, space used \
            (statfs and st_blocks) and efficiency = logical / used",
    params: PARAMS,
    phases: &[STORE],
    figures: FIGURES,
    classic_tool: None,
    param_applies: None,
    after_merge: None,
    resolve: None,
    database: None,
    programs: &[],
    phase_time_knobs: &[],
    build,
};

/// The most copies stored: 100 source trees at scale 1 are 2.1 million files and 22 GiB,
/// past any target meant for this; 2^64−1 built every copy's description in memory and
/// aborted.
const MAX_COPIES: u64 = 100;

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    let scale = p.float("scale").expect("default");
    let profile = p.choice("profile").to_string();
    Corpus::new(&profile, scale, 0).map_err(|e| usage(format!("space: {e}")))?;
    let copies = p.count("copies").expect("default");
    if !(1..=MAX_COPIES).contains(&copies) {
        return Err(usage(format!(
            "space: copies={copies}: give 1 to {MAX_COPIES} (each copy is a whole corpus, \
             described in memory before the phase starts)"
        )));
    }
    Ok(Box::new(Space {
        profile,
        scale,
        copies,
    }))
}

struct Space {
    profile: String,
    scale: f64,
    copies: u64,
}

impl Workload for Space {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let corpora = (0..self.copies)
            .map(|i| Corpus::new(&self.profile, self.scale, cx.seed().wrapping_add(i)))
            .collect::<Result<Vec<_>>>()?;
        let root = cx.workdir().to_path_buf();
        sys::syncfs(&root).on("syncfs", &root)?;
        let before = sys::space(&root)?;
        cx.phase(&STORE, 1, |w| {
            for (i, corpus) in corpora.iter().enumerate() {
                let dir = root.join(format!("copy-{}", i + 1));
                let t = w.start();
                fs::create_dir(&dir).on("mkdir", &dir)?;
                w.done(Op::Mkdir, t, 0);
                corpus.write(w, &dir)?;
            }
            w.end_fs(&root).on("syncfs", &root)
        })?;
        sys::syncfs(&root).on("syncfs", &root)?;
        let after = sys::space(&root)?;
        let tree = du(&root)?;
        let want: u64 = corpora.iter().map(|c| c.totals().bytes).sum();
        ensure!(
            tree.logical_bytes == want,
            "space: the stored files add up to {} bytes, the corpus to {want}",
            tree.logical_bytes
        );
        let figures = Figures {
            logical_bytes: tree.logical_bytes,
            used_statfs_bytes: after.used_bytes() as f64 - before.used_bytes() as f64,
            used_blocks_bytes: tree.blocks_bytes,
        };
        for (key, value) in figures.extras() {
            cx.note(key, value);
        }
        Ok(())
    }
}

/// What a `du` of a tree adds up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    /// st_size of regular files.
    pub(crate) logical_bytes: u64,
    /// st_blocks × 512 of every entry below the root.
    pub(crate) blocks_bytes: u64,
}

/// Walks everything below `root` with lstat (not following symlinks), like `du`.
pub(crate) fn du(root: &Path) -> Result<Usage> {
    let mut u = Usage::default();
    for entry in fs::read_dir(root).on("readdir", root)? {
        let path = entry.on("readdir", root)?.path();
        let md = fs::symlink_metadata(&path).on("lstat", &path)?;
        u.blocks_bytes += md.blocks() * 512;
        if md.is_dir() {
            let sub = du(&path)?;
            u.logical_bytes += sub.logical_bytes;
            u.blocks_bytes += sub.blocks_bytes;
        } else if md.is_file() {
            u.logical_bytes += md.len();
        }
    }
    Ok(u)
}

/// The space figures of one store.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Figures {
    logical_bytes: u64,
    /// statfs used after − before (negative if the filesystem freed more than it used).
    used_statfs_bytes: f64,
    used_blocks_bytes: u64,
}

/// logical / used, when something was used.
fn efficiency(logical: u64, used: f64) -> Option<f64> {
    (used > 0.0).then(|| logical as f64 / used)
}

impl Figures {
    /// The extra figures, by name; an efficiency only where its denominator is positive.
    fn extras(&self) -> Vec<(&'static str, f64)> {
        let mut v = vec![
            ("logical_bytes", self.logical_bytes as f64),
            ("used_statfs_bytes", self.used_statfs_bytes),
            ("used_blocks_bytes", self.used_blocks_bytes as f64),
        ];
        if let Some(e) = efficiency(self.logical_bytes, self.used_statfs_bytes) {
            v.push(("efficiency", e));
        }
        if let Some(e) = efficiency(self.logical_bytes, self.used_blocks_bytes as f64) {
            v.push(("blocks_efficiency", e));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{DataPolicy, SyncPolicy};
    use crate::workload::testutil::in_context;

    #[test]
    fn efficiency_is_logical_over_used() {
        assert_eq!(efficiency(655, 816.0), Some(655.0 / 816.0));
        assert_eq!(efficiency(100, 25.0), Some(4.0));
        assert_eq!(efficiency(100, 0.0), None);
        assert_eq!(efficiency(100, -4096.0), None);
        let f = Figures {
            logical_bytes: 3000,
            used_statfs_bytes: 1000.0,
            used_blocks_bytes: 0,
        };
        let names: Vec<_> = f.extras().iter().map(|e| e.0).collect();
        assert_eq!(
            names,
            [
                "logical_bytes",
                "used_statfs_bytes",
                "used_blocks_bytes",
                "efficiency"
            ]
        );
        assert_eq!(f.extras()[3].1, 3.0);
        for (name, _) in f.extras() {
            let unit = crate::figures::unit(INFO.figures, "store", name);
            assert!(name.contains("efficiency") || unit == "bytes", "{name}");
        }
        assert_eq!(
            crate::figures::better(INFO.figures, "store", "efficiency"),
            crate::figures::Better::Higher
        );
    }

    #[test]
    fn du_adds_sizes_and_blocks() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("a");
        fs::create_dir(&d).unwrap();
        fs::write(d.join("x"), vec![7u8; 10_000]).unwrap();
        fs::write(tmp.path().join("y"), b"hello").unwrap();
        std::os::unix::fs::symlink("y", tmp.path().join("l")).unwrap();
        let u = du(tmp.path()).unwrap();
        assert_eq!(u.logical_bytes, 10_005);
        assert!(u.blocks_bytes >= 10_000, "{u:?}");
    }

    #[test]
    fn stores_the_copies_and_notes_the_figures() {
        let params = Params::parse("space", PARAMS, "scale=0.005,copies=2").unwrap();
        let w = build(&params).unwrap();
        let phases = in_context(DataPolicy::Text, SyncPolicy::End, |cx| {
            w.run(cx).unwrap();
            let root = cx.workdir().to_path_buf();
            assert!(root.join("copy-1").is_dir() && root.join("copy-2").is_dir());
            cx.phases().to_vec()
        });
        assert_eq!(phases.len(), 1);
        let p = &phases[0];
        let want: u64 = (0..2)
            .map(|i| {
                Corpus::new("source-tree", 0.005, 42 + i)
                    .unwrap()
                    .totals()
                    .bytes
            })
            .sum();
        assert_eq!(p.extra["logical_bytes"], want as f64);
        assert_eq!(p.bytes_written, want);
        assert!(p.extra["used_blocks_bytes"] >= want as f64 * 0.5);
        assert!(p.extra.contains_key("blocks_efficiency"));
        // Two different trees: the second copy's seed differs.
        let paths = |seed| -> Vec<String> {
            let c = Corpus::new("source-tree", 0.005, seed).unwrap();
            c.entries().map(|e| e.path().to_string()).collect()
        };
        assert_ne!(paths(42), paths(43));
    }

    #[test]
    fn bad_parameters_are_usage_errors() {
        // copies=18446744073709551615 described every copy in memory and aborted; within
        // the parser's 10^12 bound, the workload's own bound refuses it too.
        for bad in [
            "copies=0",
            "scale=0",
            "scale=1000",
            "copies=101",
            "copies=1000000000000",
        ] {
            let p = Params::parse("space", PARAMS, bad).unwrap();
            let e = build(&p).err().expect(bad);
            assert_eq!(crate::error::exit_code(&e), 2, "{bad}: {e}");
        }
        assert!(Params::parse("space", PARAMS, "copies=18446744073709551615").is_err());
        assert!(build(&Params::parse("space", PARAMS, "copies=100").unwrap()).is_ok());
    }
}
