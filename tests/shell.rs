//! fsarena as scripts and shells use it: completions offer workload and filesystem names,
//! the man page names every subcommand, a misspelt name gets a suggestion, and what a
//! command prints on a standard output that is not a terminal holds no escape sequence.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn fsarena(args: &[&str]) -> Output {
    Command::new(common::bin())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("fsarena runs")
}

/// What bash's completion offers for the words `line` (the last one being completed),
/// with the script `fsarena completions bash` prints.
fn bash_complete(dir: &Path, line: &[&str]) -> Vec<String> {
    let script = dir.join("fsarena.bash");
    std::fs::write(&script, fsarena(&["completions", "bash"]).stdout).unwrap();
    let words: Vec<String> = line.iter().map(|w| format!("'{w}'")).collect();
    let prog = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{}'; COMP_POINT=${{#COMP_LINE}}; \
         _fsarena fsarena '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        words.join(" "),
        line.len() - 1,
        line.join(" "),
        line[line.len() - 1],
        line[line.len() - 2],
    );
    let out = Command::new("bash")
        .args(["--norc", "-c", &prog])
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completes_workloads_filesystems_and_subcommands() {
    let dir = tempfile::tempdir().unwrap();
    let got = bash_complete(dir.path(), &["fsarena", "run", "small"]);
    assert!(got.iter().any(|w| w == "smallfiles"), "{got:?}");
    assert!(got.iter().all(|w| w.starts_with("small")), "{got:?}");
    let got = bash_complete(dir.path(), &["fsarena", "run", "--fs", "x"]);
    assert_eq!(got, ["xfs"]);
    let got = bash_complete(dir.path(), &["fsarena", "run", "--suite", "kern"]);
    assert_eq!(got, ["kernel-build"]);
    let got = bash_complete(dir.path(), &["fsarena", "exp"]);
    assert_eq!(got, ["export"]);
    // zsh escapes the colon.
    for (shell, word) in [
        ("zsh", "smallfiles\\:files="),
        ("fish", "smallfiles:files="),
    ] {
        let out = fsarena(&["completions", shell]);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(word), "{shell}");
        assert!(text.contains("xfs"), "{shell}");
    }
}

#[test]
fn man_pages_name_every_subcommand() {
    let page = String::from_utf8(fsarena(&["man"]).stdout).unwrap();
    assert!(page.starts_with(".ie") || page.contains(".TH fsarena 1"));
    let dir = tempfile::tempdir().unwrap();
    let out = fsarena(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert!(out.status.success());
    let help = String::from_utf8(fsarena(&["--help"]).stdout).unwrap();
    let subs: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap()
        .lines()
        // A name is indented by two spaces; its wrapped description by more.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(subs.len() >= 14, "{subs:?}");
    for sub in subs {
        assert!(
            page.contains(&format!("fsarena\\-{sub}(1)")),
            "{sub} not in fsarena.1"
        );
        if sub != "help" {
            let own = dir.path().join(format!("fsarena-{sub}.1"));
            let text = std::fs::read_to_string(&own).expect("a page per subcommand");
            assert!(
                text.contains(&format!(".TH fsarena-{sub} 1")),
                "{}",
                own.display()
            );
        }
    }
}

#[test]
fn a_misspelt_name_gets_a_suggestion() {
    for (args, want) in [
        (
            &["run", "smalfiles", "--dir", "/tmp"][..],
            "did you mean 'smallfiles'?",
        ),
        (
            &["run", "--fs", "ext5", "smallfiles"][..],
            "did you mean 'ext4'?",
        ),
        (&["run", "--suite", "quik"][..], "did you mean 'quick'?"),
        (
            &["run", "smallfiles:fils=10", "--dir", "/tmp"][..],
            "did you mean 'files'?",
        ),
    ] {
        let out = fsarena(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// Every command's standard output, redirected to a file, holds no escape sequence (no
/// colour, no cursor movement), even with `--color always`.
#[test]
fn output_to_a_file_holds_no_escape_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::fixture_db(dir.path());
    let db = db.to_str().unwrap();
    let html = dir.path().join("r.html");
    let strings = |args: &[&str]| args.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut commands = common::reading_commands(db);
    commands.push(strings(&[
        "--db",
        db,
        "report",
        "last",
        "--html",
        html.to_str().unwrap(),
    ]));
    commands.push(strings(&["--help"]));
    commands.push(strings(&["run", "--help"]));
    let img = common::image_dir();
    let img_s = img.path().to_str().unwrap().to_string();
    let run_db = img.path().join("r.db");
    let run_db_s = run_db.to_str().unwrap().to_string();
    if common::loop_unavailable().is_none() {
        commands.push(strings(&[
            "run",
            "smallfiles:files=200",
            "--fs",
            "tmpfs",
            "--size",
            "64MiB",
            "--reps",
            "1",
            "--image-dir",
            &img_s,
            "--db",
            &run_db_s,
        ]));
        commands.push(strings(&["doctor", "--image-dir", &img_s]));
    } else {
        println!("SKIP: run and doctor to a file: not root or no loop devices");
    }
    for args in commands {
        let mut all = vec!["--color", "always"];
        all.extend(args.iter().map(String::as_str));
        let out = fsarena(&all);
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.is_empty(), "{args:?} printed nothing");
        assert!(
            !out.stdout.contains(&0x1b),
            "{args:?} wrote an escape sequence to a file"
        );
        assert!(
            !out.stderr.contains(&0x1b),
            "{args:?} wrote an escape sequence to a stderr that is not a terminal"
        );
    }
    common::assert_clean(img.path());
}
