//! The per-worker recorder: counters, a latency histogram per operation kind, and a series.
//!
//! One recorder per worker thread, owned by it: no locks and no allocation on the hot path
//! (histograms are allocated when the recorder is made). Recorders merge at phase end.
//!
//! Recording one operation costs one clock read, one histogram record, a series bucket and
//! a few additions (measured by `benches/recorder.rs`; figures in docs/performance.md).

use super::clock::{Scale, Stamp};
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

/// A time an operation began, as a recorder measures from it: an `Instant` (what
/// `Worker::start` gives every workload) or a cheaper [`Stamp`] (the job engine's hot loop;
/// see [`super::clock`]). One recorder takes both: each sample is measured in its own kind
/// of time, from the phase start read in that kind.
pub trait Mark: Copy {
    /// Now, in this kind of time.
    fn now() -> Self;
    /// Nanoseconds from `self` until `later`; 0 when `later` is earlier; `scale` is this
    /// process's clock calibration (unused by `Instant`).
    fn ns_until(self, later: Self, scale: Scale) -> u64;
    /// The phase start in this kind of time, given as an instant and as a stamp.
    fn phase_start(start: Instant, stamp: Stamp) -> Self;
}

impl Mark for Instant {
    #[inline]
    fn now() -> Self {
        Instant::now()
    }
    #[inline]
    fn ns_until(self, later: Self, _: Scale) -> u64 {
        later.saturating_duration_since(self).as_nanos() as u64
    }
    #[inline]
    fn phase_start(start: Instant, _: Stamp) -> Self {
        start
    }
}

impl Mark for Stamp {
    #[inline]
    fn now() -> Self {
        Stamp::now()
    }
    #[inline]
    fn ns_until(self, later: Self, scale: Scale) -> u64 {
        later.ns_since_at(self, scale)
    }
    #[inline]
    fn phase_start(_: Instant, stamp: Stamp) -> Self {
        stamp
    }
}

/// Per kind: (operations, bytes, latency histogram), indexed by `Op as usize`.
type PerOp = [(u64, u64, LatencyHistogram); Op::ALL.len()];

/// Counters of one worker (or, merged, of a phase).
///
/// Each sample is recorded once, in its kind's histogram. The phase-wide histogram
/// ([`Self::latency`]) is derived when asked for: the sum of the kinds' histograms minus
/// `uncounted`, which holds a second copy of the few samples that are no operation of
/// their own (parts, sync-policy fsyncs). Recording is the hot path; deriving happens
/// once per phase.
#[derive(Clone, Debug)]
pub struct Recorder {
    start: Instant,
    start_stamp: Stamp,
    /// The clock's calibration, read once (see [`Scale`]).
    scale: Scale,
    /// Operations that count towards `ops` (all but [`Op::Fsync`] issued by the sync policy).
    pub ops: u64,
    /// Payload bytes read or written.
    pub bytes: u64,
    per_op: Box<PerOp>,
    /// Samples in `per_op` that stay out of the phase-wide histogram.
    uncounted: LatencyHistogram,
    series: Series,
    /// Seconds from phase start until this worker finished (min/max across merges).
    pub done_s: Option<(f64, f64)>,
    /// The seconds an external program that did the work timed it by its own clock, when
    /// it reports them (db_bench's benchmark loop, without opening and closing the
    /// database): the phase's rates are then over them (the longest across merges).
    pub own_s: Option<f64>,
}

impl Recorder {
    /// A recorder for a phase that started at `start`. Calibrates the cheap clock the first
    /// time (see [`super::clock::init`]), so that no timed phase pays for it.
    pub fn new(start: Instant) -> Self {
        super::clock::init();
        Self {
            start,
            start_stamp: Stamp::from_instant(start),
            scale: super::clock::scale(),
            ops: 0,
            bytes: 0,
            per_op: Box::new(std::array::from_fn(|_| (0, 0, LatencyHistogram::new()))),
            uncounted: LatencyHistogram::new(),
            series: Series::new(),
            done_s: None,
            own_s: None,
        }
    }

