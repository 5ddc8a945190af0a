//! A validated plan: what to run where, with which policies. Built from the command line
//! or from a TOML plan file (`--plan`, see [`file`](mod@file) and docs/plans.md); everything is
//! checked here, before any disk is touched.

pub mod age;
mod args;
pub mod build;
pub mod canon;
pub mod file;
pub mod fio;
pub mod guest;
pub mod imagedir;
pub mod kernel;
pub mod located;
pub mod matrix;
pub mod programs;
pub mod room;

use crate::cli::RunArgs;
use crate::error::{usage, Error};
use crate::policy::Policy;
use crate::provision::fs::{refuse_paths, split_opts, FsType, Support};
use crate::provision::{net::NetSpec, TargetSpec};
use crate::size::{format_size, parse_size};
use crate::workload::WorkloadSpec;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// A target of the plan with the name reports give it (`ext4`, `ext4+data=writeback`).
#[derive(Clone, Debug)]
pub struct PlanTarget {
    pub name: String,
    pub spec: TargetSpec,
    /// The guest kernel it runs in (`kernel = "…"` in a plan); reports then name it
    /// `NAME@RELEASE`. `None`: the host's kernel, or every `--kernel` given.
    pub kernel: Option<kernel::Kernel>,
    /// How it is aged before each trial (`--age`); `None`: fresh from mkfs.
    pub age: Option<crate::provision::age::AgeSpec>,
}

impl PlanTarget {
    /// The name reports give it: `ext4`, or `ext4@6.1.0-56` in a guest kernel of its own.
    pub fn report_name(&self) -> String {
        match &self.kernel {
            Some(k) => guest::target_name(&self.name, k),
            None => self.name.clone(),
        }
    }
}

impl From<TargetSpec> for PlanTarget {
    /// The target under its usual name ([`TargetSpec::name`]), on the host's kernel.
    fn from(spec: TargetSpec) -> Self {
        Self {
            name: spec.name(),
            spec,
            kernel: None,
            age: None,
        }
    }
}

/// Everything a run needs, validated.
#[derive(Clone)]
pub struct Plan {
    pub targets: Vec<PlanTarget>,
    pub workloads: Vec<WorkloadSpec>,
    pub policy: Policy,
    pub image_dir: PathBuf,
    /// The exporters to write once the run is over (`--json PATH`, `--html PATH`).
    pub outputs: Vec<crate::report::Output>,
    pub quiet: bool,
    /// The plan file it came from, if any.
    pub source: Option<PathBuf>,
    /// The stored run to continue (`--resume`).
    pub resume: Option<String>,
    /// Filesystems the suite runs on that this machine cannot make, each with why and the
    /// package to install (`xfs: mkfs.xfs missing: apt-get install xfsprogs`): said at the
    /// start of the run and kept in its report.
    pub left_out: Vec<String>,
    /// `--reps auto`: the rule that decides when to stop (then `policy.reps` is its
    /// maximum); `None` for a fixed number.
    pub auto_reps: Option<crate::reps::AutoReps>,
    /// `--phase-time`, in seconds: the workloads are scaled from the stored trials before
    /// the run starts ([`crate::phase_time`]).
    pub phase_time_s: Option<f64>,
    /// `--kernel`: the targets run in a guest per kernel ([`crate::guest`]); `None` on
    /// the host's own kernel.
    pub guest: Option<guest::GuestPlan>,
    /// Where the run's journal goes, kept after the run (`--journal-dir`, which a guest's
    /// fsarena is given); `None`: beside the state files, removed once all is stored.
    pub journal_dir: Option<PathBuf>,
    /// What the run states before it starts: how a fio job file was mapped and, with
    /// `--fio-lenient`, what of it was left out ([`fio::FioPlan::run_notes`]).
    pub notes: Vec<String>,
}

