//! mode=compilebench: the timed operations (create, patch, compile, clean, read, stat,
//! delete) on kernel trees, as driven by the simulation, and compilebench's own averages.

use super::datasets::{native_order, Dataset, Datasets};
use super::sim::{Set, Sim, Step, Trees, OPS};
use super::*;

/// mode=compilebench.
pub(super) struct CompileBench {
    pub(super) cfg: Config,
    pub(super) data: Datasets,
    pub(super) root: PathBuf,
}

impl CompileBench {
    pub(super) fn new(cfg: &Config, cx: &TrialContext) -> Result<Self> {
        Ok(Self {
            cfg: cfg.clone(),
            data: Datasets::generate(cfg.scale, cx.seed())?,
            root: cx.workdir().to_path_buf(),
        })
    }

    pub(super) fn dataset(&self, set: Set) -> &Dataset {
        match set {
            Set::Unpatched => &self.data.unpatched,
            Set::Patched => &self.data.patched,
            Set::UnpatchedCompiled => &self.data.unpatched_compiled,
            Set::Compiled => &self.data.compiled,
        }
    }

    pub(super) fn run(mut self, cx: &mut TrialContext) -> Result<()> {
        // Dataset initialisation, untimed, in compilebench's order: native orders of the
        // clean, patched and patched-compiled sets, then the compiled-only set shuffled.
        let mut rnd = Mt19937::python(self.cfg.seed);
        for set in [Set::Unpatched, Set::Patched, Set::Compiled] {
            let order = native_order(&self.root, self.dataset(set))?;
            let sorted = match set {
                Set::Unpatched => &mut self.data.unpatched,
                Set::Patched => &mut self.data.patched,
                _ => &mut self.data.compiled,
            };
            *sorted = order;
        }
        rnd.shuffle(&mut self.data.unpatched_compiled);
        let mut sim = Sim {
            rnd,
            unpatched: Trees::default(),
            patched: Trees::default(),
            unpatched_compiled: Trees::default(),
            patched_compiled: Trees::default(),
        };
        let initial: Vec<String> = (0..self.cfg.initial_dirs)
            .map(|i| format!("kernel-{i}"))
            .collect();
        let buf = vec![b'a'; self.cfg.buffer];
        let unpatched = &self.data.unpatched;
        let (root, bufsize) = (&self.root, self.cfg.buffer);
        cx.phase(&INITIAL, 1, |w| {
            let mut buf = buf.clone();
            for tree in &initial {
                run_directory(w, root, tree, unpatched, false, false, &mut buf, bufsize)?;
            }
            w.end_fs(root).on("syncfs", root)
        })?;
        initial.iter().for_each(|t| sim.unpatched.insert(t));
        if self.cfg.makej {
            return self.makej(cx, sim);
        }
        let mut rates: Vec<(&'static str, f64)> = Vec::new();
        let mut total_runs = 0;
        while total_runs < self.cfg.runs {
            crate::signals::check_stop()?;
            let op = OPS[sim.rnd.choice(OPS.len())];
            let exists = |t: &str| self.root.join(t).exists();
            let Some(step) = sim.step(op, &exists) else {
                continue;
            };
            let (name, rate) = self.perform(cx, &step, false)?;
            rates.push((name, rate));
            total_runs += 1;
        }
        cx.finish_parts(PHASES);
        note_compilebench_figures(cx, &rates);
        // Leave an empty work directory: remove the trees that are left (untimed).
        for tree in [
            &sim.unpatched,
            &sim.patched,
            &sim.unpatched_compiled,
            &sim.patched_compiled,
        ] {
            for t in &tree.0 {
                let p = self.root.join(t);
                fs::remove_dir_all(&p).on("rm -r", &p)?;
            }
        }
        Ok(())
    }

    /// `--makej`: compile every tree in one phase (synced once at its end), read 3 random
    /// trees, delete all.
    pub(super) fn makej(&self, cx: &mut TrialContext, mut sim: Sim) -> Result<()> {
        let mut steps = Vec::new();
        while let Some(step) = sim.step(Operation::Compile, &|_| false) {
            steps.push(step);
        }
        let (root, bufsize) = (&self.root, self.cfg.buffer);
        cx.phase(&COMPILE, 1, |w| {
            let mut buf = vec![b'a'; bufsize];
            for step in &steps {
                if let Step::Write { set, tree, .. } = step {
                    let data = self.dataset(*set);
                    run_directory(w, root, tree, data, false, false, &mut buf, bufsize)?;
                }
            }
            w.end_fs(root).on("syncfs", root)
        })?;
        let mut rates = Vec::new();
        for _ in 0..3 {
            if let Some(step) = sim.step(Operation::Read, &|_| false) {
                rates.push(self.perform(cx, &step, true)?);
            }
        }
        cx.finish_parts(PHASES);
        let mut trees = Vec::new();
        while let Some(Step::Delete { tree, .. }) = sim.step(Operation::Delete, &|_| false) {
            trees.push(tree);
        }
        cx.phase(&DELETE_COMPILED, 1, |w| {
            for tree in &trees {
                tree::remove_tree(w, &root.join(tree))?;
            }
            w.end_fs(root).on("syncfs", root)
        })?;
        note_compilebench_figures(cx, &rates);
        Ok(())
    }

    /// Runs one step as a part of its phase; returns the phase name and compilebench's
    /// figure for the run (MB/s of 10^6 bytes where compilebench prints MiB/s, or seconds
    /// for delete and stat).
    pub(super) fn perform(
        &self,
        cx: &mut TrialContext,
        step: &Step,
        no_sync: bool,
    ) -> Result<(&'static str, f64)> {
        let (root, bufsize) = (&self.root, self.cfg.buffer);
        let sync = |w: &mut Worker| -> Result<()> {
            if no_sync {
                Ok(())
            } else {
                w.end_fs(root).on("syncfs", root)
            }
        };
        // compilebench prints MiB/s; fsarena's MB is 10^6 bytes, like the phase's mb_per_s.
        let mb = |bytes: u64, s: f64| bytes as f64 / 1e6 / s;
        let bytes_of = |d: &Dataset| d.iter().map(|(_, s)| s).sum::<u64>();
        Ok(match step {
            Step::Write {
                spec,
                set,
                tree,
                unlink,
                read_first,
            } => {
                let data = self.dataset(*set);
                let s = cx.phase_part(spec, 1, |w| {
                    let mut buf = vec![b'a'; bufsize];
                    run_directory(w, root, tree, data, *unlink, *read_first, &mut buf, bufsize)?;
                    sync(w)
                })?;
                (spec.name, mb(bytes_of(data), s))
            }
            Step::Clean { set, tree } => {
                let data = self.dataset(*set);
                let s = cx.phase_part(&CLEAN, 1, |w| {
                    let dir = root.join(tree);
                    for (path, size) in data {
                        w.check()?;
                        let p = dir.join(path);
                        let t = w.start();
                        fs::remove_file(&p).on("unlink", &p)?;
                        w.done(Op::Delete, t, *size);
                    }
                    sync(w)
                })?;
                (CLEAN.name, mb(bytes_of(data), s))
            }
            Step::Delete { tree, compiled } => {
                let spec = if *compiled { &DELETE_COMPILED } else { &DELETE };
                let s = cx.phase_part(spec, 1, |w| {
                    tree::remove_tree(w, &root.join(tree))?;
                    sync(w)
                })?;
                (spec.name, s)
            }
            Step::Read { tree, compiled } => {
                let spec = if *compiled { &READ_COMPILED } else { &READ };
                let got = std::sync::Mutex::new(0u64);
                let s = cx.phase_part(spec, 1, |w| {
                    let mut buf = vec![0u8; bufsize];
                    *got.lock().unwrap() = tree::read_tree(w, &root.join(tree), &mut buf)?.bytes;
                    sync(w)
                })?;
                (spec.name, mb(got.into_inner().unwrap(), s))
            }
            Step::Stat { tree, compiled } => {
                let spec = if *compiled { &STAT_COMPILED } else { &STAT };
                let s = cx.phase_part(spec, 1, |w| {
                    tree::stat_tree(w, &root.join(tree))?;
                    sync(w)
                })?;
                (spec.name, s)
            }
        })
    }
}

/// Attaches compilebench's own averages to the phases: the mean per-run MB/s (10^6 bytes),
/// or the mean seconds for delete and stat.
pub(super) fn note_compilebench_figures(cx: &mut TrialContext, rates: &[(&'static str, f64)]) {
    for spec in PHASES {
        let xs: Vec<f64> = rates
            .iter()
            .filter(|(n, _)| *n == spec.name)
            .map(|(_, x)| *x)
            .collect();
        if xs.is_empty() {
            continue;
        }
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let key = if spec.primary == Primary::MbPerS {
            "compilebench_mb_per_s"
        } else {
            "compilebench_s"
        };
        cx.note_phase(spec.name, key, mean);
    }
}

/// compilebench's `run_directory`: makes `tree` and the directories of `data`, then for
/// each file: optionally unlinks it, opens it in append mode (creating it), optionally
/// reads it all and truncates it, and writes its size in `bufsize` pieces.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_directory(
    w: &mut Worker,
    root: &Path,
    tree: &str,
    data: &Dataset,
    unlink: bool,
    read_first: bool,
    buf: &mut [u8],
    bufsize: usize,
) -> Result<()> {
    let dir = root.join(tree);
    match fs::create_dir(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            return Err(e).on("mkdir", &dir);
        }
        _ => {}
    }
    let mut seen: HashSet<&str> = HashSet::new();
    let pattern: Vec<u8> = {
        let mut v = vec![0u8; bufsize];
        w.data().fill(&mut v);
        v
    };
    for (path, size) in data {
        w.check()?;
        if let Some((parent, _)) = path.rsplit_once('/') {
            if seen.insert(parent) {
                let p = dir.join(parent);
                if !p.is_dir() {
                    let t = w.start();
                    fs::create_dir_all(&p).on("mkdir", &p)?;
                    w.done(Op::Mkdir, t, 0);
                }
            }
        }
        let p = dir.join(path);
        if unlink {
            let t = w.start();
            if fs::remove_file(&p).is_ok() {
                w.done(Op::Delete, t, 0);
            }
        }
        let t = w.start();
        let mut f = File::options()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o644)
            .open(&p)
            .on("open", &p)?;
        if read_first {
            while f.read(buf).on("read", &p)? > 0 {}
            f.set_len(0).on("truncate", &p)?;
            w.done(Op::Read, t, 0);
        }
        let t = w.start();
        let mut left = *size;
        while left > 0 {
            let n = left.min(bufsize as u64) as usize;
            f.write_all(&pattern[..n]).on("write", &p)?;
            left -= n as u64;
        }
        w.after_write(&f).on("fsync", &p)?;
        let op = if read_first { Op::Write } else { Op::Create };
        w.done(op, t, *size);
    }
    Ok(())
}
