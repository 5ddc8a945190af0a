//! A memory limit on a database server's processes, as a DBA gets one from a container's
//! memory limit: a memory control group of fsarena's own, with the server started inside
//! it, so that the server's private memory, its shared buffers and the page cache of the
//! files it reads all count against one limit, and what does not fit is read from the
//! device again. This is how the `io-bound` database profiles make a data set a few times
//! larger than the limit reach the disk on a machine with plenty of memory.
//!
//! Both cgroup versions: a cgroup v2 hierarchy whose root delegates the memory controller
//! (`memory` in its `cgroup.subtree_control`; `memory.max`), else the v1 memory hierarchy
//! (`memory.limit_in_bytes`). The group is `fsarena-mem-PID-N` directly under the
//! hierarchy's mount point, in the run's state file before it exists
//! ([`Resource::Cgroup`]), and removed on every exit path and by `fsarena cleanup` after a
//! `kill -9`: processes still in it are killed (they can only be the server fsarena put
//! there), then the directory is removed. Needs root.

use crate::state::{Resource, State};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The start of every group's name.
const PREFIX: &str = "fsarena-mem-";

/// Which interface the group has.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Version {
    V1,
    V2,
}

/// A memory control group with a limit, removed when dropped.
pub struct MemoryLimit {
    dir: PathBuf,
    version: Version,
    /// The limit, bytes.
    pub bytes: u64,
    state: Option<Arc<State>>,
}

/// Whether `path` names a group of fsarena's form (`…/fsarena-mem-PID-N`).
pub fn is_ours(path: &Path) -> bool {
    let Some(rest) = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(PREFIX))
    else {
        return false;
    };
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let mut parts = rest.split('-');
    let shape = matches!((parts.next(), parts.next(), parts.next()), (Some(a), Some(b), None) if digits(a) && digits(b));
    shape
        && path.is_absolute()
        && path
            .parent()
            .is_some_and(|p| mount_points().iter().any(|(m, _)| m == p))
}

/// The memory hierarchies mounted: (mount point, version).
fn mount_points() -> Vec<(PathBuf, Version)> {
    let text = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        let at = PathBuf::from(crate::state::unescape_mount_path(f[1]));
        match f[2] {
            "cgroup2" => out.push((at, Version::V2)),
            "cgroup" if f[3].split(',').any(|o| o == "memory") => out.push((at, Version::V1)),
            _ => {}
        }
    }
    out
}

/// Where a group with a memory limit can be made: a v2 root delegating `memory` first,
/// else the v1 memory hierarchy; `None`, with why, when neither is there.
fn hierarchy() -> Result<(PathBuf, Version)> {
    let all = mount_points();
    let v2 = all.iter().find(|(m, v)| {
        *v == Version::V2
            && std::fs::read_to_string(m.join("cgroup.subtree_control"))
                .is_ok_and(|s| s.split_whitespace().any(|c| c == "memory"))
    });
    if let Some(h) = v2.or_else(|| all.iter().find(|(_, v)| *v == Version::V1)) {
        return Ok(h.clone());
    }
    bail!(
        "no memory control group to limit the server's memory: neither a cgroup v2 hierarchy \
         whose root delegates the memory controller nor the cgroup v1 memory hierarchy is \
         mounted"
    )
}

impl MemoryLimit {
    /// Makes a group limited to `bytes`, recorded in `state` first.
    pub fn new(bytes: u64, state: Option<Arc<State>>) -> Result<Self> {
        static N: AtomicU32 = AtomicU32::new(0);
        if !crate::probe::sys::is_root() {
            bail!("limiting the server's memory needs root (a memory control group)");
        }
        let (root, version) = hierarchy()?;
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let dir = root.join(name);
        if let Some(s) = &state {
            s.add(Resource::Cgroup { path: dir.clone() })?;
        }
        let limit = Self {
            dir,
            version,
            bytes,
            state,
        };
        std::fs::create_dir(&limit.dir)
            .with_context(|| format!("creating {}", limit.dir.display()))?;
        let (file, text) = match version {
            Version::V2 => ("memory.max", bytes.to_string()),
            Version::V1 => ("memory.limit_in_bytes", bytes.to_string()),
        };
        limit.write(file, &text)?;
        // No swap here either, where the interface has it: the limit is memory.
        if version == Version::V2 && limit.dir.join("memory.swap.max").exists() {
            limit.write("memory.swap.max", "0")?;
        }
        Ok(limit)
    }