    /// Moves the phase start (recorders are built before the clock starts, so that
    /// allocating their histograms is not timed).
    pub fn restart(&mut self, start: Instant) {
        self.start = start;
        self.start_stamp = Stamp::from_instant(start);
    }

    /// The phase start this recorder measures from.
    pub fn phase_start(&self) -> Instant {
        self.start
    }

    /// Records one operation of kind `op` that began at `began` and moved `bytes` bytes.
    #[inline]
    pub fn done<T: Mark>(&mut self, op: Op, began: T, bytes: u64) {
        self.done_at(op, began, bytes);
    }

    /// Like [`Self::done`], and returns the completion time it read (so that a caller that
    /// needs the time, e.g. to check a deadline, does not read the clock again).
    #[inline]
    pub fn done_at<T: Mark>(&mut self, op: Op, began: T, bytes: u64) -> T {
        let now = T::now();
        self.done_between(op, began, now, bytes);
        now
    }

    /// Records one operation that began at `began` and ended at `ended`, times the caller
    /// read (the job engine reads them with the cheapest read its engine allows, see
    /// [`Stamp::now_unordered`]).
    #[inline]
    pub fn done_between<T: Mark>(&mut self, op: Op, began: T, ended: T, bytes: u64) {
        let (lat, at) = self.span(began, ended);
        self.record(op, lat, at, 1, bytes);
    }

    /// Records `ops` operations that together took from `began` until now (for per-byte
    /// tests, where timing each byte would cost more than the byte).
    #[inline]
    pub fn done_batch<T: Mark>(&mut self, op: Op, began: T, ops: u64, bytes: u64) {
        let (lat, at) = self.span(began, T::now());
        self.record(op, lat, at, ops, bytes);
    }

    /// Records a part of a compound operation (a read inside a Postmark transaction): its
    /// latency and count go to `op`'s histogram and its bytes to the phase, but it is not
    /// counted in `ops` nor in the phase-wide histogram, whose samples are the compound
    /// operations, recorded with [`Self::done`].
    pub fn part<T: Mark>(&mut self, op: Op, began: T, bytes: u64) {
        let (lat, at) = self.span(began, T::now());
        self.record_part(op, lat, at, bytes);
    }

    /// Records an fsync/syncfs issued by the sync policy: its latency is kept under
    /// [`Op::Fsync`] and its time lands in the series, but it is not counted in `ops`.
    pub fn sync_done<T: Mark>(&mut self, began: T) {
        let (lat, at) = self.span(began, T::now());
        self.record_part(Op::Fsync, lat, at, 0);
    }

    /// (latency, time since the phase start) of an operation from `began` to `now`, in ns.
    #[inline]
    fn span<T: Mark>(&self, began: T, now: T) -> (u64, u64) {
        let start = T::phase_start(self.start, self.start_stamp);
        (
            began.ns_until(now, self.scale),
            start.ns_until(now, self.scale),
        )
    }

    #[inline]
    fn record(&mut self, op: Op, lat_ns: u64, at_ns: u64, ops: u64, bytes: u64) {
        self.ops += ops;
        self.bytes += bytes;
        let slot = &mut self.per_op[op as usize];
        slot.0 += ops;
        slot.1 += bytes;
        slot.2.record_ns(lat_ns);
        // A sample that counts no operation (e.g. a timed write-back inside a seek test)
        // stays out of the phase-wide histogram, whose samples are the counted operations.
        if ops == 0 {
            self.uncounted.record_ns(lat_ns);
        }
        self.series.add(at_ns, ops, bytes);
    }

