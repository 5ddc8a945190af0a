//! Tests of the `job` workload: every engine on tmpfs and on the disk filesystem of the
//! temp directory (ext4 in CI), read back through `verify`; O_DIRECT; counts and
//! proportions with fixed seeds.

use super::*;
use crate::policy::DataPolicy;
use crate::result::PhaseResult;
use crate::workload::testutil::in_context_at;
use std::fs::OpenOptions;
use std::time::Instant;

pub(super) fn job(spec: &str) -> Job {
    Job::from_params(&Params::parse("job", PARAMS, spec).unwrap()).unwrap()
}

pub(super) fn job_err(spec: &str) -> String {
    let e = Params::parse("job", PARAMS, spec)
        .and_then(|p| Job::from_params(&p))
        .err()
        .unwrap_or_else(|| panic!("{spec} should be refused"));
    assert_eq!(crate::error::exit_code(&e), 2, "{spec}: {e}");
    e.to_string()
}

/// Runs `spec` in a fresh directory under `base`; the phases, or the error's text.
pub(super) fn run_at(
    base: &Path,
    sync: SyncPolicy,
    spec: &str,
) -> Result<Vec<PhaseResult>, String> {
    let j = job(spec);
    in_context_at(base, DataPolicy::Random, sync, |cx| {
        j.run(cx).map_err(|e| format!("{e:#}"))?;
        Ok(cx.phases().to_vec())
    })
}

pub(super) fn phase<'a>(phases: &'a [PhaseResult], name: &str) -> &'a PhaseResult {
    phases.iter().find(|p| p.name == name).expect(name)
}

pub(super) fn count_of(p: &PhaseResult, op: &str) -> u64 {
    p.lat_by_op
        .iter()
        .find(|o| o.op == op)
        .map_or(0, |o| o.count)
}

/// tmpfs and the temp directory's filesystem (the disk one: ext4 here and in CI).
pub(super) fn bases() -> Vec<(&'static str, PathBuf)> {
    let mut v = vec![("disk", std::env::temp_dir())];
    if Path::new("/dev/shm").is_dir() {
        v.push(("tmpfs", PathBuf::from("/dev/shm")));
    } else {
        eprintln!("SKIP tmpfs cases: no /dev/shm");
    }
    v
}

fn uring_ok(test: &str) -> bool {
    match uring::probe() {
        Ok(()) => true,
        Err(why) => {
            eprintln!("SKIP {test} with io_uring: {why}");
            false
        }
    }
}

fn libaio_ok(test: &str) -> bool {
    match libaio::probe() {
        Ok(()) => true,
        Err(why) => {
            eprintln!("SKIP {test} with libaio: {why}");
            false
        }
    }
}

/// (filesystem, base directory, spec) for every engine and write pattern on every base:
/// two jobs with verify, mixed block sizes, `tail` appended.
fn engine_cases(test: &str, tail: &str) -> Vec<(&'static str, PathBuf, String)> {
    let mut cases = Vec::new();
    for (fs, base) in bases() {
        for engine in ["psync", "mmap", "io_uring", "libaio"] {
            if (engine == "io_uring" && !uring_ok(test)) || (engine == "libaio" && !libaio_ok(test))
            {
                continue;
            }
            for rw in ["randwrite", "randrw", "write"] {
                let depth = if engine.contains("io") { 8 } else { 1 };
                let spec = format!(
                    "engine={engine},rw={rw},numjobs=2,iodepth={depth},bs=4KiB:3,16KiB:1,\
                     verify=true,{tail}"
                );
                cases.push((fs, base.clone(), spec));
            }
        }
    }
    cases
}

#[test]
fn every_engine_reads_back_what_it_wrote() {
    let test = "every_engine_reads_back_what_it_wrote";
    for (fs, base, spec) in engine_cases(test, "size=2MiB,nrfiles=2") {
        let phases =
            run_at(&base, SyncPolicy::End, &spec).unwrap_or_else(|e| panic!("{fs} {spec}: {e}"));
        let run = phase(&phases, "run");
        assert!(run.bytes >= 2 * (2 << 20), "{fs} {spec}: {}", run.bytes);
        let v = phase(&phases, "verify");
        assert_eq!(
            v.bytes,
            2 * (2 << 20),
            "{fs} {spec}: verify read everything"
        );
        assert_eq!(v.ops, 2 * 512, "{fs} {spec}: 4 KiB blocks checked");
    }
}

