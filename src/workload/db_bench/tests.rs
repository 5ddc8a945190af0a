//! db_bench's unit tests: its parameters, argv and engine, and the real db_bench run.

use super::*;
use crate::error::exit_code;

#[test]
fn parameters() {
    let p = |s: &str| crate::workload::WorkloadSpec::parse(&format!("db_bench:{s}")).map(|_| ());
    for bad in [
        "benchmarks=readrandom",
        "benchmarks='fillseq,nosuch'",
        "benchmarks='fillseq,fillseq'",
        "num=0",
        "threads=0",
        "value_size=0",
        "opt='disable_wal=1'",
    ] {
        let e = p(bad).unwrap_err();
        assert_eq!(exit_code(&e), 2, "{bad}: {e:#}");
    }
    p("benchmarks='fillrandom,readrandom',num=1000").unwrap();
}

/// `opt` quoted as the spec's lists are: its items reach db_bench's argv after
/// fsarena's own flags (also in the settling's), and the engine records them.
#[test]
fn opt_items_are_flags_and_settings() {
    let build = |s: &str| {
        let spec = crate::workload::WorkloadSpec::parse(&format!("db_bench:{s}"))?;
        (spec.info.build)(&spec.params)
    };
    for bad in ["opt='db=/tmp/x'", "opt='num=5'", "opt=bloom_bits", "opt='key_size=x'"] {
        let e = build(bad).map(|_| ()).unwrap_err();
        assert_eq!(exit_code(&e), 2, "{bad}: {e:#}");
    }
    let p = crate::workload::WorkloadSpec::parse(
        "db_bench:opt='cache_size=8388608,disable_wal=1,key_size=20',sync=false,num=10",
    )
    .unwrap();
    let w = DbBench {
        opts: opt::parse(p.params.text("opt").unwrap()).unwrap(),
        benchmarks: vec![&PHASES[1]],
        num: 10,
        value_size: 100,
        sync: false,
        threads: 1,
        key_bytes: 20,
        profile: "steady",
    };
    let argv = w.argv("fillrandom", Path::new("/t/rocksdb"), 7, Some(Path::new("/s/r.csv")));
    let tail: Vec<&str> = argv[argv.len() - 4..].iter().map(String::as_str).collect();
    assert_eq!(
        tail,
        [
            "--report_file=/s/r.csv",
            "--cache_size=8388608",
            "--disable_wal=1",
            "--key_size=20",
        ]
    );
    assert!(argv.contains(&"--report_interval_seconds=1".to_string()));
    let settle = w.argv("flush,waitforcompaction", Path::new("/t/rocksdb"), 7, None);
    assert!(settle.iter().all(|a| !a.starts_with("--report")));
    assert!(settle.contains(&"--cache_size=8388608".to_string()));
    let e = w.engine("7.8.3".into());
    assert_eq!(
        e.describe(),
        "RocksDB 7.8.3, profile steady; set cache_size=8388608 disable_wal=1 key_size=20; \
         NOT DURABLE (sync=false, disable_wal=1)"
    );
    assert_eq!(w.data_bytes(), Some(10 * 120 * 3));
}

/// The real db_bench on a temporary directory: every benchmark a phase with db_bench's
/// count, its figures read; `sync=true` syncs the WAL at every write.
#[test]
fn runs_db_bench() {
    if (DB_BENCH.find)().is_none() {
        eprintln!("SKIP db_bench run: db_bench is not installed (rocksdb-tools)");
        return;
    }
    let w = crate::workload::WorkloadSpec::parse("db_bench:num=2000,value_size=64,sync=false").unwrap();
    let phases = crate::workload::testutil::in_context(
        crate::policy::DataPolicy::Random,
        crate::policy::SyncPolicy::End,
        |cx| w.workload.run(cx).map(|_| cx.phases().to_vec()),
    )
    .unwrap();
    let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, BENCHMARKS);
    for p in &phases {
        assert!(p.ops >= 2000, "{}: {}", p.name, p.ops);
        assert!(p.extra["db_bench_ops_per_s"] > 0.0, "{}", p.name);
        assert!(p.extra.contains_key("p99_us"), "{}", p.name);
    }
    assert!(phases[3].extra["found_pct"] > 50.0);
    // The fills' bytes reach an SST at the latest in the settling after them.
    for p in &phases[..2] {
        assert!(p.extra["write_amp"] > 1.0, "{}: {:?}", p.name, p.extra);
        assert!(p.extra["user_write_bytes"] > 0.0, "{}", p.name);
        assert!(p.extra.contains_key("stall_s"), "{}", p.name);
    }
    assert!(!phases[3].extra.contains_key("write_amp"), "{:?}", phases[3].extra);
    // A flag db_bench does not know: the error names it.
    let unknown = crate::workload::WorkloadSpec::parse(
        "db_bench:num=300,benchmarks=fillrandom,opt='nosuchflag=1'",
    )
    .unwrap();
    let e = crate::workload::testutil::in_context(
        crate::policy::DataPolicy::Random,
        crate::policy::SyncPolicy::End,
        |cx| unknown.workload.run(cx),
    )
    .unwrap_err();
    assert!(format!("{e:#}").contains("refused --nosuchflag=1"), "{e:#}");
    let synced = crate::workload::WorkloadSpec::parse(
        "db_bench:num=300,benchmarks=fillrandom,sync=true",
    )
    .unwrap();
    let phases = crate::workload::testutil::in_context(
        crate::policy::DataPolicy::Random,
        crate::policy::SyncPolicy::End,
        |cx| synced.workload.run(cx).map(|_| cx.phases().to_vec()),
    )
    .unwrap();
    assert!(phases[0].extra["wal_syncs"] >= 300.0, "{:?}", phases[0].extra);
    let engine = crate::workload::testutil::in_context(
        crate::policy::DataPolicy::Random,
        crate::policy::SyncPolicy::End,
        |cx| synced.workload.run(cx).map(|_| cx.take_engine()),
    )
    .unwrap()
    .unwrap();
    assert_eq!(engine.name, "RocksDB");
    assert!(engine.version.starts_with(|c: char| c.is_ascii_digit()), "{engine:?}");
    assert_eq!(engine.settings_text(), "sync=true");
    assert_eq!(engine.profile.as_deref(), Some("commit-latency"));
}
