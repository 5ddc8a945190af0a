//! The fio JSON of synthetic `job` trials on the fixture run: its structure, and figures
//! that follow from the trial's own numbers.

use super::{document, export};
use crate::report::fixture_with;
use crate::result::{OpLatency, PhaseResult, Trial};
use std::collections::BTreeMap;

fn op(name: &str, buckets: Vec<(u64, u64)>) -> OpLatency {
    OpLatency {
        op: name.into(),
        count: buckets.iter().map(|b| b.1).sum(),
        samples: buckets.iter().map(|b| b.1).sum(),
        lat_us: Default::default(),
        buckets,
    }
}

fn trial(target: &str, rep: u32, engine: &str, status: &str) -> Trial {
    let params = BTreeMap::from([
        ("engine".to_string(), engine.to_string()),
        ("bs".to_string(), "4KiB".to_string()),
    ]);
    let mut t = Trial::new(target, "job", "job", params, rep);
    t.status = status.into();
    t.elapsed_s = Some(2.6);
    let layout = PhaseResult {
        name: "layout".into(),
        wall_s: 1.0,
        bytes_written: 999,
        ..Default::default()
    };
    let run = PhaseResult {
        name: "run".into(),
        wall_s: 2.0,
        cpu_user_s: 0.5,
        cpu_sys_s: 1.0,
        bytes_read: 3 * 4096,
        bytes_written: 4096,
        lat_by_op: vec![
            op("read", vec![(1000, 1), (2001, 1), (3003, 1)]),
            op("write", vec![(5007, 1)]),
        ],
        ..Default::default()
    };
    t.phases = vec![layout, run];
    t
}

#[test]
fn one_job_per_finished_trial_from_its_run_phase() {
    let run = fixture_with(vec![
        trial("ext4", 1, "psync", "ok"),
        trial("ext4", 2, "psync", "failed"),
        trial("tmpfs", 1, "io_uring", "ok"),
        trial("xfs", 1, "libaio", "ok"),
    ]);
    let v = document(&run).unwrap();
    assert_eq!(v["fio version"], "fsarena-0.1.0");
    assert_eq!(v["timestamp"], 1_795_401_271_i64, "2026-11-23T02:34:31Z");
    assert_eq!(v["time"], "Mon Nov 23 02:34:31 2026");
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3, "the failed trial is left out");
    let j = &jobs[0];
    assert_eq!(j["jobname"], "ext4 rep 1: job");
    assert_eq!(jobs[1]["jobname"], "tmpfs rep 1: job");
    assert_eq!(jobs[1]["groupid"], 1);
    assert_eq!(j["job options"]["bs"], "4KiB");
    assert_eq!(j["usr_cpu"], 25.0);
    assert_eq!(j["sys_cpu"], 50.0);
    assert!(j.get("ctx").is_none() && j.get("majf").is_none(), "not measured");

    let r = &j["read"];
    assert_eq!(r["io_bytes"], 12288);
    assert_eq!(r["io_kbytes"], 12);
    assert_eq!(r["bw_bytes"], 6144);
    assert_eq!(r["bw"], 6);
    assert_eq!(r["iops"], 1.5);
    assert_eq!(r["runtime"], 2000);
    assert_eq!(r["total_ios"], 3);
    let clat = &r["clat_ns"];
    assert_eq!(clat, &r["lat_ns"], "psync: clat is the timed call");
    assert_eq!(clat["N"], 3);
    assert_eq!(clat["min"], 1000);
    assert_eq!(clat["max"], 3003);
    assert_eq!(clat["mean"], 2001.3333333333333);
    let sd = clat["stddev"].as_f64().unwrap();
    assert!((sd - 1001.5004).abs() < 1e-3, "sample stddev: {sd}");
    assert_eq!(clat["bins"]["2001"], 1);
    assert_eq!(clat["bins"].as_object().unwrap().len(), 3);
    let pct = clat["percentile"].as_object().unwrap();
    assert_eq!(pct.len(), 17);
    assert_eq!(pct["99.000000"], 3003);
    assert_eq!(pct["1.000000"], 1000);
    assert!(r.get("slat_ns").is_none());

    assert_eq!(j["write"]["total_ios"], 1);
    assert_eq!(j["write"]["io_bytes"], 4096, "run phase only, not layout");
    let trim = &j["trim"];
    assert_eq!(trim["total_ios"], 0);
    assert_eq!(trim["runtime"], 0);
    assert_eq!(trim["lat_ns"]["N"], 0);
    assert!(trim["lat_ns"].get("bins").is_none(), "no empty bins");

    let uring = &jobs[1]["read"];
    assert!(uring.get("clat_ns").is_none(), "io_uring: only lat is timed");
    assert_eq!(uring["lat_ns"]["N"], 3);
    let aio = &jobs[2]["read"];
    assert!(aio.get("clat_ns").is_none(), "libaio: only lat is timed");
    // Kinds of one trial (`with`) whose engines differ: lat only, the histogram mixes
    // them; all synchronous: clat too.
    for (with, clat) in [("rw=write,engine=libaio,iodepth=8", false), ("rw=write", true)] {
        let mut t = trial("ext4", 1, "psync", "ok");
        t.params.insert("with".into(), with.into());
        let v = document(&fixture_with(vec![t])).unwrap();
        assert_eq!(v["jobs"][0]["read"].get("clat_ns").is_some(), clat, "{with}");
    }
    assert_eq!(aio["lat_ns"]["N"], 3);
}

#[test]
fn a_run_without_job_trials_is_refused() {
    let run = fixture_with(vec![trial("ext4", 1, "psync", "failed")]);
    let e = document(&run).unwrap_err().to_string();
    assert!(e.contains("no finished job trial"), "{e}");
}

#[test]
fn export_is_json_ending_with_a_newline() {
    let bytes = export(&fixture_with(vec![trial("ext4", 1, "null", "ok")])).unwrap();
    assert_eq!(bytes.last(), Some(&b'\n'));
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["jobs"][0]["read"]["clat_ns"]["N"], 3);
}
