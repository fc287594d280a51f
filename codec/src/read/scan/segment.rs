//! The segment scanner: every record, every finding, in bounded memory.
//!
//! Damage handling:
//! - segment header bad magic, version or flags: reported, the rest of the
//!   file is not interpreted (its layout is unknown); checks run in the
//!   spec's table order, so a short file with a foreign magic is
//!   `SegmentMagic`;
//! - segment header checksum bad: reported, records are still scanned so a
//!   person can see them (the base offset is then taken from the first
//!   record), but every finding in the segment is `never` repairable;
//! - the newest segment shorter than its header, holding a prefix of one:
//!   an unfinished creation — a note, not damage (see
//!   [`is_unfinished_header`]);
//! - record checksum bad: the length verified, so the scan steps to the next
//!   record;
//! - record header checksum bad, or a verified length over the limit: the
//!   length is not trusted, so the scan searches forward, byte by byte, for
//!   the next position whose 28 bytes verify as a header and whose offset
//!   fits; the skipped bytes are the finding's range;
//! - the file ends inside a record: `Truncated` (a note instead when a writer
//!   holds the shard: the record may be in flight);
//! - offsets ascend by exactly 1: after a record at `u64::MAX` every record
//!   is `OffsetOutOfOrder`, and resynchronisation finds nothing to resume at.

use alloc::format;
use alloc::vec::Vec;

use super::{Findings, Item, ScanContext, Sink};
use crate::format::be;
use crate::format::file_name::describe_magic;
use crate::format::record::{
    decode_record_header, ExpectedOffset, RecordHeader, CHECKSUM_AT, HEADER_CRC_AT, OFFSET_AT, PAYLOAD_LEN_AT, RECORD_HEADER_LEN,
    TIMESTAMP_AT,
};
use crate::format::segment_header::{is_unfinished_header, SegmentHeader, SEGMENT_HEADER_LEN};
use crate::read::time::TimeSpan;
use crate::verdict::corruption::{CorruptionKind, Finding};
use crate::verdict::repair::{repair_verdict, Place, TailDamage};
use crate::MAX_PAYLOAD_BYTES;

/// What became of a record whose header verified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordStatus {
    /// Both checksums verified and the offset is the expected one.
    Intact,
    /// Both checksums verified but the offset is not the expected one.
    OutOfOrder,
    /// The header verified but the payload checksum did not.
    ChecksumMismatch,
    /// The header verified but the file ends inside the payload (emitted at
    /// the end of the scan, so views can label the torn record's fields).
    Torn,
}

impl RecordStatus {
    /// Whether the scanner reports a finding over this record (every status but [`RecordStatus::Intact`]).
    #[must_use]
    pub fn is_damaged(self) -> bool {
        self != Self::Intact
    }

    /// The verdict in words, for a view that marks a record's bytes.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::Intact => "intact",
            Self::OutOfOrder => "its offset is out of order",
            Self::ChecksumMismatch => "its payload checksum failed",
            Self::Torn => "torn: the file ends inside it",
        }
    }
}

/// A record whose header verified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecordItem {
    /// Byte position of the record's first byte.
    pub position: u64,
    /// Its verified header.
    pub header: RecordHeader,
    /// Whether its payload and offset checked out.
    pub status: RecordStatus,
}

impl RecordItem {
    /// Exclusive end of the record.
    #[must_use]
    pub fn end(&self) -> u64 {
        self.position + self.header.record_len()
    }
}

/// What a whole segment scan found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentSummary {
    /// The header, when it decoded.
    pub header: Option<SegmentHeader>,
    /// Bytes scanned.
    pub size: u64,
    /// Records whose both checksums verified (including those after a resync).
    pub records: u64,
    /// Offset of the first such record.
    pub first_offset: Option<u64>,
    /// Offset of the last such record.
    pub last_offset: Option<u64>,
    /// The producer timestamps of those records (first, last, least, greatest).
    pub time: Option<TimeSpan>,
    /// Byte position just past the last record before the first finding in
    /// the records area: what recovery keeps when it cuts a tail.
    pub clean_prefix_end: u64,
    /// Findings (final verdicts) and notes.
    pub findings: Findings,
    /// The file is shorter than a segment header and holds a prefix of one,
    /// in the newest segment: an unfinished creation, not damage.
    pub unfinished: bool,
    /// Bytes past the last whole record that a live writer may still be
    /// writing (reported as a note, not a finding).
    pub in_flight_bytes: u64,
    /// Each finding's verdict were this segment the newest (the same as
    /// `findings` when it was scanned as the newest): recovery judges the
    /// segment before an abandoned newest one as the newest
    /// ([`SegmentSummary::judge_as_newest`]).
    pub as_newest: Vec<crate::Repair>,
}

