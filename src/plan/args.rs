//! The steps [`Plan::from_args_here`](super::Plan::from_args_here) takes from the command
//! line to a plan: the suite, the workloads, the phase time, the policies, the size, the
//! targets (made, network, directory, device), and the check of the workloads and the room.

use super::*;

/// The suite `--suite` names, the quick suite when no workload is named, else none.
pub(super) fn suite_of(a: &RunArgs) -> Result<Option<crate::suite::Suite>> {
    Ok(match (&a.suite, a.workloads.is_empty()) {
        (Some(name), _) => Some(crate::suite::find(name)?),
        (None, true) if a.fio.is_none() => Some(crate::suite::find("quick")?),
        (None, _) => None,
    })
}

/// The suite's workloads, the entries of `--fio`'s job file, or those named on the command
/// line, parsed.
pub(super) fn workloads_of(
    a: &RunArgs,
    suite: Option<&crate::suite::Suite>,
    fio: Option<&super::fio::FioPlan>,
) -> Result<Vec<WorkloadSpec>> {
    let texts: Vec<String> = match (suite, fio) {
        (Some(s), _) => s.workloads.iter().map(|w| w.to_string()).collect(),
        (None, Some(f)) => f.entries.iter().map(|e| e.spec.clone()).collect(),
        (None, None) => a.workloads.clone(),
    };
    let specs: Vec<WorkloadSpec> = texts
        .iter()
        .map(|t| WorkloadSpec::parse(&with_crash_states(t, a.crash_states)))
        .collect::<Result<_>>()?;
    if a.crash_states.is_some() && !specs.iter().any(|s| s.info.name == "crash") {
        return Err(usage(
            "--crash-states: no crash workload in this run, so it would be ignored; add \
             `crash` to the workloads or drop it",
        ));
    }
    Ok(specs)
}

/// `crash` workload text `t` with `states=N` of `--crash-states N` added, unless it names
/// its own; other workloads' texts unchanged.
fn with_crash_states(t: &str, n: Option<u64>) -> String {
    let (name, rest) = t.split_once(':').unwrap_or((t, ""));
    let own = rest.split(',').any(|kv| kv.trim().starts_with("states="));
    match n {
        Some(n) if name.trim() == "crash" && !own => match rest.is_empty() {
            true => format!("crash:states={n}"),
            false => format!("{t},states={n}"),
        },
        _ => t.to_string(),
    }
}

/// `--phase-time`, in seconds.
pub(super) fn phase_time_s(a: &RunArgs) -> Result<Option<f64>> {
    a.phase_time
        .as_deref()
        .map(|t| crate::reps::parse_duration_s(t).map_err(|e| usage(format!("--phase-time {e}"))))
        .transpose()
}

/// The policy of `--cache`, `--sync`, `--data` and `--seed` (or their defaults), with the
/// repetitions: `--reps`, or the most `auto_reps` runs.
pub(super) fn policy_of(
    a: &RunArgs,
    auto_reps: Option<&crate::reps::AutoReps>,
    fio: Option<&super::fio::FioPlan>,
) -> Result<Policy> {
    let reps = match (a.reps, auto_reps) {
        (_, Some(rule)) => rule.max,
        (Some(r), None) => r.fixed().unwrap_or(crate::cli::DEFAULT_REPS),
        (None, None) => crate::cli::DEFAULT_REPS,
    };
    let (cache, sync, seed) = match fio {
        Some(f) => fio_policy(a, f)?,
        None => (
            a.cache.as_deref().unwrap_or(crate::cli::DEFAULT_CACHE),
            a.sync.as_deref().unwrap_or(crate::cli::DEFAULT_SYNC),
            a.seed.unwrap_or(crate::cli::DEFAULT_SEED),
        ),
    };
    let policy = Policy {
        cache: cache.parse().map_err(|e| usage(format!("--cache: {e}")))?,
        sync: sync.parse().map_err(|e| usage(format!("--sync: {e}")))?,
        data: (a.data.as_deref().unwrap_or(crate::cli::DEFAULT_DATA))
            .parse()
            .map_err(|e| usage(format!("--data: {e}")))?,
        reps,
        seed,
        auto_reps: auto_reps.map(crate::reps::AutoReps::record),
        margin_pct: None,
        price_on: Vec::new(),
    };
    if !(1..=MAX_REPS).contains(&reps) {
        return Err(usage(format!("--reps {reps}: give 1 to {MAX_REPS}")));
    }
    Ok(policy)
}

