//! Unit tests of `report::bonnie_csv`.

use super::*;
use crate::probe::hist::Percentiles;
use crate::report::fixture_with as run;

fn phase(name: &str, wall_s: f64, bytes: u64, ops_per_s: f64, max_us: f64) -> PhaseResult {
    PhaseResult {
        name: name.into(),
        wall_s,
        bytes,
        ops_per_s,
        cpu_pct: 42.9,
        lat_us: Some(Percentiles {
            max: max_us,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn trial(target: &str, workload: &str, rep: u32, status: &str) -> Trial {
    let (params, phases): (&[(&str, &str)], Vec<PhaseResult>) = if workload == IO_WORKLOAD {
        (
            &[
                ("size", "33MiB"),
                ("chunk", "8KiB"),
                ("seeks", "8192"),
                ("seekers", "3"),
                ("procs", "1"),
            ],
            vec![
                phase("write_block", 2.0, 32 << 20, 0.0, 1500.0),
                phase("seeks", 0.5, 0, 999.96, 150_000.0),
            ],
        )
    } else {
        (
            &[
                ("files", "2"),
                ("max_size", "0B"),
                ("min_size", "0B"),
                ("dirs", "0"),
                ("chunk", "8KiB"),
                ("procs", "1"),
            ],
            vec![phase("rand_stat", 0.01, 0, 12345.9, 0.4)],
        )
    };
    Trial {
        target: target.into(),
        workload: workload.into(),
        label: workload.into(),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        rep,
        status: status.into(),
        error: None,
        provision: Default::default(),
        phases,
        peak_rss_bytes: 0,
        log: None,
        elapsed_s: None,
        ranks: Vec::new(),
        disturbance: None,
        engine: None,
    }
}

#[test]
fn sizes_and_chunks_as_bonnie_prints_them() {
    assert_eq!(size_text(300 << 20), "300M");
    assert_eq!(size_text(2 << 30), "2G");
    assert_eq!(size_text(1536 << 20), "1536M");
    assert_eq!(size_text(0), "0M");
    assert_eq!(size_text(999_424), "976K");
    assert_eq!(size_text(1000), "1000B");
    assert_eq!(chunk_text(8192), "8k");
    assert_eq!(chunk_text(256), "256");
    assert_eq!(chunk_text(1 << 20), "1m");
    assert_eq!(chunk_text(1536), "1536");
}

#[test]
fn latencies_with_units_as_bonnie_prints_them() {
    assert_eq!(latency_text(84.9), "84us");
    assert_eq!(latency_text(99_999.0), "99999us");
    assert_eq!(latency_text(100_000.0), "100ms");
    assert_eq!(latency_text(17_514.495), "17514us");
    assert_eq!(latency_text(148_635.647), "148ms");
    assert_eq!(latency_text(99_999_999.0), "99999ms");
    assert_eq!(latency_text(120_500_000.0), "120s");
    assert_eq!(latency_text(0.0), "");
    assert_eq!(latency_text(f64::NAN), "");
}

#[test]
fn rates_truncate_like_bonnie() {
    assert_eq!(seeks_text(10256.566), "10257");
    assert_eq!(seeks_text(999.96), "1000.0");
    assert_eq!(seeks_text(87.25), "87.2");
    let p = phase("write_block", 0.132738806, 33554432, 0.0, 1.0);
    // 33554432 / 1024 / 0.132738806 = 246860.3…
    assert_eq!(kib_per_s_text(&p), "246860");
    assert_eq!(cpu_text(&p), "42");
    assert_eq!(kib_per_s_text(&phase("x", 0.0, 1, 0.0, 1.0)), "");
    assert_eq!(field_text("a,b\nc", 100), "a_b_c");
    assert_eq!(field_text("abcdef", 3), "abc");
}

#[test]
fn latency_is_the_slowest_timed_operation_but_not_the_sync() {
    use crate::result::OpLatency;
    let op = |name: &str, max: f64| OpLatency {
        op: name.into(),
        count: 0,
        samples: 0,
        lat_us: Percentiles {
            max,
            ..Default::default()
        },
        buckets: vec![],
    };
    let mut p = phase("seeks", 1.0, 0, 1.0, 12.0);
    assert_eq!(max_latency_us(&p), Some(12.0));
    p.lat_by_op = vec![op("seek", 12.0), op("write", 630.0), op("fsync", 75000.0)];
    assert_eq!(max_latency_us(&p), Some(630.0));
    p.lat_us = None;
    p.lat_by_op.clear();
    assert_eq!(max_latency_us(&p), None);
}

#[test]
fn workload_phases_come_in_bonnies_column_order() {
    assert_eq!(
        io_phases().collect::<Vec<_>>(),
        [
            "write_char",
            "write_block",
            "rewrite",
            "read_char",
            "read_block",
            "seeks"
        ]
    );
    assert_eq!(
        file_phases().collect::<Vec<_>>(),
        [
            "seq_create",
            "seq_stat",
            "seq_delete",
            "rand_create",
            "rand_stat",
            "rand_delete"
        ]
    );
}

#[test]
fn one_line_has_fifty_fields_in_bonnie_order() {
    let r = run(vec![
        trial("ext4", IO_WORKLOAD, 1, "ok"),
        trial("ext4", FILE_WORKLOAD, 1, "ok"),
    ]);
    let pairs = pair(&r);
    assert_eq!(pairs.len(), 1);
    let f = fields(&r, &pairs[0]);
    assert_eq!(f.len(), FIELDS);
    assert_eq!(
        &f[..9],
        [
            "1.98",
            "fsarena-0.1.0",
            "ext4",
            "1",
            "42",
            "33M",
            "8k",
            "8192",
            "3"
        ]
    );
    // putc not run: empty, never "+++++".
    assert_eq!((f[9].as_str(), f[10].as_str()), ("", ""));
    assert_eq!((f[11].as_str(), f[12].as_str()), ("16384", "42"));
    assert_eq!((f[19].as_str(), f[20].as_str()), ("1000.0", "42"));
    assert_eq!(&f[21..26], ["2", "", "", "", "8k"]);
    // rand_stat is the fifth file test: fields 34 and 35, latency 48.
    assert_eq!((f[34].as_str(), f[35].as_str()), ("12345", "42"));
    assert_eq!(f[39], "1500us");
    assert_eq!(f[43], "150ms");
    assert_eq!(f[48], "0us");
    assert!(f.iter().all(|x| !x.contains(',') && !x.contains('+')));
}

#[test]
fn pairs_by_target_and_repetition() {
    let r = run(vec![
        trial("ext4", IO_WORKLOAD, 1, "ok"),
        trial("ext4", FILE_WORKLOAD, 1, "ok"),
        trial("tmpfs", FILE_WORKLOAD, 1, "ok"),
        trial("ext4", IO_WORKLOAD, 2, "ok"),
        trial("ext4", FILE_WORKLOAD, 2, "failed"),
        trial("tmpfs", IO_WORKLOAD, 1, "ok"),
        trial("tmpfs", IO_WORKLOAD, 1, "ok"),
        trial("xfs", "postmark", 1, "ok"),
    ]);
    let got: Vec<_> = pair(&r)
        .iter()
        .map(|p| (p.target, p.rep, p.io.is_some(), p.files.is_some()))
        .collect();
    assert_eq!(
        got,
        [
            ("ext4", 1, true, true),
            ("ext4", 2, true, false),
            ("tmpfs", 1, true, true),
            ("tmpfs", 1, true, false),
        ]
    );
    let text = String::from_utf8(export(&r).unwrap()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    // Only the I/O tests: the file-test fields are empty.
    let only_io: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(only_io.len(), FIELDS);
    assert!(only_io[21..38].iter().all(|x| x.is_empty()));
    assert!(only_io[44..].iter().all(|x| x.is_empty()));
}

#[test]
fn runs_without_bonnie_are_an_error() {
    let r = run(vec![trial("ext4", "postmark", 1, "ok")]);
    let e = export(&r).unwrap_err().to_string();
    assert!(e.contains("no bonnie or bonnie-files trials"), "{e}");
    assert!(e.contains("postmark"), "{e}");
    let r = run(vec![trial("ext4", IO_WORKLOAD, 1, "failed")]);
    let e = export(&r).unwrap_err().to_string();
    assert!(e.contains("finished"), "{e}");
}
