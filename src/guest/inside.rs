//! The guest's side of `run --kernel` (the hidden `run --in-guest SERIAL`): what the host
//! never assumes of a guest is made here. The loop driver and each target's filesystem
//! module are loaded with modprobe, and the scratch disk the host attached (found by its
//! serial) becomes an ext4 filesystem holding the image directory and the database, so
//! that nothing measured or stored goes through the 9p root.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// Where the scratch disk is mounted in the guest (/run is the guest's own tmpfs).
pub const SCRATCH: &str = "/run/fsarena-scratch";

/// The block device whose serial is `serial` (`/dev/vda`).
fn device_with_serial(serial: &str) -> Result<String> {
    for e in std::fs::read_dir("/sys/block").context("reading /sys/block")? {
        let e = e?;
        let s = std::fs::read_to_string(e.path().join("serial")).unwrap_or_default();
        if s.trim() == serial {
            return Ok(format!("/dev/{}", e.file_name().to_string_lossy()));
        }
    }
    bail!("no disk with serial {serial} in this guest (/sys/block)")
}

/// Makes the scratch disk an ext4 filesystem mounted at [`SCRATCH`]; returns the image
/// directory on it.
pub fn prepare_scratch(serial: &str) -> Result<PathBuf> {
    // ext4 may be a module in the guest kernel.
    let _ = crate::cmd::run(&["modprobe", "ext4"]);
    let dev = device_with_serial(serial)?;
    crate::cmd::run(&[
        "mkfs.ext4",
        "-q",
        "-F",
        "-E",
        "lazy_itable_init=0,lazy_journal_init=0,nodiscard",
        &dev,
    ])?;
    std::fs::create_dir_all(SCRATCH)?;
    crate::cmd::run(&["mount", "-t", "ext4", &dev, SCRATCH])?;
    let img = Path::new(SCRATCH).join("img");
    std::fs::create_dir_all(&img)?;
    // Root's and not writable by others, as every image directory must be; searchable, as
    // the host's default one is, so that a server running as its own user (pgbench's
    // `postgres`) reaches its data directory on a target.
    std::fs::set_permissions(&img, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    Ok(img)
}

/// Loads the loop driver and the module of every filesystem the plan makes; returns a
/// line per module that would not load (the trial's mount then says the rest).
pub fn load_modules(plan: &crate::plan::Plan) -> Result<Vec<String>> {
    crate::cmd::run(&["modprobe", "loop"]).context("loading the loop driver in the guest")?;
    let registered = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    let mut modules: Vec<&str> = Vec::new();
    for t in &plan.targets {
        let needs: &[crate::provision::fs::Kernel] = match &t.spec {
            crate::provision::TargetSpec::Loop { fs, .. } => {
                std::slice::from_ref(&fs.knowledge().kernel)
            }
            crate::provision::TargetSpec::Served { proto, .. } => proto.modules(),
            _ => &[],
        };
        for k in needs {
            // ext2 and ext3 may come with ext4, loaded for the scratch disk.
            let there = registered
                .lines()
                .any(|l| l.split_whitespace().last() == Some(k.fs));
            if !there && !modules.contains(&k.module) {
                modules.push(k.module);
            }
        }
    }
    let mut failed = Vec::new();
    for m in modules {
        if let Err(e) = crate::cmd::run(&["modprobe", m]) {
            failed.push(format!("modprobe {m}: {e:#}"));
        }
    }
    Ok(failed)
}
