//! Verdicts: what is wrong ([`CorruptionKind`]), where ([`CorruptionSite`]),
//! which bytes to highlight and whether recovery may repair it ([`Finding`]).
//!
//! Kinds carry the values that prove them (`stored` vs `computed` checksum,
//! `needed` vs `available` bytes), so a test can `assert_eq!` the exact
//! verdict and a person can act on the message.

use alloc::string::String;
use core::fmt;

/// One kind of damage. Names are the spec's (`SegmentMagic`, `Truncated`, …);
/// see `docs/storage-format.md` for what each means and what to do.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CorruptionKind {
    /// The first four bytes of a segment are not `FLSG`.
    SegmentMagic {
        /// The bytes found.
        found: [u8; 4],
    },
    /// The first four bytes of an index are not `FLSI`.
    IndexMagic {
        /// The bytes found.
        found: [u8; 4],
    },
    /// A segment header names a version this build does not read.
    SegmentVersion {
        /// The version found.
        found: u16,
    },
    /// An index header names a version this build does not read.
    IndexVersion {
        /// The version found.
        found: u16,
    },
    /// A segment header has non-zero flags.
    SegmentFlags {
        /// The flags found.
        found: u16,
    },
    /// An index header has non-zero flags.
    IndexFlags {
        /// The flags found.
        found: u16,
    },
    /// The segment header's CRC does not match bytes 0..24.
    SegmentHeaderChecksum {
        /// CRC stored in the header.
        stored: u32,
        /// CRC computed over the bytes.
        computed: u32,
    },
    /// The file ends before a structure whose length is known does.
    Truncated {
        /// Bytes the structure needs.
        needed: u64,
        /// Bytes the file holds from the structure's start.
        available: u64,
    },
    /// A record header's `header_crc` does not match: its length cannot be trusted.
    RecordHeaderChecksum {
        /// `header_crc` stored in the record.
        stored: u32,
        /// CRC computed over bytes 0..20.
        computed: u32,
    },
    /// A record's `checksum` over header prefix and payload does not match.
    RecordChecksum {
        /// `checksum` stored in the record.
        stored: u32,
        /// CRC computed over bytes 0..24 and the payload.
        computed: u32,
    },
    /// A verified record header carries a `payload_len` over the limit.
    RecordTooLarge {
        /// The length found.
        payload_len: u32,
        /// `MAX_PAYLOAD_BYTES`.
        limit: u32,
    },
    /// A record's offset is not one more than the previous record's.
    OffsetOutOfOrder {
        /// The offset that should have been there; `None` when the previous
        /// record had offset `u64::MAX`, after which no offset exists.
        expected: Option<u64>,
        /// The offset found.
        found: u64,
    },
    /// An index's `base_offset` differs from its segment's.
    IndexBaseOffset {
        /// The index header's base offset.
        index: u64,
        /// The segment header's base offset.
        segment: u64,
    },
    /// An index entry does not ascend (by offset, or by position).
    IndexOutOfOrder {
        /// The previous entry's offset.
        previous_offset: u64,
        /// This entry's offset.
        offset: u64,
        /// The previous entry's position.
        previous_position: u64,
        /// This entry's position.
        position: u64,
    },
    /// An index entry does not land on an intact record with its offset.
    IndexEntryMismatch {
        /// The entry's offset.
        offset: u64,
        /// The entry's position in the segment.
        position: u64,
    },
    /// The epochs file does not start with `FLEP`.
    EpochsMagic {
        /// The bytes found.
        found: [u8; 4],
    },
    /// The epochs file names a version this build does not read.
    EpochsVersion {
        /// The version found.
        found: u16,
    },
    /// The epochs file's `body_crc` does not match its entries.
    EpochsChecksum {
        /// CRC stored in the file.
        stored: u32,
        /// CRC computed over the entries.
        computed: u32,
    },
    /// The epochs file holds bytes past its last entry.
    EpochsLength {
        /// Length implied by `count`.
        expected: u64,
        /// Length of the file.
        actual: u64,
    },
    /// The epochs file's `count` is over the limit.
    EpochsTooMany {
        /// The count found.
        count: u16,
        /// `MAX_EPOCHS`.
        limit: u16,
    },
    /// Generations do not strictly increase, or start offsets decrease.
    EpochsOrder {
        /// Zero-based number of the entry that breaks the order.
        entry: u16,
    },
    /// An epoch starts past the end of the shard's log.
    EpochsBeyondLog {
        /// The generation.
        generation: u64,
        /// Where the epochs file says it starts.
        start_offset: u64,
        /// The next offset the log would assign.
        log_end: u64,
    },
    /// A segment's base offset does not continue the previous segment.
    SegmentDiscontinuity {
        /// The base offset that continues the previous segment.
        expected: u64,
        /// The base offset found.
        found: u64,
    },
}

