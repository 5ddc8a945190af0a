//! Secrets are never written down: an option or variable whose name says it holds one (a
//! CIFS `password=`, a `PGPASSWORD` for the `command` workload, an `API_KEY`) keeps its
//! value only where it is used — the environment of the one process that needs it — and
//! is replaced by `***` in everything fsarena prints, logs or stores: the command line
//! kept with a run, mount options, workload parameters, labels, error text, `FSARENA_LOG`
//! lines, the database and every export.
//!
//! [`is_secret_name`] says which names hold secrets; [`redact`] and its two variants
//! ([`redact_word`] for one argv word, [`redact_value`] for one parameter value) find
//! `NAME=VALUE` in a text and hide the value. They differ only in what ends a value:
//! free text ends it at a space, `,` or `;`; an argv word (one shell word, spaces and all)
//! at `,` or `;`; a parameter value (`env=A=1,2;B=3`) only at `;`. Inside quotes
//! (`env='PGPASSWORD=a b,c;X=1'`) only `;` and the closing quote end it. A doubled comma
//! (`password=a,,b`, mount.cifs's escape) stays in the value. A `username=USER%PASSWORD`
//! (mount.cifs's shorthand) keeps USER. When unsure, more is hidden, never less. Values
//! fsarena knows to be secrets ([`remember`]) are hidden wherever they appear.

/// What a hidden value is replaced by.
pub const REDACTED: &str = "***";

/// Secret values fsarena was given in this process ([`remember`]): hidden wherever they
/// appear, also without their name (a command that echoes its password into the tail of
/// its log, which the trial's error quotes).
static KNOWN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The shortest value [`remember`] keeps: a shorter one would hide ordinary text.
pub const MIN_KNOWN_CHARS: usize = 4;

/// Notes `value` as a secret, so that every redaction hides it wherever it appears.
pub fn remember(value: &str) {
    if value.chars().count() < MIN_KNOWN_CHARS {
        return;
    }
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if !known.iter().any(|k| k == value) {
        known.push(value.to_string());
        // Longest first, so that a secret containing another is hidden whole.
        known.sort_by_key(|k| std::cmp::Reverse(k.len()));
    }
}

