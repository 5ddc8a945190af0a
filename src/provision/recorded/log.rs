//! The write log of a recorded image: every write, zeroing and flush that reached the
//! image's backing file, in the order the recorder served them.
//!
//! The file starts with [`MAGIC`]; then one record after another, each a kind byte
//! (`W` write, `Z` zero range, `F` flush), the offset, the length and when it was served
//! ([`monotonic_ns`]; `u64`s, little endian), and for a write its `length` bytes of data.
//! The times say when each crash state's window of crashes was, on the clock a workload
//! reads too (the share of a run's time during which a power cut loses promised data). A record's index is its
//! *position*: the recorder counts records as it appends them, so that a workload can ask
//! how far the log was when its `fsync` returned (everything before that position reached
//! the disk before the promise was made).

use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The first bytes of a write log.
pub const MAGIC: &[u8; 8] = b"FSARWL02";
/// Bytes of a record before its data.
const HEADER: u64 = 25;

/// What reached the backing file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Data written at `offset`.
    Write,
    /// `len` bytes at `offset` made zero (a discard or write-zeroes, `fallocate`).
    Zero,
    /// A flush (`fsync` of the backing file): everything before it is on the disk.
    Flush,
}

impl Kind {
    fn byte(self) -> u8 {
        match self {
            Kind::Write => b'W',
            Kind::Zero => b'Z',
            Kind::Flush => b'F',
        }
    }

    fn from_byte(b: u8) -> Option<Kind> {
        match b {
            b'W' => Some(Kind::Write),
            b'Z' => Some(Kind::Zero),
            b'F' => Some(Kind::Flush),
            _ => None,
        }
    }
}

/// One record of the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub kind: Kind,
    pub offset: u64,
    pub len: u64,
    /// Where a write's data starts in the log file (0 for the other kinds).
    pub data_at: u64,
    /// When the recorder served it ([`monotonic_ns`]).
    pub at_ns: u64,
}

/// Appends records to a new log file (buffered; [`LogWriter::finish`] writes the rest).
pub struct LogWriter {
    out: BufWriter<File>,
    records: u64,
}

/// Now on the machine's monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds: the same in
/// every process, so the recorder's times and a workload's compare.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime(2) writes the timespec it is given, which outlives the call.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl LogWriter {
    /// Starts a log in `file` (new and empty, created by the caller with `O_EXCL`).
    pub fn new(file: File) -> Result<LogWriter> {
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(MAGIC).context("writing the log header")?;
        Ok(LogWriter { out, records: 0 })
    }

    fn header(&mut self, kind: Kind, offset: u64, len: u64) -> std::io::Result<()> {
        let mut h = [0u8; HEADER as usize];
        h[0] = kind.byte();
        h[1..9].copy_from_slice(&offset.to_le_bytes());
        h[9..17].copy_from_slice(&len.to_le_bytes());
        let at = monotonic_ns();
        h[17..25].copy_from_slice(&at.to_le_bytes());
        self.records += 1;
        self.out.write_all(&h)
    }

    /// Records `data` written at `offset`.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.header(Kind::Write, offset, data.len() as u64)?;
        self.out.write_all(data)
    }

    /// Records `len` bytes at `offset` made zero.
    pub fn zero(&mut self, offset: u64, len: u64) -> std::io::Result<()> {
        self.header(Kind::Zero, offset, len)
    }

    /// Records a flush.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.header(Kind::Flush, 0, 0)
    }

    /// Records appended so far: the position of the next one.
    pub fn position(&self) -> u64 {
        self.records
    }

    /// Writes out what is buffered and syncs the file.
    pub fn finish(mut self) -> Result<()> {
        self.out.flush().context("writing the log")?;
        self.out.get_ref().sync_all().context("syncing the log")
    }
}

/// A log read back: its records and the file their data is in.
pub struct Log {
    pub records: Vec<Record>,
    file: File,
}

