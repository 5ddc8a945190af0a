//! Every command example in the README and the user guide runs, and its output is checked,
//! so the documentation cannot drift from what fsarena does (an equivalent of `trycmd`,
//! written here because the examples need a shell).
//!
//! What it reads: `README.md` and every `docs/**/*.md` except the dated records under
//! `docs/validation/` and `docs/performance/`. One page only:
//! `FSARENA_DOCS_FILE=README.md cargo test --test doc_commands -- --nocapture`.
//!
//! The convention, also described in docs/contributing.md:
//!
//! * A fenced block opened with ```` ```console ```` is run. A line starting with `$ ` is a
//!   command (a line ending in ` \` continues on the next); the lines after it, up to the
//!   next command or the end of the block, are what it prints: stdout and stderr merged, as
//!   a user sees them. In those lines `[..]` matches any text within a line, a line `...`
//!   matches any number of lines (none included), trailing whitespace is ignored, and a
//!   no-break space (fsarena's between a figure and its unit) matches a space. A
//!   last line `? N` says the command exits with N; without it, it must exit 0. Lines
//!   starting with `# ` before the first command are comments.
//! * ```` ```console,root ```` blocks need root and loop devices; elsewhere each prints
//!   `SKIP file:line needs root and loop devices: why`.
//! * ```` ```console,no-run ```` blocks are not run; their first line must be
//!   `# not run here: REASON`, which the reader sees, and the test prints
//!   `SKIP file:line REASON`.
//! * Commands run with `bash -c` in one fresh directory per page (so `fsarena run` and then
//!   `fsarena history` on a page share `./fsarena.db`), with `examples` in it linked to the
//!   repository's `examples/`, `COLUMNS=80`, `NO_COLOR=1`, and first on `PATH` a wrapper
//!   `fsarena` that runs the freshly built binary and gives `run`, `doctor` and `cleanup`
//!   an `--image-dir` of their own under /var/tmp unless the command names one.
//!
//! A second test keeps the lab notebook out of user pages: no commit id, load average,
//! issue number, pointer to files outside the repository, or link that does not resolve.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// How a fenced console block is to be treated.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Run,
    Root,
    NoRun(String),
}

/// One `$ ` command with the output it is documented to print.
#[derive(Debug, Clone, PartialEq)]
struct DocCommand {
    line: usize,
    text: String,
    expected: Vec<String>,
    code: i32,
}

#[derive(Debug, Clone, PartialEq)]
struct Block {
    line: usize,
    kind: Kind,
    commands: Vec<DocCommand>,
}

/// The console blocks of a Markdown page (line numbers 1-based, of the opening fence).
fn parse_page(text: &str) -> Result<Vec<Block>, String> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    while let Some((n, l)) = lines.next() {
        let Some(info) = l.trim_start().strip_prefix("```") else {
            continue;
        };
        let info = info.trim();
        let body: Vec<(usize, &str)> = lines
            .by_ref()
            .take_while(|(_, l)| l.trim_start() != "```")
            .collect();
        let kind = match info {
            "console" => Kind::Run,
            "console,root" => Kind::Root,
            "console,no-run" => {
                let first = body.first().map(|(_, l)| *l).unwrap_or("");
                match first.strip_prefix("# not run here: ") {
                    Some(why) if !why.trim().is_empty() => Kind::NoRun(why.trim().to_string()),
                    _ => {
                        return Err(format!(
                            "line {n}: a console,no-run block must begin with \
                             '# not run here: REASON'"
                        ))
                    }
                }
            }
            other if other.starts_with("console") => {
                return Err(format!("line {n}: unknown block kind '{other}'"))
            }
            _ => continue,
        };
        blocks.push(Block {
            line: n,
            commands: parse_commands(&body).map_err(|e| format!("block at line {n}: {e}"))?,
            kind,
        });
    }
    Ok(blocks)
}