/// The cache policy, sync policy and seed of a `--fio` run: what the job file asks for
/// (`invalidate=1`, fio's default: `cold`; `invalidate=0`: `keep`; no sync but the file's
/// own: `none`; its `randseed`), and a command line that asks otherwise refused.
fn fio_policy<'a>(a: &'a RunArgs, f: &super::fio::FioPlan) -> Result<(&'a str, &'a str, u64)> {
    let cache = if f.invalidate { "cold" } else { "keep" };
    let clash = |flag: &str, given: &str, wants: &str, why: &str| {
        usage(format!(
            "{flag} {given}: the fio job file asks for {flag} {wants} ({why}); drop {flag} \
             or give {wants}"
        ))
    };
    if let Some(c) = a.cache.as_deref().filter(|c| *c != cache) {
        let why = if f.invalidate {
            "fio invalidates a job's files in the page cache before it starts (invalidate=1)"
        } else {
            "invalidate=0 keeps the page cache"
        };
        return Err(clash("--cache", c, cache, why));
    }
    if let Some(s) = a.sync.as_deref().filter(|s| *s != "none") {
        let why = "fio syncs only where the file says so (fsync, fdatasync, end_fsync)";
        return Err(clash("--sync", s, "none", why));
    }
    let seed = match (a.seed, f.seed) {
        (Some(given), Some(file)) if given != file => {
            let why = format!("its randseed={file}");
            return Err(clash("--seed", &given.to_string(), &file.to_string(), &why));
        }
        (None, None) if f.fresh_seed && (a.mpi.is_some() || !a.kernel.is_empty()) => {
            // Each rank, and a guest, reads the job file again: one seed must be given.
            return Err(usage(
                "randrepeat=0 with --mpi or --kernel: give the run's seed with --seed N \
                 (each repetition then draws from N plus the repetition − 1)",
            ));
        }
        (given, file) => given.or(file).unwrap_or_else(|| match f.fresh_seed {
            // fio's randrepeat=0: another sequence every run, recorded as the run's seed.
            true => fresh_seed(),
            false => crate::cli::DEFAULT_SEED,
        }),
    };
    Ok((if f.invalidate { "cold" } else { "keep" }, "none", seed))
}

/// A seed no earlier run chose: 32 random bits from the kernel (short enough to type back
/// as `--seed`), the time as a fallback.
fn fresh_seed() -> u64 {
    let mut b = [0u8; 4];
    // SAFETY: getrandom writes at most b.len() bytes into b.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n == b.len() as isize {
        return u64::from(u32::from_le_bytes(b));
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()))
}

/// The size of each loop image and tmpfs, as given and in bytes.
pub(super) struct Size {
    text: String,
    pub(super) bytes: u64,
}

impl Size {
    /// `--size`, else the suite's, else the default; at least 64MiB.
    pub(super) fn of(a: &RunArgs, suite: Option<&crate::suite::Suite>) -> Result<Size> {
        let text = a
            .size
            .clone()
            .or_else(|| suite.and_then(|s| s.size).map(String::from))
            .unwrap_or_else(|| crate::cli::DEFAULT_SIZE.to_string());
        let bytes = parse_size(&text).map_err(|e| usage(format!("--size: {e}")))?;
        if bytes < 64 << 20 {
            return Err(usage(format!(
                "--size {text}: at least 64MiB is needed (xfs and btrfs refuse smaller)"
            )));
        }
        Ok(Size { text, bytes })
    }
}

