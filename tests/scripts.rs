//! The install logic of the README's test command (`scripts/needs.sh`, which
//! `scripts/test.sh` installs from), run against fake root directories: on a fresh machine
//! it must ask for every package the suite needs, and never take a neighbour package's
//! file for the one the build loads.

use std::path::Path;
use std::process::Command;

/// The packages `scripts/needs.sh` says are missing under `root`.
fn needs(root: &Path) -> Vec<String> {
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/needs.sh"))
        .arg(root)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Creates `rel` under `root` (an empty executable file, or a symlink to `to`).
fn put(root: &Path, rel: &str, to: Option<&str>) {
    use std::os::unix::fs::PermissionsExt;
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    match to {
        Some(target) => std::os::unix::fs::symlink(target, &p).unwrap(),
        None => {
            std::fs::write(&p, b"").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
}

#[test]
fn libclang_cpp_is_not_libclang() {
    let root = tempfile::tempdir().unwrap();
    // What the fresh machine had: LLVM 14's libclang-cpp, and no libclang-dev.
    put(root.path(), "usr/lib/llvm-14/lib/libclang-cpp.so.14", None);
    put(
        root.path(),
        "usr/lib/x86_64-linux-gnu/libclang-cpp.so.14",
        None,
    );
    let need = needs(root.path());
    assert!(need.contains(&"libclang-dev".to_string()), "{need:?}");
    // The runtime library alone (libclang1-14) lacks what bindgen needs too.
    put(
        root.path(),
        "usr/lib/x86_64-linux-gnu/libclang-14.so.1",
        None,
    );
    put(
        root.path(),
        "usr/lib/llvm-14/lib/libclang.so.1",
        Some("../../x86_64-linux-gnu/libclang-14.so.1"),
    );
    assert!(needs(root.path()).contains(&"libclang-dev".to_string()));
    // libclang-14-dev's development link is what bindgen loads.
    put(
        root.path(),
        "usr/lib/llvm-14/lib/libclang.so",
        Some("../../x86_64-linux-gnu/libclang-14.so.1"),
    );
    assert!(!needs(root.path()).contains(&"libclang-dev".to_string()));
}

#[test]
fn a_bare_root_needs_every_package_and_a_full_one_none() {
    let root = tempfile::tempdir().unwrap();
    let all = [
        "xfsprogs",
        "btrfs-progs",
        "e2fsprogs",
        "mount",
        "bonnie++",
        "chromium",
        "ntfs-3g",
        "sshfs",
        "openssh-server",
        "openmpi-bin",
        "libopenmpi-dev",
        "strace",
        "qemu-system-x86",
        "busybox-static",
        "jfsutils",
        "dosfstools",
        "reiserfsprogs",
        "f2fs-tools",
        "nilfs-tools",
        "exfatprogs",
        "iproute2",
        "util-linux",
        "libclang-dev",
        "python3-fuse",
        "python3-venv",
        "linux-image-amd64",
        "nfs-kernel-server",
        "rpcbind",
        "nfs-common",
        "samba",
        "cifs-utils",
        "fio",
        "python3-six",
        "rocksdb-tools",
        "postgresql",
        "eatmydata",
    ];
    let need = needs(root.path());
    for p in all {
        assert!(need.contains(&p.to_string()), "{p} missing from {need:?}");
    }
    assert_eq!(need.len(), all.len(), "{need:?}");
    for (dir, prog) in [
        ("sbin", "mkfs.ext4"),
        ("usr/sbin", "mkfs.xfs"),
        ("usr/sbin", "mkfs.btrfs"),
        ("usr/sbin", "losetup"),
        ("usr/sbin", "bon_csv2html"),
        ("usr/bin", "chromium"),
        ("usr/sbin", "mkntfs"),
        ("usr/bin", "sshfs"),
        ("usr/sbin", "sshd"),
        ("usr/bin", "mpirun"),
        ("usr/bin", "mpicc"),
        ("usr/bin", "strace"),
        ("usr/bin", "qemu-system-x86_64"),
        ("bin", "busybox"),
        ("usr/sbin", "mkfs.jfs"),
        ("usr/sbin", "mkfs.vfat"),
        ("usr/sbin", "mkfs.reiserfs"),
        ("usr/sbin", "mkfs.f2fs"),
        ("usr/sbin", "mkfs.nilfs2"),
        ("usr/sbin", "mkfs.exfat"),
        ("usr/lib/python3.11/ensurepip", "__init__.py"),
        ("boot", "vmlinuz-6.1.0-56-amd64"),
        ("usr/sbin", "ip"),
        ("usr/bin", "nsenter"),
        ("usr/sbin", "exportfs"),
        ("sbin", "rpcbind"),
        ("sbin", "mount.nfs"),
        ("usr/sbin", "smbd"),
        ("sbin", "mount.cifs"),
        ("usr/bin", "fio"),
        ("usr/bin", "db_bench"),
        ("usr/lib/postgresql/15/bin", "postgres"),
        ("usr/bin", "eatmydata"),
    ] {
        put(root.path(), &format!("{dir}/{prog}"), None);
    }
    put(
        root.path(),
        "usr/lib/x86_64-linux-gnu/libclang-16.so",
        Some("libclang-16.so.1"),
    );
    put(
        root.path(),
        "usr/lib/x86_64-linux-gnu/libclang-16.so.1",
        None,
    );
    put(root.path(), "usr/lib/python3/dist-packages/fuse.py", None);
    put(root.path(), "usr/lib/python3/dist-packages/six.py", None);
    assert_eq!(needs(root.path()), Vec::<String>::new());
    // A directory of that name is not the program.
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("usr/sbin/mkfs.xfs")).unwrap();
    assert!(needs(root.path()).contains(&"xfsprogs".to_string()));
}
