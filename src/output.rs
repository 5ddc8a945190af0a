//! The files a command writes for the user (`--json`, `--html`, `export -o`, `report
//! --html`): checked before the work starts, written whole or not at all.
//!
//! * An output path that is the result database, or its `-wal`/`-shm` companions, is
//!   refused: writing a report over it would destroy every stored run.
//! * Its directory must exist and be writable before a run starts, not after it has run
//!   for an hour.
//! * The bytes go to a temporary file in the same directory, renamed into place, so that a
//!   failure half way (a full disk) leaves the old file or none, never half a report.

use crate::error::usage;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `path` made absolute with its existing directory part resolved (the file itself may not
/// exist yet), for comparing two spellings of one path.
fn canonical(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Some(parent.canonicalize().ok()?.join(name))
}

/// Refuses an output path (`what` names the option) that is the database `db` or one of
/// its companion files, or whose directory does not exist or cannot be written.
pub fn check(path: &Path, what: &str, db: &Path) -> Result<()> {
    let shown = path.display();
    if path.as_os_str().is_empty() || path.file_name().is_none() {
        return Err(usage(format!("{what} '{shown}': not a file name")));
    }
    let out = canonical(path);
    let db_files: Vec<Option<PathBuf>> = ["", "-wal", "-shm", "-journal"]
        .iter()
        .map(|suffix| {
            let mut p = db.as_os_str().to_owned();
            p.push(suffix);
            canonical(Path::new(&p))
        })
        .collect();
    if out.is_some() && db_files.contains(&out) {
        return Err(usage(format!(
            "{what} {shown} is the result database (or its journal): writing there would \
             destroy every stored run; give another file"
        )));
    }
    if path.is_dir() {
        return Err(usage(format!(
            "{what} {shown} is a directory: give a file name"
        )));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(usage(format!(
            "{what} {shown}: the directory {} does not exist",
            dir.display()
        )));
    }
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(dir.as_os_str()))
        .map_err(|_| usage(format!("{what} '{shown}': the path contains a NUL byte")))?;
    // SAFETY: access(2) on a NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(usage(format!(
            "{what} {shown}: cannot write in {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file in its directory, renamed into place.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".fsarena-out-")
        .tempfile_in(dir)
        .with_context(|| {
            format!(
                "writing {}: creating a file in {}",
                path.display(),
                dir.display()
            )
        })?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("writing {}", path.display()))?;
    // A report is for reading by others as any file the user writes (tempfile makes 0600).
    let mode = 0o666 & !umask();
    std::fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(mode),
    )
    .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// The process's umask (read by setting it and setting it back).
fn umask() -> u32 {
    // SAFETY: umask(2) cannot fail; the old mask is restored at once.
    unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_and_its_journal_are_never_outputs() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        std::fs::write(&db, b"SQLite format 3\0").unwrap();
        for name in ["r.db", "r.db-wal", "r.db-shm"] {
            let err = check(&dir.path().join(name), "--json", &db).unwrap_err();
            assert!(
                format!("{err:#}").contains("is the result database"),
                "{err:#}"
            );
        }
        // Another spelling of the same file.
        let other = dir.path().join("sub/../r.db");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert!(check(&other, "--html", &db).is_err());
        assert!(check(&dir.path().join("out.json"), "--json", &db).is_ok());
    }

    #[test]
    fn a_missing_directory_is_refused_before_the_work() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        let err = check(Path::new("/nonexistent/x.json"), "--json", &db).unwrap_err();
        assert!(format!("{err:#}").contains("does not exist"), "{err:#}");
        let err = check(dir.path(), "--json", &db).unwrap_err();
        assert!(format!("{err:#}").contains("is a directory"), "{err:#}");
    }

    #[test]
    fn written_whole_through_a_rename() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        std::fs::write(&p, b"old").unwrap();
        write(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "a temporary file was left");
    }
}
