//! The interlocks that stand between `--device` and mkfs. Each returns the message the user
//! sees; all are read-only (sysfs, /proc, `blkid -p`, `wipefs` without `-a`). They run when
//! the plan is made, before anything is touched, and again right before every write to the
//! device (calibration and each trial's mkfs). docs/devices.md lists them.

use super::sysfs::{self, Dev, Member};
use crate::cmd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Paths whose device fsarena never formats, with what to call them.
pub fn protected_paths(image_dir: &Path, db: Option<&Path>) -> Vec<(String, PathBuf)> {
    let mut v = vec![
        ("the root filesystem".to_string(), PathBuf::from("/")),
        ("/boot".to_string(), PathBuf::from("/boot")),
        (
            "fsarena's image directory".to_string(),
            image_dir.to_path_buf(),
        ),
    ];
    if let Some(db) = db {
        v.push(("fsarena's result database".into(), db.to_path_buf()));
    }
    v
}

/// The device named by `--destroy-data-on` that is `dev`, or a refusal.
pub fn confirmed(dev: &Dev, typed: &Path, destroy_data_on: &[PathBuf]) -> Result<(), String> {
    if destroy_data_on
        .iter()
        .any(|p| sysfs::resolve(p).is_ok_and(|d| d.rdev == dev.rdev))
    {
        return Ok(());
    }
    let also = if typed != Path::new(&dev.node()) {
        format!(" ({} is {})", typed.display(), dev.node())
    } else {
        String::new()
    };
    Err(format!(
        "{}{also} is not named by --destroy-data-on: fsarena formats a device only when \
         --destroy-data-on names that same device too (--destroy-data-on {}); everything on \
         it is destroyed",
        typed.display(),
        dev.node()
    ))
}

/// Devices a path lives on: its `st_dev`, and the source device of the mount holding it
/// (btrfs reports an anonymous `st_dev`). The path's nearest existing ancestor stands in for
/// a path not made yet.
fn devices_of_path(path: &Path) -> Vec<u64> {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let p = abs
        .ancestors()
        .find(|a| a.exists())
        .unwrap_or(Path::new("/"));
    let mut v = Vec::new();
    if let Ok(m) = std::fs::metadata(p) {
        v.push(m.dev());
    }
    let canon = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let best = mounts()
        .into_iter()
        .filter(|m| canon.starts_with(&m.point))
        .max_by_key(|m| m.point.as_os_str().len());
    if let Some(m) = best {
        v.push(m.dev);
        v.extend(m.source_rdev);
    }
    v
}

/// One line of /proc/self/mountinfo, as far as the interlocks need it.
struct MountLine {
    dev: u64,
    point: PathBuf,
    source: String,
    source_rdev: Option<u64>,
}

fn mounts() -> Vec<MountLine> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let sep = f.iter().position(|x| *x == "-")?;
            let source = crate::state::unescape_mount_path(f.get(sep + 2)?);
            Some(MountLine {
                dev: sysfs::parse_majmin(f.get(2)?)?,
                point: PathBuf::from(crate::state::unescape_mount_path(f.get(4)?)),
                source_rdev: block_rdev(Path::new(&source)),
                source,
            })
        })
        .collect()
}

/// `st_rdev` when `p` is a block device node.
fn block_rdev(p: &Path) -> Option<u64> {
    if !p.is_absolute() {
        return None;
    }
    let m = std::fs::metadata(p).ok()?;
    m.file_type().is_block_device().then(|| m.rdev())
}

fn member_with<'a>(family: &'a [Member], devs: &[u64]) -> Option<&'a Member> {
    family.iter().find(|m| devs.contains(&m.dev.rdev))
}

