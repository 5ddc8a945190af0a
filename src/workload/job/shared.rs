//! `shared_file=true`: every job of the trial (all `numjobs` threads of all MPI ranks)
//! works on one file in the shared directory, each on its own disjoint segments, in IOR's
//! segmented layout (hpc/ior `-s segments -b block -t transfer`): a job's `nrfiles` files
//! become its `nrfiles` segments of `size / nrfiles` bytes, and segment `i` of task `t` of
//! `n` lies at byte `(i × n + t) × size / nrfiles` ([`Task::segment_offset`]). The file is
//! `n × size` bytes.
//!
//! The job loop is unchanged: it still addresses "file `i`, offset `o`" of its own, and
//! [`Segmented`] turns that into offset `base[i] + o` of the one shared file. Random and
//! mixed jobs stay inside their own segments, and the verify pattern of a segment is keyed
//! by the task's global index and the segment, positioned from the segment's start.

use super::backend::{Io, IoBackend};
use super::verify::{self, Checked};
use crate::workload::tasks::Task;
use crate::workload::IoContext;
use anyhow::{anyhow, Result};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The shared file's name in the shared directory.
pub fn path(dir: &Path) -> PathBuf {
    dir.join("job.shared")
}

/// Byte offsets in the shared file of task `task`'s `nrfiles` segments of `seg_bytes`.
pub fn bases(task: Task, nrfiles: usize, seg_bytes: u64) -> Vec<u64> {
    (0..nrfiles as u64)
        .map(|s| task.segment_offset(s, seg_bytes))
        .collect()
}

/// An engine whose files are segments of one shared file: request `(file i, offset o)`
/// goes to file 0 of the inner engine at `base[i] + o`; a sync of any segment syncs the
/// file.
pub struct Segmented<'b, B> {
    pub inner: B,
    pub base: &'b [u64],
}

impl<B: IoBackend> IoBackend for Segmented<'_, B> {
    const BARE_STAMPS: bool = B::BARE_STAMPS;

    #[inline]
    fn queue(&mut self, io: &Io, buf: &mut [u8]) -> io::Result<Option<usize>> {
        let at = Io {
            file: 0,
            offset: self.base[io.file as usize] + io.offset,
            ..*io
        };
        self.inner.queue(&at, buf)
    }

    fn submit(&mut self) -> io::Result<()> {
        self.inner.submit()
    }

    fn reap(&mut self, min: usize, done: &mut dyn FnMut(u32, io::Result<usize>)) -> io::Result<()> {
        self.inner.reap(min, done)
    }

    fn sync(&mut self, _file: u32, data_only: bool) -> io::Result<()> {
        self.inner.sync(0, data_only)
    }
}

/// Reads task `task`'s segments of the shared file at `path` back and compares them with
/// the pattern (keys by the task's global index); fails on the first segment that differs.
/// Returns the blocks read.
pub fn verify(path: &Path, task: Task, nrfiles: usize, seg_bytes: u64, seed: u64) -> Result<u64> {
    let f = File::open(path).on("open", path)?;
    let mut buf = vec![0u8; verify::VERIFY_BLOCK];
    let mut blocks = 0;
    for (seg, base) in bases(task, nrfiles, seg_bytes).into_iter().enumerate() {
        let key = verify::file_key(seed, task.index, seg);
        let c: Checked = verify::check_range(&f, path, key, base, seg_bytes, &mut buf)?;
        blocks += c.blocks;
        if c.bad > 0 {
            return Err(anyhow!(
                "job: verify found corruption: {} of {} blocks of segment {seg} of task {} \
                 in {} differ from what was written (first at byte {})",
                c.bad,
                c.blocks,
                task.index,
                path.display(),
                c.first_bad.unwrap_or(0)
            ));
        }
    }
    Ok(blocks)
}
