//! The `epochs` file: where each leadership generation began.
//!
//! ```text
//! offset size field      value
//!  0      4   magic      0x464C4550 "FLEP"
//!  4      2   version    1
//!  6      2   count      entries following (at most MAX_EPOCHS)
//!  8      4   body_crc   CRC-32 over the entries
//! 12   16×n   entries    { generation u64, start_offset u64 }
//! ```
//!
//! Generations strictly increase; start offsets never decrease. The file is
//! not authoritative: absent, short or failing its checksum it reads as empty
//! (see [`read_or_empty`]) and the reason is reported, never a panic.
//!
//! # Example
//!
//! ```
//! use felix_codec::format::epochs::{decode, encode, read_or_empty, truncation_point, Epoch};
//! let history = [Epoch { generation: 1, start_offset: 0 }, Epoch { generation: 3, start_offset: 100 }];
//! let bytes = encode(&history).unwrap();
//! assert_eq!(decode(&bytes).unwrap(), history);
//! let (entries, defect) = read_or_empty(&bytes[..20]); // a torn file reads as empty, with its reason
//! assert!(entries.is_empty() && defect.is_some());
//! // A follower at 150 whose generation 3 the leader ended at 120 keeps offsets below 120.
//! assert_eq!(truncation_point(&history, 150, 3, 120), 120);
//! ```

use alloc::vec::Vec;

use crate::format::be;
use crate::verdict::corruption::CorruptionKind;

/// `FLEP`.
pub const EPOCHS_MAGIC: [u8; 4] = *b"FLEP";
pub use crate::EPOCHS_VERSION;
/// Most entries an epochs file may hold; writers drop the oldest beyond it.
pub const MAX_EPOCHS: u16 = 1024;
/// Position of `magic`.
pub const MAGIC_AT: usize = 0;
/// Position of `version`.
pub const VERSION_AT: usize = MAGIC_AT + 4;
/// Position of `count`.
pub const COUNT_AT: usize = VERSION_AT + 2;
/// Position of `body_crc`.
pub const BODY_CRC_AT: usize = COUNT_AT + 2;
/// Length of the header; entries follow.
pub const EPOCHS_HEADER_LEN: usize = BODY_CRC_AT + 4;
/// Length of one entry.
pub const EPOCH_ENTRY_LEN: usize = 16;
/// Largest valid epochs file.
pub const MAX_EPOCHS_FILE_LEN: usize = EPOCHS_HEADER_LEN + MAX_EPOCHS as usize * EPOCH_ENTRY_LEN;
const _: () = assert!(EPOCHS_HEADER_LEN == 12);

/// One generation and the first offset written in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Epoch {
    /// Leadership generation.
    pub generation: u64,
    /// First offset written in that generation.
    pub start_offset: u64,
}

/// A defect in an epochs file: kind and the byte range to highlight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EpochsDefect {
    /// What is wrong.
    pub kind: CorruptionKind,
    /// First byte of the range.
    pub start: u64,
    /// Exclusive end of the range.
    pub end: u64,
}

