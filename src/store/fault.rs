//! Why the result database failed, in words a user can act on: every error of a write
//! names the file and, when it can be told, the cause — the file is gone (deleted or
//! replaced), its filesystem is full or read-only, the file cannot be written (permissions,
//! `chattr +i`), or it is not an fsarena database any more (damaged, or overwritten by
//! another program). SQLite's own message follows (`database or disk is full`, …).
//!
//! The cause is found by looking at the file and its filesystem when the error happens
//! (statvfs, access(2), the file's identity), because SQLite's codes alone do not tell
//! them apart (a read-only remount and a full disk are both a `disk I/O error`).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Below this many free bytes an I/O error on the database is put down to a full
/// filesystem (a page and its journal copy no longer fit).
const NEARLY_FULL_BYTES: u64 = 1 << 20;

/// What is known of a failed database operation besides its error.
pub(super) struct Seen {
    /// The file's (device, inode) when it was opened: a different one now means it is gone.
    pub opened: Option<(u64, u64)>,
    /// The errno of SQLite's last failed system call on the connection ([`os_errno`]).
    pub errno: Option<i32>,
}

/// `e` with the database `path` and, when it can be told, the cause in front.
pub(super) fn explain(path: &Path, seen: Seen, e: anyhow::Error) -> anyhow::Error {
    match cause(path, &seen, &e) {
        Some(why) => e.context(format!("{}: {why}", path.display())),
        None => e.context(path.display().to_string()),
    }
}

/// The errno of the last system call SQLite saw fail on `conn` (`sqlite3_system_errno`).
pub(super) fn os_errno(conn: &rusqlite::Connection) -> Option<i32> {
    // SAFETY: the handle is valid while `conn` lives; the call only reads a field of it.
    let n = unsafe { rusqlite::ffi::sqlite3_system_errno(conn.handle()) };
    (n != 0).then_some(n)
}

/// The cause of `e`, or `None` when nothing about the file or its filesystem explains it.
fn cause(path: &Path, seen: &Seen, e: &anyhow::Error) -> Option<String> {
    let code = e
        .chain()
        .find_map(|c| c.downcast_ref::<rusqlite::Error>())
        .and_then(rusqlite::Error::sqlite_error_code);
    use rusqlite::ErrorCode as C;
    if let Some(why) = not_the_file(path, seen.opened, code) {
        return Some(why);
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let space = crate::probe::sys::space(dir).ok();
    if space.is_some_and(|s| s.read_only) || made_read_only(dir) {
        return Some(
            "its filesystem is read-only (mounted ro, or made read-only after an error)".into(),
        );
    }
    if let Some(why) = cannot_write(path, dir) {
        return Some(why);
    }
    let os_level = matches!(
        code,
        Some(C::SystemIoFailure | C::DiskFull | C::CannotOpen | C::ReadOnly | C::PermissionDenied)
    );
    if let Some(why) = seen.errno.filter(|_| os_level).and_then(by_errno) {
        return Some(why.into());
    }
    let free = space.map(|s| match crate::probe::sys::is_root() {
        true => s.free_bytes,
        false => s.avail_bytes,
    });
    let no_inodes = crate::probe::sys::inodes_free(dir) == Some(0);
    let io = matches!(code, Some(C::SystemIoFailure | C::CannotOpen));
    if code == Some(C::DiskFull) || (io && (free < Some(NEARLY_FULL_BYTES) || no_inodes)) {
        return Some(match no_inodes {
            true => "its filesystem is out of inodes".into(),
            false => "its filesystem is full".into(),
        });
    }
    None
}

/// Whether the file at `path` is no longer the database that was opened (`opened`, its
/// identity then): deleted, replaced, emptied, or with other bytes than a database's.
fn not_the_file(
    path: &Path,
    opened: Option<(u64, u64)>,
    code: Option<rusqlite::ErrorCode>,
) -> Option<String> {
    let now = super::identity(path);
    if opened.is_some() && now != opened {
        return Some(match now {
            None => "the file is gone (deleted during the run)".into(),
            Some(_) => "the file was replaced by another one during the run".into(),
        });
    }
    if opened.is_some() && std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        return Some("the file was emptied (truncated to 0 bytes) during the run".into());
    }
    use rusqlite::ErrorCode as C;
    if matches!(code, Some(C::NotADatabase | C::DatabaseCorrupt)) {
        return Some(
            "the file is not a sound fsarena database any more (damaged, or overwritten by \
             another program)"
                .into(),
        );
    }
    None
}

/// Why the database, its directory or a file SQLite keeps beside it cannot be written.
fn cannot_write(path: &Path, dir: &Path) -> Option<String> {
    if let Some(why) = not_writable(path, "the file") {
        return Some(why);
    }
    if let Some(why) = not_writable(dir, "its directory (where SQLite writes its journal)") {
        return Some(why);
    }
    for suffix in ["-journal", "-wal", "-shm"] {
        let mut companion = path.as_os_str().to_owned();
        companion.push(suffix);
        let companion = std::path::PathBuf::from(companion);
        let what = format!("the file beside it, {},", companion.display());
        if let Some(why) = not_writable(&companion, &what) {
            return Some(why);
        }
    }
    None
}

/// Whether the filesystem holding `dir` was made read-only by the kernel after an error
/// (`emergency_ro` or `ro` among its superblock options in /proc/self/mountinfo: ext4's
/// `errors=remount-ro` leaves the mount itself `rw`, so statvfs does not say it).
fn made_read_only(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(dev) = std::fs::metadata(dir).map(|m| m.dev()) else {
        return false;
    };
    let id = format!("{}:{}", libc::major(dev), libc::minor(dev));
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter(|l| l.split(' ').nth(2) == Some(id.as_str()))
        .filter_map(|l| l.split(" - ").nth(1)?.split(' ').nth(2))
        .any(|opts| opts.split(',').any(|o| o == "ro" || o == "emergency_ro"))
}