    /// A sample that is not an operation of its own (see [`Self::part`]).
    fn record_part(&mut self, op: Op, lat_ns: u64, at_ns: u64, bytes: u64) {
        self.bytes += bytes;
        let slot = &mut self.per_op[op as usize];
        slot.0 += 1;
        slot.1 += bytes;
        slot.2.record_ns(lat_ns);
        self.uncounted.record_ns(lat_ns);
        self.series.add(at_ns, 0, bytes);
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
        for (mine, theirs) in self.per_op.iter_mut().zip(other.per_op.iter()) {
            mine.0 += theirs.0;
            mine.1 += theirs.1;
            mine.2.merge(&theirs.2);
        }
        self.uncounted.merge(&other.uncounted);
        self.series.merge(&other.series);
        self.done_s = match (self.done_s, other.done_s) {
            (Some((a0, a1)), Some((b0, b1))) => Some((a0.min(b0), a1.max(b1))),
            (a, b) => a.or(b),
        };
        self.own_s = match (self.own_s, other.own_s) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// Adds the recorder of a later part of the same phase, which started `offset_s` seconds
    /// (of this phase's measured time) after this one.
    pub fn append(&mut self, other: &Recorder, offset_s: f64) {
        let mut shifted = other.clone();
        shifted.series = Series::new();
        // A later part's own time follows this one's.
        if let (Some(a), Some(b)) = (self.own_s, other.own_s) {
            (self.own_s, shifted.own_s) = (None, Some(a + b));
        }
        shifted.done_s = other.done_s.map(|(a, b)| (a + offset_s, b + offset_s));
        self.merge(&shifted);
        self.series.append(&other.series, (offset_s * 1e9) as u64);
    }

    /// Bytes moved by operations of the given kinds.
    pub fn bytes_of(&self, kinds: &[Op]) -> u64 {
        kinds.iter().map(|k| self.per_op[*k as usize].1).sum()
    }

    /// The latency histogram over all counted operations (sync-policy fsyncs excluded),
    /// derived from the kinds' histograms (a phase asks once or twice, when it ends).
    /// One sample per `done` call: a `done_batch` of many operations is one sample.
    pub fn latency(&self) -> LatencyHistogram {
        let mut all = LatencyHistogram::new();
        for (_, _, h) in self.per_op.iter() {
            all.merge(h);
        }
        all.subtract(&self.uncounted);
        all
    }

    /// (kind, count, histogram) for every kind that was recorded.
    pub fn per_op(&self) -> impl Iterator<Item = (Op, u64, &LatencyHistogram)> {
        Op::ALL
            .iter()
            .zip(self.per_op.iter())
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
        // A program's own time: the longest of workers side by side, added over parts.
        (a.own_s, b.own_s) = (Some(2.0), Some(5.0));
        let mut c = a.clone();
        c += &b;
        assert_eq!(c.own_s, Some(5.0));
        let mut d = a.clone();
        d.append(&b, 4.0);
        assert_eq!(d.own_s, Some(7.0));
        assert_eq!(a.bytes_of(&[Op::Read]), 8192);
        assert_eq!(a.bytes_of(&[Op::Write, Op::Append]), 100);
        // A timed sample that counts no operation stays out of the phase-wide histogram.
        a.done_batch(Op::Write, Instant::now(), 0, 10);
        assert_eq!((a.ops, a.latency().count()), (3, 3));
    }

    proptest::proptest! {
        /// The derived phase-wide histogram holds exactly the counted operations' samples,
        /// whatever parts, policy fsyncs and uncounted samples were mixed in and merged.
        #[test]
        fn phase_histogram_is_the_counted_samples(
            samples in proptest::collection::vec((0u8..4, 1u64..10_000_000_000), 0..300),
        ) {
            let t0 = Instant::now();
            let (mut a, mut b) = (Recorder::new(t0), Recorder::new(t0));
            let mut want = LatencyHistogram::new();
            for (i, &(kind, lat)) in samples.iter().enumerate() {
                let r = if i % 2 == 0 { &mut a } else { &mut b };
                match kind {
                    0 => { r.record(Op::Read, lat, 0, 1, 4096); want.record_ns(lat) }
                    1 => r.record_part(Op::Write, lat, 0, 10),
                    2 => r.record_part(Op::Fsync, lat, 0, 0),
                    _ => r.record(Op::Write, lat, 0, 0, 10),
                }
                // Asking in between must not freeze the histogram.
                if i % 50 == 0 { r.latency(); }
            }
            a += &b;
            proptest::prop_assert_eq!(a.latency().count(), want.count());
            proptest::prop_assert_eq!(a.latency().buckets(), want.buckets());
            let per_kind: u64 = a.per_op().map(|(_, _, h)| h.count()).sum();
            proptest::prop_assert_eq!(per_kind, samples.len() as u64);
        }
    }
}
