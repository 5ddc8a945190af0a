//! Every figure every workload emits has a declared unit and better side
//! ([`crate::figures`]): each workload runs a small configuration on a directory target,
//! and every figure of every phase it measured — the probe's, per operation kind, and the
//! workload's own `extra` notes — is looked up as the reports look it up.

use crate::figures::{self, Better};
use crate::policy::{DataPolicy, SyncPolicy};
use crate::report::csv::phase_metrics;
use crate::result::PhaseResult;
use crate::workload::testutil::in_context;
use crate::workload::{registry, WorkloadSpec};

/// Small configurations of each workload that runs on a directory target; several for a
/// workload whose figures depend on its mode.
const SMALL: &[&str] = &[
    "bonnie:size=256KiB,chunk=4KiB,seeks=50",
    "bonnie-files:files=1,max_size=4096,min_size=1024,chunk=1000",
    "postmark:number=50,transactions=100",
    "mongo:set=1,scale=0.002",
    "dbrandom:files=1,cycles=10,tries=30",
    "sqlite:mode=insert,rows=100,batch=10,connections=2",
    "sqlite:mode=read,rows=200,transactions=20",
    "job:rw=randwrite,size=256KiB",
    "io500:tasks=2,stonewall=0.3,ior_easy_xfer=64KiB,ior_easy_block=4MiB,\
     ior_hard_segments=200,mdtest_easy_files=300,mdtest_hard_files=300",
    "smallfiles:files=40,per_dir=10,fanout=2",
    "untar:scale=0.002",
    "compile:scale=0.005,initial_dirs=2,runs=4",
    "compile:mode=kernel-build,scale=0.01",
    "metascan:scale=0.01,passes=2",
    "writeback:size=8MiB,probe_files=20,chunk=64KiB,probe_ms=1",
    "command:setup=true,run='echo x > f',clean='rm f'",
    "space:scale=0.005,copies=2",
    "pgbench:scale=1,duration=2",
    "db_bench:num=500",
    "crash:ops=4",
];

/// Configurations run once more with zeros and `--sync none`: the figures a workload emits
/// only under such policies (io500's `unofficial_not_synced`, `unofficial_data_reducible`).
const ODD_POLICIES: &[&str] = &["io500:tasks=1,stonewall=0.2,ior_easy_xfer=64KiB,\
     ior_easy_block=1MiB,ior_hard_segments=50,mdtest_easy_files=50,mdtest_hard_files=50"];

/// Workloads that cannot run here, and why; their tables are still checked for
/// completeness by `crate::figures`' tests.
const NOT_HERE: &[(&str, &str)] = &[(
    "provision",
    "times mkfs and mount: needs a loop target (root)",
)];

/// The phases of one run of `spec` on a fresh directory target; none, said as `SKIP`,
/// when a program it runs is missing here (a database server).
fn phases_of(spec: &str) -> Vec<PhaseResult> {
    let spec = WorkloadSpec::parse(spec).unwrap();
    let workload = (spec.info.build)(&spec.params).unwrap();
    if let Err(e) = crate::workload::programs::check(spec.info.name, spec.info.programs) {
        eprintln!("SKIP the figures of {}: {e:#}", spec.text);
        return Vec::new();
    }
    let run = |cx: &mut crate::context::TrialContext| {
        workload
            .run(cx)
            .unwrap_or_else(|e| panic!("{}: {e:#}", spec.text));
        cx.phases().to_vec()
    };
    if spec.info.programs.is_empty() {
        return in_context(DataPolicy::Random, SyncPolicy::End, run);
    }
    // A server that runs as its own user must reach the work directory.
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let searchable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(base.path(), searchable).unwrap();
    crate::workload::testutil::in_context_at(base.path(), DataPolicy::Random, SyncPolicy::End, run)
}

/// The phases of one run of `spec` on a fresh directory target with zeros and no sync.
fn odd_phases_of(spec: &str) -> Vec<PhaseResult> {
    let spec = WorkloadSpec::parse(spec).unwrap();
    let workload = (spec.info.build)(&spec.params).unwrap();
    in_context(DataPolicy::Zeros, SyncPolicy::None, |cx| {
        workload
            .run(cx)
            .unwrap_or_else(|e| panic!("{}: {e:#}", spec.text));
        cx.phases().to_vec()
    })
}

/// Every run of the walk: (workload name, its phases); run once for all tests here.
fn walk() -> &'static [(&'static str, Vec<PhaseResult>)] {
    static RUNS: std::sync::OnceLock<Vec<(&str, Vec<PhaseResult>)>> = std::sync::OnceLock::new();
    RUNS.get_or_init(|| {
        let name = |spec: &'static str| spec.split(':').next().unwrap();
        let mut runs: Vec<_> = SMALL.iter().map(|s| (name(s), phases_of(s))).collect();
        for spec in ODD_POLICIES {
            runs.push((name(spec), odd_phases_of(spec)));
        }
        runs
    })
}

#[test]
fn every_workload_is_walked_or_says_why_not() {
    for w in registry() {
        let walked = SMALL.iter().any(|s| s.split(':').next() == Some(w.name));
        let excused = NOT_HERE.iter().any(|(n, _)| *n == w.name);
        assert!(walked != excused, "{}: walk it, or say why not", w.name);
    }
}

