//! `fsarena setup`: installs the programs fsarena drives for some filesystems (by default
//! those of the quick suite: ext4, xfs, btrfs and tmpfs), so that a fresh machine compares
//! them all — mkfs and checker (`e2fsprogs`, `xfsprogs`, `btrfs-progs`, …), and `losetup`,
//! `mount`, `umount` (`mount`). Only the Debian packages that [`FsType`]'s tables name, only
//! those missing, only with apt-get, only as root, through the one command runner. What the
//! kernel lacks cannot be installed: it is said, and is no failure (the run then leaves
//! that filesystem out and says why). Not root or no apt-get: it prints the packages and
//! exits 1.

use crate::error::usage;
use crate::provision::fs::{kernel_lacks, FsType, Host, LiveHost, LOOP_TOOLS, TMPFS_TOOLS};
use anyhow::Result;

/// What a set of filesystems needs that this machine lacks.
#[derive(Debug, Default, PartialEq)]
pub struct Missing {
    /// `(program, package)` pairs, each package once.
    pub programs: Vec<(String, String)>,
    /// What only another kernel (or a module) can give: `jfs: kernel … has no jfs …`.
    pub kernel: Vec<String>,
}

impl Missing {
    /// The packages to install, each once, in order.
    pub fn packages(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for (_, p) in &self.programs {
            if !v.contains(&p.as_str()) {
                v.push(p);
            }
        }
        v
    }
}

/// The filesystems `setup` serves without `--fs`: the quick suite's.
pub fn default_names() -> Vec<&'static str> {
    crate::suite::find("quick").map_or_else(|_| vec!["ext4", "tmpfs"], |s| s.fs.to_vec())
}

/// What `names` (`ext4`, `tmpfs`, …) need on `host` and it lacks.
pub fn missing_on(host: &dyn Host, names: &[&str]) -> Result<Missing> {
    let mut m = Missing::default();
    let mut want = |program: &str, package: &str| {
        if !host.has_program(program) && !m.programs.iter().any(|(p, _)| p == program) {
            m.programs.push((program.to_string(), package.to_string()));
        }
    };
    for name in names {
        if *name == "tmpfs" {
            TMPFS_TOOLS.iter().for_each(|(p, k)| want(p, k));
            continue;
        }
        let fs = FsType::parse(name).map_err(usage)?;
        let k = fs.knowledge();
        for program in std::iter::once(k.mkfs)
            .chain(k.mount_helper)
            .chain(k.fsck.map(|argv| argv[0]))
        {
            want(program, k.package);
        }
        LOOP_TOOLS.iter().for_each(|(p, pkg)| want(p, pkg));
        if let Some(why) = kernel_lacks(host, &k.kernel) {
            m.kernel.push(format!("{name}: {why}"));
        }
    }
    Ok(m)
}

/// The programs of workloads `names` (workload or suite names) that this machine lacks,
/// as `(program, package)` pairs, each program once; an unknown name is a usage error.
pub fn missing_engines(names: &[&str]) -> Result<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for name in names {
        let workloads: Vec<String> = match crate::workload::find(name) {
            Ok(w) => vec![w.name.to_string()],
            Err(e) => match crate::suite::find(name) {
                Ok(s) => s.workloads.iter().map(|w| w.to_string()).collect(),
                Err(_) => return Err(e),
            },
        };
        for w in workloads {
            let spec_name = w.split(':').next().unwrap_or(&w).to_string();
            let info = crate::workload::find(&spec_name)?;
            for p in crate::workload::programs::missing(info.programs) {
                if !out.iter().any(|(q, _)| q == p.name) {
                    out.push((p.name.to_string(), p.package.to_string()));
                }
            }
        }
    }
    Ok(out)
}

