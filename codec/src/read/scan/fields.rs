//! Labelled byte ranges: which field each byte belongs to. The inspector's
//! hex view colours and names bytes with these; the layouts come from the
//! structure modules' constants, so they cannot drift from the decoders.

use crate::format::{epochs, index, record, segment_header};

/// What a field is, for colouring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldClass {
    /// A magic number.
    Magic,
    /// A version number.
    Version,
    /// Flags.
    Flags,
    /// A logical offset.
    Offset,
    /// A byte position or length.
    Length,
    /// A timestamp.
    Timestamp,
    /// A checksum.
    Crc,
    /// Reserved bytes.
    Reserved,
    /// Opaque payload.
    Payload,
    /// A generation or count.
    Count,
}

/// One labelled field: `start..end` relative to its structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    /// Field name as in the spec (`payload_len`).
    pub name: &'static str,
    /// First byte, relative to the structure's start.
    pub start: u64,
    /// Exclusive end, relative to the structure's start.
    pub end: u64,
    /// What the field is.
    pub class: FieldClass,
}

const fn f(name: &'static str, start: usize, len: usize, class: FieldClass) -> Field {
    Field { name, start: start as u64, end: (start + len) as u64, class }
}

/// The segment header's fields.
pub const SEGMENT_HEADER_FIELDS: [Field; 7] = [
    f("magic", segment_header::MAGIC_AT, 4, FieldClass::Magic),
    f("version", segment_header::VERSION_AT, 2, FieldClass::Version),
    f("flags", segment_header::FLAGS_AT, 2, FieldClass::Flags),
    f("base_offset", segment_header::BASE_OFFSET_AT, 8, FieldClass::Offset),
    f("created_at_micros", segment_header::CREATED_AT, 8, FieldClass::Timestamp),
    f("header_crc", segment_header::HEADER_CRC_AT, 4, FieldClass::Crc),
    f("reserved", segment_header::RESERVED_AT, 4, FieldClass::Reserved),
];

/// A record header's fields (the payload follows at 28).
pub const RECORD_HEADER_FIELDS: [Field; 5] = [
    f("payload_len", record::PAYLOAD_LEN_AT, 4, FieldClass::Length),
    f("offset", record::OFFSET_AT, 8, FieldClass::Offset),
    f("timestamp_micros", record::TIMESTAMP_AT, 8, FieldClass::Timestamp),
    f("header_crc", record::HEADER_CRC_AT, 4, FieldClass::Crc),
    f("checksum", record::CHECKSUM_AT, 4, FieldClass::Crc),
];

/// The index header's fields.
pub const INDEX_HEADER_FIELDS: [Field; 5] = [
    f("magic", index::MAGIC_AT, 4, FieldClass::Magic),
    f("version", index::VERSION_AT, 2, FieldClass::Version),
    f("flags", index::FLAGS_AT, 2, FieldClass::Flags),
    f("base_offset", index::BASE_OFFSET_AT, 8, FieldClass::Offset),
    f("reserved", index::RESERVED_AT, 8, FieldClass::Reserved),
];

/// An index entry's fields.
pub const INDEX_ENTRY_FIELDS: [Field; 2] =
    [f("offset", index::ENTRY_OFFSET_AT, 8, FieldClass::Offset), f("position", index::ENTRY_POSITION_AT, 8, FieldClass::Length)];

/// The epochs header's fields.
pub const EPOCHS_HEADER_FIELDS: [Field; 4] = [
    f("magic", epochs::MAGIC_AT, 4, FieldClass::Magic),
    f("version", epochs::VERSION_AT, 2, FieldClass::Version),
    f("count", epochs::COUNT_AT, 2, FieldClass::Count),
    f("body_crc", epochs::BODY_CRC_AT, 4, FieldClass::Crc),
];

/// An epochs entry's fields.
pub const EPOCH_ENTRY_FIELDS: [Field; 2] = [f("generation", 0, 8, FieldClass::Count), f("start_offset", 8, 8, FieldClass::Offset)];

const _: () = assert!(SEGMENT_HEADER_FIELDS[6].end as usize == segment_header::SEGMENT_HEADER_LEN);
const _: () = assert!(RECORD_HEADER_FIELDS[4].end as usize == record::RECORD_HEADER_LEN);
const _: () = assert!(INDEX_HEADER_FIELDS[4].end as usize == index::INDEX_HEADER_LEN);
const _: () = assert!(EPOCHS_HEADER_FIELDS[3].end as usize == epochs::EPOCHS_HEADER_LEN);
