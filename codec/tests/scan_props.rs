//! The scanner's promises, over every byte: every single-bit flip of a small
//! multi-record segment is found at the right record; truncating at every
//! byte gives exactly the expected `Truncated`; any chunking gives the same
//! result; encoders and decoders round-trip.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use felix_codec::format::epochs::{self, Epoch};
use felix_codec::format::index::{IndexEntry, IndexHeader};
use felix_codec::format::record::{decode_record, encode_record, ExpectedOffset};
use felix_codec::format::segment_header::SegmentHeader;
use felix_codec::read::scan::segment::scan_segment;
use felix_codec::read::scan::{Item, ScanContext, SegmentScanner};
use felix_codec::{CorruptionKind, Repair};
use proptest::prelude::*;

fn newest() -> ScanContext {
    ScanContext { newest_segment: true, ..ScanContext::default() }
}

#[test]
fn every_single_bit_flip_is_found_at_the_right_record() {
    let (clean, pos) = common::small();
    let ends: Vec<u64> = pos.iter().skip(1).copied().chain([clean.len() as u64]).collect();
    for byte in 0..clean.len() {
        for bit in 0..8 {
            let mut b = clean.clone();
            b[byte] ^= 1 << bit;
            let s = scan_segment(&b, newest());
            let label = format!("flip of byte {byte} bit {bit}");
            if byte < 32 {
                if byte >= 28 {
                    // `reserved` is outside header_crc: the flip is reported as a note.
                    assert!(s.findings.findings.is_empty(), "{label}");
                    assert!(s.findings.notes[0].contains("reserved"), "{label}");
                    continue;
                }
                let f = &s.findings.findings[0];
                // Table order: magic, version, flags, then the CRC.
                let expected = match byte {
                    0..=3 => "SegmentMagic",
                    4..=5 => "SegmentVersion",
                    6..=7 => "SegmentFlags",
                    _ => "SegmentHeaderChecksum",
                };
                assert_eq!((f.kind.name(), f.position(), f.repair), (expected, 0, Repair::Never), "{label}");
                continue;
            }
            let k = pos.iter().rposition(|p| *p as usize <= byte).unwrap();
            assert_eq!(s.findings.findings.len(), 1, "{label}: {:?}", s.findings.findings);
            let f = &s.findings.findings[0];
            let in_record = byte as u64 - pos[k];
            let kind = if in_record < 24 { "RecordHeaderChecksum" } else { "RecordChecksum" };
            // Upstream's rule: opt-in only when the damage reaches the end of the
            // file — the last record's checksum does; its header does not (its payload follows).
            let last = k == pos.len() - 1;
            let repair = if last && kind == "RecordChecksum" { Repair::OptIn } else { Repair::Never };
            assert_eq!((f.kind.name(), f.position(), f.end, f.repair), (kind, pos[k], ends[k], repair), "{label}");
            assert_eq!(s.records, 4, "{label}: every other record is intact");
        }
    }
}

#[test]
fn truncating_at_every_byte_gives_exactly_the_expected_truncated() {
    let (clean, pos) = common::small();
    let ends: Vec<u64> = pos.iter().skip(1).copied().chain([clean.len() as u64]).collect();
    for cut in 0..=clean.len() {
        let s = scan_segment(&clean[..cut], newest());
        let cut = cut as u64;
        if cut < 32 {
            // The newest segment: an unfinished creation, a note.
            assert!(s.findings.findings.is_empty() && s.unfinished, "cut at {cut}");
            assert!(s.findings.notes[0].starts_with("unfinished creation"), "cut at {cut}");
            // Any other segment: damage.
            let older = scan_segment(&clean[..cut as usize], ScanContext::default());
            let f = &older.findings.findings[0];
            assert_eq!(f.kind, CorruptionKind::Truncated { needed: 32, available: cut });
            assert_eq!((f.position(), f.end, f.repair, older.unfinished), (0, cut, Repair::Never, false));
            continue;
        }
        let whole = ends.iter().filter(|e| **e <= cut).count();
        assert_eq!(s.records, whole as u64, "cut at {cut}");
        if pos.contains(&cut) || cut == clean.len() as u64 {
            assert!(s.findings.findings.is_empty(), "cut at a boundary {cut}: {:?}", s.findings.findings);
            continue;
        }
        let start = pos[whole];
        let available = cut - start;
        let needed = if available < 28 { 28 } else { ends[whole] - start };
        let f = &s.findings.findings[..];
        assert_eq!(f.len(), 1, "cut at {cut}");
        assert_eq!(f[0].kind, CorruptionKind::Truncated { needed, available }, "cut at {cut}");
        assert_eq!((f[0].position(), f[0].end, f[0].repair), (start, cut, Repair::Always), "cut at {cut}");
        assert_eq!(s.clean_prefix_end, start, "recovery keeps exactly the complete records");
    }
}

