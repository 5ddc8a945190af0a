//! The phases of a job: choosing the engine, laying out and filling the files, the timed
//! run of each job on its backend, the end sync and the verify pass.

use super::*;

impl Job {
    /// The engine to use: `io_uring` is probed first; where it is missing, psync with a
    /// message under `fallback=psync`, else a clear error. `libaio` is probed too, and
    /// fails the trial where the kernel gives no AIO context, saying why.
    pub(super) fn resolve_engine(&self, cx: &mut TrialContext) -> Result<Engine> {
        if self.engine == Engine::Libaio {
            libaio::probe().map_err(|why| anyhow!(why))?;
        }
        if self.engine != Engine::IoUring {
            return Ok(self.engine);
        }
        match uring::probe() {
            Ok(()) => Ok(Engine::IoUring),
            Err(why) if self.fallback => {
                cx.message(format!(
                    "job: {why}; running engine=psync (iodepth 1) instead"
                ));
                Ok(Engine::Psync)
            }
            Err(why) => Err(anyhow!(why)),
        }
    }

    /// Writes job `job`'s files; with `shared_file`, makes the shared file (each task
    /// does, idempotently) and writes the task's segments of it.
    pub(super) fn layout(
        &self,
        w: &mut Worker,
        job: usize,
        dir: &Path,
        engine: Engine,
        seed: u64,
        task: Task,
    ) -> Result<()> {
        let mut buf = vec![0u8; LAYOUT_CHUNK as usize];
        if self.shared {
            let path = shared::path(dir);
            let t = w.start();
            let total = task.shared_file_bytes(self.nrfiles as u64, self.file_size());
            let f = crate::workload::tasks::open_shared(&path, total)?;
            w.done(Op::Create, t, 0);
            if self.fills(engine) {
                let bases = shared::bases(task, self.nrfiles, self.file_size());
                for (seg, base) in bases.into_iter().enumerate() {
                    let key = verify::file_key(seed, task.index, seg);
                    self.fill(w, &f, &path, base, key, &mut buf)?;
                }
                w.end_file(&f).on("fsync", &path)?;
            }
            return Ok(());
        }
        if self.owner(job) != job {
            // Job 0 makes the files every job uses.
            return Ok(());
        }
        for file in 0..self.nrfiles {
            let path = Self::path(dir, job, file);
            let t = w.start();
            let f = File::create(&path).on("create", &path)?;
            if !self.fills(engine) {
                w.done(Op::Create, t, 0);
                if let Some(mode) = self.fallocate {
                    // Timed on its own (an `other` part), not in the create's latency.
                    let t = w.start();
                    preallocate(&f, mode, self.file_size()).on("fallocate", &path)?;
                    w.done_part(Op::Other, t, 0);
                    w.end_file(&f).on("fsync", &path)?;
                }
                continue;
            }
            w.done(Op::Create, t, 0);
            let key = verify::file_key(seed, job, file);
            self.fill(w, &f, &path, 0, key, &mut buf)?;
            w.end_file(&f).on("fsync", &path)?;
        }
        Ok(())
    }

    /// Writes one file's (or segment's) `file_size` bytes at `base` of `f`: the verify
    /// pattern keyed `key`, or the data pool's bytes.
    pub(super) fn fill(
        &self,
        w: &mut Worker,
        f: &File,
        path: &Path,
        base: u64,
        key: u64,
        buf: &mut [u8],
    ) -> Result<()> {
        let mut off = 0;
        while off < self.file_size() {
            let n = (self.file_size() - off).min(LAYOUT_CHUNK) as usize;
            if self.verify {
                verify::fill(&mut buf[..n & !7], key, off);
            } else if self.buffers == "zero" {
                buf[..n].fill(0);
            } else {
                w.data().fill(&mut buf[..n]);
                engine::compressible(&mut buf[..n], self.compress);
            }
            let t = w.start();
            f.write_all_at(&buf[..n], base + off).on("write", path)?;
            w.done(Op::Write, t, n as u64);
            off += n as u64;
            w.check()?;
        }
        Ok(())
    }

