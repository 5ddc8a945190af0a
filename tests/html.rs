//! The HTML report and chart files of a stored run: self-contained, zero-based bar axes,
//! user text escaped, and a page that headless Chromium renders without console errors.

mod common;

use assert_cmd::Command;
use std::path::Path;

fn fsarena(db: &Path) -> Command {
    let mut c = Command::cargo_bin("fsarena").unwrap();
    c.arg("--db").arg(db);
    c
}

/// The fixture run's report and SVG files in `dir`, and PNG files when asked.
fn render(dir: &Path, png: bool) -> String {
    let db = common::fixture_db(dir);
    let mut cmd = fsarena(&db);
    cmd.args(["report", common::FIXTURE_RUN, "--html"])
        .arg(dir.join("r.html"))
        .arg("--svg")
        .arg(dir.join("svg"));
    if png {
        cmd.arg("--png").arg(dir.join("png"));
    }
    cmd.assert().success();
    std::fs::read_to_string(dir.join("r.html")).unwrap()
}

/// The value of attribute `name` in the tag that starts at `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let end = tag.find('>')?;
    let tag = &tag[..end];
    let k = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(&tag[k..k + tag[k..].find('"')?])
}

#[test]
fn the_report_is_one_self_contained_file() {
    let dir = tempfile::tempdir().unwrap();
    let html = render(dir.path(), true);
    assert!(html.starts_with("<!DOCTYPE html>"));
    for banned in ["<script", "<link", "@import", "url(", "src=\"", "https:"] {
        assert!(
            !html.contains(banned),
            "the report refers outside itself: {banned}"
        );
    }
    // Everything the issue asks the page to carry.
    for needle in [
        "Reproduce it with:",
        "--fs ext4,tmpfs",
        "mount options in force",
        "mkfs options",
        "kernel",
        "seed",
        "higher is better",
        "lower is better",
        "Latency percentiles",
        "throughput over time",
        "95% CI",
        "cache-suspect",
        "<title>",
    ] {
        assert!(html.contains(needle), "report lacks {needle:?}");
    }
    let bars = html.matches("class=\"chart bar\"").count();
    let svgs = std::fs::read_dir(dir.path().join("svg")).unwrap().count();
    let pngs = std::fs::read_dir(dir.path().join("png")).unwrap().count();
    assert!(bars >= 15, "{bars} bar charts: one per phase");
    // The page draws the headline and the time series; the files hold every chart, each
    // chart on the page among them.
    let on_page: Vec<&str> = html
        .match_indices("<figure id=\"")
        .map(|(i, _)| {
            let rest = &html[i + "<figure id=\"".len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    assert_eq!(on_page.len(), html.matches("<svg ").count());
    for slug in &on_page {
        assert!(
            dir.path().join(format!("svg/{slug}.svg")).exists(),
            "{slug}.svg"
        );
    }
    assert!(
        svgs > 2 * on_page.len(),
        "{svgs} files, {} on the page",
        on_page.len()
    );
    assert_eq!(pngs, svgs, "one PNG per chart");
    // The latency charts, as files, say their axis is logarithmic.
    let latency =
        std::fs::read_to_string(dir.path().join("svg/postmark-transactions-latency.svg")).unwrap();
    assert!(latency.contains("LOG scale") && latency.contains("data-scale=\"log\""));
    let png = std::fs::read(dir.path().join("png/postmark-transactions-ops_per_s.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
}

#[test]
fn every_bar_chart_starts_at_zero() {
    let dir = tempfile::tempdir().unwrap();
    render(dir.path(), false);
    let mut charts = 0;
    for e in std::fs::read_dir(dir.path().join("svg")).unwrap() {
        let svg = std::fs::read_to_string(e.unwrap().path()).unwrap();
        if attr(&svg, "class") != Some("chart bar") {
            continue;
        }
        charts += 1;
        assert_eq!(attr(&svg, "data-axis-min"), Some("0"));
        // The value axis is the vertical line at x0; a tick labelled 0 sits on it, and
        // every bar starts there.
        let axis = &svg[svg.find("<line class=\"axis\"").unwrap()..];
        let x0 = attr(axis, "x1").unwrap();
        let zero = svg
            .match_indices("<text class=\"tick")
            .map(|(i, _)| &svg[i..])
            .find(|t| t[t.find('>').unwrap() + 1..].starts_with("0<"))
            .expect("a tick labelled 0");
        assert_eq!(attr(zero, "x"), Some(x0));
        let mut bars = 0;
        for (i, _) in svg.match_indices("<rect class=\"bar\"") {
            assert_eq!(attr(&svg[i..], "x"), Some(x0));
            bars += 1;
        }
        assert!(bars > 0);
    }
    assert!(charts > 20, "{charts} bar charts checked");
}

#[test]
fn user_text_is_escaped() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json"),
    )
    .unwrap();
    let mut run: fsarena::result::RunResult = serde_json::from_str(&text).unwrap();
    let evil = "<img src=x onerror=alert(1)>&";
    run.targets[0].notes.push(evil.into());
    run.command_line.push(evil.into());
    let html = fsarena::report::html::render(&run);
    assert!(
        !html.contains("<img"),
        "raw markup from a run reached the page"
    );
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;&amp;"));
}

/// The fixture run as the default run looks: four targets (ext4 and tmpfs twice over, as
/// `xfs` and `btrfs`), three repetitions of bonnie, bonnie's file tests and postmark.
fn four_target_run() -> fsarena::result::RunResult {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json"),
    )
    .unwrap();
    let mut run: fsarena::result::RunResult = serde_json::from_str(&text).unwrap();
    for (from, to) in [("ext4", "xfs"), ("tmpfs", "btrfs")] {
        let mut t = run.targets.iter().find(|t| t.name == from).unwrap().clone();
        t.name = to.into();
        run.targets.push(t);
        let copies: Vec<_> = (run.trials.iter())
            .filter(|t| t.target == from)
            .map(|t| {
                let mut t = t.clone();
                t.target = to.into();
                t
            })
            .collect();
        run.trials.extend(copies);
    }
    run.summaries = fsarena::stats::summarize(&run.trials, fsarena::workload::figures_of);
    run
}

/// The page without its folded parts (`<details>…</details>`).
fn unfolded(page: &str) -> String {
    let mut out = String::new();
    let mut rest = page;
    while let Some(i) = rest.find("<details") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find("</details>").expect("closed") + i;
        rest = &rest[end + "</details>".len()..];
    }
    out.push_str(rest);
    out
}

/// The page for a default-style run stays small: 16 KB for what every page has (style,
/// setup, legend) and 8.35 KB a phase with four targets — 300 KB for the 34 phases of the
/// default quick suite, whose page was 1.1 MB with a chart per metric (32 KB a phase) —
/// because only a phase's headline figure is drawn in view and the rest is folded in
/// `<details>`, latency and the lesser metrics as tables.
#[test]
fn a_default_style_report_is_small_and_folds_the_lesser_figures() {
    let run = four_target_run();
    let page = fsarena::report::html::render(&run);
    let phases = page.matches("<h3 id=\"w").count();
    assert_eq!(phases, 15, "bonnie 6, bonnie-files 6, postmark 3");
    assert!(
        page.len() <= 16_000 + phases * 8_350,
        "{} bytes for {phases} phases",
        page.len()
    );
    let shown = unfolded(&page);
    // In view: one chart a phase, its headline.
    assert_eq!(shown.matches("<svg ").count(), phases);
    assert_eq!(shown.matches("class=\"chart bar\"").count(), phases);
    for lesser in [
        "cpu_pct",
        "dirty_bytes_end",
        "write_amplification",
        "wall_s",
        "class=\"chart series\"",
        "p99.9",
        "device bytes written",
    ] {
        assert!(!shown.contains(lesser), "{lesser} is in view");
        assert!(page.contains(lesser), "{lesser} is not in the report");
    }
    // Each phase folds its latency percentiles and the rest of its figures.
    assert_eq!(
        page.matches("<summary>Latency percentiles</summary>")
            .count(),
        phases
    );
    assert_eq!(page.matches("<summary>More figures: ").count(), phases);
}

/// Runs headless Chromium on `page` in its narrowest window, 500 px (a narrower one is
/// laid out at 500 px and clipped; a phone's width is checked in a frame, see
/// [`verdict_layout`]), returning its stderr log and the screenshot's pixels. 8000 px
/// tall: under 40rem the verdict is a card a phase, and the charts under it must still be
/// in the shot.
fn chromium(page: &Path, shot: &Path) -> (String, resvg::tiny_skia::Pixmap) {
    chromium_at(page, shot, "500,8000")
}

/// [`chromium`] in a window of `size` (`W,H`).
fn chromium_at(page: &Path, shot: &Path, size: &str) -> (String, resvg::tiny_skia::Pixmap) {
    let out = std::process::Command::new("timeout")
        .args([
            "120",
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
        ])
        .args([
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--enable-logging=stderr",
        ])
        .args(["--log-level=0", &format!("--window-size={size}")])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "chromium failed: {out:?}");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    (log, resvg::tiny_skia::Pixmap::load_png(shot).unwrap())
}

