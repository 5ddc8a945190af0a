//! End-to-end runs of `postmark` on tmpfs and an ext4 loop image at small scale.

mod common;

use common::phase;

fn check(fs: &str, size: &str) {
    let test = format!("postmark_{fs}");
    if common::skip_without_loop(&test) || !common::fs_available_or_tmpfs(&test, fs) {
        return;
    }
    let dir = common::image_dir();
    let (v, table) = common::run_json(
        &[
            "postmark:number=300,transactions=1000,subdirs=3",
            "--fs",
            fs,
            "--size",
            size,
            "--reps",
            "2",
            "--quiet",
        ],
        dir.path(),
    );
    assert_eq!(v["status"], "complete");
    for t in v["trials"].as_array().unwrap() {
        assert_eq!(t["status"], "ok", "{t}");
        assert_eq!(phase(t, "create")["ops"], 300);
        let tx = phase(t, "transactions");
        assert_eq!(tx["ops"], 1000);
        assert_eq!(tx["ops_unit"], "transactions/s");
        for key in [
            "read_per_s",
            "appended_per_s",
            "created_mixed_per_s",
            "deleted_mixed_per_s",
        ] {
            assert!(tx["extra"][key].as_f64().unwrap() > 0.0, "{key}");
        }
        let ops: Vec<&str> = tx["lat_by_op"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["op"].as_str().unwrap())
            .collect();
        for op in ["read", "append", "create", "delete", "transaction"] {
            assert!(ops.contains(&op), "{op} in {ops:?}");
        }
        let d = phase(t, "delete");
        assert!(d["extra"]["written_bytes_per_s"].as_f64().unwrap() > 0.0);
        // The same seed makes the same choices in every repetition.
        assert_eq!(d["ops"], phase(&v["trials"][0], "delete")["ops"]);
    }
    assert!(table.contains("transactions: read_per_s"), "{table}");
    common::assert_clean(dir.path());
}

#[test]
fn postmark_on_tmpfs() {
    check("tmpfs", "128MiB");
}

#[test]
fn postmark_on_ext4() {
    check("ext4", "256MiB");
}
