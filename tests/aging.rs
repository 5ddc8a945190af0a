//! `run --age` from the command line on real loop filesystems: a run killed with `kill -9`
//! while it ages, or while it keeps the aged image, leaves nothing `fsarena cleanup` cannot
//! remove; an image directory too small for the kept copy is a clear error and leaks
//! nothing; `--age both` reports fresh and aged side by side; `--age PROFILE:independent`
//! ages each repetition from its own recorded seed.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Whether fsarena's mount of a target named `ext4+aged` is up under `dir`.
fn mounted(dir: &Path) -> bool {
    common::mounts_under(dir)
        .iter()
        .any(|m| m.ends_with("ext4+aged"))
}

/// A kept image or its record being written under `dir` (`aged/.NAME.PID.img.tmp`).
fn keeping(dir: &Path) -> bool {
    std::fs::read_dir(dir.join("aged"))
        .map(|rd| {
            rd.flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        })
        .unwrap_or(false)
}

/// Starts `fsarena run dbrandom --fs ext4 --age …` in `dir`, waits until `when` says the
/// moment has come, `kill -9`s it, then runs `fsarena cleanup` and checks nothing is left:
/// no mount, loop device, trial image, record, or half-kept image.
fn kill_9_when(test: &str, size: &str, age: &str, when: fn(&Path) -> bool) {
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let mut child = Command::new(common::bin())
        .args([
            "run",
            "dbrandom:files=1,scale=1",
            "--fs",
            "ext4",
            "--size",
            size,
        ])
        .args(["--age", age, "--reps", "2", "--quiet"])
        .arg("--image-dir")
        .arg(dir.path())
        .arg("--db")
        .arg(dir.path().join("results.db"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !when(dir.path()) {
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "{test}: the moment never came"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "{test}: the run ended early"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("kill -9");
    child.wait().unwrap();
    let out = common::cleanup(dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{test}: cleanup failed: {text}");
    common::assert_clean(dir.path());
    common::assert_no_records(dir.path());
    assert!(
        !keeping(dir.path()),
        "{test}: a half-kept image is left: {text}"
    );
    // What was kept whole, if anything, goes with --aged.
    let out = Command::new(common::bin())
        .args(["cleanup", "--aged", "--image-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let left: Vec<_> = std::fs::read_dir(dir.path().join("aged"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name())
                .filter(|n| !n.to_string_lossy().starts_with(".fsarena"))
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "{test}: {left:?}");
}

#[test]
fn kill_9_while_aging_then_cleanup_leaves_nothing() {
    // Mounted and aging: half a second into the mount, with 2 × 1 GiB to write.
    kill_9_when(
        "kill_9_while_aging_then_cleanup_leaves_nothing",
        "1GiB",
        "desktop:fill=60,churn=2",
        |d| {
            let up = mounted(d);
            if up {
                std::thread::sleep(Duration::from_millis(500));
            }
            up
        },
    );
}

#[test]
fn kill_9_while_keeping_the_aged_image_then_cleanup_leaves_nothing() {
    kill_9_when(
        "kill_9_while_keeping_the_aged_image_then_cleanup_leaves_nothing",
        "1GiB",
        "desktop:fill=30,churn=0.3",
        keeping,
    );
}

/// An image directory with room for the trial's image but not for the kept copy: the run
/// is refused before it starts when it can tell, and a copy that runs out of room half way
/// is a failed trial that says why and leaves nothing behind.
#[test]
fn a_full_image_directory_while_keeping_is_a_clear_error() {
    let test = "a_full_image_directory_while_keeping_is_a_clear_error";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    // A tmpfs of 700 MiB as the image directory: a 256 MiB image and its kept copy fit
    // (with the 64 MiB margin), not once 200 MiB more are taken.
    let base = common::image_dir();
    let dir = base.path().join("small");
    std::fs::create_dir(&dir).unwrap();
    let status = Command::new("mount")
        .args([
            "-t",
            "tmpfs",
            "-o",
            "size=700m,mode=0755",
            "fsarena-test-full",
        ])
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    let _unmount = common::disk::scopeguard({
        let dir = dir.clone();
        move || {
            let _ = Command::new("umount").arg(&dir).status();
        }
    });
    let filler = dir.join("filler");
    let fill = |mib: u32| {
        let ok = Command::new("fallocate")
            .args(["-l", &format!("{mib}m")])
            .arg(&filler)
            .status()
            .unwrap();
        assert!(ok.success());
    };
    let args = [
        "dbrandom:files=1,scale=1",
        "--fs",
        "ext4",
        "--size",
        "256MiB",
        "--age",
        "desktop:fill=50,churn=1",
        "--reps",
        "1",
    ];
    // Refused up front: the check before the run counts the kept image.
    fill(200);
    let out = common::run_any(&args, &dir);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("--age-cache off"), "{}", out.stderr);
    std::fs::remove_file(&filler).unwrap();
    // Passed, then the directory fills while the filesystem ages: the copy fails.
    let racer = std::thread::spawn({
        let dir = dir.clone();
        move || {
            let t = Instant::now();
            while common::mounts_under(&dir.join("mnt")).is_empty()
                && t.elapsed() < Duration::from_secs(60)
            {
                std::thread::sleep(Duration::from_millis(2));
            }
            Command::new("fallocate")
                .args(["-l", "300m"])
                .arg(dir.join("filler"))
                .status()
                .unwrap()
                .success()
        }
    });
    let out = common::run_any(&args, &dir);
    assert!(racer.join().unwrap(), "the filler was not written");
    std::fs::remove_file(&filler).unwrap();
    assert_eq!(out.code, Some(1), "{}\n{}", out.stderr, out.stdout);
    let v = out.json.expect("json");
    let error = v["trials"][0]["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(error.contains("keeping the aged image"), "{error}");
    assert!(error.contains("No space left"), "{error}");
    // The tmpfs itself is mounted at `dir`: what fsarena mounts lies in `dir/mnt`.
    assert_eq!(common::mounts_under(&dir.join("mnt")), Vec::<String>::new());
    assert_eq!(common::loops_under(&dir), Vec::<String>::new());
    assert_eq!(common::images_under(&dir), Vec::<std::path::PathBuf>::new());
    common::assert_no_records(&dir);
    assert!(!keeping(&dir), "a half-kept image is left");
}

/// `independent`: each repetition's filesystem is aged anew from a seed of its own (the
/// first from the run's), recorded in the JSON with the trial, and each repetition keeps
/// its own aged image.
#[test]
fn independent_aging_ages_each_repetition_from_its_own_seed() {
    let test = "independent_aging_ages_each_repetition_from_its_own_seed";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let (v, _) = common::run_json(
        &[
            "dbrandom:files=1,scale=1",
            "--fs",
            "ext4",
            "--size",
            "256MiB",
            "--age",
            "desktop:fill=30,churn=0.3,independent",
            "--reps",
            "2",
            "--quiet",
        ],
        dir.path(),
    );
    let run_seed = v["policy"]["seed"].as_u64().expect("the run's seed");
    let mut by_rep: Vec<(u64, u64)> = v["trials"]
        .as_array()
        .expect("trials")
        .iter()
        .map(|t| {
            let aging = &t["provision"]["aging"];
            assert_eq!(aging["reused"], false, "aged anew: {aging}");
            assert_eq!(aging["spec"], "desktop:fill=30,churn=0.3,independent");
            assert!(aging["operations"].as_u64().unwrap_or(0) > 0, "{aging}");
            let seed = aging["seed"].as_u64().expect("a recorded seed");
            (t["rep"].as_u64().expect("rep"), seed)
        })
        .collect();
    by_rep.sort_unstable();
    assert_eq!(by_rep.len(), 2, "{by_rep:?}");
    assert_eq!(
        by_rep[0],
        (1, run_seed),
        "the first repetition ages from the run's seed"
    );
    assert_eq!(by_rep[1].0, 2);
    assert_ne!(by_rep[1].1, run_seed, "the second ages from its own seed");
    let kept: Vec<String> = std::fs::read_dir(dir.path().join("aged"))
        .expect("kept images")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".img"))
        .collect();
    assert_eq!(kept.len(), 2, "one kept image per repetition: {kept:?}");
    common::assert_clean(dir.path());
}
