//! Targets through the library: a loop filesystem is made, survives a cold reset (remount)
//! with its data, reports device counters, and is torn down completely; a cold reset of a
//! direct-I/O loop target makes its reads cold without dropping the machine's caches.

mod common;

use fsarena::provision::fs::FsType;
use fsarena::provision::{self, Env, TargetSpec};
use fsarena::state::State;
use std::sync::Arc;

fn env(dir: &std::path::Path) -> Env {
    Env {
        run_id: "t".into(),
        image_dir: dir.to_path_buf(),
        state: Arc::new(State::create(&dir.join("state"), "t").unwrap()),
    }
}

fn loop_lifecycle(fs: &str) {
    let test = format!("loop_lifecycle_{fs}");
    if common::skip_without_loop(&test) || !common::fs_available(&test, fs) {
        return;
    }
    let dir = common::image_dir();
    let spec = TargetSpec::Loop {
        fs: FsType::parse(fs).unwrap(),
        mkfs_opts: vec![],
        mount_opts: String::new(),
        size_bytes: 512 << 20,
    };
    let e = env(dir.path());
    let mut t = provision::build(&spec, &e);
    t.calibrate().unwrap();
    let rate = t.info().device_read_mb_per_s.unwrap();
    assert!(rate > 1.0, "device read rate {rate}");
    let buffered = t.info().device_buffered_read_mb_per_s.unwrap();
    assert!(buffered > 1.0, "device buffered read rate {buffered}");
    assert!(
        common::images_under(dir.path()).is_empty(),
        "calibration image removed"
    );
    let work = t.prepare().unwrap();
    assert!(t.info().loop_direct_io.is_some());
    assert_eq!(common::mounts_under(dir.path()).len(), 1);
    // Counted from before the write: ntfs-3g (FUSE) writes through, ext4 at the remount.
    let stat = t.device_stat().expect("loop device has sysfs stat");
    let before = fsarena::probe::sys::device_bytes(&stat).unwrap();
    std::fs::write(work.join("f"), vec![7u8; 1 << 20]).unwrap();
    t.reset().unwrap(); // sync + umount (+ drop caches without direct I/O) + mount
    let after = fsarena::probe::sys::device_bytes(&stat).unwrap();
    assert!(
        after.1 - before.1 >= 1 << 20,
        "the file reached the device by the end of the remount"
    );
    assert_eq!(
        std::fs::read(work.join("f")).unwrap().len(),
        1 << 20,
        "data survives the remount"
    );
    let p = t.provision();
    assert!(p.mkfs_s.unwrap() > 0.0 && p.mount_s.unwrap() > 0.0);
    assert!(p.free_bytes.unwrap() <= p.capacity_bytes.unwrap());
    // A second trial gets a fresh, empty filesystem.
    let work2 = t.prepare().unwrap();
    assert!(!work2.join("f").exists());
    t.teardown().unwrap();
    assert!(t.provision().umount_s.is_some());
    t.teardown().unwrap(); // idempotent
    drop(t);
    common::assert_clean(dir.path());
}

#[test]
fn ext2_lifecycle() {
    loop_lifecycle("ext2");
}

#[test]
fn ext3_lifecycle() {
    loop_lifecycle("ext3");
}

#[test]
fn ext4_lifecycle() {
    loop_lifecycle("ext4");
}

#[test]
fn xfs_lifecycle() {
    loop_lifecycle("xfs");
}

#[test]
fn btrfs_lifecycle() {
    loop_lifecycle("btrfs");
}

/// ntfs-3g over FUSE (fuseblk): mount through the `mount.ntfs-3g` helper, umount ends the
/// daemon, and the loop device detaches.
#[test]
fn ntfs_lifecycle() {
    loop_lifecycle("ntfs");
}

#[test]
fn rejected_mkfs_option_fails_with_mkfs_message_and_cleans_up() {
    let test = "rejected_mkfs_option_fails_with_mkfs_message_and_cleans_up";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let spec = TargetSpec::Loop {
        fs: FsType::Ext4,
        mkfs_opts: vec!["-O".into(), "no_such_feature".into()],
        mount_opts: String::new(),
        size_bytes: 256 << 20,
    };
    let e = env(dir.path());
    let mut t = provision::build(&spec, &e);
    let err = format!("{:#}", t.prepare().unwrap_err());
    assert!(
        err.contains("mkfs.ext4") && err.contains("no_such_feature"),
        "{err}"
    );
    t.teardown().unwrap();
    drop(t);
    common::assert_clean(dir.path());
}

#[test]
fn tmpfs_lifecycle() {
    if common::skip_without_loop("tmpfs_lifecycle") {
        return;
    }
    let dir = common::image_dir();
    let e = env(dir.path());
    let mut t = provision::build(
        &TargetSpec::Tmpfs {
            size_bytes: 64 << 20,
            mount_opts: String::new(),
        },
        &e,
    );
    let work = t.prepare().unwrap();
    std::fs::write(work.join("x"), b"y").unwrap();
    t.reset().unwrap();
    assert!(work.join("x").exists(), "tmpfs is not remounted by a reset");
    assert!(
        t.info().mount_opts.contains("size=65536k"),
        "{}",
        t.info().mount_opts
    );
    t.teardown().unwrap();
    drop(t);
    common::assert_clean(dir.path());
}

/// How many times anyone on this machine has written `/proc/sys/vm/drop_caches`
/// (`drop_pagecache` of `/proc/vmstat`).
fn drops() -> u64 {
    let text = std::fs::read_to_string("/proc/vmstat").unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("drop_pagecache "))
        .expect("drop_pagecache in /proc/vmstat")
        .parse()
        .unwrap()
}

#[test]
fn cold_reset_of_a_direct_io_loop_target_reads_from_the_device_and_keeps_other_caches() {
    let test = "cold_reset_of_a_direct_io_loop_target_reads_from_the_device_and_keeps_other_caches";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let spec = TargetSpec::Loop {
        fs: FsType::Ext4,
        mkfs_opts: vec![],
        mount_opts: String::new(),
        size_bytes: 256 << 20,
    };
    let e = env(dir.path());
    let mut t = provision::build(&spec, &e);
    let work = t.prepare().unwrap();
    if t.info().loop_direct_io != Some(true) {
        eprintln!("SKIP {test}: the loop device is not in direct-I/O mode here");
        t.teardown().unwrap();
        return;
    }
    let size = 8usize << 20;
    std::fs::write(work.join("f"), vec![5u8; size]).unwrap();
    let stat = t.device_stat().unwrap();
    let read_bytes = || fsarena::probe::sys::device_bytes(&stat).unwrap().0;
    // Other runs on this machine may drop caches during a reset: a try where nobody did
    // shows that the reset itself did not.
    let mut none_dropped = false;
    for _ in 0..20 {
        let drops_before = drops();
        t.reset().unwrap();
        let none = drops() == drops_before;
        let before = read_bytes();
        assert_eq!(std::fs::read(work.join("f")).unwrap().len(), size);
        let read = read_bytes() - before;
        assert!(
            read >= size as u64,
            "after the reset the file is read from the device: {read} of {size} bytes"
        );
        if none {
            none_dropped = true;
            break;
        }
    }
    assert!(none_dropped, "every reset came with a drop_caches");
    t.teardown().unwrap();
    drop(t);
    common::assert_clean(dir.path());
}
