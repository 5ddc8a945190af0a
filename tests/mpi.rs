//! `run --mpi` end to end: 3 ranks under `mpirun --oversubscribe` on this one machine, on
//! tmpfs and loop filesystems, in shared and fleet mode; a plan mismatch and a failing
//! rank stop every rank cleanly. Needs the cargo feature `mpi` (else only the error
//! without it is checked) and mpirun (else SKIP); the loop tests need root.

mod common;

#[cfg(not(feature = "mpi"))]
#[test]
fn without_the_feature_mpi_says_how_to_build_it() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_fsarena"))
        .args(["run", "--mpi", "shared", "smallfiles"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--features mpi") && err.contains("mpirun"),
        "{err}"
    );
}

#[cfg(feature = "mpi")]
mod with_mpi {
    use super::common::mpi::{
        check_aggregates, mpirun, run_ok, run_ranks, skip_without_mpi, stored_run, text,
    };
    use super::common::{image_dir, loops_under, mounts_under};
    use std::path::Path;
    use std::time::{Duration, Instant};

    const NP: usize = 3;

    fn nothing_left(img: &Path) {
        assert!(
            mounts_under(img).is_empty(),
            "mounted: {:?}",
            mounts_under(img)
        );
        assert!(
            loops_under(img).is_empty(),
            "attached: {:?}",
            loops_under(img)
        );
    }