fn parse_commands(body: &[(usize, &str)]) -> Result<Vec<DocCommand>, String> {
    let mut out: Vec<DocCommand> = Vec::new();
    let mut continuing = false;
    for &(n, l) in body {
        if continuing {
            let c = out.last_mut().expect("a command continues");
            c.text.push('\n');
            c.text.push_str(l);
            continuing = l.ends_with(" \\");
        } else if let Some(cmd) = l.strip_prefix("$ ") {
            out.push(DocCommand {
                line: n,
                text: cmd.to_string(),
                expected: Vec::new(),
                code: 0,
            });
            continuing = cmd.ends_with(" \\");
        } else if let Some(c) = out.last_mut() {
            c.expected.push(l.trim_end().to_string());
        } else if !(l.starts_with("# ") || l.trim().is_empty()) {
            return Err(format!("line {n}: text before the first '$ ' command"));
        }
    }
    for c in &mut out {
        while c.expected.last().is_some_and(|l| l.is_empty()) {
            c.expected.pop();
        }
        if let Some(code) = c.expected.last().and_then(|l| l.strip_prefix("? ")) {
            c.code = code
                .trim()
                .parse()
                .map_err(|_| format!("line {}: '? {code}' is not an exit code", c.line))?;
            c.expected.pop();
        }
    }
    Ok(out)
}

