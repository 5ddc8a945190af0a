//! fio's numbers, as its option parser reads them (fio `parse.c`, `get_mult_bytes` and
//! `check_str_time`), with fio's default `kb_base=1024`: `k`/`kb` is 1024 and — fio's
//! own inversion — `kib` is 1000; the suffixes are case-insensitive; `%` marks a share;
//! times take `us`, `ms`, `s`, `m` (minutes), `h` and `d`, and a bare number is seconds.
//! Kept apart from [`crate::size`], whose `KiB` is 1024 and `KB` 1000, because a job file
//! means what fio reads in it.

/// A number fio reads for a size: bytes, or a percentage (`10%`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    Bytes(u64),
    Percent(u64),
}

/// Parses a size or count as fio does with `kb_base=1024`: `4k` and `4kb` are 4096,
/// `4kib` is 4000, `1m` 2^20, `1g` 2^30, `1t` 2^40, `1p` 2^50, `10%` a percentage.
pub fn amount(text: &str) -> Result<Amount, String> {
    let t = text.trim();
    if t.contains(['$', '*', '/', '+', '(']) {
        return Err(format!(
            "'{t}': fio's arithmetic in parentheses (or with no keyword) is not read: give \
             the number, ${{VAR}} from the environment, or $pagesize, $mb_memory, $ncpus \
             with + - * /"
        ));
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!("'{t}' is not a number"));
    }
    let unit = unit.trim().to_ascii_lowercase();
    if unit.starts_with('.') {
        return Err(format!(
            "'{t}': fio reads a fraction here as the whole number before the point \
             (1.5k is 1 byte): give a whole number of bytes"
        ));
    }
    let v: u64 = num.parse().map_err(|_| format!("'{t}' is out of range"))?;
    if unit == "%" {
        return Ok(Amount::Percent(v));
    }
    let (pow, base) = match unit.as_str() {
        "" | "b" => (0, 1024),
        "k" | "kb" => (1, 1024),
        "m" | "mb" => (2, 1024),
        "g" | "gb" => (3, 1024),
        "t" | "tb" => (4, 1024),
        "p" | "pb" => (5, 1024),
        "kib" => (1, 1000),
        "mib" => (2, 1000),
        "gib" => (3, 1000),
        "tib" => (4, 1000),
        "pib" => (5, 1000),
        "z" => return Err(format!("'{t}': fio's z counts zones of a zoned device")),
        _ => {
            return Err(format!(
                "'{t}': unknown unit (fio takes k m g t p, kb … pb)"
            ))
        }
    };
    let mult = (0..pow).try_fold(1u64, |m, _| m.checked_mul(base));
    mult.and_then(|m| v.checked_mul(m))
        .map(Amount::Bytes)
        .ok_or_else(|| format!("'{t}' is out of range"))
}

/// A size in bytes (a percentage refused with `why_no_percent`).
pub fn bytes(text: &str, why_no_percent: &str) -> Result<u64, String> {
    match amount(text)? {
        Amount::Bytes(b) => Ok(b),
        Amount::Percent(_) => Err(format!("'{}': {why_no_percent}", text.trim())),
    }
}

/// A count (`numjobs`, `iodepth`, `fsync`): a whole number, fio's suffixes allowed.
pub fn count(text: &str) -> Result<u64, String> {
    bytes(text, "a percentage is not a count")
}

/// A time in seconds; a bare number is seconds (fio's default unit for `runtime`,
/// `ramp_time`).
pub fn seconds(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: u64 = num
        .parse()
        .map_err(|_| format!("'{t}' is not a whole number of seconds (or 500ms, 2m, 1h)"))?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "s" | "sec" => 1.0,
        "us" | "usec" => 1e-6,
        "ms" | "msec" => 1e-3,
        "m" | "min" => 60.0,
        "h" | "hour" => 3600.0,
        "d" | "day" => 86400.0,
        _ => {
            return Err(format!(
                "'{t}': unknown time unit (fio takes us ms s m h d)"
            ))
        }
    };
    Ok(v as f64 * scale)
}

/// fio's booleans: a bare option is set, else `1`/`0` (and `true`/`false`, `yes`/`no`).
pub fn flag(value: Option<&str>) -> Result<bool, String> {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("1") | Some("true") | Some("yes") | Some("on") => Ok(true),
        Some("0") | Some("false") | Some("no") | Some("off") => Ok(false),
        Some(v) => Err(format!("'{v}' is not 0 or 1")),
    }
}

/// A CPU list as fio's `cpus_allowed` takes it: `0-3,6`.
pub fn cpu_list(text: &str) -> Result<Vec<u64>, String> {
    let mut cpus = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (lo, hi) = item.split_once('-').unwrap_or((item, item));
        let lo: u64 = lo
            .trim()
            .parse()
            .map_err(|_| format!("'{item}' is not a CPU"))?;
        let hi: u64 = hi
            .trim()
            .parse()
            .map_err(|_| format!("'{item}' is not a CPU"))?;
        if hi < lo || hi - lo >= 4096 {
            return Err(format!("'{item}' is not a CPU range"));
        }
        cpus.extend(lo..=hi);
    }
    if cpus.is_empty() || cpus.len() > 4096 {
        return Err(format!("'{text}' names no CPUs"));
    }
    Ok(cpus)
}
