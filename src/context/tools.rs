//! A phase whose one operation is the filesystem's own tool (mkfs, mount, umount, fsck)
//! acting on the target.

use super::workers::{Counters, LIVE};
use super::{Measured, PhaseSpec, TrialContext};
use crate::policy::CachePolicy;
use crate::probe::recorder::{Op, Recorder};
use crate::provision::Target;
use crate::signals::check_stop;
use anyhow::Result;
use std::time::Instant;

impl TrialContext<'_> {
    /// Runs and measures a phase whose single operation is `f` acting on the target itself
    /// — the filesystem's own tools (mkfs, mount, umount, fsck) through
    /// [`Target::tools`] — so the phase's wall time is the command's, CPU time includes
    /// the command's (it is a waited-for child), and the device counters show what it read
    /// and wrote. Recorded as one [`Op::Other`].
    ///
    /// The cache policy does not apply: what is mounted is the workload's business, and no
    /// drop is needed for the device to be cold. The kernel discards a block device's page
    /// cache when its last opener closes it (an umount, the end of an mkfs or fsck), so each
    /// tool starts with the device's data uncached — measured on a loop device: three
    /// `e2fsck -fn` in a row each read the same 17 MB from it, while with the device held
    /// open elsewhere the second read nothing. A drop_caches would only add loading the
    /// tool's own program from disk to its time.
    pub fn target_phase<T>(
        &mut self,
        spec: &PhaseSpec,
        f: impl FnOnce(&mut dyn Target) -> Result<T>,
    ) -> Result<T> {
        check_stop()?;
        self.gate.barrier()?;
        LIVE.clear();
        (self.progress)(spec.name);
        let mut rec = Recorder::new(Instant::now());
        // Not quiesced: the tools' own writes are theirs (mkfs and fsck close the device,
        // umount flushes), and the filesystem may not be mounted around them.
        let before = Counters::now(self.target.device_stat(), None)?;
        let cpu0 = crate::probe::sys::thread_cpu_times();
        let start = Instant::now();
        rec.restart(start);
        let out = f(&mut *self.target)?;
        rec.done(Op::Other, start, 0);
        let wall_s = start.elapsed().as_secs_f64();
        let own = crate::probe::sys::thread_cpu_times().window(cpu0);
        rec.finish();
        let m = Measured {
            rec,
            wall_s,
            spent: before.since(None, own)?,
            flags: Vec::new(),
            workers: 1,
            // No policy applied: the tools' phases are never judged cold.
            cache: CachePolicy::Keep,
        };
        let mut r = self.phase_result(spec, m, None);
        // The tools write their own data out: mkfs and fsck close the device, umount flushes.
        r.flags.retain(|f| f != "not-synced");
        self.phases.push(r);
        Ok(out)
    }
}
