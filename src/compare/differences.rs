//! What differs between two runs besides the filesystems: target set-up, workload
//! parameters, and the causes (busy trials, mixed set-ups) that make a comparison mixed.

use super::*;

/// Each target pair of one name whose set-up differs between A and B: size, kind,
/// filesystem, mkfs options, mount options asked for, aging (`--age`).
pub(super) fn setup_differences(
    a: &RunResult,
    b: &RunResult,
    pairs: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (ta, tb) in pairs.iter().filter(|(x, y)| x == y) {
        let (Some(x), Some(y)) = (
            a.targets.iter().find(|t| &t.name == ta),
            b.targets.iter().find(|t| &t.name == tb),
        ) else {
            continue;
        };
        let mut d = Vec::new();
        let mut differ = |what: &str, p: String, q: String| {
            if p != q {
                d.push(format!("{what} {p} vs {q}"));
            }
        };
        differ(
            "size",
            format!("{} MiB", x.size_bytes >> 20),
            format!("{} MiB", y.size_bytes >> 20),
        );
        differ("kind", x.kind.clone(), y.kind.clone());
        differ("filesystem", x.fstype.clone(), y.fstype.clone());
        differ(
            "mkfs options",
            format!("'{}'", x.mkfs_opts.join(" ")),
            format!("'{}'", y.mkfs_opts.join(" ")),
        );
        differ(
            "mount options",
            format!("'{}'", x.requested_mount_opts),
            format!("'{}'", y.requested_mount_opts),
        );
        let age = |t: &crate::result::TargetInfo| t.age.clone().unwrap_or_else(|| "fresh".into());
        differ("aging", age(x), age(y));
        if !d.is_empty() {
            out.push((ta.clone(), d.join(", ")));
        }
    }
    out
}

/// What differs between the runs besides the targets: host, kernel, policies, version,
/// whether caches could be dropped, and each common workload's parameters.
pub(super) fn mixed_causes(a: &RunResult, b: &RunResult) -> Vec<String> {
    let mut diffs = Vec::new();
    let mut differ = |what: &str, x: String, y: String| {
        if x != y {
            diffs.push(format!("{what} ({x} vs {y})"));
        }
    };
    differ("host", a.host.hostname.clone(), b.host.hostname.clone());
    differ("kernel", a.host.kernel.clone(), b.host.kernel.clone());
    differ("cpu", a.host.cpu_model.clone(), b.host.cpu_model.clone());
    differ(
        "cache policy",
        a.policy.cache.to_string(),
        b.policy.cache.to_string(),
    );
    differ(
        "sync policy",
        a.policy.sync.to_string(),
        b.policy.sync.to_string(),
    );
    differ(
        "data policy",
        a.policy.data.to_string(),
        b.policy.data.to_string(),
    );
    differ("seed", a.policy.seed.to_string(), b.policy.seed.to_string());
    differ(
        "caches dropped",
        a.can_drop_caches.to_string(),
        b.can_drop_caches.to_string(),
    );
    differ(
        "fsarena",
        a.fsarena_version.clone(),
        b.fsarena_version.clone(),
    );
    let mut warnings = Vec::new();
    if !diffs.is_empty() {
        warnings.push(format!(
            "A and B differ in {}: differences below may come from these, not only from \
             what you meant to compare",
            diffs.join(", ")
        ));
    }
    warnings.extend(parameter_differences(a, b));
    warnings.extend(busy_trials("A", a).into_iter().chain(busy_trials("B", b)));
    warnings
}

/// A warning when some of `run`'s trials were busy (mark `b`): something else competed
/// with them, so their figures may be slow for reasons that are not the targets.
pub(super) fn busy_trials(side: &str, run: &RunResult) -> Option<String> {
    let busy = crate::probe::disturb::busy_lines(run);
    (!busy.is_empty()).then(|| {
        format!(
            "{side}: {} of {} trial(s) were busy (b), their figures may be slowed by what \
             competed with them: {}",
            busy.len(),
            run.trials.len(),
            busy.join("; ")
        )
    })
}

pub(super) fn params_text(p: &BTreeMap<String, String>) -> String {
    if p.is_empty() {
        return "(none)".into();
    }
    let kv: Vec<String> = p.iter().map(|(k, v)| format!("{k}={v}")).collect();
    kv.join(", ")
}

/// A warning for each common workload whose parameters differ between the runs.
pub(super) fn parameter_differences(a: &RunResult, b: &RunResult) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in a.trials.iter().filter(|t| t.status == "ok") {
        let Some(u) = b
            .trials
            .iter()
            .find(|u| u.status == "ok" && u.label == t.label)
        else {
            continue;
        };
        // Only the parameters that differ, so that the warning is read at a glance.
        let only = |p: &BTreeMap<String, String>, q: &BTreeMap<String, String>| {
            p.iter()
                .filter(|(k, v)| q.get(*k) != Some(v))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<BTreeMap<_, _>>()
        };
        let w = format!(
            "workload {} ran with different parameters: {} vs {}",
            t.label,
            params_text(&only(&t.params, &u.params)),
            params_text(&only(&u.params, &t.params))
        );
        if t.params != u.params && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}
