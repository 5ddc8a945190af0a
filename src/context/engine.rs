//! The database engine a trial ran, as the workload records it in its context.

use super::TrialContext;

impl TrialContext<'_> {
    /// Records the database engine the trial runs, its version and settings (kept in the
    /// trial: [`crate::result::Trial::engine`]).
    pub fn set_engine(&mut self, engine: crate::result::Engine) {
        self.engine = Some(engine);
    }

    /// The engine recorded, removed.
    pub fn take_engine(&mut self) -> Option<crate::result::Engine> {
        self.engine.take()
    }
}
