//! `fsarena run --fio FILE`: a job file written here (two groups, an include, a variable
//! from the environment) runs in a temporary directory without root, one trial per group
//! in file order; refusals come all at once with exit code 2; `--fio-lenient` runs
//! without them; the run keeps how it read the file (its notes) in its JSON and database.

mod common;

use common::phase;
use std::process::Command;

const JOBS: &str = "\
; two groups: a sequential write, then random reads by two jobs
[global]
include common.inc
size=${FSARENA_TEST_FIO_SIZE}
directory=/elsewhere   # fsarena supplies the directory

[write]
rw=write
bs=64k
end_fsync=1

[reads]
stonewall
rw=randread
norandommap
numjobs=2
time_based
runtime=300ms
";

fn write_jobs(dir: &std::path::Path, text: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("common.inc"), "ioengine=psync\nbs=4k\n").unwrap();
    let path = dir.join("t.fio");
    std::fs::write(&path, text).unwrap();
    path
}

/// `fsarena run --fio FILE ARGS --dir WORK --reps 1 --quiet` with its JSON, in `image`.
fn run(file: &std::path::Path, extra: &[&str], image: &std::path::Path) -> common::RunOutput {
    let work = image.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut args = vec![
        "--fio",
        file.to_str().unwrap(),
        "--dir",
        work.to_str().unwrap(),
        "--reps",
        "1",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    std::env::set_var("FSARENA_TEST_FIO_SIZE", "2m");
    common::run_any(&args, image)
}

/// fio with `args` on job file `file`, which must succeed.
fn fio_run(fio: &std::path::Path, args: &[&str], file: &std::path::Path) -> std::process::Output {
    let out = Command::new(fio).args(args).arg(file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn w_params<'a>(t: &'a serde_json::Value, key: &str) -> &'a str {
    t["params"][key].as_str().unwrap_or_default()
}

#[test]
fn a_job_file_runs_its_groups_in_order() {
    let image = common::image_dir();
    let file = write_jobs(image.path(), JOBS);
    let out = run(&file, &[], image.path());
    assert_eq!(out.code, Some(0), "{}\n{}", out.stderr, out.stdout);
    let v = out.json.expect("json");
    assert_eq!(
        v["policy"]["sync"], "none",
        "fio syncs only where the file says"
    );
    assert_eq!(v["policy"]["cache"], "cold", "fio's invalidate=1");
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 2);
    let labels: Vec<&str> = trials
        .iter()
        .map(|t| t["label"].as_str().unwrap())
        .collect();
    // Reports call each group by its fio job names.
    assert_eq!(labels, ["write", "reads"]);
    assert_eq!(w_params(&trials[0], "name"), "write");
    assert_eq!(w_params(&trials[1], "name"), "reads");
    assert_eq!(w_params(&trials[0], "rw"), "write");
    let (w, r) = (&trials[0], &trials[1]);
    assert_eq!(w["status"], "ok", "{w}");
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(phase(w, "run")["bytes"], 2 << 20);
    assert_eq!(phase(w, "run")["ops"], 32, "2 MiB in 64 KiB writes");
    assert_eq!(phase(r, "run")["workers"], 2);
    assert!(phase(r, "run")["ops"].as_u64().unwrap() > 0);
    assert_eq!(r["params"]["numjobs"], "2");
    common::assert_clean(image.path());
}