    #[test]
    fn shared_tmpfs_runs_smallfiles_job_and_bonnie_files_with_sums_of_the_ranks() {
        if skip_without_mpi("shared_tmpfs", true) {
            return;
        }
        let args = [
            "--fs",
            "tmpfs",
            "--size",
            "256M",
            "smallfiles:files=3000",
            "job:rw=write,size=8MiB",
            "bonnie-files:files=1",
        ];
        let (img, o, run) = run_ok(NP, "shared", &args);
        assert_eq!(run.status, "complete");
        let mpi = run.mpi.as_ref().expect("the run records its ranks");
        assert_eq!((mpi.mode.as_str(), mpi.hosts.len()), ("shared", NP));
        assert!(check_aggregates(&run, NP) >= 3 + 2 + 6);
        let job = run.trials.iter().find(|t| t.workload == "job").unwrap();
        let write = job.phases.iter().find(|p| p.name == "run").unwrap();
        assert_eq!(write.bytes_written, NP as u64 * (8 << 20));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains("3 ranks (--mpi shared)") && stdout.contains("rank 2"));
        nothing_left(img.path());
    }

    #[test]
    fn shared_file_job_puts_every_rank_on_one_file_and_verifies_it() {
        if skip_without_mpi("shared_file_job", true) {
            return;
        }
        // Two jobs per rank, each on 4 segments of 1 MiB of the one shared file: 3 × 2
        // tasks; verify reads every block back and checks its owner.
        let args = [
            "--fs",
            "tmpfs",
            "--size",
            "256M",
            "job:rw=write,shared_file=true,numjobs=2,nrfiles=4,size=4MiB,bs=64KiB,verify=true",
        ];
        let (img, _, run) = run_ok(NP, "shared", &args);
        assert_eq!(run.status, "complete");
        check_aggregates(&run, NP);
        let t = &run.trials[0];
        let phase = |n: &str| t.phases.iter().find(|p| p.name == n).unwrap();
        assert_eq!(phase("run").bytes_written, ((NP * 2 * 4) as u64) << 20);
        let verify = phase("verify");
        assert_eq!(verify.bytes_read, ((NP * 2 * 4) as u64) << 20, "{verify:?}");
        nothing_left(img.path());
    }

    #[test]
    fn io500_quick_in_shared_mode_scores_the_aggregate_phases() {
        if skip_without_mpi("io500_shared", true) {
            return;
        }
        // The quick configuration with a shorter stonewall (a key given twice is refused).
        let spec = fsarena::suite::IO500_QUICK.replace("stonewall=5", "stonewall=2");
        let args = ["--fs", "tmpfs", "--size", "512M", spec.as_str()];
        let (img, _, run) = run_ok(NP, "shared", &args);
        assert_eq!(check_aggregates(&run, NP), 12);
        let t = &run.trials[0];
        let geomean = |xs: &[f64]| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp();
        let (mut bw, mut md) = (Vec::new(), Vec::new());
        for p in &t.phases {
            if p.name.starts_with("ior-") {
                bw.push(p.bytes as f64 / p.wall_s / (1u64 << 30) as f64);
            } else {
                md.push(p.ops as f64 / p.wall_s / 1e3);
            }
        }
        assert_eq!((bw.len(), md.len()), (4, 8));
        let last = &t.phases[11].extra;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        let (b, m) = (geomean(&bw), geomean(&md));
        assert!(close(last["score_bw_gib_s"], b), "{last:?} vs BW {b}");
        assert!(close(last["score_md_kiops"], m), "{last:?} vs MD {m}");
        assert!(close(last["score_total"], (b * m).sqrt()));
        assert_eq!(last["official"], 0.0, "quick on tmpfs is never official");
        // Each rank wrote its share; the aggregate counts all of them.
        let reached = |r: &fsarena::result::RankTrial| r.phases[1].extra["reached"];
        let sum: f64 = t.ranks.iter().map(reached).sum();
        assert_eq!(t.phases[1].extra["reached"], sum);
        assert!(
            t.ranks.iter().all(|r| reached(r) > 0.0),
            "every rank wrote files"
        );
        // find is parallel across the ranks, as the IO500's is: each walks its share of
        // the shared mdtest-hard directory, and matches some of its files.
        let find = t.phases.iter().position(|p| p.name == "find").unwrap();
        let matched = |r: &fsarena::result::RankTrial| r.phases[find].extra["find_matched"];
        assert!(t.ranks.iter().all(|r| matched(r) > 0.0), "every rank found");
        let sum: f64 = t.ranks.iter().map(matched).sum();
        assert_eq!(t.phases[find].extra["find_matched"], sum);
        assert!(
            !last.contains_key("unofficial_find_found_nothing"),
            "{last:?}"
        );
        nothing_left(img.path());
    }

    #[test]
    fn shared_loop_filesystem_is_made_once_and_used_by_every_rank() {
        if skip_without_mpi("shared_loop", true)
            || !super::common::fs_available("shared_loop", "ext4")
        {
            return;
        }
        let args = ["--fs", "ext4", "--size", "256M", "smallfiles:files=2000"];
        let (img, _, run) = run_ok(NP, "shared", &args);
        assert_eq!(check_aggregates(&run, NP), 3);
        let t = &run.trials[0];
        // Only rank 0 has the device; its counters saw every rank's writes.
        assert!(t.ranks[0].phases[0].dev_write_bytes.is_some());
        assert!(t.ranks[1].phases[0].dev_write_bytes.is_none());
        nothing_left(img.path());
    }

    #[test]
    fn fleet_gives_every_rank_its_own_loop_image_and_stonewall_figures() {
        if skip_without_mpi("fleet_loop", true)
            || !super::common::fs_available("fleet_loop", "ext4")
        {
            return;
        }
        let args = [
            "--fs",
            "ext4",
            "--size",
            "128M",
            "--stonewall",
            "smallfiles:files=1500",
        ];
        let (img, o, run) = run_ok(NP, "fleet", &args);
        assert_eq!(run.mpi.as_ref().unwrap().mode, "fleet");
        assert_eq!(check_aggregates(&run, NP), 3);
        let t = &run.trials[0];
        assert!(t
            .ranks
            .iter()
            .all(|r| r.phases[0].dev_write_bytes.is_some()));
        let create = &t.phases[0];
        let first = create.extra["rank_first_done_s"];
        assert!(first > 0.0 && first <= create.wall_s);
        assert_eq!(create.extra["stonewall_s"], first);
        assert!(create.extra["stonewall_ops_per_s"] > 0.0);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("at first done"), "{out}");
        nothing_left(img.path());
    }

    #[test]
    fn ranks_with_different_plans_all_abort_naming_the_odd_rank() {
        if skip_without_mpi("plan_mismatch", false) {
            return;
        }
        let img = image_dir();
        let db = img.path().join("t.db");
        let exe = env!("CARGO_BIN_EXE_fsarena");
        let rank = |files: &str| {
            let mut v: Vec<String> = vec![exe.into(), "--db".into()];
            v.push(db.display().to_string());
            v.extend(["run", "--mpi", "shared", "--fs", "tmpfs", "--reps", "1"].map(String::from));
            v.extend(["--image-dir".into(), img.path().display().to_string()]);
            v.push(format!("smallfiles:files={files}"));
            v
        };
        let started = Instant::now();
        let o = mpirun()
            .args(["-np", "2"])
            .args(rank("100"))
            .args([":", "-np", "1"])
            .args(rank("200"))
            .output()
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(60));
        assert!(!o.status.success(), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("ranks do not run the same thing"), "{err}");
        assert!(
            err.contains("rank 2 on") && !err.contains("rank 1 on"),
            "{err}"
        );
        assert!(!db.exists(), "nothing stored");
        nothing_left(img.path());
    }

    #[test]
    fn a_rank_that_fails_mid_phase_stops_every_rank_and_leaves_nothing_behind() {
        if skip_without_mpi("failing_rank", true)
            || !super::common::fs_available("failing_rank", "ext4")
        {
            return;
        }
        let img = image_dir();
        let db = img.path().join("t.db");
        // Rank 1 fails after a second; the others would sleep for a minute.
        let cmd = "command:run='if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then sleep 1; exit 3; fi; sleep 60'";
        let started = Instant::now();
        let o = run_ranks(
            NP,
            "shared",
            &db,
            img.path(),
            &["--fs", "ext4", "--size", "128M", cmd],
        );
        let took = started.elapsed();
        assert!(!o.status.success(), "{}", text(&o));
        assert!(
            took < Duration::from_secs(45),
            "the others stopped at once: {took:?}"
        );
        let run = stored_run(&db);
        assert_eq!(run.status, "failed");
        let t = &run.trials[0];
        let err = t.error.as_deref().unwrap_or_default();
        assert!(
            err.starts_with("rank 1 on ") && err.contains("status 3"),
            "{err}"
        );
        let st: Vec<&str> = t.ranks.iter().map(|r| r.status.as_str()).collect();
        assert_eq!(st, ["stopped", "failed", "stopped"]);
        nothing_left(img.path());
    }

    #[test]
    fn a_rank_that_does_not_see_the_shared_directory_stops_the_run() {
        if skip_without_mpi("unshared_dir", true) {
            return;
        }
        let img = image_dir();
        let dir = img.path().join("shared");
        std::fs::create_dir(&dir).unwrap();
        let db = img.path().join("t.db");
        let exe = env!("CARGO_BIN_EXE_fsarena");
        let args = format!(
            "{exe} --db {} run --mpi shared --reps 1 --quiet --image-dir {} --dir {} \
             smallfiles:files=100",
            db.display(),
            img.path().display(),
            dir.display()
        );
        // Rank 2 runs in its own mount namespace with a private tmpfs over the directory:
        // the same path, not the same directory (as a local path on another node).
        let private = format!("mount -t tmpfs none {} && exec {args}", dir.display());
        let o = mpirun()
            .args(["-np", "2"])
            .args(args.split_whitespace())
            .args([":", "-np", "1", "unshare", "-m", "--propagation", "private"])
            .args(["sh", "-c", &private])
            .output()
            .unwrap();
        assert!(!o.status.success(), "{}", text(&o));
        let run = stored_run(&db);
        let err = run.trials[0].error.clone().unwrap_or_default();
        assert!(err.starts_with("rank 2 on "), "{err}");
        assert!(
            err.contains("does not see the directory rank 0 prepared"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "rank 0 removed its work"
        );
        nothing_left(img.path());
    }

    /// Shells running `marker` (`/bin/sh -c MARKER`, as the command workload starts it).
    fn running(marker: &str) -> usize {
        let want = format!("/bin/sh\0-c\0{marker}");
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .filter(|c| String::from_utf8_lossy(c).starts_with(&want))
            .count()
    }

    #[test]
    fn sigterm_to_mpirun_mid_phase_tears_every_rank_down() {
        if skip_without_mpi("sigterm", true) || !super::common::fs_available("sigterm", "ext4") {
            return;
        }
        let img = image_dir();
        let db = img.path().join("t.db");
        let exe = env!("CARGO_BIN_EXE_fsarena");
        let marker = format!("sleep 61 # {}", img.path().display());
        let mut child = mpirun()
            .args(["-np", "3", exe, "--db"])
            .arg(&db)
            .args([
                "run",
                "--mpi",
                "fleet",
                "--reps",
                "1",
                "--quiet",
                "--image-dir",
            ])
            .arg(img.path())
            .args(["--fs", "ext4", "--size", "128M"])
            .arg(format!("command:run='{marker}'"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Every rank is in the timed phase: its shell runs the marked sleep.
        let started = Instant::now();
        while running(&marker) < 3 {
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "ranks never started"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // SAFETY: kill has no memory effects; the pid is our own child's.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let status = child.wait().unwrap();
        assert!(!status.success());
        assert!(
            started.elapsed() < Duration::from_secs(55),
            "stopped before the sleep ended"
        );
        let run = stored_run(&db);
        assert_eq!(run.status, "interrupted");
        nothing_left(img.path());
    }
}
