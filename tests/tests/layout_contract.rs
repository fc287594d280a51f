//! The compatibility contract with the broker's own implementation
//! (upstream `crates/felix-storage`): both must read and write the same
//! directories. Every item here is pinned by golden names or bytes; changing
//! one orphans data on disk or makes one side unable to read the other's.
//!
//! - shard-directory names: readable part (32 characters per component,
//!   `[A-Za-z0-9-]` kept, everything else `_`, an empty component `_`) and
//!   FNV-1a 64 of the exact key;
//! - file names: 20 zero-padded digits, `.log` / `.index`;
//! - index spacing: an entry for the first record, then for the first record
//!   at least `index_spacing_bytes` after the previous entry — the broker
//!   counts the bytes appended since the last entry, we measure positions;
//!   the two agree for every record sequence (checked against a second
//!   rendering of the broker's rule, written here from its description);
//! - the segment header and record golden vectors (`codec/src/golden.rs`).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use felix_codec::format::file_name::{index_file_name, parse_file_name, segment_file_name, FileKind};
use felix_codec::format::golden::{RECORD, SEGMENT_HEADER};
use felix_codec::format::index::{build_index, IndexEntry, IndexHeader};
use felix_codec::format::record::{encode_record, RECORD_HEADER_LEN};
use felix_codec::format::segment_header::{SegmentHeader, SEGMENT_HEADER_LEN};
use felix_codec::format::shard_name::ShardKey;
use proptest::prelude::*;

fn key<'a>(t: &'a str, n: &'a str, s: &'a str, i: u32) -> ShardKey<'a> {
    ShardKey { tenant: t, namespace: n, stream: s, shard: i }
}

#[test]
fn shard_directory_names_are_the_brokers() {
    let long = "x".repeat(200);
    // (key, the broker's name) — the first two are pinned in the broker's own tests.
    let cases: [(ShardKey<'_>, &str); 6] = [
        (key("acme", "default", "orders", 0), "acme_default_orders_0-0d3aed4b998d2798"),
        (key("acme", "default", "orders", 3), "acme_default_orders_3-0d3af04b998d2cb1"),
        (key("../../etc", "..", "/passwd", 0), "______etc_____passwd_0-"),
        (key("", "", "", 0), "______0-"),
        (key(&long, "n", "s", 0), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_n_s_0-"),
        (key("Ünïcode", "a b", "x.y", 4294967295), "_n_code_a_b_x_y_4294967295-"),
    ];
    for (k, want) in cases {
        let name = k.dir_name();
        assert!(name.starts_with(want), "{k:?}: {name} does not start with {want}");
        assert_eq!(name.len(), want.len() + if want.ends_with('-') { 16 } else { 0 }, "{name}");
        assert!(!name.contains('.') && !name.contains('/'), "{name}");
    }
}

#[test]
fn file_names_are_twenty_digits() {
    assert_eq!(segment_file_name(0), "00000000000000000000.log");
    assert_eq!(index_file_name(12), "00000000000000000012.index");
    assert_eq!(segment_file_name(u64::MAX), "18446744073709551615.log");
    assert_eq!(parse_file_name("00000000000000000012.index"), Some((12, FileKind::Index)));
    assert_eq!(parse_file_name("12.log"), None, "only the canonical form");
}

#[test]
fn the_golden_bytes_are_pinned() {
    assert_eq!(SegmentHeader::new(1, 2).encode(), SEGMENT_HEADER);
    let mut out = Vec::new();
    encode_record(7, 9, b"hi", &mut out).unwrap();
    assert_eq!(out, RECORD);
    #[rustfmt::skip]
    let index_header: [u8; 24] = [
        0x46, 0x4C, 0x53, 0x49, // "FLSI"
        0x00, 0x02,             // version 2
        0x00, 0x00,             // flags
        0, 0, 0, 0, 0, 0, 0, 5, // base_offset 5
        0, 0, 0, 0, 0, 0, 0, 0, // reserved
    ];
    assert_eq!(IndexHeader::new(5).encode(), index_header);
    assert_eq!(IndexEntry { offset: 5, position: 32 }.encode(), [0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 32]);
}

/// The broker's rule, as its documentation states it: keep a running count
/// of bytes appended since the last entry; emit an entry when the index is
/// empty or that count has reached the spacing, then reset it.
fn brokers_index(base: u64, record_lens: &[u64], spacing: u64) -> Vec<u8> {
    let mut out = IndexHeader::new(base).encode().to_vec();
    let mut since = 0u64;
    let mut position = SEGMENT_HEADER_LEN as u64;
    let mut any = false;
    for (i, len) in record_lens.iter().enumerate() {
        if !any || since >= spacing {
            out.extend_from_slice(&IndexEntry { offset: base + i as u64, position }.encode());
            since = 0;
            any = true;
        }
        since += len;
        position += len;
    }
    out
}

proptest! {
    #[test]
    fn our_index_is_byte_identical_to_the_brokers(
        payloads in proptest::collection::vec(0usize..300, 0..200),
        spacing in 1u64..2000,
        base in 0u64..1_000_000,
    ) {
        let lens: Vec<u64> = payloads.iter().map(|p| (RECORD_HEADER_LEN + p) as u64).collect();
        let mut position = SEGMENT_HEADER_LEN as u64;
        let records: Vec<(u64, u64)> = lens.iter().enumerate().map(|(i, len)| {
            let r = (base + i as u64, position);
            position += len;
            r
        }).collect();
        prop_assert_eq!(build_index(base, records, spacing), brokers_index(base, &lens, spacing));
    }
}

#[test]
fn a_shard_written_by_the_engine_has_exactly_the_brokers_layout() {
    use felix_engine::shard::{Config, Shard};
    let tmp = tempfile::tempdir().unwrap();
    let k = key("acme", "default", "orders", 0);
    let (shard, _) = Shard::open(std::sync::Arc::new(felix_engine::OsIo::new()), tmp.path(), &k, Config::default()).unwrap();
    let payloads: Vec<Vec<u8>> = (0..300).map(|i| vec![b'p'; 50 + (i * 37) % 400]).collect();
    for p in &payloads {
        shard.append(&[p]).unwrap();
    }
    drop(shard);
    let dir = tmp.path().join("acme_default_orders_0-0d3aed4b998d2798");
    let mut names: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["00000000000000000000.index", "00000000000000000000.log", "writer.lock"]);
    let lens: Vec<u64> = payloads.iter().map(|p| (RECORD_HEADER_LEN + p.len()) as u64).collect();
    let index = std::fs::read(dir.join("00000000000000000000.index")).unwrap();
    assert_eq!(index, brokers_index(0, &lens, 4096), "the index the broker would have written");
}
