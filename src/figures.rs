//! What every figure is: its unit and which side of it is better, declared by the code that
//! emits it — never guessed from its name (`score_bw_gib_s` ends in `_s` and is a
//! bandwidth; `children_cpu_user_s` is CPU time, not the time of the phase).
//!
//! * The probe's figures of every phase (`wall_s`, `mb_per_s`, the latency percentiles,
//!   the CPU, device and space figures) are [`PHASE`].
//! * The figures the context and the MPI merge attach to any workload's phase (`runs`,
//!   `ranks`, `stonewall_s`, …) are [`COMMON`].
//! * A workload's own figures (its `extra` notes) are the `FIGURES` table beside its
//!   `INFO` ([`crate::workload::WorkloadInfo::figures`]), which the caller hands in
//!   ([`Own`]): this module never reaches the workload registry.
//!
//! Statistics, `compare` and every report look figures up with [`find`]; a per-operation
//! figure (`lat_p99_us:write`, `ops:write`) is the probe's figure before the colon, for the
//! operation named after it. A test runs every workload and checks that each figure it
//! emits is declared.

use serde::{Deserialize, Serialize};

/// Which direction of a figure is the good one.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
    /// Neither: a count, a size, a setting, a CPU share or CPU time.
    #[default]
    None,
}

impl Better {
    /// `higher`, `lower` or `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
            Better::None => "none",
        }
    }
}

/// The declaration of one figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Figure {
    pub name: &'static str,
    /// What the number counts: `s`, `us`, `MB/s` (10^6 bytes), `GiB/s` (2^30 bytes),
    /// `bytes`, `files`, `ratio`, … Never empty.
    pub unit: &'static str,
    pub better: Better,
    /// The phases it has this meaning on; empty for every phase of the workload.
    pub phases: &'static [&'static str],
    /// Whether `compare --fail-if-slower` gates on it besides each phase's headline (a
    /// workload's overall score).
    pub gate: bool,
}

impl Figure {
    /// A figure that is better higher.
    pub const fn higher(name: &'static str, unit: &'static str) -> Self {
        Self::new(name, unit, Better::Higher)
    }

    /// A figure that is better lower.
    pub const fn lower(name: &'static str, unit: &'static str) -> Self {
        Self::new(name, unit, Better::Lower)
    }

    /// A figure with no better side: a count, a size, a setting.
    pub const fn neither(name: &'static str, unit: &'static str) -> Self {
        Self::new(name, unit, Better::None)
    }

    const fn new(name: &'static str, unit: &'static str, better: Better) -> Self {
        Self {
            name,
            unit,
            better,
            phases: &[],
            gate: false,
        }
    }

    /// The same figure, with this meaning only on `phases`.
    pub const fn on(mut self, phases: &'static [&'static str]) -> Self {
        self.phases = phases;
        self
    }

    /// The same figure, gated on by `compare --fail-if-slower` like a headline.
    pub const fn gated(mut self) -> Self {
        self.gate = true;
        self
    }

    /// Whether the figure is a speed: a rate (`…/s`, `kIOPS`) or a time, where "faster"
    /// and "slower" are the words for better and worse.
    pub fn is_speed(&self) -> bool {
        self.unit.ends_with("/s") || matches!(self.unit, "kIOPS" | "s" | "ms" | "us" | "ns")
    }

    fn applies_to(&self, phase: &str) -> bool {
        self.phases.is_empty() || self.phases.contains(&phase)
    }
}

/// The probe's figures of every phase, and per operation kind (`name:op`).
pub const PHASE: &[Figure] = &[
    Figure::lower("wall_s", "s"),
    Figure::higher("ops_per_s", "ops/s"),
    Figure::higher("mb_per_s", "MB/s"),
    Figure::neither("cpu_pct", "%"),
    Figure::neither("cpu_user_s", "s"),
    Figure::neither("cpu_sys_s", "s"),
    Figure::lower("lat_p50_us", "us"),
    Figure::lower("lat_p90_us", "us"),
    Figure::lower("lat_p99_us", "us"),
    Figure::lower("lat_p999_us", "us"),
    Figure::lower("lat_max_us", "us"),
    Figure::lower("write_amplification", "ratio"),
    Figure::neither("dirty_bytes_end", "bytes"),
    Figure::neither("ops", "ops"),
    Figure::neither("bytes", "bytes"),
    Figure::neither("bytes_read", "bytes"),
    Figure::neither("bytes_written", "bytes"),
    Figure::neither("dev_read_bytes", "bytes"),
    Figure::neither("dev_write_bytes", "bytes"),
    Figure::neither("dev_read_ios", "requests"),
    Figure::neither("dev_write_ios", "requests"),
    Figure::neither("dev_flushes", "flushes"),
    Figure::neither("dev_discards", "requests"),
    Figure::neither("dev_discard_bytes", "bytes"),
    Figure::neither("kernel_cpu_s", "s"),
    // The work per operation (crate::result::work): what the filesystem asks of the device
    // and the CPU, better lower.
    Figure::lower("dev_kib_written_per_op", "KiB/op"),
    Figure::lower("dev_writes_per_op", "requests/op"),
    Figure::lower("dev_flushes_per_op", "flushes/op"),
    Figure::lower("dev_reads_per_op", "requests/op"),
    Figure::lower("dev_kib_read_per_op", "KiB/op"),
    Figure::lower("cpu_ms_per_op", "ms/op"),
    // Machine-wide: other processes' writeback is in it; reported, never a "better".
    Figure::neither("kernel_cpu_ms_per_op", "ms/op"),
    Figure::neither("space_used_bytes", "bytes"),
    Figure::neither("first_done_s", "s"),
    Figure::neither("last_done_s", "s"),
];

