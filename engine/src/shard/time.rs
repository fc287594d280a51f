//! From a time to an offset: [`Shard::offset_for_time`], by the codec's rule
//! (`felix_codec::read::time`: the first offset whose timestamp is ≥ T).
//!
//! Each segment's time index ([`TimeIndex`]: an interval's first record's
//! position and the running maximum of timestamps through it, 16 bytes an
//! interval, at most `MAX_TIME_POINTS`) is built the first time a seek
//! reaches the segment, by a walk over its record headers, and extended by
//! the bytes appended since on later seeks: opening a shard reads nothing
//! for it. A seek then walks the one interval the index names. Every index
//! is dropped when a truncation changes the log under it, and a segment
//! retention deleted takes its index with it.

use std::collections::{BTreeMap, BTreeSet};

use felix_codec::format::record::ExpectedOffset;
use felix_codec::format::segment_header::SEGMENT_HEADER_LEN;
use felix_codec::read::reader::ChunkedReader;
use felix_codec::read::time::{TimeIndex, TimeSeek};

use super::walk::{walk, Flow, Seen, HEADER_CHUNK_BYTES};
use super::Shard;
use crate::error::EngineError;

/// A segment's time index and how far into the segment it reaches.
#[derive(Clone, Debug)]
pub(crate) struct SegmentTime {
    index: TimeIndex,
    /// Bytes of the segment the index covers (a record boundary).
    covered: u64,
    /// The offset the record at `covered` must carry.
    next: ExpectedOffset,
}

/// Every segment's time index, by segment id, valid for one truncation count.
#[derive(Debug, Default)]
pub(crate) struct TimeIndexes {
    segments: BTreeMap<u64, SegmentTime>,
    truncations: u64,
}

/// A segment a seek walks: `(id, base offset, readable length)`.
type Span = (u64, u64, u64);

/// Where a seek starts in one segment, its index's spacing, and the damage
/// that ended what the index covers (`Shard::reach`).
type Reach = (Option<u64>, u64, Option<EngineError>);

impl Shard {
    /// The first offset, at or after the oldest retained, whose record's
    /// timestamp is at or after `target_micros` (Kafka's `offsetsForTimes`
    /// rule: offset order, not time order, so a clock that went backwards
    /// never hides a later match); `None` when no visible record reaches it.
    /// A seek that retention overtakes (the segments it walks deleted under
    /// it) or a truncation races (segments it walks removed or cut) runs
    /// again over what is left, from the oldest record retained then, as a
    /// read does (`Shard::consistently`: up to 64 times, holding retention
    /// off from its third run), rather than answer `Trimmed` or fail on a
    /// file removed under it.
    ///
    /// # Errors
    /// `FailStopped`, IO failures, or damage met in the record headers
    /// walked; an IO error saying so when 64 seeks in a row were raced.
    pub fn offset_for_time(&self, target_micros: u64) -> Result<Option<u64>, EngineError> {
        self.consistently(|| self.seek_from(self.first_offset(), target_micros))
    }

    /// One seek over the segments from offset `first` on.
    fn seek_from(&self, first: u64, target_micros: u64) -> Result<Option<u64>, EngineError> {
        let Some((segments, end)) = self.segments_from(first)? else { return Ok(None) };
        self.forget_stale_times();
        for span in segments {
            // Damage in the headers ends what the index covers: an answer
            // before it is still found; with none, the damage is the answer.
            let (start, spacing, damage) = self.reach(span, target_micros)?;
            let Some(start) = start else {
                match damage {
                    Some(e) => return Err(e),
                    None => continue,
                }
            };
            // One interval's headers: a window about its size (a record
            // larger than it is still read whole: the reader asks for it).
            let window = usize::try_from(spacing).unwrap_or(usize::MAX).clamp(4096, HEADER_CHUNK_BYTES);
            if let Some(offset) = self.seek_in(span, (start, window), end, target_micros)? {
                return Ok(Some(offset));
            }
        }
        Ok(None)
    }

