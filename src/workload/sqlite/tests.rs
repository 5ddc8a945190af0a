//! Unit tests of `sqlite`: each mode on a temporary directory, what the database holds
//! afterwards, the fsyncs counted per journal mode and `synchronous`, and the parameters'
//! checks.

use super::*;
use crate::error::exit_code;
use crate::policy::{DataPolicy, SyncPolicy};
use crate::result::PhaseResult;
use crate::workload::testutil::in_context;
use crate::workload::WorkloadSpec;

/// Runs `sqlite:{params}` on a fresh directory; returns its phases and `probe` of the
/// database left behind (opened without the shim, after the workload closed its own).
fn run<R>(params: &str, probe: impl FnOnce(&Connection) -> R) -> (Vec<PhaseResult>, R) {
    let spec = WorkloadSpec::parse(&format!("sqlite:{params}")).unwrap();
    let workload = (spec.info.build)(&spec.params).unwrap();
    in_context(DataPolicy::Random, SyncPolicy::None, |cx| {
        workload.run(cx).unwrap_or_else(|e| panic!("{params}: {e:#}"));
        let c = Connection::open(cx.workdir().join(DB_FILE)).unwrap();
        (cx.phases().to_vec(), probe(&c))
    })
}

fn one(c: &Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn names(phases: &[PhaseResult]) -> Vec<&str> {
    phases.iter().map(|p| p.name.as_str()).collect()
}

#[test]
fn tpcb_keeps_the_balances_equal() {
    let sums = "SELECT (SELECT sum(abalance) FROM pgbench_accounts),
        (SELECT sum(bbalance) FROM pgbench_branches),
        (SELECT sum(tbalance) FROM pgbench_tellers),
        (SELECT sum(delta) FROM pgbench_history)";
    let (phases, (counts, sums)) = run("scale=1,transactions=150,connections=2", |c| {
        let counts = ["branches", "tellers", "accounts", "history"]
            .map(|t| one(c, &format!("SELECT count(*) FROM pgbench_{t}")));
        let sums: [i64; 4] = c
            .query_row(sums, [], |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?]))
            .unwrap();
        (counts, sums)
    });
    assert_eq!(names(&phases), ["load", "run"]);
    assert_eq!(counts, [1, 10, 100_000, 300]);
    assert!(sums.iter().all(|&s| s == sums[0]), "{sums:?}");
    assert_ne!(sums[0], 0, "300 random deltas summing to 0 is unlikely");
    let (load, r) = (&phases[0], &phases[1]);
    assert_eq!(load.ops, 100_011, "rows of the three tables");
    assert_eq!(r.ops, 300);
    assert_eq!(r.extra["sqlite_version_number"], f64::from(version_number()));
    // WAL with synchronous=full: the WAL at each commit, its directory once, checkpoints.
    let per_tx = r.extra["fsyncs_per_tx"];
    assert!((1.0..1.1).contains(&per_tx), "{per_tx} fsyncs per transaction");
    assert_eq!(r.extra["fsyncs"], per_tx * 300.0);
    assert!(load.extra["db_bytes"] > 9e6, "{}", load.extra["db_bytes"]);
}

#[test]
fn the_same_seed_does_the_same_transactions() {
    let history = |c: &Connection| {
        let mut s = c
            .prepare("SELECT aid, tid, bid, delta FROM pgbench_history ORDER BY rowid")
            .unwrap();
        let rows = s.query_map([], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?, r.get::<_, i64>(3)?))
        });
        rows.unwrap().map(Result::unwrap).collect::<Vec<_>>()
    };
    let (_, a) = run("transactions=40,synchronous=off", history);
    let (_, b) = run("transactions=40,synchronous=off", history);
    assert_eq!(a, b);
    assert!(a.iter().all(|&(aid, tid, bid, d)| {
        (1..=100_000).contains(&aid) && (1..=10).contains(&tid) && bid == 1 && d.abs() <= 5000
    }));
    let tellers: std::collections::BTreeSet<_> = a.iter().map(|r| r.1).collect();
    assert!(tellers.len() > 5, "tellers drawn: {tellers:?}");
}

#[test]
fn insert_fills_the_table_and_its_index_in_batches() {
    let (phases, (rows, index, blob)) = run("mode=insert,rows=2500,batch=1000,connections=2", |c| {
        (
            one(c, "SELECT count(*) FROM t"),
            one(c, "SELECT count(*) FROM sqlite_master WHERE type='index' AND name='t_k'"),
            one(c, "SELECT min(length(v)) FROM t"),
        )
    });
    assert_eq!((rows, index, blob), (2500, 1, PAYLOAD as i64));
    assert_eq!(phases[0].ops, 1, "the load only creates the table and its index");
    let r = &phases[1];
    assert_eq!(r.ops, 3, "2500 rows in transactions of 1000");
    assert_eq!(r.bytes, 2500 * PAYLOAD as u64);
    assert!((r.extra["rows_per_s"] - 2500.0 / r.wall_s).abs() < 1e-6);
    assert_eq!(phases[0].extra["fsyncs_per_tx"], phases[0].extra["fsyncs"]);
}

