//! The figures of a run, as recorded and exported (`--json`).
//!
//! Field names are part of fsarena's interface: scripts read them. Units are in the names
//! (`_s` seconds, `_bytes` bytes, `mb_per_s` 10^6 bytes per second, `lat_us` microseconds).

mod aging;
mod device;
mod document;
mod engine;
mod probed;
pub mod work;

pub use aging::{Aging, FileFragments, FreeSpace};
pub use device::DeviceProbe;
pub use document::{parse_document, SCHEMA_VERSION};
pub use engine::Engine;
pub use probed::{Disturbance, LiveRun, Percentiles, SeriesOut};

use crate::policy::Policy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One whole run.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunResult {
    pub fsarena_version: String,
    pub run_id: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// `complete`, `failed` (some trial failed) or `interrupted`.
    pub status: String,
    pub command_line: Vec<String>,
    pub host: HostInfo,
    pub policy: Policy,
    /// Whether caches could be dropped (root); when false, "cold" results are not cold.
    pub can_drop_caches: bool,
    pub targets: Vec<TargetInfo>,
    pub trials: Vec<Trial>,
    pub summaries: Vec<crate::stats::Summary>,
    /// How the ranks of an MPI run (`run --mpi`) worked together; absent for a run of one
    /// process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<MpiInfo>,
    /// Filesystems of the suite this machine could not make, each as `NAME: why` with the
    /// package to install; absent when none was left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// What the run said before it started, kept with its figures: how an fio job file
    /// (`run --fio`) became workloads, the policies it set and, with `--fio-lenient`, what
    /// ran otherwise than fio would; secrets hidden. Absent when there was nothing to say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// When the run was taken up again with `--resume` (RFC 3339, oldest first): its
    /// samples then pool repetitions of several invocations. Absent when never resumed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed_at: Vec<String>,
    /// Trials the plan holds (targets × workloads × repetitions), so that a report can
    /// say how many never started; absent for a run stored by an older fsarena.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_trials: Option<u32>,
}

/// What a resumed run says atop its report: its samples pool repetitions run by several
/// invocations, perhaps hours apart; `None` for a run made by one invocation.
pub fn resumed_line(run: &RunResult) -> Option<String> {
    if run.resumed_at.is_empty() {
        return None;
    }
    Some(format!(
        "resumed at {} (started {}):\n  each figure's repetitions may come from {} \
         invocations, not one",
        run.resumed_at.join(", "),
        run.started_at,
        run.resumed_at.len() + 1
    ))
}

/// What a run says, at its start and atop its report, about the filesystems of its suite
/// it left out ([`RunResult::left_out`]), or `None` when it left out none.
pub fn left_out_line(left_out: &[String]) -> Option<String> {
    if left_out.is_empty() {
        return None;
    }
    let hint = if left_out.iter().any(|l| l.contains("apt-get install")) {
        " (`fsarena setup` installs what is missing)"
    } else {
        ""
    };
    let mut text = format!("left out{hint}:");
    for l in left_out {
        text.push_str("\n  ");
        text.push_str(l);
    }
    Some(text)
}

/// What a run says atop its report about the guests its targets ran in (`run --kernel`):
/// one line per guest with its targets, and under emulation what its figures are worth.
pub fn guest_lines(targets: &[TargetInfo]) -> Vec<String> {
    let mut guests: Vec<(&GuestInfo, Vec<&str>)> = Vec::new();
    for t in targets {
        let Some(g) = &t.guest else { continue };
        match guests.iter_mut().find(|(x, _)| *x == g) {
            Some((_, names)) => names.push(&t.name),
            None => guests.push((g, vec![&t.name])),
        }
    }
    let mut lines = Vec::new();
    for (g, names) in &guests {
        lines.push(format!("{}: {}", g.label(), names.join(", ")));
        if g.emulated() {
            lines.push(format!(
                "  EMULATED: every figure of these targets (marked e) was measured under \
                 QEMU's emulation ({}): compare them only with each other; they show whether \
                 it works and the relative order at best, not absolute speed",
                g.accel
            ));
        }
    }
    lines
}

