//! A cheaper clock for hot loops: the CPU's time-stamp counter, where the kernel trusts it.
//!
//! `Instant::now()` is a vDSO `clock_gettime(CLOCK_MONOTONIC)`: ~30 ns of CPU on the 2-vCPU
//! KVM guest of docs/performance.md, the largest part of recording one operation. Reading
//! the TSC directly costs ~23 ns there with the `lfence` that keeps it in order
//! ([`Stamp::now`], see the private `rdtsc` below), ~11 ns as a bare `rdtsc`
//! ([`Stamp::now_unordered`], for reads a system call keeps in order). fio does the same (`clocksource=cpu`,
//! its default where the TSC is reliable), calibrating the TSC against the system clock.
//!
//! The TSC is used only where it is a clock: x86-64, the CPU reports `constant_tsc` (the
//! rate does not follow the core's frequency) and `nonstop_tsc` (it keeps counting in deep
//! idle states), and the kernel's own clocksource is `tsc` — the kernel checks at boot and
//! while running that the counters of all CPUs agree, and switches away from `tsc` when they
//! do not, so a stamp read on one CPU can be compared with one read on another. Anywhere
//! else, or with `FSARENA_CLOCK=monotonic` in the environment, a [`Stamp`] is nanoseconds of
//! `Instant` since a process-wide epoch: same API, `Instant`'s cost.
//!
//! Calibration (once per process, ~10 ms, done by [`init`] before any timed phase: a run
//! starts it in the background when it begins, and the recorder waits for it when it is
//! made): a (TSC, `CLOCK_MONOTONIC`) pair is read at the start
//! and after a 10 ms sleep, each as the tightest of a few TSC–clock–TSC brackets, so that a
//! preemption inside a bracket does not skew it. The ratio of the two spans gives ns per
//! tick, kept as a 32.32 fixed-point factor; the reading error is ~100 ns over 10 ms
//! (~10 ppm, i.e. 10 ns in a 1 ms latency).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A point in time from the cheapest trustworthy clock (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp(u64);

/// How stamps are read and turned into nanoseconds.
#[derive(Debug)]
struct Calibration {
    /// Stamps are TSC ticks (else nanoseconds since `epoch`).
    tsc: bool,
    /// Nanoseconds per tick, 32.32 fixed point (1 << 32 when stamps are nanoseconds).
    ns_per_tick_q32: u64,
    /// An instant and the stamp read at it.
    epoch: Instant,
    epoch_stamp: u64,
}

static CALIBRATION: OnceLock<Calibration> = OnceLock::new();

/// Calibrates the clock now if it was not yet (takes ~10 ms once per process when the TSC
/// is used). Called when a recorder is made, so that no timed phase pays for it.
pub fn init() {
    calibration();
}

/// Starts calibrating the clock on a thread of its own, so that the 10 ms sleep overlaps
/// whatever the caller does next (a run's set-up); [`init`] and every stamp wait for it.
pub fn init_in_background() {
    if CALIBRATION.get().is_none() {
        std::thread::spawn(init);
    }
}

/// The factor that turns stamp differences into nanoseconds, copied out of the
/// calibration by a hot loop's owner once (a recorder when it is made), so that each
/// conversion is one multiplication and no check that the calibration was made.
#[derive(Clone, Copy, Debug)]
pub struct Scale(u64);

/// This process's [`Scale`] (calibrating the clock first if it was not yet).
pub fn scale() -> Scale {
    Scale(calibration().ns_per_tick_q32)
}

/// Whether stamps are read from the TSC (false: from `Instant`).
pub fn uses_tsc() -> bool {
    calibration().tsc
}

#[inline]
fn calibration() -> &'static Calibration {
    CALIBRATION.get_or_init(calibrate)
}

