//! What a run shows while it works.
//!
//! * [`Bars`] on a terminal: a line for the run (trials done, elapsed time, ETA of the
//!   whole run) and one for the phase now running (target, workload, repetition, phase,
//!   operations done — a bar when the amount of work is known, else a spinner — and
//!   elapsed time). The phase's count is read from the workers' live counters
//!   ([`crate::context::live_ops`]) ten times a second; the workers never wait for it.
//!   Once the phase ends its final count stays until the next phase starts. The line is
//!   made to fit the terminal ([`phase_layout`]).
//! * [`Lines`] when stderr is not a terminal (logs, CI): one plain line per phase and
//!   note, no escape codes.
//! * [`Silent`] for `--quiet`.
//!
//! The amount of a phase's work is "known" when an earlier repetition of the same workload
//! ran the same phase: its operation count is the bar's length (same target preferred).
//! The run's ETA is the mean time per finished trial times the trials left, counting down
//! from the last finished trial; it appears after the first trial and sharpens as trials
//! finish.

/// Whole lines and notes on stderr, [`crate::term`]'s, which the run layer writes beside its
/// progress.
pub use crate::term::{stderr_line, stderr_note};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A phase about to be measured.
pub struct PhaseStart<'a> {
    pub rep: u32,
    pub reps: u32,
    pub target: &'a str,
    pub workload: &'a str,
    pub phase: &'a str,
    /// Operations the phase is expected to do, when an earlier repetition tells.
    pub expected_ops: Option<u64>,
}

/// Where progress goes.
pub trait Progress: Sync {
    /// The run starts with `trials` trials to do.
    fn start(&self, _trials: u64) {}
    /// `trials` more are planned than `start` said (`--reps auto` going on past its
    /// minimum), the clock and the trials done kept.
    fn extend(&self, _trials: u64) {}
    /// A phase starts (its cache policy applied, the clock about to start).
    fn phase(&self, p: &PhaseStart);
    /// A trial finished.
    fn trial_done(&self) {}
    /// Anything else worth a line (provisioning, calibration, failures).
    fn note(&self, msg: &str);
    /// The run is over: remove any live display.
    fn finish(&self) {}
}

/// `--color`: 0 auto, 1 always, 2 never.
static COLOUR: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Sets `--color` for this process's progress display.
pub fn set_colour(when: crate::cli::ColorWhen) {
    use crate::cli::ColorWhen;
    let v = match when {
        ColorWhen::Auto => 0,
        ColorWhen::Always => 1,
        ColorWhen::Never => 2,
    };
    COLOUR.store(v, std::sync::atomic::Ordering::Relaxed);
}

