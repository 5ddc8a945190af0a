//! End to end with plan files on real targets: a small matrix runs and is named as
//! `plan check` prints it; a plan run killed with SIGKILL is resumed to completion with
//! every trial stored exactly once; resuming with an edited plan is refused.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MATRIX_PLAN: &str = r#"
[defaults]
size = "128MiB"
reps = 2
cache = "keep"

[[target]]
fs = "tmpfs"

[[matrix]]
fs = "ext4"
mount = ["", "data=writeback"]

[[workload]]
kind = "postmark"
number = 50
transactions = 100

[[workload]]
kind = "smallfiles"
files = 200
size_max = "1KiB"
"#;

const NAMES: [&str; 3] = ["tmpfs", "ext4", "ext4+data=writeback"];

fn fsarena(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(common::bin())
        .arg("--db")
        .arg(dir.join("results.db"))
        .args(args)
        .output()
        .expect("run fsarena")
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_small_plan_runs_its_matrix() {
    if common::skip_without_loop("a_small_plan_runs_its_matrix")
        || !common::fs_available("a_small_plan_runs_its_matrix", "ext4")
    {
        return;
    }
    let dir = common::image_dir();
    let plan = dir.path().join("plan.toml");
    std::fs::write(&plan, MATRIX_PLAN).unwrap();
    let check = fsarena(dir.path(), &["plan", "check", plan.to_str().unwrap()]);
    assert!(check.status.success(), "{}", text(&check));
    let out = text(&check);
    for name in NAMES {
        assert!(out.contains(&format!("\n  {name} ")), "{name} in\n{out}");
    }
    assert!(
        out.contains("3 targets × 2 workloads × 2 repetitions = 12 trials"),
        "{out}"
    );
    assert!(out.contains("mount: data=writeback"), "{out}");

    let json = dir.path().join("out.json");
    let page = dir.path().join("out.html");
    let run = fsarena(
        dir.path(),
        &[
            "run",
            "--quiet",
            "--plan",
            plan.to_str().unwrap(),
            "--image-dir",
            dir.path().to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ],
    );
    assert!(run.status.success(), "{}", text(&run));
    // --html beside --plan writes the report of the run, every target in it.
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for name in NAMES {
        assert!(
            html.contains(&format!("<th>{name}</th>")),
            "{name} in the report"
        );
    }
    let v: serde_json::Value = common::run_document(&std::fs::read(&json).unwrap());
    assert_eq!(v["status"], "complete");
    assert_eq!(v["policy"]["reps"], 2);
    let names: Vec<&str> = v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, NAMES);
    assert_eq!(v["targets"][2]["requested_mount_opts"], "data=writeback");
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 12);
    assert!(trials.iter().all(|t| t["status"] == "ok"), "{trials:?}");
    let store = fsarena::store::Store::open(&dir.path().join("results.db")).unwrap();
    let id = v["run_id"].as_str().unwrap();
    assert_eq!(store.plan_hash(id).unwrap().unwrap().len(), 16);
    common::assert_clean(dir.path());
}

/// A plan of 2 targets × 1 workload × 4 repetitions whose trials each take ~0.6 s.
const SLOW_PLAN: &str = r#"
[defaults]
size = "128MiB"
reps = 4
cache = "keep"

[[target]]
fs = "tmpfs"

[[target]]
fs = "ext4"

[[workload]]
kind = "command"
run = "sleep 0.6"
"#;

/// The first phase's wall time of every successful trial, by (target, rep).
fn walls(db: &Path, run: &str) -> Vec<((String, u32), f64)> {
    let store = fsarena::store::Store::open(db).unwrap();
    let r = store.load(run).unwrap();
    r.trials
        .iter()
        .filter(|t| t.status == "ok")
        .map(|t| ((t.target.clone(), t.rep), t.phases[0].wall_s))
        .collect()
}

/// (target, label, rep, status) of every stored trial of the run.
fn stored(db: &Path, run: &str) -> Vec<(String, String, u32, String)> {
    let store = fsarena::store::Store::open(db).unwrap();
    let r = store.load(run).unwrap();
    let mut v: Vec<_> = r
        .trials
        .iter()
        .map(|t| (t.target.clone(), t.label.clone(), t.rep, t.status.clone()))
        .collect();
    v.sort();
    v
}

