//! Plan files: the TOML text → [`PlanFile`], every value with its location. Checks the
//! shape (known keys, types, one kind of target per entry) and expands `[[matrix]]`
//! entries into targets; what the values mean is checked in [`super::build`].
//! The format is documented in docs/plans.md.

use super::located::{key_span, At, Src};
use super::matrix;
use anyhow::Result;
use std::ops::Range;
use std::path::PathBuf;
use toml_edit::{Item, Table, TableLike};

/// Keys of the top level.
pub const TOP_KEYS: &[&str] = &["description", "defaults", "target", "matrix", "workload"];
/// Keys of `[defaults]`.
pub const DEFAULT_KEYS: &[&str] = &["size", "image_dir", "reps", "cache", "sync", "data", "seed"];
/// Keys of a `[[target]]`.
pub const TARGET_KEYS: &[&str] = &[
    "name", "fs", "mkfs", "mount", "size", "dir", "device", "kernel", "age",
];
/// Keys of a `[[matrix]]`.
pub const MATRIX_KEYS: &[&str] = &["fs", "mkfs", "mount", "size", "kernel", "age"];

/// `[defaults]`: each value only where the plan gives it.
#[derive(Default)]
pub struct Defaults {
    pub size: Option<At<String>>,
    pub image_dir: Option<At<PathBuf>>,
    pub reps: Option<At<u64>>,
    pub cache: Option<At<String>>,
    pub sync: Option<At<String>>,
    pub data: Option<At<String>>,
    pub seed: Option<At<u64>>,
}

/// One target as written (or as a matrix made it).
#[derive(Clone, Debug, Default)]
pub struct TargetEntry {
    pub name: Option<At<String>>,
    pub fs: Option<At<String>>,
    pub mkfs: Option<At<String>>,
    pub mount: Option<At<String>>,
    pub size: Option<At<String>>,
    pub dir: Option<At<PathBuf>>,
    /// A block device to format with `fs` (every interlock of `--device` applies).
    pub device: Option<At<PathBuf>>,
    /// A guest kernel to run the target in (as `run --kernel`: a vmlinuz path or a
    /// release under /boot).
    pub kernel: Option<At<String>>,
    /// How the target is aged before each trial: one `--age` value
    /// (`desktop:fill=60`), never `fresh` or `both`; absent: fresh from mkfs.
    pub age: Option<At<String>>,
    /// Where the entry starts (its `[[target]]` or `[[matrix]]` header).
    pub span: Option<Range<usize>>,
}

/// Why a plan's `fio = "FILE"` does not run in a guest kernel, and what does: the guest's
/// fsarena builds the plan from the plan file itself, where the job file's path, includes
/// and `${VAR}`s would be read in the guest, not as the host read them; `run --fio` hands
/// the guest the workloads the host read ([`crate::guest`]).
pub const FIO_IN_GUEST: &str = "the guest's fsarena reads the plan file itself, and with \
     it the job file, its includes and its ${VAR}s, which are the host's; run the job file \
     with `fsarena run --fio FILE --kernel KERNEL`, which gives the guest the jobs as read \
     here";

/// One `[[workload]]`: a workload kind with parameters, a suite, or an fio job file.
pub struct WorkloadEntry {
    /// `kind`, `suite` or `fio` (the job file's path), with its value.
    pub kind: At<String>,
    pub is_suite: bool,
    /// `fio = "FILE"` (docs/fio.md), with `lenient = true` for `--fio-lenient`.
    pub is_fio: bool,
    pub fio_lenient: bool,
    /// `sections = ["NAME", …]`: only those job sections of the file (`--fio-section`).
    pub fio_sections: Vec<String>,
    /// `set = ["OPT=VALUE", …]`: fio options over every job's own (`--fio-set`).
    pub fio_set: Vec<String>,
    /// Parameters (for `kind`): key, the value as workload-spec text, the value's span.
    pub params: Vec<(At<String>, At<String>)>,
    /// The keys of `params` written as TOML arrays (`files = [1, 10]`): only list
    /// parameters take them.
    pub list_keys: Vec<String>,
    pub span: Option<Range<usize>>,
}

/// A parsed plan file.
pub struct PlanFile {
    pub src: Src,
    pub defaults: Defaults,
    /// `[[target]]` entries first, then the targets of each `[[matrix]]`, in file order.
    pub targets: Vec<TargetEntry>,
    pub workloads: Vec<WorkloadEntry>,
}

