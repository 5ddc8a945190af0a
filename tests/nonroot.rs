//! Without root: loop and tmpfs targets are refused with a clear message (exit 2), `--dir`
//! still works, and the report says caches could not be dropped. Run as `nobody` through
//! setpriv when the tests run as root; as a normal user they run as they are.

mod common;

use std::process::Command;

/// A command running the binary as an unprivileged user.
fn unprivileged() -> Option<Command> {
    if !fsarena::probe::sys::is_root() {
        return Some(Command::new(common::bin()));
    }
    if fsarena::cmd::which("setpriv").is_none() {
        eprintln!("SKIP nonroot tests: running as root and setpriv (util-linux) is missing");
        return None;
    }
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(common::bin());
    Some(c)
}

#[test]
fn loop_and_tmpfs_need_root() {
    let Some(mut c) = unprivileged() else { return };
    let out = c
        .args([
            "run",
            "--fs",
            "tmpfs",
            "--image-dir",
            "/tmp/fsarena-nonroot-never",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs root") && err.contains("--dir"), "{err}");
}

#[test]
fn dir_works_without_root_and_says_caches_were_not_dropped() {
    let Some(mut c) = unprivileged() else { return };
    let dir = tempfile::tempdir().unwrap();
    let img = tempfile::tempdir().unwrap();
    for d in [dir.path(), img.path()] {
        Command::new("chmod").arg("777").arg(d).status().unwrap();
    }
    let out = c
        .args(["run", "bonnie:size=2MiB,seeks=10,char_size=0", "--dir"])
        .arg(dir.path())
        .args(["--reps", "1", "--quiet", "--image-dir"])
        .arg(img.path().join("images"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("caches not dropped"), "{text}");
    assert!(
        text.contains("caches could not be dropped"),
        "the d mark is explained: {text}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "work directory removed"
    );
}
