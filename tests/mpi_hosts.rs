//! `run --mpi` across emulated hosts (tests/emulated: namespaces joined by a bridge,
//! OpenMPI's daemons started through `nsenter`): both modes' happy path with every host
//! checked for leftovers, and the faults clusters have — SIGTERM to mpirun or to a rank,
//! a rank or its daemon killed, a host's link taken down — each leaving nothing on any
//! host and the run stored with its finished trials. Needs the cargo feature `mpi`, root,
//! OpenMPI and namespaces; prints SKIP without them.

#![cfg(feature = "mpi")]

mod common;
mod emulated;

use emulated::Hosts;
#[allow(unused_imports)]
use std::time::{Duration, Instant};

/// Three hosts, or a SKIP line and `None`.
fn hosts(test: &str) -> Option<Hosts> {
    if let Some(why) = emulated::unavailable() {
        eprintln!("SKIP {test}: {why}");
        return None;
    }
    if common::skip_without_loop(test) {
        return None;
    }
    match Hosts::new(3) {
        Ok(h) => Some(h),
        Err(why) => {
            eprintln!("SKIP {test}: cannot make emulated hosts: {why}");
            None
        }
    }
}

fn text(o: &std::process::Output) -> String {
    common::mpi::text(o)
}

#[test]
fn fleet_across_three_hosts_runs_on_each_and_leaves_every_host_clean() {
    let Some(h) = hosts("hosts_fleet") else {
        return;
    };
    let o = h
        .fsarena(
            10,
            "fleet",
            &["--fs", "ext4", "--size", "64M", "smallfiles:files=500"],
        )
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let run = h.stored_run();
    assert_eq!(run.status, "complete");
    assert_eq!(run.mpi.as_ref().unwrap().hosts, ["h1", "h2", "h3"]);
    assert_eq!(common::mpi::check_aggregates(&run, 3), 3);
    assert_eq!(h.leftovers(), Vec::<String>::new());
}

#[test]
fn shared_across_three_hosts_works_in_one_directory_and_leaves_it_empty() {
    let Some(h) = hosts("hosts_shared") else {
        return;
    };
    // A directory every host sees (the hosts share every path but /var/tmp), as a
    // cluster filesystem is.
    let shared = h.dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let dir = shared.display().to_string();
    let o = h
        .fsarena(
            10,
            "shared",
            &[
                "--dir",
                &dir,
                "smallfiles:files=300",
                "job:rw=write,size=4MiB",
            ],
        )
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let run = h.stored_run();
    assert_eq!(run.status, "complete");
    assert_eq!(run.mpi.as_ref().unwrap().hosts, ["h1", "h2", "h3"]);
    assert!(common::mpi::check_aggregates(&run, 3) >= 5);
    assert_eq!(
        std::fs::read_dir(&shared).unwrap().count(),
        0,
        "trial directory left"
    );
    assert_eq!(h.leftovers(), Vec::<String>::new());
}

/// OpenMPI's `odls_base_sigkill_timeout` in the fault tests: when mpirun ends a job it
/// sends SIGCONT, this long later SIGTERM, and this long after that SIGKILL.
const SIGKILL_S: u32 = 1;

/// One test at a time: the fault tests time their teardown.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// What rank 0 stored after a fault, and what mpirun printed.
struct Aftermath {
    run: fsarena::result::RunResult,
    stderr: String,
}

/// Whether every host has a file of at least 4 MiB in the mount fsarena made there: the
/// slow `job` phase is under way on all of them.
fn writing_everywhere(h: &Hosts) -> bool {
    h.hosts.iter().all(|host| {
        host.mounts().iter().any(|m| {
            walkdir(&host.view(std::path::Path::new(m)))
                .iter()
                .any(|len| *len >= 4 << 20)
        })
    })
}

/// The sizes of the regular files under `dir` (two levels: rank and job directories).
fn walkdir(dir: &std::path::Path) -> Vec<u64> {
    let mut out = Vec::new();
    let mut todo = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() && depth < 3 => todo.push((e.path(), depth + 1)),
                Ok(m) if m.is_file() => out.push(m.len()),
                _ => {}
            }
        }
    }
    out
}

/// Runs a fleet of three ranks, one per host, on ext4 loop images: a short trial, then a
/// slow write (48 MiB at 8 MiB/s); once every host writes, `fault` strikes; then waits
/// for every host to be clean and for rank 0 to exit (30 s each at most).
fn strike(h: &Hosts, test: &str, fault: impl FnOnce(&Hosts, u32)) -> Aftermath {
    strike_but(h, test, None, fault)
}