#[test]
fn verify_detects_a_corrupted_block() {
    let j = job("rw=randwrite,size=1MiB,verify=true");
    in_context_at(
        &std::env::temp_dir(),
        DataPolicy::Random,
        SyncPolicy::End,
        |cx| {
            j.run(cx).unwrap();
            let dir = cx.workdir().to_path_buf();
            let path = Job::path(&dir, 0, 0);
            let f = OpenOptions::new().write(true).open(&path).unwrap();
            f.write_all_at(b"garbage!", 123 * 4096 + 40).unwrap();
            drop(f);
            let seed = cx.seed();
            let e = cx
                .phase(&VERIFY, 1, |w| {
                    j.verify(w, 0, &dir, seed, Task::of(crate::context::Procs::SOLO, 1, 0))
                })
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("corruption") && e.contains("1 of 256 blocks"),
                "{e}"
            );
            assert!(e.contains(&format!("byte {}", 123 * 4096)), "{e}");
        },
    );
}

#[test]
fn null_engine_counts_are_deterministic() {
    let tmp = std::env::temp_dir();
    let phases = run_at(&tmp, SyncPolicy::End, "engine=null,size=1MiB,numjobs=3").unwrap();
    assert!(
        phases.iter().all(|p| p.name != "layout"),
        "null touches no file"
    );
    let run = phase(&phases, "run");
    assert_eq!((run.ops, run.bytes), (3 * 256, 3 << 20));
    // A weighted mix draws from the seeded generator: the same counts every time.
    let spec = "engine=null,rw=randrw,size=8MiB,bs=4KiB:60,64KiB:40,numjobs=2";
    let a = phase(&run_at(&tmp, SyncPolicy::End, spec).unwrap(), "run").clone();
    let b = phase(&run_at(&tmp, SyncPolicy::End, spec).unwrap(), "run").clone();
    assert_eq!(
        (a.ops, a.bytes, count_of(&a, "read")),
        (b.ops, b.bytes, count_of(&b, "read"))
    );
    assert!(a.bytes >= 2 * (8 << 20) && a.bytes < 2 * ((8 << 20) + 65536));
}

/// rwmixread=30 reads 30% of the operations: 20,480 draws, within 5 standard deviations.
#[test]
fn rwmixread_gives_the_requested_proportion() {
    let tmp = std::env::temp_dir();
    let phases = run_at(
        &tmp,
        SyncPolicy::End,
        "engine=null,rw=randrw,rwmixread=30,size=80MiB",
    )
    .unwrap();
    let run = phase(&phases, "run");
    assert_eq!(run.ops, 20_480);
    let share = count_of(run, "read") as f64 / run.ops as f64;
    let sd = (0.3f64 * 0.7 / 20_480.0).sqrt();
    assert!((share - 0.3).abs() < 5.0 * sd, "{share}");
    assert_eq!(count_of(run, "read") + count_of(run, "write"), run.ops);
}

#[test]
fn time_based_and_ramp() {
    let tmp = std::env::temp_dir();
    let t = Instant::now();
    let phases = run_at(
        &tmp,
        SyncPolicy::End,
        "engine=null,size=1MiB,runtime=0.3,ramp=0.2",
    )
    .unwrap();
    let run = phase(&phases, "run");
    assert!(run.wall_s >= 0.3 && run.wall_s < 1.0, "{}", run.wall_s);
    assert!(run.ops > 256, "loops over the file: {}", run.ops);
    assert!(t.elapsed().as_secs_f64() >= 0.5, "the ramp ran first");
}

/// Under `--cache cold` the caches are reset before the ramp, never between the ramp and
/// the run: the ramp warms what the run measures. A reset after the ramp came 0.4 s in.
#[test]
fn ramp_is_not_thrown_away_by_the_cold_policy() {
    use crate::data::DataPool;
    use crate::workload::testutil::ResetClock;
    let tmp = tempfile::tempdir().unwrap();
    let mut target = ResetClock::new(tmp.path());
    let resets = std::sync::Arc::clone(&target.resets);
    let policy = crate::policy::Policy {
        cache: crate::policy::CachePolicy::Cold,
        ..Default::default()
    };
    let pool = DataPool::new(policy.data, policy.seed);
    let workdir = tmp.path().to_path_buf();
    let mut cx = TrialContext::new(workdir, &policy, &mut target, pool, &|_| {});
    let t0 = Instant::now();
    job("engine=null,size=1MiB,runtime=0.2,ramp=0.4,numjobs=2")
        .run(&mut cx)
        .unwrap();
    let run = phase(cx.phases(), "run");
    assert!(run.wall_s >= 0.2 && run.wall_s < 0.4, "{}", run.wall_s);
    // Judged warm (what the ramp read may be cached), not cold.
    assert!(!run.flags.iter().any(|f| f == "cache-suspect"));
    assert!(run.flags.iter().any(|f| f == "warm"), "{:?}", run.flags);
    let resets = resets.lock().unwrap();
    assert_eq!(resets.len(), 1, "one reset per measured phase");
    let at = resets[0] - t0;
    assert!(at.as_secs_f64() < 0.2, "reset {at:?} in: after the ramp");
}

