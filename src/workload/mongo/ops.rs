//! The timed bodies of Mongo's seven phases, each working on one worker's pair of trees
//! (`testdir1-<j>` and its copy `testdir2-<j>`).

use super::fract_tree::{Event, FractTree};
use crate::context::Worker;
use crate::probe::recorder::Op;
use crate::workload::{tree, IoContext};
use anyhow::{bail, Result};
use std::ffi::OsString;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{symlink, DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// reiser_fract_tree's write buffer (mongo.pl's `write_buffer_size`); it writes
/// `buffer − 1` bytes per write(2).
pub const WRITE_BUFFER: usize = 4096;
/// mongo_read's read buffer.
pub const READ_BUFFER: usize = 4096;

/// The trees of worker `j` below the work directory.
#[derive(Clone, Debug)]
pub struct Trees {
    pub base: PathBuf,
}

impl Trees {
    /// The generated tree of worker `j`.
    pub fn src(&self, j: usize) -> PathBuf {
        self.base.join(format!("testdir1-{j}"))
    }

    /// Its copy.
    pub fn dst(&self, j: usize) -> PathBuf {
        self.base.join(format!("testdir2-{j}"))
    }
}

fn mkdir(w: &mut Worker, path: &Path) -> Result<()> {
    let t = w.start();
    DirBuilder::new()
        .mode(0o755)
        .create(path)
        .on("mkdir", path)?;
    if let Some(parent) = path.parent() {
        w.after_dir_change(parent).on("fsync", parent)?;
    }
    w.done(Op::Mkdir, t, 0);
    Ok(())
}

/// Create: builds `tree` at `root` as reiser_fract_tree does — directories 0755, files
/// opened `O_CREAT|O_EXCL|O_RDWR` 0777 and written in pieces of `WRITE_BUFFER − 1` bytes.
/// One [`Op::Mkdir`] per directory, one [`Op::Create`] (with its bytes) per file.
pub fn create(w: &mut Worker, tree: &FractTree, root: &Path) -> Result<()> {
    let mut dir = root.to_path_buf();
    mkdir(w, &dir)?;
    tree.walk(|event| {
        w.check()?;
        match event {
            Event::Dir(n) => {
                dir.push(format!("d{n}"));
                mkdir(w, &dir)
            }
            Event::Up => {
                dir.pop();
                Ok(())
            }
            Event::File { number, size } => {
                dir.push(number.to_string());
                let made = make_file(w, &dir, size.max(0) as u64);
                dir.pop();
                made
            }
        }
    })?;
    w.end_fs(root).on("syncfs", root)?;
    Ok(())
}

fn make_file(w: &mut Worker, path: &Path, size: u64) -> Result<()> {
    let t = w.start();
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o777)
        .open(path)
        .on("create", path)?;
    let mut left = size;
    while left > 0 {
        let n = left.min(WRITE_BUFFER as u64 - 1) as usize;
        f.write_all(w.data().slice(n)).on("write", path)?;
        left -= n as u64;
    }
    w.after_write(&f).on("fsync", path)?;
    drop(f);
    if let Some(dir) = path.parent() {
        w.after_dir_change(dir).on("fsync", dir)?;
    }
    w.done(Op::Create, t, size);
    Ok(())
}

/// Copy: `cp -r testdir1-j testdir2-j` ([`tree::copy_tree`], which applies the sync
/// policy).
pub fn copy(w: &mut Worker, trees: &Trees) -> Result<()> {
    tree::copy_tree(w, &trees.src(w.idx), &trees.dst(w.idx))?;
    Ok(())
}

/// Calls `f(w, dir, name)` for every regular file below `dir` (readdir's file type, as
/// `find -type f`), streaming each directory.
fn each_file(
    w: &mut Worker,
    dir: &Path,
    f: &mut impl FnMut(&mut Worker, &Path, OsString) -> Result<()>,
) -> Result<()> {
    for entry in fs::read_dir(dir).on("readdir", dir)? {
        w.check()?;
        let entry = entry.on("readdir", dir)?;
        let kind = entry.file_type().on("lstat", &entry.path())?;
        if kind.is_dir() {
            each_file(w, &entry.path(), f)?;
        } else if kind.is_file() {
            f(w, dir, entry.file_name())?;
        }
    }
    Ok(())
}

