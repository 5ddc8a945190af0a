//! Tests of the `job` parameters that run fio's job files as fio does: `randommap`,
//! `timeout`, one position per direction in `rw=rw`, write-only jobs into new files and
//! `common_files`.

use super::tests::{bases, job, job_err, phase, run_at};
use super::*;
use crate::policy::DataPolicy;
use crate::workload::testutil::in_context_at;
use std::os::unix::fs::MetadataExt;
use std::sync::Mutex;

/// A backend that records each request and completes it at once; an invalidation is
/// recorded as a request of length 0.
struct Record(Vec<Io>);

impl IoBackend for Record {
    fn queue(&mut self, io: &Io, _buf: &mut [u8]) -> std::io::Result<Option<usize>> {
        self.0.push(*io);
        Ok(Some(io.len as usize))
    }

    fn invalidate(&mut self, file: u32) -> std::io::Result<()> {
        self.0.push(Io {
            file,
            slot: 0,
            write: false,
            offset: 0,
            len: 0,
        });
        Ok(())
    }

    fn sync(&mut self, _file: u32, _data_only: bool) -> std::io::Result<()> {
        Ok(())
    }
}

/// The requests job 0 of `spec` issues until `until`, through the engine's loop.
fn requests(spec: &str, until: Until) -> Vec<Io> {
    let j = job(spec);
    let cfg = j.cfg(Engine::Psync, 7, SyncPolicy::None);
    let out = Mutex::new(Vec::new());
    in_context_at(
        &std::env::temp_dir(),
        DataPolicy::Random,
        SyncPolicy::None,
        |cx| {
            cx.phase(&RUN, 1, |w| {
                let mut rec = Record(Vec::new());
                engine::run(&mut rec, &cfg, 0, w, until, 0, &mut Default::default())?;
                *out.lock().unwrap() = rec.0;
                Ok(())
            })
            .unwrap();
        },
    );
    out.into_inner().unwrap()
}

/// With `randommap`, a pass over each file uses every block once, as fio's random map;
/// drawn with replacement (the default, fio's `norandommap`) about 1/e of them are missed.
#[test]
fn randommap_uses_every_block_once_per_pass() {
    let spec = "rw=randrw,bs=4KiB,size=2MiB,nrfiles=2,randommap=true";
    let ios = requests(spec, Until::Bytes(2 * (2 << 20)));
    assert_eq!(ios.len(), 1024, "two passes of 256 blocks over each of 2 files");
    for pass in ios.chunks(512) {
        for file in 0..2 {
            let mut offs: Vec<u64> = pass
                .iter()
                .filter(|io| io.file == file)
                .map(|io| io.offset)
                .collect();
            offs.sort_unstable();
            assert_eq!(offs, (0..256).map(|b| b * 4096).collect::<Vec<_>>());
        }
    }
    let drawn = requests("rw=randread,bs=4KiB,size=1MiB", Until::Bytes(1 << 20));
    let mut offs: Vec<u64> = drawn.iter().map(|io| io.offset).collect();
    offs.sort_unstable();
    offs.dedup();
    assert!((130..190).contains(&offs.len()), "{} distinct", offs.len());
    for bad in [
        "randommap=true,bs=4KiB,offset_align=512",
        "randommap=true,bs=4KiB-8KiB,offset_align=8KiB",
        "randommap=true,random_distribution=zipf:1.2",
    ] {
        assert!(job_err(bad).contains("randommap"), "{bad}");
    }
}