/// [`strike`], with host `crashed` left out of the check.
fn strike_but(
    h: &Hosts,
    test: &str,
    crashed: Option<usize>,
    fault: impl FnOnce(&Hosts, u32),
) -> Aftermath {
    let stderr_path = h.dir.path().join("stderr");
    let mut child = h
        .fsarena(
            SIGKILL_S,
            "fleet",
            &[
                "--fs",
                "ext4",
                "--size",
                "96M",
                "smallfiles:files=200",
                "job:rw=write,size=48MiB,rate=8MiB",
            ],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !writing_everywhere(h) {
        if started.elapsed() > Duration::from_secs(120) || child.try_wait().unwrap().is_some() {
            let err = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            panic!("{test}: the ranks never all wrote: {err}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let at = Instant::now();
    fault(h, child.id());
    let clean = h.wait_clean(at, Duration::from_secs(30), crashed);
    let rank0 = loop {
        if h.hosts[0].find("fsarena", "--mpi").is_none() {
            break Some(at.elapsed());
        }
        if at.elapsed() > Duration::from_secs(30) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // mpirun itself may wait for a host it cannot reach: it is not what is tested.
    let _ = emulated::wait_for(&mut child, Duration::from_secs(5));
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let clean = clean.unwrap_or_else(|left| panic!("{test}: left after 30 s: {left:?}\n{stderr}"));
    let rank0 = rank0.unwrap_or_else(|| {
        // Where rank 0 waits (gdb, when installed).
        let pid = h.hosts[0].find("fsarena", "--mpi").unwrap_or(0).to_string();
        let stacks = std::process::Command::new("gdb")
            .args(["-batch", "-p", &pid, "-ex", "thread apply all bt 12"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        panic!("{test}: rank 0 still runs after 30 s\n{stderr}\n{stacks}")
    });
    let run = h.stored_run();
    let last = run
        .trials
        .last()
        .map(|t| (t.status.clone(), t.error.clone()));
    eprintln!(
        "MEASURED {test}: every host clean {:.1} s after the fault, rank 0 gone after {:.1} s, \
         run {}, last trial {last:?}",
        clean.as_secs_f64(),
        rank0.as_secs_f64(),
        run.status
    );
    Aftermath { run, stderr }
}

/// The run kept its finished first trial and ended as `status`.
fn stored_as(a: &Aftermath, status: &str) {
    let t: Vec<(&str, &str)> = a
        .run
        .trials
        .iter()
        .map(|t| (t.workload.as_str(), t.status.as_str()))
        .collect();
    assert_eq!(a.run.status, status, "{t:?}\n{}", a.stderr);
    assert_eq!(t.first(), Some(&("smallfiles", "ok")), "{}", a.stderr);
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill has no memory effects; the pid is a process of our own test.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill {pid}");
}

#[test]
fn sigterm_to_mpirun_mid_phase_leaves_every_host_clean() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = hosts("hosts_sigterm_mpirun") else {
        return;
    };
    let a = strike(&h, "sigterm_mpirun", |_, mpirun| {
        signal(mpirun as i32, libc::SIGTERM)
    });
    stored_as(&a, "interrupted");
}

#[test]
fn sigterm_to_a_remote_rank_interrupts_the_run_on_every_host() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = hosts("hosts_sigterm_rank") else {
        return;
    };
    let a = strike(&h, "sigterm_rank", |h, _| {
        let pid = h.hosts[2]
            .find("fsarena", "--mpi")
            .expect("rank 2 runs on h3");
        signal(pid, libc::SIGTERM);
    });
    stored_as(&a, "interrupted");
}

#[test]
fn kill_9_of_a_remote_rank_leaves_every_host_clean() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = hosts("hosts_kill_rank") else {
        return;
    };
    let a = strike(&h, "kill_rank", |h, _| {
        let pid = h.hosts[2]
            .find("fsarena", "--mpi")
            .expect("rank 2 runs on h3");
        signal(pid, libc::SIGKILL);
        // What the dead rank had is for `fsarena cleanup` on its host (below).
    });
    assert!(["failed", "interrupted"].contains(&a.run.status.as_str()));
    stored_as(&a, &a.run.status.clone());
}

#[test]
fn kill_9_of_a_remote_daemon_leaves_every_host_clean() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = hosts("hosts_kill_orted") else {
        return;
    };
    let a = strike(&h, "kill_orted", |h, _| {
        let pid = h.hosts[2]
            .find("orted", "-mca")
            .expect("OpenMPI's daemon runs on h3");
        signal(pid, libc::SIGKILL);
    });
    assert!(["failed", "interrupted"].contains(&a.run.status.as_str()));
    stored_as(&a, &a.run.status.clone());
}

#[test]
fn a_remote_link_taken_down_fails_the_run_naming_the_lost_host() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = hosts("hosts_partition") else {
        return;
    };
    let a = strike(&h, "partition", |h, _| h.link_down(2));
    stored_as(&a, "failed");
    let err = a.run.trials[1].error.clone().unwrap_or_default();
    assert!(err.contains("lost rank 2 on h3"), "{err}");
}

#[test]
fn a_crashed_host_is_recovered_by_cleanup_there_and_the_others_tear_down() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = hosts("hosts_crash") else {
        return;
    };
    // Everything on h3 dies at once: its rank, the rank's guardian, OpenMPI's daemon.
    let a = strike_but(&h, "crash", Some(2), |h, _| h.crash(2));
    assert!(["failed", "interrupted"].contains(&a.run.status.as_str()));
    stored_as(&a, &a.run.status.clone());
    let h3 = &h.hosts[2];
    assert!(!h3.leftovers().is_empty(), "the crash left h3's target");
    // The host comes back: `fsarena cleanup` there undoes what its rank recorded.
    let img = h3.img.display().to_string();
    let o = h3
        .cmd(env!("CARGO_BIN_EXE_fsarena"))
        .args(["cleanup", "--image-dir", &img])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(h3.leftovers(), Vec::<String>::new(), "{}", text(&o));
}

#[test]
fn sigterm_to_rank_0_between_trials_interrupts_the_run_with_exit_130() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = hosts("hosts_sigterm_rank0_calibrating") else {
        return;
    };
    let mut child = h
        .fsarena(
            SIGKILL_S,
            "fleet",
            &["--fs", "ext4", "--size", "96M", "smallfiles:files=200"],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Rank 0's image exists and nothing is mounted yet: it is made or calibrated.
    let started = Instant::now();
    let h1 = &h.hosts[0];
    while h1.images().is_empty() || !h1.mounts().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no image on h1"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let pid = h1.find("fsarena", "--mpi").expect("rank 0 runs on h1");
    signal(pid, libc::SIGTERM);
    let (code, ended) = emulated::wait_for(&mut child, Duration::from_secs(40));
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    assert!(ended, "mpirun ended");
    let run = h.stored_run();
    assert_eq!(run.status, "interrupted", "{err}");
    assert_eq!(code, Some(130), "{err}");
    assert!(!err.contains("error: stopped because rank 0"), "{err}");
    if let Err(left) = h.wait_clean(Instant::now(), Duration::from_secs(30), None) {
        panic!("left: {left:?}\n{err}");
    }
}

#[test]
fn sigterm_to_mpirun_in_shared_mode_leaves_the_shared_directory_empty() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(h) = hosts("hosts_sigterm_shared") else {
        return;
    };
    let shared = h.dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let dir = shared.display().to_string();
    let args = [
        "--dir",
        &dir,
        "smallfiles:files=200",
        "job:rw=write,size=48MiB,rate=8MiB",
    ];
    // At OpenMPI's default kill delay rank 0 is often killed before it removes the
    // trial's directory on the shared filesystem, while the other hosts' ranks still write
    // into it: its guardian removes it, trying again until they are gone.
    let mut child = h
        .fsarena(SIGKILL_S, "shared", &args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Every rank writes its job file in its rank-N directory of the trial's directory.
    let started = Instant::now();
    while walkdir(&shared)
        .iter()
        .filter(|&&len| len >= 4 << 20)
        .count()
        < 3
    {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the ranks never all wrote"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let at = Instant::now();
    signal(child.id() as i32, libc::SIGTERM);
    let empty = loop {
        if std::fs::read_dir(&shared).unwrap().count() == 0 {
            break Some(at.elapsed());
        }
        if at.elapsed() > Duration::from_secs(30) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = emulated::wait_for(&mut child, Duration::from_secs(30));
    let empty = empty.unwrap_or_else(|| panic!("left: {:?}", walkdir(&shared)));
    let run = h.stored_run();
    eprintln!(
        "MEASURED sigterm_shared: shared directory empty {:.1} s after the fault, run {}",
        empty.as_secs_f64(),
        run.status
    );
    assert_eq!(run.status, "interrupted");
    assert_eq!(run.trials[0].status, "ok");
    assert_eq!(h.leftovers(), Vec::<String>::new());
}