impl CorruptionKind {
    /// The exact variant name, as used in reports (`"RecordChecksum"`).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::SegmentMagic { .. } => "SegmentMagic",
            Self::IndexMagic { .. } => "IndexMagic",
            Self::SegmentVersion { .. } => "SegmentVersion",
            Self::IndexVersion { .. } => "IndexVersion",
            Self::SegmentFlags { .. } => "SegmentFlags",
            Self::IndexFlags { .. } => "IndexFlags",
            Self::SegmentHeaderChecksum { .. } => "SegmentHeaderChecksum",
            Self::Truncated { .. } => "Truncated",
            Self::RecordHeaderChecksum { .. } => "RecordHeaderChecksum",
            Self::RecordChecksum { .. } => "RecordChecksum",
            Self::RecordTooLarge { .. } => "RecordTooLarge",
            Self::OffsetOutOfOrder { .. } => "OffsetOutOfOrder",
            Self::IndexBaseOffset { .. } => "IndexBaseOffset",
            Self::IndexOutOfOrder { .. } => "IndexOutOfOrder",
            Self::IndexEntryMismatch { .. } => "IndexEntryMismatch",
            Self::EpochsMagic { .. } => "EpochsMagic",
            Self::EpochsVersion { .. } => "EpochsVersion",
            Self::EpochsChecksum { .. } => "EpochsChecksum",
            Self::EpochsLength { .. } => "EpochsLength",
            Self::EpochsTooMany { .. } => "EpochsTooMany",
            Self::EpochsOrder { .. } => "EpochsOrder",
            Self::EpochsBeyondLog { .. } => "EpochsBeyondLog",
            Self::SegmentDiscontinuity { .. } => "SegmentDiscontinuity",
        }
    }

    /// One plain sentence: what the damage means and what follows from it.
    #[must_use]
    pub fn meaning(&self) -> &'static str {
        match self {
            Self::SegmentMagic { .. } => "this is not a Felix segment: nothing in it can be read as records",
            Self::IndexMagic { .. } => "this is not a Felix index; the engine ignores it and rebuilds the index from its segment",
            Self::SegmentVersion { .. } | Self::IndexVersion { .. } => {
                "written by a format version this build does not read; it is rejected, never read best-effort"
            }
            Self::SegmentFlags { .. } | Self::IndexFlags { .. } => {
                "unknown flag bits may change the layout behind them, so the file is rejected"
            }
            Self::SegmentHeaderChecksum { .. } => {
                "the segment header was fsynced before any record, so this is rot, not a torn write; the segment cannot be opened"
            }
            Self::Truncated { .. } => "the file ends before this structure does: the signature of a write the process never finished",
            Self::RecordHeaderChecksum { .. } => {
                "the record header is damaged so its length cannot be trusted; bytes were skipped to the next header that verifies"
            }
            Self::RecordChecksum { .. } => "the record is complete on disk but its bytes changed after they were written (rot)",
            Self::RecordTooLarge { .. } => "a verified header carries a length the writer never produces: damage the checksums missed",
            Self::OffsetOutOfOrder { .. } => "offsets must ascend by exactly 1 within a segment; records are missing or misplaced",
            Self::IndexBaseOffset { .. } => "the index belongs to another segment; the engine rebuilds it",
            Self::IndexOutOfOrder { .. } => "index entries must ascend; binary search over this index would be wrong, so it is rebuilt",
            Self::IndexEntryMismatch { .. } => "the index points at bytes that are not this record (a stale index); the engine rebuilds it",
            Self::EpochsMagic { .. }
            | Self::EpochsVersion { .. }
            | Self::EpochsChecksum { .. }
            | Self::EpochsLength { .. }
            | Self::EpochsTooMany { .. }
            | Self::EpochsOrder { .. } => {
                "the epochs file reads as empty: no record is lost, but a divergence can no longer be repaired automatically"
            }
            Self::EpochsBeyondLog { .. } => "the history names a generation starting past the end of the log it describes",
            Self::SegmentDiscontinuity { .. } => {
                "consecutive segments must continue each other's offsets; records are missing or duplicated"
            }
        }
    }
}

