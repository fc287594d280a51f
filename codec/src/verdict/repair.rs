//! What recovery may repair: the spec's rules as one exhaustive table.
//!
//! Recovery truncates only damage confined to the end of the newest segment,
//! because only there can a record have been mid-write when the process died.
//! The dividing line is whether the length is trustworthy: when it is,
//! recovery can prove the write was unfinished; when it is not, it refuses to
//! choose between "unfinished" and "rotted" unless the operator opts in.
//!
//! [`is_repairable_tail`] is upstream's rule (the broker's
//! `segment/reader.rs`, which the spec names as the authority), with the same
//! inputs: an opt-in repair is allowed only when the damage reaches the end
//! of the file. [`repair_verdict`] adds the place: only the newest segment,
//! never a segment whose header was rejected, and never damage followed by
//! an intact record (stricter than upstream for `RecordTooLarge`: see
//! `docs/storage-format.md`, "Where we differ from upstream").
//!
//! | kind                   | place: tail of the newest segment (no intact record after it) | verdict |
//! |------------------------|---------------------------------------------------------------|---------|
//! | `Truncated`            | the file ends inside the structure                             | always  |
//! | `RecordHeaderChecksum` | the file ends within that 28-byte header                       | opt-in  |
//! | `RecordHeaderChecksum` | bytes follow the header                                        | never   |
//! | `RecordChecksum`       | the record's claimed end reaches the end of the file           | opt-in  |
//! | `OffsetOutOfOrder`     | the record's claimed end reaches the end of the file           | opt-in  |
//! | `RecordChecksum`, `OffsetOutOfOrder` | bytes follow the record                          | never   |
//! | `RecordTooLarge`       | its claimed end lies past the end of the file                  | opt-in  |
//! | `RecordTooLarge`       | its claimed end lies within the file                           | never   |
//! | any record damage      | elsewhere (older segment, or an intact record follows)         | never   |
//! | any record damage      | in a segment whose header was rejected                         | never   |
//! | any damage             | segment header                                                 | never   |
//! | segment-level kinds    | anywhere                                                       | never   |
//! | index kinds            | anywhere                                                       | always (rebuilt from the segment) |
//! | epochs kinds           | anywhere                                                       | never (reads as empty; nothing to repair) |

use crate::format::record::RECORD_HEADER_LEN;
use crate::verdict::corruption::{CorruptionKind, Repair};

/// Where in the shard a finding sits, as far as repair is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// Within a segment's 32-byte header.
    SegmentHeader,
    /// In the records of a segment whose header was rejected: segment-header
    /// damage is never repairable, and nothing behind it can be either.
    RejectedSegment,
    /// In the records of the newest segment, with no intact record after it.
    Tail(TailDamage),
    /// Anywhere else: an older segment, or followed by intact records.
    Elsewhere,
}

/// Where tail damage lies relative to the end of the file: upstream's inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TailDamage {
    /// Byte position of the damaged record.
    pub position: u64,
    /// The record's whole length as its verified header claims it
    /// (`RecordChecksum`, `OffsetOutOfOrder`); `None` when the header did not verify.
    pub claimed_len: Option<u64>,
    /// Length of the file.
    pub file_len: u64,
}

impl TailDamage {
    /// The facts for a finding of `kind` spanning `position..end` in a file of
    /// `file_len` bytes (for record checksum and order findings the range is
    /// the whole record its header claims).
    #[must_use]
    pub fn of(kind: &CorruptionKind, position: u64, end: u64, file_len: u64) -> Self {
        let claimed_len = match kind {
            CorruptionKind::RecordChecksum { .. } | CorruptionKind::OffsetOutOfOrder { .. } => Some(end.saturating_sub(position)),
            _ => None,
        };
        Self { position, claimed_len, file_len }
    }
}

/// Operator choices that widen what recovery may cut.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RepairOptions {
    /// Also cut a tail whose damage is rot (checksums, order, length) rather
    /// than a provably unfinished write.
    pub repair_checksum_tail: bool,
}

/// The command-line flag that allows an opt-in repair.
pub const OPT_IN_FLAG: &str = "--repair-checksum-tail";

