//! Block-device targets, with loop devices standing in for disks: every interlock refuses
//! with a message saying what it found and leaves the data intact (the backing file is
//! checksummed before and after); a blank device named twice is formatted, used and left
//! attached, unmounted. Needs root and loop devices; prints SKIP otherwise.

mod common;

use common::disk::{mkfs_ext4, scopeguard, sh, sh_out, wait_for, LoopDisk, RoMount};

use std::path::{Path, PathBuf};
use std::process::Command;

fn skip(test: &str) -> bool {
    common::skip_without_loop(test) || !common::fs_available(test, "ext4")
}

/// Runs `fsarena run` with a tiny workload on `args`; returns (success, stderr+stdout).
fn fsarena(args: &[&str], image_dir: &Path) -> (bool, String) {
    let out = Command::new(common::bin())
        .args([
            "run",
            "bonnie:size=8MiB,chunk=8KiB,seeks=100,seekers=1",
            "--reps",
            "1",
            "--quiet",
        ])
        .args(args)
        .arg("--image-dir")
        .arg(image_dir)
        .arg("--db")
        .arg(image_dir.join("results.db"))
        .arg("--json")
        .arg(image_dir.join("out.json"))
        .output()
        .unwrap();
    (out.status.success(), text_of(&out))
}

/// A command's stderr then stdout, as text.
fn text_of(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    )
}

/// `--device DEV --destroy-data-on DEV --fs ext4` and then `extra`: a device named twice.
fn named_twice<'a>(dev: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["--device", dev, "--destroy-data-on", dev, "--fs", "ext4"];
    v.extend_from_slice(extra);
    v
}

/// Asserts that fsarena refuses `args` with exit code 2 (nothing touched) and a message
/// containing every one of `expect`, and that `disk`'s bytes did not change.
fn assert_refused(disk: &LoopDisk, args: &[&str], expect: &[&str]) {
    assert_refused_keeping(disk, args, expect, LoopDisk::checksum);
}

