//! The terminal: its width (`$COLUMNS`, else the terminal's, else 80), prose wrapped at
//! spaces to it, and whole lines written to stderr. Below everything that says something
//! on stderr (targets, the plan, MPI ranks) and the reports' tables
//! ([`crate::report::fit`]).
//!
//! The terminal's width is one `TIOCGWINSZ` ioctl, kept by hand rather than the
//! `terminal_size` crate.

/// The width assumed when neither `$COLUMNS` nor the terminal says.
pub const DEFAULT_WIDTH: usize = 80;

/// Narrower than this, a reported width is taken for unknown (the pseudo-terminal mpirun
/// gives its ranks says 0 columns).
const MIN_WIDTH: usize = 20;

/// The width to fit: `$COLUMNS` when set to a number, else the width of the terminal on
/// standard output, else [`DEFAULT_WIDTH`] (output to a file or a pipe).
pub fn width() -> usize {
    let columns = std::env::var("COLUMNS").ok();
    width_from(columns.as_deref(), tty_columns())
}

/// [`width`] for what is drawn on standard error (progress bars, notes): `$COLUMNS`, else
/// the width of the terminal on standard error, else [`DEFAULT_WIDTH`].
pub fn stderr_width() -> usize {
    let columns = std::env::var("COLUMNS").ok();
    width_from(columns.as_deref(), tty_columns_of(2))
}

/// [`width`] from the value of `$COLUMNS` and the terminal's columns.
fn width_from(columns: Option<&str>, tty: Option<usize>) -> usize {
    columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .or(tty)
        .filter(|w| *w >= MIN_WIDTH)
        .unwrap_or(DEFAULT_WIDTH)
}

/// The columns of the terminal on standard output, when it is one.
fn tty_columns() -> Option<usize> {
    tty_columns_of(1)
}

/// The columns of the terminal on descriptor `fd`, when it is one.
fn tty_columns_of(fd: libc::c_int) -> Option<usize> {
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we own; a descriptor that is
    // no terminal makes it fail with ENOTTY and leaves the struct alone.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) };
    (r == 0).then_some(usize::from(ws.ws_col))
}

/// The columns a string takes: every character fsarena prints is one column wide.
pub fn cols(s: &str) -> usize {
    s.chars().count()
}

/// Wraps `line` at spaces to `width` columns, continuation lines indented by `indent`
/// spaces; a word with letters longer than the room (a list of mount options) breaks
/// after its commas, else it is left whole. A no-break space never breaks.
pub fn wrap(line: &str, width: usize, indent: usize) -> String {
    if cols(line) <= width {
        return line.to_string();
    }
    let lead = line.len() - line.trim_start_matches(' ').len();
    let mut out = String::new();
    let mut cur = line[..lead].to_string();
    let mut fresh = true;
    let mut rest = &line[lead..];
    while !rest.is_empty() {
        // The spaces before the next word, then the word.
        let gap = rest.len() - rest.trim_start_matches(' ').len();
        let word_end = rest[gap..].find(' ').map_or(rest.len(), |i| gap + i);
        let (space, word) = (&rest[..gap], &rest[gap..word_end]);
        rest = &rest[word_end..];
        if word.is_empty() {
            break;
        }
        if !fresh && cols(&cur) + cols(space) + cols(word) > width {
            out.push_str(&cur);
            out.push('\n');
            cur = " ".repeat(indent);
            fresh = true;
        }
        if !fresh {
            cur.push_str(space);
        }
        // Words of options, never figures (`1,234,567`).
        if cols(&cur) + cols(word) > width && word.chars().any(char::is_alphabetic) {
            for piece in word.split_inclusive(',') {
                if cols(&cur) + cols(piece) > width && !cur.trim_start().is_empty() {
                    out.push_str(&cur);
                    out.push('\n');
                    cur = " ".repeat(indent);
                }
                cur.push_str(piece);
            }
        } else {
            cur.push_str(word);
        }
        fresh = false;
    }
    out.push_str(&cur);
    out
}

/// [`wrap`] applied to every line of `text` (which keeps its final newline).
pub fn wrap_text(text: &str, width: usize, indent: usize) -> String {
    let mut out: Vec<String> = text.lines().map(|l| wrap(l, width, indent)).collect();
    if text.ends_with('\n') {
        out.push(String::new());
    }
    out.join("\n")
}

/// What a long step outside any phase (aging a filesystem) says about how far it is.
static STATUS: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Says how far a long step outside any phase is (`None` when it ends): a progress display
/// on a terminal shows it in the phase's line until the next phase starts.
pub fn set_status(text: Option<String>) {
    *STATUS.lock().unwrap_or_else(|e| e.into_inner()) = text;
}

/// What [`set_status`] last said.
pub fn status() -> Option<String> {
    STATUS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// [`stderr_line`] for a note a person reads: wrapped at spaces to the terminal's width,
/// continued four columns in, when stderr is a terminal; whole otherwise (logs and
/// scripts get one line per note).
pub fn stderr_note(text: &str) {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        stderr_line(&wrap_text(text, width(), 4));
    } else {
        stderr_line(text);
    }
}

/// Writes `text` and a newline to stderr with one `write` (never one per formatted piece),
/// so that lines of several processes sharing the stream — MPI ranks under mpirun — do not
/// interleave mid-line. Errors are ignored: a closed stderr must not stop a run.
pub fn stderr_line(text: &str) {
    use std::io::Write;
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_comes_from_columns_then_the_terminal_then_80() {
        assert_eq!(width_from(Some("120"), Some(90)), 120);
        assert_eq!(width_from(None, Some(90)), 90);
        assert_eq!(width_from(Some("junk"), Some(100)), 100);
        assert_eq!(width_from(None, None), 80);
        assert_eq!(width_from(None, Some(0)), 80, "mpirun's 0-column terminal");
    }

    #[test]
    fn prose_wraps_at_spaces_with_a_hanging_indent() {
        let w = wrap(
            "  target ext4 (loop): mkfs [-F -q] mount [rw,relatime]",
            24,
            4,
        );
        assert_eq!(
            w,
            "  target ext4 (loop):\n    mkfs [-F -q] mount\n    [rw,relatime]"
        );
        assert_eq!(wrap("a\u{a0}b c", 3, 0), "a\u{a0}b\nc");
        assert_eq!(
            wrap("averyveryverylongword x", 5, 1),
            "averyveryverylongword\n x"
        );
        assert_eq!(
            wrap("  u  cold read: no", 14, 5),
            "  u  cold\n     read: no"
        );
        // Mount options longer than a line break after commas; short ones stay whole.
        assert_eq!(
            wrap("mount [rw,relatime,vers=4.2,rsize=262144,hard] x", 20, 2),
            "mount\n  [rw,relatime,\n  vers=4.2,\n  rsize=262144,hard]\n  x"
        );
        assert_eq!(wrap("1,234,567 x", 5, 0), "1,234,567\nx");
    }
}
