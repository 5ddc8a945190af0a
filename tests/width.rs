//! Reading at any width: `run`, `show`, `compare`, `history` and `list` in a pseudo-terminal
//! of 80 and of 120 columns (`script`, `stty cols`): no line is wider than the terminal and
//! every figure the JSON holds is printed whole (never split across lines of a cell); and
//! snapshots of the fixture run's tables drawn at 80 and 120 columns, where its wide
//! workloads are transposed or split.

mod common;

use fsarena::report::{human, terminal};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Why this machine cannot run a command in a pseudo-terminal, or `None`.
fn no_pty() -> Option<&'static str> {
    let ok = Command::new("script").arg("--version").output();
    (!ok.is_ok_and(|o| o.status.success())).then_some("no `script` (util-linux)")
}

/// The text `fsarena ARGS` prints to a pseudo-terminal `cols` columns wide (`$COLUMNS`
/// unset, so the terminal's width is the one found), carriage returns removed.
fn in_pty(cols: usize, args: &[&str]) -> String {
    let quoted: Vec<String> = std::iter::once(common::bin().display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let cmd = format!("stty cols {cols} rows 60; exec {}", quoted.join(" "));
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .env_remove("COLUMNS")
        .output()
        .expect("run script");
    String::from_utf8_lossy(&out.stdout).replace('\r', "")
}

/// Asserts that no line of `text` is wider than `cols`.
fn assert_fits(text: &str, cols: usize, what: &str) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= cols,
            "{what} at {cols} columns: a line of {}:\n{line}\n\n{text}",
            line.chars().count()
        );
    }
}

/// Whether `needle` occurs in `text` as a whole figure: not preceded or followed by a
/// digit or a decimal point (a figure split across lines would show only its parts).
fn whole(text: &str, needle: &str) -> bool {
    let figure = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit() || c == '.');
    text.match_indices(needle).any(|(i, _)| {
        !figure(text[..i].chars().next_back()) && !figure(text[i + needle.len()..].chars().next())
    })
}

/// Every median the terminal shows for `run` (each phase's headline, each workload
/// figure in its human unit) appears whole in `text`; returns how many were checked.
fn assert_figures_whole(run: &Value, text: &str, what: &str) -> usize {
    let trials = run["trials"].as_array().unwrap();
    let phase_of = |s: &Value| {
        trials
            .iter()
            .filter(|t| t["label"] == s["workload"] && t["status"] == "ok")
            .flat_map(|t| t["phases"].as_array().unwrap())
            .find(|p| p["name"] == s["phase"])
    };
    let mut checked = 0;
    for s in run["summaries"].as_array().unwrap() {
        let Some(p) = phase_of(s) else { continue };
        let median = s["median"].as_f64().unwrap();
        let metric = s["metric"].as_str().unwrap();
        let shown = if p["primary"] == metric {
            terminal::fmt_num(median)
        } else if p["extra"].get(metric).is_some() {
            human::value(median, s["unit"].as_str().unwrap())
        } else {
            continue;
        };
        assert!(
            whole(text, &shown),
            "{what}: {s} not whole as {shown:?}:\n{text}"
        );
        checked += 1;
    }
    checked
}