/// The MPI side of a run: mode, ranks and the host of each rank (docs/distributed.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MpiInfo {
    /// `shared` (all ranks in one directory) or `fleet` (each rank on its own target).
    pub mode: String,
    /// The host name of each rank, in rank order.
    pub hosts: Vec<String>,
    /// Whether the figures at the first rank's finish were computed (`--stonewall`).
    pub stonewall: bool,
}

/// One rank's part of a trial of an MPI run: its own figures, stored beside the
/// aggregate (the trial's `phases`) so that the aggregate can be checked and nodes
/// compared.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankTrial {
    pub rank: usize,
    pub host: String,
    /// `ok`, `failed`, `interrupted` or `stopped` (because another rank failed).
    pub status: String,
    pub error: Option<String>,
    pub elapsed_s: Option<f64>,
    pub phases: Vec<PhaseResult>,
}

/// Facts about the machine.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cores: usize,
    pub mem_bytes: u64,
    /// How much the same small work varied on this machine at the run's start (a run
    /// with `--reps auto` or `--reps-for`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<NoiseProbe>,
}

/// A short noise probe at the start of a run: `rounds` timings each of `io_bytes`
/// written and fdatasync'ed in the image directory, and of a fixed computation, after one
/// unmeasured round of each.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NoiseProbe {
    pub rounds: u32,
    pub io_bytes: u64,
    /// Coefficient of variation (standard deviation / mean) of the write timings.
    pub io_cv: f64,
    /// Coefficient of variation of the computation's timings.
    pub cpu_cv: f64,
}

/// A place the workloads ran.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetInfo {
    pub name: String,
    pub fstype: String,
    /// `loop`, `tmpfs`, `dir` or `device`.
    pub kind: String,
    pub mkfs_opts: Vec<String>,
    /// Mount options as the kernel reports them for the last mount (not only as asked).
    pub mount_opts: String,
    /// Options the user asked for with `--mount-opt`.
    pub requested_mount_opts: String,
    pub size_bytes: u64,
    /// Cold sequential O_DIRECT read rate of the device (10^6 bytes/s), measured once
    /// before the first trial ([`crate::provision::calibrate`]).
    pub device_read_mb_per_s: Option<f64>,
    /// Cold sequential buffered read rate of the device (10^6 bytes/s, through the page
    /// cache with the device's readahead), measured with the O_DIRECT one; absent in runs
    /// made before it was measured.
    #[serde(default)]
    pub device_buffered_read_mb_per_s: Option<f64>,
    /// Whether the loop device runs with direct I/O to its backing file.
    pub loop_direct_io: Option<bool>,
    /// For `dir` targets: the directory given; for `device` targets: the device node.
    pub path: Option<String>,
    pub notes: Vec<String>,
    /// The guest kernel the target ran in (`run --kernel`); absent for a target of the
    /// host's own kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest: Option<GuestInfo>,
    /// How each trial's filesystem is aged (`--age`): `desktop:fill=75,churn=2`; absent
    /// for a target run fresh from mkfs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<String>,
    /// Why the target's work figures ([`work`]) are not measured: it has no block device of
    /// its own (`a memory filesystem: no device`), or shares one with other processes.
    /// Absent when they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_unmeasured: Option<String>,
    /// The device's service times and rates, probed once before the first trial (what
    /// `--price-on measured` prices on); absent for a target without a device of its own
    /// and in runs made before it was probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_probe: Option<DeviceProbe>,
}

/// The virtual machine a guest target ran in: what its figures depend on besides the
/// filesystem (docs/guest-kernels.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GuestInfo {
    /// The guest kernel's release (`6.1.0-56-amd64`).
    pub kernel: String,
    /// `kvm` (hardware virtualisation) or `tcg` (QEMU's emulation: every figure emulated).
    pub accel: String,
    pub vcpus: u32,
    pub memory_bytes: u64,
    /// How the host backs the guest's scratch disk (QEMU's `cache=`, `none`: O_DIRECT on
    /// the host, as a loop device with direct I/O).
    pub disk_cache: String,
}

