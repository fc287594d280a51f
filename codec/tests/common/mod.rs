//! The shared test corpus: small segments, indexes and epochs files, each
//! valid or damaged in one known way, built deterministically from the
//! codec's own encoders. Native tests and the wasm tests run the same
//! corpus and compare their verdicts with `tests/data/verdicts.txt`.
#![allow(dead_code, clippy::type_complexity, clippy::unwrap_used, clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

use felix_codec::format::epochs::{self, Epoch};
use felix_codec::format::index::build_index;
use felix_codec::format::record::encode_record;
use felix_codec::format::segment_header::SegmentHeader;
use felix_codec::shard::scan::inspect_in_memory;
use std::fmt::Write as _;

/// A segment of `payloads` starting at `base`, and each record's position.
pub fn segment(base: u64, payloads: &[&[u8]]) -> (Vec<u8>, Vec<u64>) {
    let mut out = SegmentHeader::new(base, 1_700_000_000_000_000).encode().to_vec();
    let mut positions = Vec::new();
    for (i, p) in payloads.iter().enumerate() {
        positions.push(out.len() as u64);
        encode_record(base + i as u64, 1_700_000_000_000_000 + i as u64, p, &mut out).unwrap();
    }
    (out, positions)
}

/// Five records of sizes 0, 1, 5, 17 and 3 from offset 10.
pub fn small() -> (Vec<u8>, Vec<u64>) {
    segment(10, &[b"", b"a", b"hello", b"seventeen bytes!!", b"xyz"])
}

/// A segment from `base` whose records carry exactly `offsets`.
pub fn records_at(base: u64, offsets: &[u64]) -> Vec<u8> {
    let mut out = SegmentHeader::new(base, 1_700_000_000_000_000).encode().to_vec();
    for (i, o) in offsets.iter().enumerate() {
        encode_record(*o, i as u64, format!("r{i}").as_bytes(), &mut out).unwrap();
    }
    out
}

/// A 28-byte record header for `offset` whose `header_crc` is wrong.
pub fn bad_header(payload_len: u32, offset: u64) -> Vec<u8> {
    let mut out = Vec::new();
    encode_record(offset, 0, &vec![b'p'; payload_len as usize], &mut out).unwrap();
    out[21] ^= 0xFF;
    out.truncate(28);
    out
}

/// A verifying record header claiming `payload_len` (over the limit).
pub fn too_large_header(offset: u64, payload_len: u32) -> Vec<u8> {
    let mut h = vec![0u8; 28];
    h[..4].copy_from_slice(&payload_len.to_be_bytes());
    h[4..12].copy_from_slice(&offset.to_be_bytes());
    let crc = felix_codec::format::be::crc32(&h[..20]);
    h[20..24].copy_from_slice(&crc.to_be_bytes());
    h
}

/// A record at `u64::MAX`, a rotted header, then a record whose offset any
/// resynchronisation would once have accepted.
fn resync_after_max() -> Vec<u8> {
    let mut out = records_at(u64::MAX, &[u64::MAX]);
    out.extend(bad_header(4, 7));
    encode_record(3, 0, b"after", &mut out).unwrap();
    out
}

/// A `RecordTooLarge` header followed by an intact record: upstream would
/// allow cutting the intact record with the opt-in; we never do.
fn too_large_then_intact() -> Vec<u8> {
    let (mut out, _) = small();
    out.extend(too_large_header(15, 1 << 27));
    encode_record(15, 0, b"intact", &mut out).unwrap();
    out
}