/// The targets of the command line, in this order: `--device`s, else the filesystems
/// `--fs` names (or the suite's, or the default set: those this machine can make), then
/// `--net` mounts (needing root, as the made filesystems do), then `--dir`s; a target
/// listed twice, or none, is refused. Also the filesystems left out, with why.
pub(super) fn targets(
    a: &RunArgs,
    suite: Option<&crate::suite::Suite>,
    image_dir: &Path,
    size: &Size,
) -> Result<(Vec<TargetSpec>, Vec<String>)> {
    let mkfs = parse_fs_opts(&a.mkfs_opt, "--mkfs-opt")?;
    let mount = parse_fs_opts(&a.mount_opt, "--mount-opt")?;
    let (names, left_out) = fs_names(a, suite);
    refuse_unused_opts(&mkfs, "--mkfs-opt", &names, &left_out)?;
    refuse_unused_opts(&mount, "--mount-opt", &names, &left_out)?;
    let mut targets = device_targets(a, &names, &mkfs, &mount, image_dir)?;
    for name in names.iter().filter(|_| a.device.is_empty()) {
        targets.push(made_target(name, &mkfs, &mount, size)?);
    }
    for text in &a.net {
        targets.push(net_target(text, a.allow_ssh_commands)?);
    }
    if targets.iter().any(|t| !matches!(t, TargetSpec::Dir { .. })) && !crate::probe::sys::is_root()
    {
        let e = Error::NeedsRoot {
            what: "making loop and tmpfs filesystems and mounting network ones (mount, losetup)"
                .into(),
        };
        return Err(usage(e.to_string()));
    }
    for d in &a.dir {
        targets.push(dir_target(d, image_dir)?);
    }
    let mut seen = std::collections::HashSet::new();
    for t in &targets {
        let name = t.name();
        if !seen.insert(name.clone()) {
            return Err(usage(format!("target {name} is listed twice")));
        }
    }
    if targets.is_empty() {
        return Err(usage(
            "no target: give --fs LIST, --dir PATH or --net KIND=SOURCE",
        ));
    }
    Ok((targets, left_out))
}

/// The filesystems to make: those `--fs` names; none when only `--dir` or `--net` is
/// given; else the suite's or the default set, those this machine can make (the others
/// are left out, each with why).
fn fs_names(a: &RunArgs, suite: Option<&crate::suite::Suite>) -> (Vec<String>, Vec<String>) {
    match &a.fs {
        Some(list) => (
            list.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            Vec::new(),
        ),
        None if !a.dir.is_empty() || !a.net.is_empty() => (Vec::new(), Vec::new()),
        None => {
            let wanted: Vec<&str> = match suite.filter(|s| !s.fs.is_empty()) {
                Some(s) => s.fs.to_vec(),
                None => default_set().collect(),
            };
            makeable(&wanted)
        }
    }
}