/// Figures the context or the MPI merge attach to a phase of any workload.
pub const COMMON: &[Figure] = &[
    // A phase measured in parts (compilebench's runs): how many parts.
    Figure::neither("runs", "parts"),
    // Under MPI (src/mpi/merge/mod.rs).
    Figure::neither("ranks", "ranks"),
    Figure::lower("rank_first_done_s", "s"),
    Figure::lower("rank_last_done_s", "s"),
    Figure::lower("stonewall_s", "s"),
];

/// A workload's own figures by the workload's name (as in
/// [`crate::result::Trial::workload`]), empty for a name nobody declared (a run stored by
/// an older fsarena): how the workloads hand their tables in
/// ([`crate::workload::figures_of`] is the one to pass).
pub type Own = fn(&str) -> &'static [Figure];

/// The declaration of figure `metric` of phase `phase` of a workload whose own figures are
/// `own` ([`crate::workload::figures_of`]); `None` when nobody declared it (a run stored by
/// an older fsarena).
pub fn find(own: &'static [Figure], phase: &str, metric: &str) -> Option<&'static Figure> {
    if let Some((base, _op)) = metric.split_once(':') {
        return PHASE.iter().find(|f| f.name == base);
    }
    PHASE
        .iter()
        .chain(COMMON)
        .chain(own)
        .find(|f| f.name == metric && f.applies_to(phase))
}

/// Which side of the figure is better; [`Better::None`] for an undeclared figure.
pub fn better(own: &'static [Figure], phase: &str, metric: &str) -> Better {
    find(own, phase, metric).map_or(Better::None, |f| f.better)
}

/// The figure's unit; `?` for an undeclared figure.
pub fn unit(own: &'static [Figure], phase: &str, metric: &str) -> &'static str {
    find(own, phase, metric).map_or("?", |f| f.unit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{figures_of, registry};

    /// Whether `f` and `g` could both describe a figure of one phase.
    fn overlap(f: &Figure, g: &Figure) -> bool {
        f.name == g.name
            && (f.phases.is_empty()
                || g.phases.is_empty()
                || f.phases.iter().any(|p| g.phases.contains(p)))
    }

    #[test]
    fn every_declaration_is_complete_and_unambiguous() {
        let every_phase: Vec<&Figure> = PHASE.iter().chain(COMMON).collect();
        for (i, f) in every_phase.iter().enumerate() {
            assert!(!f.unit.is_empty() && f.phases.is_empty(), "{}", f.name);
            assert!(
                !every_phase[..i].iter().any(|g| g.name == f.name),
                "{}",
                f.name
            );
        }
        for w in registry() {
            for (i, f) in w.figures.iter().enumerate() {
                let what = format!("{}: {}", w.name, f.name);
                assert!(!f.unit.is_empty() && !f.name.contains(':'), "{what}");
                assert!(
                    !every_phase.iter().any(|g| g.name == f.name),
                    "{what} shadows a figure every phase has"
                );
                assert!(
                    !w.figures[..i].iter().any(|g| overlap(f, g)),
                    "{what} declared twice for a phase"
                );
                for p in f.phases {
                    assert!(
                        w.phases.iter().any(|s| s.name == *p),
                        "{what} names phase {p}, which {} does not have",
                        w.name
                    );
                }
            }
        }
    }

    #[test]
    fn headline_and_per_operation_figures() {
        assert_eq!(
            better(figures_of("bonnie"), "write_block", "wall_s"),
            Better::Lower
        );
        assert_eq!(
            better(figures_of("bonnie"), "write_block", "mb_per_s"),
            Better::Higher
        );
        assert_eq!(unit(figures_of("x"), "y", "lat_p99_us:write"), "us");
        assert_eq!(
            better(figures_of("x"), "y", "lat_p99_us:write"),
            Better::Lower
        );
        assert_eq!(better(figures_of("x"), "y", "ops:write"), Better::None);
        assert_eq!(better(figures_of("x"), "y", "cpu_user_s"), Better::None);
        assert_eq!(unit(figures_of("x"), "y", "nobody_declared_this_s"), "?");
        assert_eq!(
            better(figures_of("x"), "y", "nobody_declared_this_s"),
            Better::None
        );
    }

    #[test]
    fn io500_scores_are_bandwidths_and_rates_not_times() {
        let f = find(figures_of("io500"), "mdtest-hard-delete", "score_bw_gib_s").unwrap();
        assert_eq!((f.unit, f.better), ("GiB/s", Better::Higher));
        let f = find(figures_of("io500"), "mdtest-hard-delete", "score_md_kiops").unwrap();
        assert_eq!((f.unit, f.better), ("kIOPS", Better::Higher));
        assert_eq!(
            better(figures_of("io500"), "mdtest-hard-delete", "score_total"),
            Better::Higher
        );
        assert_eq!(
            unit(figures_of("io500"), "ior-easy-write", "io500_figure"),
            "GiB/s"
        );
        assert_eq!(
            unit(figures_of("io500"), "mdtest-easy-stat", "io500_figure"),
            "kIOPS"
        );
        assert_eq!(unit(figures_of("io500"), "find", "io500_figure"), "kIOPS");
        assert_eq!(
            better(figures_of("io500"), "find", "io500_figure"),
            Better::Higher,
            "find's figure is a rate"
        );
    }

    #[test]
    fn child_cpu_seconds_are_cpu_time_not_the_phase_time() {
        for m in ["children_cpu_user_s", "children_cpu_sys_s"] {
            let f = find(figures_of("command"), "run", m).unwrap();
            assert_eq!((f.unit, f.better), ("s", Better::None), "{m}");
        }
        let f = find(figures_of("command"), "run", "command_s").unwrap();
        assert_eq!((f.unit, f.better), ("s", Better::Lower));
    }
}