    fn write(&self, file: &str, text: &str) -> Result<()> {
        let path = self.dir.join(file);
        std::fs::write(&path, text).with_context(|| format!("writing {text} to {}", path.display()))
    }

    /// The file a process writes its pid to in order to enter the group.
    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// The most memory the group used, bytes (`memory.peak`, `memory.max_usage_in_bytes`);
    /// `None` when the kernel does not say.
    pub fn peak_bytes(&self) -> Option<u64> {
        let file = match self.version {
            Version::V2 => "memory.peak",
            Version::V1 => "memory.max_usage_in_bytes",
        };
        std::fs::read_to_string(self.dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// How many processes the kernel killed in the group for want of memory (`oom_kill`
    /// of `memory.events` or `memory.oom_control`); `None` when the kernel does not say.
    pub fn oom_kills(&self) -> Option<u64> {
        let file = match self.version {
            Version::V2 => "memory.events",
            Version::V1 => "memory.oom_control",
        };
        let text = std::fs::read_to_string(self.dir.join(file)).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix("oom_kill "))
            .and_then(|n| n.trim().parse().ok())
    }
}

impl Drop for MemoryLimit {
    fn drop(&mut self) {
        if remove(&self.dir).is_ok() {
            if let Some(s) = &self.state {
                let _ = s.remove(&Resource::Cgroup {
                    path: self.dir.clone(),
                });
            }
        }
    }
}

/// Removes group `dir` of fsarena's form: kills what is left in it, then removes it.
/// `Ok(false)` when it is gone already.
pub fn remove(dir: &Path) -> Result<bool> {
    if !is_ours(dir) {
        bail!("{} is not a memory control group of fsarena", dir.display());
    }
    if !dir.exists() {
        return Ok(false);
    }
    let t = Instant::now();
    loop {
        let left: Vec<i32> = std::fs::read_to_string(dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if left.is_empty() {
            break;
        }
        if t.elapsed() > Duration::from_secs(10) {
            bail!(
                "{}: processes {left:?} did not leave after SIGKILL",
                dir.display()
            );
        }
        for pid in left {
            // SAFETY: kill(2) on a process in a group only fsarena puts processes in.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Removing a group whose last process just exited may fail with EBUSY for a moment.
    let t = Instant::now();
    loop {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) if t.elapsed() < Duration::from_secs(5) => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e).with_context(|| format!("removing {}", dir.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_groups_of_fsarenas_form_under_a_hierarchy_are_ours() {
        for bad in [
            "fsarena-mem-1-2",
            "/fsarena-mem-1-2",
            "/sys/fs/cgroup/memory/user.slice",
            "/sys/fs/cgroup/memory/fsarena-mem-1",
            "/sys/fs/cgroup/memory/fsarena-mem-1-2-3",
            "/sys/fs/cgroup/memory/fsarena-mem-x-2",
            "/tmp/fsarena-mem-1-2",
        ] {
            assert!(!is_ours(Path::new(bad)), "{bad}");
        }
        for (m, _) in mount_points() {
            assert!(is_ours(&m.join("fsarena-mem-12-0")), "{}", m.display());
            assert!(
                !remove(&m.join("fsarena-mem-12-0")).unwrap(),
                "absent: not removed"
            );
        }
        assert!(remove(Path::new("/tmp/fsarena-mem-1-2")).is_err());
    }

    #[test]
    fn a_limited_group_holds_a_process_and_is_removed_with_it() {
        if !crate::probe::sys::is_root() || hierarchy().is_err() {
            eprintln!("SKIP a_limited_group_holds_a_process_and_is_removed_with_it: needs root and a memory control group");
            return;
        }
        let limit = MemoryLimit::new(64 << 20, None).unwrap();
        let dir = limit.dir.clone();
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        std::fs::write(limit.procs_file(), child.id().to_string()).unwrap();
        assert!(std::fs::read_to_string(limit.procs_file())
            .unwrap()
            .contains(&child.id().to_string()));
        assert_eq!(limit.oom_kills(), Some(0));
        drop(limit);
        assert!(!dir.exists(), "removed, its process killed");
        assert!(child.wait().unwrap().code().is_none(), "killed by a signal");
    }
}
