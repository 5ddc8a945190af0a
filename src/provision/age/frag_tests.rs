//! Tests of [`super`]: the fragment merge, the nearest-rank p99, the parsers over outputs
//! captured from real runs, and (as root) everything on ext4, xfs and btrfs loop images.

use super::*;
use crate::cmd;
use std::io::Write;

/// `e2freefrag /dev/loop0` (e2fsprogs 1.47) on a 128 MiB ext4 (1 KiB blocks) with an
/// 8 MiB file and 20 of 40 64 KiB files deleted.
const E2FREEFRAG_1K: &str = "Device: /dev/loop0
Blocksize: 1024 bytes
Total blocks: 131072
Free blocks: 107717 (82.2%)

Min. free extent: 62 KB 
Max. free extent: 57085 KB
Avg. free extent: 13464 KB
Num. free extent: 8

HISTOGRAM OF FREE EXTENT SIZES:
Extent Size Range :  Free extents   Free Blocks  Percent
   32K...   64K-  :             1            62    0.06%
  128K...  256K-  :             1           208    0.19%
    4M...    8M-  :             3         18110   16.81%
    8M...   16M-  :             2         32252   29.94%
   32M...   64M-  :             1         57085   53.00%
";

/// `xfs_db -r -c 'sb 0' -c 'p blocksize' -c 'freesp -s' /dev/loopN` (xfsprogs 6.1.0) on a
/// 300 MiB xfs with a 50 MiB file and 30 of 60 64 KiB files deleted, after a freeze.
const XFS_FREESP: &str = "blocksize = 4096
   from      to extents  blocks    pct
      1       1      16      16   0.03
      4       7       1       5   0.01
     16      31      30     480   1.02
   2048    4095       1    2806   5.96
   4096    8191       1    5416  11.50
  16384   19200       2   38380  81.48
total free extents 51
total free blocks 47103
average free extent size 923.588
";

fn ext(logical: u64, physical: u64, length: u64, flags: u32) -> Extent {
    Extent {
        logical,
        physical,
        length,
        flags,
    }
}

#[test]
fn adjacent_extents_are_one_fragment_and_gaps_start_new_ones() {
    assert_eq!(count_fragments(&[]), 0);
    let one = ext(0, 1 << 20, 4096, FIEMAP_EXTENT_LAST);
    assert_eq!(count_fragments(&[one]), 1);
    // ext4 splits at 128 MiB: the next extent right behind is the same fragment.
    let a = ext(0, 1 << 20, 128 << 20, 0);
    let b = ext(128 << 20, (1 << 20) + (128 << 20), 4096, FIEMAP_EXTENT_LAST);
    assert_eq!(count_fragments(&[a, b]), 1);
    // Physically elsewhere: two.
    let c = ext(128 << 20, 900 << 20, 4096, FIEMAP_EXTENT_LAST);
    assert_eq!(count_fragments(&[a, c]), 2);
    // A hole: the physical start follows, the logical one does not: two.
    let d = ext((128 << 20) + 4096, (1 << 20) + (128 << 20), 4096, 0);
    assert_eq!(count_fragments(&[a, d]), 2);
    // Backwards on disk: two, then back in line with the second: still two.
    let e = ext(0, 8192, 4096, 0);
    let f = ext(4096, 0, 4096, 0);
    let g = ext(8192, 4096, 4096, FIEMAP_EXTENT_LAST);
    assert_eq!(count_fragments(&[e, f, g]), 2);
}

#[test]
fn inline_data_is_one_fragment_of_its_own() {
    let inline = FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_LAST;
    assert_eq!(count_fragments(&[ext(0, 0, 60, inline)]), 1);
    // Two inline extents never merge, whatever their addresses say.
    let i = ext(0, 0, 60, FIEMAP_EXTENT_DATA_INLINE);
    assert_eq!(count_fragments(&[i, ext(60, 60, 60, inline)]), 2);
    // Nor does what follows inline data.
    assert_eq!(count_fragments(&[i, ext(60, 60, 4096, 0)]), 2);
}

