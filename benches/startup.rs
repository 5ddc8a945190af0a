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

mod common;

use common::{children_cpu_ns, CpuTime};
use criterion::measurement::{Measurement, WallTime};
use criterion::{criterion_group, criterion_main, Criterion};
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

fn startup(c: &mut Criterion<WallTime>) {
    cases(c, "startup");
}

fn startup_cpu(c: &mut Criterion<CpuTime>) {
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
    config = Criterion::default().with_measurement(CpuTime(children_cpu_ns));
    targets = startup_cpu
}
criterion_main!(benches, benches_cpu);
