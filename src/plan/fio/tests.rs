//! The job-file reader: fio's units, comments, includes, `${VAR}`, stonewall groups, the
//! mapping onto `job` parameters, and refusals, all at once with file and line.

use super::ini::Source;
use super::units::{self, Amount};
use super::*;
use std::collections::HashMap;
use std::path::PathBuf;

/// Files and variables held in memory.
#[derive(Default)]
struct Mem {
    files: HashMap<PathBuf, String>,
    vars: HashMap<String, String>,
}

impl Source for Mem {
    fn read(&mut self, path: &Path) -> Result<String, String> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| "no such file".into())
    }
    fn exists(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }
    fn keyword(&self, word: &str) -> Option<u64> {
        match word {
            "$pagesize" => Some(4096),
            "$mb_memory" => Some(1000),
            "$ncpus" => Some(2),
            _ => None,
        }
    }
}

fn parse_with(mem: &mut Mem, text: &str, lenient: bool) -> Result<FioPlan, Vec<Issue>> {
    parse(Path::new("/jobs/t.fio"), text, mem, lenient)
}

fn ok(text: &str) -> FioPlan {
    parse_with(&mut Mem::default(), text, false).unwrap_or_else(|e| panic!("{e:#?}"))
}

fn specs(text: &str) -> Vec<String> {
    ok(text).entries.into_iter().map(|e| e.spec).collect()
}

fn issues(text: &str, lenient: bool) -> Vec<Issue> {
    parse_with(&mut Mem::default(), text, lenient).expect_err("refused")
}

#[test]
fn sizes_follow_fio_kb_base_1024() {
    let b = |t| units::amount(t).unwrap();
    assert_eq!(b("4k"), Amount::Bytes(4096));
    assert_eq!(b("4K"), Amount::Bytes(4096));
    assert_eq!(b("4kb"), Amount::Bytes(4096));
    // fio's inversion under kb_base=1024: the IEC suffix is decimal.
    assert_eq!(b("4KiB"), Amount::Bytes(4000));
    assert_eq!(b("1m"), Amount::Bytes(1 << 20));
    assert_eq!(b("1g"), Amount::Bytes(1 << 30));
    assert_eq!(b("2t"), Amount::Bytes(2 << 40));
    assert_eq!(b("512"), Amount::Bytes(512));
    assert_eq!(b("10%"), Amount::Percent(10));
    assert!(units::amount("1.5k").unwrap_err().contains("whole number"));
    assert!(units::amount("4x").is_err());
    assert!(units::amount("99999999999p").is_err());
    assert!(units::bytes("10%", "no").unwrap_err().ends_with("no"));
}

#[test]
fn sizes_are_passed_on_exactly() {
    assert_eq!(super::options::exact(4000), "4000");
    assert_eq!(super::options::exact(4096), "4KiB");
    assert_eq!(super::options::exact(3 << 30), "3GiB");
    assert_eq!(super::options::exact(0), "0");
    // A sequential job moves whole blocks: 1 MiB of 4000-byte blocks is 262 of them,
    // 1,048,000 bytes (fio 3.33 wrote 262 requests, 1048000 bytes).
    assert_eq!(
        specs("[j]\nsize=1m\nbs=4kib\n"),
        ["job:name=j,rw=read,bs=4000,size=1048000,engine=psync"]
    );
}

#[test]
fn times_default_to_seconds() {
    let s = |t| units::seconds(t).unwrap();
    assert_eq!(s("5"), 5.0);
    assert_eq!(s("5s"), 5.0);
    assert_eq!(s("500ms"), 0.5);
    assert_eq!(s("2m"), 120.0);
    assert_eq!(s("1h"), 3600.0);
    assert_eq!(s("250us"), 0.00025);
    assert!(units::seconds("2x").is_err());
    assert_eq!(units::cpu_list("0-2,5").unwrap(), vec![0, 1, 2, 5]);
}

#[test]
fn comments_globals_and_defaults() {
    let text = "# a comment\n; another\n[global]\nbs=64k ; inline\nsize=8m # too\n\
                ioengine=psync\n[one]\nrw=read\n";
    assert_eq!(
        specs(text),
        ["job:name=one,rw=read,bs=64KiB,size=8MiB,engine=psync"]
    );
}

#[test]
fn a_global_section_applies_to_the_jobs_after_it() {
    let text = "[a]\nsize=1m\n[global]\nbs=8k\n[b]\nsize=1m\nstonewall\n";
    assert_eq!(
        specs(text),
        [
            "job:name=a,rw=read,bs=4KiB,size=1MiB,engine=psync",
            "job:name=b,rw=read,bs=8KiB,size=1MiB,engine=psync"
        ]
    );
}