fn parse_fs_opts(list: &[String], flag: &str) -> Result<Vec<(String, String)>> {
    list.iter()
        .map(|item| {
            let (fs, opts) = item.split_once('=').ok_or_else(|| {
                usage(format!(
                    "{flag} '{}': expected FS=OPTIONS, e.g. {flag} ext4=noatime",
                    crate::error::echo(item)
                ))
            })?;
            let fs = fs.trim();
            if fs != "tmpfs" {
                FsType::parse(fs).map_err(usage)?;
            }
            if flag == "--mkfs-opt" {
                // Checked here, before anything about the machine: a device named in an
                // option is refused whatever else is wrong.
                let words = split_opts(opts).map_err(|e| usage(format!("{flag} {fs}: {e}")))?;
                refuse_paths(&words).map_err(|e| usage(format!("{flag} {fs}: {e}")))?;
            }
            if flag == "--mount-opt" {
                refuse_paths(&[opts]).map_err(|e| usage(format!("{flag} {fs}: {e}")))?;
                if fs == "tmpfs" {
                    refuse_tmpfs_size(opts).map_err(|e| usage(format!("{flag} {fs}: {e}")))?;
                }
            }
            Ok((fs.to_string(), opts.to_string()))
        })
        .collect()
}

/// The most repetitions of a plan: 1,000 already gives percentiles of the trials to 0.1 %;
/// 2^32−1 could never finish.
pub const MAX_REPS: u32 = 1000;

/// Refuses a tmpfs `size=` or `nr_blocks=` mount option: it would silently override the
/// size given (`--size`, or `size` in a plan), which is how a tmpfs is sized and checked
/// against memory.
pub fn refuse_tmpfs_size(opts: &str) -> Result<(), String> {
    for o in opts.split(',') {
        let key = o.split_once('=').map_or(o, |(k, _)| k).trim();
        if key == "size" || key == "nr_blocks" {
            return Err(format!(
                "'{}' would override the size; give the size with --size (or size = \"…\" \
                 in a plan), which is checked against memory",
                crate::workload::params::echo(o.trim())
            ));
        }
    }
    Ok(())
}

/// Refuses `--mkfs-opt`/`--mount-opt` for a filesystem that is not one of the targets:
/// it would be silently ignored. `left_out` are the filesystems a default set could not
/// make (`"xfs: why"`); options for them are not an error.
fn refuse_unused_opts(
    given: &[(String, String)],
    flag: &str,
    names: &[String],
    left_out: &[String],
) -> Result<()> {
    for (fs, opts) in given {
        let used = names.iter().any(|n| n == fs)
            || left_out
                .iter()
                .any(|l| l.split(':').next() == Some(fs.as_str()));
        if !used {
            return Err(usage(format!(
                "{flag} {fs}={}: {fs} is not a target of this run ({}); the options would be \
                 ignored, so add {fs} to --fs or drop them",
                crate::workload::params::echo(opts),
                if names.is_empty() {
                    "no filesystem".to_string()
                } else {
                    format!("--fs {}", names.join(","))
                }
            )));
        }
    }
    Ok(())
}

/// Refuses a command-line value longer than [`crate::limits`] takes, before any of them is
/// parsed: options and `--net` to [`crate::limits::MAX_OPTION_BYTES`], workload specs and
/// the other values to [`crate::limits::MAX_ARG_BYTES`].
fn check_arg_lengths(a: &RunArgs) -> Result<()> {
    use crate::limits::{check_len, MAX_OPTION_BYTES};
    for (flag, values) in [
        ("--mkfs-opt", &a.mkfs_opt),
        ("--mount-opt", &a.mount_opt),
        ("--net", &a.net),
    ] {
        for v in values {
            check_len(&format!("a value of {flag}"), v, MAX_OPTION_BYTES).map_err(usage)?;
        }
    }
    crate::limits::check_args("a workload", &a.workloads)?;
    crate::limits::check_args("--kernel", &a.kernel)?;
    for (flag, v) in [
        ("--fs", &a.fs),
        ("--size", &a.size),
        ("--suite", &a.suite),
        ("--budget", &a.budget),
        ("--phase-time", &a.phase_time),
        ("--cache", &a.cache),
        ("--sync", &a.sync),
        ("--data", &a.data),
        ("--resume", &a.resume),
    ] {
        crate::limits::check_args(flag, v.iter())?;
    }
    Ok(())
}