    /// Runs job `idx` (task `task`) on `engine` until `until`; returns the files (or
    /// segments) it wrote.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn job(
        &self,
        engine: Engine,
        w: &mut Worker,
        idx: usize,
        files: &mut JobFiles,
        cfg: &JobCfg,
        until: Until,
        stream: u64,
        task: Task,
        resume: &mut engine::Resume,
    ) -> Result<Vec<u32>> {
        if !self.cpus.is_empty() {
            pin(self.cpus[idx % self.cpus.len()])?;
        }
        let bases = (self.shared && engine.caps().uses_files)
            .then(|| shared::bases(task, self.nrfiles, self.file_size()));
        let (job, bases) = match &bases {
            Some(b) => (task.index, Some(b.as_slice())),
            None => (idx, None),
        };
        let run = Run {
            cfg,
            job,
            until,
            stream,
            bases,
            resume,
        };
        let files = match (engine, files) {
            (Engine::Psync, JobFiles::Cached(cache)) => return run.on(CachedPsync { cache }, w),
            (_, JobFiles::All(v)) => v,
            (_, JobFiles::Cached(_)) => {
                return Err(anyhow!("job: openfiles needs engine=psync"));
            }
        };
        match engine {
            Engine::Psync => run.on(Psync::new(files), w),
            Engine::Null => run.on(Null, w),
            Engine::Mmap => {
                let len = if self.shared {
                    task.shared_file_bytes(self.nrfiles as u64, self.file_size())
                } else {
                    self.file_size()
                };
                let m = Mmap::new(files, len)
                    .map_err(|e| anyhow!("engine=mmap: mapping the files: {e}"))?;
                run.on(m, w)
            }
            Engine::IoUring => {
                let u = uring::Uring::new(files, cfg.depth)
                    .map_err(|e| anyhow!(uring::unavailable(&e)))?;
                run.on(u, w)
            }
            Engine::Libaio => {
                let a = libaio::Libaio::new(files, cfg.depth)
                    .map_err(|e| anyhow!(libaio::unavailable(&e)))?;
                run.on(a, w)
            }
        }
    }

    /// The run of job `job` (task `task`), its files opened by `open`: fio's `loops`, each
    /// loop reopening the files (dropping their pages first under `loop_invalidate`),
    /// starting from their beginning with a new random map, ending with the end sync;
    /// its offsets drawn again from the seed, another stream each loop under
    /// `randrepeat=false`. A time-based job runs once. The first loop goes on from
    /// `resume` (where a ramp left off).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_loops<'f>(
        &self,
        engine: Engine,
        w: &mut Worker,
        job: usize,
        cfg: &JobCfg,
        task: Task,
        open: &dyn Fn(usize) -> Result<JobFiles<'f>>,
        mut resume: engine::Resume,
    ) -> Result<()> {
        let started = std::time::Instant::now();
        let loops = if self.runtime.is_some() { 1 } else { self.loops };
        for lp in 0..loops {
            let mut mine = open(job)?;
            if lp > 0 && cfg.loop_invalidate {
                for f in 0..self.nrfiles as u32 {
                    mine.invalidate(f)?;
                }
            }
            let Some(until) = self.until_loop(started.elapsed()) else {
                break;
            };
            // A ramp's bytes count in a size-based job's size, as in fio.
            let until = until.less(resume.issued);
            let stream = if self.randrepeat { 0 } else { 2 + lp };
            let written =
                self.job(engine, w, job, &mut mine, cfg, until, stream, task, &mut resume)?;
            resume = engine::Resume::default();
            self.end_sync(w, &mut mine, &written, engine)?;
        }
        Ok(())
    }

    /// The loop's configuration; `--sync each` fsyncs after every write (`fsync=1`).
    pub(super) fn cfg(&self, engine: Engine, seed: u64, sync: SyncPolicy) -> JobCfg {
        let every = if sync == SyncPolicy::Each && engine != Engine::Null {
            1
        } else {
            self.fsync.max(self.fdatasync)
        };
        // A random map's offsets are those where the smallest size fits (as fio's
        // `last_block`; a larger one is drawn again until it fits), else the largest's.
        let top = match self.random_map {
            true => self.bs.min(),
            false => self.bs.max(),
        };
        let blocks = (self.file_size() - top) / self.align + 1;
        JobCfg {
            seq: self.seq(),
            seq_add: self.seq_add,
            read_pct: self.read_pct,
            bs: self.bs.clone(),
            file_size: self.file_size(),
            nrfiles: self.nrfiles,
            open_files: self.open_files(engine),
            align: self.align,
            picker: Picker::new(self.dist, blocks, seed),
            random_map: self.random_map,
            loop_invalidate: self.loop_invalidate,
            depth: if engine.caps().max_depth > 1 {
                self.depth
            } else {
                1
            },
            rate: self.rate,
            sync_every: every,
            sync_data: self.fdatasync > 0 && sync != SyncPolicy::Each,
            verify: self.verify,
            buffers: self.buffers,
            compress: self.compress,
            seed,
            engine: engine.name(),
            direct: self.direct,
            think: self.think,
        }
    }

    /// When one loop of the run ends, `spent` into the run: after `io_size` (else
    /// `size`) bytes — with `seq_add` holes and no more than `size`, no more than one pass
    /// over the files, as fio's — or when the run's time-based `runtime` or size-based `timeout` is
    /// up; `None` when it is up already.
    pub(super) fn until_loop(&self, spent: Duration) -> Option<Until> {
        if let Some(d) = self.runtime {
            return d.checked_sub(spent).map(Until::Time);
        }
        let mut bytes = self.io_size.unwrap_or(self.size);
        if self.seq_add > 0 && bytes <= self.size {
            // With holes, fio's pass over a file ends at its end: fewer bytes than its size.
            let (bs, step) = (self.bs.min(), self.bs.min() + self.seq_add as u64);
            let per_file = (self.file_size().saturating_sub(bs) / step + 1) * bs;
            bytes = bytes.min(per_file * self.nrfiles as u64);
        }
        match self.timeout {
            Some(t) => t.checked_sub(spent).map(|left| Until::BytesOrTime(bytes, left)),
            None => Some(Until::Bytes(bytes)),
        }
    }

    /// The run phase as reported: random jobs by IOPS, sequential ones by MB/s; jobs that
    /// only read are read phases (the cache policy applies as to any read).
    pub(super) fn run_spec(&self) -> PhaseSpec {
        PhaseSpec {
            kind: if self.read_pct == 100 {
                PhaseKind::Read
            } else {
                PhaseKind::Write
            },
            primary: if self.seq() {
                Primary::MbPerS
            } else {
                Primary::OpsPerS
            },
            ..RUN
        }
    }

    /// fsyncs the files a job wrote, as `end_fsync` or the sync policy asks.
    pub(super) fn end_sync(
        &self,
        w: &mut Worker,
        files: &mut JobFiles,
        written: &[u32],
        engine: Engine,
    ) -> Result<()> {
        let policy_end = w.sync_policy() == SyncPolicy::End;
        if engine == Engine::Null || !(self.end_fsync || self.fsync_on_close || policy_end) {
            return Ok(());
        }
        // One shared file: whichever segments were written, it is synced once.
        let written = if self.shared && !written.is_empty() {
            &[0][..]
        } else {
            written
        };
        for &f in written {
            let t = w.start();
            files
                .sync_all(f)
                .map_err(|e| anyhow!("job: end fsync of file {f}: {e}"))?;
            w.sync_done(t);
        }
        Ok(())
    }

    /// `pre_read`: fsyncs each of job `job`'s files (fio's `create_fsync` after its layout)
    /// and reads it once into the page cache, as fio's `pre_read` does before the job.
    pub(super) fn pre_read_files(&self, dir: &Path, job: usize) -> Result<()> {
        let mut buf = vec![0u8; LAYOUT_CHUNK as usize];
        for file in 0..self.nrfiles {
            let path = Self::path(dir, self.owner(job), file);
            let f = File::open(&path).on("open", &path)?;
            f.sync_all().on("fsync", &path)?;
            let mut off = 0;
            loop {
                let n = f.read_at(&mut buf, off).on("read", &path)?;
                if n == 0 {
                    break;
                }
                off += n as u64;
            }
        }
        Ok(())
    }

    /// Reads job `job`'s files back; the first file with blocks that differ from the
    /// pattern fails the phase with their count.
    pub(super) fn verify(
        &self,
        w: &mut Worker,
        job: usize,
        dir: &Path,
        seed: u64,
        task: Task,
    ) -> Result<()> {
        if self.shared {
            let t = w.start();
            let path = shared::path(dir);
            let blocks = shared::verify(&path, task, self.nrfiles, self.file_size(), seed)?;
            w.done_batch(Op::Read, t, blocks, self.size);
            return Ok(());
        }
        let mut buf = vec![0u8; verify::VERIFY_BLOCK];
        for file in 0..self.nrfiles {
            let path = Self::path(dir, job, file);
            let t = w.start();
            let c = check_file(
                &path,
                verify::file_key(seed, job, file),
                self.file_size(),
                &mut buf,
            )?;
            w.done_batch(Op::Read, t, c.blocks, self.file_size());
            if c.bad > 0 {
                return Err(anyhow!(
                    "job: verify found corruption: {} of {} blocks of {} differ from what was \
                     written (first at byte {})",
                    c.bad,
                    c.blocks,
                    path.display(),
                    c.first_bad.unwrap_or(0)
                ));
            }
        }
        Ok(())
    }
}

