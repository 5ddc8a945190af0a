//! The MPI [`Transport`] (cargo feature `mpi`, the `mpi` crate over the system's MPI).
//!
//! MPI is initialised with `MPI_THREAD_MULTIPLE` so that the stop watcher
//! ([`super::Dist::watch`]) may probe for stop messages from its own thread while the
//! main thread waits for the phase's workers. When the MPI library offers less, the
//! watcher is off: a failing rank is then noticed at the end of the others' phase
//! instead of at once (said on stderr).

use super::Transport;
use anyhow::{anyhow, Result};
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::{Count, Threading};

/// The tag of the stop message a failing rank sends the others.
const STOP_TAG: i32 = 7301;

/// The processes of `MPI_COMM_WORLD`.
pub struct MpiTransport {
    /// Finalises MPI when dropped.
    _universe: Universe,
    rank: usize,
    size: usize,
    /// Whether another thread may call MPI at the same time (`MPI_THREAD_MULTIPLE`).
    threads_ok: bool,
}

impl MpiTransport {
    /// Initialises MPI (once per process).
    pub fn init() -> Result<Self> {
        let (universe, threading) = mpi::initialize_with_threading(Threading::Multiple)
            .ok_or_else(|| anyhow!("MPI was already initialised in this process"))?;
        let world = universe.world();
        let threads_ok = threading == Threading::Multiple;
        if !threads_ok && world.rank() == 0 {
            crate::progress::stderr_line(&format!(
                "fsarena: warning: this MPI offers {threading:?} threading, not Multiple: a \
                 rank that fails is noticed by the others when their phase ends, not at once"
            ));
        }
        Ok(Self {
            rank: world.rank() as usize,
            size: world.size() as usize,
            _universe: universe,
            threads_ok,
        })
    }
}

fn world() -> SimpleCommunicator {
    SimpleCommunicator::world()
}

impl Transport for MpiTransport {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn min_u64(&self, v: u64) -> u64 {
        let mut out = u64::MAX;
        world().all_reduce_into(&v, &mut out, SystemOperation::min());
        out
    }

    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let w = world();
        let len = bytes.len() as Count;
        let mut lens = vec![0 as Count; self.size];
        w.all_gather_into(&len, &mut lens[..]);
        let displs: Vec<Count> = lens
            .iter()
            .scan(0, |acc, &n| {
                let at = *acc;
                *acc += n;
                Some(at)
            })
            .collect();
        let total: usize = lens.iter().map(|&n| n as usize).sum();
        let mut buf = vec![0u8; total];
        {
            let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
            w.all_gather_varcount_into(bytes, &mut part);
        }
        lens.iter()
            .zip(&displs)
            .map(|(&n, &at)| buf[at as usize..(at + n) as usize].to_vec())
            .collect()
    }

    fn broadcast(&self, bytes: &[u8]) -> Vec<u8> {
        let w = world();
        let root = w.process_at_rank(0);
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = if self.rank == 0 {
            bytes.to_vec()
        } else {
            vec![0u8; len as usize]
        };
        if len > 0 {
            root.broadcast_into(&mut buf[..]);
        }
        buf
    }

    fn send_stop(&self) {
        let w = world();
        let me = self.rank as u64;
        for r in (0..self.size).filter(|&r| r != self.rank) {
            // Eight bytes go eagerly: the send completes without the receiver.
            w.process_at_rank(r as i32).send_with_tag(&me, STOP_TAG);
        }
    }

    fn stop_received(&self) -> Option<usize> {
        if !self.threads_ok {
            return None;
        }
        let (msg, _) = world()
            .any_process()
            .immediate_matched_probe_with_tag(STOP_TAG)?;
        let (from, _): (u64, _) = msg.matched_receive();
        Some(from as usize)
    }
}
