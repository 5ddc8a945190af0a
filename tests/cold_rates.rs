//! The device's two calibrated cold read rates (O_DIRECT and buffered with readahead) end
//! to end on an ext4 loop image: a run measures both, stores both (the JSON, and the
//! database that `show` and `report` read), and shows both beside the target in the
//! terminal at 80 columns and in the HTML report. Which of the two is faster is not
//! asserted: that depends on the device.

mod common;

use serde_json::Value;
use std::process::Command;

/// `text` with line breaks and no-break spaces as single spaces, so that a target line
/// wrapped to the terminal's width reads as one.
fn flat(text: &str) -> String {
    text.replace('\u{a0}', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The two rates in a flattened target line: `device cold read X UNIT direct, Y UNIT
/// buffered`, in 10^6 bytes/s.
fn shown_rates(text: &str) -> (f64, f64) {
    let text = flat(text);
    let at = text
        .find("device cold read ")
        .unwrap_or_else(|| panic!("no device cold read in {text}"));
    let words: Vec<&str> = text[at..].split(' ').skip(3).take(6).collect();
    let mb_per_s = |n: &str, unit: &str| {
        let n: f64 = n.parse().unwrap_or_else(|_| panic!("{n} in {words:?}"));
        match unit {
            "GB/s" => n * 1000.0,
            "MB/s" => n,
            u => panic!("unit {u} in {words:?}"),
        }
    };
    assert_eq!(words[2], "direct,", "{words:?}");
    assert_eq!(words[5].trim_end_matches(','), "buffered", "{words:?}");
    (mb_per_s(words[0], words[1]), mb_per_s(words[3], words[4]))
}

/// `fsarena ARGS --db DB` with `COLUMNS` as given; its standard output.
fn fsarena(args: &[&str], db: &std::path::Path, columns: &str) -> String {
    let out = Command::new(common::bin())
        .args(args)
        .arg("--db")
        .arg(db)
        .env("COLUMNS", columns)
        .output()
        .expect("run fsarena");
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_run_stores_and_shows_both_cold_read_rates() {
    let test = "a_run_stores_and_shows_both_cold_read_rates";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let html = dir.path().join("report.html");
    let html_arg = html.to_str().unwrap();
    let args = [
        "bonnie:size=16MiB,seeks=400",
        "--fs",
        "ext4",
        "--size",
        "512MiB",
        "--reps",
        "1",
        "--quiet",
        "--html",
        html_arg,
    ];
    let (v, _) = common::run_json(&args, dir.path());
    let t = &v["targets"][0];
    let rate = |key: &str| -> f64 {
        let r = t[key].as_f64().unwrap_or_else(|| panic!("no {key}: {t}"));
        assert!(r > 0.0 && r.is_finite(), "{key} {r}");
        r
    };
    let (direct, buffered) = (
        rate("device_read_mb_per_s"),
        rate("device_buffered_read_mb_per_s"),
    );
    // Stored: `show` reads the run back from the database, at 80 columns.
    let db = dir.path().join("results.db");
    let shown = fsarena(&["show", "last"], &db, "80");
    assert!(shown.lines().all(|l| l.chars().count() <= 80), "{shown}");
    let (d, b) = shown_rates(&shown);
    // Shown in human units with three significant digits: within 1% of the stored rates.
    let close = |shown: f64, stored: f64| (shown - stored).abs() <= 0.01 * stored;
    assert!(close(d, direct) && close(b, buffered), "{d} {b} vs {t}");
    let page = std::fs::read_to_string(&html).unwrap();
    let cell = page
        .split("<td>")
        .find_map(|c| c.split("</td>").next().filter(|c| c.contains("buffered")))
        .unwrap_or_else(|| panic!("no rate cell in the HTML"));
    assert_eq!(shown_rates(&format!("device cold read {cell}")), (d, b));
    // Exported from the database: both rates kept exactly.
    let exported: Value =
        common::run_document(fsarena(&["export", "--json", "last"], &db, "80").as_bytes());
    let e = &exported["targets"][0];
    assert_eq!(e["device_read_mb_per_s"].as_f64(), Some(direct));
    assert_eq!(e["device_buffered_read_mb_per_s"].as_f64(), Some(buffered));
    common::assert_clean(dir.path());
}
