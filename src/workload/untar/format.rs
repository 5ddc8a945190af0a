//! The tar format as `untar` reads and writes it: 512-byte ustar headers with their
//! checksums, GNU long names (`L`, `K`) and base-256 numbers, pax records (`x`); a reader
//! of members ([`Members`]) shared by the validation and the extraction, and the header
//! writer of the generated stream.
//!
//! Kept rather than the `tar` crate (0.4.46, evaluated for issue 24): it ends an archive at
//! the first zero block (this reader at two), reports a bad checksum without its byte
//! offset, refuses two long names in a row and expands GNU sparse members that this reader
//! skips and counts, so the errors and extractions pinned by the tests would change.

use anyhow::{anyhow, bail, Context, Result};
use std::io::{self, Read};

/// The tar block size, bytes.
pub(super) const BLOCK: usize = 512;

/// A tar header's fields, as far as extraction needs them.
#[derive(Clone, Debug)]
pub(super) struct Header {
    pub(super) name: Vec<u8>,
    pub(super) link: Vec<u8>,
    pub(super) kind: u8,
    pub(super) size: u64,
    pub(super) mode: u32,
    pub(super) mtime: i64,
}

fn octal(field: &[u8]) -> Result<u64> {
    if field.first().is_some_and(|b| b & 0x80 != 0) {
        // GNU base-256: big-endian, the first byte's top bit marks it.
        let mut v: u64 = u64::from(field[0] & 0x7f);
        for &b in &field[1..] {
            v = v
                .checked_mul(256)
                .ok_or_else(|| anyhow!("number too large"))?
                + u64::from(b);
        }
        return Ok(v);
    }
    let text: Vec<u8> = field
        .iter()
        .copied()
        .skip_while(|b| *b == b' ')
        .take_while(|b| *b != 0 && *b != b' ')
        .collect();
    if text.is_empty() {
        return Ok(0);
    }
    u64::from_str_radix(std::str::from_utf8(&text)?, 8)
        .map_err(|_| anyhow!("bad octal field {:?}", String::from_utf8_lossy(field)))
}

fn cstr_field(field: &[u8]) -> Vec<u8> {
    field.iter().copied().take_while(|b| *b != 0).collect()
}

/// Parses one 512-byte header block; `Ok(None)` for an all-zero block.
fn parse_header(b: &[u8; BLOCK], offset: u64) -> Result<Option<Header>> {
    if b.iter().all(|&x| x == 0) {
        return Ok(None);
    }
    let stored = octal(&b[148..156]).with_context(|| format!("header at byte {offset}"))?;
    let sum: u64 = b
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            if (148..156).contains(&i) {
                32
            } else {
                u64::from(x)
            }
        })
        .sum();
    if stored != sum {
        bail!("bad header checksum at byte {offset} of the archive (not a tar, or corrupt)");
    }
    let mut name = cstr_field(&b[0..100]);
    let prefix = cstr_field(&b[345..500]);
    if &b[257..262] == b"ustar" && !prefix.is_empty() && &b[257..263] == b"ustar\0" {
        let mut full = prefix;
        full.push(b'/');
        full.extend_from_slice(&name);
        name = full;
    }
    Ok(Some(Header {
        name,
        link: cstr_field(&b[157..257]),
        kind: b[156],
        size: octal(&b[124..136])?,
        mode: octal(&b[100..108])? as u32,
        mtime: octal(&b[136..148])? as i64,
    }))
}

/// Zero bytes after `size` bytes of data, up to the next block.
pub(super) fn padding(size: u64) -> u64 {
    (BLOCK as u64 - size % BLOCK as u64) % BLOCK as u64
}

/// The bytes a member's data takes in the archive, its padding included. A size near
/// 2^64 (a base-256 field or a pax `size` record can give 2^64−1) is an error: `size +
/// padding` would wrap to 0 and the member's data be read as the next headers.
fn padded(size: u64, at: u64) -> Result<u64> {
    size.checked_add(padding(size)).ok_or_else(|| {
        anyhow!("the member at byte {at} has a size of {size} bytes, more than any archive holds")
    })
}

