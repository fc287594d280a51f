//! Segment header: the first 32 bytes of every `*.log` file.
//!
//! ```text
//! offset size field              value
//!  0      4   magic              0x464C5347 "FLSG"
//!  4      2   version            2
//!  6      2   flags              0; any other value is rejected
//!  8      8   base_offset        logical offset of the segment's first record
//! 16      8   created_at_micros  wall clock at creation, informational
//! 24      4   header_crc         CRC-32 (IEEE) over bytes 0..24
//! 28      4   reserved           0
//! ```
//!
//! The header is written and fsynced before any record claims to live in the
//! segment, so damage here is never a torn write: it is never repairable.
//!
//! # Example
//!
//! ```
//! use felix_codec::format::segment_header::{SegmentHeader, SEGMENT_HEADER_LEN};
//! let bytes = SegmentHeader::new(100, 1_700_000_000_000_000).encode();
//! let (header, used) = SegmentHeader::decode(&bytes).unwrap();
//! assert_eq!((header.base_offset, used), (100, SEGMENT_HEADER_LEN));
//! let mut rotted = bytes;
//! rotted[15] ^= 1; // base_offset changed after the header was written
//! assert_eq!(SegmentHeader::decode(&rotted).unwrap_err().kind.name(), "SegmentHeaderChecksum");
//! ```

use crate::format::be;
use crate::verdict::corruption::CorruptionKind;
use crate::FORMAT_VERSION;

/// `FLSG`.
pub const SEGMENT_MAGIC: [u8; 4] = *b"FLSG";

/// Position of `magic`.
pub const MAGIC_AT: usize = 0;
/// Position of `version`.
pub const VERSION_AT: usize = MAGIC_AT + 4;
/// Position of `flags`.
pub const FLAGS_AT: usize = VERSION_AT + 2;
/// Position of `base_offset`.
pub const BASE_OFFSET_AT: usize = FLAGS_AT + 2;
/// Position of `created_at_micros`.
pub const CREATED_AT: usize = BASE_OFFSET_AT + 8;
/// Position of `header_crc`; also the length the CRC covers.
pub const HEADER_CRC_AT: usize = CREATED_AT + 8;
/// Position of `reserved`.
pub const RESERVED_AT: usize = HEADER_CRC_AT + 4;
/// Length of the segment header.
pub const SEGMENT_HEADER_LEN: usize = RESERVED_AT + 4;
const _: () = assert!(SEGMENT_HEADER_LEN == 32);
const _: () = assert!(HEADER_CRC_AT == 24);

/// A decoded segment header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SegmentHeader {
    /// Logical offset of the segment's first record.
    pub base_offset: u64,
    /// Wall clock at creation (microseconds since the Unix epoch); informational.
    pub created_at_micros: u64,
    /// The `reserved` field as found (0 when written by this build).
    pub reserved: u32,
}

/// A header that failed to decode: the kind and the byte range (from 0) to highlight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderDefect {
    /// What is wrong.
    pub kind: CorruptionKind,
    /// Exclusive end of the damaged range, starting at byte 0.
    pub end: usize,
}

impl SegmentHeader {
    /// A header for a new segment.
    #[must_use]
    pub fn new(base_offset: u64, created_at_micros: u64) -> Self {
        Self { base_offset, created_at_micros, reserved: 0 }
    }

    /// The header's 32 bytes, `header_crc` included.
    #[must_use]
    pub fn encode(&self) -> [u8; SEGMENT_HEADER_LEN] {
        let mut out = [0u8; SEGMENT_HEADER_LEN];
        be::put(&mut out, MAGIC_AT, &SEGMENT_MAGIC);
        be::put(&mut out, VERSION_AT, &FORMAT_VERSION.to_be_bytes());
        be::put(&mut out, FLAGS_AT, &0u16.to_be_bytes());
        be::put(&mut out, BASE_OFFSET_AT, &self.base_offset.to_be_bytes());
        be::put(&mut out, CREATED_AT, &self.created_at_micros.to_be_bytes());
        let crc = be::crc32(be::slice(&out, 0, HEADER_CRC_AT));
        be::put(&mut out, HEADER_CRC_AT, &crc.to_be_bytes());
        be::put(&mut out, RESERVED_AT, &self.reserved.to_be_bytes());
        out
    }

