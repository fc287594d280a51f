//! Sparse offset index: `*.index`, companion of a segment.
//!
//! ```text
//! header (24 bytes)
//! offset size field        value
//!  0      4   magic        0x464C5349 "FLSI"
//!  4      2   version      2
//!  6      2   flags        0
//!  8      8   base_offset  must equal the segment's base_offset
//! 16      8   reserved     0
//!
//! entry (16 bytes), strictly ascending by offset
//!  0      8   offset
//!  8      8   position     byte position of that record in the segment
//! ```
//!
//! Indexes are never trusted: an entry is only a starting point for a scan
//! that re-validates real records, and a bad index is rebuilt. They carry no
//! checksums. A torn final entry (a crash mid-append) is tolerated.
//!
//! # Example
//!
//! ```
//! use felix_codec::format::index::{build_index, seek_position, IndexEntry, IndexHeader, INDEX_HEADER_LEN};
//! // Records 0..100 every 40 bytes; an entry at most every 400 bytes.
//! let bytes = build_index(0, (0..100).map(|o| (o, 32 + o * 40)), 400);
//! let (header, _) = IndexHeader::decode(&bytes).unwrap();
//! let entries: Vec<IndexEntry> = bytes[INDEX_HEADER_LEN..].chunks(16).filter_map(IndexEntry::decode).collect();
//! assert_eq!(header.base_offset, 0);
//! let hint = seek_position(&entries, 57).unwrap();
//! assert!(hint.offset <= 57);
//! ```

use alloc::format;
use alloc::string::String;

use crate::format::be;
use crate::verdict::corruption::{CorruptionKind, Finding};
use crate::FORMAT_VERSION;

/// `FLSI`.
pub const INDEX_MAGIC: [u8; 4] = *b"FLSI";
/// Position of `magic`.
pub const MAGIC_AT: usize = 0;
/// Position of `version`.
pub const VERSION_AT: usize = MAGIC_AT + 4;
/// Position of `flags`.
pub const FLAGS_AT: usize = VERSION_AT + 2;
/// Position of `base_offset`.
pub const BASE_OFFSET_AT: usize = FLAGS_AT + 2;
/// Position of `reserved`.
pub const RESERVED_AT: usize = BASE_OFFSET_AT + 8;
/// Length of the index header.
pub const INDEX_HEADER_LEN: usize = RESERVED_AT + 8;
/// Position of an entry's `offset`.
pub const ENTRY_OFFSET_AT: usize = 0;
/// Position of an entry's `position`.
pub const ENTRY_POSITION_AT: usize = ENTRY_OFFSET_AT + 8;
/// Length of one entry.
pub const INDEX_ENTRY_LEN: usize = ENTRY_POSITION_AT + 8;
const _: () = assert!(INDEX_HEADER_LEN == 24);
const _: () = assert!(INDEX_ENTRY_LEN == 16);

/// Default spacing of index entries: one per 4 KiB of segment data.
pub const DEFAULT_INDEX_SPACING_BYTES: u64 = 4096;

/// An index header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IndexHeader {
    /// Must equal the segment's base offset.
    pub base_offset: u64,
}

/// One index entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IndexEntry {
    /// A record's offset.
    pub offset: u64,
    /// That record's byte position in the segment.
    pub position: u64,
}

impl IndexHeader {
    /// A header for an index of the segment starting at `base_offset`.
    #[must_use]
    pub fn new(base_offset: u64) -> Self {
        Self { base_offset }
    }

    /// The header's 24 bytes.
    #[must_use]
    pub fn encode(&self) -> [u8; INDEX_HEADER_LEN] {
        let mut out = [0u8; INDEX_HEADER_LEN];
        be::put(&mut out, MAGIC_AT, &INDEX_MAGIC);
        be::put(&mut out, VERSION_AT, &FORMAT_VERSION.to_be_bytes());
        be::put(&mut out, BASE_OFFSET_AT, &self.base_offset.to_be_bytes());
        out
    }