/// Reads a tar stream member by member: each header's checksum verified, GNU long names
/// (`L`, `K`) and pax records (`x`: `path`, `linkpath`, `size`, `mtime`) applied to the
/// member they precede, global pax headers (`g`) skipped. The caller reads as much of a
/// member's data as it wants; the rest is skipped by the next [`Members::next`].
pub(super) struct Members<'a> {
    input: Box<dyn Read + 'a>,
    /// Bytes of the archive consumed so far.
    offset: u64,
    /// Bytes of the current member's data (with its padding) not consumed yet.
    left: u64,
}

impl<'a> Members<'a> {
    pub(super) fn new(input: Box<dyn Read + 'a>) -> Self {
        Self {
            input,
            offset: 0,
            left: 0,
        }
    }

    /// Reads exactly `buf.len()` bytes or fails with "archive truncated".
    fn read_full(&mut self, buf: &mut [u8], what: &str) -> Result<()> {
        let at = self.offset;
        self.input.read_exact(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                anyhow!("archive truncated in {what} (which starts at byte {at})")
            } else {
                anyhow!(e).context(format!("reading the archive ({what})"))
            }
        })?;
        self.offset += buf.len() as u64;
        Ok(())
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<()> {
        let copied = io::copy(&mut (&mut self.input).take(n), &mut io::sink())
            .context("reading the archive")?;
        if copied != n {
            bail!(
                "archive truncated in {what} (which starts at byte {})",
                self.offset
            );
        }
        self.offset += n;
        Ok(())
    }

    /// Reads a special member's data into memory (long names, pax records).
    fn read_small(&mut self, size: u64, what: &str) -> Result<Vec<u8>> {
        if size > 1 << 20 {
            bail!(
                "{what} of {size} bytes at byte {} is implausibly large",
                self.offset
            );
        }
        let mut v = vec![0u8; (size + padding(size)) as usize];
        self.read_full(&mut v, what)?;
        v.truncate(size as usize);
        Ok(v)
    }

    /// Reads the next `buf.len()` bytes of the current member's data.
    pub(super) fn read_data(&mut self, buf: &mut [u8]) -> Result<()> {
        debug_assert!(buf.len() as u64 <= self.left);
        self.read_full(buf, "a file's data")?;
        self.left -= buf.len() as u64;
        Ok(())
    }

    /// The next member's header, or `None` at the end of the archive (two zero blocks, or
    /// the end of the data at a block boundary, which GNU tar accepts too).
    pub(super) fn next(&mut self) -> Result<Option<Header>> {
        if self.left > 0 {
            self.skip(self.left, "an entry's data")?;
            self.left = 0;
        }
        let (mut long_name, mut long_link) = (None, None);
        let mut pax: Vec<(String, Vec<u8>)> = Vec::new();
        let mut zero_blocks = 0;
        let mut block = [0u8; BLOCK];
        loop {
            match self.input.read(&mut block[..1]) {
                Ok(0) => return Ok(None),
                Ok(_) => {
                    self.offset += 1;
                    self.read_full(&mut block[1..], "a header")?;
                }
                Err(e) => return Err(anyhow!(e).context("reading the archive")),
            }
            let at = self.offset - BLOCK as u64;
            let Some(mut h) = parse_header(&block, at)? else {
                zero_blocks += 1;
                if zero_blocks == 2 {
                    return Ok(None);
                }
                continue;
            };
            zero_blocks = 0;
            match h.kind {
                b'L' => long_name = Some(cstr_field(&self.read_small(h.size, "a long name")?)),
                b'K' => long_link = Some(cstr_field(&self.read_small(h.size, "a long link")?)),
                b'x' => pax = pax_records(&self.read_small(h.size, "a pax header")?),
                b'g' => self.skip(padded(h.size, at)?, "a global pax header")?,
                _ => {
                    apply_pax(&mut h, pax)?;
                    h.name = long_name.unwrap_or(h.name);
                    h.link = long_link.unwrap_or(h.link);
                    self.left = padded(h.size, at)?;
                    return Ok(Some(h));
                }
            }
        }
    }
}

