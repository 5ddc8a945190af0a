//! Unit tests of `state`.

use super::cleanup::{outside, replay_state_files};
use super::*;

#[test]
fn a_guest_is_stopped_only_when_its_command_line_names_the_pidfile() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("qemu.pid");
    // Another process's pid in the file: left alone, the stale file removed.
    let mut other = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    while std::fs::read(format!("/proc/{}/cmdline", other.id()))
        .unwrap()
        .is_empty()
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::fs::write(&pidfile, format!("{}\n", other.id())).unwrap();
    assert!(!stop_guest(&pidfile).unwrap());
    assert!(other.try_wait().unwrap().is_none(), "a stranger was killed");
    assert!(!pidfile.exists());
    other.kill().unwrap();
    other.wait().unwrap();
    // A process naming the pidfile (as QEMU's `-pidfile PATH` does): stopped.
    let mut guest = std::process::Command::new("sh")
        .args(["-c", "sleep 30; :", "sh"])
        .arg(&pidfile)
        .spawn()
        .unwrap();
    std::fs::write(&pidfile, format!("{}\n", guest.id())).unwrap();
    // As QEMU writes its pidfile once running: after the exec shows in /proc.
    let cmdline = format!("/proc/{}/cmdline", guest.id());
    while std::fs::read(&cmdline).unwrap().is_empty() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let reaper = std::thread::spawn(move || guest.wait().unwrap());
    assert!(stop_guest(&pidfile).unwrap());
    assert!(!reaper.join().unwrap().success());
    assert!(!pidfile.exists());
}

#[test]
fn a_run_is_live_while_its_lock_is_held_and_only_once() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let first = State::create(&state, "r1").unwrap();
    let file = state.join("r1.json");
    // pid 1 is no fsarena: the lock, not the process name, says the run is alive.
    assert!(run_is_live(&file, 1));
    let second = State::create(&state, "r1").err().expect("a second holder");
    assert!(
        format!("{second:#}").contains("live in another process"),
        "{second:#}"
    );
    assert!(
        file.exists(),
        "the second did not overwrite the first's record"
    );
    first.finish().unwrap();
    drop(first);
    assert!(!run_is_live(&file, 1));
    assert!(!state.join("r1.lock").exists());
    let again = State::create(&state, "r1").unwrap();
    drop(again); // never finished, as after kill -9: dead, its lock free
    assert!(!run_is_live(&file, 1));
    // cleanup removes the dead run's lock file, never a held one.
    let held = State::create(&state, "r2").unwrap();
    remove_stale_lock(&state.join("r2.lock"));
    assert!(state.join("r2.lock").exists());
    drop(held);
    remove_stale_lock(&state.join("r1.lock"));
    assert!(!state.join("r1.lock").exists());
    // A lock file whose state file is gone (killed while finishing) goes at cleanup.
    std::fs::remove_file(state.join("r2.json")).unwrap();
    assert!(state.join("r2.lock").exists());
    std::fs::write(state.join(MARKER), b"").ok();
    let (_, live) = replay_state_files(dir.path(), None);
    assert!(live.is_empty());
    assert!(!state.join("r2.lock").exists());
}
use std::os::unix::fs::PermissionsExt;

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
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("ignored image") && l.contains("not under the image")),
        "{lines:?}"
    );
    // The state file is kept while something could not be undone; a second call is harmless.
    let again = cleanup(&owned).unwrap();
    assert!(again.iter().all(|l| !l.starts_with("undid")), "{again:?}");
}

