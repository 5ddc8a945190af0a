//! The database engines on real filesystems: pgbench's PostgreSQL server, killed with
//! fsarena, is stopped by `fsarena cleanup`; db_bench and pgbench run on a loop target from
//! the command line.

mod common;

use common::watch::postgres_under;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Whether PostgreSQL's server programs are installed (Debian's layout or the PATH).
fn postgres_installed(test: &str) -> bool {
    let debian = std::fs::read_dir("/usr/lib/postgresql")
        .map(|rd| {
            rd.flatten()
                .any(|e| e.path().join("bin/postgres").is_file())
        })
        .unwrap_or(false);
    if !debian {
        eprintln!("SKIP {test}: PostgreSQL is not installed (Debian package postgresql)");
    }
    debian
}

/// An image directory the server (as `postgres`) can search, when this machine has loop
/// devices, ext4 and PostgreSQL; else `None` after a SKIP line naming `test`.
fn ext4_and_postgres(test: &str) -> Option<tempfile::TempDir> {
    if common::skip_without_loop(test)
        || !common::fs_available(test, "ext4")
        || !postgres_installed(test)
    {
        return None;
    }
    Some(searchable_image_dir())
}

/// The image directory for a server that runs as `postgres`: searchable by it.
fn searchable_image_dir() -> tempfile::TempDir {
    let dir = common::image_dir();
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(dir.path(), mode).unwrap();
    dir
}

/// The socket directories and server pids the state files under `dir` name.
fn recorded_servers(dir: &Path) -> Vec<(PathBuf, Option<i32>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir.join("state"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        for r in v["resources"].as_array().into_iter().flatten() {
            if r["kind"] == "postgres" {
                let pid = r["pid"].as_i64().map(|p| p as i32);
                out.push((PathBuf::from(r["sockets"].as_str().unwrap()), pid));
            }
        }
    }
    out
}

/// The directories for pgbench's logs under the image directory `dir`.
fn pgbench_logs(dir: &Path) -> Vec<PathBuf> {
    let rd = std::fs::read_dir(dir).into_iter().flatten().flatten();
    rd.map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("pgbench-logs-"))
        })
        .collect()
}

