//! A plan file's targets: a made, device, directory, network or guest target from its
//! entry, with the consent a device needs and the kernel a guest boots.

use super::*;

/// The target of a device entry (`device = "/dev/sdb"` with `fs`): checked by
/// [`crate::provision::blockdev::device_spec`], the same interlocks as `--device`, with the
/// consent the command line gave. A refusal is a host problem at the entry's location (an
/// error for `run`, a warning for `plan check`, which is given no consent); the spec
/// returned then carries a guard that matches no device, so nothing could format it.
fn device_target(
    src: &Src,
    dev: &At<PathBuf>,
    fs: FsType,
    mkfs_opts: Vec<String>,
    mount_opts: String,
    consent: &crate::provision::blockdev::Consent,
    host: &mut Vec<anyhow::Error>,
) -> TargetSpec {
    use crate::provision::blockdev::{device_spec, Guard};
    match device_spec(&dev.v, fs, mkfs_opts.clone(), mount_opts.clone(), consent) {
        Ok(spec) => spec,
        Err(e) => {
            host.push(src.err(&dev.span, format!("{e:#}")));
            TargetSpec::Device {
                path: dev.v.clone(),
                fs,
                mkfs_opts,
                mount_opts,
                guard: Guard {
                    rdev: 0,
                    force: false,
                    protect: Vec::new(),
                },
            }
        }
    }
}

/// Refuses `--destroy-data-on` naming no device target of the plan (a typo would be
/// dangerous), and `--destroy-data-on`/`--force` in a plan without device targets.
pub(super) fn check_consent(
    src: &Src,
    targets: &[(PlanTarget, &TargetEntry)],
    o: &Overrides,
) -> Result<()> {
    let devices: Vec<&Path> = targets
        .iter()
        .filter_map(|(_, e)| e.device.as_ref().map(|d| d.v.as_path()))
        .collect();
    if devices.is_empty() && (!o.destroy_data_on.is_empty() || o.force) {
        return Err(usage(format!(
            "--destroy-data-on and --force go with device targets, and plan {} has none",
            src.path
        )));
    }
    let same = |a: &Path, b: &Path| {
        a == b || (a.canonicalize().ok()).is_some_and(|c| b.canonicalize().ok() == Some(c))
    };
    for confirmed in &o.destroy_data_on {
        if !devices.iter().any(|d| same(d, confirmed)) {
            return Err(usage(format!(
                "--destroy-data-on {}: no device target of plan {} names it (a typo would \
                 be dangerous, so this is refused too)",
                confirmed.display(),
                src.path
            )));
        }
    }
    Ok(())
}