#[test]
fn read_selects_loaded_rows_and_says_whether_they_fit_in_memory() {
    let params = "mode=read,rows=1000,batch=300,transactions=50,connections=2";
    let (phases, (rows, page)) = run(&format!("{params},page_size=8192,journal=delete"), |c| {
        (one(c, "SELECT count(*) FROM t"), one(c, "PRAGMA page_size"))
    });
    assert_eq!((rows, page), (1000, 8192));
    let (load, r) = (&phases[0], &phases[1]);
    assert_eq!((load.ops, load.bytes), (1000, 1000 * PAYLOAD as u64));
    assert_eq!(r.ops, 100);
    assert_eq!(r.bytes, 100 * PAYLOAD as u64, "every select found its row");
    assert_eq!(r.extra["fits_in_cache"], 1.0);
    assert_eq!(r.extra["fsyncs"], 0.0, "point selects sync nothing");
    assert!(r.extra["db_bytes"] >= 1000.0 * PAYLOAD as f64);
    // 4 transactions of 300, 300, 300 and 100 rows, each synced.
    assert!(load.extra["fsyncs_per_tx"] >= 3.0, "{:?}", load.extra);
}

/// Fsyncs per committed transaction of 20 one-row inserts.
fn fsyncs_per_tx(journal: &str, sync: &str) -> f64 {
    let params = format!("mode=insert,rows=20,batch=1,journal={journal},synchronous={sync}");
    let (phases, mode) = run(&params, |c| {
        c.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
            .unwrap()
    });
    // A WAL database stays one; a rollback journal's mode is the connection's own.
    assert_eq!(mode == "wal", journal == "wal", "{mode}");
    assert_eq!(phases[1].ops, 20);
    if sync == "off" {
        assert_eq!(phases[0].extra["fsyncs"], 0.0, "{journal}: load");
    }
    phases[1].extra["fsyncs_per_tx"]
}

#[test]
fn fsyncs_follow_the_journal_and_synchronous() {
    // WAL: the WAL at each commit; its header once, at the first frame of a new WAL, and
    // its directory entry once (22 of 20).
    assert_eq!(fsyncs_per_tx("wal", "full"), 22.0 / 20.0);
    // WAL, normal: no sync at commits, only the header and directory once (checkpoints
    // would sync too, but 20 small commits make none).
    assert_eq!(fsyncs_per_tx("wal", "normal"), 2.0 / 20.0);
    // Rollback journal, full: the journal twice (its pages, then its header's page
    // count), the directory of the new journal, the database; truncate syncs the
    // emptied journal once more.
    assert_eq!(fsyncs_per_tx("delete", "full"), 4.0);
    assert_eq!(fsyncs_per_tx("truncate", "full"), 5.0);
    // normal syncs the journal once.
    assert_eq!(fsyncs_per_tx("delete", "normal"), 3.0);
    assert_eq!(fsyncs_per_tx("truncate", "normal"), 3.0);
    for j in ["wal", "delete", "truncate"] {
        assert_eq!(fsyncs_per_tx(j, "off"), 0.0, "{j}");
    }
}

#[test]
fn bad_parameters_are_usage_errors() {
    for bad in [
        "mode=update",
        "journal=memory",
        "synchronous=extra",
        "page_size=1000",
        "page_size=256",
        "page_size=128KiB",
        "cache_size=100",
        "cache_size=1500",
        "scale=0",
        "scale=100001",
        "rows=0",
        "batch=0",
        "transactions=0",
        "connections=0",
        "connections=65",
        "connections=64,transactions=100000000000",
        "size=1",
    ] {
        let err = WorkloadSpec::parse(&format!("sqlite:{bad}")).err();
        let err = err.unwrap_or_else(|| panic!("{bad} was accepted"));
        assert_eq!(exit_code(&err), 2, "{bad}: {err:#}");
    }
    let ok = "mode=read,page_size=64KiB,cache_size=1MiB,connections=64,journal=truncate";
    assert!(WorkloadSpec::parse(&format!("sqlite:{ok}")).is_ok());
}

#[test]
fn each_mode_applies_its_own_parameters() {
    let with = |mode: &str| {
        std::collections::BTreeMap::from([("mode".to_string(), mode.to_string())])
    };
    let applied = |mode: &str| {
        ["scale", "rows", "batch", "transactions", "journal"]
            .into_iter()
            .filter(|n| param_applies(&with(mode), n))
            .collect::<Vec<_>>()
    };
    assert_eq!(applied("tpcb"), ["scale", "transactions", "journal"]);
    assert_eq!(applied("insert"), ["rows", "batch", "journal"]);
    assert_eq!(applied("read"), ["rows", "batch", "transactions", "journal"]);
}

#[test]
fn connections_take_turns_with_a_rollback_journal() {
    // Four writers on one database with a rollback journal: each waits for the lock in
    // the busy handler, none fails, every row arrives.
    let params = "mode=insert,rows=400,batch=10,connections=4,journal=delete,synchronous=off";
    let (phases, rows) = run(params, |c| one(c, "SELECT count(*) FROM t"));
    assert_eq!(rows, 400);
    assert_eq!(phases[1].ops, 40);
    assert_eq!(phases[1].extra.get("busy_retries"), None, "{:?}", phases[1].extra);
}
