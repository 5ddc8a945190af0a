//! Workloads: what to do on a target. One file per workload, each citing its original.
//!
//! A workload is a sequence of named phases run through the [`TrialContext`]; it never
//! measures anything itself.

pub mod bonnie_files;
pub mod params;

use crate::context::{PhaseSpec, TrialContext};
use anyhow::Result;
pub use params::{ParamKind, ParamSpec, Params, Value};

/// A configured workload, ready to run trials.
pub trait Workload: Send + Sync {
    /// Runs all phases of one trial.
    fn run(&self, cx: &mut TrialContext) -> Result<()>;
}

/// A workload kind as listed by `fsarena list` and named on the command line.
pub struct WorkloadInfo {
    pub name: &'static str,
    pub about: &'static str,
    pub params: &'static [ParamSpec],
    /// Phases in the order they run.
    pub phases: &'static [PhaseSpec],
    pub build: fn(&Params) -> Result<Box<dyn Workload>>,
}

/// Every workload fsarena knows, in the order `fsarena list` shows them.
pub fn registry() -> &'static [&'static WorkloadInfo] {
    static ALL: &[&WorkloadInfo] = &[&bonnie_files::INFO];
    ALL
}

/// Looks a workload up by name; the error lists the valid names (exit code 2).
pub fn find(name: &str) -> Result<&'static WorkloadInfo> {
    registry()
        .iter()
        .copied()
        .find(|w| w.name == name)
        .ok_or_else(|| {
            let names: Vec<_> = registry().iter().map(|w| w.name).collect();
            crate::error::usage(format!(
                "unknown workload '{name}'; valid: {}",
                names.join(", ")
            ))
        })
}

/// A workload with its parameters, as named on the command line (`bonnie:size=512MiB`).
pub struct WorkloadSpec {
    pub info: &'static WorkloadInfo,
    pub params: Params,
}

impl WorkloadSpec {
    /// Parses `name[:key=value,...]`.
    pub fn parse(text: &str) -> Result<Self> {
        let (name, rest) = text.split_once(':').unwrap_or((text, ""));
        let info = find(name.trim())?;
        let params = Params::parse(info.name, info.params, rest)?;
        (info.build)(&params)?; // validates cross-parameter constraints now, before any disk is touched
        Ok(Self { info, params })
    }
}
