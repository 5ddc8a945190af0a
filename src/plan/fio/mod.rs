//! fio job files (`run --fio FILE`): fio's INI format (Jens Axboe, fio HOWTO "Job file
//! format") read into entries of the `job` workload, so that everything after the plan —
//! targets, repetitions, policies, the store, reports — is what it is for any workload.
//! [`ini`] reads sections, includes and `${VAR}`; `map` turns one job's options into
//! `job` parameters; here jobs become groups: fio runs the jobs between two `stonewall`s
//! at once, so each such group is one plan entry, and the entries run in file order.
//!
//! What fsarena cannot run as fio would is refused all at once, each with its file, line,
//! option and what fsarena lacks; `--fio-lenient` runs without the refusals it can leave
//! out and lists them. docs/fio.md is the user's page.

mod groups;
pub mod ini;
mod keywords;
mod map;
mod options;
mod pace;
mod rw;
pub mod units;

use crate::error::usage;
use crate::workload::WorkloadSpec;
use anyhow::Result;
use map::Mapped;
use std::fmt;
use std::path::Path;

/// The largest job file read (include files too).
pub const MAX_JOB_FILE_BYTES: u64 = 1 << 20;

/// A place in a job file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    pub file: String,
    pub line: usize,
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// An option fsarena cannot run as fio would.
#[derive(Clone, Debug, PartialEq)]
pub struct Issue {
    pub at: Loc,
    /// The option as written (`ioengine=libaio`), or empty for a whole job.
    pub option: String,
    /// What fsarena lacks.
    pub why: String,
    /// Refused even with `--fio-lenient`.
    pub fatal: bool,
    /// What `--fio-lenient` does instead (`left out`, `runs with offsets drawn with replacement`).
    pub lenient: String,
}

impl Issue {
    pub fn fatal(at: Loc, option: &str, why: String) -> Self {
        Self {
            at,
            option: option.to_string(),
            why,
            fatal: true,
            lenient: String::new(),
        }
    }

    pub fn approx(at: Loc, option: &str, why: String, lenient: &str) -> Self {
        Self {
            at,
            option: option.to_string(),
            why,
            fatal: false,
            lenient: lenient.to_string(),
        }
    }
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opt = crate::error::echo(&self.option);
        match (self.option.is_empty(), self.fatal) {
            (true, _) => write!(f, "{}: {}", self.at, self.why),
            (false, true) => write!(f, "{}: {opt}: {}", self.at, self.why),
            (false, false) => write!(
                f,
                "{}: {opt}: {} (--fio-lenient: {})",
                self.at, self.why, self.lenient
            ),
        }
    }
}

/// One plan entry: a group of jobs fio runs at once.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The `job` workload spec (`job:rw=randread,bs=4KiB,…`).
    pub spec: String,
    /// The fio jobs it runs.
    pub jobs: Vec<String>,
    pub at: Loc,
}

/// A job file read into plan entries.
#[derive(Clone, Debug)]
pub struct FioPlan {
    pub entries: Vec<Entry>,
    /// Mappings the run states (`ioengine=sync runs as psync`, `directory` overridden).
    pub notes: Vec<String>,
    /// With `lenient`: what was refused and run without (or as said).
    pub ignored: Vec<Issue>,
    /// fio's `invalidate` of every job (1 by default): the cache policy it asks for.
    pub invalidate: bool,
    /// `randseed`, when the jobs give one.
    pub seed: Option<u64>,
    /// Some job has `randrepeat=0` (and no `randseed`): a fresh seed each run.
    pub fresh_seed: bool,
}

impl FioPlan {
    /// The lines a run states before it starts (and its report keeps): each group and the
    /// jobs it runs, the policies the file sets in place of fsarena's defaults, the
    /// mappings, and what `--fio-lenient` ran without.
    pub fn run_notes(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .entries
            .iter()
            .map(|e| format!("fio: {} ({}) runs as {}", e.jobs.join(", "), e.at, e.spec))
            .collect();
        lines.push(self.policy_note());
        lines.extend(self.notes.iter().map(|n| format!("fio: {n}")));
        lines.extend(
            self.ignored
                .iter()
                .map(|i| format!("fio --fio-lenient: {i}")),
        );
        lines
    }

