//! The image directory as users spell it (relative, through a symlink, with `..`) runs
//! clean and leaves nothing behind; one that another user (`nobody`) could steer is
//! refused before anything is created. Inside it, an image name planted as a symlink is
//! never formatted through, and `cleanup` believes no state file another user could have
//! written nor undoes anything outside the image directory. An image directory on a
//! filesystem without O_DIRECT or fallocate (ramfs) runs on a buffered, sparse image and
//! the target's notes say so.

mod common;

use fsarena::provision::{fs::FsType, loopfs::LoopTarget, Env, Target, TargetSpec};
use fsarena::state::{Resource, State};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

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

/// An image name planted as a symlink to "the disk" (a sacrificial regular file) before
/// the trial: the trial fails, the disk's bytes are unchanged, no loop device backs it.
#[test]
fn an_image_name_planted_as_a_symlink_is_never_formatted_through() {
    let test = "an_image_name_planted_as_a_symlink_is_never_formatted_through";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let top = common::image_dir();
    let dir = top.path().canonicalize().unwrap().join("img");
    fsarena::state::ensure_owned_dir(&dir).unwrap();
    let disk = top.path().join("disk");
    let bytes: Vec<u8> = (0..(64u32 << 20) / 4)
        .flat_map(|i| i.to_le_bytes())
        .collect();
    std::fs::write(&disk, &bytes).unwrap();
    let planted = dir.join("planted-ext4-1.img");
    std::os::unix::fs::symlink(&disk, &planted).unwrap();
    let env = Env {
        run_id: "planted".into(),
        image_dir: dir.clone(),
        state: Arc::new(State::create(&dir.join("state"), "planted").unwrap()),
    };
    let spec = TargetSpec::Loop {
        fs: FsType::Ext4,
        mkfs_opts: vec![],
        mount_opts: String::new(),
        size_bytes: 64 << 20,
    };
    let mut t = LoopTarget::new(&spec, &env);
    let err = t.prepare().unwrap_err();
    assert!(format!("{err:#}").contains("creating image"), "{err:#}");
    drop(t);
    assert!(
        std::fs::read(&disk).unwrap() == bytes,
        "the disk was written"
    );
    assert!(common::loops_under(top.path()).is_empty());
    assert!(std::fs::symlink_metadata(&planted).unwrap().is_symlink());
    env.state.finish().unwrap();
}

/// Writes a state file `name` in `dir/state` naming `resources`, for a run that is dead.
fn plant_state(dir: &Path, name: &str, resources: &[Resource]) -> PathBuf {
    let path = dir.join("state").join(name);
    let body = serde_json::json!({
        "pid": 999_999_999u32,
        "run_id": "planted",
        "resources": resources,
    });
    std::fs::write(&path, serde_json::to_vec(&body).unwrap()).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    path
}

/// A tmpfs mounted at `at` (made if needed): the victim cleanup must leave alone.
fn mount_victim(at: &Path) {
    std::fs::create_dir_all(at).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "victim"])
        .arg(at)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mounting the victim tmpfs at {}", at.display());
}

fn unmount_victim(at: &Path) {
    let _ = Command::new("umount").arg(at).status();
}

