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
    fn min_u64(&self, v: u64) -> u64 {
        self.all_gather(&v.to_le_bytes())
            .iter()
            .map(|b| u64::from_le_bytes(b[..8].try_into().unwrap()))
            .min()
            .unwrap()
    }
    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let (barrier, slots) = &*self.shared;
        slots.lock().unwrap()[self.rank] = bytes.to_vec();
        barrier.wait();
        let all = slots.lock().unwrap().clone();
        barrier.wait();
        all
    }
    fn broadcast(&self, bytes: &[u8]) -> Vec<u8> {
        self.all_gather(bytes).swap_remove(0)
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
        let sizes = d.t.all_gather(&[rank as u8]);
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
        d.gather_trial(crate::dist::tests::empty_trial())
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

pub(crate) fn empty_trial() -> Trial {
    Trial {
        target: "t".into(),
        workload: "w".into(),
        label: "w".into(),
        params: Default::default(),
        rep: 1,
        status: "ok".into(),
        error: None,
        provision: Default::default(),
        phases: vec![],
        peak_rss_bytes: 0,
        log: None,
        elapsed_s: None,
        ranks: vec![],
        disturbance: None,
    }
}