impl GuestInfo {
    /// Whether the figures were measured under emulation (TCG).
    pub fn emulated(&self) -> bool {
        self.accel != "kvm"
    }

    /// One line for reports: `guest 6.1.0-56-amd64, tcg (emulated), 2 vCPUs, 2.0 GiB,
    /// disk cache=none`.
    pub fn label(&self) -> String {
        format!(
            "guest {}, {}, {} vCPU{}, {}, disk cache={}",
            self.kernel,
            if self.emulated() {
                format!("{} (emulated)", self.accel)
            } else {
                self.accel.clone()
            },
            self.vcpus,
            if self.vcpus == 1 { "" } else { "s" },
            crate::size::format_size(self.memory_bytes),
            self.disk_cache
        )
    }
}

impl TargetInfo {
    /// The fastest the device was measured to deliver a cold read (10^6 bytes/s): the
    /// faster of its O_DIRECT and buffered rates, whichever were measured.
    pub fn device_read_ceiling_mb_per_s(&self) -> Option<f64> {
        match (
            self.device_read_mb_per_s,
            self.device_buffered_read_mb_per_s,
        ) {
            (Some(d), Some(b)) => Some(d.max(b)),
            (d, b) => d.or(b),
        }
    }

    /// This target as stored and shown: secrets in its options and notes hidden
    /// ([`crate::secret`]).
    pub fn without_secrets(&self) -> TargetInfo {
        use crate::secret::{redact, redact_argv, redact_word};
        TargetInfo {
            mkfs_opts: redact_argv(&self.mkfs_opts),
            mount_opts: redact_word(&self.mount_opts),
            requested_mount_opts: redact_word(&self.requested_mount_opts),
            notes: self.notes.iter().map(|n| redact(n)).collect(),
            ..self.clone()
        }
    }
}

/// Provisioning figures of one trial's filesystem.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Provision {
    pub mkfs_s: Option<f64>,
    pub mount_s: Option<f64>,
    pub umount_s: Option<f64>,
    pub capacity_bytes: Option<u64>,
    pub free_bytes: Option<u64>,
    /// How the filesystem was aged before the workload ran (`--age`); absent when it ran
    /// fresh from mkfs. `free_bytes` above is what aging left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aging: Option<Aging>,
}

/// One repetition of one workload on one target.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Trial {
    pub target: String,
    pub workload: String,
    /// What reports group by: the workload's name, or the spec as typed when the run has
    /// the same workload more than once with different parameters.
    pub label: String,
    pub params: BTreeMap<String, String>,
    pub rep: u32,
    /// `ok`, `failed` or `interrupted`.
    pub status: String,
    pub error: Option<String>,
    pub provision: Provision,
    pub phases: Vec<PhaseResult>,
    /// Peak resident memory of fsarena during this trial (VmHWM, reset at trial start).
    pub peak_rss_bytes: u64,
    /// The trial's log file (the output of the `command` workload's commands), kept after
    /// the run; absent when the workload wrote none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Seconds the whole trial took: making the filesystem, the workload with its untimed
    /// setup, teardown. What `fsarena list` estimates suite durations from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_s: Option<f64>,
    /// Under MPI, each rank's own figures (the phases above are their aggregate).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankTrial>,
    /// What competed with the trial (other fsarena runs, other processes' CPU, other I/O
    /// on the device); `busy` trials have their phases flagged `busy`. Absent in runs
    /// recorded before it was watched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<Disturbance>,
    /// The database engine the trial ran, its version and settings; absent for workloads
    /// that run none, and in runs recorded before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<Engine>,
}

impl Trial {
    /// Repetition `rep` of `workload` (reported under `label`, with `params`) on
    /// `target`, as it starts: `ok`, nothing measured yet.
    pub fn new(
        target: &str,
        workload: &str,
        label: &str,
        params: BTreeMap<String, String>,
        rep: u32,
    ) -> Trial {
        Trial {
            target: target.to_string(),
            workload: workload.to_string(),
            label: label.to_string(),
            params,
            rep,
            status: "ok".into(),
            error: None,
            provision: Default::default(),
            phases: Vec::new(),
            peak_rss_bytes: 0,
            log: None,
            elapsed_s: None,
            ranks: Vec::new(),
            disturbance: None,
            engine: None,
        }
    }