/// [`assert_refused`], with `sum` saying what of the device must not change.
fn assert_refused_keeping(
    disk: &LoopDisk,
    args: &[&str],
    expect: &[&str],
    sum: fn(&LoopDisk) -> u64,
) {
    let before = sum(disk);
    let img = common::image_dir();
    let out = Command::new(common::bin())
        .args(["run", "bonnie:size=8MiB", "--reps", "1", "--quiet"])
        .args(args)
        .arg("--image-dir")
        .arg(img.path())
        .arg("--db")
        .arg(img.path().join("results.db"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    for e in expect {
        assert!(err.contains(e), "{args:?}: expected '{e}' in: {err}");
    }
    assert_eq!(sum(disk), before, "the device's data changed");
    assert!(disk.attached());
}

#[test]
fn a_device_not_named_by_destroy_data_on_is_refused() {
    if skip("a_device_not_named_by_destroy_data_on_is_refused") {
        return;
    }
    let disk = LoopDisk::new(64);
    let other = LoopDisk::new(64);
    let d = disk.dev.as_str();
    assert_refused(
        &disk,
        &["--device", d, "--fs", "ext4"],
        &["is not named by --destroy-data-on", "--destroy-data-on"],
    );
    assert_refused(
        &disk,
        &[
            "--device",
            d,
            "--destroy-data-on",
            &other.dev,
            "--fs",
            "ext4",
        ],
        &[&format!(
            "--destroy-data-on {}: no --device names it",
            other.dev
        )],
    );
    assert_refused(
        &disk,
        &[
            "--device",
            &format!("{d},{}", other.dev),
            "--destroy-data-on",
            &other.dev,
            "--fs",
            "ext4",
        ],
        &[&format!("{d} is not named by --destroy-data-on")],
    );
}

#[test]
fn a_device_carrying_a_filesystem_is_refused_without_force() {
    if skip("a_device_carrying_a_filesystem_is_refused_without_force") {
        return;
    }
    let disk = LoopDisk::new(64);
    mkfs_ext4(&disk.dev, "precious");
    let d = disk.dev.as_str();
    assert_refused(
        &disk,
        &named_twice(d, &[]),
        &[
            &format!("{d} holds an ext4 filesystem (blkid: TYPE=ext4, UUID="),
            "LABEL=precious",
            "pass --force to destroy it",
        ],
    );
}

#[test]
fn a_device_with_two_signatures_is_refused_without_force_and_formatted_with_it() {
    let test = "a_device_with_two_signatures_is_refused_without_force";
    if skip(test) || !common::fs_available(test, "xfs") {
        return;
    }
    // An xfs filesystem with an ext4 superblock over its second KiB: `blkid -p` calls
    // this "ambivalent" and exits 8 instead of naming one filesystem.
    let disk = LoopDisk::new(300);
    let d = disk.dev.as_str();
    common::disk::sh("mkfs.xfs", &["-q", "-f", d]);
    let ext4 = LoopDisk::new(64);
    mkfs_ext4(&ext4.dev, "other");
    let sb = &std::fs::read(&ext4.file).unwrap()[1024..2048];
    common::disk::sh("sync", &[]);
    {
        use std::io::{Seek, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(d).unwrap();
        f.seek(std::io::SeekFrom::Start(1024)).unwrap();
        f.write_all(sb).unwrap();
        f.sync_all().unwrap();
    }
    assert_refused(
        &disk,
        &named_twice(d, &[]),
        &[
            &format!("{d} holds signatures (wipefs: "),
            "xfs at 0x0",
            "ext4 at 0x438",
            "pass --force to destroy it",
        ],
    );
    // --force overrides signatures, these as well as one.
    use fsarena::provision::blockdev::{interlock, sysfs};
    let dev = sysfs::resolve(Path::new(d)).unwrap();
    assert!(interlock::blank_or_forced(&dev, false).is_err());
    assert_eq!(interlock::blank_or_forced(&dev, true), Ok(()));
}

#[test]
fn a_mounted_device_is_refused_even_with_force() {
    if skip("a_mounted_device_is_refused_even_with_force") {
        return;
    }
    let disk = LoopDisk::new(64);
    mkfs_ext4(&disk.dev, "mounted");
    let d = disk.dev.as_str();
    let m = RoMount::new(d);
    assert_refused(
        &disk,
        &named_twice(d, &["--force"]),
        &[
            &format!("{d} is in use: it is mounted at {}", m.dir.path().display()),
            "unmount it first",
        ],
    );
    drop(m);
}

#[test]
fn a_partition_whose_sibling_is_mounted_is_refused_and_a_table_needs_force() {
    let test = "a_partition_whose_sibling_is_mounted_is_refused_and_a_table_needs_force";
    if skip(test) {
        return;
    }
    let disk = LoopDisk::partitioned(64);
    let (p1, p2) = (format!("{}p1", disk.dev), format!("{}p2", disk.dev));
    if !wait_for(&p2) {
        // Some kernels scan no DOS tables themselves; partx adds them with BLKPG.
        let _ = Command::new("partx").args(["-a", &disk.dev]).status();
    }
    if !wait_for(&p1) || !wait_for(&p2) {
        eprintln!("SKIP {test}: neither losetup -P nor partx -a made partition nodes");
        return;
    }
    let d = disk.dev.as_str();
    assert_refused(
        &disk,
        &named_twice(d, &[]),
        &[&format!(
            "{d} holds a dos partition table (blkid: PTTYPE=dos"
        )],
    );
    mkfs_ext4(&p2, "sibling");
    let m = RoMount::new(&p2);
    assert_refused(
        &disk,
        &named_twice(&p1, &[]),
        &[&format!(
            "{p1} is in use: {p2} (another partition of the same disk) is mounted at {}",
            m.dir.path().display()
        )],
    );
    assert_refused(
        &disk,
        &named_twice(d, &["--force"]),
        &[&format!("{d} is in use: its partition {p2} is mounted")],
    );
    drop(m);
}

#[test]
fn the_device_holding_the_image_dir_is_refused() {
    if skip("the_device_holding_the_image_dir_is_refused") {
        return;
    }
    let disk = LoopDisk::new(64);
    mkfs_ext4(&disk.dev, "images");
    let d = disk.dev.as_str();
    let m = RoMount::new(d);
    let before = disk.checksum();
    let images = m.dir.path().join("fsarena-images");
    let out = Command::new(common::bin())
        .args([
            "run",
            "bonnie:size=8MiB",
            "--quiet",
            "--force",
            "--fs",
            "ext4",
        ])
        .args(["--device", d, "--destroy-data-on", d, "--image-dir"])
        .arg(&images)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{d} holds fsarena's image directory {}",
            images.display()
        )),
        "{err}"
    );
    drop(m);
    assert_eq!(disk.checksum(), before);
}

#[test]
fn a_device_backing_a_loop_device_is_refused() {
    if skip("a_device_backing_a_loop_device_is_refused") {
        return;
    }
    let disk = LoopDisk::new(64);
    let d = disk.dev.as_str();
    let upper = sh_out("losetup", &["-f", "--show", d]);
    let upper_name = upper.trim_start_matches("/dev/").to_string();
    let detach = scopeguard(move || {
        let _ = Command::new("losetup").args(["-d", &upper]).status();
    });
    assert_refused(
        &disk,
        &named_twice(d, &[]),
        &[&format!(
            "{d} is in use: it backs loop device /dev/{upper_name}"
        )],
    );
    drop(detach);
}

