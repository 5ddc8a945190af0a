//! The whole run as JSON (`--json PATH`, `export --json`): a [`Document`], whose shape is
//! published as a JSON Schema in `docs/schema/run.schema.json` (compatibility policy in
//! `docs/export.md`).

use crate::result::RunResult;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// The version of the JSON's shape, which [`crate::result::parse_document`] reads back.
pub use crate::result::SCHEMA_VERSION;

/// What `--json` writes: the run, with the version of its shape first.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(title = "fsarena run")]
pub struct Document {
    /// The version of this document's shape ([`SCHEMA_VERSION`]); absent in documents
    /// written before it existed, which have the shape of version 1.
    pub schema_version: u32,
    #[serde(flatten)]
    pub run: RunResult,
    /// The verdicts of the run's phases on time and on work, as `show` prints them
    /// (derived from the trials on export; not read back).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<super::verdicts_json::VerdictJson>,
    /// Each phase's predicted time on the device profiles of `policy.price_on`
    /// (`--price-on`): predictions derived from the measured work, not measurements.
    /// Absent when no profile was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predictions: Option<crate::price::Predictions>,
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
        verdicts: super::verdicts_json::verdicts(run),
        predictions: crate::price::predictions(run),
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
    #[serde(skip_serializing_if = "Vec::is_empty")]
    verdicts: Vec<super::verdicts_json::VerdictJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    predictions: Option<crate::price::Predictions>,
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
        assert_eq!(
            crate::result::parse_document(&text).unwrap().run_id,
            run.run_id
        );
    }
}
