//! Unit tests of `provision::fs`.

use super::*;

#[test]
fn mkfs_argv_per_type() {
    let user = split_opts("-d agcount=120").unwrap();
    assert_eq!(
        FsType::Xfs.mkfs_argv("/dev/loop0", &user).join(" "),
        "mkfs.xfs -f -K -d agcount=120 /dev/loop0"
    );
    assert_eq!(
        FsType::Ext4.mkfs_argv("/dev/loop0", &[]).join(" "),
        "mkfs.ext4 -F -q -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 /dev/loop0"
    );
    assert_eq!(
        FsType::Btrfs.mkfs_argv("/dev/loop1", &[]).join(" "),
        "mkfs.btrfs -f -q -K /dev/loop1"
    );
}

#[test]
fn fsck_argv_is_read_only_per_type() {
    let line = |f: FsType| f.fsck_argv("/dev/loop3").unwrap().join(" ");
    assert_eq!(line(FsType::Ext4), "e2fsck -f -n /dev/loop3");
    assert_eq!(line(FsType::Ext2), "e2fsck -f -n /dev/loop3");
    assert_eq!(line(FsType::Xfs), "xfs_repair -n /dev/loop3");
    assert_eq!(line(FsType::Btrfs), "btrfs check --readonly /dev/loop3");
}

/// mke2fs finds `-J device=UUID=…` by blkid, and ext4 opens `journal_dev=2049` (8:1,
/// sda1) as its journal: devices named without a path.
#[test]
fn options_naming_a_device_by_tag_or_number_are_refused() {
    for bad in [
        "-J device=UUID=1234",
        "-J device=LABEL=journal",
        "-Jdevice=PARTUUID=ab-01",
        "-l logdev=partlabel=log",
    ] {
        let words = split_opts(bad).unwrap();
        assert!(refuse_paths(&words).is_err(), "{bad} accepted");
    }
    for bad in [
        "journal_dev=2049",
        "ro,journal_path=dev/sda1",
        "noatime,journal_dev=0x801",
    ] {
        assert!(refuse_paths(&[bad]).is_err(), "{bad} accepted");
    }
    assert_eq!(refuse_paths(&["-L", "data", "-U", "clear"]), Ok(()));
    assert_eq!(
        refuse_paths(&["journal_checksum,journal_async_commit"]),
        Ok(())
    );
}

#[test]
fn options_may_not_name_a_file_or_device() {
    for bad in [
        "/dev/loop1",
        "-l logdev=/dev/sdb",
        "-J device=/dev/sdc",
        "-E offset=0,journal_path=/x",
        "./img",
        "../../dev/sda",
        "/",
    ] {
        let words = split_opts(bad).unwrap();
        assert!(refuse_paths(&words).is_err(), "{bad} accepted");
    }
    assert!(refuse_paths(&["loop=/dev/loop3,ro"]).is_err());
    // A word that names an existing path (relative to the working directory).
    assert!(refuse_paths(&["src"]).is_err());
    for good in [
        "-d agcount=4 -i size=512",
        "-E nodiscard,stride=16 -O ^has_journal -L data",
        "-m 0 -T news",
        "--csum xxhash -n 32k",
    ] {
        let words = split_opts(good).unwrap();
        assert_eq!(refuse_paths(&words), Ok(()), "{good}");
    }
    assert_eq!(refuse_paths(&["noatime,data=writeback,commit=60"]), Ok(()));
}

/// Each registered type has a name of its own that parses back to it, and serializes
/// as its variant, as plan files and the database store it.
#[test]
fn every_type_parses_back_from_its_name() {
    for (i, f) in FsType::ALL.iter().enumerate() {
        assert_eq!(FsType::parse(f.name()), Ok(*f));
        assert!(!FsType::ALL[..i].iter().any(|g| g.name() == f.name()));
        assert!(!f.mkfs_program().is_empty() && !f.package().is_empty());
    }
    assert_eq!(FsType::ALL.len(), 13);
    assert_eq!(serde_json::to_string(&FsType::Ext4).unwrap(), "\"Ext4\"");
    assert_eq!(serde_json::to_string(&FsType::Vfat).unwrap(), "\"Vfat\"");
}

#[test]
fn parse_and_split() {
    assert_eq!(FsType::parse("btrfs"), Ok(FsType::Btrfs));
    assert!(FsType::parse("zfs")
        .unwrap_err()
        .contains("ext2, ext3, ext4, xfs, btrfs, f2fs, jfs"));
    assert_eq!(FsType::parse("ntfs"), Ok(FsType::Ntfs));
    assert_eq!(
        split_opts(" -L 'my label' -m 0 ").unwrap(),
        ["-L", "my label", "-m", "0"]
    );
    assert!(split_opts("-L 'x").is_err());
}

