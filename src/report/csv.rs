//! Tidy CSV export.

use crate::result::RunResult;
use anyhow::{bail, Result};

/// One row per run × target × workload × repetition × phase × metric.
pub fn export(_run: &RunResult) -> Result<Vec<u8>> {
    bail!("CSV export is not built yet")
}
