//! Record: a 28-byte header followed by the payload.
//!
//! ```text
//! offset size field             notes
//!  0      4   payload_len       <= MAX_PAYLOAD_BYTES (64 MiB)
//!  4      8   offset            logical offset; ascends by exactly 1 within a segment
//! 12      8   timestamp_micros  publish time
//! 20      4   header_crc        CRC-32 over bytes 0..20
//! 24      4   checksum          CRC-32 over bytes 0..24 followed by the payload
//! 28      n   payload
//! ```
//!
//! `header_crc` is verified before any other field is used, so `payload_len`
//! is only acted on once it is known to be intact. The next record starts at
//! `position + 28 + payload_len`, without touching payload bytes.
//!
//! # Example
//!
//! ```
//! use felix_codec::format::record::{decode_record, encode_record, ExpectedOffset};
//! let mut bytes = Vec::new();
//! encode_record(7, 9, b"hi", &mut bytes).unwrap();
//! let (record, used) = decode_record(&bytes, ExpectedOffset::Exactly(7)).unwrap();
//! assert_eq!((record.payload, used), (&b"hi"[..], bytes.len()));
//! bytes[29] ^= 1; // "hi" → "hj"
//! assert!(decode_record(&bytes, ExpectedOffset::Exactly(7)).is_err());
//! ```

use alloc::vec::Vec;

use crate::format::be;
use crate::verdict::corruption::CorruptionKind;
use crate::MAX_PAYLOAD_BYTES;

/// Position of `payload_len`.
pub const PAYLOAD_LEN_AT: usize = 0;
/// Position of `offset`.
pub const OFFSET_AT: usize = PAYLOAD_LEN_AT + 4;
/// Position of `timestamp_micros`.
pub const TIMESTAMP_AT: usize = OFFSET_AT + 8;
/// Position of `header_crc`; also the length it covers.
pub const HEADER_CRC_AT: usize = TIMESTAMP_AT + 8;
/// Position of `checksum`; also the header prefix length it covers.
pub const CHECKSUM_AT: usize = HEADER_CRC_AT + 4;
/// Length of a record header; the payload follows.
pub const RECORD_HEADER_LEN: usize = CHECKSUM_AT + 4;
const _: () = assert!(RECORD_HEADER_LEN == 28);
const _: () = assert!(HEADER_CRC_AT == 20 && CHECKSUM_AT == 24);

/// A record header whose `header_crc` verified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecordHeader {
    /// Payload length in bytes (not yet checked against the limit).
    pub payload_len: u32,
    /// Logical offset.
    pub offset: u64,
    /// Publish time, microseconds since the Unix epoch.
    pub timestamp_micros: u64,
    /// Stored `header_crc`.
    pub header_crc: u32,
    /// Stored `checksum`.
    pub checksum: u32,
}

impl RecordHeader {
    /// Total bytes of the record: header plus payload.
    #[must_use]
    pub fn record_len(&self) -> u64 {
        RECORD_HEADER_LEN as u64 + u64::from(self.payload_len)
    }

    /// A hasher primed with the 24 bytes `checksum` covers before the payload.
    #[must_use]
    pub fn checksum_hasher(header_bytes: &[u8]) -> crc32fast::Hasher {
        let mut h = crc32fast::Hasher::new();
        h.update(be::slice(header_bytes, 0, CHECKSUM_AT));
        h
    }
}

/// Decodes and verifies a record header: `header_crc` first, then the length
/// limit. The offset is not judged here (that needs the previous record).
///
/// # Errors
/// `Truncated` when fewer than 28 bytes are given; `RecordHeaderChecksum`;
/// `RecordTooLarge` (the header is returned alongside, as it verified).
pub fn decode_record_header(bytes: &[u8]) -> Result<RecordHeader, (CorruptionKind, Option<RecordHeader>)> {
    decode_header_and_crc(bytes).map(|(header, _)| header)
}

/// [`decode_record_header`], also returning the CRC state after bytes
/// 0..20: `checksum` covers bytes 0..24 then the payload, so that state
/// carries on into it instead of hashing the header twice.
pub(crate) fn decode_header_and_crc(bytes: &[u8]) -> Result<(RecordHeader, crc32fast::Hasher), (CorruptionKind, Option<RecordHeader>)> {
    if bytes.len() < RECORD_HEADER_LEN {
        let kind = CorruptionKind::Truncated { needed: RECORD_HEADER_LEN as u64, available: bytes.len() as u64 };
        return Err((kind, None));
    }
    let stored = be::u32_at(bytes, HEADER_CRC_AT);
    let mut crc = crc32fast::Hasher::new();
    crc.update(be::slice(bytes, 0, HEADER_CRC_AT));
    let computed = crc.clone().finalize();
    if stored != computed {
        return Err((CorruptionKind::RecordHeaderChecksum { stored, computed }, None));
    }
    let header = RecordHeader {
        payload_len: be::u32_at(bytes, PAYLOAD_LEN_AT),
        offset: be::u64_at(bytes, OFFSET_AT),
        timestamp_micros: be::u64_at(bytes, TIMESTAMP_AT),
        header_crc: stored,
        checksum: be::u32_at(bytes, CHECKSUM_AT),
    };
    if header.payload_len > MAX_PAYLOAD_BYTES {
        let kind = CorruptionKind::RecordTooLarge { payload_len: header.payload_len, limit: MAX_PAYLOAD_BYTES };
        return Err((kind, Some(header)));
    }
    Ok((header, crc))
}