/// `fsarena setup [--fs LIST] [--workload LIST]`: the exit code, after saying what was
/// done. With only `--workload`, the filesystems' programs are left alone.
pub fn command(fs: Option<&str>, workload: Option<&str>, dry_run: bool) -> Result<i32> {
    fn split(list: &str) -> Vec<&str> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect()
    }
    let names: Vec<&str> = match (fs, workload) {
        (Some(list), _) => split(list),
        (None, Some(_)) => Vec::new(),
        (None, None) => default_names(),
    };
    let engines: Vec<&str> = workload.map(split).unwrap_or_default();
    let mut missing = missing_on(&LiveHost, &names)?;
    missing.programs.extend(missing_engines(&engines)?);
    let names: Vec<&str> = names.iter().chain(&engines).copied().collect();
    for k in &missing.kernel {
        println!("cannot be installed with a package: {k}");
    }
    let packages = missing.packages();
    if packages.is_empty() {
        println!("the programs for {} are installed", names.join(", "));
        return Ok(0);
    }
    let programs: Vec<String> = missing
        .programs
        .iter()
        .map(|(p, k)| format!("{p} ({k})"))
        .collect();
    let line = format!("apt-get install {}", packages.join(" "));
    let root = crate::probe::sys::is_root();
    let apt = crate::cmd::which("apt-get").is_some();
    if dry_run || !root || !apt {
        let why = if dry_run {
            "would run"
        } else if !apt {
            "no apt-get here: install the equivalent packages, on Debian and Ubuntu"
        } else {
            "not root: as root, run"
        };
        println!("missing: {}; {why}: {line}", programs.join(", "));
        return Ok(if dry_run { 0 } else { 1 });
    }
    println!(
        "fsarena setup: installing {} with apt-get",
        packages.join(" ")
    );
    let lock = ["-o", "DPkg::Lock::Timeout=600"];
    let env = ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"];
    let update: Vec<&str> = env
        .iter()
        .chain(&["update", "-qq"])
        .chain(&lock)
        .copied()
        .collect();
    let install: Vec<&str> = env
        .iter()
        .chain(&["install", "-y", "-qq", "--no-install-recommends"])
        .chain(&lock)
        .chain(&packages)
        .copied()
        .collect();
    crate::cmd::run(&update)?;
    crate::cmd::run(&install)?;
    if packages.contains(&"postgresql") {
        println!(
            "postgresql's package may have started its own cluster (listening on localhost); \
             pgbench does not use it (it starts a server of its own on the target): \
             `systemctl disable --now postgresql` stops it"
        );
    }
    let mut after = missing_on(&LiveHost, &names[..names.len() - engines.len()])?;
    after.programs.extend(missing_engines(&engines)?);
    if after.programs.is_empty() {
        println!("the programs for {} are installed", names.join(", "));
        Ok(0)
    } else {
        let still: Vec<String> = after.programs.iter().map(|(p, _)| p.clone()).collect();
        anyhow::bail!(
            "apt-get succeeded but {} are still missing",
            still.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provision::fs::FakeHost;

    const PROC: &str = "nodev\ttmpfs\n\text4\n\txfs\n\tbtrfs\n";

    #[test]
    fn a_fresh_machine_needs_xfsprogs_and_btrfs_progs_once_each() {
        let fresh = FakeHost {
            filesystems: PROC,
            modules: "",
            programs: &["mkfs.ext4", "e2fsck", "losetup", "mount", "umount"],
        };
        let m = missing_on(&fresh, &["ext4", "xfs", "btrfs", "tmpfs"]).unwrap();
        assert_eq!(m.packages(), ["xfsprogs", "btrfs-progs"]);
        assert_eq!(
            m.programs
                .iter()
                .map(|(p, _)| p.as_str())
                .collect::<Vec<_>>(),
            ["mkfs.xfs", "xfs_repair", "mkfs.btrfs", "btrfs"]
        );
        assert!(m.kernel.is_empty());
    }

    /// A suite's name stands for its workloads; a name that is neither a workload nor a
    /// suite is a usage error; what is missing here is exactly what `programs` finds
    /// missing, each program once.
    #[test]
    fn engines_of_workloads_and_suites() {
        let want: Vec<(String, String)> = ["pgbench", "db_bench"]
            .iter()
            .flat_map(|w| crate::workload::find(w).unwrap().programs)
            .filter(|p| (p.find)().is_none())
            .map(|p| (p.name.to_string(), p.package.to_string()))
            .collect();
        assert_eq!(missing_engines(&["database"]).unwrap(), want);
        assert_eq!(
            missing_engines(&["pgbench", "db_bench", "pgbench"]).unwrap(),
            want
        );
        assert!(missing_engines(&["sqlite", "quick"]).unwrap().is_empty());
        let e = missing_engines(&["nosuch"]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
    }

    #[test]
    fn kernel_support_is_not_a_package_and_losetup_is() {
        let bare = FakeHost {
            filesystems: PROC,
            modules: "",
            programs: &["mount", "umount"],
        };
        let m = missing_on(&bare, &["jfs"]).unwrap();
        assert_eq!(m.packages(), ["jfsutils", "mount"]);
        assert_eq!(m.kernel.len(), 1, "{:?}", m.kernel);
        assert!(m.kernel[0].starts_with("jfs: kernel"), "{:?}", m.kernel);
        assert!(missing_on(&bare, &["zfs"]).is_err());
        assert_eq!(missing_on(&bare, &["tmpfs"]).unwrap(), Missing::default());
    }
}
