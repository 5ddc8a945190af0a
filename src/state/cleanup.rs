//! `fsarena cleanup` and the sweep: replaying the state files of runs that are gone, trusting
//! only files and resources that are this user's and inside the image directory.

use super::undo::{attached_loops, backs_here};
use super::*;

pub(super) fn pid_is_live_fsarena(pid: u32) -> bool {
    pid != std::process::id()
        && std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| c.trim() == "fsarena")
            .unwrap_or(false)
}

/// Undoes everything recorded in the state files of `<image_dir>/state` whose run is no
/// longer alive, then [`sweep`]s `image_dir`. Returns one line per action taken (or
/// refused or ignored). Idempotent.
pub fn cleanup(image_dir: &Path) -> Result<Vec<String>> {
    let dir = image_dir
        .canonicalize()
        .unwrap_or_else(|_| image_dir.to_path_buf());
    let (mut lines, live) = replay_state_files(&dir, None);
    lines.extend(sweep(image_dir, &live));
    Ok(lines)
}

/// `cleanup --aged`: removes the kept aged images and their records from
/// `<image_dir>/aged` (only where fsarena's marker says the directory is its own). Images
/// being written (`.tmp`) belong to a run and go with its state file. One line each.
pub fn remove_kept(image_dir: &Path) -> Vec<String> {
    let dir = image_dir.join(crate::provision::age::kept::DIR);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "img" || x == "json"))
        .filter(|p| !p.to_string_lossy().ends_with(".tmp"))
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|p| match owned::remove(&p, Removal::File) {
            Ok(_) => format!("removed kept aged image file {}", p.display()),
            Err(e) => format!("could not remove {}: {e:#}", p.display()),
        })
        .collect()
}

/// Undoes what run `run_id` recorded in `image_dir` when it is no longer alive (as
/// [`cleanup`] does for every run, without the sweep): what an MPI rank's guardian does
/// when its rank is gone.
pub fn cleanup_run(image_dir: &Path, run_id: &str) -> Vec<String> {
    let dir = image_dir
        .canonicalize()
        .unwrap_or_else(|_| image_dir.to_path_buf());
    replay_state_files(&dir, Some(run_id)).0
}

/// Why `meta` (from `lstat` or `fstat`) is not to be believed by user `me`: a symlink,
/// an owner other than `me` and root, or writable by group or others.
pub(super) fn untrusted(meta: &std::fs::Metadata, me: u32) -> Option<String> {
    if meta.file_type().is_symlink() {
        return Some("it is a symbolic link".into());
    }
    if meta.uid() != me && meta.uid() != 0 {
        return Some(format!("it is owned by uid {}, another user", meta.uid()));
    }
    if meta.mode() & 0o022 != 0 {
        return Some(format!(
            "it is writable by group or others (mode {:o})",
            meta.mode() & 0o7777
        ));
    }
    None
}

/// Reads the state file `path` when it is a regular file [`untrusted`] finds nothing
/// against (checked on the descriptor read, so a swap after the check does not count).
pub(super) fn read_trusted(path: &Path, me: u32) -> std::result::Result<StateData, String> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot open it: {e}"))?;
    let meta = f.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if let Some(why) = untrusted(&meta, me) {
        return Err(why);
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    serde_json::from_slice(&bytes).map_err(|e| format!("unreadable: {e}"))
}

/// Why `r`, read from a state file, is not for cleanup to undo: a mount, loop device or
/// image not under `image_dir` (or spelled with `..`), or a loop device not named
/// `/dev/loopN`. Directories are left to [`owned::remove`], which deletes only inside a
/// directory carrying fsarena's marker (`--dir` work directories lie elsewhere), and
/// servers to [`stop_postgres`], which stops only the server of that data directory.
pub(super) fn outside(r: &Resource, image_dir: &Path) -> Option<String> {
    let under = |p: &Path| {
        p.is_absolute()
            && !p.components().any(|c| c == Component::ParentDir)
            && p.starts_with(image_dir)
            && p != image_dir
    };
    let path = match r {
        Resource::Mount { path } | Resource::Image { path } => path,
        Resource::Recorder { mountpoint, .. } => mountpoint,
        Resource::Guest { pidfile } => pidfile,
        Resource::Loop { device, image } => {
            let n = device.strip_prefix("/dev/loop").unwrap_or("");
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return Some(format!("{device} is not a loop device"));
            }
            image
        }
        // Stopped only when a live server's command line names the data directory, and
        // its socket directory removed only when it carries the marker (like `Dir`): a
        // `--dir` target's work directory lies outside the image directory.
        Resource::Dir { .. } | Resource::Postgres { .. } => return None,
        Resource::Trace { instance } => {
            let ours = crate::provision::recorded::trace::is_ours(instance);
            return (!ours).then(|| format!("{instance} is not a tracing instance of fsarena"));
        }
        Resource::Cgroup { path } => {
            let ours = crate::provision::memlimit::is_ours(path);
            return (!ours).then(|| {
                format!(
                    "{} is not a memory control group of fsarena",
                    path.display()
                )
            });
        }
    };
    (!under(path)).then(|| {
        format!(
            "{} is not under the image directory {}",
            path.display(),
            image_dir.display()
        )
    })
}

