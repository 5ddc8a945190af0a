//! Running fsarena under `mpirun` in tests: `mpirun --oversubscribe -np N fsarena run
//! --mpi MODE …` as root (OpenMPI refuses root unless told), and reading what rank 0
//! stored. Tests skip with a `SKIP` line when mpirun is missing.

use std::path::Path;
use std::process::{Command, Output};

/// Why MPI tests cannot run here, or `None` when they can.
pub fn mpi_unavailable() -> Option<String> {
    match Command::new("mpirun").arg("--version").output() {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!("mpirun --version failed: {}", o.status)),
        Err(e) => Some(format!(
            "no mpirun ({e}); Debian: apt-get install openmpi-bin"
        )),
    }
}

/// Prints a SKIP line and returns true when `test` cannot run (no mpirun, or a loop test
/// without root and loop devices).
pub fn skip_without_mpi(test: &str, needs_loop: bool) -> bool {
    if let Some(why) = mpi_unavailable() {
        eprintln!("SKIP {test}: needs MPI: {why}");
        return true;
    }
    needs_loop && super::skip_without_loop(test)
}

/// `mpirun` set up to run fsarena's ranks as root on a small machine.
pub fn mpirun() -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "--allow-run-as-root"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        // Tables as wide as they want: these tests read headings whole (the ranks inherit
        // mpirun's environment).
        .env("COLUMNS", "200");
    c
}

/// Runs `mpirun -np N fsarena --db DB run --mpi MODE --reps 1 --image-dir IMG ARGS…`.
pub fn run_ranks(np: usize, mode: &str, db: &Path, img: &Path, args: &[&str]) -> Output {
    let exe = env!("CARGO_BIN_EXE_fsarena");
    let mut c = mpirun();
    c.args(["-np", &np.to_string(), exe, "--db"])
        .arg(db)
        .args([
            "run",
            "--mpi",
            mode,
            "--reps",
            "1",
            "--quiet",
            "--image-dir",
        ])
        .arg(img)
        .args(args);
    c.output().expect("running mpirun")
}

/// A run of `np` ranks in `mode` with `args` in a fresh image directory (its database
/// `t.db`) that must succeed: the directory (kept until dropped), the output and the
/// stored run.
pub fn run_ok(
    np: usize,
    mode: &str,
    args: &[&str],
) -> (tempfile::TempDir, Output, fsarena::result::RunResult) {
    let img = super::image_dir();
    let db = img.path().join("t.db");
    let o = run_ranks(np, mode, &db, img.path(), args);
    assert!(o.status.success(), "{}", text(&o));
    let run = stored_run(&db);
    (img, o, run)
}

/// stdout and stderr of `o`, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "status {}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The stored run of `db` (there must be exactly one).
pub fn stored_run(db: &Path) -> fsarena::result::RunResult {
    let store = fsarena::store::Store::open_existing(db).expect("the database exists");
    let runs = store.history().expect("history");
    assert_eq!(runs.len(), 1, "one run stored");
    store.load(&runs[0].id).expect("load the run")
}

/// Checks that each aggregate phase of every trial of `run` has the sum of its ranks'
/// operations and bytes, and the slowest rank's wall time; returns the phases checked.
pub fn check_aggregates(run: &fsarena::result::RunResult, np: usize) -> usize {
    let mut checked = 0;
    for t in &run.trials {
        assert_eq!(
            t.ranks.len(),
            np,
            "{} {}: every rank stored",
            t.target,
            t.label
        );
        for (i, p) in t.phases.iter().enumerate() {
            let parts: Vec<_> = t.ranks.iter().map(|r| &r.phases[i]).collect();
            assert!(parts.iter().all(|q| q.name == p.name));
            assert_eq!(
                p.ops,
                parts.iter().map(|q| q.ops).sum::<u64>(),
                "{}",
                p.name
            );
            assert_eq!(p.bytes, parts.iter().map(|q| q.bytes).sum::<u64>());
            let slowest = parts.iter().map(|q| q.wall_s).fold(0.0, f64::max);
            assert_eq!(p.wall_s, slowest, "{}: wall is the last rank's", p.name);
            assert_eq!(p.extra["ranks"], np as f64);
            checked += 1;
        }
    }
    checked
}