impl SegmentSummary {
    /// Takes the verdicts this segment's findings get as the shard's newest
    /// segment: recovery removes every newer one (a creation or a rollover
    /// that never took effect, [`crate::shard::tail::abandoned_tail`]),
    /// so its tail is the log's tail.
    pub fn judge_as_newest(&mut self) {
        for (f, r) in self.findings.findings.iter_mut().zip(&self.as_newest) {
            f.repair = *r;
        }
    }

    /// The offset the log would assign next, as far as this segment tells.
    #[must_use]
    pub fn next_offset(&self) -> Option<u64> {
        match (self.last_offset, self.header) {
            (Some(last), _) => last.checked_add(1),
            (None, Some(h)) => Some(h.base_offset),
            (None, None) => None,
        }
    }

    /// Where this segment tells the log ends, for judging the segment after
    /// it: [`Self::next_offset`], but `None` when its header was rejected —
    /// records scanned behind a header that does not verify tell no end.
    #[must_use]
    pub fn told_end(&self) -> Option<u64> {
        self.header.and(self.next_offset())
    }

    /// Whether its records area holds damage at or past its clean prefix:
    /// a segment whose tail is damaged may have lost the offsets up to the
    /// next segment's base ([`crate::shard::tail::discontinuity`]).
    #[must_use]
    pub fn tail_damaged(&self) -> bool {
        let header_len = crate::format::segment_header::SEGMENT_HEADER_LEN as u64;
        self.findings.findings.iter().any(|f| f.position() >= self.clean_prefix_end && f.position() >= header_len)
    }
}

#[derive(Debug)]
enum State {
    Header,
    RecordHeader,
    Payload { header: RecordHeader, remaining: u64, hasher: crc32fast::Hasher, out_of_order: Option<CorruptionKind> },
    Resync { start: u64, kind: CorruptionKind, offset: Option<u64> },
    Stopped,
}

/// Scans one segment file fed in chunks. See the module doc.
#[derive(Debug)]
pub struct SegmentScanner {
    ctx: ScanContext,
    state: State,
    /// Bytes of the structure in progress; starts at file position `at`.
    buf: Vec<u8>,
    at: u64,
    total: u64,
    header: Option<SegmentHeader>,
    /// The header failed its checksum: nothing in the segment is repairable.
    header_rejected: bool,
    /// Offset the next record should carry.
    expected: ExpectedOffset,
    /// After a resync the expected offset is only a lower bound.
    resynced: bool,
    records: u64,
    first_offset: Option<u64>,
    last_offset: Option<u64>,
    time: Option<TimeSpan>,
    last_intact_start: Option<u64>,
    clean_prefix_end: Option<u64>,
    findings: Findings,
    /// A CRC state with nothing hashed yet, copied per record (cheaper than
    /// `Hasher::new`, which detects CPU features each time).
    fresh_crc: crc32fast::Hasher,
}

impl SegmentScanner {
    /// A scanner for one segment file.
    #[must_use]
    pub fn new(ctx: ScanContext) -> Self {
        Self {
            ctx,
            state: State::Header,
            buf: Vec::with_capacity(SEGMENT_HEADER_LEN),
            at: 0,
            total: 0,
            header: None,
            header_rejected: false,
            expected: ExpectedOffset::Any,
            resynced: false,
            records: 0,
            first_offset: None,
            last_offset: None,
            time: None,
            last_intact_start: None,
            clean_prefix_end: None,
            findings: Findings::default(),
            fresh_crc: crc32fast::Hasher::new(),
        }
    }

