//! Attaching a loop device to an open file, not to a path.
//!
//! `losetup IMAGE` opens the image by its name, after fsarena created it: whoever can swap
//! that name for a symlink in between (to `/dev/sdX`, say) chooses what root then formats.
//! Here the image is created with `O_CREAT|O_EXCL|O_NOFOLLOW` and the very descriptor
//! that created it is handed to the kernel, as `losetup --direct-io=on` (util-linux 2.38)
//! does after opening: `LOOP_CTL_GET_FREE` for a free device, then `LOOP_CONFIGURE` with
//! `LO_FLAGS_DIRECT_IO` and the kernel's default block size. Afterwards the device's
//! backing device and inode (`LOOP_GET_STATUS64`) are compared with `fstat` of the
//! descriptor, and a mismatch detaches and fails.

use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

const LOOP_SET_FD: libc::c_ulong = 0x4C00;
const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
const LOOP_SET_DIRECT_IO: libc::c_ulong = 0x4C08;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;
const LO_FLAGS_DIRECT_IO: u32 = 16;
const LO_NAME_SIZE: usize = 64;

/// `struct loop_info64` of `<linux/loop.h>`.
#[repr(C)]
#[derive(Clone, Copy)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; LO_NAME_SIZE],
    lo_crypt_name: [u8; LO_NAME_SIZE],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// `struct loop_config` of `<linux/loop.h>` (Linux 5.8).
#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

fn zeroed_info() -> LoopInfo64 {
    // SAFETY: a plain-old-data C struct; all zeroes is its "nothing set" value.
    unsafe { std::mem::zeroed() }
}

