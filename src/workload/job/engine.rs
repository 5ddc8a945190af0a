//! The hot loop of one `job` (one worker thread): draw where and how much, queue the
//! request on the engine, record its completion with the worker's own recorder.
//!
//! Per operation it reads the clock twice (start and completion), from the TSC where the
//! kernel trusts it (`probe::clock`): for the engines whose requests are system calls
//! (`psync`, and `null` which does nothing) a bare read, ~11 ns, which the call keeps in
//! order; for the others an ordered one, ~23 ns (against ~30 ns for the vDSO
//! `clock_gettime` behind `Instant`, on the machine of docs/performance.md). It makes no
//! syscall besides the I/O itself
//! (io_uring: one submit per batch, and a wait only when no completion is ready). It
//! allocates nothing: buffers, slots and the list of dirty files are made before the loop
//! (the recorder's time series grows by one bucket per 10 ms at most); it takes no lock.
//! Deadlines use the completion time the recorder read; a `rate` limit reads the clock
//! once more per request, and sleeps before issuing one, only when no request is in
//! flight (those are reaped first) — a sleep with requests in flight, or between the
//! completions of one reap, would be counted in their latency.

use super::backend::{AlignedBuf, Io, IoBackend};
use super::files::Order;
use super::gen::{BlockSizes, Picker, RandMap, Rng};
use super::verify;
use crate::context::Worker;
use crate::probe::recorder::Op;
use crate::probe::Stamp;
use anyhow::{anyhow, Result};
use std::io;
use std::time::{Duration, Instant};

/// What a job does, the same for every job of the trial.
#[derive(Clone, Debug)]
pub struct JobCfg {
    /// Sequential (each file from its start, wrapping) or random offsets.
    pub seq: bool,
    /// Sequential jobs: bytes to move on after each request beyond its end — a hole, or,
    /// negative, a step back (fio's `rw=read:N`).
    pub seq_add: i64,
    /// Percentage of operations that read: 100 read-only, 0 write-only.
    pub read_pct: u64,
    pub bs: BlockSizes,
    pub file_size: u64,
    pub nrfiles: usize,
    /// Files in use at once (`openfiles`; `nrfiles` when all are open): see `files::Order`.
    pub open_files: usize,
    /// Random offsets are multiples of this.
    pub align: u64,
    /// Draws block indexes for random offsets.
    pub picker: Picker,
    /// Random offsets use each block of a file once per pass (fio's random map), else
    /// they are drawn with replacement (fio's `norandommap`).
    pub random_map: bool,
    /// Drop a file's pages from the page cache when the job goes round it again (fio's
    /// `loop_cache_invalidate`).
    pub loop_invalidate: bool,
    pub depth: usize,
    /// Bytes per second per job; 0 = unlimited.
    pub rate: u64,
    /// fsync (or fdatasync, `sync_data`) the written files every this many writes; 0 = never.
    pub sync_every: u64,
    pub sync_data: bool,
    /// Write the verify pattern.
    pub verify: bool,
    /// What writes carry: "once" (filled from the data pool at the start), "refill"
    /// (again before every write) or "zero".
    pub buffers: &'static str,
    /// The share (%) of each 4 KiB written that is zeros.
    pub compress: u8,
    /// The run's seed.
    pub seed: u64,
    /// fio's thinktime: a pause after every `every` requests.
    pub think: Option<Think>,
    /// Engine name and whether files are O_DIRECT, for error messages.
    pub engine: &'static str,
    pub direct: bool,
}

/// fio's `thinktime`: after every `every` requests issued, the job waits for those in
/// flight, then spins `spin` and sleeps the rest of `total` before it issues the next,
/// inside the run's clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Think {
    pub every: u64,
    pub spin: Duration,
    pub total: Duration,
}

impl Think {
    /// The pause: a busy wait of `spin` (the CPU an application's processing would take),
    /// then a sleep of what is left of `total`.
    fn pause(&self) {
        let start = Instant::now();
        while start.elapsed() < self.spin.min(self.total) {
            std::hint::spin_loop();
        }
        if let Some(rest) = self.total.checked_sub(start.elapsed()) {
            std::thread::sleep(rest);
        }
    }
}

