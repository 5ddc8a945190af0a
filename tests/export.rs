//! `fsarena export` of the fixture run (bonnie, bonnie-files and postmark, three
//! repetitions on ext4 and tmpfs): snapshots of the tidy CSV, the JSON and the Bonnie++
//! CSV, and the Bonnie++ CSV rendered by bonnie++'s own `bon_csv2html` and `bon_csv2txt`.
//!
//! The fixture run is stored `complete`, so `Store::load` never turns it `interrupted` from
//! a pid that happens to be dead or alive on this machine: nothing in the output depends on
//! where the test runs. Needs no root.

mod common;

use fsarena::result::RunResult;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `fsarena --db DB export FIXTURE_RUN ARGS`.
fn export(db: &Path, args: &[&str]) -> Output {
    Command::new(common::bin())
        .arg("--db")
        .arg(db)
        .arg("export")
        .arg(common::FIXTURE_RUN)
        .args(args)
        .output()
        .expect("run fsarena export")
}

/// The standard output of a successful export.
fn export_ok(db: &Path, args: &[&str]) -> String {
    let out = export(db, args);
    assert!(
        out.status.success(),
        "fsarena export {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// FNV-1a, 64 bits: a digest that is the same on every machine and Rust version.
fn fnv1a(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Splits CSV text into records; the CSV must end with LF.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    fsarena::report::csv::read(text).expect("CSV must end with LF")
}

/// Lines shown in full in the CSV snapshot; the rest is pinned by count and digest.
const CSV_HEAD_LINES: usize = 40;

#[test]
fn csv_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::fixture_db(dir.path());
    let text = export_ok(&db, &["--csv"]);
    let rows = parse_csv(&text);
    let header = &rows[0];
    assert_eq!(header, fsarena::report::csv::COLUMNS);
    assert!(rows.iter().all(|r| r.len() == header.len()), "ragged rows");
    let col = |name: &str| header.iter().position(|c| c == name).unwrap();

    // Full precision: the stored f64, not a rounded one.
    let wall = rows
        .iter()
        .find(|r| {
            r[col("target")] == "ext4"
                && r[col("workload")] == "bonnie"
                && r[col("rep")] == "1"
                && r[col("phase")] == "write_char"
                && r[col("metric")] == "wall_s"
        })
        .expect("ext4 bonnie rep 1 write_char wall_s");
    assert_eq!(wall[col("value")], "2.185677099");
    assert_eq!(wall[col("unit")], "s");
    // mkfs options hold a comma: quoted, and read back whole.
    assert_eq!(
        wall[col("mkfs_opts")],
        "-F -q -E nodiscard,lazy_itable_init=0,lazy_journal_init=0"
    );
    for r in &rows[1..] {
        let v = &r[col("value")];
        assert!(
            v.is_empty() || v.parse::<f64>().is_ok_and(f64::is_finite),
            "{r:?}"
        );
    }

    // Rows per workload and phase: what a reader pivots on.
    let mut per: std::collections::BTreeMap<String, usize> = Default::default();
    for r in &rows[1..] {
        let key = format!(
            "{} {} {}",
            r[col("target")],
            r[col("workload")],
            r[col("phase")]
        );
        *per.entry(key).or_default() += 1;
    }
    let head: String = text
        .lines()
        .take(CSV_HEAD_LINES)
        .map(|l| format!("{l}\n"))
        .collect();
    let summary = format!(
        "rows (without header): {}\nbytes: {}\nfnv1a64: {}\nrows per target, workload, phase:\n{}\nfirst {CSV_HEAD_LINES} lines:\n{head}",
        rows.len() - 1,
        text.len(),
        fnv1a(text.as_bytes()),
        per.iter()
            .map(|(k, n)| format!("  {k}: {n}\n"))
            .collect::<String>(),
    );
    insta::assert_snapshot!("csv", summary);
}

/// The JSON export is ~400 KB (histogram buckets, time series): a snapshot of it would be
/// unreadable in review. The snapshot holds its structure (keys, counts, trials and their
/// phases) and a digest of the exact bytes; the round trip checks that it is the stored
/// run, field for field.
#[test]
fn json_snapshot_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::fixture_db(dir.path());
    let text = export_ok(&db, &["--json"]);
    let v: serde_json::Value = common::run_document(text.as_bytes());

    // Round trip: the export parses as a RunResult and prints back to the same bytes …
    let run: RunResult = serde_json::from_str(&text).unwrap();
    let again = fsarena::report::json::export(&run).unwrap();
    assert_eq!(String::from_utf8(again).unwrap(), text);
    // … and is the run the fixture recorded (summaries recomputed on load included).
    let fixture: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(v, fixture, "export differs from the stored fixture run");

    let keys = |x: &serde_json::Value| {
        x.as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let trials = v["trials"].as_array().unwrap();
    let mut s = format!(
        "bytes: {}\nfnv1a64: {}\nrun keys: {}\nrun_id: {}\nstatus: {}\ntargets: {}\nsummaries: {}\ntrial keys: {}\nphase keys: {}\ntrials: {}\n",
        text.len(),
        fnv1a(text.as_bytes()),
        keys(&v),
        v["run_id"],
        v["status"],
        v["targets"].as_array().unwrap().len(),
        v["summaries"].as_array().unwrap().len(),
        keys(&trials[0]),
        keys(&trials[0]["phases"][0]),
        trials.len(),
    );
    for t in trials {
        let phases: Vec<String> = t["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect();
        s.push_str(&format!(
            "  {} {} rep {} {}: {}\n",
            t["target"].as_str().unwrap(),
            t["label"].as_str().unwrap(),
            t["rep"],
            t["status"].as_str().unwrap(),
            phases.join(" ")
        ));
    }
    insta::assert_snapshot!("json_structure", s);
}

#[test]
fn bonnie_csv_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::fixture_db(dir.path());
    let text = export_ok(&db, &["--bonnie-csv"]);
    for line in text.lines() {
        assert_eq!(line.split(',').count(), 50, "{line}");
        assert!(line.starts_with("1.98,"), "{line}");
        assert!(!line.contains('+'), "no +++++ ever: {line}");
    }
    insta::assert_snapshot!("bonnie_csv", text);
}

#[test]
fn output_file_holds_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::fixture_db(dir.path());
    let path = dir.path().join("out.csv");
    let out = export(&db, &["--bonnie-csv", "-o", path.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        export_ok(&db, &["--bonnie-csv"])
    );
}

#[test]
fn bonnie_csv_of_a_run_without_bonnie_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json"),
    )
    .unwrap();
    let mut run: RunResult = serde_json::from_str(&text).unwrap();
    run.trials.retain(|t| t.workload == "postmark");
    let db = dir.path().join("postmark.db");
    fsarena::store::Store::open(&db)
        .unwrap()
        .import(&run)
        .unwrap();
    let out = export(&db, &["--bonnie-csv"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("no bonnie or bonnie-files trials") && stderr.contains("postmark"),
        "{stderr}"
    );
}

