//! `fsarena compare A B`: statistical comparison of two runs or targets.

use crate::store::Store;
use anyhow::{bail, Result};

/// Compares `a` and `b` (RUN or RUN:TARGET) from the store; returns the text to print and
/// whether some metric of B is significantly slower than A by more than `fail_if_slower` %.
pub fn command(
    _store: &Store,
    _a: &str,
    _b: &str,
    _fail_if_slower: Option<f64>,
) -> Result<(String, bool)> {
    bail!("compare is not built yet")
}
