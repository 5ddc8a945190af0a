//! Reports: they read only the results, never the run. Exporters return bytes.

pub mod json;
pub mod terminal;
