//! The per-worker recorder: counters, a latency histogram per operation kind, and a series.
//!
//! One recorder per worker thread, owned by it: no locks and no allocation on the hot path
//! (histograms are allocated when the recorder is made). Recorders merge at phase end.

use super::hist::LatencyHistogram;
use super::series::Series;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Kinds of operation whose latency is recorded separately.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    Create,
    Stat,
    Delete,
    Seek,
    Fsync,
    Open,
    Append,
    Rename,
    Mkdir,
    Symlink,
    Rmdir,
    /// A compound operation made of parts (a Postmark transaction).
    Transaction,
    Other,
    /// Listing one directory: opendir, getdents until the end, closedir.
    Readdir,
    /// Handing requests to the kernel without waiting for them (an io_uring submit); a
    /// part, not an operation.
    Submit,
}

impl Op {
    /// Every kind, in index order.
    pub const ALL: [Op; 17] = [
        Op::Read,
        Op::Write,
        Op::Create,
        Op::Stat,
        Op::Delete,
        Op::Seek,
        Op::Fsync,
        Op::Open,
        Op::Append,
        Op::Rename,
        Op::Mkdir,
        Op::Symlink,
        Op::Rmdir,
        Op::Transaction,
        Op::Other,
        Op::Readdir,
        Op::Submit,
    ];

    /// Lower-case name as used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Create => "create",
            Op::Stat => "stat",
            Op::Delete => "delete",
            Op::Seek => "seek",
            Op::Fsync => "fsync",
            Op::Open => "open",
            Op::Append => "append",
            Op::Rename => "rename",
            Op::Mkdir => "mkdir",
            Op::Symlink => "symlink",
            Op::Rmdir => "rmdir",
            Op::Transaction => "transaction",
            Op::Other => "other",
            Op::Readdir => "readdir",
            Op::Submit => "submit",
        }
    }
}

/// Counters of one worker (or, merged, of a phase).
#[derive(Clone, Debug)]
pub struct Recorder {
    start: Instant,
    /// Operations that count towards `ops` (all but [`Op::Fsync`] issued by the sync policy).
    pub ops: u64,
    /// Payload bytes read or written.
    pub bytes: u64,
    /// Per kind: (operations, bytes, latency histogram).
    per_op: Vec<(u64, u64, LatencyHistogram)>,
    all: LatencyHistogram,
    series: Series,
    /// Seconds from phase start until this worker finished (min/max across merges).
    pub done_s: Option<(f64, f64)>,
}

impl Recorder {
    /// A recorder for a phase that started at `start`.
    pub fn new(start: Instant) -> Self {
        Self {
            start,
            ops: 0,
            bytes: 0,
            per_op: Op::ALL
                .iter()
                .map(|_| (0, 0, LatencyHistogram::new()))
                .collect(),
            all: LatencyHistogram::new(),
            series: Series::new(),
            done_s: None,
        }
    }

    /// Moves the phase start (recorders are built before the clock starts, so that
    /// allocating their histograms is not timed).
    pub fn restart(&mut self, start: Instant) {
        self.start = start;
    }

    /// The phase start this recorder measures from.
    pub fn phase_start(&self) -> Instant {
        self.start
    }

    /// Records one operation of kind `op` that began at `began` and moved `bytes` bytes.
    #[inline]
    pub fn done(&mut self, op: Op, began: Instant, bytes: u64) {
        let now = Instant::now();
        let lat = now.saturating_duration_since(began).as_nanos() as u64;
        self.record(op, lat, now, 1, bytes);
    }

    /// Like [`Self::done`], and returns the completion time it read (so that a caller that
    /// needs the time, e.g. to check a deadline, does not read the clock again).
    #[inline]
    pub fn done_at(&mut self, op: Op, began: Instant, bytes: u64) -> Instant {
        let now = Instant::now();
        let lat = now.saturating_duration_since(began).as_nanos() as u64;
        self.record(op, lat, now, 1, bytes);
        now
    }

    /// Records `ops` operations that together took from `began` until now (for per-byte
    /// tests, where timing each byte would cost more than the byte).
    #[inline]
    pub fn done_batch(&mut self, op: Op, began: Instant, ops: u64, bytes: u64) {
        let now = Instant::now();
        let lat = now.saturating_duration_since(began).as_nanos() as u64;
        self.record(op, lat, now, ops, bytes);
    }

    /// Records a part of a compound operation (a read inside a Postmark transaction): its
    /// latency and count go to `op`'s histogram and its bytes to the phase, but it is not
    /// counted in `ops` nor in the phase-wide histogram, whose samples are the compound
    /// operations, recorded with [`Self::done`].
    pub fn part(&mut self, op: Op, began: Instant, bytes: u64) {
        let now = Instant::now();
        let lat = now.saturating_duration_since(began).as_nanos() as u64;
        self.bytes += bytes;
        let slot = &mut self.per_op[op as usize];
        slot.0 += 1;
        slot.1 += bytes;
        slot.2.record_ns(lat);
        let at = now.saturating_duration_since(self.start).as_nanos() as u64;
        self.series.add(at, 0, bytes);
    }

