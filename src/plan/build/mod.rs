//! A parsed plan file plus the command line's overrides → the same [`Plan`] the command
//! line makes. Every value is checked here, with its location, before anything is touched.
//!
//! Precedence, from weakest to strongest: fsarena's defaults, the plan's `[defaults]`,
//! the command line's `--size --image-dir --reps --cache --sync --data --seed`. A target's
//! own `size` is more specific than all of them and wins over `--size`.
//!
//! Aging is the plan's own (`age` on a target, or a `[[matrix]]` axis): `--age` is refused
//! with a plan, while `--age-cache off` applies to its aged targets (a plan has no key for
//! it: whether aged images are kept changes how long a run takes, not what it measures).

mod targets;

use super::file::{PlanFile, TargetEntry, WorkloadEntry};
use super::kernel::{self, Kernel};
use super::located::{At, Src};
use super::matrix::{target_name, valid_name};
use super::{Plan, PlanTarget};
use crate::cli::RunArgs;
use crate::error::usage;
use crate::policy::Policy;
use crate::provision::fs::{split_opts, FsType, Support};
use crate::provision::TargetSpec;
use crate::size::{format_size, parse_size};
use crate::workload::params::Params;
use crate::workload::WorkloadSpec;
use anyhow::Result;
use std::path::{Path, PathBuf};
use targets::{check_consent, target};

/// What the command line says about the settings a plan's `[defaults]` also gives.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub size: Option<String>,
    pub image_dir: Option<PathBuf>,
    pub reps: Option<u32>,
    pub cache: Option<String>,
    pub sync: Option<String>,
    pub data: Option<String>,
    pub seed: Option<u64>,
    /// `--destroy-data-on`: the plan's device targets this run may format.
    pub destroy_data_on: Vec<PathBuf>,
    /// `--force`: format a device even over a filesystem signature or partition table.
    pub force: bool,
    /// In a guest fsarena booted (`--in-guest`): targets' `kernel` keys are not read (the
    /// host chose this guest's targets, `guest_targets`).
    pub in_guest: bool,
    /// `--guest-targets`: the positions (from 0) of the plan's targets this guest runs,
    /// the others left out before anything about them is checked; empty: all.
    pub guest_targets: Vec<usize>,
    /// `--age-cache off`: the plan's aged targets are aged anew for every trial instead of
    /// starting from a kept aged image (`AgeSpec::keep`).
    pub age_cache_off: bool,
}

impl Overrides {
    /// The flags of `run` that were given.
    pub fn from_args(a: &RunArgs) -> Self {
        Self {
            size: a.size.clone(),
            image_dir: a.image_dir.clone(),
            reps: a.reps.and_then(crate::cli::Reps::fixed),
            cache: a.cache.clone(),
            sync: a.sync.clone(),
            data: a.data.clone(),
            seed: a.seed,
            destroy_data_on: a.destroy_data_on.clone(),
            force: a.force,
            in_guest: a.in_guest.is_some(),
            guest_targets: a.guest_targets.clone(),
            age_cache_off: a.age_cache == "off",
        }
    }
}

/// A plan built from a file, and what would stop it on this host (fs not supported, not
/// root, a missing directory, too little space): errors for `run`, warnings for `plan
/// check`.
pub struct Built {
    pub plan: Plan,
    pub host_problems: Vec<anyhow::Error>,
}