#[test]
fn fsync_every_n_writes_and_rate() {
    let tmp = std::env::temp_dir();
    let phases = run_at(&tmp, SyncPolicy::None, "rw=randwrite,size=1MiB,fsync=16").unwrap();
    assert_eq!(count_of(phase(&phases, "run"), "fsync"), 16);
    let phases = run_at(&tmp, SyncPolicy::None, "rw=write,size=1MiB,end_fsync=true").unwrap();
    assert_eq!(count_of(phase(&phases, "run"), "fsync"), 1);
    // 1 MiB at 4 MiB/s takes ~0.25 s.
    let phases = run_at(&tmp, SyncPolicy::None, "engine=null,size=1MiB,rate=4MiB").unwrap();
    let wall = phase(&phases, "run").wall_s;
    assert!((0.24..0.6).contains(&wall), "{wall}");
}

#[test]
fn direct_io_on_the_disk_filesystem() {
    let base = std::env::temp_dir();
    let mut engines = vec!["psync"];
    if uring_ok("direct_io_on_the_disk_filesystem") {
        engines.push("io_uring");
    }
    if libaio_ok("direct_io_on_the_disk_filesystem") {
        engines.push("libaio");
    }
    for engine in engines {
        let spec = format!("engine={engine},rw=randrw,direct=true,iodepth=1,size=1MiB,verify=true");
        let phases = run_at(&base, SyncPolicy::End, &spec).unwrap_or_else(|e| panic!("{e}"));
        assert!(phase(&phases, "run").ops >= 256);
    }
}

/// libaio with O_DIRECT on the disk filesystem, eight requests deep: every block of a
/// size-based random read is one completed read, and the first io_submit hands the kernel
/// all eight (so fewer submits than reads).
#[test]
fn libaio_keeps_iodepth_requests_in_flight_with_o_direct() {
    if !libaio_ok("libaio_keeps_iodepth_requests_in_flight_with_o_direct") {
        return;
    }
    let spec = "engine=libaio,rw=randread,iodepth=8,direct=true,size=2MiB,bs=4KiB";
    let phases = run_at(&std::env::temp_dir(), SyncPolicy::End, spec).unwrap();
    let run = phase(&phases, "run");
    assert_eq!(run.ops, 512, "size / bs reads");
    assert_eq!(count_of(run, "read"), 512);
    assert_eq!(run.bytes_read, 2 << 20);
    assert_eq!(run.extra.get("iodepth"), Some(&8.0));
    let submits = count_of(run, "submit");
    assert!((1..=512 - 7).contains(&submits), "{submits} submits");
}

#[test]
fn direct_alignment_and_engine_limits_are_usage_errors() {
    let e = job_err("direct=true,bs=1000");
    assert!(e.contains("multiples of 512"), "{e}");
    let e = job_err("direct=true,offset_align=100");
    assert!(e.contains("multiples of 512"), "{e}");
    let e = job_err("engine=mmap,direct=true");
    assert!(e.contains("cannot do O_DIRECT"), "{e}");
    let e = job_err("iodepth=32");
    assert!(e.contains("engine=io_uring or engine=libaio"), "{e}");
    job("engine=libaio,iodepth=32");
    let e = job_err("engine=libaio,iodepth=5000");
    assert!(e.contains("takes 1 to 4096"), "{e}");
    let e = job_err("engine=libaio,fallback=psync");
    assert!(e.contains("only applies to engine=io_uring"), "{e}");
    let e = job_err("size=4KiB,bs=8KiB");
    assert!(e.contains("smaller than the largest block"), "{e}");
    let e = job_err("random_distribution=zipf:1");
    assert!(e.contains("θ"), "{e}");
    let e = job_err("fsync=1,fdatasync=1");
    assert!(e.contains("not both"), "{e}");
    let e = job_err("fallback=psync");
    assert!(e.contains("io_uring"), "{e}");
    // What the kernel's EINVAL for a misaligned O_DIRECT request becomes.
    let cfg = job("direct=true").cfg(Engine::Psync, 1, SyncPolicy::End);
    let io = Io {
        file: 0,
        slot: 0,
        write: false,
        offset: 512,
        len: 4096,
    };
    let e = engine::io_error(&cfg, &io, std::io::Error::from_raw_os_error(libc::EINVAL));
    let e = format!("{e:#}");
    assert!(
        e.contains("logical block size") && e.contains("offset 512"),
        "{e}"
    );
}

