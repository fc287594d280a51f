//! Time as an axis: what span of producer timestamps a file holds, and the
//! one rule for "the first record at or after T".
//!
//! Timestamps (`timestamp_micros`) come from the producer and need not
//! increase: a clock may step back, two records may share a microsecond.
//! The rule is Kafka's (`offsetsForTimes`): **the answer to T is the first
//! offset, in offset order, whose timestamp is ≥ T** — not the first
//! timestamp ≥ T in time order. A record whose timestamp is below an earlier
//! one never hides a later match, and a late record with an early timestamp
//! is never the answer for a time after it.
//!
//! A seek need not read every record: the running maximum of timestamps is
//! non-decreasing, so the first interval (of a sparse index, say) whose
//! running maximum reaches T holds the answer, and every record before that
//! interval is below T ([`TimeIndex`]). Inside it a [`TimeSeek`] scans.
//! Its caller feeds it records whose header checksum verified (it covers
//! the timestamp): a record whose payload rotted can be the answer, and the
//! read from it then names the rot; a damaged header ends what can be fed.
//!
//! ```
//! use felix_codec::read::time::{TimeSeek, TimeSpan};
//! // A clock that went backwards at offset 2.
//! let records = [(0, 100), (1, 200), (2, 50), (3, 150), (4, 300)];
//! let mut seek = TimeSeek::new(150);
//! let found = records.iter().find_map(|&(offset, ts)| seek.record(offset, ts));
//! assert_eq!(found, Some(1), "offset 1 (200) is the first at or after 150");
//! let mut span = TimeSpan::of(100);
//! records[1..].iter().for_each(|&(_, ts)| span.add(ts));
//! assert_eq!((span.first, span.last, span.min, span.max), (100, 300, 50, 300));
//! ```

use alloc::vec::Vec;

/// The timestamps of a run of intact records, in microseconds since the
/// Unix epoch: the first and last (in offset order) and the least and
/// greatest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TimeSpan {
    /// The first record's timestamp.
    pub first: u64,
    /// The last record's timestamp.
    pub last: u64,
    /// The least timestamp.
    pub min: u64,
    /// The greatest timestamp.
    pub max: u64,
}

impl TimeSpan {
    /// The span of one record.
    #[must_use]
    pub fn of(ts: u64) -> Self {
        Self { first: ts, last: ts, min: ts, max: ts }
    }

    /// Takes the next record (in offset order).
    pub fn add(&mut self, ts: u64) {
        self.last = ts;
        self.min = self.min.min(ts);
        self.max = self.max.max(ts);
    }

    /// Takes `ts` into `span`, starting it if it is the first.
    pub fn extend(span: &mut Option<Self>, ts: u64) {
        match span {
            Some(s) => s.add(ts),
            None => *span = Some(Self::of(ts)),
        }
    }

    /// This span followed by `later` (the next file's, in offset order).
    #[must_use]
    pub fn then(self, later: Self) -> Self {
        Self { first: self.first, last: later.last, min: self.min.min(later.min), max: self.max.max(later.max) }
    }

    /// The spans of files in offset order, as one.
    #[must_use]
    pub fn join(spans: impl IntoIterator<Item = Self>) -> Option<Self> {
        spans.into_iter().reduce(Self::then)
    }

    /// Whether the clock went backwards somewhere inside (a record's
    /// timestamp below an earlier one's), as far as the span can tell: the
    /// last is below the greatest, or the first above the least.
    #[must_use]
    pub fn out_of_order(&self) -> bool {
        self.last < self.max || self.first > self.min
    }
}

/// The first record at or after a time, over records fed in offset order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeSeek {
    target: u64,
}

impl TimeSeek {
    /// Seeks the first record whose timestamp is ≥ `target`.
    #[must_use]
    pub fn new(target: u64) -> Self {
        Self { target }
    }

    /// Takes the next intact record; `Some(offset)` when it is the answer.
    #[must_use]
    pub fn record(&mut self, offset: u64, ts: u64) -> Option<u64> {
        (ts >= self.target).then_some(offset)
    }
}

/// Most points a [`TimeIndex`] keeps (16 bytes each: 64 KiB at most per
/// file); past it, neighbouring intervals merge and the spacing doubles.
pub const MAX_TIME_POINTS: usize = 4096;

/// A sparse time index of one segment: the records cut into intervals of
/// about `spacing` bytes, each kept as its first record's position and the
/// running maximum of timestamps through its end — 16 bytes an interval,
/// at most [`MAX_TIME_POINTS`]. The running maximum never decreases, so
/// the one interval holding the first record at or after a time is found by
/// a binary search ([`TimeIndex::first_reaching`]), and a seek scans only it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeIndex {
    /// `(first record's position, running max through the interval's end)`.
    points: Vec<(u64, u64)>,
    spacing: u64,
}

impl TimeIndex {
    /// An empty index cutting intervals every `spacing` bytes (at least 1).
    #[must_use]
    pub fn new(spacing: u64) -> Self {
        Self { points: Vec::new(), spacing: spacing.max(1) }
    }

