//! End-to-end runs of the `io500-quick` suite on tmpfs and on an ext4 loop image: all
//! twelve IO500 phases in the official order, the scores recomputed here from the stored
//! phase figures (bytes or operations over wall time) with the IO500's formulas, and the
//! verdict "not official" with its reasons.

mod common;

use serde_json::Value;

const ORDER: [&str; 12] = [
    "ior-easy-write",
    "mdtest-easy-write",
    "ior-hard-write",
    "mdtest-hard-write",
    "find",
    "ior-easy-read",
    "mdtest-easy-stat",
    "ior-hard-read",
    "mdtest-hard-stat",
    "mdtest-easy-delete",
    "mdtest-hard-read",
    "mdtest-hard-delete",
];

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The n-th root of the product, written independently of the workload's code.
fn geomean(xs: &[f64]) -> f64 {
    xs.iter().product::<f64>().powf(1.0 / xs.len() as f64)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs()
}

fn check(fs: &str) {
    let test = format!("io500_quick_on_{fs}");
    let Some((dir, v, table)) = common::run_once_on(&test, &["--suite", "io500-quick"], fs, "1GiB")
    else {
        return;
    };
    let t = common::ok_trial(&v, 0);
    assert_eq!(common::phase_names(t), ORDER, "{fs}: the official order");
    let (mut bw, mut md) = (Vec::new(), Vec::new());
    for name in ORDER {
        let p = common::phase(t, name);
        let wall = num(&p["wall_s"]);
        let x = if name.starts_with("ior-") {
            let gib_s = num(&p["bytes"]) / wall / (1u64 << 30) as f64;
            bw.push(gib_s);
            gib_s
        } else {
            let kiops = num(&p["ops"]) / wall / 1e3;
            md.push(kiops);
            kiops
        };
        assert!(x > 0.0, "{fs} {name}: {p}");
        assert!(close(num(&p["extra"]["io500_figure"]), x), "{fs} {name}");
    }
    let last = &common::phase(t, "mdtest-hard-delete")["extra"];
    let (b, m) = (geomean(&bw), geomean(&md));
    assert!(close(num(&last["score_bw_gib_s"]), b), "{fs}: BW {last}");
    assert!(close(num(&last["score_md_kiops"]), m), "{fs}: MD {last}");
    assert!(
        close(num(&last["score_total"]), (b * m).sqrt()),
        "{fs}: total"
    );
    // 5 s stonewalls: never official, and the reasons say why.
    assert_eq!(num(&last["official"]), 0.0);
    assert_eq!(num(&last["unofficial_stonewall_below_300"]), 1.0);
    assert_eq!(num(&last["unofficial_write_phase_short"]), 1.0);
    assert_eq!(
        last.get("unofficial_not_persistent").is_some(),
        fs == "tmpfs"
    );
    // Reads and stats handled what the writes made.
    let ph = |n: &str| common::phase(t, n);
    assert_eq!(ph("ior-easy-read")["bytes"], ph("ior-easy-write")["bytes"]);
    assert_eq!(ph("ior-hard-read")["bytes"], ph("ior-hard-write")["bytes"]);
    assert_eq!(
        ph("mdtest-easy-stat")["ops"],
        ph("mdtest-easy-write")["ops"]
    );
    assert_eq!(
        ph("mdtest-hard-read")["ops"],
        ph("mdtest-hard-write")["ops"]
    );
    assert!(num(&ph("find")["extra"]["find_matched"]) > 0.0);
    assert!(
        table.contains("score_total"),
        "the terminal report shows the scores"
    );
    common::assert_clean(dir.path());
}

#[test]
fn io500_quick_on_tmpfs() {
    check("tmpfs");
}

#[test]
fn io500_quick_on_ext4() {
    check("ext4");
}

#[test]
fn list_shows_the_io500_suites() {
    let out = std::process::Command::new(common::bin())
        .arg("list")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("io500-quick") && text.contains("io500"),
        "{text}"
    );
}