#[test]
fn zipf_jobs_hit_their_hot_blocks() {
    // The hottest block of a zipf:1.2 job over 256 blocks gets 1/ζ(256, 1.2) ≈ 22% of the
    // reads; check it through the picker the job itself uses.
    let j = job("rw=randread,size=1MiB,random_distribution=zipf:1.2");
    let cfg = j.cfg(Engine::Null, 9, SyncPolicy::End);
    let mut rng = gen::Rng::new(5);
    let hot = cfg.picker.spread(0);
    let n = 100_000;
    let hits = (0..n).filter(|_| cfg.picker.next(&mut rng) == hot).count();
    let zeta: f64 = (1..=256).map(|i| (i as f64).powf(-1.2)).sum();
    let want = 1.0 / zeta;
    let got = hits as f64 / n as f64;
    assert!(
        (got - want).abs() < 5.0 * (want * (1.0 - want) / n as f64).sqrt(),
        "{got} vs {want}"
    );
}

/// A rate-limited job sleeps before it issues a request, never while it reaps: the
/// latencies of io_uring completions reaped together are the reads', not the pacing
/// interval (4 KiB at 2 MiB/s: one every 2 ms), and the job still takes size / rate.
#[test]
fn rate_limit_stays_out_of_the_latency() {
    if !uring_ok("rate_limit_stays_out_of_the_latency") {
        return;
    }
    let base = bases().pop().expect("a base").1;
    let spec = "engine=io_uring,rw=randread,iodepth=8,size=1MiB,rate=2MiB";
    let phases = run_at(&base, SyncPolicy::End, spec).unwrap();
    let run = phase(&phases, "run");
    assert!((0.49..1.5).contains(&run.wall_s), "{}", run.wall_s);
    let read = run
        .lat_by_op
        .iter()
        .find(|o| o.op == "read")
        .expect("reads");
    assert_eq!(read.count, 256);
    assert!(read.lat_us.p50 < 1000.0, "p50 {} µs", read.lat_us.p50);
}

/// `shared_file=true`: every engine, sequential, random and mixed, two jobs on one file of
/// numjobs × size bytes, read back through verify with no mismatch.
#[test]
fn shared_file_every_engine_reads_back_what_it_wrote() {
    let test = "shared_file_every_engine_reads_back_what_it_wrote";
    for (fs, base, spec) in engine_cases(test, "size=1MiB,nrfiles=4,shared_file=true") {
        let j = job(&spec);
        let (phases, names, len) =
            in_context_at(&base, DataPolicy::Random, SyncPolicy::End, |cx| {
                j.run(cx).unwrap_or_else(|e| panic!("{fs} {spec}: {e:#}"));
                let names: Vec<_> = std::fs::read_dir(cx.shared_dir())
                    .unwrap()
                    .map(|e| e.unwrap().file_name().into_string().unwrap())
                    .collect();
                let len = std::fs::metadata(shared::path(cx.shared_dir()))
                    .unwrap()
                    .len();
                (cx.phases().to_vec(), names, len)
            });
        assert_eq!(names, ["job.shared"], "{fs} {spec}: one file");
        assert_eq!(len, 2 << 20, "{fs} {spec}: numjobs × size");
        let v = phase(&phases, "verify");
        assert_eq!(v.bytes, 2 << 20, "{fs} {spec}");
        assert_eq!(v.ops, 512, "{fs} {spec}: 4 KiB blocks checked");
    }
}

