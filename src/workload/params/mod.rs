//! Workload parameters: declared once per workload (name, kind, default, unit, help), parsed
//! from `name:key=value,...`, validated, and listed by `fsarena list`.

use crate::error::usage;
use crate::size::{format_size, format_size_exact, parse_size};
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
    /// Block sizes (`4KiB`), a range (`4KiB-64KiB`) or a weighted list of sizes and ranges
    /// (`4KiB:60,64KiB:40`); like a [`ParamKind::CountList`], items after the first have no
    /// `=` of their own.
    SizeMix,
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

/// A [`ParamSpec`], positionally: the workloads' parameter tables read as tables.
pub const fn param(
    name: &'static str,
    kind: ParamKind,
    default: &'static str,
    unit: &'static str,
    help: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind,
        default,
        unit,
        help,
    }
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
    SizeMix(Vec<SizeWeight>),
    /// Not given and without a fixed default.
    Derived,
}

/// One item of a [`ParamKind::SizeMix`]: sizes from `lo` to `hi` bytes (equal for a single
/// size), chosen with relative weight `weight`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeWeight {
    pub lo: u64,
    pub hi: u64,
    pub weight: u64,
}

/// Parses `4KiB`, `4KiB-64KiB` or `4KiB:60,64KiB-1MiB:40` (weights default to 1).
pub fn parse_size_mix(text: &str) -> Result<Vec<SizeWeight>, String> {
    let mut out = Vec::new();
    for item in text.split(',') {
        let (sizes, weight) = match item.split_once(':') {
            Some((s, w)) => (
                s,
                w.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|w| *w <= MAX_COUNT)
                    .ok_or_else(|| {
                        format!("weight '{}' is not a whole number up to 10^12", echo(w))
                    })?,
            ),
            None => (item, 1),
        };
        let (lo, hi) = match sizes.split_once('-') {
            Some((a, b)) => (parse_bytes(a)?, parse_bytes(b)?),
            None => {
                let s = parse_bytes(sizes)?;
                (s, s)
            }
        };
        if lo == 0 || hi < lo {
            return Err(format!(
                "'{}': sizes must be > 0 and a range low-high",
                echo(item)
            ));
        }
        if weight == 0 {
            return Err(format!("'{}': a weight must be at least 1", echo(item)));
        }
        out.push(SizeWeight { lo, hi, weight });
    }
    // Weights are summed to draw from; 10^12 each, up to 2^64 items would still overflow.
    out.iter()
        .try_fold(0u64, |sum, w| sum.checked_add(w.weight))
        .ok_or("the weights add up to more than 2^64")?;
    Ok(out)
}

fn format_size_mix(mix: &[SizeWeight]) -> String {
    let one = |w: &SizeWeight| {
        let sizes = if w.lo == w.hi {
            format_size_exact(w.lo)
        } else {
            format!("{}-{}", format_size_exact(w.lo), format_size_exact(w.hi))
        };
        if mix.len() == 1 {
            sizes
        } else {
            format!("{sizes}:{}", w.weight)
        }
    };
    mix.iter().map(one).collect::<Vec<_>>().join(",")
}

/// A workload's resolved parameters.
#[derive(Clone, Debug, Default)]
pub struct Params {
    values: BTreeMap<&'static str, Value>,
    /// The parameters the user gave (the rest are defaults).
    given: std::collections::BTreeSet<&'static str>,
}

/// The longest duration a parameter in seconds may give: 30 days. Longer cannot be a
/// benchmark anyone waits for, and `Duration::from_secs_f64` panics above ~1.8e19 s.
pub const MAX_SECONDS: f64 = 30.0 * 86_400.0;
/// The largest count a parameter may give: 10^12 operations, files or cycles would take
/// 11.6 days at a million a second; 2^64−1 would never end (and overflows sums).
pub const MAX_COUNT: u64 = 1_000_000_000_000;
/// The largest size a parameter may give: 1 PiB, more than any target fsarena makes; sizes
/// near 2^64 bytes overflow every sum made of them.
pub const MAX_BYTES: u64 = 1 << 50;

pub use crate::error::echo;

fn parse_count(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n <= MAX_COUNT => Ok(n),
        Ok(_) => Err(format!(
            "'{}' is too large: give at most {MAX_COUNT} (10^12)",
            echo(text)
        )),
        Err(_) => Err(format!("'{}' is not a whole number", echo(text))),
    }
}

fn parse_bytes(text: &str) -> Result<u64, String> {
    let b = parse_size(text).map_err(|e| echo(&e))?;
    if b > MAX_BYTES {
        return Err(format!(
            "'{}' is too large: give at most {} ({MAX_BYTES} bytes)",
            echo(text),
            format_size(MAX_BYTES)
        ));
    }
    Ok(b)
}

