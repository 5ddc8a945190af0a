//! fsarena: a filesystem benchmark suite that provisions real filesystems, runs the classic
//! and modern workloads on them, repeats, and reports honestly.
//!
//! The map is `ARCHITECTURE.md` at the repository's root: Plan → Target × Workload ×
//! repetition → Trial → Phases → Store → Report, and the layers the modules below sit in.

pub mod cli;
pub mod cmd;
pub mod compare;
pub mod context;
pub mod corpus;
pub mod data;
pub mod doctor;
pub mod error;
pub mod figures;
pub mod fnv;
#[doc(hidden)]
pub mod fuzzing;
pub mod guest;
pub mod host;
pub mod journal;
pub mod limits;
pub mod list;
pub mod mpi;
pub mod output;
pub mod owned;
pub mod phase_time;
pub mod plan;
pub mod policy;
pub mod price;
pub mod probe;
pub mod progress;
pub mod provision;
pub mod report;
pub mod reps;
pub mod result;
pub mod run;
pub mod secret;
pub mod setup;
pub mod shell;
pub mod signals;
pub mod size;
pub mod state;
pub mod stats;
pub mod store;
pub mod suite;
pub mod term;
pub mod workload;
