use super::*;

fn spec(text: &str) -> WorkloadSpec {
    WorkloadSpec::parse(text).unwrap()
}

/// Stored phases of `text` on `target`: (phase, seconds).
fn stored(text: &str, target: &str, phases: &[(&str, f64)]) -> Vec<PhaseTime> {
    let s = spec(text);
    phases
        .iter()
        .map(|(p, w)| PhaseTime {
            target: target.into(),
            workload: s.info.name.into(),
            params: s.params.to_text_map(),
            phase: p.to_string(),
            wall_s: *w,
        })
        .collect()
}

fn targets(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_fastest_target_s_shortest_phase_sets_the_new_value() {
    let mut times = stored(
        "smallfiles:files=1000",
        "ext4",
        &[("create", 0.2), ("stat", 0.05)],
    );
    times.extend(stored(
        "smallfiles:files=1000",
        "tmpfs",
        &[("create", 0.02), ("stat", 0.004)],
    ));
    let s = scale(
        &spec("smallfiles:files=2000"),
        &targets(&["ext4", "tmpfs"]),
        &times,
        0.1,
        None,
    );
    // tmpfs stat: 4 µs a file, so 0.1 s needs 25,000 files.
    let got = s.spec.expect("scaled");
    assert_eq!(got.params.count("files"), Some(25_000));
    assert!(got.text.starts_with("smallfiles:"), "{}", got.text);
    assert!(
        s.lines[0].contains("files 2000 → 25000 (stat on tmpfs took 8.00\u{a0}ms at 2000)"),
        "{:?}",
        s.lines
    );
    // Only the run's targets count: without tmpfs, ext4's stat (50 µs a file) decides.
    let s = scale(
        &spec("smallfiles:files=2000"),
        &targets(&["ext4"]),
        &times,
        0.1,
        None,
    );
    assert!(s.spec.is_none(), "0.1 s already");
    assert!(
        s.lines[0].contains("files kept at 2000 (stat on ext4 took 100\u{a0}ms at 2000)"),
        "{:?}",
        s.lines
    );
}

#[test]
fn a_parameter_is_raised_only_and_at_most_a_hundredfold() {
    let times = stored("bonnie-files:files=4", "tmpfs", &[("seq_stat", 0.0001)]);
    let s = scale(
        &spec("bonnie-files:files=4"),
        &targets(&["tmpfs"]),
        &times,
        1.0,
        None,
    );
    assert_eq!(s.spec.unwrap().params.count("files"), Some(400));
    assert!(s.lines[0].ends_with("; capped at 100×)"), "{:?}", s.lines);
    let s = scale(
        &spec("bonnie-files:files=4"),
        &targets(&["tmpfs"]),
        &times,
        0.000_01,
        None,
    );
    assert!(s.spec.is_none());
    assert!(s.lines[0].contains("files kept at 4"), "{:?}", s.lines);
}

#[test]
fn each_parameter_answers_for_its_own_phases_and_other_parameters_must_match() {
    let times = stored(
        "postmark:number=1000,transactions=5000",
        "ext4",
        &[("create", 0.05), ("transactions", 0.5), ("delete", 0.01)],
    );
    let s = scale(
        &spec("postmark:number=1000,transactions=5000"),
        &targets(&["ext4"]),
        &times,
        0.5,
        None,
    );
    let got = s.spec.unwrap();
    // delete: 10 µs a file → 50,000 files; transactions already take 0.5 s.
    assert_eq!(got.params.count("number"), Some(50_000));
    assert_eq!(got.params.count("transactions"), Some(5000));
    // Different other parameters: no calibration, said so.
    let s = scale(
        &spec("postmark:number=1000,transactions=5000,read_block=4096"),
        &targets(&["ext4"]),
        &times,
        0.5,
        None,
    );
    assert!(s.spec.is_none());
    assert!(
        s.lines.iter().all(|l| l.contains("no stored trial")),
        "{:?}",
        s.lines
    );
}

#[test]
fn fractional_scales_stay_fractional_and_unscalable_workloads_are_named() {
    let times = stored(
        "metascan:scale=0.05",
        "xfs",
        &[("find_1", 0.01), ("du_1", 0.02)],
    );
    let s = scale(
        &spec("metascan:scale=0.05"),
        &targets(&["xfs"]),
        &times,
        0.1,
        None,
    );
    let got = s.spec.unwrap();
    assert_eq!(got.params.float("scale"), Some(0.5));
    let s = scale(&spec("space"), &targets(&["xfs"]), &times, 0.1, None);
    assert!(s.spec.is_none());
    assert!(
        s.lines[0].contains("no parameter scales its work"),
        "{:?}",
        s.lines
    );
}

#[test]
fn two_significant_digits_rounded_up() {
    assert_eq!(round_up_2(12_345.0), 13_000.0);
    assert_eq!(round_up_2(25_000.0), 25_000.0);
    assert!((round_up_2(0.123) - 0.13).abs() < 1e-12);
    assert_eq!(as_text(0.13, false), "0.13");
    assert_eq!(as_text(25_000.0, true), "25000");
}

#[test]
fn files_are_raised_no_further_than_the_smallest_ext4_holds() {
    let times = stored("smallfiles:files=2000", "tmpfs", &[("stat", 0.003)]);
    // 1 GiB of ext4: 65,536 inodes; 90% of them at 1.1 entries a file is 53,620 files.
    let loop_ext4 = crate::provision::TargetSpec::Loop {
        fs: crate::provision::fs::FsType::parse("ext4").unwrap(),
        mkfs_opts: Vec::new(),
        mount_opts: String::new(),
        size_bytes: 1 << 30,
    };
    let inodes = inodes_of(&loop_ext4);
    assert_eq!(inodes, Some(65_536.0));
    let s = scale(
        &spec("smallfiles:files=2000"),
        &targets(&["tmpfs"]),
        &times,
        0.2,
        inodes,
    );
    assert_eq!(s.spec.unwrap().params.count("files"), Some(53_000));
    assert!(
        s.lines[0].contains("capped to fit the smallest target's 65536 inodes"),
        "{:?}",
        s.lines
    );
    // Options that set the inode count, and filesystems that make inodes as they go: no cap.
    let with_n = crate::provision::TargetSpec::Loop {
        fs: crate::provision::fs::FsType::parse("ext4").unwrap(),
        mkfs_opts: vec!["-N".into(), "2000000".into()],
        mount_opts: String::new(),
        size_bytes: 1 << 30,
    };
    assert_eq!(inodes_of(&with_n), None);
    let xfs = crate::provision::TargetSpec::Loop {
        fs: crate::provision::fs::FsType::parse("xfs").unwrap(),
        mkfs_opts: Vec::new(),
        mount_opts: String::new(),
        size_bytes: 1 << 30,
    };
    assert_eq!(inodes_of(&xfs), None);
    // Parameters that keep no files are not capped.
    let t = stored(
        "postmark:number=1000,transactions=1000",
        "tmpfs",
        &[("transactions", 0.01)],
    );
    let s = scale(
        &spec("postmark:number=1000,transactions=1000"),
        &targets(&["tmpfs"]),
        &t,
        0.5,
        Some(100.0),
    );
    assert_eq!(s.spec.unwrap().params.count("transactions"), Some(50_000));
}
