//! Whether KVM works here: a short boot, its verdict remembered per kernel and boot of the
//! host, and the check `doctor` runs outside any run.

use super::*;

/// Checks KVM with a short boot outside any run (`doctor`), under a state file of its own.
pub fn check_kvm_once(vng: &Path, k: &Kernel, image_dir: &Path) -> Result<(), String> {
    let id = format!("doctor-{}", crate::run::new_run_id());
    let state = crate::state::ensure_owned_dir(image_dir)
        .and_then(|_| State::create(&image_dir.join("state"), &id))
        .map_err(|e| format!("{e:#}"))?;
    let out = check_kvm(vng, k, &state, image_dir, &id);
    let _ = state.finish();
    out
}

/// What a KVM check found, kept until the machine reboots in `kvm-check.json` of this
/// user's registry directory (`/run/fsarena` for root; the image directory when there is
/// none), so that not every run and `doctor`, whatever its image directory, pays for a
/// boot that hangs.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct KvmVerdict {
    pub(super) boot_id: String,
    pub(super) kernel: String,
    pub(super) works: Result<(), String>,
}

pub(super) fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Whether KVM boots `k` here: as found earlier since this boot, else by a short boot.
pub(super) fn check_kvm(
    vng: &Path,
    k: &Kernel,
    state: &State,
    image_dir: &Path,
    run_id: &str,
) -> Result<(), String> {
    let kept = crate::probe::disturb::registry::own_dir()
        .unwrap_or_else(|| image_dir.to_path_buf())
        .join("kvm-check.json");
    let boot = boot_id();
    if let Some(v) = std::fs::read(&kept)
        .ok()
        .and_then(|b| serde_json::from_slice::<KvmVerdict>(&b).ok())
        .filter(|v| !boot.is_empty() && v.boot_id == boot && v.kernel == k.release)
    {
        return v.works.map_err(|why| {
            format!(
                "{why}; found earlier since this boot, {} keeps it",
                kept.display()
            )
        });
    }
    let works = check_kvm_now(vng, k, state, image_dir, run_id);
    if works.as_ref().is_err_and(|w| w == "interrupted") {
        return works;
    }
    let v = KvmVerdict {
        boot_id: boot,
        kernel: k.release.clone(),
        works: works.clone(),
    };
    if let Ok(bytes) = serde_json::to_vec(&v) {
        let _ = crate::output::write(&kept, &bytes);
    }
    works
}

/// Checks KVM with a short boot, its pidfile recorded in the state file.
pub(super) fn check_kvm_now(
    vng: &Path,
    k: &Kernel,
    state: &State,
    image_dir: &Path,
    run_id: &str,
) -> Result<(), String> {
    let work = image_dir.join(format!("guest-{run_id}-kvm"));
    let dir = Resource::Dir { path: work.clone() };
    let pid = Resource::Guest {
        pidfile: work.join("qemu.pid"),
    };
    let made = state
        .add(dir.clone())
        .and_then(|_| crate::state::ensure_owned_dir(&work))
        .and_then(|_| state.add(pid.clone()));
    let out = match made {
        Ok(()) => launch::kvm_works(vng, k, &work, KVM_CHECK),
        Err(e) => Err(format!("{e:#}")),
    };
    for r in [pid, dir] {
        if crate::state::undo(&r).is_ok() {
            let _ = state.remove(&r);
        }
    }
    out
}
