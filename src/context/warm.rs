//! A warm phase measured as the median of runs back to back.
//!
//! A scan of a tree the caches hold is CPU work of tens of milliseconds; one interrupt, a
//! writeback burst or a neighbour's process lengthens a single run by 10% or more, and
//! with three or four repetitions one such run decides the verdict. Measured on ext4 and
//! xfs (quiet, metascan at scale 0.5, eight warm passes in each of three repetitions):
//! single runs of `du` varied up to 49% within a repetition, the median of eight by
//! 0.3–1.4% from one repetition to the next (docs/validation/2026-12-work-figures.md).

use super::{Measured, PhaseSpec, TrialContext, Worker};
use crate::policy::CachePolicy;
use anyhow::Result;

/// What runs nothing when a phase is announced.
fn silent(_: &str) {}

impl TrialContext<'_> {
    /// Runs a phase with the caches as the earlier phases left them
    /// ([`Self::phase_warm`]) `runs` times back to back, each run measured whole (its own
    /// clock, CPU and device counts, the filesystem quiesced around it), and keeps the run
    /// of median wall time as the phase (the lower middle one for an even count): all its
    /// figures come from that one run. The extra figure `warm_runs` says how many ran.
    /// Announced once.
    pub fn phase_warm_median<F>(
        &mut self,
        spec: &PhaseSpec,
        workers: usize,
        runs: usize,
        f: F,
    ) -> Result<()>
    where
        F: Fn(&mut Worker) -> Result<()> + Sync,
    {
        let announce = self.progress;
        let mut all: Vec<Measured> = Vec::with_capacity(runs.max(1));
        let mut failed = None;
        for i in 0..runs.max(1) {
            match self.measure(spec, workers, CachePolicy::Keep, &f) {
                Ok(m) => all.push(m),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
            if i == 0 {
                self.progress = &silent;
            }
        }
        self.progress = announce;
        if let Some(e) = failed {
            return Err(e);
        }
        all.sort_by(|a, b| a.wall_s.total_cmp(&b.wall_s));
        let median = all.swap_remove((all.len() - 1) / 2);
        let mut r = self.phase_result(spec, median, None);
        r.extra.insert("warm_runs".into(), runs.max(1) as f64);
        self.phases.push(r);
        Ok(())
    }
}