fn parse_float(spec: &ParamSpec, text: &str) -> Result<f64, String> {
    let (num, scale) = match spec.unit {
        "s" => split_time_unit(text.trim()),
        _ => (text.trim(), 1.0),
    };
    let x = match num.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => x * scale,
        _ if spec.unit == "s" => {
            return Err(format!(
                "'{}' is not a time: give seconds, or a number with us, ms, s, m, h or d \
                 (as fio: 500ms, 5s, 2m)",
                echo(text)
            ))
        }
        _ => return Err(format!("'{}' is not a non-negative number", echo(text))),
    };
    if spec.unit == "s" && x > MAX_SECONDS {
        return Err(format!(
            "'{}' s is too long: give 0 to {MAX_SECONDS} s (30 days)",
            echo(text)
        ));
    }
    Ok(x)
}

/// A time's number and the seconds its unit stands for, as fio writes times (`500ms`,
/// `5s`, `2m`, `1h`; a bare number is seconds).
fn split_time_unit(t: &str) -> (&str, f64) {
    for (unit, scale) in [
        ("us", 1e-6),
        ("ms", 1e-3),
        ("min", 60.0),
        ("s", 1.0),
        ("m", 60.0),
        ("h", 3600.0),
        ("d", 86400.0),
    ] {
        if let Some(num) = t.strip_suffix(unit) {
            return (num.trim_end(), scale);
        }
    }
    (t, 1.0)
}

fn parse_value(spec: &ParamSpec, workload: &str, text: &str) -> Result<Value> {
    let bad = |why: String| usage(format!("{workload}: bad value for '{}': {why}", spec.name));
    Ok(match spec.kind {
        ParamKind::Size => Value::Bytes(parse_bytes(text).map_err(bad)?),
        ParamKind::Count => Value::Count(parse_count(text).map_err(bad)?),
        ParamKind::Choice(list) => {
            if !list.contains(&text) {
                return Err(bad(format!(
                    "'{}' is not one of: {}",
                    echo(text),
                    list.join(", ")
                )));
            }
            Value::Choice(text.to_string())
        }
        ParamKind::Float => Value::Float(parse_float(spec, text).map_err(bad)?),
        ParamKind::Text => {
            if text.contains('\0') {
                return Err(bad(
                    "a NUL character cannot be passed to a command or a path".to_string(),
                ));
            }
            Value::Text(text.to_string())
        }
        ParamKind::CountList => Value::CountList(
            text.split(',')
                .map(parse_count)
                .collect::<Result<_, _>>()
                .map_err(|e| bad(format!("in the list '{}': {e}", echo(text))))?,
        ),
        ParamKind::SizeMix => Value::SizeMix(parse_size_mix(text).map_err(bad)?),
        ParamKind::Bool => match text {
            "true" | "yes" | "1" => Value::Bool(true),
            "false" | "no" | "0" => Value::Bool(false),
            _ => return Err(bad(format!("'{}' is not true or false", echo(text)))),
        },
    })
}

/// One `key=value` item of a parameter list, or a bare item without `=` (the later items
/// of a [`ParamKind::CountList`]).
#[derive(Debug, PartialEq)]
enum Item {
    Pair(String, String),
    Bare(String),
}

/// Splits `key=value,...` into items. A comma inside single or double quotes does not end
/// a value; a value that is one quoted string as a whole (`run='make -j2, again'`) loses
/// its quotes (`"…"` also takes `\"` and `\\` escapes), any other value is kept as
/// written, quotes included (`run=echo 'a,b'`), so shell commands pass through unchanged.
fn split_items(workload: &str, text: &str) -> Result<Vec<Item>> {
    let mut items = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let end = item_end(rest).ok_or_else(|| {
            usage(format!(
                "{workload}: unterminated quote in '{}' (close it, e.g. run='make -j2')",
                echo(rest.trim())
            ))
        })?;
        let item = rest[..end].trim();
        rest = rest.get(end + 1..).unwrap_or("");
        if item.is_empty() {
            continue;
        }
        items.push(match item.split_once('=') {
            Some((k, v)) => Pair(k.trim().to_string(), unquote(v.trim())),
            None => Bare(item.to_string()),
        });
    }
    Ok(items)
}
use Item::{Bare, Pair};

/// The byte index of the comma that ends the first item of `s` (or `s.len()`), skipping
/// commas inside quotes; `None` when a quote is left open.
fn item_end(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match quote {
            Some('"') if escaped => escaped = false,
            Some('"') if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == ',' => return Some(i),
            None => {}
        }
    }
    quote.is_none().then_some(s.len())
}

/// `'…'` → `…`, `"…"` → `…` with `\"` and `\\` unescaped, when the quoted string is the
/// whole value; anything else unchanged.
fn unquote(v: &str) -> String {
    let mut chars = v.chars();
    let Some(q @ ('\'' | '"')) = chars.next() else {
        return v.to_string();
    };
    let mut out = String::new();
    let mut escaped = false;
    for (i, c) in v.char_indices().skip(1) {
        if escaped {
            if c != '"' && c != '\\' {
                out.push('\\');
            }
            out.push(c);
            escaped = false;
        } else if q == '"' && c == '\\' {
            escaped = true;
        } else if c == q {
            // The closing quote: the value was one quoted string only if nothing follows.
            return if i + 1 == v.len() { out } else { v.to_string() };
        } else {
            out.push(c);
        }
    }
    v.to_string()
}

