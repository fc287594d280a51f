//! What recovery may repair: the spec's rules as one exhaustive table.
//!
//! Recovery truncates only damage confined to the end of the newest segment,
//! because only there can a record have been mid-write when the process died.
//! The dividing line is whether the length is trustworthy: when it is,
//! recovery can prove the write was unfinished; when it is not, it refuses to
//! choose between "unfinished" and "rotted" unless the operator opts in.
//!
//! | kind                          | place                     | verdict |
//! |-------------------------------|---------------------------|---------|
//! | `Truncated`                   | tail of newest segment    | always  |
//! | `RecordHeaderChecksum`        | tail of newest segment    | opt-in  |
//! | `RecordChecksum`              | tail of newest segment    | opt-in  |
//! | `OffsetOutOfOrder`            | tail of newest segment    | opt-in  |
//! | `RecordTooLarge`              | tail of newest segment    | opt-in  |
//! | any record damage             | elsewhere                 | never   |
//! | any damage                    | segment header            | never   |
//! | segment-level kinds           | anywhere                  | never   |
//! | index kinds                   | anywhere                  | always (rebuilt from the segment) |
//! | epochs kinds                  | anywhere                  | never (reads as empty; nothing to repair) |

use crate::corruption::{CorruptionKind, Repair};

/// Where in the shard a finding sits, as far as repair is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// Within a segment's 32-byte header.
    SegmentHeader,
    /// In the records of the newest segment, with no intact record after it.
    TailOfNewestSegment,
    /// Anywhere else: an older segment, or followed by intact records.
    Elsewhere,
}

/// Operator choices that widen what recovery may cut.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RepairOptions {
    /// Also cut a tail whose damage is rot (checksums, order, length) rather
    /// than a provably unfinished write.
    pub repair_checksum_tail: bool,
}

/// The verdict for `kind` at `place`, as the table in this module's doc says.
#[must_use]
pub fn repair_verdict(kind: &CorruptionKind, place: Place) -> Repair {
    use CorruptionKind as K;
    match (kind, place) {
        // Index files are never trusted; any problem means "rebuild".
        (K::IndexMagic { .. } | K::IndexVersion { .. } | K::IndexFlags { .. }, _) => Repair::Always,
        (K::IndexBaseOffset { .. } | K::IndexOutOfOrder { .. } | K::IndexEntryMismatch { .. }, _) => Repair::Always,
        // The epochs file reads as empty; there is nothing to cut or rebuild.
        (K::EpochsMagic { .. } | K::EpochsVersion { .. } | K::EpochsChecksum { .. }, _) => Repair::Never,
        (K::EpochsLength { .. } | K::EpochsTooMany { .. } | K::EpochsOrder { .. } | K::EpochsBeyondLog { .. }, _) => Repair::Never,
        // Segment headers are fsynced before any record: damage there is rot.
        (_, Place::SegmentHeader) => Repair::Never,
        (K::SegmentMagic { .. } | K::SegmentVersion { .. } | K::SegmentFlags { .. }, _) => Repair::Never,
        (K::SegmentHeaderChecksum { .. } | K::SegmentDiscontinuity { .. }, _) => Repair::Never,
        // Only the end of the newest segment can have been mid-write.
        (_, Place::Elsewhere) => Repair::Never,
        (K::Truncated { .. }, Place::TailOfNewestSegment) => Repair::Always,
        (K::RecordHeaderChecksum { .. }, Place::TailOfNewestSegment) => Repair::OptIn,
        (K::RecordChecksum { .. }, Place::TailOfNewestSegment) => Repair::OptIn,
        (K::OffsetOutOfOrder { .. }, Place::TailOfNewestSegment) => Repair::OptIn,
        (K::RecordTooLarge { .. }, Place::TailOfNewestSegment) => Repair::OptIn,
    }
}

/// Whether recovery may cut this damage from the end of the newest segment.
/// Index and epochs kinds are never "tail" damage (they are rebuilt or read
/// as empty, not cut), so this is `false` for them.
#[must_use]
pub fn is_repairable_tail(kind: &CorruptionKind, place: Place, options: RepairOptions) -> bool {
    if place != Place::TailOfNewestSegment || kind_is_not_segment_record(kind) {
        return false;
    }
    match repair_verdict(kind, place) {
        Repair::Always => true,
        Repair::OptIn => options.repair_checksum_tail,
        Repair::Never => false,
    }
}