/// The run keeps what it said before it started (also under `--quiet`): each group's
/// mapping, the policies the file sets and the option mappings, in its JSON and in the
/// database, which `show` and `report` read.
#[test]
fn the_mapping_and_the_policies_of_the_file_are_kept_with_the_run() {
    let image = common::image_dir();
    let text = "[j]\nrw=write\nbs=64k\nsize=1m\nioengine=sync\ninvalidate=0\nrandseed=7\n";
    let file = write_jobs(image.path(), text);
    let out = run(&file, &[], image.path());
    assert_eq!(out.code, Some(0), "{}\n{}", out.stderr, out.stdout);
    let notes_of = |v: &serde_json::Value| -> Vec<String> {
        v["notes"]
            .as_array()
            .unwrap_or_else(|| panic!("no notes: {v}"))
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    let notes = notes_of(&out.json.expect("json"));
    let has = |what: &[&str]| notes.iter().any(|n| what.iter().all(|w| n.contains(w)));
    assert!(
        has(&[
            "fio: j (",
            "t.fio:1) runs as job:name=j,rw=write,bs=64KiB,size=1MiB"
        ]),
        "{notes:?}"
    );
    assert!(
        has(&[
            "cache keep (invalidate=0)",
            "sync none",
            "seed 7 (randseed=7)"
        ]),
        "{notes:?}"
    );
    assert!(has(&["t.fio:5: ioengine=sync runs as psync"]), "{notes:?}");
    // The database holds them: its export is the same list, and show and report work.
    let db = image.path().join("results.db");
    let db = db.to_str().unwrap();
    let exported = Command::new(common::bin())
        .args(["--db", db, "export", "--json", "last"])
        .output()
        .unwrap();
    assert!(exported.status.success(), "{exported:?}");
    let stored = common::run_document(&exported.stdout);
    assert_eq!(notes_of(&stored), notes);
    let html = image.path().join("r.html");
    for args in [
        vec!["--db", db, "show", "last"],
        vec![
            "--db",
            db,
            "report",
            "--html",
            html.to_str().unwrap(),
            "last",
        ],
    ] {
        let out = Command::new(common::bin()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    }
}

#[test]
fn refusals_come_all_at_once_and_lenient_runs_without_them() {
    let image = common::image_dir();
    let text = "[j]\nioengine=null\nsize=1m\noffset=4k\npercentage_random=50\nrw=randread\n\
                create_on_open=1\n";
    let file = write_jobs(image.path(), text);
    let out = run(&file, &[], image.path());
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    for option in ["offset=4k", "percentage_random=50", "create_on_open=1"] {
        assert!(out.stderr.contains(option), "{option}: {}", out.stderr);
    }
    assert!(out.json.is_none(), "nothing ran");
    let out = run(&file, &["--fio-lenient"], image.path());
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v = out.json.expect("json");
    assert_eq!(v["trials"][0]["status"], "ok");
    assert_eq!(v["trials"][0]["params"]["engine"], "null");
    assert_eq!(phase(&v["trials"][0], "run")["ops"], 256, "1 MiB in 4 KiB");
}

/// `--fio-set` lowers what a file asks for, in every job: here a size-based job of 1 GiB
/// runs as 1 MiB, with fio's random map (every 4 KiB block once).
#[test]
fn fio_set_overrides_the_file() {
    let image = common::image_dir();
    let file = write_jobs(image.path(), "[j]\nsize=1g\nrw=randread\n");
    let out = run(&file, &["--fio-set", "size=1m"], image.path());
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v = out.json.expect("json");
    let t = &v["trials"][0];
    assert_eq!(t["params"]["size"], "1MiB", "{t}");
    assert_eq!(t["params"]["randommap"], "true", "{t}");
    assert_eq!(phase(t, "run")["ops"], 256, "1 MiB in 4 KiB");
    let out = run(&file, &["--fio-set", "create_on_open=1"], image.path());
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("--fio-set:1"), "{}", out.stderr);
}

/// `--fio-section NAME` runs only that job section, as fio's `--section`; a name the file
/// lacks, or the flag without a job file, is refused with exit code 2.
#[test]
fn fio_section_runs_only_the_sections_named() {
    let image = common::image_dir();
    let file = write_jobs(
        image.path(),
        "[global]\nsize=1m\n[light]\nrw=read\n[heavy]\nstonewall\nrw=randread\n",
    );
    let out = run(&file, &["--fio-section", "heavy"], image.path());
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v = out.json.expect("json");
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 1, "{v}");
    assert_eq!(trials[0]["params"]["name"], "heavy");
    let out = run(&file, &["--fio-section", "medium"], image.path());
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("--fio-section:1"), "{}", out.stderr);
    // Without a job file: refused for that, not for anything else (the directory exists).
    let work = image.path().join("work");
    std::fs::remove_file(image.path().join("out.json")).unwrap();
    let out = common::run_any(
        &["--fio-section", "heavy", "--dir", work.to_str().unwrap()],
        image.path(),
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("--fio-section"), "{}", out.stderr);
    assert!(out.json.is_none(), "nothing ran");
}

