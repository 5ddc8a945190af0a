//! Aging: a step of a loop target's lifecycle between mkfs and the trial that fills and
//! churns the fresh filesystem to a reproducible aged state, so that workloads run on a
//! filesystem as users have it rather than fresh from mkfs (issue 38; docs/aging.md).
//!
//! The 2006 seed article names the limit: "all tests were done in pristine environment,
//! not accounting for fragmentation and other effects happening in real environments".
//! Geriatrix (Kadekodi et al., USENIX ATC '18) and Impressions (Agrawal et al., FAST '09)
//! age filesystems by replaying creates and deletes drawn from measured distributions until
//! a target fullness is reached; this driver does the same with fsarena's profiles
//! ([`profiles`]), deterministically from the run's seed, and without a trace: what it
//! reproduces is the distributions, not a particular machine's history.
//!
//! Workloads never know whether their filesystem was aged: the aged files live in
//! `aged/` beside the work directory, and the workload runs in the space left.

pub mod churn;
pub mod frag;
pub mod kept;
pub mod profiles;

use super::fs::FsType;
use crate::data::DataPool;
use crate::error::usage;
use crate::policy::DataPolicy;
use crate::probe::sys;
use crate::result::{Aging, FileFragments, FreeSpace};
use anyhow::{Context, Result};
pub use profiles::Profile;
use std::path::Path;

/// Default fullness the filesystem is aged to, in percent of its capacity.
pub const DEFAULT_FILL_PCT: f64 = 75.0;
/// Default bytes written in all while aging, in multiples of the capacity.
pub const DEFAULT_CHURN: f64 = 2.0;

/// What `--age PROFILE[:fill=PCT,churn=X,independent]` asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AgeSpec {
    pub profile: Profile,
    /// Fullness to reach, percent of the filesystem's capacity (1–95).
    pub fill_pct: f64,
    /// Bytes written in all (creates, appends, overwrites), in multiples of the capacity;
    /// at most `fill_pct / 100` means filling only, with nothing deleted.
    pub churn: f64,
    /// Whether the aged image is kept for later trials to start from (`--age-cache on`,
    /// the default; [`kept`]). Not part of the aged state: not in [`Self::canonical`].
    pub keep: bool,
    /// Whether each repetition ages from its own seed ([`Self::seed_for`]), so that the
    /// repetitions sample the aging process too, instead of all starting from one aged
    /// state: `independent` in the spec.
    pub independent: bool,
}

impl AgeSpec {
    /// Parses `desktop`, `database:fill=60`, `web-cache:fill=80,churn=3`,
    /// `desktop:independent`.
    pub fn parse(text: &str) -> Result<AgeSpec> {
        let (name, params) = match text.split_once(':') {
            Some((n, p)) => (n, p),
            None => (text, ""),
        };
        let profile = Profile::parse(name)?;
        let mut spec = AgeSpec {
            profile,
            fill_pct: DEFAULT_FILL_PCT,
            churn: DEFAULT_CHURN,
            keep: true,
            independent: false,
        };
        for kv in params.split(',').filter(|s| !s.is_empty()) {
            if kv == "independent" {
                spec.independent = true;
                continue;
            }
            let (k, v) = kv.split_once('=').ok_or_else(|| {
                usage(format!(
                    "--age {}: '{}' is not KEY=VALUE (fill=PCT, churn=X) or independent",
                    crate::error::echo(text),
                    crate::error::echo(kv)
                ))
            })?;
            let number = |what: &str, lo: f64, hi: f64| -> Result<f64> {
                let x: f64 = v.trim_end_matches('%').parse().map_err(|_| {
                    usage(format!(
                        "--age {}: {what}={}: not a number",
                        crate::error::echo(text),
                        crate::error::echo(v)
                    ))
                })?;
                if !(lo..=hi).contains(&x) {
                    return Err(usage(format!(
                        "--age {}: {what}={x}: must be from {lo} to {hi}",
                        crate::error::echo(text)
                    )));
                }
                Ok(x)
            };
            match k {
                "fill" => spec.fill_pct = number("fill", 1.0, 95.0)?,
                "churn" => spec.churn = number("churn", 0.0, 20.0)?,
                _ => {
                    return Err(usage(format!(
                        "--age {}: unknown parameter '{}'{}; valid: fill, churn, independent",
                        crate::error::echo(text),
                        crate::error::echo(k),
                        crate::error::did_you_mean(k, ["fill", "churn", "independent"])
                    )))
                }
            }
        }
        Ok(spec)
    }

    /// The spec with every parameter spelled out: `desktop:fill=75,churn=2` (and
    /// `,independent` when asked), as reports show it and as kept images are keyed.
    pub fn canonical(&self) -> String {
        format!(
            "{}:fill={},churn={}{}",
            self.profile.name(),
            self.fill_pct,
            self.churn,
            if self.independent { ",independent" } else { "" }
        )
    }

