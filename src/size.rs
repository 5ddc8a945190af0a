//! Parsing and printing of byte sizes.
//!
//! `K M G T` and `KiB MiB GiB TiB` are powers of 1024 (as `dd`, `fio` and Bonnie users expect);
//! `KB MB GB TB` are powers of 1000 (as disk vendors and our `mb_per_s` figures use).
//! A bare number is bytes; a `B` suffix is accepted.
//!
//! Kept by hand, not the `parse-size` crate: it reads `K` and `KB` alike (both 1000, or
//! both 1024 when configured), where fio and dd users mean 1024 by `K`.

/// Parses a size such as `512MiB`, `4G`, `1.5GB` or `8192` into bytes.
///
/// ```
/// use fsarena::size::parse_size;
/// assert_eq!(parse_size("512MiB"), Ok(512 << 20));
/// assert_eq!(parse_size("4G"), Ok(4 << 30));
/// assert_eq!(parse_size("2MB"), Ok(2_000_000));
/// assert!(parse_size("12XB").is_err());
/// ```
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let text = &crate::error::echo(text);
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "bad size '{text}': expected a number such as 512MiB, 4G or 8192"
        ));
    }
    let mult: u64 = match unit.trim() {
        "" | "B" | "b" => 1,
        "K" | "k" | "KiB" | "kiB" | "Ki" => 1 << 10,
        "M" | "m" | "MiB" | "Mi" => 1 << 20,
        "G" | "g" | "GiB" | "Gi" => 1 << 30,
        "T" | "t" | "TiB" | "Ti" => 1 << 40,
        "KB" | "kB" | "kb" => 1_000,
        "MB" | "mb" => 1_000_000,
        "GB" | "gb" => 1_000_000_000,
        "TB" | "tb" => 1_000_000_000_000,
        other => {
            let other = crate::error::echo(other);
            return Err(format!(
                "bad size '{text}': unknown unit '{other}' (use K M G T or KiB MiB GiB TiB for powers of 1024, KB MB GB TB for powers of 1000)"
            ));
        }
    };
    if num.contains('.') {
        let v: f64 = num.parse().map_err(|_| format!("bad size '{text}'"))?;
        let bytes = v * mult as f64;
        if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
            return Err(format!("bad size '{text}': out of range"));
        }
        Ok(bytes.round() as u64)
    } else {
        let v: u64 = num.parse().map_err(|_| format!("bad size '{text}'"))?;
        v.checked_mul(mult)
            .ok_or_else(|| format!("bad size '{text}': out of range"))
    }
}

/// Formats bytes with a binary unit, exactly when possible: `512MiB`, `4GiB`, `1500B`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, unit) in UNITS {
        if bytes >= unit && bytes % unit == 0 {
            return format!("{}{name}", bytes / unit);
        }
    }
    for (name, unit) in UNITS {
        if bytes >= unit {
            return format!("{:.1}{name}", bytes as f64 / unit as f64);
        }
    }
    format!("{bytes}B")
}

/// `bytes` as text that [`parse_size`] reads back to the same number, for recording: a
/// whole number of TiB, GiB, MiB or KiB when it is one (`4KiB`), otherwise bytes (`4000B`),
/// never the rounded `3.9KiB` of [`format_size`].
pub fn format_size_exact(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    UNITS
        .iter()
        .find(|(_, unit)| bytes >= *unit && bytes % unit == 0)
        .map_or_else(
            || format!("{bytes}B"),
            |(name, unit)| format!("{}{name}", bytes / unit),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn units() {
        assert_eq!(parse_size("8192"), Ok(8192));
        assert_eq!(parse_size("8K"), Ok(8192));
        assert_eq!(parse_size("8KiB"), Ok(8192));
        assert_eq!(parse_size("8KB"), Ok(8000));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2MB"), Ok(2_000_000));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("1TiB"), Ok(1 << 40));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("100B"), Ok(100));
    }

    #[test]
    fn errors() {
        assert!(parse_size("").is_err());
        assert!(parse_size("MiB").is_err());
        assert!(parse_size("12XB").unwrap_err().contains("unknown unit"));
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    proptest! {
        #[test]
        fn format_roundtrips_exact(n in 0u64..1u64 << 50) {
            let s = format_size(n);
            if !s.contains('.') {
                prop_assert_eq!(parse_size(&s), Ok(n));
            }
        }
    }
}
