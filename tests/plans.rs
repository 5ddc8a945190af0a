//! Plan files: every malformed plan in tests/plans/bad is refused with its location; random
//! bytes and random TOML-ish text never panic the parser; every example plan is valid for
//! `fsarena plan check`.

use assert_cmd::Command;
use fsarena::plan::build::{build, Overrides};
use fsarena::plan::file::parse;
use proptest::prelude::*;
use std::path::Path;

fn check(name: &str, text: &str) -> anyhow::Result<()> {
    build(&parse(name, text)?, &Overrides::default()).map(|_| ())
}

/// Each file's first line is `# expect: PLACE: TEXT`: PLACE is `LINE:COLUMN` or `-` (the
/// error names the file only); the error must start with `FILE:PLACE: ` and contain TEXT.
#[test]
fn every_malformed_plan_gives_a_located_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plans/bad");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    let mut wrong = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let expect = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| panic!("{}: no '# expect: ' line", path.display()));
        let (place, want) = expect.split_once(": ").unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let prefix = if place == "-" {
            format!("{name}: ")
        } else {
            format!("{name}:{place}: ")
        };
        match check(&name, &text) {
            Ok(()) => wrong.push(format!("{name}: accepted")),
            Err(e) => {
                let e = format!("{e:#}");
                if !e.starts_with(&prefix) || !e.contains(want) {
                    wrong.push(format!("{name}: want {prefix}…{want}…\n   got {e}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// Text made of TOML's pieces: headers, keys of plans, values of all kinds, junk.
fn tomlish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("[defaults]\n".to_string()),
        Just("[[target]]\n".to_string()),
        Just("[[matrix]]\n".to_string()),
        Just("[[workload]]\n".to_string()),
        Just("[target\n".to_string()),
        "(fs|mkfs|mount|size|dir|device|name|kind|suite|reps|seed|cache|number|files|age|x) = "
            .prop_map(String::from),
        "\"(ext4|tmpfs|xfs|bonnie|postmark|quick|1GiB|-d agcount=120|data=writeback|/tmp|fresh|desktop:fill=60|)\"\n"
            .prop_map(String::from),
        "(-?[0-9]{1,20}|true|1\\.5e3|\\[1, \"a\"\\]|\\[\\]|\\{ a = 1 \\}|\"\\\\u00e9\")\n"
            .prop_map(String::from),
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = check("r.toml", &String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_tomlish_text_never_panics(text in tomlish()) {
        let _ = check("r.toml", &text);
    }
}

/// The plan files of `examples/plans/`, sorted.
fn example_plans() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/plans");
    let mut plans: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("toml"))
        .collect();
    plans.sort();
    plans
}

#[test]
fn every_example_plan_checks() {
    let plans = example_plans();
    for path in &plans {
        let db = tempfile::tempdir().unwrap();
        let out = Command::cargo_bin("fsarena")
            .unwrap()
            .arg("--db")
            .arg(db.path().join("none.db"))
            .env("COLUMNS", "80")
            .args(["plan", "check"])
            .arg(path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}: {}{}",
            path.display(),
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
        // The exit code says it is valid; the last line names the plan's path, which a
        // long checkout path wraps, so only the listing's heading is looked for.
        assert!(
            stdout.lines().any(|l| l.trim_end() == "targets:"),
            "{stdout}"
        );
        assert!(
            !db.path().join("none.db").exists(),
            "plan check made a database"
        );
        // A path longer than the terminal cannot be wrapped: the line that names it is
        // the one allowed past 80 columns.
        let named = path.display().to_string();
        for line in stdout.lines().filter(|l| !l.contains(&named)) {
            assert!(
                line.chars().count() <= 80,
                "{}: a line over 80 columns:\n{line}",
                path.display()
            );
        }
    }
    assert!(plans.len() >= 5, "{} example plans", plans.len());
}

/// `plan check --json` of `path`: its exit status and the JSON.
fn check_json(path: &Path) -> (i32, serde_json::Value) {
    let db = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("fsarena")
        .unwrap()
        .arg("--db")
        .arg(db.path().join("none.db"))
        .args(["plan", "check", "--json"])
        .arg(path)
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap_or(-1), json)
}

/// A plan is a program: `plan check --json` lists a command workload's lines as the plan's
/// own commands (in the order they run) and fsarena's programs by name, each with why.
#[test]
fn plan_check_json_lists_the_commands_of_a_command_workload() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.toml");
    std::fs::write(
        &path,
        "[[target]]\nfs = \"tmpfs\"\n[[workload]]\nkind = \"command\"\n\
         setup = \"cp -a /usr/src/linux .\"\nrun = \"make -C linux\"\n",
    )
    .unwrap();
    let (code, json) = check_json(&path);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["valid"], true);
    let lines: Vec<(&str, &str)> = json["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["from"].as_str().unwrap(), c["line"].as_str().unwrap()))
        .collect();
    assert_eq!(
        lines,
        [
            ("command:setup", "cp -a /usr/src/linux ."),
            ("command:run", "make -C linux")
        ]
    );
    let names: Vec<&str> = json["programs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert!(p["why"].is_string(), "{p}");
            p["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(names, ["mount", "sh", "umount"]);
}

/// The example plans have no command workload: no command of their own, and each lists
/// the mkfs of its filesystems among fsarena's programs.
#[test]
fn example_plans_run_no_command_of_their_own() {
    let plans = example_plans();
    for path in &plans {
        let (code, json) = check_json(path);
        assert_eq!(code, 0, "{}: {json}", path.display());
        assert_eq!(
            json["commands"],
            serde_json::json!([]),
            "{}",
            path.display()
        );
        let programs = json["programs"].as_array().unwrap();
        assert!(
            programs.iter().any(|p| p["name"] == "mount"),
            "{}: {json}",
            path.display()
        );
        assert!(programs.iter().all(|p| p["why"].is_string()), "{json}");
    }
    assert!(plans.len() >= 5, "{} example plans", plans.len());
}

/// An invalid plan is refused with `--json` as without it: exit status 2, no JSON.
#[test]
fn plan_check_json_of_an_invalid_plan_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.toml");
    std::fs::write(&path, "[[target]]\nfs = \"zfs\"\n").unwrap();
    let (code, json) = check_json(&path);
    assert_eq!(code, 2);
    assert_eq!(json, serde_json::Value::Null);
}

#[test]
fn a_plan_and_workloads_or_targets_on_the_command_line_are_refused() {
    for extra in [
        &["bonnie"][..],
        &["--fs", "ext4"],
        &["--suite", "quick"],
        &["--dir", "/tmp"],
        &["--net", "nfs=server:/export"],
        &["--device", "/dev/nonexistent"],
    ] {
        let out = Command::cargo_bin("fsarena")
            .unwrap()
            .args(["run", "--plan", "x.toml"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("cannot be used with"),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = Command::cargo_bin("fsarena")
        .unwrap()
        .args(["run", "--resume", "last", "--fs", "nope", "bonnie"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--resume needs --plan");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--resume RUN needs --plan"));
}

/// `plan check` of the plan `text` (in a fresh directory) at 200 columns: exit status and
/// stdout.
fn plan_check(text: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.toml");
    std::fs::write(&path, text).unwrap();
    let out = Command::cargo_bin("fsarena")
        .unwrap()
        .arg("--db")
        .arg(dir.path().join("none.db"))
        .env("COLUMNS", "200")
        .args(["plan", "check"])
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    (out.status.code().unwrap_or(-1), stdout)
}

/// The hash on `plan check`'s first line (`plan HASH: …`).
fn hash_of(stdout: &str) -> String {
    let first = stdout.lines().next().unwrap_or_default();
    let word = first.split_whitespace().nth(1).unwrap_or_default();
    word.trim_end_matches(':').to_string()
}

#[test]
fn plan_check_shows_aged_targets_and_age_changes_the_hash() {
    let fresh = "[defaults]\nsize = \"1GiB\"\n[[matrix]]\nfs = [\"ext4\", \"xfs\"]\n\
                 [[workload]]\nkind = \"postmark\"\n";
    let aged = fresh.replace(
        "[[workload]]",
        "age = [\"fresh\", \"desktop:fill=60\"]\n[[workload]]",
    );
    let (code, a) = plan_check(fresh);
    assert_eq!(code, 0, "{a}");
    let (code, b) = plan_check(&aged);
    assert_eq!(code, 0, "{b}");
    assert_eq!(hash_of(&a).len(), 16, "{a}");
    assert_eq!(hash_of(&b).len(), 16, "{b}");
    assert_ne!(hash_of(&a), hash_of(&b));
    let heads: Vec<&str> = b
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for name in ["ext4", "ext4+aged", "xfs", "xfs+aged"] {
        assert!(heads.contains(&name), "{name} in {b}");
    }
    // At 200 columns a target's parts share its line, joined by "; ".
    let aged_lines = b
        .lines()
        .filter(|l| l.trim_end().ends_with("; aged: desktop:fill=60,churn=2"))
        .count();
    assert_eq!(aged_lines, 2, "{b}");
    assert!(!a.contains("aged:"), "{a}");
}

#[test]
fn age_on_the_command_line_is_refused_with_a_plan() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.toml");
    std::fs::write(
        &path,
        "[[target]]\nfs = \"ext4\"\n[[workload]]\nkind = \"postmark\"\n",
    )
    .unwrap();
    let out = Command::cargo_bin("fsarena")
        .unwrap()
        .arg("--db")
        .arg(dir.path().join("none.db"))
        .args(["run", "--age", "both", "--plan"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("a plan file says how its targets are aged"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.path().join("none.db").exists());
}