/// When a job stops issuing requests.
#[derive(Clone, Copy, Debug)]
pub enum Until {
    /// After this many bytes.
    Bytes(u64),
    /// After this long, counted from when all jobs are ready (set up and at the start
    /// line, see `Worker::ready`).
    Time(Duration),
    /// After this many bytes, or this long if that comes first (fio's `runtime` without
    /// `time_based`).
    BytesOrTime(u64, Duration),
}

impl Until {
    /// How long at most.
    fn time(self) -> Option<Duration> {
        match self {
            Self::Bytes(_) => None,
            Self::Time(d) | Self::BytesOrTime(_, d) => Some(d),
        }
    }

    /// How many bytes at most.
    fn bytes(self) -> Option<u64> {
        match self {
            Self::Time(_) => None,
            Self::Bytes(b) | Self::BytesOrTime(b, _) => Some(b),
        }
    }
}

/// One request in flight.
#[derive(Clone, Copy)]
struct Slot {
    start: Stamp,
    io: Io,
}

/// Everything the loop changes except the engine and the buffers.
struct State<'c> {
    cfg: &'c JobCfg,
    slots: Vec<Slot>,
    free: Vec<u32>,
    inflight: usize,
    until: Until,
    /// When the time of `until` ends, compared with each completion's stamp.
    deadline: Stamp,
    issued: u64,
    done_bytes: u64,
    completions: u64,
    stop_issuing: bool,
    writes_since_sync: u64,
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
    ever_written: Vec<bool>,
    began: Instant,
    err: Option<anyhow::Error>,
    /// Read stamps with [`Stamp::now_unordered`] (the engine's `BARE_STAMPS`).
    bare: bool,
    /// Requests issued since the last thinktime pause.
    since_think: u64,
}

impl State<'_> {
    /// Now, read as the engine allows (see [`IoBackend::BARE_STAMPS`]).
    #[inline]
    fn stamp(&self) -> Stamp {
        if self.bare {
            Stamp::now_unordered()
        } else {
            Stamp::now()
        }
    }

    fn complete(&mut self, w: &mut Worker, slot: u32, res: io::Result<usize>) {
        let now = self.stamp();
        let s = self.slots[slot as usize];
        self.free.push(slot);
        let n = match res {
            Ok(n) if n == s.io.len as usize => n,
            other => return self.failed(&s.io, other),
        };
        let op = if s.io.write { Op::Write } else { Op::Read };
        w.done_between(op, s.start, now, n as u64);
        self.done_bytes += n as u64;
        self.completions += 1;
        if s.io.write {
            self.writes_since_sync += 1;
            let f = s.io.file as usize;
            self.ever_written[f] = true;
            if !self.is_dirty[f] {
                self.is_dirty[f] = true;
                self.dirty.push(s.io.file);
            }
        }
        if self.until.time().is_some() {
            self.stop_issuing |= now >= self.deadline;
        }
        if self.completions % 1024 == 0 {
            if let Err(e) = w.check() {
                self.fail(e);
            }
        }
    }

    /// A request that failed or moved fewer bytes than asked: the job fails with it (out of
    /// line, so that the completion path stays small).
    #[cold]
    #[inline(never)]
    fn failed(&mut self, io: &Io, res: io::Result<usize>) {
        let e = match res {
            Ok(n) => {
                let what = if io.write { "write" } else { "read" };
                anyhow!(
                    "{} {what} at offset {} of file {}: {n} of {} bytes (short I/O)",
                    self.cfg.engine,
                    io.offset,
                    io.file,
                    io.len
                )
            }
            Err(e) => io_error(self.cfg, io, e),
        };
        self.fail(e);
    }

    /// Under a `rate` limit, how long until the bytes done so far are due (at `began` +
    /// done / rate); None when they are due now or there is no limit.
    fn wait(&self) -> Option<Duration> {
        if self.cfg.rate == 0 {
            return None;
        }
        let due = self.began
            + Duration::from_nanos(
                (self.done_bytes as u128 * 1_000_000_000 / self.cfg.rate as u128) as u64,
            );
        due.checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
    }

    /// Under a `rate` limit, waits until the bytes done so far are due.
    fn pace(&self) {
        if let Some(d) = self.wait() {
            std::thread::sleep(d);
        }
    }

    /// Whether a thinktime pause is due before the next request.
    fn think_due(&self) -> bool {
        self.cfg.think.is_some_and(|t| self.since_think >= t.every)
    }

    /// The thinktime pause, with nothing in flight.
    fn think(&mut self) {
        if let Some(t) = self.cfg.think {
            t.pause();
        }
        self.since_think = 0;
    }

    fn fail(&mut self, e: anyhow::Error) {
        self.stop_issuing = true;
        self.err.get_or_insert(e);
    }

    fn need_sync(&self) -> bool {
        self.cfg.sync_every > 0 && self.writes_since_sync >= self.cfg.sync_every
    }
}

