//! Whole-tree operations that several workloads time: walking with lstat, copying like
//! `cp -r`, removing like `rm -r`. Each file or directory is one recorded operation.
//!
//! Directories are streamed (one `readdir` handle per level of depth), so memory does not
//! grow with the number of files.

use crate::context::Worker;
use crate::probe::recorder::Op;
use crate::workload::confined::{cname, Dir};
use crate::workload::IoContext;
use anyhow::{bail, Result};
use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Buffer size of file copies: what coreutils `cp` uses on Linux (128 KiB).
pub const COPY_BUFFER: usize = 128 << 10;

/// What a tree operation touched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeCount {
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    /// File bytes (st_size of regular files).
    pub bytes: u64,
}

/// Walks `root` depth-first in readdir order, lstat-ing every entry below it (one
/// [`Op::Stat`] each), like `find -ls` or `du` does.
pub fn stat_tree(w: &mut Worker, root: &Path) -> Result<TreeCount> {
    let mut count = TreeCount::default();
    stat_dir(w, root, &mut count)?;
    Ok(count)
}

fn stat_dir(w: &mut Worker, dir: &Path, count: &mut TreeCount) -> Result<()> {
    for entry in fs::read_dir(dir).on("readdir", dir)? {
        w.check()?;
        let path = entry.on("readdir", dir)?.path();
        let t = w.start();
        let md = fs::symlink_metadata(&path).on("lstat", &path)?;
        w.done(Op::Stat, t, 0);
        if md.is_dir() {
            count.dirs += 1;
            stat_dir(w, &path, count)?;
        } else if md.file_type().is_symlink() {
            count.symlinks += 1;
        } else {
            count.files += 1;
            count.bytes += md.len();
        }
    }
    Ok(())
}

/// Reads every regular file below `root` in full, walking top-down in readdir order (like
/// `tar cf - root | cat > /dev/null` or compilebench's read): one [`Op::Read`] per file,
/// carrying its bytes, with reads of `buf.len()`.
pub fn read_tree(w: &mut Worker, root: &Path, buf: &mut [u8]) -> Result<TreeCount> {
    let mut count = TreeCount::default();
    read_dir_files(w, root, buf, &mut count)?;
    Ok(count)
}

fn read_dir_files(w: &mut Worker, dir: &Path, buf: &mut [u8], count: &mut TreeCount) -> Result<()> {
    let mut subdirs = Vec::new();
    for entry in fs::read_dir(dir).on("readdir", dir)? {
        w.check()?;
        let entry = entry.on("readdir", dir)?;
        let path = entry.path();
        let ft = entry.file_type().on("lstat", &path)?;
        if ft.is_dir() {
            subdirs.push(path);
        } else if ft.is_file() {
            let t = w.start();
            let mut f = File::open(&path).on("open", &path)?;
            let mut bytes = 0u64;
            loop {
                let n = f.read(buf).on("read", &path)?;
                if n == 0 {
                    break;
                }
                bytes += n as u64;
            }
            w.done(Op::Read, t, bytes);
            count.files += 1;
            count.bytes += bytes;
        } else if ft.is_symlink() {
            count.symlinks += 1;
        }
    }
    for sub in subdirs {
        count.dirs += 1;
        read_dir_files(w, &sub, buf, count)?;
    }
    Ok(())
}