fn magic(f: &mut fmt::Formatter<'_>, found: &[u8; 4]) -> fmt::Result {
    write!(f, "{:02X}{:02X}{:02X}{:02X}", found[0], found[1], found[2], found[3])?;
    if found.iter().all(|b| b.is_ascii_graphic()) {
        f.write_str(" (\"")?;
        for b in found {
            write!(f, "{}", char::from(*b))?;
        }
        f.write_str("\")")?;
    }
    Ok(())
}

impl fmt::Display for CorruptionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SegmentMagic { found } => {
                f.write_str("segment magic is ")?;
                magic(f, found)?;
                f.write_str(", expected 464C5347 (\"FLSG\")")
            }
            Self::IndexMagic { found } => {
                f.write_str("index magic is ")?;
                magic(f, found)?;
                f.write_str(", expected 464C5349 (\"FLSI\")")
            }
            Self::EpochsMagic { found } => {
                f.write_str("epochs magic is ")?;
                magic(f, found)?;
                f.write_str(", expected 464C4550 (\"FLEP\")")
            }
            Self::SegmentVersion { found } => write!(f, "segment version {found}, this build reads version {}", crate::FORMAT_VERSION),
            Self::IndexVersion { found } => write!(f, "index version {found}, this build reads version {}", crate::FORMAT_VERSION),
            Self::EpochsVersion { found } => {
                write!(f, "epochs version {found}, this build reads version {}", crate::EPOCHS_VERSION)
            }
            Self::SegmentFlags { found } => write!(f, "segment flags are {found:#06x}, must be 0"),
            Self::IndexFlags { found } => write!(f, "index flags are {found:#06x}, must be 0"),
            Self::SegmentHeaderChecksum { stored, computed } => {
                write!(f, "segment header_crc stored {stored:08X}, computed {computed:08X}")
            }
            Self::Truncated { needed, available } => write!(f, "truncated: needs {needed} bytes, {available} available"),
            Self::RecordHeaderChecksum { stored, computed } => {
                write!(f, "record header_crc stored {stored:08X}, computed {computed:08X}")
            }
            Self::RecordChecksum { stored, computed } => write!(f, "record checksum stored {stored:08X}, computed {computed:08X}"),
            Self::RecordTooLarge { payload_len, limit } => write!(f, "payload_len {payload_len} is over the limit of {limit} bytes"),
            Self::OffsetOutOfOrder { expected: Some(expected), found } => write!(f, "offset {found} where {expected} was expected"),
            Self::OffsetOutOfOrder { expected: None, found } => {
                write!(f, "offset {found} follows offset {}, after which no offset exists", u64::MAX)
            }
            Self::IndexBaseOffset { index, segment } => {
                write!(f, "index base_offset {index}, but its segment's base_offset is {segment}")
            }
            Self::IndexOutOfOrder { previous_offset, offset, previous_position, position } => write!(
                f,
                "index entry (offset {offset}, position {position}) follows (offset {previous_offset}, position {previous_position})"
            ),
            Self::IndexEntryMismatch { offset, position } => {
                write!(f, "index entry says offset {offset} is at byte {position}, but no intact record with that offset starts there")
            }
            Self::EpochsChecksum { stored, computed } => write!(f, "epochs body_crc stored {stored:08X}, computed {computed:08X}"),
            Self::EpochsLength { expected, actual } => {
                write!(f, "epochs file is {actual} bytes, but its count implies {expected}")
            }
            Self::EpochsTooMany { count, limit } => write!(f, "epochs count {count} is over the limit of {limit}"),
            Self::EpochsOrder { entry } => write!(f, "epochs entry {entry} does not follow the one before it"),
            Self::EpochsBeyondLog { generation, start_offset, log_end } => {
                write!(f, "generation {generation} starts at offset {start_offset}, past the log's end ({log_end})")
            }
            Self::SegmentDiscontinuity { expected, found } => {
                write!(f, "segment base_offset {found}, but the previous segment ends where {expected} would follow")
            }
        }
    }
}