/// True when the 28 bytes at the start of `bytes` are a verifying header with
/// a length within the limit: the test the scanner uses to resynchronise.
#[must_use]
pub fn header_verifies(bytes: &[u8]) -> Option<RecordHeader> {
    decode_record_header(bytes).ok()
}

/// Which offset the next record must carry.
///
/// Offsets ascend by exactly 1 within a segment, so after a record at
/// `u64::MAX` no record can follow at all: that is [`ExpectedOffset::NoneLeft`],
/// not "anything goes".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExpectedOffset {
    /// Not known yet (a read that starts at a position without knowing its
    /// offset): the first record's offset is believed.
    Any,
    /// Exactly this offset.
    Exactly(u64),
    /// The previous record had offset `u64::MAX`: no offset can follow it.
    NoneLeft,
}

impl ExpectedOffset {
    /// What must follow a record at `offset`.
    #[must_use]
    #[inline]
    pub fn after(offset: u64) -> Self {
        offset.checked_add(1).map_or(Self::NoneLeft, Self::Exactly)
    }

    /// `Exactly(offset)` when given, `Any` otherwise.
    #[must_use]
    pub fn from_option(offset: Option<u64>) -> Self {
        offset.map_or(Self::Any, Self::Exactly)
    }

    /// The verdict on a record carrying `found`.
    ///
    /// # Errors
    /// `OffsetOutOfOrder` when `found` is not the expected offset, or when
    /// no offset can follow the previous record.
    pub fn check(self, found: u64) -> Result<(), CorruptionKind> {
        match self {
            Self::Any => Ok(()),
            Self::Exactly(e) if e == found => Ok(()),
            Self::Exactly(e) => Err(CorruptionKind::OffsetOutOfOrder { expected: Some(e), found }),
            Self::NoneLeft => Err(CorruptionKind::OffsetOutOfOrder { expected: None, found }),
        }
    }
}

/// A record decoded from a slice, borrowing its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// The verified header.
    pub header: RecordHeader,
    /// The payload bytes.
    pub payload: &'a [u8],
}

/// A record that failed to decode: the kind, the range (from the record's
/// first byte) to highlight, and the offset when the header verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordDefect {
    /// What is wrong.
    pub kind: CorruptionKind,
    /// Exclusive end of the damaged range, counted from the record's first byte.
    pub end: u64,
    /// The header, when it verified.
    pub header: Option<RecordHeader>,
}

/// Decodes one whole record at the start of `bytes`, verifying both
/// checksums and the offset against `expected`.
///
/// # Errors
/// The first defect, in the order: truncated header, header checksum, too
/// large, truncated payload, record checksum, offset out of order.
pub fn decode_record(bytes: &[u8], expected: ExpectedOffset) -> Result<(Record<'_>, usize), RecordDefect> {
    let available = bytes.len() as u64;
    let (header, hasher) = match decode_header_and_crc(bytes) {
        Ok(h) => h,
        Err((kind, header)) => {
            let end = match kind {
                CorruptionKind::Truncated { .. } => available,
                _ => RECORD_HEADER_LEN as u64,
            };
            return Err(RecordDefect { kind, end, header });
        }
    };
    verify_body(bytes, header, hasher, expected)
}

/// The rest of [`decode_record`] once the header verified: `hasher` is the
/// CRC state after bytes 0..20 ([`decode_header_and_crc`]), so a reader that
/// already decoded the header does not hash it again.
pub(crate) fn verify_body(
    bytes: &[u8],
    header: RecordHeader,
    mut hasher: crc32fast::Hasher,
    expected: ExpectedOffset,
) -> Result<(Record<'_>, usize), RecordDefect> {
    let available = bytes.len() as u64;
    let needed = header.record_len();
    if available < needed {
        return Err(RecordDefect { kind: CorruptionKind::Truncated { needed, available }, end: available, header: Some(header) });
    }
    let len = usize::try_from(needed).unwrap_or(usize::MAX);
    let payload = be::slice(bytes, RECORD_HEADER_LEN, len);
    hasher.update(be::slice(bytes, HEADER_CRC_AT, CHECKSUM_AT));
    hasher.update(payload);
    let computed = hasher.finalize();
    if computed != header.checksum {
        let kind = CorruptionKind::RecordChecksum { stored: header.checksum, computed };
        return Err(RecordDefect { kind, end: needed, header: Some(header) });
    }
    if let Err(kind) = expected.check(header.offset) {
        return Err(RecordDefect { kind, end: needed, header: Some(header) });
    }
    Ok((Record { header, payload }, len))
}