    /// Decodes the header at the start of `bytes`, returning it and the bytes consumed (32).
    ///
    /// Checks run in the spec's table order — magic, version, flags, then
    /// `header_crc` — each as soon as its bytes are present, so a short file
    /// whose first four bytes are not `FLSG` is `SegmentMagic` (rejected on
    /// its first four bytes), not `Truncated`; and a header with unknown flag
    /// bits is `SegmentFlags` whatever its CRC says, since those bits may
    /// change the layout behind them.
    ///
    /// # Errors
    /// The first defect found, with the range to highlight.
    pub fn decode(bytes: &[u8]) -> Result<(Self, usize), HeaderDefect> {
        if bytes.len() >= VERSION_AT {
            let found: [u8; 4] = be::array(bytes, MAGIC_AT);
            if found != SEGMENT_MAGIC {
                return Err(HeaderDefect { kind: CorruptionKind::SegmentMagic { found }, end: VERSION_AT });
            }
        }
        if bytes.len() >= FLAGS_AT {
            let version = be::u16_at(bytes, VERSION_AT);
            if version != FORMAT_VERSION {
                return Err(HeaderDefect { kind: CorruptionKind::SegmentVersion { found: version }, end: FLAGS_AT });
            }
        }
        if bytes.len() >= BASE_OFFSET_AT {
            let flags = be::u16_at(bytes, FLAGS_AT);
            if flags != 0 {
                return Err(HeaderDefect { kind: CorruptionKind::SegmentFlags { found: flags }, end: BASE_OFFSET_AT });
            }
        }
        if bytes.len() < SEGMENT_HEADER_LEN {
            let available = bytes.len() as u64;
            return Err(HeaderDefect {
                kind: CorruptionKind::Truncated { needed: SEGMENT_HEADER_LEN as u64, available },
                end: bytes.len(),
            });
        }
        let stored = be::u32_at(bytes, HEADER_CRC_AT);
        let computed = be::crc32(be::slice(bytes, 0, HEADER_CRC_AT));
        if stored != computed {
            return Err(HeaderDefect { kind: CorruptionKind::SegmentHeaderChecksum { stored, computed }, end: RESERVED_AT });
        }
        let header = Self {
            base_offset: be::u64_at(bytes, BASE_OFFSET_AT),
            created_at_micros: be::u64_at(bytes, CREATED_AT),
            reserved: be::u32_at(bytes, RESERVED_AT),
        };
        Ok((header, SEGMENT_HEADER_LEN))
    }
}

