//! Tasks across processes and threads: a trial runs `size` ranks (MPI processes; 1 without
//! MPI), each with `workers` threads, and every (rank, worker) pair is one **task** with a
//! global index, as an MPI rank is in IOR and mdtest. Workloads that share one file or one
//! directory between tasks (`job` with `shared_file=true`, the IO500 suite's ior-hard and
//! mdtest-hard) derive offsets and names from this index, so tasks never collide.
//!
//! The shared file's layout is IOR's segmented one (hpc/ior, `-s segments -b block`,
//! `ior.c` GetOffsetArrayContiguous): segment `i` of task `t` of `n` lies at byte
//! `(i × n + t) × block` — the tasks' blocks interleave segment by segment.

use crate::context::Procs;
use crate::workload::IoContext;
use anyhow::Result;
use std::fs::{File, OpenOptions};
use std::path::Path;

/// One task: its global index among `total` tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    pub index: usize,
    pub total: usize,
}

impl Task {
    /// Worker `worker` of `workers` in process `procs.index` of `procs.count`: index
    /// `procs.index × workers + worker` of `procs.count × workers`.
    pub fn of(procs: Procs, workers: usize, worker: usize) -> Self {
        debug_assert!(worker < workers && procs.index < procs.count);
        Self {
            index: procs.index * workers + worker,
            total: procs.count * workers,
        }
    }

    /// Byte offset of this task's segment `segment` of `block_bytes` in a file shared by
    /// all tasks in IOR's segmented layout: `(segment × total + index) × block_bytes`.
    pub fn segment_offset(&self, segment: u64, block_bytes: u64) -> u64 {
        (segment * self.total as u64 + self.index as u64) * block_bytes
    }

    /// Size of a shared file holding `segments` segments of `block_bytes` for every task.
    pub fn shared_file_bytes(&self, segments: u64, block_bytes: u64) -> u64 {
        segments * self.total as u64 * block_bytes
    }
}

/// Opens the file at `path` that tasks share, creating it if it is missing, and makes it
/// at least `bytes` long, without truncating: every task calls it, in any order and at the
/// same time (threads and MPI ranks), and it is the same for all of them — `O_CREAT`
/// without `O_EXCL` opens the file another task made, and growing to the final size never
/// cuts what another task has written already. Open for reading and writing.
pub fn open_shared(path: &Path, bytes: u64) -> Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .on("create", path)?;
    if f.metadata().on("stat", path)?.len() < bytes {
        f.set_len(bytes).on("set length of", path)?;
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn index_is_rank_major() {
        let t = Task::of(Procs { index: 2, count: 3 }, 4, 1);
        assert_eq!(
            t,
            Task {
                index: 9,
                total: 12
            }
        );
        assert_eq!(Task::of(Procs::SOLO, 1, 0), Task { index: 0, total: 1 });
        // Two tasks, two segments of 10 bytes: t0 s0, t1 s0, t0 s1, t1 s1.
        let (t0, t1) = (Task { index: 0, total: 2 }, Task { index: 1, total: 2 });
        let offs = [
            t0.segment_offset(0, 10),
            t1.segment_offset(0, 10),
            t0.segment_offset(1, 10),
            t1.segment_offset(1, 10),
        ];
        assert_eq!(offs, [0, 10, 20, 30]);
        assert_eq!(t0.shared_file_bytes(2, 10), 40);
    }

    proptest! {
        /// Every (rank, worker) pair gets its own index, and the segments of all tasks
        /// tile the shared file exactly: disjoint and covering.
        #[test]
        fn segments_are_disjoint_and_cover(size in 1usize..5, workers in 1usize..5,
                                           segments in 1u64..6, block in 1u64..5000) {
            let mut starts = Vec::new();
            let mut indexes = Vec::new();
            for rank in 0..size {
                for w in 0..workers {
                    let t = Task::of(Procs { index: rank, count: size }, workers, w);
                    indexes.push(t.index);
                    for s in 0..segments {
                        starts.push(t.segment_offset(s, block));
                    }
                }
            }
            indexes.sort_unstable();
            prop_assert_eq!(indexes, (0..size * workers).collect::<Vec<_>>());
            starts.sort_unstable();
            let total = Task::of(Procs { index: 0, count: size }, workers, 0)
                .shared_file_bytes(segments, block);
            // Sorted starts one block apart from 0: no overlap, no gap, ending at the size.
            for (i, s) in starts.iter().enumerate() {
                prop_assert_eq!(*s, i as u64 * block);
            }
            prop_assert_eq!(starts.len() as u64 * block, total);
        }
    }
}
