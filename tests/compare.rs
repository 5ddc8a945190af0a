//! `fsarena compare` end to end on the fixture run (bonnie, bonnie-files and postmark, three
//! repetitions each on ext4 and tmpfs): targets of one run, a run against itself, the exit
//! codes of `--fail-if-slower`, the errors for bad targets and runs, and runs of one plan
//! joined by `+` as one side with runs as the unit.

mod common;

use std::path::Path;
use std::process::Command;

/// Runs `fsarena --db DB compare ARGS` as in a terminal 300 columns wide, so that each
/// table row is one line (tests/width.rs checks it at 80 and 120); returns the exit code,
/// stdout and stderr.
fn compare(db: &Path, args: &[&str]) -> (i32, String, String) {
    compare_at("300", db, args)
}

/// Runs `fsarena --db DB compare ARGS` with `COLUMNS` set to `columns`.
fn compare_at(columns: &str, db: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(common::bin())
        .env("COLUMNS", columns)
        .arg("--db")
        .arg(db)
        .arg("compare")
        .args(args)
        .output()
        .expect("run fsarena");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn fixture() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = common::fixture_db(dir.path());
    (dir, db)
}

fn spec(target: &str) -> String {
    format!("{}:{target}", common::FIXTURE_RUN)
}

/// The table row of `workload phase metric`, split into its cells.
fn row(out: &str, workload: &str, phase: &str, metric: &str) -> Vec<String> {
    out.lines()
        .map(|l| {
            l.split(['│', '┆'])
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect::<Vec<_>>()
        })
        .find(|cells| cells.len() > 3 && cells[..3] == [workload, phase, metric])
        .unwrap_or_else(|| panic!("no row {workload} {phase} {metric} in\n{out}"))
}

/// Verdicts that claim a direction.
const DIRECTIONS: &[&str] = &["faster", "slower", "better", "worse", "more", "less"];

