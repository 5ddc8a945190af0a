//! `provision`: the filesystem's own tools, timed — mkfs, mount, umount, fsck — and the
//! smallest device mkfs accepts.
//!
//! Sources: the 2001 comparison by Jim Bray (seed article 002), whose notes on reiserfs
//! read "slow mkfs ? slow mount ? slow check" and "won't make 80MB filesystem", on xfs
//! "very fast makefs, instant check", and "Ext3 mounts about as quickly as xfs, checks a
//! little slower"; the 2004 web-cache benchmark (seed 003): ext2 "fails … for checking a
//! filesystem (fscking) where it can be frighteningly slow on large filesystems"; and the
//! 2001 Galli benchmarks (seed 000), done by hand as "mkfs...mount...time time time
//! umount". Here each of those steps is a phase whose single operation is the command
//! (through [`TrialContext::target_phase`]; headline figure: seconds):
//!
//! 1. `mkfs` — a new filesystem on the trial's loop device (unmounted first, untimed),
//!    with fsarena's and the user's mkfs options (no discard, no lazy initialisation).
//! 2. `mount` — the first mount of the empty filesystem.
//! 3. `populate` — the corpus `profile` at `scale` written into it (a write phase like any
//!    other: MB/s, the sync policy applies; default `source-tree`, 21,280 files, 222 MiB).
//! 4. `umount` — unmounting the populated filesystem, which writes back what is still
//!    dirty (little under the default `--sync end`, everything under `--sync none`).
//! 5. `mount_populated` — mounting it again: journal replay or log recovery checks,
//!    reading the superblock and root of a filesystem with something in it.
//! 6. `fsck` — the read-only check of the unmounted filesystem: `e2fsck -f -n`,
//!    `xfs_repair -n`, `btrfs check --readonly`. Damage found fails the trial with the
//!    checker's output.
//!
//! The tools start with the device uncached whatever `--cache` says: the kernel discards a
//! block device's page cache when its last opener closes it (see
//! [`TrialContext::target_phase`]); the phases' `dev_read_bytes` show what each read from
//! the device. `populate` follows the cache policy like any phase.
//!
//! With `min_size=true`, the smallest device size mkfs accepts is then searched by
//! bisection (untimed): scratch images in the image directory, mkfs'd but never mounted,
//! deleted after each try; between 1 MiB and the target's own size on a 1 MiB grid, at
//! most [`MAX_TRIES`] tries. It is reported on the `mkfs` phase as `min_size_bytes` (the
//! smallest size accepted) and `min_size_refused_bytes` (the largest refused, 0 when 1 MiB
//! was accepted): the true minimum lies between them.
//!
//! Loop targets only: the plan refuses tmpfs and directory targets before anything is
//! touched ([`check_target`]), and a trial on one fails saying so.

use crate::context::{PhaseKind, PhaseSpec, Primary, TrialContext};
use crate::corpus::{Corpus, PROFILES};
use crate::error::usage;
use crate::figures::Figure;
use crate::provision::fs::Support;
use crate::provision::{tools_of, TargetSpec};
use crate::workload::{IoContext, ParamKind, ParamSpec, Params, Workload, WorkloadInfo};
use anyhow::Result;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "profile",
        kind: ParamKind::Choice(PROFILES),
        default: "source-tree",
        unit: "",
        help: "corpus written by the populate phase",
    },
    ParamSpec {
        name: "scale",
        kind: ParamKind::Float,
        default: "1.0",
        unit: "× corpus",
        help: "multiplies the corpus (source-tree at 1.0: 21,280 files, 222 MiB)",
    },
    ParamSpec {
        name: "min_size",
        kind: ParamKind::Bool,
        default: "false",
        unit: "",
        help: "also find the smallest size mkfs accepts (bisection on scratch images)",
    },
];

const fn tool(name: &'static str, kind: PhaseKind) -> PhaseSpec {
    PhaseSpec {
        name,
        kind,
        primary: Primary::Seconds,
        ops_unit: "runs/s",
    }
}

const MKFS: PhaseSpec = tool("mkfs", PhaseKind::Write);
const MOUNT: PhaseSpec = tool("mount", PhaseKind::Read);
const POPULATE: PhaseSpec = PhaseSpec {
    name: "populate",
    kind: PhaseKind::Write,
    primary: Primary::MbPerS,
    ops_unit: "entries/s",
};
const UMOUNT: PhaseSpec = tool("umount", PhaseKind::Write);
const MOUNT_POPULATED: PhaseSpec = tool("mount_populated", PhaseKind::Read);
const FSCK: PhaseSpec = tool("fsck", PhaseKind::Read);

