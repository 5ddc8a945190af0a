//! The recorded pass of `crash`: the pattern run again on a recorded twin of the target,
//! its crash states planned, built, checked and judged, and the findings tallied.

use super::expect::Finding;
use super::patterns::{sync_dir, Tape, Work};
use super::{run_pattern, Crash, Expectation, PATTERNS};
use crate::context::TrialContext;
use crate::probe::recorder::Op;
use crate::provision::recorded::check::{self, CheckEnv, StateCheck};
use crate::provision::recorded::log::{monotonic_ns, Log};
use crate::provision::recorded::states::{self, CrashState};
use crate::provision::recorded::{Recording, Twin};
use crate::size::format_size;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// The recorded twin's image size when not given: room for every pattern's files and a
/// journal of the usual size.
const IMAGE_BYTES: u64 = 256 << 20;

/// The pattern on the recording: positions from the recorder (each with when it was read,
/// [`monotonic_ns`]), `fsync`s counted.
struct Recorded<'r> {
    rec: &'r Recording,
    fsyncs: u64,
    reads: Vec<(u64, u64)>,
}

impl Tape for Recorded<'_> {
    fn done(&mut self, _: Op, _: Instant, _: u64) {}
    fn position(&mut self) -> Result<u64> {
        let p = self.rec.position()?;
        self.reads.push((p, monotonic_ns()));
        Ok(p)
    }
    fn synced(&mut self) {
        self.fsyncs += 1;
    }
}

/// The findings over one pattern's crash states.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub states: u64,
    pub bad: u64,
    pub unmountable: u64,
    pub repaired: u64,
    pub lost: u64,
    pub empty: u64,
    pub garbage: u64,
    /// Temporaries left after a promised rename, files back after a promised unlink,
    /// promised files with the wrong mode (files, summed over the states).
    pub leftover: u64,
    pub reappeared: u64,
    pub metadata: u64,
    /// Files lost where nothing was promised (a replacement renamed without `fsync`): not
    /// a broken promise, counted on its own.
    pub unpromised: u64,
    pub writes: u64,
    pub flushes: u64,
    /// Coverage: flush points in the recording and how many were checked; reordered
    /// states checked, and how many there are ([`states::Planned`]).
    pub flush_points: u64,
    pub flush_points_checked: u64,
    pub reordered: u64,
    pub reorderings: f64,
    /// Torn states checked, and the writes that could tear ([`states::Planned`]).
    pub torn: u64,
    pub tearable: u64,
    /// The promises made (file patterns: versions of file contents; SQLite patterns:
    /// committed transactions), and how many of them some checked state broke.
    pub promises: Option<u64>,
    pub promises_broken: Option<u64>,
    /// `fsync`/`fdatasync` calls the pattern made itself (`None`: inside SQLite).
    pub fsyncs: Option<u64>,
    /// Seconds spent building and checking the states.
    pub check_s: f64,
    /// Whether the pessimistic log applied (the block trace was read and matched the
    /// log); then the writes in flight when a flush was issued, the writes marked FUA,
    /// and the writes a FUA write's flush did not cover ([`crate::provision::recorded::trace`]).
    pub traced: bool,
    pub in_flight: u64,
    pub fua_writes: u64,
    pub beside_fua: u64,
    /// The pattern's time on the recording, and how much of it the windows of the bad
    /// states cover from the earliest promise each broke: the time during which a power
    /// cut would have lost promised data, as far as the states checked show (nanoseconds).
    pub span_ns: u64,
    pub exposed_ns: u64,
}

impl Tally {
    /// Counts one state's check and findings; whether the state broke a promise (it did
    /// not mount, or a file had a finding that [`Finding::broken`] calls so). A repair
    /// alone is counted in `repaired`, a class of its own, and so are files lost where
    /// nothing was promised (`unpromised`).
    pub fn add(&mut self, c: &StateCheck, found: Option<&[Finding]>) -> bool {
        self.states += 1;
        let count = |f: Finding| found.map_or(0, |v| v.iter().filter(|&&x| x == f).count());
        self.lost += count(Finding::Lost) as u64;
        self.empty += count(Finding::Empty) as u64;
        self.garbage += count(Finding::Garbage) as u64;
        self.leftover += count(Finding::Leftover) as u64;
        self.reappeared += count(Finding::Reappeared) as u64;
        self.metadata += count(Finding::Metadata) as u64;
        self.unpromised += count(Finding::Unpromised) as u64;
        self.repaired += u64::from(c.repaired);
        self.unmountable += u64::from(!c.mounted);
        let broken = found.is_some_and(|v| v.iter().any(|f| f.broken()));
        let bad = !c.mounted || broken;
        self.bad += u64::from(bad);
        bad
    }

