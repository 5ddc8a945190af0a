//! Unit tests of the result store on databases in temporary directories: opening,
//! migrating, locking, and runs written and read back.

use super::schema::{probe, uri_path, Found, SCHEMA_VERSION};
use super::*;
use crate::result::{OpLatency, PhaseResult, Provision};

fn sample_run(id: &str) -> RunResult {
    RunResult {
        fsarena_version: "0.1.0".into(),
        run_id: id.into(),
        started_at: format!("2026-11-23T00:00:0{}+00:00", id.len() % 10),
        finished_at: None,
        status: "running".into(),
        command_line: vec!["fsarena".into(), "run".into()],
        host: crate::host::host_info(),
        policy: Default::default(),
        can_drop_caches: true,
        targets: vec![TargetInfo {
            name: "ext4".into(),
            fstype: "ext4".into(),
            kind: "loop".into(),
            mkfs_opts: vec!["-F".into()],
            ..Default::default()
        }],
        trials: Vec::new(),
        summaries: Vec::new(),
        mpi: None,
        left_out: Vec::new(),
        notes: Vec::new(),
        resumed_at: Vec::new(),
        planned_trials: None,
    }
}

fn sample_trial(rep: u32) -> Trial {
    Trial {
        target: "ext4".into(),
        workload: "bonnie".into(),
        label: "bonnie".into(),
        params: [("size".to_string(), "1MiB".to_string())].into(),
        rep,
        status: "ok".into(),
        error: None,
        provision: Provision {
            mkfs_s: Some(0.5),
            ..Default::default()
        },
        phases: vec![PhaseResult {
            name: "write_block".into(),
            wall_s: 1.5,
            ops: 100,
            bytes: 1 << 20,
            mb_per_s: 100.0 + f64::from(rep),
            primary: "mb_per_s".into(),
            lat_by_op: vec![OpLatency {
                op: "write".into(),
                count: 100,
                samples: 100,
                lat_us: Default::default(),
                buckets: vec![(1000, 60), (2047, 40)],
            }],
            ..Default::default()
        }],
        peak_rss_bytes: 1234,
        log: (rep == 2).then(|| "/var/tmp/fsarena/logs/x/ext4-bonnie-rep2.log".into()),
        elapsed_s: Some(1.5 * f64::from(rep)),
        ranks: Vec::new(),
        disturbance: (rep == 2).then(|| crate::probe::disturb::Disturbance {
            busy: true,
            reasons: vec!["cpu".into()],
            others_cpu_share: Some(0.5),
            ..Default::default()
        }),
        engine: (rep == 3).then(|| crate::result::Engine {
            name: "PostgreSQL".into(),
            version: "15.10".into(),
            profile: Some("steady".into()),
            settings: [("fsync".to_string(), "off".to_string())].into(),
            not_durable: vec!["fsync=off".into()],
            memory_limit_bytes: Some(192 << 20),
        }),
    }
}

/// Issue 31 items 10 and 12: an empty run id matched the only run; a damaged row gave
/// `Conversion error from type Text at index: 4` with exit 1.
#[test]
fn an_empty_id_and_a_damaged_row_are_clear_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.db");
    let mut s = Store::open(&path).unwrap();
    s.import(&sample_run("20260101-000000-abcd")).unwrap();
    for id in ["", " "] {
        let e = s.resolve(id).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("empty run id"), "{e}");
    }
    assert!(s.load("2026").is_ok());
    s.conn
        .execute("UPDATE runs SET command_line = 'not json'", [])
        .unwrap();
    let e = s.load("2026").unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2, "{e:#}");
    let msg = format!("{e:#}");
    assert!(
        msg.contains(&path.display().to_string())
            && msg.contains("table runs, column command_line"),
        "{msg}"
    );
    s.conn
        .execute("UPDATE runs SET command_line = '[]', pid = 'x'", [])
        .unwrap();
    let msg = format!("{:#}", s.history().unwrap_err());
    assert!(msg.contains("table runs, column pid"), "{msg}");
}

#[test]
fn a_new_database_is_private_and_has_no_shared_memory_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    let s = Store::open(&path).unwrap();
    s.begin_run(&sample_run("p"), &[]).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let mode: String = s
        .conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete");
    for f in ["new.db-wal", "new.db-shm"] {
        assert!(!dir.path().join(f).exists(), "{f}");
    }
}

