//! compilebench's four datasets (clean, patched, compiled-only and patched-compiled files),
//! generated from the corpus at compilebench's counts and sizes; the native readdir order they
//! are written in; and the dataset files that let the real compilebench write the same sets.

use super::*;

/// compilebench's datasets at scale 1, counted from its dataset files after its own
/// reductions: (files, bytes, median size).
pub(super) const CLEAN_FILES: u64 = 21_280;
pub(super) const PATCHED: (u64, f64) = (6_136, 109.67 * MIB);
pub(super) const UNPATCHED_COMPILED: (u64, f64, f64) = (3_263, 680.63 * MIB, 14_813.0);
pub(super) const PATCHED_COMPILED: (u64, f64, f64) = (2_573, 691.60 * MIB, 18_721.0);
pub(super) const MIB: f64 = 1_048_576.0;
/// Of the directories, the share that receives compiled-only files (349 of 1,263).
pub(super) const OBJECT_DIRS_PER_MILLE: u64 = 276;
/// A dataset: relative paths and sizes, in the order compilebench writes them.
pub(super) type Dataset = Vec<(String, u64)>;

/// compilebench's four datasets, generated.
pub(super) struct Datasets {
    pub(super) unpatched: Dataset,
    pub(super) patched: Dataset,
    pub(super) unpatched_compiled: Dataset,
    pub(super) compiled: Dataset,
}

impl Datasets {
    pub(super) fn generate(scale: f64, seed: u64) -> Result<Self> {
        let corpus = Corpus::new("source-tree", scale, seed)?;
        let clean = &corpus.files;
        let n = |x: u64| ((x as f64 * scale).round() as u64).max(1);
        let unpatched: Dataset = (0..clean.len())
            .map(|i| (corpus.file_path(clean, i), clean.size(i)))
            .collect();
        // Patched: every file whose keyed hash falls in the first n of the clean count,
        // taken in index order, with new sizes adding up to the patched total.
        let patch_n = n(PATCHED.0).min(clean.len());
        let pick = crate::workload::bonnie_files::Permutation::new(clean.len(), seed ^ 0x7061);
        let mut chosen: Vec<u64> = (0..patch_n).map(|k| pick.get(k)).collect();
        chosen.sort_unstable();
        let new_sizes = FileSet::new(
            seed ^ 0x7073,
            Naming::Source,
            SizeDist::LogNormal {
                median: 4055.0,
                sigma: 1.41,
                max: 1 << 20,
            },
            patch_n,
            (PATCHED.1 * scale).round() as u64,
            &[1.0],
        );
        // A patched file's size differs from its clean size (compilebench keeps only those).
        let differ = |new: u64, old: u64| if new == old { new + 1 } else { new };
        let patched = chosen
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let size = differ(new_sizes.size(k as u64), clean.size(i));
                (corpus.file_path(clean, i), size)
            })
            .collect();
        // Compiled-only files of the unpatched tree: in about a quarter of the source
        // directories, weighted by their file counts.
        let weights: Vec<f64> = corpus
            .dir_weights()
            .iter()
            .enumerate()
            .map(|(d, w)| {
                let keep = d == 0
                    || crate::workload::bonnie_files::hash(seed ^ 0x6f62, d as u64) % 1000
                        < OBJECT_DIRS_PER_MILLE;
                if keep {
                    *w
                } else {
                    0.0
                }
            })
            .collect();
        let objects = |key: u64, (count, bytes, median): (u64, f64, f64)| {
            FileSet::new(
                key,
                Naming::Objects,
                SizeDist::LogNormal {
                    median,
                    sigma: 2.32,
                    max: 64 << 20,
                },
                n(count),
                (bytes * scale).round() as u64,
                &weights,
            )
        };
        let uc = objects(seed ^ 0x7563, UNPATCHED_COMPILED);
        let unpatched_compiled: Dataset = (0..uc.len())
            .map(|i| (corpus.file_path(&uc, i), uc.size(i)))
            .collect();
        // Patched-compiled files: most names of the compiled-only set, new sizes.
        let pc_sizes = objects(seed ^ 0x7063, PATCHED_COMPILED);
        let pc_n = pc_sizes.len().min(uc.len());
        let pick = crate::workload::bonnie_files::Permutation::new(uc.len(), seed ^ 0x7064);
        let mut names: Vec<u64> = (0..pc_n).map(|k| pick.get(k)).collect();
        names.sort_unstable();
        let compiled = names
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let size = differ(pc_sizes.size(k as u64), uc.size(i));
                (corpus.file_path(&uc, i), size)
            })
            .collect();
        Ok(Self {
            unpatched,
            patched,
            unpatched_compiled,
            compiled,
        })
    }
}

