//! A validated plan: what to run where, with which policies. Built from the command line
//! or from a TOML plan file (`--plan`, see [`file`](mod@file) and docs/plans.md); everything is
//! checked here, before any disk is touched.

pub mod build;
pub mod canon;
pub mod file;
pub mod located;
pub mod matrix;

use crate::cli::RunArgs;
use crate::error::{usage, Error};
use crate::policy::Policy;
use crate::size::{format_size, parse_size};
use crate::target::fs::{split_opts, FsType, Support};
use crate::target::{net::NetSpec, TargetSpec};
use crate::workload::WorkloadSpec;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Room kept free in the image directory beyond one image.
pub(crate) const IMAGE_DIR_MARGIN: u64 = 64 << 20;

/// A target of the plan with the name reports give it (`ext4`, `ext4+data=writeback`).
#[derive(Clone, Debug)]
pub struct PlanTarget {
    pub name: String,
    pub spec: TargetSpec,
}

impl From<TargetSpec> for PlanTarget {
    /// The target under its usual name ([`TargetSpec::name`]).
    fn from(spec: TargetSpec) -> Self {
        Self {
            name: spec.name(),
            spec,
        }
    }
}

/// Everything a run needs, validated.
pub struct Plan {
    pub targets: Vec<PlanTarget>,
    pub workloads: Vec<WorkloadSpec>,
    pub policy: Policy,
    pub image_dir: PathBuf,
    pub json: Option<PathBuf>,
    /// Where to write the HTML report, if anywhere.
    pub html: Option<PathBuf>,
    pub quiet: bool,
    /// The plan file it came from, if any.
    pub source: Option<PathBuf>,
    /// The stored run to continue (`--resume`).
    pub resume: Option<String>,
}

fn parse_fs_opts(list: &[String], flag: &str) -> Result<Vec<(String, String)>> {
    list.iter()
        .map(|item| {
            let (fs, opts) = item.split_once('=').ok_or_else(|| {
                usage(format!(
                    "{flag} '{item}': expected FS=OPTIONS, e.g. {flag} ext4=noatime"
                ))
            })?;
            let fs = fs.trim();
            if fs != "tmpfs" {
                FsType::parse(fs).map_err(usage)?;
            }
            Ok((fs.to_string(), opts.to_string()))
        })
        .collect()
}

/// The nearest existing ancestor of `p` (where free space is to be measured).
pub(crate) fn existing_ancestor(p: &Path) -> &Path {
    p.ancestors().find(|a| a.exists()).unwrap_or(Path::new("/"))
}