/// What an I/O error means, with advice for the usual O_DIRECT refusal.
/// The next offset of a sequential job whose last request ended at `end`, and whether it
/// turned round the file: `end` itself, or with `add` (fio's `rw=read:N`) a hole after it
/// or, negative, a step back; past the file's end a hole wraps to its start and a step
/// back before its start to `add` before its end, as fio's `get_next_seq_offset` (which
/// adds nothing after a request at offset 0).
pub fn seq_next(end: u64, add: i64, size: u64) -> (u64, bool) {
    if end == 0 || add == 0 {
        return (end, false);
    }
    match end.checked_add_signed(add) {
        Some(o) if o < size => (o, false),
        _ if add > 0 => (0, true),
        _ => (size.saturating_sub(add.unsigned_abs()), true),
    }
}

pub fn io_error(cfg: &JobCfg, io: &Io, e: io::Error) -> anyhow::Error {
    let what = if io.write { "write" } else { "read" };
    let advice = if cfg.direct && e.raw_os_error() == Some(libc::EINVAL) {
        ": O_DIRECT needs offsets, sizes and buffers aligned to the device's logical block \
         size (see /sys/block/*/queue/logical_block_size); check bs and offset_align"
    } else {
        ""
    };
    anyhow::Error::new(e).context(format!(
        "{} {what} of {} bytes at offset {} of file {}{advice}",
        cfg.engine, io.len, io.offset, io.file
    ))
}

/// The engine failed with requests in flight: the kernel may still write into their
/// buffers, so they are leaked rather than freed (depth × bs bytes, once, in a failing
/// trial) — freed, the allocator could hand that memory to something else first.
fn abandon(bufs: Vec<AlignedBuf>, cfg: &JobCfg, what: &str, e: io::Error) -> anyhow::Error {
    std::mem::forget(bufs);
    anyhow!("{}: {what}: {e}", cfg.engine)
}

/// Zeros the last `pct`% of each 4 KiB of `buf` (fio's `buffer_compress_percentage`
/// with `buffer_compress_chunk=4k`; fsarena's `--data compressible:N` does the same).
pub fn compressible(buf: &mut [u8], pct: u8) {
    if pct == 0 {
        return;
    }
    for chunk in buf.chunks_mut(4096) {
        let zeros = chunk.len() * pct as usize / 100;
        let from = chunk.len() - zeros;
        chunk[from..].fill(0);
    }
}

/// Where a job's run left off: its sequential positions and random maps, which the run
/// after a ramp goes on from, as fio's does (empty: from the files' start, maps empty),
/// and the bytes it issued, which count in a size-based job's `size` in fio.
#[derive(Default)]
pub struct Resume {
    cursors: Vec<u64>,
    maps: Vec<RandMap>,
    pub issued: u64,
}

impl Until {
    /// This stop with `bytes` fewer to move (none, when a ramp moved them all).
    pub fn less(self, bytes: u64) -> Until {
        match self {
            Until::Bytes(b) => Until::Bytes(b.saturating_sub(bytes)),
            Until::BytesOrTime(b, t) => Until::BytesOrTime(b.saturating_sub(bytes), t),
            time => time,
        }
    }
}