/// Copies the tree `src` to `dst` (which must not exist) like `cp -r`: directories,
/// regular files in [`COPY_BUFFER`] pieces with their permission bits, symlinks as
/// symlinks (their targets as they are, absolute or outward too). What is written follows
/// the [`confined`](crate::workload::confined) policy, the one `untar` follows: every directory of the copy is opened
/// with `O_NOFOLLOW` relative to its parent and every file created with `O_EXCL`, so
/// nothing is written through a symlink; a source entry that is neither a directory, a
/// regular file nor a symlink (a FIFO, a device, a socket) is refused ([`check_copyable`]
/// finds them up front). Each file copy is one [`Op::Create`] carrying the file's bytes;
/// each directory one [`Op::Mkdir`]; each symlink one [`Op::Symlink`]. Sync policy: under
/// `each` every file and directory is fsynced as it is written; under `end` one syncfs
/// ends the copy (as the tree-writing phases of bonnie-files do), not an fsync per file,
/// which would make a copy of many small files a test of fsync.
pub fn copy_tree(w: &mut Worker, src: &Path, dst: &Path) -> Result<TreeCount> {
    let mut count = TreeCount::default();
    let mut buf = vec![0u8; COPY_BUFFER];
    let t = w.start();
    fs::create_dir(dst).on("mkdir", dst)?;
    w.done(Op::Mkdir, t, 0);
    let to = Dir::open_root(dst)?;
    copy_dir(w, src, (&to, dst), &mut buf, &mut count)?;
    w.end_fs(dst).on("syncfs", dst)?;
    Ok(count)
}

fn copy_dir(
    w: &mut Worker,
    src: &Path,
    (dst, dst_path): (&Dir, &Path),
    buf: &mut [u8],
    count: &mut TreeCount,
) -> Result<()> {
    for entry in fs::read_dir(src).on("readdir", src)? {
        w.check()?;
        let entry = entry.on("readdir", src)?;
        let name = entry.file_name();
        let (from, to) = (entry.path(), dst_path.join(&name));
        let leaf = cname(name.as_bytes())?;
        let t = w.start();
        let ft = entry.file_type().on("lstat", &from)?;
        if ft.is_dir() {
            let (sub, _) = dst.sub(name.as_bytes(), Some(0o777)).on("mkdir", &to)?;
            w.done(Op::Mkdir, t, 0);
            count.dirs += 1;
            copy_dir(w, &from, (&sub, &to), buf, count)?;
        } else if ft.is_symlink() {
            let target = fs::read_link(&from).on("readlink", &from)?;
            dst.symlink(&leaf, target.as_os_str().as_bytes())
                .on("symlink", &to)?;
            w.done(Op::Symlink, t, 0);
            count.symlinks += 1;
        } else if ft.is_file() {
            let out = dst.create_file(&leaf).on("create", &to)?;
            let bytes = copy_contents(w, &from, (out, &to), buf)?.1;
            w.done(Op::Create, t, bytes);
            count.files += 1;
            count.bytes += bytes;
        } else {
            bail!("{}", refusal(&from, ft));
        }
    }
    w.after_dir_change(dst_path).on("fsync", dst_path)?;
    Ok(())
}

/// Why a source entry of type `ft` is not copied.
fn refusal(path: &Path, ft: fs::FileType) -> String {
    use std::os::unix::fs::FileTypeExt;
    let kind = if ft.is_fifo() {
        "a FIFO (reading it would block)"
    } else if ft.is_char_device() || ft.is_block_device() {
        "a device (reading it would copy the device)"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "neither a directory, a regular file nor a symlink"
    };
    format!(
        "refusing to copy {}: {kind}; a source tree holds only directories, regular files \
         and symlinks",
        path.display()
    )
}

/// Checks, before anything is provisioned, that [`copy_tree`] can copy `src`: a directory
/// whose every directory can be read and every regular file opened, holding nothing but
/// directories, regular files and symlinks (which are not followed). Returns what the copy
/// will make.
pub fn check_copyable(src: &Path) -> Result<TreeCount> {
    let canonical = src.canonicalize().on("resolve", src)?;
    if let Some(why) = crate::provision::dir::refuse_system_dir(&canonical) {
        bail!("{why}");
    }
    let md = fs::metadata(src).on("stat", src)?;
    if !md.is_dir() {
        bail!("not a directory");
    }
    let mut count = TreeCount::default();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).on("readdir", &dir)? {
            let entry = entry.on("readdir", &dir)?;
            let path = entry.path();
            let ft = entry.file_type().on("lstat", &path)?;
            if ft.is_dir() {
                count.dirs += 1;
                stack.push(path);
            } else if ft.is_symlink() {
                count.symlinks += 1;
            } else if ft.is_file() {
                let f = open_source(&path)?;
                count.files += 1;
                count.bytes += f.metadata().on("fstat", &path)?.len();
            } else {
                bail!("{}", refusal(&path, ft));
            }
        }
    }
    Ok(count)
}

