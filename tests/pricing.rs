//! Work priced on devices end to end (docs/pricing.md): a run on an ext4 loop image beside
//! a tmpfs probes the image's device, stores the probe, and with `--price-on` writes each
//! phase's predictions in the JSON's own `predictions` section — the tmpfs, whose device
//! work is not measured, listed as not priced, never priced at zero work. `show` and
//! `export` price the stored run again on other profiles; an unknown profile is a usage
//! error. Assertions are on exit codes and JSON, never on the wrapped terminal text.

mod common;

use serde_json::Value;
use std::process::Command;

/// `fsarena ARGS --db DB`: exit code and standard output.
fn fsarena(args: &[&str], db: &std::path::Path) -> (Option<i32>, String) {
    let out = Command::new(common::bin())
        .args(args)
        .arg("--db")
        .arg(db)
        .env("COLUMNS", "80")
        .output()
        .expect("run fsarena");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The predicted seconds of `phase` of `target` on `profile`.
fn predicted_s(v: &Value, profile: &str, target: &str, phase: &str) -> Option<f64> {
    v["predictions"]["phases"]
        .as_array()?
        .iter()
        .find(|p| p["profile"] == profile && p["target"] == target && p["phase"] == phase)
        .and_then(|p| p["predicted_s"]["median"].as_f64())
}

#[test]
fn a_run_probes_its_device_and_prices_its_phases_apart_from_its_measurements() {
    let test = "a_run_probes_its_device_and_prices_its_phases_apart_from_its_measurements";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let html = dir.path().join("report.html");
    let args = [
        "smallfiles:files=500,size_max=4KiB",
        "--fs",
        "ext4,tmpfs",
        "--size",
        "512MiB",
        "--reps",
        "2",
        "--quiet",
        "--price-on",
        "measured,hdd,nvme",
        "--html",
        html.to_str().unwrap(),
    ];
    let (v, _) = common::run_json(&args, dir.path());
    let ext4 = v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["fstype"] == "ext4")
        .unwrap();
    let name = ext4["name"].as_str().unwrap();
    let probe = &ext4["device_probe"];
    for key in [
        "read_4k_us",
        "write_4k_us",
        "flush_us",
        "read_4k_parallel_iops",
    ] {
        let x = probe[key]
            .as_f64()
            .unwrap_or_else(|| panic!("no {key}: {probe}"));
        assert!(x > 0.0 && x.is_finite(), "{key} {x}");
    }
    // The probe takes a few seconds at most.
    assert!(probe["probe_s"].as_f64().unwrap() < 5.0, "{probe}");
    let pred = &v["predictions"];
    assert!(pred["note"].as_str().unwrap().contains("not measurements"));
    assert_eq!(
        pred["priced_on"],
        serde_json::json!(["measured", "hdd", "nvme"])
    );
    // Every phase of ext4 priced on each profile, from both repetitions; ranked.
    let phases = pred["phases"].as_array().unwrap();
    for profile in ["measured", "hdd", "nvme"] {
        let mine: Vec<&Value> = phases.iter().filter(|p| p["profile"] == profile).collect();
        assert_eq!(mine.len(), 4, "{profile}: {mine:?}");
        for p in mine {
            assert_eq!(
                (p["target"].as_str(), p["reps"].as_u64()),
                (Some(name), Some(2))
            );
            assert_eq!(p["rank"], 1);
            let s = &p["predicted_s"];
            assert!(s["min"].as_f64() <= s["median"].as_f64());
            assert!(s["median"].as_f64().unwrap() > 0.0, "{p}");
        }
    }
    // The same work is never predicted faster on the slower device.
    for phase in ["create", "stat", "read", "delete"] {
        let (hdd, nvme) = (
            predicted_s(&v, "hdd", name, phase).unwrap(),
            predicted_s(&v, "nvme", name, phase).unwrap(),
        );
        assert!(hdd >= nvme, "{phase}: hdd {hdd} < nvme {nvme}");
    }
    // The tmpfs: not priced, and why.
    assert!(phases.iter().all(|p| p["target"] != "tmpfs"), "{pred}");
    let unpriced: Vec<&str> = pred["unpriced"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(
        unpriced
            .iter()
            .filter(|w| w.starts_with("tmpfs on "))
            .count(),
        3,
        "{unpriced:?}"
    );
    // The HTML report has them in a section of their own.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"predictions\">"));
    // Measurements untouched: the trials hold measured figures only.
    assert!(v["trials"][0]["phases"][0].get("predicted_s").is_none());

    // The stored run, priced again on another profile; the probe kept exactly.
    let db = dir.path().join("results.db");
    let (code, out) = fsarena(
        &["export", "--json", "--price-on", "cloud-3000", "last"],
        &db,
    );
    assert_eq!(code, Some(0));
    let e = common::run_document(out.as_bytes());
    let stored = e["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["fstype"] == "ext4")
        .unwrap();
    assert_eq!(stored["device_probe"], *probe);
    assert_eq!(
        e["predictions"]["priced_on"],
        serde_json::json!(["cloud-3000"])
    );
    assert!(predicted_s(&e, "cloud-3000", name, "create").is_some());
    // `show` prices too; an unknown profile is a usage error.
    assert_eq!(
        fsarena(&["show", "last", "--price-on", "nvme"], &db).0,
        Some(0)
    );
    assert_eq!(
        fsarena(&["show", "last", "--price-on", "ssd"], &db).0,
        Some(2)
    );
    common::assert_clean(dir.path());
}

#[test]
fn an_unknown_profile_is_refused_before_anything_runs() {
    let (dir, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let out = common::run_any(
        &[
            "smallfiles",
            "--dir",
            work.path().to_str().unwrap(),
            "--price-on",
            "floppy",
        ],
        dir.path(),
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("floppy"), "{}", out.stderr);
    assert!(out.json.is_none());
}
