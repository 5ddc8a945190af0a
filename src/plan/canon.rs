//! The canonical form of an expanded plan, its hash (stored with a run, compared by
//! `--resume`), and what `fsarena plan check` prints.
//!
//! The canonical form is JSON with sorted keys of what decides the results: each target's
//! name, kind, filesystem, mkfs and mount options and size (or path), each workload's name,
//! label and every parameter value (defaults included), and the policy (cache, sync, data,
//! seed, repetitions). Formatting, comments, key order, the way a value was spelled
//! (`1GiB` or `1024MiB`), the image directory and the output files do not count — except
//! in the label of a workload the plan has twice, which is its spec as typed: the stored
//! trials are found by target, label and repetition, so a resumed run must see the same. The hash
//! is FNV-1a 64 of that text, as 16 hex digits: a name for the plan, not a security
//! measure (resume compares the stored canonical text itself). Secrets in options and
//! parameters are `***` in both ([`crate::secret`]).
//!
//! FNV-1a is written out (six lines) rather than taken from the `fnv` crate: stored runs
//! keep their hashes only if the function never changes, and this one is pinned by its
//! reference vectors.

use super::Plan;
use crate::provision::TargetSpec;
use crate::report::fit;
use crate::secret::redact_word;
use crate::size::format_size;
use serde_json::json;
use std::fmt::Write;

impl Plan {
    /// The canonical JSON text of the expanded plan (see the module docs).
    pub fn canonical(&self) -> String {
        let targets: Vec<_> = self
            .targets
            .iter()
            .map(|t| (t, match &t.spec {
                TargetSpec::Loop {
                    fs,
                    mkfs_opts,
                    mount_opts,
                    size_bytes,
                } => json!({"name": t.name, "kind": "loop", "fs": fs.name(),
                    "mkfs": mkfs_opts, "mount": redact_word(mount_opts), "size_bytes": size_bytes}),
                TargetSpec::Tmpfs {
                    size_bytes,
                    mount_opts,
                } => json!({"name": t.name, "kind": "tmpfs", "fs": "tmpfs",
                    "mount": redact_word(mount_opts), "size_bytes": size_bytes}),
                TargetSpec::Dir { path } => {
                    json!({"name": t.name, "kind": "dir", "path": path.display().to_string()})
                }
                TargetSpec::Device {
                    path,
                    fs,
                    mkfs_opts,
                    mount_opts,
                    ..
                } => json!({"name": t.name, "kind": "device", "fs": fs.name(),
                    "path": path.display().to_string(), "mkfs": mkfs_opts,
                    "mount": redact_word(mount_opts)}),
                TargetSpec::Net(n) => json!({"name": t.name, "kind": "net",
                    "net": n.kind.name(), "source": n.source,
                    "opts": redact_word(&n.opts)}),
                TargetSpec::Served {
                    proto,
                    mkfs_opts,
                    mount_opts,
                    size_bytes,
                } => json!({"name": t.name, "kind": "served", "fs": proto.name(),
                    "mkfs": mkfs_opts, "mount": redact_word(mount_opts),
                    "size_bytes": size_bytes}),
            }))
            // A target in a guest kernel of its own goes by its report name, with its
            // kernel; the others as ever (their plans keep their hashes).
            .map(|(t, mut v)| {
                if let Some(k) = &t.kernel {
                    v["name"] = json!(t.report_name());
                    v["kernel"] = json!(k.release);
                }
                if let Some(age) = &t.age {
                    v["age"] = json!(age.canonical());
                }
                v
            })
            .collect();
        let workloads: Vec<_> = self
            .workloads
            .iter()
            .map(|w| {
                json!({"name": w.info.name, "label": self.label(w),
                    "params": w.params.to_text_map()})
            })
            .collect();
        let p = &self.policy;
        let doc = json!({
            "canonical_plan": 1,
            "targets": targets,
            "workloads": workloads,
            "policy": {"cache": p.cache.to_string(), "sync": p.sync.to_string(),
                "data": p.data.to_string(), "seed": p.seed, "reps": p.reps},
        });
        doc.to_string()
    }

