//! Helpers shared by the end-to-end tests: requirements, temp image dirs, leak checks.
#![allow(dead_code)]

pub mod disk;
pub mod mpi;
pub mod sim;
pub mod watch;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Why a root/loop test cannot run here, or `None` when it can.
pub fn loop_unavailable() -> Option<String> {
    if !fsarena::probe::sys::is_root() {
        return Some("not root".into());
    }
    let ok = Command::new("losetup")
        .arg("-f")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        return Some("no free loop device (losetup -f failed)".into());
    }
    None
}

/// Prints a clear SKIP line and returns true when the test must be skipped.
pub fn skip_without_loop(test: &str) -> bool {
    match loop_unavailable() {
        Some(why) => {
            eprintln!("SKIP {test}: needs root and loop devices: {why}");
            true
        }
        None => false,
    }
}

/// Whether this machine can make `fs` (kernel + mkfs); prints a SKIP line when not.
pub fn fs_available(test: &str, fs: &str) -> bool {
    let t = fsarena::provision::fs::FsType::parse(fs).expect("known fs");
    match t.support() {
        fsarena::provision::fs::Support::Yes => true,
        fsarena::provision::fs::Support::No(why) => {
            eprintln!("SKIP {test} on {fs}: {why}");
            false
        }
    }
}

/// Like [`fs_available`], and true for `tmpfs` (always there when loop targets are).
pub fn fs_available_or_tmpfs(test: &str, fs: &str) -> bool {
    fs == "tmpfs" || fs_available(test, fs)
}

/// A fresh image directory on a disk-backed filesystem (not tmpfs).
pub fn image_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("fsarena-test-")
        .tempdir_in("/var/tmp")
        .expect("tempdir in /var/tmp")
}

/// Mounts whose mount point lies under `dir`.
pub fn mounts_under(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let d = dir.to_string_lossy();
    text.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .filter(|m| m.starts_with(&*d))
        .map(String::from)
        .collect()
}

/// Loop devices whose backing file lies under `dir`.
pub fn loops_under(dir: &Path) -> Vec<String> {
    let out = Command::new("losetup")
        .arg("-a")
        .output()
        .expect("losetup -a");
    let d = dir.to_string_lossy();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(&*d))
        .map(String::from)
        .collect()
}

/// Image files left under `dir`.
pub fn images_under(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "img"))
                .collect()
        })
        .unwrap_or_default()
}

/// Asserts that nothing fsarena made under `dir` is left mounted, attached or on disk.
pub fn assert_clean(dir: &Path) {
    assert_eq!(mounts_under(dir), Vec::<String>::new(), "left mounted");
    assert_eq!(loops_under(dir), Vec::<String>::new(), "left attached");
    assert_eq!(images_under(dir), Vec::<PathBuf>::new(), "images left");
}

/// Asserts that a finished run left no record for `fsarena cleanup` under `dir`: no state
/// file in `state/` and no mount point in `mnt/` (what a failed mount must not leave).
pub fn assert_no_records(dir: &Path) {
    let names = |sub: &str| -> Vec<String> {
        std::fs::read_dir(dir.join(sub))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(names("state"), Vec::<String>::new(), "state files left");
    assert_eq!(names("mnt"), Vec::<String>::new(), "mount points left");
}

/// Runs `fsarena cleanup --image-dir DIR`.
pub fn cleanup(dir: &Path) -> std::process::Output {
    Command::new(bin())
        .arg("cleanup")
        .arg("--image-dir")
        .arg(dir)
        .output()
        .expect("run fsarena cleanup")
}

/// The fsarena binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fsarena"))
}

/// What one `fsarena run` did, whatever its outcome.
pub struct RunOutput {
    /// The exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// The printed table.
    pub stdout: String,
    pub stderr: String,
    /// The JSON written to `DIR/out.json`, when there is one.
    pub json: Option<serde_json::Value>,
}

/// Runs `fsarena run ARGS --image-dir DIR --json DIR/out.json --db DIR/results.db` and
/// returns what it did, success or not. The database is given so that no test writes the
/// default `fsarena.db` into the directory it runs in.
pub fn run_any(args: &[&str], image_dir: &Path) -> RunOutput {
    let json = image_dir.join("out.json");
    let out = Command::new(bin())
        .arg("run")
        .args(args)
        .arg("--image-dir")
        .arg(image_dir)
        .arg("--json")
        .arg(&json)
        .arg("--db")
        .arg(image_dir.join("results.db"))
        .output()
        .expect("run fsarena");
    RunOutput {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        json: std::fs::read(&json).ok().map(|b| run_document(&b)),
    }
}