/// Keeps the items of a [`ParamKind::CountList`] value (`files=1,10,100`) together with
/// their key.
fn join_list_items(specs: &[ParamSpec], items: Vec<Item>) -> Vec<Item> {
    let mut out: Vec<Item> = Vec::new();
    let mut in_list = false;
    for item in items {
        match (item, out.last_mut()) {
            (Bare(x), Some(Pair(_, v))) if in_list => {
                v.push(',');
                v.push_str(&x);
            }
            (item, _) => {
                in_list = matches!(&item, Pair(k, _) if specs
                    .iter()
                    .any(|s| s.name == k
                        && matches!(s.kind, ParamKind::CountList | ParamKind::SizeMix)));
                out.push(item);
            }
        }
    }
    out
}

/// `text` (`key=value,...`) with the scalar parameter `key` set to `value`: the other
/// items kept as written, `key`'s own item dropped and `key=value` added at the end.
/// `None` when a quote is left open.
pub fn with_value(text: &str, key: &str, value: &str) -> Option<String> {
    let mut kept = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let end = item_end(rest)?;
        let item = rest[..end].trim();
        rest = rest.get(end + 1..).unwrap_or("");
        let own = item.split_once('=').is_some_and(|(k, _)| k.trim() == key);
        if !item.is_empty() && !own {
            kept.push(item.to_string());
        }
    }
    kept.push(format!("{key}={value}"));
    Some(kept.join(","))
}

impl Params {
    /// Parses `key=value,...` against `specs`; unknown keys and bad values are usage errors
    /// naming the valid choices.
    pub fn parse(workload: &str, specs: &[ParamSpec], text: &str) -> Result<Self> {
        let mut values = BTreeMap::new();
        let mut given = std::collections::HashSet::new();
        for spec in specs {
            let v = if spec.default.is_empty() && !matches!(spec.kind, ParamKind::Text) {
                Value::Derived
            } else {
                parse_value(spec, workload, spec.default)?
            };
            values.insert(spec.name, v);
        }
        for item in join_list_items(specs, split_items(workload, text)?) {
            let (key, val) = match item {
                Pair(k, v) => (k, v),
                Bare(item) => {
                    return Err(usage(format!(
                        "{workload}: '{}' is not key=value (e.g. {workload}:{}=...; \
                         quote a value that contains commas: key='a,b')",
                        echo(&item),
                        specs.first().map_or("size", |s| s.name)
                    )))
                }
            };
            let spec = specs.iter().find(|s| s.name == key).ok_or_else(|| {
                let names: Vec<_> = specs.iter().map(|s| s.name).collect();
                usage(format!(
                    "{workload}: unknown parameter '{}'{}; valid: {}",
                    echo(&key),
                    crate::error::did_you_mean(&key, names.iter().copied()),
                    names.join(", ")
                ))
            })?;
            if !given.insert(spec.name) {
                return Err(usage(format!(
                    "{workload}: parameter '{key}' is given twice; give it once"
                )));
            }
            values.insert(spec.name, parse_value(spec, workload, &val)?);
        }
        let given = given.into_iter().collect();
        Ok(Self { values, given })
    }

    /// Whether the user gave parameter `name` (not its default).
    pub fn given(&self, name: &str) -> bool {
        self.given.contains(name)
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

    /// A size-mix parameter (empty when derived and not given).
    pub fn size_mix(&self, name: &str) -> &[SizeWeight] {
        match self.get(name) {
            Value::SizeMix(v) => v,
            _ => &[],
        }
    }

    /// A boolean parameter.
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Value::Bool(true))
    }

    /// All values as text, for recording with the results: secrets hidden
    /// ([`crate::secret::redact_param`]), so never use it to rebuild a workload.
    pub fn to_text_map(&self) -> BTreeMap<String, String> {
        self.values
            .iter()
            .map(|(k, v)| {
                let text = match v {
                    Value::Bytes(b) => format_size_exact(*b),
                    Value::Count(n) => n.to_string(),
                    Value::Choice(c) => c.clone(),
                    Value::Bool(b) => b.to_string(),
                    Value::Float(x) => x.to_string(),
                    Value::Text(t) => t.clone(),
                    Value::CountList(v) => {
                        v.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
                    }
                    Value::SizeMix(v) => format_size_mix(v),
                    Value::Derived => "derived".to_string(),
                };
                (k.to_string(), crate::secret::redact_param(k, &text))
            })
            .collect()
    }

    /// Overrides a value (used by workloads that resolve derived defaults).
    pub fn set(&mut self, name: &'static str, v: Value) {
        self.values.insert(name, v);
    }
}

#[cfg(test)]
mod tests;
