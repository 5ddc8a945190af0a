//! The IO500's mdtest and find phases as one task does them. Files are named as mdtest
//! names them (`file.mdtest.RANK.I`, with the task's global index for RANK).
//!
//! * mdtest-easy (`mdtest -n N -u -L -F -P -N 1`): empty files in a directory of the task's
//!   own (`mdtest-easy/mdtest_tree.T.0`); created until the stonewall, then stat'ed and
//!   deleted.
//! * mdtest-hard (`mdtest -n N -t -w 3901 -e 3901 -F -N 1`): files of 3901 bytes, all
//!   tasks in one shared directory (`mdtest-hard/`); created and written until the
//!   stonewall, then stat'ed, read (3901 bytes each) and deleted.
//! * find (the IO500's pfind `DATADIR -newer timestampfile -size 3901c -name "*01*"`):
//!   walks the trees, lstat'ing every entry; counts the entries seen (the phase's
//!   operations, pfind's "total-files", which the IO500 rates) and the matches.

use crate::context::Worker;
use crate::probe::recorder::Op;
use crate::workload::IoContext;
use anyhow::Result;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// mdtest's name of item `i` of task `task`.
pub fn item(dir: &Path, task: usize, i: u64) -> PathBuf {
    dir.join(format!("file.mdtest.{task}.{i}"))
}

/// Creates files until `deadline` or `max` (mdtest checks the stonewall after each item),
/// each with `data` written into it (empty for mdtest-easy); under `--sync each` the file
/// and its directory are fsynced inside each create; under `--sync end` one syncfs ends
/// the phase. Returns the number made.
pub fn create(
    w: &mut Worker,
    dir: &Path,
    task: usize,
    data: &[u8],
    max: u64,
    deadline: Instant,
) -> Result<u64> {
    let mut i = 0;
    while i < max && Instant::now() < deadline {
        let path = item(dir, task, i);
        let t = w.start();
        let mut f = File::create(&path).on("create", &path)?;
        if !data.is_empty() {
            f.write_all(data).on("write", &path)?;
        }
        // `--sync each`: the file and its directory entry, inside the operation's time.
        w.after_write(&f).on("fsync", &path)?;
        drop(f);
        w.after_dir_change(dir).on("fsync", dir)?;
        w.done(Op::Create, t, data.len() as u64);
        i += 1;
        if i % 256 == 0 {
            w.check()?;
        }
    }
    w.end_fs(dir).on("syncfs", dir)?;
    Ok(i)
}

/// stat()s items `0..n`.
pub fn stat(w: &mut Worker, dir: &Path, task: usize, n: u64) -> Result<()> {
    for i in 0..n {
        let path = item(dir, task, i);
        let t = w.start();
        std::fs::metadata(&path).on("stat", &path)?;
        w.done(Op::Stat, t, 0);
        if i % 256 == 0 {
            w.check()?;
        }
    }
    Ok(())
}

/// Opens, reads `len` bytes of and closes items `0..n`.
pub fn read(w: &mut Worker, dir: &Path, task: usize, n: u64, len: usize) -> Result<()> {
    let mut buf = vec![0u8; len];
    for i in 0..n {
        let path = item(dir, task, i);
        let t = w.start();
        File::open(&path)
            .and_then(|mut f| f.read_exact(&mut buf))
            .on("read", &path)?;
        w.done(Op::Read, t, len as u64);
        if i % 256 == 0 {
            w.check()?;
        }
    }
    Ok(())
}

/// Deletes items `0..n` (the directory fsynced after each under `--sync each`); then the
/// `--sync end` syncfs.
pub fn delete(w: &mut Worker, dir: &Path, task: usize, n: u64) -> Result<()> {
    for i in 0..n {
        let path = item(dir, task, i);
        let t = w.start();
        std::fs::remove_file(&path).on("unlink", &path)?;
        w.after_dir_change(dir).on("fsync", dir)?;
        w.done(Op::Delete, t, 0);
        if i % 256 == 0 {
            w.check()?;
        }
    }
    w.end_fs(dir).on("syncfs", dir)?;
    Ok(())
}

/// What find looks for: pfind's `-newer`, `-size Nc` and `-name "*01*"`.
pub struct FindSpec {
    /// Modification time (ns since the epoch) the files must be newer than.
    pub newer_ns: i128,
    pub size_bytes: u64,
    /// The name must contain this (the glob `*01*`).
    pub name_part: &'static str,
}

impl FindSpec {
    fn matches(&self, name: &str, md: &std::fs::Metadata) -> bool {
        let mtime_ns = md.mtime() as i128 * 1_000_000_000 + md.mtime_nsec() as i128;
        md.is_file()
            && md.len() == self.size_bytes
            && mtime_ns > self.newer_ns
            && name.contains(self.name_part)
    }
}

/// Walks the tree under `root` (depth first), lstat'ing every entry: one [`Op::Stat`]
/// per entry; adds the matches to `found`. With `share` = (part, parts), only the entries
/// of `root` itself whose name hashes to `part` of `parts` (and what is under them): how
/// the tasks of all ranks split a directory they share, as the IO500's parallel find does.
pub fn find(
    w: &mut Worker,
    root: &Path,
    spec: &FindSpec,
    found: &AtomicU64,
    share: Option<(usize, usize)>,
) -> Result<()> {
    let mine = |name: &std::ffi::OsStr| {
        share.is_none_or(|(part, parts)| {
            // FNV-1a: the same split on every rank.
            let h = name
                .as_encoded_bytes()
                .iter()
                .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                });
            h % parts as u64 == part as u64
        })
    };
    let mut dirs = vec![root.to_path_buf()];
    let mut matched = 0;
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).on("read directory", &dir)? {
            let entry = entry.on("read directory", &dir)?;
            if dir == root && !mine(&entry.file_name()) {
                continue;
            }
            let t = w.start();
            let md = entry.metadata().on("lstat", &entry.path())?;
            w.done(Op::Stat, t, 0);
            if md.is_dir() {
                dirs.push(entry.path());
            } else if spec.matches(&entry.file_name().to_string_lossy(), &md) {
                matched += 1;
            }
        }
        w.check()?;
    }
    found.fetch_add(matched, Ordering::Relaxed);
    Ok(())
}