/// The rule of `--reps auto` with its `--precision`, `--max-reps` and `--budget`; those
/// three are refused without it. `--reps-for` is the same rule for another goal, without a
/// suite's budget (seeing a difference is what was asked for; `--budget` bounds it). A suite runs with `--reps auto` and the suite's budget
/// unless `--reps` says otherwise (or `--mpi` is given: its ranks cannot agree on when to
/// stop, so it keeps the fixed default).
fn auto_reps(
    a: &RunArgs,
    suite: Option<&crate::suite::Suite>,
) -> Result<Option<crate::reps::AutoReps>> {
    if let Some(pct) = a.reps_for {
        if a.mpi.is_some() {
            return Err(usage(
                "--reps-for cannot be combined with --mpi: give a number of repetitions",
            ));
        }
        return crate::reps::AutoReps::detecting(pct, a.max_reps, a.budget.as_deref()).map(Some);
    }
    let suite_auto = suite.filter(|_| a.reps.is_none() && a.mpi.is_none());
    if a.reps != Some(crate::cli::Reps::Auto) && suite_auto.is_none() {
        if a.precision.is_some() || a.max_reps.is_some() || a.budget.is_some() {
            return Err(usage(
                "--precision, --max-reps and --budget go with --reps auto",
            ));
        }
        return Ok(None);
    }
    if a.mpi.is_some() {
        return Err(usage(
            "--reps auto cannot be combined with --mpi: give a number of repetitions",
        ));
    }
    let budget = a.budget.as_deref().or(suite_auto.map(|s| s.budget));
    crate::reps::AutoReps::new(a.precision, a.max_reps, budget).map(Some)
}

/// The workload `job:fio=FILE` is `--fio FILE`, alone on the command line (the job
/// file's policies become the run's); `--fio-lenient` and `--fio-set` need one of them.
fn fio_workload(a: &RunArgs) -> Result<RunArgs> {
    let mut a = a.clone();
    let named: Vec<&String> = a
        .workloads
        .iter()
        .filter(|w| w.starts_with("job:fio="))
        .collect();
    if let Some(w) = named.first() {
        if a.workloads.len() > 1 || a.fio.is_some() {
            return Err(usage(format!(
                "{w}: a job file runs alone (its cache, sync and seed become the run's): \
                 give it without other workloads or --fio, or run those in a run of their own"
            )));
        }
        let path = w["job:fio=".len()..].to_string();
        if path.is_empty() {
            return Err(usage("job:fio=FILE: give the job file's path"));
        }
        a.fio = Some(path.into());
        a.workloads.clear();
    }
    if a.fio.is_none() && (a.fio_lenient || !a.fio_set.is_empty() || !a.fio_section.is_empty()) {
        let flag = if a.fio_lenient {
            "--fio-lenient"
        } else if !a.fio_set.is_empty() {
            "--fio-set"
        } else {
            "--fio-section"
        };
        return Err(usage(format!(
            "{flag} applies to a job file: give --fio FILE (or the workload job:fio=FILE)"
        )));
    }
    Ok(a)
}

use age::aged_targets;
use args::{
    check_workloads_and_room, phase_time_s, policy_of, suite_of, targets, workloads_of, Size,
};

impl Plan {
    /// Validates the `run` arguments into a plan. With `--kernel`, what each filesystem
    /// needs of the kernel is checked against every guest kernel, not the running one.
    pub fn from_args(a: &RunArgs) -> Result<Plan> {
        let mut plan = Self::from_args_checked(a)?;
        // The verdict's margin is recorded with the run, not part of what runs (its hash).
        plan.policy.margin_pct = a
            .margin
            .map(|p| crate::compare::family::margin(Some(p)).map(|m| m * 100.0))
            .transpose()?;
        // So are the device profiles its phases are priced on (reports derive the
        // predictions from the stored figures).
        crate::price::check(&a.price.price_on).map_err(usage)?;
        plan.policy.price_on = a.price.price_on.clone();
        Ok(plan)
    }

    /// [`Self::from_args`] but for the verdict's margin.
    fn from_args_checked(a: &RunArgs) -> Result<Plan> {
        check_arg_lengths(a)?;
        let a = &fio_workload(a)?;
        if let (Some(path), false) = (&a.plan, a.kernel.is_empty()) {
            let f = file::load(path)?;
            if let Some(k) = f.targets.iter().find_map(|t| t.kernel.as_ref()) {
                return Err(f.src.err(
                    &k.span,
                    "this plan names its targets' kernels and --kernel names one for all: \
                     give the kernels in one place (drop --kernel, or the plan's kernel keys)",
                ));
            }
            if let Some(w) = f.workloads.iter().find(|w| w.is_fio) {
                return Err(f.src.err(
                    &w.span,
                    format!(
                        "a plan's fio job file cannot run under --kernel: {}",
                        file::FIO_IN_GUEST
                    ),
                ));
            }
        }
        let Some(guest) = guest::GuestPlan::from_args(a)? else {
            let mut plan = Self::from_args_here(a)?;
            if a.in_guest.is_none() {
                plan.guest = guest::GuestPlan::from_plan(&plan, a)?;
            }
            return Ok(plan);
        };
        let mut plan = None;
        for k in &guest.kernels {
            let p = crate::provision::fs::with_guest_kernel(&k.release, || Self::from_args_here(a))
                .map_err(|e| e.context(format!("with guest kernel {}", k.release)))?;
            plan.get_or_insert(p);
        }
        let mut plan = plan.expect("at least one kernel");
        plan.guest = Some(guest);
        Ok(plan)
    }