impl Plan {
    /// Validates the `run` arguments into a plan.
    pub fn from_args(a: &RunArgs) -> Result<Plan> {
        if a.resume.is_some() && a.plan.is_none() {
            return Err(usage(
                "--resume RUN needs --plan FILE: the plan the run was started with",
            ));
        }
        if let Some(path) = &a.plan {
            let f = file::load(path)?;
            let built = build::build(&f, &build::Overrides::from_args(a))?;
            if let Some(e) = built.host_problems.into_iter().next() {
                return Err(e);
            }
            return Ok(Plan {
                json: a.json.clone(),
                html: a.html.clone(),
                quiet: a.quiet,
                resume: a.resume.clone(),
                ..built.plan
            });
        }
        let suite = match (&a.suite, a.workloads.is_empty()) {
            (Some(name), _) => Some(crate::suite::find(name)?),
            (None, true) => Some(crate::suite::find("quick")?),
            (None, false) => None,
        };
        let texts: Vec<String> = match &suite {
            Some(s) => s.workloads.iter().map(|w| w.to_string()).collect(),
            None => a.workloads.clone(),
        };
        let size_text = a
            .size
            .clone()
            .or_else(|| suite.as_ref().and_then(|s| s.size).map(String::from))
            .unwrap_or_else(|| crate::cli::DEFAULT_SIZE.to_string());
        let workloads = texts
            .iter()
            .map(|t| WorkloadSpec::parse(t))
            .collect::<Result<Vec<_>>>()?;
        let reps = a.reps.unwrap_or(crate::cli::DEFAULT_REPS);
        let image_dir = a
            .image_dir
            .clone()
            .unwrap_or_else(|| crate::cli::DEFAULT_IMAGE_DIR.into());
        let policy = Policy {
            cache: (a.cache.as_deref().unwrap_or(crate::cli::DEFAULT_CACHE))
                .parse()
                .map_err(|e| usage(format!("--cache: {e}")))?,
            sync: (a.sync.as_deref().unwrap_or(crate::cli::DEFAULT_SYNC))
                .parse()
                .map_err(|e| usage(format!("--sync: {e}")))?,
            data: (a.data.as_deref().unwrap_or(crate::cli::DEFAULT_DATA))
                .parse()
                .map_err(|e| usage(format!("--data: {e}")))?,
            reps,
            seed: a.seed.unwrap_or(crate::cli::DEFAULT_SEED),
        };
        if reps == 0 {
            return Err(usage("--reps must be at least 1"));
        }
        let size_bytes = parse_size(&size_text).map_err(|e| usage(format!("--size: {e}")))?;
        if size_bytes < 64 << 20 {
            return Err(usage(format!(
                "--size {size_text}: at least 64MiB is needed (xfs and btrfs refuse smaller)"
            )));
        }
        let mkfs = parse_fs_opts(&a.mkfs_opt, "--mkfs-opt")?;
        let mount = parse_fs_opts(&a.mount_opt, "--mount-opt")?;
        let names: Vec<String> = match &a.fs {
            Some(list) => list
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            None if !a.dir.is_empty() || !a.net.is_empty() => Vec::new(),
            // A suite's filesystems, those of them this machine can make.
            None => match suite.as_ref().filter(|s| !s.fs.is_empty()) {
                Some(s) => {
                    let can = default_filesystems();
                    s.fs.iter()
                        .filter(|f| can.iter().any(|c| c == *f))
                        .map(|f| f.to_string())
                        .collect()
                }
                None => default_filesystems(),
            },
        };
        let mut targets = device_targets(a, &names, &mkfs, &mount, &image_dir)?;
        for name in names.iter().filter(|_| a.device.is_empty()) {
            let mount_opts = mount_opts_for(name, &mount);
            if name == "tmpfs" {
                targets.push(TargetSpec::Tmpfs {
                    size_bytes,
                    mount_opts,
                });
                continue;
            }
            let fs = FsType::parse(name).map_err(usage)?;
            if let Support::No(why) = fs.support() {
                return Err(usage(format!(
                    "--fs {name}: this machine cannot make it: {why}"
                )));
            }
            if size_bytes < fs.min_size_bytes() {
                return Err(usage(format!(
                    "--fs {name} --size {size_text}: {} needs at least {} ({} bytes)",
                    fs.mkfs_program(),
                    format_size(fs.min_size_bytes()),
                    fs.min_size_bytes()
                )));
            }
            let mkfs_opts = mkfs_opts_for(name, &mkfs)?;
            targets.push(TargetSpec::Loop {
                fs,
                mkfs_opts,
                mount_opts,
                size_bytes,
            });
        }
        for text in &a.net {
            let spec = NetSpec::parse(text).map_err(usage)?;
            if let Support::No(why) = spec.kind.support() {
                return Err(usage(format!(
                    "--net {text}: this machine cannot mount {}: {why}",
                    spec.kind.name()
                )));
            }
            targets.push(TargetSpec::Net(spec));
        }
        if targets.iter().any(|t| !matches!(t, TargetSpec::Dir { .. }))
            && !crate::probe::sys::is_root()
        {
            let e = Error::NeedsRoot {
                what:
                    "making loop and tmpfs filesystems and mounting network ones (mount, losetup)"
                        .into(),
            };
            return Err(usage(e.to_string()));
        }
        for d in &a.dir {
            if !d.is_dir() {
                return Err(usage(format!(
                    "--dir {}: not an existing directory",
                    d.display()
                )));
            }
            targets.push(TargetSpec::Dir {
                path: d.canonicalize()?,
            });
        }
        for (i, t) in targets.iter().enumerate() {
            if targets[..i].iter().any(|u| u.name() == t.name()) {
                return Err(usage(format!("target {} is listed twice", t.name())));
            }
        }
        if targets.is_empty() {
            return Err(usage(
                "no target: give --fs LIST, --dir PATH or --net KIND=SOURCE",
            ));
        }
        for w in &workloads {
            for t in &targets {
                crate::workload::check_target(w.info, t)?;
            }
        }
        if targets.iter().any(|t| matches!(t, TargetSpec::Loop { .. })) {
            let at = existing_ancestor(&image_dir);
            let space = crate::probe::sys::space(at)?;
            if space.avail_bytes < size_bytes + IMAGE_DIR_MARGIN {
                return Err(usage(format!(
                    "--image-dir {}: {} free, but one image of --size {} needs {} (plus {} margin); use a smaller --size or another --image-dir",
                    image_dir.display(),
                    format_size(space.avail_bytes),
                    size_text,
                    format_size(size_bytes),
                    format_size(IMAGE_DIR_MARGIN)
                )));
            }
        }
        Ok(Plan {
            targets: targets.into_iter().map(PlanTarget::from).collect(),
            workloads,
            policy,
            image_dir,
            json: a.json.clone(),
            html: a.html.clone(),
            quiet: a.quiet,
            source: None,
            resume: None,
        })
    }
}

