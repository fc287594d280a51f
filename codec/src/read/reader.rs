//! The strict reader: walks a segment's records from a known record boundary
//! and stops at the first problem. Recovery, the engine's reads and
//! `felix-storage dump` all use it; the scanner in [`crate::read::scan`] is its
//! never-failing sibling. Both share the decoders of [`crate::format::segment_header`]
//! and [`crate::format::record`].
//!
//! [`ChunkedReader`] is sans-IO: the caller owns the bytes. Each
//! [`ChunkedReader::step`] looks at a window of the file and answers
//! [`Step::Record`] (verified), [`Step::NeedBytes`] (read this many bytes at
//! this position — never more than one record, so never more than
//! 28 + 64 MiB, and only after the record's header verified), a
//! [`Step::Defect`], or [`Step::End`]. A length read from disk is believed
//! only after its header CRC verified and it passed the limit.
//!
//! [`SegmentReader`] is the same reader over a slice held in memory.
//!
//! # Example
//!
//! ```
//! use felix_codec::read::reader::SegmentReader;
//! use felix_codec::format::record::encode_record;
//! use felix_codec::format::segment_header::SegmentHeader;
//! let mut segment = SegmentHeader::new(5, 1).encode().to_vec();
//! encode_record(5, 1, b"a", &mut segment).unwrap();
//! encode_record(6, 1, b"b", &mut segment).unwrap();
//! let (header, records) = SegmentReader::new(&segment).unwrap();
//! let offsets: Vec<u64> = records.map(|r| r.unwrap().1.header.offset).collect();
//! assert_eq!((header.base_offset, offsets), (5, vec![5, 6]));
//! ```

use crate::format::record::{decode_header_and_crc, verify_body, ExpectedOffset, Record, RecordHeader, RECORD_HEADER_LEN};
use crate::format::segment_header::{SegmentHeader, SEGMENT_HEADER_LEN};
use crate::verdict::corruption::CorruptionKind;

/// The first problem the strict reader met.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// What is wrong.
    pub kind: CorruptionKind,
    /// Byte position where the damaged structure starts.
    pub position: u64,
    /// Exclusive end of the range to highlight.
    pub end: u64,
    /// The record offset, when the header verified.
    pub offset: Option<u64>,
}

/// One step of a [`ChunkedReader`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// A whole record whose header, checksum and offset verified.
    Record {
        /// Its byte position in the file.
        position: u64,
        /// The record, borrowing its payload from the window.
        record: Record<'a>,
    },
    /// A record header that verified, in a headers-only walk (the payload was
    /// not read, so its checksum is not known).
    Header {
        /// Its byte position in the file.
        position: u64,
        /// The verified header.
        header: RecordHeader,
    },
    /// The window does not hold what the next step needs: supply a window
    /// holding at least `len` bytes from `position`.
    NeedBytes {
        /// Where the bytes must start.
        position: u64,
        /// How many are needed (at most one record: 28 + `MAX_PAYLOAD_BYTES`).
        len: usize,
    },
    /// The first problem; every later step is [`Step::End`].
    Defect(ReadError),
    /// No more records before the end given.
    End,
}

/// A strict, sans-IO walk over a segment's records. See the module doc.
#[derive(Clone, Debug)]
pub struct ChunkedReader {
    position: u64,
    expected: ExpectedOffset,
    end: u64,
    headers_only: bool,
    done: bool,
}

impl ChunkedReader {
    /// Reads whole records from `position` (a record boundary) up to `end`
    /// (the length of the file, or of its part to read).
    #[must_use]
    pub fn new(position: u64, expected: ExpectedOffset, end: u64) -> Self {
        Self { position, expected, end, headers_only: false, done: false }
    }

    /// Walks record headers only — each verified, payloads skipped — to find
    /// the record boundaries from `position` to `end` cheaply (an index
    /// entry is trusted only once such a walk from the segment's first
    /// record lands on it).
    #[must_use]
    pub fn headers_only(position: u64, expected: ExpectedOffset, end: u64) -> Self {
        Self { headers_only: true, ..Self::new(position, expected, end) }
    }