/// Whether recovery may repair a finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Repair {
    /// Recovery repairs it on open with no operator involvement
    /// (a torn tail is cut; an index is rebuilt).
    Always,
    /// Recovery repairs it only with `repair_checksum_tail`.
    OptIn,
    /// Recovery refuses; an operator has to decide.
    Never,
}

impl Repair {
    /// `"always"`, `"opt-in"` or `"never"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Always => "always",
            Self::OptIn => "opt-in",
            Self::Never => "never",
        }
    }
}

impl fmt::Display for Repair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where damage is: shard, segment and byte position.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CorruptionSite {
    /// The shard directory name, when known.
    pub shard: Option<String>,
    /// The segment id (from the file name), when known.
    pub segment_id: Option<u64>,
    /// Byte position in the file where the damaged structure starts.
    pub position: u64,
}

impl fmt::Display for CorruptionSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(shard) = &self.shard {
            write!(f, "shard {shard}, ")?;
        }
        if let Some(id) = self.segment_id {
            write!(f, "segment {id:020}, ")?;
        }
        write!(f, "byte {} ({:#x})", self.position, self.position)
    }
}

/// One piece of damage: kind, site, the byte range to highlight, the record
/// offset when known, and the repair verdict.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Finding {
    /// What is wrong.
    pub kind: CorruptionKind,
    /// Where the damaged structure starts.
    pub site: CorruptionSite,
    /// Exclusive end of the byte range to highlight (`site.position..end`).
    pub end: u64,
    /// The record offset, when it is known.
    pub offset: Option<u64>,
    /// Whether recovery may repair it.
    pub repair: Repair,
}

impl Finding {
    /// First byte of the range to highlight.
    #[must_use]
    pub fn position(&self) -> u64 {
        self.site.position
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.kind.name(), self.site)?;
        if let Some(offset) = self.offset {
            write!(f, ", record offset {offset}")?;
        }
        write!(f, ": {}; {} (repair: {})", self.kind, self.kind.meaning(), self.repair)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn finding_reads_at_3am() {
        let f = Finding {
            kind: CorruptionKind::RecordChecksum { stored: 0x2402_152C, computed: 0x2402_152D },
            site: CorruptionSite { shard: Some("acme_default_orders_0-0d3aed4b998d2798".into()), segment_id: Some(3), position: 92 },
            end: 122,
            offset: Some(8),
            repair: Repair::OptIn,
        };
        assert_eq!(
            f.to_string(),
            "RecordChecksum at shard acme_default_orders_0-0d3aed4b998d2798, segment 00000000000000000003, byte 92 (0x5c), \
             record offset 8: record checksum stored 2402152C, computed 2402152D; \
             the record is complete on disk but its bytes changed after they were written (rot) (repair: opt-in)"
        );
    }

    #[test]
    fn magic_display_shows_ascii_when_printable() {
        let k = CorruptionKind::SegmentMagic { found: *b"FLSI" };
        assert_eq!(k.to_string(), "segment magic is 464C5349 (\"FLSI\"), expected 464C5347 (\"FLSG\")");
        let k = CorruptionKind::SegmentMagic { found: [0, 1, 2, 3] };
        assert_eq!(k.to_string(), "segment magic is 00010203, expected 464C5347 (\"FLSG\")");
    }
}