pub(super) fn target(
    src: &Src,
    e: &TargetEntry,
    size: &dyn Fn(&Option<At<String>>) -> Result<u64>,
    plan_dir: &Path,
    consent: &crate::provision::blockdev::Consent,
    in_guest: bool,
    host: &mut Vec<anyhow::Error>,
) -> Result<PlanTarget> {
    if let Some(n) = &e.name {
        if !valid_name(&n.v) {
            return Err(src.err(
                &n.span,
                format!(
                    "target name '{}': use ASCII letters, digits and . _ = , + - (not starting \
                     with . or -), at most 120 characters",
                    n.v
                ),
            ));
        }
    }
    let named = |default: String| e.name.as_ref().map_or(default, |n| n.v.clone());
    let age = match &e.age {
        Some(a) => Some(
            crate::plan::age::plan_age(&a.v, false)
                .map_err(|err| src.err(&a.span, err))?
                .expect("a [[target]]'s age is never fresh"),
        ),
        None => None,
    };
    // Aging needs a filesystem fsarena makes on a loop image (file.rs refused it on dir
    // and device entries).
    let not_aged = |what: &str| match &e.age {
        Some(a) => Err(src.err(
            &a.span,
            format!(
                "age does not apply to {what}: aging needs a filesystem fsarena makes on a \
                 loop image (ext4, xfs, btrfs, …); give this target no age, or put it in a \
                 [[matrix]] of its own"
            ),
        )),
        None => Ok(()),
    };
    if let Some(dir) = &e.dir {
        let path = plan_dir.join(&dir.v);
        let path = match path.canonicalize() {
            Ok(p) if p.is_dir() => {
                if let Some(why) = crate::provision::dir::refuse_dir(&p, &consent.image_dir) {
                    return Err(src.err(&dir.span, format!("dir {}: {why}", p.display())));
                }
                p
            }
            _ => {
                host.push(src.err(
                    &dir.span,
                    format!("dir {}: not an existing directory", path.display()),
                ));
                path
            }
        };
        return Ok(PlanTarget {
            name: named(format!("dir:{}", path.display())),
            spec: TargetSpec::Dir { path },
            kernel: None,
            age: None,
        });
    }
    let fs = e.fs.as_ref().expect("file.rs checked: fs or dir");
    let mount_opts = e
        .mount
        .as_ref()
        .map(|m| m.v.trim().to_string())
        .unwrap_or_default();
    if let Some(m) = &e.mount {
        crate::provision::fs::refuse_paths(&[&m.v])
            .map_err(|err| src.err(&m.span, format!("mount: {err}")))?;
    }
    let mkfs_text = e.mkfs.as_ref().map(|m| m.v.clone()).unwrap_or_default();
    let base = target_name(&fs.v, &mkfs_text, &mount_opts, "");
    let name = named(match &age {
        Some(spec) => crate::plan::age::aged_name(&base, spec, &[Some(*spec)]),
        None => base,
    });
    // In the guest, `kernel` is the host's business: it chose the guest's targets.
    let kernel = match &e.kernel {
        Some(k) if !in_guest => Some(guest_kernel(src, k, plan_dir)?),
        _ => None,
    };
    // What the target needs of a kernel is checked against the one it runs in.
    let support = |f: &dyn Fn() -> Support| match &kernel {
        Some(k) => crate::provision::fs::with_guest_kernel(&k.release, f),
        None => f(),
    };
    if fs.v == "tmpfs" {
        if let Some(dev) = &e.device {
            return Err(src.err(
                &dev.span,
                "a device target needs a filesystem to make on it (fs = \"ext4\", \"xfs\", …), not tmpfs",
            ));
        }
    }
    let size_bytes = size(&e.size)?;
    if fs.v == "tmpfs" {
        not_aged("tmpfs (it is not made on a loop image)")?;
        if let Some(m) = &e.mount {
            crate::plan::refuse_tmpfs_size(&m.v)
                .map_err(|err| src.err(&m.span, format!("mount: {err}")))?;
        }
        if let Some(m) = &e.mkfs {
            return Err(src.err(&m.span, "tmpfs has no mkfs options"));
        }
        if let Support::No(why) = support(&crate::provision::fs::tmpfs_support) {
            host.push(src.err(&fs.span, format!("this machine cannot mount tmpfs: {why}")));
        }
        return Ok(PlanTarget {
            name,
            spec: TargetSpec::Tmpfs {
                size_bytes,
                mount_opts,
            },
            kernel,
            age: None,
        });
    }
    if let Some(proto) = crate::provision::served::Protocol::parse(&fs.v) {
        if e.device.is_some() {
            return Err(src.err(
                &fs.span,
                format!("{} is served from a loop image, never from a device", fs.v),
            ));
        }
        if let Support::No(why) = support(&|| proto.support()) {
            host.push(src.err(&fs.span, why));
        }
        let mkfs_opts = match &e.mkfs {
            Some(m) => split_opts(&m.v).map_err(|err| src.err(&m.span, format!("mkfs: {err}")))?,
            None => Vec::new(),
        };
        crate::provision::fs::refuse_paths(&mkfs_opts)
            .map_err(|err| src.err(&fs.span, format!("mkfs: {err}")))?;
        return Ok(PlanTarget {
            name,
            spec: TargetSpec::Served {
                proto,
                mkfs_opts,
                mount_opts,
                size_bytes,
            },
            kernel,
            age,
        });
    }
    let kind = FsType::parse(&fs.v).map_err(|e| src.err(&fs.span, e))?;
    if let Support::No(why) = support(&|| kind.support()) {
        host.push(src.err(
            &fs.span,
            format!("this machine cannot make {}: {why}", fs.v),
        ));
    }
    if e.device.is_none() && size_bytes < kind.min_size_bytes() {
        let span = e.size.as_ref().map_or(&fs.span, |s| &s.span);
        return Err(src.err(
            span,
            format!(
                "{} needs at least {} ({} bytes) for {}; give this target a larger size",
                kind.mkfs_program(),
                format_size(kind.min_size_bytes()),
                kind.min_size_bytes(),
                fs.v
            ),
        ));
    }
    let mkfs_opts = match &e.mkfs {
        Some(m) => {
            let words = split_opts(&m.v).map_err(|err| src.err(&m.span, format!("mkfs: {err}")))?;
            crate::provision::fs::refuse_paths(&words)
                .map_err(|err| src.err(&m.span, format!("mkfs: {err}")))?;
            words
        }
        None => Vec::new(),
    };
    if let Some(dev) = &e.device {
        not_aged("a device target")?;
        let spec = device_target(src, dev, kind, mkfs_opts, mount_opts, consent, host);
        return Ok(PlanTarget {
            name: named(spec.name()),
            spec,
            kernel: None,
            age: None,
        });
    }
    Ok(PlanTarget {
        name,
        spec: TargetSpec::Loop {
            fs: kind,
            mkfs_opts,
            mount_opts,
            size_bytes,
        },
        kernel,
        age,
    })
}

/// The kernel of `kernel = "…"`: a release under /boot, or a vmlinuz path (relative to
/// the plan's directory), resolved as `run --kernel` resolves it.
fn guest_kernel(src: &Src, k: &At<String>, plan_dir: &Path) -> Result<Kernel> {
    let text = if k.v.contains('/') {
        plan_dir.join(&k.v).to_string_lossy().into_owned()
    } else {
        k.v.clone()
    };
    kernel::resolve_as(&text, "kernel").map_err(|e| src.err(&k.span, format!("{e:#}")))
}