    /// A trial that ended with `status` (`failed`, `interrupted`) and `error` before it
    /// measured anything, e.g. one a guest never reported.
    pub fn failed(
        target: &str,
        workload: &str,
        label: &str,
        params: BTreeMap<String, String>,
        rep: u32,
        status: &str,
        error: String,
    ) -> Trial {
        Trial {
            status: status.to_string(),
            error: Some(error),
            ..Trial::new(target, workload, label, params, rep)
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Latency of one operation kind in a phase.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OpLatency {
    pub op: String,
    /// Operations of this kind the phase counted (its `ops` share: characters for the
    /// per-char Bonnie tests).
    pub count: u64,
    /// Latency samples in the histogram: one per timed call, so one per chunk of
    /// characters for the per-char tests, and including timed calls that are not counted
    /// (a seek's write-back, the sync policy's fsync). Absent (0) in runs stored before
    /// it existed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub samples: u64,
    pub lat_us: Percentiles,
    /// The HDR histogram's non-empty buckets (ns, count), so that percentiles can be
    /// recomputed and histograms merged later (`LatencyHistogram::from_buckets`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buckets: Vec<(u64, u64)>,
}

/// The probe's figures for one phase.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PhaseResult {
    pub name: String,
    pub wall_s: f64,
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// (user + sys) / wall × 100, like Bonnie's %CP; above 100 with several busy workers.
    pub cpu_pct: f64,
    pub ops: u64,
    /// Payload bytes moved by the phase's operations (read + written).
    pub bytes: u64,
    /// Of which read (read, stat-with-data, seek operations).
    pub bytes_read: u64,
    /// Of which written (write, append, create-with-data operations).
    pub bytes_written: u64,
    pub ops_per_s: f64,
    /// 10^6 bytes per second.
    pub mb_per_s: f64,
    /// Over all counted operations.
    pub lat_us: Option<Percentiles>,
    /// Per operation kind (including the sync policy's fsyncs).
    pub lat_by_op: Vec<OpLatency>,
    pub series: SeriesOut,
    /// The work the phase asked of the target's own block device (`/sys/block/*/stat`
    /// around it): bytes and requests read and written, flushes and discards (`None` on
    /// kernels without their counters). All `None` on a target without a device of its
    /// own ([`TargetInfo::work_unmeasured`] says why); see [`work`] for the per-operation
    /// figures derived from them.
    pub dev_read_bytes: Option<u64>,
    pub dev_write_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dev_read_ios: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dev_write_ios: Option<u64>,
    /// Requests merged into others before the device saw them (`stat`'s merge counts):
    /// the filesystem sent `dev_read_ios + dev_read_merges` reads (what a throttle above
    /// the merging, as Linux's blkio, counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dev_read_merges: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dev_write_merges: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dev_flushes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dev_discards: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dev_discard_bytes: Option<u64>,
    /// CPU seconds the machine's kernel threads ran during the phase (writeback, journal,
    /// filesystem and loop workers; other processes' kernel work included): the sum of
    /// their `schedstat` run times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_cpu_s: Option<f64>,
    /// dev_write_bytes / bytes_written when the phase wrote payload.
    pub write_amplification: Option<f64>,
    pub space_used_bytes: Option<u64>,
    pub dirty_bytes_end: u64,
    pub first_done_s: Option<f64>,
    pub last_done_s: Option<f64>,
    pub workers: usize,
    /// Honesty flags: `short` (< 0.1 s), `not-synced`, `cache-suspect`,
    /// `cold-unverifiable` (a cold read whose cache state cannot be checked),
    /// `cache-not-dropped`, `warm` (ran unmeasured first: `--cache warm`, a job's ramp),
    /// `busy` (something competed with the trial: [`Trial::disturbance`]).
    pub flags: Vec<String>,
    /// The phase's headline metric: `mb_per_s` or `ops_per_s`.
    pub primary: String,
    /// Unit label for `ops_per_s` (e.g. `seeks/s`, `files/s`).
    pub ops_unit: String,
    /// Workload-specific figures of the phase (Postmark's "files created per second",
    /// Mongo's extents per file, …), summarised and reported like the standard metrics.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, f64>,
    /// The HDR buckets of `lat_us`'s histogram (ns, count), kept only under MPI, where the
    /// ranks' histograms are merged into the aggregate's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lat_buckets: Vec<(u64, u64)>,
}

/// Whether figures of target `a` may be ranked against those of target `b`: not a guest's
/// against the host's, nor a KVM guest's against an emulated one's. `Err` says why.
pub fn comparable(a: &TargetInfo, b: &TargetInfo) -> Result<(), String> {
    let how = |t: &TargetInfo| match &t.guest {
        None => "on the host's own kernel".to_string(),
        Some(g) if g.emulated() => format!("in an emulated guest ({})", g.accel),
        Some(g) => format!("in a {} guest", g.accel),
    };
    let same = match (&a.guest, &b.guest) {
        (None, None) => true,
        (Some(x), Some(y)) => x.accel == y.accel,
        _ => false,
    };
    if same {
        return Ok(());
    }
    Err(format!(
        "{} ran {} and {} {}: a guest's figures include its virtual machine (vCPUs, \
         virtual disk{}), so they are not ranked against those of another kind of machine; \
         compare targets that ran the same way (guests under the same accelerator, e.g. \
         --kernel A --kernel B in one run)",
        a.name,
        how(a),
        b.name,
        how(b),
        if a.guest.iter().chain(&b.guest).any(GuestInfo::emulated) {
            ", and under tcg every instruction is emulated"
        } else {
            ""
        }
    ))
}

/// Refuses to rank the targets named `names` of `runs` (side by side) when
/// [`comparable`] says they are not.
pub fn refuse_mixed(sides: &[(&RunResult, &str)]) -> anyhow::Result<()> {
    let infos: Vec<&TargetInfo> = sides
        .iter()
        .filter_map(|(r, n)| r.targets.iter().find(|t| t.name == *n))
        .collect();
    for i in 1..infos.len() {
        comparable(infos[0], infos[i]).map_err(crate::error::usage)?;
    }
    Ok(())
}

/// The headline figure of a phase (its `primary`).
pub fn primary_value(p: &PhaseResult) -> f64 {
    match p.primary.as_str() {
        "mb_per_s" => p.mb_per_s,
        "wall_s" => p.wall_s,
        _ => p.ops_per_s,
    }
}

/// The unit of a phase's headline figure.
pub fn unit_of(p: &PhaseResult) -> String {
    if p.primary == "mb_per_s" {
        "MB/s".into()
    } else if p.primary == "wall_s" {
        "s".into()
    } else if p.ops_unit.is_empty() {
        "ops/s".into()
    } else {
        p.ops_unit.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(name: &str, accel: Option<&str>) -> TargetInfo {
        TargetInfo {
            name: name.into(),
            guest: accel.map(|a| GuestInfo {
                kernel: "6.1.0-56-amd64".into(),
                accel: a.into(),
                vcpus: 2,
                memory_bytes: 2 << 30,
                disk_cache: "none".into(),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn guests_rank_only_against_guests_of_the_same_accelerator() {
        let host = target("ext4", None);
        let tcg = target("ext4@6.1.0-56", Some("tcg"));
        let tcg2 = target("ext4@6.12.107", Some("tcg"));
        let kvm = target("ext4@6.1.0-56", Some("kvm"));
        assert!(comparable(&host, &target("xfs", None)).is_ok());
        assert!(comparable(&tcg, &tcg2).is_ok());
        let e = comparable(&host, &tcg).unwrap_err();
        assert!(
            e.contains("on the host's own kernel") && e.contains("emulated guest"),
            "{e}"
        );
        let e = comparable(&kvm, &tcg).unwrap_err();
        assert!(e.contains("kvm guest") && e.contains("tcg"), "{e}");
    }
}