/// Whether `bytes` — a whole file shorter than a segment header — can be a
/// header this format's writers never finished: every byte present agrees
/// with the constant prefix (`FLSG`, version 2, flags 0) and no more than 31
/// bytes are there. A 0-byte file qualifies.
///
/// A writer fsyncs a segment's header before any record may claim to live in
/// it, so such a file, when it is the newest segment of its shard, never held
/// an acknowledged record: it is an unfinished creation (upstream's writer
/// leaves one when killed during a roll), not damage.
#[must_use]
pub fn is_unfinished_header(bytes: &[u8]) -> bool {
    let mut prefix = [0u8; BASE_OFFSET_AT];
    be::put(&mut prefix, MAGIC_AT, &SEGMENT_MAGIC);
    be::put(&mut prefix, VERSION_AT, &FORMAT_VERSION.to_be_bytes());
    bytes.len() < SEGMENT_HEADER_LEN && bytes.iter().zip(prefix.iter()).all(|(a, b)| a == b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::golden;

    #[test]
    fn encodes_the_spec_golden_vector() {
        assert_eq!(SegmentHeader::new(1, 2).encode(), golden::SEGMENT_HEADER);
    }

    #[test]
    fn decodes_the_spec_golden_vector() {
        let (h, used) = SegmentHeader::decode(&golden::SEGMENT_HEADER).unwrap();
        assert_eq!((h, used), (SegmentHeader::new(1, 2), 32));
    }

    #[test]
    fn damaged_twin_is_a_header_checksum_failure() {
        let err = SegmentHeader::decode(&golden::SEGMENT_HEADER_DAMAGED).unwrap_err();
        assert_eq!(
            err,
            HeaderDefect {
                kind: CorruptionKind::SegmentHeaderChecksum { stored: 0x7A09_E5B1, computed: golden::SEGMENT_HEADER_DAMAGED_CRC },
                end: 28
            }
        );
    }

    #[test]
    fn v1_header_is_a_version_error_naming_the_version() {
        let mut b = golden::SEGMENT_HEADER;
        b[5] = 1;
        assert_eq!(SegmentHeader::decode(&b).unwrap_err().kind, CorruptionKind::SegmentVersion { found: 1 });
    }

    #[test]
    fn nonzero_flags_with_a_valid_crc_are_rejected() {
        let mut b = golden::SEGMENT_HEADER;
        b[7] = 1;
        let crc = be::crc32(&b[..24]);
        b[24..28].copy_from_slice(&crc.to_be_bytes());
        assert_eq!(SegmentHeader::decode(&b).unwrap_err(), HeaderDefect { kind: CorruptionKind::SegmentFlags { found: 1 }, end: 8 });
    }

    #[test]
    fn checks_run_in_table_order_magic_version_flags_crc() {
        // Unknown flags with a stale CRC: the flags verdict, never a checksum one.
        let mut b = golden::SEGMENT_HEADER;
        b[7] = 4;
        assert_eq!(SegmentHeader::decode(&b).unwrap_err(), HeaderDefect { kind: CorruptionKind::SegmentFlags { found: 4 }, end: 8 });
        // A v1 header with a stale CRC: the version verdict.
        let mut b = golden::SEGMENT_HEADER;
        b[5] = 1;
        b[9] = 0xFF;
        assert_eq!(SegmentHeader::decode(&b).unwrap_err().kind, CorruptionKind::SegmentVersion { found: 1 });
    }

    #[test]
    fn a_short_file_with_a_foreign_magic_is_rejected_on_its_first_four_bytes() {
        for len in 4..32 {
            let mut b = golden::SEGMENT_HEADER;
            b[0] = b'X';
            assert_eq!(
                SegmentHeader::decode(&b[..len]).unwrap_err(),
                HeaderDefect { kind: CorruptionKind::SegmentMagic { found: *b"XLSG" }, end: 4 },
                "{len} bytes"
            );
        }
        assert_eq!(SegmentHeader::decode(b"FLS").unwrap_err().kind, CorruptionKind::Truncated { needed: 32, available: 3 });
    }

    #[test]
    fn unfinished_headers_are_prefixes_of_a_valid_one() {
        for len in 0..32 {
            assert!(is_unfinished_header(&golden::SEGMENT_HEADER[..len]), "{len} bytes of a real header");
        }
        assert!(!is_unfinished_header(&golden::SEGMENT_HEADER), "a whole header is finished");
        assert!(!is_unfinished_header(b"FLSX"), "a foreign magic is not ours");
        assert!(!is_unfinished_header(b"FLSG\x00\x01"), "version 1 is not an unfinished v2 header");
        assert!(is_unfinished_header(b"FLSG\x00\x02\x00\x00\x12\x34"), "past the constant prefix any byte may be there");
    }

    #[test]
    fn index_bytes_in_a_segment_are_a_magic_error() {
        let b = crate::format::index::IndexHeader::new(0).encode();
        let mut buf = [0u8; 32];
        buf[..24].copy_from_slice(&b);
        assert_eq!(SegmentHeader::decode(&buf).unwrap_err().kind, CorruptionKind::SegmentMagic { found: *b"FLSI" });
    }

    #[test]
    fn short_header_is_truncated() {
        assert_eq!(
            SegmentHeader::decode(&golden::SEGMENT_HEADER[..31]).unwrap_err(),
            HeaderDefect { kind: CorruptionKind::Truncated { needed: 32, available: 31 }, end: 31 }
        );
    }
}