fn kind_is_not_segment_record(kind: &CorruptionKind) -> bool {
    !matches!(
        kind,
        CorruptionKind::Truncated { .. }
            | CorruptionKind::RecordHeaderChecksum { .. }
            | CorruptionKind::RecordChecksum { .. }
            | CorruptionKind::OffsetOutOfOrder { .. }
            | CorruptionKind::RecordTooLarge { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use CorruptionKind as K;
    use Place::{Elsewhere, SegmentHeader, TailOfNewestSegment as Tail};

    const DEFAULT: RepairOptions = RepairOptions { repair_checksum_tail: false };
    const OPT_IN: RepairOptions = RepairOptions { repair_checksum_tail: true };

    fn truncated() -> K {
        K::Truncated { needed: 30, available: 12 }
    }
    fn header_crc() -> K {
        K::RecordHeaderChecksum { stored: 1, computed: 2 }
    }
    fn record_crc() -> K {
        K::RecordChecksum { stored: 1, computed: 2 }
    }
    fn order() -> K {
        K::OffsetOutOfOrder { expected: 1, found: 3 }
    }
    fn too_large() -> K {
        K::RecordTooLarge { payload_len: u32::MAX, limit: crate::MAX_PAYLOAD_BYTES }
    }

    /// (label, kind, place, repairable by default, repairable with opt-in)
    fn table() -> [(&'static str, K, Place, bool, bool); 16] {
        [
            ("torn tail: always", truncated(), Tail, true, true),
            ("torn record mid-file: never", truncated(), Elsewhere, false, false),
            ("short segment header: never", truncated(), SegmentHeader, false, false),
            ("header crc at tail: opt-in", header_crc(), Tail, false, true),
            ("header crc mid-file: never", header_crc(), Elsewhere, false, false),
            ("record crc at tail: opt-in", record_crc(), Tail, false, true),
            ("record crc mid-file: never", record_crc(), Elsewhere, false, false),
            ("offset order at tail: opt-in", order(), Tail, false, true),
            ("offset order mid-file: never", order(), Elsewhere, false, false),
            ("too large at tail: opt-in", too_large(), Tail, false, true),
            ("too large mid-file: never", too_large(), Elsewhere, false, false),
            ("segment magic: never", K::SegmentMagic { found: *b"FLSI" }, SegmentHeader, false, false),
            ("segment version: never", K::SegmentVersion { found: 1 }, SegmentHeader, false, false),
            ("segment flags: never", K::SegmentFlags { found: 1 }, SegmentHeader, false, false),
            ("segment header crc: never", K::SegmentHeaderChecksum { stored: 1, computed: 2 }, SegmentHeader, false, false),
            ("index damage is rebuilt, not cut", K::IndexEntryMismatch { offset: 1, position: 32 }, Tail, false, false),
        ]
    }

    #[test]
    fn every_labelled_case_of_the_table() {
        for (label, kind, place, by_default, with_opt_in) in table() {
            assert_eq!(is_repairable_tail(&kind, place, DEFAULT), by_default, "{label} (default)");
            assert_eq!(is_repairable_tail(&kind, place, OPT_IN), with_opt_in, "{label} (opt-in)");
        }
    }

    #[test]
    fn verdicts_name_the_three_classes() {
        assert_eq!(repair_verdict(&truncated(), Tail), Repair::Always);
        assert_eq!(repair_verdict(&record_crc(), Tail), Repair::OptIn);
        assert_eq!(repair_verdict(&record_crc(), Elsewhere), Repair::Never);
        assert_eq!(repair_verdict(&K::IndexMagic { found: [0; 4] }, Elsewhere), Repair::Always);
        assert_eq!(repair_verdict(&K::EpochsChecksum { stored: 0, computed: 1 }, Elsewhere), Repair::Never);
        assert_eq!(repair_verdict(&K::SegmentDiscontinuity { expected: 1, found: 2 }, Tail), Repair::Never);
    }
}
