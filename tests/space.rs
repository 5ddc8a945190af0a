//! End-to-end runs of the `space` workload on tmpfs and an ext4 loop image, and its real
//! effect: on btrfs with `compress=zstd`, zeros are stored more efficiently than random
//! data (the seed comment's point that compressing filesystems look fast on zeros).

mod common;

use common::phase;
use serde_json::Value;

/// Runs `space` at a small scale on `fs` with `--data data` (and `extra` arguments);
/// returns the `store` phase of the one trial and the target, or `None` (SKIP) when `fs`
/// cannot be made here.
fn store(test: &str, fs: &str, size: &str, data: &str, extra: &[&str]) -> Option<(Value, Value)> {
    let mut args = vec!["space:scale=0.02", "--data", data];
    args.extend(extra);
    let (dir, v, table) = common::run_once_on(test, &args, fs, size)?;
    assert!(table.contains("store: efficiency"), "{table}");
    let t = common::ok_trial(&v, 0);
    common::assert_clean(dir.path());
    Some((phase(t, "store").clone(), v["targets"][0].clone()))
}

fn figure(p: &Value, name: &str) -> f64 {
    p["extra"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no {name} in {p}"))
}

/// Three copies of the corpus, every figure present and consistent, and no room saved
/// where nothing compresses.
fn check_uncompressed(fs: &str, size: &str) {
    let Some((p, _)) = store(&format!("space_{fs}"), fs, size, "random", &[]) else {
        return;
    };
    let one = |seed| {
        fsarena::corpus::Corpus::new("source-tree", 0.02, seed)
            .unwrap()
            .totals()
            .bytes
    };
    let logical = (one(42) + one(43) + one(44)) as f64;
    assert_eq!(figure(&p, "logical_bytes"), logical);
    assert_eq!(p["bytes_written"].as_f64().unwrap(), logical);
    let statfs = figure(&p, "used_statfs_bytes");
    let blocks = figure(&p, "used_blocks_bytes");
    // Random data in mostly small files: block rounding costs room, nothing saves it.
    assert!(statfs >= logical && blocks >= logical, "{p}");
    let eff = figure(&p, "efficiency");
    assert!((eff - logical / statfs).abs() < 1e-9);
    assert!(eff > 0.5 && eff < 1.0, "{eff}");
    assert!(figure(&p, "blocks_efficiency") < 1.0);
}

#[test]
fn space_on_tmpfs() {
    check_uncompressed("tmpfs", "256MiB");
}

#[test]
fn space_on_ext4() {
    check_uncompressed("ext4", "256MiB");
}

/// On btrfs with zstd compression, zeros take far less room than random data; the statfs
/// figure shows it (st_blocks counts uncompressed bytes on btrfs).
#[test]
fn space_btrfs_zstd_zeros_beat_random() {
    let test = "space_btrfs_zstd_zeros_beat_random";
    let opt = ["--mount-opt", "btrfs=compress=zstd"];
    let Some((zeros, target)) = store(test, "btrfs", "256MiB", "zeros", &opt) else {
        return;
    };
    let mount_opts = target["mount_opts"].as_str().unwrap();
    assert!(mount_opts.contains("compress=zstd"), "{mount_opts}");
    let (random, _) = store(test, "btrfs", "256MiB", "random", &opt).expect("btrfs ran once");
    let (ez, er) = (figure(&zeros, "efficiency"), figure(&random, "efficiency"));
    assert!(ez > 1.5 && ez > 2.0 * er, "zeros {ez}, random {er}");
    assert!(er < 1.0, "random data does not compress: {er}");
}