/// Options that change only fio's reports or clock run unchanged, and the run keeps a
/// note of each (its JSON's `notes`, written under `--quiet` too).
#[test]
fn options_that_change_no_io_run_and_are_noted() {
    let image = common::image_dir();
    let text = "[j]\nioengine=null\nsize=1m\nrw=randread\ngtod_reduce=1\nwrite_bw_log=bw\n\
                group_reporting\n";
    let file = write_jobs(image.path(), text);
    let out = run(&file, &[], image.path());
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v = out.json.expect("json");
    assert_eq!(phase(&v["trials"][0], "run")["ops"], 256, "1 MiB in 4 KiB");
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    for option in ["gtod_reduce=1", "write_bw_log=bw", "group_reporting"] {
        let said = notes
            .iter()
            .filter(|n| n.contains(&format!(": {option}: no I/O changes")))
            .count();
        assert_eq!(said, 1, "{option}: {notes:#?}");
    }
}

/// The workload `job:fio=FILE` runs the file as `--fio FILE` does; it runs alone, and
/// `--fio-lenient` needs a job file.
#[test]
fn the_job_fio_workload_is_the_fio_flag() {
    let image = common::image_dir();
    let file = write_jobs(image.path(), "[j]\nsize=1m\nrw=read\n");
    let work = image.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let spec = format!("job:fio={}", file.display());
    let dir = work.to_str().unwrap();
    let out = common::run_any(
        &[&spec, "--dir", dir, "--reps", "1", "--quiet"],
        image.path(),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v = out.json.expect("json");
    assert_eq!(v["policy"]["sync"], "none", "the file's policy");
    assert_eq!(v["trials"][0]["params"]["size"], "1MiB");
    assert_eq!(v["trials"][0]["status"], "ok");
    for args in [
        vec![spec.as_str(), "job", "--dir", dir],
        vec!["job", "--fio-lenient", "--dir", dir],
    ] {
        let out = common::run_any(&args, image.path());
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.stderr);
    }
}

#[test]
fn a_policy_the_file_contradicts_is_refused() {
    let image = common::image_dir();
    let file = write_jobs(image.path(), JOBS);
    for flags in [["--cache", "keep"], ["--sync", "end"]] {
        let out = run(&file, &flags, image.path());
        assert_eq!(out.code, Some(2), "{flags:?}: {}", out.stderr);
    }
    // --fio replaces the workloads: naming one too is a usage error of clap.
    let out = Command::new(common::bin())
        .args(["run", "--fio", file.to_str().unwrap(), "job"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_plan_file_runs_a_job_file_with_the_policy_it_asks_for() {
    let image = common::image_dir();
    let dir = image.path();
    write_jobs(dir, JOBS);
    std::fs::create_dir_all(dir.join("work")).unwrap();
    let plan = |defaults: &str| {
        let text = format!(
            "[defaults]\nreps = 1\n{defaults}\n[[target]]\ndir = \"work\"\n\
             [[workload]]\nfio = \"t.fio\"\n"
        );
        let path = dir.join("p.toml");
        std::fs::write(&path, text).unwrap();
        std::env::set_var("FSARENA_TEST_FIO_SIZE", "2m");
        common::run_any(&["--plan", path.to_str().unwrap(), "--quiet"], dir)
    };
    let out = plan("");
    assert_eq!(out.code, Some(2), "sync = end is not fio's: {}", out.stderr);
    let out = plan("sync = \"none\"");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v = out.json.expect("json");
    let labels: Vec<&str> = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["write", "reads"]);
    // Only the sections named, as --fio-section.
    let text = "[defaults]\nreps = 1\nsync = \"none\"\n[[target]]\ndir = \"work\"\n\
                [[workload]]\nfio = \"t.fio\"\nsections = [\"reads\"]\n";
    let path = dir.join("p.toml");
    std::fs::write(&path, text).unwrap();
    let out = common::run_any(&["--plan", path.to_str().unwrap(), "--quiet"], dir);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v = out.json.expect("json");
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 1, "{v}");
    assert_eq!(trials[0]["label"], "reads");
    // A name no job section has is refused where the plan gave it.
    std::fs::write(&path, text.replace("[\"reads\"]", "[\"reads\", \"nope\"]")).unwrap();
    let out = common::run_any(&["--plan", path.to_str().unwrap(), "--quiet"], dir);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("sections:2"), "{}", out.stderr);
    // Options over every job's own, as --fio-set; a refusal named where the plan gave it.
    std::fs::write(&path, text.replace("\"]\n", "\"]\nset = [\"size=1m\"]\n")).unwrap();
    let out = common::run_any(&["--plan", path.to_str().unwrap(), "--quiet"], dir);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v = out.json.expect("json");
    assert_eq!(v["trials"][0]["params"]["size"], "1MiB", "{v}");
    let bad = text.replace("\"]\n", "\"]\nset = [\"size=1m\", \"create_on_open=1\"]\n");
    std::fs::write(&path, bad).unwrap();
    let out = common::run_any(&["--plan", path.to_str().unwrap(), "--quiet"], dir);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("set:2"), "{}", out.stderr);
}

