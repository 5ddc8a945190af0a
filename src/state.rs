//! The state file: every mount, loop device, image and work directory a run creates is
//! recorded here *before* it is created and removed after it is gone, so that
//! `fsarena cleanup` can undo what a `kill -9` or a power cut left behind.
//!
//! One JSON file per run in `<image-dir>/state/`, rewritten atomically (write + rename).

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::owned::{self, Removal};
pub use crate::owned::{ensure_owned_dir, is_owned, MARKER};

/// Something a run created that must be undone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Resource {
    /// A filesystem mounted at `path` (a directory fsarena created).
    Mount { path: PathBuf },
    /// A loop device attached to `image`.
    Loop { device: String, image: PathBuf },
    /// An image file fsarena created.
    Image { path: PathBuf },
    /// A directory fsarena created (carries [`MARKER`]).
    Dir { path: PathBuf },
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StateData {
    pid: u32,
    run_id: String,
    resources: Vec<Resource>,
}

/// The live state file of a run.
pub struct State {
    path: PathBuf,
    data: Mutex<StateData>,
}

impl State {
    /// Starts the state file of run `run_id` in `state_dir`.
    pub fn create(state_dir: &Path, run_id: &str) -> Result<Self> {
        ensure_owned_dir(state_dir)?;
        let s = Self {
            path: state_dir.join(format!("{run_id}.json")),
            data: Mutex::new(StateData {
                pid: std::process::id(),
                run_id: run_id.to_string(),
                resources: Vec::new(),
            }),
        };
        s.save()?;
        Ok(s)
    }

    fn save(&self) -> Result<()> {
        let data = self.data.lock().unwrap_or_else(|e| e.into_inner());
        let tmp = self.path.with_extension("json.tmp");
        // Mode 0600: what root has mounted and attached is no one else's to read.
        write_private(&tmp, &serde_json::to_vec_pretty(&*data)?)
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &self.path).with_context(|| format!("renaming {}", tmp.display()))?;
        Ok(())
    }

    /// Records `r` before it is created.
    pub fn add(&self, r: Resource) -> Result<()> {
        self.data
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .resources
            .push(r);
        self.save()
    }

    /// Forgets `r` after it was undone.
    pub fn remove(&self, r: &Resource) -> Result<()> {
        self.data
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .resources
            .retain(|x| x != r);
        self.save()
    }

    /// Where the run's trial logs go: `logs/<run id>/` beside the state directory
    /// (`<image-dir>/logs/<run id>/`). Logs are results, not resources: `cleanup` keeps them.
    pub fn log_dir(&self) -> PathBuf {
        let state_dir = self.path.parent().unwrap_or(Path::new("."));
        let base = state_dir.parent().unwrap_or(state_dir);
        let run_id = &self
            .data
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .run_id
            .clone();
        base.join("logs").join(run_id)
    }

    /// Deletes the state file when everything was undone.
    pub fn finish(&self) -> Result<()> {
        let left = self
            .data
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .resources
            .len();
        if left == 0 {
            owned::remove(&self.path, Removal::File).ok();
        }
        Ok(())
    }
}

/// Whether `dev` (e.g. `/dev/loop3`) is attached to `image`.
fn loop_backs(dev: &str, image: &Path) -> bool {
    backing_file(dev).is_some_and(|b| b == image)
}

/// The backing file of a loop device, without the " (deleted)" the kernel appends once the
/// file was unlinked while attached.
fn backing_file(dev: &str) -> Option<PathBuf> {
    let name = dev.trim_start_matches("/dev/");
    let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    let text = text.trim_end_matches('\n');
    Some(PathBuf::from(
        text.strip_suffix(" (deleted)").unwrap_or(text),
    ))
}

/// Every attached loop device with its backing file.
fn attached_loops() -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("loop"))
        .map(|n| format!("/dev/{n}"))
        .filter_map(|d| backing_file(&d).map(|b| (d, b)))
        .collect()
}

