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
];

/// Workloads that cannot run here, and why; their tables are still checked for
/// completeness by `crate::figures`' tests.
const NOT_HERE: &[(&str, &str)] = &[(
    "provision",
    "times mkfs and mount: needs a loop target (root)",
)];

/// The phases of one run of `spec` on a fresh directory target.
fn phases_of(spec: &str) -> Vec<PhaseResult> {
    let spec = WorkloadSpec::parse(spec).unwrap();
    let workload = (spec.info.build)(&spec.params).unwrap();
    in_context(DataPolicy::Random, SyncPolicy::End, |cx| {
        workload
            .run(cx)
            .unwrap_or_else(|e| panic!("{}: {e:#}", spec.text));
        cx.phases().to_vec()
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
    for spec in SMALL {
        let workload = spec.split(':').next().unwrap();
        let info = registry().iter().find(|w| w.name == workload).unwrap();
        for p in phases_of(spec) {
            for m in phase_metrics(workload, &p) {
                if figures::find(workload, &p.name, &m.name).is_none() {
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

/// The scores the io500 run itself emits read as its declarations say, and not as their
/// names' endings would suggest (`score_bw_gib_s` is no time).
#[test]
fn io500_emits_its_scores_as_declared() {
    let phases = phases_of(SMALL.iter().find(|s| s.starts_with("io500:")).unwrap());
    let last = phases.last().unwrap();
    assert!(last.extra["score_bw_gib_s"] > 0.0);
    let bw = figures::find("io500", &last.name, "score_bw_gib_s").unwrap();
    assert_eq!((bw.unit, bw.better), ("GiB/s", Better::Higher));
    let total = figures::find("io500", &last.name, "score_total").unwrap();
    assert_eq!(total.better, Better::Higher);
}
