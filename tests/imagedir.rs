//! The image directory as users spell it (relative, through a symlink, with `..`) runs
//! clean and leaves nothing behind; one that another user (`nobody`) could steer is
//! refused before anything is created.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

const NOBODY: u32 = 65534;

/// Two repetitions of a small ext4 run with `--image-dir SPELLING`, from `cwd`.
fn run_from(cwd: &Path, spelling: &str, db: &Path) -> std::process::Output {
    Command::new(common::bin())
        .current_dir(cwd)
        .args([
            "run",
            "smallfiles:files=500",
            "--fs",
            "ext4",
            "--size",
            "128MiB",
        ])
        .args(["--reps", "2", "--quiet", "--image-dir", spelling, "--db"])
        .arg(db)
        .output()
        .expect("fsarena runs")
}

#[test]
fn relative_symlinked_and_dotdot_image_dirs_run_clean() {
    let test = "relative_symlinked_and_dotdot_image_dirs_run_clean";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let top = common::image_dir();
    let real = top.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, top.path().join("link")).unwrap();
    let db = top.path().join("r.db");
    for spelling in ["./real/imgs", "link", "real/../real"] {
        let out = run_from(top.path(), spelling, &db);
        assert_eq!(
            out.status.code(),
            Some(0),
            "--image-dir {spelling}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        common::assert_clean(top.path());
        common::assert_clean(&real);
    }
}

#[test]
fn an_image_dir_planted_by_another_user_is_refused_before_anything_is_made() {
    let test = "an_image_dir_planted_by_another_user_is_refused_before_anything_is_made";
    if common::skip_without_loop(test) {
        return;
    }
    // A sticky, world-writable directory like /var/tmp, where nobody planted a symlink
    // to a directory of theirs under the name root's runs use.
    let top = common::image_dir();
    let sticky = top.path().join("vartmp");
    std::fs::create_dir(&sticky).unwrap();
    std::fs::set_permissions(
        &sticky,
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .unwrap();
    let theirs = top.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    let planted = sticky.join("fsarena");
    std::os::unix::fs::symlink(&theirs, &planted).unwrap();
    for p in [&theirs, &planted] {
        std::os::unix::fs::lchown(p, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    assert_eq!(planted.symlink_metadata().unwrap().uid(), NOBODY);
    let out = run_from(
        top.path(),
        planted.to_str().unwrap(),
        &top.path().join("r.db"),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is a symlink owned by uid 65534"), "{err}");
    assert_eq!(
        std::fs::read_dir(&theirs).unwrap().count(),
        0,
        "fsarena made something in the other user's directory"
    );
    // Their directory named directly, and a group-writable one of root's.
    let out = run_from(
        top.path(),
        theirs.to_str().unwrap(),
        &top.path().join("r.db"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("owned by uid 65534"));
    let shared = top.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::os::unix::fs::PermissionsExt::from_mode(0o775)).unwrap();
    let out = run_from(top.path(), "shared/img", &top.path().join("r.db"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("writable by its group"));
    assert!(!shared.join("img").exists());
    // cleanup refuses it too, touching nothing.
    let out = Command::new(common::bin())
        .args(["cleanup", "--image-dir"])
        .arg(&planted)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
