//! The run's journal: every finished trial also goes, as it finishes, to a file of JSON
//! lines that does not depend on SQLite (`<image-dir>/journal/<run>.jsonl`, fsynced after
//! each line), so that a figure measured is a figure kept when the database fills up, is
//! deleted or turns read-only mid-run. `fsarena import FILE` stores a journal, or a
//! `--json` document, into a database; importing twice changes nothing.
//!
//! Lines: `{"kind":"run",…}` (the run as it started, without trials), one
//! `{"kind":"trial",…}` per finished trial, `{"kind":"end",…}` with the final status. A
//! journal whose trials all reached the database is removed when the run ends; otherwise it
//! stays and the run says where.

use crate::result::{RunResult, Trial};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Line {
    Run {
        run: Box<RunResult>,
    },
    Trial {
        trial: Box<Trial>,
    },
    End {
        status: String,
        finished_at: Option<String>,
    },
}

/// An open journal.
pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
}

impl Journal {
    /// Creates the journal of `run` in `dir` (made 0700 if missing), new, never through a
    /// symlink, 0600, with its first line written and synced.
    pub fn create(dir: &Path, run: &RunResult) -> Result<Journal> {
        // A directory made here is private; one that exists (`--journal-dir DIR`) keeps
        // its mode: it may be anybody's, and the journal file itself is 0600.
        if !dir.is_dir() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            let _ =
                std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o700));
        }
        let mut n = 0;
        let (path, file) = loop {
            let name = match n {
                0 => format!("{}.jsonl", run.run_id),
                _ => format!("{}.{n}.jsonl", run.run_id), // a resumed run's next journal
            };
            let path = dir.join(name);
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)
            {
                Ok(f) => break (path, f),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
            }
        };
        let mut j = Journal { path, file };
        let mut head = run.clone();
        head.trials.clear();
        head.summaries.clear();
        j.line(&Line::Run {
            run: Box::new(head),
        })?;
        for t in &run.trials {
            // A resumed run's kept trials, so that the journal alone is the whole run.
            j.trial(t)?;
        }
        Ok(j)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends a finished trial, synced before it returns.
    pub fn trial(&mut self, t: &Trial) -> Result<()> {
        self.line(&Line::Trial {
            trial: Box::new(t.clone()),
        })
    }

    /// Appends the run's final status.
    pub fn end(&mut self, run: &RunResult) -> Result<()> {
        self.line(&Line::End {
            status: run.status.clone(),
            finished_at: run.finished_at.clone(),
        })
    }

    /// Removes it (every trial reached the database).
    pub fn remove(self) -> Result<()> {
        std::fs::remove_file(&self.path)
            .with_context(|| format!("removing {}", self.path.display()))
    }

    fn line(&mut self, l: &Line) -> Result<()> {
        let mut text = serde_json::to_vec(l)?;
        text.push(b'\n');
        self.file
            .write_all(&text)
            .and_then(|_| self.file.sync_data())
            .with_context(|| format!("writing the journal {}", self.path.display()))
    }
}

/// Reads a journal, or a `--json` document, back into a run.
pub fn read(path: &Path) -> Result<RunResult> {
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if !meta.is_file() {
        bail!("{}: not a regular file", path.display());
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    if serde_json::from_str::<RunResult>(&text).is_ok() {
        return crate::result::parse_document(&text).with_context(|| path.display().to_string());
    }
    let mut run: Option<RunResult> = None;
    for (i, l) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let line: Line = match serde_json::from_str(l) {
            Ok(line) => line,
            // A line cut by a crash mid-write ends the journal; the ones before stand.
            Err(_) if i + 1 == text.lines().count() => break,
            Err(e) => bail!("{}:{}: not a journal line: {e}", path.display(), i + 1),
        };
        match (line, run.as_mut()) {
            (Line::Run { run: r }, None) => run = Some(*r),
            (Line::Trial { trial }, Some(r)) => {
                let t = *trial;
                r.trials
                    .retain(|x| !(x.target == t.target && x.label == t.label && x.rep == t.rep));
                r.trials.push(t);
            }
            (
                Line::End {
                    status,
                    finished_at,
                },
                Some(r),
            ) => {
                r.status = status;
                r.finished_at = finished_at;
            }
            _ => bail!(
                "{}:{}: not a journal (its first line must be the run)",
                path.display(),
                i + 1
            ),
        }
    }
    let mut run = run.with_context(|| {
        format!(
            "{}: neither a journal nor a --json document of fsarena",
            path.display()
        )
    })?;
    if run.status == "running" {
        // The journal of a run that never wrote its end: it did not finish.
        run.status = "interrupted".into();
    }
    run.summaries = crate::stats::summarize(&run.trials, crate::workload::figures_of);
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_with(trials: usize) -> RunResult {
        let mut r = crate::report::fixture_with(Vec::new());
        let base = serde_json::from_str::<RunResult>(include_str!("../tests/fixtures/run.json"))
            .unwrap()
            .trials;
        r.trials = base.into_iter().take(trials).collect();
        r.status = "running".into();
        r
    }

    #[test]
    fn a_journal_reads_back_as_the_run_whatever_came_after_the_crash() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_with(3);
        let mut start = run.clone();
        start.trials.clear();
        let mut j = Journal::create(dir.path(), &start).unwrap();
        for t in &run.trials {
            j.trial(t).unwrap();
        }
        let path = j.path().to_path_buf();
        // Killed before the end line, the last line half written.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{\"kind\":\"trial\",\"tri").unwrap();
        let back = read(&path).unwrap();
        assert_eq!(back.trials.len(), 3);
        assert_eq!(back.status, "interrupted");
        assert_eq!(back.run_id, run.run_id);
        assert!(!back.summaries.is_empty());
        // A second journal of the same run (resumed) gets its own file.
        let j2 = Journal::create(dir.path(), &start).unwrap();
        assert_ne!(j2.path(), path);
    }

    #[test]
    fn an_existing_directory_keeps_its_mode_and_a_new_one_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), PermissionsExt::from_mode(0o1777)).unwrap();
        let run = run_with(0);
        let j = Journal::create(dir.path(), &run).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(dir.path()), 0o1777, "a given directory was chmodded");
        assert_eq!(mode(j.path()), 0o600);
        let new = dir.path().join("new");
        Journal::create(&new, &run).unwrap();
        assert_eq!(mode(&new), 0o700);
    }

    #[test]
    fn a_json_document_reads_too_and_garbage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run.json");
        std::fs::write(&p, include_str!("../tests/fixtures/run.json")).unwrap();
        assert!(!read(&p).unwrap().trials.is_empty());
        std::fs::write(&p, "hello\nworld\n").unwrap();
        assert!(read(&p).is_err());
    }
}