/// With several block sizes, fio's random map is in blocks of the smallest size, and a
/// request is shortened to the free blocks at its offset (fio's `mark_random_map`): a pass
/// covers the file exactly once, with no request overlapping another, and some requests
/// end shorter than any size drawn would make them.
#[test]
fn randommap_with_several_sizes_shortens_requests_as_fio() {
    // (spec, bytes of one pass over its file, the sizes drawn when the ones shortened can
    // be told from them)
    for (spec, pass, sizes) in [
        (
            "rw=randwrite,bs=4KiB:60,64KiB:40,size=1MiB,randommap=true",
            1 << 20,
            Some(&[4096u64, 65536][..]),
        ),
        (
            "rw=randread,bs=4KiB-16KiB,size=1MiB,randommap=true",
            1 << 20,
            None,
        ),
    ] {
        let ios = requests(spec, Until::Bytes(pass));
        let mut mine: Vec<(u64, u64)> = ios.iter().map(|io| (io.offset, io.len as u64)).collect();
        mine.sort_unstable();
        let (mut end, mut shortened) = (0, 0);
        for &(off, len) in &mine {
            assert_eq!(off, end, "{spec}: the file tiled without gap or overlap");
            assert!(len > 0 && len % 4096 == 0 && len <= 65536, "{spec}: {len}");
            shortened += usize::from(sizes.is_some_and(|s| !s.contains(&len)));
            end = off + len;
        }
        assert_eq!(end, 1 << 20, "{spec}: the file covered once");
        assert!(sizes.is_none() || shortened > 0, "{spec}: no request shortened");
    }
}

/// With `loop_invalidate`, a job that goes round its file again drops the file's cached
/// pages first (fio's `loop_cache_invalidate`): a sequential job at the file's end, a
/// random one when its map is full; never otherwise.
#[test]
fn loop_invalidate_drops_the_cache_at_each_new_pass() {
    let drops = |spec: &str| {
        let ios = requests(spec, Until::Bytes(3 << 20));
        let at: Vec<usize> = ios
            .iter()
            .enumerate()
            .filter(|(_, io)| io.len == 0)
            .map(|(i, _)| i)
            .collect();
        (at, ios.len())
    };
    for spec in [
        "rw=read,bs=4KiB,size=1MiB,loop_invalidate=true",
        "rw=randread,bs=4KiB,size=1MiB,randommap=true,loop_invalidate=true",
    ] {
        assert_eq!(drops(spec), (vec![256, 513], 770), "{spec}");
    }
    assert_eq!(drops("rw=randread,bs=4KiB,size=1MiB,loop_invalidate=true").0.len(), 0);
    assert_eq!(drops("rw=read,bs=4KiB,size=1MiB").0.len(), 0);
}

/// `rw=rw` keeps one sequential position per direction, as fio's `last_pos[ddir]`: reads
/// and writes each go through the file from its start.
#[test]
fn rw_keeps_a_position_per_direction() {
    let ios = requests("rw=rw,bs=4KiB,size=1MiB", Until::Bytes(1 << 20));
    for write in [false, true] {
        let offs: Vec<u64> = ios
            .iter()
            .filter(|io| io.write == write)
            .map(|io| io.offset)
            .collect();
        assert!(offs.len() > 64, "write={write}: {}", offs.len());
        let want: Vec<u64> = (0..offs.len() as u64).map(|i| i * 4096).collect();
        assert_eq!(offs, want, "write={write}");
    }
}

/// `timeout` stops a size-based job when its time is up (fio's `runtime` without
/// `time_based`), and changes nothing for one that ends sooner.
#[test]
fn timeout_caps_a_size_based_job() {
    for (fs, base) in bases() {
        let capped = "rw=write,bs=4KiB,size=64MiB,rate=1MiB,timeout=0.2";
        let phases = run_at(&base, SyncPolicy::None, capped).unwrap();
        let run = phase(&phases, "run");
        assert!(
            run.bytes > 0 && run.bytes < 1 << 20,
            "{fs}: {} B in 0.2 s at 1 MiB/s",
            run.bytes
        );
        let phases = run_at(&base, SyncPolicy::None, "rw=write,size=1MiB,timeout=60").unwrap();
        assert_eq!(phase(&phases, "run").bytes, 1 << 20, "{fs}");
    }
}

/// A `randwrite` job writes into new files, as fio's without `overwrite=1`: with
/// `randommap` a size-based run fills them, every block once, and the layout wrote
/// nothing; with `overwrite=true` the layout wrote them in full first.
#[test]
fn randwrite_writes_into_new_files() {
    for (fs, base) in bases() {
        for overwrite in [false, true] {
            let spec =
                format!("rw=randwrite,bs=4KiB,size=1MiB,randommap=true,overwrite={overwrite}");
            let j = job(&spec);
            let (len, blocks, laid, run) =
                in_context_at(&base, DataPolicy::Random, SyncPolicy::End, |cx| {
                    j.run(cx).unwrap_or_else(|e| panic!("{fs} {spec}: {e:#}"));
                    let m = std::fs::metadata(Job::path(cx.workdir(), 0, 0)).unwrap();
                    let p = cx.phases();
                    (m.len(), m.blocks() * 512, phase(p, "layout").bytes, phase(p, "run").bytes)
                });
            assert_eq!((len, run), (1 << 20, 1 << 20), "{fs} {spec}");
            assert!(blocks >= 1 << 20, "{fs} {spec}: {blocks} B allocated");
            assert_eq!(laid, if overwrite { 1 << 20 } else { 0 }, "{fs} {spec}");
        }
    }
}

