use super::*;
use crate::result::{DeviceProbe, RunResult, TargetInfo};

fn work(reads: f64, writes: f64, read_bytes: f64, write_bytes: f64) -> Work {
    Work {
        read_ios: reads,
        write_ios: writes,
        read_bytes,
        write_bytes,
        flushes: 0.0,
        read_merges: 0.0,
        write_merges: 0.0,
        cpu_s: 0.0,
        workers: 1.0,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn random_reads_cost_their_service_time_one_after_another() {
    let hdd = find("hdd").unwrap();
    // 100 random 4 KiB reads, one worker: 100 × (8.2 ms seek + 4.17 ms rotation).
    let p = predict(&work(100.0, 0.0, 409_600.0, 0.0), &hdd, 2);
    assert!(close(p.total_s(), 100.0 * 12.37e-3), "{p:?}");
    // Two workers cannot overlap them on one head.
    let mut two = work(100.0, 0.0, 409_600.0, 0.0);
    two.workers = 2.0;
    assert!(close(predict(&two, &hdd, 2).total_s(), p.total_s()));
    // On a device serving several at once, two workers halve the time.
    let ssd = find("sata-ssd").unwrap();
    let one = predict(&work(100.0, 0.0, 409_600.0, 0.0), &ssd, 2).total_s();
    assert!(close(predict(&two, &ssd, 2).total_s(), one / 2.0));
}

#[test]
fn a_large_request_streams_past_its_first_4_kib() {
    let ssd = find("sata-ssd").unwrap();
    let mib = 1048576.0;
    let p = predict(&work(1.0, 0.0, mib, 0.0), &ssd, 1);
    let want = 76.9e-6 + (mib - 4096.0) / 560e6;
    assert!(close(p.service_s, want), "{} vs {want}", p.service_s);
    // Never faster than the sequential rate, however many requests overlap.
    let p = predict(&work(0.0, 1000.0, 0.0, 1000.0 * mib), &ssd, 1);
    assert!(p.service_s >= 1000.0 * mib / 530e6 * (1.0 - 1e-12), "{p:?}");
}

#[test]
fn flushes_and_cpu_add_to_the_device_time() {
    let nvme = find("nvme").unwrap();
    let mut w = work(0.0, 0.0, 0.0, 0.0);
    w.flushes = 1000.0;
    w.cpu_s = 3.0;
    w.workers = 4.0;
    let p = predict(&w, &nvme, 2);
    // CPU seconds spread over the two cores the four workers share.
    assert!(close(p.cpu_s, 1.5));
    assert!(close(p.service_s, 1000.0 * nvme.flush_us * 1e-6));
    assert!(close(p.total_s(), 1.5 + p.service_s));
}

#[test]
fn a_cloud_cap_bounds_requests_and_bytes_together() {
    let cloud = find("cloud-3000").unwrap();
    // 6000 small random reads from 8 workers: 2 s at 3000 IOPS, more than their 1 ms
    // each, 8 at a time. From one worker, the 1 ms each decides (6 s).
    let mut w = work(6000.0, 0.0, 6000.0 * 4096.0, 0.0);
    w.workers = 8.0;
    let p = predict(&w, &cloud, 2);
    assert!(
        p.capped() && close(p.cap_s, 2.0) && close(p.total_s(), 2.0),
        "{p:?}"
    );
    w.workers = 1.0;
    let p = predict(&w, &cloud, 2);
    assert!(!p.capped() && close(p.total_s(), 6.0), "{p:?}");
    // Reads and writes share the cap: 3000 of each take 2 s as well.
    let p = predict(
        &work(3000.0, 3000.0, 3000.0 * 4096.0, 3000.0 * 4096.0),
        &cloud,
        2,
    );
    assert!(close(p.cap_s, 2.0), "{p:?}");
    // A 1 MiB request counts as four 256 KiB I/Os (seen with the bandwidth cap lifted).
    let mut cap = cloud.cap.clone().unwrap();
    cap.mb_per_s = 1e9;
    let w = work(0.0, 1.0, 0.0, 1048576.0);
    assert!(close(super::cap_time(&w, &cap), 4.0 / 3000.0));
    // 262.144 MB at 131.072 MB/s: 2 s, whatever the requests.
    let p = predict(&work(0.0, 1.0, 0.0, 262_144_000.0), &cloud, 2);
    assert!(close(p.cap_s, 2.0), "{p:?}");
}

#[test]
fn a_throttle_per_direction_gives_reads_and_writes_each_the_cap() {
    let mut cap = find("cloud-3000").unwrap().cap.unwrap();
    cap.per_direction = true;
    // Each direction's budget is its own, but a phase's reads and writes are taken one
    // after the other: 3000 of each, 1 s each.
    let w = work(3000.0, 3000.0, 3000.0 * 4096.0, 3000.0 * 4096.0);
    assert!(close(super::cap_time(&w, &cap), 2.0));
    let w = work(3000.0, 0.0, 3000.0 * 4096.0, 0.0);
    assert!(close(super::cap_time(&w, &cap), 1.0));
    // A flush is one more write I/O.
    let mut f = work(0.0, 2999.0, 0.0, 2999.0 * 4096.0);
    f.flushes = 1.0;
    assert!(close(super::cap_time(&f, &cap), 1.0));
    // A throttle above the block layer's merging counts every request sent: 30 merged
    // writes that were 3000 take a second under it, 10 ms under a cap that counts merged.
    let mut m = work(0.0, 30.0, 0.0, 3000.0 * 4096.0);
    m.write_merges = 2970.0;
    (cap.mb_per_s, cap.io_unit_bytes) = (1e9, 1 << 40);
    assert!(close(super::cap_time(&m, &cap), 0.01));
    cap.before_merge = true;
    assert!(close(super::cap_time(&m, &cap), 1.0));
}

#[test]
fn more_work_never_predicts_less_time() {
    for p in shipped() {
        let base = work(100.0, 200.0, 1e6, 4e6);
        let t = predict(&base, &p, 2).total_s();
        for more in [
            work(101.0, 200.0, 1e6, 4e6),
            work(100.0, 201.0, 1e6, 4e6),
            work(100.0, 200.0, 2e6, 4e6),
            work(100.0, 200.0, 1e6, 5e6),
        ] {
            assert!(predict(&more, &p, 2).total_s() >= t, "{}", p.name);
        }
    }
}

#[test]
fn shipped_profiles_have_every_figure_and_a_source() {
    let names: Vec<String> = shipped().into_iter().map(|p| p.name).collect();
    assert_eq!(names, ["nvme", "sata-ssd", "hdd", "cloud-3000"]);
    for p in shipped() {
        for v in [
            p.read_4k_us,
            p.write_4k_us,
            p.flush_us,
            p.read_mb_per_s,
            p.write_mb_per_s,
            p.parallelism,
        ] {
            assert!(v.is_finite() && v > 0.0, "{}", p.name);
        }
        assert!(!p.source.is_empty() && p.about.contains("typical") || p.cap.is_some());
    }
    // The slower class is slower at everything a request costs.
    let (nvme, hdd) = (find("nvme").unwrap(), find("hdd").unwrap());
    assert!(nvme.read_4k_us < hdd.read_4k_us && nvme.read_mb_per_s > hdd.read_mb_per_s);
}

#[test]
fn unknown_profiles_are_refused_and_files_are_read() {
    assert!(check(&["nvme".into(), MEASURED.into()]).is_ok());
    let e = check(&["ssd".into()]).unwrap_err();
    assert!(e.contains("'ssd'") && e.contains("cloud-3000"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.json");
    let mut mine = find("sata-ssd").unwrap();
    mine.name = "mine".into();
    std::fs::write(&path, serde_json::to_string(&mine).unwrap()).unwrap();
    let spec = path.to_str().unwrap().to_string();
    assert_eq!(resolve(&spec).unwrap(), mine);
    mine.parallelism = 0.0;
    std::fs::write(&path, serde_json::to_string(&mine).unwrap()).unwrap();
    assert!(check(&[spec]).unwrap_err().contains("above 0"));
}

/// A run of targets `a` (probed), `b` (not probed) and `mem` (no device) with one phase
/// each: `a` writes twice the requests of `b`.
fn run() -> RunResult {
    let mut r: RunResult =
        serde_json::from_str(include_str!("../../tests/fixtures/run.json")).unwrap();
    let template = r.trials[0].clone();
    r.trials.clear();
    let probe = DeviceProbe {
        read_4k_us: 100.0,
        write_4k_us: 100.0,
        flush_us: 1000.0,
        read_4k_parallel_iops: 10_000.0,
        parallel_readers: 4,
        seq_read_mb_per_s: 500.0,
        seq_write_mb_per_s: 500.0,
        samples: 200,
        probe_s: 0.5,
    };
    r.targets = vec![
        TargetInfo {
            name: "a".into(),
            device_probe: Some(probe),
            ..Default::default()
        },
        TargetInfo {
            name: "b".into(),
            ..Default::default()
        },
        TargetInfo {
            name: "mem".into(),
            work_unmeasured: Some("a memory filesystem: no device".into()),
            ..Default::default()
        },
    ];
    for (target, writes) in [("a", 2000u64), ("b", 1000), ("mem", 0)] {
        for rep in 1..=3u64 {
            let mut t = template.clone();
            t.target = target.into();
            t.label = "smallfiles".into();
            t.rep = rep as u32;
            let mut p = t.phases[0].clone();
            p.name = "create".into();
            p.primary = "ops_per_s".into();
            p.ops_unit = "files/s".into();
            p.ops = 1000;
            p.wall_s = 1.0;
            p.ops_per_s = 1000.0;
            p.workers = 1;
            p.cpu_user_s = 0.1;
            p.cpu_sys_s = 0.1;
            let dev = |v: u64| (target != "mem").then_some(v);
            p.dev_write_ios = dev(writes + rep);
            p.dev_write_bytes = dev((writes + rep) * 4096);
            p.dev_read_ios = dev(0);
            p.dev_read_bytes = dev(0);
            p.dev_flushes = dev(10);
            t.phases = vec![p];
            r.trials.push(t);
        }
    }
    r
}

#[test]
fn predictions_rank_best_first_and_say_what_they_could_not_price() {
    let mut r = run();
    assert!(predictions(&r).is_none(), "no --price-on, no predictions");
    r.policy.price_on = vec!["hdd".into(), MEASURED.into()];
    let p = predictions(&r).unwrap();
    assert_eq!(p.priced_on, ["hdd", MEASURED]);
    let hdd: Vec<&PricedPhase> = p.phases.iter().filter(|x| x.profile == "hdd").collect();
    // b writes half the requests of a: predicted faster, first.
    assert_eq!(
        hdd.iter()
            .map(|x| (x.target.as_str(), x.rank))
            .collect::<Vec<_>>(),
        [("b", 1), ("a", 2)]
    );
    // Three repetitions, their work differing by one request: a range, median in it.
    let b = hdd[0];
    assert_eq!(b.reps, 3);
    assert!(b.predicted_s.min < b.predicted_s.median && b.predicted_s.median < b.predicted_s.max);
    // The headline follows the time: 1000 files in the predicted seconds.
    assert!(close(b.predicted.median, 1000.0 / b.predicted_s.median));
    let want = 0.2 + (1002.0 * 12.37e-3 + 10.0 * 4.17e-3);
    assert!(
        close(b.predicted_s.median, want),
        "{} vs {want}",
        b.predicted_s.median
    );
    // `measured` prices only the probed target; the memory one nowhere.
    assert_eq!(p.measured.keys().collect::<Vec<_>>(), ["a"]);
    assert!(p.phases.iter().all(|x| x.target != "mem"));
    assert!(
        p.unpriced.iter().any(|w| w.starts_with("b on measured: ")),
        "{:?}",
        p.unpriced
    );
    assert!(p
        .unpriced
        .iter()
        .any(|w| w.starts_with("mem on hdd: its device work is not measured")));
    // The JSON keeps them in their own section.
    let doc: serde_json::Value =
        serde_json::from_slice(&crate::report::json::export(&r).unwrap()).unwrap();
    assert_eq!(doc["predictions"]["phases"][0]["profile"], "hdd");
    assert!(doc["predictions"]["note"]
        .as_str()
        .unwrap()
        .contains("not measurements"));
}

#[test]
fn the_terminal_block_fits_80_columns_and_is_labelled() {
    let mut r = run();
    r.policy.price_on = vec!["nvme".into(), "cloud-3000".into(), MEASURED.into()];
    let text = render_width(&r, 80);
    assert!(text.starts_with("Predicted, not measured:"), "{text}");
    for line in text.lines() {
        assert!(crate::term::cols(line) <= 80, "{line}");
    }
    assert!(text.contains("On cloud-3000:") && text.contains("not priced: mem on nvme"));
    r.policy.price_on.clear();
    assert_eq!(render_width(&r, 80), "");
}
