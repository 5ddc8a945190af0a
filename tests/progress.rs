//! What a run shows while it works: plain lines without escape codes when stderr is not a
//! terminal, live bars on a terminal (a pseudo-terminal made by `script`), no colour with
//! `NO_COLOR`, nothing with `--quiet`. Runs in a plain directory (`--dir`), so no root is
//! needed.

mod common;

use std::path::Path;
use std::process::Command;

/// `fsarena run … --dir WORK` with two repetitions of a small bonnie-files.
fn run_args(dir: &Path) -> Vec<String> {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    [
        "run",
        "bonnie-files:files=1",
        "--dir",
        work.to_str().unwrap(),
        "--reps",
        "2",
        "--cache",
        "keep",
        "--image-dir",
        dir.join("img").to_str().unwrap(),
        "--db",
        dir.join("p.db").to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn logs_get_plain_lines() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(common::bin())
        .args(run_args(dir.path()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let line = format!(
        "fsarena: [rep 1/2] dir:{} bonnie-files: seq_create\n",
        dir.path().join("work").display()
    );
    assert!(err.contains(&line), "{err}");
    assert!(err.contains("[rep 2/2]"), "{err}");
    assert!(!err.contains('\x1b'), "escape codes in a log: {err:?}");

    let quiet = Command::new(common::bin())
        .args(run_args(dir.path()))
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(quiet.status.success());
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "", "--quiet");
}

/// Runs fsarena under `script`, which gives it a pseudo-terminal of 160 columns; returns
/// what it drew.
fn on_a_terminal(dir: &Path, no_color: bool) -> Option<String> {
    on_a_terminal_of(dir, no_color, 160)
}

/// [`on_a_terminal`] `cols` columns wide.
fn on_a_terminal_of(dir: &Path, no_color: bool, cols: usize) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        println!("SKIP: progress bars on a terminal: `script` (util-linux) not found");
        return None;
    }
    let cmd = std::iter::once(common::bin().to_str().unwrap().to_string())
        .chain(run_args(dir))
        .collect::<Vec<_>>()
        .join(" ");
    let log = dir.join("typescript");
    let mut c = Command::new("script");
    c.arg("-qec")
        .arg(format!("stty cols {cols} rows 40; {cmd}"))
        .arg(&log);
    if no_color {
        c.env("NO_COLOR", "1");
    } else {
        c.env_remove("NO_COLOR");
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    Some(String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned())
}

#[test]
fn terminals_get_bars_and_no_colour_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let Some(drawn) = on_a_terminal(dir.path(), false) else {
        return;
    };
    assert!(drawn.contains("trial 1/2"), "{drawn}");
    assert!(drawn.contains("bonnie-files: seq_delete"), "{drawn}");
    assert!(drawn.contains(" ops "), "{drawn}");
    assert!(
        regex_free_sgr_colour(&drawn).is_some(),
        "the run's clock and the bars are coloured: {drawn:?}"
    );
    assert!(
        drawn.contains("\x1b["),
        "a terminal display redraws in place"
    );

    let dir = tempfile::tempdir().unwrap();
    let drawn = on_a_terminal(dir.path(), true).unwrap();
    assert!(drawn.contains("trial 1/2"), "{drawn}");
    let colour = regex_free_sgr_colour(&drawn);
    assert!(colour.is_none(), "colour with NO_COLOR: {colour:?}");
}

/// At 80 columns a phase's bar line (`[rep 2/2] TARGET WORKLOAD: PHASE [bar] n/N ops 0s`)
/// was 20 columns too wide for its 30-column bar: the terminal cut it. The bar narrows.
#[test]
fn bar_lines_fit_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let Some(drawn) = on_a_terminal_of(dir.path(), true, 80) else {
        return;
    };
    // indicatif pads each line with spaces to the terminal's width and lets the terminal
    // wrap to the next row: a bar line runs from its spinner (or `[rep`) to its elapsed
    // time after ` ops `.
    let text = strip_escapes(&drawn);
    let mut lines: Vec<&str> = Vec::new();
    for (at, _) in text.match_indices("[rep ") {
        let start = text[..at]
            .char_indices()
            .rev()
            .nth(1)
            .filter(|(_, c)| !c.is_ascii())
            .map_or(at, |(i, _)| i);
        let Some(ops) = text[at..].find(" ops ") else {
            continue;
        };
        let rest = &text[at + ops + 5..];
        let end = at + ops + 5 + rest.find(' ').unwrap_or(rest.len());
        lines.push(&text[start..end]);
    }
    assert!(
        lines
            .iter()
            .any(|l| l.contains("[rep 2/2]") && l.contains("] ")),
        "a bar once the amount of work is known: {lines:#?}"
    );
    for l in &lines {
        assert!(
            l.chars().count() <= 80,
            "{} columns: {l}",
            l.chars().count()
        );
    }
}

/// `s` without its escape sequences (`ESC [ … letter`).
fn strip_escapes(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The first SGR colour sequence (`ESC [ 3x m`, `ESC [ 9x m`, …) in `s`, if any.
fn regex_free_sgr_colour(s: &str) -> Option<String> {
    let b = s.as_bytes();
    (0..b.len().saturating_sub(3)).find_map(|i| {
        if b[i] != 0x1b || b[i + 1] != b'[' {
            return None;
        }
        let end = b[i + 2..].iter().position(|c| c.is_ascii_alphabetic())? + i + 2;
        let params = &s[i + 2..end];
        let colour = b[end] == b'm'
            && params
                .split(';')
                .any(|p| p.len() == 2 && matches!(&p[..1], "3" | "4" | "9"));
        colour.then(|| format!("{:?}", &s[i..=end]))
    })
}