    /// Decodes the header at the start of `bytes`; returns it and the bytes consumed (24).
    ///
    /// # Errors
    /// `Truncated`, `IndexMagic`, `IndexVersion` or `IndexFlags`, with the
    /// exclusive end of the range (from byte 0) to highlight.
    pub fn decode(bytes: &[u8]) -> Result<(Self, usize), (CorruptionKind, usize)> {
        // Table order, each check as soon as its bytes are present (as for
        // the segment header): a short file with a foreign magic is `IndexMagic`.
        if bytes.len() >= VERSION_AT {
            let found: [u8; 4] = be::array(bytes, MAGIC_AT);
            if found != INDEX_MAGIC {
                return Err((CorruptionKind::IndexMagic { found }, VERSION_AT));
            }
        }
        if bytes.len() >= FLAGS_AT {
            let version = be::u16_at(bytes, VERSION_AT);
            if version != FORMAT_VERSION {
                return Err((CorruptionKind::IndexVersion { found: version }, FLAGS_AT));
            }
        }
        if bytes.len() >= BASE_OFFSET_AT {
            let flags = be::u16_at(bytes, FLAGS_AT);
            if flags != 0 {
                return Err((CorruptionKind::IndexFlags { found: flags }, BASE_OFFSET_AT));
            }
        }
        if bytes.len() < INDEX_HEADER_LEN {
            let kind = CorruptionKind::Truncated { needed: INDEX_HEADER_LEN as u64, available: bytes.len() as u64 };
            return Err((kind, bytes.len()));
        }
        Ok((Self { base_offset: be::u64_at(bytes, BASE_OFFSET_AT) }, INDEX_HEADER_LEN))
    }
}

impl IndexEntry {
    /// The entry's 16 bytes.
    #[must_use]
    pub fn encode(&self) -> [u8; INDEX_ENTRY_LEN] {
        let mut out = [0u8; INDEX_ENTRY_LEN];
        be::put(&mut out, ENTRY_OFFSET_AT, &self.offset.to_be_bytes());
        be::put(&mut out, ENTRY_POSITION_AT, &self.position.to_be_bytes());
        out
    }

    /// Decodes an entry from the start of `bytes`; `None` when fewer than 16 bytes remain.
    #[must_use]
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.len() < INDEX_ENTRY_LEN {
            return None;
        }
        Some(Self { offset: be::u64_at(bytes, ENTRY_OFFSET_AT), position: be::u64_at(bytes, ENTRY_POSITION_AT) })
    }

    /// Byte position of entry number `n` inside the index file.
    #[must_use]
    pub fn file_position(n: u64) -> u64 {
        INDEX_HEADER_LEN as u64 + n.saturating_mul(INDEX_ENTRY_LEN as u64)
    }
}

/// Where to start scanning for `offset`: the entry with the greatest offset
/// not above it (binary search over entries ascending by offset), or `None`
/// when `offset` is below the first entry.
#[must_use]
pub fn seek_position(entries: &[IndexEntry], offset: u64) -> Option<IndexEntry> {
    let after = entries.partition_point(|e| e.offset <= offset);
    after.checked_sub(1).and_then(|i| entries.get(i)).copied()
}

/// Decides which records get an index entry: the segment's first record and
/// thereafter the first record at least `spacing_bytes` past the last entry.
/// The engine's writer and the index rebuild both use it, so a rebuilt index
/// equals the one written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexPlanner {
    spacing_bytes: u64,
    last_position: Option<u64>,
}

impl IndexPlanner {
    /// A planner for entries every `spacing_bytes` (at least 1).
    #[must_use]
    pub fn new(spacing_bytes: u64) -> Self {
        Self { spacing_bytes: spacing_bytes.max(1), last_position: None }
    }

