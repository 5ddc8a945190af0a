//! The IO500's ior phases as one task (a worker thread of a rank) does them: a stream of
//! fixed-size transfers written until the stonewall deadline or the budget, fsynced before
//! the file is closed (ior `-e`), and read back — every transfer checked against the
//! pattern it was written with (ior `-R` with `-G`), unless `verify=false`.
//!
//! * ior-easy (`ior -t 2m -b 9920000m -F -e -k -g`): file per task,
//!   `ior-easy/ior_file_easy.NNNNNNNN`, transfers one after another.
//! * ior-hard (`ior -t 47008 -b 47008 -s N -e -k -g`): one shared file `ior-hard/file`,
//!   transfer `k` of task `t` at `(k × tasks + t) × 47008` ([`Task::segment_offset`]).

use crate::context::Worker;
use crate::probe::recorder::Op;
use crate::workload::job::{verify_fill, Checked};
use crate::workload::tasks::Task;
use crate::workload::IoContext;
use anyhow::{anyhow, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Instant;

/// Where a task's transfers go in its file.
#[derive(Clone, Copy, Debug)]
pub enum Layout {
    /// Transfer `k` at `k × xfer` of the task's own file (ior-easy).
    Sequential,
    /// Transfer `k` at segment `k` of `task` in the shared file (ior-hard).
    Segmented(Task),
}

/// One task's stream of transfers.
pub struct Stream<'a> {
    pub file: &'a File,
    pub path: &'a Path,
    pub xfer_bytes: u64,
    pub layout: Layout,
    /// The pattern's key (see `job`'s verify); `None`: the run's data, unchecked.
    pub key: Option<u64>,
}

impl Stream<'_> {
    fn offset(&self, k: u64) -> u64 {
        match self.layout {
            Layout::Sequential => k * self.xfer_bytes,
            Layout::Segmented(task) => task.segment_offset(k, self.xfer_bytes),
        }
    }

    /// Writes transfers until `deadline` (the stonewall, checked before each transfer,
    /// as ior's `-D` does) or `max` transfers, then fsyncs the file; returns the number
    /// written.
    pub fn write(&self, w: &mut Worker, max: u64, deadline: Instant) -> Result<u64> {
        let mut buf = vec![0u8; self.xfer_bytes as usize];
        let mut k = 0;
        while k < max && Instant::now() < deadline {
            match self.key {
                // The pattern's position is the transfer's place in the task's stream.
                Some(key) => verify_fill(&mut buf, key, k * self.xfer_bytes),
                None => w.data().fill(&mut buf),
            }
            let t = w.start();
            self.file
                .write_all_at(&buf, self.offset(k))
                .on("write", self.path)?;
            w.done(Op::Write, t, self.xfer_bytes);
            w.after_write(self.file).on("fsync", self.path)?;
            k += 1;
            w.check()?;
        }
        w.fsync(self.file).on("fsync", self.path)?;
        Ok(k)
    }

    /// Reads the first `n` transfers back, checking each against its pattern.
    pub fn read(&self, w: &mut Worker, n: u64) -> Result<()> {
        let mut buf = vec![0u8; self.xfer_bytes as usize];
        let mut bad = Checked::default();
        for k in 0..n {
            let t = w.start();
            self.file
                .read_exact_at(&mut buf, self.offset(k))
                .on("read", self.path)?;
            w.done(Op::Read, t, self.xfer_bytes);
            bad.blocks += 1;
            if let Some(key) = self.key {
                if !crate::workload::job::verify_matches(&buf, key, k * self.xfer_bytes) {
                    bad.bad += 1;
                    bad.first_bad.get_or_insert(self.offset(k));
                }
            }
            w.check()?;
        }
        if bad.bad > 0 {
            return Err(anyhow!(
                "io500: {} of {} transfers read from {} differ from what was written \
                 (first at byte {})",
                bad.bad,
                bad.blocks,
                self.path.display(),
                bad.first_bad.unwrap_or(0)
            ));
        }
        Ok(())
    }
}
