//! The image directory, resolved once: where root creates, formats and mounts.
//!
//! Whatever spelling the user gave (`./imgs`, a symlink, `a/../b`, a trailing slash), the
//! run, its state file, its mount points and `cleanup` all use one path: the real path of
//! the nearest existing ancestor with the rest appended (a `..` in the part that does not
//! exist yet is refused, there is nothing to resolve it against). Comparing mount points
//! with `/proc/self/mountinfo` needs exactly that path.
//!
//! When root runs it, nobody else may be able to steer that path: as OpenSSH's
//! StrictModes and sudo check their files, every directory of the real path must be owned
//! by root and not writable by group or others unless it has the sticky bit (`/tmp`,
//! `/var/tmp`), and no symlink on the way as typed may belong to another user (in a sticky
//! directory, another user's symlink named `/var/tmp/fsarena` would send root's images,
//! mounts and state files where that user chooses).

use crate::error::usage;
use crate::probe::trust::{untrusted, Entry};
use anyhow::Result;
use std::path::{Component, Path, PathBuf};

/// The image directory `given` resolved to the one path the run uses, after checking that
/// no other user can steer it. Exit-2 errors name the component and why.
pub fn resolve(given: &Path) -> Result<PathBuf> {
    let typed = if given.is_absolute() {
        given.to_path_buf()
    } else {
        std::env::current_dir()?.join(given)
    };
    let existing = typed
        .ancestors()
        .find(|a| a.exists())
        .unwrap_or(Path::new("/"));
    let tail = typed.strip_prefix(existing).unwrap_or(Path::new(""));
    let mut real = existing.canonicalize().map_err(|e| {
        usage(format!(
            "--image-dir {}: cannot resolve {}: {e}",
            given.display(),
            existing.display()
        ))
    })?;
    for c in tail.components() {
        match c {
            Component::Normal(n) => real.push(n),
            Component::CurDir => {}
            _ => {
                return Err(usage(format!(
                    "--image-dir {}: '..' after {}, which does not exist: give a path \
                     that exists up to its last parts",
                    given.display(),
                    existing.display()
                )))
            }
        }
    }
    // As another user, fsarena formats and mounts nothing (only `--dir` runs work), and
    // what could be steered is that user's own.
    let me = crate::probe::sys::euid();
    if me != 0 {
        return Ok(real);
    }
    if let Some(why) = untrusted(existing, &real, me, &|p| Entry::of(p).ok()) {
        return Err(usage(format!("--image-dir {}: {why}", given.display())));
    }
    Ok(real)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn fake(entries: &[(&str, u32, u32, bool)]) -> impl Fn(&Path) -> Option<Entry> {
        let map: HashMap<PathBuf, Entry> = entries
            .iter()
            .map(|&(p, uid, mode, is_symlink)| {
                (
                    PathBuf::from(p),
                    Entry {
                        uid,
                        mode,
                        is_symlink,
                    },
                )
            })
            .collect();
        move |p: &Path| map.get(p).copied()
    }

    const NOBODY: u32 = 65534;

    #[test]
    fn a_symlink_planted_by_another_user_in_var_tmp_is_refused() {
        let lstat = fake(&[
            ("/", 0, 0o40755, false),
            ("/var", 0, 0o40755, false),
            ("/var/tmp", 0, 0o41777, false),
            ("/var/tmp/fsarena", NOBODY, 0o120777, true),
            ("/tmp", 0, 0o41777, false),
            ("/tmp/theirs", NOBODY, 0o40755, false),
        ]);
        let t = Path::new("/var/tmp/fsarena");
        let why = untrusted(t, Path::new("/tmp/theirs"), 0, &lstat).unwrap();
        assert!(
            why.contains("/var/tmp/fsarena is a symlink owned by uid 65534"),
            "{why}"
        );
        // The real directory alone is refused too (someone gave its path).
        let r = Path::new("/tmp/theirs");
        let why = untrusted(r, r, 0, &lstat).unwrap();
        assert!(why.contains("/tmp/theirs is owned by uid 65534"), "{why}");
    }

    #[test]
    fn root_s_own_directories_and_sticky_ones_pass() {
        let lstat = fake(&[
            ("/", 0, 0o40755, false),
            ("/var", 0, 0o40755, false),
            ("/var/tmp", 0, 0o41777, false),
            ("/var/tmp/fsarena", 0, 0o40755, false),
            ("/scratch", 0, 0o120777, true),
        ]);
        let t = Path::new("/var/tmp/fsarena/img");
        let e = Path::new("/var/tmp/fsarena");
        assert_eq!(untrusted(e, t, 0, &lstat), None);
        // Root's own symlink to a scratch disk is fine.
        let t = Path::new("/scratch");
        assert_eq!(untrusted(t, Path::new("/var/tmp/fsarena"), 0, &lstat), None);
        // A user running fsarena on their own directory.
        let lstat = fake(&[("/", 0, 0o40755, false), ("/home/u", 1000, 0o40700, false)]);
        let h = Path::new("/home/u");
        assert_eq!(untrusted(h, h, 1000, &lstat), None);
        assert!(untrusted(h, h, 0, &lstat).is_some());
    }

    #[test]
    fn a_group_or_world_writable_directory_without_sticky_is_refused() {
        let lstat = fake(&[
            ("/", 0, 0o40755, false),
            ("/srv", 0, 0o40777, false),
            ("/data", 0, 0o40775, false),
        ]);
        let s = Path::new("/srv/img");
        let why = untrusted(Path::new("/srv"), s, 0, &lstat).unwrap();
        assert!(
            why.contains("/srv is writable by everyone (mode 777)"),
            "{why}"
        );
        let d = Path::new("/data");
        let why = untrusted(d, d, 0, &lstat).unwrap();
        assert!(why.contains("writable by its group"), "{why}");
    }

    #[test]
    fn relative_dotdot_and_symlinked_spellings_resolve_to_one_path() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().canonicalize().unwrap().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(resolve(&link).unwrap(), real);
        assert_eq!(resolve(&real.join("../real")).unwrap(), real);
        assert_eq!(resolve(&link.join("imgs")).unwrap(), real.join("imgs"));
        assert_eq!(resolve(&link.join("a/./b")).unwrap(), real.join("a/b"));
        assert!(resolve(&link.join("new/../x")).is_err());
    }
}