/// Appends one encoded record to `out`.
///
/// # Errors
/// `RecordTooLarge` when the payload is over `MAX_PAYLOAD_BYTES`; nothing is written.
pub fn encode_record(offset: u64, timestamp_micros: u64, payload: &[u8], out: &mut Vec<u8>) -> Result<(), CorruptionKind> {
    let payload_len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    if payload_len > MAX_PAYLOAD_BYTES {
        return Err(CorruptionKind::RecordTooLarge { payload_len, limit: MAX_PAYLOAD_BYTES });
    }
    let mut header = [0u8; RECORD_HEADER_LEN];
    be::put(&mut header, PAYLOAD_LEN_AT, &payload_len.to_be_bytes());
    be::put(&mut header, OFFSET_AT, &offset.to_be_bytes());
    be::put(&mut header, TIMESTAMP_AT, &timestamp_micros.to_be_bytes());
    let header_crc = be::crc32(be::slice(&header, 0, HEADER_CRC_AT));
    be::put(&mut header, HEADER_CRC_AT, &header_crc.to_be_bytes());
    let mut hasher = RecordHeader::checksum_hasher(&header);
    hasher.update(payload);
    be::put(&mut header, CHECKSUM_AT, &hasher.finalize().to_be_bytes());
    out.reserve(header.len() + payload.len());
    out.extend_from_slice(&header);
    out.extend_from_slice(payload);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::golden;
    use alloc::vec;

    #[test]
    fn encodes_the_spec_golden_vector() {
        let mut out = Vec::new();
        encode_record(7, 9, b"hi", &mut out).unwrap();
        assert_eq!(out, golden::RECORD);
    }

    #[test]
    fn decodes_the_spec_golden_vector() {
        let (r, used) = decode_record(&golden::RECORD, ExpectedOffset::Exactly(7)).unwrap();
        assert_eq!(used, 30);
        assert_eq!(r.payload, b"hi");
        assert_eq!((r.header.offset, r.header.timestamp_micros, r.header.payload_len), (7, 9, 2));
    }

    #[test]
    fn payload_rot_is_a_record_checksum_over_the_whole_record() {
        let err = decode_record(&golden::RECORD_PAYLOAD_DAMAGED, ExpectedOffset::Exactly(7)).unwrap_err();
        assert_eq!(err.kind, CorruptionKind::RecordChecksum { stored: 0x2402_152C, computed: golden::RECORD_PAYLOAD_DAMAGED_CRC });
        assert_eq!(err.end, 30);
    }

    #[test]
    fn length_rot_is_a_header_checksum_and_the_length_is_not_used() {
        let err = decode_record(&golden::RECORD_LENGTH_DAMAGED, ExpectedOffset::Exactly(7)).unwrap_err();
        assert_eq!(err.kind, CorruptionKind::RecordHeaderChecksum { stored: 0xC654_DE27, computed: golden::RECORD_LENGTH_DAMAGED_CRC });
        assert_eq!((err.end, err.header), (28, None));
    }

    #[test]
    fn a_short_payload_is_truncated_with_the_trusted_length() {
        let err = decode_record(&golden::RECORD[..29], ExpectedOffset::Exactly(7)).unwrap_err();
        assert_eq!(err.kind, CorruptionKind::Truncated { needed: 30, available: 29 });
    }

    #[test]
    fn a_gap_is_offset_out_of_order() {
        let err = decode_record(&golden::RECORD, ExpectedOffset::Exactly(6)).unwrap_err();
        assert_eq!(err.kind, CorruptionKind::OffsetOutOfOrder { expected: Some(6), found: 7 });
    }

    #[test]
    fn nothing_follows_offset_u64_max() {
        assert_eq!(ExpectedOffset::after(u64::MAX), ExpectedOffset::NoneLeft);
        let mut out = Vec::new();
        encode_record(0, 0, b"", &mut out).unwrap();
        let err = decode_record(&out, ExpectedOffset::NoneLeft).unwrap_err();
        assert_eq!(err.kind, CorruptionKind::OffsetOutOfOrder { expected: None, found: 0 });
    }

    #[test]
    fn an_oversized_verified_length_is_rejected_before_allocation() {
        let mut h = vec![0u8; 28];
        h[..4].copy_from_slice(&(MAX_PAYLOAD_BYTES + 1).to_be_bytes());
        let crc = be::crc32(&h[..20]);
        h[20..24].copy_from_slice(&crc.to_be_bytes());
        let err = decode_record(&h, ExpectedOffset::Any).unwrap_err();
        assert_eq!(err.kind, CorruptionKind::RecordTooLarge { payload_len: MAX_PAYLOAD_BYTES + 1, limit: MAX_PAYLOAD_BYTES });
        let mut out = Vec::new();
        let big = vec![0u8; MAX_PAYLOAD_BYTES as usize + 1];
        assert!(matches!(encode_record(0, 0, &big, &mut out), Err(CorruptionKind::RecordTooLarge { .. })));
        assert!(out.is_empty());
    }
}