#[test]
fn variables_expand_from_the_environment_and_unset_is_empty() {
    let mut mem = Mem::default();
    mem.vars.insert("SZ".into(), "2m".into());
    let text = "[j]\nsize=${SZ}\nbs=${UNSET}16k\n";
    let plan = parse_with(&mut mem, text, false).unwrap();
    assert_eq!(
        plan.entries[0].spec,
        "job:name=j,rw=read,bs=16KiB,size=2MiB,engine=psync"
    );
}

#[test]
fn includes_are_read_beside_the_including_file() {
    let mut mem = Mem::default();
    mem.files.insert(
        "/jobs/common.inc".into(),
        "bs=16k\ninclude deeper.inc\n".into(),
    );
    mem.files
        .insert("/jobs/deeper.inc".into(), "size=4m\n".into());
    let plan = parse_with(&mut mem, "[j]\ninclude common.inc\nrw=write\n", false).unwrap();
    assert_eq!(
        plan.entries[0].spec,
        "job:name=j,rw=write,bs=16KiB,size=4MiB,engine=psync,fallocate=native"
    );
}

#[test]
fn include_problems_are_located() {
    let mut mem = Mem::default();
    mem.files
        .insert("/jobs/loop.inc".into(), "include loop.inc\n".into());
    mem.files
        .insert("/jobs/sect.inc".into(), "size=1m\n[x]\n".into());
    let text = "[j]\nsize=1m\ninclude missing.inc\ninclude loop.inc\ninclude sect.inc\n";
    let e = parse_with(&mut mem, text, true).unwrap_err();
    let at: Vec<String> = e.iter().map(|i| i.at.to_string()).collect();
    assert!(at.contains(&"/jobs/t.fio:3".to_string()), "{e:#?}");
    assert!(e.iter().any(|i| i.why.contains("nest deeper")), "{e:#?}");
    assert!(at.contains(&"/jobs/sect.inc:2".to_string()), "{e:#?}");
}

#[test]
fn stonewalls_make_groups_run_in_order() {
    let text = "[global]\nsize=1m\nnumjobs=2\n[w1]\nrw=write\n[w2]\nrw=write\n\
                [r]\nstonewall\nrw=read\n[rr]\nwait_for_previous\nrw=randread\nnorandommap\n";
    let plan = ok(text);
    let got: Vec<(&str, Vec<String>)> = plan
        .entries
        .iter()
        .map(|e| (e.spec.as_str(), e.jobs.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "job:name=w1+w2,rw=write,bs=4KiB,size=1MiB,engine=psync,fallocate=native,numjobs=4",
                vec!["w1".to_string(), "w2".into()]
            ),
            (
                "job:name=r,rw=read,bs=4KiB,size=1MiB,engine=psync,numjobs=2",
                vec!["r".into()]
            ),
            (
                "job:name=rr,rw=randread,bs=4KiB,size=1MiB,engine=psync,numjobs=2",
                vec!["rr".into()]
            ),
        ]
    );
}

#[test]
fn unlike_jobs_at_once_run_as_kinds_of_one_trial() {
    // Alike jobs are one kind, in order of first appearance; the others go in `with`.
    let text = "[global]\nsize=1m\n[a]\nrw=randread\n[b]\nrw=write\nnumjobs=2\n[c]\nrw=randread\n";
    let plan = ok(text);
    assert_eq!(
        specs(text),
        [
            "job:name=a+b+c,rw=randread,bs=4KiB,size=1MiB,engine=psync,randommap=true,numjobs=2,\
          with='rw=write,bs=4KiB,size=1MiB,engine=psync,fallocate=native,numjobs=2'"
        ]
    );
    assert!(
        plan.notes.iter().any(|n| n.contains("2 kinds (a, c) (b)")),
        "{:?}",
        plan.notes
    );
    // What fsarena cannot do at once is refused, even when lenient: a kind that works on
    // an earlier kind's file and on another, kinds that ramp for different times.
    let shared = "[global]\nsize=1m\n[a]\nrw=read\nfilename=f\n[b]\nrw=write\nfilename=f\n\
                  [b2]\nrw=write\nfilename=g\n";
    let e = issues(shared, true);
    assert_eq!(e.len(), 1, "{e:#?}");
    let i = &e[0];
    assert!(
        i.fatal && i.option == "filename=f" && i.at.line == 8,
        "{e:#?}"
    );
    let ramps = "[global]\nsize=1m\n[a]\nrw=read\nramp_time=1\n[b]\nrw=write\n";
    let e = issues(ramps, true);
    assert!(
        e.iter()
            .any(|i| i.fatal && i.at.line == 6 && i.why.contains("ramp")),
        "{e:#?}"
    );
    // Every spec the mapping makes is one the job workload takes.
    crate::workload::WorkloadSpec::parse(&specs(text)[0]).unwrap();
    // A kind whose jobs all name a file an earlier kind names works on its files: those
    // of the earlier kind's set of jobs that name it (here its second set, from job 1).
    let text = "[global]\nsize=1m\n[a]\n[b]\nfilename=f\nnumjobs=2\n[c]\nrw=write\nfilename=f\n";
    let spec = &specs(text)[0];
    assert!(spec.ends_with(",files_of=1:1'"), "{spec}");
    crate::workload::WorkloadSpec::parse(spec).unwrap();
}

