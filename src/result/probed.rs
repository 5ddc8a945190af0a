//! The probe's figures as a result records them: latency percentiles, a throughput series,
//! and what competed with a trial. The probe ([`crate::probe`]) builds them; results, the
//! store and the reports read them.

use serde::{Deserialize, Serialize};

/// Percentiles of a histogram, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// A finished series, as reported.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeriesOut {
    pub interval_s: f64,
    pub ops: Vec<u64>,
    pub bytes: Vec<u64>,
}

// Watched and judged by crate::probe::disturb, whose reasons (a), (b), (c) these are.
/// What competed with one trial, stored with it (`disturbance` in JSON).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Disturbance {
    /// Whether the trial is flagged `busy`: some reason below.
    pub busy: bool,
    /// What made it busy: `other-run` (a), `cpu` (b), `device` (c).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// (a) other fsarena runs live during the trial.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_runs: Vec<LiveRun>,
    /// (b) share (0–1) of all CPUs' time used by other processes.
    pub others_cpu_share: Option<f64>,
    /// (c) bytes others read and wrote on the device under the loop image …
    pub others_device_bytes: Option<u64>,
    /// … and their share (0–1) of that device's bytes.
    pub others_device_share: Option<f64>,
    /// Checks not made, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Disturbance {
    /// What made the trial busy, with figures: `another fsarena run: …; others used 48% of
    /// the CPUs`; empty when not busy.
    pub fn describe(&self) -> String {
        self.parts().join("; ")
    }

    /// [`Disturbance::describe`]'s parts, one per reason.
    pub fn parts(&self) -> Vec<String> {
        let mut parts = Vec::new();
        if self.reasons.iter().any(|r| r == "other-run") {
            let runs: Vec<String> = self.other_runs.iter().map(LiveRun::describe).collect();
            parts.push(format!("another fsarena run: {}", runs.join(", ")));
        }
        if let (true, Some(s)) = (self.has("cpu"), self.others_cpu_share) {
            parts.push(format!("others used {:.0}% of the CPUs", s * 100.0));
        }
        if let (true, Some(b), Some(s)) = (
            self.has("device"),
            self.others_device_bytes,
            self.others_device_share,
        ) {
            parts.push(format!(
                "others moved {:.1} MB on the device ({:.0}% of its traffic)",
                b as f64 / 1e6,
                s * 100.0
            ));
        }
        parts
    }

    fn has(&self, reason: &str) -> bool {
        self.reasons.iter().any(|r| r == reason)
    }
}

/// A live fsarena run on this machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LiveRun {
    pub run_id: String,
    pub pid: u32,
    pub image_dir: String,
}

impl LiveRun {
    /// `run ID (pid N, image dir D)`.
    pub fn describe(&self) -> String {
        format!(
            "run {} (pid {}, image dir {})",
            self.run_id, self.pid, self.image_dir
        )
    }
}