/// Replays the state files of dead runs in `<image_dir>/state`; returns the lines and the
/// ids of live runs.
pub(super) fn replay_state_files(
    image_dir: &Path,
    only: Option<&str>,
) -> (Vec<String>, Vec<String>) {
    let state_dir = image_dir.join("state");
    let mut lines = Vec::new();
    let mut live = Vec::new();
    let Ok(entries) = std::fs::read_dir(&state_dir) else {
        return (lines, live);
    };
    if !state_dir.join(MARKER).is_file() {
        lines.push(format!(
            "{} carries no {MARKER} marker: not fsarena's, nothing in it was touched",
            state_dir.display()
        ));
        return (lines, live);
    }
    let me = crate::probe::sys::euid();
    if let Some(why) = std::fs::symlink_metadata(&state_dir)
        .map_err(|e| e.to_string())
        .map_or_else(Some, |m| untrusted(&m, me))
    {
        lines.push(format!(
            "ignored the state directory {}: {why}; none of its files was read",
            state_dir.display()
        ));
        return (lines, live);
    }
    for entry in entries.flatten() {
        let path = entry.path();
        let ext = path.extension().and_then(|e| e.to_str());
        if ext == Some("lock") && !path.with_extension("json").exists() {
            // A run killed while it finished, between removing its state file and its lock.
            remove_stale_lock(&path);
        }
        if ext != Some("json") {
            continue;
        }
        // A run's own file, and its guests' when it ran some beside host targets.
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if only.is_some_and(|run| stem != run && stem.strip_prefix(run) != Some("-guests")) {
            continue;
        }
        let data = match read_trusted(&path, me) {
            Ok(d) => d,
            Err(why) => {
                lines.push(format!("ignored state file {}: {why}", path.display()));
                continue;
            }
        };
        if run_is_live(&path, data.pid) {
            live.push(data.run_id.clone());
            lines.push(format!(
                "run {} is still running (pid {}); left alone",
                data.run_id, data.pid
            ));
            continue;
        }
        let mut failed = false;
        for r in data.resources.iter().rev() {
            if let Some(why) = outside(r, image_dir) {
                failed = true;
                lines.push(format!(
                    "ignored {} named in {}: {why}",
                    describe(r),
                    path.display()
                ));
                continue;
            }
            match undo(r) {
                Ok(true) => lines.push(format!("undid {}", describe(r))),
                Ok(false) => {}
                Err(e) => {
                    failed = true;
                    lines.push(format!("could not undo {}: {e:#}", describe(r)));
                }
            }
        }
        lines.extend(kept_journals(image_dir, &data.run_id));
        if !failed {
            owned::remove(&path, Removal::File).ok();
            remove_stale_lock(&lock_path(&path));
            // A rewrite the run was killed in the middle of.
            owned::remove(&path.with_extension("json.tmp"), Removal::File).ok();
        }
    }
    (lines, live)
}

/// A line for each journal the dead run `run_id` left in `<image_dir>/journal` (a run
/// whose trials all reached the database removes its own; one killed keeps it): how to
/// store what it holds. Said once, when the run is cleaned up; journals are results and
/// are never deleted here.
pub(super) fn kept_journals(image_dir: &Path, run_id: &str) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(image_dir.join("journal")) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(run_id))
        })
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|p| {
            format!(
                "kept journal {}: `fsarena import {}` stores any trial of it the database \
                 lacks",
                p.display(),
                p.display()
            )
        })
        .collect()
}

/// After the state files were replayed: unmounts what is still mounted under
/// `<image_dir>/mnt` and detaches loop devices backed by images in `image_dir`, except those
/// of runs still alive (`live` run ids). This catches a `mount` or `losetup` that was still
/// running when fsarena was killed and finished after the state file was written.
pub fn sweep(image_dir: &Path, live: &[String]) -> Vec<String> {
    let mut lines = Vec::new();
    let Ok(dir) = image_dir.canonicalize() else {
        return lines;
    };
    if !dir.join(MARKER).is_file() {
        return lines;
    }
    let is_live = |p: &Path| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        live.iter().any(|id| name.starts_with(id.as_str()))
    };
    let mnt = dir.join("mnt");
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut mounts: Vec<PathBuf> = text
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(unescape_mount_path))
        .map(PathBuf::from)
        .filter(|m| m.starts_with(&mnt) && !is_live(m))
        .collect();
    mounts.sort_by_key(|m| std::cmp::Reverse(m.as_os_str().len()));
    for m in mounts {
        let r = Resource::Mount { path: m };
        match undo(&r) {
            Ok(_) => lines.push(format!("undid {} (not in a state file)", describe(&r))),
            Err(e) => lines.push(format!("could not undo {}: {e:#}", describe(&r))),
        }
    }
    for (device, image) in attached_loops() {
        if image.parent() == Some(dir.as_path()) && !is_live(&image) {
            if !backs_here(&device, &image) {
                lines.push(format!(
                    "left {device} alone: it backs a file named {}, but not the one of that \
                     name here (another host's, sharing this kernel?)",
                    image.display()
                ));
                continue;
            }
            let done = detach_loop(&device, &image);
            let r = Resource::Loop { device, image };
            match done {
                Ok(_) => lines.push(format!("undid {} (not in a state file)", describe(&r))),
                Err(e) => lines.push(format!("could not undo {}: {e:#}", describe(&r))),
            }
        }
    }
    lines
}
