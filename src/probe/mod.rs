//! What is measured around and inside each phase.
//!
//! Workloads never measure anything themselves: they tell a per-worker [`Recorder`] what each
//! operation was (`start` … `done`), and the phase context adds the figures taken around the
//! phase (wall clock, rusage, device counters, statfs, dirty bytes).

pub mod clock;
pub mod dirty;
pub mod disturb;
pub mod hist;
pub mod recorder;
pub mod series;
pub mod sys;
pub mod trust;

pub use clock::Stamp;
pub use hist::LatencyHistogram;
pub use recorder::{Mark, Op, Recorder};
pub use series::Series;
