//! Trials that something else competed with are flagged busy (`b`): two runs side by side
//! see each other (and `doctor` names the other), and a CPU hog is noticed; the flag is in
//! the JSON, the CSV, the HTML, the terminal table, `show` and `compare`.
//!
//! A lone run is not asserted quiet here (the machine running the tests may be busy); the
//! negative cases are unit tests on made-up counters (src/probe/disturb/tests.rs).

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `fsarena ARGS --db DB`, its output.
fn fsarena(args: &[&str], db: &Path) -> Output {
    Command::new(common::bin())
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("run fsarena")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Starts `fsarena run command:run=CMD` once on a fresh directory under `base/name`.
fn start_run(base: &Path, name: &str, cmd: &str) -> std::process::Child {
    let work = base.join(format!("{name}-work"));
    std::fs::create_dir_all(&work).unwrap();
    Command::new(common::bin())
        .args(["run", &format!("command:run={cmd}"), "--reps", "1", "--dir"])
        .arg(&work)
        .arg("--image-dir")
        .arg(base.join(format!("{name}-img")))
        .arg("--db")
        .arg(base.join(format!("{name}.db")))
        .arg("--json")
        .arg(base.join(format!("{name}.json")))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fsarena run")
}

fn finished(child: std::process::Child, base: &Path, name: &str) -> (Value, String) {
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let json = std::fs::read(base.join(format!("{name}.json"))).unwrap();
    (serde_json::from_slice(&json).unwrap(), text(&out))
}

fn disturbance(run: &Value) -> &Value {
    &run["trials"][0]["disturbance"]
}

fn other_run_ids(run: &Value) -> Vec<String> {
    disturbance(run)["other_runs"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter_map(|r| r["run_id"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn two_runs_side_by_side_flag_each_other_and_doctor_names_the_other() {
    if !fsarena::probe::sys::is_root() {
        eprintln!("SKIP two_runs_side_by_side: needs root (the registry is /run/fsarena)");
        return;
    }
    let base = tempfile::tempdir().unwrap();
    // A first doctor may take up to 20 s to find whether KVM works here (its guest
    // check, kept until reboot): not while run A lives only 6 s.
    fsarena(
        &["doctor", "--image-dir", base.path().to_str().unwrap()],
        &base.path().join("d.db"),
    );
    let a = start_run(base.path(), "a", "sleep 6");
    let a_img = base.path().join("a-img");
    // Until doctor sees run A live.
    let started = Instant::now();
    let doctor = loop {
        let out = fsarena(
            &["doctor", "--image-dir", base.path().to_str().unwrap()],
            &base.path().join("d.db"),
        );
        let t = text(&out);
        if t.contains(&format!("image dir {})", a_img.display())) {
            break t;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{t}");
        std::thread::sleep(Duration::from_millis(200));
    };
    // The check's line with its wrapped continuation lines (indented), joined.
    let mut lines = doctor.lines().skip_while(|l| !l.contains("other runs"));
    let mut line = lines.next().expect("an other-runs check").to_string();
    for more in lines.take_while(|l| l.starts_with(' ')) {
        line.push(' ');
        line.push_str(more.trim());
    }
    assert!(line.starts_with("WARN"), "{line}");
    assert!(
        line.contains(&format!("(pid {}, image dir", a.id())),
        "{line}"
    );
    let b = start_run(base.path(), "b", "sleep 2");
    let (b_json, b_out) = finished(b, base.path(), "b");
    let (a_json, _) = finished(a, base.path(), "a");
    let a_id = a_json["run_id"].as_str().unwrap().to_string();
    let b_id = b_json["run_id"].as_str().unwrap().to_string();
    // B's header says A is live, with its id, pid and image dir.
    assert!(
        b_out.contains(&format!(
            "another fsarena run is live on this machine: run {a_id} (pid"
        )),
        "{b_out}"
    );
    // Each trial saw the other run, and is flagged.
    for (run, other) in [(&b_json, &a_id), (&a_json, &b_id)] {
        let d = disturbance(run);
        assert_eq!(d["busy"], true, "{d}");
        assert!(other_run_ids(run).contains(other), "{d}");
        let reasons = d["reasons"].as_array().unwrap();
        assert!(reasons.iter().any(|r| r == "other-run"), "{d}");
        let flags = &run["trials"][0]["phases"][0]["flags"];
        assert!(
            flags.as_array().unwrap().iter().any(|f| f == "busy"),
            "{flags}"
        );
    }
    // Neither is live any more.
    assert!(std::fs::read_dir("/run/fsarena")
        .unwrap()
        .flatten()
        .all(|e| !e.file_name().to_string_lossy().starts_with(&a_id)));
}

/// Processes that keep every CPU busy until dropped.
struct Hogs(Vec<std::process::Child>);

impl Hogs {
    fn start() -> Hogs {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get());
        Hogs(
            (0..n)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .expect("start a busy loop")
                })
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn a_cpu_hog_makes_the_trial_busy_in_every_output() {
    let base = tempfile::tempdir().unwrap();
    let hogs = Hogs::start();
    std::thread::sleep(Duration::from_millis(300));
    let run = start_run(base.path(), "h", "sleep 2");
    let (json, out) = finished(run, base.path(), "h");
    drop(hogs);
    let d = disturbance(&json);
    assert_eq!(d["busy"], true, "{d}");
    assert!(
        d["reasons"].as_array().unwrap().iter().any(|r| r == "cpu"),
        "{d}"
    );
    let share = d["others_cpu_share"].as_f64().unwrap();
    assert!(share > 0.25 && share <= 1.0, "{d}");
    let flags = &json["trials"][0]["phases"][0]["flags"];
    assert!(
        flags.as_array().unwrap().iter().any(|f| f == "busy"),
        "{flags}"
    );
    // The terminal table: the mark, its legend, and what competed.
    assert!(out.contains("  b  busy:"), "{out}");
    assert!(out.contains("1 of 1 trial(s) were busy (b):"), "{out}");
    assert!(out.contains("\n    others used "), "{out}");
    let db = base.path().join("h.db");
    let show = text(&fsarena(&["show", "last"], &db));
    assert!(
        show.contains("were busy (b)") && show.contains("% of the CPUs"),
        "{show}"
    );
    // JSON and CSV exports from the database.
    let exported = fsarena(&["export", "--json", "last"], &db);
    let back: Value = serde_json::from_slice(&exported.stdout).unwrap();
    assert_eq!(disturbance(&back), d);
    let csv = String::from_utf8(fsarena(&["export", "--csv", "last"], &db).stdout).unwrap();
    // Every row is of the one busy trial: its flags field names busy.
    let has_busy = |l: &str| l.split(',').any(|f| f.split(';').any(|x| x == "busy"));
    assert!(
        csv.lines().count() > 1 && csv.lines().skip(1).all(has_busy),
        "{csv}"
    );
    let html_path = base.path().join("r.html");
    let o = fsarena(
        &["report", "--html", html_path.to_str().unwrap(), "last"],
        &db,
    );
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.contains("Busy trials (b)") && html.contains("% of the CPUs"));
    // compare warns that A and B were busy.
    let id = json["run_id"].as_str().unwrap();
    let cmp = text(&fsarena(&["compare", id, id], &db));
    assert!(cmp.contains("A: 1 of 1 trial(s) were busy (b)"), "{cmp}");
}

#[test]
fn another_writer_on_the_device_makes_a_loop_trial_busy() {
    let test = "another_writer_on_the_device";
    if common::skip_without_loop(test) || !common::fs_available(test, "ext4") {
        return;
    }
    let dir = common::image_dir();
    // A writer on the device under the image: 8 MiB at a time, each synced to the disk,
    // over the same 128 MiB of a file beside the images, until the run ends.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, path) = (stop.clone(), dir.path().join("other-writer.bin"));
        std::thread::spawn(move || {
            use std::io::{Seek, Write};
            let mut f = std::fs::File::create(&path).unwrap();
            let chunk = vec![0x5au8; 8 << 20];
            let mut written: u64 = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if written % (128 << 20) == 0 {
                    f.rewind().unwrap();
                }
                f.write_all(&chunk).unwrap();
                f.sync_data().unwrap();
                written += chunk.len() as u64;
            }
            std::fs::remove_file(&path).unwrap();
            written
        })
    };
    let out = common::run_any(
        &[
            "command:run=sleep 3",
            "--fs",
            "ext4",
            "--size",
            "128MiB",
            "--reps",
            "1",
        ],
        dir.path(),
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let written = writer.join().unwrap();
    assert_eq!(out.code, Some(0), "{}{}", out.stderr, out.stdout);
    let json = out.json.unwrap();
    let d = disturbance(&json);
    assert!(written >= 64 << 20, "the writer wrote only {written} bytes");
    assert!(
        d["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == "device"),
        "{d}"
    );
    assert!(
        d["others_device_bytes"].as_u64().unwrap() >= 16 << 20,
        "{d}"
    );
    common::assert_clean(dir.path());
}