    /// Position of the next record.
    #[must_use]
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Offset the next record must carry.
    #[must_use]
    pub fn expected(&self) -> ExpectedOffset {
        self.expected
    }

    fn defect(&mut self, kind: CorruptionKind, end: u64, offset: Option<u64>) -> Step<'static> {
        self.done = true;
        Step::Defect(ReadError { kind, position: self.position, end, offset })
    }

    /// The next step, given `window`, the file's bytes from `window_position`.
    pub fn step<'a>(&mut self, window: &'a [u8], window_position: u64) -> Step<'a> {
        if self.done || self.position >= self.end {
            self.done = true;
            return Step::End;
        }
        let position = self.position;
        let left = self.end - position;
        let held: &'a [u8] = match position.checked_sub(window_position).and_then(|rel| usize::try_from(rel).ok()) {
            Some(rel) => window.get(rel..).unwrap_or(&[]),
            None => &[],
        };
        let held = held.get(..usize::try_from(left).unwrap_or(usize::MAX).min(held.len())).unwrap_or(held);
        if left < RECORD_HEADER_LEN as u64 {
            return self.defect(CorruptionKind::Truncated { needed: RECORD_HEADER_LEN as u64, available: left }, self.end, None);
        }
        if held.len() < RECORD_HEADER_LEN {
            return Step::NeedBytes { position, len: RECORD_HEADER_LEN };
        }
        let (header, hasher) = match decode_header_and_crc(held) {
            Ok(h) => h,
            Err((kind, header)) => {
                return self.defect(kind, position + RECORD_HEADER_LEN as u64, header.map(|h| h.offset));
            }
        };
        let record_len = header.record_len();
        if left < record_len {
            let kind = CorruptionKind::Truncated { needed: record_len, available: left };
            return self.defect(kind, self.end, Some(header.offset));
        }
        if self.headers_only {
            if let Err(kind) = self.expected.check(header.offset) {
                return self.defect(kind, position + record_len, Some(header.offset));
            }
            self.expected = ExpectedOffset::after(header.offset);
            self.position += record_len;
            return Step::Header { position, header };
        }
        // The header verified and its length is within the limit: at most one record.
        let len = usize::try_from(record_len).unwrap_or(usize::MAX);
        if held.len() < len {
            return Step::NeedBytes { position, len };
        }
        // The header verified above: its CRC state carries on into the checksum.
        match verify_body(held, header, hasher, self.expected) {
            Ok((record, used)) => {
                self.expected = ExpectedOffset::after(record.header.offset);
                self.position += used as u64;
                Step::Record { position, record }
            }
            Err(defect) => {
                let end = position + defect.end;
                self.defect(defect.kind, end, defect.header.map(|h| h.offset))
            }
        }
    }
}

/// Iterates the records of a segment (or of a slice of one) held in memory,
/// strictly: a [`ChunkedReader`] whose window is the whole slice.
#[derive(Debug, Clone)]
pub struct SegmentReader<'a> {
    bytes: &'a [u8],
    base_position: u64,
    reader: ChunkedReader,
}

impl<'a> SegmentReader<'a> {
    /// Reads a whole segment: header first (any header damage is returned).
    ///
    /// # Errors
    /// The header's defect.
    pub fn new(segment: &'a [u8]) -> Result<(SegmentHeader, Self), ReadError> {
        let (header, used) =
            SegmentHeader::decode(segment).map_err(|d| ReadError { kind: d.kind, position: 0, end: d.end as u64, offset: None })?;
        let reader = ChunkedReader::new(used as u64, ExpectedOffset::Exactly(header.base_offset), segment.len() as u64);
        Ok((header, Self { bytes: segment, base_position: 0, reader }))
    }