impl Log {
    /// Reads the records of the log at `path` (their data stays in the file).
    pub fn open(path: &Path) -> Result<Log> {
        let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let size = file.metadata()?.len();
        let mut r = BufReader::with_capacity(1 << 16, &file);
        let mut magic = [0u8; 8];
        r.read_exact(&mut magic).context("reading the log header")?;
        if &magic != MAGIC {
            bail!("{} is not a write log of fsarena", path.display());
        }
        let mut records = Vec::new();
        let mut at = MAGIC.len() as u64;
        while at < size {
            let mut h = [0u8; HEADER as usize];
            r.read_exact(&mut h)
                .with_context(|| format!("record {} cut short", records.len()))?;
            let kind = Kind::from_byte(h[0])
                .with_context(|| format!("record {}: unknown kind {}", records.len(), h[0]))?;
            let offset = u64::from_le_bytes(h[1..9].try_into().expect("8 bytes"));
            let len = u64::from_le_bytes(h[9..17].try_into().expect("8 bytes"));
            let at_ns = u64::from_le_bytes(h[17..25].try_into().expect("8 bytes"));
            at += HEADER;
            let data_at = if kind == Kind::Write { at } else { 0 };
            if kind == Kind::Write {
                if at + len > size {
                    bail!("record {}: data cut short", records.len());
                }
                std::io::copy(&mut (&mut r).take(len), &mut std::io::sink())?;
                at += len;
            }
            records.push(Record {
                kind,
                offset,
                len,
                data_at,
                at_ns,
            });
        }
        drop(r);
        Ok(Log { records, file })
    }

    /// A write's data.
    pub fn data(&self, rec: &Record) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; rec.len as usize];
        if rec.kind == Kind::Write {
            self.file
                .read_exact_at(&mut buf, rec.data_at)
                .context("reading a write's data from the log")?;
        }
        Ok(buf)
    }

    /// Applies record `i` to `image` (a flush changes nothing).
    pub fn apply(&self, i: usize, image: &File) -> Result<()> {
        let rec = &self.records[i];
        match rec.kind {
            Kind::Flush => Ok(()),
            Kind::Write | Kind::Zero => image
                .write_all_at(&self.data(rec)?, rec.offset)
                .with_context(|| format!("applying record {i} to the image")),
        }
    }

    /// Applies only `blocks` (indices of `block`-byte pieces, from its offset) of write `i`
    /// to `image`: a write that reached the disk in part.
    pub fn apply_blocks(&self, i: usize, blocks: &[u64], block: u64, image: &File) -> Result<()> {
        let rec = &self.records[i];
        let data = self.data(rec)?;
        for &b in blocks {
            let from = (b * block).min(rec.len) as usize;
            let to = ((b + 1) * block).min(rec.len) as usize;
            image
                .write_all_at(&data[from..to], rec.offset + from as u64)
                .with_context(|| format!("applying block {b} of record {i} to the image"))?;
        }
        Ok(())
    }

    /// Applies records `from..to` in order to `image`.
    pub fn replay(&self, image: &File, from: usize, to: usize) -> Result<()> {
        (from..to).try_for_each(|i| self.apply(i, image))
    }

    /// Indices of the flush records.
    pub fn flushes(&self) -> Vec<usize> {
        let is_flush = |(i, r): (usize, &Record)| (r.kind == Kind::Flush).then_some(i);
        self.records
            .iter()
            .enumerate()
            .filter_map(is_flush)
            .collect()
    }

    /// How many writes (and zero ranges), flushes, and bytes written the log holds.
    pub fn counts(&self) -> (u64, u64, u64) {
        self.records
            .iter()
            .fold((0, 0, 0), |(w, f, b), r| match r.kind {
                Kind::Flush => (w, f + 1, b),
                _ => (w + 1, f, b + r.len),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_reads_back_what_was_written_and_replays_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let mut w = LogWriter::new(File::create(&path).unwrap()).unwrap();
        w.write(4096, &[7u8; 512]).unwrap();
        w.flush().unwrap();
        w.zero(4096, 100).unwrap();
        w.write(0, b"abc").unwrap();
        assert_eq!(w.position(), 4);
        w.finish().unwrap();

        let log = Log::open(&path).unwrap();
        let kinds: Vec<Kind> = log.records.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, [Kind::Write, Kind::Flush, Kind::Zero, Kind::Write]);
        assert_eq!(log.flushes(), [1]);
        assert_eq!(log.counts(), (3, 1, 615));
        assert_eq!(log.data(&log.records[3]).unwrap(), b"abc");

        let image = tempfile::tempfile().unwrap();
        image.set_len(8192).unwrap();
        log.replay(&image, 0, log.records.len()).unwrap();
        let mut got = vec![0u8; 8192];
        image.read_exact_at(&mut got, 0).unwrap();
        assert_eq!(&got[..3], b"abc");
        assert!(got[4096..4196].iter().all(|&b| b == 0));
        assert!(got[4196..4608].iter().all(|&b| b == 7));
    }

    #[test]
    fn a_log_cut_short_or_foreign_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let mut w = LogWriter::new(File::create(&path).unwrap()).unwrap();
        w.write(0, &[1u8; 100]).unwrap();
        w.finish().unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(8 + HEADER + 50).unwrap();
        assert!(Log::open(&path).is_err());
        std::fs::write(&path, b"not a log at all").unwrap();
        assert!(Log::open(&path).is_err());
    }
}