#[test]
fn every_figure_every_workload_emits_is_declared() {
    let mut undeclared = Vec::new();
    let mut extras = 0;
    for (workload, phases) in walk() {
        let info = registry().iter().find(|w| w.name == *workload).unwrap();
        for p in phases {
            for m in phase_metrics(workload, p) {
                if figures::find(super::figures_of(workload), &p.name, &m.name).is_none() {
                    undeclared.push(format!("{workload} {}: {}", p.name, m.name));
                }
            }
            for key in p.extra.keys() {
                extras += 1;
                let own = info.figures.iter().chain(figures::COMMON);
                let declared = own
                    .filter(|f| f.name == key)
                    .any(|f| f.phases.is_empty() || f.phases.contains(&p.name.as_str()));
                if !declared {
                    undeclared.push(format!("{workload} {}: extra {key}", p.name));
                }
            }
        }
    }
    assert!(undeclared.is_empty(), "undeclared figures: {undeclared:#?}");
    assert!(extras > 50, "the walk saw only {extras} extra figures");
}

/// What the walk cannot reach here, so that a figure added later is walked or named: each
/// declared figure is seen in the walk or listed with why not.
#[test]
fn every_declared_figure_is_walked_or_says_why_not() {
    const UNWALKED: &[(&str, &str, &str)] = &[
        (
            "dbrandom",
            "file_bytes",
            "fill= sizes files from the free space: too big here",
        ),
        ("dbrandom", "free_bytes_before", "fill= only"),
        ("io500", "unofficial_zero_score", "a phase scoring 0"),
        (
            "io500",
            "unofficial_find_found_nothing",
            "find matching nothing (seen at times: timing)",
        ),
        ("io500", "unofficial_not_persistent", "a tmpfs target"),
        (
            "untar",
            "skipped_entries",
            "an archive with entries it cannot make",
        ),
        (
            "metascan",
            "cold_warm_ratio",
            "--cache cold: needs root to drop caches",
        ),
        (
            "writeback",
            "probe_pool_exhausted_s",
            "a probe pool used up: timing-dependent",
        ),
        (
            "sqlite",
            "busy_retries",
            "a connection waiting out the 10 s busy timeout",
        ),
        (
            "crash",
            "crash_states",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_bad_states",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_unmountable",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_repaired",
            "crash states: a loop target (root)",
        ),
        ("crash", "crash_lost", "crash states: a loop target (root)"),
        ("crash", "crash_empty", "crash states: a loop target (root)"),
        (
            "crash",
            "crash_leftover",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_reappeared",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_metadata",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_unpromised_lost",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_garbage",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_writes",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_flushes",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_fsyncs",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_check_s",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_flush_points",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_flush_points_checked",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_reordered",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_reorderings",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_promises",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_promises_broken",
            "crash states: a loop target (root)",
        ),
        ("crash", "crash_torn", "crash states: a loop target (root)"),
        (
            "crash",
            "crash_tearable",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_in_flight",
            "crash states: a loop target (root) and the tracing filesystem",
        ),
        (
            "crash",
            "crash_fua_writes",
            "crash states: a loop target (root) and the tracing filesystem",
        ),
        (
            "crash",
            "crash_beside_fua",
            "crash states: a loop target (root) and the tracing filesystem",
        ),
        (
            "crash",
            "crash_recorded_s",
            "crash states: a loop target (root)",
        ),
        (
            "crash",
            "crash_exposed_pct",
            "crash states: a loop target (root)",
        ),
        (
            "pgbench",
            "rate_1s_p1",
            "a second of transactions between the first and the last (timing)",
        ),
        (
            "pgbench",
            "longest_stall_s",
            "a second of transactions between the first and the last (timing)",
        ),
        (
            "pgbench",
            "checkpoint_buffers",
            "a checkpoint inside the run: minutes (the steady profile)",
        ),
        (
            "pgbench",
            "checkpoint_write_s",
            "a checkpoint inside the run: minutes (the steady profile)",
        ),
        (
            "pgbench",
            "checkpoint_sync_s",
            "a checkpoint inside the run: minutes (the steady profile)",
        ),
        (
            "pgbench",
            "dev_read_bytes_per_tx",
            "device counters: a target on a block device",
        ),
        (
            "db_bench",
            "rate_1s_p1",
            "db_bench reports per-second rates from a loop of one second on",
        ),
        (
            "db_bench",
            "longest_stall_s",
            "db_bench reports per-second rates from a loop of one second on",
        ),
        (
            "db_bench",
            "dev_read_bytes_per_op",
            "device counters: a target on a block device",
        ),
        ("provision", "min_size_bytes", "a loop target"),
        ("provision", "min_size_refused_bytes", "a loop target"),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (workload, phases) in walk() {
        for p in phases {
            seen.extend(p.extra.keys().map(|k| (*workload, k.clone())));
        }
    }
    for w in registry() {
        for f in w.figures {
            let walked = seen.contains(&(w.name, f.name.to_string()))
                || !crate::workload::programs::missing(w.programs).is_empty();
            let excused = UNWALKED
                .iter()
                .any(|(n, k, _)| (*n, *k) == (w.name, f.name));
            // An excused figure may still show up: some depend on timing.
            assert!(
                walked || excused,
                "{} {}: walk it, or say why not",
                w.name,
                f.name
            );
        }
    }
}

/// The scores the io500 run itself emits read as its declarations say, and not as their
/// names' endings would suggest (`score_bw_gib_s` is no time).
#[test]
fn io500_emits_its_scores_as_declared() {
    let phases = phases_of(SMALL.iter().find(|s| s.starts_with("io500:")).unwrap());
    let last = phases.last().unwrap();
    assert!(last.extra["score_bw_gib_s"] > 0.0);
    let bw = figures::find(super::figures_of("io500"), &last.name, "score_bw_gib_s").unwrap();
    assert_eq!((bw.unit, bw.better), ("GiB/s", Better::Higher));
    let total = figures::find(super::figures_of("io500"), &last.name, "score_total").unwrap();
    assert_eq!(total.better, Better::Higher);
}