/// Runs `fsarena run ARGS` as [`run_any`] does, asserts success, and returns the JSON and
/// the printed table.
pub fn run_json(args: &[&str], image_dir: &Path) -> (serde_json::Value, String) {
    let out = run_any(args, image_dir);
    assert!(
        out.code == Some(0),
        "fsarena {args:?} failed: {}\n{}",
        out.stderr,
        out.stdout
    );
    (out.json.expect("json written"), out.stdout)
}

/// One repetition of `fsarena run ARGS --fs FS --size SIZE` (quiet) in a fresh image
/// directory, when this machine can make `fs` (root, loop devices and, but for tmpfs, the
/// kernel module and mkfs); otherwise `None` after a SKIP line naming `test`. Asserts that
/// the run completed; returns the image directory (for [`assert_clean`]), the JSON and the
/// printed table.
pub fn run_once_on(
    test: &str,
    args: &[&str],
    fs: &str,
    size: &str,
) -> Option<(tempfile::TempDir, serde_json::Value, String)> {
    if skip_without_loop(test) || !fs_available_or_tmpfs(test, fs) {
        return None;
    }
    let dir = image_dir();
    let mut all = args.to_vec();
    all.extend(["--fs", fs, "--size", size, "--reps", "1", "--quiet"]);
    let (v, table) = run_json(&all, dir.path());
    assert_eq!(v["status"], "complete", "{v}");
    Some((dir, v, table))
}

/// Trial `i` of a run's JSON, asserted to have succeeded.
pub fn ok_trial(run: &serde_json::Value, i: usize) -> &serde_json::Value {
    let t = &run["trials"][i];
    assert_eq!(t["status"], "ok", "{t}");
    t
}

/// The names of a trial's phases, in order.
pub fn phase_names(trial: &serde_json::Value) -> Vec<&str> {
    trial["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect()
}

/// The phase `name` of a trial in the JSON output.
pub fn phase<'a>(trial: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    trial["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no phase {name}"))
}

/// The id of the run in `tests/fixtures/run.json`: bonnie, bonnie-files and postmark, three
/// repetitions each on an ext4 loop image and on tmpfs (recorded with
/// `fsarena run bonnie:size=32MiB bonnie-files:files=1 postmark:number=300,transactions=600
/// --fs ext4,tmpfs --size 256MiB --reps 3`; histogram buckets kept for bonnie's first
/// repetition only, to keep the file small).
pub const FIXTURE_RUN: &str = "20261123-023431-455e";

/// A result database in `dir` holding the fixture run; returns its path.
pub fn fixture_db(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json"),
    )
    .unwrap();
    let run: fsarena::result::RunResult = serde_json::from_str(&text).unwrap();
    let path = dir.join("fixture.db");
    fsarena::store::Store::open(&path)
        .unwrap()
        .import(&run)
        .unwrap();
    path
}

/// Makes `dir/shapes`, a small tree with the symlink shapes of a real `/usr/include`: an
/// absolute link (`x86_64-linux-gnu/mpi -> /etc/alternatives/…`), relative links that
/// leave the tree (`clang/14/include -> ../../../lib/…`), in-tree links to a file and to a
/// directory, and a hard link. Returns its path.
pub fn symlink_shapes(dir: &Path) -> PathBuf {
    use std::os::unix::fs::symlink;
    let s = dir.join("shapes");
    for d in ["x86_64-linux-gnu", "clang/14", "libpng16", "ncursesw"] {
        std::fs::create_dir_all(s.join(d)).unwrap();
    }
    std::fs::write(s.join("curses.h"), vec![b'c'; 3000]).unwrap();
    std::fs::write(s.join("libpng16/png.h"), vec![b'p'; 1234]).unwrap();
    std::fs::hard_link(s.join("curses.h"), s.join("hard.h")).unwrap();
    let links = [
        (
            "/etc/alternatives/mpi-x86_64-linux-gnu",
            "x86_64-linux-gnu/mpi",
        ),
        ("/nonexistent/dir", "absolute-dangling"),
        (
            "../../../lib/llvm-14/lib/clang/14.0.6/include",
            "clang/14/include",
        ),
        ("../curses.h", "ncursesw/curses.h"),
        ("curses.h", "ncurses.h"),
        ("libpng16", "libpng"),
        ("libpng16/png.h", "png.h"),
    ];
    for (target, name) in links {
        symlink(target, s.join(name)).unwrap();
    }
    s
}

