//! The sync protocol over an in-process transport: ranks are threads, collectives a
//! barrier around a shared slot per rank (what MPI does between processes).

use super::*;
use std::sync::Barrier;

struct Threads {
    rank: usize,
    shared: Arc<(Barrier, Mutex<Vec<Vec<u8>>>)>,
}

impl Transport for Threads {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.shared.1.lock().unwrap().len()
    }
    fn min_u64(&self, v: u64) -> Result<u64, Lost> {
        Ok(self
            .all_gather(&v.to_le_bytes())?
            .iter()
            .map(|b| u64::from_le_bytes(b[..8].try_into().unwrap()))
            .min()
            .unwrap())
    }
    fn all_gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, Lost> {
        let (barrier, slots) = &*self.shared;
        slots.lock().unwrap()[self.rank] = bytes.to_vec();
        barrier.wait();
        let all = slots.lock().unwrap().clone();
        barrier.wait();
        Ok(all)
    }
    fn broadcast(&self, bytes: &[u8]) -> Result<Vec<u8>, Lost> {
        Ok(self.all_gather(bytes)?.swap_remove(0))
    }
}

/// Runs `f(rank, dist)` on `n` threads, one per rank; returns their results by rank.
fn ranks<T: Send>(n: usize, f: impl Fn(usize, &Dist) -> T + Sync) -> Vec<T> {
    let shared = Arc::new((Barrier::new(n), Mutex::new(vec![Vec::new(); n])));
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|rank| {
                let t = Threads {
                    rank,
                    shared: Arc::clone(&shared),
                };
                let f = &f;
                s.spawn(move || {
                    let d = Dist::with_transport(Arc::new(t), Some(Mode::Shared), false);
                    f(rank, &d)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// A trial of `phases` phases in which rank `bad` fails after `fail_after` of them.
fn trial(d: &Dist, rank: usize, bad: usize, fail_after: usize, phases: usize) -> Result<()> {
    let work = (|| -> Result<()> {
        for i in 0..phases {
            if rank == bad && i == fail_after {
                return Err(anyhow!("disk on fire"));
            }
            PhaseGate::barrier(d)?;
        }
        Ok(())
    })();
    d.end_trial(work)
}

#[test]
fn all_ranks_learn_of_a_failure_at_the_same_collective() {
    let out = ranks(3, |rank, d| {
        let r = trial(d, rank, 1, 1, 4);
        // A collective after the trial still pairs up: nobody is one sync behind.
        let sizes = d.t.all_gather(&[rank as u8]).unwrap();
        (
            r.map_err(|e| format!("{e:#}")),
            sizes.len(),
            d.failure_seen(),
        )
    });
    assert_eq!(out[1].0.as_ref().unwrap_err(), "disk on fire");
    for r in [0, 2] {
        let e = out[r].0.as_ref().unwrap_err();
        assert!(e.contains("stopped because rank 1"), "{e}");
        assert!(e.contains("failed"), "{e}");
    }
    assert!(out.iter().all(|o| o.1 == 3 && o.2));
}

#[test]
fn a_failure_before_the_first_phase_and_a_clean_trial() {
    let out = ranks(3, |rank, d| trial(d, rank, 2, 0, 2).is_err());
    assert_eq!(out, vec![true; 3]);
    let out = ranks(2, |rank, d| {
        trial(d, rank, 9, 0, 3).map_err(|e| e.to_string())?;
        d.gather_trial(crate::mpi::tests::empty_trial())
            .map(|t| t.ranks.len())
            .map_err(|e| e.to_string())
    });
    assert_eq!(out, vec![Ok(2), Ok(0)]);
}

#[test]
fn codes_order_failure_before_interruption_before_stop() {
    for (st, r) in [
        (Status::Failed, 2),
        (Status::Interrupted, 0),
        (Status::Stopped, 4),
    ] {
        assert_eq!(Status::decode(st.code(r, 5), 5), Some((st, r)));
    }
    assert!(Status::Failed.code(4, 5) < Status::Interrupted.code(0, 5));
    assert_eq!(Status::decode(Status::Ok.code(1, 5), 5), None);
}

#[test]
fn the_exit_code_is_the_largest() {
    let out = ranks(3, |rank, d| d.finish([0, 130, 1][rank]));
    assert_eq!(out, vec![130; 3]);
}

#[test]
fn a_rank_interrupted_at_the_end_of_a_trial_interrupts_every_rank() {
    let out = ranks(3, |rank, d| {
        let own: Result<()> = match rank {
            1 => Err(Error::Interrupted.into()),
            _ => Ok(()),
        };
        let e = d.end_trial(own).unwrap_err();
        (
            exit_code(&e),
            exit_code(&d.run_error(Some(format!("{e:#}")))),
        )
    });
    assert_eq!(out, vec![(130, 130); 3], "exit 130 everywhere, not 1");
}

/// A transport whose collectives are given up: rank 2 of 3 was lost; counts its calls.
struct LostRank(AtomicUsize);

impl Transport for LostRank {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        3
    }
    fn min_u64(&self, _: u64) -> Result<u64, Lost> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Err(Lost::Rank(2))
    }
    fn all_gather(&self, _: &[u8]) -> Result<Vec<Vec<u8>>, Lost> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Err(Lost::Rank(2))
    }
    fn broadcast(&self, _: &[u8]) -> Result<Vec<u8>, Lost> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Err(Lost::Rank(2))
    }
    fn timeout_s(&self) -> f64 {
        10.0
    }
}

#[test]
fn a_lost_rank_is_named_and_no_collective_is_tried_after() {
    let t = Arc::new(LostRank(AtomicUsize::new(0)));
    let d = Dist::with_transport(t.clone(), Some(Mode::Fleet), false);
    let e = d.end_trial(Ok(())).unwrap_err();
    let text = format!("{e:#}");
    assert!(text.starts_with("lost rank 2 on "), "{text}");
    assert!(
        text.contains("for 10 s") && text.contains("fsarena cleanup"),
        "{text}"
    );
    assert_eq!(exit_code(&e), 1);
    assert!(d.is_gone());
    // Rank 0 keeps its own trial; the other collectives fail at once.
    assert_eq!(d.gather_trial(empty_trial()).unwrap().ranks.len(), 0);
    assert!(d.start_trial().is_err());
    assert_eq!(d.finish(0), 1);
    assert!(d.must_skip_finalize(1));
    assert_eq!(t.0.load(Ordering::Relaxed), 1, "one collective tried");
}

pub(crate) fn empty_trial() -> Trial {
    Trial::new("t", "w", "w", Default::default(), 1)
}