/// Opens a source file for reading, never through a symlink nor blocking on a FIFO; an
/// entry that is not a regular file once open (it changed since it was listed) is refused.
fn open_source(path: &Path) -> Result<File> {
    let f = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .on("open", path)?;
    let ft = f.metadata().on("fstat", path)?.file_type();
    if !ft.is_file() {
        bail!("{}", refusal(path, ft));
    }
    Ok(f)
}

/// Copies one regular file, keeping its permission bits; returns its size. The sync
/// policy applies to the file (`end`: fsync it at the end).
pub fn copy_file(w: &mut Worker, from: &Path, to: &Path, buf: &mut [u8]) -> Result<u64> {
    let out = File::create(to).on("create", to)?;
    let (out, bytes) = copy_contents(w, from, (out, to), buf)?;
    w.end_file(&out).on("fsync", to)?;
    Ok(bytes)
}

/// Copies one regular file into `out` (just created) with its permission bits (fsync
/// under `--sync each`); returns the copy and its size.
fn copy_contents(
    w: &mut Worker,
    from: &Path,
    (mut out, to): (File, &Path),
    buf: &mut [u8],
) -> Result<(File, u64)> {
    let mut input = open_source(from)?;
    let mode = input.metadata().on("fstat", from)?.permissions().mode();
    let mut bytes = 0u64;
    loop {
        let n = input.read(buf).on("read", from)?;
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n]).on("write", to)?;
        bytes += n as u64;
    }
    out.set_permissions(fs::Permissions::from_mode(mode & 0o7777))
        .on("chmod", to)?;
    w.after_write(&out).on("fsync", to)?;
    Ok((out, bytes))
}

/// Removes `root` and everything below it like `rm -r`: files and symlinks are unlinked
/// while their directory is read (one [`Op::Delete`] each), directories removed after
/// their contents (one [`Op::Rmdir`] each, `root` included). Under `--sync each` the
/// directory is fsynced after each unlink and the parent after each rmdir.
pub fn remove_tree(w: &mut Worker, root: &Path) -> Result<TreeCount> {
    let mut count = TreeCount::default();
    remove_dir(w, root, &mut count)?;
    Ok(count)
}