/// Whether one actual line matches one expected line, `[..]` matching any text.
/// fsarena joins a figure and its unit with a no-break space; the page may show a space.
fn line_matches(pattern: &str, actual: &str) -> bool {
    let actual = actual.replace('\u{a0}', " ");
    let actual = actual.trim_end();
    let parts: Vec<&str> = pattern.trim_end().split("[..]").collect();
    if parts.len() == 1 {
        return parts[0] == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Whether the actual lines match the expected ones, a line `...` matching any number.
fn lines_match(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e == "..." => {
            (0..=actual.len()).any(|k| lines_match(rest, &actual[k..]))
        }
        Some((e, rest)) => match actual.split_first() {
            Some((a, arest)) => line_matches(e, a) && lines_match(rest, arest),
            None => false,
        },
    }
}

/// Whether a command's merged output and exit code are what the page says.
fn output_matches(c: &DocCommand, actual: &str, code: i32) -> bool {
    let mut lines: Vec<&str> = actual.lines().collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    code == c.code && lines_match(&c.expected, &lines)
}

/// The pages whose examples are checked: README.md and the user guide.
fn user_pages(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name();
            if p.is_dir() && name != "validation" && name != "performance" {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut pages = vec![root.join("README.md")];
    if root.join("CONTRIBUTING.md").exists() {
        pages.push(root.join("CONTRIBUTING.md"));
    }
    walk(&root.join("docs"), &mut pages);
    pages.sort();
    pages
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn selected_pages() -> Vec<PathBuf> {
    let root = root();
    match std::env::var("FSARENA_DOCS_FILE") {
        Ok(f) if !f.is_empty() => vec![root.join(f)],
        _ => user_pages(&root),
    }
}

/// The `fsarena` the pages' commands find first on PATH: the binary under test, with an
/// image directory of the test's own for the subcommands that make images.
fn wrapper(bin_dir: &Path, image_dir: &Path) {
    let script = format!(
        r#"#!/bin/bash
real={real:?}
args=("$@")
sub=-1
for ((i = 0; i < ${{#args[@]}}; i++)); do
  case "${{args[i]}}" in
    --db|--color) i=$((i + 1)) ;;
    -*) ;;
    *) sub=$i; break ;;
  esac
done
if [ "$sub" -ge 0 ]; then
  case "${{args[sub]}}" in
    run|doctor|cleanup)
      case " $* " in *" --image-dir"*) ;; *)
        exec "$real" "${{args[@]:0:sub+1}}" --image-dir {img:?} "${{args[@]:sub+1}}" ;;
      esac ;;
  esac
fi
exec "$real" "$@"
"#,
        real = env!("CARGO_BIN_EXE_fsarena"),
        img = image_dir,
    );
    let path = bin_dir.join("fsarena");
    std::fs::write(&path, script).expect("write the fsarena wrapper");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Runs one command as a page's reader would; returns merged output and exit code.
fn run_command(text: &str, cwd: &Path, bin_dir: &Path) -> (String, i32) {
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("exec 2>&1\n{text}"))
        .current_dir(cwd)
        .env("PATH", path)
        .env("COLUMNS", "80")
        .env("NO_COLOR", "1")
        .env_remove("FSARENA_LOG")
        .output()
        .expect("run bash");
    let code = out.status.code().unwrap_or(128);
    (String::from_utf8_lossy(&out.stdout).into_owned(), code)
}

/// Runs every console block of one page; returns the failures, each ready to print.
fn check_page(page: &Path) -> Vec<String> {
    let name = page
        .strip_prefix(root())
        .unwrap_or(page)
        .display()
        .to_string();
    let text = match std::fs::read_to_string(page) {
        Ok(t) => t,
        Err(e) => return vec![format!("{name}: cannot read: {e}")],
    };
    let blocks = match parse_page(&text) {
        Ok(b) => b,
        Err(e) => return vec![format!("{name}: {e}")],
    };
    if blocks.is_empty() {
        return Vec::new();
    }
    let work = tempfile::Builder::new()
        .prefix("fsarena-docs-")
        .tempdir()
        .expect("temp dir");
    let images = common::image_dir();
    // Searchable, as the default image directory is: pgbench's server runs as `postgres`.
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(images.path(), mode).expect("chmod");
    let bin_dir = work.path().join(".bin");
    std::fs::create_dir(&bin_dir).expect("mkdir .bin");
    wrapper(&bin_dir, images.path());
    std::os::unix::fs::symlink(root().join("examples"), work.path().join("examples"))
        .expect("link examples");
    let no_root = common::loop_unavailable();
    let mut failures = Vec::new();
    for b in &blocks {
        match (&b.kind, &no_root) {
            (Kind::NoRun(why), _) => {
                println!("SKIP {name}:{} {why}", b.line);
                continue;
            }
            (Kind::Root, Some(why)) => {
                println!("SKIP {name}:{} needs root and loop devices: {why}", b.line);
                continue;
            }
            _ => {}
        }
        for c in &b.commands {
            let started = std::time::Instant::now();
            let (actual, code) = run_command(&c.text, work.path(), &bin_dir);
            println!(
                "{name}:{} {:.1} s  $ {}",
                c.line,
                started.elapsed().as_secs_f64(),
                c.text.lines().next().unwrap_or("")
            );
            if !output_matches(c, &actual, code) {
                failures.push(format!(
                    "{name}:{}: $ {}\n--- expected (exit {}):\n{}\n--- actual (exit {code}):\n{}",
                    c.line,
                    c.text,
                    c.code,
                    c.expected.join("\n"),
                    actual.trim_end()
                ));
            }
        }
    }
    let left = common::mounts_under(images.path());
    if !left.is_empty() {
        failures.push(format!("{name}: left mounted: {left:?}"));
    }
    failures
}

#[test]
fn every_command_example_prints_what_its_page_says() {
    let started = std::time::Instant::now();
    let mut failures = Vec::new();
    for page in selected_pages() {
        failures.extend(check_page(&page));
    }
    println!(
        "doc commands: {:.0} s in all",
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} example(s) differ from what fsarena prints:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// What a user page must not carry: each pattern with why.
fn lab_notes(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let lower = line.to_lowercase();
        for needle in ["load average", "load avg", "load of "] {
            // A figure: the doctor's check may be described, a machine's load not quoted.
            if let Some(i) = lower.find(needle) {
                let after: String = lower[i + needle.len()..].chars().take(12).collect();
                if after.chars().any(|c| c.is_ascii_digit()) {
                    found.push(format!("line {n}: a load average: {line}"));
                }
            }
        }
        for (needle, why) in [
            ("seeds/", "a file outside the repository"),
            ("shared folder", "a folder outside the repository"),
            ("design.md", "a file outside the repository"),
        ] {
            if lower.contains(needle) {
                found.push(format!("line {n}: {why}: {line}"));
            }
        }
        let words: Vec<&str> = lower
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .collect();
        for w in words.windows(2) {
            let number = !w[1].is_empty() && w[1].bytes().all(|b| b.is_ascii_digit());
            if w[0] == "issue" && number {
                found.push(format!("line {n}: an issue number: {line}"));
            }
            // The project's own list of source articles is not in the repository.
            if (w[0] == "seed" || w[0] == "seeds") && number && w[1].starts_with('0') {
                found.push(format!(
                    "line {n}: a source article by its private number: {line}"
                ));
            }
        }
        for w in &words {
            let hex = w.len() >= 7 && w.bytes().all(|b| b.is_ascii_hexdigit());
            let mixed = w.bytes().any(|b| b.is_ascii_digit()) && w.bytes().any(|b| b > b'9');
            if hex && mixed {
                found.push(format!("line {n}: a commit id '{w}': {line}"));
            }
        }
    }
    found
}

/// Relative links of a page that do not lead to a file in the repository.
fn broken_links(page: &Path, text: &str) -> Vec<String> {
    let dir = page.parent().expect("a page has a directory");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for part in line.split("](").skip(1) {
            let target = part.split(')').next().unwrap_or("");
            let file = target.split('#').next().unwrap_or("");
            if file.is_empty() || file.contains("://") || file.starts_with("mailto:") {
                continue;
            }
            if !dir.join(file).exists() {
                out.push(format!("line {}: link to a missing file: {target}", i + 1));
            }
        }
    }
    out
}

