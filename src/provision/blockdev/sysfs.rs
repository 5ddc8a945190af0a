//! What the kernel says about a block device: its number, its sysfs directory, the whole
//! disk of a partition, the partitions of a disk, and what holds them (md, LVM, dm), all
//! from `/sys/dev/block/MAJ:MIN` and `/sys/class/block/NAME`.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A block device, identified by its device number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dev {
    /// The kernel's name (`sdb`, `sdb1`, `loop3`, `loop3p2`, `dm-0`).
    pub name: String,
    /// `st_rdev` of the device node.
    pub rdev: u64,
}

impl Dev {
    /// `/dev/NAME`.
    pub fn node(&self) -> String {
        format!("/dev/{}", self.name)
    }

    /// `/sys/class/block/NAME`.
    pub fn sys(&self) -> PathBuf {
        Path::new("/sys/class/block").join(&self.name)
    }

    /// Whether the kernel calls it a partition.
    pub fn is_partition(&self) -> bool {
        self.sys().join("partition").exists()
    }

    /// Its size in bytes (`size` counts 512-byte sectors whatever the block size).
    pub fn size_bytes(&self) -> u64 {
        read_trim(&self.sys().join("size"))
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0)
            * 512
    }

    /// Names listed in its `holders/` (devices built on it) or `slaves/` (devices it is
    /// built on).
    pub fn stacked(&self, which: &str) -> Vec<String> {
        std::fs::read_dir(self.sys().join(which))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Parses `MAJ:MIN` into a device number.
pub fn parse_majmin(s: &str) -> Option<u64> {
    let (a, b) = s.trim().split_once(':')?;
    Some(libc::makedev(a.parse().ok()?, b.parse().ok()?))
}

/// `MAJ:MIN` of a device number.
pub fn majmin(rdev: u64) -> String {
    format!("{}:{}", libc::major(rdev), libc::minor(rdev))
}

/// The device named `name` in sysfs (`sdb1`).
pub fn by_name(name: &str) -> Option<Dev> {
    let rdev = parse_majmin(&read_trim(
        &Path::new("/sys/class/block").join(name).join("dev"),
    )?)?;
    Some(Dev {
        name: name.to_string(),
        rdev,
    })
}

/// The block device a path names, following symlinks (`/dev/disk/by-id/…`); `Err` says
/// why it is not one.
pub fn resolve(path: &Path) -> Result<Dev, String> {
    let canon = path
        .canonicalize()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let meta = std::fs::metadata(&canon).map_err(|e| format!("{}: {e}", canon.display()))?;
    if !meta.file_type().is_block_device() {
        return Err(format!("{} is not a block device", path.display()));
    }
    let rdev = meta.rdev();
    let sys = Path::new("/sys/dev/block")
        .join(majmin(rdev))
        .canonicalize()
        .map_err(|e| {
            format!(
                "{}: no sysfs entry for {}: {e}",
                path.display(),
                majmin(rdev)
            )
        })?;
    let name = sys
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{}: odd sysfs path {}", path.display(), sys.display()))?;
    Ok(Dev { name, rdev })
}

/// How a member of a device's family relates to the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// The device itself.
    Itself,
    /// A partition of the device (a whole disk).
    Partition,
    /// The whole disk the device (a partition) is on.
    Disk,
    /// Another partition of the same disk.
    Sibling,
    /// A device built on a member (md, LVM, dm, bcache): `of` names that member.
    Holder { of: String },
}

/// A device that formatting `target` would affect, and how.
#[derive(Clone, Debug)]
pub struct Member {
    pub dev: Dev,
    pub role: Role,
}

impl Member {
    /// "/dev/sdb", "its partition /dev/sdb2", "/dev/dm-0 (built on /dev/sdb1)".
    pub fn describe(&self) -> String {
        let n = self.dev.node();
        match &self.role {
            Role::Itself => "it".to_string(),
            Role::Partition => format!("its partition {n}"),
            Role::Disk => format!("its whole disk {n}"),
            Role::Sibling => format!("{n} (another partition of the same disk)"),
            Role::Holder { of } => format!("{n} (built on /dev/{of})"),
        }
    }
}

/// The device, the whole disk and every partition of it, and everything stacked on any of
/// them (recursively).
pub fn family(target: &Dev) -> Vec<Member> {
    let mut out = vec![Member {
        dev: target.clone(),
        role: Role::Itself,
    }];
    let disk_sys = if target.is_partition() {
        let parent = target.sys().canonicalize().ok().and_then(|p| {
            p.parent()
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        });
        if let Some(d) = parent.as_deref().and_then(by_name) {
            out.push(Member {
                dev: d,
                role: Role::Disk,
            });
        }
        parent
    } else {
        Some(target.name.clone())
    };
    if let Some(disk) = disk_sys {
        let dir = Path::new("/sys/class/block").join(&disk);
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == target.name || !e.path().join("partition").exists() {
                continue;
            }
            if let Some(d) = by_name(&name) {
                let role = if target.is_partition() {
                    Role::Sibling
                } else {
                    Role::Partition
                };
                out.push(Member { dev: d, role });
            }
        }
    }
    let mut i = 0;
    while i < out.len() {
        let base = out[i].dev.name.clone();
        for h in out[i].dev.stacked("holders") {
            if out.iter().any(|m| m.dev.name == h) {
                continue;
            }
            if let Some(d) = by_name(&h) {
                out.push(Member {
                    dev: d,
                    role: Role::Holder { of: base.clone() },
                });
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_numbers_round_trip() {
        let d = parse_majmin("7:3").unwrap();
        assert_eq!(majmin(d), "7:3");
        assert_eq!(parse_majmin("x"), None);
    }

    #[test]
    fn a_regular_file_is_not_a_block_device() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let e = resolve(f.path()).unwrap_err();
        assert!(e.contains("not a block device"), "{e}");
        assert!(resolve(Path::new("/no/such/dev")).is_err());
    }
}