/// Jobs sharing files, each over all of them: with `common_files` all use job 0's (only
/// they exist); with `file_sets` each set its first job's (sets 2,1: jobs 0 and 2's).
#[test]
fn shared_files_are_laid_out_once_per_set() {
    for (share, names, owners) in [
        ("common_files=true", &["job0.0"][..], 1),
        ("file_sets=2,1", &["job0.0", "job2.0"][..], 2),
    ] {
        for (fs, base) in bases() {
            let spec = format!("rw=randread,bs=4KiB,size=1MiB,numjobs=3,{share}");
            let j = job(&spec);
            let (got, run) = in_context_at(&base, DataPolicy::Random, SyncPolicy::None, |cx| {
                j.run(cx).unwrap_or_else(|e| panic!("{fs} {spec}: {e:#}"));
                let mut got: Vec<String> = std::fs::read_dir(cx.workdir())
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect();
                got.sort();
                (got, phase(cx.phases(), "run").bytes)
            });
            assert_eq!(got, names, "{fs} {spec}");
            assert_eq!(run, 3 << 20, "{fs} {spec}: each job reads size");
            assert_eq!(j.data_bytes(), Some(owners << 20), "{spec}");
        }
    }
    assert!(job_err("common_files=true,verify=true").contains("common_files"));
    for bad in [
        "numjobs=3,file_sets=2",
        "numjobs=2,file_sets=2,0",
        "numjobs=2,file_sets=2,common_files=true",
        "numjobs=2,file_sets=2,verify=true",
    ] {
        assert!(job_err(bad).contains("file_sets"), "{bad}");
    }
}

/// `startdelay` waits before the job, outside the run's clock; `fsync_on_close` fsyncs
/// each written file at the job's end, inside it, whatever the sync policy; `pre_read`
/// reads the files in before the run (refused with `shared_file`).
#[test]
fn startdelay_fsync_on_close_and_pre_read() {
    use super::tests::count_of;
    let base = std::env::temp_dir();
    let t = std::time::Instant::now();
    let phases = run_at(&base, SyncPolicy::None, "rw=read,size=1MiB,startdelay=0.3").unwrap();
    assert!(t.elapsed().as_secs_f64() >= 0.3);
    assert!(phase(&phases, "run").wall_s < 0.3, "the delay is not timed");
    for (spec, fsyncs) in [
        ("rw=write,size=1MiB,nrfiles=2,fsync_on_close=true", 2),
        ("rw=write,size=1MiB,nrfiles=2", 0),
    ] {
        let phases = run_at(&base, SyncPolicy::None, spec).unwrap();
        assert_eq!(count_of(phase(&phases, "run"), "fsync"), fsyncs, "{spec}");
    }
    let phases = run_at(&base, SyncPolicy::None, "rw=randread,size=1MiB,pre_read=true").unwrap();
    assert_eq!(phase(&phases, "run").bytes, 1 << 20);
    assert!(job_err("pre_read=true,shared_file=true").contains("pre_read"));
    assert!(job_err("fsync_on_close=true,nrfiles=4,openfiles=2").contains("fsync_on_close"));
}