/// Whether Chromium is installed; when it is not, prints `SKIP` and what is skipped.
fn chromium_or_skip(what: &str) -> bool {
    let here = std::process::Command::new("chromium")
        .arg("--version")
        .output()
        .is_ok();
    if !here {
        eprintln!("SKIP: {what}chromium is not installed (apt-get install chromium)");
    }
    here
}

fn console_lines(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

#[test]
fn chromium_renders_the_page_without_console_errors() {
    if !chromium_or_skip("") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // First prove the console check sees errors: a page whose script fails.
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        "<html><body>x<script>nonexistent();</script></body></html>",
    )
    .unwrap();
    let (log, _) = chromium(&bad, &dir.path().join("bad.png"));
    assert!(
        console_lines(&log)
            .iter()
            .any(|l| l.contains("nonexistent")),
        "the console check does not see a script error: {log}"
    );
    render(dir.path(), false);
    let (log, shot) = chromium(&dir.path().join("r.html"), &dir.path().join("shot.png"));
    assert!(
        console_lines(&log).is_empty(),
        "console: {:?}",
        console_lines(&log)
    );
    // Not blank: a narrow screenshot shows text and the first chart's bars in the
    // targets' colours (#0072B2 ext4, #E69F00 tmpfs).
    let px = shot.pixels();
    let count = |rgb: (u8, u8, u8)| {
        px.iter()
            .filter(|p| (p.red(), p.green(), p.blue()) == rgb)
            .count()
    };
    let ink = px
        .iter()
        .filter(|p| p.red() < 128 && p.green() < 128 && p.blue() < 128)
        .count();
    assert_eq!(shot.width(), 500);
    assert!(ink > 5_000, "{ink} dark pixels: the page looks blank");
    assert!(count((0x00, 0x72, 0xB2)) > 2_000, "no ext4 bar visible");
    assert!(count((0xE6, 0x9F, 0x00)) > 2_000, "no tmpfs bar visible");
}

