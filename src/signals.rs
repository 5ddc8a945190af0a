//! SIGINT/SIGTERM handling: a signal sets [`crate::context::STOP`]; workers notice it at
//! their next operation, the runner tears everything down and exits with 130.

use crate::context::STOP;
use std::sync::atomic::Ordering;

/// Installs the handlers; call once from `main`.
pub fn install() -> std::io::Result<()> {
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { signal_hook::low_level::register(sig, || STOP.store(true, Ordering::Relaxed)) }?;
    }
    Ok(())
}
