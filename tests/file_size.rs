//! No file of `src/` over [`MAX_LINES`] lines, so a reader holds each in one pass: a longer
//! file fails the test with its name and length, unless it holds only tests (`tests.rs`,
//! `*_tests.rs`, a module declared under `#[cfg(test)]`), is one of the [`GENERATED`]
//! tables, or is one of the files still [`NOT_YET`] split.

mod common;

use std::path::{Path, PathBuf};

/// The most lines a file of `src/` may have.
const MAX_LINES: usize = 600;

/// Generated data tables, which may be as long as their data (none yet).
const GENERATED: &[&str] = &[];

/// Files over [`MAX_LINES`] that are being split now. The list may only shrink: a file
/// here that is no longer over the limit fails the test, so remove it when it is split.
const NOT_YET: &[&str] = &[];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether the module in `path` is compiled only for tests: declared as `mod name;` right
/// under `#[cfg(test)]` in its parent, or opening with `#![cfg(test)]`.
fn test_only(path: &Path) -> bool {
    let text = std::fs::read_to_string(path).unwrap();
    if text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("//"))
        .is_some_and(|l| l == "#![cfg(test)]")
    {
        return true;
    }
    let name = path.file_stem().unwrap().to_str().unwrap();
    let dir = path.parent().unwrap();
    let (name, parent_dir) = if name == "mod" {
        (
            dir.file_name().unwrap().to_str().unwrap(),
            dir.parent().unwrap(),
        )
    } else {
        (name, dir)
    };
    let parent = ["mod.rs", "lib.rs", "main.rs"]
        .iter()
        .map(|f| parent_dir.join(f))
        .find(|p| p.exists());
    let Some(parent) = parent else {
        return false;
    };
    let text = std::fs::read_to_string(parent).unwrap();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let decl = [format!("mod {name};"), format!("pub mod {name};")];
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| decl.iter().any(|d| d == *l))
        .all(|(i, _)| i > 0 && lines[i - 1] == "#[cfg(test)]")
        && lines.iter().any(|l| decl.iter().any(|d| d == l))
}

/// Each file of `src/` (relative to the crate) over [`MAX_LINES`] lines that may not be,
/// with its length.
fn too_long() -> Vec<(String, usize)> {
    let mut long = Vec::new();
    for (rel, path) in common::source_files() {
        if GENERATED.contains(&rel.as_str()) {
            continue;
        }
        let lines = std::fs::read_to_string(&path).unwrap().lines().count();
        if lines > MAX_LINES && !test_only(&path) {
            long.push((rel, lines));
        }
    }
    long
}

#[test]
fn no_file_in_src_is_over_600_lines() {
    let long = too_long();
    let wrong: Vec<String> = long
        .iter()
        .filter(|(f, _)| !NOT_YET.contains(&f.as_str()))
        .map(|(f, n)| format!("{f}: {n} lines"))
        .collect();
    assert!(
        wrong.is_empty(),
        "files over {MAX_LINES} lines; split each along its seams (a file NAME.rs becomes \
         NAME/mod.rs with siblings; inline tests can move to NAME/tests.rs):\n{}",
        wrong.join("\n")
    );
    let done: Vec<&&str> = NOT_YET
        .iter()
        .filter(|f| !long.iter().any(|(l, _)| l == **f))
        .collect();
    assert!(
        done.is_empty(),
        "NOT_YET names files no longer over {MAX_LINES} lines (or gone); remove them from \
         tests/file_size.rs: {done:?}"
    );
    for f in GENERATED {
        assert!(
            root().join(f).exists(),
            "GENERATED names {f}, which is gone"
        );
    }
}

#[test]
fn modules_declared_under_cfg_test_are_test_only() {
    let src = root().join("src");
    assert!(test_only(&src.join("workload/job/tests_openfiles.rs")));
    assert!(test_only(&src.join("workload/untar/props.rs")));
    assert!(!test_only(&src.join("workload/job/mod.rs")));
    assert!(!test_only(&src.join("corpus/mod.rs")));
}