/// `cleanup --run RUN` undoes the run's own record and its guests' (`RUN-guests`,
/// written by a plan with host and guest targets), and no other run's.
#[test]
fn cleanup_of_one_run_takes_its_guests_record_too() {
    let tmp = tempfile::tempdir().unwrap();
    let owned = tmp.path().join("images");
    ensure_owned_dir(&owned).unwrap();
    let sdir = owned.join("state");
    let mut imgs = Vec::new();
    for id in ["run1", "run1-guests", "run12", "run1-other"] {
        let img = owned.join(format!("{id}.img"));
        std::fs::write(&img, b"data").unwrap();
        let st = State::create(&sdir, id).unwrap();
        st.add(Resource::Image { path: img.clone() }).unwrap();
        drop(st); // as after kill -9
        imgs.push(img);
    }
    cleanup_run(&owned, "run1");
    let left: Vec<bool> = imgs.iter().map(|i| i.exists()).collect();
    assert_eq!(left, [false, false, true, true]);
}

#[test]
fn only_what_lies_under_the_image_dir_is_undone() {
    let d = Path::new("/var/tmp/fsarena");
    let m = |p: &str| Resource::Mount { path: p.into() };
    assert_eq!(outside(&m("/var/tmp/fsarena/mnt/r-ext4"), d), None);
    assert!(outside(&m("/etc"), d).is_some());
    assert!(outside(&m("/var/tmp/fsarena"), d).is_some());
    assert!(outside(&m("/var/tmp/fsarena/../../../etc"), d).is_some());
    assert!(outside(&m("/var/tmp/fsarena-other/mnt"), d).is_some());
    let lo = |dev: &str, img: &str| Resource::Loop {
        device: dev.into(),
        image: img.into(),
    };
    assert_eq!(
        outside(&lo("/dev/loop7", "/var/tmp/fsarena/a.img"), d),
        None
    );
    assert!(outside(&lo("/dev/sda", "/var/tmp/fsarena/a.img"), d).is_some());
    assert!(outside(&lo("/dev/loop7", "/home/u/disk.img"), d).is_some());
    let img = Resource::Image {
        path: "/srv/data.img".into(),
    };
    assert!(outside(&img, d).is_some());
    // Work directories of --dir runs lie elsewhere; owned::remove guards them.
    let dir = Resource::Dir {
        path: "/data/fsarena-run-1".into(),
    };
    assert_eq!(outside(&dir, d), None);
    // A tracing instance: only a name of fsarena's own form, never a path.
    let trace = |name: &str| Resource::Trace {
        instance: name.into(),
    };
    assert_eq!(outside(&trace("fsarena-41-2"), d), None);
    assert!(outside(&trace("../../tracing_on"), d).is_some());
    assert!(outside(&trace("someone-else"), d).is_some());
    assert!(!undo(&trace("fsarena-999999999-1")).unwrap());
}

#[test]
fn state_files_are_private_and_others_are_not_believed() {
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().canonicalize().unwrap().join("images");
    ensure_owned_dir(&img).unwrap();
    let st = State::create(&img.join("state"), "run1").unwrap();
    st.add(Resource::Image {
        path: img.join("gone.img"),
    })
    .unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o777;
    assert_eq!(mode(&img.join("state/run1.json")), 0o600);
    assert_eq!(mode(&img.join("state")), 0o700);
    // A group-writable state file is someone else's word: ignored, kept, said.
    let f = img.join("state/run1.json");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o620)).unwrap();
    std::fs::write(img.join("x.img"), b"x").unwrap();
    let lines = cleanup(&img).unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("ignored state file") && l.contains("writable by group or others")),
        "{lines:?}"
    );
    assert!(f.exists());
    // A symlinked state file likewise.
    std::fs::remove_file(&f).unwrap();
    let elsewhere = tmp.path().join("elsewhere.json");
    std::fs::write(&elsewhere, br#"{"pid":1,"run_id":"x","resources":[]}"#).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &f).unwrap();
    let lines = cleanup(&img).unwrap();
    assert!(
        lines.iter().any(|l| l.contains("ignored state file")),
        "{lines:?}"
    );
    // A group-writable state directory: none of its files is read.
    std::fs::set_permissions(img.join("state"), std::fs::Permissions::from_mode(0o770)).unwrap();
    let lines = cleanup(&img).unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("ignored the state directory")),
        "{lines:?}"
    );
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