#[test]
fn every_refusal_is_listed_at_once_with_its_line() {
    let text = "[global]\nsize=4m\n[j]\nioengine=libaio\noffset=4k\nrw=randread\n\
                percentage_random=50\niodepth=8\n";
    let e = issues(text, false);
    let got: Vec<(usize, &str)> = e.iter().map(|i| (i.at.line, i.option.as_str())).collect();
    assert_eq!(got, [(5, "offset=4k"), (7, "percentage_random=50")]);
    assert!(e.iter().all(|i| !i.fatal));
    let msg = format!("{:#}", refusal(Path::new("/jobs/t.fio"), &e));
    assert!(
        msg.contains("/jobs/t.fio:5: offset=4k: fsarena has no offset"),
        "{msg}"
    );
    // Lenient: the same list comes back, and the job runs (ioengine=libaio as libaio).
    let plan = parse_with(&mut Mem::default(), text, true).unwrap();
    assert_eq!(plan.ignored, e);
    assert_eq!(
        plan.entries[0].spec,
        "job:name=j,rw=randread,bs=4KiB,size=4MiB,iodepth=8,engine=libaio,randommap=true"
    );
    assert!(plan
        .run_notes()
        .iter()
        .any(|l| l.contains("--fio-lenient") && l.contains("offset=4k")));
}

/// The most copied fio command on the web, as a job file, and the options that change
/// only fio's reports or clock: accepted, each with a note the run keeps.
#[test]
fn options_that_change_no_io_run_with_a_note() {
    let text = "[global]\nrandrepeat=1\nioengine=libaio\ndirect=1\ngtod_reduce=1\n\
                name=test\nbs=4k\niodepth=64\nsize=4m\nreadwrite=randrw\nrwmixread=75\n\
                [test]\nclocksource=clock_gettime\ndisable_lat=1\ndisable_bw_measurement=1\n\
                group_reporting\nwrite_bw_log=bw\nwrite_lat_log=lat\nlog_avg_msec=1000\n\
                lat_percentiles=1\npercentile_list=50:99\nthread\nper_job_logs=0\n";
    let plan = parse_with(&mut Mem::default(), text, false).unwrap();
    assert!(plan.ignored.is_empty(), "{:#?}", plan.ignored);
    assert_eq!(
        plan.entries[0].spec,
        "job:name=test,rw=randrw,rwmixread=75,bs=4KiB,size=4MiB,iodepth=64,engine=libaio,\
         direct=true,randommap=true"
    );
    let notes = plan.run_notes();
    for opt in [
        "gtod_reduce=1",
        "clocksource=clock_gettime",
        "disable_lat=1",
        "disable_bw_measurement=1",
        "group_reporting",
        "write_bw_log=bw",
        "write_lat_log=lat",
        "log_avg_msec=1000",
        "lat_percentiles=1",
        "percentile_list=50:99",
        "thread",
        "per_job_logs=0",
    ] {
        let said = notes
            .iter()
            .filter(|l| l.contains(&format!(": {opt}: no I/O changes")))
            .count();
        assert_eq!(said, 1, "{opt}: {notes:#?}");
    }
}

/// `wait_for=X` runs as a stonewall where the jobs before it in its group are X's and
/// those after it wait too, as fio's `examples/waitfor.fio`; else it is refused.
#[test]
fn wait_for_after_a_whole_group_is_a_stonewall() {
    let text = "[global]\nsize=1m\n[w]\nrw=write\nnumjobs=2\n[r]\nwait_for=w\nrw=read\n\
                [w2]\nwait_for=r\nrw=randwrite\n";
    let plan = ok(text);
    assert_eq!(plan.entries.len(), 3, "{:#?}", plan.entries);
    assert!(
        plan.notes.iter().any(|n| n.contains("wait_for=w")),
        "{:?}",
        plan.notes
    );
    // x runs at once with w, so r's wait is not after a whole group; nor is it when a
    // later job of the group does not wait (it would start with w).
    for text in [
        "[global]\nsize=1m\n[w]\nrw=write\n[x]\nrw=read\n[r]\nwait_for=w\nrw=read\n",
        "[global]\nsize=1m\n[w]\nrw=write\n[r]\nwait_for=w\nrw=read\n[x]\nrw=read\n",
    ] {
        let e = issues(text, false);
        assert!(
            e.iter().any(|i| !i.fatal && i.option == "wait_for=w"),
            "{text}: {e:#?}"
        );
    }
}