    /// Records an fsync/syncfs issued by the sync policy: its latency is kept under
    /// [`Op::Fsync`] and its time lands in the series, but it is not counted in `ops`.
    pub fn sync_done(&mut self, began: Instant) {
        let now = Instant::now();
        let lat = now.saturating_duration_since(began).as_nanos() as u64;
        let slot = &mut self.per_op[Op::Fsync as usize];
        slot.0 += 1;
        slot.2.record_ns(lat);
        let at = now.saturating_duration_since(self.start).as_nanos() as u64;
        self.series.add(at, 0, 0);
    }

    #[inline]
    fn record(&mut self, op: Op, lat_ns: u64, now: Instant, ops: u64, bytes: u64) {
        self.ops += ops;
        self.bytes += bytes;
        let slot = &mut self.per_op[op as usize];
        slot.0 += ops;
        slot.1 += bytes;
        slot.2.record_ns(lat_ns);
        // A sample that counts no operation (e.g. a timed write-back inside a seek test)
        // stays out of the phase-wide histogram, whose samples are the counted operations.
        if ops > 0 {
            self.all.record_ns(lat_ns);
        }
        let at = now.saturating_duration_since(self.start).as_nanos() as u64;
        self.series.add(at, ops, bytes);
    }

    /// Marks this worker finished now.
    pub fn finish(&mut self) {
        let s = self.start.elapsed().as_secs_f64();
        self.done_s = Some((s, s));
    }

    /// Adds another worker's recorder of the same phase.
    pub fn merge(&mut self, other: &Recorder) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        for (mine, theirs) in self.per_op.iter_mut().zip(&other.per_op) {
            mine.0 += theirs.0;
            mine.1 += theirs.1;
            mine.2.merge(&theirs.2);
        }
        self.all.merge(&other.all);
        self.series.merge(&other.series);
        self.done_s = match (self.done_s, other.done_s) {
            (Some((a0, a1)), Some((b0, b1))) => Some((a0.min(b0), a1.max(b1))),
            (a, b) => a.or(b),
        };
    }

    /// Adds the recorder of a later part of the same phase, which started `offset_s` seconds
    /// (of this phase's measured time) after this one.
    pub fn append(&mut self, other: &Recorder, offset_s: f64) {
        let mut shifted = other.clone();
        shifted.series = Series::new();
        shifted.done_s = other.done_s.map(|(a, b)| (a + offset_s, b + offset_s));
        self.merge(&shifted);
        self.series.append(&other.series, (offset_s * 1e9) as u64);
    }

    /// Bytes moved by operations of the given kinds.
    pub fn bytes_of(&self, kinds: &[Op]) -> u64 {
        kinds.iter().map(|k| self.per_op[*k as usize].1).sum()
    }

    /// The latency histogram over all counted operations (sync-policy fsyncs excluded).
    /// One sample per `done` call: a `done_batch` of many operations is one sample.
    pub fn latency(&self) -> &LatencyHistogram {
        &self.all
    }

    /// (kind, count, histogram) for every kind that was recorded.
    pub fn per_op(&self) -> impl Iterator<Item = (Op, u64, &LatencyHistogram)> {
        Op::ALL
            .iter()
            .zip(&self.per_op)
            .filter(|(_, (_, _, h))| h.count() > 0)
            .map(|(op, (n, _, h))| (*op, *n, h))
    }

    /// The time series.
    pub fn series(&self) -> &Series {
        &self.series
    }
}

impl std::ops::AddAssign<&Recorder> for Recorder {
    fn add_assign(&mut self, rhs: &Recorder) {
        self.merge(rhs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_counts_and_tracks_straggler() {
        let t0 = Instant::now();
        let mut a = Recorder::new(t0);
        let mut b = Recorder::new(t0);
        a.done(Op::Read, Instant::now(), 4096);
        a.done(Op::Write, Instant::now(), 100);
        b.done(Op::Read, Instant::now(), 4096);
        b.sync_done(Instant::now());
        a.done_s = Some((1.0, 1.0));
        b.done_s = Some((3.0, 3.0));
        a += &b;
        assert_eq!(a.ops, 3);
        assert_eq!(a.bytes, 8292);
        assert_eq!(a.latency().count(), 3);
        let kinds: Vec<_> = a.per_op().map(|(op, n, _)| (op, n)).collect();
        assert_eq!(kinds, vec![(Op::Read, 2), (Op::Write, 1), (Op::Fsync, 1)]);
        assert_eq!(a.done_s, Some((1.0, 3.0)));
        assert_eq!(a.bytes_of(&[Op::Read]), 8192);
        assert_eq!(a.bytes_of(&[Op::Write, Op::Append]), 100);
        // A timed sample that counts no operation stays out of the phase-wide histogram.
        a.done_batch(Op::Write, Instant::now(), 0, 10);
        assert_eq!((a.ops, a.latency().count()), (3, 3));
    }
}
