//! Error classes of fsarena and the exit code each one maps to.
//!
//! The binary maps errors to exit codes so that scripts can tell a typo (2) from a failed
//! benchmark (1) and from an interrupted run (130, like a shell reports SIGINT).

use std::path::PathBuf;

/// Errors the library reports; everything else travels as `anyhow::Error` with context.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user asked for something invalid: nothing was touched.
    #[error("{0}")]
    Usage(String),
    /// The run was interrupted by SIGINT or SIGTERM; teardown has happened.
    #[error("interrupted by signal; everything fsarena created was torn down")]
    Interrupted,
    /// An external command failed; `stderr` is what it printed.
    #[error("command failed: {argv} (exit {status}): {stderr}")]
    Command {
        argv: String,
        status: String,
        stderr: String,
    },
    /// An operation needs root (loop devices, mount, drop_caches).
    #[error("{what} needs root; run fsarena as root, or use --dir PATH on an existing directory")]
    NeedsRoot { what: String },
    /// The filesystem ran out of space during a workload.
    #[error("filesystem full (ENOSPC) under {0}")]
    NoSpace(PathBuf),
}

/// Process exit codes.
pub mod exit {
    /// Success.
    pub const OK: i32 = 0;
    /// A run or a command failed.
    pub const FAILURE: i32 = 1;
    /// Bad command line or plan; nothing was touched.
    pub const USAGE: i32 = 2;
    /// `compare --fail-if-slower`: a regression was found (the comparison itself worked),
    /// told apart from 1, "the benchmark or the database broke", as `cmp` and `diff` do.
    pub const REGRESSION: i32 = 3;
    /// `compare --fail-if-slower`: no regression, but some gated figure could not be
    /// judged (too few repetitions, a zero or NaN, no successful trial on one side, the
    /// target set up differently): a gate must not pass what it did not compare.
    pub const GATE_UNJUDGED: i32 = 4;
    /// `compare --fail-if-slower`: every gated figure judged, no regression, but some
    /// could not have seen a slowdown of the gate's percentage with the repetitions it had
    /// (80% power): the pass would say nothing.
    pub const GATE_CANNOT_SEE: i32 = 5;
    /// Interrupted by SIGINT/SIGTERM, after teardown.
    pub const INTERRUPTED: i32 = 130;
}

/// `text` as echoed in a message: whole up to 200 characters, else cut with its length
/// (`xxx…(100000 bytes)`), so a 100 kB input does not flood the terminal.
pub fn echo(text: &str) -> String {
    const KEEP: usize = 200;
    match text.char_indices().nth(KEEP) {
        None => text.to_string(),
        Some((end, _)) => format!("{}…({} bytes)", &text[..end], text.len()),
    }
}

/// ` (did you mean 'NAME'?)` naming the valid name closest to `typed` (Jaro–Winkler
/// similarity at least 0.8, as cargo and clap judge a typo), or nothing when none is close.
pub fn did_you_mean<'a>(typed: &str, valid: impl IntoIterator<Item = &'a str>) -> String {
    let best = valid
        .into_iter()
        .map(|v| (strsim::jaro_winkler(typed, v), v))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((_, name)) if name != typed => format!(" (did you mean '{name}'?)"),
        _ => String::new(),
    }
}

/// Returns a usage error (exit code 2) wrapped as `anyhow::Error`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    Error::Usage(msg.into()).into()
}

/// The exit code an error should produce.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<Error>() {
            return match e {
                Error::Usage(_) => exit::USAGE,
                Error::Interrupted => exit::INTERRUPTED,
                _ => exit::FAILURE,
            };
        }
    }
    exit::FAILURE
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn a_typo_gets_the_closest_name_and_nonsense_gets_none() {
        let valid = ["smallfiles", "postmark", "bonnie", "bonnie-files"];
        assert_eq!(
            did_you_mean("smalfiles", valid),
            " (did you mean 'smallfiles'?)"
        );
        assert_eq!(did_you_mean("bonie", valid), " (did you mean 'bonnie'?)");
        assert_eq!(did_you_mean("zzzz", valid), "");
        assert_eq!(did_you_mean("", valid), "");
    }
}