/// Reserves the first `len` bytes of `f` with fallocate(2) in `mode` (0: the file grows to
/// `len`; `FALLOC_FL_KEEP_SIZE`: its size stays). Like fio's `fallocate=native`, a
/// filesystem that has no fallocate (`EOPNOTSUPP`) leaves the file as it is.
pub(super) fn preallocate(f: &File, mode: i32, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: fallocate on a descriptor we own, with plain integer arguments.
    let rc = unsafe { libc::fallocate(f.as_raw_fd(), mode, 0, len as libc::off_t) };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EOPNOTSUPP) => Ok(()),
        _ => Err(e),
    }
}

/// Pins the calling thread to CPU `cpu`.
pub(super) fn pin(cpu: u64) -> Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET stays within it (cpu was
    // checked against CPU_SETSIZE).
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        return Err(anyhow!(
            "job: cannot pin to cpu {cpu}: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// One job's run on an engine: the loop's arguments, and the segments' offsets when the
/// files are segments of one shared file.
pub(super) struct Run<'a> {
    pub(super) cfg: &'a JobCfg,
    pub(super) job: usize,
    pub(super) until: Until,
    pub(super) stream: u64,
    pub(super) bases: Option<&'a [u64]>,
    /// Where the job goes on from (after a ramp), and leaves off.
    pub(super) resume: &'a mut engine::Resume,
}

impl Run<'_> {
    pub(super) fn on<B: IoBackend>(self, mut b: B, w: &mut Worker) -> Result<Vec<u32>> {
        let (cfg, job, until, stream) = (self.cfg, self.job, self.until, self.stream);
        let resume = self.resume;
        // The engine's teardown (libaio's io_destroy waits for an RCU grace period, tens of
        // ms) is not the filesystem's time; fio's runtime ends before it too.
        let (done, t) = match self.bases {
            Some(base) => {
                let mut s = shared::Segmented { inner: b, base };
                let done = engine::run(&mut s, cfg, job, w, until, stream, resume);
                let t = std::time::Instant::now();
                drop(s);
                (done, t)
            }
            None => {
                let done = engine::run(&mut b, cfg, job, w, until, stream, resume);
                let t = std::time::Instant::now();
                drop(b);
                (done, t)
            }
        };
        w.untimed(t.elapsed());
        done
    }
}
