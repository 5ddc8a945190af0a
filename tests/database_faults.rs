//! The result database failing under a run: SQLite's shared memory can no longer kill it
//! (it used to die of SIGBUS, exit 135, when the `-shm` file was made immutable), and a
//! database made immutable, overwritten, read-only or full fails with its file and cause
//! named, exit 1, and every finished trial recoverable from the journal. Twelve runs share
//! one database while it is read. A database on a filesystem that cannot lock files (a
//! FUSE mount whose server refuses locks, tests/fuse/nolock.py) is refused at once, with
//! the filesystem named and what to do.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// `fsarena --db DB run command:run=sleep 0.3 --reps 4 --dir …`; after `after`, `fault`.
/// Returns (exit code, stderr).
fn run_with_fault(
    dir: &Path,
    db: &Path,
    after: Duration,
    fault: impl FnOnce(),
) -> (Option<i32>, String) {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let child = Command::new(common::bin())
        .args(["--db", db.to_str().unwrap(), "run", "command:run=sleep 0.3"])
        .args(["--reps", "4", "--quiet", "--dir"])
        .arg(&work)
        .arg("--image-dir")
        .arg(dir.join("img"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    fault();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `chattr FLAG path`; false (with a SKIP line) where the filesystem or user cannot.
fn chattr(flag: &str, path: &Path) -> bool {
    Command::new("chattr")
        .arg(flag)
        .arg(path)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// An fsarena database at `path` that an older fsarena left in WAL mode.
fn wal_database(path: &Path) {
    drop(fsarena::store::Store::open(path).unwrap());
    let c = rusqlite::Connection::open(path).unwrap();
    let mode: String = c
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn an_immutable_shared_memory_file_cannot_kill_a_run() {
    let dir = common::image_dir();
    let db = dir.path().join("r.db");
    let shm = dir.path().join("r.db-shm");
    wal_database(&db);
    let mut shm_during_run = None;
    let (code, err) = run_with_fault(dir.path(), &db, Duration::from_millis(900), || {
        shm_during_run = Some(shm.exists());
        std::fs::write(&shm, vec![0u8; 32768]).unwrap();
        if !chattr("+i", &shm) {
            eprintln!("SKIP part: chattr +i refused here");
        }
    });
    chattr("-i", &shm);
    assert_eq!(shm_during_run, Some(false), "the run maps no shared memory");
    assert_eq!(code, Some(0), "{err}");
    let (ok, text) = history(&db);
    assert!(ok && text.contains("complete"), "{text}");
    // A stale immutable -shm beside a WAL database: refused with the file named, no signal.
    std::fs::remove_file(&shm).unwrap();
    wal_database(&db);
    std::fs::write(&shm, b"").unwrap();
    if !chattr("+i", &shm) {
        eprintln!("SKIP an_immutable_shared_memory_file: chattr +i refused here");
        return;
    }
    let (code, err) = run_with_fault(dir.path(), &db, Duration::ZERO, || {});
    chattr("-i", &shm);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("r.db-shm") && err.contains("immutable"),
        "{err}"
    );
}

fn history(db: &Path) -> (bool, String) {
    let out = Command::new(common::bin())
        .args(["--db", db.to_str().unwrap(), "history"])
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_database_made_immutable_mid_run_loses_nothing() {
    let dir = common::image_dir();
    let db = dir.path().join("r.db");
    let mut made = false;
    let (code, err) = run_with_fault(dir.path(), &db, Duration::from_millis(900), || {
        made = chattr("+i", &db);
    });
    chattr("-i", &db);
    if !made {
        eprintln!("SKIP a_database_made_immutable_mid_run: chattr +i refused here");
        return;
    }
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(db.to_str().unwrap()) && err.contains("immutable"),
        "{err}"
    );
    assert_eq!(common::recovered_from_journal(&err, dir.path(), 1), 4);
}

#[test]
fn a_database_overwritten_by_another_program_is_called_so() {
    let dir = common::image_dir();
    let db = dir.path().join("r.db");
    let (code, err) = run_with_fault(dir.path(), &db, Duration::from_millis(900), || {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
        f.write_all_at(&[0x5a; 4096], 0).unwrap();
    });
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not a sound fsarena database"), "{err}");
    assert_eq!(common::recovered_from_journal(&err, dir.path(), 1), 4);
}

/// A 16 MiB ext4 of our own (mounted with `errors=remount-ro`), unmounted when dropped.
struct SmallFs {
    _dir: tempfile::TempDir,
    mnt: PathBuf,
}

impl SmallFs {
    fn new(options: &str) -> SmallFs {
        let dir = common::image_dir();
        let img = dir.path().join("fs.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(16 << 20)
            .unwrap();
        let mkfs = Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&img)
            .status();
        assert!(mkfs.unwrap().success());
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let ok = Command::new("mount")
            .args(["-o", &format!("loop,{options}")])
            .arg(&img)
            .arg(&mnt)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        SmallFs { _dir: dir, mnt }
    }

    /// The device under the mount, as /sys/fs/ext4 names it (`loop3`).
    fn device_name(&self) -> String {
        let out = Command::new("findmnt")
            .args(["-no", "SOURCE"])
            .arg(&self.mnt)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .trim_start_matches("/dev/")
            .to_string()
    }

    fn remount(&self, options: &str) {
        let _ = Command::new("umount").arg(&self.mnt).status();
        let img = self.mnt.parent().unwrap().join("fs.img");
        let ok = Command::new("mount")
            .args(["-o", &format!("loop,{options}")])
            .arg(&img)
            .arg(&self.mnt)
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
    }
}

#[test]
fn a_database_whose_filesystem_turns_read_only_loses_nothing_and_is_named() {
    if common::skip_without_loop("a_database_whose_filesystem_turns_read_only") {
        return;
    }
    let fs = SmallFs::new("errors=remount-ro");
    let trigger = format!("/sys/fs/ext4/{}/trigger_fs_error", fs.device_name());
    if !Path::new(&trigger).exists() {
        eprintln!("SKIP a_database_whose_filesystem_turns_read_only: no {trigger}");
        return;
    }
    let db = fs.mnt.join("r.db");
    let dir = common::image_dir();
    let (code, err) = run_with_fault(dir.path(), &db, Duration::from_millis(900), || {
        // What a disk error does: ext4 goes read-only under the run (a plain remount is
        // refused while the database is open for writing).
        std::fs::write(&trigger, "1").unwrap();
    });
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(db.to_str().unwrap()) && err.contains("read-only"),
        "{err}"
    );
    assert_eq!(common::recovered_from_journal(&err, dir.path(), 1), 4);
    // Mounted read-only from the start: refused before anything is measured, named.
    fs.remount("ro,noload");
    for name in ["r.db", "new.db"] {
        let db = fs.mnt.join(name);
        let (code, err) = run_with_fault(dir.path(), &db, Duration::ZERO, || {});
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains(db.to_str().unwrap()) && err.contains("read-only"),
            "{err}"
        );
    }
}

#[test]
fn an_existing_database_on_a_full_filesystem_is_named_full() {
    if common::skip_without_loop("an_existing_database_on_a_full_filesystem") {
        return;
    }
    let fs = SmallFs::new("errors=continue");
    let db = fs.mnt.join("r.db");
    let dir = common::image_dir();
    let (code, err) = run_with_fault(dir.path(), &db, Duration::ZERO, || {});
    assert_eq!(code, Some(0), "{err}");
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=4k", "status=none"])
        .arg(format!("of={}", fs.mnt.join("filler").display()))
        .status();
    let (code, err) = run_with_fault(dir.path(), &db, Duration::ZERO, || {});
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(db.to_str().unwrap()) && err.contains("full"),
        "{err}"
    );
    assert!(!err.contains("Error code 4874"), "{err}");
}

#[test]
fn twelve_runs_share_one_database_while_it_is_read() {
    let dir = common::image_dir();
    let db = dir.path().join("shared.db");
    let children: Vec<_> = (0..12)
        .map(|i| {
            let work = dir.path().join(format!("work{i}"));
            std::fs::create_dir(&work).unwrap();
            Command::new(common::bin())
                .args(["--db", db.to_str().unwrap(), "run", "command:run=sleep 0.2"])
                .args(["--reps", "3", "--quiet", "--dir"])
                .arg(&work)
                .arg("--image-dir")
                .arg(dir.path().join("img"))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Read while they write: every read succeeds.
    let mut reads = 0;
    while reads < 20 {
        std::thread::sleep(Duration::from_millis(100));
        if !db.exists() {
            continue;
        }
        let (ok, text) = history(&db);
        assert!(ok, "history failed while runs write: {text}");
        reads += 1;
    }
    for c in children {
        let out = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
    }
    let s = fsarena::store::Store::open_existing(&db).unwrap();
    let runs = s.history().unwrap();
    assert_eq!(runs.len(), 12);
    assert!(
        runs.iter().all(|r| r.trials == 3 && r.status == "complete"),
        "{runs:?}"
    );
    assert!(!dir.path().join("shared.db-shm").exists());
}

/// A FUSE mount of tests/fuse/nolock.py (a mirror of a temporary directory whose every lock
/// request fails with ENOLCK), unmounted on drop.
struct NoLockMount {
    backing: tempfile::TempDir,
    at: tempfile::TempDir,
}

impl NoLockMount {
    /// The mount, or why it cannot be made here (not root, no FUSE, no python3-fuse).
    fn new() -> Result<Self, String> {
        if !fsarena::probe::sys::is_root() {
            return Err("needs root to mount FUSE".into());
        }
        if !Path::new("/dev/fuse").exists() {
            return Err("no /dev/fuse".into());
        }
        let python = Command::new("/usr/bin/python3")
            .args(["-c", "import fuse"])
            .stderr(Stdio::null())
            .status();
        if !python.is_ok_and(|s| s.success()) {
            return Err("no python3-fuse (apt-get install python3-fuse)".into());
        }
        let m = Self {
            backing: tempfile::tempdir().unwrap(),
            at: tempfile::tempdir().unwrap(),
        };
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuse/nolock.py");
        let out = Command::new("/usr/bin/python3")
            .arg(script)
            .arg(m.backing.path())
            .arg(m.at.path())
            .output()
            .unwrap();
        if !out.status.success() || common::mounts_under(m.at.path()).is_empty() {
            return Err(format!("nolock.py did not mount: {out:?}"));
        }
        Ok(m)
    }
}

impl Drop for NoLockMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.at.path()).status();
    }
}