/// Where a bonnie++ tool is on the PATH, or `None` after printing why the test skips.
fn bonnie_tool(test: &str, name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!("SKIP {test}: {name} is not installed (Debian package bonnie++)");
    }
    found
}

/// Runs `tool` with `input` on standard input; returns (stdout, stderr).
fn pipe(tool: &Path, input: &str) -> (String, String) {
    let mut child = Command::new(tool)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("running {}: {e}", tool.display()));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{} failed", tool.display());
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// bon_csv2txt's `convSpd`: K/s shown as `Nk`, `N.Nm`, `Nm` or `N.Ng`.
fn conv_spd(k: f64) -> String {
    if k < 10000.0 {
        format!("{}k", k as i64)
    } else if k / 1024.0 < 1000.0 {
        let m = k / 1024.0;
        if m < 100.0 {
            format!("{m:.1}m")
        } else {
            format!("{}m", (m + 0.5) as i64)
        }
    } else {
        format!("{:.1}g", k / 1024.0 / 1024.0)
    }
}

#[test]
fn bon_csv2html_renders_our_figures() {
    let test = "bon_csv2html_renders_our_figures";
    let Some(tool) = bonnie_tool(test, "bon_csv2html") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = common::fixture_db(dir.path());
    let csv = export_ok(&db, &["--bonnie-csv"]);
    let (html, stderr) = pipe(&tool, &csv);
    assert!(stderr.is_empty(), "bon_csv2html rejected lines: {stderr}");
    let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    // One table row of figures and one of latencies per line.
    assert_eq!(html.matches("class=\"rowheader\"").count(), lines.len());
    for f in &lines {
        for (i, v) in f.iter().enumerate().skip(2) {
            if v.is_empty() || i == 3 || i == 4 || (6..=8).contains(&i) {
                continue; // concurrency 1, seed, chunk and seeks are not shown
            }
            // Block write, rewrite and block read are shown in M/s: (K/s + 512) / 1024.
            let shown = if [11, 13, 17].contains(&i) {
                ((v.parse::<i64>().unwrap() + 512) / 1024).to_string()
            } else {
                v.to_string()
            };
            assert!(
                html.contains(&format!(">{shown}</td>"))
                    || html.contains(&format!(">{shown}</font></td>")),
                "field {i} = {v} (shown as {shown}) missing from bon_csv2html output"
            );
        }
    }
}

#[test]
fn bon_csv2txt_renders_our_figures() {
    let test = "bon_csv2txt_renders_our_figures";
    let Some(tool) = bonnie_tool(test, "bon_csv2txt") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = common::fixture_db(dir.path());
    let csv = export_ok(&db, &["--bonnie-csv"]);
    let (txt, stderr) = pipe(&tool, &csv);
    assert!(stderr.is_empty(), "bon_csv2txt rejected lines: {stderr}");
    let tokens: Vec<&str> = txt.split_whitespace().collect();
    let has = |s: &str| tokens.contains(&s);
    for line in csv.lines() {
        let f: Vec<&str> = line.split(',').collect();
        // Throughput through convSpd, %CPU, seeks, file rates and latencies as written.
        for i in [9, 11, 13, 15, 17] {
            if !f[i].is_empty() {
                let shown = conv_spd(f[i].parse().unwrap());
                assert!(
                    has(&shown),
                    "field {i} = {} (shown as {shown}) missing:\n{txt}",
                    f[i]
                );
            }
        }
        for i in (10..=20).step_by(2).chain(19..=19).chain(26..=49) {
            if !f[i].is_empty() {
                assert!(has(f[i]), "field {i} = {} missing:\n{txt}", f[i]);
            }
        }
    }
    // Two tables (I/O and file tests), each with one line of figures per CSV line.
    assert_eq!(txt.matches("Latency").count(), 2 * csv.lines().count());
}