/// With `min_size`: the smallest size mkfs accepted and the largest it refused.
pub const FIGURES: &[Figure] = &[
    Figure::neither("min_size_bytes", "bytes").on(&["mkfs"]),
    Figure::neither("min_size_refused_bytes", "bytes").on(&["mkfs"]),
];

/// The `provision` workload.
pub static INFO: WorkloadInfo = WorkloadInfo {
    name: "provision",
    about: "the filesystem's tools timed: mkfs, mount, populate, umount, mount again, \
            read-only fsck; optionally the smallest size mkfs accepts (loop targets only)",
    params: PARAMS,
    phases: &[MKFS, MOUNT, POPULATE, UMOUNT, MOUNT_POPULATED, FSCK],
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

/// The size grid and lower bound of the smallest-size search.
const MIN_SIZE_STEP: u64 = 1 << 20;
/// Most mkfs runs of one smallest-size search (the 1 MiB floor included): 1 MiB
/// resolution up to 512 MiB targets, 8 MiB at 4 GiB.
pub const MAX_TRIES: u32 = 10;

fn build(p: &Params) -> Result<Box<dyn Workload>> {
    let scale = p.float("scale").expect("default");
    let profile = p.choice("profile").to_string();
    Corpus::new(&profile, scale, 0).map_err(|e| usage(format!("provision: {e}")))?;
    Ok(Box::new(Provision {
        profile,
        scale,
        min_size: p.flag("min_size"),
    }))
}

/// Whether `provision` can run on `target`: a loop target whose read-only checker is
/// installed. Called when the plan is made, before anything is touched.
pub fn check_target(target: &TargetSpec) -> Result<()> {
    match target {
        TargetSpec::Loop { fs, .. } => match fs.fsck_support() {
            Support::Yes => Ok(()),
            Support::No(why) => Err(usage(format!("provision on {}: {why}", fs.name()))),
        },
        other => Err(usage(crate::provision::needs_loop(
            "provision",
            &other.name(),
            other.kind(),
        ))),
    }
}

struct Provision {
    profile: String,
    scale: f64,
    min_size: bool,
}

impl Workload for Provision {
    fn run(&self, cx: &mut TrialContext) -> Result<()> {
        // The trial's filesystem arrives made and mounted; provision makes it again, timed.
        cx.fs_tools("provision")?.unmount()?;
        let corpus = Corpus::new(&self.profile, self.scale, cx.seed())?;
        cx.target_phase(&MKFS, |t| tools_of(t, "provision")?.mkfs())?;
        cx.target_phase(&MOUNT, |t| tools_of(t, "provision")?.mount())?;
        let root = cx.workdir().to_path_buf();
        std::fs::create_dir(&root).on("mkdir", &root)?;
        cx.phase(&POPULATE, 1, |w| {
            corpus.write(w, &root)?;
            w.end_fs(&root).on("syncfs", &root)
        })?;
        cx.target_phase(&UMOUNT, |t| tools_of(t, "provision")?.unmount())?;
        cx.target_phase(&MOUNT_POPULATED, |t| tools_of(t, "provision")?.mount())?;
        cx.fs_tools("provision")?.unmount()?;
        cx.target_phase(&FSCK, |t| tools_of(t, "provision")?.fsck())?;
        if self.min_size {
            let ceiling = cx.target_info().size_bytes;
            let tools = cx.fs_tools("provision")?;
            let found = bisect_min_size(MIN_SIZE_STEP, ceiling, MIN_SIZE_STEP, MAX_TRIES, |s| {
                tools.mkfs_accepts(s)
            })?;
            cx.note_phase(MKFS.name, "min_size_bytes", found.accepted_bytes as f64);
            cx.note_phase(
                MKFS.name,
                "min_size_refused_bytes",
                found.refused_bytes as f64,
            );
        }
        Ok(())
    }
}

/// The outcome of a smallest-size search: mkfs accepted `accepted_bytes` and refused
/// `refused_bytes` (0 when it accepted the floor), so the true minimum lies in
/// (refused, accepted].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MinSize {
    pub accepted_bytes: u64,
    pub refused_bytes: u64,
    /// mkfs runs made.
    pub tries: u32,
}