/// A run's commit holds the file for a moment: a reader opening it then waits, and
/// does not take the locked file for a foreign one.
#[test]
fn a_database_locked_for_a_moment_is_waited_for_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("busy.db");
    drop(Store::open(&path).unwrap());
    let holder = Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let t = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        holder.execute_batch("COMMIT").unwrap();
    });
    let opened = Store::open_existing(&path);
    t.join().unwrap();
    assert!(opened.is_ok(), "{:#}", opened.err().unwrap());
}

/// A database an older fsarena left in WAL mode is switched to the rollback journal
/// when opened alone, and kept in WAL (no waiting, no error) while another connection
/// holds it in WAL mode.
#[test]
fn a_wal_database_is_switched_to_the_rollback_journal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    drop(Store::open(&path).unwrap());
    let old = Connection::open(&path).unwrap();
    let wal: String = old
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(wal, "wal");
    let n: i64 = old
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
    let s = Store::open_existing(&path).unwrap();
    s.begin_run(&sample_run("w"), &[]).unwrap();
    drop((s, old));
    let head = std::fs::read(&path).unwrap();
    assert_eq!(
        head[18..20],
        [2, 2],
        "still WAL while the other connection had it"
    );
    let s = Store::open_existing(&path).unwrap();
    assert_eq!(s.history().unwrap().len(), 1);
    drop(s);
    let head = std::fs::read(&path).unwrap();
    assert_eq!(head[18..20], [1, 1], "a rollback journal now");
    assert!(!dir.path().join("old.db-shm").exists());
}

#[test]
fn a_read_only_open_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    assert!(
        Store::open_read_only(&path).is_err(),
        "a missing file is not made"
    );
    assert!(!path.exists());
    std::fs::write(&path, b"").unwrap();
    assert!(
        Store::open_read_only(&path).is_err(),
        "an empty file is not migrated"
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    drop(Store::open(&path).unwrap());
    let before = std::fs::read(&path).unwrap();
    let s = Store::open_read_only(&path).unwrap();
    assert!(s.trial_times("h").unwrap().is_empty());
    drop(s);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

/// Each `--resume` is recorded, so that the report can say the samples pool several
/// invocations.
#[test]
fn resume_records_when_and_the_report_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("r.db")).unwrap();
    let mut run = sample_run("20261123-000000-resu");
    s.begin_run(&run, &run.targets.clone()).unwrap();
    s.set_plan(&run.run_id, "h", "{}").unwrap();
    run.status = "interrupted".into();
    s.finish_run(&run).unwrap();
    assert_eq!(
        crate::result::resumed_line(&s.load(&run.run_id).unwrap()),
        None
    );
    let resumed = s.resume_run(&run.run_id, "h", "{}").unwrap();
    assert_eq!(resumed.resumed_at.len(), 1);
    s.finish_run(&resumed).unwrap();
    let again = s.resume_run(&run.run_id, "h", "{}").unwrap();
    assert_eq!(again.resumed_at.len(), 2);
    let loaded = s.load(&run.run_id).unwrap();
    assert_eq!(loaded.resumed_at, again.resumed_at);
    let line = crate::result::resumed_line(&loaded).unwrap();
    assert!(line.contains("from 3 invocations"), "{line}");
}

