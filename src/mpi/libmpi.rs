//! The MPI [`Transport`] (cargo feature `mpi`, the `mpi` crate over the system's MPI).
//!
//! No call here blocks until every rank comes: each collective is the non-blocking one
//! (`MPI_Iallreduce`, `MPI_Iallgather(v)`, `MPI_Ibcast`) polled with `MPI_Test`, and
//! given up ([`Lost`]) when a rank is lost or when this rank was interrupted and the
//! others have not come within the timeout. A rank is lost when a [`Monitor`] thread has
//! heard nothing from it within the timeout: every rank sends rank 0 a heartbeat each
//! second and rank 0 sends one to every rank, so rank 0 notices any rank gone (and tells
//! the others) and every rank notices rank 0 gone. The same thread takes the stop
//! messages a failing rank sends.
//!
//! MPI is initialised with `MPI_THREAD_MULTIPLE` for that thread. When the MPI library
//! offers less, there is no monitor: a failing rank is noticed by the others when their
//! phase ends, and a lost rank only by an interrupted one's timeout (said on stderr).

use super::{Lost, Transport};
use crate::signals::{stop_requested, STOP};
use anyhow::{anyhow, Result};
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::ffi;
use mpi::request::{Request, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::{Count, Threading};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The tag of the stop message a failing rank sends the others.
const STOP_TAG: i32 = 7301;
/// The tag of a heartbeat (its payload is the sender's rank).
const BEAT_TAG: i32 = 7302;
/// The tag of rank 0's word that a rank is lost (its payload is that rank).
const LOST_TAG: i32 = 7303;
/// Time between heartbeats.
const BEAT: Duration = Duration::from_secs(1);
/// No rank.
const NONE: usize = usize::MAX;

/// The processes of `MPI_COMM_WORLD`.
pub struct MpiTransport {
    rank: usize,
    size: usize,
    monitor: Arc<Monitor>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Finalises MPI when dropped (after the monitor thread has ended).
    _universe: Universe,
}

/// What the monitor thread knows about the other ranks.
struct Monitor {
    rank: usize,
    size: usize,
    timeout: Duration,
    started: Instant,
    /// When each rank was last heard from, in ms since `started`.
    seen_ms: Vec<AtomicU64>,
    /// The rank that is lost, or `NONE`.
    lost: AtomicUsize,
    /// The rank whose stop message arrived, or `NONE`.
    stop_from: AtomicUsize,
    done: AtomicBool,
}

impl MpiTransport {
    /// Initialises MPI (once per process); a rank silent for `timeout_s` is lost.
    pub fn init(timeout_s: f64) -> Result<Self> {
        let (universe, threading) = mpi::initialize_with_threading(Threading::Multiple)
            .ok_or_else(|| anyhow!("MPI was already initialised in this process"))?;
        let w = universe.world();
        let (rank, size) = (w.rank() as usize, w.size() as usize);
        let monitor = Arc::new(Monitor {
            rank,
            size,
            timeout: Duration::from_secs_f64(timeout_s),
            started: Instant::now(),
            seen_ms: (0..size).map(|_| AtomicU64::new(0)).collect(),
            lost: AtomicUsize::new(NONE),
            stop_from: AtomicUsize::new(NONE),
            done: AtomicBool::new(false),
        });
        let threads_ok = threading == Threading::Multiple;
        if !threads_ok && rank == 0 {
            crate::term::stderr_line(&format!(
                "fsarena: warning: this MPI offers {threading:?} threading, not Multiple: a \
                 rank that fails is noticed by the others when their phase ends, not at once, \
                 and a rank that dies only when another is interrupted"
            ));
        }
        let thread = match threads_ok && size > 1 {
            true => {
                let m = Arc::clone(&monitor);
                std::thread::Builder::new()
                    .name("fsarena-mpi-monitor".into())
                    .spawn(move || m.run())
                    .ok()
            }
            false => None,
        };
        Ok(Self {
            rank,
            size,
            monitor,
            thread,
            _universe: universe,
        })
    }

    /// Polls `req` until it completes, or gives it up (leaving its buffers to MPI).
    fn wait<D: ?Sized>(&self, mut req: Request<'static, D, StaticScope>) -> Result<(), Lost> {
        let mut stopped: Option<Instant> = None;
        let mut polls = 0u32;
        loop {
            match req.test() {
                Ok(_) => return Ok(()),
                Err(r) => req = r,
            }
            let lost = self.monitor.lost.load(Ordering::Relaxed);
            let give_up = if lost != NONE {
                Some(Lost::Rank(lost))
            } else if stop_requested()
                && stopped.get_or_insert_with(Instant::now).elapsed() > self.monitor.timeout
            {
                Some(self.monitor.silent().map_or(Lost::Interrupted, Lost::Rank))
            } else {
                None
            };
            if let Some(why) = give_up {
                // The request stays with MPI, and its buffers with it (they were leaked).
                std::mem::forget(req);
                return Err(why);
            }
            polls += 1;
            if polls < 200 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

impl Drop for MpiTransport {
    fn drop(&mut self) {
        self.monitor.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Monitor {
    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// The ranks this rank watches: all others on rank 0, rank 0 on the others.
    fn watched(&self) -> Vec<usize> {
        match self.rank {
            0 => (1..self.size).collect(),
            _ => vec![0],
        }
    }

    /// The watched rank silent longest, when it has been silent for three heartbeats.
    fn silent(&self) -> Option<usize> {
        let now = self.now_ms();
        self.watched()
            .into_iter()
            .map(|r| {
                (
                    now.saturating_sub(self.seen_ms[r].load(Ordering::Relaxed)),
                    r,
                )
            })
            .filter(|(ms, _)| *ms > 3 * BEAT.as_millis() as u64)
            .max()
            .map(|(_, r)| r)
    }

    fn run(&self) {
        let mut last_beat: Option<Instant> = None;
        while !self.done.load(Ordering::Relaxed) {
            self.receive();
            if last_beat.is_none_or(|t| t.elapsed() >= BEAT) {
                last_beat = Some(Instant::now());
                for r in self.watched() {
                    send(r, BEAT_TAG, self.rank as u64);
                }
            }
            if self.lost.load(Ordering::Relaxed) == NONE {
                let now = self.now_ms();
                let timeout = self.timeout.as_millis() as u64;
                let gone = self.watched().into_iter().find(|&r| {
                    now.saturating_sub(self.seen_ms[r].load(Ordering::Relaxed)) > timeout
                });
                if let Some(r) = gone {
                    self.lose(r);
                    if self.rank == 0 {
                        for other in (1..self.size).filter(|&o| o != r) {
                            send(other, LOST_TAG, r as u64);
                        }
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn lose(&self, r: usize) {
        if self
            .lost
            .compare_exchange(NONE, r, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            STOP.store(true, Ordering::Relaxed);
        }
    }

    /// Takes every message that has arrived.
    fn receive(&self) {
        for tag in [BEAT_TAG, STOP_TAG, LOST_TAG] {
            while let Some((msg, _)) = world().any_process().immediate_matched_probe_with_tag(tag) {
                let (v, status): (u64, _) = msg.matched_receive();
                let from = status.source_rank() as usize;
                if let Some(seen) = self.seen_ms.get(from) {
                    seen.store(self.now_ms(), Ordering::Relaxed);
                }
                match tag {
                    STOP_TAG => {
                        let _ = self.stop_from.compare_exchange(
                            NONE,
                            v as usize,
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        );
                    }
                    LOST_TAG => self.lose(v as usize),
                    _ => {}
                }
            }
        }
    }
}

fn world() -> SimpleCommunicator {
    SimpleCommunicator::world()
}

/// Sends `v` to rank `to` without waiting for it to arrive (a peer that is gone must not
/// hold this rank): the request is freed at once, MPI completes it in the background.
fn send(to: usize, tag: i32, v: u64) {
    let buf: &'static u64 = Box::leak(Box::new(v));
    let req = world()
        .process_at_rank(to as i32)
        .immediate_send_with_tag(StaticScope, buf, tag);
    // SAFETY: the request is handed back to MPI, which completes it; its buffer is leaked
    // (eight bytes per message), so it outlives the send.
    unsafe {
        let (mut raw, _, _) = req.into_raw();
        ffi::MPI_Request_free(&mut raw);
    }
}

/// A buffer handed to a non-blocking call: leaked while MPI may use it, taken back after
/// the call completed.
struct Lent<T: ?Sized>(*mut T);

impl<T: ?Sized> Lent<T> {
    fn new(b: Box<T>) -> Self {
        Self(Box::into_raw(b))
    }
    /// SAFETY (callers): one borrow at a time, for the duration of one request.
    fn get(&self) -> &'static mut T {
        // SAFETY: the pointer came from a Box and is freed only by `take`.
        unsafe { &mut *self.0 }
    }
    /// Takes the buffer back; only after the request that used it completed.
    fn take(self) -> Box<T> {
        // SAFETY: as in `get`; the request using it has completed.
        unsafe { Box::from_raw(self.0) }
    }
}

impl Transport for MpiTransport {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn min_u64(&self, v: u64) -> Result<u64, Lost> {
        let (send, recv) = (Lent::new(Box::new(v)), Lent::new(Box::new(u64::MAX)));
        let req = world().immediate_all_reduce_into(
            StaticScope,
            send.get(),
            recv.get(),
            SystemOperation::min(),
        );
        self.wait(req)?;
        send.take();
        Ok(*recv.take())
    }

    fn all_gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, Lost> {
        let w = world();
        let len = Lent::new(Box::new(bytes.len() as Count));
        let lens = Lent::new(vec![0 as Count; self.size].into_boxed_slice());
        self.wait(w.immediate_all_gather_into(StaticScope, len.get(), &mut lens.get()[..]))?;
        len.take();
        let lens = lens.take().into_vec();
        let displs: Vec<Count> = lens
            .iter()
            .scan(0, |acc, &n| {
                let at = *acc;
                *acc += n;
                Some(at)
            })
            .collect();
        let total: usize = lens.iter().map(|&n| n as usize).sum();
        let send = Lent::new(bytes.to_vec().into_boxed_slice());
        let buf = Lent::new(vec![0u8; total].into_boxed_slice());
        let part = Lent::new(Box::new(PartitionMut::new(
            &mut buf.get()[..],
            lens.clone(),
            displs.clone(),
        )));
        self.wait(w.immediate_all_gather_varcount_into(StaticScope, &send.get()[..], part.get()))?;
        part.take();
        send.take();
        let buf = buf.take();
        Ok(lens
            .iter()
            .zip(&displs)
            .map(|(&n, &at)| buf[at as usize..(at + n) as usize].to_vec())
            .collect())
    }

    fn broadcast(&self, bytes: &[u8]) -> Result<Vec<u8>, Lost> {
        let w = world();
        let root = w.process_at_rank(0);
        let len = Lent::new(Box::new(bytes.len() as u64));
        self.wait(root.immediate_broadcast_into(StaticScope, len.get()))?;
        let len = *len.take();
        if len == 0 {
            return Ok(Vec::new());
        }
        let buf = match self.rank {
            0 => bytes.to_vec(),
            _ => vec![0u8; len as usize],
        };
        let buf = Lent::new(buf.into_boxed_slice());
        self.wait(root.immediate_broadcast_into(StaticScope, &mut buf.get()[..]))?;
        Ok(buf.take().into_vec())
    }

    fn send_stop(&self) {
        for r in (0..self.size).filter(|&r| r != self.rank) {
            send(r, STOP_TAG, self.rank as u64);
        }
    }

    fn stop_received(&self) -> Option<usize> {
        match self.monitor.stop_from.load(Ordering::Relaxed) {
            NONE => None,
            r => Some(r),
        }
    }

    fn timeout_s(&self) -> f64 {
        self.monitor.timeout.as_secs_f64()
    }
}
