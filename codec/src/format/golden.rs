//! Golden vectors from the spec, byte for byte, each with a damaged twin.
//!
//! Changing a valid vector is a format change: bump `FORMAT_VERSION`, update
//! `docs/storage-format.md` and state the migration path. The damaged twins
//! flip one byte each; their expected findings are written out here and
//! asserted in `codec/src/*` unit tests and `tests/tests/golden.rs`.

/// `SegmentHeader::new(base_offset = 1, created_at_micros = 2)`.
#[rustfmt::skip]
pub const SEGMENT_HEADER: [u8; 32] = [
    0x46, 0x4C, 0x53, 0x47,                         // magic "FLSG"
    0x00, 0x02,                                     // version 2
    0x00, 0x00,                                     // flags 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, // base_offset 1
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, // created_at_micros 2
    0x7A, 0x09, 0xE5, 0xB1,                         // header_crc over bytes 0..24
    0x00, 0x00, 0x00, 0x00,                         // reserved
];

/// [`SEGMENT_HEADER`] with byte 15 (`base_offset`'s last byte) rotted 01 → 03.
/// Expected: `SegmentHeaderChecksum { stored: 7A09E5B1, computed: 54FFCD37 }`
/// at byte 0, highlighting 0..28, repair `never`.
#[rustfmt::skip]
pub const SEGMENT_HEADER_DAMAGED: [u8; 32] = [
    0x46, 0x4C, 0x53, 0x47,                         // magic "FLSG"
    0x00, 0x02,                                     // version 2
    0x00, 0x00,                                     // flags 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, // base_offset: 01 rotted to 03
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, // created_at_micros 2
    0x7A, 0x09, 0xE5, 0xB1,                         // header_crc (of the original bytes)
    0x00, 0x00, 0x00, 0x00,                         // reserved
];
/// CRC of bytes 0..24 of [`SEGMENT_HEADER_DAMAGED`].
pub const SEGMENT_HEADER_DAMAGED_CRC: u32 = 0x54FF_CD37;

/// `encode_record(offset = 7, timestamp = 9, payload = "hi")`.
#[rustfmt::skip]
pub const RECORD: [u8; 30] = [
    0x00, 0x00, 0x00, 0x02,                         // payload_len 2
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, // offset 7
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, // timestamp_micros 9
    0xC6, 0x54, 0xDE, 0x27,                         // header_crc over bytes 0..20
    0x24, 0x02, 0x15, 0x2C,                         // checksum over bytes 0..24 + payload
    0x68, 0x69,                                     // payload "hi"
];

/// [`RECORD`] with its payload rotted "hi" → "hj".
/// Expected: `RecordChecksum { stored: 2402152C, computed: BD0B4496 }` at the
/// record's first byte, highlighting the whole record (30 bytes), offset 7.
#[rustfmt::skip]
pub const RECORD_PAYLOAD_DAMAGED: [u8; 30] = [
    0x00, 0x00, 0x00, 0x02,                         // payload_len 2
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, // offset 7
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, // timestamp_micros 9
    0xC6, 0x54, 0xDE, 0x27,                         // header_crc over bytes 0..20
    0x24, 0x02, 0x15, 0x2C,                         // checksum (of the original bytes)
    0x68, 0x6A,                                     // payload: "hi" rotted to "hj"
];
/// Checksum of [`RECORD_PAYLOAD_DAMAGED`] as computed.
pub const RECORD_PAYLOAD_DAMAGED_CRC: u32 = 0xBD0B_4496;

/// [`RECORD`] with its length rotted 2 → 3.
/// Expected: `RecordHeaderChecksum { stored: C654DE27, computed: 41F21564 }`
/// at the record's first byte: the length is not trusted.
#[rustfmt::skip]
pub const RECORD_LENGTH_DAMAGED: [u8; 30] = [
    0x00, 0x00, 0x00, 0x03,                         // payload_len: 2 rotted to 3
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, // offset 7
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, // timestamp_micros 9
    0xC6, 0x54, 0xDE, 0x27,                         // header_crc (of the original bytes)
    0x24, 0x02, 0x15, 0x2C,                         // checksum
    0x68, 0x69,                                     // payload "hi"
];
/// Header CRC of [`RECORD_LENGTH_DAMAGED`] as computed.
pub const RECORD_LENGTH_DAMAGED_CRC: u32 = 0x41F2_1564;