    /// A scanner that resumes at `position`, the end of a record with offset
    /// `previous_offset` that an earlier scan of the same file met (a record
    /// boundary: what follows is read as a record header). The records it
    /// finds from there are, item for item, the ones the full scan found:
    /// between records the scanner carries nothing but where it is and the
    /// offset it expects. The inspector re-reads a window of a large file
    /// this way instead of keeping every record it met.
    #[must_use]
    pub fn resume_after(ctx: ScanContext, position: u64, previous_offset: u64) -> Self {
        let mut s = Self::new(ctx);
        s.buf.clear();
        s.state = State::RecordHeader;
        s.at = position;
        s.total = position;
        s.expected = ExpectedOffset::after(previous_offset);
        s
    }

    /// Says a writer holds the shard open after all (probed again when the
    /// bytes are read: one may have started during the scan). Takes effect
    /// at [`Self::finish`], where a tail ending inside a record is judged.
    pub fn set_writer_live(&mut self, live: bool) {
        self.ctx.writer_live = live;
    }

    /// Bytes fed so far.
    #[must_use]
    pub fn bytes_scanned(&self) -> u64 {
        self.total
    }

    /// Records whose checksums verified so far.
    #[must_use]
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Feeds the next chunk of the file.
    pub fn feed(&mut self, mut chunk: &[u8], sink: &mut impl Sink) {
        self.total = self.total.saturating_add(chunk.len() as u64);
        while !chunk.is_empty() {
            // Whole intact records inside the chunk take the fast path (no
            // copy, one running CRC, items built only for a sink that looks);
            // everything else — a record split across chunks, damage, a
            // resync — goes through the state machine below, one step at a time.
            chunk = self.intact_records(chunk, sink);
            if chunk.is_empty() {
                break;
            }
            chunk = self.step(chunk, sink);
        }
    }