/// Whether the bars may be coloured: `--color always`, or `auto` with `NO_COLOR` unset or
/// empty (<https://no-color.org>).
fn colour() -> bool {
    match COLOUR.load(std::sync::atomic::Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// The display for this process: bars when stderr is a terminal, plain lines otherwise,
/// nothing with `quiet`. Colours follow `--color` and `NO_COLOR`.
pub fn for_stderr(quiet: bool) -> Box<dyn Progress> {
    if quiet {
        Box::new(Silent)
    } else if std::io::stderr().is_terminal() {
        Box::new(Bars::new(ProgressDrawTarget::stderr(), colour()))
    } else {
        Box::new(Lines)
    }
}

/// One plain line per phase and note, on stderr.
pub struct Lines;

/// The plain line of a phase.
pub fn phase_line(p: &PhaseStart) -> String {
    format!(
        "[rep {}/{}] {} {}: {}",
        p.rep, p.reps, p.target, p.workload, p.phase
    )
}

impl Progress for Lines {
    fn phase(&self, p: &PhaseStart) {
        stderr_line(&format!("fsarena: {}", phase_line(p)));
    }
    fn note(&self, msg: &str) {
        stderr_line(&format!("fsarena: {}", crate::secret::redact(msg)));
    }
}

/// The widest a phase's bar is drawn, in columns.
const BAR_COLS: usize = 30;
/// A bar narrower than this is left out: the count says as much.
const MIN_BAR_COLS: usize = 5;
/// The room kept for `{elapsed}` (`59s`, `12m`).
const ELAPSED_COLS: usize = 3;
/// The room kept for a count nobody could foresee (`9,999,999`).
const SPUN_COUNT_COLS: usize = 9;

/// The template and message of a phase's line on a terminal `width` columns wide:
/// `MSG [bar] n/N ops 3s` when its amount of work is known, else `⠋ MSG n ops 3s`. The bar
/// narrows (or goes) to fit, then the target's name loses its middle to `…`: the line
/// never wraps (indicatif pads lines to the width and lets a longer one take two rows).
pub fn phase_layout(p: &PhaseStart, width: usize) -> (String, String) {
    use crate::report::fit::cols;
    let (template, fixed) = match p.expected_ops {
        Some(n) if n > 0 => {
            let count = cols(&indicatif::HumanCount(n).to_string());
            // " [" bar "] " pos "/" len " ops " elapsed
            let fixed = 2 + 2 + count + 1 + count + 5 + ELAPSED_COLS;
            let room = width.saturating_sub(cols(&phase_line(p)) + fixed);
            if room >= MIN_BAR_COLS {
                let bar = room.min(BAR_COLS);
                let t =
                    format!("{{msg}} [{{bar:{bar}}}] {{human_pos}}/{{human_len}} ops {{elapsed}}");
                return (t, phase_line(p));
            }
            (
                "{msg} {human_pos}/{human_len} ops {elapsed}".to_string(),
                1 + count + 1 + count + 5 + ELAPSED_COLS,
            )
        }
        // "⠋ " msg " " pos " ops " elapsed
        _ => (
            "{spinner} {msg} {human_pos} ops {elapsed}".to_string(),
            2 + 1 + SPUN_COUNT_COLS + 5 + ELAPSED_COLS,
        ),
    };
    let line = phase_line(p);
    let over = (cols(&line) + fixed).saturating_sub(width);
    if over == 0 {
        return (template, line);
    }
    // The target's name loses its middle (`dir:/var/…/work`), down to 8 columns.
    let name: Vec<char> = p.target.chars().collect();
    let keep = name.len().saturating_sub(over + 1).max(8);
    let short = if keep + 1 < name.len() {
        let head = keep - keep / 2;
        let tail = keep / 2;
        let mut s: String = name[..head].iter().collect();
        s.push('…');
        s.extend(&name[name.len() - tail..]);
        s
    } else {
        p.target.to_string()
    };
    let line = phase_line(&PhaseStart {
        target: &short,
        ..*p
    });
    (template, line)
}

/// No progress output (`--quiet`).
pub struct Silent;

impl Progress for Silent {
    fn phase(&self, _: &PhaseStart) {}
    fn note(&self, _: &str) {}
}

/// Live bars on a terminal.
pub struct Bars {
    multi: MultiProgress,
    run: ProgressBar,
    phase: ProgressBar,
    colour: bool,
    clock: Arc<Mutex<RunClock>>,
    stop: Arc<AtomicBool>,
    ticker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// The run's timing, for its ETA.
struct RunClock {
    started: Instant,
    trials: u64,
    done: u64,
    /// When the latest trial finished.
    last_done: Instant,
}

impl RunClock {
    /// Mean time per finished trial × trials left, minus the time since the latest trial
    /// finished (never below zero).
    fn eta(&self, now: Instant) -> Option<Duration> {
        if self.done == 0 || self.done >= self.trials {
            return None;
        }
        let per = self.last_done.duration_since(self.started).as_secs_f64() / self.done as f64;
        let left = per * (self.trials - self.done) as f64
            - now.duration_since(self.last_done).as_secs_f64();
        Duration::try_from_secs_f64(left.max(0.0)).ok()
    }

    /// A trial finished at `now`: the ETA's per-trial time runs to here.
    fn trial_done(&mut self, now: Instant) {
        self.done += 1;
        self.last_done = now;
    }

    /// The run line's message.
    fn message(&self, now: Instant) -> String {
        // Under a second left (or the trials running longer than the ones before): no
        // "ETA 0s" while work goes on.
        let eta = match self.eta(now) {
            None => "ETA after the first trial".to_string(),
            Some(d) if d < Duration::from_secs(1) => "finishing".to_string(),
            Some(d) => format!("ETA {}", fmt_duration(d)),
        };
        format!(
            "trial {}/{} · {eta}",
            (self.done + 1).min(self.trials),
            self.trials
        )
    }
}

/// `1h02m`, `3m05s`, `42s`.
fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

impl Bars {
    /// Bars drawn to `target`, coloured or not.
    pub fn new(target: ProgressDrawTarget, colour: bool) -> Self {
        let multi = MultiProgress::with_draw_target(target);
        let run = multi.add(ProgressBar::new(0));
        run.set_style(Self::style(colour, "run   {elapsed_precise} {msg}"));
        let phase = multi.add(ProgressBar::new_spinner());
        phase.set_style(Self::style(colour, "{spinner} {msg}"));
        let stop = Arc::new(AtomicBool::new(false));
        let now = Instant::now();
        let clock = Arc::new(Mutex::new(RunClock {
            started: now,
            trials: 0,
            done: 0,
            last_done: now,
        }));
        let ticker = {
            let (phase, run) = (phase.clone(), run.clone());
            let (stop, clock) = (Arc::clone(&stop), Arc::clone(&clock));
            std::thread::Builder::new()
                .name("fsarena-progress".into())
                .spawn(move || {
                    let mut status: Option<String> = None;
                    while !stop.load(Ordering::Relaxed) {
                        let now = crate::term::status();
                        if now != status {
                            if let Some(s) = &now {
                                // Aging, before the trial's first phase: its line until
                                // the phase replaces it.
                                let width = crate::report::fit::stderr_width();
                                phase.set_style(Self::style(colour, "{spinner} {msg}"));
                                phase.set_message(
                                    crate::report::fit::wrap(s, width - 2, 2)
                                        .lines()
                                        .next()
                                        .unwrap_or("")
                                        .to_string(),
                                );
                            }
                            status = now;
                        }
                        phase.set_position(crate::context::live_ops());
                        let c = clock.lock().unwrap_or_else(|e| e.into_inner());
                        if c.trials > 0 {
                            run.set_message(c.message(Instant::now()));
                        }
                        drop(c);
                        std::thread::sleep(Duration::from_millis(100));
                    }
                })
                .ok()
        };
        Self {
            multi,
            run,
            phase,
            colour,
            clock,
            stop,
            ticker: Mutex::new(ticker),
        }
    }

    fn style(colour: bool, template: &str) -> ProgressStyle {
        let template = if colour {
            let bar = template
                .find("{bar:")
                .and_then(|at| Some(at + template[at..].find('}')?));
            let mut t = template.to_string();
            if let Some(end) = bar {
                t.insert_str(end, ".cyan/blue");
            }
            t.replace("{elapsed_precise}", "{elapsed_precise:.cyan}")
        } else {
            template.to_string()
        };
        ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ")
    }

    fn update_run(&self) {
        let c = self.clock.lock().unwrap_or_else(|e| e.into_inner());
        self.run.set_message(c.message(Instant::now()));
    }
}

impl Progress for Bars {
    fn start(&self, trials: u64) {
        {
            let mut c = self.clock.lock().unwrap_or_else(|e| e.into_inner());
            c.trials = trials;
            c.started = Instant::now();
        }
        self.run.set_length(trials);
        self.run.reset_elapsed();
        self.update_run();
        self.run.enable_steady_tick(Duration::from_millis(500));
    }

    fn extend(&self, trials: u64) {
        let total = {
            let mut c = self.clock.lock().unwrap_or_else(|e| e.into_inner());
            c.trials += trials;
            c.trials
        };
        self.run.set_length(total);
        self.update_run();
    }

    fn phase(&self, p: &PhaseStart) {
        let (template, what) = phase_layout(p, crate::report::fit::stderr_width());
        self.phase.reset();
        self.phase.set_position(0);
        match p.expected_ops {
            Some(n) if n > 0 => self.phase.set_length(n),
            _ => self.phase.unset_length(),
        }
        self.phase.set_style(Self::style(self.colour, &template));
        self.phase.set_message(what);
        self.phase.enable_steady_tick(Duration::from_millis(200));
    }

    fn trial_done(&self) {
        self.clock
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .trial_done(Instant::now());
        self.run.inc(1);
        self.update_run();
    }

    fn note(&self, msg: &str) {
        let msg = crate::secret::redact(msg);
        // Printed above the bars, which stay at the bottom; wrapped with the prefix
        // counted (a note fitting the width without it broke mid-word at 80 columns).
        let line = crate::report::fit::wrap_text(
            &format!("fsarena: {msg}"),
            crate::report::fit::stderr_width(),
            4,
        );
        if self.multi.println(&line).is_err() {
            stderr_line(&line);
        }
    }

    fn finish(&self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.lock().unwrap_or_else(|e| e.into_inner()).take() {
            t.join().ok();
        }
        self.phase.finish_and_clear();
        self.run.finish_and_clear();
        self.multi.clear().ok();
    }
}

impl Drop for Bars {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_from_finished_trials() {
        let t0 = Instant::now();
        let mut c = RunClock {
            started: t0,
            trials: 10,
            done: 0,
            last_done: t0,
        };
        assert_eq!(
            c.eta(t0 + Duration::from_secs(5)),
            None,
            "no trial done yet"
        );
        assert!(c.message(t0).contains("after the first trial"));
        // The last trial running past the others' pace: never "ETA 0s".
        let last = RunClock {
            started: t0,
            trials: 2,
            done: 1,
            last_done: t0 + Duration::from_secs(10),
        };
        assert_eq!(
            last.message(t0 + Duration::from_secs(25)),
            "trial 2/2 · finishing"
        );
        c.done = 2;
        c.last_done = t0 + Duration::from_secs(20);
        // 2 trials in 20 s: 10 s each, 8 left; it counts down meanwhile, never below 0.
        assert_eq!(
            c.eta(t0 + Duration::from_secs(20)),
            Some(Duration::from_secs(80))
        );
        assert_eq!(
            c.eta(t0 + Duration::from_secs(50)),
            Some(Duration::from_secs(50))
        );
        assert_eq!(c.eta(t0 + Duration::from_secs(500)), Some(Duration::ZERO));
        assert_eq!(
            c.message(t0 + Duration::from_secs(20)),
            "trial 3/10 · ETA 1m20s"
        );
        c.done = 10;
        assert_eq!(c.eta(t0 + Duration::from_secs(99)), None, "all done");
        // As trials finish: 1 of 4 in 30 s, so 90 s to go.
        let mut c = RunClock {
            started: t0,
            trials: 4,
            done: 0,
            last_done: t0,
        };
        c.trial_done(t0 + Duration::from_secs(30));
        assert_eq!(
            c.eta(t0 + Duration::from_secs(30)),
            Some(Duration::from_secs(90))
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(fmt_duration(Duration::from_secs(42)), "42s");
        assert_eq!(fmt_duration(Duration::from_secs(185)), "3m05s");
        assert_eq!(fmt_duration(Duration::from_secs(3720)), "1h02m");
    }

    #[test]
    fn plain_lines_name_everything() {
        let p = PhaseStart {
            rep: 2,
            reps: 3,
            target: "xfs",
            workload: "bonnie",
            phase: "rewrite",
            expected_ops: Some(5),
        };
        assert_eq!(phase_line(&p), "[rep 2/3] xfs bonnie: rewrite");
    }

    /// The line `phase_layout` makes, drawn with a full count, `59s`, and 9,999,999 where
    /// no count was foreseen.
    fn drawn(p: &PhaseStart, width: usize) -> String {
        let (t, msg) = phase_layout(p, width);
        let n = indicatif::HumanCount(p.expected_ops.unwrap_or(9_999_999)).to_string();
        let mut line = t
            .replace("{msg}", &msg)
            .replace("{human_pos}", &n)
            .replace("{human_len}", &n)
            .replace("{elapsed}", "59s")
            .replace("{spinner}", "⠋");
        if let Some(at) = line.find("{bar:") {
            let end = at + line[at..].find('}').unwrap();
            let cols: usize = line[at + 5..end].parse().unwrap();
            line.replace_range(at..=end, &"=".repeat(cols));
        }
        line
    }

    #[test]
    fn a_phase_line_fits_the_terminal_its_bar_narrowing_first() {
        let mut p = PhaseStart {
            rep: 2,
            reps: 3,
            target: "ext4",
            workload: "smallfiles",
            phase: "create",
            expected_ops: Some(2020),
        };
        // At 80 columns its 30-column bar made it 85 wide: the terminal wrapped it.
        let line = drawn(&p, 80);
        assert_eq!(line.chars().count(), 80, "{line}");
        assert!(
            line.starts_with("[rep 2/3] ext4 smallfiles: create [====="),
            "{line}"
        );
        assert!(line.ends_with("] 2,020/2,020 ops 59s"), "{line}");
        let wide = drawn(&p, 160);
        assert!(wide.contains(&format!("[{}]", "=".repeat(30))), "{wide}");
        // A long target: no bar, then the name's middle goes.
        p.target = "dir:/var/tmp/fsarena-work-directory/of/someone";
        let line = drawn(&p, 80);
        assert!(line.chars().count() <= 80, "{line}");
        assert!(!line.contains(" [="), "no room for a bar: {line}");
        assert!(line.contains("[rep 2/3] dir:/var/"), "{line}");
        assert!(line.contains("…"), "{line}");
        assert!(line.ends_with(" 2,020/2,020 ops 59s"), "{line}");
        p.expected_ops = None;
        for width in [60, 80] {
            let line = drawn(&p, width);
            assert!(line.chars().count() <= width, "{line}");
            assert!(
                line.ends_with("smallfiles: create 9,999,999 ops 59s"),
                "{line}"
            );
        }
    }

    #[test]
    fn bars_draw_without_colour_when_asked() {
        let bars = Bars::new(ProgressDrawTarget::hidden(), false);
        bars.start(4);
        bars.phase(&PhaseStart {
            rep: 1,
            reps: 2,
            target: "ext4",
            workload: "smallfiles",
            phase: "create",
            expected_ops: Some(1000),
        });
        assert_eq!(bars.phase.length(), Some(1000));
        let before = Instant::now();
        bars.trial_done();
        assert_eq!(bars.run.position(), 1);
        // The ETA counts from when the trial ended (it was always 0 s: the time of the
        // last trial was never recorded).
        assert!(bars.clock.lock().unwrap().last_done >= before);
        bars.finish();
    }
}
