//! fio's keywords and their arithmetic, as fio's `fio_keyword_replace` and `bc_calc` do
//! them (`options.c`): in an option, `$pagesize` (the page size), `$mb_memory` (the
//! machine's memory in MiB, whole) and `$ncpus` (the CPUs configured) are replaced by this
//! machine's values; when one was, and the value holds `+`, `-`, `*` or `/` (and no `'`),
//! fio hands the value to `bc`, whose integer arithmetic (`+ - * / % ^`, parentheses,
//! division rounding toward zero) is done here the same way. So `size=8*$mb_memory` is
//! 8 × the MiB of memory, in bytes, as fio reads it. Arithmetic without a keyword (fio's
//! expressions in parentheses) is not read.

/// The keywords, longest first where one begins another (none does).
pub const WORDS: [&str; 3] = ["$pagesize", "$mb_memory", "$ncpus"];

/// This machine's value of `word` (one of [`WORDS`]), as fio computes it.
pub fn machine(word: &str) -> Option<u64> {
    // SAFETY: sysconf(3) reads system values and has no memory effects.
    let conf = |name| u64::try_from(unsafe { libc::sysconf(name) }).ok();
    match word {
        "$pagesize" => conf(libc::_SC_PAGESIZE),
        "$mb_memory" => Some((conf(libc::_SC_PHYS_PAGES)? * conf(libc::_SC_PAGESIZE)?) >> 20),
        "$ncpus" => conf(libc::_SC_NPROCESSORS_CONF),
        _ => None,
    }
}

/// `line` (`key=value`) with the keywords replaced by `value_of` and, when one was, its
/// value computed as `bc` would; `Err` says why the arithmetic cannot be done.
pub fn replace(line: &str, value_of: &dyn Fn(&str) -> Option<u64>) -> Result<String, String> {
    let mut out = line.to_string();
    let mut replaced = false;
    for w in WORDS {
        if out.contains(w) {
            let v = value_of(w).ok_or_else(|| format!("{w}: not known on this machine"))?;
            out = out.replace(w, &v.to_string());
            replaced = true;
        }
    }
    if !replaced || !out.contains(['+', '-', '*', '/']) || out.contains('\'') {
        return Ok(out);
    }
    let Some((key, value)) = out.split_once('=') else {
        return Ok(out);
    };
    let n = calc(value).map_err(|why| format!("'{value}': {why} (fio hands it to bc)"))?;
    Ok(format!("{key}={n}"))
}

/// `expr` computed as `bc` computes it at scale 0.
pub fn calc(expr: &str) -> Result<i128, String> {
    let tokens: Vec<char> = expr.chars().filter(|c| !c.is_whitespace()).collect();
    let mut p = Parser { t: &tokens, at: 0 };
    let v = p.sum()?;
    match p.t.get(p.at) {
        None => Ok(v),
        Some(c) => Err(format!("'{c}' is not arithmetic bc reads")),
    }
}

struct Parser<'a> {
    t: &'a [char],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.t.get(self.at).copied()
    }

    fn sum(&mut self) -> Result<i128, String> {
        let mut v = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            let r = self.product()?;
            v = if op == '+' {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            }
            .ok_or("too large")?;
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<i128, String> {
        let mut v = self.power()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.at += 1;
            let r = self.power()?;
            if op != '*' && r == 0 {
                return Err("division by zero".into());
            }
            v = match op {
                '*' => v.checked_mul(r).ok_or("too large")?,
                '/' => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }

    /// `^`, right to left, below unary minus (bc's `-2^2` is 4); a negative exponent
    /// gives what `bc` gives at scale 0 (the whole part of 1/bⁿ).
    fn power(&mut self) -> Result<i128, String> {
        let base = self.unary()?;
        if self.peek() != Some('^') {
            return Ok(base);
        }
        self.at += 1;
        let exp = self.power()?;
        if exp < 0 {
            return match base {
                0 => Err("division by zero".into()),
                1 => Ok(1),
                -1 => Ok(if exp % 2 == 0 { 1 } else { -1 }),
                _ => Ok(0),
            };
        }
        let exp = u32::try_from(exp).map_err(|_| "a huge exponent")?;
        base.checked_pow(exp).ok_or_else(|| "too large".into())
    }

    fn unary(&mut self) -> Result<i128, String> {
        if self.peek() == Some('-') {
            self.at += 1;
            return Ok(-self.unary()?);
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<i128, String> {
        match self.peek() {
            Some('(') => {
                self.at += 1;
                let v = self.sum()?;
                if self.peek() != Some(')') {
                    return Err("a '(' without its ')'".into());
                }
                self.at += 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.at;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.at += 1;
                }
                let digits: String = self.t[start..self.at].iter().collect();
                digits.parse().map_err(|_| "too large".into())
            }
            Some(c) => Err(format!("'{c}' is not arithmetic bc reads")),
            None => Err("it ends where a number should be".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(w: &str) -> Option<u64> {
        match w {
            "$pagesize" => Some(4096),
            "$mb_memory" => Some(24105),
            "$ncpus" => Some(2),
            _ => None,
        }
    }

    #[test]
    fn keywords_are_replaced_and_their_arithmetic_done_as_bc_does() {
        // fio 3.33 on this machine: size=8*$mb_memory moved 192,512 bytes (47 blocks of
        // 4 KiB of 192,840).
        assert_eq!(replace("size=8*$mb_memory", &fixed).unwrap(), "size=192840");
        assert_eq!(replace("bs=$pagesize", &fixed).unwrap(), "bs=4096");
        assert_eq!(replace("numjobs=$ncpus*2-1", &fixed).unwrap(), "numjobs=3");
        assert_eq!(
            replace("size=($mb_memory/3)*2", &fixed).unwrap(),
            "size=16070"
        );
        // As bc 1.07 computes them: ^ right to left and below unary minus, division
        // toward zero, a negative exponent at scale 0.
        assert_eq!(calc("2^3^2").unwrap(), 512);
        assert_eq!(calc("-2^2").unwrap(), 4);
        assert_eq!(calc("2^-1").unwrap(), 0);
        assert_eq!(calc("7/2").unwrap(), 3);
        assert_eq!(calc("-7/2").unwrap(), -3);
        assert_eq!(calc("1+2*3%4").unwrap(), 3);
        // No keyword: the value is left as written (the option parser reads it).
        assert_eq!(replace("size=4k-1", &fixed).unwrap(), "size=4k-1");
        // A unit inside the arithmetic: bc cannot read it, and neither does fsarena.
        assert!(replace("size=$mb_memory*1m", &fixed).is_err());
        assert!(replace("size=$mb_memory/0", &fixed).is_err());
    }

    #[test]
    fn this_machine_has_the_keywords() {
        for w in WORDS {
            assert!(machine(w).is_some_and(|v| v > 0), "{w}");
        }
    }
}