/// The same job file through fio itself (when installed) and through fsarena moves the
/// same bytes in the same number of requests, group by group: sizes with fio's units,
/// `filesize` × `nrfiles`, `numjobs`, the null engine.
#[test]
fn moves_what_fio_moves() {
    let fio = std::path::Path::new("/usr/bin/fio");
    if !fio.exists() {
        eprintln!("SKIP moves_what_fio_moves: /usr/bin/fio is not installed");
        return;
    }
    let image = common::image_dir();
    let fio_dir = image.path().join("fio-files");
    std::fs::create_dir_all(&fio_dir).unwrap();
    let text = format!(
        "[global]\ndirectory={}\nioengine=psync\n\
         [w]\nrw=write\nbs=64k\nsize=2m\nnumjobs=2\n\
         [r]\nstonewall\nrw=read\nbs=4kb\nfilesize=256k\nnrfiles=4\n\
         [n]\nstonewall\nioengine=null\nrw=randread\nnorandommap\nbs=4KiB\nsize=1m\n\
         [s]\nstonewall\nrw=write\nbs=4k\nsize=96420\n\
         [m]\nstonewall\nfilename=t\nrw=write\nsize=1m\n\
         [p]\nstonewall\nfilename=t\nrw=randread\nsize=30%\n\
         [a]\nstonewall\nfilename=t\nrw=read\nbs=64k\n\
         [z]\nstonewall\nrw=randwrite\nfilesize=2m\nsize=512k\n",
        fio_dir.display()
    );
    let file = write_jobs(image.path(), &text);
    let out = fio_run(fio, &["--output-format=json"], &file);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // fio: per job; the two clones of `w` add up as fsarena's one trial of numjobs=2.
    let mut by_group: Vec<(u64, u64)> = Vec::new();
    for j in v["jobs"].as_array().unwrap() {
        let moved = |d: &str| {
            (
                j[d]["io_bytes"].as_u64().unwrap(),
                j[d]["total_ios"].as_u64().unwrap(),
            )
        };
        let (rb, ri) = moved("read");
        let (wb, wi) = moved("write");
        match (j["jobname"].as_str().unwrap(), by_group.as_mut_slice()) {
            ("w", [g]) => *g = (g.0 + rb + wb, g.1 + ri + wi),
            _ => by_group.push((rb + wb, ri + wi)),
        }
    }
    let out = run(&file, &[], image.path());
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v = out.json.expect("json");
    let ours: Vec<(u64, u64)> = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let p = phase(t, "run");
            (p["bytes"].as_u64().unwrap(), p["ops"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(ours, by_group);
    // 2 × 2 MiB in 64 KiB; 1 MiB in 4096 B; 1 MiB in blocks of 4000 B (fio's KiB is
    // 1000) at random, the last one whole, as fio does; 96,420 bytes written in order stop
    // at the last whole 4 KiB block; a file an earlier group made: 1 MiB, 30% of it in
    // whole 4 KiB blocks, then all of it (no size) in 64 KiB; 512 KiB (size) of random
    // writes in a file of 2 MiB (filesize).
    assert_eq!(
        by_group,
        [
            (4 << 20, 64),
            (1 << 20, 256),
            (263 * 4000, 263),
            (23 * 4096, 23),
            (1 << 20, 256),
            (76 * 4096, 76),
            (1 << 20, 16),
            (512 << 10, 128),
        ]
    );
}

/// A plan's job file is not read in a guest (the guest's fsarena would read it itself):
/// refused, pointing to `run --fio`, which runs in one (tests/guest.rs).
#[test]
fn a_plans_job_file_is_refused_in_a_guest_kernel() {
    let image = common::image_dir();
    let dir = image.path();
    write_jobs(dir, JOBS);
    let plan = dir.join("p.toml");
    std::fs::write(
        &plan,
        "[defaults]\nsync = \"none\"\n[[target]]\nfs = \"tmpfs\"\n\
         [[workload]]\nfio = \"t.fio\"\n",
    )
    .unwrap();
    let plan = plan.to_str().unwrap();
    let out = common::run_any(&["--plan", plan, "--kernel", "/nonexistent/vmlinuz"], dir);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("run --fio FILE --kernel"),
        "{}",
        out.stderr
    );
}

/// `randrepeat=0`: each run draws a fresh seed, recorded as the run's (`policy.seed`);
/// a run given it with `--seed` draws the same again (the offsets per repetition are
/// checked in the job workload's tests).
#[test]
fn randrepeat_0_records_a_fresh_seed_that_seed_repeats() {
    let image = common::image_dir();
    let file = write_jobs(image.path(), "[j]\nsize=1m\nrw=randread\nrandrepeat=0\n");
    let seed_of = |extra: &[&str]| {
        let out = run(&file, extra, image.path());
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let v = out.json.expect("json");
        assert_eq!(v["trials"][0]["params"]["randrepeat"], "false");
        assert!(
            v["notes"].to_string().contains("randrepeat=0"),
            "{}",
            v["notes"]
        );
        v["policy"]["seed"].as_u64().expect("seed")
    };
    let (a, b) = (seed_of(&[]), seed_of(&[]));
    assert_ne!(a, b, "two runs drew the same fresh seed");
    assert_eq!(seed_of(&["--seed", &a.to_string()]), a);
}

/// The requests of one file, as (offset, length), cover it exactly once — no gap, no
/// overlap — in requests of whole 4 KiB blocks; returns how many are shorter than every
/// size `sizes` draws (shortened by the random map).
fn covers_once(mut writes: Vec<(u64, u64)>, size: u64, sizes: &[u64], who: &str) -> usize {
    writes.sort_unstable();
    let mut end = 0;
    for &(off, len) in &writes {
        assert_eq!(off, end, "{who}: a gap or an overlap at {off}: {writes:?}");
        assert_eq!(len % 4096, 0, "{who}: {len}");
        end = off + len;
    }
    assert_eq!(end, size, "{who}: the file covered once");
    writes.iter().filter(|w| !sizes.contains(&w.1)).count()
}

/// fio's random map with several block sizes: fio's own `write_iolog` and the `pwrite64`
/// calls fsarena makes (seen by strace) both cover the file once, block by block, some
/// requests shortened below every size drawn — fio's `mark_random_map`.
#[test]
fn a_random_map_with_several_sizes_writes_each_block_once_as_fio() {
    let test = "a_random_map_with_several_sizes_writes_each_block_once_as_fio";
    let (fio, strace) = (
        std::path::Path::new("/usr/bin/fio"),
        std::path::Path::new("/usr/bin/strace"),
    );
    for tool in [fio, strace] {
        if !tool.exists() {
            eprintln!("SKIP {test}: {} is not installed", tool.display());
            return;
        }
    }
    let image = common::image_dir();
    let fio_dir = image.path().join("fio-files");
    std::fs::create_dir_all(&fio_dir).unwrap();
    let text = format!(
        "[m]\ndirectory={}\nioengine=psync\nrw=randwrite\nbssplit=4k/60:64k/40\nsize=2m\n",
        fio_dir.display()
    );
    let file = write_jobs(image.path(), &text);
    let iolog = image.path().join("fio.iolog");
    fio_run(
        fio,
        &[
            &format!("--write_iolog={}", iolog.display()),
            "--output=/dev/null",
        ],
        &file,
    );
    let theirs: Vec<(u64, u64)> = std::fs::read_to_string(&iolog)
        .unwrap()
        .lines()
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [_, _, "write", off, len] => Some((off.parse().ok()?, len.parse().ok()?)),
            _ => None,
        })
        .collect();
    let sizes = [4096, 65536];
    let short = covers_once(theirs, 2 << 20, &sizes, "fio");
    assert!(short > 0, "fio shortened no request");
    let work = image.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let trace = image.path().join("strace.log");
    let out = Command::new(strace)
        .args(["-f", "-y", "-e", "trace=pwrite64", "-o"])
        .arg(&trace)
        .arg(common::bin())
        .args(["run", "--fio"])
        .arg(&file)
        .arg("--dir")
        .arg(&work)
        .args(["--reps", "1", "--quiet", "--image-dir"])
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
    // `PID pwrite64(FD</…/work/…>, "…"..., LEN, OFF) = LEN`: the job's file is the one
    // under the work directory; its length and offset are the last two arguments.
    let under = format!("<{}/", work.display());
    let ours: Vec<(u64, u64)> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .filter(|l| l.contains("pwrite64(") && l.contains(&under))
        .filter_map(|l| {
            let args = l.rsplit_once(") = ")?.0;
            let mut last = args.rsplitn(3, ", ");
            let off = last.next()?.parse().ok()?;
            let len = last.next()?.parse().ok()?;
            Some((off, len))
        })
        .collect();
    let short = covers_once(ours, 2 << 20, &sizes, "fsarena");
    assert!(short > 0, "fsarena shortened no request");
}