#[test]
fn kill_9_then_resume_runs_each_missing_trial_once() {
    let test = "kill_9_then_resume_runs_each_missing_trial_once";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    let db = dir.path().join("results.db");
    let plan = dir.path().join("plan.toml");
    std::fs::write(&plan, SLOW_PLAN).unwrap();
    let image_dir = dir.path().to_str().unwrap();
    let plan_s = plan.to_str().unwrap();
    let mut child = Command::new(common::bin())
        .arg("--db")
        .arg(&db)
        .args(["run", "--quiet", "--plan", plan_s, "--image-dir", image_dir])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once 3 of the 8 trials are stored.
    let start = Instant::now();
    let run = loop {
        assert!(start.elapsed() < Duration::from_secs(25), "no progress");
        std::thread::sleep(Duration::from_millis(100));
        let Ok(store) = fsarena::store::Store::open(&db) else {
            continue;
        };
        let Some(r) = store.history().ok().and_then(|h| h.into_iter().next()) else {
            continue;
        };
        if r.trials >= 3 {
            break r.id;
        }
    };
    child.kill().expect("kill -9");
    child.wait().unwrap();
    let before = stored(&db, &run);
    let kept = walls(&db, &run);
    assert!(before.len() >= 3 && before.len() < 8, "{before:?}");

    // An edited plan is refused, and changes nothing.
    let edited = dir.path().join("edited.toml");
    std::fs::write(&edited, SLOW_PLAN.replace("sleep 0.6", "sleep 0.5")).unwrap();
    let refused = fsarena(
        dir.path(),
        &[
            "run",
            "--plan",
            edited.to_str().unwrap(),
            "--resume",
            &run,
            "--image-dir",
            image_dir,
        ],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("was made with plan"),
        "{}",
        text(&refused)
    );
    let more_reps = fsarena(
        dir.path(),
        &[
            "run",
            "--plan",
            plan_s,
            "--reps",
            "5",
            "--resume",
            &run,
            "--image-dir",
            image_dir,
        ],
    );
    assert_eq!(more_reps.status.code(), Some(2), "{}", text(&more_reps));
    assert_eq!(stored(&db, &run), before);

    let resume_args = [
        "run",
        "--quiet",
        "--plan",
        plan_s,
        "--resume",
        &run,
        "--image-dir",
        image_dir,
    ];
    let first = Command::new(common::bin())
        .current_dir(dir.path())
        .arg("--db")
        .arg(&db)
        .args(resume_args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A second resume of the same run while the first one is live is refused at once,
    // before it touches the first one's state file or mounts.
    let state_file = dir.path().join("state").join(format!("{run}.json"));
    let start = Instant::now();
    while !fsarena::state::run_is_live(&state_file, 0) {
        assert!(
            start.elapsed() < Duration::from_secs(25),
            "the resume took no lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = fsarena(dir.path(), &resume_args);
    assert_eq!(second.status.code(), Some(2), "{}", text(&second));
    // Told by the database (the first recorded its process) or, when both start at once,
    // by the lock on the state file.
    assert!(
        text(&second).contains("still running") || text(&second).contains("live in another"),
        "{}",
        text(&second)
    );
    let resumed = first.wait_with_output().unwrap();
    assert!(resumed.status.success(), "{}", text(&resumed));
    let after = stored(&db, &run);
    let mut want = Vec::new();
    for t in ["ext4", "tmpfs"] {
        for rep in 1..=4 {
            want.push((t.to_string(), "command".to_string(), rep, "ok".to_string()));
        }
    }
    assert_eq!(after, want, "each trial exactly once");
    // The successful trials stored before the kill were kept, not run again.
    let now = walls(&db, &run);
    for (key, wall) in &kept {
        assert!(now.contains(&(key.clone(), *wall)), "{key:?} was run again");
    }
    let store = fsarena::store::Store::open(&db).unwrap();
    let r = store.load(&run).unwrap();
    assert_eq!(r.status, "complete");
    assert_eq!(
        store.history().unwrap().len(),
        1,
        "the same run, no new one"
    );
    drop(store);
    common::assert_clean(dir.path());
}

#[test]
fn kernel_keys_in_a_plan_and_kernel_options_are_refused_where_they_clash() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("k.toml");
    std::fs::write(
        &plan,
        "[[target]]\nfs = \"tmpfs\"\nkernel = \"6.1.0-56-amd64\"\n\
         [[workload]]\nkind = \"postmark\"\n",
    )
    .unwrap();
    let p = plan.to_str().unwrap();
    // --kernel for all and kernel keys: one place, said before any kernel is looked up.
    let o = fsarena(dir.path(), &["run", "--plan", p, "--kernel", "0.0.0-none"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("k.toml:3:10:"), "{t}");
    assert!(t.contains("give the kernels in one place"), "{t}");
    // The guest's machine without any guest.
    let host_plan = dir.path().join("h.toml");
    std::fs::write(
        &host_plan,
        "[[target]]\nfs = \"tmpfs\"\n[[workload]]\nkind = \"postmark\"\n",
    )
    .unwrap();
    for flag in ["--guest-cpus", "--guest-memory", "--guest-timeout"] {
        let value = match flag {
            "--guest-cpus" => "1",
            "--guest-memory" => "1GiB",
            _ => "30s",
        };
        let hp = host_plan.to_str().unwrap();
        let o = fsarena(dir.path(), &["run", "--plan", hp, flag, value]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{flag}: {t}");
        assert!(
            t.contains("go with --kernel (or kernel = \"…\""),
            "{flag}: {t}"
        );
    }
}
