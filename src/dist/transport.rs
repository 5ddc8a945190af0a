//! How the processes of a run exchange what coordination needs: the [`Transport`] trait,
//! with [`Local`] (one process, always compiled) beside the MPI implementation
//! (`mpi.rs`, cargo feature `mpi`).

/// How processes exchange what coordination needs. Collective calls must be made by
/// every rank in the same order.
pub trait Transport: Send + Sync {
    /// This process's rank, 0-based.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Collective: the smallest of every rank's `v`, on every rank.
    fn min_u64(&self, v: u64) -> u64;
    /// Collective: every rank's bytes, in rank order, on every rank.
    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>>;
    /// Collective: rank 0's `bytes` on every rank (the others' argument is ignored).
    fn broadcast(&self, bytes: &[u8]) -> Vec<u8>;
    /// Not collective: asks every other rank to stop now (best effort).
    fn send_stop(&self) {}
    /// Not collective, may be called from another thread than the others: the rank that
    /// asked this one to stop, if one did.
    fn stop_received(&self) -> Option<usize> {
        None
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
    fn min_u64(&self, v: u64) -> u64 {
        v
    }
    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        vec![bytes.to_vec()]
    }
    fn broadcast(&self, bytes: &[u8]) -> Vec<u8> {
        bytes.to_vec()
    }
}
