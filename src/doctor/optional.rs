//! The checks of what optional runs need, each INFO when missing since the default run
//! needs none of it: guest kernels (`run --kernel`) and the database engines workloads run.

use super::{check, facts, Check, Verdict};

/// The database engines workloads run (pgbench's PostgreSQL, db_bench); INFO, since the
/// default run needs none of them.
pub(super) fn engines(e: &[(String, String, String, bool)]) -> Check {
    let missing: Vec<&(String, String, String, bool)> = e.iter().filter(|x| !x.3).collect();
    if missing.is_empty() {
        let names: Vec<&str> = e.iter().map(|x| x.0.as_str()).collect();
        return check(
            "engines",
            Verdict::Ok,
            format!("the engines of {} are installed", names.join(", ")),
        );
    }
    let what: Vec<String> = missing
        .iter()
        .map(|(w, p, k, _)| format!("{w} needs {p} (package {k})"))
        .collect();
    let workloads: Vec<&str> = missing.iter().map(|x| x.0.as_str()).collect();
    check(
        "engines",
        Verdict::Info,
        format!(
            "{}: `fsarena setup --workload {}`",
            what.join("; "),
            workloads.join(",")
        ),
    )
}

/// What `run --kernel` needs; INFO, since the default run needs none of it.
pub(super) fn guest(g: &facts::GuestFacts) -> Check {
    let mut missing = Vec::new();
    if g.vng.is_none() {
        missing.push(
            "virtme-ng (python3 -m venv /opt/vng && /opt/vng/bin/pip install virtme-ng)"
                .to_string(),
        );
    }
    for (ok, what) in [
        (
            g.qemu,
            "qemu-system-x86_64 (apt-get install qemu-system-x86)",
        ),
        (
            g.busybox,
            "a static busybox (apt-get install busybox-static)",
        ),
        (
            !g.kernels.is_empty(),
            "a kernel under /boot with its modules (apt-get install linux-image-amd64)",
        ),
    ] {
        if !ok {
            missing.push(what.to_string());
        }
    }
    if !missing.is_empty() {
        return check(
            "guest",
            Verdict::Info,
            format!("`run --kernel` needs {}", missing.join(", ")),
        );
    }
    let accel = match &g.kvm {
        Some(Ok(())) => "KVM works: guests run at near-native speed".to_string(),
        Some(Err(why)) => format!(
            "KVM does not ({why}): guests run emulated (tcg), for whether it works and \
             relative order, not absolute speed"
        ),
        None => "KVM not checked".to_string(),
    };
    check(
        "guest",
        Verdict::Ok,
        format!("`run --kernel` can boot {}; {accel}", g.kernels.join(", ")),
    )
}