#[test]
fn migrates_an_empty_file_and_round_trips_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.db");
    std::fs::write(&path, b"").unwrap();
    let mut s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
    let mut run = sample_run("20261123-000000-abcd");
    run.notes = vec!["fio: j (t.fio:1) runs as job:rw=read,bs=64KiB,size=4MiB".into()];
    s.begin_run(&run, &run.targets.clone()).unwrap();
    for rep in 1..=3 {
        s.add_trial(&run.run_id, &sample_trial(rep)).unwrap();
    }
    run.status = "complete".into();
    run.finished_at = Some("later".into());
    s.finish_run(&run).unwrap();
    drop(s);
    let s = Store::open(&path).unwrap();
    let back = s.load("2026").unwrap();
    assert_eq!(back.run_id, run.run_id);
    assert_eq!((back.status.as_str(), back.trials.len()), ("complete", 3));
    let p = &back.trials[2].phases[0];
    assert_eq!((p.mb_per_s, p.lat_by_op[0].buckets.len()), (103.0, 2));
    assert_eq!(back.trials[0].provision.mkfs_s, Some(0.5));
    assert_eq!(back.trials[0].log, None);
    assert!(back.trials[1].log.as_deref().unwrap().ends_with("rep2.log"));
    assert_eq!(back.trials[0].disturbance, None);
    assert_eq!(back.trials[1].disturbance, sample_trial(2).disturbance);
    assert_eq!(back.trials[1].engine, None);
    assert_eq!(back.trials[2].engine, sample_trial(3).engine);
    assert_eq!(back.targets[0].mkfs_opts, ["-F"]);
    assert_eq!(back.notes, run.notes);
    let med = back
        .summaries
        .iter()
        .find(|x| x.phase == "write_block" && x.metric == "mb_per_s")
        .unwrap();
    assert_eq!((med.stats.n, med.stats.median), (3, 102.0));
    assert_eq!(s.resolve("last").unwrap(), run.run_id);
    // Trial times for suite estimates: this host's, newest first.
    let times = s.trial_times(&back.host.hostname).unwrap();
    let secs: Vec<f64> = times.iter().map(|t| t.elapsed_s).collect();
    assert_eq!(secs, [4.5, 3.0, 1.5]);
    assert_eq!(times[0].params, back.trials[2].params);
    assert!(s.trial_times("elsewhere").unwrap().is_empty());
}

#[test]
fn a_killed_writer_s_journal_is_read_past_and_a_live_one_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.db");
    let s = Store::open(&live).unwrap();
    let run = sample_run("20261125-010000-aaaa");
    s.begin_run(&run, &run.targets).unwrap();
    drop(s);
    // A writer in the middle of a transaction: its journal is on disk.
    let w = Connection::open(&live).unwrap();
    w.execute_batch(
        "PRAGMA cache_size = 1; BEGIN IMMEDIATE; \
         UPDATE runs SET status = 'half-written'; \
         CREATE TABLE filler AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL \
         SELECT i + 1 FROM n WHERE i < 20000) SELECT i, hex(randomblob(64)) FROM n;",
    )
    .unwrap();
    let mut journal = live.as_os_str().to_owned();
    journal.push("-journal");
    assert!(
        std::path::Path::new(&journal).is_file(),
        "the writer's journal"
    );
    // Copied with it, the journal is a killed writer's: no process holds its lock.
    let dead = dir.path().join("dead.db");
    std::fs::copy(&live, &dead).unwrap();
    let mut dead_journal = dead.as_os_str().to_owned();
    dead_journal.push("-journal");
    std::fs::copy(&journal, &dead_journal).unwrap();
    let ro = Connection::open_with_flags(
        format!("file:{}?mode=ro", uri_path(&dead)),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )
    .unwrap();
    let e = ro
        .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
        .unwrap_err();
    assert!(
        matches!(&e, rusqlite::Error::SqliteFailure(f, _)
            if f.extended_code == rusqlite::ffi::SQLITE_READONLY_ROLLBACK),
        "a hot journal: {e}"
    );
    assert!(matches!(probe(&dead).unwrap(), Found::Fsarena(_)));
    // The live writer's database: the reader waits for its commit, then reads it whole.
    let reader = std::thread::spawn(move || probe(&live).map(|f| matches!(f, Found::Fsarena(_))));
    std::thread::sleep(std::time::Duration::from_millis(200));
    w.execute_batch("COMMIT").unwrap();
    assert!(reader.join().unwrap().unwrap());
}

#[test]
fn prefixes_history_and_dead_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("h.db")).unwrap();
    for id in [
        "20261123-010000-aaaa",
        "20261123-010000-aabb",
        "20261123-020000-cccc",
    ] {
        let run = sample_run(id);
        s.begin_run(&run, &run.targets).unwrap();
    }
    s.add_trial("20261123-020000-cccc", &sample_trial(1))
        .unwrap();
    assert!(s.resolve("20261123-01").is_err(), "ambiguous");
    assert_eq!(
        s.resolve("20261123-010000-aab").unwrap(),
        "20261123-010000-aabb"
    );
    assert!(s.resolve("1999").is_err());
    // The end of an id, as `compare` labels runs, when no id starts so.
    assert_eq!(s.resolve("cccc").unwrap(), "20261123-020000-cccc");
    assert_eq!(s.resolve("abb").unwrap(), "20261123-010000-aabb");
    // This process is alive: its runs are still running.
    let h = s.history().unwrap();
    assert_eq!(h.len(), 3);
    assert!(h.iter().all(|r| r.status == "running"));
    let c = h.iter().find(|r| r.id.ends_with("cccc")).unwrap();
    assert_eq!(
        (c.trials, c.workloads.clone()),
        (1, vec!["bonnie".to_string()])
    );
    // A run written by a process that is gone is shown as interrupted.
    s.conn
        .execute("UPDATE runs SET pid = 999999999 WHERE id LIKE '%aaaa'", [])
        .unwrap();
    let h = s.history().unwrap();
    let a = h.iter().find(|r| r.id.ends_with("aaaa")).unwrap();
    assert_eq!(a.status, "interrupted");
    assert!(crate::report::history::render(&h).contains("interrupted"));
}

