//! Undoing one recorded resource: detaching loop devices, unmounting, stopping a guest's
//! QEMU, removing what a run made.

use super::*;

/// Whether `dev` (e.g. `/dev/loop3`) is attached to `image`.
pub(super) fn loop_backs(dev: &str, image: &Path) -> bool {
    backing_file(dev).is_some_and(|b| b == image)
}

/// The backing file of a loop device, without the " (deleted)" the kernel appends once the
/// file was unlinked while attached.
pub(super) fn backing_file(dev: &str) -> Option<PathBuf> {
    let name = dev.trim_start_matches("/dev/");
    let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    let text = text.trim_end_matches('\n');
    Some(PathBuf::from(
        text.strip_suffix(" (deleted)").unwrap_or(text),
    ))
}

/// Every attached loop device with its backing file.
pub(super) fn attached_loops() -> Vec<(String, PathBuf)> {
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
        .filter(|(d, b)| b == image && backs_here(d, image))
        .map(|(d, _)| d)
        .collect()
}

/// Whether loop device `dev` is attached to the very file `image` names in this host's
/// view (same device and inode). The kernel reports a backing file by the path its
/// attacher saw: hosts that share one kernel (containers, namespaces) see the same path
/// name different files, and another host's image must not be detached from here.
pub(super) fn backs_here(dev: &str, image: &Path) -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(image)
        .is_ok_and(|f| crate::provision::loopdev::backs(dev, &f))
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
        Resource::Guest { pidfile } => stop_guest(pidfile),
        Resource::Postgres {
            datadir,
            sockets,
            pid,
        } => {
            let stopped = stop_postgres(datadir, *pid)?;
            Ok(owned::remove(sockets, Removal::Tree).unwrap_or(false) || stopped)
        }
        Resource::Recorder { mountpoint, pid } => stop_recorder(mountpoint, *pid),
        Resource::Trace { instance } => crate::provision::recorded::trace::remove(instance),
        Resource::Cgroup { path } => crate::provision::memlimit::remove(path),
    }
}

/// The pid of the live PostgreSQL server of data directory `datadir`: the first line of
/// its `postmaster.pid`, else `recorded` (the state file's, for a data directory no longer
/// readable), when that process's command line names `datadir` itself (a stale pid file,
/// or a pid reused by another program, is not it).
pub fn postgres_pid(datadir: &Path, recorded: Option<i32>) -> Option<i32> {
    let text = std::fs::read_to_string(datadir.join("postmaster.pid")).unwrap_or_default();
    let from_file = text.lines().next().and_then(|l| l.trim().parse().ok());
    [from_file, recorded]
        .into_iter()
        .flatten()
        .find(|&pid| pid > 1 && postgres_of(pid, datadir))
}

/// Whether process `pid` is a PostgreSQL server started with data directory `datadir`.
fn postgres_of(pid: i32, datadir: &Path) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
        let mut args = c.split(|&b| b == 0);
        let program = args.next().unwrap_or_default();
        let want = datadir.as_os_str().as_encoded_bytes();
        program.ends_with(b"postgres") && args.any(|a| a == want)
    })
}

/// Stops the PostgreSQL server of `datadir` ([`postgres_pid`], `recorded` the pid the
/// state file holds) as its documentation
/// says: a fast shutdown (SIGINT: sessions ended, a checkpoint written), after 20 s an
/// immediate one (SIGQUIT: no checkpoint, crash recovery at the next start), after 5 s
/// more SIGKILL. `Ok(true)` when one was stopped; an error when it outlived all three.
pub fn stop_postgres(datadir: &Path, recorded: Option<i32>) -> Result<bool> {
    let Some(pid) = postgres_pid(datadir, recorded) else {
        return Ok(false);
    };
    for (signal, tenths) in [
        (libc::SIGINT, 200),
        (libc::SIGQUIT, 50),
        (libc::SIGKILL, 50),
    ] {
        // SAFETY: kill(2) on a pid just checked to be this data directory's server.
        unsafe { libc::kill(pid, signal) };
        for _ in 0..tenths {
            if !postgres_of(pid, datadir) {
                return Ok(true);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
    anyhow::bail!(
        "the PostgreSQL server (pid {pid}) of {} did not stop",
        datadir.display()
    )
}

/// Stops the write recorder serving `mountpoint` (`pid`: the one the state file holds),
/// in the only order that works: loop devices still attached to its `disk` are detached
/// (the filesystem above was unmounted before, as the state file lists it later), the FUSE
/// mount is unmounted (also when the daemon is dead and it says "Transport endpoint is not
/// connected"), and the daemon, which ends by itself once unmounted, is waited for 10 s
/// and then killed. Only processes whose command line names this mount point as a
/// recorder's are touched. `Ok(true)` when something was done.
pub fn stop_recorder(mountpoint: &Path, pid: Option<i32>) -> Result<bool> {
    use crate::provision::recorded::daemon;
    let mut done = false;
    let disk = mountpoint.join(daemon::DISK);
    // A loop device names its backing file by path: only one on this host's mount is ours.
    let here = is_mounted(mountpoint);
    for (dev, backing) in attached_loops() {
        if here && backing == disk {
            detach_loop(&dev, &disk)?;
            done = true;
        }
    }
    if is_mounted(mountpoint) {
        umount(mountpoint)?;
        done = true;
    }
    let ours = |pid: i32| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| daemon::is_daemon_of(&c, mountpoint))
    };
    let mut pids: Vec<i32> = std::fs::read_dir("/proc")
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    pids.extend(pid);
    pids.sort_unstable();
    pids.dedup();
    pids.retain(|&p| p > 1 && p != std::process::id() as i32 && ours(p));
    for p in pids {
        done = true;
        let gone = |tenths: u32| {
            (0..tenths).any(|_| {
                let gone = !ours(p);
                if !gone {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                gone
            })
        };
        if !gone(100) {
            // SAFETY: kill(2) on a pid just checked to be this mount point's recorder.
            unsafe { libc::kill(p, libc::SIGKILL) };
            if !gone(50) {
                anyhow::bail!(
                    "the write recorder (pid {p}) of {} did not stop",
                    mountpoint.display()
                );
            }
        }
    }
    Ok(owned::remove(mountpoint, Removal::EmptyDir).unwrap_or(false) || done)
}

/// Stops the QEMU whose pid is in `pidfile` (only a live process whose command line names
/// that very pidfile), waiting up to 10 s for it to go; `Ok(true)` when one was stopped.
pub fn stop_guest(pidfile: &Path) -> Result<bool> {
    let Ok(text) = std::fs::read_to_string(pidfile) else {
        return Ok(false);
    };
    let Ok(pid) = text.trim().parse::<i32>() else {
        return Ok(false);
    };
    let ours = |pid: i32| {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
            let want = pidfile.as_os_str().as_encoded_bytes();
            c.split(|&b| b == 0).any(|arg| arg == want)
        })
    };
    if pid <= 1 || !ours(pid) {
        let _ = std::fs::remove_file(pidfile);
        return Ok(false);
    }
    for (signal, wait) in [(libc::SIGTERM, 50), (libc::SIGKILL, 50)] {
        // SAFETY: kill(2) on a pid just checked to be this guest's QEMU.
        unsafe { libc::kill(pid, signal) };
        for _ in 0..wait {
            if !ours(pid) {
                let _ = std::fs::remove_file(pidfile);
                return Ok(true);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
    anyhow::bail!("QEMU (pid {pid}) of {} did not stop", pidfile.display())
}