    /// Called for every record in order; returns the entry to write, if any.
    pub fn observe(&mut self, offset: u64, position: u64) -> Option<IndexEntry> {
        let due = self.last_position.is_none_or(|last| position.saturating_sub(last) >= self.spacing_bytes);
        if due {
            self.last_position = Some(position);
            Some(IndexEntry { offset, position })
        } else {
            None
        }
    }
}

/// A whole index file for a segment, built from its records' `(offset, position)`.
#[must_use]
pub fn build_index(base_offset: u64, records: impl IntoIterator<Item = (u64, u64)>, spacing_bytes: u64) -> alloc::vec::Vec<u8> {
    let mut out = IndexHeader::new(base_offset).encode().to_vec();
    let mut planner = IndexPlanner::new(spacing_bytes);
    for (offset, position) in records {
        if let Some(e) = planner.observe(offset, position) {
            out.extend_from_slice(&e.encode());
        }
    }
    out
}

/// Why an index is rebuilt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexProblem {
    /// There is no index file.
    Missing,
    /// A finding in it (header, order, base offset, an entry off the record chain).
    Finding(Finding),
    /// Its final entry is torn (a crash while it was appended).
    TornEntry,
    /// Entries are missing for the last records (a crash before they were written).
    Lagging,
    /// Something else the engine's quick check could not accept.
    Unusable(String),
}

impl IndexProblem {
    /// One line for a person.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Missing => "no index file".into(),
            Self::Finding(f) => format!("{} at byte {}: {}", f.kind.name(), f.position(), f.kind),
            Self::TornEntry => "its final entry is torn (a crash while it was written)".into(),
            Self::Lagging => "entries are missing for the last records (a crash before they were written)".into(),
            Self::Unusable(why) => why.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[rustfmt::skip]
    const INDEX: [u8; 40] = [
        0x46, 0x4C, 0x53, 0x49,                         // magic "FLSI"
        0x00, 0x02,                                     // version 2
        0x00, 0x00,                                     // flags 0
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, // base_offset 1
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // reserved
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, // entry 0: offset 1
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, //          position 32
    ];

    #[test]
    fn annotated_index_round_trips() {
        assert_eq!(IndexHeader::new(1).encode()[..], INDEX[..24]);
        assert_eq!(IndexEntry { offset: 1, position: 32 }.encode()[..], INDEX[24..]);
        assert_eq!(IndexHeader::decode(&INDEX).unwrap(), (IndexHeader::new(1), 24));
        assert_eq!(IndexEntry::decode(&INDEX[24..]), Some(IndexEntry { offset: 1, position: 32 }));
    }

    #[test]
    fn damaged_twin_version_is_rejected() {
        let mut b = INDEX;
        b[5] = 3;
        assert_eq!(IndexHeader::decode(&b).unwrap_err(), (CorruptionKind::IndexVersion { found: 3 }, 6));
    }

    #[test]
    fn planner_indexes_the_first_record_then_every_spacing() {
        let mut p = IndexPlanner::new(100);
        let got: alloc::vec::Vec<_> = [(0, 32), (1, 80), (2, 131), (3, 132), (4, 260)]
            .into_iter()
            .filter_map(|(o, pos)| p.observe(o, pos))
            .map(|e| e.offset)
            .collect();
        assert_eq!(got, [0, 3, 4], "131 is 99 bytes past 32; 132 is the first at 100");
    }

    #[test]
    fn seek_position_finds_the_floor_entry() {
        let e = [IndexEntry { offset: 10, position: 32 }, IndexEntry { offset: 20, position: 4000 }];
        assert_eq!(seek_position(&e, 9), None);
        assert_eq!(seek_position(&e, 10), Some(e[0]));
        assert_eq!(seek_position(&e, 19), Some(e[0]));
        assert_eq!(seek_position(&e, 25), Some(e[1]));
        assert_eq!(seek_position(&[], 25), None);
    }
}
