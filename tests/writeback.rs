//! End-to-end runs of the `writeback` workload on tmpfs and an ext4 loop image, with a
//! small `size=` (the default, twice the dirty limit, is several GiB on a large machine).

mod common;

use common::phase;

fn check(fs: &str) {
    let args = ["writeback:size=256MiB,probe_ms=5,probe_files=400"];
    let Some((dir, v, table)) =
        common::run_once_on(&format!("writeback_{fs}"), &args, fs, "512MiB")
    else {
        return;
    };
    let t = common::ok_trial(&v, 0);
    assert!(t.get("log").is_none(), "writeback keeps no log: {t}");
    let p = phase(t, "write");
    assert_eq!(p["workers"], 2);
    assert_eq!(p["bytes_written"], 256u64 << 20);
    let count = |op: &str| {
        p["lat_by_op"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["op"] == op)
            .map_or(0, |o| o["count"].as_u64().unwrap())
    };
    assert_eq!(count("write"), 256, "1 MiB chunks");
    for op in ["stat", "read", "create"] {
        assert!(count(op) > 0, "no {op} probes: {p}");
        let max = p["lat_by_op"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["op"] == op)
            .unwrap()["lat_us"]["max"]
            .as_f64()
            .unwrap();
        assert!(max > 0.0);
    }
    assert_eq!(count("stat"), count("read"));
    assert_eq!(
        count("create") as f64,
        p["extra"]["probe_rounds"].as_f64().unwrap()
    );
    let x = &p["extra"];
    for k in [
        "dirty_ratio_pct",
        "dirty_background_ratio_pct",
        "dirty_bytes",
        "dirty_expire_centisecs",
        "dirty_limit_bytes",
        "kernel_dirty_threshold_bytes",
        "probe_stat_max_s",
        "writer_mb_per_s",
    ] {
        assert!(x[k].is_number(), "extra {k} missing: {x}");
    }
    let ratio = std::fs::read_to_string("/proc/sys/vm/dirty_ratio").unwrap();
    assert_eq!(
        x["dirty_ratio_pct"].as_f64().unwrap(),
        ratio.trim().parse::<f64>().unwrap()
    );
    let series: u64 = p["series"]["bytes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap())
        .sum();
    assert_eq!(series, 256 << 20, "the series holds the writer's bytes");
    assert!(table.contains("probe_create_max_s"), "{table}");
    common::assert_clean(dir.path());
}

#[test]
fn writeback_on_tmpfs() {
    check("tmpfs");
}

#[test]
fn writeback_on_ext4() {
    check("ext4");
}
