//! Reading a run back from the JSON document `--json` writes (`crate::report::json`
//! exports it): the version of the document's shape and the check that this fsarena knows
//! it.

use super::RunResult;
use anyhow::{bail, Result};
use serde::Deserialize;

/// The version of the JSON's shape. It is bumped when a field is removed or renamed, or
/// changes type, unit or meaning; adding a field does not bump it (readers ignore fields
/// they do not know).
///
/// * 2: trials may run on aged filesystems (`provision.aging`, `targets[].age`): a reader of
///   shape 1 would take their figures for a fresh filesystem's.
pub const SCHEMA_VERSION: u32 = 2;

/// Reads a JSON document written by `--json`; refuses one written in a newer shape than
/// this fsarena knows.
pub fn parse_document(text: &str) -> Result<RunResult> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_shape_is_refused_and_an_unversioned_one_read() {
        let run = crate::report::fixture_with(Vec::new());
        let mut v = serde_json::to_value(&run).unwrap();
        assert!(
            parse_document(&v.to_string()).is_ok(),
            "no version: shape 1"
        );
        v["schema_version"] = (SCHEMA_VERSION + 1).into();
        let e = parse_document(&v.to_string()).unwrap_err().to_string();
        assert!(e.contains("newer fsarena"), "{e}");
    }
}