/// An fcntl write lock on all of `f`, as SQLite takes it; the errno when refused.
fn write_lock(f: &std::fs::File) -> Result<(), i32> {
    use std::os::fd::AsRawFd;
    // SAFETY: a plain C struct; all zeroes is a valid start.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    // SAFETY: F_SETLK reads the struct, which outlives the call; `f` is open.
    match unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLK, &lock) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0)),
    }
}

#[test]
fn a_database_where_locking_fails_is_refused_naming_its_filesystem() {
    let test = "a_database_where_locking_fails_is_refused_naming_its_filesystem";
    let m = match NoLockMount::new() {
        Ok(m) => m,
        Err(why) => {
            eprintln!("SKIP {test}: {why}");
            return;
        }
    };
    // The fault is real: a lock on that filesystem fails, as SQLite's would.
    let f = std::fs::File::create(m.at.path().join("probe")).unwrap();
    assert_eq!(write_lock(&f), Err(libc::ENOLCK));
    drop(f);
    std::fs::remove_file(m.at.path().join("probe")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let db = m.at.path().join("r.db");
    let expect = |args: &[&str]| {
        let out = Command::new(common::bin())
            .args(args)
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let want = format!(
            "fsarena: error: result database {}: its filesystem (fuse) cannot lock files \
             (No locks available), which SQLite needs; give --db a path on a local \
             filesystem (ext4, xfs, tmpfs, …)\n",
            db.display()
        );
        assert_eq!(stderr, want, "{args:?}");
    };
    // A run refuses at once (SQLite waited its 30 s busy timeout, then blamed the file).
    let dir = work.path().to_str().unwrap();
    expect(&[
        "run",
        "command:run=true",
        "--reps",
        "1",
        "--quiet",
        "--dir",
        dir,
    ]);
    assert!(!db.exists(), "no database file made");
    // So does reading one that was made elsewhere and moved there.
    let elsewhere = work.path().join("made.db");
    drop(fsarena::store::Store::open(&elsewhere).unwrap());
    std::fs::copy(&elsewhere, &db).unwrap();
    expect(&["history"]);
    expect(&["show", "last"]);
    let left: Vec<_> = std::fs::read_dir(m.at.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["r.db"], "the lock test leaves no file");
    drop(m);
}