/// Runs job `job` on engine `b` until `until`, recording into `w`, from where `resume`
/// says and leaving there where it stopped; returns the written
/// files' indexes (for the end-of-job fsync).
pub fn run<B: IoBackend>(
    b: &mut B,
    cfg: &JobCfg,
    job: usize,
    w: &mut Worker,
    until: Until,
    stream: u64,
    resume: &mut Resume,
) -> Result<Vec<u32>> {
    let depth = cfg.depth.max(1);
    let max_bs = cfg.bs.max() as usize;
    let mut bufs: Vec<AlignedBuf> = (0..depth).map(|_| AlignedBuf::new(max_bs)).collect();
    for buf in &mut bufs {
        match cfg.buffers {
            "zero" => buf.as_mut().fill(0),
            _ => w.data().fill(buf.as_mut()),
        }
        compressible(buf.as_mut(), cfg.compress);
    }
    let keys: Vec<u64> = (0..cfg.nrfiles)
        .map(|f| verify::file_key(cfg.seed, job, f))
        .collect();
    let mut rng = Rng::new(cfg.seed ^ (job as u64).wrapping_mul(0x9e37_79b9) ^ stream << 48);
    // One sequential position per file and direction, as fio's `last_pos[ddir]`.
    let mut cursors = match std::mem::take(&mut resume.cursors) {
        c if c.is_empty() => vec![0u64; cfg.nrfiles * 2],
        c => c,
    };
    let mut maps: Vec<RandMap> = match cfg.random_map && !cfg.seq {
        true if !resume.maps.is_empty() => std::mem::take(&mut resume.maps),
        true => vec![RandMap::new(cfg.picker.blocks()); cfg.nrfiles],
        false => Vec::new(),
    };
    let mut order = Order::new(cfg.nrfiles, cfg.open_files, cfg.file_size);
    let zero = Io {
        file: 0,
        slot: 0,
        write: false,
        offset: 0,
        len: 0,
    };
    let mut st = State {
        cfg,
        slots: vec![
            Slot {
                start: Stamp::now(),
                io: zero
            };
            depth
        ],
        free: (0..depth as u32).rev().collect(),
        inflight: 0,
        until,
        deadline: Stamp::now(),
        issued: 0,
        done_bytes: 0,
        completions: 0,
        stop_issuing: false,
        writes_since_sync: 0,
        dirty: Vec::with_capacity(cfg.nrfiles),
        is_dirty: vec![false; cfg.nrfiles],
        ever_written: vec![false; cfg.nrfiles],
        began: Instant::now(),
        err: None,
        bare: B::BARE_STAMPS,
        since_think: 0,
    };
    // Set up: wait for the other jobs, then the phase's clock and this job's run start.
    w.ready();
    st.began = Instant::now();
    if let Some(d) = until.time() {
        st.deadline = Stamp::now().plus(d);
    }
    loop {
        if st.think_due() && st.inflight == 0 && !st.stop_issuing {
            st.think();
        }
        let mut queued = 0;
        while !st.stop_issuing && !st.need_sync() {
            // A thinktime pause waits with nothing in flight, as fio's quiesces first.
            if st.think_due() {
                break;
            }
            // A request the rate limit holds back waits with nothing in flight (as fio
            // quiesces before it sleeps): those in flight are reaped first, else the sleep
            // would be in their latency (their completions seen only after it).
            if st.inflight > 0 && st.wait().is_some() {
                break;
            }
            let Some(slot) = st.free.pop() else { break };
            if let Some(total) = until.bytes() {
                if st.issued >= total {
                    st.free.push(slot);
                    st.stop_issuing = true;
                    break;
                }
            }
            let mut len = cfg.bs.next(&mut rng);
            let file = order.next(len);
            let write = match cfg.read_pct {
                100 => false,
                0 => true,
                p => rng.below(100) >= p,
            };
            let mut again = false;
            let offset = if cfg.seq {
                let c = &mut cursors[file * 2 + write as usize];
                let (mut o, turned) = seq_next(*c, cfg.seq_add, cfg.file_size);
                again = turned;
                if o + len > cfg.file_size {
                    o = 0;
                    again = true;
                }
                *c = o + len;
                o
            } else if maps.is_empty() {
                cfg.picker.next(&mut rng) * cfg.align
            } else {
                let m = &mut maps[file];
                again = m.full();
                let first = m.take(cfg.picker.next(&mut rng));
                let offset = first * cfg.align;
                if !cfg.bs.is_fixed() {
                    // As fio: a size that fits before the file's end, then shortened to
                    // the free blocks from the first on (blocks of the smallest size).
                    while offset + len > cfg.file_size {
                        len = cfg.bs.next(&mut rng);
                    }
                    let marked = m.extend(first, len.div_ceil(cfg.align)) * cfg.align;
                    if marked < len {
                        order.shorten(len - marked);
                        len = marked;
                    }
                }
                offset
            };
            if again && cfg.loop_invalidate {
                if let Err(e) = b.invalidate(file as u32) {
                    st.free.push(slot);
                    st.fail(anyhow!("{}: dropping file {file}'s cached pages: {e}", cfg.engine));
                    break;
                }
            }
            let io = Io {
                file: file as u32,
                slot,
                write,
                offset,
                len: len as u32,
            };
            st.issued += len;
            st.since_think += 1;
            let buf = &mut bufs[slot as usize].as_mut()[..len as usize];
            if write && cfg.verify {
                verify::fill(buf, keys[file], offset);
            } else if write && cfg.buffers == "refill" {
                w.data().fill(buf);
                compressible(buf, cfg.compress);
            }
            match b.ready(io.file) {
                Ok(None) => {}
                Ok(Some(t)) => w.done_part(Op::Open, t, 0),
                Err(e) => {
                    st.free.push(slot);
                    st.fail(e.context(format!("{} open of file {file}", cfg.engine)));
                    break;
                }
            }
            st.pace();
            let t = st.stamp();
            st.slots[slot as usize] = Slot { start: t, io };
            match b.queue(&io, buf) {
                Ok(Some(n)) => st.complete(w, slot, Ok(n)),
                Ok(None) => {
                    queued += 1;
                    st.inflight += 1;
                }
                Err(e) => st.complete(w, slot, Err(e)),
            }
        }
        if queued > 0 {
            let t = w.stamp();
            if let Err(e) = b.submit() {
                return Err(abandon(bufs, cfg, "submit", e));
            }
            w.done_part(Op::Submit, t, 0);
        }
        if st.inflight > 0 {
            let mut reaped = 0;
            let res = b.reap(1, &mut |slot, res| {
                reaped += 1;
                st.complete(w, slot, res)
            });
            st.inflight -= reaped;
            if let Err(e) = res {
                return Err(abandon(bufs, cfg, "wait for completions", e));
            }
        } else if st.err.is_none() && st.need_sync() {
            for &f in &st.dirty {
                let t = w.start();
                b.sync(f, cfg.sync_data)
                    .map_err(|e| anyhow!("{} sync of file {f}: {e}", cfg.engine))?;
                w.sync_done(t);
            }
            for i in 0..st.dirty.len() {
                let f = st.dirty[i] as usize;
                st.is_dirty[f] = false;
            }
            st.dirty.clear();
            st.writes_since_sync = 0;
        } else if st.stop_issuing {
            // fio pauses after the last request too.
            if st.think_due() {
                st.think();
            }
            break;
        }
        if st.inflight == 0 {
            if let Some(e) = st.err.take() {
                return Err(e);
            }
        }
    }
    if let Some(e) = st.err.take() {
        return Err(e);
    }
    // The last request's bytes are due too: a rate-limited job takes size / rate.
    st.pace();
    *resume = Resume {
        cursors,
        maps,
        issued: st.issued,
    };
    Ok((0..cfg.nrfiles as u32)
        .filter(|&f| st.ever_written[f as usize])
        .collect())
}