    /// Verifies the whole records at the start of `chunk` while each is
    /// intact and in order, and returns the rest (from the first record that
    /// is not, or does not fit). Equivalent to the state machine for those
    /// records, item for item.
    ///
    /// One CRC state serves both checksums: `header_crc` covers bytes 0..20
    /// and `checksum` covers bytes 0..24 then the payload, so the state after
    /// byte 20 is finalised (a copy) for the first and carried on for the second.
    #[inline]
    fn intact_records<'c>(&mut self, mut chunk: &'c [u8], sink: &mut impl Sink) -> &'c [u8] {
        if !matches!(self.state, State::RecordHeader) || !self.buf.is_empty() {
            return chunk;
        }
        while let Some(head) = chunk.get(..RECORD_HEADER_LEN) {
            let mut crc = self.fresh_crc.clone();
            crc.update(be::slice(head, 0, HEADER_CRC_AT));
            if crc.clone().finalize() != be::u32_at(head, HEADER_CRC_AT) {
                break;
            }
            let payload_len = be::u32_at(head, PAYLOAD_LEN_AT);
            let record_len = RECORD_HEADER_LEN + payload_len as usize;
            let offset = be::u64_at(head, OFFSET_AT);
            let in_order = match self.expected {
                ExpectedOffset::Exactly(e) => offset == e || (self.resynced && offset > e),
                ExpectedOffset::Any => true,
                ExpectedOffset::NoneLeft => false,
            };
            let (Some(payload), true, true) = (chunk.get(RECORD_HEADER_LEN..record_len), payload_len <= MAX_PAYLOAD_BYTES, in_order) else {
                break;
            };
            crc.update(be::slice(head, HEADER_CRC_AT, CHECKSUM_AT));
            crc.update(payload);
            let checksum = be::u32_at(head, CHECKSUM_AT);
            if crc.finalize() != checksum {
                break;
            }
            let position = self.at;
            self.resynced = false;
            self.records += 1;
            self.first_offset.get_or_insert(offset);
            self.last_offset = Some(offset);
            TimeSpan::extend(&mut self.time, be::u64_at(head, TIMESTAMP_AT));
            self.last_intact_start = Some(position);
            self.expected = ExpectedOffset::after(offset);
            self.at = position + record_len as u64;
            let header = RecordHeader {
                payload_len,
                offset,
                timestamp_micros: be::u64_at(head, TIMESTAMP_AT),
                header_crc: be::u32_at(head, HEADER_CRC_AT),
                checksum,
            };
            sink.item(Item::Record(RecordItem { position, header, status: RecordStatus::Intact }));
            chunk = chunk.get(record_len..).unwrap_or_default();
        }
        chunk
    }

    /// One step of the state machine over the start of `chunk`; returns the rest.
    fn step<'c>(&mut self, chunk: &'c [u8], sink: &mut dyn Sink) -> &'c [u8] {
        {
            match &mut self.state {
                State::Header => self.fill(chunk, SEGMENT_HEADER_LEN, sink, Self::on_segment_header),
                State::RecordHeader => self.fill(chunk, RECORD_HEADER_LEN, sink, Self::on_record_header),
                State::Payload { remaining, hasher, .. } => {
                    let take = usize::try_from(*remaining).unwrap_or(usize::MAX).min(chunk.len());
                    let (now, rest) = chunk.split_at(take);
                    hasher.update(now);
                    *remaining -= take as u64;
                    if *remaining == 0 {
                        self.on_record_end(sink);
                    }
                    rest
                }
                State::Resync { .. } => self.resync(chunk, sink),
                State::Stopped => &[],
            }
        }
    }

    /// Takes bytes into `buf` until it holds `len`, then calls `done`.
    fn fill<'c>(&mut self, chunk: &'c [u8], len: usize, sink: &mut dyn Sink, done: fn(&mut Self, &mut dyn Sink)) -> &'c [u8] {
        let take = len.saturating_sub(self.buf.len()).min(chunk.len());
        let (now, rest) = chunk.split_at(take);
        self.buf.extend_from_slice(now);
        if self.buf.len() == len {
            done(self, sink);
        }
        rest
    }

    fn finding(&mut self, kind: CorruptionKind, start: u64, end: u64, offset: Option<u64>, sink: &mut dyn Sink) {
        if self.clean_prefix_end.is_none() && start >= SEGMENT_HEADER_LEN as u64 {
            self.clean_prefix_end = Some(start);
        }
        // Provisional: as if the file ended where this finding does, with no intact record after it.
        let place = self.place(&kind, start, end, end, false);
        let repair = repair_verdict(&kind, place);
        self.findings.push(Finding { kind, site: self.ctx.site(start), end, offset, repair }, sink);
    }

    fn place(&self, kind: &CorruptionKind, start: u64, end: u64, file_len: u64, intact_after: bool) -> Place {
        self.place_as(self.ctx.newest_segment, kind, start, end, file_len, intact_after)
    }

    /// [`Self::place`] in the newest segment or another.
    fn place_as(&self, newest: bool, kind: &CorruptionKind, start: u64, end: u64, file_len: u64, intact_after: bool) -> Place {
        if start < SEGMENT_HEADER_LEN as u64 {
            Place::SegmentHeader
        } else if self.header_rejected {
            Place::RejectedSegment
        } else if newest && !intact_after {
            Place::Tail(TailDamage::of(kind, start, end, file_len))
        } else {
            Place::Elsewhere
        }
    }

    fn on_segment_header(&mut self, sink: &mut dyn Sink) {
        match SegmentHeader::decode(&self.buf) {
            Ok((header, _)) => {
                if header.reserved != 0 {
                    self.findings.note(format!(
                        "segment header reserved bytes are {:#010x}, expected 0 (not covered by header_crc)",
                        header.reserved
                    ));
                }
                self.header = Some(header);
                self.expected = ExpectedOffset::Exactly(header.base_offset);
                sink.item(Item::SegmentHeader(header));
            }
            Err(defect) => {
                let fatal = !matches!(defect.kind, CorruptionKind::SegmentHeaderChecksum { .. });
                if let CorruptionKind::SegmentMagic { .. } = defect.kind {
                    self.findings.note(format!("the first bytes look like {}", describe_magic(&self.buf)));
                }
                self.finding(defect.kind, 0, defect.end as u64, None, sink);
                if fatal {
                    self.findings.note("the rest of the file was not interpreted: its layout is unknown".into());
                    self.state = State::Stopped;
                    self.buf.clear();
                    return;
                }
                self.header_rejected = true;
                self.findings.note(
                    "records were scanned despite the rejected header (offsets are taken from the first record); \
                     nothing in this segment is repairable"
                        .into(),
                );
            }
        }
        self.buf.clear();
        self.at = SEGMENT_HEADER_LEN as u64;
        self.state = State::RecordHeader;
    }

    fn on_record_header(&mut self, sink: &mut dyn Sink) {
        match decode_record_header(&self.buf) {
            Ok(header) => {
                let out_of_order = match self.expected {
                    // After a resync the expected offset is a lower bound: records were lost.
                    ExpectedOffset::Exactly(e) if self.resynced && header.offset > e => None,
                    expected => expected.check(header.offset).err(),
                };
                self.resynced = false;
                let hasher = RecordHeader::checksum_hasher(&self.buf);
                self.buf.clear();
                self.state = State::Payload { header, remaining: u64::from(header.payload_len), hasher, out_of_order };
                if header.payload_len == 0 {
                    self.on_record_end(sink);
                }
            }
            Err((kind, header)) => {
                let offset = header.map(|h| h.offset);
                self.state = State::Resync { start: self.at, kind, offset };
                self.slide();
            }
        }
    }

    fn on_record_end(&mut self, sink: &mut dyn Sink) {
        let State::Payload { header, hasher, out_of_order, .. } = core::mem::replace(&mut self.state, State::RecordHeader) else {
            return;
        };
        let position = self.at;
        let end = position + header.record_len();
        let computed = hasher.finalize();
        let status = if computed != header.checksum {
            self.finding(CorruptionKind::RecordChecksum { stored: header.checksum, computed }, position, end, Some(header.offset), sink);
            RecordStatus::ChecksumMismatch
        } else {
            self.records += 1;
            self.first_offset.get_or_insert(header.offset);
            self.last_offset = Some(header.offset);
            TimeSpan::extend(&mut self.time, header.timestamp_micros);
            self.last_intact_start = Some(position);

            match out_of_order {
                Some(kind) => {
                    self.finding(kind, position, end, Some(header.offset), sink);
                    RecordStatus::OutOfOrder
                }
                None => RecordStatus::Intact,
            }
        };
        self.expected = ExpectedOffset::after(header.offset);
        sink.item(Item::Record(RecordItem { position, header, status }));
        self.at = end;
    }

    /// Drops the first byte of the resync window.
    fn slide(&mut self) {
        if !self.buf.is_empty() {
            self.buf.remove(0);
            self.at += 1;
        }
    }

    /// Whether the 28 bytes `window`, at file position `position`, are a
    /// header to resume at (the damage began at `start`).
    fn candidate_at(&self, window: &[u8], position: u64, start: u64) -> bool {
        // Cheap filters first: a length within the limit, an offset that fits.
        let len = be::u32_at(window, 0);
        if len > MAX_PAYLOAD_BYTES {
            return false;
        }
        let offset = be::u64_at(window, crate::format::record::OFFSET_AT);
        match self.expected {
            ExpectedOffset::Exactly(e) => {
                let most_lost = (position - start) / RECORD_HEADER_LEN as u64;
                if offset < e || offset > e.saturating_add(most_lost) {
                    return false;
                }
            }
            // Nothing can follow a record at u64::MAX: no header resumes the chain.
            ExpectedOffset::NoneLeft => return false,
            ExpectedOffset::Any => {}
        }
        decode_record_header(window).is_ok()
    }

    /// Resumes at the 28-byte header now in `buf` (at `self.at`).
    fn resume(&mut self, sink: &mut dyn Sink) {
        if let State::Resync { start, kind, offset } = core::mem::replace(&mut self.state, State::RecordHeader) {
            let at = self.at;
            let offset = offset.or_else(|| self.one_lost_offset());
            self.finding(kind, start, at, offset, sink);
        }
        self.resynced = true;
        self.on_record_header(sink);
    }

    /// The damage's place by its neighbours' offsets, when its own header
    /// cannot say it: the one offset missing between the record before it
    /// and the header the scan resumes at (in `buf`) — the record whose
    /// header was damaged. `None` when none is missing (bytes that hold no
    /// record) or several are (the damage's records cannot be told apart).
    fn one_lost_offset(&self) -> Option<u64> {
        let ExpectedOffset::Exactly(expected) = self.expected else { return None };
        let resumed = be::u64_at(self.buf.get(..RECORD_HEADER_LEN)?, crate::format::record::OFFSET_AT);
        (resumed.checked_sub(expected) == Some(1)).then_some(expected)
    }

    /// Searches `chunk` (after the bytes carried in `buf`, which start at
    /// `self.at`) for the next header that verifies. Windows are checked in
    /// file order; a run of zero bytes is skipped (an all-zero window never
    /// verifies: the CRC of zeros is not zero), 64 bytes at a time, so a
    /// sparse or zero-filled file costs a pass over its bytes rather than a
    /// CRC per byte (the scan bench's `zeros` row). Fewer than 28 unchecked bytes are
    /// carried to the next chunk.
    fn resync<'c>(&mut self, chunk: &'c [u8], sink: &mut dyn Sink) -> &'c [u8] {
        let State::Resync { start, .. } = self.state else { return chunk };
        let carried = self.buf.len();
        // Windows that begin in the carried bytes and end in this chunk.
        for j in 0..carried {
            let need = RECORD_HEADER_LEN - (carried - j);
            let Some(head) = chunk.get(..need) else {
                // Not enough bytes yet: carry from here.
                self.buf.drain(..j);
                self.at += j as u64;
                self.buf.extend_from_slice(chunk);
                return &[];
            };
            let mut window = [0u8; RECORD_HEADER_LEN];
            let (old, new) = window.split_at_mut(carried - j);
            old.copy_from_slice(self.buf.get(j..).unwrap_or_default());
            new.copy_from_slice(head);
            if self.candidate_at(&window, self.at + j as u64, start) {
                self.buf.clear();
                self.buf.extend_from_slice(&window);
                self.at += j as u64;
                self.resume(sink);
                return chunk.get(need..).unwrap_or(&[]);
            }
        }
        // Windows inside this chunk.
        let base = self.at + carried as u64;
        let mut i = 0usize;
        while let Some(window) = chunk.get(i..i + RECORD_HEADER_LEN) {
            if window.first() == Some(&0) {
                let run = zero_run(chunk.get(i..).unwrap_or_default());
                if run >= RECORD_HEADER_LEN {
                    i += run - (RECORD_HEADER_LEN - 1);
                    continue;
                }
            }
            if self.candidate_at(window, base + i as u64, start) {
                self.buf.clear();
                self.buf.extend_from_slice(window);
                self.at = base + i as u64;
                self.resume(sink);
                return chunk.get(i + RECORD_HEADER_LEN..).unwrap_or(&[]);
            }
            i += 1;
        }
        // Carry the unchecked tail (fewer than 28 bytes).
        self.buf.clear();
        self.buf.extend_from_slice(chunk.get(i..).unwrap_or_default());
        self.at = base + i as u64;
        &[]
    }

    /// Ends the scan: reports what the end of the file cut short and settles
    /// every verdict now that it is known which findings have intact records
    /// after them.
    #[must_use]
    pub fn finish(self, sink: &mut impl Sink) -> SegmentSummary {
        self.finish_dyn(sink)
    }

    fn finish_dyn(mut self, sink: &mut dyn Sink) -> SegmentSummary {
        let total = self.total;
        let mut unfinished = false;
        let mut in_flight_bytes = 0;
        match core::mem::replace(&mut self.state, State::Stopped) {
            State::Header if self.ctx.newest_segment && is_unfinished_header(&self.buf) => {
                unfinished = true;
                self.findings.note(format!(
                    "unfinished creation: the newest segment holds {total} of its header's {SEGMENT_HEADER_LEN} bytes \
                     and no record (a header is fsynced before any record may claim to live here); \
                     recovery moves these bytes to evidence and removes the file"
                ));
            }
            State::Header => {
                // Short of a header: the first fixed field that disagrees, or `Truncated`.
                let (kind, end) = match SegmentHeader::decode(&self.buf) {
                    Err(defect) => (defect.kind, defect.end as u64),
                    Ok(_) => (CorruptionKind::Truncated { needed: SEGMENT_HEADER_LEN as u64, available: total }, total),
                };
                if let CorruptionKind::SegmentMagic { .. } = kind {
                    self.findings.note(format!("the first bytes look like {}", describe_magic(&self.buf)));
                }
                self.finding(kind, 0, end, None, sink);
            }
            State::RecordHeader if !self.buf.is_empty() => {
                let kind = CorruptionKind::Truncated { needed: RECORD_HEADER_LEN as u64, available: self.buf.len() as u64 };
                let at = self.at;
                in_flight_bytes = self.tail_in_flight(kind, at, total, None, sink);
            }
            State::Payload { header, .. } => {
                let kind = CorruptionKind::Truncated { needed: header.record_len(), available: total - self.at };
                let at = self.at;
                in_flight_bytes = self.tail_in_flight(kind, at, total, Some(header.offset), sink);
                sink.item(Item::Record(RecordItem { position: at, header, status: RecordStatus::Torn }));
            }
            State::Resync { start, kind, offset } => self.finding(kind, start, total, offset, sink),
            State::RecordHeader | State::Stopped => {}
        }
        self.settle_verdicts(total);
        let as_newest = self.verdicts_as_newest(total);
        let clean_prefix_end = match (self.clean_prefix_end, self.header) {
            (Some(end), _) => end,
            (None, Some(_)) => total - in_flight_bytes,
            (None, None) => 0,
        };
        SegmentSummary {
            header: self.header,
            size: total,
            records: self.records,
            first_offset: self.first_offset,
            last_offset: self.last_offset,
            time: self.time,
            clean_prefix_end,
            as_newest,
            findings: self.findings,
            unfinished,
            in_flight_bytes,
        }
    }

    /// The file ends inside the record at `at`. With a live writer and no
    /// damage before it, that is a record in flight (a note; returns its
    /// bytes); otherwise a `Truncated` finding (returns 0).
    fn tail_in_flight(&mut self, kind: CorruptionKind, at: u64, total: u64, offset: Option<u64>, sink: &mut dyn Sink) -> u64 {
        let clean_so_far = self.findings.findings.is_empty() && !self.header_rejected && self.header.is_some();
        if self.ctx.writer_live && self.ctx.newest_segment && clean_so_far {
            self.findings.note(format!(
                "shard is open for writing; the tail may be in flight: the {} bytes from byte {at} are a record the writer \
                 has not finished ({kind})",
                total - at
            ));
            return total - at;
        }
        self.finding(kind, at, total, offset, sink);
        0
    }

    /// Each finding's final verdict were this the newest segment.
    fn verdicts_as_newest(&self, file_len: u64) -> Vec<crate::Repair> {
        let last_intact = self.last_intact_start;
        let verdict = |f: &Finding| {
            let intact_after = last_intact.is_some_and(|p| p > f.position());
            repair_verdict(&f.kind, self.place_as(true, &f.kind, f.position(), f.end, file_len, intact_after))
        };
        self.findings.findings.iter().map(verdict).collect()
    }

    /// Final verdicts, now that the file's length is known and which
    /// findings have intact records after them.
    fn settle_verdicts(&mut self, file_len: u64) {
        let last_intact = self.last_intact_start;
        let places: Vec<Place> = self
            .findings
            .findings
            .iter()
            .map(|f| {
                let intact_after = last_intact.is_some_and(|p| p > f.position());
                self.place(&f.kind, f.position(), f.end, file_len, intact_after)
            })
            .collect();
        for (f, place) in self.findings.findings.iter_mut().zip(places) {
            f.repair = repair_verdict(&f.kind, place);
        }
    }
}

