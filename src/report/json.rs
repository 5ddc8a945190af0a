//! The whole run as JSON (`--json PATH`): the schema is [`crate::result::RunResult`].

use crate::result::RunResult;
use anyhow::Result;

/// Pretty-printed JSON of the run, ending with a newline.
pub fn export(run: &RunResult) -> Result<Vec<u8>> {
    let mut v = serde_json::to_vec_pretty(run)?;
    v.push(b'\n');
    Ok(v)
}
