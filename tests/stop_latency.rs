//! SIGINT and SIGTERM end a run within 2 s wherever they arrive — during the device's
//! calibration, mkfs, a corpus being written, smallfiles' create and delete, and teardown —
//! with exit code 130 and nothing left mounted, attached or on disk. Each point's time from
//! the signal to the exit is printed; a point over 2 s is tried once more (the machine may
//! be loaded) before the test fails.

mod common;

use common::watch::{leftovers, Watched};
use std::time::Duration;

/// The most a run may take from SIGINT/SIGTERM to its exit.
const LIMIT_S: f64 = 2.0;

/// Where a signal is sent: after the line containing `mark`, plus `delay`.
struct Point {
    name: &'static str,
    args: &'static [&'static str],
    mark: &'static str,
    delay: Duration,
    signal: i32,
}

const POINTS: &[Point] = &[
    Point {
        name: "calibration",
        args: &["smallfiles:files=1000", "--fs", "ext4", "--size", "512MiB"],
        mark: "cold read rates (O_DIRECT and buffered)",
        delay: Duration::from_millis(300),
        signal: libc::SIGTERM,
    },
    Point {
        // `-cc`: mke2fs runs badblocks' read-write test over the whole device first, a
        // long mkfs (11 s here), as on a large disk.
        name: "mkfs (-cc, long)",
        args: &[
            "smallfiles:files=1000",
            "--fs",
            "ext4",
            "--size",
            "512MiB",
            "--mkfs-opt",
            "ext4=-cc",
        ],
        mark: "$ mkfs.ext4",
        delay: Duration::from_millis(500),
        signal: libc::SIGINT,
    },
    Point {
        name: "populate (provision)",
        // Scale 3: about 2 s of populating on an idle machine, so the signal lands in it.
        args: &["provision:scale=3", "--fs", "ext4", "--size", "512MiB"],
        mark: ": populate",
        delay: Duration::from_millis(300),
        signal: libc::SIGTERM,
    },
    Point {
        name: "smallfiles create (tmpfs)",
        args: &[
            "smallfiles:files=400000",
            "--fs",
            "tmpfs",
            "--size",
            "512MiB",
        ],
        mark: ": create",
        delay: Duration::from_millis(800),
        signal: libc::SIGINT,
    },
    Point {
        name: "smallfiles create (ext4)",
        args: &[
            // Empty files: the create cannot fill the image before the signal however
            // fast the machine, and their inodes and directories still leave write-back
            // for umount.
            "smallfiles:files=400000,size_max=0B",
            "--fs",
            "ext4",
            "--size",
            "512MiB",
            "--mkfs-opt",
            "ext4=-N 450000",
            "--sync",
            "none",
        ],
        mark: ": create",
        delay: Duration::from_millis(1500),
        signal: libc::SIGTERM,
    },
    Point {
        name: "smallfiles delete (ext4)",
        args: &[
            "smallfiles:files=150000",
            "--fs",
            "ext4",
            "--size",
            "512MiB",
            "--mkfs-opt",
            "ext4=-N 200000",
        ],
        mark: ": delete",
        delay: Duration::from_millis(300),
        signal: libc::SIGTERM,
    },
    Point {
        name: "teardown (ext4)",
        args: &[
            "smallfiles:files=60000",
            "--fs",
            "ext4",
            "--size",
            "512MiB",
            "--mkfs-opt",
            "ext4=-N 100000",
            "--cache",
            "keep",
            "--sync",
            "none",
            "--reps",
            "2",
        ],
        mark: "$ umount",
        delay: Duration::ZERO,
        signal: libc::SIGINT,
    },
];

/// One try at `p`: the seconds from the signal to the exit, or why it could not be timed.
fn try_point(p: &Point) -> Result<f64, String> {
    let dir = common::image_dir();
    let db = dir.path().join("r.db");
    let mut args = vec!["run"];
    args.extend_from_slice(p.args);
    if !p.args.contains(&"--reps") {
        args.extend(["--reps", "1"]);
    }
    args.push("--image-dir");
    args.push(dir.path().to_str().unwrap());
    args.extend(["--db", db.to_str().unwrap()]);
    let mut run = Watched::start(&args);
    if !run.wait_for(p.mark, Duration::from_secs(120)) {
        let _ = run.wait_until(std::time::Instant::now());
        return Err(format!("never reached {:?}:\n{}", p.mark, run.text()));
    }
    std::thread::sleep(p.delay);
    let (status, took) = run.signal_and_time(p.signal, Duration::from_secs(120));
    let left = leftovers(dir.path());
    if !left.is_empty() {
        let _ = common::cleanup(dir.path());
    }
    let code = status.and_then(|s| s.code());
    assert_eq!(
        code,
        Some(130),
        "{}: exit {status:?}\n{}",
        p.name,
        run.text()
    );
    assert!(left.is_empty(), "{}: left {left:?}\n{}", p.name, run.text());
    Ok(took.as_secs_f64())
}

#[test]
fn a_signal_ends_the_run_within_2_s_at_every_point() {
    let test = "a_signal_ends_the_run_within_2_s_at_every_point";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let only = std::env::var("FSARENA_STOP_POINT").unwrap_or_default();
    let mut slow = Vec::new();
    for p in POINTS
        .iter()
        .filter(|p| only.is_empty() || p.name.contains(&only))
    {
        let mut times = Vec::new();
        for _ in 0..2 {
            let s = try_point(p).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            times.push(s);
            if s <= LIMIT_S {
                break;
            }
        }
        let shown: Vec<String> = times.iter().map(|s| format!("{s:.2} s")).collect();
        eprintln!("stop latency: {}: {}", p.name, shown.join(", then "));
        if times.iter().all(|&s| s > LIMIT_S) {
            slow.push(format!("{} ({})", p.name, shown.join(", ")));
        }
    }
    assert!(
        slow.is_empty(),
        "over {LIMIT_S} s after the signal: {slow:?}"
    );
}