/// `fsarena run WORKLOAD` on an ext4 image of `size` in `dir`, quiet, in the background.
fn spawn_run(dir: &Path, workload: &str, size: &str) -> std::process::Child {
    Command::new(common::bin())
        .args([
            "run", workload, "--fs", "ext4", "--size", size, "--reps", "1", "--quiet",
        ])
        .arg("--image-dir")
        .arg(dir)
        .arg("--db")
        .arg(dir.join("results.db"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn kill_9_during_pgbench_then_cleanup_stops_the_server() {
    let Some(dir) = ext4_and_postgres("kill_9_during_pgbench_then_cleanup_stops_the_server") else {
        return;
    };
    let mut child = spawn_run(dir.path(), "pgbench:scale=1,duration=600", "512MiB");
    // Until the run phase: the server runs and pgbench's clients are connected.
    let t = Instant::now();
    let mut seen = Vec::new();
    while t.elapsed() < Duration::from_secs(120) {
        seen = postgres_under(dir.path());
        let pgbench = std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim() == "pgbench")
        });
        if !seen.is_empty() && pgbench {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(!seen.is_empty(), "no server started within 120 s");
    std::thread::sleep(Duration::from_secs(2));
    child.kill().expect("kill -9");
    child.wait().unwrap();
    assert!(
        !postgres_under(dir.path()).is_empty(),
        "kill -9 leaves the server running"
    );
    let servers = recorded_servers(dir.path());
    assert_eq!(
        servers.len(),
        1,
        "the state file names the server: {servers:?}"
    );
    let (sockets, pid) = &servers[0];
    assert!(sockets.exists());
    // pgbench's own logs are in a directory of the run's, recorded, not in /tmp.
    let logs = pgbench_logs(dir.path());
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert!(
        pid.is_some_and(|p| postgres_under(dir.path()).contains(&p)),
        "the state file holds the server's pid: {pid:?}"
    );
    let out = common::cleanup(dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cleanup failed: {text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(postgres_under(dir.path()), Vec::<i32>::new(), "{text}");
    assert!(!sockets.exists(), "the socket directory is left: {text}");
    assert!(!logs[0].exists(), "pgbench's logs are left: {text}");
    common::assert_clean(dir.path());
    common::assert_no_records(dir.path());
}

/// The io-bound profile's server runs inside a memory group of fsarena's, recorded in the
/// state file: a `kill -9` of fsarena leaves both, `cleanup` removes both.
#[test]
fn kill_9_during_io_bound_pgbench_then_cleanup_removes_its_memory_group() {
    let test = "kill_9_during_io_bound_pgbench_then_cleanup_removes_its_memory_group";
    let Some(dir) = ext4_and_postgres(test) else {
        return;
    };
    let mut child = spawn_run(
        dir.path(),
        "pgbench:profile=io-bound,scale=10,memory=64MiB,warmup=0,duration=600",
        "768MiB",
    );
    // Until a server runs inside a memory group (the run phase's).
    let t = Instant::now();
    let mut group = None;
    while t.elapsed() < Duration::from_secs(180) && group.is_none() {
        group = postgres_under(dir.path()).into_iter().find_map(|pid| {
            let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
            let line = text.lines().find(|l| l.contains("fsarena-mem-"))?;
            Some(line.rsplit('/').next()?.to_string())
        });
        if let Some(status) = child.try_wait().unwrap() {
            if status.code() == Some(1) && !Path::new("/sys/fs/cgroup").exists() {
                eprintln!("SKIP {test}: no memory control group here");
                return;
            }
            panic!("the run ended early: {status}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let group = group.expect("no server inside a memory group within 180 s");
    child.kill().expect("kill -9");
    child.wait().unwrap();
    let state = std::fs::read_dir(dir.path().join("state"))
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect::<String>();
    assert!(
        state.contains(&group),
        "the state file names {group}: {state}"
    );
    let out = common::cleanup(dir.path());
    assert!(out.status.success(), "cleanup failed");
    assert_eq!(postgres_under(dir.path()), Vec::<i32>::new());
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    for m in mounts.lines().filter(|l| l.contains(" cgroup")) {
        let at = m.split_whitespace().nth(1).unwrap();
        assert!(
            !Path::new(at).join(&group).exists(),
            "{group} is left under {at}"
        );
    }
    common::assert_clean(dir.path());
    common::assert_no_records(dir.path());
}

/// pgbench's io-bound profile on ext4: the engine, its profile and limit recorded, the
/// transactions read from the device, the server's WAL and steadiness figures there; and
/// `set=`'s refusals are usage errors.
#[test]
fn io_bound_pgbench_reads_from_the_device_and_says_so() {
    let test = "io_bound_pgbench_reads_from_the_device_and_says_so";
    let Some(dir) = ext4_and_postgres(test) else {
        return;
    };
    let (v, _) = common::run_json(
        &[
            "pgbench:profile=io-bound,scale=10,memory=64MiB,warmup=2,duration=6,\
             set='checkpoint_timeout=30s'",
            "--fs",
            "ext4",
            "--size",
            "768MiB",
            "--reps",
            "1",
            "--quiet",
        ],
        dir.path(),
    );
    let pg = common::ok_trial(&v, 0);
    let engine = &pg["engine"];
    assert_eq!(engine["name"], "PostgreSQL", "{engine}");
    assert_eq!(engine["profile"], "io-bound", "{engine}");
    assert_eq!(engine["memory_limit_bytes"], 64u64 << 20, "{engine}");
    assert_eq!(engine["settings"]["checkpoint_timeout"], "30s", "{engine}");
    assert_eq!(engine["settings"]["shared_buffers"], "32768kB", "{engine}");
    assert!(engine.get("not_durable").is_none(), "{engine}");
    assert_eq!(pg["params"]["protocol"], "prepared");
    let run = common::phase(pg, "run");
    let x = &run["extra"];
    assert!(x["dev_read_bytes_per_tx"].as_f64().unwrap() > 0.0, "{x}");
    assert!(x["wal_bytes"].as_f64().unwrap() > 0.0, "{x}");
    assert!(x["wal_syncs"].as_f64().unwrap() > 0.0, "{x}");
    assert!(x["rate_1s_p1"].as_f64().is_some(), "{x}");
    assert!(x["longest_stall_s"].as_f64().unwrap() > 0.0, "{x}");
    assert!(x["checkpoints"].as_f64().is_some(), "{x}");
    assert_eq!(postgres_under(dir.path()), Vec::<i32>::new());
    common::assert_clean(dir.path());
    for refused in [
        "pgbench:set='listen_addresses=*'",
        "pgbench:set='fsync=off'",
        "pgbench:profile=io-bound,scale=4",
    ] {
        let out = Command::new(common::bin())
            .args(["run", refused, "--fs", "ext4", "--reps", "1"])
            .arg("--image-dir")
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{refused}");
    }
}

/// pgbench and db_bench on ext4 from the command line: their phases and own figures in
/// the JSON, nothing left running, mounted or recorded.
#[test]
fn pgbench_and_db_bench_run_on_ext4() {
    let test = "pgbench_and_db_bench_run_on_ext4";
    let Some(dir) = ext4_and_postgres(test) else {
        return;
    };
    let on_path = std::env::var("PATH").unwrap_or_default();
    if !std::env::split_paths(&on_path).any(|d| d.join("db_bench").is_file()) {
        eprintln!("SKIP {test}: db_bench is not installed (Debian package rocksdb-tools)");
        return;
    }
    let (v, _) = common::run_json(
        &[
            "pgbench:scale=1,duration=3,clients=2,jobs=2",
            "db_bench:num=20000,sync=false",
            "--fs",
            "ext4",
            "--size",
            "512MiB",
            "--reps",
            "1",
            // The engines' own figures alone: under `--sync end` the headline also pays
            // the syncfs that ends every phase.
            "--sync",
            "none",
            "--quiet",
        ],
        dir.path(),
    );
    let pg = common::ok_trial(&v, 0);
    assert_eq!(pg["workload"], "pgbench");
    assert_eq!(common::phase_names(pg), ["load", "run"]);
    let run = common::phase(pg, "run");
    assert!(run["ops"].as_u64().unwrap() > 10, "{run}");
    // The headline is pgbench's own transactions per second.
    let tps = run["extra"]["pgbench_tps"].as_f64().unwrap();
    let ours = run["ops_per_s"].as_f64().unwrap();
    assert!(
        (ours / tps - 1.0).abs() < 0.02,
        "{ours} against pgbench's {tps}"
    );
    assert!(
        run["extra"]["server_cpu_s"].as_f64().unwrap() > 0.0,
        "{run}"
    );
    let db = common::ok_trial(&v, 1);
    assert_eq!(db["workload"], "db_bench");
    assert_eq!(common::phase_names(db).len(), 5);
    let rr = common::phase(db, "readrandom");
    assert!(rr["ops"].as_u64().unwrap() >= 20000, "{rr}");
    assert!(rr["extra"]["p99_us"].as_f64().unwrap() > 0.0, "{rr}");
    // Every phase's headline is db_bench's own ops/sec (within 2%); the whole process,
    // opening and closing the database included, is slower.
    for name in common::phase_names(db) {
        let p = common::phase(db, name);
        let (ours, theirs) = (
            p["ops_per_s"].as_f64().unwrap(),
            p["extra"]["db_bench_ops_per_s"].as_f64().unwrap(),
        );
        assert!(
            (ours / theirs - 1.0).abs() < 0.02,
            "{name}: {ours} against {theirs}"
        );
        assert!(
            p["extra"]["process_ops_per_s"].as_f64().unwrap() < ours,
            "{p}"
        );
    }
    assert_eq!(postgres_under(dir.path()), Vec::<i32>::new());
    common::assert_clean(dir.path());
    common::assert_no_records(dir.path());
}

/// Whether db_bench is on the PATH; a SKIP line naming `test` when not.
fn db_bench_installed(test: &str) -> bool {
    let on_path = std::env::var("PATH").unwrap_or_default();
    let there = std::env::split_paths(&on_path).any(|d| d.join("db_bench").is_file());
    if !there {
        eprintln!("SKIP {test}: db_bench is not installed (Debian package rocksdb-tools)");
    }
    there
}

/// db_bench on tmpfs: the trial's engine is RocksDB with the user's `opt` flags as its
/// settings and `disable_wal` said not durable; fillrandom's write amplification is above
/// 1 (its keys reach an SST, at the latest in the settling after it), and a loop of two
/// seconds or more has per-second steadiness. An `opt` flag that would move the WAL off
/// the target is refused as a usage error.
#[test]
fn db_bench_reports_its_engine_write_amp_and_steadiness() {
    let test = "db_bench_reports_its_engine_write_amp_and_steadiness";
    if !db_bench_installed(test) {
        return;
    }
    let Some((dir, v, _)) = common::run_once_on(
        test,
        &["db_bench:num=400000,sync=false,benchmarks='fillrandom,readrandom',opt='bloom_bits=10'"],
        "tmpfs",
        "1GiB",
    ) else {
        return;
    };
    let t = common::ok_trial(&v, 0);
    let engine = &t["engine"];
    assert_eq!(engine["name"], "RocksDB", "{t}");
    assert!(!engine["version"].as_str().unwrap().is_empty(), "{engine}");
    assert_eq!(engine["settings"]["bloom_bits"], "10", "{engine}");
    assert_eq!(
        engine["not_durable"],
        serde_json::json!(["sync=false"]),
        "{engine}"
    );
    let fill = &common::phase(t, "fillrandom")["extra"];
    assert!(fill["write_amp"].as_f64().unwrap() > 1.0, "{fill}");
    assert!(fill["user_write_bytes"].as_f64().unwrap() > 0.0, "{fill}");
    // 400,000 keys fit in one memtable: the SST is written from the WAL replayed when the
    // settling opens the database, which RocksDB counts as compaction.
    let to_sst = fill["flush_write_bytes"].as_f64().unwrap()
        + fill["compaction_write_bytes"].as_f64().unwrap();
    assert!(to_sst > 0.0, "{fill}");
    assert!(fill["stall_s"].as_f64().unwrap() >= 0.0, "{fill}");
    let read = &common::phase(t, "readrandom")["extra"];
    assert!(read.get("write_amp").is_none(), "{read}");
    for (name, p) in [("fillrandom", fill), ("readrandom", read)] {
        let loop_s = 400000.0 / p["db_bench_ops_per_s"].as_f64().unwrap();
        if loop_s >= 2.0 {
            let p1 = p["rate_1s_p1"].as_f64().unwrap_or(-1.0);
            assert!(p1 > 0.0, "{name}: {p}");
            assert!(p["longest_stall_s"].as_f64().unwrap() >= 0.0, "{name}: {p}");
        }
    }
    common::assert_clean(dir.path());

    let dir = common::image_dir();
    let not_durable = common::run_any(
        &[
            "db_bench:num=1000,sync=false,benchmarks=fillrandom,opt='disable_wal=1'",
            "--fs",
            "tmpfs",
            "--size",
            "256MiB",
            "--reps",
            "1",
            "--quiet",
        ],
        dir.path(),
    );
    assert_eq!(not_durable.code, Some(0), "{}", not_durable.stderr);
    let v = not_durable.json.unwrap();
    let engine = &common::ok_trial(&v, 0)["engine"];
    assert_eq!(
        engine["not_durable"],
        serde_json::json!(["sync=false", "disable_wal=1"]),
        "{engine}"
    );
    let refused = common::run_any(
        &[
            "db_bench:num=1000,opt='wal_dir=/var/tmp/elsewhere'",
            "--fs",
            "tmpfs",
            "--reps",
            "1",
            "--quiet",
        ],
        dir.path(),
    );
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    common::assert_clean(dir.path());
}

/// db_bench's io-bound profile, small, on ext4: the engine records the profile and its
/// direct-I/O flags, an `opt` item naming one of its flags wins and is what is recorded,
/// and readrandom reads the device (`dev_read_bytes_per_op` above 0).
#[test]
fn db_bench_io_bound_reads_the_device_on_ext4() {
    let test = "db_bench_io_bound_reads_the_device_on_ext4";
    if !db_bench_installed(test) {
        return;
    }
    let Some((dir, v, _)) = common::run_once_on(
        test,
        &[
            "db_bench:profile=io-bound,num=100000,benchmarks='fillrandom,readrandom',\
           opt='cache_size=2097152'",
        ],
        "ext4",
        "512MiB",
    ) else {
        return;
    };
    let t = common::ok_trial(&v, 0);
    let engine = &t["engine"];
    assert_eq!(engine["profile"], "io-bound", "{engine}");
    let settings = &engine["settings"];
    assert_eq!(settings["use_direct_reads"], "true", "{engine}");
    assert_eq!(
        settings["use_direct_io_for_flush_and_compaction"], "true",
        "{engine}"
    );
    assert_eq!(settings["cache_size"], "2097152", "{engine}");
    let opt = t["params"]["opt"].as_str().unwrap();
    assert!(opt.contains("use_direct_reads=true"), "{opt}");
    assert!(!opt.contains("8388608"), "{opt}");
    let read = &common::phase(t, "readrandom")["extra"];
    assert!(
        read["dev_read_bytes_per_op"].as_f64().unwrap() > 0.0,
        "{read}"
    );
    common::assert_clean(dir.path());
}

/// The bundled SQLite is built as distributions build theirs (`HAVE_FDATASYNC`,
/// `.cargo/config.toml`): it syncs its database and WAL with `fdatasync`, never `fsync`,
/// one a commit at `synchronous=full` in WAL mode (strace sees it).
#[test]
fn sqlite_syncs_with_fdatasync_as_distributions_build_it() {
    let test = "sqlite_syncs_with_fdatasync_as_distributions_build_it";
    let strace = Path::new("/usr/bin/strace");
    if !strace.exists() {
        eprintln!("SKIP {test}: strace is not installed (the Debian package strace)");
        return;
    }
    let image = common::image_dir();
    let work = image.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let trace = image.path().join("strace.log");
    let out = Command::new(strace)
        .args(["-f", "-y", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(&trace)
        .arg(common::bin())
        .args(["run", "sqlite:mode=insert,rows=40,batch=1", "--dir"])
        .arg(&work)
        .args([
            "--reps", "1", "--cache", "keep", "--sync", "none", "--quiet",
        ])
        .arg("--image-dir")
        .arg(image.path())
        .arg("--db")
        .arg(image.path().join("results.db"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // `PID fdatasync(FD</…/work/…/bench.db-wal>) = 0`: the calls on the workload's files.
    let under = format!("<{}/", work.display());
    let text = std::fs::read_to_string(&trace).unwrap();
    let calls = |name: &str| {
        text.lines()
            .filter(|l| l.contains(&format!(" {name}(")) && l.contains(&under))
            .count()
    };
    assert_eq!(calls("fsync"), 0, "{text}");
    assert!(calls("fdatasync") >= 40, "{text}");
}