/// Writes fsarena's synthetic datasets for `scale` and the corpus `seed` (fsarena's
/// `--seed`) as compilebench dataset files (`dataset-unpatched`, `-patched`,
/// `-unpatched-compiled`, `-patched-compiled`) in `dir`, such that compilebench's own
/// reductions leave exactly fsarena's four sets: the real compilebench run with `-s dir`
/// then writes the same files, sizes and order as `compile:scale=…`.
pub fn write_compilebench_datasets(scale: f64, seed: u64, dir: &Path) -> Result<()> {
    let d = Datasets::generate(scale, seed)?;
    let patched: HashSet<&str> = d.patched.iter().map(|(p, _)| p.as_str()).collect();
    let unchanged: Vec<&(String, u64)> = d
        .unpatched
        .iter()
        .filter(|(p, _)| !patched.contains(p.as_str()))
        .collect();
    let lines = |sets: Vec<Vec<&(String, u64)>>| -> String {
        sets.into_iter()
            .flatten()
            .map(|(p, s)| format!("{p} {s}\n"))
            .collect()
    };
    fn all(d: &Dataset) -> Vec<&(String, u64)> {
        d.iter().collect()
    }
    let files = [
        ("dataset-unpatched", lines(vec![all(&d.unpatched)])),
        (
            "dataset-patched",
            lines(vec![unchanged.clone(), all(&d.patched)]),
        ),
        (
            "dataset-unpatched-compiled",
            lines(vec![all(&d.unpatched), all(&d.unpatched_compiled)]),
        ),
        (
            "dataset-patched-compiled",
            lines(vec![unchanged, all(&d.patched), all(&d.compiled)]),
        ),
    ];
    fs::create_dir_all(dir).on("mkdir", dir)?;
    for (name, text) in files {
        let p = dir.join(name);
        fs::write(&p, text).on("write", &p)?;
    }
    Ok(())
}

/// The order in which this filesystem's readdir returns `data` when walked top-down
/// (Python's `os.walk`), found by creating it once with empty files in a scratch tree
/// `native-N` in `root` and removing it again, as compilebench does.
pub(super) fn native_order(root: &Path, data: &Dataset) -> Result<Dataset> {
    let mut i = 0;
    while root.join(format!("native-{i}")).exists() {
        i += 1;
    }
    let scratch = root.join(format!("native-{i}"));
    fs::create_dir(&scratch).on("mkdir", &scratch)?;
    let mut sorted: Vec<usize> = (0..data.len()).collect();
    sorted.sort_by(|&a, &b| data[a].0.cmp(&data[b].0));
    for &k in &sorted {
        let p = scratch.join(&data[k].0);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).on("mkdir", parent)?;
        }
        File::create(&p).on("create", &p)?;
    }
    let index: std::collections::HashMap<&str, usize> = data
        .iter()
        .enumerate()
        .map(|(k, (p, _))| (p.as_str(), k))
        .collect();
    let mut order = Vec::with_capacity(data.len());
    walk_files(&scratch, "", &mut |rel| {
        if let Some(&k) = index.get(rel) {
            order.push(data[k].clone());
        }
    })?;
    fs::remove_dir_all(&scratch).on("rm -r", &scratch)?;
    anyhow::ensure!(
        order.len() == data.len(),
        "native order: found {} of {} files",
        order.len(),
        data.len()
    );
    Ok(order)
}

/// Calls `f` with the relative path of every file below `dir`, top-down in readdir order.
pub(super) fn walk_files(dir: &Path, rel: &str, f: &mut dyn FnMut(&str)) -> Result<()> {
    let mut subdirs = Vec::new();
    for entry in fs::read_dir(dir).on("readdir", dir)? {
        let entry = entry.on("readdir", dir)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        if entry.file_type().on("lstat", &entry.path())?.is_dir() {
            subdirs.push((entry.path(), path));
        } else {
            f(&path);
        }
    }
    for (p, r) in subdirs {
        walk_files(&p, &r, f)?;
    }
    Ok(())
}