    /// Whether the targets name their kernels (`kernel = "…"` in the plan): then each runs
    /// in its own kernel's guest, and the others on the host.
    pub fn targets_name_kernels(&self) -> bool {
        self.targets.iter().any(|t| t.kernel.is_some())
    }

    /// Validates the `run` arguments into a plan on the kernel fsarena runs on, in these
    /// steps (each refuses what it cannot use, in this order):
    ///
    /// 1. `--resume` needs `--plan`; a plan file is built by [`Self::from_plan_file`];
    /// 2. the suite (`--suite`, or quick when no workload is named) and the workloads;
    /// 3. the repetitions: `--reps` (fixed or auto), `--phase-time`;
    /// 4. the image directory;
    /// 5. the policy: `--cache`, `--sync`, `--data`, `--seed` and the repetitions;
    /// 6. the size of loop images and tmpfs;
    /// 7. the targets ([`targets`]): filesystems, devices, network mounts, directories;
    /// 8. what the workloads need of the targets, and room for the images and tmpfs;
    ///
    /// then the outputs, progress and journal the command line gives.
    fn from_args_here(a: &RunArgs) -> Result<Plan> {
        if a.resume.is_some() && a.plan.is_none() {
            return Err(usage(
                "--resume RUN needs --plan FILE: the plan the run was started with",
            ));
        }
        if let Some(path) = &a.plan {
            return Self::from_plan_file(a, path);
        }
        let suite = suite_of(a)?;
        let fio = a
            .fio
            .as_deref()
            .map(|f| {
                fio::load(
                    f,
                    a.fio_lenient,
                    fio::Sets {
                        opts: &a.fio_set,
                        from: "--fio-set",
                    },
                    fio::Only {
                        names: &a.fio_section,
                        from: "--fio-section",
                    },
                )
            })
            .transpose()?;
        let workloads = workloads_of(a, suite.as_ref(), fio.as_ref())?;
        let auto_reps = auto_reps(a, suite.as_ref())?;
        let phase_time_s = phase_time_s(a)?;
        let image_dir = imagedir::resolve(
            a.image_dir
                .as_deref()
                .unwrap_or(Path::new(crate::cli::DEFAULT_IMAGE_DIR)),
        )?;
        let policy = policy_of(a, auto_reps.as_ref(), fio.as_ref())?;
        let size = Size::of(a, suite.as_ref())?;
        let (targets, left_out) = targets(a, suite.as_ref(), &image_dir, &size)?;
        check_workloads_and_room(&workloads, &targets, &image_dir, &size)?;
        // `--age`, else the suite's own (the `aged` suite runs `--age both`).
        let (age, suite_age) = match suite.as_ref() {
            Some(s) if a.age.is_empty() && !s.age.is_empty() => (
                s.age.iter().map(|x| x.to_string()).collect(),
                Some((s.name, s.age.join(" --age "))),
            ),
            _ => (a.age.clone(), None),
        };
        let targets =
            aged_targets(&age, a.age_cache == "on", targets).map_err(|e| match suite_age {
                Some((name, age)) => usage(format!(
                    "{e:#} (the {name} suite runs with --age {age}; give --age fresh to run \
                     it fresh only)"
                )),
                None => e,
            })?;
        age::check_room(&targets, &image_dir, policy.seed, policy.reps)?;
        Ok(Plan {
            targets,
            workloads,
            policy,
            image_dir,
            outputs: a.outputs.0.clone(),
            quiet: a.quiet,
            source: None,
            resume: None,
            guest: None,
            left_out,
            auto_reps,
            phase_time_s,
            journal_dir: a.journal_dir.clone(),
            notes: fio.map(|f| f.run_notes()).unwrap_or_default(),
        })
    }