/// `rw=read:N` on a sequential job: a hole after each request, or a step back.
#[test]
fn offset_modifiers_of_sequential_jobs_map_to_seq_add() {
    let s = specs("[j]\nsize=128k\nrw=read:-8k\n[k]\nstonewall\nsize=128k\nrw=write:112k\n");
    assert!(s[0].contains("rw=read,seq_add=-8KiB"), "{s:?}");
    assert!(s[1].contains("rw=write,seq_add=112KiB"), "{s:?}");
}

#[test]
fn fatal_refusals() {
    for (text, line, what) in [
        ("[j]\nrw=write\n", 1, "no size"),
        ("[j]\nsize=10%\n", 2, "share of an existing file"),
        ("[j]\nsize=1m\nrw=trim\n", 3, "no trim"),
        (
            "[j]\nsize=1m\nrw=randread:8\nnorandommap\n",
            3,
            "offset modifier",
        ),
        ("[j]\nsize=1m\nrw=rw:4k\n", 3, "not on mixed ones"),
        (
            "[j]\nsize=1m\nfilename=/dev/sda\n",
            3,
            "a device is not a file",
        ),
        ("[j]\nsize=1m\nioengine=posixaio\n", 3, "has no posixaio"),
        (
            "[j]\nsize=1m\nrw=randrw\nbs=4k,8k\nnorandommap\n",
            4,
            "reads and writes",
        ),
        ("[j]\nsize=1m\nbssplit=4k/60:8k/60\n", 3, "add up to 100"),
        ("[j]\nsize=1m\ntime_based\n", 3, "needs a runtime"),
        ("size=1m\n[j]\n", 1, "outside of a [section]"),
        (
            "[j]\nsize=1m\ndirect=1\nbuffered=1\n",
            4,
            "contradicts direct",
        ),
        // The job engine's own check, located at the job.
        ("[j]\nsize=1m\nbs=4m\n", 1, "smaller than the largest block"),
    ] {
        let e = issues(text, true);
        assert!(
            e.iter()
                .any(|i| i.fatal && i.at.line == line && i.why.contains(what)),
            "{text:?}: {e:#?}"
        );
    }
}

