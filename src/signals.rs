//! SIGINT/SIGTERM handling: a signal sets [`STOP`]; workers notice it at
//! their next operation, the runner tears everything down and exits with 130.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT/SIGTERM; checked by workers and the runner.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Whether a stop was requested.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Returns `Err(Interrupted)` once a stop was requested.
pub fn check_stop() -> anyhow::Result<()> {
    if stop_requested() {
        Err(crate::error::Error::Interrupted.into())
    } else {
        Ok(())
    }
}

/// Installs the handlers; call once from `main`.
pub fn install() -> std::io::Result<()> {
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { signal_hook::low_level::register(sig, || STOP.store(true, Ordering::Relaxed)) }?;
    }
    Ok(())
}
