//! Workload parameters: declared once per workload (name, kind, default, unit, help), parsed
//! from `name:key=value,...`, validated, and listed by `fsarena list`.

use crate::error::usage;
use crate::size::{format_size, parse_size};
use anyhow::Result;
use std::collections::BTreeMap;

/// What values a parameter takes.
#[derive(Clone, Copy, Debug)]
pub enum ParamKind {
    /// Bytes, with units (`8KiB`, `1G`).
    Size,
    /// A non-negative whole number.
    Count,
    /// One of a fixed list.
    Choice(&'static [&'static str]),
    /// `true` or `false`.
    Bool,
    /// A non-negative decimal number (`0.05`).
    Float,
    /// Free text, such as a path; an empty default means "not given".
    Text,
    /// Whole numbers separated by commas (`files=1,10,100`): the items after the first
    /// have no `=` of their own.
    CountList,
}

/// The declaration of one parameter.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    /// Default as text; an empty default means "derived" (explained in `help`).
    pub default: &'static str,
    pub unit: &'static str,
    pub help: &'static str,
}

/// A parameter value after validation.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bytes(u64),
    Count(u64),
    Choice(String),
    Bool(bool),
    Float(f64),
    Text(String),
    CountList(Vec<u64>),
    /// Not given and without a fixed default.
    Derived,
}

/// A workload's resolved parameters.
#[derive(Clone, Debug, Default)]
pub struct Params {
    values: BTreeMap<&'static str, Value>,
}

fn parse_value(spec: &ParamSpec, workload: &str, text: &str) -> Result<Value> {
    let bad = |why: String| usage(format!("{workload}: bad value for '{}': {why}", spec.name));
    Ok(match spec.kind {
        ParamKind::Size => Value::Bytes(parse_size(text).map_err(bad)?),
        ParamKind::Count => Value::Count(
            text.trim()
                .parse::<u64>()
                .map_err(|_| bad(format!("'{text}' is not a whole number")))?,
        ),
        ParamKind::Choice(list) => {
            if !list.contains(&text) {
                return Err(bad(format!("'{text}' is not one of: {}", list.join(", "))));
            }
            Value::Choice(text.to_string())
        }
        ParamKind::Float => match text.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Value::Float(x),
            _ => return Err(bad(format!("'{text}' is not a non-negative number"))),
        },
        ParamKind::Text => Value::Text(text.to_string()),
        ParamKind::CountList => Value::CountList(
            text.split(',')
                .map(|x| x.trim().parse::<u64>())
                .collect::<Result<_, _>>()
                .map_err(|_| bad(format!("'{text}' is not a list of whole numbers")))?,
        ),
        ParamKind::Bool => match text {
            "true" | "yes" | "1" => Value::Bool(true),
            "false" | "no" | "0" => Value::Bool(false),
            _ => return Err(bad(format!("'{text}' is not true or false"))),
        },
    })
}

/// Splits `key=value,...` at commas, keeping the items of a [`ParamKind::CountList`] value
/// (`files=1,10,100`) together with their key.
fn join_list_items(specs: &[ParamSpec], text: &str) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    let mut in_list = false;
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.split_once('=') {
            None if in_list => {
                let last = items.last_mut().expect("a list follows its key");
                last.push(',');
                last.push_str(item);
            }
            _ => {
                in_list = item.split_once('=').is_some_and(|(k, _)| {
                    specs
                        .iter()
                        .any(|s| s.name == k.trim() && matches!(s.kind, ParamKind::CountList))
                });
                items.push(item.to_string());
            }
        }
    }
    items
}

impl Params {
    /// Parses `key=value,...` against `specs`; unknown keys and bad values are usage errors
    /// naming the valid choices.
    pub fn parse(workload: &str, specs: &[ParamSpec], text: &str) -> Result<Self> {
        let mut values = BTreeMap::new();
        for spec in specs {
            let v = if spec.default.is_empty() && !matches!(spec.kind, ParamKind::Text) {
                Value::Derived
            } else {
                parse_value(spec, workload, spec.default)?
            };
            values.insert(spec.name, v);
        }
        for item in join_list_items(specs, text) {
            let item = item.as_str();
            let (key, val) = item.split_once('=').ok_or_else(|| {
                usage(format!(
                    "{workload}: '{item}' is not key=value (e.g. {workload}:{}=...)",
                    specs.first().map_or("size", |s| s.name)
                ))
            })?;
            let spec = specs.iter().find(|s| s.name == key.trim()).ok_or_else(|| {
                let names: Vec<_> = specs.iter().map(|s| s.name).collect();
                usage(format!(
                    "{workload}: unknown parameter '{key}'; valid: {}",
                    names.join(", ")
                ))
            })?;
            values.insert(spec.name, parse_value(spec, workload, val.trim())?);
        }
        Ok(Self { values })
    }

    fn get(&self, name: &str) -> &Value {
        self.values
            .get(name)
            .unwrap_or_else(|| panic!("parameter '{name}' is not declared"))
    }

    /// A size parameter in bytes; `None` when derived and not given.
    pub fn bytes(&self, name: &str) -> Option<u64> {
        match self.get(name) {
            Value::Bytes(b) => Some(*b),
            _ => None,
        }
    }

