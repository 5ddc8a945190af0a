//! Reading a TOML plan with locations: every value keeps the byte span it came from, and
//! every error names `FILE:LINE:COLUMN` (1-based, columns in characters) and what would
//! be valid there.

use crate::error::usage;
use std::ops::Range;
use toml_edit::{Item, Key, TableLike, Value};

/// The plan's text and the name errors give it.
pub struct Src {
    pub path: String,
    pub text: String,
}

/// A value with the span of the text it came from.
#[derive(Clone, Debug)]
pub struct At<T> {
    pub v: T,
    pub span: Option<Range<usize>>,
}

impl Src {
    /// `(line, column)`, both 1-based, of byte offset `at`.
    pub fn line_col(&self, at: usize) -> (usize, usize) {
        let at = at.min(self.text.len());
        let before = self.text.get(..at).unwrap_or(&self.text);
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        (line, col)
    }

    /// `FILE:LINE:COL` of a span (`FILE` alone when the span is unknown).
    pub fn place(&self, span: &Option<Range<usize>>) -> String {
        match span {
            Some(r) => {
                let (l, c) = self.line_col(r.start);
                format!("{}:{l}:{c}", self.path)
            }
            None => self.path.clone(),
        }
    }

    /// A usage error (exit code 2) located at `span`.
    pub fn err(&self, span: &Option<Range<usize>>, msg: impl std::fmt::Display) -> anyhow::Error {
        usage(format!("{}: {msg}", self.place(span)))
    }

    /// Refuses keys of `table` not in `valid`, naming the valid ones.
    pub fn only_keys(
        &self,
        table: &dyn TableLike,
        what: &str,
        valid: &[&str],
    ) -> anyhow::Result<()> {
        for (k, _) in table.iter() {
            if !valid.contains(&k) {
                return Err(self.err(
                    &key_span(table, k),
                    format!(
                        "unknown key '{}' in {what}{}; valid: {}",
                        crate::error::echo(k),
                        crate::error::did_you_mean(k, valid.iter().copied()),
                        valid.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A string value, or an error saying a string was expected; a NUL character (which
    /// no path, option or command can hold) is refused, and so is a string longer than
    /// [`crate::limits`] takes.
    pub fn string(&self, item: &Item, key: &str) -> anyhow::Result<At<String>> {
        match item.as_value() {
            Some(Value::String(s)) if s.value().contains('\0') => Err(self.err(
                &s.span(),
                format!("'{key}' holds a NUL character, which no path, option or command can"),
            )),
            Some(Value::String(s)) if self.too_long(key, s.value()).is_some() => {
                let msg = self.too_long(key, s.value()).unwrap_or_default();
                Err(self.err(&s.span(), msg))
            }
            Some(Value::String(s)) => Ok(At {
                v: s.value().clone(),
                span: s.span(),
            }),
            _ => Err(self.err(
                &item.span(),
                format!("'{key}' must be a string, e.g. {key} = \"...\""),
            )),
        }
    }

    /// The error for a string value of `key` longer than [`crate::limits`] takes (a
    /// `description` may be longer than an option).
    pub fn too_long(&self, key: &str, value: &str) -> Option<String> {
        use crate::limits::{check_len, MAX_DESCRIPTION_BYTES, MAX_OPTION_BYTES};
        let max = if key == "description" {
            MAX_DESCRIPTION_BYTES
        } else {
            MAX_OPTION_BYTES
        };
        check_len(&format!("'{}'", crate::error::echo(key)), value, max).err()
    }

    /// A non-negative integer value.
    pub fn uint(&self, item: &Item, key: &str) -> anyhow::Result<At<u64>> {
        match item.as_value() {
            Some(Value::Integer(i)) if *i.value() >= 0 => Ok(At {
                v: *i.value() as u64,
                span: i.span(),
            }),
            _ => Err(self.err(
                &item.span(),
                format!("'{key}' must be a whole number ≥ 0, e.g. {key} = 3"),
            )),
        }
    }

    /// A string, or an array of strings (a matrix axis); `[""]`-like empty strings allowed.
    pub fn strings(&self, item: &Item, key: &str) -> anyhow::Result<Vec<At<String>>> {
        match item.as_value() {
            Some(Value::Array(a)) => {
                let mut out = Vec::new();
                for v in a.iter() {
                    match v {
                        Value::String(s) if s.value().contains('\0') => {
                            return Err(
                                self.err(&s.span(), format!("'{key}' holds a NUL character"))
                            )
                        }
                        Value::String(s) if self.too_long(key, s.value()).is_some() => {
                            let msg = self.too_long(key, s.value()).unwrap_or_default();
                            return Err(self.err(&s.span(), msg));
                        }
                        Value::String(s) => out.push(At {
                            v: s.value().clone(),
                            span: s.span(),
                        }),
                        _ => {
                            return Err(self.err(
                                &v.span(),
                                format!("'{key}' lists strings, e.g. {key} = [\"\", \"...\"]"),
                            ))
                        }
                    }
                }
                if out.is_empty() {
                    return Err(self.err(
                        &a.span(),
                        format!(
                            "'{key}' is an empty list; give at least one value (\"\" for none)"
                        ),
                    ));
                }
                Ok(out)
            }
            _ => Ok(vec![self.string(item, key)?]),
        }
    }

    /// The table (`[x]` or inline `{…}`) in `item`.
    pub fn table<'a>(&self, item: &'a Item, what: &str) -> anyhow::Result<&'a dyn TableLike> {
        item.as_table_like()
            .ok_or_else(|| self.err(&item.span(), format!("{what} must be a table")))
    }
}

/// The span of key `k` in `table`.
pub fn key_span(table: &dyn TableLike, k: &str) -> Option<Range<usize>> {
    table
        .get_key_value(k)
        .and_then(|(key, _): (&Key, _)| key.span())
}

/// The span of a table: its header, else its first key.
pub fn table_span(table: &dyn TableLike) -> Option<Range<usize>> {
    table.iter().next().and_then(|(k, _)| key_span(table, k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_are_one_based_in_characters() {
        let s = Src {
            path: "p.toml".into(),
            text: "a = 1\nbé = 2\n".into(),
        };
        assert_eq!(s.line_col(0), (1, 1));
        assert_eq!(s.line_col(6), (2, 1));
        assert_eq!(s.line_col("a = 1\nbé".len()), (2, 3));
        assert_eq!(s.place(&Some(4..5)), "p.toml:1:5");
    }
}