fn remove_dir(w: &mut Worker, dir: &Path, count: &mut TreeCount) -> Result<()> {
    for entry in fs::read_dir(dir).on("readdir", dir)? {
        w.check()?;
        let entry = entry.on("readdir", dir)?;
        let path = entry.path();
        if entry.file_type().on("lstat", &path)?.is_dir() {
            remove_dir(w, &path, count)?;
        } else {
            let t = w.start();
            fs::remove_file(&path).on("unlink", &path)?;
            w.done(Op::Delete, t, 0);
            w.after_dir_change(dir).on("fsync", dir)?;
            count.files += 1;
        }
    }
    let t = w.start();
    fs::remove_dir(dir).on("rmdir", dir)?;
    w.done(Op::Rmdir, t, 0);
    count.dirs += 1;
    if let Some(parent) = dir.parent() {
        w.after_dir_change(parent).on("fsync", parent)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{PhaseKind, PhaseSpec, Primary};
    use crate::policy::{DataPolicy, SyncPolicy};
    use crate::workload::testutil::in_context;
    use std::os::unix::fs::symlink;
    use std::sync::Mutex;

    const SPEC: PhaseSpec = PhaseSpec {
        name: "t",
        kind: PhaseKind::Meta,
        primary: Primary::OpsPerS,
        ops_unit: "files/s",
    };

    #[test]
    fn copy_stat_and_remove_a_tree() {
        in_context(DataPolicy::Random, SyncPolicy::Each, |cx| {
            let src = cx.workdir().join("src");
            fs::create_dir_all(src.join("a/b")).unwrap();
            fs::write(src.join("a/b/f"), vec![7u8; 300_000]).unwrap();
            fs::write(src.join("g"), b"hello").unwrap();
            fs::set_permissions(src.join("g"), fs::Permissions::from_mode(0o751)).unwrap();
            symlink("a/b/f", src.join("link")).unwrap();
            let dst = cx.workdir().join("dst");
            let got = Mutex::new(Vec::new());
            cx.phase(&SPEC, 1, |w| {
                let copied = copy_tree(w, &src, &dst)?;
                let seen = stat_tree(w, &dst)?;
                let read = read_tree(w, &dst, &mut [0u8; 4096])?;
                assert_eq!((read.files, read.bytes, read.dirs), (2, 300_005, 2));
                let removed = remove_tree(w, &dst)?;
                got.lock().unwrap().extend([copied, seen, removed]);
                Ok(())
            })
            .unwrap();
            let got = got.into_inner().unwrap();
            let want = TreeCount {
                files: 2,
                dirs: 2,
                symlinks: 1,
                bytes: 300_005,
            };
            assert_eq!(got[0], want);
            assert_eq!(got[1], want);
            assert_eq!((got[2].files, got[2].dirs), (3, 3), "root counted as a dir");
            assert!(!dst.exists());
            let p = &cx.phases()[0];
            let ops: Vec<_> = p
                .lat_by_op
                .iter()
                .map(|o| (o.op.as_str(), o.count))
                .collect();
            for want in [
                ("create", 2),
                ("mkdir", 3),
                ("symlink", 1),
                ("stat", 5),
                ("read", 2),
            ] {
                assert!(ops.contains(&want), "{want:?} in {ops:?}");
            }
            assert!(
                ops.iter().any(|(op, n)| *op == "fsync" && *n > 0),
                "sync each"
            );
            assert_eq!((p.bytes_written, p.bytes_read), (300_005, 300_005));
        });
    }

    #[test]
    fn a_copy_under_sync_end_ends_with_one_syncfs() {
        in_context(DataPolicy::Random, SyncPolicy::End, |cx| {
            let src = cx.workdir().join("s");
            fs::create_dir(&src).unwrap();
            for i in 0..20 {
                fs::write(src.join(i.to_string()), b"data").unwrap();
            }
            let dst = cx.workdir().join("d");
            cx.phase(&SPEC, 1, |w| copy_tree(w, &src, &dst).map(|_| ()))
                .unwrap();
            let p = &cx.phases()[0];
            let fsyncs = p.lat_by_op.iter().find(|o| o.op == "fsync");
            assert_eq!(fsyncs.map(|o| o.count), Some(1), "{:?}", p.lat_by_op);
        });
    }

    #[test]
    fn copies_keep_modes_and_link_targets() {
        in_context(DataPolicy::Random, SyncPolicy::None, |cx| {
            let src = cx.workdir().join("s");
            fs::create_dir(&src).unwrap();
            fs::write(src.join("x"), b"1").unwrap();
            fs::set_permissions(src.join("x"), fs::Permissions::from_mode(0o640)).unwrap();
            symlink("/nowhere", src.join("l")).unwrap();
            let dst = cx.workdir().join("d");
            cx.phase(&SPEC, 1, |w| copy_tree(w, &src, &dst).map(|_| ()))
                .unwrap();
            let mode = fs::metadata(dst.join("x")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o640);
            assert_eq!(fs::read_link(dst.join("l")).unwrap(), Path::new("/nowhere"));
        });
    }

    #[test]
    fn a_fifo_in_the_source_is_refused_not_read() {
        in_context(DataPolicy::Random, SyncPolicy::None, |cx| {
            let src = cx.workdir().join("s");
            fs::create_dir(&src).unwrap();
            symlink("..", src.join("up")).unwrap();
            let c = std::ffi::CString::new(src.join("p").as_os_str().as_bytes()).unwrap();
            // SAFETY: a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            let err = check_copyable(&src).unwrap_err();
            assert!(format!("{err:#}").contains("FIFO"), "{err:#}");
            let dst = cx.workdir().join("d");
            let err = cx
                .phase(&SPEC, 1, |w| copy_tree(w, &src, &dst).map(|_| ()))
                .unwrap_err();
            assert!(format!("{err:#}").contains("FIFO"), "{err:#}");
        });
    }
}