    /// A count parameter; `None` when derived and not given.
    pub fn count(&self, name: &str) -> Option<u64> {
        match self.get(name) {
            Value::Count(n) => Some(*n),
            _ => None,
        }
    }

    /// A choice parameter.
    pub fn choice(&self, name: &str) -> &str {
        match self.get(name) {
            Value::Choice(c) => c,
            v => panic!("parameter '{name}' is not a choice: {v:?}"),
        }
    }

    /// A decimal parameter; `None` when derived and not given.
    pub fn float(&self, name: &str) -> Option<f64> {
        match self.get(name) {
            Value::Float(x) => Some(*x),
            _ => None,
        }
    }

    /// A text parameter; `None` when not given (or given empty).
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.get(name) {
            Value::Text(t) if !t.is_empty() => Some(t),
            _ => None,
        }
    }

    /// A list parameter (empty when derived and not given).
    pub fn counts(&self, name: &str) -> &[u64] {
        match self.get(name) {
            Value::CountList(v) => v,
            _ => &[],
        }
    }

    /// A boolean parameter.
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Value::Bool(true))
    }

    /// All values as text, for recording with the results.
    pub fn to_text_map(&self) -> BTreeMap<String, String> {
        self.values
            .iter()
            .map(|(k, v)| {
                let text = match v {
                    Value::Bytes(b) => format_size(*b),
                    Value::Count(n) => n.to_string(),
                    Value::Choice(c) => c.clone(),
                    Value::Bool(b) => b.to_string(),
                    Value::Float(x) => x.to_string(),
                    Value::Text(t) => t.clone(),
                    Value::CountList(v) => {
                        v.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
                    }
                    Value::Derived => "derived".to_string(),
                };
                (k.to_string(), text)
            })
            .collect()
    }

    /// Overrides a value (used by workloads that resolve derived defaults).
    pub fn set(&mut self, name: &'static str, v: Value) {
        self.values.insert(name, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec {
            name: "size",
            kind: ParamKind::Size,
            default: "1GiB",
            unit: "bytes",
            help: "",
        },
        ParamSpec {
            name: "seeks",
            kind: ParamKind::Count,
            default: "8192",
            unit: "",
            help: "",
        },
        ParamSpec {
            name: "mode",
            kind: ParamKind::Choice(&["stdio", "syscall"]),
            default: "stdio",
            unit: "",
            help: "",
        },
        ParamSpec {
            name: "char_size",
            kind: ParamKind::Size,
            default: "",
            unit: "bytes",
            help: "",
        },
        ParamSpec {
            name: "verify",
            kind: ParamKind::Bool,
            default: "false",
            unit: "",
            help: "",
        },
    ];

    #[test]
    fn defaults_and_overrides() {
        let p = Params::parse("bonnie", SPECS, "size=512MiB, mode=syscall,verify=yes").unwrap();
        assert_eq!(p.bytes("size"), Some(512 << 20));
        assert_eq!(p.count("seeks"), Some(8192));
        assert_eq!(p.choice("mode"), "syscall");
        assert_eq!(p.bytes("char_size"), None);
        assert!(p.flag("verify"));
        assert_eq!(p.to_text_map()["size"], "512MiB");
    }

    #[test]
    fn floats_texts_and_lists() {
        const MORE: &[ParamSpec] = &[
            ParamSpec {
                name: "files",
                kind: ParamKind::CountList,
                default: "1,10,100",
                unit: "MiB",
                help: "",
            },
            ParamSpec {
                name: "scale",
                kind: ParamKind::Float,
                default: "1.0",
                unit: "",
                help: "",
            },
            ParamSpec {
                name: "archive",
                kind: ParamKind::Text,
                default: "",
                unit: "path",
                help: "",
            },
        ];
        let p = Params::parse("w", MORE, "").unwrap();
        assert_eq!(p.counts("files"), &[1, 10, 100]);
        assert_eq!((p.float("scale"), p.text("archive")), (Some(1.0), None));
        let p = Params::parse("w", MORE, "files=5,6,7,scale=0.25,archive=/a b.tar").unwrap();
        assert_eq!(p.counts("files"), &[5, 6, 7]);
        assert_eq!(p.float("scale"), Some(0.25));
        assert_eq!(p.text("archive"), Some("/a b.tar"));
        assert_eq!(p.to_text_map()["files"], "5,6,7");
        let p = Params::parse("w", MORE, "scale=2,files=9").unwrap();
        assert_eq!(p.counts("files"), &[9]);
        for bad in ["scale=-1", "scale=x", "files=1,x", "scale=1,2"] {
            assert!(Params::parse("w", MORE, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn errors_name_the_valid_choices() {
        let e = Params::parse("bonnie", SPECS, "sise=1G")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown parameter 'sise'") && e.contains("size, seeks"),
            "{e}"
        );
        let e = Params::parse("bonnie", SPECS, "mode=fast")
            .unwrap_err()
            .to_string();
        assert!(e.contains("stdio, syscall"), "{e}");
        let e = Params::parse("bonnie", SPECS, "seeks=many")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a whole number"), "{e}");
        assert!(Params::parse("bonnie", SPECS, "size").is_err());
        let err = Params::parse("bonnie", SPECS, "size=1Q").unwrap_err();
        assert_eq!(crate::error::exit_code(&err), 2);
    }
}
