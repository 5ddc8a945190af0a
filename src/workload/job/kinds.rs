//! Jobs of several kinds at once in one trial (`with`), as fio runs the jobs of one group
//! that differ (readers beside writers, 4 KiB beside 128 KiB): each kind keeps its own
//! parameters, its own files (kind `k` ≥ 1 in the directory `withK` of the work
//! directory; `files_of` a job's of an earlier kind, as fio's jobs that name one
//! `filename`) and its own random offsets (from the seed plus `k × 2³²`); the workers of
//! every kind run in one phase, so that each kind is measured under the others' load, and
//! the phase's figures are the group's, as fio's `group_reporting` reports them.

use super::*;

/// The most kinds in one trial.
const MAX_KINDS: usize = 64;

/// `files_of=K:J` as (kind from 0, job).
pub(super) fn files_of(p: &Params) -> Result<Option<(usize, usize)>> {
    let Some(text) = p.text("files_of") else {
        return Ok(None);
    };
    let parsed = text
        .split_once(':')
        .and_then(|(k, j)| Some((k.trim().parse::<usize>().ok()?, j.trim().parse().ok()?)));
    match parsed {
        Some((k, j)) if k >= 1 => Ok(Some((k - 1, j))),
        _ => Err(usage(format!(
            "job: files_of: '{text}' is not K:J (a kind from 1 and a job from 0, as 1:0)"
        ))),
    }
}

/// `first` with the kinds `with` names, each checked, on its own and against the others.
pub(super) fn complete(mut first: Job, p: &Params) -> Result<Job> {
    let Some(text) = p.text("with") else {
        if first.files_of.is_some() {
            return Err(usage("job: files_of applies to a kind of with"));
        }
        return Ok(first);
    };
    let pieces: Vec<&str> = text.split(';').map(str::trim).collect();
    let bad = |k: usize, why: String| usage(format!("job: with: kind {}: {why}", k + 2));
    if pieces.len() + 1 > MAX_KINDS {
        return Err(usage(format!("job: with: at most {MAX_KINDS} kinds in all")));
    }
    if first.shared {
        return Err(usage(
            "job: with: not with shared_file=true (each kind has files of its own)",
        ));
    }
    if first.files_of.is_some() {
        return Err(usage("job: files_of applies to a kind of with, not the first"));
    }
    let mut kinds: Vec<Job> = Vec::new();
    for (k, piece) in pieces.iter().enumerate() {
        let q = Params::parse("job", PARAMS, piece).map_err(|e| bad(k, format!("{e:#}")))?;
        let why = if q.text("with").is_some() {
            Some("with is given once, to the first kind".to_string())
        } else if q.text("name").is_some() {
            Some("name is given once, to the first kind".to_string())
        } else if q.flag("shared_file") {
            Some("shared_file=true: each kind has files of its own".to_string())
        } else if q.text("files_of").is_some()
            && (q.flag("common_files") || !q.counts("file_sets").is_empty())
        {
            Some("files_of: not with common_files or file_sets (all its jobs work on those files)".to_string())
        } else {
            None
        };
        if let Some(why) = why {
            return Err(bad(k, why));
        }
        let mut job = Job::one(&q).map_err(|e| bad(k, format!("{e:#}")))?;
        if job.ramp != first.ramp {
            return Err(bad(
                k,
                "its ramp differs from the first kind's: the kinds run in one phase, after \
                 one ramp"
                    .to_string(),
            ));
        }
        if let Some((of, j)) = job.files_of {
            let owner = match of {
                0 => &mut first,
                _ if of <= k => &mut kinds[of - 1],
                _ => return Err(bad(k, format!("files_of={}:{j}: no earlier kind {}", of + 1, of + 1))),
            };
            let j = borrow(&mut job, owner, j).map_err(|why| bad(k, format!("files_of={}:{j}: {why}", of + 1)))?;
            job.files_of = Some((of, j));
        }
        kinds.push(job);
    }
    let jobs: usize = first.numjobs + kinds.iter().map(|j| j.numjobs).sum::<usize>();
    if jobs as u64 > MAX_JOBS {
        return Err(usage(format!(
            "job: with: {jobs} jobs in all, at most {MAX_JOBS}"
        )));
    }
    first.with = kinds;
    Ok(first)
}

