//! An existing directory: fsarena works only inside a fresh subdirectory it creates there
//! (marked as its own) and removes afterwards. Caches are dropped when running as root; the
//! filesystem is neither made nor remounted.

use super::{Env, Target};
use crate::probe::sys;
use crate::result::{Provision, TargetInfo};
use crate::state::{self, Resource};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// A target on a directory the user gave with `--dir`.
pub struct DirTarget {
    info: TargetInfo,
    path: PathBuf,
    env: Env,
    current: Option<PathBuf>,
    seq: u32,
    provision: Provision,
}

/// What the device counters of a `--dir` target measure: the partition under it, shared
/// with every other process on it (and `dirty_bytes_end` is machine-wide on every target).
pub const SHARED_COUNTERS_NOTE: &str = "device counters (dev_read_bytes, dev_write_bytes, \
     write_amplification) cover the whole partition, other processes' I/O included; \
     dirty_bytes_end is machine-wide";

impl DirTarget {
    /// The same target under the name `name` (a plan's target name).
    pub fn with_name(mut self, name: &str) -> Self {
        self.info.name = name.to_string();
        self
    }

    /// A target in `path` (which must exist; checked when the plan is built).
    pub fn new(path: &Path, env: &Env) -> Self {
        let fstype = fstype_of(path).unwrap_or_else(|| "unknown".into());
        let mut notes = vec![
            "existing directory: the filesystem is not made or remounted by fsarena".to_string(),
            SHARED_COUNTERS_NOTE.to_string(),
        ];
        if !sys::is_root() {
            notes.push("not root: caches could not be dropped, cold results may be warm".into());
        }
        Self {
            info: TargetInfo {
                name: format!("dir:{}", path.display()),
                fstype,
                kind: "dir".into(),
                mount_opts: mount_point_of(path)
                    .and_then(|m| super::mount::effective_options(&m))
                    .unwrap_or_default(),
                path: Some(path.display().to_string()),
                notes,
                work_unmeasured: Some(
                    "a directory on a shared disk: its counters count every process's I/O".into(),
                ),
                ..Default::default()
            },
            path: path.to_path_buf(),
            env: env.clone(),
            current: None,
            seq: 0,
            provision: Provision::default(),
        }
    }
}

/// Kernel filesystems that hold no files of anyone's: a benchmark cannot run there.
const PSEUDO_FS: &[&str] = &[
    "proc",
    "sysfs",
    "devtmpfs",
    "devpts",
    "cgroup",
    "cgroup2",
    "debugfs",
    "tracefs",
    "securityfs",
    "bpf",
    "pstore",
    "efivarfs",
    "configfs",
    "mqueue",
    "fusectl",
    "autofs",
    "binfmt_misc",
    "hugetlbfs",
    "rpc_pipefs",
    "nsfs",
];

/// Why the directory `path` (canonical) cannot be a target, if it cannot: fsarena creates
/// and deletes a subdirectory there, so `/`, the kernel's pseudo filesystems (`/proc`,
/// `/sys`, `/dev`, …) and the image directory `image_dir` (or anything inside it, where
/// fsarena's own images and mount points live) are refused.
pub fn refuse_dir(path: &Path, image_dir: &Path) -> Option<String> {
    if let Some(why) = refuse_system_dir(path) {
        return Some(why);
    }
    let image_dir = image_dir
        .canonicalize()
        .unwrap_or_else(|_| image_dir.to_path_buf());
    // The image directory and the directories fsarena manages in it (mount points, state
    // files, logs, journals); a directory of the user's own beside them is theirs.
    let managed = ["mnt", "state", "logs", "journal"];
    if path == image_dir || managed.iter().any(|m| path.starts_with(image_dir.join(m))) {
        return Some(format!(
            "it is the image directory {} or one fsarena manages in it (mount points, state \
             files, logs); give another directory",
            image_dir.display()
        ));
    }
    None
}

/// Why `path` (canonical) is the whole system or a kernel filesystem rather than a
/// directory of files: `/`, `/proc`, `/sys`, `/dev` or anything on a pseudo filesystem.
pub fn refuse_system_dir(path: &Path) -> Option<String> {
    if path == Path::new("/") {
        return Some(
            "the root directory is not a benchmark directory; give a directory \
                     of its own (e.g. /srv/bench)"
                .into(),
        );
    }
    for top in ["/proc", "/sys", "/dev"] {
        if path.starts_with(top) {
            return Some(format!(
                "{top} is a kernel filesystem, not a place for files"
            ));
        }
    }
    if let Some(fs) = fstype_of(path).filter(|fs| PSEUDO_FS.contains(&fs.as_str())) {
        return Some(format!(
            "it is on {fs}, a kernel filesystem, not a place for files"
        ));
    }
    None
}

