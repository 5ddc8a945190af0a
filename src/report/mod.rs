//! Reports: they read only the results, never the run. Exporters return bytes.

pub mod bonnie_csv;
pub mod charts;
pub mod csv;
pub mod html;
pub mod json;
pub mod terminal;