/// `buffers`: a sequential write's blocks are all the same buffer from the data pool
/// (`once`, fio's default), differ (`refill`, fio's `refill_buffers`), or are zeros
/// (`zero`, fio's `zero_buffers`).
#[test]
fn buffers_once_refill_and_zero() {
    let base = std::env::temp_dir();
    for (how, same, zero) in [("once", true, false), ("refill", false, false), ("zero", true, true)] {
        let spec = format!("rw=write,bs=4KiB,size=64KiB,buffers={how}");
        let j = job(&spec);
        let data = in_context_at(&base, DataPolicy::Random, SyncPolicy::None, |cx| {
            j.run(cx).unwrap_or_else(|e| panic!("{spec}: {e:#}"));
            std::fs::read(cx.workdir().join("job0.0")).unwrap()
        });
        assert_eq!(data.len(), 64 << 10, "{spec}");
        let blocks: Vec<&[u8]> = data.chunks(4096).collect();
        assert_eq!(blocks.iter().all(|b| *b == blocks[0]), same, "{spec}");
        assert_eq!(data.iter().all(|&b| b == 0), zero, "{spec}");
    }    // compress=66: the last 66% of each 4 KiB are zeros, the rest random.
    let spec = "rw=write,bs=8KiB,size=64KiB,buffers=refill,compress=66";
    let j = job(spec);
    let data = in_context_at(&base, DataPolicy::Random, SyncPolicy::None, |cx| {
        j.run(cx).unwrap_or_else(|e| panic!("{spec}: {e:#}"));
        std::fs::read(cx.workdir().join("job0.0")).unwrap()
    });
    for b in data.chunks(4096) {
        let from = 4096 - 4096 * 66 / 100;
        assert!(b[from..].iter().all(|&x| x == 0), "{spec}");
        assert!(b[..from].iter().filter(|&&x| x != 0).count() > from / 2, "{spec}");
    }
    assert!(job_err("compress=101").contains("compress"));
}

/// After a ramp the run goes on from where the ramp left off, and a size-based job's
/// ramp counts in its size, as fio's (fio 3.33: `rw=read size=32m rate=16m ramp_time=1`
/// measures 16 MiB): a sequential write of 2 MiB at 2 MiB/s with a 0.5 s ramp writes the
/// file once, end to end, and its run moves what the ramp did not.
#[test]
fn the_run_goes_on_from_the_ramp() {
    let base = std::env::temp_dir();
    let spec = "rw=write,bs=4KiB,size=2MiB,rate=2MiB,ramp=0.5";
    let j = job(spec);
    let (len, run) = in_context_at(&base, DataPolicy::Random, SyncPolicy::None, |cx| {
        j.run(cx).unwrap_or_else(|e| panic!("{spec}: {e:#}"));
        let len = std::fs::metadata(cx.workdir().join("job0.0")).unwrap().len();
        (len, phase(cx.phases(), "run").bytes)
    });
    assert_eq!(len, 2 << 20, "the file written to its end");
    assert!(run > 0 && run < 2 << 20, "the run moved {run} B of 2 MiB");
}

/// `seq_add` moves as fio's `rw=read:N` (offsets from fio 3.33's `write_iolog` of the same
/// jobs): a step back reads backwards, wrapping to `N` before the end; a hole ends a
/// size-based pass at the file's end (fewer bytes than its size), and `io_size` above the
/// size goes round again from the start.
#[test]
fn seq_add_holes_and_steps_back_as_fio() {
    let k = |v: &[u64]| v.iter().map(|x| x << 10).collect::<Vec<u64>>();
    let offsets = |spec: &str| -> Vec<u64> {
        let until = job(spec).until_loop(Duration::ZERO).unwrap();
        requests(spec, until).iter().map(|io| io.offset).collect()
    };
    let mut back = vec![0];
    back.extend((1..=14).rev().map(|i| i * 4));
    back.push(0);
    assert_eq!(offsets("rw=read,size=64KiB,seq_add=-8KiB"), k(&back));
    let pass = [0, 12, 24, 36, 48, 60];
    assert_eq!(offsets("rw=write,size=64KiB,seq_add=8KiB"), k(&pass));
    let round: Vec<u64> = pass.iter().cycle().take(32).copied().collect();
    assert_eq!(offsets("rw=read,size=64KiB,io_size=128KiB,seq_add=8KiB"), k(&round));
    assert!(job_err("rw=randread,seq_add=4KiB").contains("rw=read and rw=write"));
    assert!(job_err("bs=4KiB-8KiB,seq_add=4KiB").contains("one block size"));
    assert!(job_err("seq_add=lots").contains("not a size"));
}
