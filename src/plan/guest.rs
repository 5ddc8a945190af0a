//! The guest side of a plan (`run --kernel KERNEL`, or `kernel = "…"` on a plan's target):
//! which kernels, the machine each is booted in, and the names their targets take. The
//! plan holds it as a value; [`crate::guest`] boots the guests from it.

use super::kernel::{self, Kernel};
use super::Plan;
use anyhow::Result;

/// The guest side of a plan: which kernels, and the machine each is booted in.
#[derive(Clone, Debug)]
pub struct GuestPlan {
    pub kernels: Vec<Kernel>,
    pub vcpus: u32,
    pub memory_bytes: u64,
    /// A guest silent this long is stopped as hung.
    pub idle_timeout_s: f64,
}

impl GuestPlan {
    /// From `--kernel`, `--guest-cpus`, `--guest-memory`, `--guest-timeout`.
    pub fn from_args(a: &crate::cli::RunArgs) -> Result<Option<GuestPlan>> {
        use crate::error::usage;
        if a.kernel.is_empty() {
            return Ok(None);
        }
        let mut kernels: Vec<Kernel> = Vec::new();
        for k in &a.kernel {
            let k = kernel::resolve(k)?;
            if kernels.iter().any(|o| o.release == k.release) {
                return Err(usage(format!("--kernel {} is given twice", k.release)));
            }
            kernels.push(k);
        }
        Self::with_kernels(kernels, a, "--kernel").map(Some)
    }

    /// The guests of a plan whose targets name their kernels (`kernel = "…"`): one per
    /// kernel, in the order the plan first names them; `None` when no target names one.
    pub fn from_plan(plan: &Plan, a: &crate::cli::RunArgs) -> Result<Option<GuestPlan>> {
        use crate::error::usage;
        let mut kernels: Vec<Kernel> = Vec::new();
        for k in plan.targets.iter().filter_map(|t| t.kernel.as_ref()) {
            if !kernels.iter().any(|o| o.release == k.release) {
                kernels.push(k.clone());
            }
        }
        if kernels.is_empty() {
            if a.guest_cpus.is_some() || a.guest_memory.is_some() || a.guest_timeout.is_some() {
                return Err(usage(
                    "--guest-cpus, --guest-memory and --guest-timeout go with --kernel (or \
                     kernel = \"…\" in a plan's target)",
                ));
            }
            return Ok(None);
        }
        let why = "a target of the plan runs in a guest (kernel = \"…\")";
        if a.resume.is_some() {
            return Err(usage(format!(
                "--resume cannot continue this run: {why}; start it again"
            )));
        }
        if a.mpi.is_some() {
            return Err(usage(format!("--mpi cannot run this plan: {why}")));
        }
        Self::with_kernels(kernels, a, "the plan's kernels").map(Some)
    }

    /// The guest side for `kernels` with the machine `--guest-*` describes; `what` names
    /// where the kernels were given, for errors.
    fn with_kernels(
        kernels: Vec<Kernel>,
        a: &crate::cli::RunArgs,
        what: &str,
    ) -> Result<GuestPlan> {
        use crate::error::usage;
        let shorts: Vec<String> = kernels.iter().map(Kernel::short).collect();
        if (1..shorts.len()).any(|i| shorts[..i].contains(&shorts[i])) {
            return Err(usage(format!(
                "{what}: {} name the same release once their flavour is dropped; give \
                 kernels of different releases",
                shorts.join(", ")
            )));
        }
        let vcpus = match a.guest_cpus {
            Some(0) => return Err(usage("--guest-cpus: give at least 1")),
            Some(n) => n,
            None => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        };
        let memory_bytes = match &a.guest_memory {
            Some(t) => {
                crate::size::parse_size(t).map_err(|e| usage(format!("--guest-memory: {e}")))?
            }
            None => 2 << 30,
        };
        if memory_bytes < 512 << 20 {
            return Err(usage("--guest-memory: give at least 512MiB"));
        }
        let idle_timeout_s = match &a.guest_timeout {
            Some(t) => crate::reps::parse_duration_s(t)
                .map_err(|e| usage(format!("--guest-timeout {e}")))?,
            None => 1800.0,
        };
        Ok(GuestPlan {
            kernels,
            vcpus,
            memory_bytes,
            idle_timeout_s,
        })
    }
}

/// Name of a guest's target: `ext4@6.1.0-56`.
pub fn target_name(name: &str, k: &Kernel) -> String {
    format!("{name}@{}", k.short())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_targets_are_named_with_the_short_release() {
        let k = Kernel {
            path: "/boot/vmlinuz-6.1.0-56-amd64".into(),
            release: "6.1.0-56-amd64".into(),
        };
        assert_eq!(target_name("ext4", &k), "ext4@6.1.0-56");
    }
}