/// Creates `path` for an image: a new regular file (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode
/// 0600), open for reading and writing. Fails when anything, a symlink included, already
/// has the name.
pub fn create_image(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Copies bytes `start..end` of `from` to the same offsets of `to` (`copy_file_range`, in
/// pieces of at most 1 GiB, a stop request honoured between them).
pub fn copy_range(from: &File, to: &File, start: u64, end: u64) -> Result<()> {
    let (mut off_in, mut off_out) = (start as libc::loff_t, start as libc::loff_t);
    while (off_in as u64) < end {
        let chunk = (end - off_in as u64).min(1 << 30) as usize;
        // SAFETY: both descriptors are open; the offsets are valid pointers to loff_t.
        let n = unsafe {
            libc::copy_file_range(
                from.as_raw_fd(),
                &mut off_in,
                to.as_raw_fd(),
                &mut off_out,
                chunk,
                0,
            )
        };
        if n < 0 {
            return Err(std::io::Error::last_os_error()).context("copy_file_range");
        }
        if n == 0 {
            bail!("the image ended at {off_in} of {end} bytes");
        }
        crate::signals::check_stop()?;
    }
    Ok(())
}

/// A copy of `fd` that a child process inherits (no close-on-exec), and the path that
/// names it in the child: `/proc/self/fd/N`. A command given that path opens the very
/// file or directory `fd` is, whatever its name leads to by then. Drop it after the child
/// has run.
pub fn for_child(fd: &impl AsRawFd) -> std::io::Result<(std::os::fd::OwnedFd, String)> {
    use std::os::fd::FromRawFd;
    // SAFETY: dup of an open descriptor; the new one is owned below.
    let raw = unsafe { libc::dup(fd.as_raw_fd()) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` was just returned by dup and is owned by nobody else.
    let owned = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
    Ok((owned, format!("/proc/self/fd/{raw}")))
}

/// A loop device just attached, and whether direct I/O is on for it.
#[derive(Debug)]
pub struct Attached {
    pub device: String,
    pub direct_io: bool,
}

/// Attaches a free loop device to `image` (the open file, whatever its name points at by
/// now) with direct I/O asked for; `name` is only the label the kernel keeps. Retries
/// when another process takes the free device first.
pub fn attach(image: &File, name: &Path) -> Result<Attached> {
    let ctl = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_CLOEXEC)
        .open("/dev/loop-control")
        .context("opening /dev/loop-control (is the loop module loaded?)")?;
    for _ in 0..20 {
        // SAFETY: an ioctl without argument on an open descriptor.
        let n = unsafe { libc::ioctl(ctl.as_raw_fd(), LOOP_CTL_GET_FREE as _) };
        if n < 0 {
            return Err(std::io::Error::last_os_error()).context("LOOP_CTL_GET_FREE");
        }
        let device = format!("/dev/loop{n}");
        let dev = open_device(&device)?;
        match configure(&dev, image, name) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => continue,
            Err(e) => return Err(e).with_context(|| format!("attaching {device}")),
        }
        if let Err(e) = check_backs(&dev, image) {
            detach_now(&dev);
            return Err(e.context(format!("{device} refused and detached")));
        }
        let direct_io = dio_on(&device);
        crate::cmd::record(&format!(
            "(ioctl LOOP_CONFIGURE) {device} <- {} direct-io={}",
            name.display(),
            if direct_io { "on" } else { "off" }
        ));
        return Ok(Attached { device, direct_io });
    }
    bail!("no free loop device stayed free long enough to attach (20 tries)")
}

/// Opens a loop device node, waiting briefly for udev/devtmpfs to make a new one.
fn open_device(device: &str) -> Result<File> {
    let mut last = None;
    for _ in 0..50 {
        match OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(device)
        {
            Ok(f) => return Ok(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => last = Some(e),
            Err(e) => return Err(e).with_context(|| format!("opening {device}")),
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Err(last.expect("tried")).with_context(|| format!("opening {device}"))
}

/// `LOOP_CONFIGURE` with direct I/O; without it when the kernel refuses the flag, and
/// `LOOP_SET_FD` then `LOOP_SET_DIRECT_IO` on a kernel older than 5.8.
fn configure(dev: &File, image: &File, name: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let mut info = zeroed_info();
    let bytes = name.as_os_str().as_bytes();
    let n = bytes.len().min(LO_NAME_SIZE - 1);
    info.lo_file_name[..n].copy_from_slice(&bytes[..n]);
    let mut cfg = LoopConfig {
        fd: image.as_raw_fd() as u32,
        block_size: 0,
        info,
        reserved: [0; 8],
    };
    for flags in [LO_FLAGS_DIRECT_IO, 0] {
        cfg.info.lo_flags = flags;
        // SAFETY: LOOP_CONFIGURE reads a `struct loop_config` that outlives the call.
        let rc = unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_CONFIGURE as _, &cfg) };
        if rc == 0 {
            if flags == 0 {
                // Configured without the flag: ask for direct I/O afterwards, as losetup
                // does (best effort; whether it took effect is read back and recorded).
                // SAFETY: LOOP_SET_DIRECT_IO takes an integer argument.
                unsafe {
                    libc::ioctl(dev.as_raw_fd(), LOOP_SET_DIRECT_IO as _, 1 as libc::c_ulong)
                };
            }
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINVAL) if flags != 0 => continue,
            Some(libc::ENOTTY) => break,
            _ => return Err(e),
        }
    }
    // SAFETY: LOOP_SET_FD takes the backing descriptor as its argument.
    if unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_SET_FD as _, image.as_raw_fd()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // Best effort, as losetup: whether it took effect is read back and recorded.
    // SAFETY: LOOP_SET_DIRECT_IO takes an integer argument.
    unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_SET_DIRECT_IO as _, 1 as libc::c_ulong) };
    Ok(())
}

/// The backing device and inode a loop device reports (`LOOP_GET_STATUS64`).
fn backing_of(dev: &File) -> std::io::Result<(u64, u64)> {
    let mut info = zeroed_info();
    // SAFETY: LOOP_GET_STATUS64 fills a `struct loop_info64` we own.
    let rc = unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_GET_STATUS64 as _, &mut info) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((info.lo_device, info.lo_inode))
}

/// Fails unless loop device `dev` is backed by the very file `image` is open on.
fn check_backs(dev: &File, image: &File) -> Result<()> {
    let (dev_no, ino) = backing_of(dev).context("LOOP_GET_STATUS64")?;
    let m = image.metadata()?;
    if (dev_no, ino) != (m.dev(), m.ino()) {
        bail!(
            "it is backed by device {dev_no:#x} inode {ino}, not by the image fsarena \
             created (device {:#x} inode {})",
            m.dev(),
            m.ino()
        );
    }
    Ok(())
}

/// Whether `device` is attached to the file `image` is open on (same device and inode).
pub fn backs(device: &str, image: &File) -> bool {
    OpenOptions::new()
        .read(true)
        .open(device)
        .is_ok_and(|d| check_backs(&d, image).is_ok())
}

fn detach_now(dev: &File) {
    // SAFETY: LOOP_CLR_FD without argument on an open loop device.
    unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_CLR_FD as _) };
}

/// Whether the filesystem holding the open file `f` refuses `O_DIRECT` (an open with it
/// fails with EINVAL: ramfs, tmpfs before Linux 6.6, some 9p and FUSE mounts), so that no
/// loop device on it can run with direct I/O. Opens the very file through
/// `/proc/self/fd/N`, read-only.
pub fn refuses_o_direct(f: &File) -> bool {
    let refused = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT | libc::O_CLOEXEC)
        .open(format!("/proc/self/fd/{}", f.as_raw_fd()));
    matches!(refused, Err(e) if e.raw_os_error() == Some(libc::EINVAL))
}

/// Whether direct I/O is on for a loop device (`/sys/block/loopN/loop/dio`).
pub fn dio_on(device: &str) -> bool {
    let name = device.trim_start_matches("/dev/");
    std::fs::read_to_string(format!("/sys/block/{name}/loop/dio"))
        .map(|s| s.trim() == "1")
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, Write};

    #[test]
    fn loop_structs_have_the_kernel_layout() {
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
        assert_eq!(std::mem::size_of::<LoopConfig>(), 8 + 232 + 64);
    }

    #[test]
    fn an_image_name_already_taken_by_a_symlink_is_not_opened() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("disk");
        std::fs::write(&victim, b"precious").unwrap();
        let img = tmp.path().join("x.img");
        std::os::unix::fs::symlink(&victim, &img).unwrap();
        assert!(create_image(&img).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        let fresh = tmp.path().join("y.img");
        let f = create_image(&fresh).unwrap();
        assert_eq!(f.metadata().unwrap().mode() & 0o777, 0o600);
    }

    /// The image's name is swapped for a symlink to another file ("the disk") after it
    /// was created and before the loop device is attached: the device still backs the
    /// file fsarena created, and what is written through it never reaches the disk.
    #[test]
    fn a_swap_after_creation_does_not_redirect_the_loop_device() {
        if !crate::probe::sys::is_root() || !Path::new("/dev/loop-control").exists() {
            eprintln!("SKIP a_swap_after_creation_does_not_redirect_the_loop_device: needs root and loop devices");
            return;
        }
        let tmp = tempfile::Builder::new()
            .prefix("fsarena-loopdev-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let disk = tmp.path().join("disk");
        std::fs::write(&disk, vec![0xAAu8; 1 << 20]).unwrap();
        let img = tmp.path().join("x.img");
        let f = create_image(&img).unwrap();
        f.set_len(1 << 20).unwrap();
        std::fs::rename(&img, tmp.path().join("moved.img")).unwrap();
        std::os::unix::fs::symlink(&disk, &img).unwrap();
        let a = attach(&f, &img).unwrap();
        let detach = || crate::state::detach_loop(&a.device, &tmp.path().join("moved.img"));
        let written = (|| -> std::io::Result<()> {
            let mut d = OpenOptions::new().write(true).open(&a.device)?;
            d.write_all(&[0x55u8; 4096])?;
            d.sync_all()
        })();
        assert!(backs(&a.device, &f), "{} backs another file", a.device);
        let disk_file = File::open(&disk).unwrap();
        assert!(!backs(&a.device, &disk_file));
        detach().unwrap();
        written.unwrap();
        let mut moved = File::open(tmp.path().join("moved.img")).unwrap();
        let mut head = [0u8; 4];
        moved.rewind().unwrap();
        moved.read_exact(&mut head).unwrap();
        assert_eq!(head, [0x55; 4], "the write went to the image created");
        assert!(std::fs::read(&disk).unwrap().iter().all(|&b| b == 0xAA));
    }
}