/// Scans a whole segment held in memory (convenience for tests and small files).
#[must_use]
pub fn scan_segment(bytes: &[u8], ctx: ScanContext) -> SegmentSummary {
    let mut scanner = SegmentScanner::new(ctx);
    scanner.feed(bytes, &mut ());
    scanner.finish(&mut ())
}

/// How many bytes `bytes` starts with are zero. Whole 64-byte blocks are
/// OR-reduced (the compiler vectorises the fold), the rest byte by byte.
fn zero_run(bytes: &[u8]) -> usize {
    let mut n = 0;
    for block in bytes.chunks_exact(64) {
        if block.iter().fold(0u8, |acc, b| acc | b) != 0 {
            break;
        }
        n += 64;
    }
    n + bytes.get(n..).unwrap_or_default().iter().position(|b| *b != 0).unwrap_or(bytes.len() - n)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing)]
    use super::zero_run;
    use alloc::vec;

    #[test]
    fn zero_run_counts_the_leading_zeros_across_block_edges() {
        for len in 0..200usize {
            assert_eq!(zero_run(&vec![0u8; len]), len);
            for at in 0..len {
                let mut bytes = vec![0u8; len];
                bytes[at] = 0x80;
                assert_eq!(zero_run(&bytes), at, "len {len}, non-zero at {at}");
            }
        }
    }
}