#[test]
fn with_a_live_writer_a_torn_last_record_is_in_flight_not_damage() {
    let (clean, pos) = common::small();
    let live = ScanContext { writer_live: true, ..newest() };
    for cut in 33..clean.len() {
        if pos.contains(&(cut as u64)) {
            continue;
        }
        let s = scan_segment(&clean[..cut], live.clone());
        let start = *pos.iter().rev().find(|p| **p < cut as u64).unwrap();
        assert!(s.findings.findings.is_empty(), "cut at {cut}: {:?}", s.findings.findings);
        assert!(s.findings.notes[0].starts_with("shard is open for writing; the tail may be in flight"), "cut at {cut}");
        assert_eq!((s.in_flight_bytes, s.clean_prefix_end), (cut as u64 - start, start), "cut at {cut}");
    }
    // Damage before the tail is still damage, and the tail with it.
    let mut rotted = clean[..clean.len() - 1].to_vec();
    rotted[pos[1] as usize + 28] ^= 1;
    let s = scan_segment(&rotted, live);
    let kinds: Vec<&str> = s.findings.findings.iter().map(|f| f.kind.name()).collect();
    assert_eq!(kinds, ["RecordChecksum", "Truncated"]);
}

fn scan_in_chunks(bytes: &[u8], sizes: &[usize]) -> (String, String) {
    let mut items = String::new();
    let mut scanner = SegmentScanner::new(newest());
    let mut sink = |item: Item<'_>| {
        // Findings are shown provisionally; compare the structures.
        if !matches!(item, Item::Finding(_)) {
            items.push_str(&format!("{item:?}\n"));
        }
    };
    let mut at = 0;
    let mut i = 0;
    while at < bytes.len() {
        let n = sizes[i % sizes.len()].max(1).min(bytes.len() - at);
        scanner.feed(&bytes[at..at + n], &mut sink);
        at += n;
        i += 1;
    }
    let summary = scanner.finish(&mut sink);
    (items, format!("{summary:?}"))
}