/// What a tree below `root` holds, counted with lstat (symlinks not followed): `entries`
/// (every name, `root` included), regular-file bytes counted once per inode (what a tar
/// archive stores) and once per name (what a copy writes), and regular files once per
/// inode.
#[derive(Clone, Copy, Debug, Default)]
pub struct TreeTally {
    pub entries: u64,
    pub files_unique: u64,
    pub bytes_unique: u64,
    pub bytes_all: u64,
}

/// Counts the tree `root` ([`TreeTally`]).
pub fn tally(root: &Path) -> TreeTally {
    use std::os::unix::fs::MetadataExt;
    let mut t = TreeTally::default();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let md = std::fs::symlink_metadata(&p).unwrap();
        t.entries += 1;
        if md.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else if md.is_file() {
            t.bytes_all += md.len();
            if seen.insert((md.dev(), md.ino())) {
                t.files_unique += 1;
                t.bytes_unique += md.len();
            }
        }
    }
    t
}

/// Parses a JSON document that fsarena wrote (`run --json`, `export --json`) and checks it
/// against the published schema, `docs/schema/run.schema.json`; panics naming every
/// violation.
pub fn run_document(bytes: &[u8]) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_slice(bytes).expect("valid json");
    let errors = schema_errors(&v);
    assert!(
        errors.is_empty(),
        "the JSON does not match docs/schema/run.schema.json:\n{}",
        errors.join("\n")
    );
    v
}

/// Where `v` departs from the published schema, `docs/schema/run.schema.json` (at most
/// ten places); empty when it matches.
pub fn schema_errors(v: &serde_json::Value) -> Vec<String> {
    static SCHEMA: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = SCHEMA.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema/run.schema.json");
        let schema = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        jsonschema::validator_for(&schema).expect("the published schema compiles")
    });
    validator
        .iter_errors(v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .take(10)
        .collect()
}

/// The commands that only read the database `db` holding the fixture run, with their
/// arguments: `list`, `history`, `show`, `compare` of its two targets, the three exports,
/// `completions` and `man`.
pub fn reading_commands(db: &str) -> Vec<Vec<String>> {
    let a = format!("{FIXTURE_RUN}:ext4");
    let b = format!("{FIXTURE_RUN}:tmpfs");
    let with_db = |rest: &[&str]| {
        ["--db", db]
            .iter()
            .chain(rest)
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    vec![
        vec!["list".to_string()],
        with_db(&["history"]),
        with_db(&["show", "last"]),
        with_db(&["compare", &a, &b]),
        with_db(&["export", "last", "--csv"]),
        with_db(&["export", "last", "--json"]),
        with_db(&["export", "last", "--bonnie-csv"]),
        vec!["completions".to_string(), "bash".to_string()],
        vec!["man".to_string()],
    ]
}

/// The journal a run named in its error `err`, imported `times` times into a fresh
/// database in `dir`: the number of trials that database then holds (importing again
/// must change nothing).
pub fn recovered_from_journal(err: &str, dir: &Path, times: usize) -> usize {
    let journal = err
        .split_whitespace()
        .map(|w| w.trim_end_matches('`'))
        .find(|w| w.ends_with(".jsonl"))
        .unwrap_or_else(|| panic!("no journal named in: {err}"));
    let fresh = dir.join("recovered.db");
    for _ in 0..times {
        let out = Command::new(bin())
            .args(["--db", fresh.to_str().unwrap(), "import", journal])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = Command::new(bin())
        .args(["--db", fresh.to_str().unwrap(), "export", "last", "--json"])
        .output()
        .unwrap();
    run_document(&out.stdout)["trials"]
        .as_array()
        .unwrap()
        .len()
}

/// The non-test source files of `src/`, sorted, each with its path relative to the crate
/// (`src/report/fit.rs`): every `.rs` file but `tests.rs` and `*_tests.rs`. What
/// `tests/layers.rs` and `tests/file_size.rs` read.
pub fn source_files() -> Vec<(String, PathBuf)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(&root.join("src"), &mut files);
    files.sort();
    files
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name != "tests.rs" && !name.ends_with("_tests.rs")
        })
        .map(|p| {
            (
                p.strip_prefix(root).unwrap().to_string_lossy().into_owned(),
                p,
            )
        })
        .collect()
}