    /// Reads records from a slice starting at a known record boundary
    /// (`position` in the file), e.g. one an index pointed at.
    #[must_use]
    pub fn at_position(bytes: &'a [u8], position: u64, expected: ExpectedOffset) -> Self {
        let end = position.saturating_add(bytes.len() as u64);
        Self { bytes, base_position: position, reader: ChunkedReader::new(position, expected, end) }
    }

    /// Position in the file of the next record to read.
    #[must_use]
    pub fn file_position(&self) -> u64 {
        self.reader.position()
    }

    /// Offset the next record must carry.
    #[must_use]
    pub fn expected_offset(&self) -> ExpectedOffset {
        self.reader.expected()
    }
}

impl<'a> Iterator for SegmentReader<'a> {
    type Item = Result<(u64, Record<'a>), ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.reader.step(self.bytes, self.base_position) {
            Step::Record { position, record } => Some(Ok((position, record))),
            Step::Defect(e) => Some(Err(e)),
            // The whole slice is the window: nothing more can be supplied.
            Step::Header { .. } | Step::NeedBytes { .. } | Step::End => None,
        }
    }
}

/// Segment header length, re-exported for readers that skip it.
pub const FIRST_RECORD_POSITION: u64 = SEGMENT_HEADER_LEN as u64;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::record::encode_record;
    use alloc::vec::Vec;

    fn segment(base: u64, n: u64) -> Vec<u8> {
        let mut out = SegmentHeader::new(base, 0).encode().to_vec();
        for i in 0..n {
            encode_record(base + i, i, b"abc", &mut out).unwrap();
        }
        out
    }

    #[test]
    fn reads_every_record_in_order() {
        let bytes = segment(5, 4);
        let (h, reader) = SegmentReader::new(&bytes).unwrap();
        assert_eq!(h.base_offset, 5);
        let offsets: Vec<u64> = reader.map(|r| r.unwrap().1.header.offset).collect();
        assert_eq!(offsets, [5, 6, 7, 8]);
    }

    /// Feeds `bytes` through a chunked reader in windows of at most `chunk`
    /// bytes, as a caller reading a file would.
    fn walk(bytes: &[u8], chunk: usize, headers_only: bool) -> (Vec<(u64, u64)>, Option<ReadError>) {
        let end = bytes.len() as u64;
        let mut reader = if headers_only {
            ChunkedReader::headers_only(32, ExpectedOffset::Any, end)
        } else {
            ChunkedReader::new(32, ExpectedOffset::Any, end)
        };
        let (mut at, mut len) = (32usize, chunk);
        let mut out = Vec::new();
        loop {
            let window = &bytes[at..(at + len).min(bytes.len())];
            match reader.step(window, at as u64) {
                Step::Record { position, record } => out.push((position, record.header.offset)),
                Step::Header { position, header } => out.push((position, header.offset)),
                Step::NeedBytes { position, len: need } => {
                    at = position as usize;
                    len = need.max(chunk);
                }
                Step::Defect(e) => return (out, Some(e)),
                Step::End => return (out, None),
            }
        }
    }

    #[test]
    fn a_chunked_walk_equals_the_whole_walk_in_any_window_size() {
        let bytes = segment(3, 6);
        let whole: Vec<(u64, u64)> = SegmentReader::new(&bytes).unwrap().1.map(|r| r.unwrap()).map(|(p, r)| (p, r.header.offset)).collect();
        for chunk in [1, 5, 28, 31, 32, 100, 4096] {
            assert_eq!(walk(&bytes, chunk, false), (whole.clone(), None), "chunk {chunk}");
            assert_eq!(walk(&bytes, chunk, true), (whole.clone(), None), "headers only, chunk {chunk}");
        }
        let mut torn = bytes.clone();
        torn.truncate(bytes.len() - 2);
        let (got, err) = walk(&torn, 7, false);
        assert_eq!(got.len(), 5);
        assert_eq!(err.unwrap().kind, CorruptionKind::Truncated { needed: 31, available: 29 });
    }

    #[test]
    fn need_bytes_never_asks_past_one_record_and_only_after_its_header_verified() {
        let mut bytes = segment(0, 1);
        // A header claiming 64 MiB whose CRC does not verify: never a request for 64 MiB.
        bytes[32..36].copy_from_slice(&crate::MAX_PAYLOAD_BYTES.to_be_bytes());
        let mut reader = ChunkedReader::new(32, ExpectedOffset::Any, u64::MAX);
        let step = reader.step(&bytes[32..], 32);
        assert!(
            matches!(step, Step::Defect(ReadError { kind: CorruptionKind::RecordHeaderChecksum { .. }, position: 32, .. })),
            "{step:?}"
        );
        assert_eq!(reader.step(&bytes, 0), Step::End, "a defect ends the walk");
    }

    #[test]
    fn after_offset_u64_max_every_record_is_out_of_order() {
        let mut bytes = SegmentHeader::new(u64::MAX, 0).encode().to_vec();
        encode_record(u64::MAX, 0, b"last", &mut bytes).unwrap();
        encode_record(u64::MAX, 0, b"again", &mut bytes).unwrap();
        let (_, reader) = SegmentReader::new(&bytes).unwrap();
        let items: Vec<_> = reader.collect();
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].clone().unwrap_err().kind, CorruptionKind::OffsetOutOfOrder { expected: None, found: u64::MAX });
    }

    /// A defect's kind, position, end and offset.
    type Site = (CorruptionKind, u64, u64, Option<u64>);

    /// The records and first defect of `bytes` from byte 32, walked with
    /// `decode_record` over the rest of the buffer at each step — the way the
    /// reader decided before it stopped decoding each header twice.
    fn walk_by_decode_record(bytes: &[u8]) -> (Vec<(u64, u64)>, Option<Site>) {
        let (mut at, mut expected, mut out) = (32usize, ExpectedOffset::Any, Vec::new());
        while at < bytes.len() {
            match crate::format::record::decode_record(&bytes[at..], expected) {
                Ok((r, used)) => {
                    out.push((at as u64, r.header.offset));
                    expected = ExpectedOffset::after(r.header.offset);
                    at += used;
                }
                Err(d) => return (out, Some((d.kind, at as u64, at as u64 + d.end, d.header.map(|h| h.offset)))),
            }
        }
        (out, None)
    }

    /// Every bit flip and every truncation of a small segment: the reader's
    /// records and first defect (kind, position, end, offset) in any window
    /// size are what decoding each record whole gives.
    #[test]
    fn every_flip_and_cut_reads_as_decoding_each_record_whole() {
        let mut base = SegmentHeader::new(0, 0).encode().to_vec();
        for (i, p) in [&b"abc"[..], b"", b"a longer payload of a few bytes", b"z"].iter().enumerate() {
            encode_record(i as u64, 7, p, &mut base).unwrap();
        }
        let mut cases: Vec<Vec<u8>> = (32..base.len()).map(|n| base[..n].to_vec()).collect();
        for i in 32..base.len() {
            for bit in 0..8 {
                let mut b = base.clone();
                b[i] ^= 1 << bit;
                cases.push(b);
            }
        }
        for bytes in cases {
            let (want, want_err) = walk_by_decode_record(&bytes);
            for chunk in [1, 28, 40, 4096] {
                let (got, err) = walk(&bytes, chunk, false);
                assert_eq!(got, want, "chunk {chunk}");
                assert_eq!(err.map(|e| (e.kind, e.position, e.end, e.offset)), want_err.clone(), "chunk {chunk}");
            }
        }
    }

    #[test]
    fn stops_at_the_first_problem_with_its_site() {
        let mut bytes = segment(0, 3);
        let second = 32 + 31;
        bytes[second + 28] ^= 1; // payload of offset 1
        let (_, reader) = SegmentReader::new(&bytes).unwrap();
        let items: Vec<_> = reader.collect();
        assert_eq!(items.len(), 2);
        let err = items[1].clone().unwrap_err();
        assert_eq!((err.kind.name(), err.position, err.end, err.offset), ("RecordChecksum", 63, 94, Some(1)));
    }
}