#[test]
fn mapped_options() {
    let cases = [
        (
            "rw=randrw\nrwmixwrite=30\nnorandommap\n",
            "rw=randrw,rwmixread=70,bs=4KiB,size=1MiB,engine=psync",
        ),
        (
            "bsrange=4k-64k\n",
            "rw=read,bs=4KiB-64KiB,size=1MiB,engine=psync",
        ),
        (
            "bssplit=4k/50:64k/:128k/\n",
            "rw=read,bs=4KiB:50,64KiB:25,128KiB:25,size=1MiB,engine=psync",
        ),
        // Rounded down to a multiple of the smallest size, as fio's.
        (
            "bssplit=4k/50:6k/30:10k/\n",
            "rw=read,bs=4KiB:50,4KiB:30,8KiB:20,size=1MiB,engine=psync",
        ),
        // fio's random map with several sizes.
        (
            "rw=randwrite\nbssplit=4k/60:64k/40\n",
            "rw=randwrite,bs=4KiB:60,64KiB:40,size=1MiB,engine=psync,randommap=true,\
             fallocate=native",
        ),
        (
            "buffered=0\nioengine=io_uring\niodepth=32\n",
            "rw=read,bs=4KiB,size=1MiB,iodepth=32,engine=io_uring,direct=true",
        ),
        (
            "direct=1\nioengine=libaio\niodepth=16\n",
            "rw=read,bs=4KiB,size=1MiB,iodepth=16,engine=libaio,direct=true",
        ),
        (
            "ioengine=pvsync\niodepth=16\n",
            "rw=read,bs=4KiB,size=1MiB,engine=psync",
        ),
        (
            "rw=write\nfdatasync=8\nend_fsync=1\nfallocate=keep\n",
            "rw=write,bs=4KiB,size=1MiB,engine=psync,fdatasync=8,end_fsync=true,fallocate=keep",
        ),
        (
            "rw=write\noverwrite=1\nverify=crc32c\n",
            "rw=write,bs=4KiB,size=1MiB,engine=psync,verify=true,overwrite=true",
        ),
        (
            "rw=randread\nnorandommap\ntime_based\nruntime=1500ms\nramp_time=1\nrate=1m\n",
            "rw=randread,bs=4KiB,size=1MiB,engine=psync,runtime=1.5,ramp=1,rate=1MiB",
        ),
        (
            "rw=randread\nnorandommap\nrandom_distribution=zipf:1.2\n",
            "rw=randread,bs=4KiB,size=1MiB,engine=psync,random_distribution=zipf:1.2",
        ),
        (
            "cpus_allowed=0-1\ncpus_allowed_policy=split\nthread\ngroup_reporting\n",
            "rw=read,bs=4KiB,size=1MiB,engine=psync,cpus=0,1",
        ),
        (
            "filename=a:b\n",
            "rw=read,bs=4KiB,size=1MiB,nrfiles=2,engine=psync",
        ),
        (
            "openfiles=1\nnrfiles=4\n",
            "rw=read,bs=4KiB,size=1MiB,nrfiles=4,openfiles=1,engine=psync",
        ),
    ];
    for (opts, want) in cases {
        let text = format!("[j]\nsize=1m\n{opts}");
        assert_eq!(specs(&text), [format!("job:name=j,{want}")], "{opts}");
    }
    // fio's random map, its runtime cap, rw's two positions, random writes into new
    // (fallocated) files, and jobs sharing a filename.
    let cases = [
        (
            "rw=randrw\nruntime=10\n",
            "rw=randrw,bs=4KiB,size=1MiB,engine=psync,timeout=10,randommap=true",
        ),
        ("rw=rw\n", "rw=rw,bs=4KiB,size=1MiB,engine=psync"),
        (
            "fadvise_hint=0\n",
            "rw=read,bs=4KiB,size=1MiB,engine=psync,fadvise_hint=false",
        ),
        (
            "rw=randread\nnorandommap\nrate_iops=100\nstartdelay=2\n",
            "rw=randread,bs=4KiB,size=1MiB,engine=psync,rate=400KiB,startdelay=2",
        ),
        (
            "rw=write\nfsync_on_close=1\n",
            "rw=write,bs=4KiB,size=1MiB,engine=psync,fsync_on_close=true,fallocate=native",
        ),
        (
            "rw=randwrite\n",
            "rw=randwrite,bs=4KiB,size=1MiB,engine=psync,randommap=true,fallocate=native",
        ),
        (
            "rw=randwrite\noverwrite=1\nnorandommap\n",
            "rw=randwrite,bs=4KiB,size=1MiB,engine=psync,overwrite=true",
        ),
        (
            "rw=randread\nrandom_distribution=pareto:0.2\n",
            "rw=randread,bs=4KiB,size=1MiB,engine=psync,random_distribution=pareto:0.2",
        ),
        (
            "zero_buffers\nrefill_buffers\n",
            "rw=read,bs=4KiB,size=1MiB,engine=psync,buffers=zero",
        ),
        (
            "refill_buffers=1\n",
            "rw=read,bs=4KiB,size=1MiB,engine=psync,buffers=refill",
        ),
        (
            "cpumask=0x2\nfilename_format=f$jobnum\n",
            "rw=read,bs=4KiB,size=1MiB,engine=psync,cpus=1",
        ),
        (
            "time_based\nruntime=2\nramp_time=1\ndirect=1\n",
            "rw=read,bs=4KiB,size=1MiB,engine=psync,direct=true,runtime=2,ramp=1",
        ),
        (
            "rw=randread\nnumber_ios=100\nsync=0\n",
            "rw=randread,bs=4KiB,size=1MiB,engine=psync,io_size=400KiB,randommap=true",
        ),
        (
            "rw=randread\nnorandommap\nrandom_generator=lfsr\n",
            "rw=randread,bs=4KiB,size=1MiB,engine=psync,randommap=true",
        ),
        (
            "buffer_compress_percentage=66\nbuffer_pattern=0xdeadbeef\n",
            "rw=read,bs=4KiB,size=1MiB,engine=psync,compress=66",
        ),
        (
            "filesize=4m\n",
            "rw=read,bs=4KiB,size=4MiB,engine=psync,io_size=1MiB",
        ),
        (
            "numjobs=4\nfilename=f\n",
            "rw=read,bs=4KiB,size=1MiB,engine=psync,numjobs=4,common_files=true",
        ),
    ];
    for (opts, want) in cases {
        let text = format!("[j]\nsize=1m\n{opts}");
        assert_eq!(specs(&text), [format!("job:name=j,{want}")], "{opts}");
    }
    // A time-based buffered job that goes round its file drops it from the cache each
    // time, as fio's does under invalidate=1; not with O_DIRECT, invalidate=0 or
    // norandommap.
    let tb = "time_based\nruntime=1\n";
    for (opts, drops) in [
        ("rw=read\n", true),
        ("rw=randwrite\n", true),
        ("rw=read\ndirect=1\n", false),
        ("rw=write\ninvalidate=0\n", false),
        ("rw=randread\nnorandommap\n", false),
        ("rw=read\nnrfiles=2\n", false),
    ] {
        let spec = specs(&format!("[j]\nsize=1m\n{tb}{opts}")).remove(0);
        assert_eq!(
            spec.contains("loop_invalidate=true"),
            drops,
            "{opts}: {spec}"
        );
    }
    // Jobs of one group that name one filename share it, each over all of it; the clones
    // of a job that names none have files of their own, as in fio.
    let text = "[global]\nsize=1m\n[a]\nnumjobs=2\nfilename=f\n[k]\n[b]\nfilename=g\n\
                [c]\nfilename=f\n";
    let plan = ok(text);
    assert_eq!(
        plan.entries[0].spec,
        "job:name=a+k+b+c,rw=read,bs=4KiB,size=1MiB,engine=psync,numjobs=5,file_sets=3,1,1"
    );
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("3 of the group's 5 jobs (a, c)")),
        "{:?}",
        plan.notes
    );
    // pre_read turns invalidate off, as fio's: the run keeps the cache.
    let plan = ok("[j]\nsize=1m\npre_read=1\n");
    assert_eq!(
        plan.entries[0].spec,
        "job:name=j,rw=read,bs=4KiB,size=1MiB,engine=psync,pre_read=true"
    );
    assert!(!plan.invalidate);
    // A file an earlier group made is overwritten by a later group's writes, as in fio.
    let text = "[global]\nsize=1m\nfilename=t\n[r]\nrw=read\n[w]\nstonewall\nrw=write\n\
                [o]\nstonewall\nfilename=other\nrw=write\n";
    let plan = ok(text);
    let got: Vec<&str> = plan.entries.iter().map(|e| e.spec.as_str()).collect();
    assert_eq!(
        got,
        [
            "job:name=r,rw=read,bs=4KiB,size=1MiB,engine=psync",
            "job:name=w,rw=write,bs=4KiB,size=1MiB,engine=psync,overwrite=true",
            "job:name=o,rw=write,bs=4KiB,size=1MiB,engine=psync,fallocate=native",
        ]
    );
    assert!(
        plan.notes.iter().any(|n| n.contains("earlier group")),
        "{:?}",
        plan.notes
    );
    // A sequential write into new files lays nothing out: invalidate=0 changes no sync.
    let plan = ok("[j]\nrw=write\nfilesize=256k\nnrfiles=4\ninvalidate=0\nrandseed=7\n");
    assert_eq!(
        plan.entries[0].spec,
        "job:name=j,rw=write,bs=4KiB,size=1MiB,nrfiles=4,engine=psync,fallocate=native"
    );
    assert!(!plan.invalidate);
    assert_eq!(plan.seed, Some(7));
}

