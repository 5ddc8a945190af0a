//! How long the `fsarena` process takes to start and answer: `--version` (the bare process:
//! dynamic loading, clap), and `list` without and with a result database (`list` prints
//! every workload and suite, and with a database estimates each suite's duration from the
//! stored trials of this host). Issue 7 asks for `fsarena list` well under 50 ms.
//!
//! Run: `cargo bench --bench startup` (builds the release binary of this package).
//! The database case first stores RUNS small runs (no root needed: `--dir`).
//!
//! Two groups: `startup` in wall time (what a user waits), `startup_cpu` in the CPU time
//! (user + system) of the fsarena processes, from `getrusage(RUSAGE_CHILDREN)` — on a
//! shared machine the wall time also counts the time other processes had the CPUs.

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const RUNS: usize = 20;

fn fsarena(args: &[&str], cwd: &Path) {
    let status = Command::new(env!("CARGO_BIN_EXE_fsarena"))
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run fsarena");
    assert!(status.success(), "fsarena {args:?} failed");
}

/// User + system CPU time of the waited-for children, in nanoseconds.
fn children_cpu_ns() -> u64 {
    // SAFETY: getrusage fills the struct we pass; a zeroed rusage is valid.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
        ru
    };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (us(ru.ru_utime) + us(ru.ru_stime)) * 1000
}

/// Criterion measurement by the CPU time of the processes the benchmark waited for.
struct ChildrenCpu;

impl Measurement for ChildrenCpu {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        children_cpu_ns()
    }
    fn end(&self, i: u64) -> u64 {
        children_cpu_ns() - i
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
        &CpuFormatter
    }
}

/// Prints values as CPU time.
struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (div, unit) = match typical {
            t if t < 1e6 => (1e3, "µs cpu"),
            _ => (1e6, "ms cpu"),
        };
        values.iter_mut().for_each(|v| *v /= div);
        unit
    }
    fn scale_throughputs(&self, _: f64, _: &Throughput, values: &mut [f64]) -> &'static str {
        values.iter_mut().for_each(|v| *v = 1e9 / *v);
        "per cpu s"
    }
    fn scale_for_machines(&self, _: &mut [f64]) -> &'static str {
        "ns"
    }
}

fn startup(c: &mut Criterion<WallTime>) {
    cases(c, "startup");
}

fn startup_cpu(c: &mut Criterion<ChildrenCpu>) {
    cases(c, "startup_cpu");
}

fn cases<M: Measurement>(c: &mut Criterion<M>, group: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (d, db) = (dir.path(), dir.path().join("results.db"));
    let db = db.to_str().expect("UTF-8 temp path");
    let mut g = c.benchmark_group(group);
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("version", |b| b.iter(|| fsarena(&["--version"], d)));
    g.bench_function("list, no database", |b| {
        b.iter(|| fsarena(&["--db", db, "list"], d))
    });
    let work = d.join("work");
    std::fs::create_dir(&work).expect("mkdir");
    let work = work.to_str().expect("UTF-8 temp path");
    for _ in 0..RUNS {
        fsarena(
            &[
                "--db",
                db,
                "run",
                "smallfiles:files=100",
                "postmark:number=50,transactions=50",
                "--dir",
                work,
                "--reps",
                "3",
                "--cache",
                "keep",
                "--sync",
                "none",
                "--quiet",
            ],
            d,
        );
    }
    g.bench_function("list, database of 20 runs", |b| {
        b.iter(|| fsarena(&["--db", db, "list"], d))
    });
    g.finish();
}

criterion_group!(benches, startup);
criterion_group! {
    name = benches_cpu;
    config = Criterion::default().with_measurement(ChildrenCpu);
    targets = startup_cpu
}
criterion_main!(benches, benches_cpu);