    /// Attaches the figures to `phase`.
    pub fn note(&self, cx: &mut TrialContext, phase: &str) {
        let figures = [
            ("crash_states", self.states),
            ("crash_bad_states", self.bad),
            ("crash_unmountable", self.unmountable),
            ("crash_repaired", self.repaired),
            ("crash_lost", self.lost),
            ("crash_empty", self.empty),
            ("crash_garbage", self.garbage),
            ("crash_leftover", self.leftover),
            ("crash_reappeared", self.reappeared),
            ("crash_metadata", self.metadata),
            ("crash_unpromised_lost", self.unpromised),
            ("crash_writes", self.writes),
            ("crash_flushes", self.flushes),
            ("crash_flush_points", self.flush_points),
            ("crash_flush_points_checked", self.flush_points_checked),
            ("crash_reordered", self.reordered),
            ("crash_torn", self.torn),
            ("crash_tearable", self.tearable),
        ];
        for (k, v) in figures {
            cx.note_phase(phase, k, v as f64);
        }
        cx.note_phase(phase, "crash_check_s", self.check_s);
        if self.span_ns > 0 {
            cx.note_phase(phase, "crash_recorded_s", self.span_ns as f64 / 1e9);
            let pct = 100.0 * self.exposed_ns as f64 / self.span_ns as f64;
            cx.note_phase(phase, "crash_exposed_pct", pct);
        }
        cx.note_phase(phase, "crash_reorderings", self.reorderings);
        if self.traced {
            cx.note_phase(phase, "crash_in_flight", self.in_flight as f64);
            cx.note_phase(phase, "crash_fua_writes", self.fua_writes as f64);
            cx.note_phase(phase, "crash_beside_fua", self.beside_fua as f64);
        }
        if let Some(n) = self.fsyncs {
            cx.note_phase(phase, "crash_fsyncs", n as f64);
        }
        if let (Some(made), Some(broken)) = (self.promises, self.promises_broken) {
            cx.note_phase(phase, "crash_promises", made as f64);
            cx.note_phase(phase, "crash_promises_broken", broken as f64);
        }
    }
}

/// The default image of the twin: [`IMAGE_BYTES`], or the filesystem's smallest.
fn image_bytes(c: &Crash, twin: &Twin) -> u64 {
    let min = twin.fs.min_size_bytes().div_ceil(1 << 20) << 20;
    c.image.unwrap_or(IMAGE_BYTES.max(min))
}

/// Records pattern `i` on a twin of the target, then checks its crash states.
pub fn crash_states(
    cx: &mut TrialContext,
    twin: &Twin,
    c: &Crash,
    i: usize,
    work: &Work,
) -> Result<Tally> {
    let name = PATTERNS[i];
    crate::term::set_status(Some(format!("{name}: recording on a twin")));
    let rec = Recording::start(twin, image_bytes(c, twin))?;
    let top = rec.mountpoint().to_path_buf();
    let dir = top.join(name);
    std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut tape = Recorded {
        rec: &rec,
        fsyncs: 0,
        reads: Vec::new(),
    };
    sync_dir(&top, &mut tape)?;
    let start = monotonic_ns();
    let expect = run_pattern(i, &dir, work, &mut tape)?;
    let clock = Clock {
        span: (start, monotonic_ns()),
        reads: std::mem::take(&mut tape.reads),
    };
    let fsyncs = tape.fsyncs;
    let done = rec.finish()?;
    let result = judge_all(cx, twin, c, (i, work), &done, &clock, expect);
    let removed = done.remove(&twin.state);
    let mut tally = result?;
    removed?;
    tally.fsyncs = (!name.starts_with("sqlite")).then_some(fsyncs);
    Ok(tally)
}

/// When the pattern ran on the recording, on the log's clock: its start and end, and each
/// position it read with when (the first read of a position is when its promises began).
struct Clock {
    span: (u64, u64),
    reads: Vec<(u64, u64)>,
}

impl Clock {
    /// When a promise made at log position `p` was made: the first read of a position at
    /// least `p`, or when the log reached `p` if the pattern never read one.
    fn promised_ns(&self, records: &[crate::provision::recorded::log::Record], p: u64) -> u64 {
        let read = self.reads.iter().filter(|r| r.0 >= p).map(|r| r.1).min();
        read.unwrap_or_else(|| states::reached(records, p))
    }
}