#[test]
fn approximations_need_lenient() {
    for (opts, what) in [
        ("offset=4k\n", "offset"),
        ("sync=1\n", "O_SYNC"),
        ("buffer_pattern=0xdeadbeef\n", "not a pattern"),
        (
            "time_based\nruntime=1\nnumber_ios=9\n",
            "runs for its runtime",
        ),
        ("cpus_allowed=0-1\n", "pins each job"),
        ("rw=read\nverify=md5\n", "earlier fio job"),
        ("no_such_option=3\n", "no_such_option"),
        (
            "rw=randread\nnorandommap\nnrfiles=4\nopenfiles=2\n",
            "random map is full",
        ),
        ("invalidate=0\n", "create_fsync"),
        ("startdelay=1-3\n", "random delay"),
        (
            "bsrange=4k-8k\nnorandommap\nrw=randread\nrate_iops=9\n",
            "several block sizes",
        ),
    ] {
        let text = format!("[j]\nsize=1m\n{opts}");
        let e = issues(&text, false);
        assert!(e.iter().all(|i| !i.fatal), "{opts}: {e:#?}");
        assert!(e.iter().any(|i| i.why.contains(what)), "{opts}: {e:#?}");
        assert!(
            parse_with(&mut Mem::default(), &text, true).is_ok(),
            "{opts}"
        );
    }
}

#[test]
fn settings_taken_once_per_run_must_agree() {
    let text = "[a]\nsize=1m\ninvalidate=0\n[b]\nstonewall\nsize=1m\ninvalidate=1\n";
    let e = issues(text, true);
    assert!(
        e.iter()
            .any(|i| i.fatal && i.at.line == 7 && i.why.contains("invalidate")),
        "{e:#?}"
    );
    // A job left at fio's default 1 disagrees with one that gives 0.
    let text = "[a]\nsize=1m\n[b]\nstonewall\nsize=1m\ninvalidate=0\n";
    let e = issues(text, true);
    let at_default = |i: &Issue| i.at.line == 6 && i.why.contains("invalidate=1 at /jobs/t.fio:1");
    assert!(e.iter().any(|i| i.fatal && at_default(i)), "{e:#?}");
}