    /// FNV-1a 64 of [`Self::canonical`], as 16 hex digits.
    pub fn hash(&self) -> String {
        fnv1a64(self.canonical().as_bytes())
    }

    /// The expanded plan as `plan check` prints it, in lines of at most `width` columns
    /// (but for a single word with no comma that is wider).
    pub fn describe(&self, width: usize) -> String {
        let mut out = String::new();
        let p = &self.policy;
        let head = format!(
            "plan {}: {} targets × {} workloads × {} repetitions = {} trials\n\
             policy: cache {}, sync {}, data {}, seed {}; images in {}",
            self.hash(),
            self.targets.len(),
            self.workloads.len(),
            p.reps,
            self.targets.len() * self.workloads.len() * p.reps as usize,
            p.cache,
            p.sync,
            p.data,
            p.seed,
            self.image_dir.display()
        );
        let _ = writeln!(out, "{}", fit::wrap_text(&head, width, 4));
        let _ = writeln!(out, "\ntargets:");
        let parts: Vec<(String, Vec<String>)> = self
            .targets
            .iter()
            .map(|t| {
                let mut parts = target_parts(&t.spec);
                if let Some(k) = &t.kernel {
                    parts.push(format!("in a guest booted from {}", k.path.display()));
                }
                if let Some(age) = &t.age {
                    parts.push(format!("aged: {}", age.canonical()));
                    if age.independent {
                        parts.push(format!(
                            "aged anew for each of the {} repetitions, each from its own seed \
                             (each pays the aging's time)",
                            p.reps
                        ));
                    }
                }
                (t.report_name(), parts)
            })
            .collect();
        let targets: Vec<(&str, Vec<String>)> =
            parts.iter().map(|(n, p)| (n.as_str(), p.clone())).collect();
        out.push_str(&targets_listing(&targets, width));
        let _ = writeln!(out, "\nworkloads:");
        for w in &self.workloads {
            let params: Vec<String> = w
                .params
                .to_text_map()
                .into_iter()
                .filter(|(_, v)| v != "derived" && !v.is_empty())
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let name = format!("  {:<14} ", w.info.name);
            let at = fit::cols(&name);
            let lines = fit::wrap_options(&params.join(" "), width, at, at);
            let _ = writeln!(out, "{name}{}", &lines[at..]);
        }
        out
    }
}

/// What a target is, in the parts `plan check` prints: what and where, then its mkfs and
/// mount options.
fn target_parts(spec: &TargetSpec) -> Vec<String> {
    let mount = |opts: &str| {
        if opts.is_empty() {
            "mount: defaults".to_string()
        } else {
            format!("mount: {}", redact_word(opts))
        }
    };
    match spec {
        TargetSpec::Loop {
            fs,
            mkfs_opts,
            mount_opts,
            size_bytes,
        } => {
            let mut all = fs.default_mkfs_opts();
            all.extend(mkfs_opts.iter().cloned());
            vec![
                format!("{} on a {} loop image", fs.name(), format_size(*size_bytes)),
                format!("mkfs: {} {}", fs.mkfs_program(), all.join(" ")),
                mount(mount_opts),
            ]
        }
        TargetSpec::Tmpfs {
            size_bytes,
            mount_opts,
        } => vec![
            format!("tmpfs of {}", format_size(*size_bytes)),
            mount(mount_opts),
        ],
        TargetSpec::Dir { path } => vec![format!("existing directory {}", path.display())],
        TargetSpec::Device {
            path,
            fs,
            mkfs_opts,
            mount_opts,
            ..
        } => vec![
            format!(
                "{} on the device {} (ALL DATA DESTROYED)",
                fs.name(),
                path.display()
            ),
            format!("mkfs options: {}", mkfs_opts.join(" ")),
            format!("mount: {}", redact_word(mount_opts)),
        ],
        TargetSpec::Net(n) => vec![format!(
            "{} {} mounted with {}",
            n.kind.name(),
            n.source,
            redact_word(&n.opts)
        )],
        TargetSpec::Served {
            proto,
            mkfs_opts,
            mount_opts,
            size_bytes,
        } => {
            let fs = crate::provision::served::BACKING;
            let mut all = fs.default_mkfs_opts();
            all.extend(mkfs_opts.iter().cloned());
            vec![
                format!(
                    "{} served from a {} {} loop image",
                    proto.what(),
                    format_size(*size_bytes),
                    fs.name()
                ),
                format!("mkfs: {} {}", fs.mkfs_program(), all.join(" ")),
                format!(
                    "client mount: {}",
                    redact_word(&proto.client_mount_opts(mount_opts))
                ),
            ]
        }
    }
}