/// Plans, checks and judges the crash states of one recording: pattern `i` with `work`,
/// its log, base image and directory, and when the pattern ran.
fn judge_all(
    cx: &mut TrialContext,
    twin: &Twin,
    c: &Crash,
    (i, work): (usize, &Work),
    done: &crate::provision::recorded::Recorded,
    clock: &Clock,
    expect: Expectation,
) -> Result<Tally> {
    let name = PATTERNS[i];
    let (base, dir) = (done.base.as_path(), done.dir.as_path());
    let log = Log::open(&done.log)?;
    let (writes, flushes, bytes) = log.counts();
    // The pessimistic log where the block trace shows it, else the optimistic one, said.
    let seen = done.trace.as_ref().map_err(String::clone).and_then(|t| {
        t.uncovered(&log.records).map_err(|e| format!("{e:#}"))
    });
    let traced = seen.is_ok();
    let uncovered = seen.unwrap_or_else(|why| {
        cx.message(format!(
            "crash {name} on {}: the optimistic log (every write served before a flush \
             counted as covered by it): {why}",
            twin.name
        ));
        Default::default()
    });
    let pending = &uncovered.pending;
    let planned = states::plan(&log.records, pending, c.states, c.reorder, c.tear, work.seed);
    crate::term::set_status(Some(format!(
        "{name}: checking {} crash states ({writes} writes, {}, {flushes} flushes)",
        planned.states.len(),
        format_size(bytes)
    )));
    let env = CheckEnv {
        state: twin.state.clone(),
        fs: twin.fs,
        mount_opts: twin.mount_opts.clone(),
        dir: dir.to_path_buf(),
        inspect_writes: name.starts_with("sqlite"),
    };
    // The promises some state broke, whichever state it was; and per state, the log
    // position of the earliest promise it broke (a crash from there on loses it).
    let broken = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let since = std::sync::Mutex::new(std::collections::BTreeMap::new());
    // Per state, the files with a finding, for its line in the trial's log.
    let named = std::sync::Mutex::new(std::collections::BTreeMap::new());
    let judge = |k: usize, mnt: &Path| -> Vec<Finding> {
        let w = states::window(&log.records, &planned.states[k]);
        let at = mnt.join(name);
        let (found, first) = match &expect {
            Expectation::Files(e) => {
                let found = e.judge_dir(&at, w);
                let b = e.broken_promises(&found, w);
                let first = e.since(&b);
                broken.lock().unwrap_or_else(|e| e.into_inner()).extend(b);
                let files: Vec<String> = found
                    .iter()
                    .filter(|x| x.1 != Finding::Ok)
                    .map(|(p, f)| format!("{p} ({})", format!("{f:?}").to_lowercase()))
                    .collect();
                named.lock().unwrap_or_else(|e| e.into_inner()).insert(k, files);
                (found.into_iter().map(|x| x.1).collect(), first)
            }
            Expectation::Sqlite(e) => {
                let (f, lost) = e.judge_lost(&at, w.to);
                let first = e.committed.get(lost.start).copied().filter(|_| !lost.is_empty());
                let commits = lost.map(|k| (String::new(), k));
                broken.lock().unwrap_or_else(|e| e.into_inner()).extend(commits);
                (vec![f], first)
            }
        };
        if let Some(p) = first {
            since.lock().unwrap_or_else(|e| e.into_inner()).insert(k, p);
        }
        found
    };
    let t = Instant::now();
    let results = check::check_all(&env, &log, base, &planned.states, &judge);
    let check_s = t.elapsed().as_secs_f64();
    crate::term::set_status(None);
    let results = results?;
    let mut tally = Tally {
        writes,
        flushes,
        flush_points: planned.prefixes as u64,
        flush_points_checked: planned.prefixes_chosen as u64,
        reordered: planned.reordered as u64,
        reorderings: planned.reorderings,
        torn: planned.torn as u64,
        tearable: planned.tearable as u64,
        promises: Some(match &expect {
            Expectation::Files(e) => e.promises(),
            Expectation::Sqlite(e) => e.committed.len() as u64,
        }),
        promises_broken: Some(broken.lock().unwrap_or_else(|e| e.into_inner()).len() as u64),
        check_s,
        traced,
        in_flight: uncovered.writes_in_flight,
        fua_writes: uncovered.fua_writes,
        beside_fua: uncovered.beside_fua,
        ..Tally::default()
    };
    let mut lines = Vec::new();
    let mut exposed = Vec::new();
    for (k, (checked, found)) in results.iter().enumerate() {
        let unpromised = found
            .as_deref()
            .is_some_and(|f| f.contains(&Finding::Unpromised));
        let bad = tally.add(checked, found.as_deref());
        if bad {
            // The crashes of its window from the earliest version or commit it lost on;
            // all of them for a state whose finding dates from no such promise (it did
            // not mount, a temporary was left, a file came back, garbage alone).
            let w = states::window(&log.records, &planned.states[k]);
            let (mut from, to) = states::window_ns(&log.records, w);
            if let Some(&p) = since.lock().unwrap_or_else(|e| e.into_inner()).get(&k) {
                from = from.max(clock.promised_ns(&log.records, p));
            }
            exposed.push((from, to.max(from)));
        }
        if bad || checked.repaired || unpromised {
            let files = named.lock().unwrap_or_else(|e| e.into_inner()).remove(&k).unwrap_or_default();
            let (st, records) = (&planned.states[k], log.records.len());
            lines.push(describe(name, work.seed, (st, records), checked, found.as_deref(), &files));
        }
    }
    let (start, end) = clock.span;
    tally.span_ns = end.saturating_sub(start);
    tally.exposed_ns = states::covered(exposed, start, end);
    if !lines.is_empty() {
        let mut what = Vec::new();
        if tally.bad > 0 {
            what.push(format!("{} of {} crash states broke a promise", tally.bad, tally.states));
        }
        if tally.repaired > 0 {
            what.push(format!("{} of {} needed repair", tally.repaired, tally.states));
        }
        if tally.unpromised > 0 {
            what.push(format!("{} files not promised, lost", tally.unpromised));
        }
        cx.message(format!(
            "crash {name} on {}: {} (in the trial's log)",
            twin.name,
            what.join("; ")
        ));
        write_log(cx, &lines)?;
    }
    Ok(tally)
}