/// The largest plan file read: 1 MiB is thousands of targets and workloads; more is not a
/// plan (and `/dev/zero` would be read forever).
pub const MAX_PLAN_BYTES: u64 = 1 << 20;

/// Reads and parses the plan at `path`.
pub fn load(path: &std::path::Path) -> Result<PlanFile> {
    let text = read_plan(path).map_err(|e| {
        crate::error::usage(format!("cannot read plan file {}: {e}", path.display()))
    })?;
    parse(&path.display().to_string(), &text)
}

/// The text of a plan file: a regular file (opened without blocking, so a FIFO cannot
/// hang the open), at most [`MAX_PLAN_BYTES`], in UTF-8.
fn read_plan(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind, Read};
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "not a regular file (a device, FIFO or directory is not a plan)",
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_PLAN_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_PLAN_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "larger than 1 MiB, too large for a plan",
        ));
    }
    String::from_utf8(bytes).map_err(|_| Error::new(ErrorKind::InvalidData, "not UTF-8 text"))
}

/// Parses plan text; `name` is what errors call the file.
pub fn parse(name: &str, text: &str) -> Result<PlanFile> {
    let src = Src {
        path: name.to_string(),
        text: text.to_string(),
    };
    let doc = toml_edit::Document::parse(text).map_err(|e| {
        let msg = e.message().trim().to_string();
        src.err(&e.span(), format!("not valid TOML: {msg}"))
    })?;
    let root = doc.as_table();
    src.only_keys(root, "the plan", TOP_KEYS)?;
    if let Some(item) = root.get("description") {
        src.string(item, "description")?;
    }
    let defaults = match root.get("defaults") {
        Some(item) => read_defaults(&src, src.table(item, "[defaults]")?)?,
        None => Defaults::default(),
    };
    let mut targets = Vec::new();
    for t in array_of_tables(&src, root, "target")? {
        targets.push(read_target(&src, t)?);
    }
    if targets.len() > matrix::MAX_TARGETS {
        return Err(src.err(
            &targets[matrix::MAX_TARGETS].span,
            format!(
                "{} [[target]] entries; a plan may have at most {}",
                targets.len(),
                matrix::MAX_TARGETS
            ),
        ));
    }
    for m in array_of_tables(&src, root, "matrix")? {
        let made = read_matrix(&src, m, targets.len())?;
        targets.extend(made);
    }
    let mut workloads = Vec::new();
    for w in array_of_tables(&src, root, "workload")? {
        workloads.push(read_workload(&src, w)?);
    }
    Ok(PlanFile {
        src,
        defaults,
        targets,
        workloads,
    })
}

/// The `[[key]]` tables of `root` (none when absent).
fn array_of_tables<'a>(src: &Src, root: &'a Table, key: &str) -> Result<Vec<&'a Table>> {
    match root.get(key) {
        None => Ok(Vec::new()),
        Some(Item::ArrayOfTables(a)) => Ok(a.iter().collect()),
        Some(other) => Err(src.err(
            &other.span().or_else(|| key_span(root, key)),
            format!("'{key}' must be written as [[{key}]] tables, one per {key}"),
        )),
    }
}

fn read_defaults(src: &Src, t: &dyn TableLike) -> Result<Defaults> {
    src.only_keys(t, "[defaults]", DEFAULT_KEYS)?;
    let s = |k: &str| t.get(k).map(|i| src.string(i, k)).transpose();
    let u = |k: &str| t.get(k).map(|i| src.uint(i, k)).transpose();
    Ok(Defaults {
        size: s("size")?,
        image_dir: s("image_dir")?.map(|a| At {
            v: PathBuf::from(a.v),
            span: a.span,
        }),
        reps: u("reps")?,
        cache: s("cache")?,
        sync: s("sync")?,
        data: s("data")?,
        seed: u("seed")?,
    })
}

