//! `fsarena doctor` end to end: on this machine (as root with loop devices and the default
//! filesystems' tools it is ready: exit 0, every check printed), and with `--image-dir` on
//! a 1 MiB tmpfs the space check fails with exit 1.

mod common;

use std::path::Path;
use std::process::Command;

fn doctor(image_dir: Option<&Path>) -> (Option<i32>, String) {
    let mut c = Command::new(common::bin());
    c.arg("doctor");
    if let Some(d) = image_dir {
        c.arg("--image-dir").arg(d);
    }
    let out = c.output().expect("run fsarena doctor");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The verdict word of the line of check `name`.
fn verdict<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find(|l| l.get(6..).is_some_and(|rest| rest.starts_with(name)))
        .unwrap_or_else(|| panic!("no line for {name}: {text}"))
        .split_whitespace()
        .next()
        .unwrap()
}

#[test]
fn doctor_here_prints_every_check() {
    let dir = common::image_dir();
    let (code, text) = doctor(Some(dir.path()));
    for name in [
        "root",
        "loop",
        "fs ext2",
        "fs ext4",
        "fs xfs",
        "fs btrfs",
        "fs tmpfs",
        "drop caches",
        "space",
        "memory",
        "cpu governor",
        "load",
        "swap",
        "vm.dirty",
        "kernel",
    ] {
        let v = verdict(&text, name);
        assert!(["OK", "WARN", "FAIL"].contains(&v), "{name}: {v}");
    }
    if let Some(why) = common::loop_unavailable() {
        eprintln!("SKIP doctor_here exit 0: {why}");
        assert_eq!(code, Some(1), "{text}");
        return;
    }
    let ready = ["ext4", "xfs", "btrfs"]
        .iter()
        .all(|fs| common::fs_available("doctor_here", fs));
    if !ready {
        assert_eq!(code, Some(1), "{text}");
        return;
    }
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("FAIL "), "{text}");
    for name in ["root", "loop", "fs ext4", "fs xfs", "fs btrfs", "space"] {
        assert_eq!(verdict(&text, name), "OK", "{name}: {text}");
    }
    assert!(text.contains("ready: `fsarena run` can run here"), "{text}");
}

/// A tmpfs mounted for one test, unmounted on drop.
struct TinyMount(tempfile::TempDir);

impl Drop for TinyMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn doctor_fails_on_a_full_image_dir() {
    if common::skip_without_loop("doctor_fails_on_a_full_image_dir") {
        return;
    }
    let m = TinyMount(common::image_dir());
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1M", "fsarena-doctor-test"])
        .arg(m.0.path())
        .status()
        .unwrap()
        .success();
    assert!(ok, "mount a 1 MiB tmpfs");
    let (code, text) = doctor(Some(&m.0.path().join("images")));
    assert_eq!(code, Some(1), "{text}");
    // The check's line with its continuation lines (wrapped to the width, indented).
    let start = text
        .find("FAIL  space")
        .unwrap_or_else(|| panic!("space fails: {text}"));
    let mut lines = text[start..].lines();
    let mut line = lines.next().unwrap().to_string();
    for more in lines.take_while(|l| l.starts_with("    ")) {
        line = line + " " + more.trim_start();
    }
    assert!(
        line.contains("1MiB free") && line.contains("needs 1GiB"),
        "{line}"
    );
    assert!(
        line.contains("measured on") && line.contains("--image-dir"),
        "{line}"
    );
    assert!(text.contains("not ready: 1 check failed (space)"), "{text}");
    drop(m);
}