/// The plan files a user copies from `examples/plans/`.
fn example_plans(root: &Path) -> Vec<PathBuf> {
    let mut plans: Vec<PathBuf> = std::fs::read_dir(root.join("examples/plans"))
        .expect("examples/plans")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    plans.sort();
    plans
}

#[test]
fn user_pages_carry_no_lab_notes_and_no_broken_links() {
    let mut problems = Vec::new();
    for plan in example_plans(&root()) {
        let text = std::fs::read_to_string(&plan).expect("read plan");
        let name = plan.strip_prefix(root()).unwrap().display().to_string();
        problems.extend(lab_notes(&text).into_iter().map(|p| format!("{name}: {p}")));
    }
    for page in user_pages(&root()) {
        let text = std::fs::read_to_string(&page).expect("read page");
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        for p in lab_notes(&text)
            .into_iter()
            .chain(broken_links(&page, &text))
        {
            problems.push(format!("{name}: {p}"));
        }
    }
    assert!(
        problems.is_empty(),
        "user pages say what is true now; dated measurements go to docs/validation/ or \
         docs/performance/:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_console_block_of_the_user_pages_parses() {
    for page in user_pages(&root()) {
        let text = std::fs::read_to_string(&page).unwrap();
        if let Err(e) = parse_page(&text) {
            panic!("{}: {e}", page.display());
        }
    }
}

#[cfg(test)]
mod matcher {
    use super::*;

    fn v(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn wildcards_match_within_a_line_only() {
        assert!(line_matches(
            "run [..] stored in fsarena.db",
            "run 2026-x stored in fsarena.db"
        ));
        assert!(line_matches("a[..]b[..]c", "a1b2c"));
        assert!(line_matches("[..]", ""));
        assert!(line_matches("ok  ", "ok"));
        assert!(line_matches("6.66 MiB", "6.66\u{a0}MiB"));
        assert!(!line_matches("a[..]b[..]c", "a1c2b"));
        assert!(!line_matches("ab[..]ba", "aba"));
        assert!(!line_matches("exact", "exactly"));
        assert!(!lines_match(&v(&["a[..]"]), &["a", "b"]));
    }

    #[test]
    fn an_ellipsis_line_matches_any_number_of_lines() {
        let e = v(&["first", "...", "last"]);
        assert!(lines_match(&e, &["first", "last"]));
        assert!(lines_match(&e, &["first", "x", "y", "last"]));
        assert!(!lines_match(&e, &["first", "x", "y"]));
        assert!(!lines_match(&e, &["x", "first", "last"]));
        assert!(lines_match(&v(&["..."]), &[]));
        assert!(lines_match(
            &v(&["a", "...", "c", "..."]),
            &["a", "b", "c", "d"]
        ));
    }

    #[test]
    fn exit_codes_and_continuations_are_read_from_the_block() {
        let page = "text\n```console\n# a comment\n$ false \\\n  || exit 2\nerr\n? 2\n\n\
                    $ true\n```\n";
        let b = parse_page(page).unwrap();
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].kind, Kind::Run);
        let c = &b[0].commands;
        assert_eq!(c[0].text, "false \\\n  || exit 2");
        assert_eq!(c[0].expected, v(&["err"]));
        assert_eq!(c[0].code, 2);
        assert_eq!((c[1].code, c[1].expected.len()), (0, 0));
        assert!(output_matches(&c[0], "err\n\n", 2));
        assert!(!output_matches(&c[0], "err\n", 0));
        assert!(!output_matches(&c[1], "", 1));
    }

    #[test]
    fn a_skipped_block_must_say_why() {
        let ok = "```console,no-run\n# not run here: needs an NFS server\n$ fsarena run\n```\n";
        assert_eq!(
            parse_page(ok).unwrap()[0].kind,
            Kind::NoRun("needs an NFS server".into())
        );
        assert!(parse_page("```console,no-run\n$ fsarena run\n```\n").is_err());
        assert!(parse_page("```console,nope\n$ x\n```\n").is_err());
        assert!(parse_page("```console\ntext first\n$ x\n```\n").is_err());
    }

    #[test]
    fn the_commands_really_run_and_a_drift_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let c = DocCommand {
            line: 1,
            text: "echo out; echo err >&2; exit 3".into(),
            expected: v(&["out", "err"]),
            code: 3,
        };
        let (actual, code) = run_command(&c.text, dir.path(), dir.path());
        assert!(output_matches(&c, &actual, code), "{actual:?} {code}");
        let drifted = DocCommand {
            expected: v(&["out", "other"]),
            ..c.clone()
        };
        assert!(!output_matches(&drifted, &actual, code));
    }

    #[test]
    fn lab_notes_and_broken_links_are_found() {
        assert_eq!(lab_notes("commit 3154e85d of the run").len(), 1);
        assert_eq!(lab_notes("load average 0.4").len(), 1);
        assert_eq!(lab_notes("with a load of 4 to 6").len(), 1);
        assert!(lab_notes("reads `/proc/loadavg`; WARN above a load average [..]").is_empty());
        assert!(lab_notes("IdentityFile=/root/.ssh/id_ed25519").is_empty());
        assert_eq!(lab_notes("as issue 7 found").len(), 1);
        assert_eq!(
            lab_notes("Galli 2001 (seed 000) and seeds 001, 002").len(),
            2
        );
        assert!(lab_notes("--seed 42, seed 555").is_empty());
        assert_eq!(lab_notes("see DESIGN.md in the shared folder").len(), 2);
        assert!(lab_notes("run 20261125-191439-3f63, 1234567 files, deadbeef").is_empty());
        let page = root().join("README.md");
        assert_eq!(broken_links(&page, "[a](docs/nothing.md#x)").len(), 1);
        assert!(broken_links(&page, "[a](Cargo.toml) [b](https://x.org) [c](#top)").is_empty());
    }
}