fn read_target(src: &Src, t: &Table) -> Result<TargetEntry> {
    src.only_keys(t, "[[target]]", TARGET_KEYS)?;
    let s = |k: &str| t.get(k).map(|i| src.string(i, k)).transpose();
    let path = |k: &str| -> Result<Option<At<PathBuf>>> {
        Ok(s(k)?.map(|a| At {
            v: PathBuf::from(a.v),
            span: a.span,
        }))
    };
    let e = TargetEntry {
        name: s("name")?,
        fs: s("fs")?,
        mkfs: s("mkfs")?,
        mount: s("mount")?,
        size: s("size")?,
        dir: path("dir")?,
        device: path("device")?,
        kernel: s("kernel")?,
        age: s("age")?,
        span: t.span().or_else(|| super::located::table_span(t)),
    };
    match (e.fs.is_some(), e.dir.is_some(), e.device.is_some()) {
        (true, false, _) => {}
        (false, false, false) => {
            return Err(src.err(
                &e.span,
                "a [[target]] needs one of fs = \"ext4\" (a loop image or tmpfs), \
                 dir = \"PATH\" (an existing directory) or device = \"/dev/…\" with fs",
            ))
        }
        (false, false, true) => {
            return Err(src.err(
                &e.span,
                "a device target needs the filesystem to make on it: fs = \"ext4\", \"xfs\", …",
            ))
        }
        (_, true, _) => {
            if e.fs.is_some() || e.device.is_some() {
                return Err(src.err(
                    &e.span,
                    "a [[target]] with dir has neither fs nor device (fsarena neither makes \
                     nor mounts a directory)",
                ));
            }
        }
    }
    let not_for = |k: &str, v: &Option<At<String>>, why: &str| match v {
        Some(v) => Err(src.err(&v.span, format!("'{k}' does not apply to {why}"))),
        None => Ok(()),
    };
    if e.dir.is_some() {
        let why = "a dir target (fsarena neither makes nor mounts it)";
        not_for("mkfs", &e.mkfs, why)?;
        not_for("mount", &e.mount, why)?;
        not_for("size", &e.size, why)?;
    }
    if e.device.is_some() {
        not_for(
            "size",
            &e.size,
            "a device target (the whole device is used)",
        )?;
    }
    if e.dir.is_some() || e.device.is_some() {
        not_for(
            "age",
            &e.age,
            "a dir or device target (aging needs a filesystem fsarena makes on a loop image)",
        )?;
        not_for(
            "kernel",
            &e.kernel,
            "a dir or device target (a guest makes its filesystems on its own scratch disk)",
        )?;
    }
    Ok(e)
}

fn read_matrix(src: &Src, t: &Table, before: usize) -> Result<Vec<TargetEntry>> {
    src.only_keys(t, "[[matrix]]", MATRIX_KEYS)?;
    let span = t.span().or_else(|| super::located::table_span(t));
    let axis = |k: &str| t.get(k).map(|i| src.strings(i, k)).transpose();
    let fs = axis("fs")?.ok_or_else(|| {
        src.err(
            &span,
            "a [[matrix]] needs fs, e.g. fs = [\"ext3\", \"ext4\"] (and any of mkfs, mount, size, kernel, age as lists)",
        )
    })?;
    let none = || {
        vec![At {
            v: String::new(),
            span: None,
        }]
    };
    let axes = matrix::Axes {
        fs,
        mkfs: axis("mkfs")?.unwrap_or_else(none),
        mount: axis("mount")?.unwrap_or_else(none),
        size: axis("size")?.unwrap_or_else(none),
        kernel: axis("kernel")?.unwrap_or_else(none),
        age: axis("age")?.unwrap_or_else(none),
    };
    matrix::expand(src, &axes, span, before)
}

fn read_workload(src: &Src, t: &Table) -> Result<WorkloadEntry> {
    let span = t.span().or_else(|| super::located::table_span(t));
    if let Some(f) = t.get("fio") {
        return read_fio(src, t, src.string(f, "fio")?, span);
    }
    let (kind, is_suite) = match (t.get("kind"), t.get("suite")) {
        (Some(k), None) => (src.string(k, "kind")?, false),
        (None, Some(s)) => (src.string(s, "suite")?, true),
        (Some(_), Some(_)) => {
            return Err(src.err(
                &key_span(t, "suite"),
                "a [[workload]] has kind = \"…\" or suite = \"…\", not both",
            ))
        }
        (None, None) => {
            return Err(src.err(
                &span,
                "a [[workload]] needs kind = \"NAME\" (see `fsarena list`) or suite = \"NAME\"",
            ))
        }
    };
    let mut params = Vec::new();
    let mut list_keys = Vec::new();
    for (k, item) in t.iter() {
        if k == "kind" || k == "suite" {
            continue;
        }
        let key = At {
            v: k.to_string(),
            span: key_span(t, k),
        };
        if let Err(msg) =
            crate::limits::check_len("a parameter's name", k, crate::limits::MAX_KEY_BYTES)
        {
            return Err(src.err(&key.span, msg));
        }
        if is_suite {
            return Err(src.err(
                &key.span,
                format!(
                    "unknown key '{}' in a suite [[workload]]; valid: suite (a suite's \
                     workloads take no parameters; list them as kind = … entries instead)",
                    crate::error::echo(k)
                ),
            ));
        }
        if item.as_array().is_some() {
            list_keys.push(k.to_string());
        }
        params.push((key, value_text(src, item, k)?));
    }
    Ok(WorkloadEntry {
        kind,
        is_suite,
        is_fio: false,
        fio_lenient: false,
        fio_sections: Vec::new(),
        fio_set: Vec::new(),
        params,
        list_keys,
        span,
    })
}

