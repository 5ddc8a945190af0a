//! The longest text fsarena takes from a user, in one place: an option string, a name, a
//! workload spec, any string in a plan. Each is far beyond what a real plan or command line
//! holds (the longest mkfs option list in the examples is under 100 bytes), and short
//! enough that nothing downstream (a listing's column width, an argv, a database row) has
//! to cope with megabytes. A hostile plan with a 100 KB mkfs option once panicked
//! `plan check` (issue 43): such text is now refused where it is read, before anything is
//! made, with an error that names the limit.

use crate::error::usage;

/// The most bytes of one option string: `--mkfs-opt`, `--mount-opt`, `--net`, a plan's
/// `mkfs`/`mount` (each value of a matrix axis), and every other string a plan holds.
pub const MAX_OPTION_BYTES: usize = 4096;

/// The most bytes of one workload spec on the command line (`smallfiles:files=…,…`) and
/// of any other single command-line value fsarena reads (`--size`, `--seed`, …).
pub const MAX_ARG_BYTES: usize = 4096;

/// The most bytes of a plan's `description`, the one string meant to be prose.
pub const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;

/// The most bytes of a plan's key (a workload parameter's name): no parameter is named
/// with more than a few dozen.
pub const MAX_KEY_BYTES: usize = 256;

/// `Err` with a message for the user when `text`, given as `what`, is longer than `max`
/// bytes; the text itself is not echoed (it may be the whole problem).
pub fn check_len(what: &str, text: &str, max: usize) -> Result<(), String> {
    if text.len() > max {
        return Err(format!(
            "{what} is {} bytes long; at most {max} bytes are taken (shorten it)",
            text.len()
        ));
    }
    Ok(())
}

/// [`check_len`] for each value of a command-line flag `--flag`, as a usage error.
pub fn check_args<'a>(
    flag: &str,
    values: impl IntoIterator<Item = &'a String>,
) -> anyhow::Result<()> {
    for v in values {
        check_len(&format!("a value of {flag}"), v, MAX_ARG_BYTES).map_err(usage)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_itself_is_taken_and_one_byte_more_is_not() {
        let at = "x".repeat(MAX_OPTION_BYTES);
        assert!(check_len("mkfs", &at, MAX_OPTION_BYTES).is_ok());
        let over = format!("{at}y");
        let e = check_len("mkfs", &over, MAX_OPTION_BYTES).unwrap_err();
        assert!(e.contains(&format!("{}", MAX_OPTION_BYTES + 1)), "{e}");
        assert!(!e.contains(&over));
    }
}