/// A block of job 1's segment 2 overwritten: job 1's verify names it; job 0's segments,
/// interleaved with job 1's, still verify.
#[test]
fn shared_file_verify_finds_another_tasks_corruption() {
    let j = job("rw=randwrite,size=64KiB,nrfiles=4,numjobs=2,verify=true,shared_file=true");
    in_context_at(
        &std::env::temp_dir(),
        DataPolicy::Random,
        SyncPolicy::End,
        |cx| {
            j.run(cx).unwrap();
            let dir = cx.shared_dir().to_path_buf();
            let seg = 16 << 10;
            let t1 = Task { index: 1, total: 2 };
            let at = t1.segment_offset(2, seg) + 4096 + 16;
            assert_eq!(at, (2 * 2 + 1) * seg + 4096 + 16);
            let f = OpenOptions::new()
                .write(true)
                .open(shared::path(&dir))
                .unwrap();
            f.write_all_at(b"garbage!", at).unwrap();
            drop(f);
            let seed = cx.seed();
            let e = cx
                .phase(&VERIFY, 2, |w| {
                    let task = Task::of(crate::context::Procs::SOLO, 2, w.idx);
                    j.verify(w, task.index, &dir, seed, task)
                })
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("segment 2 of task 1") && e.contains("1 of 4 blocks"),
                "{e}"
            );
            assert!(e.contains(&format!("byte {}", at - 16)), "{e}");
            let t0 = Task { index: 0, total: 2 };
            assert_eq!(
                shared::verify(&shared::path(&dir), t0, 4, seg, seed).unwrap(),
                16
            );
        },
    );
}

#[test]
fn shared_file_direct_needs_aligned_segments() {
    let e = job_err("shared_file=true,direct=true,size=3000,nrfiles=1,bs=512");
    assert!(e.contains("multiples of 512"), "{e}");
}

/// `fallocate=native` reserves each file's size in layout, before the run's clock: a
/// time-based write job that writes only its first blocks leaves files of the full size
/// with their blocks allocated; without it the files are as long as what was written;
/// `keep` allocates without growing the file. With `shared_file` it is refused.
#[test]
fn fallocate_preallocates_in_layout() {
    use std::os::unix::fs::MetadataExt;
    for (fs, base) in bases() {
        for (mode, want_len) in [("native", 4u64 << 20), ("keep", 0), ("none", 0)] {
            let spec =
                format!("rw=write,bs=4KiB,size=4MiB,runtime=0.05,rate=64KiB,fallocate={mode}");
            let j = job(&spec);
            let (len, blocks, written) =
                in_context_at(&base, DataPolicy::Random, SyncPolicy::End, |cx| {
                    j.run(cx).unwrap_or_else(|e| panic!("{fs} {spec}: {e:#}"));
                    let m = std::fs::metadata(Job::path(cx.workdir(), 0, 0)).unwrap();
                    (m.len(), m.blocks() * 512, phase(cx.phases(), "run").bytes)
                });
            assert!(written > 0 && written < 1 << 20, "{fs} {spec}: {written} B");
            match mode {
                "native" => assert_eq!(len, want_len, "{fs} {spec}"),
                _ => assert_eq!(len, written, "{fs} {spec}"),
            }
            let reserved = blocks >= 4 << 20;
            assert_eq!(
                reserved,
                mode != "none",
                "{fs} {spec}: {blocks} B allocated"
            );
        }
    }
    assert!(job_err("fallocate=native,shared_file=true,rw=write").contains("shared_file"));
}

/// `overwrite=true` (fio's `overwrite=1`) lays a write-only job's files out written in
/// full, outside the run's clock: a time-based run that writes only its first blocks
/// leaves files of the full size, written (the layout's bytes), and the layout phase
/// wrote them; without it the files are as long as what the run wrote. It excludes
/// `fallocate` (an overwritten file has its blocks already).
#[test]
fn overwrite_lays_out_written_files() {
    for (fs, base) in bases() {
        for overwrite in [true, false] {
            let spec =
                format!("rw=write,bs=4KiB,size=4MiB,runtime=0.05,rate=64KiB,overwrite={overwrite}");
            let j = job(&spec);
            let (len, laid, written) =
                in_context_at(&base, DataPolicy::Random, SyncPolicy::End, |cx| {
                    j.run(cx).unwrap_or_else(|e| panic!("{fs} {spec}: {e:#}"));
                    let m = std::fs::metadata(Job::path(cx.workdir(), 0, 0)).unwrap();
                    let laid = cx
                        .phases()
                        .iter()
                        .find(|p| p.name == "layout")
                        .map_or(0, |p| p.bytes);
                    (m.len(), laid, phase(cx.phases(), "run").bytes)
                });
            assert!(written > 0 && written < 1 << 20, "{fs} {spec}: {written} B");
            if overwrite {
                assert_eq!((len, laid), (4 << 20, 4 << 20), "{fs} {spec}");
            } else {
                assert_eq!((len, laid), (written, 0), "{fs} {spec}");
            }
        }
    }
    assert!(job_err("overwrite=true,fallocate=native,rw=write").contains("not both"));
}

