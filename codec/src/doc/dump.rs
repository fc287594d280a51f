//! `felix-storage dump --json`: one JSON object a line (JSON Lines) for the
//! segment's header, each record shown, the damage the dump stopped at, and
//! where `--max-bytes` stopped it. Each line is a [`DumpLine`], tagged by
//! `type`; its JSON Schema is `docs/schema/dump-line.schema.json`.
//!
//! A record is told by its header's values and where it lies — never its
//! payload bytes; a finding in the words `inspect --json` gives it (the
//! kind's exact name, its byte range, `"{what}; {meaning}"`).
//!
//! ```
//! use felix_codec::doc::dump::DumpLine;
//! use felix_codec::format::record::RecordHeader;
//! let header = RecordHeader { payload_len: 5, offset: 7, timestamp_micros: 1_500_000, header_crc: 0xAB, checksum: 0x2402_152C };
//! let DumpLine::Record(r) = DumpLine::record("00.log", 32, &header) else { unreachable!() };
//! assert_eq!((r.end, r.time.as_str(), r.checksum.as_str()), (65, "1970-01-01T00:00:01.500000Z", "2402152C"));
//! ```

use alloc::format;
use alloc::string::String;

use crate::format::record::RecordHeader;
use crate::format::time::format_micros;
use crate::verdict::corruption::CorruptionKind;

/// One line of `dump --json`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "type", rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum DumpLine {
    /// The segment's header (the first line, when it verified).
    Segment(DumpSegment),
    /// A record whose header, checksum and offset verified.
    Record(DumpRecord),
    /// The damage the dump stopped at (the strict reader's first defect, or
    /// the segment header's): nothing after it is shown.
    Finding(DumpFinding),
    /// `--max-bytes` of payload were walked: more records follow.
    Stopped(DumpStopped),
}

/// The segment header's values.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DumpSegment {
    /// The file as given.
    pub file: String,
    /// The segment's first offset.
    pub base_offset: u64,
    /// When the segment was created, microseconds since the Unix epoch.
    pub created_at_micros: u64,
    /// The same in RFC 3339, UTC, with the micros.
    pub created: String,
}

/// One record shown: where it lies and its header's values.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DumpRecord {
    /// The file as given.
    pub file: String,
    /// The record's first byte.
    pub start: u64,
    /// One past its last byte.
    pub end: u64,
    /// Its offset.
    pub offset: u64,
    /// Its publish time, microseconds since the Unix epoch.
    pub timestamp_micros: u64,
    /// The same in RFC 3339, UTC, with the micros.
    pub time: String,
    /// Payload length in bytes (records have no key).
    pub payload_len: u32,
    /// Its verified header checksum, 8 upper-case hex digits.
    pub header_crc: String,
    /// Its verified checksum, 8 upper-case hex digits.
    pub checksum: String,
}

/// The damage a dump stopped at, in `inspect --json`'s words.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DumpFinding {
    /// The file as given.
    pub file: String,
    /// The exact `CorruptionKind` name.
    pub kind: String,
    /// Where the damaged structure starts.
    pub position: u64,
    /// Exclusive end of the range to highlight.
    pub end: u64,
    /// Record offset, when known.
    pub offset: Option<u64>,
    /// The details and one plain sentence of what it means.
    pub message: String,
}

/// Where `--max-bytes` stopped a dump.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DumpStopped {
    /// The file as given.
    pub file: String,
    /// Payload bytes of the records shown.
    pub payload_bytes: u64,
    /// The limit given.
    pub max_bytes: u64,
    /// The first record not shown: go on with `--from-offset` it.
    pub next_offset: u64,
}

impl DumpLine {
    /// A segment header's line.
    #[must_use]
    pub fn segment(file: &str, base_offset: u64, created_at_micros: u64) -> Self {
        Self::Segment(DumpSegment { file: file.into(), base_offset, created_at_micros, created: format_micros(created_at_micros) })
    }

    /// A verified record's line: it starts at byte `start`.
    #[must_use]
    pub fn record(file: &str, start: u64, header: &RecordHeader) -> Self {
        Self::Record(DumpRecord {
            file: file.into(),
            start,
            end: start.saturating_add(header.record_len()),
            offset: header.offset,
            timestamp_micros: header.timestamp_micros,
            time: format_micros(header.timestamp_micros),
            payload_len: header.payload_len,
            header_crc: format!("{:08X}", header.header_crc),
            checksum: format!("{:08X}", header.checksum),
        })
    }

    /// A finding's line: `kind` over bytes `position..end`, at `offset` when known.
    #[must_use]
    pub fn finding(file: &str, kind: &CorruptionKind, (position, end): (u64, u64), offset: Option<u64>) -> Self {
        Self::Finding(DumpFinding {
            file: file.into(),
            kind: kind.name().into(),
            position,
            end,
            offset,
            message: format!("{kind}; {}", kind.meaning()),
        })
    }
}