/// Why a database at `db` could not be locked, or `None` when it can (or when no file can
/// be made beside it to try). SQLite locks its database with POSIX record locks (fcntl
/// F_SETLK); 9p, some FUSE mounts and NFS without its lock manager refuse them. They are
/// tried on a fresh file in the same directory (made O_EXCL|O_NOFOLLOW, then removed): never
/// on the database itself, since closing any descriptor of a file drops every POSIX lock
/// this process holds on it, a live connection's included.
pub(super) fn locking_problem(db: &Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let probe = dir.join(format!(".fsarena-lock-test-{}-{nanos}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&probe)
        .ok()?;
    let tried = set_lock(&f, libc::F_WRLCK).and_then(|()| set_lock(&f, libc::F_UNLCK));
    drop(f);
    let _ = std::fs::remove_file(&probe);
    let e = tried.err()?.to_string();
    // `No locks available (os error 37)`: the words are what a user reads.
    let e = e.split(" (os error").next().unwrap_or(&e);
    let fs = crate::provision::dir::fstype_of(dir).unwrap_or_else(|| "unknown type".into());
    Some(format!(
        "its filesystem ({fs}) cannot lock files ({e}), which SQLite needs; give --db a \
         path on a local filesystem (ext4, xfs, tmpfs, …)"
    ))
}

/// A POSIX record lock of type `kind` over all of `f`, or its release (`F_UNLCK`), without
/// waiting (F_SETLK), as SQLite takes them.
fn set_lock(f: &std::fs::File, kind: libc::c_int) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: a plain C struct; all zeroes is a valid start.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: F_SETLK reads the flock struct, which outlives the call; `f` is open.
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLK, &lock) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The cause an errno of SQLite's names; `None` for one that says nothing more than
/// SQLite's own message.
fn by_errno(errno: i32) -> Option<&'static str> {
    Some(match errno {
        libc::EROFS => "its filesystem is read-only (mounted ro, or made read-only after an error)",
        libc::ENOSPC => "its filesystem is full",
        libc::EDQUOT => "the disk quota is exhausted",
        libc::EIO => "the device reported an I/O error (see dmesg)",
        libc::EPERM => {
            "the file or its journal cannot be written: immutable or append-only (lsattr)"
        }
        libc::ENOENT | libc::ESTALE => "the file is gone",
        _ => return None,
    })
}

/// Why `path` (called `what`) cannot be written, by access(2): immutable or append-only
/// (`EPERM`, `chattr`), no permission (`EACCES`); `None` when it can or is missing.
fn not_writable(path: &Path, what: &str) -> Option<String> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: access reads the NUL-terminated path only.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        return None;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EPERM) => Some(format!(
            "{what} cannot be written: it is immutable or append-only (see lsattr; chattr -i \
             lifts it)"
        )),
        Some(libc::EACCES) => Some(format!("{what} cannot be written: no permission")),
        Some(libc::EROFS) => Some("its filesystem is read-only".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(opened: Option<(u64, u64)>) -> Seen {
        Seen {
            opened,
            errno: None,
        }
    }

    #[test]
    fn locks_work_on_a_local_filesystem_and_the_test_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(locking_problem(&dir.path().join("r.db")), None);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_errno_names_the_cause() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        std::fs::write(&path, b"x").unwrap();
        let ro = Seen {
            opened: None,
            errno: Some(libc::EROFS),
        };
        let text = format!(
            "{:#}",
            explain(&path, ro, sqlite(rusqlite::ffi::SQLITE_IOERR))
        );
        assert!(text.contains("its filesystem is read-only"), "{text}");
        let full = Seen {
            opened: None,
            errno: Some(libc::ENOSPC),
        };
        let text = format!(
            "{:#}",
            explain(&path, full, sqlite(rusqlite::ffi::SQLITE_FULL))
        );
        assert!(text.contains("its filesystem is full"), "{text}");
    }

    fn sqlite(code: i32) -> anyhow::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None).into()
    }

    #[test]
    fn a_gone_file_and_a_foreign_one_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        std::fs::write(&path, b"x").unwrap();
        let id = super::super::identity(&path);
        let e = explain(&path, seen(id), sqlite(rusqlite::ffi::SQLITE_NOTADB));
        let text = format!("{e:#}");
        assert!(
            text.starts_with(&format!("{}: the file is not", path.display())),
            "{text}"
        );
        // Moved away, not removed: its inode stays taken, so the file written in its
        // place below cannot reuse it (removed, it was reused now and then, and the
        // replacement went unseen).
        std::fs::rename(&path, dir.path().join("kept")).unwrap();
        let text = format!(
            "{:#}",
            explain(&path, seen(id), sqlite(rusqlite::ffi::SQLITE_IOERR))
        );
        assert!(text.contains("the file is gone"), "{text}");
        std::fs::write(&path, b"y").unwrap();
        let text = format!(
            "{:#}",
            explain(&path, seen(id), sqlite(rusqlite::ffi::SQLITE_IOERR))
        );
        assert!(text.contains("replaced"), "{text}");
    }

    #[test]
    fn full_is_said_and_an_unexplained_error_still_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        std::fs::write(&path, b"x").unwrap();
        let text = format!(
            "{:#}",
            explain(&path, seen(None), sqlite(rusqlite::ffi::SQLITE_FULL))
        );
        assert!(text.contains("its filesystem is full"), "{text}");
        assert!(text.contains("database or disk is full"), "{text}");
        let text = format!(
            "{:#}",
            explain(&path, seen(None), anyhow::anyhow!("refused"))
        );
        assert_eq!(text, format!("{}: refused", path.display()));
    }
}