/// The trial log's line for a state: what it holds, and what was found, naming the first
/// ten of `files` (each with its finding).
fn describe(
    name: &str,
    seed: u64,
    (st, records): (&CrashState, usize),
    c: &StateCheck,
    found: Option<&[Finding]>,
    files: &[String],
) -> String {
    let findings = found.map_or("not mounted".to_string(), |f| {
        let bad: Vec<String> = f
            .iter()
            .filter(|&&x| x != Finding::Ok)
            .map(|x| format!("{x:?}").to_lowercase())
            .collect();
        bad.join(" ")
    });
    format!(
        "crash {name} (seed {seed}): state with records 0..{} of {records}{} and kept writes \
         {:?}{}: {findings}{}{}{}",
        st.upto,
        if st.dropped.is_empty() {
            String::new()
        } else {
            format!(" but the uncovered writes {:?}", st.dropped)
        },
        st.kept,
        st.torn.as_ref().map_or(String::new(), |t| format!(
            ", write {} torn (its 4 KiB blocks {:?} kept)",
            t.write, t.blocks
        )),
        if c.repaired { "; needed repair" } else { "" },
        if c.detail.is_empty() {
            String::new()
        } else {
            format!("; {}", c.detail)
        },
        match files.len() {
            0 => String::new(),
            n if n > 10 => format!("; files: {}, and {} more", files[..10].join(", "), n - 10),
            _ => format!("; files: {}", files.join(", ")),
        }
    )
}

fn write_log(cx: &mut TrialContext, lines: &[String]) -> Result<()> {
    let Ok(path) = cx.log_file() else {
        return Ok(());
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    for l in lines {
        writeln!(f, "{l}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_lost_where_nothing_was_promised_are_counted_apart_from_broken_promises() {
        let mounted = StateCheck {
            mounted: true,
            ..StateCheck::default()
        };
        let mut t = Tally::default();
        assert!(!t.add(&mounted, Some(&[Finding::Ok, Finding::Unpromised])));
        assert_eq!((t.bad, t.unpromised, t.lost), (0, 1, 0));
        for f in [Finding::Leftover, Finding::Reappeared, Finding::Metadata] {
            assert!(t.add(&mounted, Some(&[Finding::Unpromised, f])), "{f:?}");
        }
        assert_eq!((t.states, t.bad, t.unpromised), (4, 3, 4));
        assert_eq!((t.leftover, t.reappeared, t.metadata), (1, 1, 1));
    }
}