/// The answer comes first: the verdict table opens the page, before the setup and the
/// figures, and names the winner of each phase.
#[test]
fn the_verdict_opens_the_report_and_names_the_winner() {
    let dir = tempfile::tempdir().unwrap();
    let page = render(dir.path(), false);
    let verdict = page
        .find("<section id=\"verdict\">")
        .expect("a verdict section");
    let setup = page.find("<section id=\"setup\">").unwrap();
    let first_chart = page.find("<svg").unwrap();
    assert!(verdict < setup && verdict < first_chart);
    let table = &page[verdict..page[verdict..].find("</section>").unwrap() + verdict];
    // In the fixture tmpfs beats ext4 on postmark's transactions by about 10×, though three
    // repetitions this noisy cannot tell it at Hsu's 2 df: the cell says `?`.
    let row = table
        .split("<tr>")
        .find(|r| r.contains("postmark · transactions"))
        .expect("a row for postmark transactions");
    assert!(row.contains("tmpfs(a) ext4(a)"), "{row}");
    assert!(row.contains("? 9.8×"), "{row}");
    // The winner's cell, under its name, says so.
    let head: Vec<&str> = table[..table.find("</thead>").unwrap()]
        .split("<th>")
        .skip(1)
        .map(|h| &h[..h.find('<').unwrap()])
        .collect();
    let cells: Vec<&str> = row.split("<td").skip(1).collect();
    let tmpfs = head.iter().position(|h| *h == "tmpfs").unwrap();
    assert!(cells[tmpfs - 1].contains("<b>best</b>"), "{row}");
    // Every cell links to its phase's figures, and the link lands on them.
    let hrefs: Vec<&str> = table
        .match_indices("<td")
        .map(|(i, _)| {
            let cell = &table[i..i + table[i..].find("</td>").unwrap()];
            let k = cell.find("href=\"#").unwrap_or_else(|| panic!("{cell}")) + 7;
            &cell[k..k + cell[k..].find('"').unwrap()]
        })
        .collect();
    assert!(!hrefs.is_empty());
    for h in &hrefs {
        assert!(
            page.contains(&format!("<h3 id=\"{h}\">")),
            "#{h} lands nowhere"
        );
    }
    let target = row[row.find("href=\"#").unwrap() + 7..]
        .split('"')
        .next()
        .unwrap();
    let heading = &page[page.find(&format!("<h3 id=\"{target}\">")).unwrap()..];
    assert!(heading[..heading.find("</h3>").unwrap()].contains("postmark · transactions"));
    if !chromium_or_skip("the rendered check: ") {
        return;
    }
    // Rendered: the best cells' green shows in the first screen of a desktop window.
    let (_, shot) = chromium_at(
        &dir.path().join("r.html"),
        &dir.path().join("top.png"),
        "1000,900",
    );
    let green = shot
        .pixels()
        .iter()
        .filter(|p| (p.red(), p.green(), p.blue()) == (0xe6, 0xf4, 0xea))
        .count();
    assert!(
        green > 2_000,
        "{green} pixels of the best cells' green on the first screen"
    );
    // Followed in a browser, postmark transactions' link shows its headline chart (ext4's
    // and tmpfs's bars) at the top of the window, the verdict scrolled away. Headless
    // Chromium draws a page opened at an anchor only inside a frame.
    let frame = dir.path().join("frame.html");
    std::fs::write(
        &frame,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0\"><iframe src=\"r.html#{target}\" \
             style=\"width:1000px;height:900px;border:0\"></iframe></body></html>"
        ),
    )
    .unwrap();
    let (_, shot) = chromium_at(&frame, &dir.path().join("landed.png"), "1000,900");
    let count = |rgb: (u8, u8, u8)| {
        (shot.pixels().iter())
            .filter(|p| (p.red(), p.green(), p.blue()) == rgb)
            .count()
    };
    assert_eq!(count((0xe6, 0xf4, 0xea)), 0, "the verdict is still in view");
    assert!(count((0x00, 0x72, 0xB2)) > 1_000, "no ext4 bar in view");
    assert!(count((0xE6, 0x9F, 0x00)) > 1_000, "no tmpfs bar in view");
}

