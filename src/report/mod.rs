//! Reports: they read only the results, never the run. Exporters return bytes.
//!
//! An output format of a run is an [`Exporter`]: its own file here holding its `EXPORTER`,
//! and one line of the `exporters!` list below, which declares its module and puts it in
//! [`exporters`]. The output flags of `export`, `report` and `run` are
//! made from that list (`cli`), and `main` writes what they name through it.

pub mod aging;
pub mod charts;
pub mod crash;
pub mod engines;
pub mod fit;
pub mod history;
pub mod human;
pub mod lines;
pub mod more;
pub mod overview;
pub mod procs;
pub mod terminal;
pub mod verdicts_json;

use crate::result::RunResult;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Declares each exporter's module and lists its `EXPORTER` in [`exporters`].
macro_rules! exporters {
    ($($module:ident),+ $(,)?) => {
        $(pub mod $module;)+

        /// Every output format, in the order their flags are listed in `--help`.
        pub fn exporters() -> &'static [&'static Exporter] {
            static ALL: &[&Exporter] = &[$(&$module::EXPORTER),+];
            ALL
        }
    };
}

exporters! {
    json,
    csv,
    bonnie_csv,
    fio_json,
    html,
    png,
    svg,
}

/// An output format of a run, and where the command line offers it as `--FLAG`. Help
/// texts are one sentence without its final full stop, as clap shows them.
#[derive(Debug)]
pub struct Exporter {
    /// Its flag without the dashes: `json` is `--json`.
    pub flag: &'static str,
    /// `fsarena export RUN --FLAG [-o FILE]`: its help there; `None`: not offered. Exactly
    /// one format is given, written to standard output or FILE ([`Writes::Bytes`] only).
    pub export: Option<&'static str>,
    /// `fsarena report RUN --FLAG FILE|DIR`: its help there; `None`: not offered. One or
    /// more are given; each writes to its FILE ([`Writes::Bytes`], which `report` names)
    /// or into its DIR ([`Writes::Files`]).
    pub report: Option<&'static str>,
    /// `fsarena run … --FLAG PATH`: how it is offered there; `None`: not offered
    /// ([`Writes::Bytes`] only).
    pub run: Option<AfterRun>,
    /// What it makes of a run.
    pub writes: Writes,
}

/// How `run … --FLAG PATH` writes a format once the run is over.
#[derive(Debug)]
pub struct AfterRun {
    /// The flag's help.
    pub help: &'static str,
    /// Made from the run as the database holds it, when it was stored (so it is what
    /// `report` makes of it), not from the run as it ran.
    pub stored: bool,
    /// Says `report written to PATH` once written.
    pub says: bool,
}

/// What an exporter makes of a run.
#[derive(Clone, Copy)]
pub enum Writes {
    /// One document: its bytes, written whole to a file or to standard output.
    Bytes(fn(&RunResult) -> Result<Vec<u8>>),
    /// Chart files in a directory, created when missing: returns the files written.
    Files(fn(&RunResult, &Path) -> Result<Vec<PathBuf>>),
}

impl std::fmt::Debug for Writes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Writes::Bytes(_) => "Bytes",
            Writes::Files(_) => "Files",
        })
    }
}

impl Exporter {
    /// Its option as typed: `--json`.
    pub fn option(&self) -> String {
        format!("--{}", self.flag)
    }

    /// The document it makes of `run`; an error for one that writes files in a directory.
    pub fn bytes(&self, run: &RunResult) -> Result<Vec<u8>> {
        match self.writes {
            Writes::Bytes(f) => f(run),
            Writes::Files(_) => anyhow::bail!("{} writes files in a directory", self.option()),
        }
    }
}

/// An exporter the command line names, with the FILE or DIR it writes to.
#[derive(Clone, Debug)]
pub struct Output {
    pub exporter: &'static Exporter,
    pub path: PathBuf,
}

/// The fixture run (`tests/fixtures/run.json`: its host, policy and targets) with `trials`
/// in place of its own.
#[cfg(test)]
pub(crate) fn fixture_with(trials: Vec<crate::result::Trial>) -> crate::result::RunResult {
    let text = include_str!("../../tests/fixtures/run.json");
    let mut r: crate::result::RunResult = serde_json::from_str(text).unwrap();
    r.trials = trials;
    r
}

#[cfg(test)]
mod tests {
    use super::{exporters, Writes};

    #[test]
    fn exporters_have_one_flag_each_and_write_what_their_commands_take() {
        let mut flags: Vec<&str> = exporters().iter().map(|e| e.flag).collect();
        flags.sort_unstable();
        flags.dedup();
        assert_eq!(flags.len(), exporters().len(), "a flag is registered twice");
        for e in exporters() {
            let offered = e.export.is_some() || e.report.is_some() || e.run.is_some();
            assert!(offered, "--{} is offered nowhere", e.flag);
            let bytes = matches!(e.writes, Writes::Bytes(_));
            assert!(
                bytes || (e.export.is_none() && e.run.is_none()),
                "--{} writes a directory: only `report` can take it",
                e.flag
            );
            for help in [e.export, e.report, e.run.as_ref().map(|r| r.help)]
                .into_iter()
                .flatten()
            {
                assert!(
                    !help.ends_with('.'),
                    "--{}: clap shows help without its full stop",
                    e.flag
                );
            }
        }
    }
}