/// Applies a pax extended header's records to the member it precedes.
fn apply_pax(h: &mut Header, pax: Vec<(String, Vec<u8>)>) -> Result<()> {
    for (k, v) in pax {
        match k.as_str() {
            "path" => h.name = v,
            "linkpath" => h.link = v,
            "size" => {
                h.size = std::str::from_utf8(&v)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| anyhow!("bad pax size"))?
            }
            "mtime" => {
                if let Some(t) = std::str::from_utf8(&v)
                    .ok()
                    .and_then(|s| s.split('.').next())
                    .and_then(|s| s.parse().ok())
                {
                    h.mtime = t;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Parses pax extended header records (`LEN key=value\n`).
fn pax_records(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut rest = data;
    while let Some(sp) = rest.iter().position(|&b| b == b' ') {
        let Some(len) = std::str::from_utf8(&rest[..sp])
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
        else {
            break;
        };
        if len <= sp || len > rest.len() {
            break;
        }
        let rec = &rest[sp + 1..len];
        let rec = rec.strip_suffix(b"\n").unwrap_or(rec);
        if let Some(eq) = rec.iter().position(|&b| b == b'=') {
            let key = String::from_utf8_lossy(&rec[..eq]).into_owned();
            out.push((key, rec[eq + 1..].to_vec()));
        }
        rest = &rest[len..];
    }
    out
}

/// Formats a ustar header for `name` (a GNU long-name entry is emitted before it by the
/// caller when the name exceeds 100 bytes).
pub(super) fn ustar_header(
    name: &[u8],
    kind: u8,
    size: u64,
    mode: u32,
    mtime: i64,
    link: &[u8],
) -> [u8; BLOCK] {
    let mut b = [0u8; BLOCK];
    let n = name.len().min(100);
    b[..n].copy_from_slice(&name[..n]);
    let put = |b: &mut [u8; BLOCK], at: usize, len: usize, v: u64| {
        let s = format!("{v:0width$o}\0", width = len - 1);
        b[at..at + len].copy_from_slice(s.as_bytes());
    };
    put(&mut b, 100, 8, u64::from(mode));
    put(&mut b, 108, 8, 0);
    put(&mut b, 116, 8, 0);
    put(&mut b, 124, 12, size);
    put(&mut b, 136, 12, mtime as u64);
    b[156] = kind;
    let l = link.len().min(100);
    b[157..157 + l].copy_from_slice(&link[..l]);
    b[257..263].copy_from_slice(b"ustar\0");
    b[263..265].copy_from_slice(b"00");
    b[148..156].fill(b' ');
    let sum: u64 = b.iter().map(|&x| u64::from(x)).sum();
    let s = format!("{sum:06o}\0 ");
    b[148..156].copy_from_slice(s.as_bytes());
    b
}

/// The header blocks (a GNU `L` entry first when the name is long) for one entry.
pub(super) fn entry_headers(
    name: &[u8],
    kind: u8,
    size: u64,
    mode: u32,
    mtime: i64,
    link: &[u8],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(3 * BLOCK);
    if name.len() > 100 {
        let mut long = name.to_vec();
        long.push(0);
        out.extend_from_slice(&ustar_header(
            b"././@LongLink",
            b'L',
            long.len() as u64,
            0,
            0,
            b"",
        ));
        out.extend_from_slice(&long);
        out.resize(out.len() + padding(long.len() as u64) as usize, 0);
    }
    out.extend_from_slice(&ustar_header(name, kind, size, mode, mtime, link));
    out
}
