//! Bonnie++ 2.00 CSV lines (format 1.98).

use crate::result::RunResult;
use anyhow::{bail, Result};

/// The bonnie++ CSV lines of the run's bonnie and bonnie-files trials.
pub fn export(_run: &RunResult) -> Result<Vec<u8>> {
    bail!("Bonnie++ CSV export is not built yet")
}