/// Makes `job`'s jobs work on the files of job `j` of `owner` (those of the first job of
/// its set), which lays them out filled if `job` reads them; the owner's job.
fn borrow(job: &mut Job, owner: &mut Job, j: usize) -> Result<usize, String> {
    if j >= owner.numjobs {
        return Err(format!("that kind has {} job(s), from 0", owner.numjobs));
    }
    if owner.files_of.is_some() {
        return Err("that kind works on another's files: name that one".into());
    }
    if job.verify || owner.verify {
        return Err("not with verify=true (jobs writing one file overwrite each other's pattern)".into());
    }
    if job.nrfiles != owner.nrfiles || job.file_size() > owner.file_size() {
        return Err(format!(
            "its {} file(s) of {} do not fit in that job's {} of {}",
            job.nrfiles,
            format_size(job.file_size()),
            owner.nrfiles,
            format_size(owner.file_size())
        ));
    }
    let j = owner.owner(j);
    job.owners = vec![j; job.numjobs];
    owner.fill_for |= job.fills(job.engine);
    Ok(j)
}

/// One kind as it runs in a trial.
struct Kind<'a> {
    job: &'a Job,
    engine: Engine,
    dir: PathBuf,
    seed: u64,
    cfg: JobCfg,
    /// The phase's index of its first worker.
    first: usize,
}

impl Job {
    /// This job and the kinds `with` runs at once with it.
    pub(super) fn kinds(&self) -> impl Iterator<Item = &Job> {
        std::iter::once(self).chain(self.with.iter())
    }

    /// The run phase as reported: a read phase when every kind only reads; by MB/s when
    /// every kind is sequential, else by IOPS.
    fn group_spec(&self) -> PhaseSpec {
        let mut spec = self.run_spec();
        for k in &self.with {
            let s = k.run_spec();
            if s.kind != PhaseKind::Read {
                spec.kind = s.kind;
            }
            if s.primary == Primary::OpsPerS {
                spec.primary = s.primary;
            }
        }
        spec
    }
}

/// The kind of worker `idx` of the phase, and its index among that kind's jobs.
fn kind_of<'k, 'a>(kinds: &'k [Kind<'a>], idx: usize) -> (&'k Kind<'a>, usize) {
    let k = kinds
        .iter()
        .rposition(|k| k.first <= idx)
        .expect("kind 0 starts at 0");
    (&kinds[k], idx - kinds[k].first)
}