/// Which 4 KiB blocks of the files under `dir` hold data (random data is never a zero
/// block; a block never written reads as zeros).
fn written_blocks(dir: &Path) -> Vec<bool> {
    let mut files: Vec<PathBuf> = walk(dir);
    files.sort();
    let mut blocks = Vec::new();
    for f in files {
        let data = std::fs::read(&f).unwrap();
        blocks.extend(data.chunks(4096).map(|b| b.iter().any(|&x| x != 0)));
    }
    blocks
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `randrepeat=false` (fio's randrepeat=0): each repetition writes other blocks, and the
/// same repetition of a run with the same seed writes the same ones; by default every
/// repetition writes the same.
#[test]
fn randrepeat_false_draws_other_offsets_each_repetition_and_the_same_again() {
    let blocks = |spec: &str, rep: u32| {
        let j = job(spec);
        in_context_at(&std::env::temp_dir(), DataPolicy::Random, SyncPolicy::None, |cx| {
            cx.set_repetition(rep);
            j.run(cx).unwrap();
            written_blocks(cx.workdir())
        })
    };
    let spec = "rw=randwrite,bs=4KiB,size=1MiB,randommap=false,randrepeat=false";
    let (r1, r2, r1_again) = (blocks(spec, 1), blocks(spec, 2), blocks(spec, 1));
    assert_eq!(r1.len(), 256);
    assert!(r1.iter().filter(|&&b| b).count() < 256, "drawn with replacement");
    assert_ne!(r1, r2, "repetition 2 drew the offsets of repetition 1");
    assert_eq!(r1, r1_again, "the same seed and repetition drew other offsets");
    let spec = "rw=randwrite,bs=4KiB,size=1MiB,randommap=false";
    assert_eq!(blocks(spec, 1), blocks(spec, 2), "randrepeat=true varies");
    assert_eq!(repetition_seed(42, 3, false), 44);
    assert_eq!(repetition_seed(42, 3, true), 42);
}

/// `loops` runs a size-based job again over its files in the same run phase, `io_size`
/// moves that many bytes each loop, going round the files as often as it takes.
#[test]
fn loops_and_io_size_move_what_fio_would() {
    let ops = |spec: &str| {
        let phases = run_at(&std::env::temp_dir(), SyncPolicy::None, spec).unwrap();
        let run = phase(&phases, "run");
        (run.ops, run.bytes)
    };
    let mib = 1u64 << 20;
    assert_eq!(ops("rw=read,bs=4KiB,size=1MiB,loops=3"), (768, 3 * mib));
    assert_eq!(
        ops("rw=randread,bs=4KiB,size=1MiB,randommap=true,loops=2,loop_invalidate=true"),
        (512, 2 * mib)
    );
    assert_eq!(ops("rw=write,bs=4KiB,size=1MiB,io_size=3MiB"), (768, 3 * mib));
    assert_eq!(ops("rw=read,bs=4KiB,size=1MiB,io_size=512KiB,loops=2"), (256, mib));
}

/// `thinktime`: a pause after every `thinktime_blocks` requests (and after the last), in
/// the run's clock; the requests are the same.
#[test]
fn thinktime_pauses_after_every_so_many_requests() {
    let phases = run_at(
        &std::env::temp_dir(),
        SyncPolicy::None,
        "rw=read,bs=4KiB,size=256KiB,thinktime=0.05,thinktime_blocks=16,thinktime_spin=0.01",
    )
    .unwrap();
    let run = phase(&phases, "run");
    assert_eq!(run.ops, 64);
    // 64 / 16 = 4 pauses of 50 ms: at least 0.2 s; one a request would be 3.2 s.
    assert!(run.wall_s >= 0.2, "{} s", run.wall_s);
    assert!(run.wall_s < 2.0, "{} s: a pause per request?", run.wall_s);
}