/// Refuses a device that holds `/`, `/boot`, the image directory or the database.
pub fn not_protected(
    dev: &Dev,
    family: &[Member],
    protect: &[(String, PathBuf)],
) -> Result<(), String> {
    for (what, path) in protect {
        if !path.exists() && what == "/boot" {
            continue;
        }
        if let Some(m) = member_with(family, &devices_of_path(path)) {
            let via = match m.role {
                sysfs::Role::Itself => String::new(),
                _ => format!(" (on {})", m.describe()),
            };
            return Err(format!(
                "{} holds {what} {}{via}; fsarena never formats the device of /, /boot, its \
                 image directory or its database (choose another --image-dir or --db)",
                dev.node(),
                path.display()
            ));
        }
    }
    Ok(())
}

/// Refuses a device when any member of its family is mounted.
pub fn not_mounted(dev: &Dev, family: &[Member]) -> Result<(), String> {
    for l in mounts() {
        let devs: Vec<u64> = std::iter::once(l.dev).chain(l.source_rdev).collect();
        if let Some(m) = member_with(family, &devs) {
            return Err(format!(
                "{} is in use: {} is mounted at {} ({}); unmount it first",
                dev.node(),
                m.describe(),
                l.point.display(),
                l.source
            ));
        }
    }
    Ok(())
}

/// Refuses a device when any member is active swap, or holds an active swap file.
pub fn not_swap(dev: &Dev, family: &[Member]) -> Result<(), String> {
    let text = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for name in text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
    {
        let p = PathBuf::from(crate::state::unescape_mount_path(name));
        let devs: Vec<u64> = block_rdev(&p)
            .into_iter()
            .chain(std::fs::metadata(&p).ok().map(|m| m.dev()))
            .collect();
        if let Some(m) = member_with(family, &devs) {
            return Err(format!(
                "{} is in use: {} is active swap ({}); swapoff it first",
                dev.node(),
                m.describe(),
                p.display()
            ));
        }
    }
    Ok(())
}

/// Refuses a device when a loop device is backed by a member, or by a file on one.
pub fn not_backing_loop(dev: &Dev, family: &[Member]) -> Result<(), String> {
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return Ok(());
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") || family.iter().any(|m| m.dev.name == name) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(e.path().join("loop/backing_file")) else {
            continue;
        };
        let text = text.trim_end_matches('\n');
        let file = PathBuf::from(text.strip_suffix(" (deleted)").unwrap_or(text));
        let Ok(meta) = std::fs::metadata(&file) else {
            continue;
        };
        let (devs, how) = if meta.file_type().is_block_device() {
            (vec![meta.rdev()], "backs")
        } else {
            (vec![meta.dev()], "holds the backing file of")
        };
        if let Some(m) = member_with(family, &devs) {
            return Err(format!(
                "{} is in use: {} {how} loop device /dev/{name} ({}); detach it first \
                 (losetup -d /dev/{name})",
                dev.node(),
                m.describe(),
                file.display()
            ));
        }
    }
    Ok(())
}