#[test]
fn active_swap_is_refused() {
    let test = "active_swap_is_refused";
    if skip(test) {
        return;
    }
    let disk = LoopDisk::new(64);
    let d = disk.dev.as_str();
    sh("mkswap", &["-q", d]);
    if !Command::new("swapon")
        .arg(d)
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("SKIP {test}: swapon {d} failed here");
        return;
    }
    let dev = d.to_string();
    let off = scopeguard(move || {
        let _ = Command::new("swapoff").arg(&dev).status();
    });
    // The kernel may swap pages out to it meanwhile: only its header must stay.
    assert_refused_keeping(
        &disk,
        &named_twice(d, &["--force"]),
        &[&format!("{d} is in use: it is active swap")],
        LoopDisk::header_checksum,
    );
    drop(off);
}

#[test]
fn a_device_under_device_mapper_is_refused() {
    let test = "a_device_under_device_mapper_is_refused";
    if skip(test) {
        return;
    }
    let disk = LoopDisk::new(64);
    let d = disk.dev.as_str();
    let name = format!("fsarena-test-{}", std::process::id());
    let table = format!("0 {} linear {d} 0", 64 * 2048);
    let made = Command::new("dmsetup")
        .args(["create", &name, "--table", &table])
        .output();
    if !made.as_ref().is_ok_and(|o| o.status.success()) {
        let why = made.map_or_else(
            |e| e.to_string(),
            |o| {
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string()
            },
        );
        eprintln!("SKIP {test}: no device mapper here (dmsetup create: {why})");
        return;
    }
    let n = name.clone();
    let remove = scopeguard(move || {
        let _ = Command::new("dmsetup").args(["remove", &n]).status();
    });
    assert_refused(
        &disk,
        &named_twice(d, &["--force"]),
        &[
            &format!("{d} is part of an md/LVM/dm stack: /dev/dm-"),
            &format!("(built on {d})"),
        ],
    );
    drop(remove);
}

/// The end-to-end checks shared by the blank and the forced run.
fn runs_end_to_end(disk: &LoopDisk, device_arg: &str, extra: &[&str]) {
    let img = common::image_dir();
    let d = disk.dev.as_str();
    let mut args = vec![
        "--device",
        device_arg,
        "--destroy-data-on",
        d,
        "--fs",
        "ext4",
    ];
    args.extend(extra);
    let (ok, text) = fsarena(&args, img.path());
    let name = format!("ext4@{}", d.trim_start_matches("/dev/"));
    assert!(ok, "{text}");
    assert!(text.contains(&name), "{text}");
    assert!(common::mounts_under(img.path()).is_empty(), "left mounted");
    let mounted = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounted.contains(&format!(" {d} ")), "{d} left mounted");
    assert!(disk.attached(), "the device must stay attached");
    assert!(
        disk.file.exists(),
        "the device's backing file is never deleted"
    );
    let v: serde_json::Value =
        common::run_document(&std::fs::read(img.path().join("out.json")).unwrap());
    let t = &v["targets"][0];
    assert_eq!(t["name"], name.as_str(), "{t}");
    assert_eq!(t["kind"], "device", "{t}");
    assert_eq!(t["path"], d, "{t}");
    for rate in ["device_read_mb_per_s", "device_buffered_read_mb_per_s"] {
        assert!(t[rate].as_f64().unwrap() > 0.0, "calibrated: {t}");
    }
    let found = sh_out("blkid", &["-p", "-o", "value", "-s", "TYPE", d]);
    assert_eq!(found, "ext4", "fsarena's filesystem is left on the device");
}

#[test]
fn a_blank_device_named_twice_runs_end_to_end() {
    if skip("a_blank_device_named_twice_runs_end_to_end") {
        return;
    }
    let disk = LoopDisk::new(160);
    // Named through a symlink, as /dev/disk/by-id/… would be; confirmed by its node.
    let links = tempfile::tempdir().unwrap();
    let link = links.path().join("by-id-disk");
    std::os::unix::fs::symlink(&disk.dev, &link).unwrap();
    runs_end_to_end(&disk, link.to_str().unwrap(), &[]);
}

#[test]
fn force_formats_over_an_existing_filesystem() {
    if skip("force_formats_over_an_existing_filesystem") {
        return;
    }
    let disk = LoopDisk::new(160);
    mkfs_ext4(&disk.dev, "old");
    runs_end_to_end(&disk, &disk.dev.clone(), &["--force", "--cache", "keep"]);
    let label = sh_out("blkid", &["-p", "-o", "value", "-s", "LABEL", &disk.dev]);
    assert_ne!(label, "old", "the old filesystem was replaced");
}