#[test]
fn a_real_run_reads_whole_at_80_and_120_columns() {
    let test = "a_real_run_reads_whole_at_80_and_120_columns";
    if let Some(why) = no_pty() {
        eprintln!("SKIP {test}: {why}");
        return;
    }
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let d = dir.path().display().to_string();
    let (json, db) = (format!("{d}/out.json"), format!("{d}/results.db"));
    let run = [
        "run",
        "--fs",
        "ext4,tmpfs",
        "--size",
        "256MiB",
        "--reps",
        "2",
        "--quiet",
        "--image-dir",
        &d,
        "--db",
        &db,
        "--json",
        &json,
        "smallfiles:files=2000",
        "metascan:scale=0.2",
    ];
    let text = in_pty(80, &run);
    let v: Value = serde_json::from_slice(&std::fs::read(&json).expect("json")).unwrap();
    assert_eq!(v["status"], "complete", "{text}");
    assert_fits(&text, 80, "run");
    // smallfiles: 3 phases, 1 figure; metascan: 13 phases, 6 figures; 2 targets.
    assert!(
        assert_figures_whole(&v, &text, "run") >= 2 * (3 + 3 + 13 + 6),
        "{text}"
    );
    assert!(text.contains("trial(s) planned"), "{text}");
    for cols in [80, 120] {
        let shown = in_pty(cols, &["show", "last", "--db", &db]);
        assert_fits(&shown, cols, "show");
        assert_figures_whole(&v, &shown, &format!("show at {cols}"));
        let cmp = in_pty(cols, &["compare", "last:ext4", "last:tmpfs", "--db", &db]);
        assert!(cmp.contains("B/A"), "{cmp}");
        assert_fits(&cmp, cols, "compare");
        assert_fits(&in_pty(cols, &["history", "--db", &db]), cols, "history");
    }
    common::assert_clean(dir.path());
}

#[test]
fn list_and_doctor_fit_80_columns() {
    let test = "list_and_doctor_fit_80_columns";
    if let Some(why) = no_pty() {
        eprintln!("SKIP {test}: {why}");
        return;
    }
    let list = in_pty(80, &["list", "--db", "/nonexistent/fsarena-width.db"]);
    assert!(list.contains("Suites"), "{list}");
    assert_fits(&list, 80, "list");
    assert_fits(&in_pty(80, &["doctor"]), 80, "doctor");
}

/// `compare` of three sides (the fixture's two targets, and the run again, standing for
/// the target named first) fits a pseudo-terminal of 80 and of 120 columns.
#[test]
fn three_sides_fit_80_and_120_columns() {
    let test = "three_sides_fit_80_and_120_columns";
    if let Some(why) = no_pty() {
        eprintln!("SKIP {test}: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = common::fixture_db(dir.path()).display().to_string();
    let id = common::FIXTURE_RUN;
    let (tmpfs, ext4) = (format!("{id}:tmpfs"), format!("{id}:ext4"));
    for cols in [80, 120] {
        let out = in_pty(cols, &["compare", &tmpfs, &ext4, id, "--db", &db]);
        assert!(out.contains("tmpfs(a) tmpfs#3(a) ext4("), "{out}");
        assert_fits(&out, cols, "compare of three sides");
    }
}

/// The fixture run (`tests/fixtures/run.json`): bonnie, bonnie-files and postmark on
/// ext4 and tmpfs, three repetitions.
fn fixture() -> fsarena::result::RunResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn fixture_tables_at_80_and_120_columns() {
    let run = fixture();
    let v: Value = serde_json::to_value(&run).unwrap();
    for cols in [80, 120] {
        let text = terminal::render_width(&run, cols);
        assert_fits(&text, cols, "fixture");
        assert_figures_whole(&v, &terminal::render_width(&run, cols), "fixture");
        insta::assert_snapshot!(format!("fixture_{cols}"), text);
    }
}

#[test]
fn a_wide_workload_is_transposed_then_split() {
    // Six targets of the fixture's bonnie-files (six phases): too wide either way at 80
    // columns, so the phases become rows and the targets are split between tables.
    let mut run = fixture();
    let mut more = Vec::new();
    for t in run.trials.iter().filter(|t| t.label == "bonnie-files") {
        for n in ["xfs", "btrfs", "ext2", "ext3"] {
            let mut c = t.clone();
            c.target = format!("{n}-{}", t.target);
            more.push(c);
        }
    }
    // The first target as a run that also measured the buffered rate: the target line
    // with both rates fits too.
    run.targets[0].device_buffered_read_mb_per_s = Some(2034.5);
    run.trials.retain(|t| t.label == "bonnie-files");
    run.trials.extend(more);
    run.summaries = fsarena::stats::summarize(&run.trials, fsarena::workload::figures_of);
    let text = terminal::render_width(&run, 80);
    assert_fits(&text, 80, "six targets");
    assert!(text.contains("│ phase "), "transposed: {text}");
    insta::assert_snapshot!("six_targets_80", text);
}