/// Detaches `dev` from `image` and waits until it is really gone. `losetup -d` on a device
/// that someone still holds open (udev's blkid probing it after a write, for one) only marks
/// it for autoclear and returns at once; the detach happens when the last opener closes it.
/// Retries `losetup -d` while waiting, for up to 10 s.
pub fn detach_loop(dev: &str, image: &Path) -> Result<()> {
    for attempt in 0..200 {
        if !loop_backs(dev, image) {
            return Ok(());
        }
        if attempt % 20 == 0 {
            if let Err(e) = crate::cmd::run(&["losetup", "-d", dev]) {
                if !loop_backs(dev, image) {
                    return Ok(());
                }
                if attempt >= 180 {
                    return Err(e);
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    anyhow::bail!("{dev} is still attached to {} after 10 s", image.display())
}

/// Loop devices whose backing file is `image`.
pub fn loops_backing(image: &Path) -> Vec<String> {
    attached_loops()
        .into_iter()
        .filter(|(_, b)| b == image)
        .map(|(d, _)| d)
        .collect()
}

/// Whether `path` is a mount point now (per /proc/self/mountinfo).
pub fn is_mounted(path: &Path) -> bool {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let want = path.to_string_lossy();
    text.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .any(|m| unescape_mount_path(m) == want)
}

/// Undoes `octal escapes (\040 for space) of /proc mount paths.
pub fn unescape_mount_path(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 4], 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Unmounts `path` with one `umount` and no retry, for an unmount that is timed: a wait
/// between retries would be counted as the filesystem's. Returns seconds taken.
pub fn umount_once(path: &Path) -> Result<f64> {
    let p = path.to_string_lossy().to_string();
    crate::cmd::run(&["umount", &p])
        .map(|out| out.seconds)
        .with_context(|| format!("the timed umount of {p} (not retried, so no wait is timed)"))
}

/// Unmounts `path`, retrying while busy, lazily as a last resort. Returns seconds taken.
pub fn umount(path: &Path) -> Result<f64> {
    let p = path.to_string_lossy().to_string();
    let mut last = None;
    for attempt in 0..5 {
        match crate::cmd::run(&["umount", &p]) {
            Ok(out) => return Ok(out.seconds),
            Err(e) => {
                if !is_mounted(path) {
                    return Ok(0.0);
                }
                last = Some(e);
                std::thread::sleep(std::time::Duration::from_millis(200 << attempt));
            }
        }
    }
    crate::cmd::run(&["umount", "-l", &p])
        .map(|o| o.seconds)
        .map_err(|e| last.unwrap_or(e))
}

/// Undoes one resource; `Ok(true)` when something was done.
pub fn undo(r: &Resource) -> Result<bool> {
    match r {
        Resource::Mount { path } => {
            if is_mounted(path) {
                umount(path)?;
                let _ = owned::remove(path, Removal::EmptyDir);
                return Ok(true);
            }
            Ok(owned::remove(path, Removal::EmptyDir).unwrap_or(false))
        }
        Resource::Loop { device, image } => {
            if loop_backs(device, image) {
                detach_loop(device, image)?;
                return Ok(true);
            }
            Ok(false)
        }
        Resource::Image { path } => {
            // A run killed between losetup and recording the device leaves an attached
            // loop device that only the image names: detach it first.
            for dev in loops_backing(path) {
                detach_loop(&dev, path)?;
            }
            owned::remove(path, Removal::File)
        }
        Resource::Dir { path } => owned::remove(path, Removal::Tree),
    }
}

fn pid_is_live_fsarena(pid: u32) -> bool {
    pid != std::process::id()
        && std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| c.trim() == "fsarena")
            .unwrap_or(false)
}

/// Undoes everything recorded in the state files of `<image_dir>/state` whose run is no
/// longer alive, then [`sweep`]s `image_dir`. Returns one line per action taken (or
/// refused). Idempotent.
pub fn cleanup(image_dir: &Path) -> Result<Vec<String>> {
    let (mut lines, live) = replay_state_files(&image_dir.join("state"));
    lines.extend(sweep(image_dir, &live));
    Ok(lines)
}

/// Replays the state files of dead runs; returns the lines and the ids of live runs.
fn replay_state_files(state_dir: &Path) -> (Vec<String>, Vec<String>) {
    let mut lines = Vec::new();
    let mut live = Vec::new();
    let Ok(entries) = std::fs::read_dir(state_dir) else {
        return (lines, live);
    };
    if !state_dir.join(MARKER).is_file() {
        lines.push(format!(
            "{} carries no {MARKER} marker: not fsarena's, nothing in it was touched",
            state_dir.display()
        ));
        return (lines, live);
    }
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let data: StateData = match std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
        {
            Some(d) => d,
            None => {
                lines.push(format!("skipped unreadable state file {}", path.display()));
                continue;
            }
        };
        if pid_is_live_fsarena(data.pid) {
            live.push(data.run_id.clone());
            lines.push(format!(
                "run {} is still running (pid {}); left alone",
                data.run_id, data.pid
            ));
            continue;
        }
        let mut failed = false;
        for r in data.resources.iter().rev() {
            match undo(r) {
                Ok(true) => lines.push(format!("undid {}", describe(r))),
                Ok(false) => {}
                Err(e) => {
                    failed = true;
                    lines.push(format!("could not undo {}: {e:#}", describe(r)));
                }
            }
        }
        if !failed {
            owned::remove(&path, Removal::File).ok();
        }
    }
    (lines, live)
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

/// A one-line description of a resource.
pub fn describe(r: &Resource) -> String {
    match r {
        Resource::Mount { path } => format!("mount {}", path.display()),
        Resource::Loop { device, image } => format!("loop device {device} ({})", image.display()),
        Resource::Image { path } => format!("image {}", path.display()),
        Resource::Dir { path } => format!("directory {}", path.display()),
    }
}

/// Writes `bytes` to `path` with mode 0600 (also when `path` was left by a crash with
/// another mode).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    f.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let s = State::create(&state, "private").unwrap();
        s.add(Resource::Dir {
            path: dir.path().join("w"),
        })
        .unwrap();
        let mode = std::fs::metadata(state.join("private.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }

    #[test]
    fn unescapes_mountinfo_paths() {
        assert_eq!(unescape_mount_path("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(unescape_mount_path("/plain"), "/plain");
    }

    #[test]
    fn state_file_tracks_and_cleanup_removes_owned_things_only() {
        let tmp = tempfile::tempdir().unwrap();
        let owned = tmp.path().join("images");
        ensure_owned_dir(&owned).unwrap();
        let img = owned.join("x.img");
        std::fs::write(&img, b"data").unwrap();
        let foreign = tmp.path().join("foreign.img");
        std::fs::write(&foreign, b"keep").unwrap();
        let work = owned.join("work");
        ensure_owned_dir(&work).unwrap();
        std::fs::write(work.join("f"), b"x").unwrap();

        let sdir = owned.join("state");
        let st = State::create(&sdir, "run1").unwrap();
        st.add(Resource::Image { path: img.clone() }).unwrap();
        st.add(Resource::Image {
            path: foreign.clone(),
        })
        .unwrap();
        st.add(Resource::Dir { path: work.clone() }).unwrap();
        // Pretend the run died: a state file whose pid is not a live fsarena.
        drop(st);
        let lines = cleanup(&owned).unwrap();
        assert!(!img.exists() && !work.exists());
        assert!(
            foreign.exists(),
            "a file outside an owned dir must never be deleted"
        );
        assert!(lines.iter().any(|l| l.contains("refusing")), "{lines:?}");
        // The state file is kept while something could not be undone; a second call is harmless.
        let again = cleanup(&owned).unwrap();
        assert!(again.iter().all(|l| !l.starts_with("undid")), "{again:?}");
    }

    #[test]
    fn symlink_out_is_not_owned() {
        let tmp = tempfile::tempdir().unwrap();
        ensure_owned_dir(tmp.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(outside.path(), &link).unwrap();
        assert!(!is_owned(&link));
        assert!(is_owned(&tmp.path().join(MARKER)));
    }
}
