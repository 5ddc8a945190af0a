//! `--age`: which targets run aged, which fresh, and under which names.

use super::PlanTarget;
use crate::error::usage;
use crate::provision::age::AgeSpec;
use crate::provision::TargetSpec;
use anyhow::Result;

/// The choices `--age` gives: `None` for fresh, else a profile, in the order given,
/// without repeats. No `--age`: fresh only.
pub fn choices(args: &[String], keep: bool) -> Result<Vec<Option<AgeSpec>>> {
    let mut out: Vec<Option<AgeSpec>> = Vec::new();
    let mut add = |c: Option<AgeSpec>| {
        if !out.contains(&c) {
            out.push(c);
        }
    };
    for a in args {
        match a.as_str() {
            "fresh" => add(None),
            "both" => {
                add(None);
                add(Some(AgeSpec {
                    keep,
                    ..AgeSpec::parse("desktop")?
                }));
            }
            spec => add(Some(AgeSpec {
                keep,
                ..AgeSpec::parse(spec)?
            })),
        }
    }
    if out.is_empty() {
        out.push(None);
    }
    Ok(out)
}

/// Refuses a run whose image directory cannot hold, beside its largest trial image, the
/// aged images it will keep (one per aged target not kept yet; with `independent`, one per
/// repetition of `reps`).
pub fn check_room(
    targets: &[PlanTarget],
    image_dir: &std::path::Path,
    seed: u64,
    reps: u32,
) -> Result<()> {
    let largest_bytes = targets
        .iter()
        .filter_map(|t| match t.spec {
            TargetSpec::Loop { size_bytes, .. } | TargetSpec::Served { size_bytes, .. } => {
                Some(size_bytes)
            }
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let kept: u64 = targets
        .iter()
        .flat_map(|t| {
            let reps = match t.age {
                Some(a) if a.independent => 1..=reps.max(1),
                _ => 1..=1,
            };
            reps.filter_map(|rep| {
                let age = t.age?;
                let seed = age.seed_for(seed, rep);
                let k =
                    crate::provision::age::kept::Kept::for_target(&t.spec, age, seed, image_dir)?;
                let (TargetSpec::Loop { size_bytes, .. } | TargetSpec::Served { size_bytes, .. }) =
                    t.spec
                else {
                    return None;
                };
                (!k.image().exists()).then_some(size_bytes)
            })
        })
        .sum();
    if kept == 0 {
        return Ok(());
    }
    let at = super::room::existing_ancestor(image_dir);
    let Ok(space) = crate::probe::sys::space(at) else {
        return Ok(()); // the image directory's own check says why
    };
    let need = largest_bytes
        .saturating_add(kept)
        .saturating_add(super::room::IMAGE_DIR_MARGIN);
    if space.capacity_bytes == 0 || space.avail_bytes >= need {
        return Ok(());
    }
    use crate::size::format_size;
    Err(usage(format!(
        "--image-dir {}: {} free, but the run needs {}: its largest image, the {} of aged \
         images --age keeps for later trials, and {} margin; --age-cache off keeps none \
         (and ages every trial anew), `fsarena cleanup --aged` removes those kept before",
        image_dir.display(),
        format_size(space.avail_bytes),
        format_size(need),
        format_size(kept),
        format_size(super::room::IMAGE_DIR_MARGIN)
    )))
}

/// The name of `base` aged with `spec`: `ext4+aged` when the run ages with one profile,
/// else `ext4+aged-database`, `ext4+aged-desktop-fill=60` (what tells them apart).
pub fn aged_name(base: &str, spec: &AgeSpec, all: &[Option<AgeSpec>]) -> String {
    let aged: Vec<&AgeSpec> = all.iter().flatten().collect();
    if aged.len() <= 1 {
        return format!("{base}+aged");
    }
    let same_profile = aged.iter().filter(|a| a.profile == spec.profile).count() > 1;
    if same_profile {
        let words = spec.canonical().replace([':', ','], "-");
        format!("{base}+aged-{words}")
    } else {
        format!("{base}+aged-{}", spec.profile.name())
    }
}

/// The plan's targets for `--age`: each target once per choice, aged ones renamed
/// ([`aged_name`]). Aging needs a filesystem fsarena makes on a loop image.
/// `keep`: `--age-cache on`.
pub fn aged_targets(
    args: &[String],
    keep: bool,
    targets: Vec<TargetSpec>,
) -> Result<Vec<PlanTarget>> {
    let choices = choices(args, keep)?;
    let mut out = Vec::new();
    for spec in targets {
        for c in &choices {
            let mut t = PlanTarget::from(spec.clone());
            if let Some(age) = c {
                if !matches!(spec, TargetSpec::Loop { .. } | TargetSpec::Served { .. }) {
                    return Err(usage(format!(
                        "--age: {} is a {} target; aging needs a filesystem fsarena makes \
                         on a loop image (--fs ext4, xfs, btrfs, …, or the ext4 that \
                         --fs nfs, nfs3 and smb serve)",
                        t.name,
                        spec.kind()
                    )));
                }
                t.name = aged_name(&t.name, age, &choices);
                t.age = Some(*age);
            }
            out.push(t);
        }
    }
    Ok(out)
}

/// A plan file's `age` value (docs/plans.md): one `--age` profile
/// spec, or, on a `[[matrix]]` axis (`in_matrix`), `"fresh"` for not aged. `"both"` is
/// the command line's shorthand and is refused with what to write instead; the message of
/// a bad spec is [`AgeSpec::parse`]'s, naming the key `age` instead of the flag.
pub fn plan_age(text: &str, in_matrix: bool) -> std::result::Result<Option<AgeSpec>, String> {
    match (text.trim(), in_matrix) {
        ("fresh", true) => Ok(None),
        ("fresh" | "both", false) => Err(format!(
            "age = \"{text}\": a [[target]] is one target, aged or not (leave age out for a \
             fresh one); to run targets both fresh and aged, use a [[matrix]] with age = \
             [\"fresh\", \"desktop\"]"
        )),
        ("both", true) => Err(
            "age = \"both\" is the command line's shorthand; a [[matrix]] lists its choices: \
             age = [\"fresh\", \"desktop\"]"
                .to_string(),
        ),
        (spec, _) => AgeSpec::parse(spec).map(Some).map_err(|e| {
            let msg = format!("{e:#}");
            match msg.strip_prefix("--age") {
                Some(rest) => format!("age{rest}"),
                None => msg,
            }
        }),
    }
}