    /// The seed repetition `rep` (from 1) ages from, in a run seeded with `run_seed`: the
    /// run's seed, but with `independent` a seed of each repetition's own after the first
    /// (the top 53 bits of FNV-1a of `SEED/age/REP`, a number any JSON reader keeps
    /// exactly), so that no two repetitions share an aged state. A repetition's aged state
    /// is reproduced alone by `--seed` of the seed it recorded (`provision.aging.seed`)
    /// with the same spec without `independent`.
    pub fn seed_for(&self, run_seed: u64, rep: u32) -> u64 {
        if !self.independent || rep <= 1 {
            return run_seed;
        }
        crate::fnv::hash(format!("{run_seed}/age/{rep}").as_bytes()) >> 11
    }
}

/// Ages the fresh filesystem mounted at `mountpoint` as `spec` says, deterministically from
/// `seed`, into its directory `aged/`: the goal is set from the capacity and the space its
/// metadata takes fresh ([`churn::Goal::new`]). The aged files hold incompressible data.
/// How far it is goes to the progress display ([`crate::term::set_status`]), naming the
/// target `name`; on stderr not a terminal, a line at each quarter. The caller then lets
/// time pass (an unmount and mount: what a filesystem keeps only while files are in use,
/// such as xfs's speculative preallocation beyond the end of appended files, goes as it
/// would in the weeks a real filesystem ages) and [`measure`]s it.
pub fn age_mounted(
    mountpoint: &Path,
    spec: &AgeSpec,
    seed: u64,
    name: &str,
) -> Result<churn::Churned> {
    let before = sys::space(mountpoint)?;
    let goal = churn::Goal::new(
        spec,
        before.capacity_bytes,
        before.capacity_bytes - before.free_bytes,
    );
    let root = mountpoint.join("aged");
    std::fs::create_dir(&root).with_context(|| format!("creating {}", root.display()))?;
    let pool = DataPool::new(DataPolicy::Random, seed);
    let started = std::time::Instant::now();
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut said = 0;
    let mut tick = |written: u64| {
        let share = (written as f64 / goal.write_bytes.max(1) as f64).min(1.0);
        let pct = (share * 100.0) as u64;
        let left = (share > 0.02).then(|| started.elapsed().as_secs_f64() * (1.0 / share - 1.0));
        let text = format!(
            "aging {name} ({}): {pct}% of {} written{}",
            spec.profile.name(),
            approx_size(goal.write_bytes),
            left.map(|s| format!(", about {s:.0}\u{a0}s left"))
                .unwrap_or_default()
        );
        if !terminal && pct / 25 > said {
            said = pct / 25;
            crate::term::stderr_line(&text);
        }
        crate::term::set_status(Some(text));
    };
    let done = churn::age(&root, spec, goal, seed, &pool, &mut tick);
    crate::term::set_status(None);
    done.with_context(|| format!("aging {} ({})", mountpoint.display(), spec.canonical()))
}

/// What aging `done` from `seed` left on the filesystem `fs` on `device` mounted at
/// `mountpoint`: the space used, and how fragmented the aged files and the free space are
/// ([`frag`]); a measurement that cannot be made (no FIEMAP) is left out and said on stderr.
pub fn measure(
    mountpoint: &Path,
    spec: &AgeSpec,
    seed: u64,
    done: &churn::Churned,
    name: &str,
    fs: FsType,
    device: &str,
) -> Result<Aging> {
    let root = mountpoint.join("aged");
    let after = sys::space(mountpoint)?;
    crate::term::set_status(Some(format!("aging {name}: measuring fragmentation")));
    let file_fragments = frag::files(&root).map(|f| FileFragments {
        files: f.files,
        mean: f.mean,
        p99: f.p99,
        fragmented_share: f.fragmented_share,
    });
    let free_space = frag::free_space(fs, device, mountpoint, mountpoint).map(|f| FreeSpace {
        method: f.method.to_string(),
        extents: f.extents,
        free_bytes: f.free_bytes,
        largest_bytes: f.largest_bytes,
    });
    crate::term::set_status(None);
    Ok(Aging {
        spec: spec.canonical(),
        seed: Some(seed),
        seconds: done.seconds,
        operations: done.operations,
        bytes_written: done.bytes_written,
        files: done.files,
        dirs: done.dirs,
        full: done.full,
        used_bytes: after.capacity_bytes - after.free_bytes,
        capacity_bytes: after.capacity_bytes,
        reused: false,
        copy_s: None,
        copy_how: None,
        file_fragments: measured(file_fragments, name, "file fragmentation"),
        free_space: measured(free_space, name, "free-space fragmentation"),
    })
}

/// Bytes as read in a progress line: `7.7 GiB`, `512.0 MiB`.
fn approx_size(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.1}\u{a0}GiB", b / (1u64 << 30) as f64)
    } else {
        format!("{:.1}\u{a0}MiB", b / (1u64 << 20) as f64)
    }
}

/// `r`'s value, or `None` with a note on stderr saying why target `name` has no `what`.
fn measured<T>(r: Result<T>, name: &str, what: &str) -> Option<T> {
    match r {
        Ok(x) => Some(x),
        Err(e) => {
            crate::term::stderr_note(&format!("fsarena: {name}: no {what}: {e:#}"));
            None
        }
    }
}

#[cfg(test)]
mod tests;