/// The trial: every kind's layout in one phase, their runs in one (after one ramp), their
/// verify passes in one.
pub(super) fn run(job: &Job, cx: &mut TrialContext) -> Result<()> {
    let base = if job.shared {
        cx.shared_dir()
    } else {
        cx.workdir()
    }
    .to_path_buf();
    let policy_sync = cx.policy().sync;
    let mut kinds: Vec<Kind> = Vec::new();
    let mut first = 0;
    for (k, j) in job.kinds().enumerate() {
        let engine = j.resolve_engine(cx)?;
        let seed = repetition_seed(cx.seed(), cx.repetition(), j.randrepeat)
            .wrapping_add((k as u64) << 32);
        if !j.randrepeat {
            cx.message(format!("randrepeat=false: offsets from seed {seed}"));
        }
        let dir = match (k, j.files_of) {
            (0, _) => base.clone(),
            (_, Some((of, _))) => kinds[of].dir.clone(),
            _ => {
                let d = base.join(format!("with{k}"));
                std::fs::create_dir_all(&d).on("create", &d)?;
                d
            }
        };
        kinds.push(Kind {
            job: j,
            engine,
            dir,
            seed,
            cfg: j.cfg(engine, seed, policy_sync),
            first,
        });
        first += j.numjobs;
    }
    let workers = first;
    let procs = cx.procs();
    let task = |k: &Kind, j: usize| Task::of(procs, k.job.numjobs, j);
    if kinds.iter().any(|k| k.engine.caps().uses_files) {
        let mut per_job = 0;
        for k in &kinds {
            // Opened on demand: one more for the sync of a file that was closed.
            let files = match k.job.open_files(k.engine) {
                _ if k.job.shared => 1,
                n if n < k.job.nrfiles => n + 1,
                n => n,
            };
            // And an io_uring job's ring.
            per_job = per_job.max(files + usize::from(k.engine == Engine::IoUring));
        }
        backend::room_for_files(per_job as u64, workers as u64)?;
        let fills = kinds.iter().any(|k| k.job.fills(k.engine));
        let spec = if fills { &LAYOUT } else { &LAYOUT_EMPTY };
        cx.phase(spec, workers, |w| {
            let (k, j) = kind_of(&kinds, w.idx);
            if !k.engine.caps().uses_files || k.job.files_of.is_some() {
                return Ok(());
            }
            k.job.layout(w, j, &k.dir, k.engine, k.seed, task(k, j))
        })?;
    }
    // Outside the clock, before the job's first run (the ramp's, if any): fio's
    // startdelay and pre_read.
    let before = |k: &Kind, j: usize| -> Result<()> {
        if let Some(d) = k.job.startdelay {
            std::thread::sleep(d);
        }
        if k.job.pre_read && k.engine.caps().uses_files {
            k.job.pre_read_files(&k.dir, j)?;
        }
        Ok(())
    };
    // Where each job's ramp left off: its run goes on from there, as fio's does.
    let left: Vec<std::sync::Mutex<engine::Resume>> =
        (0..workers).map(|_| Default::default()).collect();
    // Each job opens its files when it starts: no descriptor stays open between
    // phases, so the cold policy can remount the target before the run.
    let run = |w: &mut Worker| {
        let (k, j) = kind_of(&kinds, w.idx);
        if job.ramp.is_none() {
            before(k, j)?;
        }
        let resume = std::mem::take(&mut *left[w.idx].lock().expect("not poisoned"));
        let opener = |p: &Path| k.job.open_one(p);
        let open = |j: usize| k.job.open(&k.dir, j, k.engine, &opener);
        k.job.run_loops(k.engine, w, j, &k.cfg, task(k, j), &open, resume)
    };
    match job.ramp {
        // The cache policy applies before the ramp, never between it and the run.
        Some(ramp) => cx.phase_after_ramp(
            &job.group_spec(),
            workers,
            |w| {
                let (k, j) = kind_of(&kinds, w.idx);
                before(k, j)?;
                let opener = |p: &Path| k.job.open_one(p);
                let mut mine = k.job.open(&k.dir, j, k.engine, &opener)?;
                let mut resume = engine::Resume::default();
                let until = Until::Time(ramp);
                let t = task(k, j);
                k.job
                    .job(k.engine, w, j, &mut mine, &k.cfg, until, 1, t, &mut resume)?;
                *left[w.idx].lock().expect("not poisoned") = resume;
                Ok(())
            },
            run,
        )?,
        None => cx.phase(&job.group_spec(), workers, run)?,
    }
    if kinds.iter().any(|k| k.job.verify && k.engine.caps().uses_files) {
        cx.phase(&VERIFY, workers, |w| {
            let (k, j) = kind_of(&kinds, w.idx);
            if !(k.job.verify && k.engine.caps().uses_files) {
                return Ok(());
            }
            k.job.verify(w, j, &k.dir, k.seed, task(k, j))
        })?;
    }
    // The queue depth reports show beside the figures, where every kind has the same.
    let depth = kinds[0].cfg.depth;
    if kinds.iter().all(|k| k.cfg.depth == depth) {
        cx.note_phase("run", "iodepth", depth as f64);
    }
    Ok(())
}