#[test]
fn mkfs_and_mount_of_the_newer_families() {
    let line = |f: FsType| f.mkfs_argv("/dev/loop2", &[]).join(" ");
    assert_eq!(line(FsType::F2fs), "mkfs.f2fs -f -q -t 0 /dev/loop2");
    assert_eq!(line(FsType::Jfs), "mkfs.jfs -q /dev/loop2");
    assert_eq!(line(FsType::Reiserfs), "mkfs.reiserfs -f -q /dev/loop2");
    assert_eq!(line(FsType::Vfat), "mkfs.vfat -F 32 /dev/loop2");
    assert_eq!(line(FsType::Exfat), "mkfs.exfat /dev/loop2");
    assert_eq!(line(FsType::Ntfs), "mkfs.ntfs -F -Q -q /dev/loop2");
    assert_eq!(line(FsType::Nilfs2), "mkfs.nilfs2 -f -q -K /dev/loop2");
    assert_eq!(line(FsType::Bcachefs), "mkfs.bcachefs -f /dev/loop2");
    assert_eq!(FsType::Ntfs.mount_type(), "ntfs-3g");
    assert_eq!(FsType::Vfat.mount_type(), "vfat");
    let fsck = |f: FsType| f.fsck_argv("/dev/loop2").map(|v| v.join(" "));
    assert_eq!(
        fsck(FsType::F2fs).unwrap(),
        "fsck.f2fs -f --dry-run /dev/loop2"
    );
    assert_eq!(fsck(FsType::Jfs).unwrap(), "jfs_fsck -n -f /dev/loop2");
    assert_eq!(
        fsck(FsType::Reiserfs).unwrap(),
        "reiserfsck --check --yes --quiet /dev/loop2"
    );
    assert_eq!(fsck(FsType::Vfat).unwrap(), "fsck.fat -n /dev/loop2");
    assert_eq!(fsck(FsType::Exfat).unwrap(), "fsck.exfat -n /dev/loop2");
    assert_eq!(fsck(FsType::Ntfs).unwrap(), "ntfsfix -n /dev/loop2");
    assert_eq!(
        fsck(FsType::Bcachefs).unwrap(),
        "bcachefs fsck -n /dev/loop2"
    );
    assert_eq!(fsck(FsType::Nilfs2), None);
    assert_eq!(FsType::Nilfs2.min_size_bytes(), 134_221_824);
    let defaults: Vec<_> = FsType::ALL
        .iter()
        .filter(|f| f.in_default_set())
        .map(|f| f.name())
        .collect();
    assert_eq!(defaults, ["ext2", "ext3", "ext4", "xfs", "btrfs"]);
}

/// The kernel this was written on: ext*, xfs, btrfs, FUSE; no module directory.
const PROC: &str = "nodev\ttmpfs\n\text4\n\txfs\n\tbtrfs\n\tfuseblk\nnodev\tfuse\n";

#[test]
fn detection_says_why_not() {
    let bare = FakeHost {
        filesystems: PROC,
        modules: "",
        programs: &["mkfs.ext4", "mkfs.f2fs", "losetup", "mount", "umount"],
    };
    assert_eq!(FsType::Ext4.support_on(&bare), Support::Yes);
    assert_eq!(
        FsType::F2fs.support_on(&bare),
        Support::No(
            "kernel 6.18.0-test has no f2fs (not in /proc/filesystems, no f2fs module)".into()
        )
    );
    assert_eq!(
        FsType::Jfs.support_on(&bare),
        Support::No(
            "kernel 6.18.0-test has no jfs (not in /proc/filesystems, no jfs module); \
             mkfs.jfs missing: apt-get install jfsutils"
                .into()
        )
    );
    assert_eq!(
        FsType::Ntfs.support_on(&bare),
        Support::No(
            "mkfs.ntfs missing: apt-get install ntfs-3g; \
             mount.ntfs-3g missing: apt-get install ntfs-3g"
                .into()
        )
    );
    assert_eq!(
        FsType::Xfs.fsck_support_on(&bare),
        Support::No("xfs_repair missing: apt-get install xfsprogs".into())
    );
    assert_eq!(
        FsType::Nilfs2.fsck_support_on(&bare),
        Support::No("nilfs2 has no read-only checker (nilfs-tools ships none)".into())
    );
}

#[test]
fn a_missing_losetup_or_mount_is_named_with_its_package() {
    // `env -i PATH=/usr/bin:/bin` on a system whose lookup stopped at PATH: mount
    // found, losetup (in /usr/sbin) not. Nothing that `list` calls possible may
    // then fail at run time for a missing program.
    let no_losetup = FakeHost {
        filesystems: PROC,
        modules: "",
        programs: &["mkfs.ext4", "mount", "umount"],
    };
    assert_eq!(
        FsType::Ext4.support_on(&no_losetup),
        Support::No("losetup missing: apt-get install mount".into())
    );
    assert_eq!(tmpfs_support_on(&no_losetup), Support::Yes);
    let bare = FakeHost {
        filesystems: "nodev\tproc\n\text4\n",
        modules: "",
        programs: &[],
    };
    assert_eq!(
        tmpfs_support_on(&bare),
        Support::No(
            "kernel 6.18.0-test has no tmpfs; mount missing: apt-get install mount; \
             umount missing: apt-get install mount"
                .into()
        )
    );
}

#[test]
fn a_loadable_module_is_support() {
    let modular = FakeHost {
        filesystems: PROC,
        modules: "kernel/fs/f2fs/f2fs.ko.zst: kernel/lib/lz4.ko\nkernel/fs/fat/vfat.ko:",
        programs: &[
            "mkfs.f2fs",
            "mkfs.vfat",
            "mkfs.ntfs",
            "mount.ntfs-3g",
            "losetup",
            "mount",
            "umount",
        ],
    };
    assert_eq!(FsType::F2fs.support_on(&modular), Support::Yes);
    assert_eq!(FsType::Vfat.support_on(&modular), Support::Yes);
    assert_eq!(FsType::Ntfs.support_on(&modular), Support::Yes);
    assert!(matches!(FsType::Exfat.support_on(&modular), Support::No(_)));
}
