//! `ls -lR` as GNU ls (coreutils 9) does it, byte for byte the output of
//! `LC_ALL=C ls -lnAR ROOT` (checked against the real ls in the tests):
//!
//! * the root is lstat'ed; each directory is read to the end, every entry lstat'ed (and a
//!   symlink readlink'ed), the entries sorted by name (bytes, the C locale's order), the
//!   listing printed — `DIR:` (after a blank line but for the first), `total N` (st_blocks
//!   summed, in 1024-byte units rounded up), one line per entry with columns padded to the
//!   directory's widest — and then its subdirectories listed the same way, in that order,
//!   depth first;
//! * a line is mode, links, owner, group, size, modification time and name (`-> target`
//!   for a symlink); the time is `Mon dd HH:MM` within the past six months, `Mon dd  YYYY`
//!   otherwise, in local time.
//!
//! Differs from plain `ls -lR`, on purpose: entries whose names start with a dot are
//! listed (`-A`; the `source-tree` corpus has none), owners and groups are printed as
//! numbers (`-n`: no passwd or group lookups), and no ACL or SELinux attributes are looked
//! up (the 2001 ls the seed timed had none). Device nodes (no corpus makes any) show their
//! st_size rather than major, minor.
//!
//! Recorded: one [`Op::Stat`] per lstat (with the readlink of a symlink); a directory's
//! listing as an [`Op::Readdir`] part. The text goes to the caller's sink (the workload's is
//! `io::sink()`, as `> /dev/null`).

use super::walk::{lstat, names, Seen};
use crate::context::Worker;
use crate::probe::recorder::Op;
use crate::workload::IoContext;
use anyhow::Result;
use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One entry of a directory being listed.
struct Line {
    name: OsString,
    md: Metadata,
    link: Option<PathBuf>,
}

/// Seconds in six months as ls counts them (half of 365.2425 days).
const SIX_MONTHS_S: i64 = 31_556_952 / 2;

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `ls -lR root > sink`: see the module header.
pub fn ls_lr(w: &mut Worker, root: &Path, sink: &mut dyn Write) -> Result<Seen> {
    let mut seen = Seen {
        entries: 1,
        ..Default::default()
    };
    let mut now = Now::new();
    if !lstat(w, root)?.is_dir() {
        return Ok(seen);
    }
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    let mut first = true;
    while let Some(dir) = stack.pop() {
        w.check()?;
        let mut lines = Vec::new();
        for name in names(w, &dir)? {
            let path = dir.join(&name);
            let t = w.start();
            let md = fs::symlink_metadata(&path).on("lstat", &path)?;
            let link = if md.file_type().is_symlink() {
                Some(fs::read_link(&path).on("readlink", &path)?)
            } else {
                None
            };
            w.done(Op::Stat, t, 0);
            seen.count(&md);
            lines.push(Line { name, md, link });
        }
        lines.sort_unstable_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        out.clear();
        if !first {
            out.push(b'\n');
        }
        first = false;
        format_dir(&mut out, &dir, &lines, &mut now);
        sink.write_all(&out).on("write listing of", &dir)?;
        seen.output_bytes += out.len() as u64;
        let subdirs = lines.iter().rev().filter(|l| l.md.is_dir());
        stack.extend(subdirs.map(|l| dir.join(&l.name)));
    }
    Ok(seen)
}

/// ls's clock: read once, read again when a file's time is in the future.
struct Now(i64, i64);

impl Now {
    fn new() -> Self {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Now(d.as_secs() as i64, i64::from(d.subsec_nanos()))
    }

    /// Whether `(s, ns)` lies within the past six months (ls's "recent").
    fn recent(&mut self, s: i64, ns: i64) -> bool {
        if (self.0, self.1) < (s, ns) {
            *self = Now::new();
        }
        (self.0 - SIX_MONTHS_S, self.1) < (s, ns) && (s, ns) < (self.0, self.1)
    }
}

fn digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Formats one directory's listing (header, total, lines) into `out`.
fn format_dir(out: &mut Vec<u8>, dir: &Path, lines: &[Line], now: &mut Now) {
    // At most 20 (the digits of u64::MAX), far below `fmt`'s limit on a width.
    let width = |f: fn(&Metadata) -> u64| lines.iter().map(|l| digits(f(&l.md))).max().unwrap_or(1);
    let (wl, wu, wg, ws) = (
        width(|m| m.nlink()),
        width(|m| u64::from(m.uid())),
        width(|m| u64::from(m.gid())),
        width(|m| m.size()),
    );
    let blocks: u64 = lines.iter().map(|l| l.md.blocks()).sum();
    out.extend_from_slice(dir.as_os_str().as_bytes());
    out.extend_from_slice(b":\n");
    let _ = writeln!(out, "total {}", blocks.div_ceil(2));
    for l in lines {
        let m = &l.md;
        mode_string(m.mode(), out);
        let _ = write!(
            out,
            " {:>wl$} {:>wu$} {:>wg$} {:>ws$} ",
            m.nlink(),
            m.uid(),
            m.gid(),
            m.size()
        );
        date(out, m.mtime(), m.mtime_nsec(), now);
        out.push(b' ');
        out.extend_from_slice(l.name.as_bytes());
        if let Some(target) = &l.link {
            out.extend_from_slice(b" -> ");
            out.extend_from_slice(target.as_os_str().as_bytes());
        }
        out.push(b'\n');
    }
}

/// The 10-character mode of `ls -l` (`drwxr-xr-x`, `-rwsr-x--T`, …).
pub fn mode_string(mode: u32, out: &mut Vec<u8>) {
    out.push(match mode & libc::S_IFMT {
        libc::S_IFDIR => b'd',
        libc::S_IFLNK => b'l',
        libc::S_IFCHR => b'c',
        libc::S_IFBLK => b'b',
        libc::S_IFIFO => b'p',
        libc::S_IFSOCK => b's',
        _ => b'-',
    });
    let special = [
        (libc::S_ISUID, b's'),
        (libc::S_ISGID, b's'),
        (libc::S_ISVTX, b't'),
    ];
    for (i, (bit, mark)) in special.into_iter().enumerate() {
        let rwx = (mode >> (6 - 3 * i)) & 7;
        out.push(if rwx & 4 != 0 { b'r' } else { b'-' });
        out.push(if rwx & 2 != 0 { b'w' } else { b'-' });
        out.push(match (rwx & 1 != 0, mode & bit != 0) {
            (true, false) => b'x',
            (false, false) => b'-',
            (true, true) => mark,
            (false, true) => mark.to_ascii_uppercase(),
        });
    }
}

/// ls's time column in the C locale, local time.
fn date(out: &mut Vec<u8>, s: i64, ns: i64, now: &mut Now) {
    let t: libc::time_t = s;
    // SAFETY: an all-zero tm is a valid value; localtime_r writes into it and reads `t`.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call.
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        let _ = write!(out, "{s:>12}"); // ls prints the number when the time cannot be shown
        return;
    }
    let month = MONTHS[tm.tm_mon.clamp(0, 11) as usize];
    if now.recent(s, ns) {
        let _ = write!(
            out,
            "{month} {:>2} {:02}:{:02}",
            tm.tm_mday, tm.tm_hour, tm.tm_min
        );
    } else {
        let _ = write!(
            out,
            "{month} {:>2}  {}",
            tm.tm_mday,
            i64::from(tm.tm_year) + 1900
        );
    }
}
