//! `[[matrix]]` expansion and the naming rule of targets.
//!
//! A matrix is the product fs × mkfs × mount × size × kernel × age, in that order (fs
//! outermost; a kernel, when listed, adds `@RELEASE` to the name, `""` being the host's;
//! an age other than `"fresh"` adds `+aged`, or `+aged-PROFILE` when the axis lists more
//! than one aged choice, as `--age` names them: [`super::age::aged_name`]).
//! Each
//! combination becomes a target named by [`target_name`]: the filesystem, then `+` and the
//! mkfs options when there are any, then `+` and the mount options when there are any,
//! then `+` and the size when the matrix lists more than one size. Inside each part,
//! whitespace runs become `_` and every character other than an ASCII letter or digit,
//! `.`, `_`, `=`, `,` or `-` becomes `_`, so a name is also a safe file name:
//! `ext4`, `ext4+data=writeback`, `xfs+-d_agcount=120`, `ext4+-O_^has_journal` →
//! `ext4+-O__has_journal`. Names must be unique within a plan; when two options map to the
//! same name the plan is refused with both locations (give the targets `name`s in
//! `[[target]]` entries instead).

use super::file::TargetEntry;
use super::located::{At, Src};
use anyhow::Result;
use std::ops::Range;

/// The lists of one `[[matrix]]` (a missing axis is `[""]`).
pub struct Axes {
    pub fs: Vec<At<String>>,
    pub mkfs: Vec<At<String>>,
    pub mount: Vec<At<String>>,
    pub size: Vec<At<String>>,
    /// Guest kernels (`""`: the host's).
    pub kernel: Vec<At<String>>,
    /// How each target is aged (`"fresh"` or `""`: not aged; else an `--age` profile spec).
    pub age: Vec<At<String>>,
}

/// One part of a name, made file-name safe.
fn clean(part: &str) -> String {
    let words: Vec<&str> = part.split_whitespace().collect();
    words
        .join("_")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._=,-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name of a target with filesystem `fs`, mkfs options `mkfs`, mount options `mount`
/// and, when it is part of the name, `size` (empty parts are left out).
pub fn target_name(fs: &str, mkfs: &str, mount: &str, size: &str) -> String {
    let mut name = clean(fs);
    for part in [mkfs, mount, size] {
        if !part.trim().is_empty() {
            name.push('+');
            name.push_str(&clean(part));
        }
    }
    name
}

/// Whether `name` is one the naming rule could produce (or a user may give): ASCII
/// letters, digits and `._=,+-`, not empty, not starting with `.` or `-`, at most 120 bytes.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 120
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._=,+-".contains(c))
}

/// The most targets a plan may have. Each is a filesystem made, mounted and measured for
/// every workload and repetition: at ~1 s of mkfs and mount alone, 1,000 targets spend
/// over 15 minutes on provisioning per workload and repetition. A typo such as three
/// 100-item axes (a million targets) ran `plan check` out of memory.
pub const MAX_TARGETS: usize = 1000;

/// The targets of one matrix; `before` targets were listed earlier in the plan. The size
/// of the product is checked before anything is expanded.
pub fn expand(
    src: &Src,
    axes: &Axes,
    span: Option<Range<usize>>,
    before: usize,
) -> Result<Vec<TargetEntry>> {
    let lens = [
        axes.fs.len(),
        axes.mkfs.len(),
        axes.mount.len(),
        axes.size.len(),
        axes.kernel.len(),
        axes.age.len(),
    ];
    let product = lens
        .iter()
        .try_fold(1usize, |p, n| p.checked_mul(*n))
        .and_then(|p| p.checked_add(before))
        .filter(|total| *total <= MAX_TARGETS);
    if product.is_none() {
        return Err(src.err(
            &span,
            format!(
                "this [[matrix]] makes {} targets ({} fs × {} mkfs × {} mount × {} size{}{}){}; \
                 a plan may have at most {MAX_TARGETS}: shorten the lists or split the plan",
                lens.iter().map(|&n| n as u128).product::<u128>(),
                lens[0],
                lens[1],
                lens[2],
                lens[3],
                if lens[4] > 1 {
                    format!(" × {} kernel", lens[4])
                } else {
                    String::new()
                },
                if lens[5] > 1 {
                    format!(" × {} age", lens[5])
                } else {
                    String::new()
                },
                if before > 0 {
                    format!(" besides the {before} listed before it")
                } else {
                    String::new()
                },
            ),
        ));
    }
    let some = |a: &At<String>| (!a.v.trim().is_empty()).then(|| a.clone());
    let sized = axes.size.len() > 1;
    // Each age with what it means (`None`: fresh), for the entries and their names.
    let mut ages = Vec::new();
    for a in &axes.age {
        let choice = match a.v.trim() {
            "" => None,
            text => super::age::plan_age(text, true).map_err(|e| src.err(&a.span, e))?,
        };
        ages.push((choice.map(|_| a.clone()), choice));
    }
    let choices: Vec<_> = ages.iter().map(|(_, c)| *c).collect();
    let mut out = Vec::new();
    for fs in &axes.fs {
        for mkfs in &axes.mkfs {
            if fs.v == "tmpfs" && !mkfs.v.trim().is_empty() {
                return Err(src.err(
                    &mkfs.span,
                    "tmpfs has no mkfs options; put tmpfs in a [[matrix]] or [[target]] of its own",
                ));
            }
            for mount in &axes.mount {
                for ((size, kernel), (age, choice)) in axes
                    .size
                    .iter()
                    .flat_map(|size| axes.kernel.iter().map(move |k| (size, k)))
                    .flat_map(|sk| ages.iter().map(move |a| (sk, a)))
                {
                    let mut name =
                        target_name(&fs.v, &mkfs.v, &mount.v, if sized { &size.v } else { "" });
                    if let Some(spec) = choice {
                        name = super::age::aged_name(&name, spec, &choices);
                    }
                    out.push(TargetEntry {
                        name: Some(At {
                            v: name,
                            span: span.clone(),
                        }),
                        fs: Some(fs.clone()),
                        mkfs: some(mkfs),
                        mount: some(mount),
                        size: some(size),
                        dir: None,
                        device: None,
                        kernel: some(kernel),
                        age: age.clone(),
                        span: span.clone(),
                    });
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rule() {
        assert_eq!(target_name("ext4", "", "", ""), "ext4");
        assert_eq!(
            target_name("ext4", "", "data=writeback", ""),
            "ext4+data=writeback"
        );
        assert_eq!(
            target_name("xfs", "-d agcount=120", "", ""),
            "xfs+-d_agcount=120"
        );
        assert_eq!(
            target_name("ext4", "-O ^has_journal", "noatime,data=journal", "1GiB"),
            "ext4+-O__has_journal+noatime,data=journal+1GiB"
        );
        assert_eq!(target_name("ext4", "-L a/b", "", ""), "ext4+-L_a_b");
        for n in ["ext4+-O__has_journal+noatime,data=journal+1GiB", "tmpfs"] {
            assert!(valid_name(n), "{n}");
        }
        for n in ["", ".x", "-x", "a/b", "a b", "é"] {
            assert!(!valid_name(n), "{n}");
        }
    }
}