#[test]
fn two_targets_of_one_run() {
    let (_dir, db) = fixture();
    let (code, out, err) = compare(&db, &[&spec("ext4"), &spec("tmpfs")]);
    assert_eq!(code, 0, "{err}");
    let id = common::FIXTURE_RUN;
    assert!(
        out.contains(&format!(
            "A: run {id}, target ext4 (ext4 loop); host vm, kernel 6.18.44-fc-v595"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("B: run {id}, target tmpfs (tmpfs); host vm")),
        "{out}"
    );
    assert!(!out.contains("warning"), "same run, same host: {out}");
    // tmpfs has no block device, so no write amplification.
    assert!(
        out.contains("metrics only in A (not compared): write_amplification"),
        "{out}"
    );
    // Every workload × phase of the fixture, each with its metrics in METRICS order.
    for w in ["bonnie", "bonnie-files", "postmark"] {
        let info = fsarena::workload::find(w).unwrap();
        for p in info.phases.iter().map(|p| p.name) {
            for m in [
                "wall_s",
                "ops_per_s",
                "mb_per_s",
                "cpu_pct",
                "dirty_bytes_end",
            ] {
                row(&out, w, p, m);
            }
        }
    }
    // tmpfs reads seek positions about 12 times as fast, but three repetitions as noisy
    // as these (37% and 60%) cannot tell it among the 15 headlines judged together, at
    // Hsu's 2 degrees of freedom; the same wall time, explored on its own at 95%, can.
    let seeks = row(&out, "bonnie", "seeks", "ops_per_s");
    assert_eq!(
        seeks[3..],
        [
            "12304",
            "200213",
            "11.67",
            "wider\u{a0}than\u{a0}10×",
            "3/3",
            "no significant difference"
        ]
    );
    // A shorter wall time is faster too, a lower latency as well.
    assert_eq!(row(&out, "bonnie", "seeks", "wall_s")[8], "12× faster");
    assert_eq!(
        row(&out, "bonnie-files", "seq_stat", "lat_p50_us")[8],
        "3.1× faster"
    );
    // CPU% is no speed: more or less, never faster.
    assert_eq!(row(&out, "bonnie", "rewrite", "cpu_pct")[8], "2.3× more");
    // An interval that spans 1 gives no verdict.
    let rc = row(&out, "bonnie", "read_char", "mb_per_s");
    assert_eq!(
        rc[6..],
        [
            "wider\u{a0}than\u{a0}10×",
            "3/3",
            "no significant difference"
        ]
    );
    // Extra figures, zeros and all-zero figures.
    assert_eq!(
        row(&out, "postmark", "transactions", "transactions_per_s")[8],
        "9.8× faster"
    );
    assert_eq!(row(&out, "postmark", "delete", "total_s")[8], "7.2× faster");
    assert_eq!(
        row(&out, "bonnie-files", "seq_stat", "mb_per_s")[5..],
        ["—", "—", "3/3", "equal"]
    );
    assert_eq!(
        row(&out, "bonnie", "seeks", "dirty_bytes_end")[8],
        "n/a (zero values)"
    );
    assert!(
        out.contains(
            "147 metrics: 44 faster, 8 better, 1 more, 74 no significant difference, 7 equal"
        ),
        "{out}"
    );
    assert!(!out.to_lowercase().contains("nan"), "{out}");
}

/// At 80 columns the table splits between columns and no figure or interval
/// (`0.437–3.347`, `wider than 10×`) is broken across lines; only a verdict's words may
/// continue on the next line.
#[test]
fn at_80_columns_no_figure_or_interval_wraps() {
    let (_dir, db) = fixture();
    let (code, out, err) = compare_at("80", &db, &[&spec("ext4"), &spec("tmpfs")]);
    assert_eq!(code, 0, "{err}");
    assert_fits_80(&out);
    let broken: Vec<&str> = continued_rows(&out)
        .into_iter()
        .filter(|l| l.chars().any(|c| c.is_ascii_digit() || c == '–') || l.contains("than"))
        .collect();
    assert!(broken.is_empty(), "figures wrapped: {broken:#?}\n{out}");
}

#[test]
fn a_run_against_itself_differs_nowhere() {
    let (_dir, db) = fixture();
    let (code, out, err) = compare(&db, &["last", "last", "--fail-if-slower", "0"]);
    // Nothing is worse, but no gate can see a 0% slowdown: exit 5, said so.
    assert_eq!(code, 5, "{err}");
    assert!(out.contains("targets ext4, tmpfs"), "{out}");
    assert!(out.contains("A and B are the same measurements"), "{out}");
    let mut rows = 0;
    let body = out
        .lines()
        .filter(|l| l.starts_with('│') && !l.contains("median A"));
    for line in body {
        let verdict = line
            .split('┆')
            .next_back()
            .unwrap()
            .trim_end_matches('│')
            .trim();
        assert!(
            !DIRECTIONS.iter().any(|d| verdict.contains(d)),
            "a difference claimed between identical samples: {line}"
        );
        rows += 1;
    }
    // Every metric of both targets.
    assert_eq!(rows, 300, "{out}");
    let tally = "300 metrics: 287 equal, 13 n/a (zero values)";
    assert!(out.contains(tally), "{out}");
    assert!(
        flatten(&out).contains("no regression, but 30 gated figure(s) cannot tell"),
        "{out}"
    );
    assert!(out.contains("FAIL (exit 5)"), "{out}");
}

#[test]
fn fail_if_slower_sets_the_exit_code() {
    let (_dir, db) = fixture();
    let (ext4, tmpfs) = (spec("ext4"), spec("tmpfs"));
    // ext4 → tmpfs: nothing is worse at all, but no interval rules out a 0% loss: exit 5,
    // not a silent pass.
    let (code, out, _) = compare(&db, &[&ext4, &tmpfs, "--fail-if-slower", "0"]);
    assert_eq!(code, 5, "{out}");
    assert!(out.contains("FAIL (exit 5)"), "{out}");
    // tmpfs → ext4, the 15 phases' headline figures judged together (Benjamini-Hochberg,
    // Hsu's 2 df at 3 repetitions): bonnie's rewrite lost 88.2%, but its interval at 99.67%
    // still holds no loss at all: the gate cannot tell, and names the repetitions that would.
    let (code, out, err) = compare(&db, &[&tmpfs, &ext4, "--fail-if-slower", "50"]);
    assert_eq!(code, 5, "cannot tell has its own exit code: {err}");
    let flat = flatten(&out);
    assert!(flat.contains("gates on 15 figure(s)"), "{out}");
    assert!(
        flat.contains("judged together (the headlines' family; intervals at 99.67%)"),
        "{out}"
    );
    assert!(
        flat.contains("tmpfs→ext4 bonnie rewrite mb_per_s: 88.2% loss (interval -19.3% to 98.8%)"),
        "{out}"
    );
    assert!(
        flat.contains("cannot tell whether B lost 50% in 15 gated figure(s)"),
        "{out}"
    );
    assert!(
        flat.contains("run 77 repetitions per side (--reps 77): with the spread seen, an unchanged B then passes and a true 50% loss fails 95% of the time"),
        "{out}"
    );
    // One phase gated: its interval at 95% is a loss of 79.0% to 93.3%: a 50% loss is not
    // ruled out and B is told apart as worse: a regression, exit 3, marked in the table.
    let (code, out, err) = compare(
        &db,
        &[
            &tmpfs,
            &ext4,
            "--fail-if-slower",
            "50",
            "--gate-phase",
            "bonnie:rewrite",
        ],
    );
    assert_eq!(code, 3, "a regression has its own exit code: {err}");
    let flat = flatten(&out);
    assert!(
        flat.contains("tmpfs→ext4 bonnie rewrite mb_per_s: 88.2% loss (interval 79.0% to 93.3%)"),
        "{out}"
    );
    assert!(
        flat.contains("1 figure(s) of B worse than A, a 50% loss not ruled out"),
        "{out}"
    );
    assert!(out.contains("8.5× slower (88.2% worse > 50%) !"), "{out}");
    // Set at 80% the same interval (79.0–93.3%) rules out neither: cannot tell, exit 5; at
    // 94% it rules the loss out: B is worse, by less than 94%, and the gate passes.
    let (code, out, _) = compare(
        &db,
        &[
            &tmpfs,
            &ext4,
            "--fail-if-slower",
            "94",
            "--gate-phase",
            "bonnie:rewrite",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        flatten(&out).contains("1 figure(s) of B worse than A, by less than 94% (pass)"),
        "{out}"
    );
    // The seek rate is a headline; its wall time and tail latencies are not: they are
    // never named by the gate.
    let (_, out, _) = compare(&db, &[&tmpfs, &ext4, "--fail-if-slower", "50"]);
    for m in ["seeks wall_s", "seeks lat_p99_us"] {
        assert!(!out.contains(&format!("bonnie {m}: ")), "{m}: {out}");
    }
    assert!(
        flatten(&out).contains("tmpfs→ext4 bonnie seeks ops_per_s: "),
        "{out}"
    );
    // Without the option a slower B is reported, not failed.
    let (code, out, _) = compare(&db, &[&tmpfs, &ext4]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("44 slower"), "{out}");
}

#[test]
fn bad_targets_runs_and_thresholds_are_usage_errors() {
    let (_dir, db) = fixture();
    let (code, out, err) = compare(&db, &[&spec("xfs"), &spec("ext4")]);
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains(&format!(
            "run {} has no target 'xfs'; its targets: ext4, tmpfs",
            common::FIXTURE_RUN
        )),
        "{err}"
    );
    let (code, _, err) = compare(&db, &["nope", "last"]);
    assert_eq!(code, 2);
    assert!(err.contains("no run 'nope'"), "{err}");
    let (code, _, err) = compare(&db, &["last:", "last"]);
    assert_eq!(code, 2);
    assert!(err.contains("give RUN or RUN:TARGET"), "{err}");
    let (code, _, err) = compare(&db, &["last", "last", "--fail-if-slower=-5"]);
    assert_eq!(code, 2);
    assert!(err.contains("from 0 up to (not including) 100"), "{err}");
    let (code, _, err) = compare(&db, &["last", "last", "--fail-if-slower", "100"]);
    assert_eq!(code, 2);
    assert!(err.contains("not 100"), "{err}");
    for bad in ["0", "100", "-3"] {
        let (code, _, err) = compare(&db, &["last", &format!("--margin={bad}")]);
        assert_eq!(code, 2, "--margin {bad}: {err}");
        assert!(
            err.contains("give a percentage above 0 and below 100"),
            "{err}"
        );
    }
    // A wider margin is in the verdict's Control line.
    let (code, out, err) = compare(&db, &["last", "--margin", "50"]);
    assert_eq!(code, 0, "{err}");
    assert!(flatten(&out).contains("\"as fast\" (within ±50%"), "{out}");
}

#[test]
fn help_names_the_method() {
    for flag in ["-h", "--help"] {
        let out = Command::new(common::bin())
            .args(["compare", flag])
            .output()
            .expect("run fsarena");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(
            text.contains("Welch's t on the logarithms") && text.contains("Hsu's"),
            "{flag}: {text}"
        );
    }
}

/// `compare RUN` alone ranks all the run's targets, phase by phase, with the engine `run`
/// ends with; `--fail-if-slower` needs two sides.
#[test]
fn one_run_alone_ranks_all_its_targets() {
    let (_dir, db) = fixture();
    let (code, out, err) = compare(&db, &["last"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Verdict: per phase, best first"), "{out}");
    // Three repetitions this noisy tell nothing apart among 15 pairs at Hsu's 2 df.
    assert!(
        flatten(&out).contains("transactions (transactions/s): tmpfs(a) ext4(a) ext4 cannot tell (9.8× [wider than 10×])"),
        "{out}"
    );
    let (code, _, err) = compare(&db, &["last", "--fail-if-slower", "5"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs two sides"), "{err}");
}

/// The fixture run stored again as run `id` on kernel `kernel`, started a day later per
/// `day`, with each ext4 phase's rates times `speed` (its times divided by it).
fn fixture_variant(id: &str, kernel: &str, day: u32, speed: f64) -> fsarena::result::RunResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json");
    let text = std::fs::read_to_string(path).unwrap();
    let mut run: fsarena::result::RunResult = serde_json::from_str(&text).unwrap();
    run.run_id = id.into();
    run.host.kernel = kernel.into();
    run.started_at = run
        .started_at
        .replace("2026-11-23", &format!("2026-11-{day}"));
    for t in run.trials.iter_mut().filter(|t| t.target == "ext4") {
        for p in &mut t.phases {
            p.mb_per_s *= speed;
            p.ops_per_s *= speed;
            p.wall_s /= speed;
        }
    }
    run
}

/// A database with three runs of the fixture's plan on three kernels: the fixture (455e),
/// one whose ext4 is 1000 times as fast (bbbb: so far apart that three repetitions as
/// noisy as the fixture's, 17% and more, are told apart among 90 pairs at Hsu's 2 df), and one like the fixture but with ext4 mounted
/// `noatime` and a third target, btrfs, that the others lack (cccc).
fn three_runs(dir: &Path) -> std::path::PathBuf {
    let db = common::fixture_db(dir);
    let mut store = fsarena::store::Store::open(&db).unwrap();
    store
        .import(&fixture_variant(
            "20261124-010000-bbbb",
            "6.19.0",
            24,
            1000.0,
        ))
        .unwrap();
    let mut c = fixture_variant("20261125-010000-cccc", "6.20.0", 25, 1.0);
    c.targets[0].requested_mount_opts = "noatime".into();
    let mut btrfs = c.targets[1].clone();
    btrfs.name = "btrfs".into();
    c.targets.push(btrfs);
    let copies: Vec<_> = c
        .trials
        .iter()
        .filter(|t| t.target == "tmpfs")
        .cloned()
        .collect();
    c.trials.extend(copies.into_iter().map(|mut t| {
        t.target = "btrfs".into();
        t
    }));
    store.import(&c).unwrap();
    db
}

/// `out` with its lines joined by single spaces, the `—` between a ranking and its ratios
/// left out (it goes where both fit on one line).
fn flatten(out: &str) -> String {
    let words: Vec<&str> = out.split_whitespace().filter(|w| *w != "—").collect();
    words.join(" ")
}

/// A table row continued on a second line has an empty first cell (the key columns are
/// repeated in every part of a split table, so only a wrapped cell leaves one empty).
fn continued_rows(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with('│'))
        .filter(|l| {
            l.split(['│', '┆'])
                .nth(1)
                .is_some_and(|c| c.trim().is_empty())
        })
        .collect()
}

fn assert_fits_80(out: &str) {
    for line in out.lines() {
        assert!(line.chars().count() <= 80, "over 80 columns: {line}\n{out}");
    }
}

/// Three whole runs: ranked target by target for the targets they all have, each labelled
/// by its id's last part and the kernel that sets it apart; the 1000-times-faster ext4 first.
#[test]
fn three_runs_are_ranked_target_by_target() {
    let dir = tempfile::tempdir().unwrap();
    let db = three_runs(dir.path());
    let (code, out, err) = compare_at(
        "80",
        &db,
        &[
            common::FIXTURE_RUN,
            "20261124-010000-bbbb",
            "20261125-010000-cccc",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_fits_80(&out);
    assert!(
        out.starts_with("Sides, ranked together phase by phase:"),
        "{out}"
    );
    assert!(
        out.contains("bbbb: run 20261124-010000-bbbb, targets ext4, tmpfs"),
        "{out}"
    );
    let flat = flatten(&out);
    assert!(
        flat.contains("The runs differ in kernel (455e 6.18.44-fc-v595; bbbb 6.19.0; cccc 6.20.0)"),
        "{out}"
    );
    assert!(
        flat.contains("targets not in every run (not ranked): btrfs (in cccc)"),
        "{out}"
    );
    assert!(
        flat.contains(
            "== target ext4 == The runs' ext4 differ in mount options \
             (455e defaults; bbbb defaults; cccc noatime) bonnie"
        ),
        "{out}"
    );
    assert!(out.contains("== target tmpfs =="), "{out}");
    // All pairs of all phases of both targets are one family (Benjamini-Hochberg). Bonnie's
    // rewrite on ext4: bbbb 1000 times as fast, told apart; the fixture and its copy cccc share
    // a letter. Each run goes by the kernel that sets it apart (the mount options alone do
    // not tell all three apart).
    assert!(
        flat.contains("over all 90 pairs of sides, all phases together"),
        "{out}"
    );
    let rewrite = flat
        .split(" rewrite (MB/s): ")
        .nth(1)
        .unwrap_or_else(|| panic!("no rewrite line: {out}"));
    assert!(
        rewrite.starts_with(
            "bbbb[6.19.0](a) 455e[6.18.44-fc-v595](b) cccc[6.20.0](b) \
             455e[6.18.44-fc-v595] 1000× slower ["
        ),
        "{rewrite}"
    );
    // tmpfs is the same in all three: nothing told apart, no word of a direction.
    let tmpfs = flat.split("== target tmpfs ==").nth(1).unwrap();
    assert!(
        !tmpfs.contains("(b)") && !tmpfs.contains("slower"),
        "{tmpfs}"
    );
    assert!(
        tmpfs.contains("cccc[6.20.0] cannot tell (1.00× ["),
        "{tmpfs}"
    );
}

/// RUN:TARGET sides from several runs are ranked in one table per phase; with three sides
/// `--fail-if-slower` is a usage error; runs with no target in common are named.
#[test]
fn three_targets_are_ranked_together_and_the_gate_needs_two() {
    let dir = tempfile::tempdir().unwrap();
    let db = three_runs(dir.path());
    let ext4 = spec("ext4");
    let tmpfs = spec("tmpfs");
    let sides = [ext4.as_str(), &tmpfs, "20261124-010000-bbbb:ext4"];
    let (code, out, err) = compare_at("80", &db, &sides);
    assert_eq!(code, 0, "{err}");
    assert_fits_80(&out);
    assert!(!out.contains("== target"), "one ranking: {out}");
    let flat = flatten(&out);
    assert!(
        flat.contains(
            "455e:tmpfs[6.18.44-fc-v595]: run 20261123-023431-455e, target tmpfs (tmpfs)"
        ),
        "{out}"
    );
    assert!(
        flat.contains(
            " rewrite (MB/s): bbbb:ext4[6.19.0](a) 455e:tmpfs[6.18.44-fc-v595](b) \
             455e:ext4[6.18.44-fc-v595](c) 455e:tmpfs[6.18.44-fc-v595] 118× slower [61–229×]; \
             455e:ext4[6.18.44-fc-v595] 1000× slower [480–2084×]"
        ),
        "{out}"
    );
    let mut gated = sides.to_vec();
    gated.extend(["--fail-if-slower", "10"]);
    let (code, _, err) = compare_at("80", &db, &gated);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("needs two sides to compare, A and B (3 given)"),
        "{err}"
    );
    let (code, _, err) = compare_at("80", &db, &["last:btrfs", "last:tmpfs", "last:nope"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("has no target 'nope'"), "{err}");
    let (code, _, err) = compare_at("80", &db, &["last:ext4"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("'last:ext4' alone has nothing to be compared with"),
        "{err}"
    );
}

/// `--margin` on `show` and `report` judges a stored run with that margin; out of range is
/// a usage error (exit 2), as for `compare`.
#[test]
fn show_and_report_take_the_margin() {
    let (dir, db) = fixture();
    let fsarena = |args: &[&str]| {
        Command::new(common::bin())
            .env("COLUMNS", "300")
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .expect("run fsarena")
    };
    let out = fsarena(&["show", common::FIXTURE_RUN, "--margin", "50"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        flatten(&text).contains("\"as fast\" (within ±50%"),
        "{text}"
    );
    let plain = fsarena(&["show", common::FIXTURE_RUN]);
    assert!(flatten(&String::from_utf8_lossy(&plain.stdout)).contains("\"as fast\" (within ±3%"));
    for bad in ["0", "100", "-5"] {
        let out = fsarena(&["show", common::FIXTURE_RUN, "--margin", bad]);
        assert_eq!(out.status.code(), Some(2), "--margin {bad}");
    }
    let html = dir.path().join("r.html");
    let out = fsarena(&[
        "report",
        common::FIXTURE_RUN,
        "--html",
        html.to_str().unwrap(),
        "--margin",
        "50",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("within ±50% of the best"),
        "no margin in the page"
    );
}

/// `run --margin` is recorded with the run (its JSON's policy), so `show` and `report`
/// judge it with the same margin later.
#[test]
fn run_records_its_margin() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let json = dir.path().join("r.json");
    let out = Command::new(common::bin())
        .env("COLUMNS", "300")
        .args([
            "run",
            "smallfiles:files=20",
            "--reps",
            "3",
            "--cache",
            "keep",
        ])
        .arg("--dir")
        .arg(&work)
        .arg("--image-dir")
        .arg(dir.path().join("img"))
        .arg("--db")
        .arg(dir.path().join("r.db"))
        .arg("--json")
        .arg(&json)
        .args(["--margin", "40"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["policy"]["margin_pct"], 40.0);
}

/// `--gate-phase`: only the named phases are gated (declared before looking); a name
/// that matches nothing, or the flag without the gate, is a usage error.
#[test]
fn the_gate_can_be_declared_on_chosen_phases() {
    let (_dir, db) = fixture();
    let (ext4, tmpfs) = (spec("ext4"), spec("tmpfs"));
    let (code, out, err) = compare(
        &db,
        &[
            &tmpfs,
            &ext4,
            "--fail-if-slower",
            "50",
            "--gate-phase",
            "bonnie:rewrite",
        ],
    );
    assert_eq!(code, 3, "{err}");
    assert!(out.contains("gates on 1 figure(s)"), "{out}");
    assert!(
        flatten(&out).contains("1 figure(s) of B worse than A, a 50% loss not ruled out"),
        "{out}"
    );
    let (code, _, err) = compare(
        &db,
        &[
            &tmpfs,
            &ext4,
            "--fail-if-slower",
            "50",
            "--gate-phase",
            "bonnie:nope",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--gate-phase bonnie:nope: no such phase compared"),
        "{err}"
    );
    let (code, _, _) = compare(&db, &[&tmpfs, &ext4, "--gate-phase", "bonnie:rewrite"]);
    assert_eq!(code, 2, "--gate-phase goes with --fail-if-slower");
}

/// Runs on different days of one plan: A's three are the fixture and two copies whose
/// ext4 is 5% faster and 5% slower; B's three have ext4 at half A's speed, ±4%; `odd` is
/// the plan with another seed. Each run's plan hash is stored as `fsarena run` stores it,
/// but `odd`'s.
fn days(dir: &Path) -> std::path::PathBuf {
    let db = common::fixture_db(dir);
    let mut store = fsarena::store::Store::open(&db).unwrap();
    let mut ids = vec![common::FIXTURE_RUN.to_string()];
    for (id, day, speed) in [
        ("20261124-010000-a002", 24, 1.05),
        ("20261125-010000-a003", 25, 0.95),
        ("20261126-010000-b001", 26, 0.5),
        ("20261127-010000-b002", 27, 0.52),
        ("20261128-010000-b003", 28, 0.48),
    ] {
        store
            .import(&fixture_variant(id, "6.18.44-fc-v595", day, speed))
            .unwrap();
        ids.push(id.into());
    }
    for id in &ids {
        store.set_plan(id, "00000000000000aa", "{}").unwrap();
    }
    let mut odd = fixture_variant("20261129-010000-0dd0", "6.18.44-fc-v595", 29, 1.0);
    odd.policy.seed += 1;
    store.import(&odd).unwrap();
    db
}

const A: &str = "20261123-023431-455e+a002+a003";
const B: &str = "b001+b002+b003";

/// A side of several runs joined by `+` is one run whose repetitions are the runs, each
/// worth the geometric mean of its own: what `compare` judges is one value per run.
#[test]
fn runs_joined_by_plus_are_one_side_with_runs_as_the_unit() {
    let dir = tempfile::tempdir().unwrap();
    let db = days(dir.path());
    let store = fsarena::store::Store::open_existing(&db).unwrap();
    let a = fsarena::compare::across::load(&store, A).unwrap();
    assert_eq!(a.run_id, "455e+a002+a003");
    assert_eq!(a.policy.reps, 3);
    let fixture = store.load(common::FIXTURE_RUN).unwrap();
    let c = fsarena::compare::compare_runs(
        a.clone(),
        Some("ext4"),
        fsarena::compare::across::load(&store, B).unwrap(),
        Some("ext4"),
        Some(10.0),
    )
    .unwrap();
    let row = c
        .rows
        .iter()
        .find(|r| r.workload == "bonnie" && r.phase == "seeks" && r.metric == "ops_per_s")
        .unwrap();
    assert_eq!((row.n_a, row.n_b), (3, 3));
    // The fixture's own value: the geometric mean of its three ext4 seek rates.
    let reps: Vec<f64> = fixture
        .trials
        .iter()
        .filter(|t| t.target == "ext4" && t.label == "bonnie" && t.status == "ok")
        .flat_map(|t| t.phases.iter().filter(|p| p.name == "seeks"))
        .map(|p| p.ops_per_s)
        .collect();
    assert_eq!(reps.len(), 3);
    let geo = fsarena::compare::across::geometric_mean(&reps);
    for (v, k) in row.values_a.iter().zip([1.0, 1.05, 0.95]) {
        assert!((v / (geo * k) - 1.0).abs() < 1e-9, "{v} vs {}", geo * k);
    }
    for (v, k) in row.values_b.iter().zip([0.5, 0.52, 0.48]) {
        assert!((v / (geo * k) - 1.0).abs() < 1e-9, "{v} vs {}", geo * k);
    }
    assert!(
        row.regression,
        "half the speed on every day: {:?}",
        row.verdict
    );
    let note = fsarena::compare::across::composition(&a).unwrap();
    assert!(
        note.starts_with("3 runs of plan 00000000000000aa as repetitions (20261123-023431-455e, "),
        "{note}"
    );
}

/// On the command line: the gate with day-to-day variance in the interval, a ranking of
/// one plan's targets with runs as the unit, and the refusals, each a usage error (exit 2).
#[test]
fn compare_takes_runs_as_the_unit_and_refuses_what_would_mix_units() {
    let dir = tempfile::tempdir().unwrap();
    let db = days(dir.path());
    let (a_ext4, b_ext4) = (format!("{A}:ext4"), format!("{B}:ext4"));
    let (code, out, err) = compare(&db, &[&a_ext4, &b_ext4, "--fail-if-slower", "10"]);
    assert_eq!(code, 3, "ext4 lost half its speed on every day: {err}{out}");
    // Said near the head, whatever the width (the start of a line cannot wrap).
    for side in ["A", "B"] {
        let start = format!("Runs as the unit: {side} is 3 runs of plan 00000000000000aa");
        assert!(out.lines().any(|l| l.starts_with(&start)), "{out}");
    }
    let (code, _, err) = compare(&db, &[&a_ext4, &b_ext4]);
    assert_eq!(code, 0, "{err}");
    // One side: the plan's targets ranked with runs as the unit.
    let (code, out, err) = compare(&db, &[A]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Runs as the unit: 3 runs of plan"), "{out}");
    // Three sides of runs as the unit are ranked together.
    let (code, _, err) = compare(&db, &[A, B, "a002+b002"]);
    assert_eq!(code, 0, "{err}");
    for (args, says) in [
        (vec![A, "b001"], "is runs as the unit but 'b001' is one run"),
        (
            vec!["455e+a002", "b001+b002", "--fail-if-slower", "10"],
            "needs 3 runs a side",
        ),
        (
            vec!["a002+b001+a002", B],
            "run 20261124-010000-a002 is given twice",
        ),
        (vec!["a002+", B], "a run is missing between the '+'s"),
        (vec!["a002+nope", B], "no run 'nope'"),
        (vec!["a002+a003+0dd0", B], "not runs of one plan: seed"),
        (vec!["a002+a003:xfs", B], "has no target 'xfs'"),
    ] {
        let (code, out, err) = compare(&db, &args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