/// Jobs of one group that differ run at once, in one trial: two readers, a writer on
/// their file (it names theirs) and one of another block size on its own; the run phase
/// holds every job's bytes, and nothing is left behind.
#[test]
fn jobs_that_differ_run_at_once_in_one_trial() {
    let image = common::image_dir();
    let text = "[global]\nioengine=psync\nsize=1m\n\
                [readers]\nrw=read\nfilename=shared\nnumjobs=2\n\
                [writer]\nrw=write\nfilename=shared\nbs=8k\n\
                [big]\nrw=write\nbs=64k\n";
    let file = write_jobs(image.path(), text);
    let out = run(&file, &[], image.path());
    assert_eq!(out.code, Some(0), "{}\n{}", out.stderr, out.stdout);
    let v = out.json.expect("json");
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 1, "one group, one trial");
    let t = &trials[0];
    assert_eq!(t["status"], "ok", "{t}");
    assert_eq!(
        w_params(t, "with"),
        "rw=write,bs=8KiB,size=1MiB,engine=psync,fallocate=native,files_of=1:0;\
         rw=write,bs=64KiB,size=1MiB,engine=psync,fallocate=native"
    );
    let run = phase(t, "run");
    assert_eq!(run["workers"], 4);
    assert_eq!(
        run["bytes_read"],
        2 << 20,
        "two readers over the 1 MiB file"
    );
    assert_eq!(run["bytes_written"], 2 << 20, "the writer and the other");
    assert_eq!(run["ops"], 2 * 256 + 128 + 16);
    common::assert_clean(image.path());
}
