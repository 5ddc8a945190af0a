//! mode=kernel-build: copy a source tree into the target, build it (read each directory's
//! sources, write its objects), clean the objects and delete the tree.

use super::datasets::{CLEAN_FILES, MIB, UNPATCHED_COMPILED};
use super::*;

/// mode=kernel-build.
pub(super) struct KernelBuild {
    pub(super) source: Option<PathBuf>,
    pub(super) corpus: Option<Corpus>,
    pub(super) seed: u64,
    pub(super) buffer: usize,
}

impl KernelBuild {
    pub(super) fn new(cfg: &Config, seed: u64) -> Result<Self> {
        let corpus = match cfg.source {
            Some(_) => None,
            None => Some(Corpus::new("source-tree", cfg.scale, seed)?),
        };
        Ok(Self {
            source: cfg.source.clone(),
            corpus,
            seed,
            buffer: cfg.buffer,
        })
    }

    pub(super) fn run(&self, cx: &mut TrialContext) -> Result<()> {
        let root = cx.workdir().join("linux");
        // The object files: compilebench's compiled-only set, scaled to the tree's size,
        // placed in the directories holding C or assembler sources.
        let (dirs, counts, tree_files, tree_bytes) = self.source_dirs()?;
        let ratio_files = tree_files as f64 / CLEAN_FILES as f64;
        let ratio_bytes = tree_bytes as f64 / (222.37 * MIB);
        let objs = FileSet::new(
            self.seed ^ 0x6b62,
            Naming::Objects,
            SizeDist::LogNormal {
                median: UNPATCHED_COMPILED.2,
                sigma: 2.32,
                max: 64 << 20,
            },
            ((UNPATCHED_COMPILED.0 as f64 * ratio_files).round() as u64).max(1),
            (UNPATCHED_COMPILED.1 * ratio_bytes).round() as u64,
            &counts,
        );
        cx.phase(&KB_COPY, 1, |w| {
            match (&self.source, &self.corpus) {
                (Some(src), _) => {
                    tree::copy_tree(w, src, &root)?;
                }
                (None, Some(corpus)) => {
                    let t = w.start();
                    fs::create_dir(&root).on("mkdir", &root)?;
                    w.done(Op::Mkdir, t, 0);
                    corpus.write(w, &root)?;
                }
                (None, None) => unreachable!("a source or a corpus"),
            }
            w.end_fs(&root).on("syncfs", &root)
        })?;
        cx.phase(&KB_BUILD, 1, |w| {
            let mut buf = vec![0u8; self.buffer];
            for (d, dir) in dirs.iter().enumerate() {
                let path = root.join(dir);
                read_sources(w, &path, &mut buf)?;
                for i in objs.in_dir(d) {
                    w.check()?;
                    let p = path.join(objs.name(i));
                    let t = w.start();
                    crate::corpus::write_file(w, &p, objs.size(i), 0o644)?;
                    w.done(Op::Create, t, objs.size(i));
                }
            }
            w.end_fs(&root).on("syncfs", &root)
        })?;
        cx.phase(&CLEAN, 1, |w| {
            for i in 0..objs.len() {
                w.check()?;
                let p = root.join(&dirs[objs.dir_of(i)]).join(objs.name(i));
                let t = w.start();
                fs::remove_file(&p).on("unlink", &p)?;
                w.done(Op::Delete, t, objs.size(i));
            }
            w.end_fs(&root).on("syncfs", &root)
        })?;
        let parent = cx.workdir().to_path_buf();
        cx.phase(&KB_DELETE, 1, |w| {
            tree::remove_tree(w, &root)?;
            w.end_fs(&parent).on("syncfs", &parent)
        })?;
        Ok(())
    }

    /// The tree's directories (relative), the number of C/assembler sources in each (the
    /// weights for placing objects), and its file count and bytes.
    pub(super) fn source_dirs(&self) -> Result<(Vec<String>, Vec<f64>, u64, u64)> {
        if let Some(corpus) = &self.corpus {
            let dirs = corpus.dirs.iter().map(|d| d.path.clone()).collect();
            let t = corpus.totals();
            let weights = (0..corpus.dirs.len())
                .map(|d| {
                    corpus
                        .files
                        .in_dir(d)
                        .filter(|&i| is_source(&corpus.files.name(i)))
                        .count() as f64
                })
                .collect();
            return Ok((dirs, weights, t.files, t.bytes));
        }
        let src = self.source.as_ref().expect("a source or a corpus");
        let (mut dirs, mut weights, mut files, mut bytes) = (Vec::new(), Vec::new(), 0, 0);
        let mut stack = vec![String::new()];
        while let Some(rel) = stack.pop() {
            let path = src.join(&rel);
            let mut sources = 0;
            for entry in fs::read_dir(&path).on("readdir", &path)? {
                let entry = entry.on("readdir", &path)?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let md = entry.metadata().on("lstat", &entry.path())?;
                if md.is_dir() {
                    stack.push(if rel.is_empty() {
                        name
                    } else {
                        format!("{rel}/{name}")
                    });
                } else if md.is_file() {
                    files += 1;
                    bytes += md.len();
                    sources += u64::from(is_source(&name));
                }
            }
            dirs.push(rel);
            weights.push(sources as f64);
        }
        if weights.iter().all(|&w| w == 0.0) {
            weights.iter_mut().for_each(|w| *w = 1.0);
        }
        Ok((dirs, weights, files, bytes))
    }
}

pub(super) fn is_source(name: &str) -> bool {
    name.ends_with(".c") || name.ends_with(".S")
}

/// Reads the regular files directly in `dir` (not below it) in full.
pub(super) fn read_sources(w: &mut Worker, dir: &Path, buf: &mut [u8]) -> Result<()> {
    for entry in fs::read_dir(dir).on("readdir", dir)? {
        w.check()?;
        let entry = entry.on("readdir", dir)?;
        if !entry.file_type().on("lstat", &entry.path())?.is_file() {
            continue;
        }
        let p = entry.path();
        let t = w.start();
        let mut f = File::open(&p).on("open", &p)?;
        let mut bytes = 0;
        loop {
            let n = f.read(buf).on("read", &p)?;
            if n == 0 {
                break;
            }
            bytes += n as u64;
        }
        w.done(Op::Read, t, bytes);
    }
    Ok(())
}