/// The TSC, read after every earlier instruction has completed (`lfence; rdtsc`, the
/// kernel's `rdtsc_ordered`). A bare `rdtsc` may execute before the instructions ahead of
/// it: here reads ordered by a lock on another CPU came out up to 178 ticks (73 ns) before
/// the previous one in 1.2% of the handovers, and none with the `lfence` (measured with a
/// two-thread ping-pong, 400,000 handovers); for a latency it would let the completion's
/// read run ahead of the end of the operation.
#[cfg(target_arch = "x86_64")]
#[inline]
fn rdtsc() -> u64 {
    // SAFETY: lfence and rdtsc exist on every x86-64 CPU (SSE2 is part of x86-64) and have
    // no memory effects.
    unsafe {
        std::arch::x86_64::_mm_lfence();
        std::arch::x86_64::_rdtsc()
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn rdtsc() -> u64 {
    unreachable!("the TSC is used only on x86-64")
}

/// The TSC read without the `lfence`: the CPU may execute it ahead of the instructions
/// before it. Only for reads that a system call separates from what they time (see
/// [`Stamp::now_unordered`]).
#[cfg(target_arch = "x86_64")]
#[inline]
fn rdtsc_bare() -> u64 {
    // SAFETY: rdtsc exists on every x86-64 CPU and has no memory effects.
    unsafe { std::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn rdtsc_bare() -> u64 {
    unreachable!("the TSC is used only on x86-64")
}

/// Whether the TSC may serve as the clock here (see the module docs).
fn tsc_usable() -> bool {
    if !cfg!(target_arch = "x86_64")
        || std::env::var_os("FSARENA_CLOCK").is_some_and(|v| v == "monotonic")
    {
        return false;
    }
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    source.trim() == "tsc" && has("constant_tsc") && has("nonstop_tsc")
}

/// The tightest of a few (TSC, instant) brackets: the instant and the middle of the TSC
/// reads around it.
fn pair() -> (u64, Instant) {
    let mut best = (u64::MAX, 0, Instant::now());
    for _ in 0..7 {
        let a = rdtsc();
        let t = Instant::now();
        let b = rdtsc();
        if b.wrapping_sub(a) < best.0 {
            best = (b.wrapping_sub(a), a + b.wrapping_sub(a) / 2, t);
        }
    }
    (best.1, best.2)
}

fn calibrate() -> Calibration {
    let monotonic = || Calibration {
        tsc: false,
        ns_per_tick_q32: 1 << 32,
        epoch: Instant::now(),
        epoch_stamp: 0,
    };
    if !tsc_usable() {
        return monotonic();
    }
    let (tsc0, t0) = pair();
    std::thread::sleep(Duration::from_millis(10));
    let (tsc1, t1) = pair();
    let ticks = tsc1.saturating_sub(tsc0);
    let ns = t1.duration_since(t0).as_nanos();
    if ticks == 0 || ns == 0 {
        return monotonic();
    }
    Calibration {
        tsc: true,
        ns_per_tick_q32: ((ns << 32) / ticks as u128) as u64,
        epoch: t0,
        epoch_stamp: tsc0,
    }
}

impl Calibration {
    #[inline]
    fn ns(&self, ticks: u64) -> u64 {
        ((ticks as u128 * self.ns_per_tick_q32 as u128) >> 32) as u64
    }

    fn ticks(&self, ns: u64) -> u64 {
        (((ns as u128) << 32) / self.ns_per_tick_q32 as u128) as u64
    }
}

impl Stamp {
    /// Now, from `tsc` (one of the two ways of reading the TSC) where stamps are TSC ticks.
    #[inline(always)]
    fn read(tsc: fn() -> u64) -> Stamp {
        let c = calibration();
        if c.tsc {
            Stamp(tsc())
        } else {
            Stamp(c.epoch.elapsed().as_nanos() as u64)
        }
    }

    /// Now.
    #[inline]
    pub fn now() -> Stamp {
        Self::read(rdtsc)
    }

    /// Now, read without ordering it after the instructions before it: half the cost of
    /// [`Stamp::now`] with the TSC (~11 ns against ~23 ns on the machine of
    /// docs/performance.md), the same as `now` without it.
    ///
    /// Only for a read that a system call separates from what it times: the start of a
    /// `pread` read before the call, its completion read after the call returns. The
    /// kernel entry and exit order the read: `bench/tsc_order.c` hands a token between two
    /// threads 400,000 times and finds the receiver's bare read earlier than the sender's
    /// in ~0.4% of the handovers, and in none of them with a `getppid()` between the
    /// receiving load and the read (nor with the `lfence`); Intel documents that no
    /// instruction after a `SYSCALL` or `SYSRET` executes before all the instructions
    /// before it have completed. A bare read before a call may still run early, which can
    /// only lengthen the latency measured, by the few instructions between it and the
    /// call. fio reads the TSC this way for every I/O (`clocksource=cpu`).
    #[inline]
    pub fn now_unordered() -> Stamp {
        Self::read(rdtsc_bare)
    }

    /// Nanoseconds from `earlier` to `self`; 0 when `earlier` is later.
    #[inline]
    pub fn ns_since(self, earlier: Stamp) -> u64 {
        calibration().ns(self.0.saturating_sub(earlier.0))
    }

    /// [`Self::ns_since`] with the calibration's factor given (see [`Scale`]).
    #[inline]
    pub fn ns_since_at(self, earlier: Stamp, scale: Scale) -> u64 {
        ((self.0.saturating_sub(earlier.0) as u128 * scale.0 as u128) >> 32) as u64
    }

    /// The stamp of instant `t` (past or future), converted through the calibration.
    pub fn from_instant(t: Instant) -> Stamp {
        let c = calibration();
        // The pair (instant, stamp) read as close together as the scheduler allows: the
        // stamp between two instants, the pair kept when they are under 2 µs apart (a
        // preemption between the reads would shift every converted stamp).
        let (mut now, mut here) = (Instant::now(), Stamp::now().0);
        for _ in 0..5 {
            let a = Instant::now();
            let s = Stamp::now().0;
            let b = Instant::now();
            (now, here) = (a + (b - a) / 2, s);
            if b - a < Duration::from_micros(2) {
                break;
            }
        }
        match t.checked_duration_since(now) {
            Some(ahead) => Stamp(here.saturating_add(c.ticks(ahead.as_nanos() as u64))),
            None => Stamp(here.saturating_sub(c.ticks(now.duration_since(t).as_nanos() as u64))),
        }
    }

    /// The stamp `d` after this one.
    pub fn plus(self, d: Duration) -> Stamp {
        let ticks = calibration().ticks(d.as_nanos().min(u64::MAX as u128) as u64);
        Stamp(self.0.saturating_add(ticks))
    }

    /// The instant of this stamp, converted through the calibration.
    pub fn to_instant(self) -> Instant {
        let c = calibration();
        let base = c.epoch_stamp;
        if self.0 >= base {
            c.epoch + Duration::from_nanos(c.ns(self.0 - base))
        } else {
            c.epoch - Duration::from_nanos(c.ns(base - self.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A span measured with stamps agrees with the same span measured with `Instant`:
    /// each stamp is read between two instants, so the span by `Instant` is known to lie
    /// in [inner, outer] whatever preemptions happen between the reads; the stamp's span
    /// must fall in that interval, widened by 0.1% (the calibration is ~10 ppm).
    #[test]
    fn durations_agree_with_instant() {
        init();
        for ms in [1u64, 30] {
            let (i0a, s0, i0b) = (Instant::now(), Stamp::now(), Instant::now());
            std::thread::sleep(Duration::from_millis(ms));
            let (i1a, s1, i1b) = (Instant::now(), Stamp::now(), Instant::now());
            let by_stamp = s1.ns_since(s0) as f64;
            let inner = i1a.duration_since(i0b).as_nanos() as f64;
            let outer = i1b.duration_since(i0a).as_nanos() as f64;
            let slack = outer * 1e-3 + 100.0;
            assert!(
                by_stamp >= inner - slack && by_stamp <= outer + slack,
                "tsc={} stamp {by_stamp} ns, instant between {inner} and {outer} ns",
                uses_tsc()
            );
        }
        let (a, b) = (Stamp::now(), Stamp::now());
        assert_eq!(
            a.ns_since(b),
            0,
            "an earlier stamp minus a later one saturates"
        );
    }

    /// Instants convert to stamps and back within 20 µs: a microsecond or less when the
    /// thread keeps its CPU between the clock reads (the pair is re-read when they are
    /// over 2 µs apart, 5 times at most); a loaded test machine can preempt every try.
    #[test]
    fn instant_round_trip() {
        let now = Instant::now();
        for t in [
            now,
            now + Duration::from_secs(2),
            now - Duration::from_millis(5),
        ] {
            let back = Stamp::from_instant(t).to_instant();
            let err = if back > t { back - t } else { t - back };
            assert!(err < Duration::from_micros(20), "{err:?}");
        }
    }

    /// Stamps read by `read` in a known order on different threads (the order a mutex
    /// imposes) never go backwards.
    fn never_back_across_threads(read: fn() -> Stamp) {
        init();
        let last = Arc::new(Mutex::new(Stamp(0)));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let last = Arc::clone(&last);
                std::thread::spawn(move || {
                    for i in 0..100_000 {
                        let mut l = last.lock().unwrap();
                        let now = read();
                        assert!(now >= *l, "stamp went back: {now:?} < {:?}", *l);
                        *l = now;
                        drop(l);
                        if i % 1000 == 0 {
                            std::thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
    }

    /// Ordered reads may be compared across CPUs.
    #[test]
    fn monotonic_across_threads() {
        never_back_across_threads(Stamp::now);
    }

    /// A bare read after a system call is as ordered (the premise of
    /// [`Stamp::now_unordered`]; a bare read right after taking the mutex went back in
    /// ~0.4% of the handovers of `bench/tsc_order.c`).
    #[test]
    fn unordered_reads_after_a_syscall_are_monotonic_across_threads() {
        never_back_across_threads(|| {
            // SAFETY: getppid has no preconditions.
            std::hint::black_box(unsafe { libc::getppid() });
            Stamp::now_unordered()
        });
    }
}