/// Symlinks: for every file X of testdir1-j, `X.lnk` → `X`, then lstat and readlink it, as
/// mongo_slinks does. One [`Op::Symlink`] each (the three calls together). The link holds
/// the file's name (a relative target; see the module doc).
pub fn symlinks(w: &mut Worker, trees: &Trees) -> Result<()> {
    let src = trees.src(w.idx);
    each_file(w, &src, &mut |w, dir, name| {
        let mut link_name = name.clone();
        link_name.push(".lnk");
        let link = dir.join(&link_name);
        let t = w.start();
        symlink(&name, &link).on("symlink", &link)?;
        let is_link = fs::symlink_metadata(&link)
            .on("lstat", &link)?
            .file_type()
            .is_symlink();
        let target = fs::read_link(&link).on("readlink", &link)?;
        if !is_link || target.as_os_str() != name {
            bail!(
                "symlink {} reads back as {}",
                link.display(),
                target.display()
            );
        }
        w.after_dir_change(dir).on("fsync", dir)?;
        w.done(Op::Symlink, t, 0);
        Ok(())
    })?;
    w.end_fs(&src).on("syncfs", &src)?;
    Ok(())
}

/// Read: every file of both trees read whole, as mongo_read does: open, read(2) of
/// [`READ_BUFFER`] bytes until a short read, close. One [`Op::Read`] (with its bytes) per
/// file.
pub fn read(w: &mut Worker, trees: &Trees) -> Result<()> {
    let mut buf = vec![0u8; READ_BUFFER];
    for root in [trees.src(w.idx), trees.dst(w.idx)] {
        each_file(w, &root, &mut |w, dir, name| {
            let path = dir.join(name);
            let t = w.start();
            let mut f = File::open(&path).on("open", &path)?;
            let mut bytes = 0u64;
            loop {
                let n = f.read(&mut buf).on("read", &path)?;
                bytes += n as u64;
                if n < buf.len() {
                    break;
                }
            }
            drop(f);
            w.done(Op::Read, t, bytes);
            Ok(())
        })?;
    }
    Ok(())
}

/// Stats: lstat of every entry of both trees ([`tree::stat_tree`]).
pub fn stats(w: &mut Worker, trees: &Trees) -> Result<()> {
    tree::stat_tree(w, &trees.src(w.idx))?;
    tree::stat_tree(w, &trees.dst(w.idx))?;
    Ok(())
}

/// Rename: every file X of testdir1-j → `X.r`. Each directory is read whole before its
/// files are renamed (as `find` reads a directory before printing it), so that no file is
/// seen, and renamed, twice. One [`Op::Rename`] each.
pub fn rename(w: &mut Worker, trees: &Trees) -> Result<()> {
    let src = trees.src(w.idx);
    rename_below(w, &src)?;
    w.end_fs(&src).on("syncfs", &src)?;
    Ok(())
}

fn rename_below(w: &mut Worker, dir: &Path) -> Result<()> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir).on("readdir", dir)? {
        let entry = entry.on("readdir", dir)?;
        let kind = entry.file_type().on("lstat", &entry.path())?;
        entries.push((entry.file_name(), kind));
    }
    for (name, kind) in entries {
        w.check()?;
        if kind.is_dir() {
            rename_below(w, &dir.join(name))?;
        } else if kind.is_file() {
            let from = dir.join(&name);
            let mut to = name;
            to.push(".r");
            let to = dir.join(to);
            let t = w.start();
            fs::rename(&from, &to).on("rename", &from)?;
            w.after_dir_change(dir).on("fsync", dir)?;
            w.done(Op::Rename, t, 0);
        }
    }
    Ok(())
}

/// Delete: `rm -r` of both trees, one after the other ([`tree::remove_tree`]).
pub fn delete(w: &mut Worker, trees: &Trees) -> Result<()> {
    tree::remove_tree(w, &trees.src(w.idx))?;
    tree::remove_tree(w, &trees.dst(w.idx))?;
    w.end_fs(&trees.base).on("syncfs", &trees.base)?;
    Ok(())
}
