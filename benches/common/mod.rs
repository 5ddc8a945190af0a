//! A criterion measurement by CPU time, shared by the benches: on a machine shared with
//! other work, wall time also counts the time other processes had the CPUs (it inflated
//! the recorder's nanosecond figures six-fold under a load of 12 on 2 cores).

// Each bench uses the clock it needs.
#![allow(dead_code)]

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::Throughput;

/// CPU time of the calling thread, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    // SAFETY: clock_gettime fills the timespec we pass; a zeroed timespec is valid.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
        ts
    };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// User + system CPU time of the waited-for child processes, in nanoseconds.
pub fn children_cpu_ns() -> u64 {
    // SAFETY: getrusage fills the struct we pass; a zeroed rusage is valid.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
        ru
    };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (us(ru.ru_utime) + us(ru.ru_stime)) * 1000
}

/// Criterion measurement by a CPU clock in nanoseconds (one of the functions above).
pub struct CpuTime(pub fn() -> u64);

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        (self.0)()
    }
    fn end(&self, i: u64) -> u64 {
        (self.0)() - i
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &Nanoseconds
    }
}

/// Prints values as CPU nanoseconds (or µs, ms).
struct Nanoseconds;

impl ValueFormatter for Nanoseconds {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (div, unit) = match typical {
            t if t < 1e3 => (1.0, "ns cpu"),
            t if t < 1e6 => (1e3, "µs cpu"),
            _ => (1e6, "ms cpu"),
        };
        values.iter_mut().for_each(|v| *v /= div);
        unit
    }
    fn scale_throughputs(&self, _: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let n = match t {
            Throughput::Elements(n) | Throughput::Bytes(n) | Throughput::BytesDecimal(n) => *n,
            _ => 1,
        } as f64;
        values.iter_mut().for_each(|v| *v = n * 1e9 / *v);
        "per cpu s"
    }
    fn scale_for_machines(&self, _: &mut [f64]) -> &'static str {
        "ns"
    }
}