    /// Takes the next intact record (in offset order): it starts at
    /// `position` and carries timestamp `ts`.
    pub fn record(&mut self, position: u64, ts: u64) {
        let start_new = self.points.last().is_none_or(|&(start, _)| position >= start.saturating_add(self.spacing));
        if start_new {
            if self.points.len() >= MAX_TIME_POINTS {
                self.thin();
            }
            let max = self.max().unwrap_or(0);
            self.points.push((position, max));
        }
        if let Some(last) = self.points.last_mut() {
            last.1 = last.1.max(ts);
        }
    }

    /// Merges neighbouring intervals: the first's start, the second's end.
    fn thin(&mut self) {
        let merged: Vec<(u64, u64)> = self.points.chunks(2).filter_map(|pair| Some((pair.first()?.0, pair.last()?.1))).collect();
        self.points = merged;
        self.spacing = self.spacing.saturating_mul(2);
    }

    /// Where to scan from for the first record at or after `target`: the
    /// start of the one interval every record before which is below
    /// `target` and which holds a record that is not. `None`: no record
    /// taken so far reaches `target`.
    #[must_use]
    pub fn first_reaching(&self, target: u64) -> Option<u64> {
        let i = self.points.partition_point(|&(_, max)| max < target);
        self.points.get(i).map(|&(start, _)| start)
    }

    /// The greatest timestamp taken so far.
    #[must_use]
    pub fn max(&self) -> Option<u64> {
        self.points.last().map(|&(_, max)| max)
    }

    /// Intervals kept.
    #[must_use]
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether no record was taken.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The spacing of intervals now (it doubles each time the index thins):
    /// a seek walks about this many bytes past the interval's start.
    #[must_use]
    pub fn spacing(&self) -> u64 {
        self.spacing
    }

    /// Bytes the index holds: 16 an interval.
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.points.len() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (no dependency): xorshift64*.
    fn rng(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed | 1;
        move |n| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n.max(1)
        }
    }

    fn linear(records: &[u64], target: u64) -> Option<u64> {
        records.iter().position(|&ts| ts >= target).map(|i| i as u64)
    }

    #[test]
    fn the_time_index_finds_what_a_linear_scan_finds() {
        for seed in 1..400 {
            let mut r = rng(seed);
            let n = 1 + r(3000) as usize;
            // Timestamps that mostly rise, step back now and then, repeat,
            // and sometimes sit at the extremes.
            let mut ts = r(1000);
            let records: Vec<u64> = (0..n)
                .map(|_| {
                    ts = match r(10) {
                        0 => ts.saturating_sub(r(500)),
                        1 => ts,
                        2 if r(20) == 0 => u64::MAX,
                        3 if r(20) == 0 => 0,
                        _ => ts.saturating_add(r(50)),
                    };
                    ts
                })
                .collect();
            // Records of 1 to 300 bytes; intervals of 1 byte to 20 KiB.
            let mut positions = Vec::with_capacity(n);
            let mut at = 32u64;
            for _ in 0..n {
                positions.push(at);
                at += 1 + r(300);
            }
            let mut index = TimeIndex::new(1 + r(20_000));
            for (&p, &t) in positions.iter().zip(&records) {
                index.record(p, t);
            }
            assert!(index.len() <= MAX_TIME_POINTS && index.heap_bytes() <= 16 * MAX_TIME_POINTS);
            for _ in 0..50 {
                let target = match r(4) {
                    0 => records[r(n as u64) as usize],
                    1 => u64::MAX,
                    2 => 0,
                    _ => r(2000),
                };
                let want = linear(&records, target);
                let got = index.first_reaching(target).and_then(|start| {
                    let mut seek = TimeSeek::new(target);
                    let from = positions.partition_point(|&p| p < start);
                    (from..n).find_map(|i| seek.record(i as u64, records[i]))
                });
                assert_eq!(got, want, "seed {seed}, target {target}");
                // The answer lies in the interval found: every record before its start is below target.
                if let Some(start) = index.first_reaching(target) {
                    assert!(positions.iter().zip(&records).all(|(&p, &t)| p >= start || t < target));
                }
            }
        }
    }

    #[test]
    fn a_full_index_thins_and_keeps_its_bound() {
        let mut index = TimeIndex::new(1);
        for i in 0..(3 * MAX_TIME_POINTS as u64) {
            index.record(i * 10, i);
        }
        assert!(index.len() <= MAX_TIME_POINTS);
        assert_eq!(index.first_reaching(0), Some(0));
        assert_eq!(index.max(), Some(3 * MAX_TIME_POINTS as u64 - 1));
        assert_eq!(index.first_reaching(u64::MAX), None);
    }

    #[test]
    fn spans_join_in_offset_order() {
        let mut a = TimeSpan::of(10);
        a.add(5);
        let b = TimeSpan::of(7);
        let j = TimeSpan::join([a, b]).unwrap();
        assert_eq!((j.first, j.last, j.min, j.max), (10, 7, 5, 10));
        assert!(j.out_of_order() && !TimeSpan::of(3).out_of_order());
        assert_eq!(TimeSpan::join([]), None);
    }
}