    /// The policies the job file sets (`fio_policy` in `plan/args.rs`, docs/fio.md): the
    /// cache from `invalidate`, sync `none` (fsarena's default is `end`), the seed from
    /// `randseed` when given.
    fn policy_note(&self) -> String {
        let cache = if self.invalidate {
            "cache cold (invalidate=1, fio's default)"
        } else {
            "cache keep (invalidate=0)"
        };
        let mut seed = self
            .seed
            .map(|s| format!(", seed {s} (randseed={s})"))
            .unwrap_or_default();
        if self.fresh_seed {
            seed.push_str(
                ", each repetition drawing from the run's seed plus the repetition − 1 \
                 (randrepeat=0; `run --fio` without --seed picks a fresh run seed)",
            );
        }
        format!(
            "fio: policies as the job file asks: {cache}, sync none (fio syncs only where \
             the file says: fsync, fdatasync, end_fsync){seed}"
        )
    }
}

/// The job sections to run (all when `names` is empty), and where they were named: the
/// place of a name no job section has (`--fio-section`, or a plan's `sections`).
#[derive(Clone, Copy)]
pub struct Only<'a> {
    pub names: &'a [String],
    pub from: &'a str,
}

impl Only<'_> {
    /// Every job section.
    pub const ALL: Only<'static> = Only {
        names: &[],
        from: "",
    };
}

/// Options given over every job's own (`OPT=VALUE` or `OPT`), and where: `--fio-set`, or
/// a plan's `set`; the Nth one's place is `from:N`.
#[derive(Clone, Copy)]
pub struct Sets<'a> {
    pub opts: &'a [String],
    pub from: &'a str,
}

impl Sets<'_> {
    /// No options.
    pub const NONE: Sets<'static> = Sets {
        opts: &[],
        from: "",
    };
}

/// Reads the job file at `path` (includes and `${VAR}` from this machine), with the
/// options `sets` over every job's own, and only the job sections `only`.
pub fn load(path: &Path, lenient: bool, sets: Sets, only: Only) -> Result<FioPlan> {
    let text = read_job_file(path)
        .map_err(|e| usage(format!("cannot read fio job file {}: {e}", path.display())))?;
    parse_only(path, &text, &mut ini::Real, lenient, sets, only)
        .map_err(|issues| refusal(path, &issues))
}

/// The usage error that lists every issue.
pub fn refusal(path: &Path, issues: &[Issue]) -> anyhow::Error {
    let mut msg = format!(
        "{}: {} fsarena cannot run as fio would:",
        path.display(),
        match issues.len() {
            1 => "1 option".to_string(),
            n => format!("{n} options"),
        }
    );
    // One issue a line, wrapped at word boundaries to stderr's width (a 140-column line
    // broke mid-word in an 80-column terminal).
    let width = crate::term::stderr_width();
    for i in issues {
        msg.push('\n');
        msg.push_str(&crate::term::wrap(&format!("  {i}"), width, 4));
    }
    if issues.iter().all(|i| !i.fatal) {
        msg.push_str("\n--fio-lenient runs it as each line says");
    }
    usage(msg)
}

/// Parses job-file `text` (the file `path`); `Err` holds every issue, none left out.
pub fn parse(
    path: &Path,
    text: &str,
    src: &mut dyn ini::Source,
    lenient: bool,
) -> Result<FioPlan, Vec<Issue>> {
    parse_set(path, text, src, lenient, Sets::NONE)
}

/// [`parse`] with the options `sets` after every job's own, so that they win.
pub fn parse_set(
    path: &Path,
    text: &str,
    src: &mut dyn ini::Source,
    lenient: bool,
    sets: Sets,
) -> Result<FioPlan, Vec<Issue>> {
    parse_only(path, text, src, lenient, sets, Only::ALL)
}

