//! The published shape of `--json`: `docs/schema/run.schema.json` is the schema of what
//! this fsarena writes (regenerate with `FSARENA_BLESS=1 cargo test --test schema` after a
//! change to the result types, and review the diff against the policy in
//! docs/export.md), and documents of the current shape validate against it.

mod common;

use std::path::Path;

fn published() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema/run.schema.json")
}

#[test]
fn the_published_schema_is_the_one_fsarena_writes() {
    let mut generated = serde_json::to_string_pretty(&fsarena::report::json::schema()).unwrap();
    generated.push('\n');
    if std::env::var_os("FSARENA_BLESS").is_some() {
        std::fs::write(published(), &generated).unwrap();
    }
    let committed = std::fs::read_to_string(published()).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/schema/run.schema.json is not the shape fsarena writes: rerun with \
         FSARENA_BLESS=1, review the diff (a removed, renamed or retyped field bumps \
         SCHEMA_VERSION) and commit it"
    );
}

#[test]
fn the_fixture_run_validates_and_a_broken_one_does_not() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json");
    let text = std::fs::read(path).unwrap();
    let v = common::run_document(&text);
    assert_eq!(v["schema_version"], fsarena::report::json::SCHEMA_VERSION);

    // The validator is not a yes-man: a mistyped and a missing field are both caught.
    for broken in [
        changed(&v, |v| {
            v["trials"][0]["phases"][0]["wall_s"] = "fast".into()
        }),
        changed(&v, |v| {
            v.as_object_mut().unwrap().remove("run_id");
        }),
    ] {
        let errors = common::schema_errors(&broken);
        assert!(
            !errors.is_empty(),
            "accepted: {}",
            &broken.to_string()[..200]
        );
    }
}

fn changed(
    v: &serde_json::Value,
    change: impl FnOnce(&mut serde_json::Value),
) -> serde_json::Value {
    let mut v = v.clone();
    change(&mut v);
    v
}