    /// `--plan FILE`: the plan file built with the command line's overrides, refused when
    /// this host cannot run it, with `--reps auto`'s rule and the command line's outputs.
    fn from_plan_file(a: &RunArgs, path: &Path) -> Result<Plan> {
        if let Some(age) = a.age.first() {
            return Err(usage(format!(
                "--age {}: a plan file says how its targets are aged: age = \"PROFILE\" on a \
                 [[target]], or age = [\"fresh\", \"PROFILE\"] in a [[matrix]] (docs/plans.md)",
                crate::error::echo(age)
            )));
        }
        let f = file::load(path)?;
        let built = build::build(&f, &build::Overrides::from_args(a))?;
        if let Some(e) = built.host_problems.into_iter().next() {
            return Err(e);
        }
        age::check_room(
            &built.plan.targets,
            &built.plan.image_dir,
            built.plan.policy.seed,
            built.plan.policy.reps,
        )?;
        let auto_reps = auto_reps(a, None)?;
        let mut policy = built.plan.policy.clone();
        if let Some(rule) = &auto_reps {
            policy.reps = rule.max;
            policy.auto_reps = Some(rule.record());
        }
        Ok(Plan {
            outputs: a.outputs.0.clone(),
            quiet: a.quiet,
            resume: a.resume.clone(),
            auto_reps,
            policy,
            journal_dir: a.journal_dir.clone(),
            ..built.plan
        })
    }
}

impl Plan {
    /// The name reports and the store group a workload's trials under: the `name` it is
    /// given (a `job`'s, fio's job name) when no other workload has it, else its name, or
    /// the spec as typed (its secrets hidden) when the plan has the same workload more than
    /// once.
    pub fn label(&self, w: &WorkloadSpec) -> String {
        let given = |x: &WorkloadSpec| {
            x.info
                .params
                .iter()
                .any(|p| p.name == "name")
                .then(|| x.params.text("name").map(str::to_string))
                .flatten()
        };
        if let Some(name) = given(w) {
            let clash = self
                .workloads
                .iter()
                .filter(|x| given(x).as_ref() == Some(&name) || x.info.name == name)
                .count();
            if clash == 1 {
                return name;
            }
        }
        let same = self
            .workloads
            .iter()
            .filter(|x| x.info.name == w.info.name)
            .count();
        if same > 1 {
            crate::secret::redact_word(&w.text)
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
                let consent = crate::provision::blockdev::Consent {
                    destroy_data_on: vec![path.clone()],
                    force: guard.force,
                    image_dir: self.image_dir.clone(),
                    db: Some(db.to_path_buf()),
                };
                t.spec = crate::provision::blockdev::device_spec(
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

/// The filesystems a run without `--fs` or a suite makes: the default set, plus tmpfs.
/// The others (f2fs, ntfs, vfat, …) run only when named with `--fs`.
fn default_set() -> impl Iterator<Item = &'static str> {
    FsType::ALL
        .into_iter()
        .filter(|f| f.in_default_set())
        .map(FsType::name)
        .chain(std::iter::once("tmpfs"))
}

/// Every filesystem of the default set this machine can make, plus tmpfs.
pub fn default_filesystems() -> Vec<String> {
    makeable(&default_set().collect::<Vec<_>>()).0
}

/// Splits `names` into those this machine can make and, for the others, why not
/// (`xfs: mkfs.xfs missing: apt-get install xfsprogs`).
pub fn makeable(names: &[&str]) -> (Vec<String>, Vec<String>) {
    makeable_with(names, &|name| match name {
        "tmpfs" => crate::provision::fs::tmpfs_support(),
        _ => match crate::provision::served::Protocol::parse(name) {
            Some(p) => p.support(),
            None => FsType::parse(name).map_or_else(Support::No, FsType::support),
        },
    })
}

pub(crate) fn makeable_with(
    names: &[&str],
    support: &dyn Fn(&str) -> Support,
) -> (Vec<String>, Vec<String>) {
    let mut can = Vec::new();
    let mut cannot = Vec::new();
    for name in names {
        match support(name) {
            Support::Yes => can.push(name.to_string()),
            Support::No(why) => cannot.push(format!("{name}: {why}")),
        }
    }
    (can, cannot)
}

#[cfg(test)]
mod tests;
