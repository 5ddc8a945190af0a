use super::*;
use profile::PARAMS;
use crate::error::exit_code;

#[test]
fn transaction_log_lines() {
    // pgbench 15: client_id transaction_no time script_no time_epoch time_us
    assert_eq!(
        parse_tx_line("0 199 2241 0 1732881234 567890"),
        Some(Tx {
            latency_us: Some(2241),
            end_epoch_us: 1_732_881_234_567_890
        })
    );
    // With --rate (schedule lag) and retries, and a failed transaction.
    assert_eq!(
        parse_tx_line("3 7 1000 0 1700000000 5 120 0").map(|t| t.latency_us),
        Some(Some(1000))
    );
    assert_eq!(
        parse_tx_line("1 8 failed 0 1700000000 5").map(|t| t.latency_us),
        Some(None)
    );
    for bad in ["", "0 1 2", "0 1 x 0 1700000000 5", "0 1 5 0 t 5"] {
        assert_eq!(parse_tx_line(bad), None, "{bad:?}");
    }
}

#[test]
fn summary_figures() {
    let out = "transaction type: <builtin: TPC-B (sort of)>\n\
               number of failed transactions: 3 (0.100%)\n\
               latency average = 1.234 ms\n\
               initial connection time = 2.345 ms\n\
               tps = 810.412345 (without initial connection time)\n";
    assert_eq!(summary_tps(out), Some(810.412345));
    assert_eq!(summary_failed(out), Some(3));
    let old = "tps = 700.1 (including connections establishing)\n\
               tps = 701.5 (excluding connections establishing)\n";
    assert_eq!(summary_tps(old), Some(701.5));
    assert_eq!(summary_tps("nothing"), None);
}

#[test]
fn parameters() {
    let p = |s: &str| crate::workload::WorkloadSpec::parse(&format!("pgbench:{s}")).map(|_| ());
    if postgres_bin_dir().is_none() {
        // Refused as missing before its parameters are looked at by a plan; parsing alone
        // still validates.
        eprintln!("SKIP parts of pgbench parameters: PostgreSQL is not installed");
    }
    for bad in [
        "scale=0",
        "clients=2,jobs=3",
        "duration=0",
        "duration=300ms",
        "fsync=maybe",
        "shared_buffers=64KiB",
        "shared_buffers=lots",
        "clients=2000",
    ] {
        let e = p(bad).unwrap_err();
        assert_eq!(exit_code(&e), 2, "{bad}: {e:#}");
    }
    let params = Params::parse(
        "pgbench",
        PARAMS,
        "fsync=off,shared_buffers=256MiB,clients=150,jobs=2",
    )
    .unwrap();
    let w = Pgbench::from_params(&params).unwrap();
    let s = w.server_settings();
    assert!(s.contains(&("fsync".to_string(), "off".to_string())), "{s:?}");
    assert!(s.contains(&("shared_buffers".to_string(), "262144kB".to_string())), "{s:?}");
    assert!(s.contains(&("max_connections".to_string(), "160".to_string())), "{s:?}");
    assert!(!s.iter().any(|(k, _)| *k == "synchronous_commit"), "{s:?}");
    assert_eq!(w.data_bytes(), Some(BASE_BYTES + 10 * BYTES_PER_SCALE));
    let p = Params::parse("pgbench", PARAMS, "duration=2m").unwrap();
    assert_eq!(Pgbench::from_params(&p).unwrap().duration, 120);
    let p = Params::parse("pgbench", PARAMS, "duration=1.6").unwrap();
    assert_eq!(Pgbench::from_params(&p).unwrap().duration, 2);
}

/// A real server in a temporary directory: initdb, start on a socket only, a small load
/// and a few seconds of transactions, stop; nothing left running.
#[test]
fn runs_a_real_server_and_stops_it() {
    let Some(_) = postgres_bin_dir() else {
        eprintln!("SKIP pgbench run: PostgreSQL is not installed");
        return;
    };
    // The server's user must reach the work directory: a tempdir under a searchable base.
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    std::fs::set_permissions(
        base.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let w = crate::workload::WorkloadSpec::parse("pgbench:scale=1,duration=2,clients=2,jobs=2")
        .unwrap();
    let phases = crate::workload::testutil::in_context_at(
        base.path(),
        crate::policy::DataPolicy::Random,
        crate::policy::SyncPolicy::End,
        |cx| {
            let r = w.workload.run(cx);
            let datadir = cx.workdir().join("pgdata");
            assert!(
                crate::state::postgres_pid(&datadir, None).is_none(),
                "the server still runs"
            );
            r.map(|_| cx.phases().to_vec())
        },
    )
    .unwrap();
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[0].name, "load");
    let run = &phases[1];
    assert_eq!(run.name, "run");
    assert!(run.ops > 10, "{} transactions", run.ops);
    assert!(run.extra["pgbench_tps"] > 0.0);
    assert_eq!(run.extra["failed_tx"], 0.0);
    assert!(phases[0].extra["database_bytes"] > 10e6);
}

/// The profiles set the defaults of what is not given, and what is recorded is what runs.
#[test]
fn a_profile_sets_the_defaults_a_given_parameter_wins() {
    let spec = |text: &str| crate::workload::WorkloadSpec::parse(text).unwrap();
    let recorded = |text: &str| spec(text).params.to_text_map();
    let r = recorded("pgbench");
    assert_eq!(
        (r["profile"].as_str(), r["clients"].as_str(), r["duration"].as_str()),
        ("commit-latency", "1", "30")
    );
    assert_eq!((r["protocol"].as_str(), r["memory"].as_str()), ("simple", "derived"));
    let r = recorded("pgbench:profile=steady,clients=4");
    assert_eq!(
        (r["clients"].as_str(), r["jobs"].as_str(), r["duration"].as_str()),
        ("4", "2", "600")
    );
    assert_eq!(r["set"], "checkpoint_timeout=1min");
    let r = recorded("pgbench:profile=steady,set='checkpoint_timeout=5min,work_mem=8MB'");
    assert_eq!(r["set"], "checkpoint_timeout=5min,work_mem=8MB", "the user's wins");
    let r = recorded("pgbench:profile=io-bound");
    assert_eq!((r["scale"].as_str(), r["memory"].as_str()), ("40", "192MiB"));
    assert_eq!(r["shared_buffers"], "32MiB");
    let w = Pgbench::from_params(&spec("pgbench:profile=io-bound,memory=96MiB").params).unwrap();
    assert_eq!((w.memory, w.warmup, w.protocol.as_str()), (Some(96 << 20), 30, "prepared"));
    // Resolving again changes nothing (from_params resolves what it is given).
    assert_eq!(
        Pgbench::from_params(&spec("pgbench:profile=steady").params).unwrap().settings,
        [("checkpoint_timeout".to_string(), "1min".to_string())]
    );
    for bad in [
        "pgbench:profile=io-bound,scale=5",
        "pgbench:profile=io-bound,memory=32MiB",
        "pgbench:profile=fast",
    ] {
        let e = crate::workload::WorkloadSpec::parse(bad).err().unwrap();
        assert_eq!(exit_code(&e), 2, "{bad}: {e:#}");
    }
}