/// (b) a state file owned by nobody naming a mount, and (c) root's own state file naming
/// a mount outside the image directory: cleanup unmounts neither and says why.
#[test]
fn cleanup_ignores_state_files_of_other_users_and_mounts_outside_the_image_dir() {
    let test = "cleanup_ignores_state_files_of_other_users_and_mounts_outside_the_image_dir";
    if common::skip_without_loop(test) {
        return;
    }
    let top = common::image_dir();
    let dir = top.path().canonicalize().unwrap().join("img");
    fsarena::state::ensure_owned_dir(&dir).unwrap();
    drop(State::create(&dir.join("state"), "root").unwrap());
    // Inside the image directory but not under mnt/ (sweep's ground): only a state file
    // could make cleanup unmount it.
    let inside = dir.join("victim");
    let outside = top.path().canonicalize().unwrap().join("elsewhere");
    mount_victim(&inside);
    mount_victim(&outside);
    let theirs = plant_state(
        &dir,
        "theirs.json",
        &[Resource::Mount {
            path: inside.clone(),
        }],
    );
    std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    let ours = plant_state(
        &dir,
        "root.json",
        &[Resource::Mount {
            path: outside.clone(),
        }],
    );
    let out = common::cleanup(&dir);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let still = (
        fsarena::state::is_mounted(&inside),
        fsarena::state::is_mounted(&outside),
    );
    unmount_victim(&inside);
    unmount_victim(&outside);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(still, (true, true), "cleanup unmounted a victim:\n{text}");
    assert!(
        text.contains(&format!("ignored state file {}", theirs.display()))
            && text.contains("owned by uid 65534"),
        "{text}"
    );
    assert!(
        text.contains(&format!("ignored mount {}", outside.display()))
            && text.contains("not under the image directory"),
        "{text}"
    );
    assert!(
        theirs.exists() && ours.exists(),
        "kept for a person to look at"
    );
    // A state directory nobody owns: nothing in it is read.
    std::os::unix::fs::chown(dir.join("state"), Some(NOBODY), Some(NOBODY)).unwrap();
    let out = common::cleanup(&dir);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("ignored the state directory") && text.contains("owned by uid 65534"),
        "{text}"
    );
}

/// A ramfs mounted for one test (mode 0755, as the image directory rule wants), unmounted
/// on drop.
struct Ramfs(tempfile::TempDir);

impl Drop for Ramfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn an_image_dir_without_o_direct_gets_a_buffered_loop_device_and_says_so() {
    let test = "an_image_dir_without_o_direct_gets_a_buffered_loop_device_and_says_so";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let m = Ramfs(common::image_dir());
    let mounted = Command::new("mount")
        .args(["-t", "ramfs", "-o", "mode=0755", "fsarena-ramfs-test"])
        .arg(m.0.path())
        .status()
        .unwrap()
        .success();
    if !mounted {
        eprintln!("SKIP {test}: cannot mount ramfs");
        return;
    }
    // ramfs, like tmpfs before Linux 6.6, refuses O_DIRECT: the fault is real.
    {
        use std::os::unix::fs::OpenOptionsExt;
        let probe = m.0.path().join("probe");
        std::fs::write(&probe, b"x").unwrap();
        let e = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&probe)
            .expect_err("ramfs refuses O_DIRECT");
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}");
        std::fs::remove_file(&probe).unwrap();
    }
    let dir = m.0.path().join("images");
    let out = Command::new(common::bin())
        .args([
            "run",
            "smallfiles:files=300",
            "--fs",
            "ext4",
            "--size",
            "64MiB",
        ])
        .args(["--reps", "2", "--image-dir"])
        .arg(&dir)
        .arg("--db")
        .arg(m.0.path().join("r.db"))
        .arg("--json")
        .arg(m.0.path().join("r.json"))
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let v = common::run_document(&std::fs::read(m.0.path().join("r.json")).unwrap());
    for i in 0..2 {
        assert_eq!(v["trials"][i]["status"], "ok", "{}", v["trials"][i]);
    }
    let target = &v["targets"][0];
    assert_eq!(target["loop_direct_io"], false, "{target}");
    let notes: Vec<&str> = target["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let buffered = "buffered loop device: the image directory's ramfs refuses O_DIRECT, so \
                    the host page cache sits under the device";
    let sparse = "image not preallocated: the image directory's ramfs has no fallocate, so \
                  it allocates while the benchmark writes";
    assert_eq!(notes, [sparse, buffered], "once each, for two trials");
    // Said once on stderr, and under the target in the report, wrapped to 80 columns.
    assert_eq!(stderr.matches("refuses O_DIRECT").count(), 1, "{stderr}");
    let report = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        report.contains(buffered) && report.contains(sparse),
        "{stdout}"
    );
    assert!(stdout.lines().all(|l| l.chars().count() <= 80), "{stdout}");
    common::assert_clean(&dir);
    common::assert_no_records(&dir);
    drop(m);
}