/// The filesystem type of the mount holding `path`, from /proc/self/mountinfo.
pub fn fstype_of(path: &Path) -> Option<String> {
    let mp = mount_point_of(path)?;
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = mp.to_string_lossy();
    text.lines()
        .rev()
        .find(|l| {
            l.split(' ')
                .nth(4)
                .map(state::unescape_mount_path)
                .as_deref()
                == Some(&*want)
        })
        .and_then(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let sep = f.iter().position(|x| *x == "-")?;
            f.get(sep + 1).map(|s| s.to_string())
        })
}

/// The mount point holding `path` (longest mountinfo prefix of its canonical path).
pub fn mount_point_of(path: &Path) -> Option<PathBuf> {
    let canon = path.canonicalize().ok()?;
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines()
        .filter_map(|l| l.split(' ').nth(4).map(state::unescape_mount_path))
        .map(PathBuf::from)
        .filter(|m| canon.starts_with(m))
        .max_by_key(|m| m.as_os_str().len())
}

impl Target for DirTarget {
    fn state(&self) -> Option<std::sync::Arc<crate::state::State>> {
        Some(std::sync::Arc::clone(&self.env.state))
    }
    fn info(&self) -> &TargetInfo {
        &self.info
    }

    fn prepare(&mut self) -> Result<PathBuf> {
        self.seq += 1;
        let work = self
            .path
            .join(format!("fsarena-{}-{}", self.env.run_id, self.seq));
        self.env.state.add(Resource::Dir { path: work.clone() })?;
        std::fs::create_dir(&work).with_context(|| format!("creating {}", work.display()))?;
        std::fs::write(work.join(state::MARKER), b"fsarena work directory\n")?;
        self.current = Some(work.clone());
        let space = sys::space(&work)?;
        self.provision = Provision {
            capacity_bytes: Some(space.capacity_bytes),
            free_bytes: Some(space.free_bytes),
            ..Default::default()
        };
        // Workloads get a clean subdirectory; the marker stays out of their way.
        let inner = work.join("work");
        std::fs::create_dir(&inner)?;
        Ok(inner)
    }

    fn device_stat(&self) -> Option<PathBuf> {
        sys::sysfs_stat_for_path(&self.path)
    }

    fn provision(&self) -> Provision {
        self.provision.clone()
    }

    fn teardown(&mut self) -> Result<()> {
        if let Some(work) = self.current.take() {
            let r = Resource::Dir { path: work };
            state::undo(&r)?;
            self.env.state.remove(&r)?;
        }
        Ok(())
    }
}

impl Drop for DirTarget {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 31 item 10: `--dir /`, `/proc`, `/sys`, `/dev` and the image directory were
    /// accepted as places to create and delete fsarena's subdirectory.
    #[test]
    fn root_pseudo_filesystems_and_the_image_dir_are_refused() {
        let images = tempfile::tempdir().unwrap();
        let inside = images.path().join("mnt");
        std::fs::create_dir(&inside).unwrap();
        let own = images.path().join("work");
        std::fs::create_dir(&own).unwrap();
        // A directory of the user's own beside fsarena's is theirs to measure.
        assert_eq!(
            refuse_dir(&own.canonicalize().unwrap(), images.path()),
            None
        );
        for p in ["/", "/proc", "/proc/self", "/sys", "/sys/kernel", "/dev"] {
            let why = refuse_dir(Path::new(p), images.path());
            assert!(why.is_some(), "{p} accepted");
        }
        for p in [images.path(), inside.as_path()] {
            let why = refuse_dir(&p.canonicalize().unwrap(), images.path()).unwrap();
            assert!(why.contains("image directory"), "{why}");
        }
        let other = tempfile::tempdir().unwrap();
        let other = other.path().canonicalize().unwrap();
        assert_eq!(refuse_dir(&other, images.path()), None);
    }

    /// A `--dir` target says that its device counters and the dirty bytes are not its own.
    #[test]
    fn dir_target_notes_its_counters_are_shared() {
        let dir = tempfile::tempdir().unwrap();
        let env = Env::for_test("t", dir.path(), &dir.path().join("state"));
        let t = DirTarget::new(dir.path(), &env);
        let notes = &t.info().notes;
        assert!(
            notes
                .iter()
                .any(|n| n.contains("whole partition")
                    && n.contains("dirty_bytes_end is machine-wide")),
            "{notes:?}"
        );
    }
}