fn arb_segment() -> impl Strategy<Value = Vec<u8>> {
    (any::<u64>(), prop::collection::vec(prop::collection::vec(any::<u8>(), 0..80), 0..12)).prop_map(|(base, payloads)| {
        let base = base >> 1;
        let mut out = SegmentHeader::new(base, 5).encode().to_vec();
        for (i, p) in payloads.iter().enumerate() {
            encode_record(base + i as u64, 7, p, &mut out).unwrap();
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_chunking_gives_the_same_items_and_summary(
        seg in arb_segment(),
        damage in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
        sizes in prop::collection::vec(1usize..64, 1..8),
    ) {
        let mut seg = seg;
        for (at, x) in damage {
            let i = at.index(seg.len());
            seg[i] ^= x;
        }
        let keep = seg.len() - cut.index(seg.len().min(40));
        seg.truncate(keep);
        prop_assert_eq!(scan_in_chunks(&seg, &sizes), scan_in_chunks(&seg, &[usize::MAX]));
    }

    /// Resumed after any record the whole scan met, a scanner meets the same
    /// records from there on, statuses and all, in damaged files too.
    #[test]
    fn resuming_after_a_record_meets_the_records_the_whole_scan_met(
        payloads in prop::collection::vec((prop::collection::vec(any::<u8>(), 0..80), 0u64..3), 1..12),
        damage in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
        from in any::<prop::sample::Index>(),
    ) {
        // Offsets from 10, some skipped (the records after a gap are out of order).
        let mut seg = SegmentHeader::new(10, 5).encode().to_vec();
        let mut offset = 10;
        for (p, skip) in &payloads {
            offset += u64::from(*skip == 0);
            encode_record(offset, 7, p, &mut seg).unwrap();
            offset += 1;
        }
        for (at, x) in damage {
            let i = at.index(seg.len());
            seg[i] ^= x;
        }
        seg.truncate(seg.len() - cut.index(seg.len().min(40)));
        let records = |scanner: SegmentScanner, bytes: &[u8]| {
            let mut out = Vec::new();
            let mut scanner = scanner;
            let mut sink = |item: Item<'_>| if let Item::Record(r) = item { out.push(r) };
            scanner.feed(bytes, &mut sink);
            let _ = scanner.finish(&mut sink);
            out
        };
        let all = records(SegmentScanner::new(newest()), &seg);
        let boundaries: Vec<usize> = (0..all.len()).filter(|i| all[*i].status != felix_codec::read::scan::segment::RecordStatus::Torn).collect();
        if !boundaries.is_empty() {
            let k = boundaries[from.index(boundaries.len())];
            let r = all[k];
            let resumed = records(SegmentScanner::resume_after(newest(), r.end(), r.header.offset), &seg[r.end() as usize..]);
            prop_assert_eq!(resumed, all[k + 1..].to_vec());
        }
    }

    #[test]
    fn records_round_trip(offset in any::<u64>(), ts in any::<u64>(), payload in prop::collection::vec(any::<u8>(), 0..300)) {
        let mut out = Vec::new();
        encode_record(offset, ts, &payload, &mut out).unwrap();
        let (r, used) = decode_record(&out, ExpectedOffset::Exactly(offset)).unwrap();
        prop_assert_eq!(used, out.len());
        prop_assert_eq!((r.header.offset, r.header.timestamp_micros, r.payload), (offset, ts, &payload[..]));
    }

    #[test]
    fn headers_and_entries_round_trip(base in any::<u64>(), created in any::<u64>(), offset in any::<u64>(), position in any::<u64>()) {
        let h = SegmentHeader::new(base, created);
        prop_assert_eq!(SegmentHeader::decode(&h.encode()).unwrap(), (h, 32));
        let ih = IndexHeader::new(base);
        prop_assert_eq!(IndexHeader::decode(&ih.encode()).unwrap(), (ih, 24));
        let e = IndexEntry { offset, position };
        prop_assert_eq!(IndexEntry::decode(&e.encode()), Some(e));
    }

    #[test]
    fn epochs_round_trip(steps in prop::collection::vec((1u64..1000, 0u64..1000), 0..40)) {
        let mut entries = Vec::new();
        let (mut g, mut o) = (0u64, 0u64);
        for (dg, d_o) in steps {
            g += dg;
            o += d_o;
            entries.push(Epoch { generation: g, start_offset: o });
        }
        let bytes = epochs::encode(&entries).unwrap();
        prop_assert_eq!(epochs::decode(&bytes).unwrap(), entries);
    }

    #[test]
    fn the_scanner_never_panics_on_garbage(bytes in prop::collection::vec(any::<u8>(), 0..600), sizes in prop::collection::vec(1usize..50, 1..4)) {
        let mut with_header = SegmentHeader::new(0, 0).encode().to_vec();
        with_header.extend_from_slice(&bytes);
        let _ = scan_in_chunks(&bytes, &sizes);
        let _ = scan_in_chunks(&with_header, &sizes);
        let _ = epochs::read_or_empty(&bytes);
    }
}