/// Every corpus case: a name, and the files `(path, bytes)` of one shard.
pub fn corpus() -> Vec<(&'static str, Vec<(String, Vec<u8>)>)> {
    let (clean, pos) = small();
    let one = |name: &str, bytes: Vec<u8>| vec![(name.to_string(), bytes)];
    let flip = |at: usize, mask: u8| {
        let mut b = clean.clone();
        b[at] ^= mask;
        b
    };
    let mut cases: Vec<(&'static str, Vec<(String, Vec<u8>)>)> = vec![
        ("clean", one("00000000000000000000.log", clean.clone())),
        ("empty", one("00000000000000000000.log", Vec::new())),
        ("short-header", one("00000000000000000000.log", clean[..20].to_vec())),
        ("magic", one("00000000000000000000.log", flip(0, 0x01))),
        ("version", one("00000000000000000000.log", flip(5, 0x03))),
        ("header-crc", one("00000000000000000000.log", flip(9, 0x40))),
        ("record-header-crc-middle", one("00000000000000000000.log", flip(pos[2] as usize + 3, 0x08))),
        ("record-crc-middle", one("00000000000000000000.log", flip(pos[3] as usize + 30, 0x01))),
        ("record-crc-tail", one("00000000000000000000.log", flip(pos[4] as usize + 29, 0x80))),
        ("torn-tail", one("00000000000000000000.log", clean[..clean.len() - 2].to_vec())),
        ("torn-header", one("00000000000000000000.log", clean[..pos[4] as usize + 9].to_vec())),
        ("index-bytes-in-log", one("00000000000000000000.log", build_index(10, [(10, 32)], 4096))),
        // The spec's conformance cases (a clean-room reference found each one).
        ("offset-overflow", one("00000000000000000000.log", records_at(u64::MAX, &[u64::MAX, u64::MAX]))),
        ("offset-wrap", one("00000000000000000000.log", records_at(u64::MAX, &[u64::MAX, 0]))),
        ("resync-after-max", one("00000000000000000000.log", resync_after_max())),
        (
            "rejected-header-torn-tail",
            one("00000000000000000000.log", {
                let mut b = flip(9, 0x40);
                b.truncate(b.len() - 2);
                b
            }),
        ),
        ("short-foreign-magic", one("00000000000000000000.log", b"XLSG\x00\x02\x00\x00\x01\x02".to_vec())),
        ("flags-stale-crc", one("00000000000000000000.log", flip(7, 0x02))),
        // Upstream's repair rule: opt-in only when the damage reaches the end of the file.
        ("zero-filled-tail", one("00000000000000000000.log", [clean.clone(), vec![0; 4096]].concat())),
        ("record-crc-then-stray-bytes", one("00000000000000000000.log", [flip(pos[4] as usize + 29, 0x80), b"stray".to_vec()].concat())),
        ("record-header-crc-last-bytes", one("00000000000000000000.log", [clean.clone(), bad_header(3, 0)].concat())),
        ("too-large-past-the-end", one("00000000000000000000.log", [clean.clone(), too_large_header(15, (1 << 26) + 1)].concat())),
        ("too-large-then-intact", one("00000000000000000000.log", too_large_then_intact())),
        (
            "zero-run-then-record",
            one("00000000000000000000.log", {
                let mut b = [clean.clone(), vec![0; 100]].concat();
                encode_record(15, 0, b"after zeros", &mut b).unwrap();
                b
            }),
        ),
    ];
    // A whole shard: two segments, indexes (one stale), epochs.
    let (seg0, pos0) = segment(0, &[b"a0", b"a1", b"a2", b"a3"]);
    let (seg1, pos1) = segment(4, &[b"b4", b"b5", b"b6"]);
    let idx0 = build_index(0, pos0.iter().enumerate().map(|(i, p)| (i as u64, *p)), 1);
    let stale1 = build_index(4, [(4, pos1[0]), (6, pos1[1])], 1);
    let ep = epochs::encode(&[Epoch { generation: 1, start_offset: 0 }, Epoch { generation: 2, start_offset: 5 }]).unwrap();
    let dir = |files: Vec<(&str, Vec<u8>)>| files.into_iter().map(|(n, b)| (n.to_string(), b)).collect::<Vec<_>>();
    cases.push((
        "shard",
        dir(vec![
            ("00000000000000000000.log", seg0.clone()),
            ("00000000000000000000.index", idx0.clone()),
            ("00000000000000000001.log", seg1.clone()),
            ("00000000000000000001.index", stale1),
            ("epochs", ep.clone()),
        ]),
    ));
    let (gap1, _) = segment(6, &[b"c6"]);
    let mut bad_ep = ep.clone();
    bad_ep[20] ^= 0x10;
    let far = epochs::encode(&[Epoch { generation: 1, start_offset: 0 }, Epoch { generation: 9, start_offset: 99 }]).unwrap();
    cases.push(("shard-gap", dir(vec![("00000000000000000000.log", seg0.clone()), ("00000000000000000001.log", gap1), ("epochs", far)])));
    cases.push(("shard-bad-epochs", dir(vec![("00000000000000000000.log", seg0.clone()), ("epochs", bad_ep)])));
    let mut torn_index = idx0.clone();
    torn_index.truncate(torn_index.len() - 5);
    cases.push(("shard-torn-index", dir(vec![("00000000000000000000.log", seg0.clone()), ("00000000000000000000.index", torn_index)])));
    let (older, _) = segment(0, &[b"a0", b"a1"]);
    let mut older_torn = older.clone();
    older_torn.truncate(older.len() - 1);
    let (newer, _) = segment(1, &[b"n1"]);
    cases.push((
        "shard-older-torn",
        dir(vec![("00000000000000000000.log", older_torn.clone()), ("00000000000000000001.log", newer.clone())]),
    ));
    // A segment shorter than its header is an unfinished creation only when it is the newest.
    cases.push((
        "shard-unfinished-newest",
        dir(vec![
            ("00000000000000000000.log", older.clone()),
            ("00000000000000000001.log", SegmentHeader::new(2, 5).encode()[..17].to_vec()),
        ]),
    ));
    // A rollover that never took effect (upstream's crash states): a header and no record at a base that
    // is not where the segment before ends; the one before is then the newest, its torn tail repairable.
    cases.push((
        "shard-abandoned-roll",
        dir(vec![
            ("00000000000000000000.log", older_torn.clone()),
            ("00000000000000000001.log", SegmentHeader::new(2, 5).encode().to_vec()),
            ("00000000000000000002.log", SegmentHeader::new(7, 5).encode().to_vec()),
        ]),
    ));
    // Built ahead of a clean end, twice: removed, and the offsets no segment holds named.
    cases.push((
        "shard-built-ahead",
        dir(vec![
            ("00000000000000000000.log", older.clone()),
            ("00000000000000000001.log", SegmentHeader::new(3, 5).encode().to_vec()),
            ("00000000000000000002.log", SegmentHeader::new(6, 5).encode().to_vec()),
        ]),
    ));
    // A header and no record where the segment before ends: a finished roll, kept (the torn older tail stays damage).
    cases.push((
        "shard-finished-roll",
        dir(vec![("00000000000000000000.log", older_torn), ("00000000000000000001.log", SegmentHeader::new(1, 5).encode().to_vec())]),
    ));
    cases.push((
        "shard-short-older",
        dir(vec![("00000000000000000000.log", SegmentHeader::new(0, 5).encode()[..17].to_vec()), ("00000000000000000001.log", newer)]),
    ));
    // Inside a shard only the format's own names are read: a stray `server.log`
    // (even one holding segment bytes) is neither data nor damage.
    cases.push((
        "shard-stray-log-names",
        dir(vec![
            ("00000000000000000000.log", older.clone()),
            ("server.log", b"2026-12-01 started\n".to_vec()),
            ("00000000000000000000 (1).log", older_torn_copy(&older)),
            ("writer.lock", Vec::new()),
        ]),
    ));
    cases
}

fn older_torn_copy(segment: &[u8]) -> Vec<u8> {
    segment.get(..segment.len().saturating_sub(3)).unwrap_or_default().to_vec()
}

/// One line per finding and per file, in a stable text form.
pub fn verdicts(chunk: usize) -> String {
    let mut out = String::new();
    for (name, files) in corpus() {
        let refs: Vec<(String, &[u8])> = files.iter().map(|(p, b)| (p.clone(), b.as_slice())).collect();
        let shard = if files.len() > 1 { Some(format!("{name}-0000000000000000")) } else { None };
        let report = inspect_in_memory(shard, &refs, chunk);
        for f in &report.files {
            let _ = writeln!(
                out,
                "{name} {} kind={} status={:?} records={} first={:?} last={:?} base={:?} entries={:?}",
                f.path,
                f.kind.as_str(),
                f.status,
                f.records,
                f.first_offset,
                f.last_offset,
                f.base_offset,
                f.entries
            );
            for x in &f.findings {
                let _ = writeln!(out, "  {} {}..{} offset={:?} repair={}", x.kind, x.position, x.end, x.offset, x.repair);
            }
            for n in &f.notes {
                let _ = writeln!(out, "  note: {n}");
            }
        }
    }
    out
}
