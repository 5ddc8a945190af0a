//! The INI layer of a fio job file, read the way fio's `__parse_jobs_ini` reads it:
//! `[section]` headers (every name starting with `global` is a global section), options
//! as `key=value` or a bare `key`, comments from the first `;` or `#` of a line to its
//! end, `include FILE` inside a section (a relative name is tried as given, then beside
//! the including file; included files hold options, no sections), `${VAR}` replaced
//! in an option by the variable's value (by nothing when it is unset, as fio does), then
//! fio's keywords and their arithmetic ([`super::keywords`]).
//! What the options mean is `map`'s business.

use super::{Issue, Loc};
use std::path::{Path, PathBuf};

/// How deep includes may nest (fio has no limit; a file that includes itself would loop).
const MAX_INCLUDE_DEPTH: usize = 8;
/// The most lines read, all files together.
const MAX_LINES: usize = 100_000;

/// Where the reader gets included files and environment variables: the real file system
/// and environment, or a fixed set in tests and fuzzing.
pub trait Source {
    /// The text of `path`, or why it cannot be read.
    fn read(&mut self, path: &Path) -> Result<String, String>;
    /// Whether `path` exists (fio tries an include's name as given first).
    fn exists(&self, path: &Path) -> bool;
    /// An environment variable.
    fn var(&self, name: &str) -> Option<String>;
    /// The value of fio's keyword `word` (`$pagesize`, `$mb_memory`, `$ncpus`): this
    /// machine's unless told otherwise.
    fn keyword(&self, word: &str) -> Option<u64> {
        super::keywords::machine(word)
    }
}

/// One option as written, `${VAR}` expanded.
#[derive(Clone, Debug)]
pub struct Opt {
    pub key: String,
    pub value: Option<String>,
    pub at: Loc,
}

impl Opt {
    /// `key=value` or `key`, as written (expanded), for messages.
    pub fn text(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.key),
            None => self.key.clone(),
        }
    }
}

/// A `[section]` with its options in file order (included ones in place).
#[derive(Clone, Debug)]
pub struct Section {
    pub name: String,
    pub global: bool,
    pub at: Loc,
    pub opts: Vec<Opt>,
}

/// Reads `text` (the file `path`) into sections; syntax problems are all returned.
pub fn read(path: &Path, text: &str, src: &mut dyn Source) -> (Vec<Section>, Vec<Issue>) {
    let mut r = Reader {
        src,
        sections: Vec::new(),
        issues: Vec::new(),
        lines: 0,
    };
    r.file(path, text, 0);
    (r.sections, r.issues)
}

struct Reader<'a> {
    src: &'a mut dyn Source,
    sections: Vec<Section>,
    issues: Vec<Issue>,
    lines: usize,
}

/// A line without its comment and surrounding blanks (fio's `strip_blank_end` cuts at
/// the first `;` and the first `#`).
fn strip(line: &str) -> &str {
    let end = line.find([';', '#']).unwrap_or(line.len());
    line[..end].trim_matches(|c: char| c.is_whitespace() || c.is_control())
}

impl Reader<'_> {
    fn fatal(&mut self, at: Loc, option: &str, why: String) {
        self.issues.push(Issue::fatal(at, option, why));
    }

    fn file(&mut self, path: &Path, text: &str, depth: usize) {
        for (i, raw) in text.lines().enumerate() {
            self.lines += 1;
            let at = Loc {
                file: path.display().to_string(),
                line: i + 1,
            };
            if self.lines > MAX_LINES {
                self.fatal(at, "", format!("more than {MAX_LINES} lines"));
                return;
            }
            let line = strip(raw);
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                if depth > 0 {
                    self.fatal(at, line, "fio takes no sections in an included file".into());
                    continue;
                }
                let name = rest.strip_suffix(']').unwrap_or(rest).trim().to_string();
                if name.is_empty() {
                    self.fatal(at, line, "a section needs a name".into());
                    continue;
                }
                self.sections.push(Section {
                    global: name.starts_with("global"),
                    name,
                    at,
                    opts: Vec::new(),
                });
                continue;
            }
            if self.sections.is_empty() {
                self.fatal(at, line, "an option outside of a [section]".into());
                continue;
            }
            if let Some(name) = line.strip_prefix("include") {
                if name.starts_with(char::is_whitespace) {
                    self.include(path, name.trim(), at, depth);
                    continue;
                }
            }
            let line = self.expand(line);
            let line = match super::keywords::replace(&line, &|w| self.src.keyword(w)) {
                Ok(l) => l,
                Err(why) => {
                    self.fatal(at, &line, why);
                    continue;
                }
            };
            let (key, value) = match line.split_once('=') {
                Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
                None => (line.trim().to_string(), None),
            };
            let opt = Opt { key, value, at };
            self.sections.last_mut().expect("checked").opts.push(opt);
        }
    }

    fn include(&mut self, from: &Path, name: &str, at: Loc, depth: usize) {
        let given = PathBuf::from(name);
        let path = match from.parent() {
            Some(dir) if !self.src.exists(&given) && given.is_relative() => dir.join(&given),
            _ => given,
        };
        let option = format!("include {name}");
        if depth + 1 > MAX_INCLUDE_DEPTH {
            let why = format!("includes nest deeper than {MAX_INCLUDE_DEPTH} (a loop?)");
            return self.fatal(at, &option, why);
        }
        match self.src.read(&path) {
            Ok(text) => self.file(&path, &text, depth + 1),
            Err(e) => self.fatal(at, &option, format!("cannot read {}: {e}", path.display())),
        }
    }

    /// `${VAR}` → the variable's value, or nothing when unset (fio's `option_dup_subs`).
    fn expand(&self, line: &str) -> String {
        let mut out = String::new();
        let mut rest = line;
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            match after.find('}') {
                Some(j) => {
                    let name = &after[..j];
                    let value = (!name.is_empty()).then(|| self.src.var(name)).flatten();
                    out.push_str(&value.unwrap_or_default());
                    rest = &after[j + 1..];
                }
                None => {
                    out.push_str("${");
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// The real file system and environment.
pub struct Real;

impl Source for Real {
    fn read(&mut self, path: &Path) -> Result<String, String> {
        super::read_job_file(path)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}
