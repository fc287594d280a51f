//! The strict reader: walks a segment held in memory and stops at the first
//! problem. Recovery and the engine's reads use it; the scanner in
//! [`crate::scan`] is its never-failing sibling. Both share the decoders of
//! [`crate::segment_header`] and [`crate::record`].

use crate::corruption::CorruptionKind;
use crate::record::{decode_record, Record};
use crate::segment_header::{SegmentHeader, SEGMENT_HEADER_LEN};

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

/// Iterates the records of a segment (or of a slice of one) strictly.
#[derive(Debug, Clone)]
pub struct SegmentReader<'a> {
    bytes: &'a [u8],
    /// Absolute position of `bytes[0]` in the segment file.
    base_position: u64,
    at: usize,
    expected: Option<u64>,
    failed: bool,
}

impl<'a> SegmentReader<'a> {
    /// Reads a whole segment: header first (any header damage is returned).
    ///
    /// # Errors
    /// The header's defect.
    pub fn new(segment: &'a [u8]) -> Result<(SegmentHeader, Self), ReadError> {
        let (header, used) =
            SegmentHeader::decode(segment).map_err(|d| ReadError { kind: d.kind, position: 0, end: d.end as u64, offset: None })?;
        let reader = Self { bytes: segment, base_position: 0, at: used, expected: Some(header.base_offset), failed: false };
        Ok((header, reader))
    }

    /// Reads records from a slice starting at a known record boundary
    /// (`position` in the file), e.g. one an index pointed at. When
    /// `expected_offset` is `None` the first record's offset is believed.
    #[must_use]
    pub fn at_position(bytes: &'a [u8], position: u64, expected_offset: Option<u64>) -> Self {
        Self { bytes, base_position: position, at: 0, expected: expected_offset, failed: false }
    }

    /// Position in the file of the next record to read.
    #[must_use]
    pub fn file_position(&self) -> u64 {
        self.base_position + self.at as u64
    }

    /// Offset the next record must carry, once known.
    #[must_use]
    pub fn expected_offset(&self) -> Option<u64> {
        self.expected
    }
}

impl<'a> Iterator for SegmentReader<'a> {
    type Item = Result<(u64, Record<'a>), ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let rest = self.bytes.get(self.at..).unwrap_or(&[]);
        if rest.is_empty() {
            return None;
        }
        let position = self.file_position();
        match decode_record(rest, self.expected) {
            Ok((record, used)) => {
                self.at = self.at.saturating_add(used);
                self.expected = record.header.offset.checked_add(1);
                Some(Ok((position, record)))
            }
            Err(defect) => {
                self.failed = true;
                let offset = defect.header.map(|h| h.offset);
                Some(Err(ReadError { kind: defect.kind, position, end: position + defect.end, offset }))
            }
        }
    }
}

/// Segment header length, re-exported for readers that skip it.
pub const FIRST_RECORD_POSITION: u64 = SEGMENT_HEADER_LEN as u64;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::encode_record;
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