    /// Drops every time index when a truncation changed the log since they
    /// were built, and those of segments retention deleted: once a seek.
    fn forget_stale_times(&self) {
        let mut g = self.shared.lock();
        let truncations = g.truncations;
        let live: BTreeSet<u64> = g.segments.iter().map(|s| s.id).collect();
        let t = &mut g.times;
        if t.truncations != truncations {
            *t = TimeIndexes { segments: BTreeMap::new(), truncations };
        }
        t.segments.retain(|id, _| live.contains(id));
    }

    /// Where in segment `span` a seek for `target` starts (`None`: no record
    /// its time index covers reaches it), the index's spacing, and the damage
    /// that ended what the index covers. An index that covers the segment's
    /// readable length answers in place; otherwise it is built or extended
    /// to that length, or to the damage met in its headers.
    fn reach(&self, span: Span, target: u64) -> Result<Reach, EngineError> {
        let (id, base, len) = span;
        let (mut time, truncations) = {
            let g = self.shared.lock();
            let valid = g.times.truncations == g.truncations;
            match g.times.segments.get(&id).filter(|_| valid) {
                Some(t) if t.covered >= len => return Ok((t.index.first_reaching(target), t.index.spacing(), None)),
                cached => (
                    cached.cloned().unwrap_or_else(|| SegmentTime {
                        index: TimeIndex::new(self.shared.config.index_spacing_bytes),
                        covered: SEGMENT_HEADER_LEN as u64,
                        next: ExpectedOffset::Exactly(base),
                    }),
                    g.truncations,
                ),
            }
        };
        let damage = self.extend(id, len, &mut time)?;
        let reach = (time.index.first_reaching(target), time.index.spacing(), damage);
        let mut g = self.shared.lock();
        if g.times.truncations == truncations && g.truncations == truncations && g.segments.iter().any(|s| s.id == id) {
            let keep = g.times.segments.get(&id).is_none_or(|t| t.covered < time.covered);
            if keep {
                g.times.segments.insert(id, time);
            }
        }
        Ok(reach)
    }

    /// Walks segment `id`'s record headers from `time.covered` to `len`, or
    /// to the first damage, which it returns (the index covers what is before it).
    fn extend(&self, id: u64, len: u64, time: &mut SegmentTime) -> Result<Option<EngineError>, EngineError> {
        let dir = &self.shared.dir;
        let reader = ChunkedReader::headers_only(time.covered, time.next, len);
        let mut last = None;
        let walked = walk(&dir.io, &dir.log(id), len, reader, HEADER_CHUNK_BYTES, |seen| {
            if let Seen::Header(position, header) = seen {
                time.index.record(position, header.timestamp_micros);
                last = Some((position + header.record_len(), header.offset));
            }
            Flow::Continue
        })?;
        if let Some((end, offset)) = last {
            time.covered = end;
            time.next = ExpectedOffset::after(offset);
        }
        Ok(walked.defect.map(|e| self.damage(id, &e)))
    }

    /// The first record of segment `span` from byte `start` on whose
    /// timestamp reaches `target`, below offset `end`, read `window` bytes at a time.
    fn seek_in(&self, span: Span, (start, window): (u64, usize), end: u64, target: u64) -> Result<Option<u64>, EngineError> {
        let (id, _, len) = span;
        let dir = &self.shared.dir;
        let mut seek = TimeSeek::new(target);
        let mut found = None;
        let reader = ChunkedReader::headers_only(start, ExpectedOffset::Any, len);
        let walked = walk(&dir.io, &dir.log(id), len, reader, window, |seen| {
            let Seen::Header(_, header) = seen else { return Flow::Continue };
            if header.offset >= end {
                return Flow::Stop;
            }
            found = seek.record(header.offset, header.timestamp_micros);
            if found.is_some() {
                Flow::Stop
            } else {
                Flow::Continue
            }
        })?;
        match (found, walked.defect) {
            (None, Some(e)) => Err(self.damage(id, &e)),
            (found, _) => Ok(found),
        }
    }
}
