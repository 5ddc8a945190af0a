//! One kernel's guest: its scratch image, the boot, the plan run inside it and what comes
//! back (the journal, the results, a guest left running).

use super::*;

/// One kernel's guest.
pub(super) struct OneGuest<'a> {
    pub(super) plan: &'a Plan,
    /// The plan's targets this guest runs.
    pub(super) targets: Vec<&'a PlanTarget>,
    pub(super) guest: &'a GuestPlan,
    pub(super) kernel: &'a Kernel,
    pub(super) info: &'a GuestInfo,
    pub(super) vng: &'a Path,
    pub(super) work: PathBuf,
    pub(super) console: PathBuf,
    pub(super) args: &'a [String],
}

impl OneGuest<'_> {
    /// Boots, waits, adopts the guest's figures into `result`, removes everything.
    /// `Ok(true)` when interrupted.
    pub(super) fn run(
        &self,
        state: &State,
        progress: &dyn Progress,
        result: &mut RunResult,
    ) -> Result<bool> {
        let image = self.work.join("scratch.img");
        let pidfile = self.work.join("qemu.pid");
        let shared = self.work.join("shared");
        let made = [
            Resource::Dir {
                path: self.work.clone(),
            },
            Resource::Image {
                path: image.clone(),
            },
            Resource::Guest {
                pidfile: pidfile.clone(),
            },
        ];
        let outcome = (|| -> Result<launch::Outcome> {
            state.add(made[0].clone())?;
            crate::state::ensure_owned_dir(&self.work)?;
            std::fs::set_permissions(
                &self.work,
                std::os::unix::fs::PermissionsExt::from_mode(0o700),
            )?;
            std::fs::create_dir(&shared)
                .with_context(|| format!("creating {}", shared.display()))?;
            state.add(made[1].clone())?;
            make_image(&image, self.scratch_bytes())?;
            state.add(made[2].clone())?;
            progress.note(&format!(
                "{}: booting ({} scratch disk)",
                self.info.label(),
                crate::size::format_size(self.scratch_bytes())
            ));
            // The guest runs this very binary, from the shared directory: a guest sees the
            // host's root read-only but has /tmp and /var/tmp of its own.
            let exe = shared.join("fsarena");
            let own = std::env::current_exe().context("finding fsarena's own binary")?;
            std::fs::copy(&own, &exe)
                .with_context(|| format!("copying {} for the guest", own.display()))?;
            let json = shared.join("result.json");
            let mut argv: Vec<String> = vec![exe.to_string_lossy().into_owned(), "run".into()];
            argv.extend(with_plan_in(self.args, &shared, self.plan)?);
            argv.extend([
                "--in-guest".into(),
                SCRATCH_SERIAL.into(),
                "--json".into(),
                json.to_string_lossy().into_owned(),
                "--journal-dir".into(),
                shared.join(GUEST_JOURNAL).to_string_lossy().into_owned(),
            ]);
            let words: Vec<&str> = argv.iter().map(String::as_str).collect();
            // The guest's report goes nowhere: the host prints the whole run.
            let script = format!("exec {} >/dev/null", crate::cmd::shell_words(&words));
            let boot = launch::Boot {
                vng: self.vng,
                kernel: self.kernel,
                kvm: self.info.accel == "kvm",
                vcpus: self.guest.vcpus,
                memory_bytes: self.guest.memory_bytes,
                shared: Some(&shared),
                disk: Some((&image, SCRATCH_SERIAL)),
                pidfile: &pidfile,
                script,
            };
            let short = self.kernel.short();
            launch::run(
                &boot,
                &self.console,
                Duration::from_secs_f64(self.guest.idle_timeout_s),
                None,
                &|line| {
                    // The guest fsarena's own lines; the kernel's go to the console log.
                    if let Some(rest) = line.strip_prefix("fsarena: ") {
                        progress.note(&format!("[{short}] {rest}"));
                    }
                },
            )
        })();
        let left = match &outcome {
            Ok(_) => left_in(&shared),
            Err(_) => Left::Nothing,
        };
        for r in made.iter().rev() {
            match crate::state::undo(r) {
                Ok(_) => {
                    let _ = state.remove(r);
                }
                Err(e) => progress.note(&format!(
                    "{}: {e:#}; run `fsarena cleanup`",
                    crate::state::describe(r)
                )),
            }
        }
        let outcome = outcome?;
        let failure = match (&outcome.ended, &left) {
            (launch::Ended::Interrupted, _) => Some("interrupted".to_string()),
            (launch::Ended::Hung, _) => Some(format!(
                "the guest ({}) was silent for {} and was stopped before this trial \
                 finished; its console ended:{}",
                self.kernel.release,
                crate::suite::human_duration(self.guest.idle_timeout_s),
                outcome.tail_text()
            )),
            (_, Left::Results(Ok(_))) => None,
            (_, Left::Results(Err(e))) => {
                Some(format!("the guest's results are unreadable: {e:#}"))
            }
            (launch::Ended::Exited(code), Left::Journal(_) | Left::Nothing) => Some(format!(
                "the guest ({}) ended (status {}) before this trial finished; its console \
                 ended:{}",
                self.kernel.release,
                code.map_or("killed".into(), |c| c.to_string()),
                outcome.tail_text()
            )),
        };
        progress.note(&format!(
            "guest {} done in {:.0} s (console: {})",
            self.kernel.release,
            outcome.seconds,
            self.console.display()
        ));
        let run = match left {
            Left::Results(r) => r.ok(),
            Left::Journal(Ok(r)) => {
                progress.note(&format!(
                    "guest {}: ended without its results; {} trial(s) it finished are \
                     kept from its journal",
                    self.kernel.release,
                    r.trials.len()
                ));
                Some(r)
            }
            Left::Journal(Err(e)) => {
                progress.note(&format!(
                    "guest {}: its journal is unreadable: {e:#}",
                    self.kernel.release
                ));
                None
            }
            Left::Nothing => None,
        };
        let on = Planned {
            plan: self.plan,
            targets: &self.targets,
            kernel: self.kernel,
            info: self.info,
        };
        adopt(&on, run, failure.as_deref(), result);
        Ok(matches!(outcome.ended, launch::Ended::Interrupted))
    }

    /// The scratch disk: every target's image at once, and the aged image each aged target
    /// keeps ([`crate::provision::age::kept`]), plus room for ext4, the database and the
    /// state files.
    pub(super) fn scratch_bytes(&self) -> u64 {
        let images: u64 = self
            .targets
            .iter()
            .map(|t| match &t.spec {
                crate::provision::TargetSpec::Loop { size_bytes, .. }
                | crate::provision::TargetSpec::Served { size_bytes, .. } => {
                    let kept = t.age.is_some_and(|a| a.keep);
                    *size_bytes * if kept { 2 } else { 1 }
                }
                _ => 0,
            })
            .sum();
        let bytes = images + images / 16 + (1 << 30);
        bytes.div_ceil(1 << 20) << 20
    }
}

/// Creates the scratch image: new, never through a symlink, 0600, preallocated (a sparse
/// image would make the host allocate during the measurement).
pub(super) fn make_image(path: &Path, bytes: u64) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    let len = libc::off_t::try_from(bytes)?;
    // SAFETY: posix_fallocate on a file descriptor this function owns.
    let rc = unsafe { libc::posix_fallocate(std::os::fd::AsRawFd::as_raw_fd(&f), 0, len) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc)).with_context(|| {
            format!(
                "preallocating {} for {}",
                crate::size::format_size(bytes),
                path.display()
            )
        });
    }
    Ok(())
}