#[test]
fn device_flags_are_checked_before_anything_else() {
    let img = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(common::bin())
            .args(["run", "bonnie:size=8MiB", "--image-dir"])
            .arg(img.path())
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = run(&["--fs", "ext4", "--force"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("only go with --device"), "{err}");
    let (code, err) = run(&["--device", "/dev/null", "--fs", "ext4,xfs"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("exactly one filesystem"), "{err}");
    let (code, err) = run(&["--device", "/dev/null"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("exactly one filesystem"), "{err}");
}

#[test]
fn interlocks_are_checked_again_right_before_mkfs() {
    if skip("interlocks_are_checked_again_right_before_mkfs") {
        return;
    }
    use fsarena::provision::{blockdev, fs::FsType, Env, Target};
    let disk = LoopDisk::new(64);
    let img = common::image_dir();
    let consent = blockdev::Consent {
        destroy_data_on: vec![PathBuf::from(&disk.dev)],
        force: false,
        image_dir: img.path().to_path_buf(),
        db: None,
    };
    let spec = blockdev::device_spec(
        Path::new(&disk.dev),
        FsType::Ext4,
        vec![],
        String::new(),
        &consent,
    )
    .unwrap();
    // Between the plan and the trial, someone puts a filesystem on it and mounts it.
    mkfs_ext4(&disk.dev, "late");
    let m = RoMount::new(&disk.dev);
    let before = disk.checksum();
    let env = Env {
        run_id: "t".into(),
        image_dir: img.path().to_path_buf(),
        state: std::sync::Arc::new(
            fsarena::state::State::create(&img.path().join("state"), "t").unwrap(),
        ),
    };
    let mut t = blockdev::BlockTarget::new(&spec, &env);
    let err = format!("{:#}", t.prepare().unwrap_err());
    assert!(err.contains("is mounted at"), "{err}");
    drop(m);
    let err = format!("{:#}", t.prepare().unwrap_err());
    assert!(err.contains("holds an ext4 filesystem"), "{err}");
    t.teardown().unwrap();
    assert_eq!(disk.checksum(), before);
}

#[test]
fn a_plan_files_device_target_needs_the_same_consent_and_runs() {
    if skip("a_plan_files_device_target_needs_the_same_consent_and_runs") {
        return;
    }
    let disk = LoopDisk::new(160);
    let d = disk.dev.as_str();
    let img = common::image_dir();
    let plan = img.path().join("disk.toml");
    std::fs::write(
        &plan,
        format!(
            "[defaults]\nreps = 1\n\n[[target]]\ndevice = \"{d}\"\nfs = \"ext4\"\n\
             mount = \"noatime\"\n\n[[workload]]\nkind = \"bonnie\"\nsize = \"8MiB\"\n\
             chunk = \"8KiB\"\nseeks = 100\nseekers = 1\n"
        ),
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let out = Command::new(common::bin())
            .args(["run", "--quiet", "--plan"])
            .arg(&plan)
            .args(extra)
            .arg("--image-dir")
            .arg(img.path())
            .arg("--db")
            .arg(img.path().join("results.db"))
            .arg("--json")
            .arg(img.path().join("out.json"))
            .output()
            .unwrap();
        (out.status.code(), text_of(&out))
    };
    // `plan check` is given no consent: a warning at the entry's location, nothing touched.
    let before = disk.checksum();
    let out = Command::new(common::bin())
        .args(["plan", "check"])
        .arg(&plan)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    // The warning is wrapped at 80 columns, between any two words.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&format!("disk.toml:5:10: device {d}: refused")),
        "{text}"
    );
    // `run` without --destroy-data-on, or naming another device: refused, data intact.
    let (code, text) = run(&[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("--destroy-data-on"), "{text}");
    let (code, text) = run(&["--destroy-data-on", "/dev/null"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("no device target of plan"), "{text}");
    assert_eq!(disk.checksum(), before, "the device's data changed");
    // Confirmed: formatted with the plan's filesystem and mount options, and left unmounted.
    let (code, text) = run(&["--destroy-data-on", d]);
    assert_eq!(code, Some(0), "{text}");
    let v: serde_json::Value =
        common::run_document(&std::fs::read(img.path().join("out.json")).unwrap());
    let t = &v["targets"][0];
    let name = format!("ext4@{}", d.trim_start_matches("/dev/"));
    assert_eq!(t["name"], name.as_str(), "{t}");
    assert_eq!(t["kind"], "device", "{t}");
    assert!(t.to_string().contains("noatime"), "{t}");
    assert!(common::mounts_under(img.path()).is_empty(), "left mounted");
    assert!(disk.attached(), "the device must stay attached");
    let found = sh_out("blkid", &["-p", "-o", "value", "-s", "TYPE", d]);
    assert_eq!(found, "ext4");
}