/// Upstream's rule, with upstream's inputs: whether damage of `kind` at the
/// end of the newest segment may be cut. `Truncated` always; the rot kinds
/// only with `repair_checksum_tail` and only when the damage reaches the end
/// of the file; every other kind never.
#[must_use]
pub fn is_repairable_tail(kind: &CorruptionKind, damage: &TailDamage, options: RepairOptions) -> bool {
    let TailDamage { position, claimed_len, file_len } = *damage;
    let opt_in = options.repair_checksum_tail;
    match kind {
        CorruptionKind::Truncated { .. } => true,
        CorruptionKind::RecordHeaderChecksum { .. } => opt_in && position.saturating_add(RECORD_HEADER_LEN as u64) >= file_len,
        CorruptionKind::RecordChecksum { .. } | CorruptionKind::OffsetOutOfOrder { .. } => {
            opt_in && claimed_len.is_some_and(|len| position.saturating_add(len) >= file_len)
        }
        CorruptionKind::RecordTooLarge { payload_len, .. } => {
            opt_in && position.saturating_add(RECORD_HEADER_LEN as u64 + u64::from(*payload_len)) > file_len
        }
        _ => false,
    }
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
        // Segment headers are fsynced before any record: damage there is rot,
        // and nothing behind a rejected header can be judged repairable.
        (_, Place::SegmentHeader | Place::RejectedSegment) => Repair::Never,
        (K::SegmentMagic { .. } | K::SegmentVersion { .. } | K::SegmentFlags { .. }, _) => Repair::Never,
        (K::SegmentHeaderChecksum { .. } | K::SegmentDiscontinuity { .. }, _) => Repair::Never,
        // Only the end of the newest segment can have been mid-write.
        (_, Place::Elsewhere) => Repair::Never,
        (K::Truncated { .. }, Place::Tail(_)) => Repair::Always,
        (_, Place::Tail(damage)) => {
            if is_repairable_tail(kind, &damage, RepairOptions { repair_checksum_tail: true }) {
                Repair::OptIn
            } else {
                Repair::Never
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;
    use CorruptionKind as K;

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
        K::OffsetOutOfOrder { expected: Some(1), found: 3 }
    }
    fn too_large(payload_len: u32) -> K {
        K::RecordTooLarge { payload_len, limit: crate::MAX_PAYLOAD_BYTES }
    }
    /// A damaged record at byte 100 in a file of `file_len` bytes; its claimed length is 60 when known.
    fn at_100(kind: &K, file_len: u64) -> Place {
        Place::Tail(TailDamage::of(kind, 100, 160, file_len))
    }

    /// (label, kind, place, repairable by default, repairable with opt-in).
    /// Every case of upstream's `is_repairable_tail`, and the places it does not see.
    fn table() -> Vec<(&'static str, K, Place, bool, bool)> {
        vec![
            ("torn tail: always", truncated(), at_100(&truncated(), 112), true, true),
            ("torn record mid-file: never", truncated(), Place::Elsewhere, false, false),
            ("short segment header: never", truncated(), Place::SegmentHeader, false, false),
            ("header crc, file ends with that header: opt-in", header_crc(), at_100(&header_crc(), 128), false, true),
            ("header crc, bytes follow the header (a zero-filled tail): never", header_crc(), at_100(&header_crc(), 4096), false, false),
            ("header crc mid-file: never", header_crc(), Place::Elsewhere, false, false),
            ("record crc, claimed end is the file's end: opt-in", record_crc(), at_100(&record_crc(), 160), false, true),
            ("record crc followed by stray bytes: never", record_crc(), at_100(&record_crc(), 161), false, false),
            ("record crc mid-file: never", record_crc(), Place::Elsewhere, false, false),
            ("offset order, claimed end is the file's end: opt-in", order(), at_100(&order(), 160), false, true),
            ("offset order followed by stray bytes: never", order(), at_100(&order(), 200), false, false),
            ("offset order mid-file: never", order(), Place::Elsewhere, false, false),
            ("too large, claimed end past the file's end: opt-in", too_large(1 << 27), at_100(&too_large(1 << 27), 4096), false, true),
            ("too large, claimed end within the file: never", too_large(100), at_100(&too_large(100), 4096), false, false),
            ("too large followed by an intact record: never (stricter than upstream)", too_large(1 << 27), Place::Elsewhere, false, false),
            ("record damage in a segment whose header was rejected: never", truncated(), Place::RejectedSegment, false, false),
            ("segment magic: never", K::SegmentMagic { found: *b"FLSI" }, Place::SegmentHeader, false, false),
            ("segment version: never", K::SegmentVersion { found: 1 }, Place::SegmentHeader, false, false),
            ("segment flags: never", K::SegmentFlags { found: 1 }, Place::SegmentHeader, false, false),
            ("segment header crc: never", K::SegmentHeaderChecksum { stored: 1, computed: 2 }, Place::SegmentHeader, false, false),
            (
                "index damage is rebuilt, not cut",
                K::IndexEntryMismatch { offset: 1, position: 32 },
                at_100(&truncated(), 112),
                false,
                false,
            ),
        ]
    }

    fn damage(place: Place) -> Option<TailDamage> {
        match place {
            Place::Tail(d) => Some(d),
            _ => None,
        }
    }

    #[test]
    fn every_labelled_case_of_the_table() {
        for (label, kind, place, by_default, with_opt_in) in table() {
            let allowed = |options| damage(place).is_some_and(|d| is_repairable_tail(&kind, &d, options));
            let index_kind = kind.name().starts_with("Index");
            assert_eq!(allowed(DEFAULT) && !index_kind, by_default, "{label} (default)");
            assert_eq!(allowed(OPT_IN) && !index_kind, with_opt_in, "{label} (opt-in)");
            let verdict = repair_verdict(&kind, place);
            let expected = if index_kind || by_default {
                Repair::Always
            } else if with_opt_in {
                Repair::OptIn
            } else {
                Repair::Never
            };
            assert_eq!(verdict, expected, "{label} (verdict)");
        }
    }

    #[test]
    fn verdicts_name_the_three_classes() {
        assert_eq!(repair_verdict(&truncated(), at_100(&truncated(), 112)), Repair::Always);
        assert_eq!(repair_verdict(&record_crc(), at_100(&record_crc(), 160)), Repair::OptIn);
        assert_eq!(repair_verdict(&record_crc(), Place::Elsewhere), Repair::Never);
        assert_eq!(repair_verdict(&K::IndexMagic { found: [0; 4] }, Place::Elsewhere), Repair::Always);
        assert_eq!(repair_verdict(&K::EpochsChecksum { stored: 0, computed: 1 }, Place::Elsewhere), Repair::Never);
        assert_eq!(repair_verdict(&K::SegmentDiscontinuity { expected: 1, found: 2 }, at_100(&truncated(), 112)), Repair::Never);
    }

    #[test]
    fn lengths_near_u64_max_never_wrap_into_a_repair() {
        let d = TailDamage { position: u64::MAX - 3, claimed_len: Some(u64::MAX), file_len: u64::MAX };
        assert!(is_repairable_tail(&record_crc(), &d, OPT_IN), "saturates to the end: reaches it");
        let d = TailDamage { position: u64::MAX, claimed_len: None, file_len: 10 };
        assert!(!is_repairable_tail(&too_large(0), &d, DEFAULT));
    }
}