#[test]
fn the_fiemap_structs_have_the_kernels_layout() {
    assert_eq!(std::mem::size_of::<FiemapHeader>(), 32);
    assert_eq!(std::mem::size_of::<FiemapExtent>(), 56);
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    assert_eq!(FS_IOC_FIEMAP, 0xC020_660B_u32 as libc::Ioctl);
}

#[test]
fn p99_is_the_nearest_rank() {
    let hundred: Vec<u64> = (1..=100).rev().collect();
    let f = FileFrag::of(&hundred, 7);
    assert_eq!((f.files, f.bytes, f.p99), (100, 7, 99));
    assert_eq!(f.mean, 50.5);
    assert_eq!(f.fragmented_share, 0.99);
    // ⌈0.99·3⌉ = 3: the largest of three.
    assert_eq!(FileFrag::of(&[1, 5, 1], 0).p99, 5);
    // ⌈0.99·200⌉ = 198: two outliers above it are not the p99.
    let mut many = vec![1u64; 198];
    many.extend([40, 50]);
    let f = FileFrag::of(&many, 0);
    assert_eq!(f.p99, 1);
    assert_eq!(f.fragmented_share, 0.01);
    assert_eq!(FileFrag::of(&[3], 0).p99, 3);
    let none = FileFrag::of(&[], 0);
    assert_eq!((none.files, none.p99, none.mean), (0, 0, 0.0));
}

#[test]
fn e2freefrag_report_is_parsed() {
    let f = parse_e2freefrag(E2FREEFRAG_1K).unwrap();
    assert_eq!(f.method, "e2freefrag");
    assert_eq!(f.extents, 8);
    assert_eq!(f.free_bytes, 107_717 * 1024);
    assert_eq!(f.largest_bytes, Some(57_085 * 1024));
    assert_eq!(f.mean_extent_bytes(), 107_717.0 * 1024.0 / 8.0);
    let cut = E2FREEFRAG_1K.replace("Num. free extent: 8\n", "");
    let err = parse_e2freefrag(&cut).unwrap_err();
    assert!(format!("{err:#}").contains("Num. free extent:"), "{err:#}");
    assert!(parse_e2freefrag(&E2FREEFRAG_1K.replace("Blocksize: 1024", "Blocksize: x")).is_err());
}

#[test]
fn xfs_freesp_report_is_parsed() {
    let f = parse_xfs_freesp(XFS_FREESP).unwrap();
    assert_eq!(f.method, "xfs_db freesp");
    assert_eq!(f.extents, 51);
    assert_eq!(f.free_bytes, 47_103 * 4096);
    assert_eq!(f.largest_bytes, None);
    let no_blocksize = XFS_FREESP.replace("blocksize = 4096\n", "");
    assert!(parse_xfs_freesp(&no_blocksize).is_err());
    assert!(parse_xfs_freesp("").is_err());
}

#[test]
fn probe_size_is_half_the_free_space_in_whole_mib_at_most_1_gib() {
    assert_eq!(probe_bytes(0), 0);
    assert_eq!(probe_bytes((2 << 20) - 1), 0);
    assert_eq!(probe_bytes(2 << 20), 1 << 20);
    assert_eq!(probe_bytes((100 << 20) + 12345), 50 << 20);
    assert_eq!(probe_bytes(10 << 30), 1 << 30);
    assert_eq!(
        FreeSpace {
            method: PROBE_FILE,
            extents: 0,
            free_bytes: 5,
            largest_bytes: None
        }
        .mean_extent_bytes(),
        0.0
    );
}

/// Whether `path` lies on a tmpfs (statfs `f_type` TMPFS_MAGIC).
fn on_tmpfs(path: &Path) -> bool {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: statfs fills the zeroed struct; `c` is a NUL-terminated path.
    unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        libc::statfs(c.as_ptr(), &mut st) == 0 && st.f_type == libc::TMPFS_MAGIC
    }
}

#[test]
fn tmpfs_has_no_fiemap_and_says_so() {
    let shm = Path::new("/dev/shm");
    if !on_tmpfs(shm) {
        eprintln!("SKIP tmpfs_has_no_fiemap_and_says_so: /dev/shm is no tmpfs");
        return;
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    std::fs::write(dir.path().join("x"), b"hello").unwrap();
    let e = fragments(&dir.path().join("x")).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EOPNOTSUPP), "{e}");
    let err = files(dir.path()).unwrap_err();
    assert!(
        format!("{err:#}").contains("FIEMAP is unsupported"),
        "{err:#}"
    );
}

