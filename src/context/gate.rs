//! The sync points of a trial as a phase sees them: [`PhaseGate`], which
//! [`crate::context::TrialContext`] calls before each phase, and the stop watcher that runs
//! during the timed part of one. A process alone passes [`NoGate`]; processes running a
//! trial together pass theirs ([`crate::mpi::Dist`] under `run --mpi`), so the context
//! never reaches the layer that coordinates them. [`Procs`] is this process's place among
//! them.

use anyhow::Result;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Keeps a phase's stop watcher running; stops and joins it when dropped.
pub struct Watch {
    pub(crate) done: Arc<AtomicBool>,
    pub(crate) handle: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The sync points of a trial as a phase sees them ([`crate::context::TrialContext`]).
pub trait PhaseGate {
    /// Whether several processes run the phase (the phase then keeps its histogram's
    /// buckets for merging).
    fn is_multi(&self) -> bool {
        false
    }
    /// A barrier with a status: every rank has finished what came before.
    fn barrier(&self) -> Result<()> {
        Ok(())
    }
    /// The stop watcher for the timed part of a phase.
    fn watch(&self) -> Option<Watch> {
        None
    }
}

/// The gate of a process alone: no barriers.
pub struct NoGate;

impl PhaseGate for NoGate {}

/// This process's place among the processes that run one trial together: process `index`
/// of `count` (its MPI rank and the communicator's size). A run without MPI is 0 of 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Procs {
    pub index: usize,
    pub count: usize,
}

impl Procs {
    /// One process alone.
    pub const SOLO: Procs = Procs { index: 0, count: 1 };
}
