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
//! interval is below T ([`RunningMax`]). Inside it a [`TimeSeek`] scans.
//! Only intact records count (both checksums verified): a damaged record's
//! timestamp is not believed, so a seek passes over it as over its bytes.
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

/// The running maximum of timestamps at the end of each interval of a file
/// (an interval: the records from one sparse-index point to the next), so a
/// seek finds the one interval to scan by a binary search. Eight bytes an
/// interval; the caller bounds the number of intervals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunningMax {
    ends: Vec<u64>,
    current: Option<u64>,
}

impl RunningMax {
    /// An empty one.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the next interval (the first call starts the first).
    pub fn start_interval(&mut self) {
        if let Some(max) = self.current {
            self.ends.push(max);
        }
        self.current = Some(self.ends.last().copied().unwrap_or(0));
    }

    /// Takes an intact record of the current interval.
    pub fn record(&mut self, ts: u64) {
        let max = self.current.get_or_insert_with(|| self.ends.last().copied().unwrap_or(0));
        *max = (*max).max(ts);
    }

    /// Intervals so far (the current one included).
    #[must_use]
    pub fn len(&self) -> usize {
        self.ends.len() + usize::from(self.current.is_some())
    }

    /// Whether no interval was started.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The interval holding the first record at or after `target`: every
    /// record before it is below `target`, and it holds one that is not.
    /// `None`: no record of these intervals reaches `target`.
    #[must_use]
    pub fn first_reaching(&self, target: u64) -> Option<usize> {
        let i = self.ends.partition_point(|&max| max < target);
        if i < self.ends.len() {
            return Some(i);
        }
        self.current.filter(|&max| max >= target).map(|_| self.ends.len())
    }

    /// The greatest timestamp so far.
    #[must_use]
    pub fn max(&self) -> Option<u64> {
        self.current.or_else(|| self.ends.last().copied())
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
    fn the_running_max_finds_the_interval_a_linear_scan_would_reach() {
        for seed in 1..400 {
            let mut r = rng(seed);
            let n = 1 + r(300) as usize;
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
            let every = 1 + r(20) as usize;
            let mut index = RunningMax::new();
            for (i, &t) in records.iter().enumerate() {
                if i % every == 0 {
                    index.start_interval();
                }
                index.record(t);
            }
            for _ in 0..50 {
                let target = match r(4) {
                    0 => records[r(n as u64) as usize],
                    1 => u64::MAX,
                    2 => 0,
                    _ => r(2000),
                };
                let want = linear(&records, target);
                let got = index.first_reaching(target).and_then(|k| {
                    let mut seek = TimeSeek::new(target);
                    records.iter().enumerate().skip(k * every).take(every).find_map(|(i, &t)| seek.record(i as u64, t))
                });
                assert_eq!(got, want, "seed {seed}, target {target}, every {every}");
            }
        }
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