/// `[[workload]] fio = "FILE"` (and `lenient = true`, `sections = [...]`): an fio job
/// file, read when the plan is built.
fn read_fio(
    src: &Src,
    t: &Table,
    path: At<String>,
    span: Option<Range<usize>>,
) -> Result<WorkloadEntry> {
    src.only_keys(
        t,
        "an fio [[workload]]",
        &["fio", "lenient", "sections", "set"],
    )?;
    let fio_lenient = match t.get("lenient") {
        Some(item) => item
            .as_bool()
            .ok_or_else(|| src.err(&item.span(), "lenient is true or false"))?,
        None => false,
    };
    let fio_sections = match t.get("sections") {
        Some(item) => strings(item).ok_or_else(|| {
            src.err(
                &item.span(),
                "sections is a list of the job file's sections to run, as fio's \
                     --section: sections = [\"heavy\"]",
            )
        })?,
        None => Vec::new(),
    };
    let fio_set = match t.get("set") {
        Some(item) => strings(item).ok_or_else(|| {
            src.err(
                &item.span(),
                "set is a list of fio options over every job's own, as --fio-set: \
                 set = [\"size=1g\", \"runtime=10\"]",
            )
        })?,
        None => Vec::new(),
    };
    Ok(WorkloadEntry {
        kind: path,
        is_suite: false,
        is_fio: true,
        fio_lenient,
        fio_sections,
        fio_set,
        params: Vec::new(),
        list_keys: Vec::new(),
        span,
    })
}

/// A parameter's TOML value as workload-spec text (`512MiB`, `5000`, `true`, `1,10,100`),
/// quoted where it holds a comma.
fn value_text(src: &Src, item: &Item, key: &str) -> Result<At<String>> {
    use toml_edit::Value as V;
    let bad = || {
        src.err(
            &item.span(),
            format!(
                "parameter '{}' must be a string, number, true/false or a list of numbers",
                crate::error::echo(key)
            ),
        )
    };
    let v = item.as_value().ok_or_else(bad)?;
    let scalar = |v: &V| -> Option<String> {
        match v {
            V::String(s) => Some(s.value().clone()),
            V::Integer(i) => Some(i.value().to_string()),
            // `{:?}` keeps the decimal point (5.0 → "5.0", 1e3 → "1000.0"), so a count
            // refuses a float however whole it looks.
            V::Float(f) => Some(format!("{:?}", f.value())),
            V::Boolean(b) => Some(b.value().to_string()),
            _ => None,
        }
    };
    let text = match v {
        V::Array(a) => a
            .iter()
            .map(|x| match x {
                V::Integer(i) => Some(i.value().to_string()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?
            .join(","),
        other => {
            let t = scalar(other).ok_or_else(bad)?;
            if t.contains(',') && matches!(other, V::String(_)) {
                if t.contains('\'') {
                    format!("\"{}\"", t.replace('\\', "\\\\").replace('"', "\\\""))
                } else {
                    format!("'{t}'")
                }
            } else {
                t
            }
        }
    };
    if let Some(msg) = src.too_long(key, &text) {
        return Err(src.err(&v.span(), msg));
    }
    Ok(At {
        v: text,
        span: v.span(),
    })
}

/// A TOML array of strings, as a list.
fn strings(item: &toml_edit::Item) -> Option<Vec<String>> {
    item.as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect()
}