/// Encodes `entries` as a whole epochs file.
///
/// # Errors
/// `EpochsTooMany` over [`MAX_EPOCHS`]; `EpochsOrder` when the entries are
/// not in order. Nothing out of order is ever written.
pub fn encode(entries: &[Epoch]) -> Result<Vec<u8>, CorruptionKind> {
    let count = u16::try_from(entries.len()).ok().filter(|c| *c <= MAX_EPOCHS);
    let Some(count) = count else {
        return Err(CorruptionKind::EpochsTooMany { count: u16::try_from(entries.len()).unwrap_or(u16::MAX), limit: MAX_EPOCHS });
    };
    if let Some(entry) = first_out_of_order(entries) {
        return Err(CorruptionKind::EpochsOrder { entry });
    }
    let mut out = Vec::with_capacity(EPOCHS_HEADER_LEN + entries.len() * EPOCH_ENTRY_LEN);
    out.extend_from_slice(&EPOCHS_MAGIC);
    out.extend_from_slice(&EPOCHS_VERSION.to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    out.extend_from_slice(&[0; 4]);
    for e in entries {
        out.extend_from_slice(&e.generation.to_be_bytes());
        out.extend_from_slice(&e.start_offset.to_be_bytes());
    }
    let crc = be::crc32(be::slice(&out, EPOCHS_HEADER_LEN, out.len()));
    be::put(&mut out, BODY_CRC_AT, &crc.to_be_bytes());
    Ok(out)
}

/// Index of the first entry that breaks the order, if any.
#[must_use]
pub fn first_out_of_order(entries: &[Epoch]) -> Option<u16> {
    entries
        .windows(2)
        .position(|w| match w {
            [a, b] => b.generation <= a.generation || b.start_offset < a.start_offset,
            _ => false,
        })
        .map(|i| u16::try_from(i + 1).unwrap_or(u16::MAX))
}

/// Decodes a whole epochs file strictly.
///
/// # Errors
/// The first defect: `Truncated`, `EpochsMagic`, `EpochsVersion`,
/// `EpochsTooMany`, `EpochsLength`, `EpochsChecksum`, `EpochsOrder`.
pub fn decode(bytes: &[u8]) -> Result<Vec<Epoch>, EpochsDefect> {
    let len = bytes.len() as u64;
    let defect = |kind, start: usize, end: u64| Err(EpochsDefect { kind, start: start as u64, end });
    if bytes.len() >= VERSION_AT {
        let found: [u8; 4] = be::array(bytes, MAGIC_AT);
        if found != EPOCHS_MAGIC {
            return defect(CorruptionKind::EpochsMagic { found }, 0, VERSION_AT as u64);
        }
    }
    if bytes.len() >= COUNT_AT {
        let version = be::u16_at(bytes, VERSION_AT);
        if version != EPOCHS_VERSION {
            return defect(CorruptionKind::EpochsVersion { found: version }, 0, COUNT_AT as u64);
        }
    }
    if bytes.len() < EPOCHS_HEADER_LEN {
        return defect(CorruptionKind::Truncated { needed: EPOCHS_HEADER_LEN as u64, available: len }, 0, len);
    }
    let count = be::u16_at(bytes, COUNT_AT);
    if count > MAX_EPOCHS {
        return defect(CorruptionKind::EpochsTooMany { count, limit: MAX_EPOCHS }, 0, BODY_CRC_AT as u64);
    }
    let expected = (EPOCHS_HEADER_LEN + usize::from(count) * EPOCH_ENTRY_LEN) as u64;
    if len < expected {
        return defect(CorruptionKind::Truncated { needed: expected, available: len }, 0, len);
    }
    if len > expected {
        return defect(CorruptionKind::EpochsLength { expected, actual: len }, 0, len);
    }
    let body = be::slice(bytes, EPOCHS_HEADER_LEN, bytes.len());
    let stored = be::u32_at(bytes, BODY_CRC_AT);
    let computed = be::crc32(body);
    if stored != computed {
        return defect(CorruptionKind::EpochsChecksum { stored, computed }, 0, len);
    }
    let entries: Vec<Epoch> =
        body.chunks_exact(EPOCH_ENTRY_LEN).map(|c| Epoch { generation: be::u64_at(c, 0), start_offset: be::u64_at(c, 8) }).collect();
    if let Some(entry) = first_out_of_order(&entries) {
        let start = EPOCHS_HEADER_LEN + usize::from(entry) * EPOCH_ENTRY_LEN;
        return defect(CorruptionKind::EpochsOrder { entry }, start, (start + EPOCH_ENTRY_LEN) as u64);
    }
    Ok(entries)
}

/// The spec's reading: a damaged epochs file reads as empty, and the reason
/// is returned beside the (empty) history.
#[must_use]
pub fn read_or_empty(bytes: &[u8]) -> (Vec<Epoch>, Option<EpochsDefect>) {
    match decode(bytes) {
        Ok(entries) => (entries, None),
        Err(defect) => (Vec::new(), Some(defect)),
    }
}

/// Keeps the entries still relevant once records below `first_offset` are
/// gone: the last one starting at or below it, and all later ones.
#[must_use]
pub fn bound_epochs(entries: &[Epoch], first_offset: u64) -> Vec<Epoch> {
    let keep_from = entries.iter().rposition(|e| e.start_offset <= first_offset).unwrap_or(0);
    entries.get(keep_from..).unwrap_or(&[]).to_vec()
}

/// Kafka's leader-epoch truncation rule. A follower whose latest generation
/// is `gf` asks the leader where `gf` ends; the leader answers with the
/// largest generation `gl <= gf` it knows and `leader_end`, the offset after
/// that generation's last record on the leader. The follower keeps offsets
/// below `min(leader_end, local end of gl)`, where the local end of `gl` is
/// the start of the follower's first generation after `gl`, or its log end.
#[must_use]
pub fn truncation_point(local: &[Epoch], local_next_offset: u64, leader_generation: u64, leader_end: u64) -> u64 {
    let local_end = local.iter().find(|e| e.generation > leader_generation).map_or(local_next_offset, |e| e.start_offset);
    leader_end.min(local_end).min(local_next_offset)
}

/// Where generation `generation` ends in a log whose history is `entries`
/// and whose next offset is `next_offset`: the answer a leader gives a
/// follower, as `(the largest generation <= generation it knows, the offset
/// after that generation's last record)`. `None` when it knows no such generation.
///
/// Never before the generation's own start: a `next_offset` read before
/// the newest generation began (a caller's stale tail) would otherwise
/// answer an end below it, and a follower would cut records it must keep.
#[must_use]
pub fn end_of_generation(entries: &[Epoch], next_offset: u64, generation: u64) -> Option<(u64, u64)> {
    let at = entries.iter().rposition(|e| e.generation <= generation)?;
    let found = entries.get(at)?;
    let end = entries.get(at + 1).map_or(next_offset, |e| e.start_offset);
    Some((found.generation, end.max(found.start_offset)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[rustfmt::skip]
    const EPOCHS: [u8; 44] = [
        0x46, 0x4C, 0x45, 0x50,                         // magic "FLEP"
        0x00, 0x01,                                     // version 1
        0x00, 0x02,                                     // count 2
        0xCF, 0xD3, 0x5C, 0x27,                         // body_crc over the entries
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, // generation 1
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //   starts at offset 0
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, // generation 3
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, //   starts at offset 100
    ];

    fn two() -> Vec<Epoch> {
        vec![Epoch { generation: 1, start_offset: 0 }, Epoch { generation: 3, start_offset: 100 }]
    }

    #[test]
    fn annotated_vector_round_trips() {
        assert_eq!(encode(&two()).unwrap(), EPOCHS);
        assert_eq!(decode(&EPOCHS).unwrap(), two());
    }

    #[test]
    fn damaged_twin_reads_as_empty_with_its_reason() {
        let mut b = EPOCHS;
        b[43] = 0x65; // start offset 100 rotted to 101
        let (entries, defect) = read_or_empty(&b);
        assert!(entries.is_empty());
        let defect = defect.unwrap();
        assert_eq!(defect.kind.name(), "EpochsChecksum");
        assert_eq!((defect.start, defect.end), (0, 44));
    }

    #[test]
    fn truncation_point_follows_the_leader_epoch_rule() {
        let local = [
            Epoch { generation: 1, start_offset: 0 },
            Epoch { generation: 2, start_offset: 50 },
            Epoch { generation: 4, start_offset: 80 },
        ];
        assert_eq!(truncation_point(&local, 100, 4, 120), 100, "leader is ahead: keep everything");
        assert_eq!(truncation_point(&local, 100, 2, 70), 70, "leader's generation 2 ended at 70");
        assert_eq!(truncation_point(&local, 100, 2, 90), 80, "our generation 2 ended at 80");
        assert_eq!(truncation_point(&local, 100, 3, 95), 80, "we never saw generation 3: cut where our next began");
        assert_eq!(end_of_generation(&local, 100, 3), Some((2, 80)));
        assert_eq!(end_of_generation(&local, 100, 4), Some((4, 100)));
        assert_eq!(end_of_generation(&local, 100, 0), None);
        assert_eq!(end_of_generation(&local, 70, 4), Some((4, 80)), "a next offset read before generation 4 began: its start, not before");
        assert_eq!(bound_epochs(&local, 60), local[1..]);
    }

    #[test]
    fn short_long_and_disordered_files_are_named() {
        assert_eq!(decode(&EPOCHS[..40]).unwrap_err().kind, CorruptionKind::Truncated { needed: 44, available: 40 });
        let mut long = EPOCHS.to_vec();
        long.push(0);
        assert_eq!(decode(&long).unwrap_err().kind, CorruptionKind::EpochsLength { expected: 44, actual: 45 });
        let bad = [Epoch { generation: 2, start_offset: 5 }, Epoch { generation: 2, start_offset: 6 }];
        assert_eq!(encode(&bad).unwrap_err(), CorruptionKind::EpochsOrder { entry: 1 });
    }
}