/// The `--mount-opt` options given for filesystem `name`, joined.
fn mount_opts_for(name: &str, mount: &[(String, String)]) -> String {
    mount
        .iter()
        .filter(|(f, _)| f == name)
        .map(|(_, o)| o.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// The `--mkfs-opt` arguments given for filesystem `name`.
fn mkfs_opts_for(name: &str, mkfs: &[(String, String)]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for (_, o) in mkfs.iter().filter(|(f, _)| f == name) {
        out.extend(split_opts(o).map_err(|e| usage(format!("--mkfs-opt {name}: {e}")))?);
    }
    Ok(out)
}

/// The `--device` targets: one per device, each with the one filesystem `--fs` names
/// (`--device /dev/sdb --fs xfs` is `xfs@sdb`), every interlock checked
/// ([`crate::target::blockdev::device_spec`]). Empty without `--device`.
fn device_targets(
    a: &RunArgs,
    names: &[String],
    mkfs: &[(String, String)],
    mount: &[(String, String)],
    image_dir: &Path,
) -> Result<Vec<TargetSpec>> {
    use crate::target::blockdev::{device_spec, Consent};
    if a.device.is_empty() {
        if !a.destroy_data_on.is_empty() || a.force {
            return Err(usage(
                "--destroy-data-on and --force only go with --device DEV (a disk to format)",
            ));
        }
        return Ok(Vec::new());
    }
    let fs_name = match (a.fs.as_ref(), names) {
        (Some(_), [one]) if one != "tmpfs" => one,
        _ => {
            return Err(usage(
                "--device needs exactly one filesystem to make on it: --fs ext4, xfs, …",
            ))
        }
    };
    let fs = FsType::parse(fs_name).map_err(usage)?;
    if let Support::No(why) = fs.support() {
        return Err(usage(format!(
            "--fs {fs_name}: this machine cannot make it: {why}"
        )));
    }
    if !crate::probe::sys::is_root() {
        let e = Error::NeedsRoot {
            what: "formatting a block device (--device)".into(),
        };
        return Err(usage(e.to_string()));
    }
    for confirmed in &a.destroy_data_on {
        let named = a.device.iter().any(|d| {
            d == confirmed
                || (d.canonicalize().ok()).is_some_and(|c| confirmed.canonicalize().ok() == Some(c))
        });
        if !named {
            return Err(usage(format!(
                "--destroy-data-on {}: no --device names it (a typo would be dangerous, so \
                 this is refused too)",
                confirmed.display()
            )));
        }
    }
    let consent = Consent {
        destroy_data_on: a.destroy_data_on.clone(),
        force: a.force,
        image_dir: image_dir.to_path_buf(),
        db: None,
    };
    a.device
        .iter()
        .map(|d| {
            device_spec(
                d,
                fs,
                mkfs_opts_for(fs_name, mkfs)?,
                mount_opts_for(fs_name, mount),
                &consent,
            )
        })
        .collect()
}

impl Plan {
    /// The name reports and the store group a workload's trials under: its name, or the
    /// spec as typed when the plan has the same workload more than once.
    pub fn label(&self, w: &WorkloadSpec) -> String {
        let same = self
            .workloads
            .iter()
            .filter(|x| x.info.name == w.info.name)
            .count();
        if same > 1 {
            w.text.clone()
        } else {
            w.info.name.to_string()
        }
    }

    /// Adds the result database to the paths whose device is never formatted, and checks
    /// the device targets again with it (only `main` knows `--db`). Touches nothing.
    pub fn protect_database(&mut self, db: &Path) -> Result<()> {
        for t in self.targets.iter_mut() {
            if let TargetSpec::Device {
                path,
                fs,
                mkfs_opts,
                mount_opts,
                guard,
            } = &mut t.spec
            {
                let consent = crate::target::blockdev::Consent {
                    destroy_data_on: vec![path.clone()],
                    force: guard.force,
                    image_dir: self.image_dir.clone(),
                    db: Some(db.to_path_buf()),
                };
                t.spec = crate::target::blockdev::device_spec(
                    path,
                    *fs,
                    mkfs_opts.clone(),
                    mount_opts.clone(),
                    &consent,
                )?;
            }
        }
        Ok(())
    }
}

/// Every filesystem of the default set this machine can make, plus tmpfs. The others
/// (f2fs, ntfs, vfat, …) run only when named with `--fs`.
pub fn default_filesystems() -> Vec<String> {
    FsType::ALL
        .iter()
        .filter(|f| f.in_default_set() && f.support() == Support::Yes)
        .map(|f| f.name().to_string())
        .chain(std::iter::once("tmpfs".to_string()))
        .collect()
}

#[cfg(test)]
mod tests;