/// Names wider than this are put on a line of their own.
const NAME_COLS: usize = 20;

/// The targets, each `(name, parts)`: a line each, name then its parts joined by `; `,
/// when every one fits `width`; else each part on a line of its own, the first beside
/// the name (or under a name wider than [`NAME_COLS`]), wrapped between words (and after
/// commas in a long option list).
fn targets_listing(targets: &[(&str, Vec<String>)], width: usize) -> String {
    let mut out = String::new();
    let widest = targets.iter().map(|(n, _)| fit::cols(n)).max().unwrap_or(0);
    let one_line = |(name, parts): &(&str, Vec<String>)| {
        format!("  {} {}", fit::pad_right(name, widest), parts.join("; "))
    };
    if targets.iter().all(|t| fit::cols(&one_line(t)) <= width) {
        for t in targets {
            let _ = writeln!(out, "{}", one_line(t));
        }
        return out;
    }
    let w = targets
        .iter()
        .map(|(n, _)| fit::cols(n))
        .filter(|&c| c <= NAME_COLS)
        .max()
        .unwrap_or(0)
        .max(4);
    let col = 2 + w + 1;
    for (name, parts) in targets {
        let mut lines: Vec<String> = parts
            .iter()
            .map(|part| fit::wrap_options(part, width, col, col + 2))
            .collect();
        if fit::cols(name) <= w {
            let rest = lines[0].get(col..).unwrap_or("");
            lines[0] = format!("  {} {rest}", fit::pad_right(name, w));
        } else {
            lines.insert(0, format!("  {name}"));
        }
        let _ = writeln!(out, "{}", lines.join("\n"));
    }
    out
}

pub use crate::fnv::fnv1a64;

/// The estimate line of `plan check`: from this host's stored trials in `times`.
pub fn estimate_line(plan: &Plan, times: &[crate::store::TrialTime]) -> String {
    let names: Vec<String> = plan.targets.iter().map(|t| t.name.clone()).collect();
    let (s, missing) =
        crate::suite::estimate_specs(&plan.workloads, &names, plan.policy.reps, times);
    let human = crate::suite::human_duration(s);
    if missing.len() == names.len() * plan.workloads.len() {
        "estimated: no estimate: none of these workloads has run on these targets on this \
         host (run them once, then `plan check` estimates from the stored trials)"
            .into()
    } else if missing.is_empty() {
        format!("estimated: about {human} here, from this host's stored trials")
    } else {
        format!(
            "estimated: at least {human} here; never run on this host: {}",
            missing.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_name_wider_than_fmt_pads_is_listed() {
        // A width beyond u16::MAX made `{name:<widest$}` panic (issue 43: a 100 KB mkfs
        // option made the target's name that long).
        let long = "x".repeat(70_000);
        let targets = vec![
            (long.as_str(), vec!["ext4".to_string()]),
            ("b", vec!["tmpfs".to_string()]),
        ];
        for width in [80, 200_000] {
            let out = super::targets_listing(&targets, width);
            assert!(out.contains(&long) && out.contains("tmpfs"));
        }
    }

    #[test]
    fn fnv_matches_the_reference_vectors() {
        assert_eq!(super::fnv1a64(b""), "cbf29ce484222325");
        assert_eq!(super::fnv1a64(b"a"), "af63dc4c8601ec8c");
    }
}