/// `--fio-set` options come after every job's own and win; a refusal names them by place.
#[test]
fn set_options_override_the_file() {
    let text = "[global]\nsize=10g\n[a]\nrw=read\n[b]\nstonewall\nrw=randread\nsize=20g\n";
    let sets = ["size=64m".to_string(), "norandommap".into()];
    let plan = parse_set(
        Path::new("/jobs/t.fio"),
        text,
        &mut Mem::default(),
        false,
        Sets {
            opts: &sets,
            from: "--fio-set",
        },
    )
    .unwrap_or_else(|e| panic!("{e:#?}"));
    let got: Vec<&str> = plan.entries.iter().map(|e| e.spec.as_str()).collect();
    assert_eq!(
        got,
        [
            "job:name=a,rw=read,bs=4KiB,size=64MiB,engine=psync",
            "job:name=b,rw=randread,bs=4KiB,size=64MiB,engine=psync"
        ]
    );
    let bad = ["create_on_open=1".to_string()];
    let e = parse_set(
        Path::new("/jobs/t.fio"),
        text,
        &mut Mem::default(),
        false,
        Sets {
            opts: &bad,
            from: "--fio-set",
        },
    )
    .unwrap_err();
    assert!(
        e.iter().any(|i| i.at.to_string() == "--fio-set:1"),
        "{e:#?}"
    );
}

/// The run's notes (kept in its report) say which policies the file sets.
#[test]
fn the_notes_say_the_policies_the_file_sets() {
    let policy = |text: &str| {
        let notes = ok(text).run_notes();
        notes
            .into_iter()
            .find(|n| n.starts_with("fio: policies"))
            .expect("a policy line")
    };
    let line = policy("[j]\nsize=1m\n");
    assert!(
        line.contains("cache cold (invalidate=1, fio's default)"),
        "{line}"
    );
    assert!(line.contains("sync none"), "{line}");
    assert!(!line.contains("seed"), "no randseed: {line}");
    let line = policy("[j]\nrw=write\nsize=1m\ninvalidate=0\nrandseed=7\n");
    assert!(line.contains("cache keep (invalidate=0)"), "{line}");
    assert!(line.contains("seed 7 (randseed=7)"), "{line}");
}

/// fio's randrepeat=0 (a new sequence every run): each repetition draws from its own seed,
/// unless randseed fixes one, as in fio; the run says so.
#[test]
fn randrepeat_0_draws_anew_each_repetition_unless_randseed_fixes_it() {
    let plan = ok("[j]\nsize=1m\nrw=randread\nrandrepeat=0\n");
    assert!(plan.fresh_seed);
    assert!(
        plan.entries[0].spec.ends_with(",randrepeat=false"),
        "{}",
        plan.entries[0].spec
    );
    assert!(plan.run_notes().iter().any(|l| l.contains("randrepeat=0")));
    let plan = ok("[j]\nsize=1m\nrw=randread\nrandrepeat=0\nrandseed=7\n");
    assert!(!plan.fresh_seed);
    assert!(!plan.entries[0].spec.contains("randrepeat"));
    let plan = ok("[j]\nsize=1m\nrw=randread\nrandrepeat=1\n");
    assert!(!plan.fresh_seed && !plan.entries[0].spec.contains("randrepeat"));
}

/// fio's `loops` and `io_size` (`io_limit`): parameters of the job where they change its
/// I/O; a time-based job ignores them, as fio does, and says so.
#[test]
fn loops_and_io_size_map_as_fio_reads_them() {
    let spec = |text: &str| ok(text).entries.remove(0).spec;
    assert_eq!(
        spec("[j]\nsize=1m\nloops=3\n"),
        "job:name=j,rw=read,bs=4KiB,size=1MiB,engine=psync,loops=3,loop_invalidate=true"
    );
    assert_eq!(
        spec("[j]\nsize=1m\nloops=3\ndirect=1\n"),
        "job:name=j,rw=read,bs=4KiB,size=1MiB,engine=psync,direct=true,loops=3"
    );
    assert_eq!(
        spec("[j]\nsize=1m\nio_limit=3m\nrw=write\n"),
        "job:name=j,rw=write,bs=4KiB,size=1MiB,engine=psync,io_size=3MiB,fallocate=native"
    );
    assert_eq!(
        spec("[j]\nsize=1m\nio_size=1m\nloops=1\n"),
        "job:name=j,rw=read,bs=4KiB,size=1MiB,engine=psync"
    );
    let plan = ok("[j]\nsize=1m\nloops=3\ntime_based\nruntime=1\n");
    assert!(
        !plan.entries[0].spec.contains("loops"),
        "{}",
        plan.entries[0].spec
    );
    assert!(plan
        .run_notes()
        .iter()
        .any(|l| l.contains("loops=3: a time-based job runs for its runtime")));
    let e = issues("[j]\nsize=1m\nloops=0\n", true);
    assert!(e.iter().any(|i| i.fatal && i.option == "loops=0"), "{e:#?}");
}

/// fio's thinktime in microseconds unless a unit is given, its spin within it.
#[test]
fn thinktime_maps_in_microseconds() {
    let spec = |text: &str| ok(text).entries.remove(0).spec;
    assert_eq!(
        spec("[j]\nsize=1m\nthinktime=500\nthinktime_spin=100\nthinktime_blocks=4\n"),
        "job:name=j,rw=read,bs=4KiB,size=1MiB,engine=psync,thinktime=0.0005,\
         thinktime_spin=0.0001,thinktime_blocks=4"
    );
    assert!(spec("[j]\nsize=1m\nthinktime=2ms\n").ends_with(",thinktime=0.002"));
    assert!(!spec("[j]\nsize=1m\nthinktime=0\n").contains("thinktime"));
    let e = issues("[j]\nsize=1m\nthinktime=10\nthinktime_spin=20\n", true);
    assert!(
        e.iter().any(|i| i.fatal && i.option == "thinktime_spin=20"),
        "{e:#?}"
    );
}