#[test]
fn run_writes_the_report_of_the_stored_run() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let (db, page) = (dir.path().join("r.db"), dir.path().join("run.html"));
    let out = fsarena(&db)
        .args([
            "run",
            "postmark:number=100,transactions=200",
            "--reps",
            "2",
            "--quiet",
        ])
        .arg("--dir")
        .arg(&work)
        .arg("--image-dir")
        .arg(dir.path())
        .arg("--html")
        .arg(&page)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("report written to"), "{stdout}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("postmark · transactions · ops_per_s"));
    // The same page `report` makes from the store.
    let again = dir.path().join("again.html");
    fsarena(&db)
        .args(["report", "last", "--html"])
        .arg(&again)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&again).unwrap(), html);
}

/// Where headless Chromium lays out the verdict of `page` in a frame `width` px wide (a
/// headless window is never narrower than 500 px, a frame is): a script in the frame
/// writes, into a `<pre id="probe">` of the framing page, the frame's viewport width, the
/// display of the verdict's head and each target cell's box, read back from the dumped
/// DOM. A screenshot of the same frame goes to `shot`.
fn verdict_layout(page: &str, dir: &Path, width: u32, shot: &Path) -> serde_json::Value {
    const PROBE: &str = "<script>\
        const t = document.querySelector('table.verdict');\
        const cells = [...t.querySelectorAll('tbody td[data-target]')].map(c => {\
          const r = c.getBoundingClientRect();\
          return {target: c.dataset.target, left: r.left, right: r.right, top: r.top,\
                  row: [...t.tBodies[0].rows].indexOf(c.parentElement),\
                  display: getComputedStyle(c).display,\
                  label: getComputedStyle(c, '::before').content};\
        });\
        const p = parent.document.createElement('pre');\
        p.id = 'probe';\
        p.textContent = JSON.stringify({viewport: document.documentElement.clientWidth,\
          head: getComputedStyle(t.tHead).display, cells});\
        parent.document.body.append(p);\
        </script>";
    let probed = page.replace("</body>", &format!("{PROBE}</body>"));
    let frame = dir.join(format!("frame{width}.html"));
    std::fs::write(
        &frame,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0\"><iframe srcdoc=\"{}\" \
             style=\"width:{width}px;height:3000px;border:0;display:block\"></iframe></body></html>",
            probed.replace('&', "&amp;").replace('"', "&quot;")
        ),
    )
    .unwrap();
    let size = format!("{},3000", width.max(500));
    let (log, _) = chromium_at(&frame, shot, &size);
    assert!(console_lines(&log).is_empty(), "console: {log}");
    let out = std::process::Command::new("timeout")
        .args([
            "120",
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
        ])
        .args(["--disable-dev-shm-usage", "--no-first-run"])
        .args([
            &format!("--window-size={size}"),
            "--virtual-time-budget=2000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", frame.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "chromium failed: {out:?}");
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom.find("<pre id=\"probe\">").expect("the probe ran") + 16;
    let json = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let json = json
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// On a phone (390 px) every target's ratio of every phase lies inside the window, without
/// scrolling sideways — one card a phase — while a desktop window (1280 px) keeps the
/// table: a head of target names and each phase's cells side by side on one line.
/// Screenshots of both are kept in the test's temp dir for a failure to be looked at.
#[test]
fn the_verdict_fits_a_phone_and_stays_a_table_on_a_desktop() {
    if !chromium_or_skip("") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = four_target_run();
    let page = fsarena::report::html::render(&run);
    let phone = verdict_layout(&page, dir.path(), 390, &dir.path().join("390.png"));
    let cells = phone["cells"].as_array().unwrap();
    let phases = page.matches("<h3 id=\"w").count();
    assert_eq!(cells.len(), 4 * phases, "{phone}");
    let viewport = phone["viewport"].as_f64().unwrap();
    assert!((300.0..=390.0).contains(&viewport), "{phone}");
    for c in cells {
        let (left, right) = (c["left"].as_f64().unwrap(), c["right"].as_f64().unwrap());
        assert!(
            left >= 0.0 && right <= viewport,
            "a verdict cell outside the {viewport} px window (see {}): {c}",
            dir.path().join("390.png").display()
        );
        // Shown (not hidden to fit), and under its target's name, the head being gone.
        assert!(right - left > 40.0, "{c}");
        let label = format!("\"{}\"", c["target"].as_str().unwrap());
        assert_eq!(c["label"].as_str(), Some(label.as_str()), "{c}");
    }
    let desk = verdict_layout(&page, dir.path(), 1280, &dir.path().join("1280.png"));
    assert_eq!(desk["head"], "table-header-group", "{desk}");
    let cells = desk["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4 * phases);
    for c in cells {
        assert_eq!(c["display"], "table-cell", "{c}");
        assert!(c["right"].as_f64().unwrap() <= desk["viewport"].as_f64().unwrap());
    }
    // Side by side: a row's cells share their top and go left to right in the head's order.
    for row in cells.chunks(4) {
        assert!(row.iter().all(|c| c["row"] == row[0]["row"]), "{row:?}");
        assert!(row.iter().all(|c| c["top"] == row[0]["top"]), "{row:?}");
        assert!(row
            .windows(2)
            .all(|p| p[0]["right"].as_f64() <= p[1]["left"].as_f64()));
    }
    let names: Vec<&str> = cells[..4]
        .iter()
        .map(|c| c["target"].as_str().unwrap())
        .collect();
    let head: Vec<&str> = run.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, head);
}