#[test]
fn an_mpi_run_keeps_its_ranks_and_replacing_a_trial_replaces_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("m.db")).unwrap();
    let mut run = sample_run("20261123-000000-mpi0");
    run.mpi = Some(crate::result::MpiInfo {
        mode: "fleet".into(),
        hosts: vec!["n0".into(), "n1".into()],
        stonewall: true,
    });
    s.begin_run(&run, &run.targets).unwrap();
    s.set_mpi(&run.run_id, run.mpi.as_ref().unwrap()).unwrap();
    let mut t = sample_trial(1);
    t.ranks = (0..2)
        .map(|rank| crate::result::RankTrial {
            rank,
            host: format!("n{rank}"),
            status: "ok".into(),
            error: None,
            elapsed_s: Some(1.0 + rank as f64),
            phases: t.phases.clone(),
        })
        .collect();
    s.add_trial(&run.run_id, &t).unwrap();
    s.add_trial(&run.run_id, &t).unwrap();
    let back = s.load("last").unwrap();
    assert_eq!(back.mpi, run.mpi);
    let ranks = &back.trials[0].ranks;
    assert_eq!(ranks.len(), 2, "stored once although added twice");
    assert_eq!(
        (ranks[1].host.as_str(), ranks[1].elapsed_s),
        ("n1", Some(2.0))
    );
    assert_eq!(ranks[1].phases.len(), t.phases.len());
    let sum: i64 = s
        .conn
        .query_row(
            "SELECT SUM(ops) FROM rank_phases WHERE position = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sum as u64, 2 * t.phases[0].ops);
}

#[test]
fn a_version_1_database_gains_the_new_columns_and_keeps_its_trials() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    {
        // A database as schema 1 left it: no log column.
        let mut s = Store::open(&path).unwrap();
        let run = sample_run("20261123-000000-v1v1");
        s.begin_run(&run, &run.targets).unwrap();
        s.add_trial(&run.run_id, &sample_trial(1)).unwrap();
        s.conn
            .execute_batch(
                "ALTER TABLE trials DROP COLUMN log; ALTER TABLE trials DROP COLUMN elapsed_s; \
                 ALTER TABLE runs DROP COLUMN plan; ALTER TABLE runs DROP COLUMN plan_hash; \
                 ALTER TABLE runs DROP COLUMN mpi; DROP TABLE rank_phases; \
                 DROP TABLE rank_trials; ALTER TABLE runs DROP COLUMN left_out; \
                 ALTER TABLE runs DROP COLUMN resumed_at; \
                 ALTER TABLE trials DROP COLUMN disturbance; \
                 ALTER TABLE runs DROP COLUMN notes; \
                 ALTER TABLE trials DROP COLUMN engine; \
                 PRAGMA user_version = 1;",
            )
            .unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(
        s.plan_hash("last").unwrap(),
        None,
        "no plan stored before schema 4"
    );
    let run = s.load("last").unwrap();
    assert!(run.notes.is_empty(), "no notes stored before schema 9");
    let t = &run.trials[0];
    assert_eq!(
        (
            run.trials.len(),
            t.log.clone(),
            t.elapsed_s,
            t.disturbance.clone(),
            t.engine.clone()
        ),
        (1, None, None, None, None)
    );
}

#[test]
fn newer_schemas_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.db");
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE runs (id TEXT)").unwrap();
        c.pragma_update(None, "user_version", 99).unwrap();
    }
    let err = Store::open(&path).err().unwrap();
    assert!(format!("{err:#}").contains("newer"), "{err:#}");
}
