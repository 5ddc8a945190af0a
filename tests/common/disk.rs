//! Loop devices standing in for disks, for the block-device tests: a fresh backing file,
//! checksummed; read-only mounts that change no byte; a hand-written partition table.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A loop device over a fresh file in its own temp dir; detached when dropped.
pub struct LoopDisk {
    _dir: tempfile::TempDir,
    pub file: PathBuf,
    pub dev: String,
}

impl LoopDisk {
    /// A blank device of `size_mib`.
    pub fn new(size_mib: u64) -> LoopDisk {
        Self::make(size_mib, false)
    }

    /// A device of `size_mib` with two partitions, attached with `losetup -P`.
    pub fn partitioned(size_mib: u64) -> LoopDisk {
        Self::make(size_mib, true)
    }

    fn make(size_mib: u64, partitioned: bool) -> LoopDisk {
        let dir = super::image_dir();
        let file = dir.path().join("disk.img");
        let f = std::fs::File::create(&file).unwrap();
        f.set_len(size_mib << 20).unwrap();
        drop(f);
        let mut args = vec!["-f", "--show"];
        if partitioned {
            write_two_partitions(&file);
            args.push("-P");
        }
        let dev = sh_out("losetup", &[&args[..], &[file.to_str().unwrap()]].concat());
        LoopDisk {
            _dir: dir,
            file,
            dev,
        }
    }

    /// A hash of the backing file's bytes.
    pub fn checksum(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        sh("sync", &[]);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::fs::read(&self.file).unwrap().hash(&mut h);
        h.finish()
    }

    /// A hash of the first 4 KiB only: for an active swap area, whose header (page 0) the
    /// kernel never rewrites while it may write any other page, and which mkfs overwrites.
    pub fn header_checksum(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        sh("sync", &[]);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::fs::read(&self.file).unwrap()[..4096].hash(&mut h);
        h.finish()
    }

    /// Whether the device is still attached to its file.
    pub fn attached(&self) -> bool {
        let name = self.dev.trim_start_matches("/dev/");
        std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
            .is_ok_and(|b| b.trim() == self.file.to_str().unwrap())
    }
}

impl Drop for LoopDisk {
    fn drop(&mut self) {
        let _ = fsarena::state::detach_loop(&self.dev, &self.file);
    }
}

/// A temporary mount of `dev`, read-only without journal replay (so mounting changes no
/// byte of it); unmounted when dropped.
pub struct RoMount {
    pub dir: tempfile::TempDir,
}

impl RoMount {
    pub fn new(dev: &str) -> RoMount {
        let dir = super::image_dir();
        sh(
            "mount",
            &["-o", "ro,noload", dev, dir.path().to_str().unwrap()],
        );
        RoMount { dir }
    }
}

impl Drop for RoMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

pub fn sh(prog: &str, args: &[&str]) {
    let out = Command::new(prog).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{prog} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn sh_out(prog: &str, args: &[&str]) -> String {
    let out = Command::new(prog).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{prog} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn mkfs_ext4(dev: &str, label: &str) {
    sh("mkfs.ext4", &["-q", "-F", "-L", label, dev]);
}

/// Writes a DOS partition table with two primary Linux partitions to `file` (what
/// `sfdisk` would write; done by hand so the test needs no fdisk package).
pub fn write_two_partitions(file: &Path) {
    use std::io::{Seek, SeekFrom, Write};
    let mut mbr = [0u8; 512];
    let parts = [(2048u32, 40960u32), (43008u32, 40960u32)];
    for (i, (start, len)) in parts.iter().enumerate() {
        let e = &mut mbr[446 + 16 * i..446 + 16 * (i + 1)];
        e[4] = 0x83;
        e[8..12].copy_from_slice(&start.to_le_bytes());
        e[12..16].copy_from_slice(&len.to_le_bytes());
    }
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    let mut f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.seek(SeekFrom::Start(0)).unwrap();
    f.write_all(&mbr).unwrap();
}

/// Waits up to 2 s for a device node to appear.
pub fn wait_for(node: &str) -> bool {
    for _ in 0..40 {
        if Path::new(node).exists() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}

/// Runs `f` when dropped (also when the test panics).
pub fn scopeguard<F: FnOnce()>(f: F) -> impl Drop {
    struct G<F: FnOnce()>(Option<F>);
    impl<F: FnOnce()> Drop for G<F> {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f()
            }
        }
    }
    G(Some(f))
}