/// Forgets every [`remember`]ed value. For the fuzz entry points ([`crate::fuzzing`]),
/// which parse millions of inputs in one process: each input starts with none known.
#[doc(hidden)]
pub fn forget_all() {
    KNOWN.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// `text` with every [`remember`]ed value replaced by [`REDACTED`] where it stands as a
/// whole token (not inside a longer word or number: a password `1000` must not turn
/// `count=10000` into `count=***0`).
fn hide_known(text: String) -> String {
    let known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    known.iter().fold(text, |t, k| replace_token(&t, k))
}

/// `text` with each occurrence of `word` that no letter, digit or `_` touches on either
/// side replaced by [`REDACTED`].
fn replace_token(text: &str, word: &str) -> String {
    let joins = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = if at > 0 {
            rest[..at].chars().last()
        } else {
            out.chars().last()
        };
        let after = rest[at + word.len()..].chars().next();
        out.push_str(&rest[..at]);
        if joins(before) || joins(after) {
            out.push_str(word);
        } else {
            out.push_str(REDACTED);
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// Whether `name` says it holds a secret: `password`, `pass`, `passwd`, or containing
/// `PASSWORD`, `PASSWD`, `SECRET` or `TOKEN`, or ending in `_KEY` — case-insensitive,
/// leading dashes ignored and `-` read as `_` (`--password`, `api-key`).
pub fn is_secret_name(name: &str) -> bool {
    let n = name
        .trim_start_matches('-')
        .to_ascii_uppercase()
        .replace('-', "_");
    matches!(n.as_str(), "PASSWORD" | "PASS" | "PASSWD")
        || ["PASSWORD", "PASSWD", "SECRET", "TOKEN"]
            .iter()
            .any(|w| n.contains(w))
        || n.ends_with("_KEY")
}

/// Whether `name` is a user name option that may carry a password after a `%`
/// (`username=bench%secret`, as mount.cifs reads it).
pub fn is_user_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("username") || name.eq_ignore_ascii_case("user")
}

/// `text` (a message, a log line, a list of mount options) with the value of every secret
/// `NAME=VALUE` replaced by [`REDACTED`], and a password in `username=USER%PASSWORD`.
pub fn redact(text: &str) -> String {
    redact_in(text, Ends::Text)
}

/// [`redact`] for one word of an argv (spaces belong to the value).
pub fn redact_word(word: &str) -> String {
    redact_in(word, Ends::Word)
}

/// [`redact`] for one parameter's value (only `;` ends a value: `env=A=1,2;B=3`).
pub fn redact_value(value: &str) -> String {
    redact_in(value, Ends::Value)
}

/// A whole argv, each word through [`redact_word`].
pub fn redact_argv<S: AsRef<str>>(argv: &[S]) -> Vec<String> {
    argv.iter().map(|w| redact_word(w.as_ref())).collect()
}

/// A parameter as stored and shown: all of it hidden when its name says it is a secret,
/// else its value through [`redact_value`].
pub fn redact_param(name: &str, value: &str) -> String {
    if is_secret_name(name) && !value.is_empty() {
        REDACTED.to_string()
    } else {
        redact_value(value)
    }
}

/// Where an unquoted value ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ends {
    /// At whitespace, `,`, `;` or a quote.
    Text,
    /// At `,`, `;` or a quote.
    Word,
    /// At `;` only (the whole text reads as if quoted).
    Value,
}

/// A character of a name: `PGPASSWORD`, `api-key`, `--password`.
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn redact_in(text: &str, ends: Ends) -> String {
    hide_known(redact_names(text, ends))
}

/// [`redact_in`] by names only.
fn redact_names(text: &str, ends: Ends) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    // The quote we are inside of; a value is read as quoted from the start.
    let mut quote: Option<char> = (ends == Ends::Value).then_some('\0');
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if is_name_char(c) && (i == 0 || !is_name_char(chars[i - 1])) {
            let start = i;
            while i < chars.len() && is_name_char(chars[i]) {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            out.push_str(&name);
            if chars.get(i) == Some(&'=') && is_secret_name(&name) {
                out.push('=');
                let end = value_end(&chars, i + 1, quote, ends);
                if end > i + 1 {
                    out.push_str(REDACTED);
                }
                i = end;
            } else if chars.get(i) == Some(&'=') && is_user_name(&name) {
                // mount.cifs's `username=USER%PASSWORD`: the part after '%' is hidden.
                let end = value_end(&chars, i + 1, quote, ends);
                let value = &chars[i..end];
                match value.iter().position(|c| *c == '%') {
                    Some(p) => {
                        out.extend(&value[..=p]);
                        out.push_str(REDACTED);
                    }
                    None => out.extend(value),
                }
                i = end;
            }
            continue;
        }
        // In free text a quote opens only where a shell word or value starts (`'A=b c'`,
        // `env='A=b c'`): an apostrophe inside a word (can't) is no quote.
        let opens =
            ends != Ends::Text || i == 0 || chars[i - 1] == '=' || chars[i - 1].is_whitespace();
        if c == '\'' || c == '"' {
            quote = match quote {
                None if opens => Some(c),
                None => None,
                Some(q) if q == c => None,
                inside => inside,
            };
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The index just past the value that starts at `start`.
fn value_end(chars: &[char], start: usize, quote: Option<char>, ends: Ends) -> usize {
    let n = chars.len();
    // A value in quotes of its own: through its closing quote.
    if let Some(&q) = chars.get(start).filter(|c| **c == '\'' || **c == '"') {
        let close = (start + 1..n).find(|&j| chars[j] == q);
        return close.map_or(n, |j| j + 1);
    }
    let mut j = start;
    while j < n {
        let c = chars[j];
        let end = match quote {
            Some(q) => c == ';' || c == '\n' || c == q,
            None => {
                c == ';'
                    || c == '\n'
                    || c == '\''
                    || c == '"'
                    || (c == ',' && chars.get(j + 1) != Some(&','))
                    || (ends == Ends::Text && c.is_whitespace())
            }
        };
        if end {
            return j;
        }
        // A doubled comma is one comma of the value.
        j += if c == ',' { 2 } else { 1 };
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_secrets_are_hidden_as_whole_tokens_only() {
        assert_eq!(
            replace_token("count=10000 bs=1000", "1000"),
            "count=10000 bs=***"
        );
        assert_eq!(replace_token("latest test", "test"), "latest ***");
        assert_eq!(replace_token("echo hunter2; x", "hunter2"), "echo ***; x");
        assert_eq!(replace_token("hunter2hunter2", "hunter2"), "hunter2hunter2");
    }

    #[test]
    fn an_apostrophe_inside_a_word_is_no_quote() {
        assert_eq!(
            redact("can't open it: TOKEN=abc and the rest stays"),
            "can't open it: TOKEN=*** and the rest stays"
        );
        assert_eq!(
            redact("run 'PGPASSWORD=a b' now"),
            "run 'PGPASSWORD=***' now"
        );
    }

    #[test]
    fn secret_names() {
        for yes in [
            "password",
            "PASS",
            "passwd",
            "PGPASSWORD",
            "MY_PASSWORD",
            "mysql_passwd",
            "client_secret",
            "GITHUB_TOKEN",
            "tokens",
            "AWS_SECRET_ACCESS_KEY",
            "api_key",
            "api-key",
            "--password",
        ] {
            assert!(is_secret_name(yes), "{yes}");
        }
        for no in [
            "username",
            "user",
            "pas",
            "passes",
            "key",
            "keys",
            "KEYBOARD",
            "vers",
            "domain",
            "credentials",
            "IdentityFile",
            "bypass",
            "compass",
        ] {
            assert!(!is_secret_name(no), "{no}");
        }
    }

    #[test]
    fn mount_options_and_free_text() {
        assert_eq!(
            redact("username=u,password=hunter2,vers=3.1.1"),
            "username=u,password=***,vers=3.1.1"
        );
        assert_eq!(redact("pass=a,,b,ro"), "pass=***,ro");
        assert_eq!(
            redact("user=bench%se cret,username=x,USERNAME=dom/u%p"),
            "user=bench%*** cret,username=x,USERNAME=dom/u%***"
        );
        assert_eq!(redact("password=,ro"), "password=,ro");
        assert_eq!(
            redact("mount failed: PASSWD=hunter2 mount.cifs //s/x /m"),
            "mount failed: PASSWD=*** mount.cifs //s/x /m"
        );
        assert_eq!(
            redact("export GITHUB_TOKEN=\"a b\"; next"),
            "export GITHUB_TOKEN=***; next"
        );
        assert_eq!(redact("sh -c 'PGPASSWORD=a b c'"), "sh -c 'PGPASSWORD=***'");
        // Names inside longer names, or not followed by '=', are left alone.
        assert_eq!(redact("bypass=1 password: x"), "bypass=1 password: x");
    }

    #[test]
    fn argv_words_and_parameter_values() {
        assert_eq!(
            redact_word("cifs=//srv/share,username=u,password=p w,vers=3"),
            "cifs=//srv/share,username=u,password=***,vers=3"
        );
        assert_eq!(
            redact_word("command:run=true,env='MY_PASSWORD=a,b c;CC=gcc'"),
            "command:run=true,env='MY_PASSWORD=***;CC=gcc'"
        );
        assert_eq!(
            redact_word("command:run=true,env=MY_PASSWORD=hunter2"),
            "command:run=true,env=MY_PASSWORD=***"
        );
        assert_eq!(
            redact_value("MY_PASSWORD=a,b c;CC=gcc"),
            "MY_PASSWORD=***;CC=gcc"
        );
        assert_eq!(redact_param("env", "X=1;API_KEY=k"), "X=1;API_KEY=***");
        assert_eq!(redact_param("token", "abc"), "***");
        assert_eq!(redact_param("run", "make -j2"), "make -j2");
        assert_eq!(
            redact_argv(&["fsarena", "--net", "cifs=//s/x,password=p"]),
            ["fsarena", "--net", "cifs=//s/x,password=***"]
        );
    }

    #[test]
    fn remembered_values_are_hidden_without_their_name() {
        remember("Zq-remembered-1");
        remember("abc");
        assert_eq!(
            redact("tail: got Zq-remembered-1 back; abc stays"),
            "tail: got *** back; abc stays"
        );
        assert_eq!(redact_value("x=Zq-remembered-1"), "x=***");
    }

    #[test]
    fn redacting_twice_changes_nothing_more() {
        for t in ["password=p,ro", "env='A_TOKEN=x y;B=1'", "plain text"] {
            assert_eq!(redact(&redact(t)), redact(t));
            assert_eq!(redact_word(&redact_word(t)), redact_word(t));
        }
    }
}