/// Refuses a device that is part of an md/LVM/dm stack: something is built on a member
/// (`holders/`), or the device is itself built on others (`slaves/`).
pub fn not_stacked(dev: &Dev, family: &[Member]) -> Result<(), String> {
    if let Some(m) = family
        .iter()
        .find(|m| matches!(m.role, sysfs::Role::Holder { .. }))
    {
        return Err(format!(
            "{} is part of an md/LVM/dm stack: {}; take the stack down first",
            dev.node(),
            m.describe()
        ));
    }
    let slaves = dev.stacked("slaves");
    if !slaves.is_empty() {
        return Err(format!(
            "{} is itself an md/LVM/dm device built on {}; fsarena formats plain disks and \
             partitions only",
            dev.node(),
            slaves
                .iter()
                .map(|s| format!("/dev/{s}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(())
}

/// What `blkid -p` and `wipefs` find on the device, as one phrase ("an ext4 filesystem
/// (blkid: UUID=…, LABEL=…)"), or `None` when the device is blank. `Err` when the probes
/// could not run (then nothing is known, and the device is refused).
pub fn signatures(dev: &Dev) -> Result<Option<String>, String> {
    let node = dev.node();
    let blkid = match cmd::run(&["blkid", "-p", "-o", "export", &node]) {
        Ok(o) => o.stdout,
        // 2: nothing found. 8: more than one signature ("ambivalent result"): wipefs
        // below lists them, and --force may override them like any other signature.
        Err(e) if is_exit(&e, "2") || is_exit(&e, "8") => String::new(),
        Err(e) => return Err(format!("cannot probe {node} for signatures: {e:#}")),
    };
    let kv: Vec<(&str, &str)> = blkid
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| *k != "DEVNAME")
        .collect();
    let get = |k: &str| kv.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    let detail = ["TYPE", "PTTYPE", "UUID", "PTUUID", "LABEL"]
        .iter()
        .filter_map(|k| get(k).map(|v| format!("{k}={v}")))
        .collect::<Vec<_>>()
        .join(", ");
    let what = match (get("TYPE"), get("PTTYPE"), get("USAGE")) {
        (Some(t), _, Some("filesystem")) | (Some(t), _, None) => {
            Some(format!("{} {t} filesystem", article(t)))
        }
        (Some(t), _, Some(u)) => Some(format!("{} {t} signature ({u})", article(t))),
        (None, Some(pt), _) => Some(format!("a {pt} partition table")),
        (None, None, _) => None,
    };
    if let Some(w) = what {
        return Ok(Some(format!("{w} (blkid: {detail})")));
    }
    let wipefs = cmd::run(&["wipefs", "-n", "-i", "-p", "-O", "TYPE,OFFSET", &node])
        .map_err(|e| format!("cannot probe {node} for signatures: {e:#}"))?;
    let found: Vec<String> = wipefs
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.replace(',', " at "))
        .collect();
    Ok((!found.is_empty()).then(|| format!("signatures (wipefs: {})", found.join("; "))))
}

fn article(word: &str) -> &'static str {
    match word.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u' | 'x') => "an",
        _ => "a",
    }
}

fn is_exit(e: &anyhow::Error, code: &str) -> bool {
    matches!(
        e.downcast_ref::<crate::error::Error>(),
        Some(crate::error::Error::Command { status, .. }) if status == code
    )
}

/// Refuses a device with a filesystem signature or partition table, unless forced.
pub fn blank_or_forced(dev: &Dev, force: bool) -> Result<(), String> {
    match signatures(dev)? {
        Some(found) if !force => Err(format!(
            "{} holds {found}; pass --force to destroy it",
            dev.node()
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn articles() {
        assert_eq!(article("ext4"), "an");
        assert_eq!(article("xfs"), "an");
        assert_eq!(article("btrfs"), "a");
    }

    #[test]
    fn a_holder_makes_a_stack() {
        let d = Dev {
            name: "fake0".into(),
            rdev: 1,
        };
        let fam = vec![
            Member {
                dev: d.clone(),
                role: sysfs::Role::Itself,
            },
            Member {
                dev: Dev {
                    name: "dm-7".into(),
                    rdev: 2,
                },
                role: sysfs::Role::Holder { of: "fake0".into() },
            },
        ];
        let e = not_stacked(&d, &fam).unwrap_err();
        assert!(
            e.contains("/dev/fake0 is part of an md/LVM/dm stack: /dev/dm-7 (built on /dev/fake0)"),
            "{e}"
        );
        assert!(not_stacked(&d, &fam[..1]).is_ok());
    }

    #[test]
    fn root_is_protected_on_its_own_device() {
        let Ok(root) = std::fs::metadata("/") else {
            return;
        };
        let fake = Dev {
            name: "fake".into(),
            rdev: root.dev(),
        };
        let fam = vec![Member {
            dev: fake.clone(),
            role: sysfs::Role::Itself,
        }];
        let e = not_protected(
            &fake,
            &fam,
            &protected_paths(Path::new("/nonexistent"), None),
        )
        .unwrap_err();
        assert!(e.contains("the root filesystem"), "{e}");
    }
}
