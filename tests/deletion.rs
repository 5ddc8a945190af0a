//! The deletion guard end to end: `fsarena cleanup` deletes nothing in a directory without
//! fsarena's marker, and nothing that a symlink or a `..` leads out to, even when a state
//! file names it; what is really its own it still deletes.

mod common;

use std::path::Path;

/// Writes a state file of a dead run (pid 1 is never fsarena) naming `resources`.
fn state_file(dir: &Path, resources: serde_json::Value) {
    std::fs::create_dir_all(dir).unwrap();
    let v = serde_json::json!({ "pid": 1, "run_id": "dead", "resources": resources });
    std::fs::write(dir.join("dead.json"), serde_json::to_vec(&v).unwrap()).unwrap();
}

fn cleanup_text(dir: &Path) -> String {
    let out = common::cleanup(dir);
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn cleanup_in_an_unmarked_directory_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.img"), b"keep").unwrap();
    std::fs::create_dir(d.join("work")).unwrap();
    std::fs::write(d.join("work").join(".fsarena-owned"), b"").unwrap();
    std::fs::write(d.join("work").join("f"), b"keep").unwrap();
    std::fs::create_dir_all(d.join("mnt/m")).unwrap();
    state_file(
        &d.join("state"),
        serde_json::json!([
            { "kind": "image", "path": d.join("a.img") },
            { "kind": "dir", "path": d.join("work") },
            { "kind": "mount", "path": d.join("mnt/m") },
        ]),
    );
    let text = cleanup_text(d);
    assert!(text.contains("not fsarena's"), "{text}");
    for p in ["a.img", "work/f", "mnt/m", "state/dead.json"] {
        assert!(d.join(p).exists(), "{p} was deleted: {text}");
    }
}

#[test]
fn cleanup_refuses_symlinks_and_dot_dots_leading_out() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let (d, o) = (dir.path(), outside.path());
    std::fs::write(d.join(".fsarena-owned"), b"").unwrap();
    std::fs::create_dir(d.join("state")).unwrap();
    std::fs::write(d.join("state/.fsarena-owned"), b"").unwrap();
    std::fs::write(d.join("mine.img"), b"ours").unwrap();
    std::fs::write(o.join("victim.img"), b"keep").unwrap();
    std::fs::create_dir(o.join("work")).unwrap();
    std::fs::write(o.join("work/f"), b"keep").unwrap();
    std::os::unix::fs::symlink(o, d.join("link")).unwrap();
    std::os::unix::fs::symlink(o.join("work"), d.join("worklink")).unwrap();
    let dotdot = d.join("..").join(o.file_name().unwrap()).join("victim.img");
    state_file(
        &d.join("state"),
        serde_json::json!([
            { "kind": "image", "path": d.join("mine.img") },
            { "kind": "image", "path": d.join("link/victim.img") },
            { "kind": "image", "path": dotdot },
            { "kind": "dir", "path": d.join("link/work") },
            { "kind": "dir", "path": d.join("worklink") },
        ]),
    );
    let text = cleanup_text(d);
    assert!(
        !d.join("mine.img").exists(),
        "its own image is deleted: {text}"
    );
    assert_eq!(
        std::fs::read(o.join("victim.img")).unwrap(),
        b"keep",
        "{text}"
    );
    assert_eq!(std::fs::read(o.join("work/f")).unwrap(), b"keep", "{text}");
    assert!(text.contains("refusing"), "{text}");
    // A '..' that leads out is refused before anything is tried: the record is not under
    // the image directory.
    assert!(
        text.contains("../") && text.contains("is not under the image directory"),
        "{text}"
    );
    assert!(text.contains("symbolic link"), "{text}");
}