/// Bisection for the smallest size that `accepts` says yes to, on a grid of `step` bytes
/// from `floor` up to `ceiling` (known to be accepted: the target was made at that size),
/// with at most `max_tries` calls; the floor is tried first. Assumes that mkfs accepting
/// a size accepts every larger one.
pub fn bisect_min_size(
    floor: u64,
    ceiling: u64,
    step: u64,
    max_tries: u32,
    mut accepts: impl FnMut(u64) -> Result<bool>,
) -> Result<MinSize> {
    let step = step.max(1);
    if floor >= ceiling || accepts(floor)? {
        let tries = u32::from(floor < ceiling);
        return Ok(MinSize {
            accepted_bytes: floor.min(ceiling),
            refused_bytes: 0,
            tries,
        });
    }
    let (mut lo, mut hi, mut tries) = (floor, ceiling, 1);
    while hi - lo > step && tries < max_tries {
        let mid = ((lo + (hi - lo) / 2) / step * step).max(lo + step);
        if accepts(mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
        tries += 1;
    }
    Ok(MinSize {
        accepted_bytes: hi,
        refused_bytes: lo,
        tries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{DataPolicy, SyncPolicy};
    use crate::workload::testutil::in_context;

    const MIB: u64 = 1 << 20;

    /// Runs the search against an mkfs that accepts sizes from `min` on, checking every
    /// size it is asked about.
    fn search(min: u64, ceiling: u64, max_tries: u32) -> MinSize {
        let mut asked = Vec::new();
        let r = bisect_min_size(MIB, ceiling, MIB, max_tries, |s| {
            asked.push(s);
            Ok(s >= min)
        })
        .unwrap();
        assert!(asked.len() as u32 <= max_tries, "{asked:?}");
        assert_eq!(asked.len() as u32, r.tries);
        assert!(asked
            .iter()
            .all(|&s| (MIB..=ceiling).contains(&s) && s % MIB == 0));
        r
    }

    #[test]
    fn finds_the_exact_minimum_with_enough_tries() {
        // xfsprogs 6.1 refuses below 300 MiB; btrfs-progs 6.2 below 109 MiB.
        let r = search(300 * MIB, 512 * MIB, 12);
        assert_eq!((r.accepted_bytes, r.refused_bytes), (300 * MIB, 299 * MIB));
        let r = search(109 * MIB + 5, 512 * MIB, 12);
        assert_eq!((r.accepted_bytes, r.refused_bytes), (110 * MIB, 109 * MIB));
    }

    #[test]
    fn floor_accepted_or_tries_exhausted() {
        let r = search(4096, 512 * MIB, 10);
        assert_eq!((r.accepted_bytes, r.refused_bytes, r.tries), (MIB, 0, 1));
        // Four tries on 4 GiB: the answer is bracketed, not exact.
        let r = search(300 * MIB, 4096 * MIB, 4);
        assert!(
            r.refused_bytes < 300 * MIB && r.accepted_bytes >= 300 * MIB,
            "{r:?}"
        );
        assert!(r.accepted_bytes - r.refused_bytes > MIB);
        // A ceiling at the floor needs no mkfs at all.
        assert_eq!(search(MIB, MIB, 10).tries, 0);
    }

    #[test]
    fn errors_stop_the_search() {
        let e = bisect_min_size(MIB, 64 * MIB, MIB, 10, |_| anyhow::bail!("mkfs missing"));
        assert!(e.unwrap_err().to_string().contains("mkfs missing"));
    }

    #[test]
    fn a_target_without_tools_fails_clearly() {
        let w = build(&Params::parse("provision", PARAMS, "scale=0.001").unwrap()).unwrap();
        let err = in_context(DataPolicy::Random, SyncPolicy::End, |cx| {
            let e = w.run(cx).unwrap_err();
            assert!(cx.phases().is_empty());
            e.to_string()
        });
        assert!(err.contains("provision needs a loop target"), "{err}");
        let tmpfs = TargetSpec::Tmpfs {
            size_bytes: 64 * MIB,
            mount_opts: String::new(),
        };
        let e = check_target(&tmpfs).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("tmpfs is a tmpfs target"), "{e}");
    }
}