/// A loop image made with mkfs and mounted, undone on drop (also when a test fails).
struct Mounted {
    dir: tempfile::TempDir,
    device: Option<String>,
    mounted: bool,
}

impl Mounted {
    fn mnt(&self) -> PathBuf {
        self.dir.path().join("mnt")
    }

    /// A `size_mib` image of `fs` in a fresh directory under /var/tmp, mounted with `opts`.
    fn make(fs: FsType, size_mib: u64, opts: &str) -> Mounted {
        let dir = tempfile::Builder::new()
            .prefix("fsarena-frag-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let mut m = Mounted {
            dir,
            device: None,
            mounted: false,
        };
        let img = m.dir.path().join("fs.img");
        File::create(&img).unwrap().set_len(size_mib << 20).unwrap();
        let out = cmd::run(&["losetup", "-f", "--show", img.to_str().unwrap()]).unwrap();
        let dev = out.stdout.trim().to_string();
        m.device = Some(dev.clone());
        cmd::run(&fs.mkfs_argv(&dev, &[])).unwrap();
        std::fs::create_dir(m.mnt()).unwrap();
        let mnt = m.mnt();
        let argv = ["mount", "-t", fs.mount_type(), "-o", opts, &dev];
        cmd::run(&[&argv[..], &[mnt.to_str().unwrap()]].concat()).unwrap();
        m.mounted = true;
        m
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if self.mounted {
            let _ = cmd::run(&["umount", self.mnt().to_str().unwrap()]);
        }
        if let Some(dev) = &self.device {
            let _ = cmd::run(&["losetup", "-d", dev]);
        }
    }
}

/// Under `dir/kept`: writes `a` (4 MiB) on the fresh filesystem in one go, fills all the
/// rest with 64 KiB files (`dir/fill`), deletes every other one, and then writes `b`
/// (what the filler left free and half the holes), which has nowhere to go but the
/// 64 KiB holes, at least in part. Returns `b`'s size. (Two files written or
/// fallocated in turn, each piece fsynced, stayed one extent each on ext4, whose
/// allocator kept them apart.) Also an empty file and a symlink, which are not measured.
fn write_files(dir: &Path) -> u64 {
    let piece = vec![0x5au8; 64 << 10];
    let kept = dir.join("kept");
    std::fs::create_dir(&kept).unwrap();
    let mut a = File::create(kept.join("a")).unwrap();
    for _ in 0..64 {
        a.write_all(&piece).unwrap();
    }
    a.sync_all().unwrap();
    let fill = dir.join("fill");
    std::fs::create_dir(&fill).unwrap();
    let mut made = 0;
    loop {
        let path = fill.join(made.to_string());
        let f = match File::create(&path) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            f => f.unwrap(),
        };
        // SAFETY: `f` keeps its descriptor open for the call; no pointers passed.
        if unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, 64 << 10) } != 0 {
            let e = std::io::Error::last_os_error();
            assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
            std::fs::remove_file(&path).unwrap();
            break;
        }
        made += 1;
    }
    assert!(made > 100, "only {made} files of 64 KiB fitted");
    // What the filler could not take may be one stretch (ext4 keeps some clusters back
    // from fallocate; xfs keeps blocks statfs does not show, 17 MiB of 300 MiB); `b` is
    // made larger by half of what is freed below.
    let left = crate::probe::sys::space(dir).unwrap().free_bytes;
    let mut pieces = left / (64 << 10) + made / 4;
    for i in (0..made).step_by(2) {
        std::fs::remove_file(fill.join(i.to_string())).unwrap();
    }
    crate::probe::sys::syncfs(dir).unwrap();
    // At most 3/4 of what is free now (btrfs's statfs counted metadata space as free).
    let avail = crate::probe::sys::space(dir).unwrap().avail_bytes;
    eprintln!("made {made}, left {left}, avail {avail}, pieces {pieces}");
    pieces = pieces.min(avail / 4 * 3 / (64 << 10));
    let mut b = File::create(kept.join("b")).unwrap();
    for _ in 0..pieces {
        b.write_all(&piece).unwrap();
    }
    b.sync_all().unwrap();
    std::fs::create_dir(kept.join("sub")).unwrap();
    File::create(kept.join("sub/empty")).unwrap();
    std::os::unix::fs::symlink(kept.join("b"), kept.join("sub/link")).unwrap();
    pieces * (64 << 10)
}