/// [`parse_set`] of the job sections `only`, as fio's `--section`: the global sections
/// still apply; a name no job section has is refused, its place `only.from`'s Nth name.
pub fn parse_only(
    path: &Path,
    text: &str,
    src: &mut dyn ini::Source,
    lenient: bool,
    sets: Sets,
    only: Only,
) -> Result<FioPlan, Vec<Issue>> {
    let (from, only) = (only.from, only.names);
    let (mut sections, mut issues) = ini::read(path, text, src);
    for name in only
        .iter()
        .filter(|n| !sections.iter().any(|s| !s.global && s.name == **n))
    {
        let at = Loc {
            file: from.into(),
            line: 1 + only.iter().position(|n| n == name).unwrap_or(0),
        };
        issues.push(Issue::fatal(
            at,
            name,
            format!("the file has no job section [{name}]"),
        ));
    }
    if !only.is_empty() {
        sections.retain(|s| s.global || only.contains(&s.name));
    }
    let sets: Vec<ini::Opt> = sets
        .opts
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (key, value) = match s.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
                None => (s.trim(), None),
            };
            ini::Opt {
                key: key.to_string(),
                value,
                at: Loc {
                    file: sets.from.into(),
                    line: i + 1,
                },
            }
        })
        .collect();
    let mut notes = Vec::new();
    let mut globals = Vec::new();
    let mut jobs: Vec<Mapped> = Vec::new();
    for s in &sections {
        if s.global {
            globals.extend(s.opts.iter().cloned());
            continue;
        }
        let opts: Vec<ini::Opt> = globals
            .iter()
            .chain(&s.opts)
            .chain(&sets)
            .cloned()
            .collect();
        jobs.push(map::job(&s.name, &s.at, &opts, &mut issues, &mut notes));
    }
    if jobs.is_empty() && issues.is_empty() {
        let at = Loc {
            file: path.display().to_string(),
            line: 1,
        };
        issues.push(Issue::fatal(at, "", "no job section in the file".into()));
    }
    // Every job has one (fio's default is 1); a seed only where given.
    let invalidate = one_setting(&jobs, &mut issues, "invalidate", |j| {
        let at = j.invalidate.1.clone().unwrap_or_else(|| j.at.clone());
        Some((u8::from(j.invalidate.0), at))
    })
    .is_none_or(|v| v == 1);
    let seed = one_setting(&jobs, &mut issues, "randseed", |j| j.seed.clone());
    groups::wait_for(&mut jobs, &mut issues, &mut notes);
    let entries = groups::groups(&jobs, &mut issues, &mut notes);
    if !issues.iter().any(|i| i.fatal) {
        for e in &entries {
            if let Err(err) = WorkloadSpec::parse(&e.spec) {
                let why = format!("job {}: {err:#}", e.jobs.join(", "));
                issues.push(Issue::fatal(e.at.clone(), "", why));
            }
        }
    }
    // A [global] option is the same issue in every job.
    let mut seen = Vec::new();
    issues.retain(|i| {
        let fresh = !seen.contains(i);
        if fresh {
            seen.push(i.clone());
        }
        fresh
    });
    if issues.iter().any(|i| i.fatal) || (!lenient && !issues.is_empty()) {
        return Err(issues);
    }
    let fresh_seed = jobs.iter().any(|j| {
        j.params
            .iter()
            .any(|(k, v)| *k == "randrepeat" && v == "false")
    });
    Ok(FioPlan {
        entries,
        notes,
        ignored: issues,
        invalidate,
        seed,
        fresh_seed,
    })
}

/// A setting fsarena takes once per run (`invalidate` → the cache policy, `randseed` →
/// the seed): refused where jobs give it different values.
fn one_setting<T: PartialEq + Copy + fmt::Display>(
    jobs: &[Mapped],
    issues: &mut Vec<Issue>,
    name: &str,
    of: impl Fn(&Mapped) -> Option<(T, Loc)>,
) -> Option<T> {
    let mut first: Option<(T, Loc)> = None;
    for j in jobs {
        let Some((v, at)) = of(j) else { continue };
        match &first {
            None => first = Some((v, at)),
            Some((f, f_at)) if *f != v => issues.push(Issue::fatal(
                at,
                &format!("{name}={v}"),
                format!("{name}={f} at {f_at}: fsarena takes one {name} for all the jobs of a run"),
            )),
            Some(_) => {}
        }
    }
    first.map(|(v, _)| v)
}

/// The text of a job file: a regular file of at most [`MAX_JOB_FILE_BYTES`], in UTF-8.
pub fn read_job_file(path: &Path) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    if !file.metadata().map_err(|e| e.to_string())?.is_file() {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::new();
    file.take(MAX_JOB_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_JOB_FILE_BYTES {
        return Err("larger than 1 MiB".into());
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".into())
}

#[cfg(test)]
mod tests;
