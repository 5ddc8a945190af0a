//! The whole run as JSON (`--json PATH`, `export --json`): a [`Document`], whose shape is
//! published as a JSON Schema in `docs/schema/run.schema.json` (compatibility policy in
//! `docs/export.md`).

use crate::result::RunResult;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// The version of the JSON's shape. It is bumped when a field is removed or renamed, or
/// changes type, unit or meaning; adding a field does not bump it (readers ignore fields
/// they do not know).
pub const SCHEMA_VERSION: u32 = 1;

/// What `--json` writes: the run, with the version of its shape first.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(title = "fsarena run")]
pub struct Document {
    /// The version of this document's shape ([`SCHEMA_VERSION`]); absent in documents
    /// written before it existed, which have the shape of version 1.
    pub schema_version: u32,
    #[serde(flatten)]
    pub run: RunResult,
}

/// `export --json` and `run --json PATH`.
pub const EXPORTER: super::Exporter = super::Exporter {
    flag: "json",
    export: Some("The whole run as JSON (the same document as `run --json`)"),
    report: None,
    run: Some(super::AfterRun {
        help: "Write the whole run as JSON to PATH",
        stored: false,
        says: false,
    }),
    writes: super::Writes::Bytes(export),
};

/// Pretty-printed JSON of the run, ending with a newline.
pub fn export(run: &RunResult) -> Result<Vec<u8>> {
    let doc = DocumentRef {
        schema_version: SCHEMA_VERSION,
        run,
    };
    let mut v = serde_json::to_vec_pretty(&doc)?;
    v.push(b'\n');
    Ok(v)
}

/// [`Document`] borrowing its run, to export without a copy.
#[derive(Serialize)]
struct DocumentRef<'a> {
    schema_version: u32,
    #[serde(flatten)]
    run: &'a RunResult,
}

/// Reads a JSON document written by `--json`; refuses one written in a newer shape than
/// this fsarena knows.
pub fn parse(text: &str) -> Result<RunResult> {
    #[derive(Deserialize)]
    struct Version {
        #[serde(default = "first")]
        schema_version: u32,
    }
    fn first() -> u32 {
        1
    }
    let v: Version = serde_json::from_str(text)?;
    if v.schema_version > SCHEMA_VERSION {
        bail!(
            "written in JSON shape {} by a newer fsarena; this one reads shapes up to {}",
            v.schema_version,
            SCHEMA_VERSION
        );
    }
    Ok(serde_json::from_str(text)?)
}

/// The JSON Schema of [`Document`], as published in `docs/schema/run.schema.json`.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Document)).expect("a schema is JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_reads_back_and_says_its_version() {
        let run = crate::report::fixture_with(Vec::new());
        let text = String::from_utf8(export(&run).unwrap()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["schema_version"], SCHEMA_VERSION);
        assert_eq!(parse(&text).unwrap().run_id, run.run_id);
    }

    #[test]
    fn a_newer_shape_is_refused_and_an_unversioned_one_read() {
        let run = crate::report::fixture_with(Vec::new());
        let mut v = serde_json::to_value(&run).unwrap();
        assert!(parse(&v.to_string()).is_ok(), "no version: shape 1");
        v["schema_version"] = (SCHEMA_VERSION + 1).into();
        let e = parse(&v.to_string()).unwrap_err().to_string();
        assert!(e.contains("newer fsarena"), "{e}");
    }
}