#[test]
fn fio_keywords_and_their_arithmetic_are_read_as_fio_reads_them() {
    let s = specs("[j]\nrw=read\nbs=$pagesize\nsize=8*$mb_memory\nnumjobs=$ncpus\n");
    let s = s.join(" ");
    // 8 × 1000 bytes, rounded down to whole 4 KiB blocks as fio moves them.
    assert!(s.contains("bs=4KiB") && s.contains("size=4KiB,"), "{s}");
    assert!(s.contains("numjobs=2"), "{s}");
    // bc cannot read a unit: the option is refused, with its line.
    let e = issues("[j]\nrw=read\nsize=$mb_memory*1m\n", false);
    assert!(e.iter().any(|i| i.at.line == 3 && i.fatal), "{e:#?}");
}

/// fio's `size=N%` (and no size at all) on a file an earlier group made: a share of that
/// file, rounded down to whole blocks of the smallest size; refused for a new file.
#[test]
fn a_size_share_of_a_file_an_earlier_group_made() {
    let text = "[global]\nfilename=t\n[w]\nrw=write\nsize=1m\n[r]\nstonewall\nrw=randread\n\
                size=30%\n[a]\nstonewall\nrw=read\nbs=64k\n";
    let plan = ok(text);
    let got: Vec<&str> = plan.entries.iter().map(|e| e.spec.as_str()).collect();
    assert_eq!(
        got,
        [
            "job:name=w,rw=write,bs=4KiB,size=1MiB,engine=psync,fallocate=native",
            // 30% of 1 MiB is 314,572.8 bytes: 76 whole blocks of 4 KiB, as fio.
            "job:name=r,rw=randread,bs=4KiB,size=304KiB,engine=psync,randommap=true",
            "job:name=a,rw=read,bs=64KiB,size=1MiB,engine=psync",
        ]
    );
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("size=30% of filename=t")),
        "{:?}",
        plan.notes
    );
    for (text, what) in [
        ("[j]\nfilename=new\nsize=30%\n", "size=30%"),
        ("[j]\nfilename=new\n", ""),
        ("[j]\nsize=30%\n", "size=30%"),
        // fio fills the filesystem: no size to lay out.
        (
            "[j]\nfilename=new\nrw=write\nfill_device=1\n",
            "fill_device=1",
        ),
    ] {
        let e = issues(text, true);
        assert!(
            e.iter().any(|i| i.fatal && i.option.starts_with(what)),
            "{text}: {e:#?}"
        );
    }
}

/// `new_group` without `stonewall` changes only fio's report: the jobs run at once, as one
/// entry, with a note.
#[test]
fn new_group_without_stonewall_runs_with_a_note() {
    let plan = ok("[a]\nsize=1m\nrw=randread\n[b]\nnew_group\nsize=1m\nrw=randread\n");
    assert_eq!(plan.entries.len(), 1);
    assert!(
        plan.entries[0].spec.contains("numjobs=2"),
        "{}",
        plan.entries[0].spec
    );
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("new_group: no I/O changes")),
        "{:?}",
        plan.notes
    );
}

/// `--fio-section NAME`: only the job sections named run, with the global options; a name
/// no job section has is refused.
#[test]
fn only_the_sections_named_run() {
    let text = "[global]\nsize=1m\n[a]\nrw=read\n[b]\nstonewall\nrw=write\n[c]\nrw=randread\n";
    let only = |names: &[&str]| {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        parse_only(
            Path::new("/jobs/t.fio"),
            text,
            &mut Mem::default(),
            false,
            Sets::NONE,
            Only {
                names: &names,
                from: "--fio-section",
            },
        )
    };
    let specs = |p: FioPlan| -> Vec<String> { p.entries.into_iter().map(|e| e.spec).collect() };
    assert_eq!(
        specs(only(&["b"]).unwrap()),
        ["job:name=b,rw=write,bs=4KiB,size=1MiB,engine=psync,fallocate=native"]
    );
    // Whole, b and c run at once, two kinds; a, then b, run.
    assert_eq!(specs(only(&[]).unwrap()).len(), 2, "a, then b with c");
    assert_eq!(specs(only(&["a", "b"]).unwrap()).len(), 2, "a, then b");
    let e = only(&["b", "nope"]).unwrap_err();
    assert!(
        e.iter()
            .any(|i| i.fatal && i.option == "nope" && i.at.file == "--fio-section"),
        "{e:#?}"
    );
}