/// `filefrag`'s own count for `path` ("path: N extents found").
fn filefrag(path: &Path) -> u64 {
    let out = cmd::run(&["filefrag", path.to_str().unwrap()]).unwrap();
    let tail = out.stdout.rsplit(": ").next().unwrap();
    tail.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn fragments_and_free_space_on_ext4_xfs_and_btrfs() {
    if !crate::probe::sys::is_root() || !Path::new("/dev/loop-control").exists() {
        eprintln!(
            "SKIP fragments_and_free_space_on_ext4_xfs_and_btrfs: needs root and a loop device"
        );
        return;
    }
    let cases = [
        (FsType::Ext4, 160, E2FREEFRAG),
        (FsType::Xfs, 300, XFS_DB_FREESP),
        (FsType::Btrfs, 160, PROBE_FILE),
    ];
    for (fs, mib, method) in cases {
        if fs.support() != crate::provision::fs::Support::Yes {
            eprintln!("SKIP {}: {:?}", fs.name(), fs.support());
            continue;
        }
        let m = Mounted::make(fs, mib, "rw");
        let mnt = m.mnt();
        let b_bytes = write_files(&mnt);
        let kept = mnt.join("kept");
        let (a, b) = (kept.join("a"), kept.join("b"));
        let counts = [fragments(&a).unwrap(), fragments(&b).unwrap()];
        eprintln!("{}: fragments of a, b = {counts:?}", fs.name());
        assert_eq!(counts[0], 1, "{}: the contiguous file", fs.name());
        assert!(
            counts[1] > 1,
            "{}: the fragmented file: {counts:?}",
            fs.name()
        );
        for (path, n) in [(&a, counts[0]), (&b, counts[1])] {
            assert_eq!(
                filefrag(path),
                n,
                "{}: filefrag {}",
                fs.name(),
                path.display()
            );
        }
        assert_eq!(fragments(&kept.join("sub/empty")).unwrap(), 0);

        let f = files(&kept).unwrap();
        assert_eq!(
            (f.files, f.bytes),
            (2, (4 << 20) + b_bytes),
            "{}: {f:?}",
            fs.name()
        );
        assert_eq!(f.p99, counts[1]);
        assert_eq!(f.fragmented_share, 0.5);
        assert_eq!(f.mean, (1 + counts[1]) as f64 / 2.0);

        crate::probe::sys::syncfs(&mnt).unwrap();
        let avail = crate::probe::sys::space(&mnt).unwrap().avail_bytes;
        let dev = m.device.clone().unwrap();
        let free = free_space(fs, &dev, &mnt, &mnt).unwrap();
        eprintln!("{}: {free:?}", fs.name());
        assert_eq!(free.method, method);
        // Half the filler was deleted: free space is in 64 KiB holes, and the probe file
        // too must take many of them.
        assert!(free.extents > 1, "{}: {free:?}", fs.name());
        let statfs_free = crate::probe::sys::space(&mnt).unwrap().free_bytes;
        assert!(
            free.free_bytes > 0 && free.free_bytes <= (mib << 20),
            "{free:?}"
        );
        if method == E2FREEFRAG {
            // The superblock's count is statfs's.
            assert_eq!(free.free_bytes, statfs_free);
            assert!(free.largest_bytes.unwrap() <= free.free_bytes);
            assert!(free.largest_bytes.unwrap() < 1 << 20, "{free:?}");
        }
        if method == PROBE_FILE {
            assert_eq!(free.free_bytes, probe_bytes(avail));
            assert!(std::fs::read_dir(&mnt).unwrap().all(|e| !e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("probe")));
        }
    }
}
