//! Untimed work of the trial's own that the watch must not count as competition: the
//! `crash` workload's recorded pass (a FUSE daemon of fsarena's writing an image on the
//! same disk, then crash states checked on loop devices of their own) moves hundreds of
//! megabytes and keeps both CPUs busy between the timed phases. [`untimed`] measures the
//! counters the watch reads over such a stretch, and [`super::Watch::finish`] takes those
//! stretches out of the trial's window, as if the watch had been paused.

use super::{bytes_of, kthread_delta, read_cpu, read_kthreads, CpuTicks};
use std::path::PathBuf;
use std::sync::Mutex;

/// What the stretches of untimed work moved since the current watch started.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Excluded {
    pub cpu: CpuTicks,
    pub kthread_ticks: u64,
    /// Bytes the target's loop device and its backing device moved.
    pub ours: u64,
    pub backing: u64,
    pub stretches: u32,
}

/// The watched devices' `stat` files: the loop device's and its backing device's.
type Devices = Option<(PathBuf, PathBuf)>;

/// The watched devices and the exclusions so far; `None` between watches.
static CURRENT: Mutex<Option<(Devices, Excluded)>> = Mutex::new(None);

/// Starts a watch's exclusions (its devices, if checked).
pub(super) fn begin(devices: Devices) {
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some((devices, Excluded::default()));
}

/// Ends them: what the untimed stretches moved.
pub(super) fn end() -> Excluded {
    let taken = CURRENT.lock().unwrap_or_else(|e| e.into_inner()).take();
    taken.map(|x| x.1).unwrap_or_default()
}

/// Runs `f`, untimed work of this trial, with the watch paused (module docs).
pub fn untimed<T>(f: impl FnOnce() -> T) -> T {
    let devices = CURRENT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|x| x.0.clone());
    let bytes = |d: &Devices| {
        d.as_ref()
            .map(|(o, b)| (bytes_of(o).unwrap_or(0), bytes_of(b).unwrap_or(0)))
            .unwrap_or((0, 0))
    };
    let (cpu0, k0, b0) = (read_cpu(), read_kthreads(), bytes(&devices));
    let out = f();
    let (cpu1, k1, b1) = (read_cpu(), read_kthreads(), bytes(&devices));
    if let Some((_, ex)) = CURRENT.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        if let (Some(a), Some(z)) = (cpu0, cpu1) {
            ex.cpu.total += z.total.saturating_sub(a.total);
            ex.cpu.busy += z.busy.saturating_sub(a.busy);
            ex.cpu.own += z.own.saturating_sub(a.own);
        }
        ex.kthread_ticks += kthread_delta(&k0, &k1);
        ex.ours += b1.0.saturating_sub(b0.0);
        ex.backing += b1.1.saturating_sub(b0.1);
        ex.stretches += 1;
    }
    out
}

/// `after` with the excluded ticks taken out, as if the clock had stopped meanwhile.
pub(super) fn less(after: CpuTicks, ex: &Excluded) -> CpuTicks {
    CpuTicks {
        total: after.total.saturating_sub(ex.cpu.total),
        busy: after.busy.saturating_sub(ex.cpu.busy),
        own: after.own.saturating_sub(ex.cpu.own),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untimed_stretch_is_measured_and_taken_out() {
        begin(None);
        let t = std::time::Instant::now();
        let spun = untimed(|| {
            let mut x = 0u64;
            while t.elapsed() < std::time::Duration::from_millis(60) {
                x = x.wrapping_add(1);
            }
            x
        });
        assert!(spun > 0);
        let ex = end();
        assert_eq!(ex.stretches, 1);
        assert!(ex.cpu.total > 0, "{ex:?}");
        let after = CpuTicks {
            total: ex.cpu.total + 100,
            busy: ex.cpu.busy + 10,
            own: ex.cpu.own + 5,
        };
        assert_eq!(
            less(after, &ex),
            CpuTicks {
                total: 100,
                busy: 10,
                own: 5
            }
        );
        // Outside a watch nothing is kept.
        assert_eq!(untimed(|| 7), 7);
        assert_eq!(end(), Excluded::default());
    }
}