/// A setting from the command line (`--flag`), else the plan, else the default; the
/// error of a bad value names where it came from.
fn setting<T>(
    src: &Src,
    flag: &str,
    cli: Option<String>,
    plan: &Option<At<String>>,
    default: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<T> {
    match (cli, plan) {
        (Some(v), _) => parse(&v).map_err(|e| usage(format!("{flag}: {e}"))),
        (None, Some(p)) => parse(&p.v).map_err(|e| src.err(&p.span, e)),
        (None, None) => parse(default).map_err(usage),
    }
}

/// Builds the plan of file `f` with the command line's `o`.
pub fn build(f: &PlanFile, o: &Overrides) -> Result<Built> {
    let src = &f.src;
    let d = &f.defaults;
    let as_text = |a: &Option<At<u64>>| {
        a.as_ref().map(|a| At {
            v: a.v.to_string(),
            span: a.span.clone(),
        })
    };
    let reps: u32 = setting(
        src,
        "--reps",
        o.reps.map(|r| r.to_string()),
        &as_text(&d.reps),
        &crate::cli::DEFAULT_REPS.to_string(),
        |s| match s.parse::<u32>() {
            Ok(n) if (1..=super::MAX_REPS).contains(&n) => Ok(n),
            _ => Err(format!(
                "reps '{s}': give a whole number from 1 to {}",
                super::MAX_REPS
            )),
        },
    )?;
    let seed: u64 = setting(
        src,
        "--seed",
        o.seed.map(|r| r.to_string()),
        &as_text(&d.seed),
        &crate::cli::DEFAULT_SEED.to_string(),
        |s| {
            s.parse()
                .map_err(|_| format!("seed '{s}': give a whole number"))
        },
    )?;
    let policy = Policy {
        cache: setting(
            src,
            "--cache",
            o.cache.clone(),
            &d.cache,
            crate::cli::DEFAULT_CACHE,
            |s| s.parse(),
        )?,
        sync: setting(
            src,
            "--sync",
            o.sync.clone(),
            &d.sync,
            crate::cli::DEFAULT_SYNC,
            |s| s.parse(),
        )?,
        data: setting(
            src,
            "--data",
            o.data.clone(),
            &d.data,
            crate::cli::DEFAULT_DATA,
            |s| s.parse(),
        )?,
        reps,
        seed,
        auto_reps: None,
        margin_pct: None,
        price_on: Vec::new(),
    };
    let check = |s: &str| -> Result<u64, String> {
        let b = parse_size(s)?;
        if b < 64 << 20 {
            return Err(format!(
                "size {s}: at least 64MiB is needed (xfs and btrfs refuse smaller)"
            ));
        }
        Ok(b)
    };
    // Checked even when every target has its own size (or --size replaces it).
    if let Some(a) = &d.size {
        check(&a.v).map_err(|e| src.err(&a.span, e))?;
    }
    let size = |own: &Option<At<String>>| -> Result<u64> {
        match own {
            Some(a) => check(&a.v).map_err(|e| src.err(&a.span, e)),
            None => setting(
                src,
                "--size",
                o.size.clone(),
                &d.size,
                crate::cli::DEFAULT_SIZE,
                check,
            ),
        }
    };
    let plan_dir = Path::new(&src.path)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let image_dir = super::imagedir::resolve(
        &o.image_dir
            .clone()
            .or_else(|| d.image_dir.as_ref().map(|a| plan_dir.join(&a.v)))
            .unwrap_or_else(|| crate::cli::DEFAULT_IMAGE_DIR.into()),
    )?;
    let mut host = Vec::new();
    let consent = crate::provision::blockdev::Consent {
        destroy_data_on: o.destroy_data_on.clone(),
        force: o.force,
        image_dir: image_dir.clone(),
        db: None,
    };
    let mut targets: Vec<(PlanTarget, &TargetEntry)> = Vec::new();
    // Each name → its index in `targets`: the check of unique names stays linear.
    let mut by_name = std::collections::HashMap::new();
    if let Some(p) = o.guest_targets.iter().find(|&&p| p >= f.targets.len()) {
        return Err(usage(format!(
            "--guest-targets: {} has no target {p} (it has {})",
            src.path,
            f.targets.len()
        )));
    }
    for (i, e) in f.targets.iter().enumerate() {
        if !o.guest_targets.is_empty() && !o.guest_targets.contains(&i) {
            // Another guest's, or the host's.
            continue;
        }
        let mut t = target(src, e, &size, &plan_dir, &consent, o.in_guest, &mut host)?;
        if let Some(age) = t.age.as_mut() {
            age.keep = !o.age_cache_off;
        }
        let key = t.report_name();
        if let Some(&i) = by_name.get(&key) {
            let (first, fe): &(PlanTarget, &TargetEntry) = &targets[i];
            return Err(src.err(
                &e.name.as_ref().map_or(e.span.clone(), |n| n.span.clone()),
                format!(
                    "a second target named '{}' (the first is at {}); give each a unique `name` \
                     in a [[target]] entry",
                    first.report_name(),
                    src.place(&fe.span)
                ),
            ));
        }
        by_name.insert(key, targets.len());
        targets.push((t, e));
    }
    if targets.is_empty() {
        return Err(usage(format!(
            "{}: the plan has no target; add a [[target]] (fs = \"ext4\", or dir = \"PATH\") \
             or a [[matrix]] (fs = [\"ext3\", \"ext4\"])",
            src.path
        )));
    }
    let mut workloads = Vec::new();
    let mut notes = Vec::new();
    let guest = f.targets.iter().find_map(|t| t.kernel.as_ref());
    if let (Some(k), Some(w)) = (guest, f.workloads.iter().find(|w| w.is_fio)) {
        return Err(src.err(
            &w.span,
            format!(
                "a plan's fio job file cannot run in a guest kernel (the target at {} names \
                 one): {}",
                src.place(&k.span),
                super::file::FIO_IN_GUEST
            ),
        ));
    }
    for w in &f.workloads {
        let specs = match w.is_fio {
            true => fio_workloads(src, w, &plan_dir, &policy, &mut notes)?,
            false => workload(src, w)?,
        };
        for spec in &specs {
            for (t, _) in &targets {
                crate::workload::check_target(spec, &t.spec)
                    .map_err(|e| src.err(&w.span, format!("{e:#}")))?;
            }
        }
        workloads.extend(specs);
    }
    if workloads.is_empty() {
        return Err(usage(format!(
            "{}: the plan has no workload; add a [[workload]] with kind = \"NAME\" (see \
             `fsarena list`) or suite = \"quick\"",
            src.path
        )));
    }
    check_consent(src, &targets, o)?;
    host_checks(&targets, &image_dir, &mut host);
    Ok(Built {
        plan: Plan {
            targets: targets.into_iter().map(|(t, _)| t).collect(),
            workloads,
            policy,
            image_dir,
            outputs: Vec::new(),
            quiet: false,
            source: Some(PathBuf::from(&src.path)),
            resume: None,
            left_out: Vec::new(),
            auto_reps: None,
            phase_time_s: None,
            guest: None,
            journal_dir: None,
            notes,
        },
        host_problems: host,
    })
}

/// `fio = "FILE"` (relative to the plan's directory): the job file's groups, refused
/// when the plan's policy is not the one the file asks for (docs/fio.md: cache `cold`,
/// or `keep` with `invalidate=0`; sync `none`; its `randseed`).
fn fio_workloads(
    src: &Src,
    w: &WorkloadEntry,
    plan_dir: &Path,
    policy: &Policy,
    notes: &mut Vec<String>,
) -> Result<Vec<WorkloadSpec>> {
    use crate::policy::{CachePolicy, SyncPolicy};
    let at = |e: anyhow::Error| src.err(&w.kind.span, format!("{e:#}"));
    let f = super::fio::load(
        &plan_dir.join(&w.kind.v),
        w.fio_lenient,
        super::fio::Sets {
            opts: &w.fio_set,
            from: "set",
        },
        super::fio::Only {
            names: &w.fio_sections,
            from: "sections",
        },
    )
    .map_err(at)?;
    let cache = if f.invalidate {
        CachePolicy::Cold
    } else {
        CachePolicy::Keep
    };
    let seed = f.seed.unwrap_or(policy.seed);
    if policy.cache != cache || policy.sync != SyncPolicy::None || policy.seed != seed {
        return Err(src.err(
            &w.span,
            format!(
                "the fio job file asks for cache = \"{cache}\", sync = \"none\" and seed = \
                 {seed} (the plan has {}, {}, {}): set them in [defaults] or on the command line",
                policy.cache, policy.sync, policy.seed
            ),
        ));
    }
    // Several job files of one plan set the same policies: said once.
    for n in f.run_notes() {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    f.entries
        .iter()
        .map(|e| WorkloadSpec::parse(&e.spec).map_err(at))
        .collect()
}

/// The workloads of one entry: the kind with its parameters, or the suite's workloads.
fn workload(src: &Src, w: &WorkloadEntry) -> Result<Vec<WorkloadSpec>> {
    if w.is_suite {
        let suite =
            crate::suite::find(&w.kind.v).map_err(|e| src.err(&w.kind.span, format!("{e:#}")))?;
        return suite
            .workloads
            .iter()
            .map(|t| WorkloadSpec::parse(t).map_err(|e| src.err(&w.kind.span, format!("{e:#}"))))
            .collect();
    }
    let info =
        crate::workload::find(&w.kind.v).map_err(|e| src.err(&w.kind.span, format!("{e:#}")))?;
    let mut items = Vec::new();
    for (key, value) in &w.params {
        if !info.params.iter().any(|p| p.name == key.v) {
            let valid: Vec<_> = info.params.iter().map(|p| p.name).collect();
            return Err(src.err(
                &key.span,
                format!(
                    "unknown parameter '{}' of workload {}{}; valid: {}",
                    crate::error::echo(&key.v),
                    info.name,
                    crate::error::did_you_mean(&key.v, valid.iter().copied()),
                    if valid.is_empty() {
                        "none".to_string()
                    } else {
                        valid.join(", ")
                    }
                ),
            ));
        }
        let spec = info.params.iter().find(|p| p.name == key.v);
        let takes_list = spec.is_some_and(|p| {
            matches!(
                p.kind,
                crate::workload::params::ParamKind::CountList
                    | crate::workload::params::ParamKind::SizeMix
            )
        });
        if w.list_keys.contains(&key.v) && !takes_list {
            return Err(src.err(
                &value.span,
                format!(
                    "parameter '{}' of workload {} takes one value, not a list",
                    key.v, info.name
                ),
            ));
        }
        let item = format!("{}={}", key.v, value.v);
        Params::parse(info.name, info.params, &item)
            .map_err(|e| src.err(&value.span, format!("{e:#}")))?;
        items.push(item);
    }
    let text = if items.is_empty() {
        info.name.to_string()
    } else {
        format!("{}:{}", info.name, items.join(","))
    };
    let spec = WorkloadSpec::parse(&text).map_err(|e| src.err(&w.span, format!("{e:#}")))?;
    Ok(vec![spec])
}

/// What this host lacks for the plan: root for loop and tmpfs targets, room in the image
/// directory for the largest image, memory for each tmpfs ([`super::room`]).
fn host_checks(
    targets: &[(PlanTarget, &TargetEntry)],
    image_dir: &Path,
    host: &mut Vec<anyhow::Error>,
) {
    if targets
        .iter()
        .any(|(t, _)| !matches!(t.spec, TargetSpec::Dir { .. }))
        && !crate::probe::sys::is_root()
    {
        let e = crate::error::Error::NeedsRoot {
            what: "making loop and tmpfs filesystems (mount, losetup)".into(),
        };
        host.push(usage(e.to_string()));
    }
    let largest = targets
        .iter()
        .filter_map(|(t, _)| match t.spec {
            TargetSpec::Loop { size_bytes, .. } | TargetSpec::Served { size_bytes, .. } => {
                Some(size_bytes)
            }
            _ => None,
        })
        .max();
    if let Some(bytes) = largest {
        if let Some(why) = super::room::image_dir_problem(image_dir, bytes) {
            host.push(usage(format!("image directory {why}")));
        }
    }
    let memory = super::room::memory_for_tmpfs();
    for (t, _) in targets {
        if let TargetSpec::Tmpfs { size_bytes, .. } = t.spec {
            if let Some(why) = super::room::tmpfs_problem(size_bytes, memory) {
                host.push(usage(format!("target {}: {why}", t.name)));
            }
        }
    }
}
