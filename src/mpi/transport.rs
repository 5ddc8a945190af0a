//! How the processes of a run exchange what coordination needs: the [`Transport`] trait,
//! with [`Local`] (one process, always compiled) beside the MPI implementation
//! (`mpi.rs`, cargo feature `mpi`).

/// Why a collective call was given up before every rank made it: the run cannot go on
/// together, and each rank tears down what it has on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lost {
    /// This rank was interrupted, and the others did not come within the timeout.
    Interrupted,
    /// Nothing was heard from this rank within the timeout: it died, or its host cannot
    /// be reached.
    Rank(usize),
}

/// How processes exchange what coordination needs. Collective calls must be made by
/// every rank in the same order. A collective returns [`Lost`] when it was given up (a
/// rank was lost, or this one was interrupted and the others did not come in time);
/// after that no collective call may be made again.
pub trait Transport: Send + Sync {
    /// This process's rank, 0-based.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Collective: the smallest of every rank's `v`, on every rank.
    fn min_u64(&self, v: u64) -> Result<u64, Lost>;
    /// Collective: every rank's bytes, in rank order, on every rank.
    fn all_gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, Lost>;
    /// Collective: rank 0's `bytes` on every rank (the others' argument is ignored).
    fn broadcast(&self, bytes: &[u8]) -> Result<Vec<u8>, Lost>;
    /// Not collective: asks every other rank to stop now (best effort).
    fn send_stop(&self) {}
    /// Not collective, may be called from another thread than the others: the rank that
    /// asked this one to stop, if one did.
    fn stop_received(&self) -> Option<usize> {
        None
    }
    /// How long a rank may be silent before it counts as lost, and how long an
    /// interrupted rank waits for the others at a collective.
    fn timeout_s(&self) -> f64 {
        f64::INFINITY
    }
}

/// One process alone: rank 0 of 1.
pub struct Local;

impl Transport for Local {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn min_u64(&self, v: u64) -> Result<u64, Lost> {
        Ok(v)
    }
    fn all_gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, Lost> {
        Ok(vec![bytes.to_vec()])
    }
    fn broadcast(&self, bytes: &[u8]) -> Result<Vec<u8>, Lost> {
        Ok(bytes.to_vec())
    }
}