/// The target fsarena makes for filesystem `name` (`--fs`): a tmpfs, a served filesystem
/// or a loop image, refused when this machine cannot make it or `size` is too small.
fn made_target(
    name: &str,
    mkfs: &[(String, String)],
    mount: &[(String, String)],
    size: &Size,
) -> Result<TargetSpec> {
    let (size_text, size_bytes) = (&size.text, size.bytes);
    let mount_opts = mount_opts_for(name, mount);
    if name == "tmpfs" {
        if let Support::No(why) = crate::provision::fs::tmpfs_support() {
            return Err(usage(format!(
                "--fs tmpfs: this machine cannot mount it: {why}"
            )));
        }
        return Ok(TargetSpec::Tmpfs {
            size_bytes,
            mount_opts,
        });
    }
    if let Some(proto) = crate::provision::served::Protocol::parse(name) {
        if let Support::No(why) = proto.support() {
            return Err(usage(format!("--fs {name}: {why}")));
        }
        let fs = crate::provision::served::BACKING;
        if size_bytes < fs.min_size_bytes() {
            return Err(usage(format!(
                "--fs {name} --size {size_text}: its {} needs at least {}",
                fs.name(),
                format_size(fs.min_size_bytes())
            )));
        }
        return Ok(TargetSpec::Served {
            proto,
            mkfs_opts: mkfs_opts_for(name, mkfs)?,
            mount_opts,
            size_bytes,
        });
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
    let mkfs_opts = mkfs_opts_for(name, mkfs)?;
    Ok(TargetSpec::Loop {
        fs,
        mkfs_opts,
        mount_opts,
        size_bytes,
    })
}

/// The target of one `--net KIND=SOURCE[,OPTS]`, refused when this machine cannot mount
/// it; a warning about its credentials is said on stderr.
fn net_target(text: &str, allow_ssh_commands: bool) -> Result<TargetSpec> {
    let spec = NetSpec::parse_allowing(text, allow_ssh_commands).map_err(usage)?;
    if let Support::No(why) = spec.kind.support() {
        return Err(usage(format!(
            "--net {}: this machine cannot mount {}: {why}",
            crate::secret::redact_word(text),
            spec.kind.name()
        )));
    }
    if let Some(warning) = spec.check_credentials().map_err(usage)? {
        crate::progress::stderr_line(&format!("fsarena: warning: {warning}"));
    }
    Ok(TargetSpec::Net(spec))
}

/// The target of one `--dir PATH`: an existing directory fsarena may work in.
fn dir_target(d: &Path, image_dir: &Path) -> Result<TargetSpec> {
    if !d.is_dir() {
        return Err(usage(format!(
            "--dir {}: not an existing directory",
            d.display()
        )));
    }
    let path = d.canonicalize()?;
    if let Some(why) = crate::provision::dir::refuse_dir(&path, image_dir) {
        return Err(usage(format!("--dir {}: {why}", d.display())));
    }
    Ok(TargetSpec::Dir { path })
}

/// Refuses a workload a target cannot run, and a run whose images or tmpfs have no room.
pub(super) fn check_workloads_and_room(
    workloads: &[WorkloadSpec],
    targets: &[TargetSpec],
    image_dir: &Path,
    size: &Size,
) -> Result<()> {
    for w in workloads {
        for t in targets {
            crate::workload::check_target(w, t)?;
        }
    }
    if targets
        .iter()
        .any(|t| matches!(t, TargetSpec::Loop { .. } | TargetSpec::Served { .. }))
    {
        if let Some(why) = room::image_dir_problem(image_dir, size.bytes) {
            return Err(usage(format!("--image-dir {why}")));
        }
    }
    if targets
        .iter()
        .any(|t| matches!(t, TargetSpec::Tmpfs { .. }))
    {
        if let Some(why) = room::tmpfs_problem(size.bytes, room::memory_for_tmpfs()) {
            return Err(usage(format!("--fs tmpfs --size {}: {why}", size.text)));
        }
    }
    Ok(())
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
    refuse_paths(&out).map_err(|e| usage(format!("--mkfs-opt {name}: {e}")))?;
    Ok(out)
}

/// The `--device` targets: one per device, each with the one filesystem `--fs` names
/// (`--device /dev/sdb --fs xfs` is `xfs@sdb`), every interlock checked
/// ([`crate::provision::blockdev::device_spec`]). Empty without `--device`.
fn device_targets(
    a: &RunArgs,
    names: &[String],
    mkfs: &[(String, String)],
    mount: &[(String, String)],
    image_dir: &Path,
) -> Result<Vec<TargetSpec>> {
    use crate::provision::blockdev::{device_spec, Consent};
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

#[cfg(test)]
mod crash_states_tests {
    #[test]
    fn crash_states_fills_in_states_where_the_workload_gives_none() {
        use super::with_crash_states as w;
        assert_eq!(w("crash", Some(9)), "crash:states=9");
        assert_eq!(
            w("crash:pattern=churn", Some(9)),
            "crash:pattern=churn,states=9"
        );
        assert_eq!(w("crash:states=3", Some(9)), "crash:states=3");
        assert_eq!(w("bonnie", Some(9)), "bonnie");
        assert_eq!(w("crash", None), "crash");
    }
}
